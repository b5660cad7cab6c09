"""`lossync reproduce aqm-buffers`: the seeds' question (how much buffer, and how do the flows share
it and lose together) asked of today's routers: drop-tail, RED, CoDel, PIE, DCTCP's step marking,
and FQ-CoDel and DualPI2 where the core registers them, each with the senders that fit it (Reno,
CUBIC with and without ECN, BBR v1, DCTCP, Prague), in the packet engine, against buffer size
(2% to 2 BDP). Not a seed paper: the claims are the published properties of these mechanisms
(issue 35, item 6). A discipline the core lacks is left out and the report says so; a claim
that needs it is reported as not tested, with the reason."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from .. import _core
from ..io import atomic_write
from ..plot import plt
from .framework import Claim, Study, register, run_sweep

SOURCE = ("Floyd, Jacobson, 'Random early detection gateways for congestion avoidance', IEEE/ACM ToN 1993; "
          "RFC 8289 (CoDel); RFC 8033 (PIE); RFC 8290 (FQ-CoDel); RFC 9332 (DualPI2); Alizadeh et al., "
          "'Data Center TCP (DCTCP)', SIGCOMM 2010; Kumar, Xue, Park, JCNC 2014 (seed 001's future work)")

#: Every flow set spreads its RTTs over 10..100 ms: the buffers are fractions of the BDP at the
#: mean RTT, 55 ms, and C·RTT/7 (DCTCP's K) uses the same RTT.
RTT = "10ms..100ms"
RTT_MEAN_S = 0.055
PKT_BITS = 1500 * 8
RATE_BPS = {"1Gbps": 1e9, "10Gbps": 10e9, "100Gbps": 100e9}
#: The senders: (variant, ECN on).
SENDERS = {"reno": ("reno", False), "cubic": ("cubic", False), "cubic-ecn": ("cubic", True), "bbr": ("bbr", False),
           "dctcp": ("dctcp", True), "prague": ("prague", True)}
#: The AQMs' delay targets (their defaults: RFC 8289 §4.4, RFC 8033 §4.1, RFC 8290 §4.1; RFC 9332
#: §A.1's classic target).
TARGET_S = {"codel": 0.005, "pie": 0.015, "fq_codel": 0.005, "dualpi2": 0.015}
#: DCTCP's K in multiples of C·RTT/7 (the buffer is 1 BDP there).
K_FACTORS = [0.25, 0.5, 1.0, 2.0]
QUICK_K_FACTORS = [0.25, 1.0, 2.0]
#: Per capacity: (run length, warm-up) in seconds, buffers (BDP), and the sender sets per discipline;
#: DCTCP's (`step_run`) and DualPI2's one-against-one cells' (`pair_run`) run lengths, and the seeds
#: of claim b's cells (`flat_seeds`). At 1 Gb/s
#: and 55 ms a Prague and a CUBIC or Reno flow each grow by about a packet per RTT after the
#: slow-start exit, so their shares take minutes to settle (Prague/CUBIC at 1 BDP: 0.18 measured
#: over 6-20 s, 0.34 over 18-60 s, 1.55 over 100-300 s).
FULL = {
    "1Gbps": dict(duration=20.0, warmup=6.0, buffers=[0.02, 0.1, 0.25, 1.0, 2.0],
                  senders={"droptail": ["reno", "cubic", "bbr"], "red": ["reno", "cubic"],
                           "red-ecn": ["cubic-ecn", "dctcp"], "codel": ["reno", "cubic", "bbr"], "codel-ecn": ["cubic-ecn"],
                           "pie": ["reno", "cubic", "bbr"], "pie-ecn": ["cubic-ecn"], "fq_codel": ["reno", "cubic", "bbr"],
                           "fq_codel-ecn": ["cubic-ecn"]},
                  k_factors=K_FACTORS, step_run=(20.0, 6.0), dualpi2=True, pair_run=(300.0, 100.0),
                  flat_seeds=5, many_flows=True, rtt_mixes=True),
    # 10 Gb/s: a CUBIC or Reno cycle is longer than any affordable run (W ≈ 4,600 packets per
    # flow); 10 s show the AQMs' standing queues, not the drop-tail steady state. DCTCP runs 60 s,
    # measured from 40 s: after its slow-start exit its flows grow a packet per RTT each, and the
    # queue needs about 650 mean RTTs (36 s) to reach K = C·RTT/7 (6,548 packets; at 10 s the
    # mean queue was 4,028, outside Alizadeh et al.'s band, a transient).
    "10Gbps": dict(duration=10.0, warmup=4.0, buffers=[0.02, 0.25, 1.0, 2.0],
                   senders={"droptail": ["cubic"], "codel": ["cubic"], "pie": ["cubic"], "fq_codel": ["cubic"]},
                   k_factors=QUICK_K_FACTORS, step_run=(60.0, 40.0), dualpi2=False, flat_seeds=5, many_flows=False,
                   rtt_mixes=False),
    # 100 Gb/s: a couple of cells (several wall seconds per simulated second). No DCTCP: its
    # queue would need about 6,500 mean RTTs (6 simulated minutes) to reach K = 65,476 packets.
    "100Gbps": dict(duration=3.0, warmup=1.5, buffers=[1.0], senders={"codel": ["cubic"]}, k_factors=[1.0],
                    step_run=None, dualpi2=False, flat_seeds=1, many_flows=False, rtt_mixes=False),
}
QUICK = {
    "1Gbps": dict(duration=10.0, warmup=3.0, buffers=[0.02, 0.25, 2.0],
                  senders={"droptail": ["reno", "cubic"], "red": ["reno"], "red-ecn": ["dctcp"], "codel": ["cubic"],
                           "codel-ecn": ["cubic-ecn"], "pie": ["cubic"], "fq_codel": ["reno"]},
                  k_factors=QUICK_K_FACTORS, step_run=(10.0, 3.0), dualpi2=True, pair_run=(10.0, 3.0),
                  flat_seeds=1, many_flows=False, rtt_mixes=True),
}
#: CoDel and PIE also at 4 BDP: the buffers above BDP + C·target (claim b) are then 2 and 4 BDP.
DEEP = 4.0
#: Claim b's "within a few %": 5%, relative.
FLAT = 0.05
#: Claim e's RTT mixes besides the study's own 10..100 ms (Reno at 0.25 and 1 BDP).
RTT_MIXES = ["10ms..200ms", "50ms..50ms"]


def registered() -> list[str]:
    return [name for name, _ in _core.disciplines()]


def bdp_pkts(cap: str) -> float:
    return RATE_BPS[cap] / PKT_BITS * RTT_MEAN_S


def k_rule(cap: str) -> float:
    """Alizadeh et al. 2010 §3.3: K > C·RTT/7, in packets (RTT the mean, 55 ms)."""
    return bdp_pkts(cap) / 7


def _base(cap: str, duration: float, warmup: float, queue: dict[str, Any], groups: int = 1) -> dict[str, Any]:
    return {
        "name": "aqm",
        "dumbbell": {"capacity": cap, "buffer": {"bdp_fraction": 1.0}, "queue": queue},
        "flows": [{"name": f"g{i}", "cc": "reno", "count": 10 // groups, "rtt": RTT, "slow_start": True, "ecn": False}
                  for i in range(groups)],
        "run": {"duration": duration, "warmup": warmup, "record_interval": 1.0},
    }


def link_columns(result) -> dict[str, Any]:
    """The bottleneck's signals and sojourn times, and the variants' throughputs (Prague against
    CUBIC: the total ratio and the range of the ratios of flows of equal RTT; Prague against
    every other flow)."""
    s = result.summary
    link = next(l for l in s["links"] if l["name"] == s["bottleneck"])
    # An undefined figure (no L4S packets, so no L-queue sojourn) is NaN, null in the summary.
    def num(k: str) -> float:
        v = link.get(k)
        return math.nan if v is None else float(v)

    out = {k: num(k) for k in ("mark_rate", "early_drop_rate", "overflow_drop_rate",
                               "sojourn_mean_s", "sojourn_p50_s", "sojourn_p99_s")}
    # DualPI2's L queue (ECT(1) and CE packets).
    out["l4s_sojourn_mean_s"] = num("sojourn_l4s_mean_s")
    out["l4s_sojourn_p99_s"] = num("sojourn_l4s_p99_s")
    thr: dict[str, float] = {}
    by_rtt: dict[tuple[float, str], float] = {}
    for f in s["flows"]:
        thr[f["variant"]] = thr.get(f["variant"], 0.0) + f["throughput_pps"]
        key = (round(f["rtt_s"], 6), f["variant"])
        by_rtt[key] = by_rtt.get(key, 0.0) + f["throughput_pps"]
    out["ratio_prague_cubic"] = thr["prague"] / thr["cubic"] if thr.get("cubic") and "prague" in thr else math.nan
    classic = sum(v for k, v in thr.items() if k != "prague")
    out["ratio_prague_classic"] = thr["prague"] / classic if classic and "prague" in thr else math.nan
    pairs = [by_rtt[(r, "prague")] / by_rtt[(r, "cubic")] for r, v in by_rtt if v == "prague"
             and by_rtt.get((r, "cubic"))]
    out["pair_ratio_min"] = min(pairs) if pairs else math.nan
    out["pair_ratio_max"] = max(pairs) if pairs else math.nan
    return out


def _zip(points: list[dict[str, Any]]) -> dict[str, list[Any]]:
    return {k: [p[k] for p in points] for k in points[0]}


def _label(disc: str, sender: str, count: int = 10, rtt: str = RTT, k: float | None = None) -> str:
    return "|".join([disc, sender, str(count), rtt, "" if k is None else f"{k:g}"])


def run_aqm(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    """One sweep per capacity and family of disciplines (drop-tail, RED, the delay-based AQMs,
    step marking, DualPI2), every cell of a family a point of one zipped sweep: each sweep
    starts a process pool, and a few large ones cost less than one per cell."""
    have = set(registered())
    frames = []
    for cap, cfg in (QUICK if quick else FULL).items():
        dur, warm, buffers = cfg["duration"], cfg["warmup"], cfg["buffers"]
        senders = {d: s for d, s in cfg["senders"].items() if d.removesuffix("-ecn") in have}
        # (family, base or queue, points, seeds)
        sweeps: list[tuple[str, dict[str, Any], list[dict[str, Any]], int | list[int]]] = []

        def flow(cc_key: str, count: int = 10, rtt: str = RTT) -> dict[str, Any]:
            cc, ecn = SENDERS[cc_key]
            return {"flows.0.cc": cc, "flows.0.ecn": ecn, "flows.0.count": count, "flows.0.rtt": rtt}

        # Drop-tail (with the RTT mixes and 100 flows as FQ-CoDel's contrast).
        pts = [{"name": _label("droptail", s), "dumbbell.buffer.bdp_fraction": b, **flow(s)}
               for s in senders.get("droptail", []) for b in buffers]
        if cfg["rtt_mixes"]:
            pts += [{"name": _label("droptail", "reno", rtt=m), "dumbbell.buffer.bdp_fraction": b, **flow("reno", rtt=m)}
                    for m in RTT_MIXES for b in (0.25, 1.0)]
        if cfg["many_flows"]:
            pts += [{"name": _label("droptail", "reno", 100), "dumbbell.buffer.bdp_fraction": b, **flow("reno", 100)}
                    for b in (0.1, 1.0)]
        if pts:
            sweeps.append(("droptail", {"discipline": "droptail"}, pts, 1))
        # RED, gentle, its thresholds a sixth and a half of the buffer (max_p, weight: Floyd &
        # Jacobson's defaults), dropping or marking.
        pts = []
        for d in ("red", "red-ecn"):
            for s in senders.get(d, []):
                for b in buffers:
                    pkts = b * bdp_pkts(cap)
                    pts.append({"name": _label(d, s), "dumbbell.buffer.bdp_fraction": b, "dumbbell.queue.ecn": d == "red-ecn",
                                "dumbbell.queue.min_th": max(1.0, round(pkts / 6)),
                                "dumbbell.queue.max_th": max(2.0, round(pkts / 2)), **flow(s)})
        if pts:
            sweeps.append(("red", {"discipline": "red", "min_th": 1, "max_th": 2, "ecn": False}, pts, 1))
        # The delay-based AQMs at their defaults, dropping or marking.
        pts = []
        for d in ("codel", "codel-ecn", "pie", "pie-ecn", "fq_codel", "fq_codel-ecn"):
            disc = d.removesuffix("-ecn")
            for s in senders.get(d, []):
                for b in buffers + ([DEEP] if disc in ("codel", "pie") else []):
                    pts.append({"name": _label(d, s), "dumbbell.queue.discipline": disc, "dumbbell.queue.ecn": d.endswith("-ecn"),
                                "dumbbell.buffer.bdp_fraction": b, **flow(s)})
        if "fq_codel" in have and cfg["rtt_mixes"]:
            pts += [{"name": _label("fq_codel", "reno", rtt=m), "dumbbell.queue.discipline": "fq_codel",
                     "dumbbell.queue.ecn": False, "dumbbell.buffer.bdp_fraction": b, **flow("reno", rtt=m)}
                    for m in RTT_MIXES for b in (0.25, 1.0)]
        if cfg["many_flows"]:
            pts += [{"name": _label(d, "reno", 100), "dumbbell.queue.discipline": d, "dumbbell.queue.ecn": False,
                     "dumbbell.buffer.bdp_fraction": b, **flow("reno", 100)}
                    for d in ("codel", "fq_codel") if d in have for b in (0.1, 1.0)]
        if pts:
            sweeps.append(("aqm", {"discipline": "codel", "ecn": False}, pts, 1))
        # Claim b's cells above BDP + C·target again, with seeds 2 to `flat_seeds`: it compares
        # the mean delay at 2 and 4 BDP within 5%, which one seed's run-to-run noise can exceed.
        flat = [p for p in pts if p["dumbbell.queue.discipline"] in ("codel", "pie") and p["flows.0.count"] == 10
                and p["flows.0.rtt"] == RTT
                and p["dumbbell.buffer.bdp_fraction"] >= 1.0 + TARGET_S[p["dumbbell.queue.discipline"]] / RTT_MEAN_S]
        if flat and cfg["flat_seeds"] > 1:
            sweeps.append(("aqm-seeds", {"discipline": "codel", "ecn": False}, flat, list(range(2, cfg["flat_seeds"] + 1))))
        # DCTCP behind step marking: K = C·RTT/7 (or the whole buffer where that is less) against
        # buffer size, and K from a quarter to twice C·RTT/7 in a 1 BDP buffer.
        if "step" in have and cfg["step_run"]:
            kr = k_rule(cap)
            pts = []
            for sender, grid in (("dctcp", [(b, min(math.ceil(kr), math.floor(b * bdp_pkts(cap)))) for b in buffers]),
                                 ("dctcp-k", [(1.0, math.ceil(f * kr)) for f in cfg["k_factors"]
                                             if f != 1.0 or 1.0 not in buffers])):
                pts += [{"name": _label("step", sender, k=k / kr), "dumbbell.buffer.bdp_fraction": b,
                         "dumbbell.queue.threshold": max(1, k), **flow("dctcp")} for b, k in grid]
            sweeps.append(("step", _base(cap, *cfg["step_run"], {"discipline": "step", "threshold": 1}), pts, 1))
        # DualPI2: 5 Prague + 5 CUBIC flows (RTTs pairwise equal) and 10 Prague flows; and, run
        # to their steady state (`pair_run`), one Prague flow against one CUBIC or one Reno flow
        # at 55 ms.
        if "dualpi2" in have and cfg["dualpi2"]:
            for family, cells, (d, w) in (
                    ("dualpi2", (("prague+cubic", "cubic", 5, RTT), ("prague", "prague", 5, RTT)), (dur, warm)),
                    ("dualpi2-pair", (("prague+cubic-1", "cubic", 1, "55ms"), ("prague+reno-1", "reno", 1, "55ms")),
                     cfg["pair_run"])):
                pts = [{"name": _label("dualpi2", cell, 2 * n, rtt), "dumbbell.buffer.bdp_fraction": b,
                        "flows.1.cc": cc1, "flows.1.ecn": cc1 == "prague", "flows.0.count": n, "flows.1.count": n,
                        "flows.0.rtt": rtt, "flows.1.rtt": rtt}
                       for cell, cc1, n, rtt in cells for b in buffers]
                base = _base(cap, d, w, {"discipline": "dualpi2"}, groups=2)
                base["flows"][0].update(cc="prague", ecn=True)
                sweeps.append((family, base, pts, 1))

        for family, queue, pts, seeds in sweeps:
            base = queue if "dumbbell" in queue else _base(cap, dur, warm, queue)
            rows = run_sweep(out / cap / family, base, _zip(pts), seeds, [], engine, columns=link_columns, mode="zip")
            frames.append(rows.assign(capacity=cap))
    rows = pd.concat(frames, ignore_index=True).rename(columns={"dumbbell.buffer.bdp_fraction": "buffer"})
    parts = rows["name"].str.split("|", expand=True)
    rows = rows.assign(discipline=parts[0], sender=parts[1], flows=parts[2].astype(int), rtt=parts[3],
                       k_factor=pd.to_numeric(parts[4], errors="coerce"))
    rows = rows[[c for c in rows.columns if not c.startswith(("flows.", "dumbbell."))]]
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows



#: The disciplines in the figures' and tables' order, with their colours.
ORDER = {"droptail": "black", "red": "tab:red", "red-ecn": "salmon", "codel": "tab:blue", "codel-ecn": "lightblue",
         "pie": "tab:green", "pie-ecn": "lightgreen", "fq_codel": "tab:purple", "fq_codel-ecn": "plum",
         "step": "tab:orange", "dualpi2": "tab:brown"}
STYLES = {"reno": ":", "cubic": "-", "cubic-ecn": "-", "bbr": "--", "dctcp": "-", "dctcp-k": "--", "prague+cubic": "-", "prague": "--",
          "prague+cubic-1": ":"}


def _cells(rows: pd.DataFrame, cap: str, disc: str, sender: str) -> pd.DataFrame:
    """The runs of one discipline and sender, 10 flows over the study's RTTs (every seed)."""
    return rows[(rows["capacity"] == cap) & (rows["discipline"] == disc) & (rows["sender"] == sender)
                & (rows["rtt"] == RTT) & (rows["flows"] == 10)]


