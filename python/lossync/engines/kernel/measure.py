"""From what the samplers printed to the records `_core.summarize` reads (the metrics module
every engine shares), and the estimators the kernel forces on us:

- Bottleneck totals are exact counters of the pfifo or red (tc -s): bytes and packets sent,
  drops; red's CE marks and its early drops (the rest of its drops are its full buffer's).
  Departures are counted in full-size packets: bytes / (packet_size + 14-byte Ethernet header).
- Per-flow CE marks are estimated: the kernel does not count a connection's CE arrivals (classic
  ECN feedback, RFC 3168, echoes ECE until CWR, so the senders' delivered_ce counts the packets
  acknowledged meanwhile, not the marks). RED marks an arrival with a probability that does not
  depend on its flow, so the link's marks are shared among the ECN-capable flows in proportion
  to the new data each sent in the window (retransmissions are Not-ECT, RFC 3168 §6.1.5).
- The queue's mean and maximum come from samples every `queue_interval` (not every packet).
- Per-flow losses and the drop log are estimated: the kernel does not say whose packet the
  pfifo dropped. A flow's retransmissions (TCP_INFO total_retrans) in a sampling interval are
  taken as its drops, dated one smoothed RTT before the sample that saw them (a loss is found
  by the duplicate ACKs of the packets behind it, about one RTT later). Congestion events are
  clusters of these (the core's clustering, gaps under the mean base RTT). The summary warns
  when the senders' retransmissions and the bottleneck's drops disagree.
- Reductions = changes of snd_ssthresh between samples (each loss reaction sets it).
- No check of the base RTT under load yet: TCP_INFO min_rtt (sampled, column 8) reads up to
  1 ms low (RTT samples from millisecond TCP timestamps) and high when the queue never empties.
"""

from __future__ import annotations

import json

from ... import _core
from ...lazy import numpy as np
from ...results import Result
from ...scenario import Prepared
from ..records import DropLog, FlowCounts, LinkCounts, RunRecords, Samples, summarize
from .netns import ETH_HEADER_BYTES
from .translate import HEADER_BYTES

SENDER_FIELDS = 9  # per flow: cwnd, srtt_s, total_retrans, bytes_acked, data_segs_out, ssthresh, mss, min_rtt_s, ecn


def _load(path) -> np.ndarray:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    return np.array(rows, dtype=float)


def _area(y: np.ndarray, x: np.ndarray) -> float:
    """The trapezoid rule (numpy < 2 has no np.trapezoid)."""
    return float(np.sum((y[1:] + y[:-1]) * np.diff(x)) / 2) if len(x) > 1 else 0.0


def _window(t: np.ndarray, start: float) -> int:
    return int(min(np.searchsorted(t, start - 1e-9), len(t) - 1))


