"""The fluid engine held out: random cells drawn across the whole scenario space from a seed, each
run in the packet engine with send jitter (the fidelity matrix's reference) and in the fluid
engine's default model, scored as the matrix is (scripts/fidelity.py).

    python scripts/heldout.py --seed 20261127 --cells 200      # run what is missing, then the report
    python scripts/heldout.py --seed 20261127 --report-only    # the report from the stored data
    python scripts/heldout.py --seed 7 --cells 3 --budget 5 --data /tmp/h.jsonl   # a tiny try

The matrix is a grid its developers chose; these cells are not. A fidelity figure is worth
something only on a seed nobody tuned on: pass a fresh one, and report it.

The space (each draw independent; `draw_cell`):
  variants   one of reno, cubic, highspeed, htcp, scalable, bic, ghstcp, bbr, xcp (with an XCP
             router), or a mix of two loss-based ones; each group's parameters drawn half the time
             from ranges around their defaults. DCTCP and Prague are left out: they need ECN,
             which the fluid engine refuses (docs/scenario.md, `flows[i].ecn`).
  flows      2-200 (log-uniform); capacity 10 Mb/s - 100 Gb/s (log-uniform)
  RTTs       shortest 2-200 ms; equal, or spread evenly up to 1:20 (longest at most 500 ms)
  buffer     1-200% of the BDP at the mean RTT (log-uniform; at least 2 packets), drop-tail
  TCP        delayed ACKs on or off; slow start or not; initial window 1-40 packets
  access     each flow's access link at 0.5/n-1 × the bottleneck (fast enough to send a packet in a
             quarter of the shortest RTT), in a third of the cells
  starts     all at 0, or spread uniformly over up to 50 longest RTTs, in half the cells
Run length: after a warm-up that covers the start spread, the ramp to the fair window and two
congestion epochs, at least 8 epochs (each variant's own saw-tooth period at the flow's fair
window, `epoch_s`) and 200 longest RTTs are measured. Below 8 packets per flow, where losses end in
retransmission timeouts, the warm-up is 31 s longer (the start's backed-off timeouts) and at least 50
minimum RTOs are measured (`TIMEOUT_WINDOW_PKTS`). A draw whose packet run the engine
estimates above `--budget` seconds is redrawn, and the report counts those redraws: they are the
high-rate, long-epoch corner that no packet simulator reaches in a sweep.

Data: docs/validation/data/heldout-<seed>.jsonl; report: docs/validation/heldout.md (every seed
stored, one section each).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fidelity  # scripts/fidelity.py: the matrix's frame and scorecard

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "docs" / "validation" / "data"
DOC = ROOT / "docs" / "validation" / "heldout.md"
PACKET_SIZE_BITS = 1500 * 8
LOSS_BASED = ["reno", "cubic", "highspeed", "htcp", "scalable", "bic", "ghstcp"]
VARIANTS = LOSS_BASED + ["bbr", "xcp"]
ENGINES = [fidelity.REFERENCE, "fluid:default"]


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def draw_params(rng: np.random.Generator, variant: str) -> dict:
    """Half the time the defaults; else each parameter drawn from a range around its default
    that the variant's source allows (docs/scenario.md, "Variant parameters")."""
    if rng.random() < 0.5:
        return {}
    r = rng.uniform
    coin = lambda: bool(rng.random() < 0.5)  # noqa: E731
    return {
        "reno": lambda: {"a": round(r(0.5, 2.0), 2), "b": round(r(0.3, 0.5), 2)},
        "cubic": lambda: {"c": round(r(0.2, 0.8), 2), "beta": round(r(0.6, 0.85), 2),
                          "fast_convergence": coin(), "reno_friendly": coin()},
        "highspeed": lambda: {"high_decrease": round(r(0.1, 0.3), 2)},
        "htcp": lambda: {"delta_l": round(r(0.5, 2.0), 2), "adaptive_backoff": coin(), "rtt_scaling": coin()},
        "scalable": lambda: {"a": round(r(0.005, 0.02), 4), "b": round(r(0.1, 0.25), 3)},
        "bic": lambda: {"beta": round(r(0.7, 0.9), 2), "s_max": int(rng.integers(8, 33))},
        "ghstcp": lambda: {"decrease_by_mode": coin(), "trend_only": coin()},
        "bbr": lambda: {"probe_gain": round(r(1.1, 1.5), 2)},
        "xcp": lambda: {},
    }[variant]()


