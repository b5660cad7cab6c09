//! Scalable TCP (MIMD): per acknowledged packet `w += a` (a = 0.01), per loss `w ← (1 − b)·w`
//! (b = 0.125); at or below the legacy window (16) it is standard TCP (`w += 1/w`, halving).
//!
//! Sources: T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area Networks",
//! ACM CCR 33(2), 2003 (a = 0.01, b = 0.125, legacy window lwnd = 16); Linux
//! `net/ipv4/tcp_scalable.c` ("recommended values in the paper: .01 and 7/8"); docs/model.md §3.3.
//! Linux increments by 1 per `min(cwnd, 50)` ACKs (50 "to account for delayed ack"); we follow
//! the paper's 0.01 per acknowledged packet (docs/model.md §3.3).

use super::{CcContext, CongestionControl, LawParams, Params, MAX_WINDOW_PKTS};
use crate::error::Result;
use serde::Serialize;

/// Kelly 2003: window increase per acknowledged packet.
pub const A: f64 = 0.01;
/// Kelly 2003: decrease fraction per loss event (retain 7/8; Linux `cwnd − cwnd>>3`).
pub const B: f64 = 0.125;
/// Kelly 2003: legacy window `lwnd`; at or below it Scalable TCP behaves as standard TCP.
pub const LOW_WINDOW: f64 = 16.0;

/// Scalable TCP's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScalableParams {
    /// Increase per acknowledged packet.
    pub a: f64,
    /// Decrease fraction per loss event.
    pub b: f64,
    /// Standard TCP at `cwnd ≤ low_window`; 0 disables the legacy mode.
    pub low_window: f64,
}

impl LawParams for ScalableParams {
    const NAME: &'static str = "scalable";
    const ABOUT: &'static str =
        "Scalable TCP (Kelly 2003): +0.01 per ACK, ×0.875 per loss; Reno at or below 16";

    fn read(p: &mut Params) -> Result<Self> {
        Ok(ScalableParams {
            a: p.f64("a", A, |v| v > 0.0 && v <= 1.0, "in (0, 1]")?,
            b: p.f64("b", B, |v| v > 0.0 && v < 1.0, "in (0, 1)")?,
            low_window: p.f64(
                "low_window",
                LOW_WINDOW,
                |v| (0.0..=MAX_WINDOW_PKTS).contains(&v),
                "in [0, 2.7e7] packets (0 disables; TCP's largest window)",
            )?,
        })
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Scalable {
            a: self.a,
            b: self.b,
            low_window: self.low_window,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Scalable {
    pub a: f64,
    pub b: f64,
    /// Standard TCP at `cwnd ≤ low_window`; 0 disables the legacy mode.
    pub low_window: f64,
}

impl CongestionControl for Scalable {
    fn on_ack(&mut self, _ctx: &CcContext, cwnd: f64, acked: f64) -> f64 {
        if cwnd <= self.low_window {
            cwnd + acked / cwnd
        } else {
            cwnd + self.a * acked
        }
    }

    fn on_loss(&mut self, _ctx: &CcContext, cwnd: f64, reductions: f64) -> f64 {
        let retained = if cwnd <= self.low_window {
            0.5
        } else {
            1.0 - self.b
        };
        cwnd * super::retained(retained, reductions)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use serde_json::Value;

    #[test]
    fn mimd_above_the_legacy_window() {
        let mut cc = default_law("scalable");
        // Kelly 2003: +0.01 per acknowledged packet, whatever the window: 1000 → 1000.01,
        // 17 → 17.01; a fluid step acknowledging 25 packets adds 0.25.
        assert!((cc.on_ack(&ctx(0.0, 0.1), 1000.0, 1.0) - 1000.01).abs() < 1e-9);
        assert!((cc.on_ack(&ctx(0.0, 0.1), 17.0, 1.0) - 17.01).abs() < 1e-12);
        assert!((cc.on_ack(&ctx(0.0, 0.1), 1000.0, 25.0) - 1000.25).abs() < 1e-9);
        // One RTT of ACKs at 1000 (1000 ACKs) adds 10 packets (1% per RTT).
        let w = one_rtt_of_acks(cc.as_mut(), 0.0, 0.1, 1000.0);
        assert!((w - 1010.0).abs() < 1e-6, "{w}");
        // ×0.875 per loss; ×0.875² = 0.765625 for two.
        assert_eq!(cc.on_loss(&ctx(0.0, 0.1), 1000.0, 1.0), 875.0);
        assert_eq!(cc.on_loss(&ctx(0.0, 0.1), 1000.0, 2.0), 765.625);
    }

    #[test]
    fn standard_tcp_at_and_below_16() {
        let mut cc = default_law("scalable");
        // cwnd ≤ 16: +1/cwnd per ACK and halving: 16 → 16.0625, 10 → 10.1; loss 16 → 8.
        assert!((cc.on_ack(&ctx(0.0, 0.1), 16.0, 1.0) - 16.0625).abs() < 1e-12);
        assert!((cc.on_ack(&ctx(0.0, 0.1), 10.0, 1.0) - 10.1).abs() < 1e-12);
        assert_eq!(cc.on_loss(&ctx(0.0, 0.1), 16.0, 1.0), 8.0);
        assert_eq!(cc.on_loss(&ctx(0.0, 0.1), 16.5, 1.0), 16.5 * 0.875);
    }

    #[test]
    fn parameters() {
        let mut cc = law_with(
            "scalable",
            &[
                ("a", Value::from(0.02)),
                ("b", Value::from(0.25)),
                ("low_window", Value::from(0.0)),
            ],
        );
        // Legacy mode off: MIMD even at 10 packets: 10 + 0.02 = 10.02, 10·0.75 = 7.5.
        assert!((cc.on_ack(&ctx(0.0, 0.1), 10.0, 1.0) - 10.02).abs() < 1e-12);
        assert_eq!(cc.on_loss(&ctx(0.0, 0.1), 10.0, 1.0), 7.5);
    }
}
