//! The `tcp` loss model's state (its delay lines and each flow's ACK clock and loss-event
//! thresholds) and its split of a full queue's overflow among the packets that arrive.

use super::flow::FlowState;
use super::rate;
use super::ring::{round_to_usize, LossRing};
use crate::cc::EcnUse;
use crate::rng::Rng;
use crate::scenario::{LossModel, Scenario};

/// What reaches a `tcp` sender at one step: ACKs and losses detected (one entry, so a sender
/// reads one place instead of two rings). Its loss events are a ring of their own, of counts.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct TcpDue {
    pub(super) acked: f64,
    pub(super) lost: f64,
}

/// What reaches an ECN-capable `tcp` sender at one step: the CE marks its ACKs echo (a scalable
/// law counts them, RFC 8257 §3.3) and the echoes it reduces its window for (at most one per
/// window of data, RFC 3168 §6.1.2). A ring of its own, allocated only when some flow is
/// ECN-capable, so the other runs keep their memory per flow.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct EcnDue {
    pub(super) marked: f64,
    pub(super) echoes: f64,
}

/// The `tcp` loss model's delay lines, shaped like the loss ring; empty (nothing allocated) under
/// the other models, so the step reaches them without an `Option` check.
#[derive(Debug)]
pub(super) struct TcpRings {
    /// ACKs on their way back (they clock the senders) and dropped packets on their way to
    /// detection (they leave the data in flight when the sender learns of them).
    pub(super) due: LossRing<TcpDue>,
    /// Loss events on their way to the senders, counted: a byte per slot and flow, where an
    /// `f64` in `TcpDue` took a third of the model's memory. A flow gets at most one per link of
    /// its path per step, far below 255.
    pub(super) events: LossRing<u8>,
    /// CE marks and echoes on their way to the senders (no flows, nothing allocated, when no flow
    /// is ECN-capable).
    pub(super) ecn: LossRing<EcnDue>,
    /// Draws of the loss thresholds (stream 4000).
    pub(super) rng: Rng,
    /// The scale of the overflow thresholds (`loss.event_threshold`, 1 unless calibrated).
    pub(super) event_threshold: f64,
    /// Per flow (apart from `FlowState`, so the other loss models' loops stay as lean as before).
    pub(super) flows: Vec<TcpFlow>,
}

/// A flow's state under the `tcp` loss model.
#[derive(Debug, Clone, Default)]
pub(super) struct TcpFlow {
    /// Packets sent and neither acknowledged nor detected lost yet.
    pub(super) inflight: f64,
    /// Drops before this time belong to the loss event under way (the data sent before the
    /// sender reacts, and during the recovery that follows).
    pub(super) loss_until_s: f64,
    /// The window does not grow before this time (fast recovery after a cut).
    pub(super) recovery_until_s: f64,
    /// A retransmission timeout fires at this time (`f64::INFINITY`: none pending); the sender
    /// sends nothing until then (a lost burst took its whole window, docs/fluid.md).
    pub(super) rto_at_s: f64,
    /// What it sent this step beyond replacing the packets acknowledged (its window growth, slow
    /// start's doubling): the packets a full drop-tail queue refuses.
    pub(super) excess: f64,
    /// A paced sender's ratios (Linux's pacing rate = ratio · cwnd / srtt).
    pub(super) pacing: Option<crate::scenario::Pacing>,
    /// The ACK ring's delay when its ACKs cross no queue (its base RTT, fixed); 0: they do, the
    /// delay is computed per step.
    pub(super) ack_delay: usize,
    /// Its data's mean wait in burst assemblers on its path (it delays the ACKs).
    pub(super) assembly_wait_s: f64,
    /// Expected drops since its last loss event, of its growth packets (at a full queue) and of
    /// packets picked at random (early drops, and overflow drops beyond the growth share), and
    /// the thresholds at which they make one (see `TcpFlow::draw_thresholds`).
    pub(super) overflow_drops: f64,
    pub(super) early_drops: f64,
    pub(super) overflow_threshold: f64,
    pub(super) early_threshold: f64,
    /// A model-based law's (BBR's) delivery-rate samples (`None` for the others).
    pub(super) rate: Option<Box<rate::RateClock>>,
    /// Its law sets its own pacing rate (BBR): asked once per step only then.
    pub(super) law_paced: bool,
    /// ECN-capable (the flow group's `ecn`), and whether it answers as a scalable law
    /// (`Scenario::ecn_use`).
    pub(super) ecn: bool,
    pub(super) scalable: bool,
    /// Its window holds (no growth) for the round trip after an ECN reduction, as the packet
    /// engine's sender (Linux's CWR state): every ECN law but an L4S one.
    pub(super) hold_after_echo: bool,
    /// Expected CE marks of its packets since its last loss or ECN event, and the threshold at
    /// which they make an echo (marks fall on packets at random: exponential, as early drops).
    pub(super) marks: f64,
    pub(super) mark_threshold: f64,
}

impl TcpRings {
    /// A loss event of `flow`, to reach it `delay` steps after the slot `now` (the engine's loss
    /// ring stays empty under `tcp`).
    #[inline]
    pub(super) fn signal_event(&mut self, now: usize, delay: usize, flow: usize) {
        let count = self.events.at(now, delay, flow);
        *count = count.saturating_add(1);
    }

