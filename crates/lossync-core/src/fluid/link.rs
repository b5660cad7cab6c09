//! A link's state and its physics in a step: arrivals and early drops, the burst assembler,
//! departures and drops (signalled to the senders by the loss model).

use super::dual::DualState;
use super::event::EventState;
use super::flow::FlowState;
use super::link_threads::{ack_delay, ThreadedDepartures};
use super::obs::FluidAssembler;
use super::ring::LossRing;
use super::sync::SyncModule;
use super::tcp::TcpRings;
use crate::metrics::EventRecord;
use crate::queue::Discipline;

/// Linux's minimum retransmission timeout, as the packet engine's sender (`packet/sender.rs`).
const MIN_RTO_S: f64 = 0.2;

/// A step's arrivals at a link, summed over its members ([`LinkState::arrivals`]).
pub(super) struct Arrivals {
    pub(super) rate_sum: f64,
    pub(super) admitted_sum: f64,
    pub(super) early_sum: f64,
    pub(super) unmarked_early_sum: f64,
    pub(super) marked_sum: f64,
}

/// What a step's departures under `tcp` read besides the flows and their rings: every link's
/// queueing delay (ACKs on their way back cross them), the ACK paths, the rings' slot, the time,
/// and the share of each member's backlog that leaves ([classic, L] at a dual-queue link; one
/// queue: the first).
#[derive(Debug, Clone, Copy)]
pub(super) struct DepartureStep<'a> {
    pub(super) delays: &'a [f64],
    pub(super) ack_links: &'a [usize],
    pub(super) now: usize,
    pub(super) t: f64,
    pub(super) dt: f64,
    pub(super) shares: [f64; 2],
}

/// A flow's place on a link.
#[derive(Debug, Clone, Copy)]
pub(super) struct Member {
    pub(super) flow: usize,
    /// Which hop of the flow's path this link is.
    pub(super) hop: usize,
    /// This link is the last of the path: its departures are deliveries.
    pub(super) last: bool,
}

impl Member {
    /// Of its arrivals this step (`arrival_rate`), the packets marked CE upstream (`hop_marked`,
    /// as `hop_in`): none at its first hop.
    #[inline]
    pub(super) fn arrival_marked(&self, flows: &[FlowState], hop_marked: &[f64], dt: f64) -> f64 {
        if self.hop == 0 {
            0.0
        } else {
            hop_marked[flows[self.flow].hop_off + self.hop] * dt
        }
    }

    /// Its arrival rate this step: its sender's rate at its first hop, else what the previous
    /// hop let through (a step earlier).
    #[inline]
    pub(super) fn arrival_rate(&self, flows: &[FlowState], hop_in: &[f64]) -> f64 {
        let f = &flows[self.flow];
        if self.hop == 0 {
            f.x
        } else {
            hop_in[f.hop_off + self.hop]
        }
    }
}

/// Running totals of a link since t = 0; statistics are differences of two snapshots.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LinkAcc {
    pub(super) arrived: f64,
    pub(super) departed: f64,
    pub(super) dropped: f64,
    /// Of `dropped`, the discipline's early drops and the overflow (the rest: random loss).
    pub(super) dropped_early: f64,
    pub(super) dropped_overflow: f64,
    /// Fluid marked CE by the discipline (ECN-capable members only).
    pub(super) marked: f64,
    pub(super) q_integral: f64,
}

