"""The text summary of a run that `lossync run` prints (headline numbers, then a line per link
and per flow), and the number formats it shares with the other commands."""

from __future__ import annotations

from .scenario import rate_text


def fmt(v: object, digits: int = 4) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def count_text(v: float) -> str:
    """A count as an integer; with one decimal where it is fractional (window reductions in a
    continuous-loss model)."""
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"


#: Flows printed at each end of the flow table when it has more than twice as many.
FLOW_ROWS = 20


def summary_table(summary: dict) -> str:
    """A readable text summary: headline numbers, then one line per link and per flow."""
    s = summary
    w = max(14, 2 + max(len(link["name"]) for link in s["links"]))
    lines = [
        f"scenario {s['scenario']}  engine {s['engine']}  seed {s['seed']}  "
        f"{s['duration_s']:g} s simulated, measured from {s['measured_from_s']:.6g} s, step {s['step_s']:g} s",
        "",
        f"  utilization        {s['utilization']:.4f}   (bottleneck {s['bottleneck']})",
        f"  Jain's index       {'n/a' if s['jain'] is None else format(s['jain'], '.4f')}",
        f"  loss rate          {s['loss_rate']:.3e}",
        f"  congestion events  {s['congestion_events']}",
        f"  sync rate (mean)   {fmt(s['sync_rate_mean'])}",
        f"  mean queue         {s['mean_queue_pkts']:.1f} packets ({s['mean_queueing_delay_s'] * 1e3:.2f} ms)",
        "",
        f"  {'link':<{w}}{'capacity':>12}{'buffer':>12}{'util':>8}{'loss':>11}{'meanQ':>10}{'maxQ':>10}{'events':>8}{'sync':>7}",
    ]
    for link in s["links"]:
        lines.append(
            f"  {link['name']:<{w}}{rate_text(link['capacity_bps']):>12}{link['buffer_pkts']:>12,.0f}"
            f"{link['utilization']:>8.4f}{link['loss_rate']:>11.2e}{link['mean_queue_pkts']:>10.1f}"
            f"{link['max_queue_pkts']:>10.1f}{link['congestion_events']:>8}{fmt(link['sync_rate_mean'], 3):>7}"
        )
    for link in s["links"]:
        # The queue's signals, and how long packets waited where the engine sees each packet (the
        # fluid engine has no sojourn times, but marks and AQM drops all the same).
        soj = link.get("sojourn_mean_s")
        signals = (f"marks {link['mark_rate']:.2e}, AQM drops {link['early_drop_rate']:.2e}, "
                   f"overflow drops {link['overflow_drop_rate']:.2e}")
        if soj is not None and soj == soj:  # not NaN
            lines.append(
                f"  {link['name']:<{w}}sojourn mean {soj * 1e3:.2f} ms, p50 {link['sojourn_p50_s'] * 1e3:.2f} ms, "
                f"p99 {link['sojourn_p99_s'] * 1e3:.2f} ms; {signals}"
            )
        elif (link["mark_rate"] or 0) > 0 or (link["early_drop_rate"] or 0) > 0:  # not None, NaN (an idle link) or 0
            lines.append(f"  {link['name']:<{w}}{signals}")
    for link in s["links"]:
        b = link.get("bursts")
        if b:  # an optical burst assembler
            # The per-burst histograms are the packet engine's (the fluid's bursts hold fluid).
            per_burst = (f"segments/burst {fmt(b['mean_segments'], 3)} (max {b['max_segments']}), "
                         f"flows/burst {fmt(b['mean_flows'], 3)} (max {b['max_flows']}), ") if b["segments_histogram"] else ""
            lines.append(
                f"  {link['name']:<{w}}bursts {b['bursts']}, lost {b['lost_bursts']} ({fmt(b['loss_rate'], 4)}), "
                f"{per_burst}flows/lost burst {fmt(b['mean_flows_per_lost_burst'], 3)}"
            )
    for d in s.get("dynamic", []):  # flows that arrive and finish (packet engine)
        lines.append(
            f"  group {d['group']}: {d['arrivals']} arrivals ({fmt(d['arrival_rate_per_s'], 4)}/s of {d['rate_per_s']:g}/s), "
            f"{d['completed']} finished, {d['refused']} refused, {fmt(d['active_mean'], 3)} active on average, "
            f"goodput {rate_text(d['goodput_bps'])}"
        )
        for c in d["fct"]:
            lines.append(
                f"    FCT {c['class']:<10} {c['flows']:>7} flows  mean {fmt(c['fct_mean_s'], 4)} s  p50 {fmt(c['fct_p50_s'], 4)} s  "
                f"p90 {fmt(c['fct_p90_s'], 4)} s  p99 {fmt(c['fct_p99_s'], 4)} s"
            )
    a = s.get("aggregate")
    if a:  # run.aggregate_interval
        lines.append(
            f"  aggregate cwnd/RTT every {a['interval_s']:g} s: mean {fmt(a['mean_pps'], 6)} pps, "
            f"std {fmt(a['std_pps'], 4)}, CV {fmt(a['cv'], 4)}; throughput across flows CV {fmt(a['flow_throughput_cv'], 4)}"
        )
    # A dynamic group's flows are pool slots whose transfers come and go: its FCTs above say
    # what they did, and a row per slot would not.
    dynamic = {d["group"] for d in s.get("dynamic", [])}
    persistent = [f for f in s["flows"] if f["group"] not in dynamic]
    if not persistent:
        return "\n".join(lines)
    # Retransmission timeouts, where the engine counts them (`None`: it does not).
    rtos = any(f.get("timeouts") is not None for f in persistent)
    lines += ["", f"  {'flow':>4}  {'variant':<10}{'rtt ms':>8}{'Mbps':>12}{'share':>8}{'loss':>11}{'cwnd':>10}{'cuts':>8}"
              + (f"{'RTOs':>7}" if rtos else "")]
    total = sum(f["throughput_bps"] for f in persistent) or 1.0
    # The first and last rows, as pandas shows a long table: 10^6 rows were 10^6 lines.
    shown = persistent if len(persistent) <= 2 * FLOW_ROWS else [*persistent[:FLOW_ROWS], None, *persistent[-FLOW_ROWS:]]
    for f in shown:
        if f is None:
            lines.append(f"  … {len(persistent) - 2 * FLOW_ROWS:,} more flows (every flow: summary.json's \"flows\", "
                         "Result.flows in Python)")
            continue
        to = f.get("timeouts")
        lines.append(
            f"  {f['flow']:>4}  {f['variant']:<10}{f['rtt_s'] * 1e3:>8.1f}{f['throughput_bps'] / 1e6:>12.2f}"
            f"{f['throughput_bps'] / total:>8.3f}{f['loss_rate']:>11.2e}{f['mean_cwnd_pkts']:>10.1f}{count_text(f['reductions']):>8}"
            + (f"{'-' if to is None else count_text(to):>7}" if rtos else "")
        )
    return "\n".join(lines)
