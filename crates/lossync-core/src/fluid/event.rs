//! Congestion events on a link (opened and closed, the `sync` module's choice of S_k) and the
//! assignment of a step's overflow to the flows.

use super::flow::FlowState;
use super::link::LinkState;
use super::ring::LossRing;
use super::tcp::{charge_overflow, charge_overflow_by_phase};
use crate::metrics::EventRecord;

#[derive(Debug)]
pub(super) struct EventState {
    pub(super) active: bool,
    pub(super) start_s: f64,
    pub(super) measured: bool,
    /// A fixed hold-off from the scenario; `None`: the largest current RTT among the flows
    /// signalled at the event, so every one of them has reacted before the next event starts.
    pub(super) holdoff_fixed: Option<f64>,
    pub(super) holdoff_s: f64,
    /// `tcp` loss model: the event is a cluster of drops, as the packet engine's metric groups
    /// them: it ends once no drop has come for `gap_s` (the mean base RTT of the link's flows).
    pub(super) gap_s: f64,
    pub(super) last_drop_s: f64,
    pub(super) candidates: usize,
    /// Priority order of this event's candidates (S_k is a prefix).
    pub(super) order: Vec<usize>,
    pub(super) window: Vec<f64>,
    pub(super) active_member: Vec<bool>,
    pub(super) selected: Vec<bool>,
    pub(super) lost: Vec<bool>,
}

/// A congestion event begins on `link` at time `t`. In `sync` mode the module picks m_k and S_k
/// now, and each selected flow is signalled once, one RTT later (docs/model.md §2.2 eqs. 5–6, §2.3).
#[allow(clippy::too_many_arguments)]
pub(super) fn open_event(
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
pub(super) fn assign_overflow(
    link: &mut LinkState,
    flows: &[FlowState],
    ring: &mut LossRing,
    now: usize,
    dt: f64,
    overflow: f64,
    admitted_sum: f64,
    reductions: f64,
    tcp: bool,
) {
    let members = link.members.len();
    if tcp {
        // Each member's excess is in `link.excess` (`LinkState::gather_excess`).
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
                // The arrival order a packet may replay is its RTT class's when its flow is
                // ACK-clocked; the flows their laws pace form one class of their own, whatever
                // their RTTs (their timers, not their ACKs, set when they send).
                link.class_rate.fill(0.0);
                let (mut total, mut paced) = (0.0, 0.0);
                for k in 0..members {
                    total += link.rate[k];
                    if link.paced[k] {
                        paced += link.rate[k];
                    } else {
                        link.class_rate[link.rtt_class[k]] += link.rate[k];
                    }
                }
                for k in 0..members {
                    let class = if link.paced[k] {
                        paced
                    } else {
                        link.class_rate[link.rtt_class[k]]
                    };
                    link.clocked[k] = if total > 0.0 { class / total } else { 1.0 };
                }
                charge_overflow_by_phase(
                    overflow,
                    admitted_sum,
                    &link.excess,
                    &link.admitted,
                    &link.clocked,
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

pub(super) fn close_event(link: &mut LinkState, log: &mut Vec<EventRecord>) {
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
