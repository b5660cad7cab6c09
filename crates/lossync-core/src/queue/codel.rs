//! CoDel, Controlled Delay (RFC 8289; Nichols & Jacobson, CACM 2012): the queue is judged by how
//! long packets wait. When the sojourn time of departing packets has stayed above `target` for a
//! whole `interval`, CoDel enters its dropping state and drops (or, with `ecn`, marks) one
//! departing packet, then the next after `interval/√count` (§4.4's control law), until a packet
//! leaves below target. The state machine is RFC 8289 §5's pseudocode, run per departing packet
//! (the port asks again at once after a drop, as the RFC's dequeue loop does); "the queue holds
//! at most one MTU" (§4.2) is read as "at most one packet remains". Defaults: target 5 ms,
//! interval 100 ms (§4.3–4.4; Linux `codel` 6.x). The buffer is the link's, tail-dropped when
//! full (Linux's `limit`).

use super::{
    signal, tail, Arrival, Buffer, Departure, Discipline, LinkContext, QueueParams, Site, Verdict,
};
use crate::error::Result;
use crate::params::Params;
use crate::rng::Rng;
use serde::Serialize;

/// RFC 8289 §4.3: a 5 ms target "works well".
pub const TARGET_S: f64 = 0.005;
/// RFC 8289 §4.4: a 100 ms interval, "a worst-case RTT" for the Internet.
pub const INTERVAL_S: f64 = 0.1;

/// CoDel's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CodelParams {
    /// Acceptable standing sojourn time, seconds.
    pub target: f64,
    /// The window over which the sojourn time must stay above target, seconds.
    pub interval: f64,
    /// Mark ECN-capable packets CE instead of dropping them (RFC 8289 §5; Linux `ecn`).
    pub ecn: bool,
}

impl QueueParams for CodelParams {
    const NAME: &'static str = "codel";
    const ABOUT: &'static str = "CoDel (RFC 8289): drop or mark when the sojourn time stays above 5 ms for 100 ms";
    // No standard fluid law (docs/queues.md): the fluid engine refuses it.
    const FLUID: bool = false;

    fn read(p: &mut Params, _site: Site) -> Result<Self> {
        let q = CodelParams {
            target: p.seconds("target", TARGET_S, |v| v > 0.0 && v <= 10.0, "in (0, 10] s")?,
            interval: p.seconds("interval", INTERVAL_S, |v| v > 0.0 && v <= 100.0, "in (0, 100] s")?,
            ecn: p.bool("ecn", false)?,
        };
        check_target(p, q.target, q.interval)?;
        Ok(q)
    }

    fn build(&self, link: LinkContext) -> Box<dyn Discipline> {
        Box::new(Codel {
            buffer: link.buffer,
            state: CodelState::new(self.target, self.interval),
            ecn: self.ecn,
        })
    }
}

/// RFC 8289 §4.3: the target is a small fraction (5–10%) of the interval; above it CoDel would
/// act before a whole interval of evidence.
pub fn check_target(p: &Params, target_s: f64, interval_s: f64) -> Result<()> {
    if target_s >= interval_s {
        return Err(crate::error::Error::field(
            p.field("target"),
            "must be below the interval (RFC 8289 §4.3: 5–10% of it)",
        ));
    }
    Ok(())
}

/// One queue's CoDel state (RFC 8289 §5's variables), in picoseconds.
#[derive(Debug, Clone, Copy)]
pub struct CodelState {
    target_ps: u64,
    interval_ps: u64,
    /// When the sojourn time will have been above target for an interval (0: it is not above).
    first_above_ps: u64,
    drop_next_ps: u64,
    count: u32,
    last_count: u32,
    dropping: bool,
    /// A drop in the dropping state schedules the next one only if the packet after it is still
    /// above target (§5: `drop_next = control_law(drop_next, count)` after `dodequeue`).
    law_pending: bool,
}

impl CodelState {
    pub fn new(target_s: f64, interval_s: f64) -> Self {
        CodelState {
            target_ps: (target_s * 1e12).round() as u64,
            interval_ps: (interval_s * 1e12).round() as u64,
            first_above_ps: 0,
            drop_next_ps: 0,
            count: 0,
            last_count: 0,
            dropping: false,
            law_pending: false,
        }
    }

    /// §4.4: the next drop `interval/√count` after `t`.
    fn control_law(&self, t_ps: u64) -> u64 {
        t_ps + (self.interval_ps as f64 / (self.count as f64).sqrt()) as u64
    }

