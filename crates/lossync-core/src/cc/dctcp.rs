//! DCTCP (RFC 8257; Alizadeh et al., SIGCOMM 2010): Reno's growth, and a reduction by the extent
//! of congestion. The sender keeps α, an EWMA of the fraction of its packets marked CE, updated
//! once per window of data: `α ← (1 − g)·α + g·F` (RFC 8257 §3.3, g = 1/16); on an ECN echo,
//! at most once per window, `cwnd ← cwnd·(1 − α/2)`. A loss is answered as Reno's, halving
//! (RFC 8257 §3.5). Linux `net/ipv4/tcp_dctcp.c` (6.x): `dctcp_shift_g` = 4, α starts at 1
//! (`dctcp_alpha_on_init` = 1024/1024).

use super::{CcContext, CongestionControl, EcnUse, LawParams, Params};
use crate::error::Result;
use serde::Serialize;

/// RFC 8257 §3.3: "g ... a value of 1/16 is recommended"; Linux `dctcp_shift_g` = 4.
pub const G: f64 = 1.0 / 16.0;

/// DCTCP's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DctcpParams {
    /// The EWMA gain of α.
    pub g: f64,
    /// α before the first window is measured.
    pub alpha_init: f64,
}

impl LawParams for DctcpParams {
    const NAME: &'static str = "dctcp";
    const ABOUT: &'static str =
        "DCTCP (RFC 8257): Reno growth, ×(1−α/2) per marked window, α = EWMA of marks (g=1/16)";
    const ECN: EcnUse = EcnUse::Scalable { l4s: false };

    fn read(p: &mut Params) -> Result<Self> {
        Ok(DctcpParams {
            g: p.f64("g", G, |v| v > 0.0 && v <= 1.0, "in (0, 1]")?,
            alpha_init: p.f64("alpha_init", 1.0, |v| (0.0..=1.0).contains(&v), "in [0, 1]")?,
        })
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Dctcp {
            alpha: MarkedFraction::new(self.g, self.alpha_init),
        })
    }
}

/// α, the EWMA of the marked fraction per window of data (RFC 8257 §3.3), shared by the scalable
/// laws. A window ends once as many packets as the window held at its start are delivered.
#[derive(Debug, Clone, Copy)]
pub struct MarkedFraction {
    g: f64,
    pub alpha: f64,
    delivered: f64,
    marked: f64,
    /// Packets the current observation window spans.
    window: f64,
}

impl MarkedFraction {
    pub fn new(g: f64, alpha: f64) -> Self {
        MarkedFraction {
            g,
            alpha,
            delivered: 0.0,
            marked: 0.0,
            window: 0.0,
        }
    }

    /// `delivered` packets, `marked` of them CE, with the window at `cwnd` now.
    pub fn count(&mut self, cwnd: f64, delivered: f64, marked: f64) {
        if self.window == 0.0 {
            self.window = cwnd.max(1.0);
        }
        self.delivered += delivered;
        self.marked += marked;
        if self.delivered >= self.window {
            let f = (self.marked / self.delivered).min(1.0);
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            self.delivered = 0.0;
            self.marked = 0.0;
            self.window = cwnd.max(1.0);
        }
    }

    /// The window after a marked window: `cwnd·(1 − α/2)` (RFC 8257 §3.3).
    pub fn reduce(&self, cwnd: f64) -> f64 {
        cwnd * (1.0 - self.alpha / 2.0)
    }
}

#[derive(Debug, Clone)]
pub struct Dctcp {
    pub alpha: MarkedFraction,
}

impl CongestionControl for Dctcp {
    /// RFC 8257 §3.3: congestion avoidance as standard TCP, one packet per RTT.
    fn on_ack(&mut self, _ctx: &CcContext, cwnd: f64, acked: f64) -> f64 {
        cwnd + acked / cwnd
    }

    /// RFC 8257 §3.5: a loss halves the window, as for standard TCP.
    fn on_loss(&mut self, _ctx: &CcContext, cwnd: f64, reductions: f64) -> f64 {
        cwnd * super::retained(0.5, reductions)
    }

    fn on_ecn(&mut self, _ctx: &CcContext, cwnd: f64) -> f64 {
        self.alpha.reduce(cwnd)
    }

    fn on_ce_counts(&mut self, _ctx: &CcContext, cwnd: f64, delivered: f64, marked: f64) {
        self.alpha.count(cwnd, delivered, marked);
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn alpha_is_the_ewma_of_the_marked_fraction_per_window() {
        // Windows of 10 packets, all marked: α_n = 1 − (1 − g)^n · (1 − α_0) with α_0 = 0.
        let mut m = MarkedFraction::new(G, 0.0);
        for n in 1..=5 {
            for _ in 0..10 {
                m.count(10.0, 1.0, 1.0);
            }
            let want = 1.0 - (1.0 - G).powi(n);
            assert!((m.alpha - want).abs() < 1e-12, "{n}: {} vs {want}", m.alpha);
        }
        // One window with 3 of 10 marked: α ← (15/16)·α + 0.3/16.
        let before = m.alpha;
        for k in 0..10 {
            m.count(10.0, 1.0, if k < 3 { 1.0 } else { 0.0 });
        }
        assert!((m.alpha - (before * 15.0 / 16.0 + 0.3 / 16.0)).abs() < 1e-12);
    }

    #[test]
    fn reduces_by_half_alpha_on_marks_and_halves_on_loss() {
        let mut cc = default_law("dctcp");
        // α starts at 1 (Linux dctcp_alpha_on_init): the first marked window halves.
        assert_eq!(cc.on_ecn(&ctx(0.0, 0.1), 100.0), 50.0);
        // A window of 100 packets with none marked: α = 15/16, reduction (1 − 15/32).
        for _ in 0..100 {
            cc.on_ce_counts(&ctx(0.0, 0.1), 100.0, 1.0, 0.0);
        }
        assert!((cc.on_ecn(&ctx(0.0, 0.1), 100.0) - 100.0 * (1.0 - 15.0 / 32.0)).abs() < 1e-9);
        assert_eq!(cc.on_loss(&ctx(0.0, 0.1), 100.0, 1.0), 50.0);
    }
}
