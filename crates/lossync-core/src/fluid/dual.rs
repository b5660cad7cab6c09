//! A dual-queue link in the fluid engine (DualPI2, RFC 9332): its members' fluid is split between
//! an L queue (ECT(1): the flows of an L4S law, RFC 9331 §5.1) and a classic queue behind one
//! buffer. The discipline's fluid face ([`Discipline::fluid_dual`]) gives each step's signals from
//! the two queues' delays; the link serves the L queue first, the classic queue getting at least
//! its weight of the capacity while both wait (Linux's weighted round robin, as the packet face);
//! each member's backlog leaves in proportion within its own queue. An L4S flow's RTT counts the
//! L queue's delay, every other flow's (and every ACK's) the classic queue's.
//!
//! The functions here are out of line: inlined into the engine's step beside the one-queue
//! cases, they made it larger and every other run slower (3.4% more instructions for 100 CUBIC
//! flows).
//!
//! Signals act on arrivals, where the packet face acts at dequeue: the fluid model's signals
//! (RED, PIE) all do, and the shift is one queueing delay (about a millisecond for the L queue).
//!
//! [`Discipline::fluid_dual`]: crate::queue::Discipline::fluid_dual

use super::flow::FlowState;
use super::link::{Arrivals, DepartureStep, LinkState};
use super::tcp::TcpRings;
use crate::cc::EcnUse;
use crate::queue::DualSignals;
use crate::scenario::Scenario;

/// The classic and the L queue's indices in [`DualState`]'s pairs.
const C: usize = 0;
const L: usize = 1;

/// A dual-queue link's fluid state.
#[derive(Debug)]
pub(super) struct DualState {
    /// Per member: its fluid joins the L queue.
    pub(super) l4s: Vec<bool>,
    /// Each queue's backlog (packets) and the rate it was served at in the last step (packets/s),
    /// [classic, L].
    q: [f64; 2],
    rate_pps: [f64; 2],
    /// The classic queue's guaranteed share of the capacity while both queues wait.
    c_share: f64,
    /// The classic queue as a FIFO: how long its head has waited.
    fifo: Fifo,
    dt: f64,
    /// This step's signals.
    signals: DualSignals,
    /// The index of the L queue's delay among the engine's delay slots.
    pub(super) l_slot: usize,
}

impl DualState {
    /// A link of `capacity_pps` and `buffer_pkts`, stepped every `dt` seconds.
    pub(super) fn new(
        l4s: Vec<bool>,
        first: DualSignals,
        l_slot: usize,
        capacity_pps: f64,
        buffer_pkts: f64,
        dt: f64,
    ) -> Self {
        let steps = fifo_steps(buffer_pkts, capacity_pps, first.c_share, dt);
        DualState {
            l4s,
            q: [0.0; 2],
            rate_pps: [0.0; 2],
            c_share: first.c_share,
            fifo: Fifo::new(steps),
            dt,
            signals: first,
            l_slot,
        }
    }

    /// Each queue's delay [classic, L]: the classic queue's head's wait, as the packet face's PI
    /// controller reads it (RFC 9332 Appendix A.1: the first-in classic packet's queuing time);
    /// the L queue's backlog over the rate it was last served at, or over its share of the
    /// capacity where that is more (a queue that was not served last step still gets its share).
    fn delays_s(&self, capacity_pps: f64) -> [f64; 2] {
        let floor = 1e-9 * capacity_pps;
        [
            self.fifo.head_wait_steps() as f64 * self.dt,
            self.q[L]
                / self.rate_pps[L]
                    .max((1.0 - self.c_share) * capacity_pps)
                    .max(floor),
        ]
    }
}

/// The classic FIFO's ring length in steps: the longest a classic packet can wait, a full buffer
/// drained at the classic queue's guaranteed share `c_share` (at least 1% of the link), capped at
/// 2^22 steps (32 MiB), beyond which the wait reads as that cap. fluid::check counts it with
/// `c_share` 0, the most it can be.
pub(super) fn fifo_steps(buffer_pkts: f64, capacity_pps: f64, c_share: f64, dt: f64) -> usize {
    let wait_s = buffer_pkts / (c_share.max(0.01) * capacity_pps);
    ((wait_s / dt).ceil() as usize + 2).min(1 << 22)
}

/// A fluid FIFO's head wait: the cumulative fluid that had entered by the end of each recent
/// step (a ring), and the cumulative fluid that has left. The fluid leaving now entered in the
/// first step whose cumulative arrivals exceed the cumulative departures; that step only moves
/// forward, so each step costs O(1) amortized.
#[derive(Debug)]
struct Fifo {
    entered: Vec<f64>,
    total_in: f64,
    total_out: f64,
    /// Steps pushed, and the oldest of them whose fluid has not all left.
    steps: u64,
    head: u64,
}

