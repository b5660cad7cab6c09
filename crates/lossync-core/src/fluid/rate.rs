//! Delivery-rate samples from the fluid, for model-based laws (BBR).
//!
//! A model-based law is written once, for the packet engine's per-ACK samples
//! (draft-cheng-iccrg-delivery-rate-estimation); the fluid engine feeds the same law one sample
//! per step, built from its ACK clock under the `tcp` loss model:
//!
//! - delivery rate: the packets acknowledged over the last RTT, over that RTT: the draft's
//!   `(C.delivered − P.delivered) / interval` for the data sent one RTT ago, whose interval is at
//!   least the min RTT (shorter ones are invalid, draft §3.3, Linux `tcp_rate_gen`). In a fluid
//!   FIFO a flow's departures are its share of the arrivals times the capacity (`x_i / Σx · C` on
//!   a congested link), the delivery rate of Scherrer, Legner, Perrig, Schmid, "Model-based
//!   insights on the performance, fairness, and stability of BBR", IMC 2022, eq. (3); the ACKs
//!   bring it back one return delay later, as to a packet sender. One step's deliveries over the
//!   step would not do: a step in which another flow pauses (its recovery, its probe-RTT) hands
//!   this one most of the link for that step, and the windowed maximum keeps that spike for 10
//!   rounds;
//! - RTT: the path's base RTT plus its queues' delays now;
//! - rounds: a sample's `prior_delivered` is the flow's delivered count one RTT ago (what was
//!   delivered when the data now acknowledged was sent), so a law that ends a round when data
//!   sent after its start is acknowledged ends one per RTT, as a round trip is in the fluid limit;
//! - the sampled data's `tx_in_flight` and the losses since it was sent (BBRv3's loss rate per
//!   round): the flow's packets in flight one RTT ago, and the losses that reached the sender
//!   since then;
//! - recovery: a loss event of the `tcp` model opens fast recovery for one RTT, a timeout the
//!   loss state for one RTT; data sent while the law marks itself application-limited (BBR's
//!   probe-RTT) gives application-limited samples for one RTT.

use crate::cc::{RateSample, RecoveryState};

/// A step's end: the flow's counts then.
#[derive(Debug, Clone, Copy, Default)]
struct Past {
    delivered: f64,
    lost: f64,
    inflight: f64,
}

#[derive(Debug, Clone)]
pub struct RateClock {
    /// Packets delivered (acknowledged) since the flow started, and lost.
    delivered: f64,
    lost: f64,
    /// The counts at the end of each of the last `history.len()` steps, by step index modulo the
    /// length (longer than the longest RTT in steps).
    history: Vec<Past>,
    fast_until_s: f64,
    timeout_until_s: f64,
    app_limited_until_s: f64,
}

impl RateClock {
    /// A clock remembering `steps` steps (more than the longest RTT the flow can see).
    pub fn new(steps: usize) -> Self {
        RateClock {
            delivered: 0.0,
            lost: 0.0,
            history: vec![Past::default(); steps.max(2)],
            fast_until_s: f64::NEG_INFINITY,
            timeout_until_s: f64::NEG_INFINITY,
            app_limited_until_s: f64::NEG_INFINITY,
        }
    }

    /// A loss event reaches the sender at `t_s`: fast recovery until one RTT later.
    pub fn loss_event(&mut self, t_s: f64, rtt_s: f64) {
        self.fast_until_s = t_s + rtt_s;
    }

    /// A retransmission timeout at `t_s`.
    pub fn timeout(&mut self, t_s: f64, rtt_s: f64) {
        self.timeout_until_s = t_s + rtt_s;
    }

    /// The law marked what is sent at `t_s` application-limited.
    pub fn app_limited(&mut self, t_s: f64, rtt_s: f64) {
        self.app_limited_until_s = t_s + rtt_s;
    }

    /// This step's sample: step `step` of length `dt_s` at `t_s`, `acked` and `lost` packets
    /// reaching the sender, in flight before and after them.
    #[allow(clippy::too_many_arguments)]
    pub fn sample(
        &mut self,
        step: u64,
        t_s: f64,
        dt_s: f64,
        rtt_s: f64,
        acked: f64,
        lost: f64,
        prior_inflight: f64,
        inflight: f64,
    ) -> RateSample {
        let len = self.history.len() as u64;
        // (Less a hair: 20 ms over 1 ms steps is 20.000000000000004.)
        let back = ((rtt_s / dt_s - 1e-9).ceil() as u64).min(len - 1);
        let prior = if step >= back {
            self.history[((step - back) % len) as usize]
        } else {
            Past::default()
        };
        self.delivered += acked;
        self.lost += lost;
        self.history[(step % len) as usize] = Past {
            delivered: self.delivered,
            lost: self.lost,
            inflight,
        };
        // The deliveries since the sampled data left: `back` steps, fewer at the start.
        let span_steps = back.min(step + 1).max(1);
        RateSample {
            delivered_pkts: self.delivered - prior.delivered,
            interval_s: if acked > 0.0 {
                span_steps as f64 * dt_s
            } else {
                0.0
            },
            rtt_s,
            is_app_limited: t_s < self.app_limited_until_s,
            acked_pkts: acked,
            lost_pkts: lost,
            tx_in_flight_pkts: prior.inflight,
            lost_since_sent_pkts: self.lost - prior.lost,
            prior_inflight_pkts: prior_inflight,
            inflight_pkts: inflight,
            prior_delivered: prior.delivered as u64,
            delivered: self.delivered as u64,
            recovery: if t_s < self.timeout_until_s {
                RecoveryState::Timeout
            } else if t_s < self.fast_until_s {
                RecoveryState::Fast
            } else {
                RecoveryState::Open
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow acknowledging 10 packets per 1 ms step with a 20 ms RTT: every sample's
    /// `prior_delivered` is the count 20 steps earlier, so rounds of a law come once per RTT.
    #[test]
    fn prior_delivered_is_one_rtt_old() {
        let mut c = RateClock::new(64);
        for step in 0..200u64 {
            let s = c.sample(step, step as f64 * 1e-3, 1e-3, 0.02, 10.0, 0.0, 50.0, 40.0);
            assert_eq!(s.delivered, 10 * (step + 1));
            let expect = if step >= 20 { 10 * (step - 20 + 1) } else { 0 };
            assert_eq!(s.prior_delivered, expect, "step {step}");
            assert!((s.delivered_pkts / s.interval_s - 10_000.0).abs() < 1e-6);
        }
    }

    /// A sample spans the RTT since its data left, as the draft's interval does (at least the
    /// min RTT): one step that brings 30 packets among steps of 10 moves the 20 ms RTT's rate
    /// from 10,000 to 11,000 packets/s, not to one step's 30,000.
    #[test]
    fn a_samples_rate_is_over_the_rtt_not_one_step() {
        let mut c = RateClock::new(64);
        for step in 0..100u64 {
            let acked = if step == 60 { 30.0 } else { 10.0 };
            let s = c.sample(step, step as f64 * 1e-3, 1e-3, 0.02, acked, 0.0, 50.0, 40.0);
            let rate = s.delivered_pkts / s.interval_s;
            let want = if (60..80).contains(&step) {
                11_000.0
            } else {
                10_000.0
            };
            assert!((rate - want).abs() < 1e-6, "step {step}: {rate}");
        }
    }
}
