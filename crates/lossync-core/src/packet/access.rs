//! An access link: the host's line to the network, a serializer with no queue limit and no loss
//! (the connections of a parallel flow share their host's). Lossless and FIFO, it knows when a
//! packet will leave the moment it enters, so it needs no event: it hands the packet on at that
//! future time, and the next hop (a pipe) schedules its arrival.

use super::event::{Serializer, SimTime};
use crate::rng::Rng;

#[derive(Debug, Clone)]
pub struct Access {
    service: Serializer,
    /// When the line is next free (the last packet's exit time).
    free_ps: SimTime,
    /// The host's random delay before a packet enters the line, uniform in [0, jitter_ps]
    /// (the flow's `send_jitter`); FIFO is kept, as the line serves in order.
    jitter_ps: u64,
    rng: Rng,
}

impl Access {
    pub fn new(service: Serializer, jitter_ps: u64, rng: Rng) -> Self {
        Access {
            service,
            free_ps: 0,
            jitter_ps,
            rng,
        }
    }

    /// Nominal serialization time of a packet.
    pub fn nominal_ps(&self) -> SimTime {
        self.service.nominal_ps()
    }

    /// A packet enters at `at`; returns when it leaves (after those ahead of it).
    #[inline]
    pub fn pass(&mut self, at: SimTime) -> SimTime {
        let at = if self.jitter_ps > 0 {
            at + (self.rng.uniform() * self.jitter_ps as f64) as SimTime
        } else {
            at
        };
        self.free_ps = self.free_ps.max(at) + self.service.next_ps();
        self.free_ps
    }
}
