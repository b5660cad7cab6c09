//! Drop-tail: no early drops; the buffer overflow is the only loss.

use super::{Arrival, Buffer, Discipline, DropReason, LinkContext, Verdict};
use crate::rng::Rng;

#[derive(Debug, Clone, Copy)]
pub struct DropTail {
    buffer: Buffer,
}

impl DropTail {
    pub fn new(link: LinkContext) -> Self {
        DropTail {
            buffer: link.buffer,
        }
    }
}

/// The tail-drop rule every discipline ends with: a full buffer refuses the arrival.
pub fn tail(backlog: usize, buffer: Buffer) -> Verdict {
    if backlog >= buffer.slots {
        Verdict::Dropped(DropReason::Overflow)
    } else {
        Verdict::Queued
    }
}

impl Discipline for DropTail {
    fn buffer(&self) -> Buffer {
        self.buffer
    }

    fn enqueue(
        &mut self,
        _now_ps: u64,
        backlog: usize,
        _a: Arrival<'_>,
        _rng: &mut Rng,
    ) -> Verdict {
        tail(backlog, self.buffer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_buffer_drops_and_zero_buffer_still_holds_the_packet_in_service() {
        assert_eq!(tail(9, Buffer::new(10.0)), Verdict::Queued);
        assert_eq!(
            tail(10, Buffer::new(10.0)),
            Verdict::Dropped(DropReason::Overflow)
        );
        // 10.4 packets round to 10 slots; a bufferless link holds one.
        assert_eq!(Buffer::new(10.4).slots, 10);
        assert_eq!(Buffer::new(0.0).slots, 1);
        assert_eq!(tail(0, Buffer::new(0.0)), Verdict::Queued);
    }
}
