//! The fluid engine: a time-stepped integration of the window, RTT and queue equations of
//! Misra, Gong, Towsley (2000) over any path of links as in Liu et al. (2003), with the
//! loss-synchronization module of Kumar, Xue, Park (2014). Equations: docs/model.md §1–2; what
//! this engine does exactly, and where it simplifies: docs/fluid.md.
//!
//! One step of length Δ:
//! 1. every sender's RTT `R = d + Σ_path q_l/C_l` and rate `x = W/R`;
//! 2. every link takes its arrivals (first hop: `x`; later hops: the flow's departure from the
//!    previous hop one step earlier), drops early (random loss, RED), queues, serves up to `C·Δ`
//!    and tail-drops what overflows the buffer; the overflow is assigned to flows by the loss model;
//! 3. each loss is signalled to its sender one RTT later through a per-flow ring buffer;
//! 4. every sender applies the signalled reductions, then grows its window by its law
//!    (`acked = x·Δ` packets acknowledged).
//!
//! All storage is allocated when the engine is built; a step allocates nothing.

mod obs;
mod rate;
pub mod sync;

use crate::cc::{self, CcContext, CongestionControl};
use crate::error::{Error, Result};
use crate::metrics::{
    self, AggregateSample, EventRecord, FlowRecord, LinkRecord, Records, RunResult,
};
use crate::queue::{self, Buffer, Discipline, LinkContext};
use crate::rng::Rng;
use crate::scenario::{default_burst_pkts, smallest_buffer_pkts, LossModel, Scenario};
use obs::FluidAssembler;

/// Linux's minimum retransmission timeout, as the packet engine's sender (`packet/sender.rs`).
const MIN_RTO_S: f64 = 0.2;
use sync::SyncModule;

/// Loss signals in flight to the senders: one slot per step, each slot holding the reductions due
/// to every flow at that step (slot-major, so a step reads one contiguous row).
/// Generic over the entry: the `tcp` model's ring holds a [`TcpDue`] per step and flow.
#[derive(Debug)]
struct LossRing<T = f64> {
    slots: usize,
    flows: usize,
    data: Vec<T>,
}

impl<T: Copy + Default> LossRing<T> {
    fn new(slots: usize, flows: usize) -> Self {
        LossRing {
            slots,
            flows,
            data: vec![T::default(); slots * flows],
        }
    }

    /// The slot of step `n` (one division per step, not per signal).
    fn slot(&self, n: usize) -> usize {
        n % self.slots
    }

    /// One RTT `rtt_s` in steps, as the ring holds it.
    #[inline]
    fn delay(&self, rtt_s: f64, dt: f64) -> usize {
        round_to_usize(rtt_s / dt).clamp(1, self.slots - 1)
    }

    /// The entry of `flow` `delay` steps (from [`LossRing::delay`]) after the slot `now`.
    #[inline]
    fn at(&mut self, now: usize, delay: usize, flow: usize) -> &mut T {
        // now < slots and delay < slots: one wrap at most.
        let mut slot = now + delay;
        if slot >= self.slots {
            slot -= self.slots;
        }
        &mut self.data[slot * self.flows + flow]
    }

    /// The row due at the step whose slot is `now` (to be read and cleared).
    #[inline]
    fn due(&mut self, now: usize) -> &mut [T] {
        let start = now * self.flows;
        &mut self.data[start..start + self.flows]
    }
}

impl LossRing {
    /// Schedules `amount` reductions for `flow`, to arrive one RTT (`rtt_s`, its RTT now) after
    /// the step whose slot is `now`.
    #[inline]
    fn signal(&mut self, now: usize, dt: f64, rtt_s: f64, flow: usize, amount: f64) {
        *self.at(now, self.delay(rtt_s, dt), flow) += amount;
    }
}

/// `x.round() as usize` for every `x` (NaN, negatives, infinities included), without the call to
/// libm's `round` (baseline x86-64 has no rounding instruction): the tcp model signals every ACK.
#[inline]
fn round_to_usize(x: f64) -> usize {
    let i = x as usize;
    // Exact: a double's fractional part is a double.
    if x - i as f64 >= 0.5 {
        i.saturating_add(1)
    } else {
        i
    }
}

/// What reaches a `tcp` sender at one step: ACKs, losses detected, and loss events to react to
/// (one entry, so a sender reads one place instead of three rings).
#[derive(Debug, Clone, Copy, Default)]
struct TcpDue {
    acked: f64,
    lost: f64,
    reductions: f64,
}

/// The `tcp` loss model's delay lines, shaped like the loss ring; empty (nothing allocated) under
/// the other models, so the step reaches them without an `Option` check.
#[derive(Debug)]
struct TcpRings {
    /// ACKs on their way back (they clock the senders), dropped packets on their way to detection
    /// (they leave the data in flight when the sender learns of them), and loss events on their
    /// way to the sender (the engine's loss ring stays empty under `tcp`).
    due: LossRing<TcpDue>,
    /// Draws of the loss thresholds (stream 4000).
    rng: Rng,
    /// The scale of the overflow thresholds (`loss.event_threshold`, 1 unless calibrated).
    event_threshold: f64,
    /// Per flow (apart from `FlowState`, so the other loss models' loops stay as lean as before).
    flows: Vec<TcpFlow>,
}

/// A flow's state under the `tcp` loss model.
#[derive(Debug, Clone, Default)]
struct TcpFlow {
    /// Packets sent and neither acknowledged nor detected lost yet.
    inflight: f64,
    /// Drops before this time belong to the loss event under way (the data sent before the
    /// sender reacts, and during the recovery that follows).
    loss_until_s: f64,
    /// The window does not grow before this time (fast recovery after a cut).
    recovery_until_s: f64,
    /// A retransmission timeout fires at this time (`f64::INFINITY`: none pending); the sender
    /// sends nothing until then (a lost burst took its whole window, docs/fluid.md).
    rto_at_s: f64,
    /// What it sent this step beyond replacing the packets acknowledged (its window growth, slow
    /// start's doubling): the packets a full drop-tail queue refuses.
    excess: f64,
    /// A paced sender's ratios (Linux's pacing rate = ratio · cwnd / srtt).
    pacing: Option<crate::scenario::Pacing>,
    /// The ACK ring's delay when its ACKs cross no queue (its base RTT, fixed); 0: they do, the
    /// delay is computed per step.
    ack_delay: usize,
    /// Its data's mean wait in burst assemblers on its path (it delays the ACKs).
    assembly_wait_s: f64,
    /// Expected drops since its last loss event, of its growth packets (at a full queue) and of
    /// packets picked at random (early drops, and overflow drops beyond the growth share), and
    /// the thresholds at which they make one (see `TcpFlow::draw_thresholds`).
    overflow_drops: f64,
    early_drops: f64,
    overflow_threshold: f64,
    early_threshold: f64,
    /// A model-based law's (BBR's) delivery-rate samples (`None` for the others).
    rate: Option<Box<rate::RateClock>>,
    /// Its law sets its own pacing rate (BBR): asked once per step only then.
    law_paced: bool,
}

impl TcpFlow {
    /// New thresholds for a flow whose loss event has just begun (or that starts). A drop-tail
    /// overflow refuses the packets a flow sends beyond its ACK clock, which come once per
    /// increment at a phase of their own: with `D` expected growth drops the flow has lost a
    /// packet with probability min(1, D), a uniform threshold. Drops picked at random (random
    /// loss, RED, overflow drops beyond the growth share) hit packets independently: probability
    /// 1 − e^(−D), an exponential threshold.
    /// Out-of-order drops at a full queue count one by one towards the exponential threshold:
    /// the ACK-clocked sender already brings them in the trains of the packet engine, so counting
    /// them in clumps as well lowered every flow's chance of a loss event (docs/fluid.md, "The
    /// trains are in the sender already").
    /// `scale` (`loss.event_threshold`) stretches both kinds of overflow drops' thresholds: above
    /// 1 a flow needs more drops per loss event, so fewer flows lose in an overflow (a
    /// calibration, not physics); early drops keep theirs.
    fn draw_thresholds(&mut self, rng: &mut Rng, scale: f64) {
        self.overflow_drops = 0.0;
        self.early_drops = 0.0;
        self.overflow_threshold = scale * rng.uniform();
        self.early_threshold = -(1.0 - rng.uniform()).ln();
    }
}

/// A flow's place on a link.
#[derive(Debug, Clone, Copy)]
struct Member {
    flow: usize,
    /// Which hop of the flow's path this link is.
    hop: usize,
    /// This link is the last of the path: its departures are deliveries.
    last: bool,
}

/// Running totals of a link since t = 0; statistics are differences of two snapshots.
#[derive(Debug, Clone, Copy, Default)]
struct LinkAcc {
    arrived: f64,
    departed: f64,
    dropped: f64,
    q_integral: f64,
}

#[derive(Debug, Clone, Copy, Default)]
struct FlowAcc {
    sent: f64,
    delivered: f64,
    dropped: f64,
    cwnd_integral: f64,
    reductions: f64,
}

#[derive(Debug)]
struct FlowState {
    cc: Box<dyn CongestionControl>,
    w: f64,
    ssthresh: f64,
    rtt_s: f64,
    x: f64,
    started: bool,
    start_s: f64,
    base_rtt_s: f64,
    rwnd: f64,
    /// The access link's capacity caps the sending rate (infinite unless the scenario sets it).
    access_pps: f64,
    /// This flow's hops are `hop_off..hop_off + hops` in `hop_in` and `path_links`.
    hop_off: usize,
    hops: usize,
    /// The links its ACKs queue in (two-way traffic) are `ack_off..ack_off + ack_hops` in
    /// `ack_links`.
    ack_off: usize,
    ack_hops: usize,
    acc: FlowAcc,
}

