//! BIC-TCP as in Linux `net/ipv4/tcp_bic.c`: binary search toward the window of the last loss
//! `W_max`, then max probing above it; Reno at or below `low_window`.
//!
//! Linux counts `cnt` ACKs per +1 packet; with one packet per ACK that is an increase of
//! `inc = cwnd/cnt` packets per RTT, applied here as `cwnd += inc·acked/cwnd`:
//!
//! ```text
//! cwnd ≤ low_window:                    inc = 1                              (cnt = cwnd)
//! cwnd < W_max, d = (W_max − cwnd)/B:   inc = S_max if d > S_max,            (cnt = cwnd/S_max)
//!                                             B/smooth_part if d ≤ 1,         (cnt = cwnd·smooth/B)
//!                                             d otherwise                     (cnt = cwnd/d)
//! cwnd ≥ W_max:                         inc = B/smooth_part if cwnd < W_max + B,
//!                                             (cwnd − W_max)/(B − 1) if cwnd < W_max + S_max(B − 1),
//!                                             S_max otherwise
//! before the first loss:                inc ≥ cwnd/20 (cnt ≤ 20: at least 5 % per RTT)
//! loss: W_max = cwnd·(1 + β)/2 if cwnd < W_max (fast convergence) else cwnd;
//!       cwnd ← β·cwnd above low_window, cwnd/2 at or below it
//! ```
//!
//! Sources: L. Xu, K. Harfoush, I. Rhee, "Binary Increase Congestion Control for Fast, Long
//! Distance Networks", INFOCOM 2004; Linux `tcp_bic.c` (constants, regions, loss rule);
//! docs/model.md §3.6. Linux's integer arithmetic (`d` truncated, `cnt` ≥ 1), its delayed-ACK ratio
//! correction of `cnt`, and its 1/32 s update throttle are not modelled; `d` is real-valued.

use super::{CcContext, CongestionControl, LawParams, Params, MAX_WINDOW_PKTS};
use crate::error::Result;
use serde::Serialize;

/// Linux `BICTCP_B`: binary search goes to `(max + min)/B` of the distance.
pub const SEARCH_DIVISOR: f64 = 4.0;
/// Linux `max_increment` (S_max): largest increase per RTT, packets.
pub const MAX_INCREMENT: f64 = 16.0;
/// Linux `low_window`: Reno at or below this window.
pub const LOW_WINDOW: f64 = 14.0;
/// Linux `beta = 819` over `BICTCP_BETA_SCALE = 1024`: retained fraction.
pub const BETA: f64 = 819.0 / 1024.0;
/// Linux `smooth_part`: increase `B/smooth_part` per RTT close to `W_max`.
pub const SMOOTH_PART: f64 = 20.0;
/// Linux `bictcp_update`: `if (ca->cnt > 20) ca->cnt = 20` before the first loss (5 %/RTT).
const FIRST_LOSS_MAX_CNT: f64 = 20.0;

/// Linux's constants and module parameters are C ints.
const MAX_INT: f64 = i32::MAX as f64;

/// BIC's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BicParams {
    /// `B`: the binary search goes to `(max + min)/B` of the distance.
    pub search_divisor: f64,
    /// `S_max`, the largest increase per RTT (Linux `max_increment`, the parameter's former
    /// name, still accepted).
    pub s_max: f64,
    /// Reno at or below this window.
    pub low_window: f64,
    /// Fraction retained at a loss.
    pub beta: f64,
    pub smooth_part: f64,
    pub fast_convergence: bool,
}

impl LawParams for BicParams {
    const NAME: &'static str = "bic";
    const ABOUT: &'static str =
        "BIC-TCP (Linux tcp_bic.c): binary search to W_max, B=4, S_max=16, beta=819/1024";

