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
from .framework import Claim, CrossCheck, Study, as_engine, register, run_sweep, study_run

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
#: Start-up, one definition for both studies: the first 10 s, in which the flows start (the seed's
#: "FTP flows start randomly in (0,10) sec"). A buffer requirement (the largest queue) and a claim
#: of packet loss or of no loss count the whole 100 s run, start-up included, as the seed's runs
#: do: a buffer that loses nothing must also hold the start-up's bursts. Oscillation (queue std,
#: the losses that come with it) and utilization count after start-up, where it is steady state.
START_UP_S = 10
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
    # Why paced original XCP loses packets: each run removes one of the two causes.
    "paced original, one-way": ("original", 1.0),
    "paced×1.5 original": ("original", 1.5),
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
        "run": {"duration": "100s", "warmup": f"{START_UP_S}s", "record_interval": "0.1s"},
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
    rows, series = [], {}
    runs = [(label, RTT_S) for label in STABILITY_CONFIGS] + [(c, r) for r in SENSITIVITY_RTTS_S for c in OSCILLATION_CONFIGS]
    for label, rtt_s in runs:
        row, s = stability_row(label, rtt_s, "30s" if quick else None, engine)
        rows.append(row)
        if rtt_s == RTT_S:  # the figure shows ours
            series[label] = s
    table = pd.DataFrame(rows)
    atomic_write(out / "results.csv", lambda p: table.to_csv(p, index=False))
    for label, s in series.items():
        atomic_write(out / f"series-{label.replace(' ', '-')}.parquet", lambda p, s=s: s.to_parquet(p, index=False))
    return {"table": table.set_index("config"), "series": series}


def stability_row(label: str, rtt_s: float, duration: str | None, engine: str) -> tuple[dict, pd.DataFrame]:
    """One configuration run twice, the same simulation measured over the two windows of
    START_UP_S: the whole run (drops, largest queue) and after start-up (loss rate, queue std,
    utilization). Returns the row and the series."""
    preset, ratio = STABILITY_CONFIGS[label]
    doc = _doc(2, "xcp", ratio, round(CAPACITY_BPS * rtt_s / (8 * PACKET_BYTES)), preset, rtt_s)
    if label.endswith("ACK-blind"):
        doc["dumbbell"]["queue"]["count_acks"] = False
    if label.endswith("one-way"):
        doc["flows"] = doc["flows"][:1]
    if duration:
        doc["run"].update(duration=duration)
    doc, engine = as_engine(doc, engine)
    whole = study_run(dict(doc, engine=engine, run=dict(doc["run"], warmup="0s")), f"{label}, whole run")
    after = study_run(dict(doc, engine=engine), label)
    w, a = whole.summary["links"][0], after.summary["links"][0]
    return ({"config": _rtt_label(label, rtt_s), "rtt_s": rtt_s, "buffer_pkts": a["buffer_pkts"],
             "drops": w["drops_pkts"], "max_queue_pkts": w["max_queue_pkts"],  # the whole run
             "drops_after_startup": a["drops_pkts"], "loss_rate": a["loss_rate"], "utilization": a["utilization"],
             "mean_queue_pkts": a["mean_queue_pkts"], "queue_std_pkts": a["queue_std_pkts"],
             "window_in_use_p10": _window_in_use_p10(after.series, doc["flows"][0]["count"])}, whole.series)


def _window_in_use_p10(series: pd.DataFrame, forward_flows: int) -> float:
    """How much of its window a forward flow keeps in flight after start-up: its delivered rate
    times its RTT over its cwnd, per 0.1 s sample (1 for a window-limited sender), the 10th
    percentile over the samples and the forward flows."""
    s = series[series["time_s"] >= START_UP_S]
    use = [s[f"rate_pps.{i}"] * s[f"rtt_s.{i}"] / s[f"cwnd_pkts.{i}"] for i in range(forward_flows)]
    return float(np.nanpercentile(pd.concat(use).to_numpy(dtype=float), 10))


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
    """After start-up, loses packets and its queue swings by over 10% of its buffer."""
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