#[derive(Debug)]
struct LinkState {
    index: usize,
    capacity_pps: f64,
    buffer_pkts: f64,
    loss_rate: f64,
    /// The queue discipline (drop-tail, RED, an XCP router); `buffer_pkts` is its buffer.
    discipline: Box<dyn Discipline>,
    members: Vec<Member>,
    q: f64,
    /// Per member: its backlog (the queue is a fluid mixture: departures are shared in proportion
    /// to the backlog).
    q_member: Vec<f64>,
    // Per-member scratch for one step.
    rate: Vec<f64>,
    admitted: Vec<f64>,
    /// Drops of this step (early + overflow), and the overflow part alone.
    dropped: Vec<f64>,
    overflowed: Vec<f64>,
    /// `tcp`: the part of `overflowed` that fell on arrivals at random (the rest on growth).
    overflow_random: Vec<f64>,
    /// `tcp`: each member's excess this step (scratch).
    excess: Vec<f64>,
    /// `tcp`: a fixed share of overflow drops charged to window growth (`None`: growth and the
    /// packets out of their RTT class's order refused alike), each member's base-RTT class, and
    /// each class's share of the arrivals (scratch).
    growth_share: Option<f64>,
    rtt_class: Vec<usize>,
    class_rate: Vec<f64>,
    /// `tcp` loss model: members whose loss event began this step.
    loss_event: Vec<bool>,
    /// An optical burst assembler at the link's ingress (`tcp` loss model), the drops of its
    /// lost bursts per member this step, and a segment's mean wait in it.
    assembler: Option<FluidAssembler>,
    burst_drop: Vec<f64>,
    assembly_wait_s: f64,
    // Congestion event under way.
    event: EventState,
    sync: Option<SyncModule>,
    acc: LinkAcc,
    q_max: f64,
    interval_departed: f64,
}

#[derive(Debug)]
struct EventState {
    active: bool,
    start_s: f64,
    measured: bool,
    /// A fixed hold-off from the scenario; `None`: the largest current RTT among the flows
    /// signalled at the event, so every one of them has reacted before the next event starts.
    holdoff_fixed: Option<f64>,
    holdoff_s: f64,
    /// `tcp` loss model: the event is a cluster of drops, as the packet engine's metric groups
    /// them: it ends once no drop has come for `gap_s` (the mean base RTT of the link's flows).
    gap_s: f64,
    last_drop_s: f64,
    candidates: usize,
    /// Priority order of this event's candidates (S_k is a prefix).
    order: Vec<usize>,
    window: Vec<f64>,
    active_member: Vec<bool>,
    selected: Vec<bool>,
    lost: Vec<bool>,
}

impl LinkState {
    /// This step's arrivals per member (first hop: the sender's rate; later hops: the previous
    /// hop's departures) and its early drops; returns the sums of rates, of admitted packets and
    /// of early drops (summed, not arrivals − admissions: that difference rounds below zero when
    /// nothing is dropped, and gave negative loss rates).
    #[inline]
    fn arrivals(
        &mut self,
        flows: &[FlowState],
        hop_in: &[f64],
        dt: f64,
        p_early: f64,
    ) -> (f64, f64, f64) {
        // Slices of one length, taken once: no bounds checks, no reloads of the vectors.
        let n = self.members.len();
        let rate = &mut self.rate[..n];
        let admitted = &mut self.admitted[..n];
        let dropped = &mut self.dropped[..n];
        let overflowed = &mut self.overflowed[..n];
        let mut arriving_sum = 0.0;
        let mut admitted_sum = 0.0;
        let mut early_sum = 0.0;
        for (k, m) in self.members.iter().enumerate() {
            let f = &flows[m.flow];
            let r = if m.hop == 0 {
                f.x
            } else {
                hop_in[f.hop_off + m.hop]
            };
            let arriving = r * dt;
            let early = arriving * p_early;
            rate[k] = r;
            admitted[k] = arriving - early;
            dropped[k] = early;
            overflowed[k] = 0.0;
            self.overflow_random[k] = 0.0;
            arriving_sum += r;
            admitted_sum += arriving - early;
            early_sum += early;
        }
        (arriving_sum, admitted_sum, early_sum)
    }

    /// Departures (a `share` of each member's backlog) and drops, `sync` and `proportional`:
    /// continuous loss indications, every early drop, and in `proportional` mode every overflow
    /// drop, is one loss signal to its sender (docs/model.md §1.2).
    #[inline]
    fn departures(
        &mut self,
        flows: &mut [FlowState],
        hop_in: &mut [f64],
        ring: &mut LossRing,
        now: usize,
        dt: f64,
        share: f64,
    ) {
        let n = self.members.len();
        let q_member = &mut self.q_member[..n];
        let admitted = &self.admitted[..n];
        let overflowed = &self.overflowed[..n];
        let rate = &self.rate[..n];
        let dropped = &self.dropped[..n];
        let proportional = self.sync.is_none();
        for (k, m) in self.members.iter().enumerate() {
            let content = q_member[k] + admitted[k] - overflowed[k];
            let dep = content * share;
            q_member[k] = content - dep;
            let f = &mut flows[m.flow];
            if m.last {
                f.acc.delivered += dep;
            } else {
                hop_in[f.hop_off + m.hop + 1] = dep / dt;
            }
            if m.hop == 0 {
                f.acc.sent += rate[k] * dt;
            }
            let drops = dropped[k];
            if drops > 0.0 {
                if self.event.active {
                    self.event.lost[k] = true;
                }
                f.acc.dropped += drops;
                let signals = if proportional {
                    drops
                } else {
                    drops - overflowed[k]
                };
                if signals > 0.0 {
                    ring.signal(now, dt, f.rtt_s, m.flow, signals);
                }
            }
        }
    }

    /// The link's burst assembler this step (`tcp`): a lost burst's segments are dropped (the
    /// fraction `burst_loss` of every member's admitted arrivals), and each flow the burst held
    /// has a loss event, at most one per round trip (RFC 6675 §5, as for a queue's drops), the
    /// reduction reaching it one RTT later. Returns the packets dropped.
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        &mut self,
        flows: &[FlowState],
        tcp: &mut TcpRings,
        now: usize,
        t: f64,
        dt: f64,
        measured: bool,
        log: &mut Vec<EventRecord>,
    ) -> f64 {
        let n = self.members.len();
        let Some(a) = self.assembler.as_mut() else {
            return 0.0;
        };
        let members = &self.members;
        let any = a.step(
            &self.rate[..n],
            |k| {
                let f = &flows[members[k].flow];
                if f.started {
                    f.w
                } else {
                    0.0 // not sending yet: in no burst
                }
            },
            t,
            dt,
            measured,
            log,
        );
        let wait_s = a.mean_wait_s();
        self.assembly_wait_s = wait_s;
        let p = a.loss();
        let mut lost = 0.0;
        for k in 0..n {
            let d = self.admitted[k] * p;
            self.admitted[k] -= d;
            self.dropped[k] += d;
            self.burst_drop[k] = d;
            lost += d;
        }
        if any {
            for (k, m) in members.iter().enumerate() {
                if !a.hit[k] {
                    continue;
                }
                let f = &flows[m.flow];
                let tf = &mut tcp.flows[m.flow];
                if t < tf.loss_until_s {
                    continue;
                }
                tf.draw_thresholds(&mut tcp.rng, tcp.event_threshold);
                if a.timeout(k) {
                    // Too few of its segments left to bring three duplicate ACKs: the loss is
                    // found by the retransmission timer, the packet engine's
                    // SRTT + max(4·RTTVAR, 200 ms) after the send (Linux's minimum RTO).
                    tf.rto_at_s = t + f.rtt_s + MIN_RTO_S;
                    tf.loss_until_s = tf.rto_at_s + f.rtt_s;
                } else {
                    tf.loss_until_s = t + 2.0 * f.rtt_s;
                    let delay = tcp.due.delay(f.rtt_s, dt);
                    tcp.due.at(now, delay, m.flow).reductions += 1.0;
                }
            }
        }
        lost
    }

    /// Departures and drops under `tcp`: deliveries send ACKs back, drops are detected one RTT
    /// later, and a flow's drops make a loss event when they reach its threshold. Returns
    /// whether some member's loss event began (marked in `loss_event`).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn departures_tcp(
        &mut self,
        flows: &mut [FlowState],
        hop_in: &mut [f64],
        tcp: &mut TcpRings,
        delays: &[f64],
        ack_links: &[usize],
        now: usize,
        t: f64,
        dt: f64,
        share: f64,
    ) -> bool {
        let n = self.members.len();
        let q_member = &mut self.q_member[..n];
        let admitted = &self.admitted[..n];
        let overflowed = &self.overflowed[..n];
        let rate = &self.rate[..n];
        let dropped = &self.dropped[..n];
        let overflow_random = &self.overflow_random[..n];
        let burst_drop = &self.burst_drop[..n];
        let loss_event = &mut self.loss_event[..n];
        let mut any_loss_event = false;
        for (k, m) in self.members.iter().enumerate() {
            let content = q_member[k] + admitted[k] - overflowed[k];
            let dep = content * share;
            q_member[k] = content - dep;
            let f = &mut flows[m.flow];
            if m.last {
                f.acc.delivered += dep;
                // ACKs return after the propagation (all of it on the way back) and the queues
                // they cross.
                let mut delay = tcp.flows[m.flow].ack_delay;
                if delay == 0 {
                    let mut back = f.base_rtt_s + tcp.flows[m.flow].assembly_wait_s;
                    for &l in &ack_links[f.ack_off..f.ack_off + f.ack_hops] {
                        back += delays[l];
                    }
                    delay = tcp.due.delay(back, dt);
                }
                tcp.due.at(now, delay, m.flow).acked += dep;
            } else {
                hop_in[f.hop_off + m.hop + 1] = dep / dt;
            }
            if m.hop == 0 {
                f.acc.sent += rate[k] * dt;
            }
            let drops = dropped[k];
            if drops > 0.0 {
                f.acc.dropped += drops;
                // Detected, and reacted to if a loss event begins, one RTT later.
                let delay = tcp.due.delay(f.rtt_s, dt);
                tcp.due.at(now, delay, m.flow).lost += drops;
                // A loss event starts at most once per window of data (one reaction per RTT),
                // when the drops since the last one reach a threshold.
                let tf = &mut tcp.flows[m.flow];
                if t >= tf.loss_until_s {
                    // Drops of growth packets, and drops of packets picked at random.
                    tf.overflow_drops += overflowed[k] - overflow_random[k];
                    // (A lost burst's drops are not: the burst's loss is the flow's loss event,
                    // drawn by the assembler.)
                    tf.early_drops += drops - overflowed[k] - burst_drop[k]
                        + overflow_random[k] / tcp.event_threshold;
                }
                if t >= tf.loss_until_s
                    && (tf.overflow_drops >= tf.overflow_threshold
                        || tf.early_drops >= tf.early_threshold)
                {
                    tf.draw_thresholds(&mut tcp.rng, tcp.event_threshold);
                    // The loss is detected one RTT after the drop, and the recovery it opens ends
                    // when its retransmissions are acknowledged, a further RTT on: losses
                    // detected before then, of packets sent before the cut or during recovery,
                    // belong to this event (RFC 6675 §5, as the packet engine's sender).
                    tf.loss_until_s = t + 2.0 * f.rtt_s;
                    tcp.due.at(now, delay, m.flow).reductions += 1.0;
                    loss_event[k] = true;
                    any_loss_event = true;
                }
            }
        }
        any_loss_event
    }
}

