//! How many threads one run may use. A scenario's `run.threads` wins; without it, the process's
//! default: every core, unless the process set another (a sweep's worker runs one thread per
//! run, since its sweep already runs one run per core). Results never depend on the count.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The process's default; 0: every core.
static DEFAULT_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Sets the threads a run of this process uses when its scenario does not say (0: every core).
pub fn set_default_threads(threads: usize) {
    DEFAULT_THREADS.store(threads, Ordering::Relaxed);
}

/// The threads a run asking for `run_threads` (`run.threads`; 0: not given) uses.
pub fn threads_for(run_threads: usize) -> usize {
    match run_threads {
        0 => match DEFAULT_THREADS.load(Ordering::Relaxed) {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        },
        n => n,
    }
}
