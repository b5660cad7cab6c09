//! What an engine hands over at the end of a run: raw totals over the measurement window and
//! over the whole run, the sampled time series and the congestion-event log. Nothing here is a
//! ratio or an average: [`super::summarize`] derives every metric from these records, the same
//! way for every engine (fluid, packet, and ns-3 through the Python binding).

use super::EventRecord;
use crate::metrics::sojourn::SojournHistogram;
use serde::{Deserialize, Serialize};

/// A finished run's records.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Records {
    /// "fluid", "packet", "ns3", ...
    pub engine: String,
    /// Simulated time at the end of the run.
    pub duration_s: f64,
    /// The engine's time step (the packet engines: one bottleneck packet time).
    pub step_s: f64,
    /// Statistics cover `[measured_from_s, duration_s]`.
    pub measured_from_s: f64,
    /// Length of that window, as the engine measured it (rates divide by it).
    pub span_s: f64,
    /// Work done: flow × step updates (fluid) or events processed (packet engines).
    pub flow_updates: u64,
    /// One per scenario link, in its order.
    pub links: Vec<LinkRecord>,
    /// One per connection (the scenario's `flows`, parallel connections apart).
    pub flows: Vec<FlowRecord>,
    /// Congestion events, each recorded once it ended (any order).
    #[serde(default)]
    pub events: Vec<EventRecord>,
    /// Time-series columns in the order of [`super::Series::standard`], per connection.
    #[serde(default)]
    pub samples: Vec<Vec<f64>>,
    /// Delay columns sampled with `samples` (the packet and fluid engines; empty for the others,
    /// which then have no delay series): per link, over the interval each sample closes, two
    /// totals whose ratio is its queueing delay in seconds (the packet engine: the waits of the
    /// data packets that began their transmission, in seconds, and their number; the fluid
    /// engine: `∫ q dt` in packet·seconds and `C·Δt`, the packets the link could send); then per
    /// connection its smoothed RTT at the sample, in seconds (NaN while it does not send).
    /// [`super::Series::with_delays`] reads them.
    #[serde(default)]
    pub delay_samples: Vec<Vec<f64>>,
    /// What the engine knows may make this run's numbers wrong (one sentence each).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Per link with a burst assembler (the packet engine's optical burst switching), its bursts
    /// from the end of the warm-up (as congestion events).
    #[serde(default)]
    pub bursts: Vec<BurstRecord>,
    /// Dynamic traffic (packet engine): per group with `arrivals`, its arrival process.
    #[serde(default)]
    pub arrivals: Vec<ArrivalRecord>,
    /// Dynamic traffic: every flow that finished, over the whole run, in order of completion.
    #[serde(default)]
    pub completions: Vec<CompletionRecord>,
    /// With `run.aggregate_interval`: the aggregate Σ cwnd/RTT of the flows, sampled.
    #[serde(default)]
    pub aggregate: Vec<AggregateSample>,
}

/// One sample of the aggregate sending rate the windows allow: Σ over started flows of cwnd
/// over RTT (the seed 002 metric, Vlachos: "the sum of the congestion windows of all the
/// sources divided by RTT"). The RTT is the engine's current one (queueing and burstification
/// delay included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AggregateSample {
    pub time_s: f64,
    pub rate_pps: f64,
}

/// A dynamic group's arrivals over the whole run (counts, nothing derived).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalRecord {
    pub group: usize,
    /// Flows that arrived, of those refused for want of a free slot, and finished.
    pub arrivals: u64,
    pub refused: u64,
    pub completed: u64,
    /// Flows sending at the end of the run.
    pub active_end: u64,
}

/// One finished flow of a dynamic group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompletionRecord {
    pub group: usize,
    /// The connection (pool slot) that carried it.
    pub slot: usize,
    /// Arrival: its first packet leaves the sender.
    pub start_s: f64,
    pub size_bytes: f64,
    pub size_pkts: u64,
    /// Flow completion time: from the arrival to the ACK of its last packet at the sender.
    pub fct_s: f64,
    /// Data packets sent (retransmissions included), arrived at the receiver (duplicates
    /// included), delivered in order (each once) and dropped.
    pub sent_pkts: u64,
    pub received_pkts: u64,
    pub delivered_pkts: u64,
    pub dropped_pkts: u64,
    /// Whether none of its packets was left in the network when counted (false only for a flow
    /// finishing at the end of the run): then sent = received + dropped exactly.
    pub drained: bool,
}

