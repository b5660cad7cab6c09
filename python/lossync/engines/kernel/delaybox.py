"""The delay box: a user-space wire between two devices of a namespace that holds each frame for
its flow's one-way delay (the kernel here has no sch_netem and no libnetfilter_queue).

`python delaybox.py SENDER_DEV ROUTER_DEV DELAYS_JSON STATS_FILE` copies every frame arriving
on one device to the other (AF_PACKET, packet(7)) once it has been held for its delay: frames
towards the router by their source IPv4 address (the flow's sender), frames towards the
senders by their destination address; other frames (ARP) pass at once. DELAYS_JSON maps an
address to seconds. Frames of one flow and direction share one delay, so a FIFO per delay keeps
them in order. A frame's delay counts from its arrival on the device (the kernel's receive
timestamp), so time it waited in the socket's buffer for a busy box counts against it.

It runs under the real-time policy SCHED_FIFO where it may (sched(7); root may): under the
default policy the scheduler let it wait for milliseconds behind the run's other processes with
frames due, which released them in bursts into a buffer that drains in a few milliseconds
(docs/kernel.md, "Health"). It sleeps in select() between frames, so it takes no core from
them; the kernel's real-time throttling (sched_rt_runtime_us) would cap it if it ever spun.

On SIGTERM it writes its health (engines/kernel/health.py reads it) to STATS_FILE as JSON and
exits: frames forwarded; frames the kernel dropped from its sockets' buffers
(PACKET_STATISTICS) and frames it failed to send; how late each release was against its due
time (a histogram of LATENESS_RES_S bins, and the maximum); stalls, the episodes longer than
STALL_S in which frames were due and none left; how long after its timeout select() returned at
the latest (the kernel's wake-up latency, which makes most long stalls); and its own CPU time
and lifetime.

Only the standard library: it runs in its own interpreter inside the namespace.
"""

from __future__ import annotations

import collections
import json
import os
import select
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003  # linux/if_ether.h: every protocol
PACKET_OUTGOING = 4  # linux/if_packet.h: a frame this host sent (our own copies): skipped
SOL_PACKET = 263  # linux/socket.h
PACKET_STATISTICS = 6  # linux/if_packet.h: struct tpacket_stats {u32 tp_packets, tp_drops}
SO_RCVBUFFORCE = 33  # asm-generic/socket.h: root may exceed rmem_max
RCVBUF_BYTES = 16 << 20  # a few full windows at the rates this engine runs
ETH_HEADER = 14
SO_TIMESTAMPNS = 35  # asm-generic/socket.h: receive timestamps as struct timespec (SCM_TIMESTAMPNS)
TIMESPEC = struct.Struct("qq")  # tv_sec, tv_nsec (64-bit)
LATENESS_RES_S = 1e-5  # histogram bin width: well below the 0.1 ms of the finest bin reported
LATENESS_BINS = 10_000  # up to 100 ms; the last bin holds everything later
STALL_S = 1e-3  # a release this long overdue with nothing sent meanwhile is a stall
RT_PRIORITY = 50  # SCHED_FIFO priority (1-99, sched(7)): above every normal task; no other task here is real-time


def open_device(dev: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RCVBUF_BYTES)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.bind((dev, 0))
    s.setblocking(False)
    return s


def arrival(ancdata: list, mono_now: float, real_now: float) -> float:
    """The frame's arrival on the device in time.monotonic() terms (now, if the kernel gave no
    timestamp)."""
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= TIMESPEC.size:
            sec, nsec = TIMESPEC.unpack_from(data)
            return mono_now - (real_now - (sec + nsec * 1e-9))
    return mono_now


