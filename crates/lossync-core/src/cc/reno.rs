//! Reno / generalized AIMD: `a` packets per RTT of increase, `W ← (1 − b)·W` per loss event.
//! RFC 5681 §3.1 (a = 1 per RTT, halving); the AIMD(a, b) family of RFC 8312 §4.2 / RFC 9438 §4.3.

use super::{CcContext, CongestionControl, LawParams, Params, MAX_WINDOW_PKTS};
use crate::error::Result;
use serde::Serialize;

/// Reno's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RenoParams {
    /// Increase, packets per RTT.
    pub a: f64,
    /// Decrease fraction per loss event.
    pub b: f64,
}

impl LawParams for RenoParams {
    const NAME: &'static str = "reno";
    const ABOUT: &'static str =
        "Reno/AIMD: +a packets per RTT, ×(1−b) per loss (RFC 5681); a=1, b=0.5";

    fn read(p: &mut Params) -> Result<Self> {
        Ok(RenoParams {
            // RFC 5681 §3.1: cwnd += SMSS·SMSS/cwnd per ACK, i.e. one packet per RTT. At most
            // TCP's largest window per RTT (an increase no window can hold means nothing).
            a: p.f64(
                "a",
                1.0,
                |v| v > 0.0 && v <= MAX_WINDOW_PKTS,
                "in (0, 2.7e7] packets per RTT (TCP's largest window)",
            )?,
            // RFC 5681 §3.1 eq. (4): ssthresh = FlightSize/2.
            b: p.f64("b", 0.5, |v| v > 0.0 && v < 1.0, "in (0, 1)")?,
        })
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Reno {
            a: self.a,
            b: self.b,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Reno {
    pub a: f64,
    pub b: f64,
}

impl CongestionControl for Reno {
    fn on_ack(&mut self, _ctx: &CcContext, cwnd: f64, acked: f64) -> f64 {
        cwnd + self.a * acked / cwnd
    }

    fn on_loss(&mut self, _ctx: &CcContext, cwnd: f64, reductions: f64) -> f64 {
        cwnd * super::retained(1.0 - self.b, reductions)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use serde_json::Value;

    #[test]
    fn one_packet_per_rtt_and_halving() {
        let mut cc = default_law("reno");
        // 100 ACKs at cwnd ≈ 100 add ≈ 1 packet (RFC 5681 §3.1); exactly Σ 1/w_k.
        let w = one_rtt_of_acks(cc.as_mut(), 0.0, 0.1, 100.0);
        assert!((w - 100.0).abs() > 0.99 && (w - 101.0).abs() < 0.01, "{w}");
        assert_eq!(cc.on_loss(&ctx(1.0, 0.1), 100.0, 1.0), 50.0);
    }

    #[test]
    fn generalized_aimd() {
        let mut cc = law_with("reno", &[("a", Value::from(2.0)), ("b", Value::from(0.25))]);
        assert!((cc.on_ack(&ctx(0.0, 0.1), 10.0, 1.0) - 10.2).abs() < 1e-12);
        assert_eq!(cc.on_loss(&ctx(0.0, 0.1), 100.0, 2.0), 56.25);
    }
}
