"""BBRv3 (`bbr3`, draft-ietf-ccwg-bbr) checked two ways (docs/validation/bbr3.md):

1. the draft's motivation on a shallow buffer: 2 BBR flows (v1 or v3) and 2 CUBIC flows at 100 Mb/s
   and 40 ms, buffers of 2% to 100% of the BDP, in the packet engine with one packet time of send
   jitter: the BBR flows' loss rate and CUBIC's share, with the figure docs/validation/bbr3.png;
2. its fluid form against that packet engine: a grid of 16 cells, {4 bbr3, 10 bbr3 with RTTs of
   10-100 ms, 2 bbr3 + 2 CUBIC, 5 bbr3 + 5 CUBIC with RTTs of 10-100 ms} x {100 Mb/s, 1 Gb/s}
   x {10%, 100% of the BDP}, and random cells from a seed (`--random N --seed S`): the variant
   mix (bbr3 alone, or half bbr3 and half CUBIC), 2-50 flows, 10 Mb/s-10 Gb/s, a shortest RTT of
   5-200 ms and a spread up to 1:10, buffers of 2-200% of the BDP. Utilization within 3 points,
   the BBRv3 flows' share within 0.05.

    python scripts/bbr3_validation.py                      # both parts: run what is missing, report
    python scripts/bbr3_validation.py --random 30 --seed 5 # fresh random cells for part 2
    python scripts/bbr3_validation.py --report-only        # the tables and figure from the data

Each cell runs 40 s with statistics after 10 s (BBRv3 probes bandwidth every 2-3 s and ProbeRTT
comes every 5 s), seed 1. Data: docs/validation/data/bbr3_*.jsonl, a line per cell, appended as
cells finish, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

import lossync
from lossync.comparison import with_send_jitter

DOCS = Path(__file__).resolve().parent.parent / "docs" / "validation"
DATA = DOCS / "data"
SHALLOW_BUFFERS = (0.02, 0.05, 0.1, 0.25, 0.5, 1.0)
MIXES = {"4 bbr3": [("bbr3", 4, False)], "10 bbr3, 10-100 ms": [("bbr3", 10, True)],
         "2 bbr3 + 2 cubic": [("bbr3", 2, False), ("cubic", 2, False)],
         "5 bbr3 + 5 cubic, 10-100 ms": [("bbr3", 5, True), ("cubic", 5, True)]}


def doc(groups: list[tuple[str, int]], capacity_bps: float, rtt: tuple[float, float], buffer_bdp: float) -> dict:
    lo, hi = rtt
    bdp = capacity_bps / 12000 * (lo + hi) / 2
    spread = f"{lo * 1e3:.3f}ms..{hi * 1e3:.3f}ms" if hi > lo else f"{lo * 1e3:.3f}ms"
    return {"dumbbell": {"capacity": f"{capacity_bps:.0f}bps", "buffer": {"packets": max(2, round(buffer_bdp * bdp))}},
            "flows": [{"cc": cc, "count": n, "rtt": spread} for cc, n in groups],
            "run": {"duration": "40s", "warmup": "10s", "seed": 1}}


def measure(r) -> dict:
    s = r.summary
    total = sum(f["throughput_bps"] for f in s["flows"]) or 1.0
    by = {}
    for f in s["flows"]:
        v = by.setdefault(f["variant"], {"share": 0.0, "loss": [], "n": 0})
        v["share"] += f["throughput_bps"] / total
        v["loss"].append(f["loss_rate"])
    return {"U": s["utilization"], "loss": s["loss_rate"], "queue": s["mean_queue_pkts"], "jain": s["jain"],
            "variants": {k: {"share": v["share"], "loss": sum(v["loss"]) / len(v["loss"])} for k, v in by.items()}}


def packet(d: dict) -> dict:
    return measure(lossync.run(with_send_jitter(dict(d, engine="packet")), warn=False))


def shallow_cells() -> list[dict]:
    return [{"bbr": v, "bdp": b} for v in ("bbr", "bbr3") for b in SHALLOW_BUFFERS]


def run_shallow(c: dict) -> dict:
    return dict(c, packet=packet(doc([(c["bbr"], 2), ("cubic", 2)], 1e8, (0.04, 0.04), c["bdp"])))


def grid() -> list[dict]:
    return [{"mix": m, "capacity_bps": cap, "bdp": b} for m in MIXES for cap in (1e8, 1e9) for b in (0.1, 1.0)]


def draw(seed: int, count: int) -> list[dict]:
    rng = random.Random(seed)
    cells = []
    for _ in range(count):
        lo = math.exp(rng.uniform(math.log(0.005), math.log(0.2)))
        cells.append({"mix": rng.choice(list(MIXES)), "flows": rng.randint(2, 50),
                      "capacity_bps": float(f"{math.exp(rng.uniform(math.log(1e7), math.log(1e10))):.3g}"),
                      "rtt": [lo, lo * math.exp(rng.uniform(0, math.log(10)))],
                      "bdp": float(f"{math.exp(rng.uniform(math.log(0.02), math.log(2.0))):.3g}")})
    return cells


def groups(c: dict) -> tuple[list[tuple[str, int]], tuple[float, float]]:
    mix = MIXES[c["mix"]]
    if "flows" in c:  # a random cell: its flow count split over the mix's variants
        n = c["flows"]
        counts = [n // len(mix) + (i < n % len(mix)) for i in range(len(mix))]
        return [(cc, k) for (cc, _, _), k in zip(mix, counts) if k], tuple(c["rtt"])
    unequal = mix[0][2]
    return [(cc, n) for cc, n, _ in mix], (0.01, 0.1) if unequal else (0.04, 0.04)


def run_fluid_cell(c: dict) -> dict:
    g, rtt = groups(c)
    d = doc(g, c["capacity_bps"], rtt, c["bdp"])
    return dict(c, fluid=measure(lossync.run(dict(d, engine="fluid"), warn=False)), packet=packet(d))


def key(c: dict) -> str:
    return json.dumps({k: v for k, v in c.items() if k not in ("fluid", "packet")}, sort_keys=True)


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run_missing(cells: list[dict], path: Path, run) -> list[dict]:
    have = {key(r) for r in load(path)}
    path.parent.mkdir(parents=True, exist_ok=True)
    for c in cells:
        if key(c) not in have:
            row = run(c)
            with path.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(f"  {key(c)}", flush=True)
    want = {key(c) for c in cells}
    return [r for r in load(path) if key(r) in want]


def shallow_table(rows: list[dict]) -> str:
    by = {(r["bbr"], r["bdp"]): r["packet"] for r in rows}
    out = ["| buffer (BDP) | v1: BBR flows' loss | v3: BBR flows' loss | v1 / v3 | CUBIC's share with v1 | with v3 | U v1 | U v3 |",
           "|---|---|---|---|---|---|---|---|"]
    for b in SHALLOW_BUFFERS:
        v1, v3 = by.get(("bbr", b)), by.get(("bbr3", b))
        if not (v1 and v3):
            continue
        l1, l3 = v1["variants"]["bbr"]["loss"], v3["variants"]["bbr3"]["loss"]
        ratio = f"{l1 / l3:.0f}" if l3 > 0 else "∞"
        out.append(f"| {b:g} | {l1:.2%} | {l3:.3%} | {ratio} | {v1['variants']['cubic']['share']:.3f} | "
                   f"{v3['variants']['cubic']['share']:.3f} | {v1['U']:.3f} | {v3['U']:.3f} |")
    return "\n".join(out)


def shallow_figure(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.6))
    for v, style in (("bbr", "o-"), ("bbr3", "s-")):
        pts = sorted((r["bdp"], r["packet"]) for r in rows if r["bbr"] == v)
        xs = [x for x, _ in pts]
        a.plot(xs, [max(p["variants"][v]["loss"], 1e-5) for _, p in pts], style, label=f"{v} flows")
        b.plot(xs, [p["variants"]["cubic"]["share"] for _, p in pts], style, label=f"CUBIC, beside {v}")
    for ax in (a, b):
        ax.set_xscale("log")
        ax.set_xlabel("buffer (fraction of the BDP)")
        ax.grid(alpha=0.3)
        ax.legend()
    a.set_yscale("log")
    a.set_ylabel("loss rate of the BBR flows")
    b.set_ylabel("CUBIC's share of the throughput")
    b.axhline(0.5, color="grey", lw=0.8, ls=":")
    fig.suptitle("2 BBR + 2 CUBIC, 100 Mb/s, 40 ms, packet engine with send jitter")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def fluid_table(rows: list[dict]) -> tuple[str, str]:
    lines = ["| cell | B (BDP) | U fluid | U packet | dU | bbr3 share fluid | packet | loss fluid | packet | within |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    ok, u_ok = [], []
    for r in rows:
        f, p = r["fluid"], r["packet"]
        du = f["U"] - p["U"]
        ds = f["variants"]["bbr3"]["share"] - p["variants"]["bbr3"]["share"]
        hit = abs(du) <= 0.03 and abs(ds) <= 0.05
        ok.append(hit)
        u_ok.append(abs(du) <= 0.03)
        if "flows" in r:  # a random cell: the mix's variants, its own flows and RTTs
            where = " + ".join(cc for cc, _, _ in MIXES[r["mix"]]) + f" ({r['flows']} flows)"
        else:
            where = r["mix"]
        rtt = r.get("rtt")
        where += f", {r['capacity_bps'] / 1e6:g} Mb/s" + (f", {rtt[0] * 1e3:.0f}-{rtt[1] * 1e3:.0f} ms" if rtt else "")
        lines.append(f"| {where} | {r['bdp']:g} | {f['U']:.3f} | {p['U']:.3f} | {100 * du:+.1f} | "
                     f"{f['variants']['bbr3']['share']:.2f} | {p['variants']['bbr3']['share']:.2f} | "
                     f"{f['loss']:.4f} | {p['loss']:.4f} | {'yes' if hit else 'no'} |")
    head = (f"{sum(u_ok)} of {len(ok)} cells within 3 points of utilization; {sum(ok)} of them also within "
            "0.05 of the bbr3 share")
    return head, "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--random", type=int, default=0, help="random cells for the fluid check")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report-only", action="store_true", help="report the stored data, run nothing")
    a = ap.parse_args()
    if a.random:
        path = DATA / f"bbr3_random_{a.seed}.jsonl"
        cells = draw(a.seed, a.random)
        rows = [r for r in load(path) if key(r) in {key(c) for c in cells}] if a.report_only \
            else run_missing(cells, path, run_fluid_cell)
        head, table = fluid_table(rows)
        print(f"Random cells, seed {a.seed}: {head}\n\n{table}")
        return
    shallow_path, grid_path = DATA / "bbr3_shallow.jsonl", DATA / "bbr3_fluid.jsonl"
    if a.report_only:
        shallow, fluid = load(shallow_path), load(grid_path)
    else:
        shallow = run_missing(shallow_cells(), shallow_path, run_shallow)
        fluid = run_missing(grid(), grid_path, run_fluid_cell)
    shallow_figure(shallow, DOCS / "bbr3.png")
    head, table = fluid_table(fluid)
    print("Shallow buffers, 2 BBR + 2 CUBIC (packet engine with send jitter):\n\n" + shallow_table(shallow))
    print(f"\nThe fluid form against the packet engine: {head}\n\n{table}")


if __name__ == "__main__":
    main()
