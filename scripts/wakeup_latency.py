"""How late this machine wakes a real-time process: the floor under the kernel engine's delay box.

    sudo python scripts/wakeup_latency.py [SECONDS]

Runs under SCHED_FIFO, as the delay box does (sched(7)), and asks to wake every millisecond (as
cyclictest does); prints the percentiles of how late each wake-up came and how many came more
than 1 and 5 ms late. Run it on an idle machine: a wake-up that late with nothing else to run is
the machine's (a virtual CPU descheduled by its host, say), and the delay box cannot do better.
"""

from __future__ import annotations

import os
import sys
import time

from lossync.engines.kernel.delaybox import RT_PRIORITY  # the delay box's own priority

PERIOD_S = 1e-3


def main(seconds: float) -> None:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(RT_PRIORITY))
    n = int(seconds / PERIOD_S)
    late = []
    due = time.monotonic()
    for _ in range(n):
        due += PERIOD_S
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        late.append(time.monotonic() - due)
    late.sort()
    def at(p: float) -> float:
        return late[min(n - 1, int(p * n))]
    print(f"{n} wake-ups at SCHED_FIFO: late p50 {at(0.5) * 1e6:.0f} us, p99 {at(0.99) * 1e6:.0f} us, "
          f"p99.9 {at(0.999) * 1e6:.0f} us, max {late[-1] * 1e3:.2f} ms; "
          f"more than 1 ms late: {sum(x > 1e-3 for x in late)}, more than 5 ms: {sum(x > 5e-3 for x in late)}")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0)
