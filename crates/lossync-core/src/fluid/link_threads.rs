//! A link's per-member loops on the run's threads (`fluid/workers.rs`): the same arithmetic as
//! [`LinkState::arrivals`] and [`LinkState::departures_tcp`], split so that what each member
//! computes from its own state (its departures, accounts, delay-line entries and loss-event
//! test) runs in chunks at once, and what must keep an order (sums over members, the loss
//! events' threshold draws from one stream) runs after it on one thread, in member order. The
//! results are bit-identical to the one-thread loops.

use super::flow::FlowState;
use super::link::{Arrivals, DepartureStep, LinkState, Member};
use super::ring::delay_steps;
use super::tcp::{TcpFlow, TcpRings};
use super::workers::{Workers, MIN_PARALLEL_FLOWS};
use rayon::prelude::*;

/// Per member, what the threads' pass of the departures leaves to the pass in order: departures
/// to the next hop and its `hop_in` slot (members not at their last hop). Present only at a link
/// whose members are every flow in order (a dumbbell's bottleneck), so a chunk of members is the
/// same chunk of flows, and of the rings' columns.
#[derive(Debug)]
pub(super) struct ThreadedDepartures {
    out: Vec<f64>,
    to: Vec<usize>,
    /// Every member is at its last hop (no departures to hand on).
    all_last: bool,
}

impl ThreadedDepartures {
    /// For a link of `members` in a run of `flows` flows, if every flow is a member, in order.
    pub(super) fn new(members: &[Member], flows: usize) -> Option<Self> {
        let n = members.len();
        (n == flows && members.iter().enumerate().all(|(k, m)| m.flow == k)).then(|| {
            ThreadedDepartures {
                out: vec![0.0; n],
                to: vec![0; n],
                all_last: members.iter().all(|m| m.last),
            }
        })
    }
}

impl LinkState {
    /// [`LinkState::arrivals`] without marks, on `w`'s threads; the sums are taken after, in
    /// member order.
    pub(super) fn arrivals_threaded(
        &mut self,
        w: &Workers,
        flows: &[FlowState],
        hop_in: &[f64],
        dt: f64,
        p_early: f64,
    ) -> Arrivals {
        let n = self.members.len();
        let c = w.chunk(n);
        self.members
            .par_chunks(c)
            .zip(self.rate[..n].par_chunks_mut(c))
            .zip(self.admitted[..n].par_chunks_mut(c))
            .zip(self.dropped[..n].par_chunks_mut(c))
            .zip(self.overflowed[..n].par_chunks_mut(c))
            .zip(self.overflow_random[..n].par_chunks_mut(c))
            .for_each(
                |(((((ms, rate), admitted), dropped), overflowed), random)| {
                    for (k, m) in ms.iter().enumerate() {
                        let r = m.arrival_rate(flows, hop_in);
                        let arriving = r * dt;
                        let early = arriving * p_early;
                        rate[k] = r;
                        admitted[k] = arriving - early;
                        dropped[k] = early;
                        overflowed[k] = 0.0;
                        random[k] = 0.0;
                    }
                },
            );
        let (mut rate_sum, mut admitted_sum, mut early_sum) = (0.0, 0.0, 0.0);
        for k in 0..n {
            rate_sum += self.rate[k];
            admitted_sum += self.admitted[k];
            early_sum += self.dropped[k];
        }
        Arrivals {
            rate_sum,
            admitted_sum,
            early_sum,
            unmarked_early_sum: early_sum,
            marked_sum: 0.0,
        }
    }

    /// `tcp`: each member's excess this step (`excess`), what its sender sent beyond the
    /// packets it replaces, at most what the link admitted of it (first hop only: later hops
    /// see the previous hop's departures); on `w`'s threads when the run has them.
    pub(super) fn gather_excess(&mut self, tcp_flows: &[TcpFlow], w: Option<&Workers>) {
        let n = self.members.len();
        let gather = |ms: &[Member], admitted: &[f64], excess: &mut [f64]| {
            for (k, m) in ms.iter().enumerate() {
                excess[k] = if m.hop == 0 {
                    tcp_flows[m.flow].excess.min(admitted[k])
                } else {
                    0.0
                };
            }
        };
        match w.filter(|_| n >= MIN_PARALLEL_FLOWS) {
            Some(w) => {
                let c = w.chunk(n);
                self.members
                    .par_chunks(c)
                    .zip(self.admitted[..n].par_chunks(c))
                    .zip(self.excess[..n].par_chunks_mut(c))
                    .for_each(|((ms, a), e)| gather(ms, a, e));
            }
            None => gather(&self.members, &self.admitted[..n], &mut self.excess[..n]),
        }
    }

