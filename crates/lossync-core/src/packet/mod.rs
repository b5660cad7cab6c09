//! The packet engine: a deterministic discrete-event simulation of TCP flows over a dumbbell,
//! packet by packet, in integer picoseconds (models.md §7; style.md A4, A8).
//!
//! Topology, per flow `i` with base RTT `T_i` (the scenario's `rtt_s`):
//!
//! ```text
//! sender ─ access link (10·C, no loss) ─ d_fwd ─► bottleneck (C, B slots) ─► receiver
//!    ▲                                                                           │
//!    └──────────── d_rev ◄──── [reverse direction (C, B slots), if modelled] ◄── ACK
//! ```
//!
//! The connections of a parallel flow share one access link (they come from one host).
//!
//! `T_i` covers everything an empty network adds: one access serialization, one bottleneck
//! serialization, one ACK serialization on the reverse direction when it is modelled, and the
//! propagation `d_fwd + d_rev`, split in halves. The receiver sits right behind the bottleneck,
//! so a packet leaving the bottleneck is delivered at once. The bandwidth-delay product of the
//! closed forms is thus exactly `C·T_i`.
//!
//! Each direction of the bottleneck that is modelled is a [`port::Port`]: at most
//! `B = round(buffer_pkts)` packets *including the one in service* (at least one, so a
//! bufferless link can still serve); data and ACKs alike take a slot, in packets as in ns-2 and
//! ns-3's packet mode. Drop-tail, or RED on every arrival (Floyd & Jacobson 1993: EWMA of the
//! occupancy with weight w, decayed over idle time; the drop probability of
//! [`crate::queue::red::Red::probability`], applied independently per arrival, without the
//! count-based spacing of the original). The link's random `loss_rate` drops data arrivals
//! before the queue. `loss.model` (the fluid engine's synchronization module) does not apply
//! here: drops are real.
//!
//! Two-way traffic: with `reverse` on the dumbbell (or a flow group with `direction =
//! "reverse"`) the way back is the link's other direction, a port of its own; forward flows' ACKs
//! queue there behind reverse flows' data, and reverse flows' ACKs queue in the forward port.
//! Without it the way back is a pure delay (ACKs never queue or drop).
//!
//! As in htsim, a link is a queue plus a pipe, and a pipe keeps its packets in its own FIFO ring
//! and schedules only its head: the event heap holds a few entries per flow, not one per packet in
//! flight. Per data packet there are three events (arrival at the bottleneck, end of service, ACK
//! at the sender), one more per ACK that crosses a reverse port. After the rings have grown to
//! the largest window, nothing is allocated per packet (the drop log grows per drop, up to
//! [`DROP_LOG_LIMIT`]).
//!
//! Senders: [`sender`] (SACK recovery, RFC 6675; RTO, RFC 6298; the variant's law per ACK;
//! optional pacing). Receivers: [`receiver`] (an ACK per packet, or delayed ACKs).
//! Not modelled in this version: more than one bottleneck, ECN.

pub mod event;
pub mod port;
pub mod receiver;
pub mod sender;

use crate::error::{Error, Result};
use crate::metrics::{self, DropClusters, FlowRecord, LinkRecord, Records, RunResult};
use crate::queue::{Buffer, Header, Verdict};
use crate::scenario::{Pacing, Scenario};
use event::{ps_from_s, s_from_ps, Event, EventQueue, Serializer, SimTime};
use port::{Admit, Pkt, Port, PortAcc};
use receiver::Receiver;
use sender::{Ack, Sender};
use std::collections::VecDeque;

/// At most this many drops are kept in the drop log (all are counted).
pub const DROP_LOG_LIMIT: usize = 4_000_000;
/// Refuse runs whose buffers plus largest plausible windows exceed this many packet slots.
const MAX_PACKET_SLOTS: f64 = (1u64 << 27) as f64;
/// Access links run this many times faster than the bottleneck unless a flow group sets
/// `access_capacity`.
const ACCESS_SPEEDUP: f64 = 10.0;
/// Rings are pre-sized to the expected window, but not beyond this (they grow if needed).
const RING_PRESIZE_LIMIT: usize = 1 << 16;

