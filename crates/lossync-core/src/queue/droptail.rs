//! Drop-tail: no early drops; the buffer overflow is the only loss.

use super::Discipline;

#[derive(Debug, Clone, Copy)]
pub struct DropTail;

impl Discipline for DropTail {
    fn early_drop_probability(&mut self, _q: f64, _dt: f64, _c: f64) -> f64 {
        0.0
    }
}