    /// [`LinkState::departures_tcp`] without ECN or a dual queue, on `w`'s threads, at a link with
    /// [`ThreadedDepartures`] (its members are the flows, in order). Each member's departures,
    /// accounts and loss-event test run in chunks; then, in member order, the rings' entries
    /// and the loss events' threshold draws.
    pub(super) fn departures_threaded(
        &mut self,
        w: &Workers,
        flows: &mut [FlowState],
        hop_in: &mut [f64],
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
        let c = w.chunk(n);
        let share = shares[0];
        let (slots, event_threshold) = (tcp.due.slots, tcp.event_threshold);
        let td = self
            .threaded
            .as_mut()
            .expect("departures_threaded needs ThreadedDepartures");
        let own = (
            self.members.par_chunks(c),
            flows.par_chunks_mut(c),
            tcp.flows.par_chunks_mut(c),
            tcp.due.columns(c),
            self.q_member[..n].par_chunks_mut(c),
            self.loss_event[..n].par_chunks_mut(c),
            td.out.par_chunks_mut(c),
            td.to.par_chunks_mut(c),
        );
        let read = (
            self.admitted[..n].par_chunks(c),
            self.overflowed[..n].par_chunks(c),
            self.rate[..n].par_chunks(c),
            self.dropped[..n].par_chunks(c),
            self.overflow_random[..n].par_chunks(c),
            self.burst_drop[..n].par_chunks(c),
        );
        let any_loss_event = own
            .into_par_iter()
            .zip(read.into_par_iter())
            .enumerate()
            .map(|(j, ((ms, fs, tfs, mut due, q, ev, out, to), read))| {
                let (admitted, overflowed, rate, dropped, random, burst_drop) = read;
                let mut any = false;
                for (k, m) in ms.iter().enumerate() {
                    let fi = j * c + k; // member k of this chunk is this flow
                    let content = q[k] + admitted[k] - overflowed[k];
                    let dep = content * share;
                    q[k] = content - dep;
                    let (f, tf) = (&mut fs[k], &mut tfs[k]);
                    if m.last {
                        f.acc.delivered += dep;
                        let delay = ack_delay(f, tf, delays, ack_links, slots, dt);
                        due.at(now, delay, fi).acked += dep;
                    } else {
                        out[k] = dep;
                        to[k] = f.hop_off + m.hop + 1;
                    }
                    if m.hop == 0 {
                        f.acc.sent += rate[k] * dt;
                    }
                    let drops = dropped[k];
                    if drops > 0.0 {
                        f.acc.dropped += drops;
                        due.at(now, delay_steps(slots, f.rtt_s, dt), fi).lost += drops;
                        let (o, r, b) = (overflowed[k], random[k], burst_drop[k]);
                        ev[k] = tf.count_drops(t, drops, o, r, b, event_threshold);
                        any |= ev[k];
                    }
                }
                any
            })
            .reduce(|| false, |a, b| a || b);
        if !td.all_last {
            for (k, m) in self.members.iter().enumerate() {
                if !m.last {
                    hop_in[td.to[k]] = td.out[k] / dt;
                }
            }
        }
        if any_loss_event {
            // The loss events' threshold draws, in member order (one stream).
            for (k, &event) in self.loss_event[..n].iter().enumerate() {
                if event {
                    let (f, tf) = (&flows[k], &mut tcp.flows[k]);
                    tf.draw_thresholds(&mut tcp.rng, event_threshold);
                    tf.loss_until_s = t + 2.0 * f.rtt_s;
                    let delay = delay_steps(slots, f.rtt_s, dt);
                    tcp.signal_event(now, delay, k);
                }
            }
        }
        any_loss_event
    }
}

/// The steps a flow's ACKs take to return: its fixed delay, or, where they cross queues or it
/// waits in burst assemblers, the propagation plus those waits now.
#[inline]
pub(super) fn ack_delay(
    f: &FlowState,
    tf: &TcpFlow,
    delays: &[f64],
    ack_links: &[usize],
    slots: usize,
    dt: f64,
) -> usize {
    if tf.ack_delay > 0 {
        return tf.ack_delay;
    }
    let mut back = f.base_rtt_s + tf.assembly_wait_s;
    for &l in &ack_links[f.ack_off..f.ack_off + f.ack_hops] {
        back += delays[l];
    }
    delay_steps(slots, back, dt)
}