    /// §5 `dodequeue`: whether this departure, after `sojourn_ps` in the queue with
    /// `backlog_after` packets left behind it, finds the queue persistently above target.
    fn ok_to_drop(&mut self, now_ps: u64, sojourn_ps: u64, backlog_after: usize) -> bool {
        if sojourn_ps < self.target_ps || backlog_after <= 1 {
            self.first_above_ps = 0;
            return false;
        }
        if self.first_above_ps == 0 {
            self.first_above_ps = now_ps + self.interval_ps;
            return false;
        }
        now_ps >= self.first_above_ps
    }

    /// The queue ran empty (§5: `dodequeue` found nothing; `dequeue` leaves the dropping state).
    pub fn empty(&mut self) {
        self.first_above_ps = 0;
        self.dropping = false;
        self.law_pending = false;
    }

    /// §5 `dequeue` for one departing packet: whether CoDel signals congestion to it.
    pub fn should_signal(&mut self, now_ps: u64, sojourn_ps: u64, backlog_after: usize) -> bool {
        let ok = self.ok_to_drop(now_ps, sojourn_ps, backlog_after);
        if self.dropping {
            if !ok {
                self.dropping = false;
                self.law_pending = false;
                return false;
            }
            if std::mem::take(&mut self.law_pending) {
                self.drop_next_ps = self.control_law(self.drop_next_ps);
            }
            if now_ps >= self.drop_next_ps {
                self.count += 1;
                self.law_pending = true;
                return true;
            }
            return false;
        }
        if !ok {
            return false;
        }
        // Enter the dropping state, and drop this packet. §5: start from the previous count if
        // the last dropping state ended recently (within 16 intervals).
        self.dropping = true;
        let delta = self.count.saturating_sub(self.last_count);
        self.count = if delta > 1 && now_ps.saturating_sub(self.drop_next_ps) < 16 * self.interval_ps {
            delta
        } else {
            1
        };
        self.drop_next_ps = self.control_law(now_ps);
        self.last_count = self.count;
        true
    }

    pub fn count(&self) -> u32 {
        self.count
    }
}

#[derive(Debug)]
pub struct Codel {
    buffer: Buffer,
    state: CodelState,
    ecn: bool,
}

impl Discipline for Codel {
    fn buffer(&self) -> Buffer {
        self.buffer
    }

    fn enqueue(&mut self, _now_ps: u64, backlog: usize, _a: Arrival<'_>, _rng: &mut Rng) -> Verdict {
        tail(backlog, self.buffer)
    }

    fn dequeue(&mut self, now_ps: u64, backlog: usize, d: &Departure, _rng: &mut Rng) -> Verdict {
        if self.state.should_signal(now_ps, d.sojourn_ps, backlog) {
            signal(self.ecn, d.ecn)
        } else {
            Verdict::Queued
        }
    }

    fn departed(&mut self, _now_ps: u64, backlog: usize) {
        if backlog == 0 {
            self.state.empty();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000_000;

    #[test]
    fn drops_after_an_interval_above_target_then_at_interval_over_sqrt_count() {
        let mut c = CodelState::new(0.005, 0.1);
        // Sojourn 10 ms from t = 0: first_above = 100 ms; nothing before.
        assert!(!c.should_signal(0, 10 * MS, 50));
        assert!(!c.should_signal(99 * MS, 10 * MS, 50));
        // At 100 ms: enter dropping, count 1, next drop 100 ms later.
        assert!(c.should_signal(100 * MS, 10 * MS, 50));
        assert!(!c.should_signal(150 * MS, 10 * MS, 50));
        // Second drop at 200 ms (count 2), third at 200 + 100/√2 = 270.71 ms.
        assert!(c.should_signal(200 * MS, 10 * MS, 50));
        assert!(!c.should_signal(270 * MS, 10 * MS, 50));
        assert!(c.should_signal(271 * MS, 10 * MS, 50));
        assert_eq!(c.count(), 3);
        // A packet below target leaves the dropping state.
        assert!(!c.should_signal(272 * MS, MS, 50));
        // Back above target soon after: a new interval must pass first, then count restarts at
        // delta = 3 − 1 = 2 (RFC 8289 §5, within 16 intervals).
        assert!(!c.should_signal(300 * MS, 10 * MS, 50));
        assert!(c.should_signal(400 * MS, 10 * MS, 50));
        assert_eq!(c.count(), 2);
    }

    #[test]
    fn a_queue_of_one_packet_is_never_dropped_from() {
        let mut c = CodelState::new(0.005, 0.1);
        for t in 0..10 {
            assert!(!c.should_signal(t * 100 * MS, 50 * MS, 1));
        }
    }
}