#[derive(Debug)]
pub(super) struct LinkState {
    pub(super) index: usize,
    pub(super) capacity_pps: f64,
    pub(super) buffer_pkts: f64,
    pub(super) loss_rate: f64,
    /// The queue discipline (drop-tail, RED, an XCP router); `buffer_pkts` is its buffer.
    pub(super) discipline: Box<dyn Discipline>,
    pub(super) members: Vec<Member>,
    pub(super) q: f64,
    /// Per member: its backlog (the queue is a fluid mixture: departures are shared in proportion
    /// to the backlog).
    pub(super) q_member: Vec<f64>,
    // Per-member scratch for one step.
    pub(super) rate: Vec<f64>,
    pub(super) admitted: Vec<f64>,
    /// Drops of this step (early + overflow), and the overflow part alone.
    pub(super) dropped: Vec<f64>,
    /// Per member: ECN-capable (its flow group's `ecn`), and its fluid marked CE this step
    /// (scratch). `any_ecn`: some member is.
    pub(super) ecn: Vec<bool>,
    pub(super) marked: Vec<f64>,
    pub(super) any_ecn: bool,
    /// Per member (`any_ecn` only): the part of its backlog that carries CE, marked here or
    /// upstream. Marks travel with the packets: a flow counts them as they are delivered, and a
    /// later hop marks only what arrives unmarked (RFC 3168 §5: CE stays CE).
    pub(super) q_marked: Vec<f64>,
    pub(super) overflowed: Vec<f64>,
    /// `tcp`: the part of `overflowed` that fell on arrivals at random (the rest on growth).
    pub(super) overflow_random: Vec<f64>,
    /// `tcp`: each member's excess this step (scratch).
    pub(super) excess: Vec<f64>,
    /// `tcp`: a fixed share of overflow drops charged to window growth (`None`: growth and the
    /// packets out of their class's order refused alike), each member's base-RTT class, the
    /// ACK-clocked members' arrival rate per RTT class (scratch), and each member's
    /// chance that a packet keeps its class's order (`charge_overflow_by_phase`'s `clocked`;
    /// scratch).
    pub(super) growth_share: Option<f64>,
    pub(super) rtt_class: Vec<usize>,
    /// `tcp`: per member, its law paces it (BBR): the paced members form one arrival class.
    pub(super) paced: Vec<bool>,
    pub(super) class_rate: Vec<f64>,
    pub(super) clocked: Vec<f64>,
    /// `tcp` loss model: members whose loss event began this step.
    pub(super) loss_event: Vec<bool>,
    /// An optical burst assembler at the link's ingress (`tcp` loss model), the drops of its
    /// lost bursts per member this step, and a segment's mean wait in it.
    pub(super) assembler: Option<FluidAssembler>,
    pub(super) burst_drop: Vec<f64>,
    pub(super) assembly_wait_s: f64,
    /// A dual-queue discipline's (DualPI2's) two queues, `tcp` loss model only (`fluid/dual.rs`).
    pub(super) dual: Option<DualState>,
    /// Scratch of the departures on several threads (`tcp`, a run with threads, a link whose
    /// members are every flow in order).
    pub(super) threaded: Option<ThreadedDepartures>,
    // Congestion event under way.
    pub(super) event: EventState,
    pub(super) sync: Option<SyncModule>,
    pub(super) acc: LinkAcc,
    pub(super) q_max: f64,
    /// The queue when the measurement window began (its accounting starts from it).
    pub(super) q_at_measuring: f64,
    pub(super) interval_departed: f64,
    /// `acc.q_integral` at the last sample of the series.
    pub(super) q_integral_at_record: f64,
}