def _series(rows: pd.DataFrame, cap: str, disc: str, sender: str, metric: str) -> pd.Series:
    """Per buffer, the mean of `metric` over the seeds run."""
    return _cells(rows, cap, disc, sender).groupby("buffer")[metric].mean()


def aqm_figure(rows: pd.DataFrame):
    caps = [c for c in dict.fromkeys(rows["capacity"]) if rows[rows["capacity"] == c]["buffer"].nunique() > 1]
    rows = rows.assign(p99_ms=rows["sojourn_p99_s"] * 1e3)
    fig, axes = plt.subplots(len(caps), 2, figsize=(11, 3.6 * len(caps)), squeeze=False)
    for i, cap in enumerate(caps):
        here = rows[rows["capacity"] == cap]
        for j, (m, label) in enumerate([("utilization", "utilization"), ("p99_ms", "p99 queueing delay (sojourn, ms)")]):
            ax = axes[i, j]
            for disc, color in ORDER.items():
                for sender in dict.fromkeys(here[here["discipline"] == disc]["sender"]):
                    s = _series(rows, cap, disc, sender, m)
                    if len(s) > 1:
                        ax.plot(s.index, s.values, STYLES.get(sender, "-"), color=color, marker=".", lw=1,
                                label=f"{disc}: {sender}")
            ax.set_xscale("log")
            if m == "p99_ms":
                ax.set_yscale("log")
            ax.set_xlabel("buffer (BDP at the 55 ms mean RTT)")
            ax.set_title(f"{cap}: {label}", fontsize=9)
            ax.legend(fontsize=5, ncol=2)
    fig.suptitle("10 flows, RTT 10-100 ms, packet engine: utilization and p99 sojourn time against buffer size, "
                 "per discipline and sender", fontsize=10)
    fig.tight_layout()
    return fig


