"""The three-engine validation (docs/validation.md): every cell run in the packet engine, in ns-3
and in the fluid engine (loss model `sync`, fed with the packet engine's measured distribution of
m_k), side by side.

    python scripts/validation.py                 # run what is missing, then write the report
    python scripts/validation.py --report-only   # rewrite docs/validation.md from the data
    python scripts/validation.py --only fig8 --workers 1 --rerun

Studies:
  grid    10 flows, 100 Mb/s, RTT 80..260 ms, NewReno/HighSpeed/Cubic/H-TCP/Scalable × buffer
          0.1, 0.25, 0.5, 1 BDP; 300 s, 60 s warm-up.
  jitter  the grid's 0.25-BDP cells with each RTT moved by a seeded U[0, 1 ms): how far Jain's
          index moves with sub-millisecond timing (phase effects), per engine.
  fig8    the seed paper's Fig. 8 setup: 10 HSTCP flows, 1 Gb/s, 1000 B packets, RTT
          115.5..124.5 ms, buffer 0.02..1 × 12,500 packets; initial window 750, congestion
          avoidance from the start (ns-3's slow-start overshoot at 1 Gb/s costs it hours), 100 s,
          40 s warm-up.

Data: docs/validation/data/<study>.jsonl, one line per (cell, engine), appended as runs finish,
so an interrupted run resumes. Needs the ns3 extra for the ns-3 cells (they are skipped, and
reported missing, without it).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pandas as pd

from lossync.io import atomic_write
from lossync.plot import plt

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "validation.md"
DIR = ROOT / "docs" / "validation"
DATA = DIR / "data"

VARIANTS = ["reno", "highspeed", "cubic", "htcp", "scalable"]
NAMES = {"reno": "NewReno", "highspeed": "HighSpeed", "cubic": "Cubic", "htcp": "H-TCP", "scalable": "Scalable"}
GRID_BUFFERS = [0.1, 0.25, 0.5, 1.0]
JITTER_SEEDS = [1, 2, 3, 4, 5, 6, 7, 8]
JITTER_VARIANTS = ["reno", "highspeed", "cubic", "scalable"]
FIG8_FRACTIONS = [0.02, 0.1, 0.4, 1.0]
ENGINES = ["packet", "ns3", "fluid"]
#: Per study, beyond ENGINES: Fig. 8 also runs the packet engine paced (Linux's ratios), to
#: separate what bursts cost from what synchronization costs.
EXTRA_ENGINES = {"fig8": ["paced"]}


def grid_doc(variant: str, frac: float, jitter_seed: int = 0) -> dict:
    rtt: str | list[str] = "80ms..260ms"
    if jitter_seed:
        rng = np.random.default_rng(jitter_seed)
        rtt = [f"{80 + 20 * i + rng.uniform(0, 1.0):.6f}ms" for i in range(10)]
    return {
        # Reference RTT for the BDP: 170 ms, the mean of the unjittered RTTs (1417 packets).
        "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": frac, "reference_rtt": "170ms"}},
        "flows": [{"count": 10, "cc": variant, "rtt": rtt, "slow_start": True}],
        "run": {"duration": "300s", "warmup": "60s"},
    }


def fig8_doc(frac: float) -> dict:
    return {
        "dumbbell": {"capacity": "1Gbps", "packet_size": 1000, "buffer": {"packets": round(frac * 12_500)}},
        "flows": [{"count": 10, "cc": "highspeed", "rtt": "115.5ms..124.5ms", "initial_window": 750, "slow_start": False}],
        "run": {"duration": "100s", "warmup": "40s", "record_interval": "1s"},
    }


def cells(study: str) -> list[tuple[dict, dict]]:
    """(cell key, scenario) pairs of a study."""
    if study == "grid":
        return [({"variant": v, "buffer": b}, grid_doc(v, b)) for v in VARIANTS for b in GRID_BUFFERS]
    if study == "jitter":
        return [({"variant": v, "buffer": 0.25, "seed": s}, grid_doc(v, 0.25, s)) for v in JITTER_VARIANTS for s in JITTER_SEEDS]
    if study == "fig8":
        return [({"buffer": f}, fig8_doc(f)) for f in FIG8_FRACTIONS]
    raise SystemExit(f"unknown study {study!r} (grid, jitter, fig8)")


def _trim(summary: dict) -> dict:
    """What the report needs of a summary (per-flow goodput included, the rest of the tables not)."""
    link = next(l for l in summary["links"] if l["name"] == summary["bottleneck"])
    keep = ["utilization", "jain", "loss_rate", "congestion_events", "sync_rate_mean", "mean_queue_pkts", "duration_s"]
    out = {k: summary[k] for k in keep}
    out["buffer_pkts"] = link["buffer_pkts"]
    out["sync_histogram"] = link["sync_histogram"]
    out["throughput_pps"] = [f["throughput_pps"] for f in summary["flows"]]
    out["mean_cwnd_pkts"] = [f["mean_cwnd_pkts"] for f in summary["flows"]]
    return out


def run_cell(study: str, key: dict, doc: dict, engines: list[str], timeout_s: float) -> list[dict]:
    """The cell in each engine asked for; the fluid engine needs the packet engine's m_k."""
    import lossync
    from lossync.engines.ns3 import run_ns3_with_stats

    rows = []
    hist = None
    for engine in engines:
        row = {"study": study, "cell": key, "engine": engine}
        t0 = time.perf_counter()
        try:
            if engine == "packet":
                r = lossync.run(dict(doc, engine="packet"), progress=False)
                row["cost"] = {"wall_s": time.perf_counter() - t0, "data_packets": r.summary["links"][0]["arrivals_pkts"]}
            elif engine == "paced":
                paced = dict(doc, engine="packet", flows=[dict(f, pacing=True) for f in doc["flows"]])
                r = lossync.run(paced, progress=False)
                row["cost"] = {"wall_s": time.perf_counter() - t0, "data_packets": r.summary["links"][0]["arrivals_pkts"]}
            elif engine == "ns3":
                r, st = run_ns3_with_stats(doc, timeout_s=timeout_s)
                if r.summary["partial"]:  # stopped by the limit: a cell ns-3 did not finish
                    raise lossync.LossyncError(f"engine ns3: the simulation did not finish within {timeout_s} s")
                row["cost"] = {"wall_s": st.wall_s, "events": st.events, "data_packets": st.data_packets_sent}
            else:
                if hist is None:
                    continue
                with tempfile.TemporaryDirectory() as tmp:
                    m = pd.DataFrame([{"m": i, "count": n} for i, n in enumerate(hist) if i >= 1 and n > 0])
                    m.to_csv(Path(tmp) / "m.csv", index=False)
                    fluid = dict(doc, engine="fluid", loss={"model": "sync", "sync": {"kind": "empirical", "file": "m.csv"}})
                    r = lossync.run(fluid, progress=False, base_dir=tmp)
                row["cost"] = {"wall_s": time.perf_counter() - t0}
            row["summary"] = _trim(r.summary)
            if engine == "packet" and sum(row["summary"]["sync_histogram"][1:]) > 0:
                hist = row["summary"]["sync_histogram"]
        except lossync.LossyncError as e:
            row["error"] = str(e).splitlines()[0]
        rows.append(row)
    return rows


