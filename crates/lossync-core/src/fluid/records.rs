//! The engine's statistics: their start, the time series and aggregate samples it records, and
//! the records and summary of a finished run.

use super::checks::region_warnings;
use super::event::close_event;
use super::obs::FluidAssembler;
use super::FluidEngine;
use crate::metrics::{self, AggregateSample, FlowRecord, LinkRecord, Records, RunResult};

impl FluidEngine {
    /// Starts the statistics now: later results are differences from these totals.
    pub(super) fn start_measuring(&mut self, t: f64) {
        self.measuring = true;
        self.measured_from_s = t;
        for (s, l) in self.start_links.iter_mut().zip(&mut self.links) {
            *s = l.acc;
            l.q_max = l.q;
            l.q_at_measuring = l.q;
            if let Some(a) = l.assembler.as_mut() {
                a.start_measuring();
            }
        }
        for (s, f) in self.start_flows.iter_mut().zip(&self.flows) {
            *s = f.acc;
        }
    }

    /// One sample: raw counts over the interval it closes (the metrics turn them into
    /// utilization and rates, `metrics::Series::standard`).
    pub(super) fn record(&mut self) {
        let t = self.now_s();
        let mut cols = self.series.iter_mut();
        let mut push = |v: f64| cols.next().expect("one column per value").push(v);
        push(t);
        for l in &mut self.links {
            push(l.q);
            push(l.interval_departed);
            l.interval_departed = 0.0;
        }
        for f in &mut self.flows {
            push(f.w);
            push(f.acc.delivered - f.delivered_at_record);
            f.delivered_at_record = f.acc.delivered;
        }
        // The queue's integral over the interval and what the link could send in it (their
        // ratio is the mean q/C), and each RTT (base plus the queues of its path, as the sender
        // sees it this step).
        let mut cols = self.delays.iter_mut();
        let mut push = |v: f64| cols.next().expect("one column per value").push(v);
        for l in &mut self.links {
            push(l.acc.q_integral - l.q_integral_at_record);
            push(l.capacity_pps * (t - self.last_record_s));
            l.q_integral_at_record = l.acc.q_integral;
        }
        for f in &self.flows {
            push(if f.started { f.rtt_s } else { f64::NAN });
        }
        self.last_record_s = t;
        self.next_record_step += self.record_every;
    }

    /// One sample of Σ cwnd/RTT over the started flows (the RTT with its queueing delay).
    pub(super) fn sample_aggregate(&mut self) {
        let rate_pps = (self.flows.iter())
            .filter(|f| f.started)
            .map(|f| f.w / f.rtt_s)
            .sum();
        self.aggregate.push(AggregateSample {
            time_s: self.now_s(),
            rate_pps,
        });
        self.next_aggregate_step += self.aggregate_every;
    }

    /// Closes the run and computes the summary. Without a congestion event after the warm-up,
    /// `from_first_congestion` falls back to statistics from the warm-up (and the summary says so
    /// in `measured_from_s` and `congestion_events = 0`).
    pub fn finish(mut self) -> RunResult {
        if self.step_index == self.next_record_step {
            self.record();
        }
        if self.aggregate_every > 0 && self.step_index == self.next_aggregate_step {
            self.sample_aggregate();
        }
        for l in &mut self.links {
            if l.event.active {
                close_event(l, &mut self.event_log);
            }
        }
        let end = self.now_s();
        let from = self.measured_from_s;
        let span = end - from;
        let links = self
            .links
            .iter()
            .zip(&self.start_links)
            .map(|(l, s)| LinkRecord {
                buffer_pkts: l.discipline.buffer().pkts,
                arrived_pkts: l.acc.arrived - s.arrived,
                departed_pkts: l.acc.departed - s.departed,
                dropped_pkts: l.acc.dropped - s.dropped,
                queue_integral: l.acc.q_integral - s.q_integral,
                queue_integral_span: span,
                max_queue_pkts: l.q_max,
                departures_pkts: l.acc.departed - s.departed,
                queue_start_pkts: l.q_at_measuring,
                queue_end_pkts: l.q,
                dropped_early_pkts: l.acc.dropped_early - s.dropped_early,
                dropped_overflow_pkts: l.acc.dropped_overflow - s.dropped_overflow,
                marked_pkts: l.acc.marked - s.marked,
                sojourn: None,
                sojourn_l4s: None,
            })
            .collect();
        let flows = self
            .flows
            .iter()
            .zip(&self.start_flows)
            .map(|(f, s)| FlowRecord {
                sent_pkts: f.acc.sent - s.sent,
                delivered_pkts: f.acc.delivered - s.delivered,
                dropped_pkts: f.acc.dropped - s.dropped,
                cwnd_integral_pkt_s: f.acc.cwnd_integral - s.cwnd_integral,
                reductions: f.acc.reductions - s.reductions,
                marked_pkts: f.acc.marked - s.marked,
                timeouts: self.tcp_model.then_some(f.acc.timeouts - s.timeouts),
            })
            .collect();
        let records = Records {
            engine: "fluid".into(),
            duration_s: end,
            step_s: self.dt,
            measured_from_s: from,
            span_s: span,
            flow_updates: self.flow_updates,
            links,
            flows,
            events: self.event_log,
            samples: self.series,
            delay_samples: self.delays,
            warnings: region_warnings(&self.scenario),
            bursts: (self.links.into_iter())
                .filter_map(|l| l.assembler.map(FluidAssembler::finish))
                .collect(),
            aggregate: self.aggregate,
            ..Records::default()
        };
        metrics::summarize(&self.scenario, records)
    }
}