/// A fluid run in progress. Build with [`FluidEngine::new`], drive with [`FluidEngine::advance`]
/// (in chunks, so a caller can show progress), then [`FluidEngine::finish`].
pub struct FluidEngine {
    scenario: Scenario,
    dt: f64,
    step_index: u64,
    total_steps: u64,
    flows: Vec<FlowState>,
    links: Vec<LinkState>,
    hop_in: Vec<f64>,
    path_links: Vec<usize>,
    /// ACKs queue behind data in these links (their queueing delay adds to the RTT; their
    /// bytes are not counted as load).
    ack_links: Vec<usize>,
    /// Reductions on their way to the senders (empty under `tcp`: its ring has them).
    ring: LossRing,
    /// `tcp` loss model: what reaches the senders, and its per-flow state.
    tcp: TcpRings,
    /// The loss model is `tcp`.
    tcp_model: bool,
    /// Each link's queueing delay `q/C` at the start of the step (read while another link is
    /// updated).
    link_delay_s: Vec<f64>,
    reductions_per_event: f64,
    /// Past the warm-up (events are counted from here on).
    warm: bool,
    /// Statistics have started (at the warm-up, or at the first congestion event after it).
    measuring: bool,
    measured_from_s: f64,
    start_links: Vec<LinkAcc>,
    start_flows: Vec<FlowAcc>,
    event_log: Vec<EventRecord>,
    next_record_step: u64,
    record_every: u64,
    last_record_s: f64,
    series: Vec<Vec<f64>>,
    /// The aggregate Σ cwnd/RTT: every this many steps (0: off), the next one, the samples.
    aggregate_every: u64,
    next_aggregate_step: u64,
    aggregate: Vec<AggregateSample>,
    flow_updates: u64,
    /// Some link runs an XCP router (senders then look up their path's feedback every step).
    has_xcp: bool,
    /// Some link has a burst assembler (senders then add its wait to their ACKs' delay).
    has_obs: bool,
}

/// Optical burst assembly has a fluid form under the `tcp` loss model ([`obs`]): bursts as a
/// rate, their losses as events of the flows they held. Wavelength contention and a maximum
/// burst size depend on individual bursts and run in the packet engine only.
fn check_bursts(sc: &Scenario) -> Result<()> {
    let packet_only = "runs in the packet engine only (engine = \"packet\")";
    for (i, l) in sc.links.iter().enumerate() {
        let Some(a) = &l.assembler else { continue };
        if l.contention.is_some() {
            return Err(Error::field(
                format!("links[{i}].contention"),
                format!("wavelength contention {packet_only}"),
            ));
        }
        if a.max_burst_pkts > 0 {
            return Err(Error::field(
                format!("links[{i}].assembler.max_burst"),
                format!("a maximum burst size {packet_only}"),
            ));
        }
        if !matches!(sc.loss, LossModel::Tcp { .. }) {
            return Err(Error::field(
                format!("links[{i}].assembler"),
                "optical burst assembly has a fluid form under loss.model = \"tcp\" only; \
                 otherwise it runs in the packet engine (engine = \"packet\")",
            ));
        }
    }
    Ok(())
}

/// Refuses dynamic traffic: the fluid model's flows are persistent (docs/model.md §1), so flows
/// that arrive and finish run in the packet engine only.
fn check_no_arrivals(sc: &Scenario) -> Result<()> {
    match sc.flows.iter().find(|f| f.arrivals.is_some()) {
        Some(f) => Err(Error::field(
            format!("flows[{}].arrivals", f.group),
            "dynamic traffic runs in the packet engine only (engine = \"packet\")",
        )),
        None => Ok(()),
    }
}

/// Refuses model-based laws (BBR) outside the `tcp` loss model: their delivery-rate samples come
/// from its ACK clock (fluid/rate.rs).
fn check_model_laws(sc: &Scenario) -> Result<()> {
    if matches!(sc.loss, LossModel::Tcp { .. }) {
        return Ok(());
    }
    match sc.flows.iter().find(|f| f.cc.build().wants_rate_samples()) {
        Some(f) => Err(Error::field(
            "loss.model",
            format!(
                "variant {:?} (flows[{}].cc) has a fluid form under loss.model = \"tcp\" (the \
                 default) only: its delivery-rate samples come from that model's ACK clock",
                f.cc.name(),
                f.group
            ),
        )),
        None => Ok(()),
    }
}

/// What the fluid engine refuses in a valid scenario (what it has no form for, what would not
/// fit in memory), checked without building anything: `FluidEngine::new` and `lossync validate`.
pub fn check(sc: &Scenario) -> Result<()> {
    check_bursts(sc)?;
    check_no_arrivals(sc)?;
    check_model_laws(sc)?;
    check_memory(sc, (sc.run.duration_s / sc.run.step_s).round() as u64)
}

