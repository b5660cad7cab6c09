//! PIE, Proportional Integral controller Enhanced (RFC 8033; Pan et al., HPSR 2013): a drop
//! probability `p`, updated every `t_update` by a PI controller on the queueing delay, is applied
//! to arriving packets.
//!
//! - Drop probability (RFC 8033 §4.2, Appendix A `calculate_drop_prob`): every `t_update`,
//!   `p += α·(qdelay − target) + β·(qdelay − qdelay_old)`, the increment scaled down while `p` is
//!   small (÷2048 below 10⁻⁶ … ÷2 below 10%: the auto-tuning ladder, as Linux
//!   `pie_calculate_probability` in `net/sched/sch_pie.c` does it with shifts), capped at 2% once
//!   `p ≥ 10%` (§5.5 "Cap Drop Adjustment", always on in Linux), decayed ×0.98 when `qdelay` and
//!   `qdelay_old` are both 0, and clipped to [0, 1].
//! - Queueing delay (§4.3, timestamp method; Linux's default with `dq_rate_estimator` off): the
//!   sojourn time of the most recent departing packet, 0 when it left the queue empty (Linux
//!   `pie_process_dequeue`: `if (qlen == 0) vars->qdelay = 0`), so an idle queue decays `p`.
//! - Random drop at enqueue (§4.1, Appendix A `drop_early`): none while burst allowance is left
//!   (§4.4), none when `qdelay_old < target/2` and `p < 20%`, none when the queue holds at most 2
//!   packets with the arrival (Linux: `backlog < 2·mtu` before it); otherwise each arrival is
//!   dropped independently with probability `p` (no de-randomization, §5.4: Appendix A's basic
//!   PIE). With `ecn` an ECN-capable packet is marked CE instead while `p ≤ mark_ecnth` (§5.1).
//! - Burst allowance (§4.4): starts at `max_burst`, counts down by `t_update` at each update, and
//!   is reset to `max_burst` at an arrival when `p = 0` and both delays are below `target/2`.
//!
//! There is no timer: the periodic update runs lazily, at each enqueue and dequeue, once for
//! every `t_update` boundary passed since the last one (several after an idle time), each with
//! the delay known at that point. Not modelled: the 250 ms "non-linear drop" of Linux (a
//! buffer-sized delay rarely reaches it), byte mode, the dequeue-rate estimator (§5.2) and the
//! active/inactive states (§5.3). The buffer is the link's, tail-dropped when full (Linux's
//! `limit`).

use super::{
    signal, tail, Arrival, Buffer, Departure, Discipline, LinkContext, QueueParams, Site, Verdict,
};
use crate::error::Result;
use crate::params::Params;
use crate::rng::Rng;
use serde::Serialize;

/// RFC 8033 §4.2 (and Appendix A, QDELAY_REF): latency target 15 ms.
pub const TARGET_S: f64 = 0.015;
/// RFC 8033 §4.2 (Appendix A, T_UPDATE): the probability is updated every 15 ms.
pub const T_UPDATE_S: f64 = 0.015;
/// RFC 8033 §4.2 (Appendix A, ALPHA): 1/8 = 0.125 Hz (Linux `alpha 2`, in units of 1/16).
pub const ALPHA: f64 = 0.125;
/// RFC 8033 §4.2 (Appendix A, BETA): 1 + 1/4 = 1.25 Hz (Linux `beta 20`, in units of 1/16).
pub const BETA: f64 = 1.25;
/// RFC 8033 §4.4 (Appendix A, MAX_BURST): 150 ms of burst allowance.
pub const MAX_BURST_S: f64 = 0.15;
/// RFC 8033 §5.1: with ECN, mark while the drop probability is at most 10%, drop above.
pub const MARK_ECNTH: f64 = 0.1;
/// RFC 8033 §4.1 (Appendix A `drop_early`): no random drop while `qdelay_old < target/2` and the
/// drop probability is below 20%.
const SAFEGUARD_P: f64 = 0.2;
/// RFC 8033 §4.2 step 3: the decay factor of an idle queue (1 − 1/64 in Linux).
const DECAY: f64 = 0.98;
/// RFC 8033 §5.5: once `p ≥ 10%`, one update raises it by at most 2%.
const CAP_FROM_P: f64 = 0.1;
const CAP_STEP: f64 = 0.02;