impl Fifo {
    fn new(len: usize) -> Self {
        Fifo {
            entered: vec![0.0; len.max(2)],
            total_in: 0.0,
            total_out: 0.0,
            steps: 0,
            head: 0,
        }
    }

    /// A step ends: `arrived` packets entered, `departed` left.
    fn push(&mut self, arrived: f64, departed: f64) {
        let len = self.entered.len() as u64;
        self.total_in += arrived;
        self.total_out += departed;
        self.entered[(self.steps % len) as usize] = self.total_in;
        self.steps += 1;
        // Older steps than the ring holds count as the ring's oldest.
        self.head = self.head.max(self.steps.saturating_sub(len - 1));
        // A tolerance of a millionth of a packet: rounding must not hold an emptied step.
        while self.head < self.steps
            && self.entered[(self.head % len) as usize] <= self.total_out + 1e-6
        {
            self.head += 1;
        }
    }

    /// How many steps ago the fluid at the head entered (0: empty).
    fn head_wait_steps(&self) -> u64 {
        self.steps.saturating_sub(self.head)
    }
}

/// Whether flow `fi`'s packets are ECT(1), an L4S law's (RFC 9331 §5.1): a dual-queue link's L
/// queue takes them.
pub(super) fn l4s(sc: &Scenario, fi: usize) -> bool {
    let f = &sc.flows[fi];
    f.ecn && matches!(sc.ecn_use(f), EcnUse::Scalable { l4s: true })
}

/// Per hop of every flow's path (in `path_links`' order), where its queueing delay is read: the
/// link's own index, or its L queue's slot for an L4S flow at a dual-queue link.
pub(super) fn path_slots(
    sc: &Scenario,
    links: &[LinkState],
    l4s: impl Fn(usize) -> bool,
) -> Vec<usize> {
    let mut slots = Vec::new();
    for (fi, f) in sc.flows.iter().enumerate() {
        slots.extend(f.path.iter().map(|&l| match &links[l].dual {
            Some(d) if l4s(fi) => d.l_slot,
            _ => l,
        }));
    }
    slots
}

/// At a step's start: each dual-queue link's classic queue's delay in its own entry of `delays`,
/// its L queue's in its slot.
pub(super) fn set_delays(links: &[LinkState], delays: &mut [f64]) {
    for l in links {
        if let Some(dual) = &l.dual {
            let [c, l4s] = dual.delays_s(l.capacity_pps);
            delays[l.index] = c + l.assembly_wait_s;
            delays[dual.l_slot] = l4s + l.assembly_wait_s;
        }
    }
}

impl LinkState {
    /// The discipline's signals for the step from `t`, from the queues' delays.
    #[inline(never)]
    pub(super) fn dual_signals(&mut self, t: f64) {
        let c = self.capacity_pps;
        let Some(dual) = self.dual.as_mut() else {
            return;
        };
        let [delay_c, delay_l] = dual.delays_s(c);
        if let Some(s) = self.discipline.fluid_dual(t, delay_c, delay_l, self.q) {
            dual.signals = s;
        }
    }

    /// This step's arrivals at a dual-queue link: the wire's random loss first; then the L
    /// queue marks with p_L (on overload it drops p_C first and marks the rest: all its fluid is
    /// ECT(1)), the classic queue marks ECN-capable fluid with p_C outside overload and drops the
    /// rest with p_C. As [`LinkState::arrivals`], with `unmarked_early_sum` the discipline's
    /// drops alone.
    #[inline(never)]
    pub(super) fn arrivals_dual(
        &mut self,
        flows: &[FlowState],
        hop_in: &[f64],
        hop_marked: &[f64],
        dt: f64,
    ) -> Arrivals {
        let n = self.members.len();
        let dual = self.dual.as_ref().expect("a dual-queue link");
        let s = dual.signals;
        let (rate, admitted, dropped) = (
            &mut self.rate[..n],
            &mut self.admitted[..n],
            &mut self.dropped[..n],
        );
        let marked = &mut self.marked[..];
        let mut sums = Arrivals {
            rate_sum: 0.0,
            admitted_sum: 0.0,
            early_sum: 0.0,
            unmarked_early_sum: 0.0,
            marked_sum: 0.0,
        };
        for (k, m) in self.members.iter().enumerate() {
            let r = m.arrival_rate(flows, hop_in);
            let arriving = r * dt;
            let wire = arriving * self.loss_rate;
            let rest = arriving - wire;
            // Packets that arrive CE stay so: marks fall on the others (drops on all alike).
            let unmarked = if self.ecn[k] {
                let carried = m.arrival_marked(flows, hop_marked, dt);
                rest - (carried - carried * self.loss_rate)
            } else {
                rest
            };
            let (aqm_drop, mark) = if dual.l4s[k] {
                if s.overload {
                    (rest * s.p_c, unmarked * (1.0 - s.p_c))
                } else {
                    (0.0, unmarked * s.p_l)
                }
            } else if self.ecn[k] && !s.overload {
                (0.0, unmarked * s.p_c)
            } else {
                (rest * s.p_c, 0.0)
            };
            if self.any_ecn {
                marked[k] = mark;
            }
            let early = wire + aqm_drop;
            rate[k] = r;
            admitted[k] = arriving - early;
            dropped[k] = early;
            self.overflowed[k] = 0.0;
            self.overflow_random[k] = 0.0;
            sums.rate_sum += r;
            sums.admitted_sum += arriving - early;
            sums.early_sum += early;
            sums.unmarked_early_sum += aqm_drop;
            sums.marked_sum += mark;
        }
        sums
    }

