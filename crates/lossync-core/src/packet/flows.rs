//! The engine's connections at their end points: a flow's state (sender, receiver, timers, its
//! dynamic slot), sending with pacing and the RTO timer, delivery and ACKs, and a dynamic flow's
//! life in its slot (arrival, completion, release).

use super::event::{ps_from_s, Event, SimTime};
use super::receiver::Receiver;
use super::route::{Hop, Pkt};
use super::sender::{Ack, Sender};
use super::PacketEngine;
use crate::cc::LAW_STREAM;
use crate::queue::{Ecn, Header};
use crate::scenario::Pacing;

/// A flow's end points: its sender and receiver, with their timers.
pub(super) struct FlowState {
    pub(super) sender: Sender,
    pub(super) receiver: Receiver,
    /// Where its data route and its ACK route start in the route table.
    pub(super) data_route: u32,
    pub(super) ack_route: u32,
    pub(super) start_ps: SimTime,
    /// The RTO timer event in the heap, if any, and its generation.
    pub(super) timer_pending: bool,
    pub(super) timer_at_ps: SimTime,
    pub(super) timer_gen: u32,
    /// Delayed ACKs: the timeout, and the generation of the pending timer event.
    pub(super) delack_ps: SimTime,
    pub(super) delack_gen: u32,
    pub(super) dropped: u64,
    pub(super) interval_delivered: u64,
    pub(super) pacing: Option<Pacing>,
    /// Whether the law sets its own pacing rate (BBR): it then replaces the ratio pacing.
    pub(super) law_paced: bool,
    /// Paced flows: the earliest time of the next send, and whether a `Pace` event is pending.
    pub(super) pace_next_ps: SimTime,
    pub(super) pace_pending: bool,
    /// Its packets (data and ACKs) in the network: a dynamic flow's slot is free again only at 0.
    pub(super) in_net: u32,
    /// Data packets that reached its receiver, duplicates included.
    pub(super) received: u64,
    /// Dynamic traffic: what the slot is doing, and its current flow.
    pub(super) phase: Phase,
    pub(super) slot: SlotFlow,
}

/// A connection's phase: a persistent flow's, or a dynamic slot's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Persistent,
    /// A free slot.
    Idle,
    /// Sending its flow.
    Sending,
    /// Its flow is acknowledged; its last packets are still in the network.
    Draining,
}

/// The flow a dynamic slot carries, and the slot's counters when it arrived.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SlotFlow {
    /// Index of its group in `PacketEngine::dynamic`.
    pub(super) group: u32,
    pub(super) size_bytes: f64,
    /// `u64::MAX` for a persistent flow (never complete).
    pub(super) size_pkts: u64,
    pub(super) arrived_ps: SimTime,
    pub(super) done_ps: SimTime,
    pub(super) base_sent: u64,
    pub(super) base_received: u64,
    pub(super) base_delivered: u64,
    pub(super) base_dropped: u64,
}

impl PacketEngine {
    /// Puts every packet the sender may send now on its route. A ratio-paced flow sends at most
    /// one, then waits `packet bits / (ratio · cwnd · packet bits / srtt)` = `srtt/(ratio·cwnd)`.
    /// A flow paced by its law sends at most the law's send quantum back to back (one TSO/GSO
    /// send, [`crate::cc::tso_autosize_pkts`]), then waits `sent/rate` (Linux's EDT pacing).
    pub(super) fn send(&mut self, f: usize) {
        let now = self.now_ps;
        let fl = &mut self.flows[f];
        if fl.pacing.is_some() || fl.law_paced {
            if fl.pace_pending {
                return self.sync_timer(f);
            }
            if now < fl.pace_next_ps {
                fl.pace_pending = true;
                self.queue.push(fl.pace_next_ps, Event::Pace(f as u32));
                return self.sync_timer(f);
            }
        }
        // A law-paced flow sends up to its quantum now; a ratio-paced one a packet; an unpaced
        // one all its window allows.
        let quantum = if fl.law_paced {
            fl.sender.law_send_quantum_pkts()
        } else {
            1
        };
        let mut sent = 0u32;
        loop {
            let fl = &mut self.flows[f];
            let Some(seg) = fl.sender.next_segment(now) else {
                break;
            };
            let s = &fl.sender;
            let header = Header {
                cwnd_pkts: s.cwnd_pkts() as f32,
                rtt_s: s.srtt_s() as f32,
                // No demand of its own: the routers' feedback decides (the minimum wins).
                feedback_pkts: f32::INFINITY,
            };
            let mut pkt = Pkt::data(f as u32, fl.data_route, seg.seq, now, header);
            pkt.set_ecn(seg.ecn);
            if seg.cwr {
                pkt.set_cwr();
            }
            sent += 1;
            let pace_next_ps = if fl.law_paced {
                if sent < quantum {
                    None
                } else {
                    s.law_pacing_rate_pps()
                        .map(|r| now + ps_from_s(sent as f64 / r.max(1e-3)))
                }
            } else {
                fl.pacing.map(|p| {
                    let ratio = if s.cwnd_pkts() < s.ssthresh_pkts() {
                        p.ss_ratio
                    } else {
                        p.ca_ratio
                    };
                    // The rate follows the usable window (Linux paces at cwnd only while
                    // cwnd-limited).
                    let gap_s = s.srtt_s() / (ratio * s.window_pkts().max(1.0));
                    now + ps_from_s(gap_s)
                })
            };
            fl.in_net = fl.in_net.wrapping_add(1);
            self.forward(pkt, now);
            if let Some(t) = pace_next_ps {
                let fl = &mut self.flows[f];
                fl.pace_next_ps = t;
                fl.pace_pending = true;
                self.queue.push(t, Event::Pace(f as u32));
                return self.sync_timer(f);
            }
        }
        // The window closed inside a law-paced send: the next still waits for the part sent.
        let fl = &mut self.flows[f];
        if sent > 0 && fl.law_paced {
            if let Some(r) = fl.sender.law_pacing_rate_pps() {
                fl.pace_next_ps = now + ps_from_s(sent as f64 / r.max(1e-3));
            }
        }
        self.sync_timer(f);
    }