/// PIE's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PieParams {
    /// Latency target (QDELAY_REF), seconds.
    pub target: f64,
    /// Period of the drop probability update (T_UPDATE), seconds.
    pub t_update: f64,
    /// Weight of the deviation from target, per second.
    pub alpha: f64,
    /// Weight of the delay's change over one period, per second.
    pub beta: f64,
    /// Burst allowance (MAX_BURST), seconds.
    pub max_burst: f64,
    /// Mark ECN-capable packets CE instead of dropping them while `p ≤ mark_ecnth` (§5.1).
    pub ecn: bool,
    /// The drop probability up to which ECN-capable packets are marked.
    pub mark_ecnth: f64,
}

impl QueueParams for PieParams {
    const NAME: &'static str = "pie";
    const ABOUT: &'static str =
        "PIE (RFC 8033): drop or mark with a probability a PI controller steers to 15 ms of delay";
    const FLUID: bool = true;

    fn read(p: &mut Params, _site: Site) -> Result<Self> {
        Ok(PieParams {
            target: p.seconds("target", TARGET_S, |v| v > 0.0 && v <= 10.0, "in (0, 10] s")?,
            t_update: p.seconds("t_update", T_UPDATE_S, |v| v > 0.0 && v <= 10.0, "in (0, 10] s")?,
            // Linux takes alpha and beta in 0..32 sixteenths: [0, 2].
            alpha: p.f64("alpha", ALPHA, |v| (0.0..=2.0).contains(&v), "in [0, 2]")?,
            beta: p.f64("beta", BETA, |v| (0.0..=2.0).contains(&v), "in [0, 2]")?,
            max_burst: p.seconds("max_burst", MAX_BURST_S, |v| (0.0..=10.0).contains(&v), "in [0, 10] s")?,
            ecn: p.bool("ecn", false)?,
            mark_ecnth: p.f64("mark_ecnth", MARK_ECNTH, |v| (0.0..=1.0).contains(&v), "in [0, 1]")?,
        })
    }

    fn build(&self, link: LinkContext) -> Box<dyn Discipline> {
        Box::new(Pie {
            buffer: link.buffer,
            state: PieState::new(self),
            ecn: self.ecn,
            mark_ecnth: self.mark_ecnth,
            fluid_steps: 0,
        })
    }
}

fn ps(s: f64) -> u64 {
    (s * 1e12).round() as u64
}

/// RFC 8033 §4.2's auto-tuning: the divisor of the increment at drop probability `p`.
pub fn increment_divisor(p: f64) -> f64 {
    match p {
        p if p < 0.000_001 => 2048.0,
        p if p < 0.000_01 => 512.0,
        p if p < 0.000_1 => 128.0,
        p if p < 0.001 => 32.0,
        p if p < 0.01 => 8.0,
        p if p < 0.1 => 2.0,
        _ => 1.0,
    }
}

/// One queue's PIE state (RFC 8033 Appendix A's variables), times in picoseconds.
#[derive(Debug, Clone)]
pub struct PieState {
    target_ps: u64,
    t_update_ps: u64,
    alpha: f64,
    beta: f64,
    max_burst_ps: u64,
    /// drop_prob_.
    prob: f64,
    /// current_qdelay: the latest departure's sojourn (0 if it left the queue empty).
    qdelay_ps: u64,
    /// qdelay_old_: current_qdelay at the last update.
    qdelay_old_ps: u64,
    /// burst_allowance_.
    burst_ps: u64,
    /// The next `t_update` boundary.
    next_update_ps: u64,
}

impl PieState {
    pub fn new(p: &PieParams) -> Self {
        let t_update_ps = ps(p.t_update).max(1);
        PieState {
            target_ps: ps(p.target),
            t_update_ps,
            alpha: p.alpha,
            beta: p.beta,
            max_burst_ps: ps(p.max_burst),
            prob: 0.0,
            qdelay_ps: 0,
            qdelay_old_ps: 0,
            burst_ps: ps(p.max_burst),
            next_update_ps: t_update_ps,
        }
    }

    pub fn prob(&self) -> f64 {
        self.prob
    }

    pub fn burst_allowance_ps(&self) -> u64 {
        self.burst_ps
    }