def draw_cell(rng: np.random.Generator) -> dict:
    """One cell's key: every drawn setting, plain values only (the scenario follows from it)."""
    mix = rng.random() < 0.3
    variants = sorted(str(v) for v in rng.choice(LOSS_BASED, 2, replace=False)) if mix else [str(rng.choice(VARIANTS))]
    flows = int(round(_log_uniform(rng, 2, 200)))
    rtt_lo_ms = _log_uniform(rng, 2, 200)
    ratio = _log_uniform(rng, 1.5, 20) if rng.random() < 0.6 else 1.0
    rtt_hi_ms = min(rtt_lo_ms * ratio, 500.0)
    slow_start = bool(rng.random() < 0.7)
    capacity_bps = float(f"{_log_uniform(rng, 1e7, 1e11):.3g}")
    bdp_pkts = capacity_bps / PACKET_SIZE_BITS * (rtt_lo_ms + rtt_hi_ms) / 2e3
    # At least 2 packets of buffer (a drop-tail queue of one cannot hold a packet in service and
    # one arriving): at small BDPs the smallest fractions are raised to it.
    buffer = max(_log_uniform(rng, 0.01, 2.0), 2 / bdp_pkts)
    return {
        "variant": "+".join(variants),
        "params": [draw_params(rng, v) for v in variants],
        "flows": flows,
        "capacity_bps": capacity_bps,
        "rtt_ms": [round(rtt_lo_ms, 2), round(rtt_hi_ms, 2)],
        "rtt": "spread" if rtt_hi_ms > rtt_lo_ms else "equal",
        "buffer": float(f"{buffer:.3g}"),
        "delayed_ack": bool(rng.random() < 0.5),
        "slow_start": slow_start,
        "initial_window": int(round(_log_uniform(rng, 1, 40))),
        # An access link serializes a packet in at most a quarter of the shortest RTT.
        "access_share": float(f"{_log_uniform(rng, max(0.5 / flows, 4 * PACKET_SIZE_BITS / (capacity_bps * rtt_lo_ms / 1e3)), max(1.0, 4 * PACKET_SIZE_BITS / (capacity_bps * rtt_lo_ms / 1e3))):.3g}")
        if rng.random() < 1 / 3 else None,
        "start_spread_rtts": float(f"{rng.uniform(1, 50):.3g}") if rng.random() < 0.5 else 0.0,
    }


def fair_window_pkts(cell: dict) -> float:
    """Each flow's share of the pipe and the buffer, in packets: C (RTT_mean + B/C) / n."""
    c_pps = cell["capacity_bps"] / PACKET_SIZE_BITS
    rtt_s = sum(cell["rtt_ms"]) / 2e3
    return c_pps * rtt_s * (1 + cell["buffer"]) / cell["flows"]


def epoch_s(variant: str, params: dict, w: float, rtt_s: float) -> float:
    """The saw-tooth period of one flow at window w (packets): the time from a reduction back to
    w, from each law's growth (rough: it sets a run length, not a result)."""
    w = max(w, 2.0)
    if variant in ("reno", "xcp"):
        return max(1.0, w * params.get("b", 0.5) / params.get("a", 1.0)) * rtt_s
    if variant == "cubic":  # RFC 9438 §4.2: K = cbrt(W_max (1 − β) / C)
        beta = params.get("beta", 0.7)
        k_s = (w * (1 - beta) / params.get("c", 0.4)) ** (1 / 3)
        reno_s = w * (1 - beta) / (3 * (1 - beta) / (1 + beta)) * rtt_s  # RFC 9438 §4.3's α
        return max(rtt_s, min(k_s, reno_s) if params.get("reno_friendly", True) else k_s)
    if variant in ("highspeed", "ghstcp"):  # RFC 3649: a(38) = 1, b = 0.5 ... a(83000) ≈ 72, b = 0.1
        x = min(max(math.log(w / 38) / math.log(83000 / 38), 0.0), 1.0)
        a, b = 72 ** x, 0.5 + x * (0.1 - 0.5)
        return max(1.0, w * b / a) * rtt_s
    if variant == "scalable":  # ×(1 + a) per RTT back from ×(1 − b)
        a, b = params.get("a", 0.01), params.get("b", 0.125)
        return max(1.0, math.log(1 / (1 - b)) / math.log(1 + a)) * rtt_s if w > 16 else w / 2 * rtt_s
    if variant == "htcp":  # Leith & Shorten: α = 1 + 10 Δ + (Δ/2)² per RTT after Δ_L
        grown, t, dl = 0.0, 0.0, params.get("delta_l", 1.0)
        while grown < w / 2 and t < 1e4:
            d = max(t - dl, 0.0)
            grown += 1 + 10 * d + (d / 2) ** 2 if d > 0 else 1
            t += rtt_s
        return max(t, rtt_s)
    if variant == "bic":  # additive S_max per RTT far from W_max, then a binary search
        beta = params.get("beta", 819 / 1024)
        return (w * (1 - beta) / params.get("s_max", 16) + math.log2(max(w, 2))) * rtt_s
    if variant == "bbr":  # a gain cycle of 8 rounds; ProbeRTT every 10 s (tcp_bbr.c)
        return max(8 * rtt_s, 2.0)
    raise ValueError(variant)


