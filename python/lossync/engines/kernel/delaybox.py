"""The delay box: a user-space wire between two devices of a namespace that holds each frame for
its flow's one-way delay (the kernel here has no sch_netem and no libnetfilter_queue).

`python delaybox.py SENDER_DEV ROUTER_DEV DELAYS_JSON STATS_FILE` copies every frame arriving
on one device to the other (AF_PACKET, packet(7)) once it has been held for its delay: frames
towards the router by their source IPv4 address (the flow's sender), frames towards the
senders by their destination address; other frames (ARP) pass at once. DELAYS_JSON maps an
address to seconds. Frames of one flow and direction share one delay, so a FIFO per delay keeps
them in order. On SIGTERM it writes the frames forwarded and those the kernel dropped from its
sockets' buffers (PACKET_STATISTICS) and those sent more than LATE_S after their due time (a
box that falls behind releases frames in bursts) to STATS_FILE as JSON and exits.

Only the standard library: it runs in its own interpreter inside the namespace.
"""

from __future__ import annotations

import collections
import json
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
LATE_S = 0.5e-3  # a frame sent this much after its due time counts as late (its spacing is lost)


def open_device(dev: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RCVBUF_BYTES)
    s.bind((dev, 0))
    s.setblocking(False)
    return s


def main(sender_dev: str, router_dev: str, delays_json: str, stats_file: str) -> None:
    delays = {socket.inet_aton(ip): float(d) for ip, d in json.loads(delays_json).items()}
    sender_side, router_side = open_device(sender_dev), open_device(router_dev)
    by_fd = {s.fileno(): s for s in (sender_side, router_side)}
    # Per (output socket, delay): frames waiting, each (due time, frame).
    fifos: dict[tuple[int, float], collections.deque] = {}
    out_of = {sender_side.fileno(): router_side, router_side.fileno(): sender_side}
    forwarded = late = 0
    stop = False

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
        for s in readable:
            out = out_of[s.fileno()]
            towards_router = s is sender_side
            while True:
                try:
                    frame, addr = s.recvfrom(65536)
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
                q.append((time.monotonic() + delay, frame))  # per frame: a batch keeps its spacing
        now = time.monotonic()
        for (fd, _), q in fifos.items():
            out = by_fd[fd]
            while q and q[0][0] <= now:
                due, frame = q.popleft()
                try:
                    out.send(frame)
                    forwarded += 1
                except OSError:
                    pass  # the peer is going away at the end of a run
                if now - due > LATE_S:
                    late += 1
    stats = {"forwarded": forwarded, "late": late, "dropped": 0}
    for s in inputs:
        _, dropped = struct.unpack("II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
        stats["dropped"] += dropped
    with open(stats_file, "w") as f:
        json.dump(stats, f)


if __name__ == "__main__":
    main(*sys.argv[1:5])
