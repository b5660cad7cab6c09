//! XCP's router (Katabi, Handley, Rohrs, "Congestion Control for High Bandwidth-Delay
//! Product Networks", SIGCOMM 2002, §3.5; docs/model.md §3.8) as a queue discipline for both
//! engines: its buffer is drop-tail; it signals by feedback, not by drops. Once per
//! control interval `d` (the mean RTT of the traffic), the efficiency controller asks for an
//! aggregate change `φ = α·d·S − β·Q` (S = spare bandwidth against the target, Q = persistent
//! queue) and the fairness controller shuffles `h = max(0, γ·y·d − |φ|)`; the pools are handed
//! out per packet so that increases are equal per flow (AI) and decreases proportional to rate
//! (MD). Units: packets, packets per second, seconds (all packets the link's size).

use super::{tail, Arrival, Buffer, Discipline, Feedback, LinkContext, QueueParams, Site, Verdict};
use crate::error::Result;
use crate::params::Params;
use crate::rng::Rng;
use crate::scenario::limits::MAX_XCP_GAIN;
use serde::Serialize;

/// The controller's constants.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct XcpParams {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    /// Fraction of the capacity the controller aims at (it is told `target·C`).
    pub target: f64,
    /// Count ACK bytes in the input traffic `y` (a router sees every byte; an implementation
    /// that only accounts for packets with a congestion header does not).
    pub count_acks: bool,
}

impl XcpParams {
    /// Katabi et al. 2002 §3.5: α = 0.4, β = 0.226 (stable for any delay and number of flows:
    /// 0 < α < π/(4√2), β = α²√2), γ = 0.1, full capacity.
    pub const ORIGINAL: XcpParams = XcpParams {
        alpha: 0.4,
        beta: 0.226,
        gamma: 0.1,
        target: 1.0,
        count_acks: true,
    };
    /// Seed 004 (Alparslan, Arakawa, Murata 2006): α = 0.2, β = 0.056 (≈ 0.2²√2), γ = 0.05,
    /// 90% of the capacity.
    pub const CONSERVATIVE: XcpParams = XcpParams {
        alpha: 0.2,
        beta: 0.056,
        gamma: 0.05,
        target: 0.9,
        count_acks: true,
    };
}

impl QueueParams for XcpParams {
    const NAME: &'static str = "xcp";
    const ABOUT: &'static str =
        "XCP router (Katabi et al. 2002): drop-tail buffer, feedback in every data packet";
    const FLUID: bool = true;

    /// A preset (`original`, the paper's; `conservative`, seed 004's) and any constant over it.
    fn read(p: &mut Params, _site: Site) -> Result<Self> {
        let base = match p.choice("preset", &["original", "conservative"])? {
            "original" => XcpParams::ORIGINAL,
            _ => XcpParams::CONSERVATIVE,
        };
        let gain = |v: f64| v > 0.0 && v <= MAX_XCP_GAIN;
        const GAIN: &str =
            "in (0, 1]: a fraction of the spare bandwidth or of the queue per control interval";
        Ok(XcpParams {
            alpha: p.f64("alpha", base.alpha, gain, GAIN)?,
            beta: p.f64("beta", base.beta, gain, GAIN)?,
            gamma: p.f64(
                "gamma",
                base.gamma,
                |v| (0.0..=1.0).contains(&v),
                "in [0, 1]",
            )?,
            target: p.f64("target", base.target, |v| v > 0.0 && v <= 1.0, "in (0, 1]")?,
            count_acks: p.bool("count_acks", true)?,
        })
    }

    fn build(&self, link: LinkContext) -> Box<dyn Discipline> {
        Box::new(Xcp::new(*self, link))
    }
}

/// What the link saw during one control interval.
#[derive(Debug, Clone, Copy, Default)]
pub struct IntervalTotals {
    /// Everything that arrived, in packets of the link's size (ACKs count by their bytes): the
    /// input traffic `y·d`.
    pub input_pkts: f64,
    /// Data packets that arrived (with a congestion header).
    pub packets: f64,
    /// Σ over those packets of rtt_i / cwnd_i (s per packet of window).
    pub rtt_over_cwnd: f64,
    /// Σ over those packets of rtt_i (s).
    pub rtt_sum: f64,
}