# Below 8 packets per flow a halved window is under 4, where a further loss cannot draw three
# duplicate ACKs (RFC 5681 §3.2): losses end in retransmission timeouts (Morris, "TCP behavior
# with many flows", ICNP 1997). There the warm-up also covers the start's timeouts, taken before
# any RTT sample at RFC 6298 §2.1's initial 1 s RTO and backed off (§5.5) up to four times when
# the flows' synchronized retransmissions collide again: 1 + 2 + 4 + 8 + 16 = 31 s; and at least
# 50 timeouts at Linux's 200 ms minimum RTO (the packet engine's) are measured.
TIMEOUT_WINDOW_PKTS = 8.0
START_TIMEOUTS_S = 31.0
MIN_RTO_S = 0.2
TIMEOUTS_MEASURED = 50


def cell_doc(cell: dict) -> dict:
    """The scenario of a cell: the run's length follows from its epochs (module docstring)."""
    variants = cell["variant"].split("+")
    lo_ms, hi_ms = cell["rtt_ms"]
    rtt_hi_s = hi_ms / 1e3
    w = fair_window_pkts(cell)
    epoch = max(epoch_s(v, p, w, rtt_hi_s) for v, p in zip(variants, cell["params"]))
    spread_s = cell["start_spread_rtts"] * rtt_hi_s
    ramp_s = ((math.log2(max(w / cell["initial_window"], 1)) + 3) * rtt_hi_s if cell["slow_start"]
              else epoch * max(w - cell["initial_window"], 0) / max(w / 2, 1))
    warmup_s = spread_s + ramp_s + 2 * epoch
    measure_s = max(8 * epoch, 200 * rtt_hi_s, 10.0 if "bbr" in variants else 0.0)
    if w < TIMEOUT_WINDOW_PKTS:
        # Timeouts are part of the saw-tooth: its time scale is the RTO, not the law's epoch.
        warmup_s += START_TIMEOUTS_S
        measure_s = max(measure_s, TIMEOUTS_MEASURED * (MIN_RTO_S + rtt_hi_s))
    groups, left = [], cell["flows"]
    for i, (v, p) in enumerate(zip(variants, cell["params"])):
        k = left // (len(variants) - i)
        left -= k
        g = {"count": k, "cc": {"variant": v, **p} if p else v,
             "rtt": f"{lo_ms}ms..{hi_ms}ms" if hi_ms > lo_ms and k > 1 else f"{lo_ms}ms",
             "slow_start": cell["slow_start"] and v != "xcp", "initial_window": cell["initial_window"],
             "delayed_ack": cell["delayed_ack"]}
        if cell["access_share"] is not None:
            g["access_capacity"] = cell["access_share"] * cell["capacity_bps"]
        if spread_s > 0:
            g["start"] = {"uniform": ["0s", f"{spread_s:.6g}s"]}
        groups.append(g)
    link = {"capacity": cell["capacity_bps"], "buffer": {"bdp_fraction": cell["buffer"]}}
    if variants == ["xcp"]:
        link["queue"] = {"discipline": "xcp", "preset": "original"}
    return {"dumbbell": link, "flows": groups,
            "run": {"duration": f"{warmup_s + measure_s:.6g}s", "warmup": f"{warmup_s:.6g}s", "record_interval": "1s"}}


def draw(seed: int, cells: int, budget_s: float) -> tuple[list[tuple[dict, dict]], dict[str, int]]:
    """`cells` cells from `seed`, with their scenarios; and the redraws, by reason."""
    from lossync.comparison import with_send_jitter
    from lossync.engines import estimate_wall_s

    rng = np.random.default_rng(seed)
    out: list[tuple[dict, dict]] = []
    redrawn: dict[str, int] = {}
    while len(out) < cells:
        cell = draw_cell(rng)
        doc = cell_doc(cell)
        if float(doc["run"]["duration"][:-1]) > 7200:
            redrawn["run longer than 2 h simulated"] = redrawn.get("run longer than 2 h simulated", 0) + 1
            continue
        est = estimate_wall_s(dict(with_send_jitter(doc), engine="packet"))
        if est > budget_s:
            redrawn[f"packet run over {budget_s:g} s"] = redrawn.get(f"packet run over {budget_s:g} s", 0) + 1
            continue
        out.append((dict(cell, index=len(out)), doc))
    return out, redrawn


