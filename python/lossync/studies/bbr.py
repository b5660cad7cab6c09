"""`lossync reproduce bbr-buffers`: how much buffer CUBIC, Reno and BBR v1 need, what BBR does to
the queue and to losses, and how BBR and CUBIC share a bottleneck, against buffer size (1% to
2 BDP), in the fluid and packet engines side by side, and in Linux (`--engine kernel`, as root)
at a capacity the kernel engine emulates cleanly. Not a seed paper: the claims are the published
results that users sizing buffers for BBR start from (issue 13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ..io import atomic_write
from ..plot import plt
from .framework import Claim, Study, register, run_sweep

SOURCE = ("Spang, Arslan, McKeown, 'Updating the theory of buffer sizing', Performance 2021; Cardwell et al., "
          "'BBR: congestion-based congestion control', ACM Queue 14(5), 2016; Hock, Bless, Zitterbart, "
          "'Experimental evaluation of BBR congestion control', ICNP 2017; Ware, Mukerjee, Seshan, Sherry, "
          "'Modeling BBR's interactions with loss-based congestion control', IMC 2019")

#: The flow sets: 8 flows, RTTs spread over 10..100 ms, started together in slow start.
SETS = {
    "reno": [("reno", 8)],
    "cubic": [("cubic", 8)],
    "bbr": [("bbr", 8)],
    "bbr+cubic": [("bbr", 4), ("cubic", 4)],
}
BUFFERS = [0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0]
#: Linux runs in real time, one at a time (about 40 s each): issue 13's grid (10-100% BDP) and
#: the two ends.
KERNEL_BUFFERS = [0.02, 0.1, 0.25, 0.5, 1.0, 2.0]
QUICK_BUFFERS = [0.02, 0.1, 2.0]
#: Capacity -> (run length, warm-up) in seconds, full fidelity; 40 Mb/s is under the kernel
#: engine's clean limit on 2 cores (docs/kernel.md).
CAPACITIES = {"40Mbps": (30.0, 10.0), "10Gbps": (30.0, 10.0), "100Gbps": (12.0, 6.0)}
#: 100 Gb/s in the packet engine is about a wall second per simulated second and flow set: a
#: few buffers only.
BUFFERS_100G = [0.01, 0.1, 1.0]
QUICK_CAPACITIES = {"40Mbps": (20.0, 6.0), "10Gbps": (8.0, 3.0)}


def _doc(flows: list[tuple[str, int]], capacity: str, duration_s: float, warmup_s: float) -> dict[str, Any]:
    return {
        "dumbbell": {"capacity": capacity, "buffer": {"bdp_fraction": 1.0}},
        "flows": [{"name": cc, "cc": cc, "count": n, "rtt": "10ms..100ms", "slow_start": True} for cc, n in flows],
        "run": {"duration": duration_s, "warmup": warmup_s, "record_interval": 1.0},
    }


def share_columns(result) -> dict[str, Any]:
    """Each variant's share of the throughput, and the mean queueing delay."""
    s = result.summary
    total = sum(f["throughput_pps"] for f in s["flows"]) or 1.0
    out = {f"share_{v}": 0.0 for v in ("bbr", "cubic", "reno")}
    for f in s["flows"]:
        out[f"share_{f['variant']}"] += f["throughput_pps"] / total
    return out