    /// RFC 8033 Appendix A `calculate_drop_prob`, once.
    pub fn update(&mut self) {
        let s = |t: u64| t as f64 * 1e-12;
        let (q, old, target) = (s(self.qdelay_ps), s(self.qdelay_old_ps), s(self.target_ps));
        let mut dp = (self.alpha * (q - target) + self.beta * (q - old)) / increment_divisor(self.prob);
        if self.prob >= CAP_FROM_P && dp > CAP_STEP {
            dp = CAP_STEP;
        }
        self.prob += dp;
        if self.qdelay_ps == 0 && self.qdelay_old_ps == 0 {
            self.prob *= DECAY;
        }
        self.prob = self.prob.clamp(0.0, 1.0);
        self.qdelay_old_ps = self.qdelay_ps;
        self.burst_ps = self.burst_ps.saturating_sub(self.t_update_ps);
    }

    /// Runs the updates of every `t_update` boundary up to `now_ps`.
    pub fn catch_up(&mut self, now_ps: u64) {
        while now_ps >= self.next_update_ps {
            if self.prob == 0.0 && self.qdelay_ps == 0 && self.qdelay_old_ps == 0 {
                // An idle queue at p = 0 stays there: the remaining periods only spend the burst
                // allowance.
                let n = (now_ps - self.next_update_ps) / self.t_update_ps + 1;
                self.burst_ps = self.burst_ps.saturating_sub(n.saturating_mul(self.t_update_ps));
                self.next_update_ps += n * self.t_update_ps;
                return;
            }
            self.update();
            self.next_update_ps += self.t_update_ps;
        }
    }

    /// A packet leaves at `now_ps` after `sojourn_ps`, `backlog` packets behind it.
    pub fn departure(&mut self, now_ps: u64, sojourn_ps: u64, backlog: usize) {
        self.catch_up(now_ps);
        self.qdelay_ps = if backlog == 0 { 0 } else { sojourn_ps };
    }

    /// §4.1/§4.4 at a packet's arrival at `now_ps` to `backlog` packets: whether PIE signals
    /// congestion to it (drop, or mark if it may).
    pub fn arrival(&mut self, now_ps: u64, backlog: usize, rng: &mut Rng) -> bool {
        match self.exposed(now_ps, backlog as f64) {
            Some(p) => rng.uniform() < p,
            None => false,
        }
    }

    /// §4.1/§4.4 before the random draw: `None` while the burst allowance or a safeguard spares
    /// an arrival to `backlog` packets, else the probability it is signalled with.
    pub fn exposed(&mut self, now_ps: u64, backlog: f64) -> Option<f64> {
        self.catch_up(now_ps);
        let half = self.target_ps / 2;
        if self.prob == 0.0 && self.qdelay_ps < half && self.qdelay_old_ps < half {
            self.burst_ps = self.max_burst_ps;
        }
        if self.burst_ps > 0
            || (self.qdelay_old_ps < half && self.prob < SAFEGUARD_P)
            // At most 2 packets with this one (RFC: byte_length ≤ 2·MEAN_PKTSIZE).
            || backlog <= 1.0
        {
            return None;
        }
        Some(self.prob)
    }
}

#[derive(Debug)]
pub struct Pie {
    buffer: Buffer,
    state: PieState,
    ecn: bool,
    mark_ecnth: f64,
    /// Fluid face: the steps taken (its clock).
    fluid_steps: u64,
}

impl Discipline for Pie {
    fn buffer(&self) -> Buffer {
        self.buffer
    }

    fn enqueue(&mut self, now_ps: u64, backlog: usize, a: Arrival<'_>, rng: &mut Rng) -> Verdict {
        let full = tail(backlog, self.buffer);
        if full != Verdict::Queued {
            self.state.catch_up(now_ps);
            return full;
        }
        if self.state.arrival(now_ps, backlog, rng) {
            signal(self.ecn && self.state.prob() <= self.mark_ecnth, a.ecn)
        } else {
            Verdict::Queued
        }
    }

    fn dequeue(&mut self, now_ps: u64, backlog: usize, d: &Departure, _rng: &mut Rng) -> Verdict {
        self.state.departure(now_ps, d.sojourn_ps, backlog);
        Verdict::Queued
    }

    /// The same controller on the fluid queue: at each step the delay is the backlog's
    /// `q/C` (what the packet at its head waited, the timestamp method's sojourn), 0 under one
    /// packet (an empty queue), the updates of every `t_update` boundary passed run, and the
    /// arrivals of the step are signalled with the probability `p` unless a safeguard spares
    /// them. This is the PI controller whose fluid form Hollot, Misra, Towsley and Gong
    /// (INFOCOM 2001) analyse, on delay instead of queue length, as PIE's design says
    /// (Pan et al., HPSR 2013, §III).
    fn early_drop_probability(&mut self, q_pkts: f64, dt: f64, capacity_pps: f64) -> f64 {
        let now_ps = ps(self.fluid_steps as f64 * dt);
        self.fluid_steps += 1;
        let backlog = if q_pkts < 1.0 { 0 } else { 1 };
        self.state.departure(now_ps, ps(q_pkts / capacity_pps), backlog);
        self.state.exposed(now_ps, q_pkts).unwrap_or(0.0)
    }

