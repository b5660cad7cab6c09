"""The senders: one bulk TCP connection per flow, each in its own thread, from the flow's
address to its receiver, with the flow's congestion control (TCP_CONGESTION, tcp(7)),
connecting at T0 + start and writing as fast as the socket takes data until T0 + DURATION.
The main thread reads every connection's TCP_INFO (linux/tcp.h `struct tcp_info`) each INTERVAL
and prints one JSON line per sample: [t - T0, then per flow cwnd (segments), srtt (s),
total_retrans, bytes_acked, data_segs_out, snd_ssthresh, snd_mss, min_rtt (s), ecn (1 when the
connection negotiated ECN: TCPI_OPT_ECN in tcpi_options)] (zeros before it connects).

`python sender.py FLOWS_JSON T0 INTERVAL DURATION SNDBUF_BYTES`, FLOWS_JSON a list of
{"src", "dst", "port", "cc", "start"}. Only the standard library (runs in a namespace).
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
import threading
import time

SO_SNDBUFFORCE = 32  # asm-generic/socket.h: root may exceed wmem_max
TCP_INFO_BYTES = 232
# Offsets in struct tcp_info (linux/tcp.h): 8 bytes of u8 fields and bit fields, then u32s.
OFFSETS = {"options": (5, "B"), "snd_mss": (16, "I"), "rtt_us": (68, "I"), "snd_ssthresh": (76, "I"), "snd_cwnd": (80, "I"),
           "total_retrans": (100, "I"), "bytes_acked": (120, "Q"), "min_rtt_us": (148, "I"), "data_segs_out": (156, "I")}
WRITE_BYTES = 1 << 20
TCPI_OPT_ECN = 8  # linux/tcp.h: ECN was negotiated at TCP session init


def tcp_info(s: socket.socket) -> dict[str, int]:
    raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_BYTES)
    return {k: struct.unpack_from(fmt, raw, off)[0] for k, (off, fmt) in OFFSETS.items()}


def bulk(flow: dict, t0: float, sndbuf: int, sockets: list, i: int) -> None:
    time.sleep(max(0.0, t0 + flow["start"] - time.monotonic()))
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, sndbuf)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, flow["cc"].encode())
    s.bind((flow["src"], 0))
    s.connect((flow["dst"], flow["port"]))
    sockets[i] = s
    data = bytes(WRITE_BYTES)
    try:
        while True:
            s.sendall(data)
    except OSError:
        pass  # the run ended


def main(flows_json: str, t0: float, interval: float, duration: float, sndbuf: int) -> None:
    flows = json.loads(flows_json)
    sockets: list[socket.socket | None] = [None] * len(flows)
    for i, f in enumerate(flows):
        threading.Thread(target=bulk, args=(f, t0, sndbuf, sockets, i), daemon=True).start()
    k = 0
    while k * interval <= duration + 1e-9:
        time.sleep(max(0.0, t0 + k * interval - time.monotonic()))
        row: list[float] = [time.monotonic() - t0]
        for s in sockets:
            if s is None:
                row += [0, 0.0, 0, 0, 0, 0, 0, 0.0, 0]
                continue
            ti = tcp_info(s)
            row += [ti["snd_cwnd"], ti["rtt_us"] * 1e-6, ti["total_retrans"], ti["bytes_acked"], ti["data_segs_out"], ti["snd_ssthresh"], ti["snd_mss"], ti["min_rtt_us"] * 1e-6,
                    int(bool(ti["options"] & TCPI_OPT_ECN))]
        print(json.dumps(row), flush=True)
        k += 1
    sys.stdout.flush()
    os._exit(0)  # the writer threads block in sendall: no join


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