impl LinkState {
    /// This step's arrivals per member (first hop: the sender's rate; later hops: the previous
    /// hop's departures), its early drops and, where the discipline marks (`p_mark` > 0), the
    /// CE marks of its ECN-capable members, which then lose only to the link's random loss.
    /// Returns the sums of rates, of admitted packets, of early drops (summed, not arrivals −
    /// admissions: that difference rounds below zero when nothing is dropped, and gave negative
    /// loss rates), of the early drops at probability `p_early` (those not spared by a mark) and
    /// of marks.
    /// `MARK`: `p_mark` > 0 (a constant, so the loop of a link that marks nothing carries none
    /// of the marking's work).
    #[inline]
    pub(super) fn arrivals<const MARK: bool>(
        &mut self,
        flows: &[FlowState],
        hop_in: &[f64],
        hop_marked: &[f64],
        dt: f64,
        p_early: f64,
        p_mark: f64,
    ) -> Arrivals {
        // Slices of one length, taken once: no bounds checks, no reloads of the vectors.
        let n = self.members.len();
        let rate = &mut self.rate[..n];
        let admitted = &mut self.admitted[..n];
        let dropped = &mut self.dropped[..n];
        let overflowed = &mut self.overflowed[..n];
        let marked = &mut self.marked[..];
        let ecn = &self.ecn[..];
        let mut arriving_sum = 0.0;
        let mut admitted_sum = 0.0;
        let mut early_sum = 0.0;
        let mut unmarked_early_sum = 0.0;
        let mut marked_sum = 0.0;
        for (k, m) in self.members.iter().enumerate() {
            let r = m.arrival_rate(flows, hop_in);
            let arriving = r * dt;
            let early = if MARK && ecn[k] {
                // RFC 3168 §5: marked instead of dropped; the wire's random loss still drops.
                // Packets that arrive CE stay so: the mark falls on the others.
                let lost = arriving * self.loss_rate;
                let carried = m.arrival_marked(flows, hop_marked, dt);
                marked[k] = (arriving - lost - (carried - carried * self.loss_rate)) * p_mark;
                marked_sum += marked[k];
                lost
            } else {
                if MARK {
                    marked[k] = 0.0;
                    unmarked_early_sum += arriving * p_early;
                }
                arriving * p_early
            };
            rate[k] = r;
            admitted[k] = arriving - early;
            dropped[k] = early;
            overflowed[k] = 0.0;
            self.overflow_random[k] = 0.0;
            arriving_sum += r;
            admitted_sum += arriving - early;
            early_sum += early;
        }
        Arrivals {
            rate_sum: arriving_sum,
            admitted_sum,
            early_sum,
            unmarked_early_sum: if MARK { unmarked_early_sum } else { early_sum },
            marked_sum,
        }
    }

    /// Departures (a `share` of each member's backlog) and drops, `sync` and `proportional`:
    /// continuous loss indications, every early drop, and in `proportional` mode every overflow
    /// drop, is one loss signal to its sender (docs/model.md §1.2).
    #[inline]
    pub(super) fn departures(
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
    pub(super) fn assemble(
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
                    tcp.signal_event(now, delay, m.flow);
                }
            }
        }
        lost
    }

    /// Departures and drops under `tcp`: deliveries send ACKs back, drops are detected one RTT
    /// later, and a flow's drops make a loss event when they reach its threshold. Returns
    /// whether some member's loss event began (marked in `loss_event`). `ECN`: some member is
    /// ECN-capable (`any_ecn`), its marks then signalled too. Each member's backlog leaves in
    /// the proportion `shares[0]`; `DUAL`: a dual-queue link's, `shares` [classic, L] by its
    /// queue.
    #[inline]
    pub(super) fn departures_tcp<const ECN: bool, const DUAL: bool>(
        &mut self,
        flows: &mut [FlowState],
        hop_in: &mut [f64],
        hop_marked: &mut [f64],
        tcp: &mut TcpRings,
        step: DepartureStep,
    ) -> bool {
        let DepartureStep {
            delays,
            ack_links,
            now,
            t,
            dt,
            shares,
        } = step;
        let n = self.members.len();
        let l4s = self.dual.as_ref().map_or(&[][..], |d| &d.l4s[..]);
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
            let share = if DUAL {
                shares[l4s[k] as usize]
            } else {
                shares[0]
            };
            let dep = content * share;
            q_member[k] = content - dep;
            let marked_dep = if ECN && self.ecn[k] {
                let carried = m.arrival_marked(flows, hop_marked, dt);
                let arrived = [rate[k] * dt, admitted[k], overflowed[k]];
                let marked_here = self.marked[k];
                marked_departures(
                    &mut self.q_marked[k],
                    arrived,
                    carried,
                    marked_here,
                    content,
                    share,
                )
            } else {
                0.0
            };
            let f = &mut flows[m.flow];
            if m.last {
                f.acc.delivered += dep;
                f.acc.marked += marked_dep;
                // ACKs return after the propagation (all of it on the way back) and the queues
                // they cross.
                let delay = ack_delay(f, &tcp.flows[m.flow], delays, ack_links, tcp.due.slots, dt);
                tcp.due.at(now, delay, m.flow).acked += dep;
            } else {
                hop_in[f.hop_off + m.hop + 1] = dep / dt;
                if ECN && self.ecn[k] {
                    hop_marked[f.hop_off + m.hop + 1] = marked_dep / dt;
                }
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
                let (random, burst) = (overflow_random[k], burst_drop[k]);
                if tf.count_drops(t, drops, overflowed[k], random, burst, tcp.event_threshold) {
                    tf.draw_thresholds(&mut tcp.rng, tcp.event_threshold);
                    // The loss is detected one RTT after the drop, and the recovery it opens ends
                    // when its retransmissions are acknowledged, a further RTT on: losses
                    // detected before then, of packets sent before the cut or during recovery,
                    // belong to this event (RFC 6675 §5, as the packet engine's sender).
                    tf.loss_until_s = t + 2.0 * f.rtt_s;
                    tcp.signal_event(now, delay, m.flow);
                    loss_event[k] = true;
                    any_loss_event = true;
                }
            }
            if ECN && self.marked[k] > 0.0 {
                mark(&mut self.marked[k], f.rtt_s, tcp, now, t, dt, m.flow);
            }
        }
        any_loss_event
    }
}