#: The paced configuration that loses packets, and the runs that each remove one cause.
PACED_LOSSY, PACED_CAUSES_REMOVED = "paced original", ["paced original, one-way", "paced×1.5 original"]


def _paced_loss_explained(d: dict) -> tuple[str, bool]:
    """Paced at exactly cwnd/srtt with two-way traffic, the forward flows leave part of their window
    unused and lose packets after start-up; without the reverse traffic, or with a pacer of 1.5×
    headroom, they use their window and lose nothing."""
    def fig(c: str) -> str:
        return (f"{c}: drops after start-up {_t(d, c, 'drops_after_startup'):.0f}, "
                f"window in use (p10) {_t(d, c, 'window_in_use_p10'):.2f}")
    lossy = _t(d, PACED_LOSSY, "drops_after_startup") > 0 and _t(d, PACED_LOSSY, "window_in_use_p10") < 0.8
    removed = all(_t(d, c, "drops_after_startup") == 0 and _t(d, c, "window_in_use_p10") >= 0.95 for c in PACED_CAUSES_REMOVED)
    return "; ".join(fig(c) for c in [PACED_LOSSY, *PACED_CAUSES_REMOVED]), lossy and removed


register(Study(
    "xcp-stability", "Seed 004: stability of paced and non-paced XCP with two-way traffic",
    "Packet engine. 2 XCP flows and 2 reverse XCP flows, 622 Mb/s bottleneck with an XCP router in each direction, "
    "2.4 Gb/s access links, RTT 100 ms (our choice; the seed gives none), buffer = RTT·C = 5,183 packets (rule of "
    "thumb), starts uniform in 0..10 s, 100 s. Start-up is the first 10 s, as in buffer-requirements: drops and the "
    "largest queue count the whole run, start-up included; oscillation (queue std, loss rate) counts after it. "
    "Original (α 0.4, β 0.226, γ 0.1, 100%) and conservative (α 0.2, β 0.056, γ 0.05, 90%) parameters, each "
    "non-paced, paced at cwnd/srtt, and paced at 2·cwnd/srtt (Linux's slow-start ratio; our addition). The routers "
    "count ACK bytes as input traffic, except in the two ACK-blind runs (original parameters; our addition: a router "
    "that accounts only for packets with a congestion header); utilization counts data only. A sensitivity run repeats "
    "the two non-paced original configurations at RTT 50 and 200 ms, each with its rule-of-thumb buffer. Two runs "
    "test why paced original XCP loses packets (our addition): the same with forward flows only (one-way), and paced "
    "at 1.5·cwnd/srtt.",
    run_stability, stability_figure,
    [Claim("“Original XCP is oscillatory when there is two way traffic and few number of flows … loses many packets”",
           lambda d: (f"drops {_t(d, 'non-paced original', 'drops'):.0f} in the whole run, loss rate after start-up "
                      f"{_t(d, 'non-paced original', 'loss_rate'):.1e}, queue std after start-up "
                      f"{_t(d, 'non-paced original', 'queue_std_pkts'):.0f} packets (oscillatory: over 10% of the buffer)",
                      _oscillates(d, "non-paced original"))),
     Claim("The same with ACK-blind routers (ACK bytes not in the input traffic)",
           lambda d: (f"drops {_t(d, 'non-paced original, ACK-blind', 'drops'):.0f} in the whole run, loss rate after start-up "
                      f"{_t(d, 'non-paced original, ACK-blind', 'loss_rate'):.1e}, queue std after start-up "
                      f"{_t(d, 'non-paced original, ACK-blind', 'queue_std_pkts'):.0f} packets",
                      _oscillates(d, "non-paced original, ACK-blind"))),
     Claim("“Pacing solves the burstiness problem and XCP becomes stable — no packet loss” (original parameters; "
           "paced at cwnd/srtt)",
           lambda d: (f"drops in the whole run: paced {_t(d, 'paced original', 'drops'):.0f} (queue std {_t(d, 'paced original', 'queue_std_pkts'):.0f}) "
                      f"vs non-paced {_t(d, 'non-paced original', 'drops'):.0f}; paced at 2·cwnd/srtt: "
                      f"{_t(d, 'paced×2 original', 'drops'):.0f} (queue std {_t(d, 'paced×2 original', 'queue_std_pkts'):.0f})",
                      _t(d, "paced original", "drops") == 0)),
     Claim("“Using conservative parameter set decreases the buffer requirements, but still packet losses occur” (non-paced)",
           lambda d: (f"largest queue in the whole run {_t(d, 'non-paced conservative', 'max_queue_pkts'):.0f} vs original "
                      f"{_t(d, 'non-paced original', 'max_queue_pkts'):.0f}; drops {_t(d, 'non-paced conservative', 'drops'):.0f}",
                      _t(d, "non-paced conservative", "max_queue_pkts") < _t(d, "non-paced original", "max_queue_pkts")
                      and _t(d, "non-paced conservative", "drops") > 0)),
     Claim("“Using pacing and conservative parameter set together drastically decreases buffer requirements”",
           lambda d: (f"largest queue in the whole run, paced conservative {_t(d, 'paced conservative', 'max_queue_pkts'):.0f}, "
                      f"smallest of the other three {min(_t(d, c, 'max_queue_pkts') for c in XCP_CONFIGS if c != 'paced conservative'):.0f}",
                      _t(d, "paced conservative", "max_queue_pkts")
                      < 0.5 * min(_t(d, c, "max_queue_pkts") for c in XCP_CONFIGS if c != "paced conservative"))),
     Claim("Sensitivity (our addition): the first two verdicts are the same at RTT 50 and 200 ms (the seed gives no RTT; "
           "ours is 100 ms), each with its rule-of-thumb buffer", _same_at_other_rtts),
     Claim("Why paced original XCP loses packets (our explanation): paced at exactly cwnd/srtt, a flow whose ACKs were "
           "held in the reverse queue cannot put its window back in flight, the router (which reads the header's "
           "cwnd as the flow's rate) grants it more, and the unused window is released when the delays clear. "
           "Removing either cause removes the loss: no reverse traffic (one-way), or a pacer with headroom (1.5×). "
           "Criterion: window in use (rate × RTT / cwnd, 10th percentile after start-up) under 0.8 with losses "
           "for the lossy run, at least 0.95 with no loss after start-up for both removals", _paced_loss_explained)],
    source=SOURCE, engine="packet",
    fidelity=("one 100 s run per configuration", "one 30 s run per configuration"),
    cross=CrossCheck(None, {"fluid:tcp": ("", ""), "packet:jitter": ("one 100 s run per configuration", "one 30 s run per configuration")},
                     {"fluid:tcp": [FLUID_HAS_NO_BURSTS] * 7}),
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
    # 1. Buffer requirements: the largest queue with a rule-of-thumb buffer over the whole run
    # (START_UP_S: the start-up bursts count).
    for label, (preset, ratio) in XCP_CONFIGS.items():
        for n in ns:
            frames.append(requirement_runs(out / "requirement" / label.replace(" ", "-") / str(n), n, preset, ratio,
                                            RTT_S, fixed, engine).assign(phase="requirement", config=label, n=n))
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
                              _doc(n, cc, pacing, b, preset), {"run.warmup": [START_UP_S]}, 1, fixed, engine)
                rows["phase"], rows["config"], rows["n"], rows["buffer_pkts"] = "utilization", label, n, b
                frames.append(rows)
    # 3. The √n claim's sensitivity to our RTT: at each other RTT, paced conservative XCP's need
    # with that RTT's rule-of-thumb buffer, then non-paced Reno and HSTCP behind it.
    for rtt_s in SENSITIVITY_RTTS_S:
        at = out / f"rtt-{rtt_s * 1e3:.0f}ms"
        for n in ns:
            need_n = requirement_runs(at / "requirement" / str(n), n, "conservative", 1.0, rtt_s, fixed, engine)
            b = max(2.0, float(need_n["max_queue_pkts"].iloc[0]))
            for name, cc in TCP_VARIANTS.items():
                rows = run_sweep(at / "utilization" / name / str(n), _doc(n, cc, None, b, rtt_s=rtt_s),
                                 {"run.warmup": [START_UP_S]}, 1, fixed, engine)
                frames.append(rows.assign(phase="sensitivity", config=f"non-paced {name}", n=n, buffer_pkts=b, rtt_s=rtt_s))
    # 4. Enachescu et al.'s O(log W) for paced TCP, in their setting (LOGW_*).
    for paced in (True, False):
        for w in LOGW_WINDOWS_QUICK if quick else LOGW_WINDOWS:
            rows = run_sweep(out / "logw" / ("paced" if paced else "non-paced") / str(w), _logw_doc(w, paced),
                             {"dumbbell.buffer.packets": LOGW_BUFFERS}, 1,
                             ["run.duration=30", "run.warmup=15"] if quick else [], engine)
            frames.append(rows.assign(phase="logw", config="paced Reno" if paced else "non-paced Reno", window_pkts=w,
                                      buffer_pkts=rows["dumbbell.buffer.packets"]))
    rows = pd.concat(frames, ignore_index=True)
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows


#: O(log W) buffers for paced TCP (Enachescu, Ganjali, Goel, McKeown, Roughgarden, "Routers with
#: very small buffers", INFOCOM 2006; the seed cites it), tested in the paper's setting: the flows'
#: windows capped at W (a receive window), the link a little faster than they can fill (offered
#: load 0.75), so that a buffer only has to absorb the arrivals' bursts; effective utilization
#: (throughput over the offered load) against the buffer, for W from 16 to 1024 packets.
LOGW_WINDOWS, LOGW_WINDOWS_QUICK = [16, 64, 256, 1024], [16, 64]
LOGW_BUFFERS = [2 ** k for k in range(11)]
LOGW_FLOWS, LOGW_LOAD, LOGW_THETA = 50, 0.75, 0.9


def _logw_doc(w: int, paced: bool) -> dict:
    """LOGW_FLOWS Reno flows with receive window w over a link of n·w/(load·RTT), the seed's RTT
    and ratio of access to bottleneck capacity (2.4 Gb/s to 622 Mb/s), one-way; 60 s, statistics
    after 20 s."""
    capacity_bps = LOGW_FLOWS * w * PACKET_BYTES * 8 / (LOGW_LOAD * RTT_S)
    return {"engine": "packet",
            "dumbbell": {"capacity": f"{capacity_bps:.0f}bps", "packet_size": PACKET_BYTES, "buffer": {"packets": w}},
            "flows": [{"count": LOGW_FLOWS, "cc": "reno", "rtt": f"{RTT_S}s", "rwnd": {"packets": w}, "pacing": paced,
                       "access_capacity": f"{capacity_bps * 2.4e9 / CAPACITY_BPS:.0f}bps", "start": {"uniform": ["0s", "10s"]}}],
            "run": {"duration": "60s", "warmup": "20s"}}


def _logw_needs(rows: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and W, the smallest buffer whose effective utilization reaches LOGW_THETA
    (inf where none does)."""
    lw = rows[rows["phase"] == "logw"].assign(effective=lambda r: r["utilization"] / LOGW_LOAD)
    ok = lw[lw["effective"] >= LOGW_THETA]
    need = ok.groupby(["config", "window_pkts"])["buffer_pkts"].min().unstack("config")
    need = need.reindex(sorted(lw["window_pkts"].unique())).fillna(math.inf)
    need.index = need.index.astype(int)
    return need


def _claim_log_w(rows: pd.DataFrame) -> tuple[str, bool]:
    need = _logw_needs(rows)
    per_log = need.div(np.log2(need.index.to_numpy(dtype=float)), axis=0)
    text = "; ".join(f"W={w}: paced {r['paced Reno']:.0f}, non-paced {r['non-paced Reno']:.0f}" for w, r in need.iterrows())
    spread = per_log["paced Reno"].max() / per_log["paced Reno"].min()
    return (f"smallest buffer (packets) for effective utilization ≥ {LOGW_THETA}: {text}; paced need / log₂ W varies by "
            f"{spread:.2f}× over W = {need.index.min()}–{need.index.max()}"), bool(spread <= 2)


def requirement_runs(out: Path, n: int, preset: str, ratio: float | None, rtt_s: float, fixed: list[str],
                      engine: str) -> pd.DataFrame:
    """One XCP configuration's largest queue over the whole run, behind RTT·C of buffer."""
    return run_sweep(out, _doc(n, "xcp", ratio, round(CAPACITY_BPS * rtt_s / (8 * PACKET_BYTES)), preset, rtt_s),
                     {"run.warmup": [0]}, 1, fixed, engine)


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
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.5))
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
    need = _logw_needs(rows)
    w = need.index.to_numpy(dtype=float)
    for c in need.columns:
        axes[2].plot(w, need[c].replace(math.inf, np.nan), marker="o", ms=3, ls="-" if c.startswith("paced") else "--", label=c)
    axes[2].plot(w, np.log2(w), "k-.", label="log₂ W")
    axes[2].set_xscale("log", base=2)
    axes[2].set_yscale("log", base=2)
    axes[2].set_xlabel("window cap W (packets): 50 flows one-way, offered load 0.75")
    axes[2].set_ylabel(f"smallest buffer for {LOGW_THETA:.0%} effective utilization")
    axes[2].legend(fontsize=7)
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
    return "paced conservative / smallest other, per n: " + ", ".join(f"{n:.0f}: {r:.2f}" for n, r in ratio.items()), bool((ratio < 1).all())


