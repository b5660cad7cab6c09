//! The FIFO ring every element keeps its packets in (a port's queue, a pipe), with the cache
//! lines it will touch next requested ahead of time.
//!
//! When many elements run side by side (a topology of many links), their rings are dozens of
//! streams interleaved one element at a time, too many for the hardware prefetcher to follow:
//! each push then writes a cold line and each pop reads one, and a packet-hop on a 20-link chain
//! cost about twice what it costs on a dumbbell with the same flows and packets in flight
//! (docs/packet.md, "Speed"). So a push asks for the line of the slot a few pushes ahead, and a
//! pop for the element after the new head; both are used one inter-packet time later.
//!
//! Every slot holds a valid value (`T: Default`), so any slot can be referenced and prefetched
//! without `unsafe` beyond the prefetch instruction itself. Capacity doubles when full and
//! never shrinks, as `VecDeque`'s.

/// Slots ahead of the tail whose line a push requests: far enough that the line arrives before
/// the write (a few inter-packet times), near enough that it is not evicted first.
const WRITE_AHEAD: usize = 4;

#[derive(Debug, Clone)]
pub struct Ring<T> {
    slots: Vec<T>,
    /// `slots.len() - 1`; the length is a power of two.
    mask: usize,
    head: usize,
    len: usize,
}

impl<T: Copy + Default> Ring<T> {
    /// A ring with room for at least `capacity` elements before it grows.
    pub fn with_capacity(capacity: usize) -> Self {
        let n = capacity.max(WRITE_AHEAD + 1).next_power_of_two();
        Ring {
            slots: vec![T::default(); n],
            mask: n - 1,
            head: 0,
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn push_back(&mut self, item: T) {
        if self.len == self.slots.len() {
            self.grow();
        }
        let tail = self.head + self.len;
        self.slots[tail & self.mask] = item;
        self.len += 1;
        prefetch(&self.slots[(tail + WRITE_AHEAD) & self.mask]);
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let item = self.slots[self.head];
        self.head = (self.head + 1) & self.mask;
        self.len -= 1;
        if self.len > 1 {
            // Read by the next pop, which will read it whole at once: elements are not
            // line-aligned (a pipe's are 48 bytes), so about half straddle two lines, and asking
            // for the first only left the second a miss on the next pop (a packet-hop on a
            // 20-link chain cost 1.2x what it does with both). Pushes and `prefetch_front` ask
            // for runs of consecutive elements, whose first lines cover every line.
            let next = &self.slots[(self.head + 1) & self.mask];
            prefetch(next);
            prefetch_last_line(next);
        }
        Some(item)
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        (self.len > 0).then(|| &self.slots[self.head])
    }

    #[inline]
    pub fn back(&self) -> Option<&T> {
        (self.len > 0).then(|| &self.slots[(self.head + self.len - 1) & self.mask])
    }

    /// Asks for the cache lines of the head and the element after it, which a pop coming soon
    /// reads (the second to schedule its own departure).
    #[inline]
    pub fn prefetch_front(&self) {
        if self.len > 0 {
            prefetch(&self.slots[self.head]);
            prefetch(&self.slots[(self.head + 1) & self.mask]);
        }
    }

    /// The elements, head first.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len).map(move |i| &self.slots[(self.head + i) & self.mask])
    }

    /// Twice the room, the elements moved to the start in order.
    #[cold]
    fn grow(&mut self) {
        let n = 2 * self.slots.len();
        let mut slots = Vec::with_capacity(n);
        slots.extend(self.iter().copied());
        slots.resize(n, T::default());
        self.slots = slots;
        self.mask = n - 1;
        self.head = 0;
    }
}

/// Asks the CPU to load the cache line of `item`; never faults and changes nothing the program
/// can observe; a no-op on other architectures.
#[inline(always)]
fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads no memory architecturally and cannot fault; the pointer comes
    // from a live reference anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// As [`prefetch`], for the line of `item`'s last byte.
#[inline(always)]
fn prefetch_last_line<T>(item: &T) {
    let last = (item as *const T)
        .cast::<u8>()
        .wrapping_add(size_of::<T>().saturating_sub(1));
    // SAFETY: `last` is the last byte of `item`, inside a live reference.
    prefetch(unsafe { &*last });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// The ring is a FIFO: against `VecDeque` on a pseudo-random mix of pushes and pops that
    /// grows it several times and wraps it many.
    #[test]
    fn fifo_as_vecdeque() {
        let mut ring = Ring::with_capacity(3);
        let mut reference = VecDeque::new();
        let mut x: u64 = 12345;
        for i in 0..100_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if (x >> 33) % 5 < 3 {
                ring.push_back(i);
                reference.push_back(i);
            } else {
                assert_eq!(ring.pop_front(), reference.pop_front());
            }
            assert_eq!(ring.len(), reference.len());
            assert_eq!(ring.front(), reference.front());
            assert_eq!(ring.back(), reference.back());
        }
        assert!(ring.iter().eq(reference.iter()));
        assert!(ring.slots.len().is_power_of_two() && ring.slots.len() >= ring.len());
    }
}
