"""Turns a network device's segmentation, receive offload and transmit checksumming off with the
ethtool ioctl (this machine has no `ethtool` program), so that one frame on a veth is one IP
packet of at most the MTU with a complete checksum: the queue then counts packets, and the
delay box, which copies frames between AF_PACKET sockets, forwards valid packets.

Run as a script inside a namespace: `python offload.py DEV [DEV...]`.
Constants: linux/sockios.h (SIOCETHTOOL) and linux/ethtool.h (the legacy ETHTOOL_S* commands,
each taking a `struct ethtool_value {u32 cmd; u32 data;}`).
"""

from __future__ import annotations

import ctypes
import fcntl
import socket
import struct
import sys

SIOCETHTOOL = 0x8946
ETHTOOL_STXCSUM = 0x17  # transmit checksum offload
ETHTOOL_SSG = 0x19  # scatter-gather (TSO needs it)
ETHTOOL_STSO = 0x1F  # TCP segmentation offload
ETHTOOL_SGSO = 0x24  # generic segmentation offload
ETHTOOL_SGRO = 0x2C  # generic receive offload
OFF = (ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO, ETHTOOL_STXCSUM, ETHTOOL_SSG)


def set_feature(sock: socket.socket, dev: str, cmd: int, on: bool) -> None:
    value = ctypes.create_string_buffer(struct.pack("II", cmd, 1 if on else 0))
    # struct ifreq: a 16-byte name, then a union whose member ifr_data points at the value.
    ifreq = struct.pack("16sP", dev.encode(), ctypes.addressof(value)) + bytes(16)
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifreq)


def offloads_off(devs: list[str]) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for dev in devs:
            for cmd in OFF:
                set_feature(s, dev, cmd, False)


if __name__ == "__main__":
    offloads_off(sys.argv[1:])