def run_cell(cell: dict, doc: dict, engines: list[str]) -> list[dict]:
    import warnings

    from lossync.comparison import variant_shares, with_send_jitter
    from lossync.engines import run

    warnings.simplefilter("ignore")  # each run's warnings are stored with its row
    rows = []
    for engine in engines:
        kind = engine.split(":")[0]
        d = dict(with_send_jitter(doc) if engine == fidelity.REFERENCE else doc, engine=kind)
        row: dict = {"cell": cell, "engine": engine, "run": doc["run"]}
        t0 = time.perf_counter()
        try:
            s = run(d, progress=False).summary
            row["summary"] = {k: s[k] for k in ("utilization", "jain", "loss_rate", "sync_rate_mean", "mean_queue_pkts")}
            row["summary"]["shares"] = {v: x if x == x else None for v, x in variant_shares(s).items()}  # NaN: none sent
            row["summary"]["warnings"] = [str(w) for w in s["warnings"]]
        except Exception as e:  # a failed run is data too (reported, not fatal)
            row["error"] = str(e).splitlines()[0]
        row["wall_s"] = time.perf_counter() - t0
        rows.append(row)
    return rows


def data_path(seed: int) -> Path:
    return DATA_DIR / f"heldout-{seed}.jsonl"


def meta_path(data: Path) -> Path:
    """How the seed's cells were drawn (cells, budget, redraws), beside its data."""
    return data.with_suffix(".meta.json")


def run_missing(path: Path, todo: list[tuple[dict, dict]], workers: int) -> float:
    # A stored run counts if it ran the cell's scenario as cell_doc writes it now.
    done = {(r["cell"]["index"], r["engine"], json.dumps(r.get("run"))) for r in fidelity.load(path) if "error" not in r}
    jobs = [(c, d, [e for e in ENGINES if (c["index"], e, json.dumps(d["run"])) not in done]) for c, d in todo]
    return fidelity.run_jobs(path, run_cell, [j for j in jobs if j[2]], workers)


def latest(rows: list[dict]) -> list[dict]:
    """Each cell's last run per engine: a rerun's row replaces an earlier one."""
    out = {}
    for r in rows:
        if "summary" in r:
            out[(r["cell"]["index"], r["engine"])] = r
    return list(out.values())


def frame(rows: list[dict]) -> pd.DataFrame:
    """fidelity.frame's rows (one per cell), with the held-out settings to slice by."""
    df = fidelity.frame(latest(rows))
    if len(df):
        df["window_pkts"] = [fair_window_pkts(dict(r)) for _, r in df.iterrows()]
    return df


def breakdown(df: pd.DataFrame) -> pd.DataFrame:
    """Within 3 points by the settings the matrix holds fixed."""
    ok = df["du"].abs() <= 0.03
    slices = {
        "buffer < 10% BDP": df["buffer"] < 0.1,
        "buffer >= 10% BDP": df["buffer"] >= 0.1,
        "delayed ACKs": df["delayed_ack"],
        "no delayed ACKs": ~df["delayed_ack"],
        "no slow start": ~df["slow_start"],
        "access links": df["access_share"].notna(),
        "start spread": df["start_spread_rtts"] > 0,
        "window < 5 pkts/flow": df["window_pkts"] < 5,
        "window 5-50 pkts/flow": (df["window_pkts"] >= 5) & (df["window_pkts"] < 50),
        "window >= 50 pkts/flow": df["window_pkts"] >= 50,
        "RTTs unequal": df["rtt"] == "spread",
        "mixes": df["mixed"],
    }
    slices |= {f"variant {v}": df["variant"] == v for v in VARIANTS}
    return pd.DataFrame([{"cells": k, "n": int(m.sum()), "dU within 3 pt": fidelity._count(ok[m])} for k, m in slices.items()])