    /// Splits the step's service `capacity_pkts` between the queues (after the overflow): the
    /// classic queue's guaranteed share first, the L queue all it holds of the rest, the classic
    /// queue what is left. Returns the packets served and each queue's share of its backlog
    /// [classic, L], and notes each queue's service rate.
    #[inline(never)]
    pub(super) fn dual_service(&mut self, capacity_pkts: f64, dt: f64) -> (f64, [f64; 2]) {
        let dual = self.dual.as_mut().expect("a dual-queue link");
        let (mut kept, mut entered) = ([0.0; 2], [0.0; 2]);
        for (k, &l4s) in dual.l4s.iter().enumerate() {
            let joined = self.admitted[k] - self.overflowed[k];
            entered[l4s as usize] += joined;
            kept[l4s as usize] += self.q_member[k] + joined;
        }
        let c_min = (dual.c_share * capacity_pkts).min(kept[C]);
        let out_l = kept[L].min(capacity_pkts - c_min);
        let out_c = kept[C].min(capacity_pkts - out_l);
        let share = |out: f64, kept: f64| if kept > 0.0 { out / kept } else { 0.0 };
        dual.rate_pps = [out_c / dt, out_l / dt];
        dual.fifo.push(entered[C], out_c);
        (
            out_c + out_l,
            [share(out_c, kept[C]), share(out_l, kept[L])],
        )
    }

    /// The step's departures under `tcp` at a dual-queue link, each member's backlog leaving at
    /// its queue's share.
    #[inline(never)]
    pub(super) fn departures_dual(
        &mut self,
        flows: &mut [FlowState],
        hop_in: &mut [f64],
        hop_marked: &mut [f64],
        tcp: &mut TcpRings,
        step: DepartureStep,
    ) -> bool {
        if self.any_ecn {
            self.departures_tcp::<true, true>(flows, hop_in, hop_marked, tcp, step)
        } else {
            self.departures_tcp::<false, true>(flows, hop_in, hop_marked, tcp, step)
        }
    }

    /// Each queue's backlog after the step's departures.
    #[inline(never)]
    pub(super) fn dual_backlogs(&mut self) {
        let dual = self.dual.as_mut().expect("a dual-queue link");
        dual.q = [0.0; 2];
        for (k, &l4s) in dual.l4s.iter().enumerate() {
            dual.q[l4s as usize] += self.q_member[k];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fifo_head_waits_since_its_fluid_entered() {
        let mut f = Fifo::new(8);
        assert_eq!(f.head_wait_steps(), 0);
        // One packet enters per step and none leaves: the first waits 3 steps after 3 steps.
        for _ in 0..3 {
            f.push(1.0, 0.0);
        }
        assert_eq!(f.head_wait_steps(), 3);
        // One and a half leave: the first step's packet is gone, the second's is at the head.
        f.push(0.0, 1.5);
        assert_eq!(f.head_wait_steps(), 3);
        // The rest leaves: empty.
        f.push(0.0, 1.5);
        assert_eq!(f.head_wait_steps(), 0);
        // A wait longer than the ring reads as the ring's length.
        for _ in 0..20 {
            f.push(1.0, 0.0);
        }
        assert_eq!(f.head_wait_steps(), 7);
    }

    #[test]
    fn the_wait_line_covers_a_full_buffer_at_the_classic_share() {
        // 1,000 packets at 10% of 8,333 packets/s: 1.2 s, 12,000 steps of 0.1 ms (+2).
        assert_eq!(fifo_steps(1000.0, 8333.3, 0.1, 1e-4), 12_003);
        // A share under 1% counts as 1%, and the line stops at 2^22 steps.
        assert_eq!(fifo_steps(10.0, 1000.0, 0.0, 1e-3), 1_002);
        assert_eq!(fifo_steps(1e9, 1000.0, 0.1, 1e-3), 1 << 22);
    }
}