def _absent(rows: pd.DataFrame, *names: str) -> str | None:
    missing = [n for n in names if n not in registered()]
    if missing:
        return (f"not tested: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not registered in this build "
                f"of the core (lossync._core.disciplines())")
    return None


def _claim_desync(rows):
    """Per capacity, AQM and sender: the AQM's mean sync rate over the buffers where both it and
    drop-tail saw congestion events, against drop-tail's over the same buffers."""
    parts, holds = [], True
    for cap in dict.fromkeys(rows["capacity"]):
        for aqm in ("red", "codel", "pie"):
            for sender in ("reno", "cubic"):
                a, d = _series(rows, cap, aqm, sender, "sync_rate_mean"), _series(rows, cap, "droptail", sender,
                                                                                   "sync_rate_mean")
                common = a.dropna().index.intersection(d.dropna().index)
                if not len(common):
                    continue
                sa, sd = a[common].mean(), d[common].mean()
                lower = int((a[common] < d[common]).sum())
                parts.append(f"{cap} {aqm}/{sender}: {sa:.2f} vs {sd:.2f} ({lower}/{len(common)} buffers lower)")
                holds &= sa < sd
    if not parts:
        return "no buffer where both an AQM and drop-tail saw a congestion event", None
    return "mean sync rate, AQM vs drop-tail at equal buffers: " + "; ".join(parts), holds


