//! DualPI2, the DualQ Coupled AQM (RFC 9332; Linux `sch_dualpi2`, merged in 6.17): two queues
//! behind one buffer, one for L4S traffic and one for classic traffic, whose AQMs are coupled so
//! that a scalable flow (DCTCP, Prague) and a Reno-friendly one get about the same rate while the
//! L4S queue stays around a millisecond.
//!
//! - Classification (RFC 9332 §2.3, RFC 9331 §5.1): ECT(1) and CE go to the L queue, Not-ECT
//!   and ECT(0) to the C queue.
//! - One PI controller (RFC 9332 §2.4, Appendix A.1 `dualpi2_update`) drives the base
//!   probability p' from the classic queue's delay every `t_update`:
//!   `p' += alpha·(qdelay − target) + beta·(qdelay − qdelay_old)`, clipped to [0, 1].
//! - Coupling (RFC 9332 §2.1, §2.4): the classic queue drops (or marks ECT(0)) with
//!   p_C = p'² ("PI2": squaring suits the 1/√p response of classic congestion controls); the L
//!   queue marks with p_CL = k·p', or with its own native AQM where that is higher (RFC 9332
//!   §2.4 and Appendix A.1: p_L = max(native, p_CL); here Linux's native L AQM, a step at
//!   `step_thresh` of sojourn time).
//! - Overload (RFC 9332 §4.2.3; Appendix A.1's p_Cmax = min(1/k², 1)): once p_CL = k·p' exceeds
//!   1 the L queue can no longer be held by marks; with `drop_overload` (Linux's default) its
//!   packets are then dropped with p_C like classic ones (and the rest marked), and ECT(0)
//!   packets in the C queue are dropped instead of marked (Linux `dualpi2_classic_marking`,
//!   `dualpi2_scalable_marking`). Without it p' is capped at 1/k (Linux `calculate_probability`)
//!   and the buffer's tail drop takes over.
//! - AQM actions at dequeue (RFC 9332 Appendix A.1 marks and drops in `dualpi2_dequeue`; Linux's
//!   default `drop_early` = dequeue), never while fewer than two packets remain queued (Linux
//!   `must_drop`: "never mark/drop if we have a standing queue of less than 2 MTUs").
//! - Scheduler: Linux's weighted round robin (`dequeue_packet`), not Appendix A.1's time-shifted
//!   FIFO: the L queue is served unless a credit, raised by `c_protection`% of every L packet
//!   sent while the C queue waits and lowered by (100 − `c_protection`)% of every C packet sent
//!   while the L queue waits, has turned positive. It starts at the C weight minus the L weight
//!   (so the L queue goes first) and is reset when both queues are empty. RFC 9332 §4.2.2 asks
//!   only for a scheduler that cannot starve the C queue; WRR is what the kernel ships (weights
//!   10/90 by default). The credit counts data packets (the size a departure reports: ACKs weigh
//!   nothing, where Linux counts their bytes, 1/37 of a full packet).
//!
//! The qdelay the PI controller sees is the C queue head's waiting time at each update instant
//! (RFC 9332 Appendix A.1: "curq = cq.time()", the queuing time of the first-in classic packet;
//! Linux takes the larger of the two queues' head delays, which differs only when the L queue
//! holds the older head). There is no timer: the updates are run lazily, one per elapsed
//! `t_update` from t = `t_update` on, whenever the port asks which queue to serve
//! ([`Discipline::next_queue`], with the queues' heads in hand). Between two such calls the C
//! queue only grows at its tail (its head leaves only right after a call, and the buffer
//! tail-drops rather than pushing out), so the head seen then is the head at every update
//! instant since the last call, or arrived after it (an empty queue: delay 0).
//!
//! Defaults are Linux's (`dualpi2_reset_default`): target 15 ms (RFC 9332 Appendix A.1's
//! target), t_update 16 ms, alpha 0.16 Hz and beta 3.2 Hz (41/256 and 819/256; Appendix A.1
//! derives 15 ms, 0.15 Hz and 3 Hz from target = 15 ms and RTT_max = 100 ms: Tupdate =
//! min(target, RTT_max/3), alpha = 0.1·Tupdate/RTT_max², beta = 0.3/RTT_max), k = 2 (RFC 9332
//! §2.1 and Appendix A.1: Reno/CUBIC and DCTCP-like flows get about equal windows; Linux: "window
//! fairness for equal RTTs"),
//! step 1 ms (Linux; RFC 9332 Appendix A.1 uses a ramp from 800 µs to 1.2 ms),
//! C-queue weight 10% and drop on overload (Linux). The buffer is the link's, tail-dropped
//! when full (Linux's `limit`).
//!
//! Fluid face ([`Discipline::fluid_dual`]): the same PI controller, run at its update instants on
//! the classic queue's head wait, gives each step's signals (p'², k·p' or the step's 1); the
//! fluid engine keeps the two queues and their scheduler (`fluid/dual.rs`).

