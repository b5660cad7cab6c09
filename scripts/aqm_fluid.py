"""The fluid engine's AQM laws against the packet engine with send jitter (docs/validation.md,
"AQM in the fluid engine"): the regime map of issue 35's acceptance 4, utilization within 3 points
and mean queueing delay within 20% (or 1 ms), on every discipline the fluid engine accepts that
signals early (RED, RED with ECN, PIE, PIE with ECN, DCTCP's step marking, DualPI2) and on drop-tail
beside them.

    python scripts/aqm_fluid.py                      # the grid: run what is missing, print the map
    python scripts/aqm_fluid.py --random 60 --seed 7 # fresh random cells across the space
    python scripts/aqm_fluid.py --random 40 --seed 8 --queues dualpi2  # fresh cells of one discipline
    python scripts/aqm_fluid.py --report-only        # the tables from the data

The grid: {drop-tail, RED, RED-ECN, PIE, PIE-ECN} x {Reno, CUBIC} and the step at K = C.RTT/7
with DCTCP, at 100 Mb/s, 1 Gb/s and 10 Gb/s, 10 and 50 flows with RTTs 20..100 ms, buffers of
0.5 and 2 BDP (of the mean RTT). RED: min_th 0.2 B, max_th 0.6 B, ns-2's max_p 0.1, weight 0.002,
gentle. PIE: RFC 8033's defaults (15 ms). DualPI2 (RFC 9332's and Linux's defaults) with CUBIC,
with Prague, and with half Prague and half CUBIC (Prague/classic throughput ratio recorded). Each
cell runs 30 s with statistics after 10 s, seed 1.

Random cells (--random N --seed S) draw the discipline and the variant as above, the capacity
log-uniformly in 10 Mb/s..10 Gb/s, 2..100 flows, the shortest RTT in 5..100 ms and a spread up to
1:10, buffers of 0.25..3 BDP, slow start on or off; K of the step in 0.1..1 BDP, DCTCP or Prague
behind it; DualPI2 with CUBIC, Prague, or half Prague and half CUBIC or Reno. `--queues` draws
among the given disciplines only (by default the six drawn before DualPI2 had a fluid law, so that
an earlier seed draws the same cells). A seed is a fresh draw: report one you did not look at
before.

Data: docs/validation/data/aqm_fluid.jsonl (grid) and aqm_fluid_random_<seed>.jsonl, a line per
cell, appended as cells finish, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import lossync
from lossync.comparison import with_send_jitter

DOCS = Path(__file__).resolve().parent.parent / "docs" / "validation"
DATA = DOCS / "data"
QUEUES = ("droptail", "red", "red_ecn", "pie", "pie_ecn", "step", "dualpi2")
#: What a random draw picks from unless told (`--queues`): the disciplines drawn before DualPI2 had
#: a fluid law, so that an earlier seed draws the same cells.
DRAWN = QUEUES[:6]
NAME = {"droptail": "drop-tail", "red": "RED", "red_ecn": "RED-ECN", "pie": "PIE", "pie_ecn": "PIE-ECN",
        "step": "step (DCTCP K)", "dualpi2": "DualPI2"}
#: DualPI2's senders: one variant, or half Prague (the L queue) and half a classic variant.
DUAL_SENDERS = ("cubic", "prague", "prague+cubic")
CAPACITY = {"100M": 1e8, "1G": 1e9, "10G": 1e10}


def bdp_pkts(capacity_bps: float, rtt_lo_s: float, rtt_hi_s: float) -> float:
    return capacity_bps / 12000 * (rtt_lo_s + rtt_hi_s) / 2


def queue(name: str, b: int, k: int) -> dict:
    if name == "droptail":
        return {"discipline": "droptail"}
    if name in ("red", "red_ecn"):
        return {"discipline": "red", "min_th": max(1, round(0.2 * b)), "max_th": max(2, round(0.6 * b)),
                "ecn": name == "red_ecn"}
    if name in ("pie", "pie_ecn"):
        return {"discipline": "pie", "ecn": name == "pie_ecn"}
    if name == "step":
        return {"discipline": "step", "threshold": k}
    if name == "dualpi2":
        return {"discipline": "dualpi2"}
    raise ValueError(name)


def grid() -> list[dict]:
    out = []
    for cap in CAPACITY:
        for n in (10, 50):
            for frac in (0.5, 2.0):
                for q in QUEUES:
                    ccs = {"step": ("dctcp",), "dualpi2": DUAL_SENDERS}.get(q, ("reno", "cubic"))
                    for cc in ccs:
                        out.append({"queue": q, "cc": cc, "capacity": cap, "flows": n, "bdp": frac,
                                    "rtt": [0.02, 0.1], "slow_start": True})
    return out


def draw(seed: int, count: int, queues: tuple[str, ...] = DRAWN) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        q = rng.choice(queues)
        lo = rng.uniform(0.005, 0.1)
        ccs = {"step": ("dctcp", "prague"), "dualpi2": DUAL_SENDERS + ("prague+reno",)}.get(q, ("reno", "cubic"))
        out.append({
            "queue": q,
            "cc": rng.choice(ccs),
            "capacity_bps": 10 ** rng.uniform(7, 10),
            "flows": rng.randint(2, 100),
            "bdp": rng.uniform(0.25, 3.0),
            "k_bdp": rng.uniform(0.1, 1.0),
            "rtt": [lo, lo * rng.uniform(1, 10)],
            "slow_start": rng.random() < 0.5,
        })
    return out


def scenario(c: dict) -> dict:
    cap = c.get("capacity_bps") or CAPACITY[c["capacity"]]
    lo, hi = c["rtt"]
    bdp = bdp_pkts(cap, lo, hi)
    b = max(4, round(c["bdp"] * bdp))
    k = max(1, min(b, round(c.get("k_bdp", 1 / 7) * bdp)))
    ecn = c["queue"] in ("red_ecn", "pie_ecn", "step")
    rtt = f"{lo * 1e3:.3f}ms..{hi * 1e3:.3f}ms" if hi > lo else f"{lo * 1e3:.3f}ms"
    ccs = c["cc"].split("+")
    counts = [c["flows"] // 2, c["flows"] - c["flows"] // 2] if len(ccs) == 2 else [c["flows"]]
    return {
        "dumbbell": {"capacity": f"{cap:.0f}bps", "buffer": {"packets": b}, "queue": queue(c["queue"], b, k)},
        # A group of one flow has no spread: it runs at the range's low end.
        "flows": [{"count": n, "cc": cc, "rtt": rtt if n > 1 else rtt.split("..")[0], "slow_start": c["slow_start"],
                   "ecn": ecn or cc == "prague"} for n, cc in zip(counts, ccs)],
        "run": {"duration": "30s", "warmup": "10s", "seed": 1},
    }


def measure(r, wall: float) -> dict:
    s = r.summary
    link = s["links"][0]
    out = {"U": s["utilization"], "delay": link["mean_queueing_delay_s"], "mark": link["mark_rate"],
           "drop": link["early_drop_rate"] + link["overflow_drop_rate"], "jain": s["jain"], "wall": wall,
           "warnings": list(s.get("warnings", []))}
    prague = sum(f["throughput_bps"] for f in s["flows"] if f["variant"] == "prague")
    classic = sum(f["throughput_bps"] for f in s["flows"] if f["variant"] != "prague")
    if prague and classic:
        out["ratio"] = prague / classic  # Prague's throughput over the classic flows'
    return out


def run_cell(c: dict) -> dict:
    doc = scenario(c)
    row = dict(c, B=doc["dumbbell"]["buffer"]["packets"])
    t = time.time()
    row["fluid"] = measure(lossync.run(dict(doc, engine="fluid"), warn=False), time.time() - t)
    t = time.time()
    row["packet"] = measure(lossync.run(with_send_jitter(dict(doc, engine="packet")), warn=False), time.time() - t)
    return row


def transient(row: dict) -> bool:
    """Either engine says its window saw no congestion event: the run measured a transient (Reno's
    climb back at 10 Gb/s lasts longer than the run), not the regime the targets are about. Such
    cells are listed, apart, never counted as met."""
    return any("no congestion event" in w for e in ("fluid", "packet") for w in row[e]["warnings"])


def met(row: dict) -> dict:
    f, p = row["fluid"], row["packet"]
    return {"U": abs(f["U"] - p["U"]) <= 0.03,
            "delay": abs(f["delay"] - p["delay"]) <= max(0.2 * p["delay"], 0.001)}


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def key(c: dict) -> str:
    return json.dumps({k: v for k, v in c.items() if k not in ("fluid", "packet", "B")}, sort_keys=True)


def run_missing(cells: list[dict], path: Path) -> None:
    done = {key(r) for r in load(path)}
    path.parent.mkdir(parents=True, exist_ok=True)
    for c in cells:
        if key(c) in done:
            continue
        row = run_cell(c)
        with path.open("a") as f:
            f.write(json.dumps(row) + "\n")
        ok = met(row)
        print(f"{NAME[c['queue']]:14} {c['cc']:6} {c.get('capacity', '')}{c.get('capacity_bps', 0):.3g} "
              f"n={c['flows']} B={row['B']}: U {row['fluid']['U']:.3f}/{row['packet']['U']:.3f} "
              f"delay {1e3 * row['fluid']['delay']:.2f}/{1e3 * row['packet']['delay']:.2f} ms "
              f"{'ok' if all(ok.values()) else 'MISS ' + str(ok)}", flush=True)


def pct(xs: list[bool]) -> str:
    return f"{sum(xs)}/{len(xs)} ({100 * sum(xs) / len(xs):.0f}%)" if xs else "-"


def regime_map(rows: list[dict]) -> str:
    """Per discipline and capacity: the share of converged cells within both targets."""
    rows = [r for r in rows if not transient(r)]
    caps = sorted({r.get("capacity") for r in rows if r.get("capacity")}, key=lambda c: CAPACITY[c])
    lines = ["| discipline | " + " | ".join(caps) + " | all | U within 3 pt | delay within 20% |",
             "|---|" + "---|" * (len(caps) + 3)]
    for q in QUEUES:
        qs = [r for r in rows if r["queue"] == q]
        if not qs:
            continue
        cells = [pct([all(met(r).values()) for r in qs if r.get("capacity") == c]) for c in caps]
        lines.append(f"| {NAME[q]} | " + " | ".join(cells) + f" | {pct([all(met(r).values()) for r in qs])} | "
                     f"{pct([met(r)['U'] for r in qs])} | {pct([met(r)['delay'] for r in qs])} |")
    lines.append("| **all** | " + " | ".join(
        pct([all(met(r).values()) for r in rows if r.get("capacity") == c]) for c in caps) +
        f" | {pct([all(met(r).values()) for r in rows])} | {pct([met(r)['U'] for r in rows])} | "
        f"{pct([met(r)['delay'] for r in rows])} |")
    return "\n".join(lines)


def verdict_text(r: dict) -> str:
    ok = met(r)
    if transient(r):
        return "transient (no congestion event)"
    return "yes" if all(ok.values()) else "**no**: " + ", ".join(k for k, v in ok.items() if not v)


def summary_line(rows: list[dict]) -> str:
    conv = [r for r in rows if not transient(r)]
    return (f"{len(conv)} of {len(rows)} cells converged (the others saw no congestion event in the measured window, "
            f"in one engine or both); of those, {pct([all(met(r).values()) for r in conv])} within both targets, "
            f"utilization {pct([met(r)['U'] for r in conv])}, delay {pct([met(r)['delay'] for r in conv])}.")


def cells_table(rows: list[dict]) -> str:
    lines = ["| queue | cc | capacity | flows | RTT (ms) | B (pkts) | U fluid | U packet | ΔU (pt) | "
             "delay fluid (ms) | delay packet (ms) | Δdelay | signal fluid | signal packet | met |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f, p = r["fluid"], r["packet"]
        cap = r.get("capacity") or f"{r['capacity_bps'] / 1e6:.0f}M"
        dd = f"{100 * (f['delay'] / p['delay'] - 1):+.0f}%" if p["delay"] > 0 else "n/a"
        sig = lambda m: f"{m['mark']:.1e} (m)" if m["mark"] > 0 else f"{m['drop']:.1e} (d)"  # noqa: E731
        lines.append(
            f"| {NAME[r['queue']]} | {r['cc']} | {cap} | {r['flows']} | {1e3 * r['rtt'][0]:.0f}..{1e3 * r['rtt'][1]:.0f} | "
            f"{r['B']} | {f['U']:.3f} | {p['U']:.3f} | {100 * (f['U'] - p['U']):+.1f} | {1e3 * f['delay']:.2f} | "
            f"{1e3 * p['delay']:.2f} | {dd} | {sig(f)} | {sig(p)} | "
            f"{verdict_text(r)} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--random", type=int, default=0, help="this many random cells instead of the grid")
    ap.add_argument("--seed", type=int, default=1, help="the random cells' seed")
    ap.add_argument("--queues", default=",".join(DRAWN), help="random cells: the disciplines drawn from (comma-separated)")
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args()
    queues = tuple(a.queues.split(","))
    if unknown := [q for q in queues if q not in QUEUES]:
        ap.error(f"--queues: unknown {', '.join(unknown)} (known: {', '.join(QUEUES)})")
    if a.random:
        path, cells = DATA / f"aqm_fluid_random_{a.seed}.jsonl", draw(a.seed, a.random, queues)
    else:
        path, cells = DATA / "aqm_fluid.jsonl", grid()
    if not a.report_only:
        run_missing(cells, path)
    rows = load(path)
    if a.random:
        text = [f"Random cells, seed {a.seed}: " + summary_line(rows), "", cells_table(rows)]
        out = DOCS / f"aqm_fluid_random_{a.seed}.md"
    else:
        text = [summary_line(rows), "", regime_map(rows), "", cells_table(rows)]
        out = DOCS / "aqm_fluid.md"
    out.write_text("\n".join(text) + "\n")
    print("\n".join(text[:1]))


if __name__ == "__main__":
    main()