impl FluidEngine {
    pub fn new(scenario: &Scenario) -> Result<Self> {
        check(scenario)?;
        let sc = scenario.clone();
        let dt = sc.run.step_s;
        let total_steps = (sc.run.duration_s / dt).round() as u64;
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut path_links = Vec::new();
        let mut ack_links = Vec::new();
        let mut conns = vec![0usize; sc.flows.last().map_or(0, |f| f.logical + 1)];
        for f in &sc.flows {
            conns[f.logical] += 1;
        }
        let mut max_rtt: f64 = 0.0;
        for (i, f) in sc.flows.iter().enumerate() {
            let mut law = f.cc.build();
            law.seed(Rng::new(sc.run.seed, cc::LAW_STREAM + i as u64));
            let queueing: f64 = f
                .path
                .iter()
                .chain(&f.ack_path)
                .map(|&l| {
                    let timer_s = sc.links[l].assembler.as_ref().map_or(0.0, |a| {
                        a.timers_s.iter().copied().fold(a.timer_s, f64::max)
                    });
                    sc.links[l].buffer_pkts / sc.links[l].capacity_pps + timer_s
                })
                .sum();
            max_rtt = max_rtt.max(f.rtt_s + queueing);
            flows.push(FlowState {
                cc: law,
                w: f.initial_window_pkts.min(f.rwnd_pkts),
                ssthresh: cc::initial_ssthresh(f.slow_start, f.rwnd_pkts),
                rtt_s: f.rtt_s,
                x: 0.0,
                started: false,
                start_s: f.start_s,
                base_rtt_s: f.rtt_s,
                rwnd: f.rwnd_pkts,
                // The connections of a parallel flow share the access link: an equal part each.
                access_pps: f.access_capacity_bps.map_or(f64::INFINITY, |bps| {
                    bps / (8.0 * sc.links[f.path[0]].packet_size_bytes) / conns[f.logical] as f64
                }),
                hop_off: path_links.len(),
                hops: f.path.len(),
                ack_off: ack_links.len(),
                ack_hops: f.ack_path.len(),
                acc: FlowAcc::default(),
            });
            path_links.extend_from_slice(&f.path);
            ack_links.extend_from_slice(&f.ack_path);
        }
        let (sync_spec, reductions_per_event, holdoff) = match &sc.loss {
            LossModel::Proportional | LossModel::Tcp { .. } => (None, 1.0, None),
            LossModel::Sync {
                sync,
                policy,
                reductions_per_event,
                holdoff_s,
            } => (Some((sync, *policy)), *reductions_per_event, *holdoff_s),
        };
        let mut links = Vec::with_capacity(sc.links.len());
        for (li, l) in sc.links.iter().enumerate() {
            let members = link_members(&sc, li);
            let n = members.len();
            // XCP's first control interval: the mean base RTT of the flows crossing the link.
            let mean_rtt =
                members.iter().map(|m| sc.flows[m.flow].rtt_s).sum::<f64>() / n.max(1) as f64;
            // Stream 2000 + link: each link's module draws from its own stream.
            let sync = sync_spec.map(|(s, p)| {
                SyncModule::new(s.clone(), p, n, Rng::new(sc.run.seed, 2000 + li as u64))
            });
            let rtt_class = link_rtt_classes(&sc, li, &members);
            let headroom = link_headroom_pkts(&sc, li, &rtt_class);
            links.push(LinkState {
                index: li,
                capacity_pps: l.capacity_pps,
                buffer_pkts: l.buffer_pkts - headroom,
                loss_rate: l.loss_rate,
                discipline: queue::build(
                    &l.queue,
                    LinkContext {
                        buffer: Buffer::new(l.buffer_pkts),
                        capacity_pps: l.capacity_pps,
                        // The packet engine's packet time; the fluid faces do not use it.
                        packet_time_ps: (8.0 * l.packet_size_bytes / l.capacity_pps * 1e12).round()
                            as u64,
                        first_interval_s: mean_rtt,
                    },
                ),
                members,
                q: 0.0,
                q_member: vec![0.0; n],
                rate: vec![0.0; n],
                admitted: vec![0.0; n],
                dropped: vec![0.0; n],
                overflowed: vec![0.0; n],
                overflow_random: vec![0.0; n],
                excess: vec![0.0; n],
                class_rate: vec![0.0; n],
                rtt_class,
                growth_share: match sc.loss {
                    LossModel::Tcp { growth_share, .. } => growth_share,
                    _ => None,
                },
                loss_event: vec![false; n],
                assembler: l
                    .assembler
                    .as_ref()
                    .map(|a| FluidAssembler::new(li, a, l.burst_loss, n, sc.run.seed)),
                burst_drop: vec![0.0; n],
                assembly_wait_s: 0.0,
                event: EventState {
                    active: false,
                    start_s: 0.0,
                    measured: false,
                    holdoff_fixed: holdoff,
                    gap_s: mean_rtt,
                    last_drop_s: 0.0,
                    holdoff_s: 0.0,
                    candidates: 0,
                    order: Vec::with_capacity(n),
                    window: vec![0.0; n],
                    active_member: vec![false; n],
                    selected: vec![false; n],
                    lost: vec![false; n],
                },
                sync,
                acc: LinkAcc::default(),
                q_max: 0.0,
                interval_departed: 0.0,
            });
        }
        // A drop now reaches its sender one RTT later, at most `max_rtt`.
        let ring_len = (max_rtt / dt).ceil() as usize + 3;
        let record_every = ((sc.run.record_interval_s / dt).round() as u64).max(1);
        let n_records = (total_steps / record_every + 1) as usize;
        let n_cols = 1 + 2 * sc.links.len() + 2 * sc.flows.len();
        let tcp_model = matches!(sc.loss, LossModel::Tcp { .. });
        Ok(FluidEngine {
            dt,
            step_index: 0,
            total_steps,
            hop_in: vec![0.0; path_links.len()],
            path_links,
            ack_links,
            ring: LossRing::new(ring_len, if tcp_model { 0 } else { sc.flows.len() }),
            link_delay_s: vec![0.0; sc.links.len()],
            tcp: {
                let n = if tcp_model { sc.flows.len() } else { 0 };
                TcpRings {
                    due: LossRing::new(ring_len, n),
                    rng: Rng::new(sc.run.seed, 4000),
                    event_threshold: match sc.loss {
                        LossModel::Tcp {
                            event_threshold, ..
                        } => event_threshold,
                        _ => 1.0,
                    },
                    flows: sc.flows[..n]
                        .iter()
                        .zip(&flows)
                        .map(|(f, state)| TcpFlow {
                            pacing: f.pacing,
                            // As `departures_tcp` would compute it (back = base RTT exactly).
                            ack_delay: if f.ack_path.is_empty()
                                && f.path.iter().all(|&l| sc.links[l].assembler.is_none())
                            {
                                round_to_usize(f.rtt_s / dt).clamp(1, ring_len - 1)
                            } else {
                                0
                            },
                            rto_at_s: f64::INFINITY,
                            rate: (state.cc.wants_rate_samples())
                                .then(|| Box::new(rate::RateClock::new(ring_len))),
                            law_paced: state.cc.pacing_rate_pps().is_some(),
                            ..TcpFlow::default()
                        })
                        .collect(),
                }
            },
            tcp_model,
            reductions_per_event,
            warm: false,
            measuring: false,
            measured_from_s: 0.0,
            start_links: vec![LinkAcc::default(); links.len()],
            start_flows: vec![FlowAcc::default(); flows.len()],
            event_log: Vec::new(),
            next_record_step: 0,
            record_every,
            last_record_s: 0.0,
            series: (0..n_cols).map(|_| Vec::with_capacity(n_records)).collect(),
            aggregate_every: match sc.run.aggregate_interval_s {
                0.0 => 0,
                a => ((a / dt).round() as u64).max(1),
            },
            next_aggregate_step: 0,
            aggregate: Vec::new(),
            flow_updates: 0,
            has_xcp: links.iter().any(|l| l.discipline.feedback().is_some()),
            has_obs: links.iter().any(|l| l.assembler.is_some()),
            flows,
            links,
            scenario: sc,
        })
    }

    /// Simulated time now, in seconds.
    pub fn now_s(&self) -> f64 {
        self.step_index as f64 * self.dt
    }

    pub fn duration_s(&self) -> f64 {
        self.total_steps as f64 * self.dt
    }

    pub fn is_done(&self) -> bool {
        self.step_index >= self.total_steps
    }

    /// Runs until simulated time `until_s` (or the end of the run).
    pub fn advance(&mut self, until_s: f64) {
        let until = ((until_s / self.dt).round() as u64).min(self.total_steps);
        while self.step_index < until {
            if self.step_index == self.next_record_step {
                self.record();
            }
            if self.aggregate_every > 0 && self.step_index == self.next_aggregate_step {
                self.sample_aggregate();
            }
            self.step();
        }
    }

    /// Runs to the end and returns the result.
    pub fn run(mut self) -> RunResult {
        self.advance(f64::INFINITY);
        self.finish()
    }

    /// Starts the statistics now: later results are differences from these totals.
    fn start_measuring(&mut self, t: f64) {
        self.measuring = true;
        self.measured_from_s = t;
        for (s, l) in self.start_links.iter_mut().zip(&mut self.links) {
            *s = l.acc;
            l.q_max = l.q;
            if let Some(a) = l.assembler.as_mut() {
                a.start_measuring();
            }
        }
        for (s, f) in self.start_flows.iter_mut().zip(&self.flows) {
            *s = f.acc;
        }
    }

    fn step(&mut self) {
        if self.tcp_model {
            self.step_model::<true>();
        } else {
            self.step_model::<false>();
        }
    }