def _claim_buffer_irrelevant(rows):
    parts, holds = [], True
    for cap in dict.fromkeys(rows["capacity"]):
        for disc in ("codel", "codel-ecn", "pie", "pie-ecn"):
            base = disc.removesuffix("-ecn")
            knee_min = 1.0 + TARGET_S[base] / RTT_MEAN_S  # BDP + C·target, in BDP
            for sender in dict.fromkeys(rows[(rows["capacity"] == cap) & (rows["discipline"] == disc)]["sender"]):
                u = _series(rows, cap, disc, sender, "utilization")
                d = _series(rows, cap, disc, sender, "mean_queueing_delay_s")
                above = [b for b in u.index if b >= knee_min]
                if len(above) < 2:
                    continue
                ref = max(above)
                du = max(abs(u[b] / u[ref] - 1) for b in above)
                dd = max(abs(d[b] / d[ref] - 1) for b in above)
                # The measured knee: the smallest buffer from which both stay within FLAT of the
                # deepest buffer's values.
                knee = ref
                for b in sorted(u.index, reverse=True):
                    if abs(u[b] / u[ref] - 1) <= FLAT and abs(d[b] / d[ref] - 1) <= FLAT:
                        knee = b
                    else:
                        break
                ok = du <= FLAT and dd <= FLAT
                holds &= ok
                # The seeds behind each mean above the knee, and the delay's spread among them.
                seeds = _cells(rows, cap, disc, sender).groupby("buffer")["mean_queueing_delay_s"].agg(["count", "std", "mean"])
                n = int(seeds.loc[above, "count"].min())
                spread = f", {n} seeds (delay std {(seeds.loc[above, 'std'] / seeds.loc[above, 'mean']).max():.1%})" if n > 1 else ""
                parts.append(f"{cap} {disc}/{sender}: U {u[ref]:.3f}, mean delay {d[ref] * 1e3:.2f} ms at {ref:g} BDP; "
                             f"above {knee_min:.2f} BDP ({', '.join(f'{b:g}' for b in above)}) U within {du:.1%}, delay "
                             f"within {dd:.1%}{spread}; flat from {knee:g} BDP")
    if not parts:
        return _absent(rows, "codel", "pie") or "no CoDel or PIE cell with two buffers above BDP + C·target", None
    return "; ".join(parts), holds