def _key(row: dict) -> str:
    return json.dumps([row["cell"], row["engine"]], sort_keys=True)


def load(study: str) -> list[dict]:
    path = DATA / f"{study}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_study(study: str, workers: int, rerun: bool, timeout_s: float, only_engines: list[str] | None = None) -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{study}.jsonl"
    if rerun and path.exists():
        path.unlink()
    done = {_key(r) for r in load(study) if "error" not in r}
    try:
        import lossync.engines.ns3 as ns3

        ns3.ns3_root()
        engines = ENGINES
    except Exception as e:  # the extra is missing: run the rest, report ns-3 cells missing
        print(f"ns-3 unavailable ({str(e).splitlines()[0]}): ns-3 cells skipped", file=sys.stderr)
        engines = ["packet", "fluid"]
    engines = engines + EXTRA_ENGINES.get(study, [])
    if only_engines:
        engines = [e for e in engines if e in only_engines]
    todo = []
    for key, doc in cells(study):
        missing = [e for e in engines if _key({"cell": key, "engine": e}) not in done]
        if missing:
            # The fluid run needs this cell's packet run.
            todo.append((key, doc, ["packet"] + [e for e in missing if e != "packet"]))
    if not todo:
        return
    print(f"{study}: {len(todo)} cells to run", file=sys.stderr)
    with ProcessPoolExecutor(max_workers=workers) as pool, path.open("a") as f:
        futs = {pool.submit(run_cell, study, key, doc, eng, timeout_s): key for key, doc, eng in todo}
        for fut in as_completed(futs):
            for row in fut.result():
                if _key(row) in done and row["engine"] == "packet":
                    continue  # re-run only to feed the fluid engine
                f.write(json.dumps(row) + "\n")
                f.flush()
                s = row.get("summary", {})
                print(f"{study} {row['cell']} {row['engine']}: U {s.get('utilization', float('nan')):.3f} "
                      f"J {s.get('jain', float('nan')):.3f} wall {row.get('cost', {}).get('wall_s', 0):.0f} s {row.get('error', '')}",
                      file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The report.


def frame(study: str) -> pd.DataFrame:
    """One row per cell and engine, latest run wins."""
    rows = {}
    for r in load(study):
        rows[_key(r)] = r
    flat = []
    for r in rows.values():
        d = dict(r["cell"], engine=r["engine"], error=r.get("error"))
        d.update({k: v for k, v in r.get("summary", {}).items()})
        d.update({f"cost_{k}": v for k, v in r.get("cost", {}).items()})
        flat.append(d)
    return pd.DataFrame(flat)


def fmt(v, digits=3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:.{digits}f}"


def side_by_side(df: pd.DataFrame, index: list[str], metrics: list[str]) -> pd.DataFrame:
    wide = df.pivot_table(index=index, columns="engine", values=metrics, aggfunc="first")
    wide.columns = [f"{m}_{e}" for m, e in wide.columns]
    return wide.reset_index()


def grid_table(df: pd.DataFrame) -> str:
    w = side_by_side(df, ["variant", "buffer"], ["utilization", "jain", "sync_rate_mean", "loss_rate", "congestion_events", "buffer_pkts"])
    w["order"] = w["variant"].map({v: i for i, v in enumerate(VARIANTS)})
    w = w.sort_values(["order", "buffer"])
    lines = [
        "| variant | buffer (BDP) | B (pkts) | U packet | U ns-3 | U fluid | ΔU (pt) | J packet | J ns-3 | J fluid | ΔJ | sync packet | sync ns-3 | sync fluid | events packet / ns-3 | loss packet / ns-3 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in w.iterrows():
        def g(m, e, r=r):
            return r.get(f"{m}_{e}", float("nan"))
        du = (g("utilization", "packet") - g("utilization", "ns3")) * 100
        dj = g("jain", "packet") - g("jain", "ns3")
        lines.append(
            f"| {NAMES[r['variant']]} | {r['buffer']:g} | {g('buffer_pkts', 'packet'):.0f} | {fmt(g('utilization', 'packet'))} | "
            f"{fmt(g('utilization', 'ns3'))} | {fmt(g('utilization', 'fluid'))} | {fmt(du, 1)} | {fmt(g('jain', 'packet'))} | "
            f"{fmt(g('jain', 'ns3'))} | {fmt(g('jain', 'fluid'))} | {fmt(dj, 2)} | {fmt(g('sync_rate_mean', 'packet'), 2)} | "
            f"{fmt(g('sync_rate_mean', 'ns3'), 2)} | {fmt(g('sync_rate_mean', 'fluid'), 2)} | "
            f"{fmt(g('congestion_events', 'packet'), 0)} / {fmt(g('congestion_events', 'ns3'), 0)} | "
            f"{fmt(g('loss_rate', 'packet') * 100, 2)}% / {fmt(g('loss_rate', 'ns3') * 100, 2)}% |"
        )
    return "\n".join(lines)


def grid_figure(df: pd.DataFrame, path: Path) -> None:
    fig, axes = plt.subplots(3, len(VARIANTS), figsize=(3.0 * len(VARIANTS), 7.5), sharex=True)
    style = {"packet": ("C0", "o"), "ns3": ("C3", "s"), "fluid": ("C2", "^")}
    for j, v in enumerate(VARIANTS):
        sub = df[(df["variant"] == v) & df["error"].isna()]
        for engine, (c, mk) in style.items():
            e = sub[sub["engine"] == engine].sort_values("buffer")
            for i, m in enumerate(["utilization", "jain", "sync_rate_mean"]):
                axes[i, j].plot(e["buffer"], e[m], color=c, marker=mk, ms=4, label=engine)
        axes[0, j].set_title(NAMES[v], fontsize=10)
        axes[2, j].set_xscale("log")
        axes[2, j].set_xlabel("buffer (BDP)")
        for i in range(3):
            axes[i, j].grid(alpha=0.3, which="both")
    for i, label in enumerate(["utilization", "Jain's index", "mean sync rate"]):
        axes[i, 0].set_ylabel(label)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("10 flows, 100 Mb/s, RTT 80–260 ms: packet engine, ns-3, fluid (measured m)", fontsize=11)
    fig.tight_layout()
    _save(fig, path)


def _save(fig, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda p: fig.savefig(p, dpi=110, format="png"))
    plt.close(fig)


def jitter_table(df: pd.DataFrame) -> str:
    ok = df[df["error"].isna()]
    lines = ["| variant | engine | Jain per seed | mean ± sd | U mean |", "|---|---|---|---|---|"]
    for v in JITTER_VARIANTS:
        for engine in ["packet", "ns3"]:
            e = ok[(ok["variant"] == v) & (ok["engine"] == engine)].sort_values("seed")
            if e.empty:
                continue
            per = ", ".join(f"{x:.2f}" for x in e["jain"])
            lines.append(f"| {NAMES[v]} | {engine} | {per} | {e['jain'].mean():.2f} ± {e['jain'].std(ddof=1) if len(e) > 1 else float('nan'):.2f} | {e['utilization'].mean():.3f} |")
    return "\n".join(lines)


def fig8_table(df: pd.DataFrame) -> str:
    w = side_by_side(df, ["buffer"], ["utilization", "jain", "sync_rate_mean", "loss_rate", "cost_wall_s", "buffer_pkts"]).sort_values("buffer")
    lines = [
        "| buffer (× 12,500) | B (pkts) | U packet | U ns-3 | U fluid | U packet paced | J packet | J ns-3 | J fluid | sync packet | sync ns-3 | sync paced | loss packet / ns-3 | wall s packet / ns-3 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in w.iterrows():
        def g(m, e, r=r):
            return r.get(f"{m}_{e}", float("nan"))
        lines.append(
            f"| {r['buffer']:g} | {g('buffer_pkts', 'packet'):.0f} | {fmt(g('utilization', 'packet'))} | {fmt(g('utilization', 'ns3'))} | "
            f"{fmt(g('utilization', 'fluid'))} | {fmt(g('utilization', 'paced'))} | {fmt(g('jain', 'packet'))} | {fmt(g('jain', 'ns3'))} | "
            f"{fmt(g('jain', 'fluid'))} | {fmt(g('sync_rate_mean', 'packet'), 2)} | {fmt(g('sync_rate_mean', 'ns3'), 2)} | "
            f"{fmt(g('sync_rate_mean', 'paced'), 2)} | "
            f"{fmt(g('loss_rate', 'packet') * 100, 3)}% / {fmt(g('loss_rate', 'ns3') * 100, 3)}% | "
            f"{fmt(g('cost_wall_s', 'packet'), 1)} / {fmt(g('cost_wall_s', 'ns3'), 0)} |"
        )
    return "\n".join(lines)


def fig8_figure(df: pd.DataFrame, path: Path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
    style = {"packet": ("C0", "o"), "ns3": ("C3", "s"), "fluid": ("C2", "^"), "paced": ("C1", "v")}
    for engine, (c, mk) in style.items():
        e = df[(df["engine"] == engine) & df["error"].isna()].sort_values("buffer")
        if e.empty:
            continue
        axes[0].plot(e["buffer"], e["utilization"], color=c, marker=mk, label=engine)
        axes[1].plot(e["buffer"], e["sync_rate_mean"], color=c, marker=mk, label=engine)
    for ax, label in zip(axes, ["utilization", "mean sync rate"]):
        ax.set_xscale("log")
        ax.set_xlabel("buffer (fraction of 12,500 packets)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, which="both")
    axes[0].legend(fontsize=8)
    fig.suptitle("Fig. 8 setup: 10 HSTCP flows, 1 Gb/s, 1000 B, RTT 115.5–124.5 ms", fontsize=11)
    fig.tight_layout()
    _save(fig, path)


def grid_stats(g: pd.DataFrame, j: pd.DataFrame) -> dict:
    """The numbers the text of sections 1 and 2 quotes."""
    w = side_by_side(g, ["variant", "buffer"], ["utilization", "jain", "sync_rate_mean", "loss_rate"]).sort_values("buffer")
    du = (w["utilization_packet"] - w["utilization_ns3"]) * 100
    htcp = w["variant"] == "htcp"
    out = {
        "u_max_other": float(du[~htcp].abs().max()),
        "htcp_du": ", ".join(f"{v:.1f}" for v in du[htcp]),
        "htcp_loss": f"{w.loc[htcp, 'loss_rate_packet'].min() * 100:.1f}–{w.loc[htcp, 'loss_rate_packet'].max() * 100:.1f}% "
                     f"against {w.loc[htcp, 'loss_rate_ns3'].min() * 100:.1f}–{w.loc[htcp, 'loss_rate_ns3'].max() * 100:.1f}%",
        "sync_agree": int(((w["sync_rate_mean_packet"] - w["sync_rate_mean_ns3"]).abs() <= 0.1).sum()),
        "sync_apart": ", ".join(f"{NAMES[r.variant]} at {r.buffer:g}" for r in w[
            (w["sync_rate_mean_packet"] - w["sync_rate_mean_ns3"]).abs() > 0.1].itertuples()) or "none",
        "cells": len(w),
        "fluid_sync_max": float((w["sync_rate_mean_fluid"] - w["sync_rate_mean_packet"]).abs().max()),
        "fluid_u_max": float((w["utilization_fluid"] - w["utilization_packet"]).abs().max() * 100),
    }
    # Phase effects: Jain's index of each jittered run against the unjittered cell.
    ok = j[j["error"].isna()] if not j.empty else j
    for engine, key in [("packet", "jain_phase_max"), ("ns3", "jain_phase_max_ns3")]:
        base = g[(g["engine"] == engine) & (g["buffer"] == 0.25)].set_index("variant")["jain"]
        e = ok[ok["engine"] == engine] if not ok.empty else ok
        out[key] = float((e["jain"] - e["variant"].map(base)).abs().max()) if len(e) else float("nan")
    # The engines agree when their mean Jain over the perturbations differs by at most 0.05, or
    # by less than twice the standard error of the difference (the seed-to-seed spread).
    agree, apart = [], []
    for v in JITTER_VARIANTS:
        x = {e: ok[(ok["variant"] == v) & (ok["engine"] == e)]["jain"] for e in ("packet", "ns3")} if len(ok) else {}
        if not x or any(len(s) < 2 for s in x.values()):
            continue
        diff = abs(x["packet"].mean() - x["ns3"].mean())
        se = math.sqrt(sum(s.var(ddof=1) / len(s) for s in x.values()))
        text = f"{NAMES[v]} ({x['packet'].mean():.2f} vs {x['ns3'].mean():.2f}, difference {diff:.2f}, standard error {se:.2f})"
        (agree if diff <= 0.05 or diff < 2 * se else apart).append(text)
    out["jain_agree"] = " and ".join(agree) or "no variant"
    out["jain_apart"] = " and ".join(apart) or "none"
    return out


def cost_text(g: pd.DataFrame, f8: pd.DataFrame) -> str:
    """Packets per wall second in the validation runs themselves (steady state, long runs)."""
    parts = []
    for label, df in [("the 100 Mb/s grid (300 s runs)", g), ("the 1 Gb/s Fig. 8 runs (100 s)", f8)]:
        if df.empty or "cost_data_packets" not in df:
            continue
        rate = {}
        for engine in ("packet", "ns3"):
            e = df[(df["engine"] == engine) & df["error"].isna() & (df["cost_wall_s"] > 0)]
            if len(e):
                rate[engine] = float((e["cost_data_packets"] / e["cost_wall_s"]).median())
        if len(rate) == 2:
            parts.append(f"in {label}, the median over cells is {rate['packet']:,.0f} data packets per wall second in the "
                         f"packet engine and {rate['ns3']:,.0f} in ns-3 ({rate['packet'] / rate['ns3']:,.0f}×)")
    return ("In the validation runs themselves, past the start-up: " + "; ".join(parts) + ".") if parts else ""


def report() -> None:
    g, j, f8 = frame("grid"), frame("jitter"), frame("fig8")
    if not g.empty:
        grid_figure(g, DIR / "grid.png")
    if not f8.empty:
        fig8_figure(f8, DIR / "fig8.png")
    text = render(g, j, f8)
    atomic_write(DOC, lambda p: p.write_text(text))
    print(f"wrote {DOC.relative_to(ROOT)}")


def render(g: pd.DataFrame, j: pd.DataFrame, f8: pd.DataFrame) -> str:
    """docs/validation.md from template.md and the stored data (the grid, jitter and fig8 studies'
    frames; the figures aside): edit the template, never the page, or the next report undoes it."""
    tpl = (DIR / "template.md").read_text()
    bench = DIR / "bench.txt"
    return tpl.format(
        grid_table=grid_table(g) if not g.empty else "(not run)",
        jitter_table=jitter_table(j) if not j.empty else "(not run)",
        fig8_table=fig8_table(f8) if not f8.empty else "(not run)",
        fig8_text=(DIR / "fig8.md").read_text().strip() if (DIR / "fig8.md").exists() else "",
        bench_text=("```\n" + bench.read_text().strip() + "\n```" if bench.exists() else "(not measured)"),
        cost_text=cost_text(g, f8),
        # Section 5's tables, written by scripts/aqm_grid.py (run separately).
        **{f"aqm_{t}": ((DIR / f"aqm_{t}.md").read_text().strip() if (DIR / f"aqm_{t}.md").exists()
                        else "(not run: python scripts/aqm_grid.py)") for t in ("grid", "extra", "counts")},
        # Section 6, written by scripts/aqm_fluid.py (run separately): the grid, then each random seed.
        aqm_fluid=((DIR / "aqm_fluid.md").read_text().strip() if (DIR / "aqm_fluid.md").exists()
                   else "(not run: python scripts/aqm_fluid.py)"),
        aqm_fluid_random="\n\n".join(p.read_text().strip() for p in sorted(DIR.glob("aqm_fluid_random_*.md")))
        or "(not run: python scripts/aqm_fluid.py --random 60 --seed N)",
        missing=missing_text(),
        **grid_stats(g, j),
    )


def missing_text() -> str:
    out = []
    for study in ["grid", "jitter", "fig8"]:
        have = {_key(r) for r in load(study) if "error" not in r}
        errs = [r for r in load(study) if "error" in r and _key(r) not in have]
        n = sum(1 for key, _ in cells(study) for e in ENGINES + EXTRA_ENGINES.get(study, [])
                if _key({"cell": key, "engine": e}) not in have)
        if n:
            out.append(f"- {study}: {n} runs missing" + "".join(f"; {r['cell']} {r['engine']}: {r['error']}" for r in errs))
    return "\n".join(out) if out else "- none: every cell ran in all three engines."


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="grid,jitter,fig8")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--rerun", action="store_true", help="discard the stored data of the studies run")
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--check", action="store_true", help="exit 1 if docs/validation.md is not what the template and the data make")
    p.add_argument("--engines", default=None, help="run only these engines' missing cells (comma-separated)")
    p.add_argument("--timeout", type=float, default=7200.0, help="per ns-3 run, wall seconds")
    a = p.parse_args()
    if a.check:
        if render(frame("grid"), frame("jitter"), frame("fig8")) != DOC.read_text():
            sys.exit(f"{DOC.relative_to(ROOT)} differs from what template.md and the data make: edit the template, "
                     "then python scripts/validation.py --report-only")
        return
    if not a.report_only:
        for study in a.only.split(","):
            run_study(study, a.workers, a.rerun, a.timeout, a.engines.split(",") if a.engines else None)
    report()


if __name__ == "__main__":
    main()
