//! The sender's options, one per flow-group setting, set when the flow is built.

use super::hystart::SlowStartExit;
use super::Sender;
use crate::cc::EcnUse;
use crate::queue::Ecn;
use crate::scenario::{Hystart, LossDetection, LossRecovery};

impl Sender {
    /// The receiver ACKs every `n` packets: each ACK may count for up to `n` (RFC 3465 L).
    pub fn with_abc_limit(mut self, n: u32) -> Self {
        self.abc_limit = n.max(1) as f64;
        self
    }

    /// How fast recovery sends: RFC 6675's pipe rule, or PRR ([`prr`](super::prr)).
    pub fn with_loss_recovery(mut self, r: LossRecovery) -> Self {
        self.loss_recovery = r;
        self
    }

    /// How losses are detected: RFC 6675's duplicate threshold, or RACK-TLP
    /// ([`rack`](super::rack)).
    pub fn with_loss_detection(mut self, d: LossDetection) -> Self {
        self.rack.on = d == LossDetection::RackTlp;
        self.size_rack_buffer();
        self
    }

    /// Slow start may end early on a rising RTT ([`hystart`](super::hystart)); `paced`: the sender paces.
    pub fn with_hystart(mut self, kind: Hystart, paced: bool) -> Self {
        self.ss_exit = SlowStartExit::new(kind);
        self.paced = paced;
        self
    }

    /// Spurious timeouts are undone ([`recovery`](super::recovery)'s Eifel detection).
    pub fn with_undo(mut self, undo: bool) -> Self {
        self.undo = undo;
        self
    }

    /// ECN-capable transport with codepoint `ect` (Not-ECT: off) for a law that uses ECN as
    /// `use_`.
    pub fn with_ecn(mut self, ect: Ecn, use_: EcnUse) -> Self {
        self.ect = ect;
        self.scalable = matches!(use_, EcnUse::Scalable { .. });
        self.hold_after_echo = !matches!(use_, EcnUse::Scalable { l4s: true });
        self
    }
}