    /// One step; `TCP`: the loss model is `tcp`. A constant, so the other models' loops carry
    /// none of its branches (they cost the sync case 12% when they were tested per flow).
    fn step_model<const TCP: bool>(&mut self) {
        let dt = self.dt;
        let t = self.step_index as f64 * dt;
        if !self.warm && t + 0.5 * dt >= self.scenario.run.warmup_s {
            self.warm = true;
            self.start_measuring(t);
            self.measuring = !self.scenario.run.from_first_congestion;
        }
        let warm = self.warm;
        let measuring = self.measuring;
        let reductions_per_event = self.reductions_per_event;
        let has_xcp = self.has_xcp;
        let has_obs = self.has_obs;
        // Every ring has the same length: one slot index for all of them.
        let now = self.ring.slot(self.step_index as usize);
        let (flows, links, hop_in, ring, path_links, ack_links, tcp) = (
            &mut self.flows[..],
            &mut self.links[..],
            &mut self.hop_in[..],
            &mut self.ring,
            &self.path_links[..],
            &self.ack_links[..],
            &mut self.tcp,
        );
        for (l, d) in links.iter().zip(self.link_delay_s.iter_mut()) {
            *d = l.q / l.capacity_pps + l.assembly_wait_s;
        }
        let delays = &self.link_delay_s[..];
        // The context of this step's law calls; only the RTT (and XCP's feedback) change per flow.
        let mut ctx = CcContext {
            now_s: t,
            rtt_s: 0.0,
            feedback_pkts: 0.0,
        };

        // 1. Senders: RTT and rate. ACK-clocked senders (`tcp`) first take this step's ACKs,
        //    detected losses and reductions, then send what their window allows.
        if TCP {
            let due = tcp.due.due(now);
            for ((f, tf), due) in flows.iter_mut().zip(&mut tcp.flows).zip(due) {
                if !f.started {
                    if t + 0.5 * dt < f.start_s {
                        continue;
                    }
                    f.started = true;
                    tf.draw_thresholds(&mut tcp.rng, tcp.event_threshold);
                }
                let rtt = path_rtt(f, delays, path_links, ack_links);
                f.rtt_s = rtt;
                if has_obs {
                    tf.assembly_wait_s = path_links[f.hop_off..f.hop_off + f.hops]
                        .iter()
                        .map(|&l| links[l].assembly_wait_s)
                        .sum();
                }
                let TcpDue {
                    acked,
                    lost,
                    reductions: r,
                } = std::mem::take(due);
                let prior_inflight = tf.inflight;
                tf.inflight = (tf.inflight - acked - lost).max(0.0);
                ctx.rtt_s = rtt;
                if has_xcp {
                    ctx.feedback_pkts = path_feedback(f, links, path_links);
                }
                if t >= tf.rto_at_s {
                    // The timeout: one reduction (ssthresh), then a loss window of one packet
                    // and slow start (RFC 5681 §3.1); what was in flight is presumed lost.
                    tf.rto_at_s = f64::INFINITY;
                    reduce_window(f, &ctx, 1.0);
                    f.w = 1.0;
                    tf.inflight = 0.0;
                    if let Some(clock) = &mut tf.rate {
                        clock.timeout(t, rtt);
                    }
                }
                reduce_window(f, &ctx, r);
                if r > 0.0 {
                    // Fast recovery lasts until the data sent before the cut are acknowledged,
                    // one RTT; the window does not grow meanwhile (RFC 6675 §5, as the packet
                    // engine's sender).
                    tf.recovery_until_s = t + rtt;
                    if let Some(clock) = &mut tf.rate {
                        clock.loss_event(t, rtt);
                    }
                }
                if let Some(clock) = &mut tf.rate {
                    // A model-based law sets its window from this step's delivery-rate sample.
                    let sample = clock.sample(
                        self.step_index,
                        t,
                        dt,
                        rtt,
                        acked,
                        lost,
                        prior_inflight,
                        tf.inflight,
                    );
                    f.w = f.cc.on_rate_sample(&ctx, &sample, f.w).clamp(1.0, f.rwnd);
                } else if t >= tf.recovery_until_s {
                    grow_window(f, &ctx, acked);
                }
                // The ACK clock: send what the window allows beyond the data in flight, at
                // most what the access link carries in a step.
                let mut send = (f.w - tf.inflight).max(0.0).min(f.access_pps * dt);
                if tf.rto_at_s.is_finite() {
                    send = 0.0; // waiting for the retransmission timer
                }
                tf.excess = (send - acked - lost).max(0.0);
                if let Some(rate_pps) = tf.law_paced.then(|| f.cc.pacing_rate_pps()).flatten() {
                    // A law's own pacing rate (BBR's gain × bandwidth): no burst, no excess.
                    send = send.min(rate_pps * dt);
                    tf.excess = 0.0;
                    if let Some(clock) = tf.rate.as_mut().filter(|_| f.cc.marks_app_limited()) {
                        clock.app_limited(t, rtt);
                    }
                } else if let Some(p) = tf.pacing {
                    // A paced sender spreads its window over the RTT: no burst, so its growth
                    // meets a full queue like any other arrival (no excess to charge first).
                    let ratio = if f.w < f.ssthresh {
                        p.ss_ratio
                    } else {
                        p.ca_ratio
                    };
                    send = send.min(ratio * f.w / rtt * dt);
                    tf.excess = 0.0;
                }
                tf.inflight += send;
                f.x = send / dt;
                // The window is final for this step (nothing below changes it under `tcp`).
                f.acc.cwnd_integral += f.w * dt;
            }
        } else {
            for f in flows.iter_mut() {
                if !f.started {
                    if t + 0.5 * dt < f.start_s {
                        continue;
                    }
                    f.started = true;
                }
                let rtt = path_rtt(f, delays, path_links, ack_links);
                f.rtt_s = rtt;
                f.x = (f.w / rtt).min(f.access_pps);
            }
        }

        // 2. Links.
        let mut congestion_began = false;
        for link in links.iter_mut() {
            let c = link.capacity_pps;
            let p_disc = link.discipline.early_drop_probability(link.q, dt, c);
            let p_early = 1.0 - (1.0 - link.loss_rate) * (1.0 - p_disc);
            let (mut arriving_sum, mut admitted_sum, early_sum) =
                link.arrivals(flows, hop_in, dt, p_early);
            if TCP && link.assembler.is_some() {
                // Lost bursts never reach the link's port: its arrivals and drops are those of
                // the bursts that left, as in the packet engine (the flows count the loss).
                let lost = link.assemble(flows, tcp, now, t, dt, warm, &mut self.event_log);
                admitted_sum -= lost;
                arriving_sum -= lost / dt;
            }
            if has_xcp {
                for (m, &r) in link.members.iter().zip(&link.rate) {
                    let f = &flows[m.flow];
                    link.discipline.fluid_arrivals(r * dt, f.rtt_s, f.w);
                }
                link.discipline.fluid_step_end(link.q, t + dt, c);
            }
            let avail = link.q + admitted_sum;
            let out = avail.min(c * dt);
            let overflow = (avail - out - link.buffer_pkts).max(0.0);

            // Congestion events (docs/fluid.md): an overflow episode, held at least the hold-off;
            // with `tcp`, a cluster of drops (overflow or early) as the packet engine's.
            // (`tcp`: the loss events of this step are clustered after the flows' update below.)
            if TCP {
                let ev = &link.event;
                if ev.active && t - ev.last_drop_s >= ev.gap_s {
                    close_event(link, &mut self.event_log);
                }
            } else {
                if link.event.active && t >= link.event.start_s + link.event.holdoff_s {
                    close_event(link, &mut self.event_log);
                }
                if overflow > 0.0 && !link.event.active {
                    congestion_began |= warm && !measuring;
                    open_event(link, flows, ring, now, dt, t, warm, reductions_per_event);
                }
            }
            if overflow > 0.0 {
                assign_overflow(
                    link,
                    flows,
                    ring,
                    now,
                    dt,
                    overflow,
                    admitted_sum,
                    reductions_per_event,
                    TCP.then_some(&tcp.flows[..]),
                );
            }

            // Queue and departures.
            let kept = avail - overflow;
            let share = if kept > 0.0 { out / kept } else { 0.0 };
            let any_loss_event = if TCP {
                link.departures_tcp(flows, hop_in, tcp, delays, ack_links, now, t, dt, share)
            } else {
                link.departures(flows, hop_in, ring, now, dt, share);
                false
            };
            if TCP && any_loss_event {
                // A congestion event is a cluster of loss events, as the packet engine's metric
                // clusters drops: one begins here unless one is under way.
                if !link.event.active {
                    congestion_began |= warm && !measuring;
                    open_event(link, flows, ring, now, dt, t, warm, reductions_per_event);
                }
                for k in 0..link.members.len() {
                    if std::mem::take(&mut link.loss_event[k]) {
                        link.event.lost[k] = true;
                        link.event.selected[k] = true;
                    }
                }
                link.event.last_drop_s = t;
            }
            link.q = kept - out;
            link.q_max = link.q_max.max(link.q);
            link.acc.arrived += arriving_sum * dt;
            link.acc.departed += out;
            link.acc.dropped += early_sum + overflow;
            link.acc.q_integral += link.q * dt;
            link.interval_departed += out;
        }

        // 3–4. Rate-based senders: apply the reductions that arrive now, then grow.
        if !TCP {
            let due = ring.due(now);
            for (f, slot) in flows.iter_mut().zip(due.iter_mut()) {
                if !f.started {
                    continue;
                }
                let r = std::mem::take(slot);
                ctx.rtt_s = f.rtt_s;
                if has_xcp {
                    ctx.feedback_pkts = path_feedback(f, links, path_links);
                }
                update_window(f, &ctx, r, f.x * dt);
                f.acc.cwnd_integral += f.w * dt;
            }
        }
        if congestion_began {
            self.start_measuring(t);
        }
        self.flow_updates += self.flows.len() as u64;
        self.step_index += 1;
    }

    fn record(&mut self) {
        let t = self.now_s();
        let span = t - self.last_record_s;
        let mut cols = self.series.iter_mut();
        let mut push = |v: f64| cols.next().expect("one column per value").push(v);
        push(t);
        for l in &mut self.links {
            push(l.q);
            push(if span > 0.0 {
                l.interval_departed / (l.capacity_pps * span)
            } else {
                f64::NAN
            });
            l.interval_departed = 0.0;
        }
        for f in &self.flows {
            push(f.w);
            push(f.x);
        }
        self.last_record_s = t;
        self.next_record_step += self.record_every;
    }

    /// One sample of Σ cwnd/RTT over the started flows (the RTT with its queueing delay).
    fn sample_aggregate(&mut self) {
        let rate_pps = (self.flows.iter())
            .filter(|f| f.started)
            .map(|f| f.w / f.rtt_s)
            .sum();
        self.aggregate.push(AggregateSample {
            time_s: self.now_s(),
            rate_pps,
        });
        self.next_aggregate_step += self.aggregate_every;
    }

    /// Closes the run and computes the summary. Without a congestion event after the warm-up,
    /// `from_first_congestion` falls back to statistics from the warm-up (and the summary says so
    /// in `measured_from_s` and `congestion_events = 0`).
    pub fn finish(mut self) -> RunResult {
        if self.step_index == self.next_record_step {
            self.record();
        }
        if self.aggregate_every > 0 && self.step_index == self.next_aggregate_step {
            self.sample_aggregate();
        }
        for l in &mut self.links {
            if l.event.active {
                close_event(l, &mut self.event_log);
            }
        }
        let end = self.now_s();
        let from = self.measured_from_s;
        let span = end - from;
        let links = self
            .links
            .iter()
            .zip(&self.start_links)
            .map(|(l, s)| LinkRecord {
                arrived_pkts: l.acc.arrived - s.arrived,
                departed_pkts: l.acc.departed - s.departed,
                dropped_pkts: l.acc.dropped - s.dropped,
                queue_integral: l.acc.q_integral - s.q_integral,
                queue_integral_span: span,
                max_queue_pkts: l.q_max,
                total_arrived_pkts: l.acc.arrived,
                total_departed_pkts: l.acc.departed,
                total_dropped_pkts: l.acc.dropped,
                queue_start_pkts: 0.0,
                queue_end_pkts: l.q,
            })
            .collect();
        let flows = self
            .flows
            .iter()
            .zip(&self.start_flows)
            .map(|(f, s)| FlowRecord {
                sent_pkts: f.acc.sent - s.sent,
                delivered_pkts: f.acc.delivered - s.delivered,
                dropped_pkts: f.acc.dropped - s.dropped,
                cwnd_integral_pkt_s: f.acc.cwnd_integral - s.cwnd_integral,
                reductions: f.acc.reductions - s.reductions,
            })
            .collect();
        let records = Records {
            engine: "fluid".into(),
            duration_s: end,
            step_s: self.dt,
            measured_from_s: from,
            span_s: span,
            flow_updates: self.flow_updates,
            links,
            flows,
            events: self.event_log,
            samples: self.series,
            warnings: region_warnings(&self.scenario),
            bursts: (self.links.into_iter())
                .filter_map(|l| l.assembler.map(FluidAssembler::finish))
                .collect(),
            aggregate: self.aggregate,
            ..Records::default()
        };
        metrics::summarize(&self.scenario, records)
    }
}

