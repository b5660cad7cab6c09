//! A pipe: propagation delay. As in htsim, a pipe keeps its packets in its own FIFO ring with
//! their exit times and only its head is in the event heap (one `PipeHead` event, or a variant
//! naming the head's next hop, per pipe at most), so the heap holds a few entries per element, not one per packet in flight. Packets
//! must enter in order of their exit times (a pipe is fed by one element, whose packets leave in
//! order); the ring grows to the largest number in flight and stays.

use super::event::SimTime;
use super::ring::Ring;
use super::route::Pkt;

#[derive(Debug)]
pub struct Pipe {
    delay_ps: SimTime,
    ring: Ring<(SimTime, Pkt)>,
}

impl Pipe {
    /// A pipe of `delay_ps` with room for `capacity` packets before it grows.
    pub fn new(delay_ps: SimTime, capacity: usize) -> Self {
        Pipe {
            delay_ps,
            ring: Ring::with_capacity(capacity),
        }
    }

    pub fn delay_ps(&self) -> SimTime {
        self.delay_ps
    }

    /// Packets in the pipe.
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// Asks for the head's cache line: it leaves soon.
    #[inline]
    pub fn prefetch_head(&self) {
        self.ring.prefetch_front();
    }

    /// `pkt` enters at `at`, at route position `hop` (stored with it), and will leave at `at +
    /// delay`; returns that time if it is the new head (the caller schedules the pipe's
    /// `PipeHead` event then).
    #[inline]
    pub fn enter(&mut self, at: SimTime, pkt: Pkt) -> Option<SimTime> {
        let exit = at + self.delay_ps;
        debug_assert!(
            self.ring.back().is_none_or(|&(t, _)| t <= exit),
            "a pipe's packets leave in order"
        );
        let head = self.ring.is_empty();
        self.ring.push_back((exit, pkt));
        head.then_some(exit)
    }

    /// The head leaves now; returns it, and the next head's exit time and route position, if
    /// any (to schedule).
    #[inline]
    pub fn pop(&mut self) -> (Pkt, Option<(SimTime, u32)>) {
        let (_, pkt) = self.ring.pop_front().expect("a scheduled pipe head");
        (pkt, self.ring.front().map(|&(t, ref p)| (t, p.at)))
    }
}
