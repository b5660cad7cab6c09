//! XCP's sender (Katabi, Handley, Rohrs, SIGCOMM 2002, §3.2): the window follows the routers'
//! explicit feedback, `cwnd ← max(cwnd + H_feedback, 1)` per ACK, with no probing of its own; a
//! loss (a router buffer overflowing anyway) halves the window as TCP does. A flow with this
//! variant must cross a link whose queue discipline is `xcp` (the scenario checks).

use super::{CcContext, CongestionControl, LawParams, Params};
use crate::error::Result;
use serde::Serialize;

/// XCP's sender takes no parameters (the routers' are on the link: `queue.xcp`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct XcpSenderParams {}

impl LawParams for XcpSenderParams {
    // Not ECN-capable: its flows are Not-ECT.
    const ECN: super::EcnUse = super::EcnUse::Incapable;
    const NAME: &'static str = "xcp";
    const ABOUT: &'static str =
        "XCP sender: the window follows the routers' explicit feedback (needs an xcp queue)";

    fn read(_: &mut Params) -> Result<Self> {
        Ok(XcpSenderParams {})
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Xcp)
    }
}

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

    fn grows_until_loss(&self) -> bool {
        false
    }
}