use super::{
    tail, Arrival, Buffer, Departure, Discipline, DropReason, DualSignals, Ecn, LinkContext,
    QueueParams, Site, Verdict,
};
use crate::error::Result;
use crate::params::Params;
use crate::rng::Rng;
use serde::Serialize;

/// RFC 9332 Appendix A.1 and Linux: the classic queue's delay target, 15 ms.
pub const TARGET_S: f64 = 0.015;
/// Linux `dualpi2_reset_default`: the PI update interval, 16 ms (Appendix A.1: min(target,
/// RTT_max/3) = 15 ms).
pub const T_UPDATE_S: f64 = 0.016;
/// Linux: the PI integral gain, 41/256 ≈ 0.16 Hz (Appendix A.1: 0.1·Tupdate/RTT_max² = 0.15 Hz).
pub const ALPHA_HZ: f64 = 0.16;
/// Linux: the PI proportional gain, 819/256 ≈ 3.2 Hz (Appendix A.1: 0.3/RTT_max = 3 Hz).
pub const BETA_HZ: f64 = 3.2;
/// RFC 9332 §2.1 and Appendix A.1: the coupling factor k = 2.
pub const COUPLING: f64 = 2.0;
/// Linux: the L queue's step threshold on sojourn time, 1 ms.
pub const STEP_THRESH_S: f64 = 0.001;
/// Linux: the C queue's share of the WRR scheduler, 10%.
pub const C_PROTECTION_PCT: f64 = 10.0;

/// The classic queue (Not-ECT, ECT(0)).
pub const C: usize = 0;
/// The L4S queue (ECT(1), CE).
pub const L: usize = 1;

/// DualPI2's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DualPi2Params {
    /// The classic queue's delay target, seconds.
    pub target: f64,
    /// The PI controller's update interval, seconds.
    pub t_update: f64,
    /// Integral gain, per second (probability per second of delay above target, per update).
    pub alpha: f64,
    /// Proportional gain, per second (probability per second of delay change, per update).
    pub beta: f64,
    /// Coupling factor k: the L queue marks with k·p', the C queue signals with p'².
    pub k: f64,
    /// The L queue marks every packet whose sojourn time exceeds this, seconds.
    pub step_thresh: f64,
    /// The C queue's weight in the scheduler, percent (the L queue has the rest).
    pub c_protection: f64,
    /// On overload (k·p' > 1) drop L4S packets with p'² and classic ECT(0) ones instead of
    /// marking; otherwise cap p' at 1/k and let the buffer overflow.
    pub drop_overload: bool,
}

impl QueueParams for DualPi2Params {
    const NAME: &'static str = "dualpi2";
    const ABOUT: &'static str = "DualPI2 (RFC 9332): L4S and classic queues, PI on 15 ms coupled as k·p' and p'², L step at 1 ms";
    // The fluid law: `Discipline::fluid_dual` (the fluid engine runs it under the `tcp` loss model).
    const FLUID: bool = true;
    const L4S: bool = true;
    const DUAL: bool = true;

    fn read(p: &mut Params, _site: Site) -> Result<Self> {
        Ok(DualPi2Params {
            target: p.seconds("target", TARGET_S, |v| v > 0.0 && v <= 10.0, "in (0, 10] s")?,
            t_update: p.seconds("t_update", T_UPDATE_S, |v| v > 0.0 && v <= 10.0, "in (0, 10] s")?,
            alpha: p.f64("alpha", ALPHA_HZ, |v| v > 0.0 && v <= 1e4, "in (0, 10000] per second")?,
            beta: p.f64("beta", BETA_HZ, |v| v > 0.0 && v <= 1e4, "in (0, 10000] per second")?,
            k: p.f64("k", COUPLING, |v| (1.0..=255.0).contains(&v), "in [1, 255]")?,
            step_thresh: p.seconds(
                "step_thresh",
                STEP_THRESH_S,
                |v| (0.0..=10.0).contains(&v),
                "in [0, 10] s",
            )?,
            c_protection: p.f64(
                "c_protection",
                C_PROTECTION_PCT,
                |v| (0.0..=100.0).contains(&v),
                "in [0, 100] %",
            )?,
            drop_overload: p.bool("drop_overload", true)?,
        })
    }

