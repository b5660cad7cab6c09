"""Seed 000: Kumar, Xue, Park, "Impact of Loss Synchronization on Reliable High Speed Networks"
(JCNC 2014), Figs. 2–12. Setups follow docs/model.md §4.4; where the paper does not say (the RTTs
of Fig. 3, the buffer of Figs. 10–12), the choice is stated in the study's `setup` text."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..io import atomic_write
from ..plot import plt
from ..stats import summarize
from .framework import (
    CROSS_ENGINES,
    VARIANT_NAMES,
    Claim,
    CrossCheck,
    Study,
    cell_means,
    deep_merge,
    engine_doc,
    fidelity_overrides,
    flatten,
    register,
    run_sweep,
    study_run,
)

#: The 10 Gbps setup of §5 (docs/model.md §4.4): 10 flows, RTT 80..260 ms, BDP 141,667 × 1500 B.
TEN_GIG = {
    "dumbbell": {"capacity": "10Gbps", "packet_size": 1500, "buffer": {"bdp_fraction": 0.1, "reference_rtt": "170ms"}},
    # The paper simulates no slow start and measures from the first congestion event; flows start
    # at 90% of their fair share of the BDP (12,750 packets, our choice) so that the first event
    # comes within minutes instead of after ~30 minutes of AIMD growth.
    "flows": [{"count": 10, "cc": "highspeed", "rtt": "80ms..260ms", "initial_window": 12750, "slow_start": False}],
    "loss": {"model": "sync", "sync": {"kind": "normal", "x": 0.6}, "policy": "highest_rate"},
    "run": {"duration": "3000s", "from_first_congestion": True, "record_interval": "10s"},
}

#: The motivation setup of §3.2: two flows, 1 Gbps, 120 ms, buffer 0.1 BDP, 200 s.
TWO_FLOWS = {
    "dumbbell": {"capacity": "1Gbps", "packet_size": 1500, "buffer": {"bdp_fraction": 0.1, "reference_rtt": "120ms"}},
    "flows": [
        {"name": "STCP", "cc": "scalable", "rtt": "120ms", "slow_start": False},  # the paper's: none
        {"name": "TCP", "cc": "reno", "rtt": "120ms", "slow_start": False},
    ],
    "loss": {"model": "sync", "sync": {"kind": "all"}, "policy": "highest_rate"},
    "run": {"duration": "200s", "from_first_congestion": True, "record_interval": "0.2s"},
}

FULL = {"kind": "all"}
ONE = {"kind": "fixed", "m": 1}
#: The engine these studies' own runs need: they impose the paper's loss synchronization (cases,
#: X, m), which only the fluid engine's `sync` model applies; another engine ignores it and every
#: case runs alike (fig3 on the packet engine ruled on four identical runs). Each study's claims
#: are judged at packet level by its cross-check (`packet:jitter`) instead.
PAPER_MODEL = ("fluid",)

#: Each pair runs in the paper's model and again with the fluid engine's recovery pause (a TCP
#: sender's silence after a cut until its data in flight fall to the new window; docs/fluid.md,
#: "Recovery pause"; our addition): (case, sync, pause, file tag).
PAIR_CASES = [("full synchronization", FULL, False, "full"), ("highest-rate flow only", ONE, False, "one"),
              ("full synchronization, recovery pause", FULL, True, "full-pause"),
              ("highest-rate flow only, recovery pause", ONE, True, "one-pause")]
FIG2_FLOWS = [{"name": "STCP", "cc": "scalable", "rtt": "120ms", "slow_start": False},
              {"name": "TCP", "cc": "reno", "rtt": "120ms", "slow_start": False}]
FIG3_FLOWS = [{"name": "low-RTT", "cc": "scalable", "rtt": "60ms", "slow_start": False},
              {"name": "high-RTT", "cc": "scalable", "rtt": "180ms", "slow_start": False}]
FIG4_FLOWS = [{"name": "early", "cc": "scalable", "rtt": "120ms", "slow_start": False},
              {"name": "late", "cc": "scalable", "rtt": "120ms", "start": "10s", "slow_start": False}]
#: Fig. 3's sensitivity run: a buffer where the 60 ms flow alone no longer fills the link (0.02 of
#: the BDP at 120 ms is 0.04 of its own, below the 0.143 a synchronized MIMD flow with γ = 0.875
#: needs: docs/model.md §4.2).
FIG3_SENSITIVITY_BUFFER = 0.02
#: Figs. 2–4 outside the paper's model: the model's own protocol, one run (no cases to enforce).
PAIR_PROTOCOL = {e: ("one 200 s run", "one 200 s run, as in full fidelity") for e in ("fluid:tcp", "packet:jitter")}


# ---------------------------------------------------------------------------------------------
# Figs. 2–4: two flows, full synchronization vs. dropping only the highest-rate flow.


def _pair_runner(flows: list[dict], extra_set: list[str] | None = None, sensitivity_buffer: float | None = None):
    """The pair's four cases; with `sensitivity_buffer` (a fraction of the BDP at 120 ms) the first
    two again at that buffer, for a verdict the study's choice of buffer decides."""
    def run_pair(out: Path, quick: bool, engine: str):
        cases = [(label, sync, pause, tag, {}) for label, sync, pause, tag in PAIR_CASES]
        if sensitivity_buffer is not None:
            cases += [(f"{label}, buffer {sensitivity_buffer:g} BDP", sync, pause, f"{tag}-{sensitivity_buffer:g}",
                       {"dumbbell": {"buffer": {"bdp_fraction": sensitivity_buffer}}}) for label, sync, pause, tag in PAIR_CASES[:2]]
        results = {}
        for label, sync, pause, tag, extra in cases:
            doc = deep_merge(TWO_FLOWS, {"flows": flows, "loss": {"sync": sync, "recovery_pause": pause}, "engine": engine, **extra})
            r = study_run(doc, label, extra_set)
            results[label] = r
            atomic_write(out / f"series-{tag}.parquet", lambda p, r=r: r.series.to_parquet(p, index=False))
        rows = []
        for label, r in results.items():
            s = r.summary
            tput = [f["throughput_bps"] for f in s["flows"]]
            rows.append({"case": label, "utilization": s["utilization"], "jain": s["jain"],
                         **{f"share_{f['group']}": t / sum(tput) for f, t in zip(s["flows"], tput)}})
        table = pd.DataFrame(rows).set_index("case")
        atomic_write(out / "results.csv", lambda p: table.to_csv(p))
        return {"table": table, "runs": results}

    return run_pair


