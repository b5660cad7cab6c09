"""Seed 002: TCP over optical burst switching (K. G. Vlachos, "Burstification effect on the TCP
synchronization and congestion window mechanism"): what timer-based burst assembly at the edge
puts in a burst (Fig. 1, on NSFnet), how it synchronizes TCP flows (Figs. 2-4), and the
multi-queue assemblers that desynchronize them (Figs. 5-6). Packet engine; the fluid engine has no
burst assembler.

Choices the seed leaves open, made here and said in each study's setup:
- 1000-byte segments: the seed's per-source ceilings (about 13, 61 and 121 segments per burst at
  100 Mb/s and 1, 5, 10 ms) are 100 Mb/s × T over 1000 bytes (12.5, 62.5, 125).
- Core loss as Bernoulli 2% per burst at the edge (the seed's operating point): the core links
  are 10 Gb/s and barely loaded, so the loss is the burst's, not a queue's. obs-sync and
  obs-multiqueue also run every cell with wavelength contention instead (`CONTENTION`): the
  seed's single 10 Gb/s wavelength per link, shared with the other edges' bursts.
- NSFnet traffic: 50 flows/s per ordered pair of the 8 edge nodes (56 pairs). With 100 Mb/s
  access and 700 KB files a flow lasts about a second at 2% burst loss, so Little's law needs some
  3000 flows/s for the seed's 600-800 active sources: its "λ = 50 flows/s" can only be per pair.
"""

from __future__ import annotations

import heapq
import math
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..io import atomic_write
from ..plot import plt
from ..scenario import examples_dir
from .framework import Claim, CrossCheck, Study, in_fluid, register, run_sweep

SOURCE = 'K. G. Vlachos, "Burstification effect on the TCP synchronization and congestion window mechanism" (seed 002)'
SEGMENT_BYTES = 1000
ACCESS_BPS = 100e6
BURST_LOSS = 0.02
TIMERS_MS = [1, 5, 10]
#: NSFnet's edge nodes (the eight with a host site in examples/nsfnet.toml).
EDGE = ["n1", "n3", "n4", "n7", "n8", "n11", "n12", "n13"]
#: The seed's file sizes (Pareto, minimum 40 KB, mean 700 KB) and arrival rate.
FILES = {"min_size": "40KB", "mean_size": "700KB"}
#: Wavelength contention in place of Bernoulli loss (docs/packet.md, "Wavelength contention"): one
#: wavelength of 10 Gb/s, as each of the seed's NSFnet links, and the other edges' bursts as a
#: Poisson background whose load A gives a sparse burst the seed's 2% (Erlang B: A/(1+A) = 2%),
#: holding it for the mean of NSFnet's 1 ms bursts (obs-stats: 17.6 segments, 14 µs at 10 Gb/s).
CONTENTION = {"wavelengths": 1, "background": BURST_LOSS / (1 - BURST_LOSS), "background_burst": "14us"}
#: The core's loss models, as the runs' `loss` column names them.
LOSSES = ["bernoulli", "contention"]
NO_CONTENTION = "the fluid engine has no wavelength contention (it refuses `contention`)"
#: What a claim judged under contention starts with.
CONTENTION_TAG = "Under wavelength contention: "


def ceiling(timer_ms: float) -> int:
    """The most segments one source can put in a burst: what its access link carries in a timer."""
    return math.ceil(ACCESS_BPS * timer_ms * 1e-3 / (8 * SEGMENT_BYTES))


def _save(out: Path, rows: pd.DataFrame) -> pd.DataFrame:
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows


# ---------------------------------------------------------------------------------------------
# obs-stats (Fig. 1): segments and sources per burst on NSFnet


def nsfnet_graph() -> dict[str, dict[str, float]]:
    """NSFnet's 21 links (both directions) and their one-way delays in seconds, from the shipped
    example (which cites the topology's source)."""
    doc = tomllib.loads((examples_dir() / "nsfnet.toml").read_text())
    adj: dict[str, dict[str, float]] = {}
    for link in doc["links"]:
        if link["from"].startswith("h") or link["to"].startswith("h"):
            continue  # the example's access links; here every source has its own
        d = float(link["delay"].removesuffix("ms")) * 1e-3
        adj.setdefault(link["from"], {})[link["to"]] = d
        adj.setdefault(link["to"], {})[link["from"]] = d
    return adj


