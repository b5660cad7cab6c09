"""An RTT probe (this machine has no `ping`): ICMP echo requests (RFC 792) over a raw socket
from one address to another, one every INTERVAL seconds; prints the RTTs in seconds as JSON.

`python rttprobe.py SRC DST COUNT INTERVAL`. Only the standard library (runs in a namespace).
"""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import sys
import time

ECHO_REQUEST, ECHO_REPLY = 8, 0
TIMEOUT_S = 2.0


def checksum(data: bytes) -> int:
    # The Internet checksum (RFC 1071): one's complement of the one's-complement sum.
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def probe(src: str, dst: str, count: int, interval: float) -> list[float]:
    ident = os.getpid() & 0xFFFF
    rtts = []
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as s:
        s.bind((src, 0))
        for seq in range(count):
            payload = b"lossync-rtt-probe".ljust(56, b".")
            header = struct.pack("!BBHHH", ECHO_REQUEST, 0, 0, ident, seq)
            packet = struct.pack("!BBHHH", ECHO_REQUEST, 0, checksum(header + payload), ident, seq) + payload
            sent = time.monotonic()
            s.sendto(packet, (dst, 0))
            while True:
                left = sent + TIMEOUT_S - time.monotonic()
                if left <= 0 or not select.select([s], [], [], left)[0]:
                    break
                data = s.recv(2048)
                ihl = (data[0] & 0x0F) * 4
                kind, _, _, rid, rseq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
                if kind == ECHO_REPLY and rid == ident and rseq == seq:
                    rtts.append(time.monotonic() - sent)
                    break
            time.sleep(max(0.0, sent + interval - time.monotonic()))
    return rtts


if __name__ == "__main__":
    src, dst, count, interval = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    print(json.dumps(probe(src, dst, count, interval)))
