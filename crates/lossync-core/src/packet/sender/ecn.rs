//! The sender's answer to ECN echoes (the module doc of `sender.rs`, "ECN"): a scalable law's
//! per-ACK counts, and one window reduction per window of data, immediate or through PRR as in
//! Linux's CWR state.

use super::super::event::SimTime;
use super::{Ack, LossRecovery, Prr, Recovery, Sender, MIN_SSTHRESH_PKTS};

impl Sender {
    /// ECN feedback on an ACK that newly delivered `delivered` packets (see the module doc).
    pub(super) fn on_ecn_echo(&mut self, now_ps: SimTime, ack: &Ack, delivered: u64) {
        let ctx = self.ctx(now_ps);
        let echo = if self.scalable {
            self.cc
                .on_ce_counts(&ctx, self.cwnd_pkts, delivered as f64, ack.ce_pkts as f64);
            ack.ce_pkts > 0
        } else {
            ack.ece
        };
        if echo && self.recovery == Recovery::Open && !self.in_ecn_reduction() {
            // A classic echo is a loss event for the window (RFC 3168 §6.1.2), also for an L4S
            // law that fell back (RFC 9331 §4.3); a scalable law reduces by its measure.
            let w = if self.scalable {
                self.cc.on_ecn(&ctx, self.cwnd_pkts)
            } else {
                self.cc.on_loss(&ctx, self.cwnd_pkts, 1.0)
            };
            let w = w.max(MIN_SSTHRESH_PKTS);
            self.ssthresh_pkts = w;
            if self.loss_recovery == LossRecovery::Prr && self.hold_after_echo && !self.model {
                // Linux's CWR state: PRR brings the window down over the round trip, from this
                // ACK on (an L4S law sets its window itself, as tcp_prague.c).
                self.prr = Prr::start(self.cwnd_pkts);
                self.ecn_prr = true;
            } else {
                self.cwnd_pkts = w.min(self.rwnd_pkts);
            }
            self.cwr_point = Some(self.snd_nxt);
            self.cwr_pending = true;
            self.stats.reductions += 1;
            self.stats.ecn_reductions += 1;
            self.ss_exit.on_reduction(false);
        }
    }

    /// Whether the window of data in flight at the last ECN reduction is not yet all
    /// acknowledged: no new reduction and no growth until snd_una passes the snd_nxt of then
    /// (Linux's CWR state, left once snd_una is past high_seq).
    pub(super) fn in_ecn_reduction(&self) -> bool {
        self.cwr_point.is_some_and(|p| self.snd_una <= p)
    }
}
