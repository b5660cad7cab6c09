//! The sender's RTT estimate and retransmission timeout (RFC 6298, with the floor on the variance
//! term that [the sender's module doc](super) describes).

use super::super::event::SimTime;
use super::{Sender, RTO_MAX_PS, RTO_MIN_VAR_PS};

impl Sender {
    /// The current RTO, backoff included.
    pub fn rto_ps(&self) -> SimTime {
        (self.rto_base_ps << self.backoff.min(20)).min(RTO_MAX_PS)
    }

    /// RFC 6298 §2.2–2.3 with α = 1/8, β = 1/4, and the RTO floor described in the module doc.
    pub(super) fn on_rtt_sample(&mut self, rtt_ps: SimTime) {
        let r = rtt_ps as f64;
        if self.has_rtt {
            self.rttvar_ps = 0.75 * self.rttvar_ps + 0.25 * (self.srtt_ps - r).abs();
            self.srtt_ps = 0.875 * self.srtt_ps + 0.125 * r;
        } else {
            self.srtt_ps = r;
            self.rttvar_ps = r / 2.0;
            self.has_rtt = true;
        }
        let var = (4.0 * self.rttvar_ps).max(RTO_MIN_VAR_PS as f64);
        self.rto_base_ps = ((self.srtt_ps + var) as SimTime).min(RTO_MAX_PS);
    }
}