def _dctcp_band(cap: str, k: float, n: int = 10) -> tuple[float, float]:
    """Alizadeh et al. 2010 §3.3: the queue oscillates between Q_max = K + N and
    Q_max − A, A = ½·√(2N(C·RTT + K)) (packets)."""
    q_max = k + n
    return q_max - 0.5 * math.sqrt(2 * n * (bdp_pkts(cap) + k)), q_max


def _claim_dctcp(rows):
    r = rows[rows["discipline"] == "step"]
    if not len(r):
        return _absent(rows, "step") or "no DCTCP cell", None
    parts, holds = [], True
    for cap in dict.fromkeys(r["capacity"]):
        rc = r[r["capacity"] == cap].sort_values(["sender", "k_factor", "buffer"], ascending=[False, True, True])
        kr = k_rule(cap)
        cells = []
        for _, x in rc.iterrows():
            k = x["k_factor"] * kr
            lo, hi = _dctcp_band(cap, k)
            full = x["utilization"] >= 0.99
            near = lo <= x["mean_queue_pkts"] <= hi
            if x["k_factor"] >= 1.0 - 1e-9:
                holds &= bool(full and near)
            cells.append(f"{x['buffer']:g} BDP, K={x['k_factor']:.2f}× ({k:.0f} pkts): U {x['utilization']:.4f}, mean queue "
                         f"{x['mean_queue_pkts']:.0f} (band {lo:.0f}-{hi:.0f})")
        parts.append(f"{cap} (C·RTT/7 = {kr:.0f} pkts): " + "; ".join(cells))
    return "; ".join(parts), holds


