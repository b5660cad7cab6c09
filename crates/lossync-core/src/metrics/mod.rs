//! Metrics, computed once for every engine (docs/model.md §5). Engines hand over [`Records`]
//! (raw totals, samples, the event log); [`summarize`] turns them into the summary, the time
//! series and the event table: utilization, per-flow throughput, Jain's index, loss, queue,
//! congestion events and the synchronization rate. This module knows no engine.

pub mod dynamic;
pub mod events;
pub mod records;
mod scenario_warnings;
pub mod series;
pub mod sojourn;

pub use dynamic::{DynamicSummary, FctSummary};
pub use events::{sync_statistics, DropClusters, SyncStatistics};
pub use records::{
    AggregateSample, ArrivalRecord, BurstRecord, CompletionRecord, FlowRecord, LinkRecord, Records,
};
pub use series::Series;

use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};

/// Jain's fairness index `(Σx)² / (N·Σx²)`, in [1/N, 1] (Jain, Chiu, Hawe, DEC-TR-301, 1984).
/// Undefined (NaN) when no flow had any throughput: 0/0 says nothing of fairness. Equal
/// throughputs give 1 within the rounding of the sums, which can exceed it by a bit: capped at
/// 1, the index's bound.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 == 0.0 {
        f64::NAN
    } else {
        (s * s / (x.len() as f64 * s2)).min(1.0)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub scenario: String,
    pub engine: String,
    pub seed: u64,
    pub version: String,
    pub duration_s: f64,
    pub step_s: f64,
    /// Statistics cover [measured_from_s, duration_s].
    pub measured_from_s: f64,
    /// The link the headline numbers below come from: the one with the most losses, queue drops
    /// and lost bursts' segments (first link if none lost any).
    pub bottleneck: String,
    pub utilization: f64,
    pub jain: f64,
    pub loss_rate: f64,
    pub congestion_events: u64,
    pub sync_rate_mean: f64,
    pub mean_queue_pkts: f64,
    pub mean_queueing_delay_s: f64,
    pub links: Vec<LinkSummary>,
    pub flows: Vec<FlowSummary>,
    /// Work done: flow × step updates (for benchmarks).
    pub flow_updates: u64,
    /// Reasons these numbers may be wrong (outside the validated region, no congestion seen, …).
    pub warnings: Vec<String>,
    /// Dynamic traffic: per group with `arrivals`, its flow completion times and arrivals.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dynamic: Vec<DynamicSummary>,
    /// With `run.aggregate_interval`: the aggregate Σ cwnd/RTT and its variability.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<AggregateSummary>,
}

/// The aggregate sending rate the windows allow, Σ cwnd/RTT over the flows, sampled every
/// `interval_s` (seed 002, Vlachos: flat when flows are not synchronized, a saw-tooth when they
/// are), and the spread of throughput across flows (the seed's fairness measure).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AggregateSummary {
    pub interval_s: f64,
    /// Samples in the measurement window, and their mean, standard deviation (n − 1) and
    /// coefficient of variation (std / mean; NaN without two samples or with a zero mean).
    pub samples: usize,
    pub mean_pps: f64,
    pub std_pps: f64,
    pub cv: f64,
    pub min_pps: f64,
    pub max_pps: f64,
    /// Per-flow throughput (goodput) across flows: mean, population variance, and CV.
    pub flow_throughput_mean_pps: f64,
    pub flow_throughput_var_pps2: f64,
    pub flow_throughput_cv: f64,
    /// Every sample of the run (the warm-up included), for plots.
    pub time_s: Vec<f64>,
    pub rate_pps: Vec<f64>,
}

impl AggregateSummary {
    /// From the samples (those at or after `from_s` count in the statistics) and the flows'
    /// throughputs.
    pub fn of(interval_s: f64, samples: &[AggregateSample], from_s: f64, tput_pps: &[f64]) -> Self {
        let x: Vec<f64> = (samples.iter())
            .filter(|s| s.time_s >= from_s)
            .map(|s| s.rate_pps)
            .collect();
        let (mean, std) = mean_std(&x, 1.0);
        let (tm, tstd) = mean_std(tput_pps, 0.0);
        let cv = |m: f64, s: f64| if m > 0.0 { s / m } else { f64::NAN };
        AggregateSummary {
            interval_s,
            samples: x.len(),
            mean_pps: mean,
            std_pps: std,
            cv: cv(mean, std),
            min_pps: x.iter().copied().fold(f64::NAN, f64::min),
            max_pps: x.iter().copied().fold(f64::NAN, f64::max),
            flow_throughput_mean_pps: tm,
            flow_throughput_var_pps2: tstd * tstd,
            flow_throughput_cv: cv(tm, tstd),
            time_s: samples.iter().map(|s| s.time_s).collect(),
            rate_pps: samples.iter().map(|s| s.rate_pps).collect(),
        }
    }
}

