//! The engine's measurements: the totals the statistics start from, the time series and the
//! aggregate samples, dynamic flows' completion records, and the [`Records`] handed to the
//! metrics when the run finishes ([`PacketEngine::finish`]).

use super::event::{s_from_ps, Event, SimTime, PS_PER_S};
use super::flows::Phase;
use super::PacketEngine;
use crate::metrics::{
    self, AggregateSample, ArrivalRecord, CompletionRecord, FlowRecord, LinkRecord, Records,
    RunResult,
};

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct FlowAcc {
    sent: u64,
    delivered: u64,
    dropped: u64,
    reductions: u64,
    marked: u64,
    timeouts: u64,
    cwnd_integral_pkt_s: f64,
}

impl PacketEngine {
    /// The record of dynamic flow `f` (completed) now.
    pub(super) fn completion(&mut self, f: usize, drained: bool) -> CompletionRecord {
        let now = self.now_ps;
        let fl = &mut self.flows[f];
        let s = fl.slot;
        CompletionRecord {
            group: self.dynamic[s.group as usize].group,
            slot: f,
            start_s: s_from_ps(s.arrived_ps),
            size_bytes: s.size_bytes,
            size_pkts: s.size_pkts,
            fct_s: s_from_ps(s.done_ps - s.arrived_ps),
            sent_pkts: fl.sender.stats(now).sent_pkts - s.base_sent,
            received_pkts: fl.received - s.base_received,
            delivered_pkts: fl.receiver.delivered_pkts() - s.base_delivered,
            dropped_pkts: fl.dropped - s.base_dropped,
            drained,
        }
    }

    /// Per-flow totals now.
    fn flow_acc(&mut self, f: usize) -> FlowAcc {
        let now = self.now_ps;
        let fl = &mut self.flows[f];
        let st = fl.sender.stats(now);
        FlowAcc {
            sent: st.sent_pkts,
            // What crossed the path (first arrivals), so that the flows' sum over a window never
            // exceeds a link's capacity; in-order delivery would count the packets behind a
            // hole, which crossed before the window, when a retransmission fills it.
            delivered: fl.receiver.first_arrivals_pkts(),
            dropped: fl.dropped,
            reductions: st.reductions,
            marked: fl.receiver.ce_received(),
            timeouts: st.timeouts,
            cwnd_integral_pkt_s: st.cwnd_integral_pkt_s,
        }
    }

    /// Starts the statistics now: later results are differences from these totals.
    pub(super) fn start_measuring(&mut self) {
        let now = self.now_ps;
        self.measured_from_ps = now;
        for (i, port) in self.ports.iter_mut().enumerate() {
            port.integrate(now);
            port.q_max = port.len();
            port.data_len_at_measuring = port.data_len();
            // The histogram restarts: the interval under way keeps what it had counted.
            let last = &mut self.last_record_sojourn[i];
            *last = (
                last.0.wrapping_sub(port.sojourn.count),
                last.1.wrapping_sub(port.sojourn.sum_ps),
            );
            port.sojourn.clear();
            port.sojourn_l4s.clear();
            self.start_ports[i] = port.acc;
        }
        for f in 0..self.flows.len() {
            self.start_flows[f] = self.flow_acc(f);
        }
    }

    /// One sample: raw counts over the interval it closes (the metrics turn them into
    /// utilization and rates, `metrics::Series::standard`).
    pub(super) fn record(&mut self) {
        let now = self.now_ps;
        let mut cols = self.series.iter_mut();
        let mut push = |v: f64| cols.next().expect("one column per value").push(v);
        push(s_from_ps(now));
        for (port, last_busy) in self.ports.iter_mut().zip(&mut self.last_record_busy_ps) {
            port.integrate(now);
            push(port.len() as f64);
            // The data the link sent over the interval, in packets: its sending time at the
            // link's rate (a packet straddling the sample counts for its part on each side).
            let busy = port.acc.data_busy_ps - *last_busy;
            push(s_from_ps(busy) * port.capacity_pps);
            *last_busy = port.acc.data_busy_ps;
        }
        for fl in &mut self.flows {
            debug_assert_eq!(fl.sender.pipe_pkts(), fl.sender.recount_pipe());
            // A free or finished dynamic slot has no window.
            push(if matches!(fl.phase, Phase::Idle | Phase::Draining) {
                0.0
            } else {
                fl.sender.cwnd_pkts()
            });
            push(fl.interval_delivered as f64);
            fl.interval_delivered = 0;
        }
        for d in &self.dynamic {
            push(d.active as f64);
        }
        let mut cols = self.delays.iter_mut();
        let mut push = |v: f64| cols.next().expect("one column per value").push(v);
        for (port, last) in self.ports.iter().zip(&mut self.last_record_sojourn) {
            let (n, sum_ps) = (port.sojourn.count, port.sojourn.sum_ps);
            push(sum_ps.wrapping_sub(last.1) as f64 / PS_PER_S);
            push(n.wrapping_sub(last.0) as f64);
            *last = (n, sum_ps);
        }
        for fl in &self.flows {
            let sending =
                fl.sender.is_started() && !matches!(fl.phase, Phase::Idle | Phase::Draining);
            push(if sending {
                fl.sender.srtt_s()
            } else {
                f64::NAN
            });
        }
        self.records += 1;
        let next = (self.records as f64 * self.record_every_ps).round() as SimTime;
        if next <= self.end_ps {
            self.queue.push(next, Event::Record);
        }
    }