    fn fluid_marks(&self, p: f64) -> bool {
        self.ecn && p <= self.mark_ecnth
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{DropReason, Ecn};
    use std::collections::BTreeMap;

    const MS: u64 = 1_000_000_000;

    fn defaults() -> PieParams {
        PieParams::read(&mut Params::of_discipline(&BTreeMap::new(), "queue"), Site::UNKNOWN).unwrap()
    }

    /// A state at probability `p` with the given delays and no burst allowance left.
    fn at(p: f64, qdelay_ms: u64, qdelay_old_ms: u64) -> PieState {
        let mut s = PieState::new(&defaults());
        s.prob = p;
        s.qdelay_ps = qdelay_ms * MS;
        s.qdelay_old_ps = qdelay_old_ms * MS;
        s.burst_ps = 0;
        s
    }

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() <= 1e-12 * want.abs().max(1e-6), "{got} vs {want}");
    }

    #[test]
    fn defaults_are_rfc_8033s() {
        let d = defaults();
        assert_eq!(
            d,
            PieParams {
                target: 0.015,
                t_update: 0.015,
                alpha: 0.125,
                beta: 1.25,
                max_burst: 0.15,
                ecn: false,
                mark_ecnth: 0.1,
            }
        );
    }

    #[test]
    fn parameters_out_of_range_are_refused_by_name() {
        for (name, value, want) in [
            ("target", serde_json::json!(0), "queue.target"),
            ("target", serde_json::json!("11s"), "queue.target"),
            ("t_update", serde_json::json!(-0.01), "queue.t_update"),
            ("alpha", serde_json::json!(3), "queue.alpha"),
            ("beta", serde_json::json!(-1), "queue.beta"),
            ("max_burst", serde_json::json!(20), "queue.max_burst"),
            ("mark_ecnth", serde_json::json!(1.5), "queue.mark_ecnth"),
            ("ecn", serde_json::json!(1), "queue.ecn"),
        ] {
            let values = BTreeMap::from([(name.to_string(), value)]);
            let e = PieParams::read(&mut Params::of_discipline(&values, "queue"), Site::UNKNOWN)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want) && !e.contains('\n'), "{name}: {e}");
        }
        let values = BTreeMap::from([("target".to_string(), serde_json::json!("20ms"))]);
        let p = PieParams::read(&mut Params::of_discipline(&values, "queue"), Site::UNKNOWN);
        assert_eq!(p.unwrap().target, 0.02);
    }

    #[test]
    fn one_update_is_the_pi_law_scaled_by_the_ladder() {
        // α(30 − 15 ms) + β(30 − 15 ms) = 0.125·0.015 + 1.25·0.015 = 0.020625.
        let raw = 0.020_625;
        // From p = 0: ÷2048 (p < 10⁻⁶).
        let mut s = at(0.0, 30, 15);
        s.update();
        close(s.prob(), raw / 2048.0);
        assert_eq!(s.qdelay_old_ps, 30 * MS);
        // From p = 5%: ÷2.
        let mut s = at(0.05, 30, 15);
        s.update();
        close(s.prob(), 0.05 + raw / 2.0);
        // From p = 15%: whole, 20 ms against 18 ms: 0.125·0.005 + 1.25·0.002 = 0.003125.
        let mut s = at(0.15, 20, 18);
        s.update();
        close(s.prob(), 0.153_125);
        // Below target and falling: 0.125·(−0.005) + 1.25·(−0.002) = −0.003125, ÷8 at p = 0.5%.
        let mut s = at(0.005, 10, 12);
        s.update();
        close(s.prob(), 0.005 - 0.003_125 / 8.0);
    }

    #[test]
    fn the_auto_tuning_ladder_is_rfc_8033s() {
        for (p, div) in [
            (0.0, 2048.0),
            (5e-7, 2048.0),
            (1e-6, 512.0),
            (5e-6, 512.0),
            (5e-5, 128.0),
            (5e-4, 32.0),
            (5e-3, 8.0),
            (0.05, 2.0),
            (0.1, 1.0),
            (0.5, 1.0),
        ] {
            assert_eq!(increment_divisor(p), div, "p = {p}");
            let mut s = at(p, 30, 15);
            s.update();
            let step = if p >= 0.1 { 0.02 } else { 0.020_625 / div };
            close(s.prob(), p + step);
        }
    }

    #[test]
    fn above_10_percent_a_step_is_capped_at_2_percent() {
        // 0.125·0.185 + 1.25·0.1 = 0.148125, capped (§5.5) to 0.02, then clipped at 1.
        let mut s = at(0.5, 200, 100);
        s.update();
        close(s.prob(), 0.52);
        let mut s = at(0.99, 200, 100);
        s.update();
        assert_eq!(s.prob(), 1.0);
        // Below 10% no cap: 0.148125 / 2.
        let mut s = at(0.05, 200, 100);
        s.update();
        close(s.prob(), 0.05 + 0.148_125 / 2.0);
    }

    #[test]
    fn an_idle_queue_decays_and_a_negative_p_clips_to_zero() {
        // qdelay = qdelay_old = 0: p += 0.125·(−0.015), then ×0.98.
        let mut s = at(0.5, 0, 0);
        s.update();
        close(s.prob(), (0.5 - 0.001_875) * 0.98);
        // 1e-7 − (0.125·0.015 + 1.25·0.01)/2048 < 0: clipped to 0.
        let mut s = at(1e-7, 0, 10);
        s.update();
        assert_eq!(s.prob(), 0.0);
    }

    #[test]
    fn the_burst_allowance_counts_down_by_t_update_and_blocks_drops() {
        let mut s = PieState::new(&defaults());
        let mut rng = Rng::new(1, 1);
        assert_eq!(s.burst_allowance_ps(), 150 * MS);
        // Queue delay 100 ms from t = 0: p rises, but no drop for 150 ms of allowance.
        s.departure(0, 100 * MS, 100);
        s.prob = 1.0;
        for k in 1..=9u64 {
            assert!(!s.arrival(k * 15 * MS, 100, &mut rng), "update {k}");
            assert_eq!(s.burst_allowance_ps(), (150 - 15 * k) * MS);
        }
        // The 10th update spends it; p = 1 now drops every arrival.
        assert!(s.arrival(150 * MS, 100, &mut rng));
        assert_eq!(s.burst_allowance_ps(), 0);
        // Reset to MAX_BURST once p = 0 and both delays are below target/2.
        s.prob = 0.0;
        s.departure(151 * MS, 0, 0);
        s.qdelay_old_ps = 0;
        assert!(!s.arrival(152 * MS, 100, &mut rng));
        assert_eq!(s.burst_allowance_ps(), 150 * MS);
    }

    #[test]
    fn updates_run_lazily_for_every_period_passed() {
        let mut s = PieState::new(&defaults());
        let mut rng = Rng::new(1, 1);
        s.departure(1, 30 * MS, 10);
        // Three boundaries (15, 30, 45 ms) by 50 ms: the first sees 30 vs 0 ms, the next two 30
        // vs 30 ms.
        s.arrival(50 * MS, 10, &mut rng);
        let mut want = at(0.0, 30, 0);
        want.update();
        want.update();
        want.update();
        close(s.prob(), want.prob());
        assert_eq!(s.next_update_ps, 60 * MS);
        // Then the queue empties and stays idle for 10 s: p decays to 0.
        s.departure(51 * MS, 30 * MS, 0);
        s.arrival(10_051 * MS, 0, &mut rng);
        assert_eq!(s.prob(), 0.0);
        assert_eq!(s.next_update_ps, 10_065 * MS);
    }

    #[test]
    fn safeguards_keep_low_delay_and_short_queues_from_drops() {
        let mut rng = Rng::new(1, 1);
        // qdelay_old < target/2 and p < 20%: never.
        let mut s = at(0.19, 20, 7);
        s.next_update_ps = u64::MAX;
        assert!((0..1000).all(|_| !s.arrival(0, 100, &mut rng)));
        // At most 2 packets with the arrival: never, even at p = 1.
        let mut s = at(1.0, 20, 20);
        s.next_update_ps = u64::MAX;
        assert!((0..1000).all(|_| !s.arrival(0, 1, &mut rng)));
        assert!((0..1000).all(|_| s.arrival(0, 2, &mut rng)));
        // Otherwise with probability p.
        let mut s = at(0.3, 20, 20);
        s.next_update_ps = u64::MAX;
        let drops = (0..100_000).filter(|_| s.arrival(0, 50, &mut rng)).count();
        assert!((drops as f64 / 1e5 - 0.3).abs() < 0.01, "{drops}");
    }

    fn pie(p: f64, ecn: bool) -> Pie {
        let mut state = at(p, 20, 20);
        state.next_update_ps = u64::MAX;
        Pie {
            buffer: Buffer::new(100.0),
            state,
            ecn,
            mark_ecnth: MARK_ECNTH,
            fluid_steps: 0,
        }
    }

    fn arrival(ecn: Ecn) -> Arrival<'static> {
        Arrival {
            flow: 0,
            sub: 0,
            ecn,
            size_pkts: 1.0,
            header: None,
        }
    }

    #[test]
    fn ecn_marks_up_to_mark_ecnth_and_drops_above() {
        let mut rng = Rng::new(1, 1);
        let early = Verdict::Dropped(DropReason::Early);
        // p = 0.1 with safeguards off (qdelay_old 20 ms): every signal to an ECT packet is a mark.
        let mut q = pie(0.1, true);
        let v: Vec<_> = (0..2000).map(|_| q.enqueue(0, 50, arrival(Ecn::Ect0), &mut rng)).collect();
        assert!(v.contains(&Verdict::Marked) && !v.contains(&early));
        // Not ECN-capable: dropped.
        let v: Vec<_> = (0..2000).map(|_| q.enqueue(0, 50, arrival(Ecn::NotEct), &mut rng)).collect();
        assert!(v.contains(&early) && !v.contains(&Verdict::Marked));
        // Above mark_ecnth: dropped.
        let mut q = pie(0.5, true);
        let v: Vec<_> = (0..2000).map(|_| q.enqueue(0, 50, arrival(Ecn::Ect0), &mut rng)).collect();
        assert!(v.contains(&early) && !v.contains(&Verdict::Marked));
        // ecn off: dropped.
        let mut q = pie(0.1, false);
        let v: Vec<_> = (0..2000).map(|_| q.enqueue(0, 50, arrival(Ecn::Ect0), &mut rng)).collect();
        assert!(v.contains(&early) && !v.contains(&Verdict::Marked));
        // A full buffer tail-drops.
        assert_eq!(
            q.enqueue(0, 100, arrival(Ecn::Ect0), &mut rng),
            Verdict::Dropped(DropReason::Overflow)
        );
    }

    #[test]
    fn the_fluid_face_runs_the_same_controller_on_the_backlogs_delay() {
        // A standing queue of 30 ms (300 packets at 10⁴ packets/s), steps of 1 ms: the fluid
        // face spares the arrivals during the 150 ms burst allowance (§4.4), then signals them
        // with the probability of the RFC's updates every 15 ms on a delay of 30 ms.
        let mut fluid = PieParams::build(&defaults(), LinkContext {
            buffer: Buffer::new(1000.0),
            capacity_pps: 1e4,
            packet_time_ps: 100_000_000,
            packet_size_bytes: 1500.0,
            first_interval_s: 0.1,
        });
        let mut by_hand = PieState::new(&defaults());
        for step in 0..400u64 {
            let p = fluid.early_drop_probability(300.0, 0.001, 1e4);
            let now = step * MS;
            by_hand.departure(now, 30 * MS, 1);
            let want = by_hand.exposed(now, 300.0).unwrap_or(0.0);
            close(p, want);
            if step < 150 {
                assert_eq!(p, 0.0, "burst allowance at {step} ms");
            }
        }
        // After 400 ms: 26 updates of the PI law at 30 ms; the first, from p = 0 and
        // qdelay_old = 0, is (α·15 ms + β·30 ms)/2048.
        let first = (ALPHA * 0.015 + BETA * 0.030) / 2048.0;
        let p = fluid.early_drop_probability(300.0, 0.001, 1e4);
        assert!(p > first, "{p}");
        assert!(!fluid.fluid_marks(0.05), "ecn off");
        // An empty fluid queue (under one packet) is a delay of 0: the safeguard spares it.
        for _ in 0..100 {
            fluid.early_drop_probability(0.5, 0.001, 1e4);
        }
        assert!(fluid.early_drop_probability(0.5, 0.001, 1e4) == 0.0);
    }
}