impl IntervalTotals {
    /// `pkts` data packets (also input traffic) of a flow whose header says window `cwnd_pkts`
    /// and RTT `rtt_s`; a header without an RTT yet counts only as traffic.
    pub fn add(&mut self, pkts: f64, rtt_s: f64, cwnd_pkts: f64) {
        self.input_pkts += pkts;
        self.packets += pkts;
        if cwnd_pkts > 0.0 && rtt_s > 0.0 {
            self.rtt_over_cwnd += pkts * rtt_s / cwnd_pkts;
            self.rtt_sum += pkts * rtt_s;
        }
    }
}

/// The controllers at the end of an interval of length `d_s`: `capacity_pps` the real capacity,
/// `queue_pkts` the persistent queue (the minimum over the interval). Katabi et al. §3.5:
/// `ξ_p = P / (d · Σ rtt_i·s_i/cwnd_i)`, `ξ_n = N / (d · Σ s_i)`.
pub fn control(
    p: &XcpParams,
    d_s: f64,
    capacity_pps: f64,
    queue_pkts: f64,
    t: &IntervalTotals,
) -> Feedback {
    if d_s <= 0.0 || t.packets <= 0.0 {
        return Feedback::default();
    }
    let y = t.input_pkts.max(t.packets) / d_s;
    let spare = p.target * capacity_pps - y;
    let phi = p.alpha * d_s * spare - p.beta * queue_pkts;
    let h = (p.gamma * y * d_s - phi.abs()).max(0.0);
    let pos = h + phi.max(0.0);
    let neg = h + (-phi).max(0.0);
    Feedback {
        xi_p: if t.rtt_over_cwnd > 0.0 {
            pos / (d_s * t.rtt_over_cwnd)
        } else {
            0.0
        },
        xi_n: neg / (d_s * t.packets),
    }
}

/// An XCP router on a link direction: this interval's totals and the feedback of the last one.
#[derive(Debug)]
pub struct Xcp {
    params: XcpParams,
    buffer: Buffer,
    capacity_pps: f64,
    totals: IntervalTotals,
    /// The smallest backlog seen this interval (the persistent queue): per arrival in the
    /// packet engine, per step in the fluid engine (`usize::MAX` / ∞: none seen yet).
    q_min_pkts: usize,
    q_min_fluid: f64,
    feedback: Feedback,
    /// The current control interval (the mean RTT of the last interval's packets).
    interval_s: f64,
    /// Fluid engine: when the current interval ends.
    ends_s: f64,
}

impl Xcp {
    pub fn new(params: XcpParams, link: LinkContext) -> Self {
        Xcp {
            params,
            buffer: link.buffer,
            capacity_pps: link.capacity_pps,
            totals: IntervalTotals::default(),
            q_min_pkts: usize::MAX,
            q_min_fluid: f64::INFINITY,
            feedback: Feedback::default(),
            interval_s: link.first_interval_s,
            ends_s: link.first_interval_s,
        }
    }
}

impl Discipline for Xcp {
    fn acts_after_enqueue(&self) -> bool {
        false
    }

    fn buffer(&self) -> Buffer {
        self.buffer
    }

    /// §3.5: a queued data packet is accounted, then its feedback cut to this router's; an ACK
    /// counts as input traffic by its bytes (if `count_acks`).
    fn enqueue(&mut self, _now_ps: u64, backlog: usize, a: Arrival<'_>, _rng: &mut Rng) -> Verdict {
        let verdict = tail(backlog, self.buffer);
        if verdict != Verdict::Queued {
            return verdict;
        }
        match a.header {
            None => {
                if self.params.count_acks {
                    self.totals.input_pkts += a.size_pkts;
                }
            }
            Some(h) => {
                let (w, r) = (h.cwnd_pkts as f64, h.rtt_s as f64);
                self.totals.add(1.0, r, w);
                self.q_min_pkts = self.q_min_pkts.min(backlog);
                h.feedback_pkts = h.feedback_pkts.min(self.feedback.per_packet(w, r) as f32);
            }
        }
        verdict
    }

