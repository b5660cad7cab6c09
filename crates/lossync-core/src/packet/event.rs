//! Simulated time and the event queue (integer picoseconds as in htsim; ties broken by insertion order as in ns-3).
//!
//! Time is an integer count of picoseconds, as in htsim: serialization times at 10–400 Gb/s are
//! exact, and a `u64` covers about 213 days. Seconds appear only at the interfaces.
//!
//! The queue is a binary heap keyed by `(time, seq)`: `seq` is a counter taken at insertion, so
//! events due at the same picosecond run in the order they were scheduled (FIFO ties), which makes
//! a run independent of the heap's internal order. The partitioned scheduler
//! ([`super::partitioned`]) breaks ties by the event itself instead ([`EventQueue::canonical`]):
//! its partitions schedule in their own orders, so only an order named by the event is the same
//! whichever partition and thread an event came from.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Simulated time in picoseconds.
pub type SimTime = u64;

pub const PS_PER_S: f64 = 1e12;

/// Seconds to picoseconds, rounded to the nearest picosecond.
pub fn ps_from_s(s: f64) -> SimTime {
    (s * PS_PER_S).round() as SimTime
}

pub fn s_from_ps(t: SimTime) -> f64 {
    t as f64 / PS_PER_S
}

/// What happens at an instant, per element (a pipe, a port, a node) or per flow (its timers).
/// Small and `Copy`: no payload beyond indices, because packets wait in their element's own FIFO
/// (htsim's pipes) rather than in the heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The flow starts sending.
    FlowStart(u32),
    /// The packet at the head of a pipe leaves it, for the next hop of its route. When that
    /// hop is a port, a receiver or a sender, the event says so (`PipeToQueue`, ...): the
    /// dispatch on the event then also decides the hop, instead of a second, data-dependent
    /// jump on the route (the kind is looked up when the head is scheduled).
    PipeHead(u32),
    PipeToQueue(u32),
    PipeToReceiver(u32),
    PipeToSender(u32),
    /// The port finishes serializing the packet at the head of its queue.
    ServiceDone(u32),
    /// The flow's retransmission timer; stale unless `gen` is the flow's current timer generation
    /// (timers are cancelled lazily, by bumping the generation).
    Rto {
        flow: u32,
        gen: u32,
    },
    /// The flow's pacing timer: it may send its next packet.
    Pace(u32),
    /// The flow's delayed-ACK timer (stale unless `gen` is current, as for `Rto`).
    DelAck {
        flow: u32,
        gen: u32,
    },
    /// A timer a [`Node`](super::node::Node) set, with its token.
    NodeTimer {
        node: u32,
        token: u32,
    },
    /// The XCP router of a port ends its control interval.
    XcpInterval(u32),
    /// The next flow of a dynamic group (an index into the engine's dynamic groups) arrives.
    Arrival(u32),
    /// Take one time-series sample.
    Record,
    /// Take one sample of the aggregate Σ cwnd/RTT.
    Aggregate,
    /// The warm-up ends.
    WarmupEnd,
}