    fn read(p: &mut Params) -> Result<Self> {
        Ok(BicParams {
            // Window-sized parameters are at most TCP's largest window (cc::MAX_WINDOW_PKTS); the
            // divisors, at most Linux's 32-bit ints (`BICTCP_B`, the `smooth_part` parameter).
            search_divisor: p.f64(
                "search_divisor",
                SEARCH_DIVISOR,
                |v| v > 1.0 && v <= MAX_INT,
                "in (1, 2147483647] (Linux: an int)",
            )?,
            s_max: p.f64_or_former(
                "s_max",
                "max_increment",
                MAX_INCREMENT,
                |v| v > 0.0 && v <= MAX_WINDOW_PKTS,
                "in (0, 2.7e7] packets per RTT (TCP's largest window)",
            )?,
            low_window: p.f64(
                "low_window",
                LOW_WINDOW,
                |v| (0.0..=MAX_WINDOW_PKTS).contains(&v),
                "in [0, 2.7e7] packets (TCP's largest window)",
            )?,
            beta: p.f64("beta", BETA, |v| v > 0.0 && v < 1.0, "in (0, 1)")?,
            smooth_part: p.f64(
                "smooth_part",
                SMOOTH_PART,
                |v| v > 0.0 && v <= MAX_INT,
                "in (0, 2147483647] (Linux: an int)",
            )?,
            fast_convergence: p.bool("fast_convergence", true)?,
        })
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Bic {
            events: Default::default(),
            b: self.search_divisor,
            s_max: self.s_max,
            low_window: self.low_window,
            beta: self.beta,
            smooth_part: self.smooth_part,
            fast_convergence: self.fast_convergence,
            w_max: 0.0,
            lost: false,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Bic {
    events: super::EventCounter,
    b: f64,
    s_max: f64,
    low_window: f64,
    beta: f64,
    smooth_part: f64,
    fast_convergence: bool,
    /// Linux `last_max_cwnd`; 0 before the first loss.
    w_max: f64,
    /// Whether the flow has had a loss (ends the 5 %/RTT floor).
    lost: bool,
}

impl Bic {
    /// Increase per RTT at window `w` (packets).
    pub fn inc_per_rtt(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 1.0;
        }
        let b = self.b;
        let inc = if w < self.w_max {
            let d = (self.w_max - w) / b;
            if d > self.s_max {
                self.s_max
            } else if d <= 1.0 {
                b / self.smooth_part
            } else {
                d
            }
        } else if w < self.w_max + b {
            b / self.smooth_part
        } else if w < self.w_max + self.s_max * (b - 1.0) {
            (w - self.w_max) / (b - 1.0)
        } else {
            self.s_max
        };
        if self.lost {
            inc
        } else {
            inc.max(w / FIRST_LOSS_MAX_CNT)
        }
    }
}

impl CongestionControl for Bic {
    fn on_ack(&mut self, _ctx: &CcContext, cwnd: f64, acked: f64) -> f64 {
        cwnd + self.inc_per_rtt(cwnd) * acked / cwnd
    }

    fn on_loss(&mut self, _ctx: &CcContext, cwnd: f64, reductions: f64) -> f64 {
        if self.events.new_event(reductions) {
            self.w_max = if self.fast_convergence && cwnd < self.w_max {
                cwnd * (1.0 + self.beta) / 2.0
            } else {
                cwnd
            };
            self.lost = true;
        }
        let retained = if cwnd <= self.low_window {
            0.5
        } else {
            self.beta
        };
        cwnd * super::retained(retained, reductions)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use serde_json::Value;

    fn bic() -> Bic {
        Bic {
            events: Default::default(),
            b: SEARCH_DIVISOR,
            s_max: MAX_INCREMENT,
            low_window: LOW_WINDOW,
            beta: BETA,
            smooth_part: SMOOTH_PART,
            fast_convergence: true,
            w_max: 0.0,
            lost: false,
        }
    }

    #[test]
    fn increments_before_the_first_loss() {
        let c = bic();
        // ≤ 14: Reno, 1 per RTT (cnt = cwnd).
        assert_eq!(c.inc_per_rtt(10.0), 1.0);
        assert_eq!(c.inc_per_rtt(14.0), 1.0);
        // W_max = 0, so cwnd ≥ W_max: 30 < 0 + 16·3 = 48 → (30 − 0)/3 = 10 (≥ 30/20 = 1.5).
        assert_eq!(c.inc_per_rtt(30.0), 10.0);
        // 100 ≥ 48 → S_max = 16 (≥ 100/20 = 5).
        assert_eq!(c.inc_per_rtt(100.0), 16.0);
        // 1000: S_max = 16 < 1000/20 = 50, and cnt ≤ 20 means at least 5 % per RTT → 50.
        assert_eq!(c.inc_per_rtt(1000.0), 50.0);
    }

    #[test]
    fn increments_after_a_loss_at_1000() {
        let mut c = bic();
        // Loss at 1000: W_max = 1000, cwnd = 1000·819/1024 = 799.8047.
        let w = c.on_loss(&ctx(0.0, 0.1), 1000.0, 1.0);
        assert!((w - 799.8046875).abs() < 1e-9);
        // Binary search: (1000 − 800)/4 = 50 > 16 → 16 (linear part).
        assert_eq!(c.inc_per_rtt(800.0), 16.0);
        // (1000 − 960)/4 = 10 → 10.
        assert_eq!(c.inc_per_rtt(960.0), 10.0);
        // (1000 − 997)/4 = 0.75 ≤ 1 → smooth: 4/20 = 0.2 (no 5 % floor after a loss).
        assert!((c.inc_per_rtt(997.0) - 0.2).abs() < 1e-12);
        // Max probing: 1002 < 1000 + 4 → 0.2; 1012 < 1048 → (1012 − 1000)/3 = 4; 1100 → 16.
        assert!((c.inc_per_rtt(1002.0) - 0.2).abs() < 1e-12);
        assert!((c.inc_per_rtt(1012.0) - 4.0).abs() < 1e-12);
        assert_eq!(c.inc_per_rtt(1100.0), 16.0);
        // Per ACK at 800: 800 + 16/800 = 800.02; a fluid step of 80 ACKs: 800 + 16·80/800 = 801.6.
        assert!((c.on_ack(&ctx(0.0, 0.1), 800.0, 1.0) - 800.02).abs() < 1e-12);
        assert!((c.on_ack(&ctx(0.0, 0.1), 800.0, 80.0) - 801.6).abs() < 1e-9);
    }

    #[test]
    fn loss_rules() {
        let mut c = bic();
        c.on_loss(&ctx(0.0, 0.1), 1000.0, 1.0);
        // Second loss below W_max (900 < 1000): fast convergence
        // W_max = 900·(1024 + 819)/2048 = 809.912; cwnd = 900·819/1024 = 719.824.
        let w = c.on_loss(&ctx(1.0, 0.1), 900.0, 1.0);
        assert!((w - 719.82421875).abs() < 1e-9, "{w}");
        assert!((c.w_max - 809.912109375).abs() < 1e-9, "{}", c.w_max);
        // Without fast convergence: W_max = 900.
        let mut c = bic();
        c.fast_convergence = false;
        c.on_loss(&ctx(0.0, 0.1), 1000.0, 1.0);
        c.on_loss(&ctx(1.0, 0.1), 900.0, 1.0);
        assert_eq!(c.w_max, 900.0);
        // At or below low_window: halve (14 → 7); just above it: ×819/1024 (15 → 11.997).
        let mut cc = default_law("bic");
        assert_eq!(cc.on_loss(&ctx(0.0, 0.1), 14.0, 1.0), 7.0);
        assert!((cc.on_loss(&ctx(0.0, 0.1), 15.0, 1.0) - 11.9970703125).abs() < 1e-9);
        // Two reductions at 1000: (819/1024)² = (0.8 − 0.0001953125)²
        // = 0.64 − 0.0003125 + 0.0000000381 = 0.6396875381 → 639.6875381.
        let w = cc.on_loss(&ctx(0.0, 0.1), 1000.0, 2.0);
        assert!((w - 639.6875381).abs() < 1e-6, "{w}");
    }

    #[test]
    fn parameters() {
        let mut cc = law_with(
            "bic",
            &[
                ("search_divisor", Value::from(2.0)),
                ("max_increment", Value::from(32.0)),
            ],
        );
        cc.on_loss(&ctx(0.0, 0.1), 1000.0, 1.0);
        // B = 2: (1000 − 960)/2 = 20 → 20 per RTT; at 960 one ACK adds 20/960.
        let w = cc.on_ack(&ctx(0.0, 0.1), 960.0, 1.0);
        assert!((w - (960.0 + 20.0 / 960.0)).abs() < 1e-12, "{w}");
    }
}