def _claim_dualpi2(rows):
    absent = _absent(rows, "dualpi2")
    if absent:
        return absent, None
    parts, holds = [], True
    r = rows[rows["discipline"] == "dualpi2"]
    for cap in dict.fromkeys(r["capacity"]):
        pair = r[(r["capacity"] == cap) & r["sender"].isin(["prague+cubic-1", "prague+reno-1"])]
        pair = pair.sort_values(["sender", "buffer"])
        mix = r[(r["capacity"] == cap) & (r["sender"] == "prague+cubic")].sort_values("buffer")
        alone = r[(r["capacity"] == cap) & (r["sender"] == "prague")].sort_values("buffer")
        for _, x in pair.iterrows():
            classic = "Reno" if x["sender"] == "prague+reno-1" else "CUBIC"
            ok = 0.5 <= x["ratio_prague_classic"] <= 2.0
            lq = x["l4s_sojourn_mean_s"]
            lq99 = x["l4s_sojourn_p99_s"]
            source = "L4S packets"
            if math.isnan(lq):  # no per-class sojourn in this build: Prague alone (only L traffic)
                a = alone[alone["buffer"] == x["buffer"]]
                lq, lq99, source = float(a["sojourn_mean_s"].mean()), float(a["sojourn_p99_s"].mean()), "Prague alone"
            ok &= lq < 0.001
            holds &= bool(ok)
            parts.append(f"{cap} {x['buffer']:g} BDP: Prague/{classic} at 55 ms {x['ratio_prague_classic']:.2f}, "
                         f"L delay "
                         f"mean {lq * 1e3:.2f} ms, p99 {lq99 * 1e3:.2f} ms ({source})")
        for _, x in mix.iterrows():
            parts.append(f"{cap} {x['buffer']:g} BDP, 5+5 over 10-100 ms: total ratio {x['ratio_prague_cubic']:.2f}, "
                         f"equal-RTT pairs {x['pair_ratio_min']:.2f}-{x['pair_ratio_max']:.2f}")
    return "; ".join(parts), holds


