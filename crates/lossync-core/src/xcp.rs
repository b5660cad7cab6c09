//! XCP's router law (Katabi, Handley, Rohrs, "Congestion Control for High Bandwidth-Delay
//! Product Networks", SIGCOMM 2002, §3.5; models.md §3.8), shared by both engines: once per
//! control interval `d` (the mean RTT of the traffic), the efficiency controller asks for an
//! aggregate change `φ = α·d·S − β·Q` (S = spare bandwidth against the target, Q = persistent
//! queue) and the fairness controller shuffles `h = max(0, γ·y·d − |φ|)`; the pools are handed
//! out per packet so that increases are equal per flow (AI) and decreases proportional to rate
//! (MD). Units: packets, packets per second, seconds (all packets the link's size).

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

/// Per-packet feedback coefficients for the next interval: a packet of a flow with window `w`
/// and RTT `r` gets `ξ_p·r²/w − ξ_n·r` packets of window change.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Feedback {
    pub xi_p: f64,
    pub xi_n: f64,
}

impl Feedback {
    pub fn per_packet(&self, cwnd_pkts: f64, rtt_s: f64) -> f64 {
        if rtt_s <= 0.0 || cwnd_pkts <= 0.0 {
            return 0.0;
        }
        self.xi_p * rtt_s * rtt_s / cwnd_pkts - self.xi_n * rtt_s
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