def _pair_figure(data) -> Any:
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharey=True)
    for ax, (label, r) in zip(axes.flat, data["runs"].items()):
        s = r.series
        for f in r.summary["flows"]:
            ax.plot(s["time_s"], s[f"cwnd_pkts.{f['flow']}"], lw=0.9, label=f"{f['group']} ({f['rtt_s'] * 1e3:.0f} ms)")
        row = data["table"].loc[label]
        ax.set_title(f"{label}\nJain {row['jain']:.3f}, utilization {row['utilization']:.3f}", fontsize=10)
        ax.set_xlabel("time (s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("cwnd (packets)")
    fig.tight_layout()
    return fig


def _share(case: str, group: str):
    return lambda d: d["table"].loc[case, f"share_{group}"]


def _claim_share_above(case: str, group: str, threshold: float):
    def check(d):
        v = _share(case, group)(d)
        return f"{group} share {v:.3f} ({case})", bool(v > threshold)
    return check


def _pair_cross(flows: list[dict]):
    """Figs. 2–4 in an engine whose losses fall where its queue puts them: one run of the pair,
    the model's protocol (200 s, the model's start, statistics from the first congestion event)."""
    def run_it(out: Path, quick: bool, engine: str) -> dict:
        r = study_run(engine_doc(deep_merge(TWO_FLOWS, {"flows": flows}), engine), engine)
        s = r.summary
        tput = [f["throughput_bps"] for f in s["flows"]]
        row = {"utilization": s["utilization"], "jain": s["jain"], "sync_rate": s["sync_rate_mean"],
               "events": s["congestion_events"], **{f"share_{f['group']}": t / sum(tput) for f, t in zip(s["flows"], tput)}}
        out.mkdir(parents=True, exist_ok=True)
        atomic_write(out / "results.csv", lambda p: pd.DataFrame([row]).to_csv(p, index=False))
        return row
    return run_it


def _pair_engines_figure(model: dict, runs: dict[str, dict | str]):
    """Each case of the paper's model beside each engine's one run: the first flow's share,
    Jain's index and the utilization."""
    table = model["table"]
    first = [c for c in table.columns if c.startswith("share_")][0]
    bars = {case: table.loc[case] for case in table.index}
    bars |= {CROSS_ENGINES[e]: pd.Series(r) for e, r in runs.items() if not isinstance(r, str)}
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, (metric, label) in zip(axes, [(first, f"{first.removeprefix('share_')} share"), ("jain", "Jain's index"),
                                          ("utilization", "utilization")]):
        names = list(bars)
        ax.barh(range(len(names)), [bars[n][metric] for n in names],
                color=["tab:blue"] * len(table) + ["tab:green", "black", "tab:red"][:len(names) - len(table)])
        ax.set_yticks(range(len(names)), names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, 1.05)
        ax.set_title(label, fontsize=10)
        ax.grid(alpha=0.3, axis="x")
    fig.suptitle("The paper's model (blue: its enforced cases) beside the engines whose losses are their own", fontsize=10)
    fig.tight_layout()
    return fig


def _own_losses(d: dict) -> str:
    return f"its own losses: sync rate {d['sync_rate']:.2f} over {d['events']} events"


def _cross_share_above(group: str, threshold: float):
    return lambda d: (f"{group} share {d[f'share_{group}']:.3f} ({_own_losses(d)})", bool(d[f"share_{group}"] > threshold))


def _cross_improves(metric: str):
    """A claim that one flow per event improves `metric` on full synchronization. An engine
    cannot enforce either; where its own losses are fully synchronized (both flows at ≥ 95% of
    events) and the link stays full, there is no utilization left to improve: the claim fails.
    Otherwise it measures, and does not judge."""
    def check(d: dict) -> tuple[str, bool | None]:
        text = f"{metric} {d[metric]:.3f} ({_own_losses(d)}; which flows lose is not the engine's to choose)"
        full = metric == "utilization" and d["sync_rate"] >= 0.95 and d["utilization"] >= 0.995
        return text, False if full else None
    return check


def _claim_pause_drains(d) -> tuple[str, bool]:
    """docs/model.md §4.2's MIMD closed form at ρ = 0.1: U = (1 − g + ρ)/(ln(1/g) + ρ), g = 0.875·1.1."""
    g, rho = 0.875 * 1.1, 0.1
    closed = (1 - g + rho) / (math.log(1 / g) + rho)
    t = d["table"]
    full, one = (t.loc[f"{case}, recovery pause", "utilization"] for case in ("full synchronization", "highest-rate flow only"))
    paper = t.loc["full synchronization", "utilization"]
    return (f"with the pause: full synchronization U {full:.4f} (closed form {closed:.4f}), one flow per event {one:.4f}; "
            f"the paper's model {paper:.4f}", bool(abs(full - closed) <= 0.01 and full < one))


def _claim_improves(metric: str, suffix: str = ""):
    def check(d):
        a = d["table"].loc["full synchronization" + suffix, metric]
        b = d["table"].loc["highest-rate flow only" + suffix, metric]
        return f"{metric} {a:.3f} → {b:.3f}", bool(b > a)
    return check


# ---------------------------------------------------------------------------------------------
# Fig. 8: validation setup; Fig. 9: utilization vs buffer at 10 Gbps.

FIG8_FRACTIONS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0]
FIG9_FRACTIONS = [0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0]
#: Fig. 9's panels, in the paper's order.
FIG9_PANELS = ["highspeed", "cubic", "reno", "htcp"]
XS = [0.3, 0.6, 1.0]


