//! TCP Prague (draft-briscoe-iccrg-prague-congestion-control-04; Linux L4STeam
//! `net/ipv4/tcp_prague.c`): DCTCP's scalable response to CE marks, sent as ECT(1) so that an
//! L4S-aware queue (DualPI2, RFC 9332) keeps it apart from classic traffic, paced (its flow
//! group paces at Linux's default ratios unless told otherwise), and with reduced
//! RTT-dependence: below a target RTT of 25 ms the additive increase per RTT is scaled by
//! (RTT/target)², so every flow's rate grows as a flow's with the target RTT would (the
//! reference implementation's default `RTT_CONTROL_RATE` mode, `prague_rtt_target` = 25 ms).
//! A loss halves the window, as Reno's (the draft's classic fall-back).

use super::dctcp::{MarkedFraction, G};
use super::{CcContext, CongestionControl, EcnUse, LawParams, Params};
use crate::error::Result;
use serde::Serialize;

/// The reference implementation's `prague_rtt_target`: 25 ms.
pub const RTT_TARGET_S: f64 = 0.025;

/// Prague's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PragueParams {
    /// The EWMA gain of α (DCTCP's, 1/16).
    pub g: f64,
    /// Below this RTT the increase is scaled to be RTT-independent; 0 turns the scaling off.
    pub rtt_target: f64,
}

impl LawParams for PragueParams {
    const NAME: &'static str = "prague";
    const ABOUT: &'static str =
        "TCP Prague (L4S): DCTCP's response, ECT(1), RTT-independent increase below 25 ms";
    const ECN: EcnUse = EcnUse::Scalable { l4s: true };

    fn read(p: &mut Params) -> Result<Self> {
        Ok(PragueParams {
            g: p.f64("g", G, |v| v > 0.0 && v <= 1.0, "in (0, 1]")?,
            rtt_target: p.seconds(
                "rtt_target",
                RTT_TARGET_S,
                |v| (0.0..=10.0).contains(&v),
                "in [0, 10] s",
            )?,
        })
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Prague {
            alpha: MarkedFraction::new(self.g, 1.0),
            rtt_target_s: self.rtt_target,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Prague {
    pub alpha: MarkedFraction,
    rtt_target_s: f64,
}

impl Prague {
    /// The increase per RTT: one packet, scaled by (RTT/target)² below the target.
    fn increase_per_rtt(&self, rtt_s: f64) -> f64 {
        if rtt_s >= self.rtt_target_s || self.rtt_target_s == 0.0 {
            1.0
        } else {
            (rtt_s / self.rtt_target_s).powi(2)
        }
    }
}

impl CongestionControl for Prague {
    fn on_ack(&mut self, ctx: &CcContext, cwnd: f64, acked: f64) -> f64 {
        cwnd + self.increase_per_rtt(ctx.rtt_s) * acked / cwnd
    }

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

    #[test]
    fn increase_is_rtt_independent_below_the_target() {
        let mut cc = default_law("prague");
        // RTT 5 ms, a fifth of 25 ms: 1/25 packet per RTT, 25 RTTs for one packet, the same
        // 125 ms a 25 ms flow needs (rate grows as 1/target² either way).
        let w = one_rtt_of_acks(cc.as_mut(), 0.0, 0.005, 100.0);
        assert!((w - 100.04).abs() < 1e-4, "{w}");
        // At or above the target: Reno's one packet per RTT.
        let w = one_rtt_of_acks(cc.as_mut(), 0.0, 0.1, 100.0);
        assert!((w - 101.0).abs() < 0.01, "{w}");
        assert_eq!(cc.on_ecn(&ctx(0.0, 0.1), 100.0), 50.0); // α starts at 1
    }
}
