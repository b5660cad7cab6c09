"""`lossync reproduce desync`: seed 001's future work, "desynchronization methods". On the paper's
10 Gb/s dumbbell (10 HSTCP flows, RTT 80..260 ms), how much each mechanism that breaks loss
synchronization lowers the synchronization rate, and what that does to utilization and fairness:
in the packet engine, send jitter, pacing, RED, CoDel, PIE and FQ-CoDel against deterministic
drop-tail; in the paper's own model (the fluid engine's sync module), the drop policies that pick
which flows lose, against full synchronization."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ..io import atomic_write
from ..plot import plt
from .framework import Claim, Study, deep_merge, register, run_sweep

SOURCE = ("Kumar, Xue, Park, 'Impact of loss synchronization on reliable high speed networks', JCNC 2014 (seed 000) and "
          "its slides' future work (seed 001); Floyd & Jacobson, 'On traffic phase effects in packet-switched gateways', "
          "1992, and 'Random early detection gateways', ToN 1993; Aggarwal, Savage, Anderson, 'Understanding the "
          "performance of TCP pacing', INFOCOM 2000; Appenzeller, Keslassy, McKeown, 'Sizing router buffers', SIGCOMM "
          "2004; RFC 8289 (CoDel), RFC 8033 (PIE), RFC 8290 (FQ-CoDel)")

#: Seed 000's 10 Gb/s setup (docs/model.md §4.4), with slow start in the packet engine (a packet
#: sender cannot start at a window of 12,750 without a burst the paper's fluid never has).
BASE = {
    "dumbbell": {"capacity": "10Gbps", "packet_size": 1500, "buffer": {"bdp_fraction": 0.1, "reference_rtt": "170ms"}},
    "flows": [{"count": 10, "cc": "highspeed", "rtt": "80ms..260ms", "slow_start": True}],
    "run": {"duration": "300s", "warmup": "60s"},
}
#: Capacity -> (run length, warm-up, buffers in BDP at 170 ms).
FULL = {"10Gbps": (300.0, 60.0, [0.05, 0.2])}
QUICK = {"1Gbps": (60.0, 20.0, [0.1])}


def _red(b_bdp: float, cap_bps: float) -> dict[str, Any]:
    """RED at min_th 0.2 B and max_th 0.6 B, gentle, max_p 0.1, weight 0.002 (Floyd & Jacobson 1993
    §11's guidance: max_th at least twice min_th; the defaults otherwise)."""
    b = b_bdp * cap_bps / 12_000 * 0.17
    return {"discipline": "red", "min_th": max(1, round(0.2 * b)), "max_th": max(3, round(0.6 * b))}


#: The packet engine's mechanisms: name -> (flow-group overrides, queue or None for drop-tail).
def mechanisms(b_bdp: float, cap_bps: float) -> dict[str, tuple[dict[str, Any], dict[str, Any] | None]]:
    return {
        "drop-tail": ({}, None),
        # One bottleneck packet time of random delay per packet (Floyd & Jacobson 1992).
        "send jitter": ({"send_jitter": 12_000 / cap_bps}, None),
        "pacing": ({"pacing": True}, None),
        "RED": ({}, _red(b_bdp, cap_bps)),
        "CoDel": ({}, {"discipline": "codel"}),
        "PIE": ({}, {"discipline": "pie"}),
        "FQ-CoDel": ({}, {"discipline": "fq_codel"}),
    }


#: The paper's model: which flows lose at a congestion event (`loss.policy`), at the sync rate X
#: = 0.6 of seed 000's Figs. 9-12 (normal distribution), against every flow at every event.
POLICIES = {
    "all flows (X = 1)": {"model": "sync", "sync": {"kind": "all"}},
    "highest rate": {"model": "sync", "sync": {"kind": "normal", "x": 0.6}, "policy": "highest_rate"},
    "random": {"model": "sync", "sync": {"kind": "normal", "x": 0.6}, "policy": "random"},
    "round robin": {"model": "sync", "sync": {"kind": "normal", "x": 0.6}, "policy": "round_robin"},
}


def _columns(result) -> dict[str, Any]:
    s = result.summary
    return {"sync_rate": s["sync_rate_mean"], "events": s["congestion_events"]}


def run_desync(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    frames = []
    for cap, (duration, warmup, buffers) in (QUICK if quick else FULL).items():
        cap_bps = float(cap.removesuffix("Gbps")) * 1e9
        base = deep_merge(BASE, {"dumbbell": {"capacity": cap}, "run": {"duration": duration, "warmup": warmup}})
        for b in buffers:
            for name, (flows, queue) in mechanisms(b, cap_bps).items():
                doc = deep_merge(base, {"dumbbell": {"buffer": {"bdp_fraction": b}}})
                doc["flows"] = [dict(doc["flows"][0], **flows)]
                if queue is not None:
                    doc["dumbbell"]["queue"] = queue
                rows = run_sweep(out / cap / str(b) / name.replace(" ", "_"), doc, {}, 1, [], "packet",
                                 columns=_columns)
                frames.append(rows.assign(capacity=cap, buffer=b, mechanism=name, engine="packet"))
            for name, loss in POLICIES.items():
                doc = deep_merge(base, {"dumbbell": {"buffer": {"bdp_fraction": b}}, "loss": loss})
                rows = run_sweep(out / cap / str(b) / "fluid" / name.replace(" ", "_"), doc, {}, 1, [], "fluid",
                                 columns=_columns)
                frames.append(rows.assign(capacity=cap, buffer=b, mechanism=name, engine="fluid"))
    rows = pd.concat(frames, ignore_index=True)
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows


def _at(rows: pd.DataFrame, engine: str, metric: str) -> pd.DataFrame:
    """metric by mechanism (rows) and (capacity, buffer) (columns)."""
    r = rows[rows["engine"] == engine]
    return r.pivot_table(index="mechanism", columns=["capacity", "buffer"], values=metric, sort=False)


def desync_figure(rows: pd.DataFrame):
    metrics = [("sync_rate", "mean sync rate (flows per event / N)"), ("utilization", "utilization"),
               ("jain", "Jain's index")]
    fig, axes = plt.subplots(2, 3, figsize=(13, 7), squeeze=False)
    for i, engine in enumerate(("packet", "fluid")):
        for j, (m, label) in enumerate(metrics):
            t = _at(rows, engine, m)
            ax = axes[i, j]
            width = 0.8 / max(1, len(t.columns))
            for k, col in enumerate(t.columns):
                ax.bar([x + k * width for x in range(len(t.index))], t[col].values, width,
                       label=f"{col[0]}, {col[1]:g} BDP")
            ax.set_xticks([x + 0.4 - width / 2 for x in range(len(t.index))])
            ax.set_xticklabels(t.index, rotation=35, ha="right", fontsize=8)
            ax.set_title(f"{'packet engine' if engine == 'packet' else 'sync module'}: {label}", fontsize=9)
            if m != "sync_rate":
                lo = min(0.9, float(t.min().min()) - 0.02) if t.size else 0.0
                ax.set_ylim(lo, 1.0)
            if i == j == 0:  # one legend: the colours are the same in every panel
                ax.legend(fontsize=7, loc="upper right")
    fig.suptitle("Desynchronization on seed 000's dumbbell: 10 HSTCP flows, RTT 80-260 ms (top: packet engine; bottom: "
                 "the paper's model, the fluid engine's sync module)", fontsize=11)
    fig.tight_layout()
    return fig


def _claim_mechanisms_desync(rows):
    s = _at(rows, "packet", "sync_rate")
    parts, holds = [], True
    for col in s.columns:
        base = s.loc["drop-tail", col]
        lower = [m for m in ("send jitter", "RED", "CoDel", "PIE", "FQ-CoDel") if s.loc[m, col] < base]
        parts.append(f"{col[0]} {col[1]:g} BDP: drop-tail {base:.2f}; " +
                     ", ".join(f"{m} {s.loc[m, col]:.2f}" for m in ("send jitter", "RED", "CoDel", "PIE", "FQ-CoDel")))
        holds &= len(lower) == 5
    return "; ".join(parts), holds


def _claim_pacing(rows):
    s = _at(rows, "packet", "sync_rate")
    parts, holds = [], True
    for col in s.columns:
        p, d = s.loc["pacing", col], s.loc["drop-tail", col]
        parts.append(f"{col[0]} {col[1]:g} BDP: pacing {p:.2f}, drop-tail {d:.2f}")
        holds &= p >= d - 0.05
    return "; ".join(parts), holds


def _claim_utilization(rows):
    s, u = _at(rows, "packet", "sync_rate"), _at(rows, "packet", "utilization")
    parts, holds = [], True
    for col in s.columns:
        # The drop-tail runs only: an AQM's early drops lower utilization for another reason.
        ms = ["drop-tail", "send jitter", "pacing"]
        least, most = min(ms, key=lambda m: s.loc[m, col]), max(ms, key=lambda m: s.loc[m, col])
        parts.append(f"{col[0]} {col[1]:g} BDP: least synchronized {least} (sync {s.loc[least, col]:.2f}, U "
                     f"{u.loc[least, col]:.4f}), most {most} ({s.loc[most, col]:.2f}, U {u.loc[most, col]:.4f})")
        holds &= u.loc[least, col] > u.loc[most, col]
    return "; ".join(parts), holds


def _claim_partial_sync(rows):
    u = _at(rows, "fluid", "utilization")
    parts, holds = [], True
    for col in u.columns:
        full = u.loc["all flows (X = 1)", col]
        others = {p: u.loc[p, col] for p in ("highest rate", "random", "round robin")}
        parts.append(f"{col[0]} {col[1]:g} BDP: X = 1 {full:.4f}; " + ", ".join(f"{p} {v:.4f}" for p, v in others.items()))
        holds &= all(v > full for v in others.values())
    return "; ".join(parts), holds


register(Study(
    "desync", "Seed 001's future work: how much desynchronization methods lower loss synchronization, and what it buys",
    "Seed 000's 10 Gb/s dumbbell: 10 HSTCP flows, RTT 80..260 ms, 1500-byte packets, slow start, buffers of 5% and "
    "20% of the BDP at 170 ms; 300 s after a 60 s warm-up, one seed. Packet engine: deterministic drop-tail, then one "
    "mechanism each: send jitter of one bottleneck packet time, pacing (Linux's ratios), RED (gentle, min_th 0.2 B, "
    "max_th 0.6 B, max_p 0.1), CoDel, PIE and FQ-CoDel at their RFCs' defaults, all dropping (no ECN). The paper's "
    "model (fluid engine, sync module): every flow at every event (X = 1), and X = 0.6 (normal) with the highest-rate, "
    "random and round-robin drop policies. The sync rate is the mean fraction of the link's flows that lose in a "
    "congestion event (docs/model.md).",
    run_desync, desync_figure,
    [Claim("Send jitter, RED, CoDel, PIE and FQ-CoDel each lower the mean sync rate below deterministic drop-tail's "
           "(Floyd & Jacobson 1992: random processing time breaks phase effects; 1993 §1: RED avoids global "
           "synchronization; the AQM RFCs drop one packet at a time)", _claim_mechanisms_desync),
     Claim("Pacing alone does not desynchronize: paced flows synchronize their losses (Aggarwal, Savage & Anderson, "
           "INFOCOM 2000); here its sync rate is not below drop-tail's by more than 0.05", _claim_pacing,
           quick_decides=False),
     Claim("With a drop-tail queue, the least synchronized of drop-tail, send jitter and pacing has the higher "
           "utilization (Appenzeller et al. 2004: desynchronized flows need less buffer)", _claim_utilization,
           quick_decides=False),
     Claim("In the paper's model, partial synchronization (X = 0.6) gives higher utilization than full "
           "synchronization whatever the drop policy (seed 000 §5)", _claim_partial_sync)],
    source=SOURCE, engine="packet",
    fidelity=("10 Gb/s × 2 buffers × 7 mechanisms and 4 policies, 300 s, one seed",
              "1 Gb/s × 1 buffer, 60 s"),
    engines=("packet",),
))
