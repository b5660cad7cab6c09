//! Drop-tail: no early drops; the buffer overflow is the only loss.

use super::{tail, Arrival, Buffer, Discipline, LinkContext, QueueParams, Site, Verdict};
use crate::error::Result;
use crate::params::Params;
use crate::rng::Rng;
use serde::Serialize;

/// Drop-tail takes no parameters: the link's buffer is all there is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DropTailParams {}

impl QueueParams for DropTailParams {
    const NAME: &'static str = "droptail";
    const ABOUT: &'static str = "drop-tail FIFO: the full buffer drops arrivals";
    const FLUID: bool = true;

    fn read(_p: &mut Params, _site: Site) -> Result<Self> {
        Ok(DropTailParams {})
    }

    fn build(&self, link: LinkContext) -> Box<dyn Discipline> {
        Box::new(DropTail::new(link))
    }
}

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

impl Discipline for DropTail {
    fn acts_after_enqueue(&self) -> bool {
        false
    }

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
    use crate::queue::DropReason;

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
