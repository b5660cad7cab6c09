//! One fluid run on several cores (`run.threads`). A step's per-flow and per-member loops are
//! split into chunks of flows that the threads update at once. Every flow's update reads only the
//! state of the step before and writes only its own, and every sum over flows (a link's
//! arrivals) is taken afterwards in member order on one thread, so the result is bit-identical
//! for every thread count and every chunking. What depends on order stays on one thread: the
//! draws of the loss thresholds (one stream, in flow order), the overflow's split, the links.

use rayon::{ThreadPool, ThreadPoolBuilder};

/// Below this many flows a step runs on one thread. A step's four parallel loops cost about
/// 30 µs of hand-offs and wake-ups (measured: 4,096 Reno flows ran slower on two threads than on
/// one, 6,000 and more faster), about what 4,000–8,000 flows' updates take on one core.
pub(super) const MIN_PARALLEL_FLOWS: usize = 8192;

/// The threads of one run, when it has more than one and enough flows to share.
#[derive(Debug)]
pub(super) struct Workers {
    pool: ThreadPool,
    threads: usize,
}

impl Workers {
    /// Workers for a run of `flows` flows asking for `threads` threads (`run.threads`, 0: not
    /// given, [`crate::threads::threads_for`]); `None` runs on the caller's thread (one thread,
    /// too few flows, or no thread could be started).
    pub(super) fn new(threads: usize, flows: usize) -> Option<Workers> {
        let threads = crate::threads::threads_for(threads);
        if threads < 2 || flows < MIN_PARALLEL_FLOWS {
            return None;
        }
        let pool = ThreadPoolBuilder::new().num_threads(threads).build().ok()?;
        Some(Workers { pool, threads })
    }

    pub(super) fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `f` with this run's threads as the pool that its parallel loops use.
    pub(super) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }

    /// The chunk of `n` flows or members one task takes: four per thread, so a thread that
    /// finishes early takes another, and not below 512 (a task's hand-off costs about what
    /// a few dozen flows' updates take).
    pub(super) fn chunk(&self, n: usize) -> usize {
        n.div_ceil(4 * self.threads).max(512)
    }
}