    /// Makes sure a timer event is pending no later than the sender's earliest deadline (its
    /// RTO, or RACK-TLP's reordering and probe timers).
    fn sync_timer(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        fl.sender.end_burst(self.now_ps);
        if let Some(d) = fl.sender.timer_deadline_ps() {
            if !fl.timer_pending || d < fl.timer_at_ps {
                fl.timer_gen = fl.timer_gen.wrapping_add(1);
                fl.timer_pending = true;
                fl.timer_at_ps = d;
                self.queue.push(
                    d,
                    Event::Rto {
                        flow: f as u32,
                        gen: fl.timer_gen,
                    },
                );
            }
        }
    }

    pub(super) fn on_timer(&mut self, f: usize, gen: u32) {
        let now = self.now_ps;
        let fl = &mut self.flows[f];
        if gen != fl.timer_gen {
            return; // superseded by an earlier deadline
        }
        fl.timer_pending = false;
        match fl.sender.timer_deadline_ps() {
            None => {}
            // The deadline moved later since this event was scheduled: wait for it.
            Some(d) if d > now => self.sync_timer(f),
            Some(_) => {
                fl.sender.on_timer(now);
                self.send(f);
            }
        }
    }

    /// A data packet reaches its flow's receiver, which ACKs it now or arms the delayed-ACK
    /// timer.
    #[inline(never)]
    pub(super) fn deliver(&mut self, pkt: &Pkt) {
        self.deliver_inline(pkt);
    }

    #[inline(always)]
    pub(super) fn deliver_inline(&mut self, pkt: &Pkt) {
        let now = self.now_ps;
        let f = pkt.flow as usize;
        let fl = &mut self.flows[f];
        fl.received += 1;
        let before = fl.receiver.first_arrivals_pkts();
        fl.receiver.on_ecn(pkt.ecn() == Ecn::Ce, pkt.cwr());
        let ack = fl
            .receiver
            .receive(pkt.seq, pkt.stamp_ps, pkt.feedback_pkts);
        fl.interval_delivered += fl.receiver.first_arrivals_pkts() - before;
        match ack {
            Some(ack) => self.send_ack(f, ack),
            None if fl.receiver.pending() == 1 => {
                // The first packet held for a delayed ACK arms the timer.
                fl.delack_gen = fl.delack_gen.wrapping_add(1);
                let gen = fl.delack_gen;
                self.queue.push(
                    now + fl.delack_ps,
                    Event::DelAck {
                        flow: f as u32,
                        gen,
                    },
                );
            }
            None => {}
        }
        self.gone(f);
    }

    /// One of flow `f`'s packets left the network (arrived or dropped); a draining dynamic
    /// flow's slot is freed with its last one.
    #[inline(always)]
    pub(super) fn gone(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        // Wrapping: under the partitioned scheduler each partition sees part of the count (it
        // matters to dynamic flows only, which that scheduler does not run).
        fl.in_net = fl.in_net.wrapping_sub(1);
        if fl.in_net == 0 && fl.phase == Phase::Draining {
            self.maybe_release(f);
        }
    }

    /// The receiver sends an ACK along the flow's ACK route.
    #[inline]
    pub(super) fn send_ack(&mut self, f: usize, ack: Ack) {
        let fl = &mut self.flows[f];
        fl.delack_gen = fl.delack_gen.wrapping_add(1); // cancels a pending delayed-ACK timer
        let pkt = Pkt::ack(f as u32, fl.ack_route, &ack);
        fl.in_net = fl.in_net.wrapping_add(1);
        self.forward(pkt, self.now_ps);
    }

