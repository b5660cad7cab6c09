"""Fluid against packet engine on the shipped topologies (issue 12, item 7): per-link utilization
and per-flow throughput of `examples/parking-lot.toml`, `parking-lot-4.toml` and `nsfnet.toml`,
the fluid engine with its default loss model, the packet engine with and without send jitter (one
packet time of the slowest link on every flow: Floyd & Jacobson's remedy for phase effects).
Writes docs/validation/topologies.md.

    python scripts/topology_validation.py [--workers 2]
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


def one(example: str, engine: str) -> dict:
    import lossync
    from lossync.scenario import load_scenario

    doc = load_scenario(example)
    kind = engine.partition(":")[0]
    doc["engine"] = kind
    if engine == "packet:jitter":
        slowest = min(lossync.resolve(example)["links"], key=lambda l: l["capacity_bps"])
        jitter = 8 * 1500 / slowest["capacity_bps"]
        doc["flows"] = [dict(g, send_jitter=jitter) for g in doc["flows"]]
    t0 = time.perf_counter()
    s = lossync.run(doc, base_dir=ROOT / "examples").summary
    return {"example": example, "engine": engine, "wall_s": time.perf_counter() - t0,
            "links": {l["name"]: l["utilization"] for l in s["links"]},
            "flows": {f"{f['group']} #{f['flow']}": f["throughput_bps"] for f in s["flows"]}}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    t0 = time.perf_counter()
    jobs = [(x, e) for x in EXAMPLES for e in ENGINES]
    with ProcessPoolExecutor(a.workers) as pool:
        rows = list(pool.map(one, *zip(*jobs)))
    wall = time.perf_counter() - t0
    out = ["# Fluid and packet engines on the shipped topologies", "", __doc__.split("\n\n")[0].replace("\n", " "), "",
           f"{len(rows)} runs, {wall:.0f} s on {a.workers} workers. Regenerate: `python scripts/topology_validation.py`.", ""]
    for x in EXAMPLES:
        r = {row["engine"]: row for row in rows if row["example"] == x}
        links = pd.DataFrame({e: r[e]["links"] for e in ENGINES})
        links = links[(links > 0.01).any(axis=1)]  # links that carry traffic
        links["fluid - packet"] = links["fluid"] - links["packet"]
        links["fluid - packet:jitter"] = links["fluid"] - links["packet:jitter"]
        flows = pd.DataFrame({e: r[e]["flows"] for e in ENGINES}) / 1e6
        flows["fluid / packet"] = flows["fluid"] / flows["packet"]
        flows["fluid / packet:jitter"] = flows["fluid"] / flows["packet:jitter"]
        within = (links["fluid - packet"].abs() <= 0.03).mean()
        within_j = (links["fluid - packet:jitter"].abs() <= 0.03).mean()
        out += [f"## {x}", "",
                f"Links carrying traffic: {len(links)}; fluid utilization within 3 points of the packet engine on "
                f"{within:.0%} of them ({within_j:.0%} against the jittered packet engine). Wall time: "
                + ", ".join(f"{e} {r[e]['wall_s']:.1f} s" for e in ENGINES) + ".", "",
                "Per-link utilization:", "", _markdown(links.round(3)), "",
                "Per-flow throughput (Mb/s):", "", _markdown(flows.round(2)), ""]
    DOC.write_text("\n".join(out) + "\n")
    print("\n".join(out))


def _markdown(df: pd.DataFrame) -> str:
    d = df.reset_index()
    lines = ["| " + " | ".join(str(c) for c in d.columns) + " |", "|" + "---|" * len(d.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in d.itertuples(index=False)]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
