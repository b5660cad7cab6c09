"""Delayed ACKs against ns-3 and the fluid engine (docs/validation/delayed_ack.md; issue 34,
acceptance 6): 10 flows of H-TCP, Reno or CUBIC at 100 Mb/s, RTTs of 80-260 ms, a buffer of 10% of
the BDP, 200 s after a 50 s warm-up, with and without delayed ACKs (RFC 5681 §4.2: every second
packet or after 200 ms, ns-3's DelAckCount 2 and DelAckTimeout), in ns-3 3.44, the packet engine
(deterministic, and with one packet time of send jitter) and the fluid engine (which has no delayed
ACKs).

    python scripts/delayed_ack.py                 # run what is missing (ns-3: about 35 s a run), print
    python scripts/delayed_ack.py --report-only   # the table from the data

Data: docs/validation/data/delayed_ack.jsonl, a line per run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import lossync

DATA = Path(__file__).resolve().parent.parent / "docs" / "validation" / "data" / "delayed_ack.jsonl"
VARIANTS = ("htcp", "reno", "cubic")
ENGINES = ("ns3", "packet", "packet:jitter", "fluid")


def doc(cc: str, delayed: bool, engine: str) -> dict:
    flows = {"count": 10, "cc": cc, "rtt": "80ms..260ms", "slow_start": True, "delayed_ack": delayed}
    if engine == "packet:jitter":
        flows["send_jitter"] = "120us"  # one packet time of the 100 Mb/s bottleneck
    return {"engine": engine.split(":")[0], "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.1}},
            "flows": [flows], "run": {"duration": "200s", "warmup": "50s"}}


def load() -> dict:
    rows = [json.loads(line) for line in DATA.read_text().splitlines()] if DATA.exists() else []
    return {(r["cc"], r["delayed"], r["engine"]): r for r in rows}


def run_missing() -> None:
    have = load()
    DATA.parent.mkdir(parents=True, exist_ok=True)
    for cc in VARIANTS:
        for delayed in (False, True):
            for engine in ENGINES:
                if (cc, delayed, engine) in have:
                    continue
                s = lossync.run(doc(cc, delayed, engine), warn=False).summary
                row = {"cc": cc, "delayed": delayed, "engine": engine, "U": s["utilization"],
                       "loss": s["loss_rate"], "jain": s["jain"]}
                with DATA.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(f"  {cc} delayed={delayed} {engine}: U {row['U']:.4f}", flush=True)


def table() -> str:
    have = load()
    out = ["| variant | delayed ACKs | ns-3 | packet | packet:jitter | fluid | packet:jitter − ns-3 | fluid − packet:jitter |",
           "|---|---|---|---|---|---|---|---|"]
    for cc in VARIANTS:
        for delayed in (False, True):
            u = {e: have.get((cc, delayed, e), {}).get("U", float("nan")) for e in ENGINES}
            out.append(f"| {cc} | {'yes' if delayed else 'no'} | {u['ns3']:.3f} | {u['packet']:.3f} | "
                       f"{u['packet:jitter']:.3f} | {u['fluid']:.3f} | {100 * (u['packet:jitter'] - u['ns3']):+.1f} | "
                       f"{100 * (u['fluid'] - u['packet:jitter']):+.1f} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report-only", action="store_true")
    if not ap.parse_args().report_only:
        run_missing()
    print(table())


if __name__ == "__main__":
    main()