/// Where the fidelity matrix (docs/validation/fidelity.md: 486 cells against the packet engine,
/// 100 Mb/s to 10 Gb/s, 2 to 50 flows, buffers of 2% to 100% of the BDP) says this scenario's
/// numbers may be off: one sentence per reason, with the matrix's figure.
fn region_warnings(sc: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    for (i, l) in sc.links.iter().enumerate() {
        if let Some(a) = &l.assembler {
            out.push(if a.policy == crate::scenario::AssemblyPolicy::Window {
                format!(
                    "links[{i}].assembler: the fluid form of the window policy is not validated \
                     (obs-dumbbell: utilization 0.26 against the packet engine's 0.17, a third of \
                     its bursts); compare with --engine packet"
                )
            } else {
                format!(
                    "links[{i}].assembler: the fluid form of burst assembly gave 1.00-1.22 times \
                     the packet engine's per-flow throughput on 16 cells (docs/validation/obs.md)"
                )
            });
        }
    }
    let xcp = sc.flows.iter().any(|f| f.cc.name() == "xcp");
    match &sc.loss {
        LossModel::Proportional if xcp => out.push(
            "XCP senders: the fluid engine's XCP (rate model) is checked against the packet \
             engine on a few cases only (docs/fluid.md); compare with --engine packet"
                .to_string(),
        ),
        LossModel::Proportional => out.push(
            "loss.model = \"proportional\": its utilization was within 3 points of the packet \
             engine in 32% of the fidelity matrix's cells (tcp: 93%; docs/validation/fidelity.md)"
                .to_string(),
        ),
        LossModel::Sync { .. } => out.push(
            "loss.model = \"sync\": imposed synchronization; its utilization was within 3 points \
             of the packet engine in 73-82% of the fidelity matrix's cells (tcp: 93%)"
                .to_string(),
        ),
        LossModel::Tcp {
            burst_pkts,
            burst_per_sqrt_buffer,
            event_threshold,
            calibration,
            fitted_buffer_pkts,
            ..
        } if burst_pkts.is_some()
            || burst_per_sqrt_buffer.is_some()
            || *event_threshold != 1.0
            || calibration.is_some()
            || fitted_buffer_pkts.is_some() =>
        {
            let burst = match (burst_pkts, burst_per_sqrt_buffer) {
                (Some(b), _) => format!("loss.burst_pkts = {b}"),
                (None, Some(c)) => format!("loss.burst_per_sqrt_buffer = {c}"),
                (None, None) => "loss.burst_pkts = default".to_string(),
            };
            let from = match (calibration, fitted_buffer_pkts) {
                (Some(file), _) => {
                    format!("calibrated against packet runs of one scenario ({file})")
                }
                (None, Some(_)) => "calibrated against packet runs of one scenario".to_string(),
                (None, None) => "set by hand or calibrated against packet runs of one scenario \
                                 (lossync calibrate)"
                    .to_string(),
            };
            out.push(format!(
                "{burst}, loss.event_threshold = {event_threshold}: {from}; trust it near that \
                 scenario, and check others with --engine packet"
            ));
            let smallest = smallest_buffer_pkts(&sc.links).unwrap_or(0.0);
            // 10%: further than a rounding of the buffer to whole packets at small BDPs.
            if let Some(fitted) = fitted_buffer_pkts.filter(|&f| (smallest - f).abs() > 0.1 * f) {
                out.push(format!(
                    "loss.calibration: fitted at a smallest buffer of {fitted:.1} packets, used at \
                     {smallest:.1} ({:.2} times it); calibrations used at twice their buffer were \
                     within 2 points of the packet engine (with send jitter) in 94% of \
                     docs/validation/calibration.md's cells, up to 3.6 points off, and further \
                     from it are not measured: fit at the buffer you use",
                    smallest / fitted
                ));
            }
        }
        LossModel::Tcp { .. } => {}
    }
    for (i, l) in sc.links.iter().enumerate() {
        let crossing: Vec<&crate::scenario::Flow> =
            sc.flows.iter().filter(|f| f.path.contains(&i)).collect();
        if crossing.is_empty() {
            continue;
        }
        let mean_rtt = crossing.iter().map(|f| f.rtt_s).sum::<f64>() / crossing.len() as f64;
        let bdp = l.capacity_pps * mean_rtt;
        let (lo, hi) = crossing
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), f| {
                (lo.min(f.rtt_s), hi.max(f.rtt_s))
            });
        // Small buffers are outside the validated region with unequal RTTs only: there the
        // matrix's cells below 10% BDP were within 3 points in 62%, with equal RTTs in 96%.
        if matches!(sc.loss, LossModel::Tcp { burst_pkts: None, burst_per_sqrt_buffer: None, event_threshold, .. } if event_threshold == 1.0)
            && l.buffer_pkts < 0.1 * bdp
            && hi > lo * 1.01
        {
            out.push(format!(
                "links[{i}].buffer: {:.1}% of the BDP with unequal RTTs; there, below 10%, the default \
                 loss model was within 3 points of the packet engine in 62% of the fidelity \
                 matrix's cells (96% with equal RTTs, 98-99% from 10% up): check with --engine packet",
                100.0 * l.buffer_pkts / bdp
            ));
        }
        if matches!(sc.loss, LossModel::Tcp { .. }) && hi > lo * 1.01 {
            out.push(format!(
                "links[{i}]: flows of unequal RTTs ({:.0}-{:.0} ms); there the default loss model's \
                 fairness matched the packet engine (with send jitter) in 77% of the fidelity \
                 matrix's cells for Jain's index (within 0.05) and 72% for variant shares (within \
                 25%), against 93% and 90% with equal RTTs",
                lo * 1e3,
                hi * 1e3
            ));
        }
        if !(99e6..=10.1e9).contains(&l.capacity_bps) {
            out.push(format!(
                "links[{i}].capacity: {:.3e} b/s is outside the fidelity matrix (100 Mb/s to \
                 10 Gb/s); the fluid engine is extrapolating",
                l.capacity_bps
            ));
        }
        if crossing.len() > 50 {
            out.push(format!(
                "links[{i}]: {} flows, more than the fidelity matrix's 50",
                crossing.len()
            ));
        }
    }
    out
}

/// XCP: the smallest feedback of the XCP routers on the path, per packet acked (the fluid model
/// applies it at once, without the RTT a header takes to come back); 0 without one.
fn path_feedback(f: &FlowState, links: &[LinkState], path_links: &[usize]) -> f64 {
    let mut feedback_pkts = f64::INFINITY;
    for &l in &path_links[f.hop_off..f.hop_off + f.hops] {
        if let Some(fb) = links[l].discipline.feedback() {
            feedback_pkts = feedback_pkts.min(fb.per_packet(f.w, f.rtt_s));
        }
    }
    if feedback_pkts.is_finite() {
        feedback_pkts
    } else {
        0.0
    }
}

/// A sender's RTT: propagation plus the queueing delays (`delays`, per link) of its path and of
/// the links its ACKs queue in.
#[inline]
fn path_rtt(f: &FlowState, delays: &[f64], path_links: &[usize], ack_links: &[usize]) -> f64 {
    let mut rtt = f.base_rtt_s;
    for &l in &path_links[f.hop_off..f.hop_off + f.hops] {
        rtt += delays[l];
    }
    for &l in &ack_links[f.ack_off..f.ack_off + f.ack_hops] {
        rtt += delays[l];
    }
    rtt
}

/// A sender applies `reductions` that reach it now, then grows by `acked` packets: slow start
/// below ssthresh (RFC 5681 §3.1), else its law.
#[inline]
fn update_window(f: &mut FlowState, ctx: &CcContext, reductions: f64, acked: f64) {
    reduce_window(f, ctx, reductions);
    grow_window(f, ctx, acked);
}

fn reduce_window(f: &mut FlowState, ctx: &CcContext, reductions: f64) {
    if reductions > 0.0 {
        f.w = f.cc.on_loss(ctx, f.w, reductions).max(1.0);
        f.ssthresh = f.w;
        f.acc.reductions += reductions;
    }
}

fn grow_window(f: &mut FlowState, ctx: &CcContext, acked: f64) {
    // Fluid ACKs have no boundaries: no byte-counting limit.
    f.w = cc::grow_window(
        f.cc.as_mut(),
        ctx,
        f.w,
        f.ssthresh,
        acked,
        f64::INFINITY,
        f.rwnd,
    );
}