def _claim_fq(rows):
    absent = _absent(rows, "fq_codel")
    if absent:
        return absent, None
    r = rows[(rows["discipline"] == "fq_codel") & (rows["flows"] == 10)]
    d = rows[(rows["discipline"] == "droptail") & (rows["flows"] == 10)]
    parts, holds = [], True
    for (cap, sender, rtt), g in r.groupby(["capacity", "sender", "rtt"], sort=False):
        dt = d[(d["capacity"] == cap) & (d["sender"] == sender) & (d["rtt"] == rtt)]
        holds &= bool((g["jain"] >= 0.95).all())
        parts.append(f"{cap} {sender} RTT {rtt}: Jain {g['jain'].min():.3f}-{g['jain'].max():.3f}"
                     + (f" (drop-tail {dt['jain'].min():.3f}-{dt['jain'].max():.3f})" if len(dt) else ""))
    return "; ".join(parts), holds


def _setup() -> str:
    have = registered()
    absent = [d for d in ("fq_codel", "dualpi2", "pie", "codel", "step") if d not in have]
    return (
        "Dumbbell, packet engine, 1500-byte packets, 10 flows with RTTs spread over 10..100 ms (buffers in BDP at the "
        "55 ms mean RTT), started together in slow start; one seed (five for the CoDel and PIE cells above BDP + "
        "C·target at 1 and 10 Gb/s). Disciplines at their RFC defaults: drop-tail; RED "
        "(gentle, min_th = buffer/6, max_th = buffer/2, dropping, or marking: RED-ECN); CoDel (5 ms, 100 ms) and PIE "
        "(15 ms), dropping or marking; DCTCP's step marking at K = C·RTT/7 (or the buffer, where smaller) and K from "
        "¼ to 2 × C·RTT/7 at 1 BDP; FQ-CoDel; DualPI2 with 5 Prague + 5 CUBIC flows (equal RTTs in pairs), 10 Prague "
        "flows, and one Prague flow against one CUBIC or one Reno flow at 55 ms (1 Gb/s: 300 s, 100 s warm-up, for "
        "their shares to settle). Senders: Reno, CUBIC (with ECN behind the marking AQMs), "
        "BBR v1, DCTCP (step, RED-ECN), Prague (DualPI2). Full: 1 Gb/s (20 s, 6 s warm-up; buffers 2% to 2 BDP, "
        "CoDel and PIE also 4 BDP; RED with Reno and CUBIC; Reno at RTT mixes 10..200 ms and 50 ms against drop-tail "
        "and FQ-CoDel; 100 Reno flows behind drop-tail, CoDel and FQ-CoDel at 0.1 and 1 BDP), 10 Gb/s (10 s, 4 s "
        "warm-up; CUBIC behind drop-tail, CoDel, PIE and FQ-CoDel; buffers 2% to 2 BDP: shorter than a CUBIC cycle "
        "there; DCTCP 60 s, 40 s warm-up, for its queue to reach K), 100 Gb/s (3 s, 1.5 s: CUBIC behind CoDel at 1 "
        "and 4 BDP). "
        + (f"**Not in this build of the core, so not run:** {', '.join(absent)}." if absent else
           "Every discipline of the study is registered in this build.")
    )


