//! Random Early Detection (Floyd & Jacobson, IEEE/ACM ToN 1993), in the fluid form of Misra,
//! Gong, Towsley (SIGCOMM 2000): the average queue follows
//! `d avg/dt = ln(1 − w)/δ · (avg − q)` with δ = 1/C (one sample per packet served), and the drop
//! probability rises linearly from 0 at min_th to max_p at max_th; with `gentle` (Floyd 2000,
//! "Recommendation on using the gentle variant of RED") from max_p at max_th to 1 at 2·max_th.
//!
//! Packet by packet: the average is updated at every arrival (data and ACKs alike), decayed over
//! an idle period as if m = idle / (packet time) empty-queue samples had been taken (Floyd &
//! Jacobson 1993 §4), and each arrival is dropped independently with the probability at that
//! average, without the count-based spacing of the original.

use super::{
    signal, tail, Arrival, Buffer, Discipline, DropReason, LinkContext, QueueParams, Site, Verdict,
};
use crate::error::{Error, Result};
use crate::params::Params;
use crate::rng::Rng;
use serde::Serialize;

/// RED's parameters: thresholds on the average queue in packets, the drop probability at
/// max_th, the average's weight per sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RedParams {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub weight: f64,
    pub gentle: bool,
    /// Mark ECN-capable packets CE instead of dropping them early (RFC 3168 §7), as Linux's
    /// `red ... ecn` does, above max_th too (no `harddrop`); a full buffer still drops.
    pub ecn: bool,
}

impl QueueParams for RedParams {
    const NAME: &'static str = "red";
    const ABOUT: &'static str =
        "Random Early Detection (Floyd & Jacobson 1993), gentle by default (Floyd 2000)";
    const FLUID: bool = true;

    fn read(p: &mut Params, site: Site) -> Result<Self> {
        let min_th = p.required_f64("min_th", |v| v >= 0.0, "at least 0 packets")?;
        let max_th = p.required_f64("max_th", |v| v > 0.0, "more than 0 packets")?;
        if max_th <= min_th {
            return Err(Error::field(p.field("max_th"), "must exceed min_th"));
        }
        if max_th > site.buffer_pkts {
            return Err(Error::field(
                p.field("max_th"),
                "must not exceed the buffer",
            ));
        }
        Ok(RedParams {
            min_th,
            max_th,
            // max_p 0.1 and w_q 0.002: Floyd & Jacobson 1993 §11 and Floyd's RED page defaults.
            max_p: p.f64("max_p", 0.1, |v| (0.0..=1.0).contains(&v), "in [0, 1]")?,
            weight: p.f64("weight", 0.002, |v| v > 0.0 && v <= 1.0, "in (0, 1]")?,
            gentle: p.bool("gentle", true)?,
            ecn: p.bool("ecn", false)?,
        })
    }

    fn build(&self, link: LinkContext) -> Box<dyn Discipline> {
        let RedParams {
            min_th,
            max_th,
            max_p,
            weight,
            gentle,
            ecn,
        } = *self;
        let mut red = Red::new(min_th, max_th, max_p, weight, gentle, link);
        red.ecn = ecn;
        Box::new(red)
    }
}

#[derive(Debug, Clone)]
pub struct Red {
    min_th: f64,
    max_th: f64,
    max_p: f64,
    weight: f64,
    gentle: bool,
    ecn: bool,
    avg: f64,
    buffer: Buffer,
    packet_time_ps: u64,
    /// When the queue last became empty.
    idle_since_ps: u64,
}

impl Red {
    pub fn new(
        min_th: f64,
        max_th: f64,
        max_p: f64,
        weight: f64,
        gentle: bool,
        link: LinkContext,
    ) -> Self {
        Red {
            min_th,
            max_th,
            max_p,
            weight,
            gentle,
            ecn: false,
            avg: 0.0,
            buffer: link.buffer,
            packet_time_ps: link.packet_time_ps,
            idle_since_ps: 0,
        }
    }

    pub fn average(&self) -> f64 {
        self.avg
    }

    /// Drop probability at average queue `avg` (packets).
    pub fn probability(&self, avg: f64) -> f64 {
        if avg < self.min_th {
            0.0
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle && avg < 2.0 * self.max_th {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            1.0
        }
    }
}

impl Discipline for Red {
    fn buffer(&self) -> Buffer {
        self.buffer
    }

