//! Nodes of other kinds than the built-in links (access link, pipe, port): an element a route
//! names with [`Hop::Node`](super::route::Hop::Node), driven through the [`Node`] trait. The
//! engine hands a node each packet that reaches it and each timer it set; the node answers with
//! actions (forward a packet to its next hop now, drop it, set a timer). The optical burst
//! assembler ([`super::assembler`]) is one: it holds segments per assembly queue, sets a timer
//! when a queue receives its first segment, and on expiry forwards the whole queue at once (or
//! drops it, a lost burst).
//!
//! Adding a node kind: a file with a type that implements [`Node`], and `pub mod` for it in
//! `packet/mod.rs`; a topology builder creates one with
//! [`Topology::add_node`](super::topology::Topology::add_node) and puts the returned hop in the
//! routes that cross it.

use super::event::SimTime;
use super::route::Pkt;
use super::trace::Trace;
use crate::metrics::{BurstRecord, EventRecord};

/// A node's answer to an arrival or a timer, applied by the engine in the order given.
#[derive(Debug, Clone, Copy)]
pub enum Action {
    /// The packet moves on to the next hop of its route, now.
    Forward(Pkt),
    /// The packet is lost here (a data drop is counted against its flow and logged).
    Drop(Pkt),
    /// Call [`Node::timer`] with `token` at `at_ps` (not before now).
    Timer { at_ps: SimTime, token: u32 },
}

/// Where a node puts its actions; reused from call to call (no allocation in steady state).
#[derive(Debug, Default)]
pub struct Actions(pub(super) Vec<Action>);

impl Actions {
    pub fn forward(&mut self, pkt: Pkt) {
        self.0.push(Action::Forward(pkt));
    }

    pub fn drop(&mut self, pkt: Pkt) {
        self.0.push(Action::Drop(pkt));
    }

    pub fn timer(&mut self, at_ps: SimTime, token: u32) {
        self.0.push(Action::Timer { at_ps, token });
    }
}

/// A network element of a kind the engine does not know.
pub trait Node: Send + Sync {
    /// `pkt` reaches the node at `now_ps`.
    fn receive(&mut self, now_ps: SimTime, pkt: Pkt, out: &mut Actions);

    /// A timer the node set fires.
    fn timer(&mut self, now_ps: SimTime, token: u32, out: &mut Actions);

    /// The warm-up ends now: a node that keeps statistics starts them (from here, as the ports'
    /// congestion events count; with `from_first_congestion` the other statistics start at the
    /// first drop after it).
    fn start_measuring(&mut self, _now_ps: SimTime) {}

    /// At the end of a run: what the node recorded since the warm-up, for the metrics (a burst assembler's bursts, and the congestion events its lost bursts are).
    fn take_records(&mut self, _bursts: &mut Vec<BurstRecord>, _events: &mut Vec<EventRecord>) {}

    /// A tracing node's packet trace ([`super::trace`]); `None` for the other kinds.
    fn trace(&self) -> Option<&Trace> {
        None
    }

    fn trace_mut(&mut self) -> Option<&mut Trace> {
        None
    }
}
