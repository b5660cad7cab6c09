"""Seed 003's test-bed study as `lossync reproduce ghstcp`: flow 1 (Reno, gHSTCP, HSTCP or
parallel TCP) against flow 2 (two Reno connections with 64 KB or 512 KB socket buffers), in the
packet engine (the seed measured real TCP stacks over Dummynet)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..io import atomic_write
from ..plot import plt
from .framework import Claim, Study, in_fluid, register, run_sweep

SOURCE = ("Zhang, Hasegawa, Murata, gHSTCP test-bed study (seed 003: slides 'Performance analysis of a refined "
          "gHSTCP'); gHSTCP in MASCOTS 2004 and IEICE Trans. Commun. E88-B(6), 2005")

#: Flow 1 as the seed runs it: label -> flow group.
FLOW1 = {
    "Reno": {"cc": "reno"},
    "gHSTCP": {"cc": "ghstcp"},
    "HSTCP": {"cc": "highspeed"},
    # The seed does not say how many connections; 4 is our choice.
    "parallel TCP": {"cc": "reno", "parallel": 4},
}
#: The seed's two scenarios: capacity, router buffer, flow 2's access link (scenario 2 only).
SCENARIOS = {
    1: {"capacity": "100Mbps", "buffer": "200KB", "access": None},
    2: {"capacity": "200Mbps", "buffer": "500KB", "access": "100Mbps"},
}
SOCKET_BUFFERS = ["64KB", "512KB"]
#: Seed 003's single-flow experiment ("Only Flow-1 exists"): flow 1 alone on scenario 2's path,
#: in congestion avoidance from 10 packets (below the BDP, 767 packets, for the first 10 s),
#: with send jitter of one packet time for the RTT noise of a real path. Its rows have scenario 0.
SINGLE = {
    "HSTCP": {"cc": "highspeed"},
    "gHSTCP": {"cc": "ghstcp"},
    "original gHSTCP": {"cc": {"variant": "ghstcp", "trend_only": True}},
    "Reno": {"cc": "reno"},
}


def _single_doc(flow1: dict) -> dict:
    return {
        "engine": "packet",
        "dumbbell": {"capacity": SCENARIOS[2]["capacity"], "packet_size": 1500, "buffer": {"bytes": SCENARIOS[2]["buffer"]}},
        "flows": [dict(flow1, name="flow 1", rtt="46ms", slow_start=False, initial_window=10, send_jitter="0.06ms")],
        "run": {"duration": "10s", "warmup": "0s", "record_interval": "0.1s"},
    }


def single_columns(result) -> dict:
    """The single flow's mean window (the sweep row's extra column)."""
    return {"mean_cwnd_pkts": result.summary["flows"][0]["mean_cwnd_pkts"]}


def _doc(scenario: int, flow1: dict) -> dict:
    sc = SCENARIOS[scenario]
    flow2 = {"name": "flow 2", "cc": "reno", "rtt": "46ms", "parallel": 2, "slow_start": True,
             "start": {"uniform": ["0s", "1s"]}, "rwnd": {"bytes": "64KB"}}
    if sc["access"]:
        flow2["access_capacity"] = sc["access"]
    return {
        "engine": "packet",
        # "Delay = 23 ms" is the bottleneck's one-way delay: a 46 ms RTT (our reading).
        "dumbbell": {"capacity": sc["capacity"], "packet_size": 1500, "buffer": {"bytes": sc["buffer"]}},
        "flows": [dict(flow1, name="flow 1", rtt="46ms", slow_start=True, start={"uniform": ["0s", "1s"]}), flow2],
        "run": {"duration": "300s", "warmup": "30s", "record_interval": "1s"},
    }


def run_ghstcp(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    seeds, fixed = (2, ["run.duration=60", "run.warmup=10"]) if quick else (5, [])
    frames = []
    for scenario in SCENARIOS:
        for label, flow1 in FLOW1.items():
            rows = run_sweep(out / f"scenario{scenario}" / label.replace(" ", "-"), _doc(scenario, flow1),
                          {"flows.1.rwnd.bytes": SOCKET_BUFFERS}, seeds, fixed, engine)
            rows["scenario"] = scenario
            rows["flow1"] = label
            frames.append(rows)
    for label, flow1 in SINGLE.items():
        rows = run_sweep(out / "single" / label.replace(" ", "-"), _single_doc(flow1), {}, seeds, [], engine, single_columns)
        rows["scenario"] = 0
        rows["flow1"] = label
        frames.append(rows)
    rows = pd.concat(frames, ignore_index=True).rename(columns={"flows.1.rwnd.bytes": "socket_buffer"})
    rows["flow1_mbps"] = rows["flow_throughput_bps"].map(lambda v: v[0] / 1e6)
    rows["flow2_mbps"] = rows["flow_throughput_bps"].map(lambda v: v[1] / 1e6 if len(v) > 1 else float("nan"))
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows


def _cells(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.groupby(["scenario", "socket_buffer", "flow1"], sort=True)[
        ["flow1_mbps", "flow2_mbps", "utilization", "jain"]].mean()


def ghstcp_figure(rows: pd.DataFrame):
    cells = _cells(rows)
    fig, axes = plt.subplots(2, 4, figsize=(13, 6))
    for i, scenario in enumerate(SCENARIOS):
        for j, sb in enumerate(SOCKET_BUFFERS):
            c = cells.loc[(scenario, sb)].reindex(list(FLOW1))
            ax = axes[i, 2 * j]
            x = range(len(c))
            ax.bar([k - 0.2 for k in x], c["flow1_mbps"], 0.4, label="flow 1")
            ax.bar([k + 0.2 for k in x], c["flow2_mbps"], 0.4, label="flow 2 (2 Reno)")
            ax.set_xticks(list(x), c.index, fontsize=7)
            ax.set_ylabel("throughput (Mb/s)")
            ax.set_title(f"scenario {scenario}, flow 2 socket buffer {sb}", fontsize=9)
            ax.legend(fontsize=7)
            ax = axes[i, 2 * j + 1]
            ax.bar([k - 0.2 for k in x], c["utilization"], 0.4, label="utilization")
            ax.bar([k + 0.2 for k in x], c["jain"], 0.4, label="Jain")
            ax.set_xticks(list(x), c.index, fontsize=7)
            ax.set_ylim(0, 1.05)
            ax.legend(fontsize=7)
    fig.suptitle("Seed 003: flow 1 vs two Reno connections (packet engine)", fontsize=11)
    fig.tight_layout()
    return fig


def _get(rows: pd.DataFrame, scenario: int, sb: str, flow1: str, metric: str) -> float:
    return float(_cells(rows).loc[(scenario, sb, flow1), metric])


def _utilization_above_90(rows: pd.DataFrame) -> tuple[str, bool]:
    us = {f: _get(rows, 1, "512KB", f, "utilization") for f in FLOW1}
    return ", ".join(f"{f} {u:.3f}" for f, u in us.items()), min(us.values()) > 0.9


def _parallel_unfair(rows: pd.DataFrame) -> tuple[str, bool]:
    # With 64 KB socket buffers flow 2 is window-limited (2 × 43 packets per 46 ms: 22 Mb/s at
    # most) whatever flow 1 does, so fairness can only differ with 512 KB.
    j = {f: _get(rows, 1, "512KB", f, "jain") for f in FLOW1}
    text = "512 KB: " + ", ".join(f"{f} {v:.3f}" for f, v in j.items())
    return text, j["parallel TCP"] < min(v for f, v in j.items() if f != "parallel TCP")


def _ghstcp_beats_hstcp(rows: pd.DataFrame) -> tuple[str, bool]:
    parts, ok = [], True
    for sb in SOCKET_BUFFERS:
        g = (_get(rows, 1, sb, "gHSTCP", "utilization"), _get(rows, 1, sb, "gHSTCP", "jain"))
        h = (_get(rows, 1, sb, "HSTCP", "utilization"), _get(rows, 1, sb, "HSTCP", "jain"))
        parts.append(f"{sb}: U {g[0]:.3f} vs {h[0]:.3f}, J {g[1]:.3f} vs {h[1]:.3f}")
        # Utilization within half a point counts as a tie: both fill the link.
        ok &= g[0] >= h[0] - 0.005 and g[1] > h[1]
    return "; ".join(parts), ok


def _single_flow_ramp(rows: pd.DataFrame) -> tuple[str, bool]:
    w = rows[rows["scenario"] == 0].groupby("flow1")["mean_cwnd_pkts"].mean()
    h, g, o, r = (float(w[k]) for k in ("HSTCP", "gHSTCP", "original gHSTCP", "Reno"))
    text = f"mean window over the first 10 s: HSTCP {h:.0f}, gHSTCP {g:.0f}, original gHSTCP {o:.0f}, Reno {r:.0f} packets"
    # "As quickly": within 5%; "lower": a quarter of HSTCP's lead over Reno lost, or more.
    return text, g >= 0.95 * h and o < g - 0.25 * (h - r)


def _scenario2_spare(rows: pd.DataFrame) -> tuple[str, bool]:
    sb = "512KB"
    f2 = {f: _get(rows, 2, sb, f, "flow2_mbps") for f in ("gHSTCP", "HSTCP", "parallel TCP")}
    u = _get(rows, 2, sb, "gHSTCP", "utilization")
    text = f"flow 2 gets {f2['gHSTCP']:.1f} Mb/s beside gHSTCP, {f2['HSTCP']:.1f} beside HSTCP, " \
           f"{f2['parallel TCP']:.1f} beside parallel TCP; utilization with gHSTCP {u:.3f}"
    return text, f2["gHSTCP"] > max(f2["HSTCP"], f2["parallel TCP"]) and u > 0.9


register(Study(
    "ghstcp", "Seed 003: gHSTCP vs HSTCP, Reno and parallel TCP against Reno traffic",
    "Packet engine. Scenario 1: 100 Mb/s, RTT 46 ms (the seed's 23 ms delay taken as one way, our reading), router "
    "buffer 200 KB (133 packets, 0.35 BDP). Scenario 2: 200 Mb/s, 500 KB (333 packets), flow 2's access link 100 "
    "Mb/s (slower than the bottleneck, as in the seed; the rate is our choice). Flow 1: Reno, gHSTCP, HSTCP or "
    "parallel TCP (4 Reno connections, our choice); flow 2: two Reno connections with 64 KB or 512 KB socket "
    "buffers (rwnd). Slow start on, starts uniform in 0..1 s, 300 s with 30 s warm-up, 5 seeds. Single-flow "
    "experiment: flow 1 alone on scenario 2's path (HSTCP, gHSTCP, the original gHSTCP whose RTT trend alone "
    "decides the mode, Reno), congestion avoidance from 10 packets, send jitter 0.06 ms, 10 s, the same seeds.",
    run_ghstcp, ghstcp_figure,
    [Claim("Scenario 1, flow 2 buffers 512 KB: “All of utilization is larger than 90%”", _utilization_above_90),
     Claim("Scenario 1: “The fairness is very poor when parallel TCP is used” (the lowest Jain with 512 KB)", _parallel_unfair),
     Claim("Scenario 1: “gHSTCP outperforms HSTCP in terms of utilization and fairness”", _ghstcp_beats_hstcp),
     Claim("Scenario 2: “gHSTCP can utilize this redundant link bandwidth very well. Whereas, HSTCP or parallel TCP "
           "pillages vast resources from Flow-2”", _scenario2_spare),
     Claim("One flow alone, cwnd < BDP: gHSTCP “can catch the link bandwidth as quickly as the original HSTCP”, while "
           "the original gHSTCP's “unnecessary mode switching” lowers its “ability for catching bottleneck link "
           "bandwidth” (scenario 2's path, congestion avoidance from 10 packets, send jitter of one packet time)",
           _single_flow_ramp)],
    source=SOURCE, engine="packet",
    fidelity=("5 seeds × 300 s", "2 seeds × 60 s"),
    cross=in_fluid(("5 seeds × 300 s", "2 seeds × 60 s")),
))
