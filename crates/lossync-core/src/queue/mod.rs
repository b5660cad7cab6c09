//! Queue disciplines, one abstraction for both engines. A discipline owns a link direction's
//! buffer and decides what becomes of traffic:
//! - packet face: each arrival gets a [`Verdict`] ([`Discipline::enqueue`]), and a departure may
//!   still be dropped ([`Discipline::dequeue`], room for sojourn-time disciplines such as CoDel);
//! - fluid face: a probability of early drop for the next step
//!   ([`Discipline::early_drop_probability`]); the fluid engine tail-drops what overflows
//!   [`Discipline::buffer`];
//! - router feedback (XCP): a discipline may also account the traffic it sees and hand senders
//!   feedback ([`Discipline::feedback`]), once per control interval.
//!
//! A link's random loss is not the discipline's: it is a property of the wire, applied before.
//!
//! A new discipline is one file here plus its arm in [`build`].

use crate::rng::Rng;
use crate::scenario::Queue;

pub mod droptail;
pub mod red;
pub mod xcp;

pub use xcp::Feedback;

/// Why a discipline dropped a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full.
    Overflow,
    /// An active queue management drop before the buffer was full (RED).
    Early,
}

/// What becomes of a packet offered to a discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Queued,
    Dropped(DropReason),
}

/// A link direction's buffer: `pkts` as the scenario sizes it (the fluid engine's limit), and
/// `slots`, the whole packets the packet engine holds, the one in service included.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Buffer {
    pub pkts: f64,
    pub slots: usize,
}

impl Buffer {
    /// A bufferless link still holds the packet it is serving: at least one slot.
    pub fn new(pkts: f64) -> Self {
        Buffer {
            pkts,
            slots: (pkts.round() as usize).max(1),
        }
    }
}

/// XCP's congestion header (Katabi et al. 2002 §3.1) as it travels in a packet: the sender's
/// window and RTT, and the feedback the routers on the path ask for.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Header {
    pub cwnd_pkts: f32,
    pub rtt_s: f32,
    pub feedback_pkts: f32,
}

/// A packet offered to a discipline.
#[derive(Debug)]
pub enum Arrival<'a> {
    /// A data packet; a router may cut the feedback in its header.
    Data(&'a mut Header),
    /// An ACK, of this many data packets' worth of bytes.
    Ack { size_pkts: f64 },
}

/// The link a discipline serves.
#[derive(Debug, Clone, Copy)]
pub struct LinkContext {
    pub buffer: Buffer,
    pub capacity_pps: f64,
    /// Nominal service time of a data packet, in picoseconds.
    pub packet_time_ps: u64,
    /// The first control interval of a router with feedback (later: measured).
    pub first_interval_s: f64,
}

pub trait Discipline: Send + Sync + std::fmt::Debug {
    fn buffer(&self) -> Buffer;

    /// Packet face: a packet arrives at `now_ps` to a queue of `backlog` packets (the one in
    /// service included). `rng` is the link's random stream.
    fn enqueue(
        &mut self,
        now_ps: u64,
        backlog: usize,
        arrival: Arrival<'_>,
        rng: &mut Rng,
    ) -> Verdict;

    /// Packet face: the head packet leaves at `now_ps`, `backlog` packets remain. A discipline
    /// may drop it here instead of forwarding it.
    fn dequeue(&mut self, _now_ps: u64, _backlog: usize) -> Verdict {
        Verdict::Queued
    }

    /// Fluid face: probability that fluid arriving during the next `dt` seconds is dropped
    /// before the buffer, given the backlog `q_pkts` now.
    fn early_drop_probability(&mut self, _q_pkts: f64, _dt: f64, _capacity_pps: f64) -> f64 {
        0.0
    }

    /// Router feedback in force (XCP), if this discipline gives any.
    fn feedback(&self) -> Option<&Feedback> {
        None
    }

    /// Packet face, routers with feedback: the control interval ends; returns the length of
    /// the next one in seconds (`None`: no control intervals).
    fn end_interval(&mut self, _backlog: usize) -> Option<f64> {
        None
    }

    /// Fluid face, routers with feedback: `pkts` packets arrived this step from a flow with
    /// window `cwnd_pkts` and RTT `rtt_s`.
    fn fluid_arrivals(&mut self, _pkts: f64, _rtt_s: f64, _cwnd_pkts: f64) {}

    /// Fluid face, routers with feedback: the step ends at `t_end_s` with backlog `q_pkts`.
    fn fluid_step_end(&mut self, _q_pkts: f64, _t_end_s: f64, _capacity_pps: f64) {}
}

/// The discipline a scenario's `queue` names, serving `link`.
pub fn build(q: &Queue, link: LinkContext) -> Box<dyn Discipline> {
    match *q {
        Queue::Droptail => Box::new(droptail::DropTail::new(link)),
        Queue::Red {
            min_th,
            max_th,
            max_p,
            weight,
            gentle,
        } => Box::new(red::Red::new(min_th, max_th, max_p, weight, gentle, link)),
        Queue::Xcp(params) => Box::new(xcp::Xcp::new(params, link)),
    }
}
