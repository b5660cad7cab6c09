//! Step marking on the instantaneous queue, the switch side of DCTCP (Alizadeh et al., "Data
//! Center TCP", SIGCOMM 2010, §3.1; RFC 8257 §3.1): an arriving packet is marked CE when the
//! queue it joins holds more than `threshold` packets (K: "if the queue occupancy is greater
//! than K upon its arrival", the packet in service counted), and queued otherwise; a packet
//! that is not ECN-capable is dropped there instead (`ecn = false` makes it a shallow
//! drop-tail at K). The same point as the paper's RED with both thresholds at K on the
//! instantaneous queue, as Linux's and ns-3's RED do it: marked once the packets waiting behind
//! the one in service reach K. The paper's rule of thumb for a full link: K > C·RTT/7 (§3.3).
//!
//! Fluid face: all the fluid that arrives while the queue holds more than K packets is marked
//! (dropped without ECN), none below: the marking function `p = 1{q > K}` of the DCTCP fluid
//! model (Alizadeh, Javanmard, Prabhakar, "Analysis of DCTCP", SIGMETRICS 2011, eq. 1–3).

use super::{signal, tail, Arrival, Buffer, Discipline, LinkContext, QueueParams, Site, Verdict};
use crate::error::{Error, Result};
use crate::params::Params;
use crate::rng::Rng;
use serde::Serialize;

/// The step marker's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepParams {
    /// K, the marking threshold on the instantaneous queue, in packets.
    pub threshold: f64,
    /// Mark ECN-capable packets above K (drop the others); `false` drops every packet above K.
    pub ecn: bool,
}

impl QueueParams for StepParams {
    const NAME: &'static str = "step";
    const ABOUT: &'static str =
        "DCTCP's step marking (Alizadeh et al. 2010): CE above K packets of instantaneous queue";
    const FLUID: bool = true;
    // RFC 9331 §5.2: immediate marking on a shallow threshold is what an L4S queue does.
    const L4S: bool = true;

    fn read(p: &mut Params, site: Site) -> Result<Self> {
        let threshold = p.required_f64("threshold", |v| v >= 1.0, "at least 1 packet")?;
        if threshold > site.buffer_pkts {
            return Err(Error::field(p.field("threshold"), "must not exceed the buffer"));
        }
        Ok(StepParams {
            threshold,
            ecn: p.bool("ecn", true)?,
        })
    }

    fn build(&self, link: LinkContext) -> Box<dyn Discipline> {
        Box::new(Step {
            buffer: link.buffer,
            threshold: self.threshold,
            ecn: self.ecn,
        })
    }
}

#[derive(Debug)]
pub struct Step {
    buffer: Buffer,
    threshold: f64,
    ecn: bool,
}

impl Discipline for Step {
    fn acts_after_enqueue(&self) -> bool {
        false
    }

    fn buffer(&self) -> Buffer {
        self.buffer
    }

    fn enqueue(&mut self, _now_ps: u64, backlog: usize, a: Arrival<'_>, _rng: &mut Rng) -> Verdict {
        let room = tail(backlog, self.buffer);
        if room != Verdict::Queued || (backlog as f64) <= self.threshold || a.header.is_none() {
            return room; // ACKs are not ECN-capable and never marked (RFC 3168 §6.1.4)
        }
        signal(self.ecn, a.ecn)
    }

    fn early_drop_probability(&mut self, q_pkts: f64, _dt: f64, _capacity_pps: f64) -> f64 {
        if q_pkts > self.threshold {
            1.0
        } else {
            0.0
        }
    }

    fn fluid_marks(&self, _p: f64) -> bool {
        self.ecn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{DropReason, Ecn, Header};

    #[test]
    fn marks_above_k_and_drops_what_cannot_be_marked() {
        let mut s = Step {
            buffer: Buffer::new(100.0),
            threshold: 20.0,
            ecn: true,
        };
        let mut rng = Rng::new(1, 0);
        let mut h = Header::default();
        let mut offer = |s: &mut Step, backlog, ecn| {
            let a = Arrival {
                flow: 0,
                sub: 0,
                ecn,
                size_pkts: 1.0,
                header: Some(&mut h),
            };
            s.enqueue(0, backlog, a, &mut rng)
        };
        // Occupancy greater than K (RFC 8257 §3.1): 20 packets at K = 20 are not yet marked
        // (the defect: marking from K itself, one packet before the paper, Linux and ns-3).
        assert_eq!(offer(&mut s, 20, Ecn::Ect0), Verdict::Queued);
        assert_eq!(offer(&mut s, 21, Ecn::Ect0), Verdict::Marked);
        let early = Verdict::Dropped(DropReason::Early);
        assert_eq!(offer(&mut s, 21, Ecn::NotEct), early);
        let full = Verdict::Dropped(DropReason::Overflow);
        assert_eq!(offer(&mut s, 100, Ecn::Ect0), full);
        let mut rng = Rng::new(1, 0);
        assert_eq!(s.enqueue(0, 50, Arrival::ack(0, 0.05), &mut rng), Verdict::Queued);
    }
}
