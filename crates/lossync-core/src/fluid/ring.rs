//! The loss ring: signals in flight to the senders, one slot per step and a row per flow (the
//! `tcp` model's delay lines have its shape).

use rayon::prelude::*;
use std::marker::PhantomData;

/// Loss signals in flight to the senders: one slot per step, each slot holding the reductions due
/// to every flow at that step (slot-major, so a step reads one contiguous row).
/// Generic over the entry: the `tcp` model's ring holds a [`TcpDue`] per step and flow.
///
/// [`TcpDue`]: super::tcp::TcpDue
#[derive(Debug)]
pub(super) struct LossRing<T = f64> {
    pub(super) slots: usize,
    pub(super) flows: usize,
    pub(super) data: Vec<T>,
}

impl<T: Copy + Default> LossRing<T> {
    pub(super) fn new(slots: usize, flows: usize) -> Self {
        LossRing {
            slots,
            flows,
            data: vec![T::default(); slots * flows],
        }
    }

    /// The slot of step `n` (one division per step, not per signal).
    pub(super) fn slot(&self, n: usize) -> usize {
        n % self.slots
    }

    /// One RTT `rtt_s` in steps, as the ring holds it.
    #[inline]
    pub(super) fn delay(&self, rtt_s: f64, dt: f64) -> usize {
        delay_steps(self.slots, rtt_s, dt)
    }

    /// The entry of `flow` `delay` steps (from [`LossRing::delay`]) after the slot `now`.
    #[inline]
    pub(super) fn at(&mut self, now: usize, delay: usize, flow: usize) -> &mut T {
        // now < slots and delay < slots: one wrap at most.
        let mut slot = now + delay;
        if slot >= self.slots {
            slot -= self.slots;
        }
        &mut self.data[slot * self.flows + flow]
    }

    /// The row due at the step whose slot is `now` (to be read and cleared).
    #[inline]
    pub(super) fn due(&mut self, now: usize) -> &mut [T] {
        let start = now * self.flows;
        &mut self.data[start..start + self.flows]
    }
}

impl<T: Send> LossRing<T> {
    /// The ring split by flows into views of `chunk` consecutive flows each, in flow order, for
    /// the run's threads to write at once (each view only its own flows' entries).
    pub(super) fn columns(
        &mut self,
        chunk: usize,
    ) -> impl IndexedParallelIterator<Item = RingColumns<'_, T>> {
        let (slots, flows) = (self.slots, self.flows);
        let data = RingData(self.data.as_mut_ptr());
        (0..flows.div_ceil(chunk))
            .into_par_iter()
            .map(move |j| RingColumns {
                data: data.get(),
                slots,
                flows,
                lo: j * chunk,
                hi: ((j + 1) * chunk).min(flows),
                _ring: PhantomData,
            })
    }
}

/// The ring's storage, shared by the views of [`LossRing::columns`].
struct RingData<T>(*mut T);

impl<T> RingData<T> {
    // A method, so a closure captures the whole wrapper (and its Send and Sync), not the field.
    fn get(&self) -> *mut T {
        self.0
    }
}

// SAFETY: the views made from it touch disjoint entries (below).
unsafe impl<T: Send> Send for RingData<T> {}
unsafe impl<T: Send> Sync for RingData<T> {}

/// Flows `lo..hi` of every slot of a ring ([`LossRing::columns`]).
pub(super) struct RingColumns<'a, T> {
    data: *mut T,
    slots: usize,
    flows: usize,
    lo: usize,
    hi: usize,
    _ring: PhantomData<&'a mut [T]>,
}

// SAFETY: a view reaches only its own flows' entries, which no other view reaches, and the ring
// stays mutably borrowed while any view lives.
unsafe impl<T: Send> Send for RingColumns<'_, T> {}

