//! Queue disciplines, as seen by the fluid engine: every queue drops what does not fit in its
//! buffer (tail drop); a discipline may also drop arrivals early with a probability that depends
//! on its state (RED). A new discipline is one file here plus its arm in [`build`].

use crate::scenario::Queue;

pub mod droptail;
pub mod red;

pub trait Discipline: Send + Sync + std::fmt::Debug {
    /// Probability that a packet arriving during the next `dt` seconds is dropped before the
    /// buffer, given the current backlog `q_pkts` of a link serving `capacity_pps`.
    fn early_drop_probability(&mut self, q_pkts: f64, dt: f64, capacity_pps: f64) -> f64;
}

pub fn build(q: &Queue) -> Box<dyn Discipline> {
    match *q {
        // XCP's router signals by feedback, not drops: its buffer is drop-tail.
        Queue::Droptail | Queue::Xcp(_) => Box::new(droptail::DropTail),
        Queue::Red {
            min_th,
            max_th,
            max_p,
            weight,
            gentle,
        } => Box::new(red::Red::new(min_th, max_th, max_p, weight, gentle)),
    }
}