/// Mean and standard deviation with `ddof` degrees of freedom removed (NaN when too few).
pub(crate) fn mean_std(x: &[f64], ddof: f64) -> (f64, f64) {
    let n = x.len() as f64;
    if n == 0.0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = x.iter().sum::<f64>() / n;
    if n - ddof <= 0.0 {
        return (mean, f64::NAN);
    }
    let ss: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
    (mean, (ss / (n - ddof)).sqrt())
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkSummary {
    pub name: String,
    pub capacity_bps: f64,
    pub buffer_pkts: f64,
    pub utilization: f64,
    pub loss_rate: f64,
    pub mean_queue_pkts: f64,
    pub max_queue_pkts: f64,
    pub mean_queueing_delay_s: f64,
    pub max_queueing_delay_s: f64,
    /// Spread of the sampled series over the window (samples at or after `measured_from_s`,
    /// every `record_interval`; NaN under two): the standard deviation (n − 1) of the queue, in
    /// packets, and of the utilization per sample (seed 004's queue oscillation, seed 002's
    /// variability of the traffic leaving an edge node).
    pub queue_std_pkts: f64,
    pub utilization_std: f64,
    /// Congestion events in the measurement window.
    pub congestion_events: u64,
    /// Mean over events of the fraction of the link's flows that lost in the event.
    pub sync_rate_mean: f64,
    /// `sync_histogram[n]` = events in which exactly n flows lost.
    pub sync_histogram: Vec<u64>,
    /// The measurement window's accounting of data packets (ACKs sharing the queue are not
    /// counted), like every other number here: arrivals = departures + drops + (queue_end −
    /// queue_start), the queue at the window's start and end.
    pub arrivals_pkts: f64,
    pub departures_pkts: f64,
    pub drops_pkts: f64,
    pub queue_start_pkts: f64,
    pub queue_end_pkts: f64,
    /// The discipline's signals over the window, per data packet arrived: CE marks, early (AQM)
    /// drops and overflow drops (`loss_rate` also counts the link's random losses).
    pub mark_rate: f64,
    pub early_drop_rate: f64,
    pub overflow_drop_rate: f64,
    pub marks_pkts: f64,
    /// How long data packets waited before the wire (from their arrival to the start of their
    /// transmission, RFC 8289 §4.2's sojourn time): mean, median, 99th percentile, in seconds;
    /// NaN where the engine has no packets (fluid) or none left.
    pub sojourn_mean_s: f64,
    pub sojourn_p50_s: f64,
    pub sojourn_p99_s: f64,
    /// The same for the data packets that left their queue with an L4S codepoint (ECT(1) or
    /// CE, RFC 9331 §5.1: DualPI2's L queue): mean and 99th percentile, in seconds; NaN where
    /// the engine has no packets or none was L4S.
    pub sojourn_l4s_mean_s: f64,
    pub sojourn_l4s_p99_s: f64,
    /// The bursts of the link's assembler (optical burst switching; absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bursts: Option<BurstSummary>,
}

/// A link's optical bursts after the warm-up (docs/packet.md, "Optical burst switching"). Every lost burst is also one of the link's congestion events, of as many
/// flows as it held (`sync_histogram` counts them with the queue's own drop events).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BurstSummary {
    pub bursts: u64,
    pub lost_bursts: u64,
    /// Bursts a fibre delay line saved from wavelength contention.
    pub delayed_bursts: u64,
    /// Lost bursts over bursts, and its standard error `sqrt(p(1−p)/n)` (NaN without bursts).
    pub loss_rate: f64,
    pub loss_rate_se: f64,
    pub mean_segments: f64,
    pub max_segments: u64,
    pub mean_flows: f64,
    pub max_flows: u64,
    /// The most segments one flow had in one burst.
    pub max_source_segments: u64,
    /// Mean flows per lost burst: the mean m_k of the burst-loss congestion events.
    pub mean_flows_per_lost_burst: f64,
    pub segments_histogram: Vec<u64>,
    pub flows_histogram: Vec<u64>,
    pub source_segments_histogram: Vec<u64>,
    /// Over the lost bursts only.
    pub lost_segments_histogram: Vec<u64>,
    pub lost_flows_histogram: Vec<u64>,
    /// The window's accounting of data packets: arrivals = forwarded + lost + (held at the end −
    /// held at the start).
    pub arrivals_pkts: u64,
    pub forwarded_pkts: u64,
    pub lost_pkts: u64,
    pub held_start_pkts: u64,
    pub held_end_pkts: u64,
}