def shortest_path(adj: dict[str, dict[str, float]], src: str, dst: str) -> tuple[list[str], float]:
    """Dijkstra by delay; ties go to the first neighbour in name order, so routes are fixed."""
    dist, prev, heap = {src: 0.0}, {}, [(0.0, src)]
    while heap:
        d, u = heapq.heappop(heap)
        if u == dst:
            break
        if d > dist[u]:
            continue
        for v, w in sorted(adj[u].items()):
            if d + w < dist.get(v, math.inf) - 1e-15:
                dist[v], prev[v] = d + w, u
                heapq.heappush(heap, (d + w, v))
    nodes = [dst]
    while nodes[-1] != src:
        nodes.append(prev[nodes[-1]])
    return nodes[::-1], dist[dst]


def obs_nsfnet(timer_ms: float, rate_per_pair: float = 50.0, duration_s: float = 60.0) -> dict[str, Any]:
    """NSFnet as an OBS network: a burst assembler per ordered pair of edge nodes (its own
    10 Gb/s wavelength into the core, losing 2% of its bursts), 10 Gb/s core links, and per pair
    a Poisson stream of Reno (SACK) transfers with Pareto sizes behind 100 Mb/s access links."""
    adj = nsfnet_graph()
    ms = lambda s: f"{s * 1e3:.6g}ms"  # noqa: E731
    links = [{"name": f"{u}-{v}", "from": u, "to": v, "capacity": "10Gbps", "delay": ms(d),
              "packet_size": SEGMENT_BYTES, "buffer": {"packets": 10_000}}
             for u in sorted(adj) for v, d in sorted(adj[u].items())]
    flows = []
    for s in EDGE:
        for t in EDGE:
            if s == t:
                continue
            nodes, delay = shortest_path(adj, s, t)
            assembler = f"burst-{s}-{t}"
            links.append({"name": assembler, "from": f"in-{s}-{t}", "to": s, "capacity": "10Gbps",
                          "packet_size": SEGMENT_BYTES, "buffer": {"packets": 100_000},
                          "assembler": {"timer": f"{timer_ms}ms", "policy": "mixed"}, "burst_loss": BURST_LOSS})
            # Base RTT: the path both ways plus 20 ms at the hosts, as in examples/nsfnet.toml.
            rtt_ms = math.ceil((2 * delay + 0.020) * 1e4) / 10
            flows.append({"name": f"{s}-{t}", "cc": "reno", "rtt": f"{rtt_ms:g}ms", "access_capacity": "100Mbps",
                          "path": [assembler] + [f"{a}-{b}" for a, b in zip(nodes, nodes[1:])],
                          "arrivals": {"rate": rate_per_pair, **FILES, "max_active": 1000}})
    return {"name": f"obs-nsfnet-{timer_ms}ms", "engine": "packet", "links": links, "flows": flows,
            "run": {"duration": f"{duration_s}s", "warmup": f"{duration_s / 5}s"}}


def _sum_hist(hists: list[list[int]]) -> list[int]:
    out = np.zeros(max((len(h) for h in hists), default=0), dtype=np.int64)
    for h in hists:
        out[: len(h)] += h
    return out.tolist()


def burst_columns(result) -> dict[str, Any]:
    """Every assembler's bursts summed, and the active flows (the sweep row's extra columns)."""
    bursts = [link["bursts"] for link in result.summary["links"] if link.get("bursts")]
    return {
        "bursts": sum(b["bursts"] for b in bursts),
        "lost_bursts": sum(b["lost_bursts"] for b in bursts),
        "flows_histogram": _sum_hist([b["flows_histogram"] for b in bursts]),
        "lost_flows_histogram": _sum_hist([b["lost_flows_histogram"] for b in bursts]),
        "segments_histogram": _sum_hist([b["segments_histogram"] for b in bursts]),
        "source_segments_histogram": _sum_hist([b["source_segments_histogram"] for b in bursts]),
        "active_flows": sum(d["active_mean"] for d in result.summary.get("dynamic", [])),
    }