    fn enqueue(&mut self, now_ps: u64, backlog: usize, a: Arrival<'_>, rng: &mut Rng) -> Verdict {
        if backlog == 0 {
            let m = (now_ps - self.idle_since_ps) as f64 / self.packet_time_ps as f64;
            self.avg *= (1.0 - self.weight).powf(m);
        } else {
            self.avg += self.weight * (backlog as f64 - self.avg);
        }
        let p = self.probability(self.avg);
        if p > 0.0 && rng.uniform() < p {
            let verdict = signal(self.ecn, a.ecn);
            if verdict == Verdict::Dropped(DropReason::Early) {
                return verdict;
            }
            // A mark still needs room in the buffer.
            return match tail(backlog, self.buffer) {
                Verdict::Queued => verdict,
                full => full,
            };
        }
        tail(backlog, self.buffer)
    }

    fn departed(&mut self, now_ps: u64, backlog: usize) {
        if backlog == 0 {
            self.idle_since_ps = now_ps;
        }
    }

    fn early_drop_probability(&mut self, q: f64, dt: f64, capacity_pps: f64) -> f64 {
        // One EWMA sample per packet time: after C·dt samples the old average keeps (1−w)^(C·dt).
        let keep = (1.0 - self.weight).powf(capacity_pps * dt);
        self.avg = q + (self.avg - q) * keep;
        self.probability(self.avg)
    }

    fn fluid_marks(&self, _p: f64) -> bool {
        self.ecn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link() -> LinkContext {
        LinkContext {
            buffer: Buffer::new(100.0),
            capacity_pps: 100.0,
            packet_time_ps: 10_000_000_000,
            packet_size_bytes: 1500.0,
            first_interval_s: 0.1,
        }
    }

    #[test]
    fn piecewise_linear_probability() {
        let r = Red::new(10.0, 30.0, 0.1, 0.002, true, link());
        assert_eq!(r.probability(5.0), 0.0);
        assert!((r.probability(20.0) - 0.05).abs() < 1e-15); // halfway: max_p/2
        assert!((r.probability(45.0) - 0.55).abs() < 1e-15); // gentle: 0.1 + 0.9·15/30
        assert_eq!(r.probability(60.0), 1.0);
        let hard = Red::new(10.0, 30.0, 0.1, 0.002, false, link());
        assert_eq!(hard.probability(31.0), 1.0);
    }

    #[test]
    fn average_converges_at_the_ewma_rate() {
        // After n packet times the average has moved 1 − (1−w)^n of the way to a constant queue.
        let mut r = Red::new(10.0, 30.0, 0.1, 0.01, true, link());
        r.early_drop_probability(100.0, 1.0, 100.0); // 100 samples
        let expect = 100.0 * (1.0 - 0.99f64.powi(100));
        assert!((r.average() - expect).abs() < 1e-9);
    }

    #[test]
    fn packet_average_moves_per_arrival_and_decays_over_idle_time() {
        // w = 1/2, one packet time = 10 ps. Arrival to 4 queued: avg = 0 + (4 − 0)/2 = 2.
        let ctx = LinkContext {
            packet_time_ps: 10,
            ..link()
        };
        let mut r = Red::new(50.0, 60.0, 0.1, 0.5, false, ctx);
        let mut rng = Rng::new(1, 0);
        let ack = || Arrival::ack(0, 0.05);
        assert_eq!(r.enqueue(0, 4, ack(), &mut rng), Verdict::Queued);
        assert_eq!(r.average(), 2.0);
        // Empty from t = 100; an arrival at t = 120 finds it idle for 2 packet times:
        // avg = 2·(1/2)² = 0.5 (Floyd & Jacobson 1993 §4).
        r.departed(100, 0);
        r.enqueue(120, 0, ack(), &mut rng);
        assert_eq!(r.average(), 0.5);
        // Past 2·max_th without gentle: every arrival is dropped early, even with room.
        let mut r = Red::new(1.0, 2.0, 0.1, 1.0, false, ctx);
        let v = r.enqueue(0, 10, ack(), &mut rng);
        assert_eq!(v, Verdict::Dropped(DropReason::Early));
        // A full buffer drops at the tail.
        let mut r = Red::new(1e3, 2e3, 0.1, 0.5, false, ctx);
        assert_eq!(
            r.enqueue(0, 100, ack(), &mut rng),
            Verdict::Dropped(DropReason::Overflow)
        );
    }
}