/// Refuses a scenario whose engine state would not fit in memory, before allocating it: the loss
/// ring (one slot per step of the longest RTT, full buffers included, per connection), the time
/// series and the per-connection and per-hop state.
fn check_memory(sc: &Scenario, total_steps: u64) -> Result<()> {
    let dt = sc.run.step_s;
    let n = sc.flows.len() as f64;
    let (mut max_rtt, mut rtt_field, mut buffer_blame) = (0.0f64, "flows".to_string(), false);
    for f in &sc.flows {
        let queueing: f64 = f
            .path
            .iter()
            .chain(&f.ack_path)
            .map(|&l| sc.links[l].buffer_pkts / sc.links[l].capacity_pps)
            .sum();
        if f.rtt_s + queueing > max_rtt {
            max_rtt = f.rtt_s + queueing;
            buffer_blame = queueing > f.rtt_s;
            rtt_field = format!("flows[{}].rtt", f.group);
        }
    }
    // The loss ring, and with the `tcp` loss model the ACK and detected-loss rings too.
    let rings = if matches!(sc.loss, LossModel::Tcp { .. }) {
        3.0
    } else {
        1.0
    };
    let ring = rings * ((max_rtt / dt).ceil() + 3.0) * n * 8.0;
    let record_every = (sc.run.record_interval_s / dt).round().max(1.0);
    let columns = 1.0 + 2.0 * sc.links.len() as f64 + 2.0 * n;
    let series = ((total_steps as f64 / record_every).floor() + 1.0) * columns * 8.0;
    let hops: usize = sc
        .flows
        .iter()
        .map(|f| f.path.len() + f.ack_path.len())
        .sum();
    // FlowState with its law, and per hop a link member's eight scratch numbers.
    let state = n * 512.0 + hops as f64 * 80.0;
    let (field, what) = if series > ring && series > state {
        ("run.record_interval".to_string(), "the time series")
    } else if ring > state && buffer_blame {
        let l = sc
            .links
            .iter()
            .enumerate()
            .max_by(|a, b| {
                let d = |l: &crate::scenario::Link| l.buffer_pkts / l.capacity_pps;
                d(a.1).total_cmp(&d(b.1))
            })
            .map_or(0, |(i, _)| i);
        (
            format!("links[{l}].buffer"),
            "a loss ring as long as the buffers' queueing delay",
        )
    } else if ring > state {
        (
            rtt_field,
            "a loss ring as long as the largest RTT, per flow",
        )
    } else {
        ("flows".to_string(), "per-flow state")
    };
    crate::memory::check("fluid", ring + series + state, &field, what)
}

/// A congestion event begins on `link` at time `t`. In `sync` mode the module picks m_k and S_k
/// now, and each selected flow is signalled once, one RTT later (docs/model.md §2.2 eqs. 5–6, §2.3).
#[allow(clippy::too_many_arguments)]
fn open_event(
    link: &mut LinkState,
    flows: &[FlowState],
    ring: &mut LossRing,
    now: usize,
    dt: f64,
    t: f64,
    measured: bool,
    reductions: f64,
) {
    let ev = &mut link.event;
    ev.active = true;
    ev.start_s = t;
    ev.measured = measured;
    ev.candidates = 0;
    for (k, m) in link.members.iter().enumerate() {
        ev.active_member[k] = link.rate[k] > 0.0;
        ev.window[k] = flows[m.flow].w;
        ev.selected[k] = false;
        ev.lost[k] = false;
        // Every started flow could lose, as in the packet engine's count: under `tcp` a flow
        // paused on its ACK clock after a cut sends nothing this step but may lose later in the
        // event. (Under the rate models a started flow always sends, so the count is unchanged.)
        ev.candidates += flows[m.flow].started as usize;
    }
    // Default hold-off: the slowest signalled flow's RTT, plus two steps for the rounding of the
    // feedback delay to whole steps.
    let mut slowest = 0.0f64;
    match link.sync.as_mut() {
        Some(s) => {
            let m_k = s.draw_m(ev.candidates);
            let order = s.prioritize(&link.rate, &ev.window, &ev.active_member);
            ev.order.clear();
            ev.order.extend_from_slice(order);
            for &k in ev.order.iter().take(m_k) {
                ev.selected[k] = true;
                let fi = link.members[k].flow;
                slowest = slowest.max(flows[fi].rtt_s);
                ring.signal(now, dt, flows[fi].rtt_s, fi, reductions);
            }
            if let Some(&last) = ev.order.get(m_k.saturating_sub(1)) {
                s.advance_round_robin(last);
            }
        }
        None => {
            for (k, m) in link.members.iter().enumerate() {
                if ev.active_member[k] {
                    slowest = slowest.max(flows[m.flow].rtt_s);
                }
            }
        }
    }
    ev.holdoff_s = ev.holdoff_fixed.unwrap_or(slowest + 2.0 * dt);
}

/// Assigns this step's overflow to flows (docs/model.md §2.2 eq. 7): in `sync` mode among S_k in
/// proportion to their admitted arrivals, spilling to the next flows in priority order (which
/// then join S_k and are signalled) if S_k cannot absorb it; in `proportional` mode among all
/// flows in proportion to their admitted arrivals.
#[allow(clippy::too_many_arguments)]
fn assign_overflow(
    link: &mut LinkState,
    flows: &[FlowState],
    ring: &mut LossRing,
    now: usize,
    dt: f64,
    overflow: f64,
    admitted_sum: f64,
    reductions: f64,
    tcp_flows: Option<&[TcpFlow]>,
) {
    let members = link.members.len();
    if let Some(tcp_flows) = tcp_flows {
        // Each member's excess over the packets it replaces (first hop only: later hops see the
        // previous hop's departures).
        for (k, m) in link.members.iter().enumerate() {
            link.excess[k] = if m.hop == 0 {
                tcp_flows[m.flow].excess.min(link.admitted[k])
            } else {
                0.0
            };
        }
        match link.growth_share {
            Some(growth_share) => charge_overflow(
                overflow,
                admitted_sum,
                growth_share,
                &link.excess,
                &link.admitted,
                &mut link.overflowed,
                &mut link.overflow_random,
            ),
            None => {
                class_shares(&link.rtt_class, &link.rate, &mut link.class_rate);
                charge_overflow_by_phase(
                    overflow,
                    admitted_sum,
                    &link.excess,
                    &link.admitted,
                    &link.rtt_class,
                    &link.class_rate,
                    &mut link.overflowed,
                    &mut link.overflow_random,
                );
            }
        }
    } else if link.sync.is_none() {
        for k in 0..members {
            link.overflowed[k] = overflow * link.admitted[k] / admitted_sum;
        }
    } else {
        let ev = &mut link.event;
        let selected_sum: f64 = (0..members)
            .filter(|&k| ev.selected[k])
            .map(|k| link.admitted[k])
            .sum();
        let mut rest = overflow;
        if selected_sum >= overflow && selected_sum > 0.0 {
            for k in (0..members).filter(|&k| ev.selected[k]) {
                link.overflowed[k] = overflow * link.admitted[k] / selected_sum;
            }
            rest = 0.0;
        } else {
            for k in (0..members).filter(|&k| ev.selected[k]) {
                link.overflowed[k] = link.admitted[k];
                rest -= link.admitted[k];
            }
        }
        for j in 0..ev.order.len() {
            if rest <= 1e-12 * overflow {
                break;
            }
            let k = ev.order[j];
            if ev.selected[k] || link.admitted[k] <= 0.0 {
                continue;
            }
            let take = rest.min(link.admitted[k]);
            link.overflowed[k] = take;
            rest -= take;
            ev.selected[k] = true;
            let fi = link.members[k].flow;
            ring.signal(now, dt, flows[fi].rtt_s, fi, reductions);
        }
    }
    for k in 0..members {
        link.dropped[k] += link.overflowed[k];
    }
}

/// The `tcp` model's split of a step's `overflow` (docs/fluid.md, "Which packets a full queue
/// drops"): a full queue refuses the packets that arrive beyond the ACK clock (each member's
/// `excess`) as far as the arrivals keep the order of the departures they replace
/// (`growth_share`); the rest falls on the packets left, at random, in proportion to them.
/// `admitted_sum` is the sum of `admitted` (the caller has it).
/// Writes each member's drops to `overflowed` and their random part to `random`.
fn charge_overflow(
    overflow: f64,
    admitted_sum: f64,
    growth_share: f64,
    excess: &[f64],
    admitted: &[f64],
    overflowed: &mut [f64],
    random: &mut [f64],
) {
    let excess_sum: f64 = excess.iter().sum();
    let growth_total = growth_share * overflow.min(excess_sum);
    // Shared by the packets growth did not take, so no member loses more than it sent (the
    // overflow is at most the arrivals).
    let left = admitted_sum - growth_total;
    let random_total = overflow - growth_total;
    for k in 0..admitted.len() {
        let g = if excess_sum > 0.0 {
            growth_total * excess[k] / excess_sum
        } else {
            0.0
        };
        let r = if left > 0.0 {
            random_total * (admitted[k] - g) / left
        } else {
            0.0
        };
        overflowed[k] = g + r;
        random[k] = r;
    }
}

/// The `tcp` model's default split of a step's `overflow` (docs/fluid.md, "Which packets a full
/// queue drops"): the packets of the ACK clock whose replay keeps the order of the departures
/// (a member's packets, when the previous arrival comes from its own RTT class: probability
/// `class_share` of its class) take the slots the departures free; window growth (`excess`) and
/// the clocked packets out of that order arrive when no slot is free and are refused alike, each
/// packet equally; only an overflow larger than all of them falls on the rest. Writes each
/// member's drops to `overflowed` and the part not charged to its growth to `random`.
#[allow(clippy::too_many_arguments)]
fn charge_overflow_by_phase(
    overflow: f64,
    admitted_sum: f64,
    excess: &[f64],
    admitted: &[f64],
    rtt_class: &[usize],
    class_share: &[f64],
    overflowed: &mut [f64],
    random: &mut [f64],
) {
    let exposed =
        |k: usize| excess[k] + (admitted[k] - excess[k]) * (1.0 - class_share[rtt_class[k]]);
    let exposed_sum: f64 = (0..admitted.len()).map(exposed).sum();
    // Each exposed packet is refused with probability `p`; what they cannot absorb falls on the
    // packets in order, each with probability `q`.
    let p = if exposed_sum > 0.0 {
        (overflow / exposed_sum).min(1.0)
    } else {
        0.0
    };
    let in_order = admitted_sum - exposed_sum;
    let q = if overflow > exposed_sum && in_order > 0.0 {
        (overflow - exposed_sum) / in_order
    } else {
        0.0
    };
    for k in 0..admitted.len() {
        let e = exposed(k);
        let d = p * e + q * (admitted[k] - e);
        overflowed[k] = d;
        random[k] = d - p * excess[k];
    }
}