/// The bursts a link's assembler released after the warm-up: counts and histograms,
/// nothing derived ([`super::BurstSummary`] is).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BurstRecord {
    pub link: usize,
    /// Bursts released, and of those lost whole.
    pub bursts: u64,
    pub lost_bursts: u64,
    /// Segments (data packets) in them, and in the lost ones.
    pub segments: u64,
    pub lost_segments: u64,
    /// Flows in the lost bursts, summed over them (each lost burst is a congestion event of
    /// that many flows).
    pub lost_flows: u64,
    /// Bursts a fibre delay line saved from contention (counted among the released ones).
    #[serde(default)]
    pub delayed_bursts: u64,
    /// `segments_histogram[n]`: bursts of n segments.
    pub segments_histogram: Vec<u64>,
    /// `flows_histogram[n]`: bursts holding segments of n flows.
    pub flows_histogram: Vec<u64>,
    /// `source_segments_histogram[n]`: (burst, flow) pairs with n segments of the flow in the
    /// burst (the per-source count of the seed's Fig. 1a).
    pub source_segments_histogram: Vec<u64>,
    /// The same two histograms over the lost bursts only (the seed's Fig. 1 splits lost and
    /// successful bursts; successful = all − lost).
    #[serde(default)]
    pub lost_segments_histogram: Vec<u64>,
    #[serde(default)]
    pub lost_flows_histogram: Vec<u64>,
    /// The window's accounting of the assembler's data packets: arrivals = forwarded + lost +
    /// (held at the end − held at the start).
    pub arrived_pkts: u64,
    pub forwarded_pkts: u64,
    pub lost_pkts: u64,
    pub held_start_pkts: u64,
    pub held_end_pkts: u64,
}

impl BurstRecord {
    /// Counts one released burst of `segments` segments, `per_flow` of them from each of its flows.
    pub fn add(
        &mut self,
        segments: usize,
        per_flow: impl ExactSizeIterator<Item = u32>,
        lost: bool,
    ) {
        fn bump(h: &mut Vec<u64>, n: usize) {
            if n >= h.len() {
                h.resize(n + 1, 0);
            }
            h[n] += 1;
        }
        let flows = per_flow.len();
        self.bursts += 1;
        self.segments += segments as u64;
        bump(&mut self.segments_histogram, segments);
        bump(&mut self.flows_histogram, flows);
        for c in per_flow {
            bump(&mut self.source_segments_histogram, c as usize);
        }
        if lost {
            self.lost_segments += segments as u64;
            bump(&mut self.lost_segments_histogram, segments);
            self.count_lost_flows(flows);
        }
    }

    /// Counts one lost burst that held `flows` flows (the fluid engine's whole record of one).
    pub fn count_lost_flows(&mut self, flows: usize) {
        self.lost_bursts += 1;
        self.lost_flows += flows as u64;
        if flows >= self.lost_flows_histogram.len() {
            self.lost_flows_histogram.resize(flows + 1, 0);
        }
        self.lost_flows_histogram[flows] += 1;
    }
}

/// A link's totals. Window totals are differences taken by the engine in its own arithmetic
/// (integers in the packet engine), so that no precision is lost before the division.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkRecord {
    /// The buffer the engine held, in packets: whole packets in a packet-level engine
    /// ([`crate::queue::Buffer`]'s rule for every one of them), the scenario's in the fluid one.
    pub buffer_pkts: f64,
    /// Data packets over the measurement window. `departed_pkts` is the data sent over the
    /// window in packets, at most the link's capacity times the window (the packet engine
    /// counts the part of a packet's transmission inside the window, not whole departures).
    pub arrived_pkts: f64,
    pub departed_pkts: f64,
    pub dropped_pkts: f64,
    /// ∫ queue dt over the window and the window's length, in one time unit of the engine's
    /// choosing (their ratio is the mean queue in packets).
    pub queue_integral: f64,
    pub queue_integral_span: f64,
    /// Largest occupancy seen in the window, in packets.
    pub max_queue_pkts: f64,
    /// The window's data-packet accounting, with `arrived_pkts` and `dropped_pkts`: arrivals =
    /// departures + drops + (end − start). `departures_pkts` counts the packets that left the
    /// queue in the window, each whole (`departed_pkts` counts the part of a transmission inside
    /// it); the queue is the one at the window's start and end.
    pub departures_pkts: f64,
    pub queue_start_pkts: f64,
    pub queue_end_pkts: f64,
    /// Of `dropped_pkts`, the discipline's early (AQM) drops and its overflow drops (the rest
    /// are the link's random losses), and the data packets it marked CE, over the window.
    #[serde(default)]
    pub dropped_early_pkts: f64,
    #[serde(default)]
    pub dropped_overflow_pkts: f64,
    #[serde(default)]
    pub marked_pkts: f64,
    /// How long the data packets that left for the wire in the window had waited (`None`: the
    /// engine does not see packets, as the fluid one).
    #[serde(default)]
    pub sojourn: Option<SojournHistogram>,
    /// Of them, those that left their queue with an L4S codepoint (ECT(1) or CE, RFC 9331
    /// §5.1): DualPI2's L queue.
    #[serde(default)]
    pub sojourn_l4s: Option<SojournHistogram>,
}

/// A connection's totals over the measurement window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowRecord {
    pub sent_pkts: f64,
    /// Data that reached the receiver in the window, each packet once (a packet engine counts
    /// first arrivals; the fluid engine departures at the last hop): what crossed the path in
    /// the window, so the flows' sum on a link never exceeds its capacity.
    pub delivered_pkts: f64,
    pub dropped_pkts: f64,
    /// ∫ cwnd dt in packet·seconds.
    pub cwnd_integral_pkt_s: f64,
    /// Window reductions applied (fractional in the fluid engine's continuous-loss mode).
    pub reductions: f64,
    /// Data packets that reached the receiver marked CE.
    #[serde(default)]
    pub marked_pkts: f64,
    /// Retransmission timeouts that fired; `None` where the engine does not count them.
    #[serde(default)]
    pub timeouts: Option<f64>,
}
