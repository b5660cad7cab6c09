"""Seed 004's studies (Alparslan, Arakawa, Murata: paced and non-paced TCP and XCP with small
buffers) as `lossync reproduce xcp-stability` and `lossync reproduce buffer-requirements`, in the
packet engine: a dumbbell with two-way traffic, 622 Mb/s (OC-12) bottleneck, 2.4 Gb/s (OC-48)
access links, FTP flows starting uniformly in 0..10 s, 100 s."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import atomic_write
from ..plot import plt
from .framework import Claim, CrossCheck, Study, register, run_sweep

SOURCE = ("Alparslan, Arakawa, Murata, 'Performance of Paced and Non-paced Transmission Control Algorithms in "
          "Small Buffered Networks' (seed 004); XCP: Katabi, Handley, Rohrs, SIGCOMM 2002")

#: Why the default fluid model does not judge the claims about XCP's stability and buffers: they
#: are about bursts, and the fluid XCP has none (docs/fluid.md, "Two-way traffic ... XCP").
FLUID_HAS_NO_BURSTS = ("the claim is about packet bursts (ACK compression, unpaced windows) that the fluid model does not have: "
                       "its ACKs are no load and its XCP feedback applies at once")

CAPACITY_BPS = 622e6
#: The seed gives no RTT: 100 ms for every flow is our choice. Rule-of-thumb buffer RTT·C.
RTT_S = 0.1
PACKET_BYTES = 1500
BDP_PKTS = CAPACITY_BPS * RTT_S / (8 * PACKET_BYTES)  # 5183
#: XCP configurations: parameter preset and pacing ratio (None: not paced). "Paced" is XCP sent
#: at exactly cwnd/srtt (ratio 1; XCP has no slow start); the stability study also runs ratio 2.
XCP_CONFIGS = {
    "non-paced original": ("original", None),
    "non-paced conservative": ("conservative", None),
    "paced original": ("original", 1.0),
    "paced conservative": ("conservative", 1.0),
}
STABILITY_CONFIGS = {
    **XCP_CONFIGS,
    "paced×2 original": ("original", 2.0),
    "paced×2 conservative": ("conservative", 2.0),
    # Routers that count only packets with a congestion header in the input traffic (not ACKs).
    "non-paced original, ACK-blind": ("original", None),
    "paced original, ACK-blind": ("original", 1.0),
}


def _doc(n: int, cc: str, pacing: float | bool | None, buffer_pkts: float, preset: str | None = None,
         rtt_s: float = RTT_S) -> dict:
    """n forward and n reverse flows of `cc`; an XCP router on both directions when preset.
    pacing: a ratio (XCP), True (TCP: Linux's ratios) or None/False."""
    link: dict = {"capacity": "622Mbps", "packet_size": PACKET_BYTES, "buffer": {"packets": buffer_pkts}, "reverse": True}
    if preset:
        link["queue"] = {"discipline": "xcp", "preset": preset}
    if isinstance(pacing, float):
        pacing = {"ss_ratio": pacing, "ca_ratio": pacing}
    group = {"count": n, "cc": cc, "rtt": f"{rtt_s}s", "access_capacity": "2.4Gbps", "pacing": pacing,
             "slow_start": cc != "xcp", "initial_window": 2 if cc == "xcp" else 10, "start": {"uniform": ["0s", "10s"]}}
    return {
        "engine": "packet",
        "dumbbell": link,
        "flows": [dict(group, name="forward"), dict(group, name="reverse", direction="reverse")],
        "run": {"duration": "100s", "warmup": "10s", "record_interval": "0.1s"},
    }


# ---------------------------------------------------------------------------------------------
# xcp-stability: 2 + 2 flows, rule-of-thumb buffer, queue and windows against time.


#: The sensitivity run of the oscillation claims: the seed gives no RTT, so the two non-paced
#: original configurations again at half and twice ours, each with its own rule-of-thumb buffer.
SENSITIVITY_RTTS_S = [0.05, 0.2]
OSCILLATION_CONFIGS = ["non-paced original", "non-paced original, ACK-blind"]


def _rtt_label(label: str, rtt_s: float) -> str:
    return label if rtt_s == RTT_S else f"{label}, RTT {rtt_s * 1e3:.0f} ms"


def run_stability(out: Path, quick: bool, engine: str) -> dict:
    from ..engines import run

    rows, series = [], {}
    runs = [(label, RTT_S) for label in STABILITY_CONFIGS] + [(c, r) for r in SENSITIVITY_RTTS_S for c in OSCILLATION_CONFIGS]
    for label, rtt_s in runs:
        preset, ratio = STABILITY_CONFIGS[label]
        doc = _doc(2, "xcp", ratio, round(CAPACITY_BPS * rtt_s / (8 * PACKET_BYTES)), preset, rtt_s)
        if label.endswith("ACK-blind"):
            doc["dumbbell"]["queue"]["count_acks"] = False
        if quick:
            doc["run"].update(duration="30s")
        r = run(dict(doc, engine=engine), progress=False, warn=False)
        fwd = r.summary["links"][0]
        rows.append({"config": _rtt_label(label, rtt_s), "rtt_s": rtt_s, "utilization": fwd["utilization"], "drops": fwd["drops_pkts"],
                     "loss_rate": fwd["loss_rate"], "max_queue_pkts": fwd["max_queue_pkts"],
                     "mean_queue_pkts": fwd["mean_queue_pkts"],
                     "queue_std_pkts": fwd["queue_std_pkts"],  # after the 10 s warm-up
                     "buffer_pkts": fwd["buffer_pkts"]})
        if rtt_s == RTT_S:  # the figure shows ours
            series[label] = r.series
    table = pd.DataFrame(rows)
    atomic_write(out / "results.csv", lambda p: table.to_csv(p, index=False))
    for label, s in series.items():
        atomic_write(out / f"series-{label.replace(' ', '-')}.parquet", lambda p, s=s: s.to_parquet(p, index=False))
    return {"table": table.set_index("config"), "series": series}


def stability_figure(d: dict):
    fig, axes = plt.subplots(2, len(d["series"]), figsize=(2.6 * len(d["series"]), 6), sharex=True)
    for j, (label, s) in enumerate(d["series"].items()):
        axes[0, j].plot(s["time_s"], s["queue_pkts.bottleneck"], lw=0.7)
        axes[0, j].axhline(BDP_PKTS, color="k", lw=0.6, ls=":")
        axes[0, j].set_title(f"{label.replace(', ', chr(10))}\ndrops {d['table'].loc[label, 'drops']:.0f}", fontsize=8)
        for i in range(2):
            axes[1, j].plot(s["time_s"], s[f"cwnd_pkts.{i}"], lw=0.7, label=f"forward flow {i}")
        axes[1, j].set_xlabel("time (s)")
    axes[0, 0].set_ylabel("forward queue (packets)")
    axes[1, 0].set_ylabel("cwnd (packets)")
    axes[1, 0].legend(fontsize=7)
    fig.suptitle("XCP, 2 + 2 flows (two-way), 622 Mb/s, RTT 100 ms, rule-of-thumb buffer (5,183 packets)", fontsize=11)
    fig.tight_layout()
    return fig


def _t(d: dict, label: str, col: str) -> float:
    return float(d["table"].loc[label, col])


def _oscillates(d: dict, label: str) -> bool:
    """Loses packets after the warm-up and its queue swings by over 10% of its buffer."""
    return _t(d, label, "loss_rate") > 0 and _t(d, label, "queue_std_pkts") > 0.1 * _t(d, label, "buffer_pkts")


def _same_at_other_rtts(d: dict) -> tuple[str, bool]:
    parts, same = [], True
    for label in OSCILLATION_CONFIGS:
        ours = _oscillates(d, label)
        at = {r: _oscillates(d, _rtt_label(label, r)) for r in SENSITIVITY_RTTS_S}
        same &= all(v == ours for v in at.values())
        parts.append(f"{label}: oscillates at 100 ms {'yes' if ours else 'no'}, "
                     + ", ".join(f"{r * 1e3:.0f} ms {'yes' if v else 'no'} (queue std "
                                 f"{_t(d, _rtt_label(label, r), 'queue_std_pkts'):.0f} of "
                                 f"{_t(d, _rtt_label(label, r), 'buffer_pkts'):.0f})" for r, v in at.items()))
    return "; ".join(parts), same


register(Study(
    "xcp-stability", "Seed 004: stability of paced and non-paced XCP with two-way traffic",
    "Packet engine. 2 XCP flows and 2 reverse XCP flows, 622 Mb/s bottleneck with an XCP router in each direction, "
    "2.4 Gb/s access links, RTT 100 ms (our choice; the seed gives none), buffer = RTT·C = 5,183 packets (rule of "
    "thumb), starts uniform in 0..10 s, 100 s; statistics (max queue, queue std) after 10 s, drops over the whole "
    "run. Original (α 0.4, β 0.226, γ 0.1, 100%) and conservative (α 0.2, β 0.056, γ 0.05, 90%) parameters, each "
    "non-paced, paced at cwnd/srtt, and paced at 2·cwnd/srtt (Linux's slow-start ratio; our addition). The routers "
    "count ACK bytes as input traffic, except in the two ACK-blind runs (original parameters; our addition: a router "
    "that accounts only for packets with a congestion header); utilization counts data only. A sensitivity run repeats "
    "the two non-paced original configurations at RTT 50 and 200 ms, each with its rule-of-thumb buffer.",
    run_stability, stability_figure,
    [Claim("“Original XCP is oscillatory when there is two way traffic and few number of flows … loses many packets”",
           lambda d: (f"drops {_t(d, 'non-paced original', 'drops'):.0f} in the whole run, loss rate after 10 s "
                      f"{_t(d, 'non-paced original', 'loss_rate'):.1e}, queue std after 10 s "
                      f"{_t(d, 'non-paced original', 'queue_std_pkts'):.0f} packets (oscillatory: over 10% of the buffer)",
                      _oscillates(d, "non-paced original"))),
     Claim("The same with ACK-blind routers (ACK bytes not in the input traffic)",
           lambda d: (f"drops {_t(d, 'non-paced original, ACK-blind', 'drops'):.0f}, loss rate after 10 s "
                      f"{_t(d, 'non-paced original, ACK-blind', 'loss_rate'):.1e}, queue std after 10 s "
                      f"{_t(d, 'non-paced original, ACK-blind', 'queue_std_pkts'):.0f} packets",
                      _oscillates(d, "non-paced original, ACK-blind"))),
     Claim("“Pacing solves the burstiness problem and XCP becomes stable — no packet loss” (original parameters; "
           "paced at cwnd/srtt)",
           lambda d: (f"drops paced {_t(d, 'paced original', 'drops'):.0f} (queue std {_t(d, 'paced original', 'queue_std_pkts'):.0f}) "
                      f"vs non-paced {_t(d, 'non-paced original', 'drops'):.0f}; paced at 2·cwnd/srtt: "
                      f"{_t(d, 'paced×2 original', 'drops'):.0f} (queue std {_t(d, 'paced×2 original', 'queue_std_pkts'):.0f})",
                      _t(d, "paced original", "drops") == 0)),
     Claim("“Using conservative parameter set decreases the buffer requirements, but still packet losses occur” (non-paced)",
           lambda d: (f"max queue {_t(d, 'non-paced conservative', 'max_queue_pkts'):.0f} vs original "
                      f"{_t(d, 'non-paced original', 'max_queue_pkts'):.0f}; drops {_t(d, 'non-paced conservative', 'drops'):.0f}",
                      _t(d, "non-paced conservative", "max_queue_pkts") < _t(d, "non-paced original", "max_queue_pkts")
                      and _t(d, "non-paced conservative", "drops") > 0)),
     Claim("“Using pacing and conservative parameter set together drastically decreases buffer requirements”",
           lambda d: (f"max queue paced conservative {_t(d, 'paced conservative', 'max_queue_pkts'):.0f}, "
                      f"smallest of the other three {min(_t(d, c, 'max_queue_pkts') for c in XCP_CONFIGS if c != 'paced conservative'):.0f}",
                      _t(d, "paced conservative", "max_queue_pkts")
                      < 0.5 * min(_t(d, c, "max_queue_pkts") for c in XCP_CONFIGS if c != "paced conservative"))),
     Claim("Sensitivity (our addition): the first two verdicts are the same at RTT 50 and 200 ms (the seed gives no RTT; "
           "ours is 100 ms), each with its rule-of-thumb buffer", _same_at_other_rtts)],
    source=SOURCE, engine="packet",
    fidelity=("one 100 s run per configuration", "one 30 s run per configuration"),
    cross=CrossCheck(None, {"fluid:tcp": ("", "")}, [FLUID_HAS_NO_BURSTS] * 6),
))


# ---------------------------------------------------------------------------------------------
# buffer-requirements: n = 2..800, the buffer each XCP configuration needs, then utilization of
# TCP and XCP with the buffer paced conservative XCP needs.

NS = [2, 10, 50, 100, 200, 400, 800]
NS_QUICK = [2, 10, 50]
TCP_VARIANTS = {"Reno": "reno", "HSTCP": "highspeed"}


def run_buffers(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    ns = NS_QUICK if quick else NS
    fixed = ["run.duration=20"] if quick else []
    frames = []
    # 1. Buffer requirements: the largest queue with a rule-of-thumb buffer, from t = 0 (the
    # start-up bursts count).
    for label, (preset, ratio) in XCP_CONFIGS.items():
        for n in ns:
            rows = run_sweep(out / "requirement" / label.replace(" ", "-") / str(n),
                          _doc(n, "xcp", ratio, round(BDP_PKTS), preset), {"run.warmup": [0]}, 1, fixed, engine)
            rows["phase"], rows["config"], rows["n"] = "requirement", label, n
            frames.append(rows)
    req = pd.concat(frames, ignore_index=True)
    need = req[req["config"] == "paced conservative"].set_index("n")["max_queue_pkts"]
    # 2. Utilization with the buffer paced conservative XCP needs.
    for n in ns:
        b = max(2.0, float(need.loc[n]))
        for paced in (False, True):
            configs = {f"{name}": (cc, None) for name, cc in TCP_VARIANTS.items()}
            configs.update({"XCP original": ("xcp", "original"), "XCP conservative": ("xcp", "conservative")})
            for name, (cc, preset) in configs.items():
                label = f"{'paced' if paced else 'non-paced'} {name}"
                pacing = (1.0 if cc == "xcp" else True) if paced else None
                rows = run_sweep(out / "utilization" / label.replace(" ", "-") / str(n),
                              _doc(n, cc, pacing, b, preset), {"run.warmup": [10]}, 1, fixed, engine)
                rows["phase"], rows["config"], rows["n"], rows["buffer_pkts"] = "utilization", label, n, b
                frames.append(rows)
    rows = pd.concat(frames, ignore_index=True)
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows


def _requirement(rows: pd.DataFrame) -> pd.DataFrame:
    req = rows[rows["phase"] == "requirement"]
    return req.pivot_table(index="n", columns="config", values="max_queue_pkts", aggfunc="max")


def _drops(rows: pd.DataFrame) -> pd.DataFrame:
    req = rows[rows["phase"] == "requirement"]
    return req.pivot_table(index="n", columns="config", values="drops_pkts", aggfunc="max")


def _utilization(rows: pd.DataFrame) -> pd.DataFrame:
    u = rows[rows["phase"] == "utilization"]
    return u.pivot_table(index="n", columns="config", values="utilization", aggfunc="mean")


def buffers_figure(rows: pd.DataFrame):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    req = _requirement(rows)
    n = np.array(req.index, dtype=float)
    for c in req.columns:
        axes[0].plot(n, req[c], marker="o", ms=3, label=f"XCP {c}")
    axes[0].plot(n, np.full_like(n, BDP_PKTS), "k:", label="rule of thumb RTT·C")
    axes[0].plot(n, BDP_PKTS / np.sqrt(n), "k--", label="RTT·C/√n")
    axes[0].plot(n, np.log2(np.maximum(BDP_PKTS / n, 2.0)), "k-.", label="log₂ W (W = RTT·C/n)")
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("flows per direction n")
    axes[0].set_ylabel("largest queue, rule-of-thumb buffer (packets)")
    axes[0].legend(fontsize=7)
    u = _utilization(rows)
    for c in u.columns:
        axes[1].plot(u.index, u[c], marker="o", ms=3, ls="-" if c.startswith("paced") else "--", label=c)
    axes[1].set_xscale("log")
    axes[1].set_xlabel("flows per direction n")
    axes[1].set_ylabel("utilization, buffer = paced conservative XCP's need")
    axes[1].legend(fontsize=6, ncol=2)
    fig.suptitle("Seed 004: buffer requirements and utilization, 622 Mb/s, two-way traffic", fontsize=11)
    fig.tight_layout()
    return fig


def _claim_pacing_removes_loss(rows: pd.DataFrame) -> tuple[str, bool]:
    d = _drops(rows)
    paced = d[["paced original", "paced conservative"]].to_numpy().sum()
    non = d[["non-paced original", "non-paced conservative"]].to_numpy().sum()
    return f"drops with the rule-of-thumb buffer: paced {paced:.0f}, non-paced {non:.0f} (all n)", paced == 0 and non > 0


def _claim_paced_conservative_smallest(rows: pd.DataFrame) -> tuple[str, bool]:
    req = _requirement(rows)
    ratio = (req["paced conservative"] / req.drop(columns="paced conservative").min(axis=1))
    return "paced conservative / smallest other, per n: " + ", ".join(f"{n}: {r:.2f}" for n, r in ratio.items()), bool((ratio < 1).all())


def _claim_paced_utilization(rows: pd.DataFrame) -> tuple[str, bool]:
    u = _utilization(rows)
    names = [c.split(" ", 1)[1] for c in u.columns if c.startswith("paced ")]
    better = [(name, float((u[f"paced {name}"] - u[f"non-paced {name}"]).mean())) for name in names]
    return "mean gain from pacing: " + ", ".join(f"{n} {g:+.3f}" for n, g in better), all(g >= 0 for _, g in better)


def _claim_sqrt_n(rows: pd.DataFrame) -> tuple[str, bool | None]:
    u = _utilization(rows)
    util = rows[rows["phase"] == "utilization"].groupby("n")["buffer_pkts"].first()
    cols = [f"non-paced {name}" for name in TCP_VARIANTS]
    lines, ok = [], True
    for n, b in util.items():
        need = BDP_PKTS / math.sqrt(n)
        high = float(u.loc[n, cols].min())
        lines.append(f"n={n}: B={b:.0f} vs RTT·C/√n={need:.0f}, U≥{high:.3f}")
        # Where the buffer covers RTT·C/√n, non-paced TCP should be near full utilization, and
        # below it clearly not.
        ok &= (high > 0.9) == (b >= need)
    return "; ".join(lines), ok


register(Study(
    "buffer-requirements", "Seed 004: buffer requirements of paced and non-paced XCP, and TCP with small buffers",
    "Packet engine. n = 2, 10, 50, 100, 200, 400, 800 flows in each direction (two-way), 622 Mb/s, 2.4 Gb/s access, "
    "RTT 100 ms (our choice), starts uniform in 0..10 s, 100 s, one run each. First, with a rule-of-thumb buffer "
    "(5,183 packets), the largest queue of each XCP configuration (the buffer it needs for zero loss, if it lost "
    "nothing). Then, with the buffer set to paced conservative XCP's need for that n, the utilization of Reno and "
    "HSTCP (SACK, slow start; paced with Linux's ratios) and XCP (original and conservative), paced and not. "
    "NewReno is not a separate law here (recovery is SACK-based for every variant).",
    run_buffers, buffers_figure,
    [Claim("“Pacing solves the stability problem, so there is no packet loss” (rule-of-thumb buffer)", _claim_pacing_removes_loss),
     Claim("“Using pacing and conservative parameter set together drastically decreases buffer requirements”", _claim_paced_conservative_smallest, quick_decides=False),
     Claim("“Paced XCP and TCP versions have higher utilization in general”", _claim_paced_utilization),
     Claim("“Non-paced TCP and XCP have high utilization with small buffering only when the number of flows is high "
           "enough according to Appenzeller's B = RTT × BW/√n” (non-paced TCP above 90% exactly where B ≥ RTT·C/√n)", _claim_sqrt_n, quick_decides=False)],
    source=SOURCE, engine="packet",
    fidelity=("n up to 800, 100 s runs", "n = 2, 10, 50, 20 s runs"),
    cross=CrossCheck(None, {"fluid:tcp": ("n up to 800, 100 s runs", "n = 2, 10, 50, 20 s runs")},
                     [FLUID_HAS_NO_BURSTS, FLUID_HAS_NO_BURSTS, _claim_paced_utilization, _claim_sqrt_n]),
))