    fn build(&self, link: LinkContext) -> Box<dyn Discipline> {
        Box::new(DualPi2 {
            buffer: link.buffer,
            pi: Pi::new(self),
            k: self.k,
            step_thresh_ps: ps(self.step_thresh),
            drop_overload: self.drop_overload,
            wc: self.c_protection,
            wl: 100.0 - self.c_protection,
            credit: self.c_protection - (100.0 - self.c_protection),
            credit_rate: 0.0,
        })
    }
}

fn ps(s: f64) -> u64 {
    (s * 1e12).round() as u64
}

/// The PI controller of RFC 9332 Appendix A.1 (`dualpi2_update`), updated every `t_update`.
#[derive(Debug, Clone, Copy)]
pub struct Pi {
    target_s: f64,
    alpha: f64,
    beta: f64,
    t_update_ps: u64,
    /// Without `drop_overload`, p' is capped at 1/k (Linux `calculate_probability`).
    cap: f64,
    /// The base probability p'.
    p: f64,
    prev_qdelay_s: f64,
    next_update_ps: u64,
}

impl Pi {
    pub fn new(q: &DualPi2Params) -> Self {
        let t_update_ps = ps(q.t_update).max(1);
        Pi {
            target_s: q.target,
            alpha: q.alpha,
            beta: q.beta,
            t_update_ps,
            cap: if q.drop_overload { 1.0 } else { 1.0 / q.k },
            p: 0.0,
            prev_qdelay_s: 0.0,
            next_update_ps: t_update_ps,
        }
    }

    /// One update with the classic queue's delay `qdelay_s` (Appendix A.1:
    /// `p' = p' + alpha·(curq − target) + beta·(curq − prevq)`, clipped to [0, 1]).
    pub fn update(&mut self, qdelay_s: f64) {
        let delta =
            self.alpha * (qdelay_s - self.target_s) + self.beta * (qdelay_s - self.prev_qdelay_s);
        self.p = (self.p + delta).clamp(0.0, self.cap);
        self.prev_qdelay_s = qdelay_s;
    }

    /// Runs every update due by `now_ps`, the C queue's head having arrived at `c_head_ps`
    /// (`None`: empty) at each of them, or after (then the queue was empty).
    pub fn catch_up(&mut self, now_ps: u64, c_head_ps: Option<u64>) {
        while self.next_update_ps <= now_ps {
            let t = self.next_update_ps;
            let qdelay_ps = c_head_ps.map_or(0, |h| t.saturating_sub(h));
            self.update(qdelay_ps as f64 * 1e-12);
            self.next_update_ps += self.t_update_ps;
        }
    }

    /// Fluid face: runs every update due by `now_ps` with the classic queue's delay `qdelay_s`.
    pub fn catch_up_fluid(&mut self, now_ps: u64, qdelay_s: f64) {
        while self.next_update_ps <= now_ps {
            self.update(qdelay_s);
            self.next_update_ps += self.t_update_ps;
        }
    }

    pub fn base(&self) -> f64 {
        self.p
    }
}

/// The coupled probabilities from the base probability p' (RFC 9332 §2.4, Appendix A.1):
/// the classic p_C = p'² and the L queue's coupled p_CL = k·p' (both at most 1).
pub fn coupled(p_base: f64, k: f64) -> (f64, f64) {
    ((p_base * p_base).min(1.0), (k * p_base).min(1.0))
}

/// Overload (RFC 9332 §4.2.3): k·p' > 1, i.e. p_C = p'² above Appendix A.1's p_Cmax = 1/k².
pub fn overloaded(p_base: f64, k: f64) -> bool {
    k * p_base > 1.0
}

#[derive(Debug)]
pub struct DualPi2 {
    buffer: Buffer,
    pi: Pi,
    k: f64,
    step_thresh_ps: u64,
    drop_overload: bool,
    /// WRR weights (percent) and credit (percent × data packets; sign: which queue goes next).
    wc: f64,
    wl: f64,
    credit: f64,
    /// What the packet chosen by `next_queue` adds to the credit per data packet, once sent.
    credit_rate: f64,
}