def go_realtime() -> bool:
    """SCHED_FIFO for this process; False where it may not (no CAP_SYS_NICE, no real-time
    budget in its cgroup): it then runs as before, and its health says how well it kept up."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(RT_PRIORITY))
    except (OSError, AttributeError):
        return False
    return os.sched_getscheduler(0) == os.SCHED_FIFO


def main(sender_dev: str, router_dev: str, delays_json: str, stats_file: str) -> None:
    started = time.monotonic()
    realtime = go_realtime()
    delays = {socket.inet_aton(ip): float(d) for ip, d in json.loads(delays_json).items()}
    sender_side, router_side = open_device(sender_dev), open_device(router_dev)
    by_fd = {s.fileno(): s for s in (sender_side, router_side)}
    # Per (output socket, delay): frames waiting, each (due time, frame).
    fifos: dict[tuple[int, float], collections.deque] = {}
    out_of = {sender_side.fileno(): router_side, router_side.fileno(): sender_side}
    forwarded = send_failed = stalls = 0
    lateness = [0] * LATENESS_BINS
    latest_s = stalled_s = longest_stall_s = woken_late_s = 0.0
    last_release = started
    stop = False
    anc_size = socket.CMSG_SPACE(TIMESPEC.size)

    def on_term(signum, frame):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    inputs = [sender_side, router_side]
    while not stop:
        now = time.monotonic()
        due = min((q[0][0] for q in fifos.values() if q), default=None)
        timeout = 0.2 if due is None else max(0.0, due - now)
        try:
            readable, _, _ = select.select(inputs, [], [], timeout)
        except InterruptedError:
            continue
        mono_now, real_now = time.monotonic(), time.time()
        woken_late_s = max(woken_late_s, mono_now - now - timeout)
        for s in readable:
            out = out_of[s.fileno()]
            towards_router = s is sender_side
            while True:
                try:
                    frame, anc, _, addr = s.recvmsg(65536, anc_size)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING:
                    continue
                delay = 0.0
                if len(frame) >= ETH_HEADER + 20 and frame[12:14] == b"\x08\x00":
                    ip = frame[26:30] if towards_router else frame[30:34]
                    delay = delays.get(ip, 0.0)
                key = (out.fileno(), delay)
                q = fifos.get(key)
                if q is None:
                    q = fifos[key] = collections.deque()
                q.append((arrival(anc, mono_now, real_now) + delay, frame))  # per frame: a batch keeps its spacing
        now = time.monotonic()
        first_due = None
        for (fd, _), q in fifos.items():
            out = by_fd[fd]
            if q and q[0][0] <= now and (first_due is None or q[0][0] < first_due):
                first_due = q[0][0]
            while q and q[0][0] <= now:
                due, frame = q.popleft()
                try:
                    out.send(frame)
                    forwarded += 1
                except OSError:
                    send_failed += 1  # its buffer full, or the peer going away at the end of a run
                late = now - due
                lateness[min(int(late / LATENESS_RES_S), LATENESS_BINS - 1)] += 1
                latest_s = max(latest_s, late)
        if first_due is not None:
            # Frames were due from first_due (or since the last release, if later) and none left.
            gap = now - max(first_due, last_release)
            if gap > STALL_S:
                stalls += 1
                stalled_s += gap
                longest_stall_s = max(longest_stall_s, gap)
            last_release = now
    cpu = os.times()
    stats = {"forwarded": forwarded, "dropped": 0, "send_failed": send_failed,
             "lateness_res_s": LATENESS_RES_S, "lateness_counts": {str(i): c for i, c in enumerate(lateness) if c},
             "lateness_max_s": latest_s, "stalls": stalls, "stalled_s": stalled_s, "longest_stall_s": longest_stall_s,
             "woken_late_max_s": woken_late_s,
             "cpu_s": cpu.user + cpu.system, "lifetime_s": time.monotonic() - started, "realtime": realtime}
    for s in inputs:
        _, dropped = struct.unpack("II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
        stats["dropped"] += dropped
    with open(stats_file, "w") as f:
        json.dump(stats, f)


if __name__ == "__main__":
    main(*sys.argv[1:5])