impl<T> RingColumns<'_, T> {
    /// As [`LossRing::at`], for a flow of this view.
    #[inline]
    pub(super) fn at(&mut self, now: usize, delay: usize, flow: usize) -> &mut T {
        assert!(
            (self.lo..self.hi).contains(&flow) && now < self.slots && delay < self.slots,
            "a ring view's entry out of its range"
        );
        let mut slot = now + delay;
        if slot >= self.slots {
            slot -= self.slots;
        }
        // SAFETY: slot < slots and flow < flows, so the entry is inside the ring's data, and it
        // is this view's alone (flow is in lo..hi).
        unsafe { &mut *self.data.add(slot * self.flows + flow) }
    }
}

impl LossRing {
    /// Schedules `amount` reductions for `flow`, to arrive one RTT (`rtt_s`, its RTT now) after
    /// the step whose slot is `now`.
    #[inline]
    pub(super) fn signal(&mut self, now: usize, dt: f64, rtt_s: f64, flow: usize, amount: f64) {
        *self.at(now, self.delay(rtt_s, dt), flow) += amount;
    }
}

/// One RTT `rtt_s` in steps of `dt`, as a ring of `slots` slots holds it (at least one step, at
/// most its last slot).
#[inline]
pub(super) fn delay_steps(slots: usize, rtt_s: f64, dt: f64) -> usize {
    round_to_usize(rtt_s / dt).clamp(1, slots - 1)
}

/// `x.round() as usize` for every `x` (NaN, negatives, infinities included), without the call to
/// libm's `round` (baseline x86-64 has no rounding instruction): the tcp model signals every ACK.
#[inline]
pub(super) fn round_to_usize(x: f64) -> usize {
    let i = x as usize;
    // Exact: a double's fractional part is a double.
    if x - i as f64 >= 0.5 {
        i.saturating_add(1)
    } else {
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn round_to_usize_is_round_as_usize() {
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            -0.4,
            -0.5,
            -3.7,
            4503599627370495.5,
            9007199254740993.0,
            1.8e19,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut rng = Rng::new(1, 1);
        xs.extend((0..100_000).map(|_| 1000.0 * rng.uniform()));
        xs.extend((0..1000).map(|i| i as f64 * 0.5));
        for x in xs {
            assert_eq!(round_to_usize(x), x.round() as usize, "{x}");
        }
    }

    #[test]
    fn column_views_write_where_the_ring_would_and_only_their_own_flows() {
        // Flows 0..10 in views of 4 (0..4, 4..8, 8..10), written at once, one entry per flow
        // at a delay of its own (across the wrap for some); then the same writes through the
        // ring itself.
        let mut threaded: LossRing = LossRing::new(5, 10);
        threaded.columns(4).for_each(|mut view| {
            for flow in view.lo..view.hi {
                *view.at(3, 1 + flow % 4, flow) += flow as f64;
            }
        });
        let mut one: LossRing = LossRing::new(5, 10);
        for flow in 0..10 {
            *one.at(3, 1 + flow % 4, flow) += flow as f64;
        }
        assert_eq!(threaded.data, one.data);
        let views: Vec<(usize, usize)> = threaded.columns(4).map(|v| (v.lo, v.hi)).collect();
        assert_eq!(views, [(0, 4), (4, 8), (8, 10)]);
        // A view refuses another view's flow.
        let outside = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            threaded.columns(4).for_each(|mut view| {
                let _ = view.at(0, 1, view.hi % 10);
            })
        }));
        assert!(outside.is_err());
    }

    #[test]
    fn signals_land_one_rtt_later_across_the_wrap() {
        let mut ring = LossRing::new(5, 2);
        for n in 0..12 {
            let now = ring.slot(n);
            // 2.6 steps round to 3; 100 steps clamp to the ring's 4.
            ring.signal(now, 1.0, 2.6, 0, 1.0);
            ring.signal(now, 1.0, 100.0, 1, 1.0);
            let due = ring.due(now);
            let want = |delay: usize| if n >= delay { 1.0 } else { 0.0 };
            assert_eq!(std::mem::take(&mut due[0]), want(3), "n={n}");
            assert_eq!(std::mem::take(&mut due[1]), want(4), "n={n}");
        }
    }
}