    /// An ACK reaches its flow's sender, which may send more. Inlined where ACKs leave pipes
    /// ([`Event::PipeToSender`]); a call from the route walk's other sites.
    #[inline(always)]
    pub(super) fn ack_at_sender(&mut self, f: usize, ack: Ack) {
        let fl = &mut self.flows[f];
        fl.in_net = fl.in_net.wrapping_sub(1);
        fl.sender.on_ack(self.now_ps, ack);
        if fl.sender.snd_una() >= fl.slot.size_pkts {
            return self.flow_done(f);
        }
        self.send(f);
    }

    #[inline(never)]
    pub(super) fn ack_at_sender_call(&mut self, f: usize, ack: Ack) {
        self.ack_at_sender(f, ack);
    }

    /// A dynamic flow arrives (group `g` of `dynamic`): the next arrival is drawn, then its
    /// size; it takes a free slot, or is refused if there is none.
    #[cold]
    #[inline(never)]
    pub(super) fn on_arrival(&mut self, g: usize) {
        let now = self.now_ps;
        let d = &mut self.dynamic[g];
        let next = now + ps_from_s(d.draw_gap_s());
        if next <= self.end_ps {
            self.queue.push(next, Event::Arrival(g as u32));
        }
        d.arrivals += 1;
        let (size_bytes, size_pkts) = d.draw_size();
        let Some(f) = d.free.pop() else {
            d.refused += 1;
            return;
        };
        d.active += 1;
        let f = f as usize;
        let spec = &self.scenario.flows[f];
        let fl = &mut self.flows[f];
        let mut law = spec.cc.build();
        let stream = LAW_STREAM + f as u64 + (d.arrivals << 32);
        law.seed(crate::rng::Rng::new(self.scenario.run.seed, stream));
        fl.sender.reset(
            law,
            spec.initial_window_pkts,
            spec.slow_start,
            spec.rtt_s,
            size_pkts,
        );
        fl.receiver.reset();
        // Timer events of the slot's earlier flows are stale from now on.
        fl.timer_gen = fl.timer_gen.wrapping_add(1);
        fl.timer_pending = false;
        fl.delack_gen = fl.delack_gen.wrapping_add(1);
        fl.pace_next_ps = 0;
        let st = fl.sender.stats(now);
        fl.slot = SlotFlow {
            group: g as u32,
            size_bytes,
            size_pkts,
            arrived_ps: now,
            done_ps: 0,
            base_sent: st.sent_pkts,
            base_received: fl.received,
            base_delivered: fl.receiver.delivered_pkts(),
            base_dropped: fl.dropped,
        };
        fl.phase = Phase::Sending;
        self.trace_new_connection(f);
        self.start_flow(f);
    }

    /// Flow `f` starts sending. Under the partitioned scheduler only its sender's partition
    /// starts it; every partition counts it at the ports.
    pub(super) fn start_flow(&mut self, f: usize) {
        let sender = self.runs_sender(f);
        if sender {
            self.flows[f].sender.start(self.now_ps);
        }
        for h in self.routes.data(f) {
            if let Hop::Queue { port, .. } = *h {
                self.ports[port as usize].started_flows += 1;
                self.clusters[port as usize].flow_started(self.now_ps);
            }
        }
        if sender {
            self.send(f);
        }
    }

    /// A dynamic flow's last packet is acknowledged (or a late ACK reached a finished one).
    #[cold]
    #[inline(never)]
    fn flow_done(&mut self, f: usize) {
        let now = self.now_ps;
        let fl = &mut self.flows[f];
        if fl.phase == Phase::Sending {
            fl.phase = Phase::Draining;
            fl.slot.done_ps = now;
            fl.sender.stop(now);
            let d = &mut self.dynamic[fl.slot.group as usize];
            d.active -= 1;
            d.completed += 1;
        }
        self.maybe_release(f);
    }

    /// Frees a draining slot once none of its packets is in the network and no pacing event
    /// is pending: its flow's record is taken then, so that its packets add up.
    pub(super) fn maybe_release(&mut self, f: usize) {
        let fl = &self.flows[f];
        if fl.phase != Phase::Draining || fl.in_net > 0 || fl.pace_pending {
            return;
        }
        let record = self.completion(f, true);
        self.completions.push(record);
        // Only now is none of its packets left to lose: until here it is a congestion-event
        // candidate at every port of its path.
        for h in self.routes.data(f) {
            if let Hop::Queue { port, .. } = *h {
                self.ports[port as usize].started_flows -= 1;
            }
        }
        let fl = &mut self.flows[f];
        fl.phase = Phase::Idle;
        self.dynamic[fl.slot.group as usize].free.push(f as u32);
    }
}

/// The codepoint of a flow's new data: ECT(1) for an L4S law (RFC 9331 §4), ECT(0) for other
/// ECN-capable flows (RFC 3168 §5), Not-ECT without `ecn`.
pub(super) fn ect_of(f: &crate::scenario::Flow) -> Ecn {
    match (f.ecn, f.cc.ecn()) {
        (false, _) => Ecn::NotEct,
        (true, crate::cc::EcnUse::Scalable { l4s: true }) => Ecn::Ect1,
        (true, _) => Ecn::Ect0,
    }
}