/// Each RTT class's share of the arrival rate at a link, into `classes` (indexed by class).
fn class_shares(rtt_class: &[usize], rate: &[f64], classes: &mut [f64]) {
    classes.fill(0.0);
    let mut total = 0.0;
    for (&c, &r) in rtt_class.iter().zip(rate) {
        classes[c] += r;
        total += r;
    }
    for c in classes.iter_mut() {
        *c = if total > 0.0 { *c / total } else { 1.0 };
    }
}

/// The chance that two members drawn at random (with replacement) share an RTT class: the sum
/// of the squared class shares, each member counted once.
fn same_class_share(rtt_class: &[usize]) -> f64 {
    if rtt_class.is_empty() {
        return 1.0;
    }
    let mut shares = vec![0.0; rtt_class.len()];
    class_shares(rtt_class, &vec![1.0; rtt_class.len()], &mut shares);
    shares.iter().map(|s| s * s).sum()
}

/// The `tcp` model's burst headroom on each link, in packets (0 under the other models): the
/// fluid queue of a link is held this far below its buffer, since bursts overflow a drop-tail
/// queue before its fluid average is full (docs/fluid.md, "Burst headroom and calibration").
pub fn burst_headroom_pkts(sc: &Scenario) -> Vec<f64> {
    (0..sc.links.len())
        .map(|li| {
            let rtt_class = link_rtt_classes(sc, li, &link_members(sc, li));
            link_headroom_pkts(sc, li, &rtt_class)
        })
        .collect()
}

/// The flows crossing link `li`, with their hop on it.
fn link_members(sc: &Scenario, li: usize) -> Vec<Member> {
    sc.flows
        .iter()
        .enumerate()
        .filter_map(|(flow, f)| {
            let hop = f.path.iter().position(|&p| p == li)?;
            let last = hop + 1 == f.path.len();
            Some(Member { flow, hop, last })
        })
        .collect()
}

/// The RTT classes of link `li`'s members: each class spans one packet time of the link from its
/// shortest base RTT.
fn link_rtt_classes(sc: &Scenario, li: usize, members: &[Member]) -> Vec<usize> {
    rtt_classes(
        members,
        |f| sc.flows[f].rtt_s,
        1.0 / sc.links[li].capacity_pps,
    )
}

/// Link `li`'s headroom, its members' RTT classes given.
fn link_headroom_pkts(sc: &Scenario, li: usize, rtt_class: &[usize]) -> f64 {
    let l = &sc.links[li];
    if l.buffer_pkts <= 0.0 {
        return 0.0; // a bufferless link has no queue to hold below its buffer
    }
    match sc.loss {
        LossModel::Tcp {
            burst_pkts,
            burst_per_sqrt_buffer,
            ..
        } => match (burst_pkts, burst_per_sqrt_buffer) {
            (Some(b), _) => b,
            (None, Some(c)) => c * l.buffer_pkts.sqrt(),
            // The default is for drop-tail, where bursts overflow the buffer; RED and XCP
            // routers drop or mark on their own averages.
            (None, None) if matches!(l.queue, crate::scenario::Queue::Droptail) => {
                default_burst_pkts(rtt_class.len(), l.buffer_pkts, same_class_share(rtt_class))
            }
            (None, None) => 0.0,
        },
        _ => 0.0,
    }
}

/// Each member's RTT class: in order of base RTT, a class takes the members within `tolerance_s`
/// of its shortest.
fn rtt_classes(members: &[Member], rtt_s: impl Fn(usize) -> f64, tolerance_s: f64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| rtt_s(members[a].flow).total_cmp(&rtt_s(members[b].flow)));
    let mut class = vec![0; members.len()];
    let (mut c, mut first_s) = (0, order.first().map_or(0.0, |&m| rtt_s(members[m].flow)));
    for &m in order.iter().skip(1) {
        // Measured from the class's shortest RTT, not the previous flow's: RTTs a little under
        // a packet time apart would otherwise chain into one class however far they spread.
        let r = rtt_s(members[m].flow);
        if r - first_s > tolerance_s {
            (c, first_s) = (c + 1, r);
        }
        class[m] = c;
    }
    class
}

fn close_event(link: &mut LinkState, log: &mut Vec<EventRecord>) {
    let index = link.index;
    let ev = &mut link.event;
    ev.active = false;
    if !ev.measured {
        return;
    }
    log.push(EventRecord {
        link: index,
        start_s: ev.start_s,
        candidates: ev.candidates as u32,
        signalled: ev.selected.iter().filter(|&&b| b).count() as u32,
        lost: ev.lost.iter().filter(|&&b| b).count() as u32,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn class_shares_are_the_rtt_classes_shares_of_the_arrivals() {
        let members: Vec<Member> = (0..4)
            .map(|flow| Member {
                flow,
                hop: 0,
                last: true,
            })
            .collect();
        // Two classes: 50 ms (within a 1 us tolerance of each other) and 150 ms.
        let rtts = [0.05, 0.150, 0.0500005, 0.15];
        let class = rtt_classes(&members, |f| rtts[f], 1e-6);
        assert_eq!(class[0], class[2]);
        assert_eq!(class[1], class[3]);
        assert_ne!(class[0], class[1]);
        let mut shares = [0.0; 4];
        class_shares(&class, &[1.0, 2.0, 3.0, 2.0], &mut shares);
        assert_eq!((shares[class[0]], shares[class[1]]), (0.5, 0.5));
        // No arrivals: every class counts as in order (growth alone is exposed).
        class_shares(&class, &[0.0; 4], &mut shares);
        assert!(shares.iter().all(|&s| s == 1.0));
        // One RTT for all: one class.
        let same = rtt_classes(&members, |_| 0.05, 1e-6);
        assert!(same.iter().all(|&c| c == 0));
    }

    #[test]
    fn out_of_order_packets_are_refused_like_growth() {
        // Member 0: 90 packets of the dominant RTT class (share 0.9), 1 of them growth; member
        // 1: 10 packets of a class of its own (share 0.1), no growth. Exposed: 1 + 89 * 0.1 =
        // 9.9 packets of member 0, 10 * 0.9 = 9 of member 1; an overflow of 3.78 refuses each
        // with probability 0.2.
        let (excess, admitted) = ([1.0, 0.0], [90.0, 10.0]);
        let charge = |overflow: f64, class: &[usize], share: &[f64]| {
            let (mut overflowed, mut random) = ([0.0; 2], [0.0; 2]);
            charge_overflow_by_phase(
                overflow,
                100.0,
                &excess,
                &admitted,
                class,
                share,
                &mut overflowed,
                &mut random,
            );
            (overflowed, random)
        };
        let (overflowed, random) = charge(3.78, &[0, 1], &[0.9, 0.1]);
        assert!((overflowed[0] - 1.98).abs() < 1e-12 && (overflowed[1] - 1.8).abs() < 1e-12);
        assert!((random[0] - 1.78).abs() < 1e-12 && (random[1] - 1.8).abs() < 1e-12);
        // One RTT class: only growth is exposed, as the phase effect of equal RTTs.
        assert_eq!(charge(0.5, &[0, 0], &[1.0]), ([0.5, 0.0], [0.0, 0.0]));
        // An overflow beyond every exposed packet falls on the rest in proportion, each member
        // losing at most what it sent, and all of it is charged.
        let (overflowed, _) = charge(50.0, &[0, 1], &[0.9, 0.1]);
        assert!((overflowed.iter().sum::<f64>() - 50.0).abs() < 1e-9);
        assert!(overflowed
            .iter()
            .zip(admitted)
            .all(|(&d, a)| d <= a + 1e-12));
    }

    #[test]
    fn no_member_loses_more_than_it_sent_and_the_overflow_is_all_charged() {
        // A slow-start burst: member 0 sends only excess (1 packet); member 1 sends 9 it
        // replaces. A burst overflows 8 of the 10 with half the drops charged to growth. Sharing
        // the random part in proportion to arrivals charged member 0 with 0.5 + 7.5 / 10 = 1.25
        // packets of the 1 it sent.
        let (excess, admitted) = ([1.0, 0.0], [1.0, 9.0]);
        let (mut overflowed, mut random) = ([0.0; 2], [0.0; 2]);
        charge_overflow(
            8.0,
            10.0,
            0.5,
            &excess,
            &admitted,
            &mut overflowed,
            &mut random,
        );
        for k in 0..2 {
            assert!(overflowed[k] <= admitted[k] + 1e-12, "{overflowed:?}");
            assert!(random[k] <= overflowed[k] && random[k] >= 0.0, "{random:?}");
        }
        assert!((overflowed.iter().sum::<f64>() - 8.0).abs() < 1e-12);
        // Growth first, when growth alone absorbs it.
        charge_overflow(
            0.5,
            10.0,
            1.0,
            &excess,
            &admitted,
            &mut overflowed,
            &mut random,
        );
        assert_eq!((overflowed, random), ([0.5, 0.0], [0.0, 0.0]));
    }
}