register(Study(
    "aqm-buffers", "Buffer sizing with today's routers: drop-tail, RED, CoDel, PIE, FQ-CoDel, DualPI2 and DCTCP's step",
    _setup(), run_aqm, aqm_figure,
    [Claim("AQMs desynchronize losses relative to drop-tail (Floyd & Jacobson 1993 §1: RED avoids global "
           "synchronization; seed 001's future work; drop-tail is its fully synchronized case, m = N): RED, CoDel and "
           "PIE have a lower mean sync rate than drop-tail at equal buffers, Reno and CUBIC without ECN",
           _claim_desync),
     Claim("Under CoDel and PIE the buffer stops mattering once it holds BDP + C·target (RFC 8289 §1: no "
           "configuration; targets 5 ms, RFC 8289 §4.4, and 15 ms, RFC 8033 §4.1): utilization and mean delay "
           f"within {FLAT:.0%} at every buffer above it (here 2 and 4 BDP)", _claim_buffer_irrelevant),
     Claim("DCTCP keeps the link full (U ≥ 0.99) with K ≥ C·RTT/7, and its mean queue stays near K, between "
           "Q_max − A and Q_max = K + N (Alizadeh et al., SIGCOMM 2010, §3.3; RTT the 55 ms mean; K up to 2×, buffers up to 2 BDP)",
           _claim_dctcp),
     Claim("DualPI2 gives a Prague flow and a CUBIC or a Reno flow of equal RTT throughputs within a factor of 2 "
           "once their shares have settled (RFC 9332 §1.2's coupling goal), with a mean L-queue delay under 1 ms (its "
           "step threshold, RFC 9332 §A.1)", _claim_dualpi2),
     Claim("FQ-CoDel gives Jain's index near 1 (≥ 0.95, issue 35's acceptance) whatever the RTT mix (RFC 8290 §1: "
           "flow queuing isolates flows)", _claim_fq)],
    source=SOURCE, engine="packet",
    fidelity=("1, 10 and 100 Gb/s × the disciplines' senders × up to 7 buffers, one seed",
              "1 Gb/s × 3 buffers, 10 s runs, fewer senders"),
    engines=("packet",),
))
