"""AQM and ECN, the packet engine against ns-3 (docs/validation.md, "AQM and ECN: packet engine
against ns-3"): 10 flows, 100 Mb/s, RTT 20..100 ms (mean 60 ms, BDP 500 packets of 1500 B),
slow start, 30 s with 10 s warm-up, seed 1, buffer 0.5 and 2 BDP, behind RED with ECN, CoDel
(with and without ECN), PIE and FQ-CoDel; Reno and CUBIC everywhere, DCTCP where the queue marks.

    python scripts/aqm_grid.py                 # run the missing cells (sequentially), then print the table
    python scripts/aqm_grid.py --report-only   # print the table from the data
    python scripts/aqm_grid.py --rerun         # run every cell again

The tables also go to docs/validation/aqm_*.md, which scripts/validation.py puts into
docs/validation.md (section 5).

Also runs two cells that are not part of the acceptance grid:
  red_step_K65  DCTCP behind RED configured as a step at K = 65 packets (min_th 65, max_th 66,
                max_p 1, weight 1, not gentle): shows that the DCTCP gap behind RED-ECN comes from
                ns-3 RED's count-based spacing of marks, which a step never uses.
  red_ecn, ns-3 Wait off
                the RED-ECN cells CUBIC at 2 BDP and DCTCP with ns-3's RedQueueDisc Wait = false
                (count-based spacing kept, no waiting): how much of the RED-ECN gap is Wait's.
  codel_ecn_60s crates/lossync-core/tests/aqm.rs's CoDel+ECN scenario (10 Reno flows with ECN,
                buffer 2000 packets, 60 s, 10 s warm-up), whose ns-3 sojourn that test cites.

Targets per cell (packet engine as the reference): utilization within 3 points, mean sojourn
within 20% or 1 ms, drop+mark rate within 25%.

Data: docs/validation/data/aqm_grid.jsonl, one line per cell (both engines), appended as cells
finish, so an interrupted run resumes. Needs the ns3 extra (pip install -e '.[ns3]').
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import lossync
import lossync.engines.ns3 as ns3
from lossync.engines.ns3 import run_ns3_with_stats

DOCS = Path(__file__).resolve().parent.parent / "docs" / "validation"
DATA = DOCS / "data" / "aqm_grid.jsonl"
BDP = round(1e8 / 12000 * 0.060)  # 500 packets at the mean RTT, 60 ms
NAME = {
    "red_ecn": "RED-ECN",
    "codel": "CoDel",
    "codel_ecn": "CoDel-ECN",
    "pie": "PIE",
    "fq_codel": "FQ-CoDel",
    "red_step_K65": "RED as step K=65",
    "red_ecn_nowait": "RED-ECN, ns-3 Wait off",
    "codel_ecn_60s": "CoDel-ECN, aqm.rs (B 2000, 60 s)",
}


def queue(name: str, b: int) -> dict:
    if name in ("red_ecn", "red_ecn_nowait"):
        return {"discipline": "red", "min_th": round(0.2 * b), "max_th": round(0.6 * b), "ecn": True}
    if name == "codel":
        return {"discipline": "codel"}
    if name in ("codel_ecn", "codel_ecn_60s"):
        return {"discipline": "codel", "ecn": True}
    if name == "pie":
        return {"discipline": "pie"}
    if name == "fq_codel":
        return {"discipline": "fq_codel"}  # marks ECT packets by default (ecn = true)
    if name == "red_step_K65":
        return {"discipline": "red", "min_th": 65, "max_th": 66, "max_p": 1.0, "weight": 1.0,
                "gentle": False, "ecn": True}
    raise ValueError(name)


def cells() -> list[dict]:
    out = []
    grid = [("red_ecn", ["reno", "cubic", "dctcp"], True), ("codel", ["reno", "cubic"], False),
            ("codel_ecn", ["reno", "dctcp"], True), ("pie", ["reno", "cubic"], False),
            ("fq_codel", ["reno", "cubic"], False), ("fq_codel", ["dctcp"], True)]
    for qn, ccs, ecn in grid:
        for cc in ccs:
            for frac in (0.5, 2.0):
                out.append({"queue": qn, "cc": cc, "bdp": frac, "B": round(frac * BDP), "ecn": ecn,
                            "duration": 30, "warmup": 10, "grid": True})
    for frac in (0.5, 2.0):
        out.append({"queue": "red_step_K65", "cc": "dctcp", "bdp": frac, "B": round(frac * BDP),
                    "ecn": True, "duration": 30, "warmup": 10, "grid": False})
    for cc, frac in (("cubic", 2.0), ("dctcp", 0.5), ("dctcp", 2.0)):
        out.append({"queue": "red_ecn_nowait", "cc": cc, "bdp": frac, "B": round(frac * BDP),
                    "ecn": True, "duration": 30, "warmup": 10, "grid": False})
    out.append({"queue": "codel_ecn_60s", "cc": "reno", "bdp": 4.0, "B": 2000, "ecn": True,
                "duration": 60, "warmup": 10, "grid": False})
    return out


def key(c: dict) -> tuple:
    return (c["queue"], c["cc"], c["bdp"])


def scenario(c: dict) -> dict:
    return {
        "dumbbell": {"capacity": "100Mbps", "buffer": {"packets": c["B"]}, "queue": queue(c["queue"], c["B"])},
        "flows": [{"count": 10, "cc": c["cc"], "rtt": "20ms..100ms", "slow_start": True, "ecn": c["ecn"]}],
        "run": {"duration": f"{c['duration']}s", "warmup": f"{c['warmup']}s", "seed": 1},
    }


def measure(r, wall: float) -> dict:
    s = r.summary
    link = s["links"][0]
    return {
        "U": s["utilization"], "delay": link["sojourn_mean_s"], "p99": link["sojourn_p99_s"],
        "early": link["early_drop_rate"], "overflow": link["overflow_drop_rate"],
        "drop": link["early_drop_rate"] + link["overflow_drop_rate"], "mark": link["mark_rate"],
        "marks": link["marks_pkts"], "q": link["mean_queue_pkts"],
        "reductions": sum(f["reductions"] for f in s["flows"]), "wall": wall,
    }


def run_cell(c: dict) -> dict:
    doc = scenario(c)
    row = dict(c)
    t = time.time()
    row["packet"] = measure(lossync.run(dict(doc, engine="packet")), time.time() - t)
    t = time.time()
    original = ns3._queue_disc
    if c["queue"] == "red_ecn_nowait":
        def no_wait(link, b, ps):
            type_id, attrs, defaults = original(link, b, ps)
            return type_id, [a for a in attrs if a[0] != "Wait"] + [("Wait", "false")], defaults
        ns3._queue_disc = no_wait
    try:
        r, stats = run_ns3_with_stats(doc)
    finally:
        ns3._queue_disc = original
    row["ns3"] = measure(r, time.time() - t)
    row["ns3_other_drops"] = stats.other_drops
    return row


def verdict(kind: str, p: float, n: float) -> bool:
    if kind == "U":
        return abs(p - n) <= 0.03
    if kind == "delay":
        return abs(p - n) <= max(0.2 * p, 0.001)
    return abs(p - n) <= 0.25 * p if p > 0 else n == 0


def table(rows: list[dict]) -> str:
    lines = [
        "| AQM | CC | buffer (BDP) | B (pkts) | U packet | U ns-3 | ΔU (pt) | mean sojourn packet (ms) | "
        "mean sojourn ns-3 (ms) | Δsojourn | drop+mark packet | drop+mark ns-3 | Δrate | met |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p, n = r["packet"], r["ns3"]
        rp, rn = p["drop"] + p["mark"], n["drop"] + n["mark"]
        ok = {"U": verdict("U", p["U"], n["U"]), "delay": verdict("delay", p["delay"], n["delay"]),
              "rate": verdict("rate", rp, rn)}
        x = {k: "" if v else " ✗" for k, v in ok.items()}
        met = "yes" if all(ok.values()) else "**no**: " + ", ".join(k for k, v in ok.items() if not v)
        dr = f"{100 * (rn / rp - 1):+.0f}%" if rp > 0 else ("0" if rn == 0 else "n/a")
        sig = "m" if p["mark"] > 0 or n["mark"] > 0 else "d"
        lines.append(
            f"| {NAME[r['queue']]} | {r['cc']} | {r['bdp']:g} | {r['B']} | {p['U']:.3f} | {n['U']:.3f} | "
            f"{100 * (n['U'] - p['U']):+.1f}{x['U']} | {p['delay'] * 1e3:.2f} | {n['delay'] * 1e3:.2f} | "
            f"{100 * (n['delay'] / p['delay'] - 1):+.0f}%{x['delay']} | {rp:.2e} ({sig}) | {rn:.2e} ({sig}) | "
            f"{dr}{x['rate']} | {met} |"
        )
    return "\n".join(lines)


def load() -> dict:
    rows = {}
    if DATA.exists():
        for line in DATA.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                rows[key(r)] = r
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report-only", action="store_true", help="print the table from the data")
    ap.add_argument("--rerun", action="store_true", help="run every cell again")
    args = ap.parse_args()
    done = {} if args.rerun else load()
    if args.rerun and DATA.exists():
        DATA.unlink()
    if not args.report_only:
        DATA.parent.mkdir(parents=True, exist_ok=True)
        for c in cells():
            if key(c) in done:
                continue
            row = run_cell(c)
            done[key(row)] = row
            with DATA.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
    order = [key(c) for c in cells()]
    rows = [done[k] for k in order if k in done]
    counts = [
        "| AQM | CC | buffer (BDP) | reductions/marks packet | reductions/marks ns-3 | "
        "drops early/overflow packet | drops early/overflow ns-3 |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p, n = r["packet"], r["ns3"]
        counts.append(f"| {NAME[r['queue']]} | {r['cc']} | {r['bdp']:g} | {p['reductions']:.0f}/{p['marks']:.0f} | "
                      f"{n['reductions']:.0f}/{n['marks']:.0f} | {p['early']:.2e}/{p['overflow']:.2e} | "
                      f"{n['early']:.2e}/{n['overflow']:.2e} |")
    out = {"aqm_grid.md": table([r for r in rows if r["grid"]]),
           "aqm_extra.md": table([r for r in rows if not r["grid"]]),
           "aqm_counts.md": "\n".join(counts)}
    for name, text in out.items():
        (DOCS / name).write_text(text + "\n")
        print(text + "\n")


if __name__ == "__main__":
    main()