    fn feedback(&self) -> Option<&Feedback> {
        Some(&self.feedback)
    }

    fn end_interval(&mut self, backlog: usize) -> Option<f64> {
        let q = if self.q_min_pkts == usize::MAX {
            backlog
        } else {
            self.q_min_pkts
        };
        self.feedback = control(
            &self.params,
            self.interval_s,
            self.capacity_pps,
            q as f64,
            &self.totals,
        );
        if self.totals.packets > 0.0 && self.totals.rtt_sum > 0.0 {
            self.interval_s = self.totals.rtt_sum / self.totals.packets;
        }
        self.totals = IntervalTotals::default();
        self.q_min_pkts = usize::MAX;
        Some(self.interval_s)
    }

    fn fluid_arrivals(&mut self, pkts: f64, rtt_s: f64, cwnd_pkts: f64) {
        if pkts > 0.0 {
            self.totals.add(pkts, rtt_s, cwnd_pkts);
        }
    }

    fn fluid_step_end(&mut self, q_pkts: f64, t_end_s: f64, capacity_pps: f64) {
        self.q_min_fluid = self.q_min_fluid.min(q_pkts);
        if t_end_s < self.ends_s {
            return;
        }
        let q = if self.q_min_fluid.is_finite() {
            self.q_min_fluid
        } else {
            0.0
        };
        self.feedback = control(&self.params, self.interval_s, capacity_pps, q, &self.totals);
        if self.totals.packets > 0.0 {
            self.interval_s = self.totals.rtt_sum / self.totals.packets;
        }
        self.totals = IntervalTotals::default();
        self.q_min_fluid = f64::INFINITY;
        self.ends_s = t_end_s + self.interval_s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One interval of flows `(window, rtt)` each sending window/rtt packets per second.
    fn totals(flows: &[(f64, f64)], d: f64) -> IntervalTotals {
        let mut t = IntervalTotals::default();
        for &(w, r) in flows {
            t.add(w / r * d, r, w);
        }
        t
    }

    /// Summed over one interval, the per-packet feedback hands out exactly the pools: every flow
    /// gains the same throughput `P/(N·d)` and loses in proportion to its rate (Katabi §3.5).
    #[test]
    fn per_packet_feedback_adds_up_to_the_pools() {
        let p = XcpParams::ORIGINAL;
        let d = 0.1;
        let cap = 10_000.0;
        // Two flows: windows 100 and 300 packets, RTTs 0.1 and 0.1 s: rates 1000 and 3000 pkt/s,
        // so 100 and 300 packets in the interval; y = 4000 pkt/s, spare 6000, no queue.
        let flows = [(100.0, 0.1), (300.0, 0.1)];
        let fb = control(&p, d, cap, 0.0, &totals(&flows, d));
        // φ = 0.4·0.1·6000 = 240 packets; h = max(0, 0.1·4000·0.1 − 240) = 0: P = 240, N = 0.
        let gains: Vec<f64> = flows
            .iter()
            .map(|&(w, r)| w / r * d * fb.per_packet(w, r))
            .collect();
        assert!((gains[0] - 120.0).abs() < 1e-9 && (gains[1] - 120.0).abs() < 1e-9);
        // Overload: y = 12,000 against 10,000, queue 50: φ = 0.4·0.1·(−2000) − 0.226·50 = −91.3;
        // h = max(0, 0.1·12000·0.1 − 91.3) = 28.7: P = 28.7, N = 120; the decrease splits by rate.
        let flows = [(300.0, 0.1), (900.0, 0.1)];
        let fb = control(&p, d, cap, 50.0, &totals(&flows, d));
        let total: f64 = flows
            .iter()
            .map(|&(w, r)| w / r * d * fb.per_packet(w, r))
            .sum();
        assert!((total - (-91.3)).abs() < 1e-9, "{total}");
        let loss = |(w, r): (f64, f64)| w / r * d * fb.xi_n * r;
        assert!((loss(flows[1]) / loss(flows[0]) - 3.0).abs() < 1e-12);
    }
}