def _claim_paced_utilization(rows: pd.DataFrame) -> tuple[str, bool]:
    u = _utilization(rows)
    names = [c.split(" ", 1)[1] for c in u.columns if c.startswith("paced ")]
    better = [(name, float((u[f"paced {name}"] - u[f"non-paced {name}"]).mean())) for name in names]
    return "mean gain from pacing: " + ", ".join(f"{n} {g:+.3f}" for n, g in better), all(g >= 0 for _, g in better)


def _sqrt_n_holds(u: pd.DataFrame, buffers: pd.Series, rtt_s: float) -> tuple[list[str], bool]:
    """Non-paced TCP near full utilization exactly where the buffer covers RTT·C/√n, per n."""
    cols = [f"non-paced {name}" for name in TCP_VARIANTS]
    lines, ok = [], True
    for n, b in buffers.items():
        need = CAPACITY_BPS * rtt_s / (8 * PACKET_BYTES) / math.sqrt(n)
        high = float(u.loc[n, cols].min())
        lines.append(f"n={n:.0f}: B={b:.0f} vs RTT·C/√n={need:.0f}, U≥{high:.3f}")
        ok &= (high > 0.9) == (b >= need)
    return lines, ok


def _claim_sqrt_n(rows: pd.DataFrame) -> tuple[str, bool | None]:
    buffers = rows[rows["phase"] == "utilization"].groupby("n")["buffer_pkts"].first()
    lines, ok = _sqrt_n_holds(_utilization(rows), buffers, RTT_S)
    return "; ".join(lines), ok