def _run_stats(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    duration = 5.0 if quick else 60.0
    rows = [run_sweep(out / f"T{t}ms", obs_nsfnet(t, duration_s=duration), {}, 1, [], engine, burst_columns).assign(timer_ms=t)
            for t in TIMERS_MS]
    return _save(out, pd.concat(rows, ignore_index=True))


def _pdf(h) -> np.ndarray:
    h = np.asarray(h, dtype=float)
    return h / h.sum()


def _stats_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per timer: burst loss, active sources, the per-source ceiling and how often it is reached,
    the sources 80% of bursts stay within, and the mean segments and sources per burst."""
    out = []
    for _, r in rows.sort_values("timer_ms").iterrows():
        src, flows, segs = _pdf(r["source_segments_histogram"]), _pdf(r["flows_histogram"]), _pdf(r["segments_histogram"])
        top = int(np.nonzero(src)[0].max())
        cdf = np.cumsum(flows)
        out.append({"timer_ms": r["timer_ms"], "loss": r["lost_bursts"] / r["bursts"], "active": r["active_flows"],
                    "max_source_segments": top, "at_ceiling": src[top], "sources_80": int(np.searchsorted(cdf, 0.8 - 1e-12)),
                    "share_at_seed": float(cdf[min(SEED_SOURCES_80[r["timer_ms"]], len(cdf) - 1)]),
                    "mean_sources": float(np.dot(np.arange(len(flows)), flows)),
                    "mean_segments": float(np.dot(np.arange(len(segs)), segs))})
    return pd.DataFrame(out)


def _stats_figure(rows: pd.DataFrame):
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for _, r in rows.sort_values("timer_ms").iterrows():
        t = r["timer_ms"]
        src = _pdf(r["source_segments_histogram"])
        k = np.nonzero(src)[0]
        line = a.semilogy(k, src[k], marker=".", ms=3, lw=0.8)[0]
        a.axvline(ceiling(t), color=line.get_color(), ls=":", lw=0.8)
        # Successful bursts (all − lost) solid, lost ones dashed, as the seed's Fig. 1b.
        every, lost = np.asarray(r["flows_histogram"]), np.asarray(r["lost_flows_histogram"])
        lost = np.pad(lost, (0, len(every) - len(lost)))
        ok = _pdf(every - lost)
        b.step(np.arange(len(ok)), np.cumsum(ok), where="post", color=line.get_color(), label=f"T = {t:g} ms")
        b.step(np.arange(len(lost)), np.cumsum(_pdf(lost)), where="post", color=line.get_color(), ls="--", lw=0.8)
    a.set_xlabel("segments of one source in a burst")
    a.set_ylabel("probability")
    a.set_title("(a) segments per source per burst (dotted: 100 Mb/s × T)", fontsize=9)
    b.axhline(0.8, color="grey", lw=0.6)
    b.set_xlim(0, 20)
    b.set_xlabel("sources in a burst")
    b.set_ylabel("cumulative share of bursts")
    b.set_title("(b) sources per burst (dashed: lost bursts)", fontsize=9)
    for ax in (a, b):
        ax.grid(alpha=0.3)
    # One legend for both panels (a timer is one colour in each), beside them: inside either it
    # covered curves ((b)'s at 1.0 under it).
    b.legend(fontsize=8, title="assembly timer", title_fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    return fig


SEED_CEILINGS = {1: 13, 5: 61, 10: 121}
SEED_SOURCES_80 = {1: 2, 5: 4, 10: 6}
SEED_AT_CEILING = {1: 0.33, 5: 0.13, 10: 0.07}


def _claim_setup(rows):
    s = _stats_table(rows)
    text = ", ".join(f"{r.timer_ms:g} ms: loss {100 * r.loss:.2f}%, {r.active:.0f} active" for r in s.itertuples())
    return text, bool(((s["loss"] - BURST_LOSS).abs() < 0.005).all() and s["active"].between(600, 800).all())


def _claim_ceilings(rows):
    s = _stats_table(rows)
    text = ", ".join(f"{r.timer_ms:g} ms: {r.max_source_segments} (100 Mb/s × T: {ceiling(r.timer_ms)}; seed {SEED_CEILINGS[r.timer_ms]})"
                     for r in s.itertuples())
    holds = all(r.max_source_segments == ceiling(r.timer_ms)
                and abs(r.max_source_segments - SEED_CEILINGS[r.timer_ms]) <= 0.05 * SEED_CEILINGS[r.timer_ms]
                for r in s.itertuples())
    return text, holds


#: How near the seed's "about" 33%, 13% and 7% a share at the ceiling must be: 5 points, a quarter
#: of the 20 between its first two (the seed reads them off its figure).
AT_CEILING_POINTS = 0.05


def _claim_at_ceiling(rows):
    # Both halves of the claim: the shares themselves, and their fall with longer timers (main
    # ruled on the fall alone: 44%, 18%, 12% was "yes").
    s = _stats_table(rows)
    text = ", ".join(f"{r.timer_ms:g} ms: {100 * r.at_ceiling:.0f}% (seed {100 * SEED_AT_CEILING[r.timer_ms]:.0f}%)"
                     for r in s.itertuples())
    near = all(abs(r.at_ceiling - SEED_AT_CEILING[r.timer_ms]) <= AT_CEILING_POINTS for r in s.itertuples())
    return text, bool(near and np.all(np.diff(s["at_ceiling"]) < 0))


def _claim_sources_80(rows):
    s = _stats_table(rows)
    text = ", ".join(f"{r.timer_ms:g} ms: {r.sources_80} (seed {SEED_SOURCES_80[r.timer_ms]}; "
                     f"{100 * r.share_at_seed:.0f}% of bursts within {SEED_SOURCES_80[r.timer_ms]})" for r in s.itertuples())
    return text, all(r.sources_80 == SEED_SOURCES_80[r.timer_ms] for r in s.itertuples())


def _claim_more_per_burst(rows):
    s = _stats_table(rows)
    text = "; ".join(f"{r.timer_ms:g} ms: {r.mean_segments:.1f} segments, {r.mean_sources:.2f} sources" for r in s.itertuples())
    return text, bool(np.all(np.diff(s["mean_segments"]) > 0) and np.all(np.diff(s["mean_sources"]) > 0))


register(Study(
    "obs-stats", "Seed 002, Fig. 1: segments and sources per burst on NSFnet",
    "NSFnet (8 edge, 6 core nodes; 10 Gb/s links), a burst assembler per ordered pair of edge nodes (mixed-flow, "
    "timer 1, 5 or 10 ms) losing 2% of its bursts; per pair, Reno (SACK) transfers arriving at 50 per second "
    "(Poisson) with Pareto sizes (minimum 40 KB, mean 700 KB) behind their own 100 Mb/s access links; 1000-byte "
    "segments; shortest paths by delay. Our choices: the rate per pair (the only reading under which the seed's "
    "600-800 active sources follow from Little's law), Bernoulli loss at the edge for the seed's 2%.",
    _run_stats, _stats_figure,
    [Claim("Setup: about 2% burst loss and 600-800 active sources", _claim_setup, quick_decides=False),
     Claim("The segments one source puts in a burst hit a ceiling of about 13, 61 and 121 for 1, 5 and 10 ms "
           "(100 Mb/s × T)", _claim_ceilings),
     Claim("The ceiling is reached in about 33%, 13% and 7% of the bursts: less often with longer timers", _claim_at_ceiling,
           quick_decides=False),
     Claim("80% of the bursts carry segments of at most 2 (1 ms), 4 (5 ms) and 6 (10 ms) sources", _claim_sources_80,
           quick_decides=False),
     Claim("Longer timers carry more segments and more sources per burst", _claim_more_per_burst)],
    source=SOURCE, engine="packet", fidelity=("3 timers × 60 s (12 s warm-up), one seed", "3 timers × 5 s"),
    engines=("packet",),  # transfers that come and go: packet engine only
    cross=in_fluid(("the study's protocol", "the study's --quick protocol")),
))


# ---------------------------------------------------------------------------------------------
# obs-sync (Figs. 2-4): per-flow vs mixed-flow assembly

SYNC_FLOWS = [10, 15, 25]
SYNC_ACCESS_TOTAL_BPS = 1e9


def obs_edge(assembler: dict[str, Any], flows: list[dict[str, Any]], duration_s: float, warmup_s: float,
             aggregate: bool = True, loss: str = "bernoulli") -> dict[str, Any]:
    """One OBS edge: an assembler in front of a 10 Gb/s wavelength that loses 2% of its bursts
    (`bernoulli`), or loses them by contention with the other edges' bursts (`contention`)."""
    run = {"duration": f"{duration_s}s", "warmup": f"{warmup_s}s", "record_interval": "0.1s"}
    if aggregate:
        run["aggregate_interval"] = "0.7s"  # the seed samples the windows every 0.7 s
    core = {"burst_loss": BURST_LOSS} if loss == "bernoulli" else {"contention": CONTENTION}
    return {"engine": "packet",
            "links": [{"name": "obs", "capacity": "10Gbps", "packet_size": SEGMENT_BYTES, "buffer": {"packets": 100_000},
                       "assembler": assembler, **core}],
            "flows": flows, "run": run}


def losses(engine: str) -> list[str]:
    """The core's loss models an engine runs: the fluid engine has no contention."""
    return LOSSES[:1] if engine.startswith("fluid") else LOSSES


def folder(name: str, loss: str) -> str:
    """A sweep's folder: Bernoulli runs keep the names they had before contention ran too."""
    return name if loss == "bernoulli" else f"{name}-{loss}"


def under(loss: str, claims: list[Claim]) -> list[Claim]:
    """The claims judged on the runs of one loss model (contention: the claim's text says so)."""
    def judged(check):
        def on(rows):
            rows = rows[rows["loss"] == loss]
            measured, holds = check(rows)
            if loss != "bernoulli" and "burst_loss_rate" in rows:
                measured += f" (bursts lost: {100 * rows['burst_loss_rate'].mean():.2f}%)"
            return measured, holds
        return on
    tag = "" if loss == "bernoulli" else CONTENTION_TAG
    return [Claim(tag + c.text, judged(c.check), c.quick_decides) for c in claims]


def cross_checks(claims: list[Claim], protocol: tuple[str, str]) -> CrossCheck:
    """`in_fluid`, with the fluid engine's reason for the contention claims."""
    cross = in_fluid(protocol)
    cross.checks = {"fluid:tcp": [NO_CONTENTION if c.text.startswith(CONTENTION_TAG) else c.check
                                  for c in claims]}
    return cross


def long_lived(n: int) -> list[dict[str, Any]]:
    """The seed's synchronization experiment: n Reno (SACK) flows of 20 ms, one aggregate access
    bandwidth of 1 Gb/s shared equally, starting at random in the first 50 s."""
    return [{"count": n, "cc": "reno", "rtt": "20ms", "access_capacity": f"{SYNC_ACCESS_TOTAL_BPS / n:.6g}bps", "path": ["obs"],
             "slow_start": True, "start": {"uniform": ["0s", "50s"]}}]


def aggregate_columns(result) -> dict[str, Any]:
    a = result.summary["aggregate"]
    edge = next(link for link in result.summary["links"] if link["name"] == "obs")
    b = edge["bursts"]
    mbps = edge["capacity_bps"] / 1e6  # the traffic leaving the edge, sampled every 0.1 s, in Mb/s
    return {"aggregate_cv": a["cv"], "aggregate_mean_pps": a["mean_pps"], "aggregate_std_pps": a["std_pps"],
            "aggregate_time_s": a["time_s"], "aggregate_rate_pps": a["rate_pps"],
            "outgoing_std_mbps": edge["utilization_std"] * mbps, "outgoing_mean_mbps": edge["utilization"] * mbps,
            "mean_flows_per_burst": b["mean_flows"], "mean_flows_per_lost_burst": b["mean_flows_per_lost_burst"],
            "burst_loss_rate": b["loss_rate"]}


def _run_sync(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    duration, seeds = (300.0, 1) if quick else (600.0, 3)
    parts = []
    for loss in losses(engine):
        for n in SYNC_FLOWS:
            base = obs_edge({"timer": "1ms", "policy": "mixed"}, long_lived(n), duration, 60.0, loss=loss)
            rows = run_sweep(out / folder(f"N{n}", loss), base, {"links.0.assembler.policy": ["per_flow", "mixed"]},
                             seeds, [], engine, aggregate_columns)
            parts.append(rows.rename(columns={"links.0.assembler.policy": "policy"}).assign(flows=n, loss=loss))
    return _save(out, pd.concat(parts, ignore_index=True))


def _by(rows: pd.DataFrame, keys: list[str], metric: str) -> pd.Series:
    return rows.groupby(keys)[metric].mean()


def _sync_figure(rows: pd.DataFrame):
    fig, axes = plt.subplots(len(SYNC_FLOWS), 1, figsize=(9, 7), sharex=True)
    first = rows[(rows["seed"] == rows["seed"].min()) & (rows["loss"] == "bernoulli")]
    for ax, n in zip(axes, SYNC_FLOWS):
        for policy, label in [("per_flow", "per-flow (PF)"), ("mixed", "mixed-flow (MF)")]:
            r = first[(first["flows"] == n) & (first["policy"] == policy)].iloc[0]
            ax.plot(r["aggregate_time_s"], np.asarray(r["aggregate_rate_pps"]) * 8 * SEGMENT_BYTES / 1e6, lw=0.7, label=label)
        ax.set_title(f"N_F = {n}", fontsize=9)
        ax.set_ylabel("Σ cwnd/RTT (Mb/s)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[-1].set_xlabel("time (s), windows sampled every 0.7 s")
    fig.tight_layout()
    return fig


def _claim_sawtooth(rows):
    cv = _by(rows, ["flows", "policy"], "aggregate_cv")
    text = "; ".join(f"N_F = {n}: CV {cv[(n, 'per_flow')]:.2f} per-flow, {cv[(n, 'mixed')]:.2f} mixed" for n in SYNC_FLOWS)
    return text, all(cv[(n, "mixed")] >= 2 * cv[(n, "per_flow")] for n in SYNC_FLOWS)


def _claim_many_flows_lose(rows):
    m = _by(rows, ["flows", "policy"], "mean_flows_per_lost_burst")
    text = "; ".join(f"N_F = {n}: {m[(n, 'per_flow')]:.2f} per-flow, {m[(n, 'mixed')]:.2f} mixed" for n in SYNC_FLOWS)
    return text, all(m[(n, "per_flow")] == 1.0 and m[(n, "mixed")] > 1.0 for n in SYNC_FLOWS)


def _claim_worse_with_n(rows):
    cv = _by(rows, ["flows", "policy"], "aggregate_cv")
    mixed = [cv[(n, "mixed")] for n in SYNC_FLOWS]
    return "mixed-flow CV " + ", ".join(f"{c:.2f}" for c in mixed) + f" for N_F = {SYNC_FLOWS}", bool(np.all(np.diff(mixed) > 0))


def _claim_more_flows_per_burst(rows):
    m = _by(rows, ["flows", "policy"], "mean_flows_per_burst")
    mixed = [m[(n, "mixed")] for n in SYNC_FLOWS]
    if np.isnan(mixed).any():  # the fluid engine counts flows per lost burst only
        return "not measured by this engine (flows per burst: packet engine)", None
    return "mixed-flow: " + ", ".join(f"{x:.2f}" for x in mixed) + " flows per burst", bool(np.all(np.diff(mixed) > 0))


SYNC_CLAIMS = [
    Claim("Per-flow assembly gives a nearly flat aggregate, mixed-flow a saw-tooth (here: the aggregate's "
          "coefficient of variation at least twice as large)", _claim_sawtooth),
    Claim("A lost mixed-flow burst makes several flows cut their windows at once; a per-flow burst one",
          _claim_many_flows_lose),
    # Claims 3 and 4 order three near-equal figures, which --quick's one seed of 300 s cannot decide (its
    # verdicts differed from the full protocol's in the fluid and the jittered packet engines).
    Claim("With more flows (each with less access bandwidth), the mixed-flow fluctuations are more evident",
          _claim_worse_with_n, quick_decides=False),
    Claim("With more flows, more flows share each burst", _claim_more_flows_per_burst, quick_decides=False)]
SYNC_PROTOCOL = ("3 seeds × 600 s per loss model", "1 seed × 300 s per loss model")
SYNC_JUDGED = under("bernoulli", SYNC_CLAIMS) + under("contention", SYNC_CLAIMS)

register(Study(
    "obs-sync", "Seed 002, Figs. 2-4: per-flow vs mixed-flow burst assembly",
    "One OBS edge: N_F = 10, 15, 25 Reno (SACK) flows of 20 ms sharing 1 Gb/s of access bandwidth equally, starting "
    "at random in [0, 50] s; a 1 ms assembler, one queue per flow (PF) or one for all (MF), in front of a 10 Gb/s "
    "wavelength losing 2% of the bursts; 1000-byte segments; Σ cwnd/RTT sampled every 0.7 s, statistics from 60 s. "
    "Every cell also runs with wavelength contention instead of Bernoulli loss: the edge's bursts share one 10 Gb/s "
    "wavelength with the other edges' (a Poisson background of 0.0204 erlangs, 14 µs mean bursts, which loses 2% of "
    "sparse bursts). Our choices: the RTT, the 1 Gb/s total, Bernoulli loss and the contention's background (the "
    "seed gives none of them for this experiment).",
    _run_sync, _sync_figure, SYNC_JUDGED,
    source=SOURCE, engine="packet", fidelity=SYNC_PROTOCOL, engines=("packet", "fluid"),
    cross=cross_checks(SYNC_JUDGED, SYNC_PROTOCOL),
))


# ---------------------------------------------------------------------------------------------
# obs-multiqueue (Figs. 5-6): window-threshold queues, and randomized allocation

MQ_B = [16, 32]
MQ_C_OVER_B = [2, 3, 4, 6, 8, 16]
RANDOM_QUEUES = [1, 2, 4]
RANDOM_FLOWS = [10, 25]


def web_traffic() -> list[dict[str, Any]]:
    """The NSFnet statistics experiment's traffic as seen by one edge node and one destination:
    50 transfers per second, Pareto sizes, 100 Mb/s access, RTT 20 ms (our choice)."""
    return [{"name": "web", "cc": "reno", "rtt": "20ms", "access_capacity": "100Mbps", "path": ["obs"],
             "arrivals": {"rate": 50, **FILES, "max_active": 2000}}]


def transfer_columns(result) -> dict[str, Any]:
    """Per finished transfer (started after the warm-up), its throughput size/FCT: mean and variance."""
    web = next(g for g in result.summary["dynamic"] if g["group"] == "web")
    edge = next(link for link in result.summary["links"] if link["name"] == "obs")
    return {"transfers": web["fct"][0]["flows"], "throughput_mean_mbps": web["flow_goodput_mean_bps"] / 1e6,
            "throughput_var_mbps2": web["flow_goodput_var_bps2"] / 1e12, "burst_loss_rate": edge["bursts"]["loss_rate"]}


def _run_multiqueue(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    parts = []
    for loss in losses(engine):
        parts += _run_multiqueue_under(out, quick, engine, loss)
    return _save(out, pd.concat(parts, ignore_index=True))


def _run_multiqueue_under(out: Path, quick: bool, engine: str, loss: str) -> list[pd.DataFrame]:
    duration, seeds = (60.0, 1) if quick else (300.0, 5)
    single = obs_edge({"timer": "1ms", "policy": "mixed"}, web_traffic(), duration, duration / 5, aggregate=False,
                      loss=loss)
    rows = run_sweep(out / folder("single", loss), single, {"links.0.assembler.timer": [f"{t}ms" for t in TIMERS_MS]},
                     seeds, [], engine, transfer_columns)
    parts = [rows.rename(columns={"links.0.assembler.timer": "timer_ms"}).assign(part="window", kind="single", B=0, C=0)]
    window = obs_edge({"policy": "window", "timers": ["1ms", "5ms", "10ms"], "thresholds": [16, 64]}, web_traffic(),
                      duration, duration / 5, aggregate=False, loss=loss)
    thresholds = [[b, k * b] for b in MQ_B for k in MQ_C_OVER_B]
    rows = run_sweep(out / folder("window", loss), window, {"links.0.assembler.thresholds": thresholds}, seeds, [],
                     engine, transfer_columns)
    bc = rows.pop("links.0.assembler.thresholds")
    parts.append(rows.assign(part="window", kind="window", timer_ms="", B=[t[0] for t in bc], C=[t[1] for t in bc]))
    duration, seeds = (300.0, 1) if quick else (600.0, 3)
    for n in RANDOM_FLOWS:
        base = obs_edge({"timer": "1ms", "policy": "random", "queues": 1}, long_lived(n), duration, 60.0, loss=loss)
        r = run_sweep(out / folder(f"random-N{n}", loss), base, {"links.0.assembler.queues": RANDOM_QUEUES}, seeds, [],
                      engine, aggregate_columns)
        parts.append(r.rename(columns={"links.0.assembler.queues": "queues"}).assign(part="random", flows=n))
    return [p.assign(loss=loss) for p in parts]


def _window_table(rows: pd.DataFrame) -> pd.DataFrame:
    w = rows[rows["part"] == "window"]
    return w.groupby(["kind", "timer_ms", "B", "C"], as_index=False)[["throughput_mean_mbps", "throughput_var_mbps2"]].mean()


def _random_table(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["part"] == "random"].groupby(["flows", "queues"])[["outgoing_std_mbps", "aggregate_std_pps"]].mean()


def _multiqueue_figure(rows: pd.DataFrame):
    rows = rows[rows["loss"] == "bernoulli"]
    t = _window_table(rows)
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(13, 4))
    for bb in MQ_B:
        g = t[(t["kind"] == "window") & (t["B"] == bb)].sort_values("C")
        a.plot(g["C"], g["throughput_mean_mbps"], marker="o", ms=3, label=f"B = {bb}")
        b.plot(g["C"], g["throughput_var_mbps2"], marker="o", ms=3, label=f"B = {bb}")
    for (_, s), ls in zip(t[t["kind"] == "single"].iterrows(), [":", "--", "-."]):
        for ax, m in [(a, "throughput_mean_mbps"), (b, "throughput_var_mbps2")]:
            ax.axhline(s[m], ls=ls, lw=0.8, color="grey", label=f"one queue, {s['timer_ms']}")
    for ax, y in [(a, "mean throughput per transfer (Mb/s)"), (b, "its variance ((Mb/s)²)")]:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("C (segments)")
        ax.set_ylabel(y)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    r = _random_table(rows).reset_index()
    for n, g in r.groupby("flows"):
        c.plot(g["queues"], g["outgoing_std_mbps"], marker="o", label=f"N_F = {int(n)}")
    c.set_xticks(RANDOM_QUEUES)
    c.set_xlabel("randomized queues")
    c.set_ylabel("std of the outgoing traffic (Mb/s, 0.1 s bins)")
    c.grid(alpha=0.3)
    c.legend(fontsize=8)
    a.set_title("(a) window thresholds: throughput", fontsize=9)
    b.set_title("(b) window thresholds: variance", fontsize=9)
    c.set_title("(c) randomized allocation", fontsize=9)
    fig.tight_layout()
    return fig


def _claim_best_at_4b(rows):
    t = _window_table(rows)
    parts, holds = [], True
    for bb in MQ_B:
        g = t[(t["kind"] == "window") & (t["B"] == bb)]
        best = g.loc[g["throughput_mean_mbps"].idxmax()]
        parts.append(f"B = {bb}: best C = {best['C']:g} ({best['throughput_mean_mbps']:.2f} Mb/s)")
        holds &= best["C"] == 4 * bb
    return "; ".join(parts) + " (seed: C = 64, 10.7 Mb/s; C = 128, 9.86 Mb/s)", holds


def _claim_variance_falls(rows):
    t = _window_table(rows)
    parts, holds = [], True
    for bb in MQ_B:
        g = t[(t["kind"] == "window") & (t["B"] == bb)].sort_values("C")
        parts.append(f"B = {bb}: " + ", ".join(f"{v:.0f}" for v in g["throughput_var_mbps2"]))
        holds &= bool(np.all(np.diff(g["throughput_var_mbps2"]) < 0))
    return "; ".join(parts) + f" for C/B = {MQ_C_OVER_B}", holds


def _claim_variance_51(rows):
    t = _window_table(rows)
    v = t[(t["kind"] == "window") & (t["B"] == 16) & (t["C"] == 64)]["throughput_var_mbps2"].iloc[0]
    single = {s["timer_ms"]: s["throughput_var_mbps2"] for _, s in t[t["kind"] == "single"].iterrows()}
    return (f"B = 16, C = 64: {v:.0f}; one queue: {single['1ms']:.0f} (1 ms), {single['5ms']:.0f} (5 ms)",
            bool(v < single["1ms"] and v < single["5ms"]))


def _claim_random(rows):
    r = _random_table(rows)["outgoing_std_mbps"]
    parts, holds = [], True
    for n in RANDOM_FLOWS:
        cut = {q: 1 - r[(n, q)] / r[(n, 1)] for q in RANDOM_QUEUES[1:]}
        parts.append(f"N_F = {n}: " + ", ".join(f"{100 * cut[q]:.0f}% ({q} queues)" for q in cut))
        holds &= bool(cut[2] > 0 and cut[4] >= cut[2])
    return "; ".join(parts), holds


MQ_CLAIMS = [
    Claim("Throughput is highest at C = 4B (B = 16: 10.7 Mb/s at C = 64; B = 32: 9.86 Mb/s at C = 128)",
          _claim_best_at_4b),
    Claim("The variance of the flows' throughput decreases continuously as C grows", _claim_variance_falls),
    Claim("B = 16, C = 64 lowers the variance to 51, against 60-70 for one queue of 1 or 5 ms", _claim_variance_51),
    Claim("Randomized allocation reduces the standard deviation of the outgoing traffic, by 37% with 2 queues "
          "and 40% with 4", _claim_random)]
MQ_JUDGED = under("bernoulli", MQ_CLAIMS) + under("contention", MQ_CLAIMS)

register(Study(
    "obs-multiqueue", "Seed 002, Figs. 5-6: multi-queue burst assembly",
    "Window thresholds (Fig. 5): one OBS edge, Reno (SACK) transfers to one destination arriving at 50 per second "
    "with Pareto sizes (minimum 40 KB, mean 700 KB), 100 Mb/s access, RTT 20 ms; the assembler has three queues, "
    "1 ms for windows below B, 5 ms below C, 10 ms above (the sender signals its window; a flow that loses a burst "
    "falls back with its window), against one queue of 1, 5 or 10 ms; 2% Bernoulli burst loss at a 10 Gb/s "
    "wavelength; throughput of a transfer = its size over its completion time. Randomized allocation (Fig. 6): the "
    "obs-sync setup (mixed-flow, 1 ms) with flows drawn into 1, 2 or 4 queues every assembly cycle, N_F = 10 and 25; "
    "the outgoing traffic in 0.1 s bins. Every cell also runs with wavelength contention instead of Bernoulli loss, "
    "as in obs-sync. Our choices: the RTT, the one destination's arrival rate, the bins, the contention's background.",
    _run_multiqueue, _multiqueue_figure, MQ_JUDGED,
    source=SOURCE, engine="packet",
    fidelity=("5 seeds × 300 s per assembler; randomized: 3 seeds × 600 s; each per loss model",
              "1 seed × 60 s; randomized: 1 seed × 300 s; each per loss model"),
    engines=("packet",),  # transfers that come and go: packet engine only
    cross=cross_checks(MQ_JUDGED, ("the study's protocol", "the study's --quick protocol")),
))