#: Fig. 8's setup without its loss model. The buffer axis is a fraction of 12,500 packets, the
#: paper's unit (docs/model.md §4.4 notes it is the 100 ms BDP, not the 124.5 ms one).
FIG8_BASE = {
    "dumbbell": {"capacity": "1Gbps", "packet_size": 1000, "buffer": {"packets": 1250}},
    "flows": [{"count": 10, "cc": "highspeed", "rtt": "115.5ms..124.5ms", "initial_window": 750, "slow_start": False}],
    "run": {"duration": "3000s", "from_first_congestion": True, "record_interval": "10s"},
}
FIG8_PACKETS = [round(f * 12_500) for f in FIG8_FRACTIONS]


def _fig8_packet_protocol(base: dict, quick: bool) -> tuple[dict, int, list[str]]:
    """The paper's NS2 runs, with our packet engine in their place: real TCP with slow start,
    statistics after a 100 s warm-up; fewer and shorter runs (a packet run of 1 Gbps costs about
    10 ms of wall time per simulated second). Returns the document, its seeds and overrides."""
    doc = deep_merge(base, {"flows": [dict(base["flows"][0], slow_start=True)]})
    doc["run"] = {"duration": "600s", "warmup": "100s", "record_interval": "10s"}
    return doc, (1 if quick else 3), (["run.duration=150", "run.warmup=50"] if quick else [])