/// A pending event keyed by `time · 2^64 + seq`: one integer comparison orders entries.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u128,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest `(time, seq)` first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// Pending events, earliest first, FIFO among equal times (or by [`tie_key`] when canonical).
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    canonical: bool,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            next_seq: 0,
            canonical: false,
        }
    }

    /// From now on, events due at the same picosecond run in the order of [`tie_key`], not in
    /// the order they were scheduled; the events already pending are re-keyed.
    pub fn canonical(&mut self) {
        self.canonical = true;
        let pending = std::mem::take(&mut self.heap).into_vec();
        for e in pending {
            self.push((e.key >> 64) as SimTime, e.event);
        }
    }

    #[inline]
    pub fn push(&mut self, time_ps: SimTime, event: Event) {
        let tie = if self.canonical {
            tie_key(event)
        } else {
            self.next_seq
        };
        self.heap.push(Entry {
            key: ((time_ps as u128) << 64) | tie as u128,
            event,
        });
        self.next_seq += 1;
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| (e.key >> 64) as SimTime)
    }

    /// The next event, if any.
    #[inline]
    pub fn peek(&self) -> Option<Event> {
        self.heap.peek().map(|e| e.event)
    }

    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.heap.pop().map(|e| ((e.key >> 64) as SimTime, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// The canonical order of events due at the same picosecond: by kind (the warm-up's end and the
/// samples first, so that they see everything before their instant and nothing at it), then by
/// element or flow, then by timer generation or node token (low 28 bits: equal keys would need
/// generations 2^28 apart due at the same picosecond, and equal keys are equal events). A
/// choice, as FIFO is: neither is more physical than the other.
pub fn tie_key(event: Event) -> u64 {
    let (rank, index, extra): (u64, u32, u32) = match event {
        Event::WarmupEnd => (0, 0, 0),
        Event::Record => (1, 0, 0),
        Event::Aggregate => (2, 0, 0),
        Event::FlowStart(f) => (3, f, 0),
        Event::Arrival(g) => (4, g, 0),
        Event::PipeHead(p)
        | Event::PipeToQueue(p)
        | Event::PipeToReceiver(p)
        | Event::PipeToSender(p) => (5, p, 0),
        Event::ServiceDone(p) => (6, p, 0),
        Event::XcpInterval(p) => (7, p, 0),
        Event::NodeTimer { node, token } => (8, node, token),
        Event::Pace(f) => (9, f, 0),
        Event::DelAck { flow, gen } => (10, flow, gen),
        Event::Rto { flow, gen } => (11, flow, gen),
    };
    (rank << 60) | ((index as u64) << 28) | (extra as u64 & 0x0FFF_FFFF)
}

/// Serialization time of one packet on a link, with the sub-picosecond remainder carried from
/// packet to packet, so that a rate like 622 Mb/s does not drift.
#[derive(Debug, Clone, Copy)]
pub struct Serializer {
    whole_ps: SimTime,
    frac_ps: f64,
    carry_ps: f64,
}

impl Serializer {
    pub fn new(bits: f64, rate_bps: f64) -> Self {
        let exact = bits / rate_bps * PS_PER_S;
        let whole = exact.floor();
        Serializer {
            whole_ps: whole as SimTime,
            frac_ps: exact - whole,
            carry_ps: 0.0,
        }
    }

    /// The nominal time, rounded (for budgeting the base RTT).
    pub fn nominal_ps(&self) -> SimTime {
        self.whole_ps + (self.frac_ps >= 0.5) as SimTime
    }

    /// The time of the next packet: the whole picoseconds plus one whenever the carried remainder
    /// reaches a picosecond.
    pub fn next_ps(&mut self) -> SimTime {
        if self.frac_ps == 0.0 {
            return self.whole_ps;
        }
        self.carry_ps += self.frac_ps;
        if self.carry_ps >= 1.0 {
            self.carry_ps -= 1.0;
            self.whole_ps + 1
        } else {
            self.whole_ps
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_fifo_ties() {
        let mut q = EventQueue::with_capacity(8);
        q.push(5, Event::Record);
        q.push(3, Event::PipeHead(1));
        q.push(5, Event::ServiceDone(0));
        q.push(3, Event::PipeHead(2));
        let order: Vec<(u64, Event)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::PipeHead(1)),
                (3, Event::PipeHead(2)),
                (5, Event::Record),
                (5, Event::ServiceDone(0)),
            ]
        );
    }

    #[test]
    fn canonical_ties_follow_the_event_not_the_schedule() {
        let mut q = EventQueue::with_capacity(8);
        q.push(5, Event::ServiceDone(0));
        q.push(5, Event::Rto { flow: 1, gen: 2 });
        q.canonical(); // re-keys the two pending
        q.push(5, Event::PipeToQueue(3));
        q.push(5, Event::Record);
        q.push(5, Event::Rto { flow: 1, gen: 1 });
        q.push(4, Event::Pace(9));
        let order: Vec<(u64, Event)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (4, Event::Pace(9)),
                (5, Event::Record),
                (5, Event::PipeToQueue(3)),
                (5, Event::ServiceDone(0)),
                (5, Event::Rto { flow: 1, gen: 1 }),
                (5, Event::Rto { flow: 1, gen: 2 }),
            ]
        );
    }

    #[test]
    fn serializer_exact_and_carried() {
        // 1500 B at 100 Mb/s: 12,000 bits / 1e8 b/s = 120 µs, exact in picoseconds.
        let mut s = Serializer::new(12_000.0, 1e8);
        assert_eq!(s.next_ps(), 120_000_000);
        // 1500 B at 622 Mb/s: 19,292,604.501... ps; over 1000 packets the carry keeps the total
        // within a picosecond of 1000 × the exact time.
        let mut s = Serializer::new(12_000.0, 622e6);
        let total: u64 = (0..1000).map(|_| s.next_ps()).sum();
        let exact = 1000.0 * 12_000.0 / 622e6 * 1e12;
        assert!((total as f64 - exact).abs() <= 1.0, "{total} vs {exact}");
    }
}
