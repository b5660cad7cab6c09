//! XCP's sender (Katabi, Handley, Rohrs, SIGCOMM 2002, §3.2): the window follows the routers'
//! explicit feedback, `cwnd ← max(cwnd + H_feedback, 1)` per ACK, with no probing of its own; a
//! loss (a router buffer overflowing anyway) halves the window as TCP does. A flow with this
//! variant must cross a link whose queue discipline is `xcp` (the scenario checks).

use super::{CcContext, CongestionControl, Variant};

pub const VARIANT: Variant = Variant {
    name: "xcp",
    about: "XCP sender: the window follows the routers' explicit feedback (needs an xcp queue)",
    build: |_| Ok(Box::new(Xcp)),
};

#[derive(Debug, Clone, Copy)]
pub struct Xcp;

impl CongestionControl for Xcp {
    fn on_ack(&mut self, ctx: &CcContext, cwnd: f64, acked: f64) -> f64 {
        (cwnd + ctx.feedback_pkts * acked).max(1.0)
    }

    fn on_loss(&mut self, _ctx: &CcContext, cwnd: f64, reductions: f64) -> f64 {
        cwnd * super::retained(0.5, reductions)
    }

    fn slow_starts(&self) -> bool {
        false
    }
}