/// The CE-marked part of a member's departures this step (`share` of its backlog `content`): its
/// marked backlog `q_marked`, plus what it admitted marked (`carried` from upstream as they
/// arrived, and `marked_here`), less its part of the overflow: marks ride on the packets a step
/// admits (`arrived`: arriving, admitted, overflowed) evenly.
#[inline]
fn marked_departures(
    q_marked: &mut f64,
    arrived: [f64; 3],
    carried: f64,
    marked_here: f64,
    content: f64,
    share: f64,
) -> f64 {
    let [arriving, admitted, overflowed] = arrived;
    let mut marked = *q_marked;
    if admitted > 0.0 {
        let carried_admitted = if carried > 0.0 {
            carried * admitted / arriving
        } else {
            0.0
        };
        let incoming = carried_admitted + marked_here;
        if incoming > 0.0 {
            marked += incoming * ((admitted - overflowed) / admitted);
        }
    }
    if marked == 0.0 {
        return 0.0; // nothing of this member marked yet
    }
    let marked = marked.min(content);
    let dep = marked * share;
    *q_marked = marked - dep;
    dep
}

/// `marks` of flow `fi`'s fluid (RTT `rtt_s`) were marked CE this step (`tcp`): their echo
/// reaches the sender one RTT later (the receiver echoes every mark: RFC 3168 §6.1.3, RFC 8257
/// §3.2), and they make an ECN event, one window reduction, when they reach the flow's threshold
/// outside a window already answered. The window so answered ends one RTT on, when the data sent at the
/// reduction are acknowledged (RFC 3168 §6.1.2, the packet engine's `cwr_point`); unlike a loss,
/// no recovery follows. Marks are not congestion events (the packet engine clusters drops only).
#[inline(never)]
fn mark(marks: &mut f64, rtt_s: f64, tcp: &mut TcpRings, now: usize, t: f64, dt: f64, fi: usize) {
    let marks = std::mem::take(marks);
    let delay = tcp.ecn.delay(rtt_s, dt);
    tcp.ecn.at(now, delay, fi).marked += marks;
    let tf = &mut tcp.flows[fi];
    if t >= tf.loss_until_s {
        tf.marks += marks;
        if tf.marks >= tf.mark_threshold {
            tf.draw_thresholds(&mut tcp.rng, tcp.event_threshold);
            tf.loss_until_s = t + rtt_s;
            tcp.ecn.at(now, delay, fi).echoes += 1.0;
        }
    }
}