def measure(p: Prepared, q: np.ndarray, snd: np.ndarray, record_interval: float, warnings: list[str]) -> Result:
    """q: qsampler rows [t, bytes, packets, drops, qlen, marked, early]; snd: sender rows (see sender.py)."""
    sc = p.resolved
    link_spec, run = sc["links"][0], sc["run"]
    n = len(sc["flows"])
    ps = link_spec["packet_size_bytes"]
    frame = ps + ETH_HEADER_BYTES
    qt, qbytes, qdrops, qlen, qmarked, qearly = q[:, 0], q[:, 1], q[:, 3], q[:, 4], q[:, 5], q[:, 6]
    st = snd[:, 0]
    per = snd[:, 1:].reshape(len(snd), n, SENDER_FIELDS)
    cwnd, srtt, retrans, acked, segs, ssthresh = (per[:, :, k] for k in range(6))
    mss = np.where(per[:, :, 6] > 0, per[:, :, 6], ps - HEADER_BYTES)

    # The drop log, estimated from retransmissions (module docstring).
    drop_t, drop_f = [], []
    d_retrans = np.diff(retrans, axis=0, prepend=retrans[:1])
    for j, i in zip(*np.nonzero(d_retrans > 0)):
        when = max(0.0, st[j] - srtt[j, i])
        drop_t += [when] * int(d_retrans[j, i])
        drop_f += [i] * int(d_retrans[j, i])
    order = np.argsort(drop_t, kind="stable")
    drops = DropLog(np.asarray(drop_t, dtype=np.float64)[order], np.asarray(drop_f, dtype=np.uint32)[order])

    end = float(min(qt[-1], st[-1]))
    start = float(run["warmup_s"])
    if run["from_first_congestion"]:
        after = np.nonzero((qt >= start) & (np.diff(qdrops, prepend=qdrops[0]) > 0))[0]
        if len(after):
            start = float(qt[max(0, after[0] - 1)])
    a, b = _window(qt, start), len(qt) - 1
    start = float(qt[a])
    departed = (qbytes[b] - qbytes[a]) / frame
    dropped = qdrops[b] - qdrops[a]
    early = qearly[b] - qearly[a]
    marked = qmarked[b] - qmarked[a]
    in_window = slice(a, b + 1)
    link = LinkCounts(
        buffer_pkts=_core.whole_buffer_pkts(link_spec["buffer_pkts"]),  # the pfifo's limit (translate.plan)
        arrived_pkts=departed + dropped + qlen[b] - qlen[a],
        departed_pkts=departed,
        dropped_pkts=dropped,
        queue_integral=_area(qlen[in_window], qt[in_window]),
        queue_integral_span=float(qt[b] - qt[a]),
        max_queue_pkts=float(qlen[in_window].max()),
        departures_pkts=departed,  # the window's, as every counter here
        queue_start_pkts=qlen[a],
        queue_end_pkts=qlen[b],
        dropped_early_pkts=early,
        dropped_overflow_pkts=dropped - early,
        marked_pkts=marked,
    )
    sa, sb = _window(st, start), len(st) - 1
    s_window = slice(sa, sb + 1)
    ecn = [bool(f.get("ecn")) for f in sc["flows"]]
    # The link's marks shared by the new data each ECN-capable flow sent (module docstring).
    new_data = np.array([(segs[sb, i] - segs[sa, i]) - (retrans[sb, i] - retrans[sa, i]) if ecn[i] else 0.0 for i in range(n)])
    total_new = float(new_data.sum())
    flows = []
    for i in range(n):
        ss = ssthresh[s_window, i]
        flows.append(FlowCounts(
            sent_pkts=segs[sb, i] - segs[sa, i],
            delivered_pkts=(acked[sb, i] - acked[sa, i]) / mss[sb, i],
            dropped_pkts=retrans[sb, i] - retrans[sa, i],
            cwnd_integral_pkt_s=_area(cwnd[s_window, i], st[s_window]),
            reductions=float(np.count_nonzero((np.diff(ss) != 0) & (ss[1:] > 0))),
            marked_pkts=float(marked * new_data[i] / total_new) if total_new > 0 else 0.0,
        ))
    silent = [i for i, f in enumerate(sc["flows"]) if f["start_s"] < end and segs[-1, i] == 0]
    if silent:
        warnings.append(f"kernel engine: flows {silent} sent nothing (their connection failed)")
    # Each connection negotiated ECN as its flow asked (sysctl or route, netns.build).
    negotiated = per[:, :, 8].max(axis=0) > 0
    wrong = [i for i in range(n) if segs[-1, i] > 0 and bool(negotiated[i]) != ecn[i]]
    if wrong:
        warnings.append(f"kernel engine: flows {wrong} did not negotiate ECN as their scenario asks (ecn = "
                        f"{[ecn[i] for i in wrong]}): their marks and reactions are not the scenario's")
    retransmitted = float(retrans[sb].sum() - retrans[sa].sum())
    if abs(retransmitted - dropped) > max(5.0, 0.1 * dropped):
        warnings.append(f"kernel engine: per-flow losses and congestion events are estimated from retransmissions ({retransmitted:g} in the "
                        f"window) but the bottleneck dropped {dropped:g} packets: treat loss per flow and synchronization as approximate")
    records = RunRecords(engine="kernel", duration_s=end, measured_from_s=start, span_s=float(qt[b] - qt[a]),
                         flow_updates=int(segs[-1].sum()), links=[link], flows=flows, warnings=warnings)
    # The series every record_interval: time, queue, the link's departures (bytes in frames) and
    # per flow its window and delivered packets (bytes acknowledged in its MSS).
    step = max(1, int(round(record_interval / float(np.median(np.diff(qt))))))
    rows = np.arange(0, len(qt), step)
    t = qt[rows]
    near = np.clip(np.searchsorted(st, t), 0, len(st) - 1)
    samples = Samples(time_s=t, queue_pkts=qlen[rows], link_sent_pkts=Samples.per_interval(qbytes[rows]) / frame)
    for i in range(n):
        samples.add_flow(cwnd[near, i], Samples.per_interval(acked[near, i]) / mss[near, i])
    return summarize(p, records, samples, drops)