def run_bbr(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    """Fluid and packet always; `engine = "kernel"` adds Linux at the capacities it emulates
    cleanly (40 Mb/s), one run at a time (a second would compete for the cores it measures)."""
    caps = QUICK_CAPACITIES if quick else CAPACITIES
    engines = ["fluid", "packet"] + (["kernel"] if engine == "kernel" else [])
    frames = []
    for cap, (duration, warmup) in caps.items():
        for eng in engines:
            if eng == "kernel" and cap != "40Mbps":
                continue
            buffers = (QUICK_BUFFERS if quick else KERNEL_BUFFERS if eng == "kernel"
                       else BUFFERS_100G if cap == "100Gbps" else BUFFERS)
            for name, flows in SETS.items():
                rows = run_sweep(out / cap / eng / name, _doc(flows, cap, duration, warmup),
                                 {"dumbbell.buffer.bdp_fraction": buffers}, 1, [], eng, columns=share_columns,
                                 workers=1 if eng == "kernel" else None)
                frames.append(rows.assign(capacity=cap, engine=eng, set=name))
    rows = pd.concat(frames, ignore_index=True).rename(columns={"dumbbell.buffer.bdp_fraction": "buffer"})
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows


def _get(rows: pd.DataFrame, cap: str, eng: str, name: str, metric: str) -> pd.Series:
    r = rows[(rows["capacity"] == cap) & (rows["engine"] == eng) & (rows["set"] == name)]
    return r.groupby("buffer")[metric].mean()


def bbr_figure(rows: pd.DataFrame):
    caps = list(dict.fromkeys(rows["capacity"]))
    metrics = [("utilization", "utilization"), ("mean_queueing_delay_ms", "mean queueing delay (ms)"),
               ("loss_rate", "loss rate"), ("share_bbr", "BBR's share (BBR + CUBIC)")]
    rows = rows.assign(mean_queueing_delay_ms=rows["mean_queueing_delay_s"] * 1e3)
    fig, axes = plt.subplots(len(caps), len(metrics), figsize=(4 * len(metrics), 3.2 * len(caps)), squeeze=False)
    # Each engine its line style and its marker (hollow squares for the fluid engine), so that
    # fluid and packet lines of one colour stay apart where they overlap.
    styles = {"fluid": ("--", "s", "none"), "packet": ("-", "o", None), "kernel": (":", "^", None)}
    colors = {"reno": "tab:blue", "cubic": "tab:orange", "bbr": "tab:green", "bbr+cubic": "tab:purple"}
    for i, cap in enumerate(caps):
        for j, (m, label) in enumerate(metrics):
            ax = axes[i, j]
            for eng in dict.fromkeys(rows["engine"]):
                names = ["bbr+cubic"] if m == "share_bbr" else ["reno", "cubic", "bbr"]
                for name in names:
                    s = _get(rows, cap, eng, name, m)
                    if len(s):
                        ls, marker, face = styles[eng]
                        ax.plot(s.index, s.values, ls, color=colors[name], marker=marker, ms=4,
                                mfc=face or colors[name], label=f"{name}, {eng}")
            ax.set_xscale("log")
            ax.set_xlabel("buffer (BDP at the mean RTT)")
            ax.set_title(f"{cap}: {label}", fontsize=9)
            if m == "loss_rate":
                ax.set_yscale("symlog", linthresh=1e-4)
                ax.set_ylim(bottom=0)  # a rate: symlog's automatic range reaches below zero
            if m == "share_bbr":
                ax.axhline(0.5, color="grey", lw=0.5)
            ax.legend(fontsize=6)
    fig.suptitle("8 flows, RTT 10-100 ms: CUBIC, Reno and BBR v1 against buffer size (fluid -- hollow, packet -, Linux :)",
                 fontsize=11)
    fig.tight_layout()
    return fig


def _each(rows: pd.DataFrame):
    """Every (capacity, engine) of the study's data, in the report's order."""
    for cap in dict.fromkeys(rows["capacity"]):
        for eng in ("packet", "fluid", "kernel"):
            yield cap, eng


def _smallest_buffer(rows: pd.DataFrame, cap: str, eng: str, name: str, target: float = 0.95) -> float:
    u = _get(rows, cap, eng, name, "utilization")
    ok = u[u >= target]
    return float(ok.index.min()) if len(ok) else float("inf")


def _claim_bbr_needs_less(rows):
    parts, holds = [], True
    for cap, eng in _each(rows):
        if not len(_get(rows, cap, eng, "bbr", "utilization")):
            continue
        b = {n: _smallest_buffer(rows, cap, eng, n) for n in ("bbr", "cubic", "reno")}
        parts.append(f"{cap} {eng}: " + ", ".join(f"{n} {v:g}" for n, v in b.items()))
        holds &= b["bbr"] < min(b["cubic"], b["reno"])
    return "smallest buffer for 95% (BDP): " + "; ".join(parts), holds


def _claim_bbr_loss(rows):
    parts, holds = [], True
    for cap, eng in _each(rows):
        b, c = _get(rows, cap, eng, "bbr", "loss_rate"), _get(rows, cap, eng, "cubic", "loss_rate")
        shallow = [x for x in b.index if x <= 0.05]
        if not shallow:
            continue
        lb, lc = b[shallow].mean(), c[shallow].mean()
        parts.append(f"{cap} {eng}: BBR {lb:.2%} vs CUBIC {lc:.2%}")
        holds &= lb > 2 * lc
    return "loss at buffers ≤ 5% BDP: " + "; ".join(parts), holds


def _claim_bbr_queue(rows):
    parts, holds = [], True
    for cap, eng in _each(rows):
        q = _get(rows, cap, eng, "bbr", "mean_queue_pkts")
        if 2.0 not in q.index:
            continue
        # The BDP at the mean RTT (55 ms), in 1500-byte packets.
        bdp = {"40Mbps": 40e6, "10Gbps": 10e9, "100Gbps": 100e9}[cap] / 12_000 * 0.055
        parts.append(f"{cap} {eng}: {q[2.0] / bdp:.2f} BDP")
        holds &= 0.5 <= q[2.0] / bdp <= 1.5
    return "BBR's mean queue in a 2 BDP buffer: " + "; ".join(parts), holds


def _claim_share_falls(rows):
    parts, holds = [], True
    for cap, eng in _each(rows):
        s = _get(rows, cap, eng, "bbr+cubic", "share_bbr")
        if len(s) < 2:
            continue
        parts.append(f"{cap} {eng}: {s.iloc[0]:.2f} at {s.index[0]:g} → {s.iloc[-1]:.2f} at {s.index[-1]:g} BDP")
        holds &= s.iloc[0] > 0.5 and s.iloc[-1] < s.iloc[0]
    return "BBR's share: " + "; ".join(parts), holds


def _claim_engines_agree(rows):
    parts, holds = [], True
    for cap in dict.fromkeys(rows["capacity"]):
        for other in ("fluid", "kernel"):
            gaps = []
            for name in SETS:
                p, o = _get(rows, cap, "packet", name, "utilization"), _get(rows, cap, other, name, "utilization")
                common = p.index.intersection(o.index)
                gaps += list((o[common] - p[common]).abs())
            if gaps:
                within = sum(g <= 0.03 for g in gaps)
                parts.append(f"{cap} {other}: {within}/{len(gaps)} within 3 pt (max {max(gaps):.3f})")
                holds &= within == len(gaps)
    return "; ".join(parts), holds


#: Issue 13's grid for BBR against Linux: 40 Mb/s, buffers 10-100% BDP.
LINUX_GRID = [0.1, 0.25, 0.5, 1.0]


def _claim_linux_bbr(rows):
    """Packet BBR against Linux's on issue 13's grid: utilization within 3 points, mean queue
    within 25%, BBR's share beside CUBIC within 25% (relative)."""
    def at(eng, name, metric):
        s = _get(rows, "40Mbps", eng, name, metric)
        return s[s.index.isin(LINUX_GRID)]

    if not len(at("kernel", "bbr", "utilization")):
        return "not run (`--engine kernel`, as root)", None
    du = (at("kernel", "bbr", "utilization") - at("packet", "bbr", "utilization")).abs()
    dq = (at("kernel", "bbr", "mean_queue_pkts") / at("packet", "bbr", "mean_queue_pkts") - 1).abs()
    ds = (at("kernel", "bbr+cubic", "share_bbr") / at("packet", "bbr+cubic", "share_bbr") - 1).abs()
    text = (f"utilization: max gap {du.max():.3f} ({(du <= 0.03).sum()}/{len(du)} within 3 pt); mean queue: "
            f"max {dq.max():.0%} off ({(dq <= 0.25).sum()}/{len(dq)} within 25%); BBR's share beside CUBIC: "
            f"max {ds.max():.0%} off ({(ds <= 0.25).sum()}/{len(ds)} within 25%)")
    return text, bool((du <= 0.03).all() and (dq <= 0.25).all() and (ds <= 0.25).all())


register(Study(
    "bbr-buffers", "Buffer sizing with BBR v1: CUBIC, Reno and BBR against buffer size, and BBR beside CUBIC",
    "Dumbbell, 8 flows with RTTs spread over 10..100 ms, 1500-byte packets, slow start, buffers of 1% to 2 BDP at the "
    "mean RTT; CUBIC, Reno and BBR alone, and 4 BBR + 4 CUBIC. 40 Mb/s (30 s, 10 s warm-up: under the kernel "
    "engine's clean limit), 10 Gb/s (30 s, 10 s) and 100 Gb/s (12 s, 6 s; buffers 1%, 10%, 100%), each in the fluid "
    "engine (its tcp model, BBR's fluid form) and the packet engine; `--engine kernel` (root) adds Linux at 40 Mb/s "
    "(buffers 2% to 2 BDP). "
    "One seed. At 100 Gb/s the runs are shorter than a CUBIC cycle: its points there include the start.",
    run_bbr, bbr_figure,
    [Claim("BBR keeps the link busy (95%) with less buffer than CUBIC and Reno need (Cardwell et al. 2016; Spang et "
           "al. 2021: BBR's single-flow buffer is 60-75% below a BDP)", _claim_bbr_needs_less),
     Claim("BBR v1 ignores loss as a signal: in shallow buffers it loses far more than CUBIC (here: more than twice) "
           "(Hock et al. 2017)", _claim_bbr_loss),
     Claim("In a deep buffer several BBR flows are window-limited at 2 BDP in flight and keep about one BDP queued "
           "(Hock et al. 2017; here 0.5-1.5 BDP at 2 BDP of buffer)", _claim_bbr_queue),
     Claim("BBR beside CUBIC takes most of a shallow buffer's link, and less as the buffer grows (Hock et al. 2017; "
           "Ware et al. 2019)", _claim_share_falls),
     Claim("The engines agree: fluid and Linux within 3 points of the packet engine's utilization (issue 13)",
           _claim_engines_agree, quick_decides=False),
     Claim("BBR in the packet engine against Linux's at 40 Mb/s, 10-100% BDP: utilization within 3 points, mean "
           "queue within 25%, BBR's share beside CUBIC within 25% (issue 13)", _claim_linux_bbr, quick_decides=False)],
    source=SOURCE, engine="packet", fidelity=("3 capacities × 4 flow sets × 8 buffers, one seed",
                                                "40 Mb/s and 10 Gb/s × 3 buffers, shorter runs"),
    engines=("packet", "kernel"),
))