    /// One sample of Σ cwnd/srtt over the flows that have started (the seed 002 metric; the
    /// smoothed RTT holds the queueing and burstification delays, the base RTT before any
    /// sample).
    pub(super) fn sample_aggregate(&mut self) {
        let now = self.now_ps;
        // Flows that are sending: a dynamic slot counts only while it carries a flow.
        let rate_pps = (self.flows.iter())
            .filter(|f| f.start_ps <= now && matches!(f.phase, Phase::Persistent | Phase::Sending))
            .map(|f| f.sender.cwnd_pkts() / f.sender.srtt_s())
            .sum();
        self.aggregate.push(AggregateSample {
            time_s: s_from_ps(now),
            rate_pps,
        });
        self.aggregate_taken += 1;
        let next = (self.aggregate_taken as f64 * self.aggregate_every_ps).round() as SimTime;
        if next <= self.end_ps {
            self.queue.push(next, Event::Aggregate);
        }
    }

    /// Closes the run at the current time and computes the summary. Without a drop after the
    /// warm-up, `from_first_congestion` falls back to statistics from the warm-up (as the fluid
    /// engine does).
    pub fn finish(self) -> RunResult {
        let (sc, records) = self.into_records();
        metrics::summarize(&sc, records)
    }

    /// Closes the run at the current time: its scenario and raw records.
    pub(super) fn into_records(mut self) -> (std::sync::Arc<crate::scenario::Scenario>, Records) {
        let now = self.now_ps;
        for port in &mut self.ports {
            port.integrate(now);
        }
        let from = self.measured_from_ps;
        let flow_now: Vec<FlowAcc> = (0..self.flows.len()).map(|f| self.flow_acc(f)).collect();
        let links = self
            .ports
            .iter()
            .zip(&self.start_ports)
            .map(|(port, s)| {
                let a = &port.acc;
                LinkRecord {
                    buffer_pkts: port.buffer().slots as f64,
                    arrived_pkts: (a.arrived - s.arrived) as f64,
                    // The data the link sent in the window, in packets: its exact sending time
                    // at the link's rate, so that a packet whose transmission straddles an edge
                    // counts for the part inside (counting departures, a whole packet, could
                    // put utilization above 1).
                    departed_pkts: s_from_ps(a.data_busy_ps - s.data_busy_ps) * port.capacity_pps,
                    dropped_pkts: (a.dropped - s.dropped) as f64,
                    // In packet·picoseconds over picoseconds: exact until the division.
                    queue_integral: (a.queue_area - s.queue_area) as f64,
                    queue_integral_span: (now - from) as f64,
                    max_queue_pkts: port.q_max as f64,
                    departures_pkts: (a.departed - s.departed) as f64,
                    queue_start_pkts: port.data_len_at_measuring as f64,
                    queue_end_pkts: port.data_len() as f64,
                    dropped_early_pkts: (a.dropped_early - s.dropped_early) as f64,
                    dropped_overflow_pkts: (a.dropped_overflow - s.dropped_overflow) as f64,
                    marked_pkts: (a.marked - s.marked) as f64,
                    sojourn: Some(port.sojourn.clone()),
                    sojourn_l4s: Some(port.sojourn_l4s.clone()),
                }
            })
            .collect();
        let mut events = Vec::new();
        for c in &mut self.clusters {
            c.close();
            events.append(&mut c.take());
        }
        let mut bursts = Vec::new();
        for node in &mut self.nodes {
            node.take_records(&mut bursts, &mut events);
        }
        let flows = flow_now
            .iter()
            .zip(&self.start_flows)
            .map(|(a, s)| FlowRecord {
                sent_pkts: (a.sent - s.sent) as f64,
                delivered_pkts: (a.delivered - s.delivered) as f64,
                dropped_pkts: (a.dropped - s.dropped) as f64,
                cwnd_integral_pkt_s: a.cwnd_integral_pkt_s - s.cwnd_integral_pkt_s,
                reductions: (a.reductions - s.reductions) as f64,
                marked_pkts: (a.marked - s.marked) as f64,
                timeouts: Some((a.timeouts - s.timeouts) as f64),
            })
            .collect();
        // Flows acknowledged whose last packets are still in the network.
        for f in 0..self.flows.len() {
            if self.flows[f].phase == Phase::Draining {
                let r = self.completion(f, false);
                self.completions.push(r);
            }
        }
        let arrivals = self
            .dynamic
            .iter()
            .map(|d| ArrivalRecord {
                group: d.group,
                arrivals: d.arrivals,
                refused: d.refused,
                completed: d.completed,
                active_end: d.active as u64,
            })
            .collect();
        let records = Records {
            engine: "packet".into(),
            duration_s: s_from_ps(now),
            // No time step: the bottleneck's packet time is the natural unit.
            step_s: s_from_ps(self.ports[0].service_ps),
            measured_from_s: s_from_ps(from),
            span_s: s_from_ps(now - from),
            flow_updates: self.events_processed,
            links,
            flows,
            events,
            samples: self.series,
            delay_samples: self.delays,
            warnings: Vec::new(),
            bursts,
            arrivals,
            completions: std::mem::take(&mut self.completions),
            aggregate: self.aggregate,
        };
        (self.scenario, records)
    }
}