    /// The `tcp` model's rings and per-flow state for `sc`'s flows (`states`), empty under the
    /// other models; rings of `ring_len` steps of `dt`.
    pub(super) fn new(
        sc: &Scenario,
        states: &[FlowState],
        tcp_model: bool,
        dt: f64,
        ring_len: usize,
    ) -> Self {
        let n = if tcp_model { sc.flows.len() } else { 0 };
        let ecn_flows = if sc.flows[..n].iter().any(|f| f.ecn) {
            n
        } else {
            0
        };
        TcpRings {
            due: LossRing::new(ring_len, n),
            events: LossRing::new(ring_len, n),
            ecn: LossRing::new(ring_len, ecn_flows),
            rng: Rng::new(sc.run.seed, 4000),
            event_threshold: match sc.loss {
                LossModel::Tcp {
                    event_threshold, ..
                } => event_threshold,
                _ => 1.0,
            },
            flows: sc.flows[..n]
                .iter()
                .zip(states)
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
                    ecn: f.ecn,
                    scalable: matches!(sc.ecn_use(f), EcnUse::Scalable { .. }),
                    hold_after_echo: !matches!(sc.ecn_use(f), EcnUse::Scalable { l4s: true }),
                    ..TcpFlow::default()
                })
                .collect(),
        }
    }
}

impl TcpFlow {
    /// Counts a step's drops towards the flow's next loss event, outside the event under way
    /// (before `loss_until_s`); returns whether they reach a threshold, so that an event
    /// begins. `overflowed`: the drops at a full queue, `random` the part of them that fell at
    /// random, `burst`: a lost burst's (the assembler draws that event), `scale`:
    /// `loss.event_threshold`.
    #[inline]
    pub(super) fn count_drops(
        &mut self,
        t: f64,
        drops: f64,
        overflowed: f64,
        random: f64,
        burst: f64,
        scale: f64,
    ) -> bool {
        if t < self.loss_until_s {
            return false;
        }
        // Drops of growth packets, and drops of packets picked at random.
        self.overflow_drops += overflowed - random;
        self.early_drops += drops - overflowed - burst + random / scale;
        self.overflow_drops >= self.overflow_threshold || self.early_drops >= self.early_threshold
    }

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
    pub(super) fn draw_thresholds(&mut self, rng: &mut Rng, scale: f64) {
        self.overflow_drops = 0.0;
        self.early_drops = 0.0;
        self.overflow_threshold = scale * rng.uniform();
        self.early_threshold = -(1.0 - rng.uniform()).ln();
        if self.ecn {
            // Drawn only for ECN-capable flows: the other runs keep their sequence of draws.
            self.marks = 0.0;
            self.mark_threshold = -(1.0 - rng.uniform()).ln();
        }
    }
}

/// The `tcp` model's split of a step's `overflow` (docs/fluid.md, "Which packets a full queue
/// drops"): a full queue refuses the packets that arrive beyond the ACK clock (each member's
/// `excess`) as far as the arrivals keep the order of the departures they replace
/// (`growth_share`); the rest falls on the packets left, at random, in proportion to them.
/// `admitted_sum` is the sum of `admitted` (the caller has it).
/// Writes each member's drops to `overflowed` and their random part to `random`.
pub(super) fn charge_overflow(
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
/// (a member's packets with probability `clocked[k]`: the share of the arrivals of its class,
/// whose packet then came just before; a class is an RTT class of ACK-clocked flows, or all
/// the flows their laws pace) take the slots the departures free; window growth
/// (`excess`) and the packets out of that order arrive when no slot is free and are refused
/// alike, each packet equally; only an overflow larger than all of them falls on the rest.
/// Writes each member's drops to `overflowed` and the part not charged to its growth to
/// `random`.
pub(super) fn charge_overflow_by_phase(
    overflow: f64,
    admitted_sum: f64,
    excess: &[f64],
    admitted: &[f64],
    clocked: &[f64],
    overflowed: &mut [f64],
    random: &mut [f64],
) {
    let exposed = |k: usize| excess[k] + (admitted[k] - excess[k]) * (1.0 - clocked[k]);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_packets_are_refused_like_growth() {
        // Member 0: 90 packets of the dominant RTT class (share 0.9), 1 of them growth; member
        // 1: 10 packets of a class of its own (share 0.1), no growth. Exposed: 1 + 89 * 0.1 =
        // 9.9 packets of member 0, 10 * 0.9 = 9 of member 1; an overflow of 3.78 refuses each
        // with probability 0.2.
        let (excess, admitted) = ([1.0, 0.0], [90.0, 10.0]);
        let charge = |overflow: f64, clocked: &[f64]| {
            let (mut overflowed, mut random) = ([0.0; 2], [0.0; 2]);
            charge_overflow_by_phase(
                overflow,
                100.0,
                &excess,
                &admitted,
                clocked,
                &mut overflowed,
                &mut random,
            );
            (overflowed, random)
        };
        let (overflowed, random) = charge(3.78, &[0.9, 0.1]);
        assert!((overflowed[0] - 1.98).abs() < 1e-12 && (overflowed[1] - 1.8).abs() < 1e-12);
        assert!((random[0] - 1.78).abs() < 1e-12 && (random[1] - 1.8).abs() < 1e-12);
        // One RTT class: only growth is exposed, as the phase effect of equal RTTs.
        assert_eq!(charge(0.5, &[1.0, 1.0]), ([0.5, 0.0], [0.0, 0.0]));
        // No packet in order: the overflow falls on every packet alike, in proportion to the
        // arrivals (90 : 10).
        let (overflowed, _) = charge(5.0, &[0.0, 0.0]);
        assert!((overflowed[0] - 4.5).abs() < 1e-12 && (overflowed[1] - 0.5).abs() < 1e-12);
        // An overflow beyond every exposed packet falls on the rest in proportion, each member
        // losing at most what it sent, and all of it is charged.
        let (overflowed, _) = charge(50.0, &[0.9, 0.1]);
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