def _claim_sqrt_n_at_other_rtts(rows: pd.DataFrame) -> tuple[str, bool | None]:
    ours = _claim_sqrt_n(rows)[1]
    sens = rows[rows["phase"] == "sensitivity"]
    parts, same = [], True
    for rtt_s, at in sens.groupby("rtt_s"):
        u = at.pivot_table(index="n", columns="config", values="utilization", aggfunc="mean")
        lines, ok = _sqrt_n_holds(u, at.groupby("n")["buffer_pkts"].first(), float(rtt_s))
        same &= ok == ours
        parts.append(f"RTT {rtt_s * 1e3:.0f} ms: {'holds' if ok else 'fails'} ({'; '.join(lines)})")
    return f"at 100 ms {'holds' if ours else 'fails'}; " + "; ".join(parts), same


register(Study(
    "buffer-requirements", "Seed 004: buffer requirements of paced and non-paced XCP, and TCP with small buffers",
    "Packet engine. n = 2, 10, 50, 100, 200, 400, 800 flows in each direction (two-way), 622 Mb/s, 2.4 Gb/s access, "
    "RTT 100 ms (our choice), starts uniform in 0..10 s, 100 s, one run each. Start-up is the first 10 s, as in "
    "xcp-stability: drops and the largest queue count the whole run, utilization counts after start-up. First, with a rule-of-thumb buffer "
    "(5,183 packets), the largest queue of each XCP configuration (the buffer it needs for zero loss, if it lost "
    "nothing). Then, with the buffer set to paced conservative XCP's need for that n, the utilization of Reno and "
    "HSTCP (SACK, slow start; paced with Linux's ratios) and XCP (original and conservative), paced and not. "
    "NewReno is not a separate law here (recovery is SACK-based for every variant). A sensitivity run repeats the "
    "√n claim's runs at RTT 50 and 200 ms: paced conservative XCP's need, then non-paced Reno and HSTCP behind it. "
    "Enachescu et al.'s O(log W) in their own setting: 50 Reno flows, one-way, windows capped at W = 16, 64, 256 and "
    "1024 packets by the receive window, a link of 50·W/(0.75·RTT) (offered load 0.75), access links 3.9× faster, "
    "buffers of 1 to 1024 packets, paced (Linux's ratios) and not, 60 s, statistics after 20 s.",
    run_buffers, buffers_figure,
    [Claim("“Pacing solves the stability problem, so there is no packet loss” (rule-of-thumb buffer)", _claim_pacing_removes_loss),
     Claim("“Using pacing and conservative parameter set together drastically decreases buffer requirements”", _claim_paced_conservative_smallest, quick_decides=False),
     Claim("“Paced XCP and TCP versions have higher utilization in general”", _claim_paced_utilization),
     Claim("“Non-paced TCP and XCP have high utilization with small buffering only when the number of flows is high "
           "enough according to Appenzeller's B = RTT × BW/√n” (non-paced TCP above 90% exactly where B ≥ RTT·C/√n)", _claim_sqrt_n, quick_decides=False),
     Claim("Enachescu et al. 2006, cited by the seed: “when TCP pacing is used, O(log W) buffers are sufficient” "
           "(rwnd-capped Reno at offered load 0.75: the smallest buffer for 90% effective utilization, over log₂ W, "
           "stays within a factor of 2 for W = 16–1024)", _claim_log_w, quick_decides=False),
     Claim("Sensitivity (our addition): the √n verdict is the same at RTT 50 and 200 ms (the seed gives no RTT; ours is "
           "100 ms), each with paced conservative XCP's need at that RTT as the buffer", _claim_sqrt_n_at_other_rtts,
           quick_decides=False)],
    source=SOURCE, engine="packet",
    fidelity=("n up to 800, 100 s runs", "n = 2, 10, 50, 20 s runs"),
    cross=CrossCheck(None, {e: ("n up to 800, 100 s runs", "n = 2, 10, 50, 20 s runs") for e in ("fluid:tcp", "packet:jitter")},
                     {"fluid:tcp": [FLUID_HAS_NO_BURSTS, FLUID_HAS_NO_BURSTS, _claim_paced_utilization, _claim_sqrt_n,
                                    FLUID_HAS_NO_BURSTS, _claim_sqrt_n_at_other_rtts]}),
))