#[derive(Debug, Clone, Copy, Default)]
struct FlowAcc {
    sent: u64,
    delivered: u64,
    dropped: u64,
    reductions: u64,
    cwnd_integral_pkt_s: f64,
}

struct FlowState {
    sender: Sender,
    receiver: Receiver,
    start_ps: SimTime,
    /// The port its data cross, and the one its ACKs cross (`None`: a pure delay).
    data_port: usize,
    ack_port: Option<usize>,
    /// Propagation before the data port and on the way back.
    fwd_delay_ps: SimTime,
    rev_delay_ps: SimTime,
    /// Its access link in `PacketEngine::access` (the connections of a parallel flow share one).
    access: usize,
    /// Serializes this flow's ACKs on its ACK port.
    ack_service: Serializer,
    /// Packets between the sender and the bottleneck, with their arrival times (FIFO).
    fwd: VecDeque<(SimTime, Pkt)>,
    /// ACKs on the way back to the sender, with their arrival times (FIFO).
    rev: VecDeque<(SimTime, Ack)>,
    /// The RTO timer event in the heap, if any, and its generation.
    timer_pending: bool,
    timer_at_ps: SimTime,
    timer_gen: u32,
    /// Delayed ACKs: the timeout, and the generation of the pending timer event.
    delack_ps: SimTime,
    delack_gen: u32,
    dropped: u64,
    interval_delivered: u64,
    pacing: Option<Pacing>,
    /// Paced flows: the earliest time of the next send, and whether a `Pace` event is pending.
    pace_next_ps: SimTime,
    pace_pending: bool,
}

/// A packet-level run in progress. Build with [`PacketEngine::new`], drive with
/// [`PacketEngine::advance`], then [`PacketEngine::finish`].
pub struct PacketEngine {
    scenario: Scenario,
    now_ps: SimTime,
    end_ps: SimTime,
    queue: EventQueue,
    flows: Vec<FlowState>,
    /// One per link of the scenario: the bottleneck, then its reverse direction if modelled.
    ports: Vec<Port>,
    /// Per port: its drops grouped into congestion events (a metric; fed as drops happen).
    clusters: Vec<DropClusters>,
    /// Access links, one per logical flow: the serializer and when the link is next free.
    access: Vec<(Serializer, SimTime)>,
    drop_log: Vec<(f64, usize)>,
    // Measurement.
    warm: bool,
    measuring: bool,
    measured_from_ps: SimTime,
    start_ports: Vec<PortAcc>,
    start_flows: Vec<FlowAcc>,
    // Time series.
    record_every_ps: f64,
    records: u64,
    last_record_ps: SimTime,
    series: Vec<Vec<f64>>,
    events_processed: u64,
}

