"""Fluid against packet engine on the shipped topologies (issue 12, item 7): per-link utilization
and per-flow throughput of `examples/parking-lot.toml`, `parking-lot-4.toml` and `nsfnet.toml`,
the fluid engine with its default loss model, the packet engine with and without send jitter (one
packet time of the slowest link on every flow: Floyd & Jacobson's remedy for phase effects),
each over several seeds: one flow's throughput moves by a factor of two from seed to seed in both
engines (parking-lot-4's long flow: 120-277 Mb/s in the jittered packet engine over seeds 1-6), so
one seed's ratio says little. Writes docs/validation/topologies.md.

    python scripts/topology_validation.py [--workers 2] [--seeds 4]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "validation" / "topologies.md"
EXAMPLES = ["parking-lot", "parking-lot-4", "nsfnet"]
ENGINES = ["fluid", "packet", "packet:jitter"]


def one(example: str, engine: str, seed: int) -> dict:
    import lossync
    from lossync.scenario import load_scenario

    doc = load_scenario(example)
    kind = engine.partition(":")[0]
    doc["engine"] = kind
    if engine == "packet:jitter":
        slowest = min(lossync.resolve(example)["links"], key=lambda l: l["capacity_bps"])
        jitter = 8 * 1500 / slowest["capacity_bps"]
        doc["flows"] = [dict(g, send_jitter=jitter) for g in doc["flows"]]
    doc["run"] = dict(doc.get("run", {}), seed=seed)
    t0 = time.perf_counter()
    s = lossync.run(doc, base_dir=ROOT / "examples").summary
    groups: dict[str, float] = {}
    for f in s["flows"]:
        groups[f["group"]] = groups.get(f["group"], 0.0) + f["throughput_bps"]
    return {"example": example, "engine": engine, "seed": seed, "wall_s": time.perf_counter() - t0,
            "links": {l["name"]: l["utilization"] for l in s["links"]},
            "flows": {f"{f['group']} #{f['flow']}": f["throughput_bps"] for f in s["flows"]}, "groups": groups}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seeds", type=int, default=4, help="seeds 1..N of every engine")
    a = p.parse_args()
    t0 = time.perf_counter()
    jobs = [(x, e, seed) for x in EXAMPLES for e in ENGINES for seed in range(1, a.seeds + 1)]
    with ProcessPoolExecutor(a.workers) as pool:
        rows = list(pool.map(one, *zip(*jobs)))
    wall = time.perf_counter() - t0
    out = ["# Fluid and packet engines on the shipped topologies", "", __doc__.split("\n\n")[0].replace("\n", " "), "",
           f"{len(rows)} runs (seeds 1-{a.seeds} of each engine), {wall:.0f} s on {a.workers} workers. Every figure below is "
           f"the mean over the seeds. Regenerate: `python scripts/topology_validation.py --seeds {a.seeds}`.", ""]
    for x in EXAMPLES:
        r = {e: [row for row in rows if row["example"] == x and row["engine"] == e] for e in ENGINES}
        links = pd.DataFrame({e: _mean(r[e], "links") for e in ENGINES})
        links = links[(links > 0.01).any(axis=1)]  # links that carry traffic
        links["fluid - packet"] = links["fluid"] - links["packet"]
        links["fluid - packet:jitter"] = links["fluid"] - links["packet:jitter"]
        flows = pd.DataFrame({e: _mean(r[e], "flows") for e in ENGINES}) / 1e6
        flows["fluid / packet"] = flows["fluid"] / flows["packet"]
        flows["fluid / packet:jitter"] = flows["fluid"] / flows["packet:jitter"]
        jittered = pd.DataFrame([row["flows"] for row in r["packet:jitter"]]) / 1e6
        flows["packet:jitter range"] = [f"{lo:.0f}-{hi:.0f}" for lo, hi in zip(jittered.min(), jittered.max())]
        groups = pd.DataFrame({e: _mean(r[e], "groups") for e in ENGINES}) / 1e6
        groups["fluid / packet:jitter"] = groups["fluid"] / groups["packet:jitter"]
        groups_within = ((groups["fluid / packet:jitter"] - 1).abs() <= 0.25).mean()
        within = (links["fluid - packet"].abs() <= 0.03).mean()
        within_j = (links["fluid - packet:jitter"].abs() <= 0.03).mean()
        wall_s = {e: sum(row["wall_s"] for row in r[e]) / len(r[e]) for e in ENGINES}
        out += [f"## {x}", "",
                f"Links carrying traffic: {len(links)}; fluid utilization within 3 points of the packet engine on "
                f"{within:.0%} of them ({within_j:.0%} against the jittered packet engine). Flow groups whose throughput is "
                f"within 25% of the jittered packet engine's: {groups_within:.0%} of {len(groups)}. Wall time per run: "
                + ", ".join(f"{e} {wall_s[e]:.1f} s" for e in ENGINES) + ".", "",
                "Per-link utilization:", "", _markdown(links.round(3)), "",
                "Per-group throughput (Mb/s, the sum over the group's flows):", "", _markdown(groups.round(2)), "",
                "Per-flow throughput (Mb/s):", "", _markdown(flows.round(2)), ""]
    DOC.write_text("\n".join(out) + "\n")
    print("\n".join(out))


def _mean(rows: list[dict], key: str) -> pd.Series:
    """The mean over the seeds' runs of one table (`links`, `flows` or `groups`) of each."""
    return pd.DataFrame([row[key] for row in rows]).mean()


def _markdown(df: pd.DataFrame) -> str:
    d = df.reset_index()
    lines = ["| " + " | ".join(str(c) for c in d.columns) + " |", "|" + "---|" * len(d.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in d.itertuples(index=False)]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