impl DualPi2 {
    fn reset_credit(&mut self) {
        self.credit = self.wc - self.wl;
    }

    /// The PI (coupled) verdict for a departing packet (Linux `must_drop`).
    fn coupled_verdict(&self, d: &Departure, rng: &mut Rng) -> Verdict {
        let p = self.pi.base();
        let (p_c, p_cl) = coupled(p, self.k);
        let overload = overloaded(p, self.k);
        let drop = Verdict::Dropped(DropReason::Early);
        if d.sub == L {
            if overload {
                // Classic drop first, then mark the rest (p_CL saturated at 1).
                if self.drop_overload && rng.uniform() < p_c {
                    return drop;
                }
                return if d.ecn.capable() { Verdict::Marked } else { drop };
            }
            if p_cl > 0.0 && rng.uniform() < p_cl {
                return if d.ecn.capable() { Verdict::Marked } else { drop };
            }
            return Verdict::Queued;
        }
        if p_c > 0.0 && rng.uniform() < p_c {
            return if overload || !d.ecn.capable() {
                drop
            } else {
                Verdict::Marked
            };
        }
        Verdict::Queued
    }
}

impl Discipline for DualPi2 {
    fn buffer(&self) -> Buffer {
        self.buffer
    }

    fn queues(&self) -> usize {
        2
    }

    fn classify(&mut self, _flow: u32, _is_ack: bool, ecn: Ecn) -> usize {
        if ecn.l4s() {
            L
        } else {
            C
        }
    }

    fn enqueue(&mut self, _now_ps: u64, backlog: usize, _a: Arrival<'_>, _rng: &mut Rng) -> Verdict {
        tail(backlog, self.buffer)
    }

    fn next_queue(&mut self, now_ps: u64, head_enqueued_ps: &dyn Fn(usize) -> Option<u64>) -> usize {
        let c = head_enqueued_ps(C);
        self.pi.catch_up(now_ps, c);
        let l_waits = head_enqueued_ps(L).is_some();
        if l_waits && (c.is_none() || self.credit <= 0.0) {
            self.credit_rate = if c.is_some() { self.wc } else { 0.0 };
            L
        } else {
            self.credit_rate = if l_waits { -self.wl } else { 0.0 };
            C
        }
    }

    /// The fluid law (the coupled PI of De Schepper et al., "PI2", CoNEXT 2016, with RFC 9332's
    /// L step): the PI controller runs on the classic queue's delay at its update instants; the
    /// classic fluid is signalled with p'², the L fluid with k·p', or wholly while the L queue's
    /// delay exceeds the step; no coupled signal below a standing queue of two packets (Linux
    /// `must_drop`), as the packet face.
    fn fluid_dual(
        &mut self,
        now_s: f64,
        delay_c_s: f64,
        delay_l_s: f64,
        backlog_pkts: f64,
    ) -> Option<DualSignals> {
        self.pi.catch_up_fluid(ps(now_s), delay_c_s);
        let p = self.pi.base();
        let (p_c, p_cl) = coupled(p, self.k);
        let coupled_on = backlog_pkts >= 2.0;
        let step = delay_l_s > self.step_thresh_ps as f64 * 1e-12;
        Some(DualSignals {
            p_c: if coupled_on { p_c } else { 0.0 },
            p_l: if step {
                1.0
            } else if coupled_on {
                p_cl
            } else {
                0.0
            },
            overload: coupled_on && overloaded(p, self.k),
            c_share: self.wc / 100.0,
        })
    }

    fn dequeue(&mut self, _now_ps: u64, backlog: usize, d: &Departure, rng: &mut Rng) -> Verdict {
        let mut verdict = if backlog >= 2 {
            self.coupled_verdict(d, rng)
        } else {
            Verdict::Queued
        };
        if verdict == Verdict::Queued && d.sub == L && d.sojourn_ps > self.step_thresh_ps {
            verdict = if d.ecn.capable() {
                Verdict::Marked
            } else {
                Verdict::Dropped(DropReason::Early)
            };
        }
        match verdict {
            Verdict::Dropped(_) => {
                if backlog == 0 {
                    self.reset_credit();
                }
            }
            _ => self.credit += self.credit_rate * d.size_pkts,
        }
        verdict
    }

