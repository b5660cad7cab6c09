"""The receivers: one listening socket on PORT that accepts every flow's connection and reads
and discards its data. `python receiver.py PORT RCVBUF_BYTES`; runs until SIGTERM. The receive
buffer is set before listen(), so the window scale offered covers it (tcp(7)); SO_RCVBUFFORCE
lets root exceed rmem_max. Only the standard library (runs in a namespace)."""

from __future__ import annotations

import signal
import socket
import sys
import threading

SO_RCVBUFFORCE = 33  # asm-generic/socket.h


def drain(conn: socket.socket) -> None:
    buf = bytearray(1 << 20)
    with conn:
        while conn.recv_into(buf):
            pass


def main(port: int, rcvbuf: int) -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, rcvbuf)
    srv.bind(("0.0.0.0", port))
    srv.listen(1024)
    print("ready", flush=True)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=drain, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