def _run_fig8(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    seeds, fixed = fidelity_overrides(quick)
    base = {**FIG8_BASE, "loss": {"model": "sync", "sync": {"kind": "normal", "x": 0.6}}}
    packets = FIG8_PACKETS
    sync = run_sweep(out / "sync", base, {"dumbbell.buffer.packets": packets, "loss.sync.x": XS}, seeds, fixed, engine)
    prop_base = deep_merge(base, {"loss": {"model": "proportional"}})
    prop_base["loss"] = {"model": "proportional"}
    prop = run_sweep(out / "proportional", prop_base, {"dumbbell.buffer.packets": packets}, seeds, fixed, engine)
    sync["model"] = sync["loss.sync.x"].map(lambda x: f"sync X={x:g}")
    prop["model"] = "proportional"
    frames = [sync.drop(columns=["loss.sync.x"]), prop]
    if engine == "fluid":
        packet_base, packet_seeds, packet_fixed = _fig8_packet_protocol(base, quick)
        packet_base |= {"engine": "packet", "loss": {"model": "proportional"}}
        packet = run_sweep(out / "packet", packet_base, {"dumbbell.buffer.packets": packets}, packet_seeds, packet_fixed, "packet")
        packet["model"] = "packet engine"
        frames.append(packet)
    rows = pd.concat(frames, ignore_index=True)
    rows["buffer_fraction"] = rows["dumbbell.buffer.packets"] / 12_500
    rows = rows.drop(columns=["dumbbell.buffer.packets"])
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows


def _fig8_figure(rows: pd.DataFrame):
    cells = cell_means(rows)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for model, g in cells.groupby("model"):
        ax.errorbar(g["buffer_fraction"], g["mean/utilization"], yerr=g["ci95/utilization"], marker="o", ms=3, capsize=2, label=model)
    ax.set_xscale("log")
    ax.set_xlabel("buffer (fraction of 12,500 packets)")
    ax.set_ylabel("link utilization")
    ax.set_title("Fig. 8 setup: 10 HSTCP flows, 1 Gbps, RTT 115.5–124.5 ms", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _run_fig8_cross(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    """Fig. 8's setup in the default fluid model (the model's protocol) and in the packet engine
    with send jitter (the protocol of its packet runs above)."""
    if engine == "fluid:tcp":
        base = FIG8_BASE
        seeds, fixed = fidelity_overrides(quick)
    else:
        base, seeds, fixed = _fig8_packet_protocol(FIG8_BASE, quick)
    doc = engine_doc(base, engine)
    rows = run_sweep(out / "sweep", doc, {"dumbbell.buffer.packets": FIG8_PACKETS}, seeds, fixed, doc["engine"])
    rows["buffer_fraction"] = rows["dumbbell.buffer.packets"] / 12_500
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows


def _fig8_engines_figure(model: pd.DataFrame, runs: dict[str, pd.DataFrame]):
    fig = _fig8_figure(model)
    ax = fig.axes[0]
    for engine, rows in runs.items():
        c = cell_means(rows)
        ax.plot(c["buffer_fraction"], c["mean/utilization"], "k-" if engine == "packet:jitter" else "g--", lw=2,
                label=CROSS_ENGINES[engine] + (" (send jitter)" if engine == "packet:jitter" else ""))
    ax.legend(fontsize=8)
    return fig


def _hstcp_90_at_01(rows: pd.DataFrame) -> tuple[str, bool]:
    u = _u(rows, buffer_fraction=0.1)
    return f"U at 0.1 × 12,500: {u:.3f}", u > 0.9


def _fig8_match(rows: pd.DataFrame) -> tuple[str, bool | None]:
    if "packet engine" not in set(rows["model"]):
        return "no packet-engine runs (engine other than fluid)", None
    cells = cell_means(rows).set_index(["model", "buffer_fraction"])["mean/utilization"]
    ref = cells.loc["packet engine"]
    err = {x: float((cells.loc[f"sync X={x:g}"] - ref).abs().mean()) for x in XS}
    text = "mean |U_fluid − U_packet| over buffers: " + ", ".join(f"X={x:g}: {e:.3f}" for x, e in err.items())
    return text, err[1.0] > max(err[0.3], err[0.6])


def _u(rows: pd.DataFrame, **where) -> float:
    sel = rows[rows["status"] == "ok"]
    for k, v in where.items():
        sel = sel[np.isclose(sel[k], v)] if isinstance(v, float) else sel[sel[k] == v]
    return float(sel["utilization"].mean())


def _run_fig9(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    seeds, fixed = fidelity_overrides(quick)
    axes = {"flows.0.cc": ["reno", "highspeed", "cubic", "htcp"], "loss.sync.x": XS,
            "dumbbell.buffer.bdp_fraction": FIG9_FRACTIONS}
    rows = run_sweep(out / "sweep", TEN_GIG, axes, seeds, fixed, engine)
    rows = rows.rename(columns={"flows.0.cc": "variant", "loss.sync.x": "X", "dumbbell.buffer.bdp_fraction": "buffer_fraction"})
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows




#: Fig. 9 outside the paper's model. The packet engine runs every variant at the buffers the
#: claims name; it starts in slow start (a packet sender cannot open at 12,750 packets without a
#: burst the paper's fluid never has) and measures after a warm-up.
FIG9_PACKET_VARIANTS = ["highspeed", "cubic", "htcp"]
FIG9_PACKET_FRACTIONS = {False: [0.01, 0.05, 0.1, 0.2], True: [0.05, 0.2]}
#: (run, warm-up) in seconds: full, --quick.
FIG9_PACKET_RUN = {False: (400.0, 100.0), True: (30.0, 10.0)}
#: AIMD, full protocol only: slow start's losses leave the ten windows at about 48,500 packets in
#: all, and they grow by Σ 1/RTT ≈ 67 packets/s, so the first congestion event comes after about
#: 1,500 s, and a cycle that halves every window (half of BDP + B back) takes about 1,100 s. The
#: warm-up passes the first event; the 4,400 s measured hold about four such cycles (measured: 7-8
#: congestion events, each cutting about half the flows).
FIG9_PACKET_AIMD_RUN = (6400.0, 2000.0)


def _run_fig9_cross(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    if engine == "fluid:tcp":  # the model's protocol, its sync module replaced
        seeds, fixed = fidelity_overrides(quick)
        base, axes = engine_doc(TEN_GIG, engine), {"flows.0.cc": ["reno", "highspeed", "cubic", "htcp"],
                                                   "dumbbell.buffer.bdp_fraction": FIG9_FRACTIONS}
    else:
        duration, warmup = FIG9_PACKET_RUN[quick]
        seeds, fixed = 1, []
        base = engine_doc(deep_merge(TEN_GIG, {
            "flows": [{"count": 10, "cc": "highspeed", "rtt": "80ms..260ms", "slow_start": True}],
            "run": {"duration": duration, "warmup": warmup, "from_first_congestion": False, "record_interval": "1s"}}), engine)
        axes = {"flows.0.cc": FIG9_PACKET_VARIANTS, "dumbbell.buffer.bdp_fraction": FIG9_PACKET_FRACTIONS[quick]}
    rows = run_sweep(out / "sweep", base, axes, seeds, fixed, base["engine"])
    if engine == "packet:jitter" and not quick:
        duration, warmup = FIG9_PACKET_AIMD_RUN
        aimd = deep_merge(base, {"run": {"duration": duration, "warmup": warmup}})
        rows = pd.concat([rows, run_sweep(out / "sweep-aimd", aimd, {**axes, "flows.0.cc": ["reno"]}, 1, [],
                                          base["engine"])], ignore_index=True)
    rows = rows.rename(columns={"flows.0.cc": "variant", "dumbbell.buffer.bdp_fraction": "buffer_fraction"})
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows


def _fig9_engines_figure(model: pd.DataFrame, runs: dict[str, pd.DataFrame]):
    """Per variant, utilization against the buffer: the paper's model at each X beside the two
    engines whose synchronization is their own."""
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharey=True)
    styles = {"fluid:tcp": ("tab:green", "s", "--"), "packet:jitter": ("black", "o", "-")}
    for ax, v in zip(axes.flat, FIG9_PANELS):
        cells = cell_means(model)
        for x, g in cells[cells["variant"] == v].groupby("X"):
            ax.plot(g["buffer_fraction"], g["mean/utilization"], marker=".", lw=0.8, alpha=0.6, label=f"paper's model, X = {x:g}")
        for engine, rows in runs.items():
            c = cell_means(rows)
            g = c[c["variant"] == v]
            if len(g):
                color, marker, ls = styles[engine]
                ax.plot(g["buffer_fraction"], g["mean/utilization"], color=color, marker=marker, ls=ls, label=CROSS_ENGINES[engine])
    return _fig9_layout(fig, axes, "Fig. 9 in three engines")


#: Why a claim about the sync level is judged in the paper's model only.
ABOUT_X = "it is about the sync level X, a parameter of the paper's model"


def _fig9_figure(rows: pd.DataFrame):
    cells = cell_means(rows)
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharey=True)
    for ax, v in zip(axes.flat, FIG9_PANELS):
        for x, g in cells[cells["variant"] == v].groupby("X"):
            ax.errorbar(g["buffer_fraction"], g["mean/utilization"], yerr=g["ci95/utilization"], marker="o", ms=3, capsize=2, label=f"X = {x:g}")
    return _fig9_layout(fig, axes, "Fig. 9")


def _fig9_layout(fig, axes, title: str):
    """Fig. 9's panels, one per variant in FIG9_PANELS: log buffer axis, the 90% line, labels."""
    for ax, v in zip(axes.flat, FIG9_PANELS):
        ax.set_title(VARIANT_NAMES[v], fontsize=10)
        ax.set_xscale("log")
        ax.axhline(0.9, color="grey", ls=":", lw=0.8)
        ax.grid(alpha=0.3, which="both")
        ax.set_xlabel("buffer (fraction of BDP = 141,667 packets)")
        ax.legend(fontsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel("link utilization")
    fig.suptitle(f"{title}: 10 flows, 10 Gbps, RTT 80–260 ms", fontsize=11)
    fig.tight_layout()
    return fig


def _check(description: str, fn: Callable[[pd.DataFrame], tuple[str, bool]]):
    return Claim(description, fn)


def _monotone_in_buffer(rows: pd.DataFrame) -> tuple[str, bool]:
    cells = cell_means(rows)
    worst = 0.0
    for _, g in cells.groupby([c for c in ("variant", "X") if c in cells]):
        u = g.sort_values("buffer_fraction")["mean/utilization"].to_numpy()
        worst = min(worst, float(np.min(np.diff(u))) if len(u) > 1 else 0.0)
    return f"largest drop between neighbouring buffer sizes: {worst:+.4f}", worst > -0.005


def _desync_helps(rows: pd.DataFrame) -> tuple[str, bool]:
    small = rows[rows["buffer_fraction"] <= 0.1]
    lines, ok = [], True
    for v in ["reno", "highspeed", "cubic", "htcp"]:
        a, b = _u(small, variant=v, X=0.3), _u(small, variant=v, X=1.0)
        lines.append(f"{VARIANT_NAMES[v]} {b:.3f}→{a:.3f}")
        ok &= a >= b
    return "mean U over buffers ≤ 0.1 BDP, X=1 → X=0.3: " + ", ".join(lines), ok


def _xs(rows: pd.DataFrame) -> list[float | None]:
    """The sync levels X of `rows`, or [None] for an engine without the sync module."""
    return XS if "X" in rows else [None]


def _u_at(rows: pd.DataFrame, x: float | None, **where) -> float:
    return _u(rows, **where) if x is None else _u(rows, X=x, **where)


def _x_label(x: float | None) -> str:
    return "" if x is None else f"X={x:g}: "


def _missing(rows: pd.DataFrame, *variants: str) -> tuple[str, None] | None:
    """A claim's verdict where an engine did not run one of its variants (see its protocol)."""
    gone = [VARIANT_NAMES[v] for v in variants if v not in set(rows["variant"])]
    return (f"{', '.join(gone)} not run in this engine (see its protocol)", None) if gone else None


def _at_005(variant: str, test: Callable[[float], bool]):
    def check(rows):
        if (m := _missing(rows, variant)) is not None:
            return m
        u = {x: _u_at(rows, x, variant=variant, buffer_fraction=0.05) for x in _xs(rows)}
        return (f"{VARIANT_NAMES[variant]} at 0.05 BDP: " + ", ".join(f"{_x_label(x)}{v:.3f}" for x, v in u.items()),
                all(test(v) for v in u.values()))
    return check


_hstcp_90_below_10 = _at_005("highspeed", lambda u: u > 0.9)
_cubic_below_90 = _at_005("cubic", lambda u: u < 0.9)


def _cubic_x06_no_better(rows):
    big = rows[rows["buffer_fraction"] > 0.2]
    a, b, c = (_u(big, variant="cubic", X=x) for x in [0.6, 1.0, 0.3])
    # Half a point resolves both halves: "helps" is X = 0.3 at least 0.5 point above X = 1 (where
    # all three are within 1e-4 of full, it does not help), "no improvement" less than that.
    return f"CUBIC, buffers > 0.2 BDP: X=1 {b:.4f}, X=0.6 {a:.4f}, X=0.3 {c:.4f}", (a - b) < 0.005 and c - b >= 0.005


def _by_cell(cells: pd.DataFrame, variant: str) -> pd.Series:
    """A variant's mean utilization per cell (sync level, where the engine has one, and buffer)."""
    return cells[cells["variant"] == variant].set_index([c for c in ("X", "buffer_fraction") if c in cells])["mean/utilization"]


def _ordering(better: str, worse: str, slack: float = 0.0):
    def check(rows):
        if (m := _missing(rows, better, worse)) is not None:
            return m
        cells = cell_means(rows)
        d = _by_cell(cells, better) - _by_cell(cells, worse)
        return (f"{VARIANT_NAMES[better]} − {VARIANT_NAMES[worse]} over all cells: min {d.min():+.3f}, mean {d.mean():+.3f}",
                bool(d.min() >= -slack))
    return check


def _comparable(a: str, b: str, within: float):
    def check(rows):
        if (m := _missing(rows, a, b)) is not None:
            return m
        cells = cell_means(rows)
        d = (_by_cell(cells, a) - _by_cell(cells, b)).abs()
        return f"|{VARIANT_NAMES[a]} − {VARIANT_NAMES[b]}|: max {d.max():.3f}, mean {d.mean():.3f}", bool(d.max() <= within)
    return check


def _htcp_small_buffers(rows):
    s, d = _u(rows, variant="htcp", X=1.0, buffer_fraction=0.05), _u(rows, variant="htcp", X=0.3, buffer_fraction=0.05)
    h = _u(rows, variant="highspeed", X=1.0, buffer_fraction=0.05)
    return f"H-TCP at 0.05 BDP: X=1 {s:.3f}, X=0.3 {d:.3f} (HSTCP X=1: {h:.3f})", s < d and s < h


# ---------------------------------------------------------------------------------------------
# Figs. 10–12: fixed synchronization level m = 1..10.

MS = list(range(1, 11))


def about_m(claims: int) -> CrossCheck:
    """Figs. 10–12: every claim is about m, the number of flows the sync module makes lose at an
    event; an engine whose losses fall where its queue puts them has no m to set."""
    reason = "it is about m, the flows the paper's model makes lose at each event, which no other engine sets"
    return CrossCheck(None, {e: ("", "") for e in ("fluid:tcp", "packet:jitter")}, [reason] * claims)
HETERO = [{"count": 2, "cc": v, "rtt": rtt, "initial_window": 12750, "slow_start": False} for v, rtt in
          [("reno", "80ms..100ms"), ("highspeed", "120ms..140ms"), ("cubic", "160ms..180ms"),
           ("htcp", "200ms..220ms"), ("scalable", "240ms..260ms")]]


def _run_m_sweep(variants: list[str], hetero: bool = False):
    def run_it(out: Path, quick: bool, engine: str) -> pd.DataFrame:
        seeds, fixed = fidelity_overrides(quick)
        base = json.loads(json.dumps(TEN_GIG))
        base["loss"]["sync"] = {"kind": "fixed", "m": 1}
        if hetero:
            base["flows"] = HETERO
            axes = {"loss.sync.m": MS}
        else:
            axes = {"flows.0.cc": variants, "loss.sync.m": MS}
        rows = run_sweep(out / "sweep", base, axes, seeds, fixed, engine)
        rows = rows.rename(columns={"flows.0.cc": "variant", "loss.sync.m": "m"})
        if hetero:
            rows["variant"] = "mixed"
        atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
        return rows
    return run_it


def _m_figure(title: str):
    def figure(rows: pd.DataFrame):
        cells = flatten(summarize(rows, ["utilization", "jain"]))
        variants = list(dict.fromkeys(cells["variant"]))
        fig, axes = plt.subplots(1, len(variants), figsize=(4.2 * len(variants), 3.8), squeeze=False)
        for ax, v in zip(axes[0], variants):
            g = cells[cells["variant"] == v].sort_values("m")
            ax.errorbar(g["m"], g["mean/utilization"], yerr=g["ci95/utilization"], marker="o", ms=3, label="utilization")
            ax.errorbar(g["m"], g["mean/jain"], yerr=g["ci95/jain"], marker="s", ms=3, label="Jain")
            ax.set_title(VARIANT_NAMES.get(v, "2 flows each of AIMD, HSTCP, CUBIC, H-TCP, STCP"), fontsize=9)
            ax.set_xlabel("synchronization level m (flows dropped per event)")
            ax.set_ylim(0, 1.05)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        return fig
    return figure


def _by_m(rows, variant, metric="utilization"):
    sel = rows[(rows["status"] == "ok") & (rows["variant"] == variant)]
    return sel.groupby("m")[metric].mean()


def _m_claim(variant: str, kind: str):
    def check(rows):
        u, j = _by_m(rows, variant), _by_m(rows, variant, "jain")
        if kind == "cubic":
            return (f"m=10: U {u[10]:.3f}, J {j[10]:.3f}; m=1: U {u[1]:.3f}, J {j[1]:.3f}",
                    j[10] > 0.9 and u[1] > u[10] and j[1] > 0.95)
        if kind == "hstcp":
            best = int(u.idxmax())
            return f"utilization peaks at m = {best} ({u.max():.3f}); J min at m = {int(j.idxmin())}", 3 <= best <= 5
        if kind == "htcp":
            r = float(np.corrcoef(u.index, u.values)[0, 1])
            return f"U from {u[1]:.3f} (m=1) to {u[10]:.3f} (m=10), correlation with m {r:+.2f}", r < -0.9
        if kind == "stcp":
            lo = int(j.idxmin())
            return (f"J: m=1 {j[1]:.3f}, min {j.min():.3f} at m={lo}, m=10 {j[10]:.3f}; U m=1 {u[1]:.3f} → m=10 {u[10]:.3f}",
                    1 < lo < 10 and u[10] <= u[1])
        if kind == "aimd":
            return f"m=1: U {u[1]:.3f}, J {j[1]:.3f}; m=10: U {u[10]:.3f}, J {j[10]:.3f}", u[1] > u[10] and j[1] > j[10]
        if kind == "hetero":
            lo_u, hi_u = u[u.index < 4].mean(), u[u.index > 4].mean()
            lo_j, hi_j = j[j.index < 4].mean(), j[j.index > 4].mean()
            return (f"m<4: U {lo_u:.3f}, J {lo_j:.3f}; m>4: U {hi_u:.3f}, J {hi_j:.3f}", lo_u > hi_u and lo_j > hi_j)
        raise ValueError(kind)
    return check

#


register(Study(
    "fig2", "Fig. 2: Scalable TCP vs standard TCP, full vs partial synchronization",
    "2 flows (STCP, Reno), 1 Gbps, RTT 120 ms, buffer 0.1 BDP, 200 s (§3.2); (a) both flows lose at every "
    "event, (b) only the flow with the highest rate loses (m = 1, highest-rate policy). Each case also with the "
    "fluid engine's recovery pause (our addition, docs/fluid.md).",
    _pair_runner(FIG2_FLOWS),
    _pair_figure,
    [Claim("“STCP occupies the major bandwidth” when both flows are synchronized", _claim_share_above("full synchronization", "STCP", 0.5)),
     Claim("“In the case of dropping only one flow with highest sending rate … the fairness improves”", _claim_improves("jain"))],
    fidelity=("one deterministic 200 s run per case", "one 200 s run per case, as in full fidelity"),
    cross=CrossCheck(_pair_cross(FIG2_FLOWS), PAIR_PROTOCOL, [_cross_share_above("STCP", 0.5), _cross_improves("jain")],
                     _pair_engines_figure),
    engines=PAPER_MODEL,
))
register(Study(
    "fig3", "Fig. 3: two Scalable TCP flows with low and high RTT",
    "2 STCP flows, 1 Gbps, RTT 60 ms and 180 ms (our choice: the paper says only “low and high”, mean 120 ms), "
    "buffer 0.1 BDP at 120 ms, 200 s. Each case also with the fluid engine's recovery pause (our addition, docs/fluid.md). "
    "A sensitivity run repeats the first two cases at a buffer of 0.02 BDP.",
    _pair_runner(FIG3_FLOWS, sensitivity_buffer=FIG3_SENSITIVITY_BUFFER),
    _pair_figure,
    [Claim("“the flow with low RTT consumes the major bandwidth and the other flow starves” (full synchronization)", _claim_share_above("full synchronization", "low-RTT", 0.5)),
     Claim("“when we enforce only one flow to lose … a good improvement in fairness”", _claim_improves("jain")),
     Claim("“… as well as link utilization”", _claim_improves("utilization")),
     Claim(f"The same at a buffer of {FIG3_SENSITIVITY_BUFFER:g} BDP (sensitivity: the figure's buffer is our choice, and "
           "decides the verdict above)", _claim_improves("utilization", f", buffer {FIG3_SENSITIVITY_BUFFER:g} BDP"))],
    fidelity=("one deterministic 200 s run per case", "one 200 s run per case, as in full fidelity"),
    cross=CrossCheck(_pair_cross(FIG3_FLOWS), PAIR_PROTOCOL,
                     [_cross_share_above("low-RTT", 0.5), _cross_improves("jain"), _cross_improves("utilization"),
                      "a sensitivity run of the paper's model"],
                     _pair_engines_figure),
    engines=PAPER_MODEL,
))
register(Study(
    "fig4", "Fig. 4: two Scalable TCP flows, the second starting 10 s later",
    "2 STCP flows, 1 Gbps, RTT 120 ms, buffer 0.1 BDP, flow 2 starts at 10 s, 200 s, measured from the first "
    "congestion event. Each case also with the fluid engine's recovery pause (our addition, docs/fluid.md).",
    _pair_runner(FIG4_FLOWS),
    _pair_figure,
    [Claim("“When losses are synchronized, STCP starting after 10 seconds gets lesser bandwidth”", _claim_share_above("full synchronization", "early", 0.5)),
     Claim("“improvement in fairness when we enforce the partial synchronization”", _claim_improves("jain")),
     Claim("Our addition: a synchronized MIMD pair drains the queue (docs/model.md §4.2's closed form: U = 0.995 at "
           "ρ = 0.1) and one flow per event does not; the paper's rate model shows neither (U = 1 in both cases), the "
           "fluid engine's recovery pause both: U within 1 point of the closed form, below one flow per event's",
           _claim_pause_drains)],
    fidelity=("one deterministic 200 s run per case", "one 200 s run per case, as in full fidelity"),
    cross=CrossCheck(_pair_cross(FIG4_FLOWS), PAIR_PROTOCOL,
                     [_cross_share_above("early", 0.5), _cross_improves("jain"),
                      "it is about the sync module's two regimes and the fluid engine's recovery pause"],
                     _pair_engines_figure),
    engines=PAPER_MODEL,
))
register(Study(
    "fig8", "Fig. 8: the validation setup (HSTCP, 1 Gbps, 1 KB packets)",
    "10 HSTCP flows, RTT 115.5..124.5 ms, 1 Gbps, 1000 B packets, buffer 0.01..1 × 12,500 packets; the fluid model in "
    "sync mode at X = 0.3, 0.6, 1 and in proportional mode, beside our packet engine (HSTCP with slow start, SACK, "
    "3 runs × 600 s after a 100 s warm-up) in place of the paper's NS2. The Boston model is not reproduced.",
    _run_fig8, _fig8_figure,
    [Claim("“As we decrease the synchronization … the utilization improves” (mean over buffers ≤ 0.2)",
           lambda r: (lambda a, b: (f"X=1 {b:.3f} → X=0.3 {a:.3f}", a > b))(
               _u(r[r["buffer_fraction"] <= 0.2], model="sync X=0.3"), _u(r[r["buffer_fraction"] <= 0.2], model="sync X=1"))),
     Claim("Boston model / Barman et al. [1]: HSTCP reaches > 90% utilization with a buffer of 10% of BDP (desynchronized, X = 0.3)",
           lambda r: (lambda u: (f"U at 0.1 × 12,500, X=0.3: {u:.3f}", u > 0.9))(_u(r, model="sync X=0.3", buffer_fraction=0.1))),
     Claim("“when all the flows are synchronized, fluid model does not match with the NS2 simulation result”; X = 0.6, 0.3 "
           "match better (our packet engine in place of NS2)", _fig8_match)],
    cross=CrossCheck(
        _run_fig8_cross,
        {"fluid:tcp": ("10 seeds × 3000 s", "2 seeds × 300 s"),
         "packet:jitter": ("3 seeds × 600 s from slow start, 100 s warm-up", "1 seed × 150 s, 50 s warm-up")},
        [ABOUT_X, _hstcp_90_at_01, "it compares the paper's model at each X with NS2 (our packet engine)"],
        _fig8_engines_figure),
    fidelity=("fluid 10 seeds × 3000 s; packet 3 × 600 s", "fluid 2 seeds × 300 s; packet 1 × 150 s"),
    engines=PAPER_MODEL,
))
register(Study(
    "fig9", "Fig. 9: utilization vs buffer size at 10 Gbps",
    "10 flows, 10 Gbps, RTT 80..260 ms, BDP 141,667 packets, buffer 0.01..1 BDP; AIMD, HSTCP, CUBIC (β = 0.7), H-TCP; "
    "X = 0.3, 0.6, 1 (m_k from the bounded normal with the default mean and deviation), highest-rate policy.",
    _run_fig9, _fig9_figure,
    [Claim("“as buffer size increases link utilization improves”", _monotone_in_buffer),
     Claim("“de-synchronization improves the link utilization”", _desync_helps, quick_decides=False),
     Claim("HSTCP: > 90% with buffers below 10% of BDP (slides: at 0.05 BDP)", _hstcp_90_below_10),
     Claim("CUBIC: “less than 90% link utilization for all the three values of X” (at 0.05 BDP)", _cubic_below_90),
     Claim("CUBIC, buffers > 20% BDP: less synchronization helps, but “X = 0.6 does not show any improvement than X = 1”", _cubic_x06_no_better, quick_decides=False),
     Claim("“HSTCP performs better than CUBIC TCP with various buffer sizes” (ties within 0.5 point count)", _ordering("highspeed", "cubic", 0.005)),
     # AIMD's saw-tooth here lasts about 1,100 s: a --quick run (300 s) sees at most one of its
     # congestion events, and 24 of its 48 AIMD runs in the model none at all (U = 1.0).
     Claim("“AIMD outperforms CUBIC” (ties within 0.5 point count)", _ordering("reno", "cubic", 0.005), quick_decides=False),
     Claim("“AIMD … is comparable to HSTCP” (within 3 points in every cell)", _comparable("reno", "highspeed", 0.03),
           quick_decides=False),
     Claim("H-TCP “performs poorly for small buffer sizes … synchronized … at 0.05 BDP. However, desynchronized flows … better”", _htcp_small_buffers)],
    cross=CrossCheck(
        _run_fig9_cross,
        {"fluid:tcp": ("10 seeds × 3000 s, the model's start", "2 seeds × 300 s"),
         "packet:jitter": (f"HSTCP, CUBIC, H-TCP at {', '.join(f'{b:g}' for b in FIG9_PACKET_FRACTIONS[False])} BDP, one seed × "
                           f"{FIG9_PACKET_RUN[False][0]:.0f} s from slow start, {FIG9_PACKET_RUN[False][1]:.0f} s warm-up; AIMD "
                           f"× {FIG9_PACKET_AIMD_RUN[0]:.0f} s, {FIG9_PACKET_AIMD_RUN[1]:.0f} s warm-up (its cycle is about 1,100 s)",
                           f"at {', '.join(f'{b:g}' for b in FIG9_PACKET_FRACTIONS[True])} BDP, one seed × {FIG9_PACKET_RUN[True][0]:.0f} s, "
                           f"{FIG9_PACKET_RUN[True][1]:.0f} s warm-up, no AIMD")},
        [_monotone_in_buffer, ABOUT_X, _hstcp_90_below_10, _cubic_below_90, ABOUT_X, _ordering("highspeed", "cubic", 0.005),
         _ordering("reno", "cubic", 0.005), _comparable("reno", "highspeed", 0.03), ABOUT_X],
        _fig9_engines_figure),
    engines=PAPER_MODEL,
))
register(Study(
    "fig10", "Fig. 10: synchronization level m vs utilization and fairness, homogeneous flows",
    "10 flows of one variant, the 10 Gbps setup with a buffer of 10% of BDP (our choice: the paper does not give it), "
    "m fixed from 1 to 10, highest-rate policy.",
    _run_m_sweep(["cubic", "highspeed", "htcp", "scalable"]), _m_figure("Fig. 10: homogeneous flows, 10 Gbps"),
    [Claim("CUBIC: “when all the flows are synchronized CUBIC shows good fairness but poor link utilization. As synchronization level decreases, utilization improves and the fairness index is almost 1”", _m_claim("cubic", "cubic")),
     Claim("HSTCP: “high link utilization for values 3 to 5”", _m_claim("highspeed", "hstcp")),
     Claim("H-TCP: “a linear decrease in utilization as m increases”", _m_claim("htcp", "htcp")),
     Claim("STCP: “fairness … decreases first and then improves … For link utilization, we see a slight decrease”", _m_claim("scalable", "stcp"))],
    cross=about_m(4),
    engines=PAPER_MODEL,
))
register(Study(
    "fig11", "Fig. 11: synchronization level m, 10 AIMD flows",
    "10 AIMD (Reno) flows, the 10 Gbps setup, buffer 10% of BDP, m = 1..10.",
    _run_m_sweep(["reno"]), _m_figure("Fig. 11: 10 AIMD flows, 10 Gbps"),
    [Claim("“decreasing m improves link utilization as well as fairness”", _m_claim("reno", "aimd"))],
    cross=about_m(1),
    engines=PAPER_MODEL,
))
register(Study(
    "fig12", "Fig. 12: synchronization level m, heterogeneous flows",
    "2 flows each of AIMD, HSTCP, CUBIC, H-TCP, STCP (RTTs 80..260 ms assigned in that order, our choice), "
    "the 10 Gbps setup, buffer 10% of BDP, m = 1..10.",
    _run_m_sweep([], hetero=True), _m_figure("Fig. 12: heterogeneous flows, 10 Gbps"),
    [Claim("“fairness and link utilization both improve as synchronization parameter decreases below 4 … poor … for values greater than 4”", _m_claim("mixed", "hetero"))],
    cross=about_m(1),
    engines=PAPER_MODEL,
))