    fn departed(&mut self, _now_ps: u64, backlog: usize) {
        if backlog == 0 {
            self.reset_credit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const MS: u64 = 1_000_000_000;

    fn params(extra: &[(&str, serde_json::Value)]) -> Result<DualPi2Params> {
        let values: BTreeMap<String, serde_json::Value> =
            extra.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let mut p = Params::of_discipline(&values, "queue");
        let q = DualPi2Params::read(&mut p, Site::UNKNOWN)?;
        p.finish()?;
        Ok(q)
    }

    fn link() -> LinkContext {
        LinkContext {
            buffer: Buffer::new(1000.0),
            capacity_pps: 8333.3,
            packet_time_ps: 120 * MS / 1000,
            packet_size_bytes: 1500.0,
            first_interval_s: 0.1,
        }
    }

    fn departure(sub: usize, ecn: Ecn, sojourn_ps: u64) -> Departure {
        Departure {
            flow: 0,
            sub,
            ecn,
            size_pkts: 1.0,
            is_ack: false,
            sojourn_ps,
        }
    }

    #[test]
    fn defaults_are_linux_and_rfc_9332() {
        let q = params(&[]).unwrap();
        assert_eq!(
            q,
            DualPi2Params {
                target: 0.015,
                t_update: 0.016,
                alpha: 0.16,
                beta: 3.2,
                k: 2.0,
                step_thresh: 0.001,
                c_protection: 10.0,
                drop_overload: true,
            }
        );
        let e = params(&[("k", 0.5.into())]).unwrap_err().to_string();
        assert!(e.contains("queue.k") && e.contains("[1, 255]"), "{e}");
        let e = params(&[("alpha", 0.0.into())]).unwrap_err().to_string();
        assert!(e.contains("queue.alpha"), "{e}");
        let e = params(&[("step_thresh", "20s".into())]).unwrap_err().to_string();
        assert!(e.contains("queue.step_thresh"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn coupling_is_k_p_for_l4s_and_p_squared_for_classic() {
        // RFC 9332 §2.4: p_CL = k·p', p_C = p'²; with k = 2 and p' = 0.1: 0.2 and 0.01.
        let (p_c, p_cl) = coupled(0.1, 2.0);
        assert!((p_c - 0.01).abs() < 1e-15 && (p_cl - 0.2).abs() < 1e-15);
        // p_CL saturates at p' = 1/k (p_C = 1/k² = p_Cmax, Appendix A.1): overload beyond.
        assert_eq!(coupled(0.6, 2.0), (0.36, 1.0));
        assert!(!overloaded(0.5, 2.0) && overloaded(0.5001, 2.0));
    }

    #[test]
    fn one_pi_update_step() {
        // Appendix A.1 / Linux calculate_probability: p' += alpha·(q − target) + beta·(q − q_old).
        let mut pi = Pi::new(&params(&[]).unwrap());
        // First update at t = 16 ms with the C head queued 16 ms: 0.16·0.001 + 3.2·0.016.
        pi.catch_up(16 * MS, Some(0));
        let want = 0.16 * 0.001 + 3.2 * 0.016;
        assert!((pi.base() - want).abs() < 1e-12, "{}", pi.base());
        // Not yet the next one.
        pi.catch_up(31 * MS, Some(0));
        assert!((pi.base() - want).abs() < 1e-12);
        // At 32 ms the head has waited 32 ms: + 0.16·0.017 + 3.2·0.016.
        pi.catch_up(32 * MS, Some(0));
        let want2 = want + 0.16 * 0.017 + 3.2 * 0.016;
        assert!((pi.base() - want2).abs() < 1e-12, "{}", pi.base());
        // Empty from then on: the proportional term takes back 3.2·0.032, the integral term
        // 0.16·0.015 per update, down to 0 and never below.
        pi.catch_up(48 * MS, None);
        let want3 = want2 + 0.16 * -0.015 + 3.2 * -0.032;
        assert!((pi.base() - want3).abs() < 1e-12, "{}", pi.base());
        pi.catch_up(10_000 * MS, None);
        assert_eq!(pi.base(), 0.0);
        // A head that arrived after an update instant was not there at it: delay 0.
        let mut pi = Pi::new(&params(&[]).unwrap());
        pi.catch_up(20 * MS, Some(17 * MS));
        assert_eq!(pi.base(), 0.0);
    }

    #[test]
    fn the_l_queue_marks_above_the_step_threshold_only() {
        let mut d = DualPi2Params::build(&params(&[]).unwrap(), link());
        let mut rng = Rng::new(1, 1);
        // p' = 0: only the step acts; strictly above 1 ms of sojourn.
        let at = |s| departure(L, Ecn::Ect1, s);
        assert_eq!(d.dequeue(0, 10, &at(MS), &mut rng), Verdict::Queued);
        assert_eq!(d.dequeue(0, 10, &at(MS + 1), &mut rng), Verdict::Marked);
        // Even with less than two packets queued behind it (Linux applies the step always).
        assert_eq!(d.dequeue(0, 0, &at(5 * MS), &mut rng), Verdict::Marked);
        // The C queue has no step.
        let c = departure(C, Ecn::Ect0, 100 * MS);
        assert_eq!(d.dequeue(0, 10, &c, &mut rng), Verdict::Queued);
    }

    #[test]
    fn marks_and_drops_follow_the_coupled_probabilities() {
        let q = params(&[]).unwrap();
        let mut d = DualPi2 {
            buffer: Buffer::new(1000.0),
            pi: Pi::new(&q),
            k: 2.0,
            step_thresh_ps: ps(q.step_thresh),
            drop_overload: true,
            wc: 10.0,
            wl: 90.0,
            credit: -80.0,
            credit_rate: 0.0,
        };
        d.pi.p = 0.2;
        let mut rng = Rng::new(7, 7);
        let n = 200_000;
        let mut count = |d: &mut DualPi2, sub, ecn, want: Verdict| {
            (0..n)
                .filter(|_| d.dequeue(0, 10, &departure(sub, ecn, 0), &mut rng) == want)
                .count() as f64
                / n as f64
        };
        // L: marked with k·p' = 0.4; C: ECT(0) marked, Not-ECT dropped with p'² = 0.04.
        let m = count(&mut d, L, Ecn::Ect1, Verdict::Marked);
        assert!((m - 0.4).abs() < 0.005, "{m}");
        let m = count(&mut d, C, Ecn::Ect0, Verdict::Marked);
        assert!((m - 0.04).abs() < 0.002, "{m}");
        let x = count(&mut d, C, Ecn::NotEct, Verdict::Dropped(DropReason::Early));
        assert!((x - 0.04).abs() < 0.002, "{x}");
        // Fewer than two packets left: no AQM action (Linux must_drop).
        assert_eq!(d.dequeue(0, 1, &departure(C, Ecn::NotEct, 0), &mut Rng::new(9, 9)), Verdict::Queued);
        // Overload (p' = 0.8 > 1/k): L4S dropped with p'² = 0.64, the rest marked; ECT(0) in
        // the C queue dropped, not marked.
        d.pi.p = 0.8;
        let x = count(&mut d, L, Ecn::Ect1, Verdict::Dropped(DropReason::Early));
        assert!((x - 0.64).abs() < 0.005, "{x}");
        let m = count(&mut d, L, Ecn::Ect1, Verdict::Marked);
        assert!((m - 0.36).abs() < 0.005, "{m}");
        assert_eq!(count(&mut d, C, Ecn::Ect0, Verdict::Marked), 0.0);
    }

    #[test]
    fn the_scheduler_gives_the_c_queue_its_weight() {
        // Both queues backlogged: of every 10 packets, 1 from C (Linux WRR, wc = 10%).
        let mut d = DualPi2Params::build(&params(&[]).unwrap(), link());
        let mut rng = Rng::new(1, 1);
        let heads = |k: usize| Some(k as u64);
        let mut served = [0usize; 2];
        for _ in 0..1000 {
            let k = d.next_queue(0, &heads);
            served[k] += 1;
            let ecn = if k == L { Ecn::Ect1 } else { Ecn::NotEct };
            assert_eq!(d.dequeue(0, 10, &departure(k, ecn, 0), &mut rng), Verdict::Queued);
        }
        assert_eq!(served, [100, 900]);
        // One queue empty: the other is served.
        assert_eq!(d.next_queue(0, &|k| (k == C).then_some(0)), C);
        assert_eq!(d.next_queue(0, &|k| (k == L).then_some(0)), L);
    }
}