def section(seed: int, rows: list[dict], redrawn: dict[str, int] | None) -> list[str]:
    df = frame(rows)
    errors = [r for r in rows if "error" in r]
    text = [f"## Seed {seed}", ""]
    if not len(df):
        return text + ["No cell has both runs yet.", ""]
    cpu = sum(r["wall_s"] for r in latest(rows)) / 60
    text.append(f"{len(df)} cells (`python scripts/heldout.py --seed {seed} --cells {len(df)}`); the runs took "
                f"{cpu:.0f} CPU-minutes." + (f" Redrawn: {', '.join(f'{n} ({k})' for k, n in redrawn.items())}."
                                             if redrawn else ""))
    if errors:
        text.append(f"{len(errors)} runs failed: " + "; ".join(f"{r['engine']} cell {r['cell']['index']}: {r['error']}" for r in errors[:5]))
    text += ["", fidelity.markdown(fidelity.scorecard(df), index=False), "", fidelity.markdown(breakdown(df), index=False), ""]
    fluid_warned = {r["cell"]["index"] for r in rows if r["engine"] == "fluid:default" and r.get("summary", {}).get("warnings")}
    missed = df[df["du"].abs() > 0.03]
    text.append(f"Of the {len(missed)} cells more than 3 points off, the fluid run warned in "
                f"{sum(i in fluid_warned for i in missed['index'])} (that it is outside the validated region or "
                f"unconverged); it warned in {len(fluid_warned)} of all {len(df)} cells.")
    text.append("")
    worst = df.assign(ad=df["du"].abs()).sort_values("ad", ascending=False).head(12)
    cols = ["index", "variant", "flows", "capacity_bps", "rtt_ms", "buffer", "delayed_ack", "slow_start",
            "initial_window", "access_share", "start_spread_rtts", "window_pkts", "u_packet", "u_fluid", "du"]
    w = worst[cols].copy()
    w["capacity_bps"] = w["capacity_bps"].map(lambda c: f"{c:.3g}")
    w["window_pkts"] = w["window_pkts"].map(lambda x: f"{x:.1f}")
    for c in ("u_packet", "u_fluid", "du"):
        w[c] = w[c].map(lambda x: f"{x:.3f}")
    text += ["The cells furthest from the reference (the scenario of any cell: `heldout.cell_doc`):", "",
             fidelity.markdown(w, index=False), ""]
    return text


def report(seeds: list[int]) -> str:
    text = ["# The fluid engine on held-out cells", "",
            "Random cells across the whole scenario space (scripts/heldout.py's docstring has the space and the "
            "run lengths), each run in the packet engine with send jitter and in the fluid engine's default model; "
            "the scorecard is the fidelity matrix's ([fidelity.md](fidelity.md)). Each seed was fresh when it was "
            "first run: no model change was tuned on it. Windows (`window_pkts`) are each flow's share of the pipe "
            "and the buffer, C (RTT + B/C) / n; below 4 packets no loss can draw three duplicate ACKs (RFC 5681 "
            "§3.2) and TCP repairs it by a timeout, which the fluid engine does not model (it warns there since "
            "seed 20261127, whose stored warnings predate that warning). The fluid warnings counted are the "
            "stored runs' own.", ""]
    for seed in seeds:
        meta = json.loads(meta_path(data_path(seed)).read_text())
        text += section(seed, fidelity.load(data_path(seed)), meta["redrawn"])
    return "\n".join(text) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, required=True, help="a fresh seed: the cells follow from it")
    p.add_argument("--cells", type=int, default=200)
    p.add_argument("--budget", type=float, default=60.0, help="largest estimated packet run, wall seconds")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--data", type=Path, default=None, help="default: docs/validation/data/heldout-<seed>.jsonl")
    p.add_argument("--report-only", action="store_true")
    a = p.parse_args()
    path = a.data or data_path(a.seed)
    if not a.report_only:
        todo, redrawn = draw(a.seed, a.cells, a.budget)
        meta_path(path).parent.mkdir(parents=True, exist_ok=True)
        meta_path(path).write_text(json.dumps({"seed": a.seed, "cells": a.cells, "budget_s": a.budget, "redrawn": redrawn}) + "\n")
        wall = run_missing(path, todo, a.workers)
        print(f"ran in {wall / 60:.1f} min", file=sys.stderr)
    if a.data is not None:  # a try outside the stored seeds: print its section only
        print("\n".join(section(a.seed, fidelity.load(path), json.loads(meta_path(path).read_text())["redrawn"])))
        return
    out = report(sorted(int(f.stem.split("-")[1]) for f in DATA_DIR.glob("heldout-*.jsonl")))
    DOC.write_text(out)
    print(out)


if __name__ == "__main__":
    main()
