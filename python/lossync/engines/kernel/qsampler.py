"""The bottleneck's sampler: `tc -s -j qdisc show dev DEV` (tc-s statistics of the pfifo or red
under htb) at T0 + k * INTERVAL (time.monotonic, shared by every namespace) until T0 + DURATION.
Prints one JSON line per sample: [t - T0, bytes sent, packets sent, drops, backlog packets,
CE marks, early drops]. red's extended statistics (sch_red.c red_dump_stats, printed by
iproute2's q_red.c): `marked` (prob_mark + forced_mark), `early` (prob_drop + forced_drop: RED's
own drops), `pdrop` (its full bfifo's); its `drops` are early + pdrop. A pfifo has none: 0, 0.
`python qsampler.py DEV T0 INTERVAL DURATION`. Only the standard library."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

LEAF = "10:"  # the bottleneck qdisc's handle (netns.LEAF)


def sample(dev: str) -> list[float]:
    out = subprocess.run(["tc", "-s", "-j", "qdisc", "show", "dev", dev], capture_output=True, text=True, check=True).stdout
    for q in json.loads(out):
        if q.get("handle") == LEAF:
            red = [q["marked"], q["early"]] if q.get("kind") == "red" else [0, 0]
            return [q["bytes"], q["packets"], q["drops"], q["qlen"], *red]
    raise RuntimeError(f"no qdisc {LEAF} on {dev}")


def main(dev: str, t0: float, interval: float, duration: float) -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    k = 0
    while k * interval <= duration + 1e-9:
        time.sleep(max(0.0, t0 + k * interval - time.monotonic()))
        before = time.monotonic()
        values = sample(dev)
        t = (before + time.monotonic()) / 2 - t0
        print(json.dumps([t, *values]), flush=True)
        k += 1


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]))