impl PacketEngine {
    pub fn new(scenario: &Scenario) -> Result<Self> {
        let sc = scenario.clone();
        let two_way = sc.links.len() == 2 && sc.links[1].reverse_of == Some(0);
        if sc.links.len() != 1 && !two_way {
            return Err(Error::field(
                "links",
                "the packet engine supports one bottleneck link (a dumbbell, with its reverse \
                 direction if asked for) in this version",
            ));
        }
        let link = &sc.links[0];
        let slots_of_link = |l: &crate::scenario::Link| Buffer::new(l.buffer_pkts).slots;
        let buffer_slots: Vec<usize> = sc.links.iter().map(slots_of_link).collect();
        let all_buffers: usize = buffer_slots.iter().sum();

        // Memory: the buffers plus the packets in flight, which all share one link: at most
        // twice its capacity in flight plus the buffer (a slow-start overshoot), plus the initial
        // windows, and never more than the receive windows allow.
        let slots_of = |f: &crate::scenario::Flow| {
            let l = &sc.links[f.path[0]];
            (2.0 * (l.capacity_pps * f.rtt_s + buffer_slots[f.path[0]] as f64)
                + f.initial_window_pkts)
                .min(f.rwnd_pkts)
        };
        let max_rtt_s = sc.flows.iter().map(|f| f.rtt_s).fold(0.0, f64::max);
        let iw_sum: f64 = sc.flows.iter().map(|f| f.initial_window_pkts).sum();
        let pipe_limit: f64 = sc
            .links
            .iter()
            .zip(&buffer_slots)
            .map(|(l, &b)| 2.0 * (l.capacity_pps * max_rtt_s + b as f64))
            .sum();
        let in_flight = sc
            .flows
            .iter()
            .map(slots_of)
            .sum::<f64>()
            .min(pipe_limit + iw_sum);
        let slots = all_buffers as f64 + in_flight;
        if slots > MAX_PACKET_SLOTS {
            let field = if all_buffers as f64 > MAX_PACKET_SLOTS / 2.0 {
                "links[0].buffer".to_string()
            } else {
                let g = sc
                    .flows
                    .iter()
                    .max_by(|a, b| slots_of(a).total_cmp(&slots_of(b)))
                    .map_or(0, |f| f.group);
                format!("flows[{g}].rwnd")
            };
            return Err(Error::field(
                field,
                format!(
                    "the packet engine would need about {slots:.3e} packet slots (the buffer plus \
                     up to 2·(C·RTT + B) in flight), more than 2^27: lower the capacity, RTT or \
                     buffer, or cap the windows with rwnd"
                ),
            ));
        }

        let n = sc.flows.len();
        let mean_rtt_s = sc.flows.iter().map(|f| f.rtt_s).sum::<f64>() / n as f64;
        // Drops less than the mean base RTT apart belong to one congestion event (docs/model.md
        // §5.3); XCP's first control interval is the same mean RTT.
        let tau_ps = ps_from_s(mean_rtt_s);
        let ports: Vec<Port> = sc
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                Port::new(
                    i,
                    l,
                    l.buffer_pkts,
                    s_from_ps(tau_ps),
                    sc.run.seed,
                    RING_PRESIZE_LIMIT << 4,
                )
            })
            .collect();
        let clusters = (0..ports.len())
            .map(|i| DropClusters::new(i, tau_ps, event::PS_PER_S, n))
            .collect();

        let bits = 8.0 * link.packet_size_bytes;
        let mut flows = Vec::with_capacity(n);
        let mut access_links: Vec<(Serializer, SimTime)> = Vec::new();
        for f in &sc.flows {
            let field = format!("flows[{}]", f.group);
            let law = f.cc.build();
            let data_port = f.path[0];
            let ack_port = f.ack_path.first().copied();
            let dl = &sc.links[data_port];
            let access_bps = f
                .access_capacity_bps
                .unwrap_or(ACCESS_SPEEDUP * dl.capacity_bps);
            let access = Serializer::new(bits, access_bps);
            if f.logical == access_links.len() {
                access_links.push((access, 0));
            }
            let ack_bits = 8.0 * f.ack_size_bytes;
            let ack_service = Serializer::new(
                ack_bits,
                ack_port.map_or(dl.capacity_bps, |p| sc.links[p].capacity_bps),
            );
            let rtt_ps = ps_from_s(f.rtt_s);
            let serialization_ps = access.nominal_ps()
                + ports[data_port].service_ps
                + ack_port.map_or(0, |_| ack_service.nominal_ps());
            if rtt_ps < serialization_ps {
                return Err(Error::field(
                    format!("{field}.rtt"),
                    format!(
                        "an RTT of {} s is shorter than serializing one packet on the access link \
                         and the bottleneck ({} s)",
                        f.rtt_s,
                        s_from_ps(serialization_ps)
                    ),
                ));
            }
            let prop_ps = rtt_ps - serialization_ps;
            // Rings start at about a fair share of the pipe (they grow if a flow takes more).
            let share = 2.0 * (dl.capacity_pps * f.rtt_s + buffer_slots[data_port] as f64)
                / n as f64
                + f.initial_window_pkts;
            let hint = (share.min(f.rwnd_pkts) as usize).clamp(64, RING_PRESIZE_LIMIT);
            let ack_every = f.delayed_ack.map_or(1, |d| d.count);
            flows.push(FlowState {
                sender: Sender::new(
                    law,
                    f.initial_window_pkts,
                    f.rwnd_pkts,
                    f.slow_start,
                    f.rtt_s,
                    hint,
                )
                .with_abc_limit(ack_every),
                receiver: Receiver::new(hint).with_ack_every(ack_every),
                start_ps: ps_from_s(f.start_s),
                data_port,
                ack_port,
                fwd_delay_ps: prop_ps / 2,
                rev_delay_ps: prop_ps - prop_ps / 2,
                access: f.logical,
                ack_service,
                fwd: VecDeque::with_capacity(hint),
                rev: VecDeque::with_capacity(hint),
                timer_pending: false,
                timer_at_ps: 0,
                timer_gen: 0,
                delack_ps: f.delayed_ack.map_or(0, |d| ps_from_s(d.timeout_s)),
                delack_gen: 0,
                dropped: 0,
                interval_delivered: 0,
                pacing: f.pacing,
                pace_next_ps: 0,
                pace_pending: false,
            });
        }
        let end_ps = ps_from_s(sc.run.duration_s);
        let record_every_ps = sc.run.record_interval_s * event::PS_PER_S;
        let n_records = (sc.run.duration_s / sc.run.record_interval_s).floor() as usize + 1;
        let n_cols = 1 + 2 * ports.len() + 2 * n;

        let mut queue = EventQueue::with_capacity(4 * n + 8);
        for (i, f) in flows.iter().enumerate() {
            queue.push(f.start_ps, Event::FlowStart(i as u32));
        }
        queue.push(ps_from_s(sc.run.warmup_s), Event::WarmupEnd);
        for (i, p) in ports.iter().enumerate() {
            if p.has_feedback() {
                queue.push(ps_from_s(mean_rtt_s), Event::XcpInterval(i as u32));
            }
        }
        queue.push(0, Event::Record);

        Ok(PacketEngine {
            now_ps: 0,
            end_ps,
            queue,
            start_ports: vec![PortAcc::default(); ports.len()],
            ports,
            clusters,
            access: access_links,
            drop_log: Vec::new(),
            warm: false,
            measuring: false,
            measured_from_ps: 0,
            start_flows: vec![FlowAcc::default(); n],
            record_every_ps,
            records: 0,
            last_record_ps: 0,
            series: (0..n_cols).map(|_| Vec::with_capacity(n_records)).collect(),
            events_processed: 0,
            flows,
            scenario: sc,
        })
    }

    /// Simulated time now, in seconds.
    pub fn now_s(&self) -> f64 {
        s_from_ps(self.now_ps)
    }

    pub fn duration_s(&self) -> f64 {
        s_from_ps(self.end_ps)
    }

    pub fn is_done(&self) -> bool {
        self.now_ps >= self.end_ps
    }

    /// Events waiting in the heap (a few per flow; for tests and benchmarks).
    pub fn pending_events(&self) -> usize {
        self.queue.len()
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }

    /// Every bottleneck drop so far as (time in s, flow), in time order (the first
    /// [`DROP_LOG_LIMIT`]).
    pub fn drop_log(&self) -> &[(f64, usize)] {
        &self.drop_log
    }

    /// Runs every event up to simulated time `until_s` (or the end of the run).
    pub fn advance(&mut self, until_s: f64) {
        let until = if until_s.is_finite() {
            ps_from_s(until_s.max(0.0)).min(self.end_ps)
        } else {
            self.end_ps
        };
        while let Some(t) = self.queue.peek_time() {
            if t > until {
                break;
            }
            let (t, ev) = self.queue.pop().expect("peeked");
            self.now_ps = t;
            self.events_processed += 1;
            self.dispatch(ev);
        }
        self.now_ps = self.now_ps.max(until);
    }

    /// Runs to the end and returns the result.
    pub fn run(mut self) -> RunResult {
        self.advance(f64::INFINITY);
        self.finish()
    }

    /// Runs to the end and returns the result and the drop log.
    pub fn run_with_drops(mut self) -> (RunResult, Vec<(f64, usize)>) {
        self.advance(f64::INFINITY);
        let drops = std::mem::take(&mut self.drop_log);
        (self.finish(), drops)
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::DataArrival(f) => self.on_data_arrival(f as usize),
            Event::ServiceDone(p) => self.on_service_done(p as usize),
            Event::AckArrival(f) => self.on_ack_arrival(f as usize),
            Event::Rto { flow, gen } => self.on_timer(flow as usize, gen),
            Event::DelAck { flow, gen } => {
                let fl = &mut self.flows[flow as usize];
                if gen == fl.delack_gen {
                    if let Some(ack) = fl.receiver.flush() {
                        self.send_ack(flow as usize, ack);
                    }
                }
            }
            Event::FlowStart(f) => {
                let f = f as usize;
                self.flows[f].sender.start(self.now_ps);
                self.ports[self.flows[f].data_port].started_flows += 1;
                self.send(f);
            }
            Event::Pace(f) => {
                self.flows[f as usize].pace_pending = false;
                self.send(f as usize);
            }
            Event::XcpInterval(p) => {
                if let Some(d) = self.ports[p as usize].end_interval() {
                    self.queue
                        .push(self.now_ps + ps_from_s(d), Event::XcpInterval(p));
                }
            }
            Event::Record => self.record(),
            Event::WarmupEnd => {
                self.warm = true;
                self.start_measuring();
                self.measuring = !self.scenario.run.from_first_congestion;
            }
        }
    }

    /// Puts every packet the sender may send now on its access link; a paced flow sends at most
    /// one, then waits `packet bits / (ratio · cwnd · packet bits / srtt)` = `srtt/(ratio·cwnd)`.
    fn send(&mut self, f: usize) {
        let now = self.now_ps;
        let fl = &mut self.flows[f];
        if fl.pacing.is_some() {
            if fl.pace_pending {
                return self.sync_timer(f);
            }
            if now < fl.pace_next_ps {
                fl.pace_pending = true;
                self.queue.push(fl.pace_next_ps, Event::Pace(f as u32));
                return self.sync_timer(f);
            }
        }
        while let Some(seg) = fl.sender.next_segment(now) {
            let (ser, free_ps) = &mut self.access[fl.access];
            *free_ps = (*free_ps).max(now) + ser.next_ps();
            let at = *free_ps + fl.fwd_delay_ps;
            if fl.fwd.is_empty() {
                self.queue.push(at, Event::DataArrival(f as u32));
            }
            fl.fwd.push_back((
                at,
                Pkt {
                    flow: f as u32,
                    is_ack: false,
                    seq: seg.seq,
                    sacked: 0,
                    stamp_ps: now,
                    header: Header {
                        cwnd_pkts: fl.sender.cwnd_pkts() as f32,
                        rtt_s: fl.sender.srtt_s() as f32,
                        // No demand of its own: the routers' feedback decides (the minimum wins).
                        feedback_pkts: f32::INFINITY,
                    },
                },
            ));
            if let Some(p) = fl.pacing {
                let s = &fl.sender;
                let ratio = if s.cwnd_pkts() < s.ssthresh_pkts() {
                    p.ss_ratio
                } else {
                    p.ca_ratio
                };
                // The rate follows the usable window (Linux paces at cwnd only while cwnd-limited).
                let gap_s = s.srtt_s() / (ratio * s.window_pkts().max(1.0));
                fl.pace_next_ps = now + ps_from_s(gap_s);
                fl.pace_pending = true;
                self.queue.push(fl.pace_next_ps, Event::Pace(f as u32));
                break;
            }
        }
        self.sync_timer(f);
    }

    /// Makes sure a timer event is pending no later than the sender's RTO deadline.
    fn sync_timer(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        if let Some(d) = fl.sender.rto_deadline_ps() {
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

    fn on_timer(&mut self, f: usize, gen: u32) {
        let now = self.now_ps;
        let fl = &mut self.flows[f];
        if gen != fl.timer_gen {
            return; // superseded by an earlier deadline
        }
        fl.timer_pending = false;
        match fl.sender.rto_deadline_ps() {
            None => {}
            // The deadline moved later since this event was scheduled: wait for it.
            Some(d) if d > now => self.sync_timer(f),
            Some(_) => {
                fl.sender.on_timeout(now);
                self.send(f);
            }
        }
    }

    /// A packet reaches port `p`: queued, or dropped (a data drop is logged and clustered).
    fn arrive(&mut self, p: usize, pkt: Pkt) {
        let now = self.now_ps;
        let ack_service = &mut self.flows[pkt.flow as usize].ack_service;
        match self.ports[p].admit(now, pkt, ack_service) {
            Admit::Queued => {}
            Admit::Serving(t) => self.queue.push(now + t, Event::ServiceDone(p as u32)),
            Admit::Dropped if pkt.is_ack => {}
            Admit::Dropped => self.on_drop(p, pkt.flow as usize),
        }
    }

    fn on_data_arrival(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        let (_, pkt) = fl.fwd.pop_front().expect("a scheduled arrival");
        if let Some(&(next, _)) = fl.fwd.front() {
            self.queue.push(next, Event::DataArrival(f as u32));
        }
        let p = fl.data_port;
        self.arrive(p, pkt);
    }

    fn on_service_done(&mut self, p: usize) {
        let now = self.now_ps;
        let port = &mut self.ports[p];
        let (pkt, verdict) = port.depart(now);
        if let Some(head) = port.head() {
            let t = port.start_next(&mut self.flows[head.flow as usize].ack_service);
            self.queue.push(now + t, Event::ServiceDone(p as u32));
        }
        let f = pkt.flow as usize;
        if verdict != Verdict::Queued {
            if !pkt.is_ack {
                self.on_drop(p, f);
            }
            return;
        }
        if pkt.is_ack {
            let ack = Ack {
                cum: pkt.seq,
                sacked: pkt.sacked,
                echo_ps: pkt.stamp_ps,
                feedback_pkts: pkt.header.feedback_pkts,
            };
            return self.ack_onto_return_path(f, ack);
        }
        // The receiver sits right behind the bottleneck.
        let fl = &mut self.flows[f];
        let before = fl.receiver.delivered_pkts();
        let ack = fl
            .receiver
            .receive(pkt.seq, pkt.stamp_ps, pkt.header.feedback_pkts);
        fl.interval_delivered += fl.receiver.delivered_pkts() - before;
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
    }

    /// The receiver sends an ACK: into the reverse port if modelled, else straight back.
    fn send_ack(&mut self, f: usize, ack: Ack) {
        let fl = &mut self.flows[f];
        fl.delack_gen = fl.delack_gen.wrapping_add(1); // cancels a pending delayed-ACK timer
        match fl.ack_port {
            Some(p) => self.arrive(
                p,
                Pkt {
                    flow: f as u32,
                    is_ack: true,
                    seq: ack.cum,
                    sacked: ack.sacked,
                    stamp_ps: ack.echo_ps,
                    header: Header {
                        feedback_pkts: ack.feedback_pkts,
                        ..Header::default()
                    },
                },
            ),
            None => self.ack_onto_return_path(f, ack),
        }
    }

    /// The ACK propagates back to the sender.
    fn ack_onto_return_path(&mut self, f: usize, ack: Ack) {
        let fl = &mut self.flows[f];
        let at = self.now_ps + fl.rev_delay_ps;
        if fl.rev.is_empty() {
            self.queue.push(at, Event::AckArrival(f as u32));
        }
        fl.rev.push_back((at, ack));
    }

    fn on_ack_arrival(&mut self, f: usize) {
        let now = self.now_ps;
        let fl = &mut self.flows[f];
        let (_, ack) = fl.rev.pop_front().expect("a scheduled ACK");
        if let Some(&(next, _)) = fl.rev.front() {
            self.queue.push(next, Event::AckArrival(f as u32));
        }
        fl.sender.on_ack(now, ack);
        self.send(f);
    }

    /// A data drop at port `p`: counted, logged (the headline port's), clustered into
    /// congestion events, and (with `from_first_congestion`) the first one after the warm-up
    /// starts the statistics.
    fn on_drop(&mut self, p: usize, f: usize) {
        let now = self.now_ps;
        self.flows[f].dropped += 1;
        if self.drop_log.len() < DROP_LOG_LIMIT {
            self.drop_log.push((s_from_ps(now), f));
        }
        if self.warm && !self.measuring {
            self.measuring = true;
            self.start_measuring();
        }
        let candidates = self.ports[p].started_flows;
        self.clusters[p].drop(now, f, candidates, self.warm);
    }

    /// Per-flow totals now.
    fn flow_acc(&mut self, f: usize) -> FlowAcc {
        let now = self.now_ps;
        let fl = &mut self.flows[f];
        let st = fl.sender.stats(now);
        FlowAcc {
            sent: st.sent_pkts,
            delivered: fl.receiver.delivered_pkts(),
            dropped: fl.dropped,
            reductions: st.reductions,
            cwnd_integral_pkt_s: st.cwnd_integral_pkt_s,
        }
    }

    /// Starts the statistics now: later results are differences from these totals.
    fn start_measuring(&mut self) {
        let now = self.now_ps;
        self.measured_from_ps = now;
        for (i, port) in self.ports.iter_mut().enumerate() {
            port.integrate(now);
            port.q_max = port.len();
            self.start_ports[i] = port.acc;
        }
        for f in 0..self.flows.len() {
            self.start_flows[f] = self.flow_acc(f);
        }
    }

    fn record(&mut self) {
        let now = self.now_ps;
        let span_s = s_from_ps(now - self.last_record_ps);
        let mut cols = self.series.iter_mut();
        let mut push = |v: f64| cols.next().expect("one column per value").push(v);
        push(s_from_ps(now));
        for port in &mut self.ports {
            push(port.len() as f64);
            push(if span_s > 0.0 {
                port.interval_departed as f64 / (port.capacity_pps * span_s)
            } else {
                f64::NAN
            });
            port.interval_departed = 0;
        }
        for fl in &mut self.flows {
            debug_assert_eq!(fl.sender.pipe_pkts(), fl.sender.recount_pipe());
            push(fl.sender.cwnd_pkts());
            push(if span_s > 0.0 {
                fl.interval_delivered as f64 / span_s
            } else {
                f64::NAN
            });
            fl.interval_delivered = 0;
        }
        self.last_record_ps = now;
        self.records += 1;
        let next = (self.records as f64 * self.record_every_ps).round() as SimTime;
        if next <= self.end_ps {
            self.queue.push(next, Event::Record);
        }
    }

    /// Closes the run at the current time and computes the summary. Without a drop after the
    /// warm-up, `from_first_congestion` falls back to statistics from the warm-up (as the fluid
    /// engine does).
    pub fn finish(mut self) -> RunResult {
        let now = self.now_ps;
        for port in &mut self.ports {
            port.integrate(now);
        }
        let from = self.measured_from_ps;
        let flow_now: Vec<FlowAcc> = (0..self.flows.len()).map(|f| self.flow_acc(f)).collect();
        let links = self
            .ports
            .iter()
            .zip(&self.start_ports)
            .map(|(port, s)| {
                let a = &port.acc;
                LinkRecord {
                    arrived_pkts: (a.arrived - s.arrived) as f64,
                    departed_pkts: (a.departed - s.departed) as f64,
                    dropped_pkts: (a.dropped - s.dropped) as f64,
                    // In packet·picoseconds over picoseconds: exact until the division.
                    queue_integral: (a.queue_area - s.queue_area) as f64,
                    queue_integral_span: (now - from) as f64,
                    max_queue_pkts: port.q_max as f64,
                    total_arrived_pkts: a.arrived as f64,
                    total_departed_pkts: a.departed as f64,
                    total_dropped_pkts: a.dropped as f64,
                    queue_start_pkts: 0.0,
                    queue_end_pkts: port.len() as f64,
                }
            })
            .collect();
        let mut events = Vec::new();
        for c in &mut self.clusters {
            c.close();
            events.append(&mut c.take());
        }
        let flows = flow_now
            .iter()
            .zip(&self.start_flows)
            .map(|(a, s)| FlowRecord {
                sent_pkts: (a.sent - s.sent) as f64,
                delivered_pkts: (a.delivered - s.delivered) as f64,
                dropped_pkts: (a.dropped - s.dropped) as f64,
                cwnd_integral_pkt_s: a.cwnd_integral_pkt_s - s.cwnd_integral_pkt_s,
                reductions: (a.reductions - s.reductions) as f64,
            })
            .collect();
        let records = Records {
            engine: "packet".into(),
            duration_s: s_from_ps(now),
            // No time step: the bottleneck's packet time is the natural unit.
            step_s: s_from_ps(self.ports[0].service_ps),
            measured_from_s: s_from_ps(from),
            span_s: s_from_ps(now - from),
            flow_updates: self.events_processed,
            links,
            flows,
            events,
            samples: self.series,
            warnings: Vec::new(),
        };
        metrics::summarize(&self.scenario, records)
    }
}