impl BurstSummary {
    pub fn of(r: &BurstRecord) -> BurstSummary {
        let div = |a: f64, b: u64| if b > 0 { a / b as f64 } else { f64::NAN };
        let mean = |h: &[u64]| {
            let n: u64 = h.iter().sum();
            div(
                h.iter()
                    .enumerate()
                    .map(|(i, &c)| i as f64 * c as f64)
                    .sum(),
                n,
            )
        };
        let max = |h: &[u64]| h.iter().rposition(|&c| c > 0).unwrap_or(0) as u64;
        let p = div(r.lost_bursts as f64, r.bursts);
        BurstSummary {
            bursts: r.bursts,
            lost_bursts: r.lost_bursts,
            delayed_bursts: r.delayed_bursts,
            loss_rate: p,
            loss_rate_se: div(p * (1.0 - p), r.bursts).sqrt(),
            mean_segments: div(r.segments as f64, r.bursts),
            max_segments: max(&r.segments_histogram),
            mean_flows: mean(&r.flows_histogram),
            max_flows: max(&r.flows_histogram),
            max_source_segments: max(&r.source_segments_histogram),
            mean_flows_per_lost_burst: div(r.lost_flows as f64, r.lost_bursts),
            segments_histogram: r.segments_histogram.clone(),
            flows_histogram: r.flows_histogram.clone(),
            source_segments_histogram: r.source_segments_histogram.clone(),
            lost_segments_histogram: r.lost_segments_histogram.clone(),
            lost_flows_histogram: r.lost_flows_histogram.clone(),
            arrivals_pkts: r.arrived_pkts,
            forwarded_pkts: r.forwarded_pkts,
            lost_pkts: r.lost_pkts,
            held_start_pkts: r.held_start_pkts,
            held_end_pkts: r.held_end_pkts,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct FlowSummary {
    pub flow: usize,
    pub group: String,
    pub variant: String,
    pub rtt_s: f64,
    pub throughput_pps: f64,
    pub throughput_bps: f64,
    pub loss_rate: f64,
    pub mean_cwnd_pkts: f64,
    /// Window reductions this flow applied in the measurement window (fractional in the
    /// continuous-loss mode).
    pub reductions: f64,
    /// Of its data that arrived in the window, the share marked CE.
    pub mark_rate: f64,
    /// Retransmission timeouts that fired in the window (`None`: the engine does not count
    /// them).
    pub timeouts: Option<f64>,
    /// Parallel connections making up this flow (`parallel` in the scenario; 1 for a plain flow).
    pub connections: usize,
}

/// Derives a run's summary, series and event table from its records: the one place where the
/// metrics of every engine are computed.
pub fn summarize(sc: &Scenario, r: Records) -> RunResult {
    let Records {
        engine,
        duration_s,
        step_s,
        measured_from_s,
        span_s,
        flow_updates,
        links,
        flows,
        mut events,
        samples,
        delay_samples,
        mut warnings,
        bursts,
        arrivals,
        completions,
        aggregate,
    } = r;
    let per = |v: f64| if span_s > 0.0 { v / span_s } else { 0.0 };
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    // One order for every engine: by start (stable, so a link's events keep theirs).
    events.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    let window_drops: Vec<f64> = links.iter().map(|l| l.dropped_pkts).collect();
    let series = Series::standard(sc, samples).with_delays(sc, delay_samples);
    let links: Vec<LinkSummary> = links
        .iter()
        .zip(&sc.links)
        .enumerate()
        .map(|(li, (l, spec))| {
            let cap = spec.capacity_pps;
            let members = sc.flows.iter().filter(|f| f.path.contains(&li)).count();
            let sync = sync_statistics(&events, li, members);
            let mean_q = ratio(l.queue_integral, l.queue_integral_span);
            // A burst lost at the link's assembler is the link's loss too (its segments never
            // reach the queue): counted with the queue's drops, over what arrived at the link.
            let burst = bursts.iter().find(|b| b.link == li);
            let burst_lost = burst.map_or(0.0, |b| b.lost_segments as f64);
            LinkSummary {
                name: spec.name.clone(),
                capacity_bps: spec.capacity_bps,
                // What the engine held (a packet engine rounds to whole packets), not the scenario's.
                buffer_pkts: l.buffer_pkts,
                utilization: within_rounding_of_one(per(l.departed_pkts) / cap),
                loss_rate: ratio(l.dropped_pkts + burst_lost, l.arrived_pkts + burst_lost),
                mean_queue_pkts: mean_q,
                max_queue_pkts: l.max_queue_pkts,
                mean_queueing_delay_s: mean_q / cap,
                max_queueing_delay_s: l.max_queue_pkts / cap,
                queue_std_pkts: series
                    .window_std(&format!("queue_pkts.{}", spec.name), measured_from_s),
                utilization_std: series
                    .window_std(&format!("utilization.{}", spec.name), measured_from_s),
                congestion_events: sync.events,
                sync_rate_mean: sync.rate_mean,
                sync_histogram: sync.histogram,
                arrivals_pkts: l.arrived_pkts,
                departures_pkts: l.departures_pkts,
                drops_pkts: l.dropped_pkts,
                queue_start_pkts: l.queue_start_pkts,
                queue_end_pkts: l.queue_end_pkts,
                mark_rate: ratio(l.marked_pkts, l.arrived_pkts),
                early_drop_rate: ratio(l.dropped_early_pkts, l.arrived_pkts),
                overflow_drop_rate: ratio(l.dropped_overflow_pkts, l.arrived_pkts),
                marks_pkts: l.marked_pkts,
                sojourn_mean_s: l.sojourn.as_ref().map_or(f64::NAN, |h| h.mean_s()),
                sojourn_p50_s: l.sojourn.as_ref().map_or(f64::NAN, |h| h.quantile_s(0.5)),
                sojourn_p99_s: l.sojourn.as_ref().map_or(f64::NAN, |h| h.quantile_s(0.99)),
                sojourn_l4s_mean_s: l.sojourn_l4s.as_ref().map_or(f64::NAN, |h| h.mean_s()),
                sojourn_l4s_p99_s: l
                    .sojourn_l4s
                    .as_ref()
                    .map_or(f64::NAN, |h| h.quantile_s(0.99)),
                bursts: burst.map(BurstSummary::of),
            }
        })
        .collect();
    let flows: Vec<FlowSummary> = flows
        .iter()
        .zip(&sc.flows)
        .enumerate()
        .map(|(i, (f, spec))| {
            let pps = per(f.delivered_pkts);
            FlowSummary {
                flow: i,
                group: spec.group_name.clone(),
                variant: spec.cc.name().to_string(),
                rtt_s: spec.rtt_s,
                throughput_pps: pps,
                throughput_bps: pps * 8.0 * sc.links[spec.path[0]].packet_size_bytes,
                // Of the packets whose fate the window saw, the share lost (iperf's lost/(lost +
                // received)): drops over sends mixed packets sent before the window with the
                // window's sends, and exceeded 1 for a starved flow.
                loss_rate: ratio(f.dropped_pkts, f.dropped_pkts + f.delivered_pkts),
                mean_cwnd_pkts: per(f.cwnd_integral_pkt_s),
                reductions: f.reductions,
                mark_rate: ratio(f.marked_pkts, f.delivered_pkts),
                timeouts: f.timeouts,
                connections: 1,
            }
        })
        .collect();

    // The headline numbers come from the link with the most congestion signals (the first if
    // none): its queue's drops and CE marks and the segments of its lost bursts.
    let lost = |l: &LinkSummary| {
        l.drops_pkts + l.marks_pkts + l.bursts.as_ref().map_or(0.0, |b| b.lost_pkts as f64)
    };
    let b = (0..links.len())
        .max_by(|&a, &c| lost(&links[a]).total_cmp(&lost(&links[c])).then(c.cmp(&a)))
        .unwrap_or(0);
    let bl = &links[b];
    let flows = logical_flows(sc, flows);
    let tput: Vec<f64> = flows.iter().map(|f| f.throughput_pps).collect();
    // Jain's index speaks of flows that share the link through the window. A dynamic group's
    // flows are pool slots whose transfers come and go (their measure is the FCT), so they are
    // left out, and a run of dynamic flows only has no index (NaN).
    let mut dynamic = vec![false; flows.len()];
    for f in sc.flows.iter().filter(|f| f.arrivals.is_some()) {
        dynamic[f.logical] = true;
    }
    let persistent_tput: Vec<f64> = flows
        .iter()
        .filter(|f| !dynamic[f.flow])
        .map(|f| f.throughput_pps)
        .collect();
    // Drops in the window but no event begun there: the drops never paused for the link's event
    // window τ, so one event from before the window spans it. The link is congested, not idle.
    let unbroken = bl.congestion_events == 0 && window_drops[b] > 0.0;
    if unbroken {
        warnings.push(format!(
            "run.warmup: link {} dropped {} packets from {} s to {} s but its drops never paused \
             for the congestion-event window τ = {:.3} s, so one congestion event spans the \
             whole window and congestion_events and sync_rate_mean describe none",
            bl.name,
            window_drops[b],
            measured_from_s,
            duration_s,
            events::event_window_s(sc, b)
        ));
    }
    if sc.run.from_first_congestion && bl.congestion_events == 0 && !unbroken {
        warnings.push(format!(
            "run.from_first_congestion: no congestion event after the warm-up, so the \
             statistics start at the warm-up ({} s) and describe an uncongested link",
            measured_from_s
        ));
    }
    // Loss-based flows that never met a full buffer after the warm-up were still in slow start's
    // aftermath or capped below the link: the numbers are not a congested steady state. (10 Reno
    // flows at 10 Gb/s, 50 ms: a saw-tooth lasts about 100 s, and a 60 s run measured none.)
    // (Laws are built to ask only when no event was seen.) Finite transfers (dynamic groups) need
    // meet no congestion: a link they leave uncongested is their steady state.
    let seek_loss = || {
        sc.flows
            .iter()
            .any(|f| f.arrivals.is_none() && f.path.contains(&b) && f.cc.build().grows_until_loss())
    };
    // CE marks are congestion too: an ECN link that marks and never drops is congested.
    let marking = bl.marks_pkts > 0.0;
    if !sc.run.from_first_congestion
        && bl.congestion_events == 0
        && !unbroken
        && !marking
        && seek_loss()
    {
        warnings.push(format!(
            "run.duration: no congestion event on link {} from {} s to {} s, so the statistics \
             describe a transient or an uncongested link, not a congested steady state \
             (lengthen the run or its warm-up)",
            bl.name, measured_from_s, duration_s
        ));
    }
    if !persistent_tput.is_empty() && persistent_tput.iter().all(|&t| t == 0.0) {
        warnings.push(format!(
            "flows: no flow delivered any data from {measured_from_s} s to {duration_s} s, so \
             Jain's index is undefined (NaN) and the throughputs describe no transfer"
        ));
    }
    warnings.extend(scenario_warnings::of(sc));
    for a in arrivals.iter().filter(|a| a.refused > 0) {
        warnings.push(format!(
            "flows[{}].arrivals.max_active: {} of {} arrivals found no free slot and were \
             refused (raise max_active)",
            a.group, a.refused, a.arrivals
        ));
    }
    let dynamic = dynamic::summarize_dynamic(
        sc,
        &arrivals,
        &completions,
        &series,
        (measured_from_s, duration_s, span_s),
    );
    let aggregate = (sc.run.aggregate_interval_s > 0.0).then(|| {
        AggregateSummary::of(
            sc.run.aggregate_interval_s,
            &aggregate,
            measured_from_s,
            &tput,
        )
    });
    let summary = Summary {
        scenario: sc.name.clone(),
        engine,
        seed: sc.run.seed,
        version: crate::VERSION.into(),
        duration_s,
        step_s,
        measured_from_s,
        bottleneck: bl.name.clone(),
        utilization: bl.utilization,
        jain: jain(&persistent_tput),
        loss_rate: bl.loss_rate,
        congestion_events: bl.congestion_events,
        sync_rate_mean: bl.sync_rate_mean,
        mean_queue_pkts: bl.mean_queue_pkts,
        mean_queueing_delay_s: bl.mean_queueing_delay_s,
        flow_updates,
        links,
        flows,
        warnings,
        dynamic,
        aggregate,
    };
    RunResult {
        summary,
        series,
        events,
        completions,
    }
}

/// Merges the connections of each parallel flow (`Flow::logical`) into one flow: throughput,
/// windows and reductions add up; the loss rate is the throughput-weighted mean.
fn logical_flows(sc: &Scenario, conns: Vec<FlowSummary>) -> Vec<FlowSummary> {
    if sc.flows.iter().enumerate().all(|(i, f)| f.logical == i) {
        return conns;
    }
    let mut out: Vec<FlowSummary> = Vec::new();
    for (c, spec) in conns.into_iter().zip(&sc.flows) {
        match out.last_mut() {
            Some(f) if f.flow == spec.logical => {
                let t = f.throughput_pps + c.throughput_pps;
                if t > 0.0 {
                    f.loss_rate =
                        (f.loss_rate * f.throughput_pps + c.loss_rate * c.throughput_pps) / t;
                }
                f.throughput_pps = t;
                f.throughput_bps += c.throughput_bps;
                f.mean_cwnd_pkts += c.mean_cwnd_pkts;
                f.reductions += c.reductions;
                f.timeouts = f.timeouts.zip(c.timeouts).map(|(a, b)| a + b);
                f.connections += 1;
            }
            _ => out.push(FlowSummary {
                flow: spec.logical,
                ..c
            }),
        }
    }
    out
}

/// The first flow of each group with `arrivals`, in group order.
pub fn dynamic_groups(sc: &Scenario) -> Vec<usize> {
    (0..sc.flows.len())
        .filter(|&i| {
            sc.flows[i].arrivals.is_some() && (i == 0 || sc.flows[i - 1].group != sc.flows[i].group)
        })
        .collect()
}

/// One congestion event (docs/model.md §5.3): when it began, how many flows could lose, how many the
/// synchronization module signalled (m_k plus any spill; 0 in `proportional` mode), and how many
/// lost packets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventRecord {
    pub link: usize,
    pub start_s: f64,
    pub candidates: u32,
    pub signalled: u32,
    pub lost: u32,
}

#[derive(Debug, Clone)]
pub struct RunResult {
    pub summary: Summary,
    pub series: Series,
    /// Congestion events in the measurement window, in order of their start.
    pub events: Vec<EventRecord>,
    /// Dynamic traffic: every finished flow (size, start, FCT), over the whole run.
    pub completions: Vec<CompletionRecord>,
}

/// A fluid link's departures are a sum of up to ~10^8 steps of `capacity × dt`, whose rounding
/// can put a full link a few 1e-13 above capacity: such an excess, and only one within 1e-9, is
/// rounding and reads as 1. Anything larger stays visible (it would be a defect).
pub(crate) fn within_rounding_of_one(u: f64) -> f64 {
    if u > 1.0 && u < 1.0 + 1e-9 {
        1.0
    } else {
        u
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_statistics() {
        // Samples 1, 2, 3 after the warm-up (0 before it): mean 2, sample std 1, CV 0.5.
        // Throughputs 1 and 3: mean 2, population variance 1, CV 0.5.
        let s: Vec<AggregateSample> = [(0.0, 0.0), (1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]
            .iter()
            .map(|&(time_s, rate_pps)| AggregateSample { time_s, rate_pps })
            .collect();
        let a = AggregateSummary::of(1.0, &s, 1.0, &[1.0, 3.0]);
        assert_eq!((a.samples, a.mean_pps, a.std_pps, a.cv), (3, 2.0, 1.0, 0.5));
        assert_eq!((a.min_pps, a.max_pps), (1.0, 3.0));
        assert_eq!(a.flow_throughput_var_pps2, 1.0);
        assert_eq!(a.flow_throughput_cv, 0.5);
        assert_eq!(a.time_s.len(), 4);
    }

    #[test]
    fn jain_bounds() {
        assert_eq!(jain(&[1.0, 1.0, 1.0, 1.0]), 1.0);
        // One flow takes everything: J = 1/N (Jain et al. 1984, property 2).
        assert_eq!(jain(&[5.0, 0.0, 0.0, 0.0]), 0.25);
        // (1+3)² / (2·(1+9)) = 16/20.
        assert!((jain(&[1.0, 3.0]) - 0.8).abs() < 1e-15);
    }
}
