//! The `tcp` model's burst headroom per link, and the RTT classes of a link's flows (the headroom
//! and the split of a full queue's overflow depend on them).

use super::link::Member;
use crate::scenario::{LossModel, Scenario};

// The default headroom: fluid physics (the packet engine has real bursts), so it lives here,
// not in the scenario's schema.

/// Half a packet per flow whose bursts can coincide with others': the median headroom
/// `lossync calibrate` fitted to packet runs at 100 Mb/s with RTTs spread 1:3 (docs/validation/
/// calibration.md), applied to every cell of the fidelity matrix (see [`default_burst_pkts`]).
pub const BURST_PKTS_PER_FLOW: f64 = 0.5;
/// With flows of several RTT classes, the headroom grows by this many times the square root of
/// the buffer: their ACK clocks replay the departures with different lags, so within a round trip
/// the queue swings like a sum of independent trains, by about the square root of what it holds.
/// Empirical: `lossync calibrate` fitted 0.7-2.7 √B to the small-buffer cells with RTTs spread
/// 1:3 (docs/validation/calibration.md); 1.0 over the fidelity matrix against the packet engine
/// with send jitter (docs/fluid.md, "Burst headroom and calibration").
pub const BURST_SQRT_BUFFER_PER_MIX: f64 = 1.0;
/// The default headroom never takes more than this fraction of a buffer.
pub const BURST_BUFFER_CAP: f64 = 0.5;

/// The `tcp` model's default burst headroom at a link with `flows` flows and `buffer_pkts`, where
/// two of its flows drawn at random share an RTT class with probability `same_class` (g).
///
/// Flows of one RTT replay the departures in order, so each window comes back as a block of its
/// own: one flow's growth burst meets the queue at a time. The flows of other classes are shifted
/// against it and their bursts coincide with its own: `n (1 − g)` of them (g counts a flow with
/// itself, so with `n` RTTs all different that is the `n − 1` others plus one). So half a packet
/// for `1 + n (1 − g)` flows (`n` when all RTTs differ, 1 when all are equal), plus the mix's
/// swings, `(1 − g) √B`. (Half a packet for every flow made 10 HighSpeed flows of one RTT at
/// 100 Mb/s, 2% BDP, lose at 3.3 of 8.3 packets: utilization 0.53 against the packet engine's
/// 0.84.) A link no flow crosses has no bursts, so none.
pub fn default_burst_pkts(flows: usize, buffer_pkts: f64, same_class: f64) -> f64 {
    if flows == 0 {
        return 0.0;
    }
    let mixed = (1.0 - same_class).clamp(0.0, 1.0);
    let coinciding = (1.0 + flows as f64 * mixed).min(flows as f64);
    let swings = BURST_SQRT_BUFFER_PER_MIX * mixed * buffer_pkts.max(0.0).sqrt();
    (BURST_PKTS_PER_FLOW * coinciding + swings).min(BURST_BUFFER_CAP * buffer_pkts)
}

/// Each RTT class's share of the arrival rate at a link, into `classes` (indexed by class).
pub(super) fn class_shares(rtt_class: &[usize], rate: &[f64], classes: &mut [f64]) {
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
pub(super) fn link_members(sc: &Scenario, li: usize) -> Vec<Member> {
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
pub(super) fn link_rtt_classes(sc: &Scenario, li: usize, members: &[Member]) -> Vec<usize> {
    rtt_classes(
        members,
        |f| sc.flows[f].rtt_s,
        1.0 / sc.links[li].capacity_pps,
    )
}

/// Link `li`'s headroom, its members' RTT classes given.
pub(super) fn link_headroom_pkts(sc: &Scenario, li: usize, rtt_class: &[usize]) -> f64 {
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
            // The default is for drop-tail, where bursts overflow the buffer; the other
            // disciplines signal by their own rules (RED's average, PIE's delay, the step's
            // instantaneous queue, XCP's feedback) before the buffer is full.
            (None, None) if matches!(l.queue, crate::scenario::Queue::Droptail(_)) => {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
