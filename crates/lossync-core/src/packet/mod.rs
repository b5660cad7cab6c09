//! The packet engine: a deterministic discrete-event simulation of TCP flows over a dumbbell,
//! packet by packet, in integer picoseconds (models.md §7; style.md A4, A8).
//!
//! Topology, per flow `i` with base RTT `T_i` (the scenario's `rtt_s`):
//!
//! ```text
//! sender ─ access link (10·C, no loss) ─ d_fwd ─► bottleneck (C, B slots) ─► receiver
//!    ▲                                                                           │
//!    └────────────────────────────── d_rev (pure delay) ◄─────── ACK ────────────┘
//! ```
//!
//! `T_i` covers everything an empty network adds: one access serialization, one bottleneck
//! serialization and the propagation `d_fwd + d_rev = T_i − 1/(10C) − 1/C`, split in halves. The
//! receiver sits right behind the bottleneck, so a packet leaving the bottleneck is delivered at
//! once. The bandwidth-delay product of the closed forms is thus exactly `C·T_i`.
//!
//! The bottleneck holds at most `B = round(buffer_pkts)` packets *including the one in service*
//! (at least one, so a bufferless link can still serve); `queue_pkts` everywhere counts that
//! system occupancy. Drop-tail, or RED on every arrival (Floyd & Jacobson 1993: EWMA of the
//! occupancy with weight w, decayed over idle time; the drop probability of
//! [`crate::queue::red::Red::probability`], applied independently per arrival, without the
//! count-based spacing of the original). The link's random `loss_rate` drops arrivals before the
//! queue. `loss.model` (the fluid engine's synchronization module) does not apply here: drops are
//! real.
//!
//! As in htsim, a link is a queue plus a pipe, and a pipe keeps its packets in its own FIFO ring
//! and schedules only its head: the event heap holds a few entries per flow, not one per packet in
//! flight. Per data packet there are three events (arrival at the bottleneck, end of service, ACK
//! at the sender). After the rings have grown to the largest window, nothing is allocated per
//! packet (the drop log grows per drop, up to [`DROP_LOG_LIMIT`]).
//!
//! Senders: [`sender`] (SACK recovery, RFC 6675; RTO, RFC 6298; the variant's law per ACK).
//! Not modelled in this version: pacing, delayed ACKs, reverse-path traffic (ACKs never queue or
//! drop), more than one bottleneck, ECN.

pub mod event;
pub mod receiver;
pub mod sender;

use crate::cc;
use crate::error::{Error, Result};
use crate::metrics::{
    EventRecord, FlowSummary, LinkSummary, RunResult, RunTotals, Series, Summary,
};
use crate::queue::red::Red;
use crate::rng::Rng;
use crate::scenario::{Pacing, Queue, Scenario};
use event::{ps_from_s, s_from_ps, Event, EventQueue, Serializer, SimTime};
use receiver::Receiver;
use sender::{Ack, Sender};
use std::collections::VecDeque;

/// At most this many congestion events are logged one by one (all are counted).
const EVENT_LOG_LIMIT: usize = 1_000_000;
/// At most this many drops are kept in the drop log (all are counted).
pub const DROP_LOG_LIMIT: usize = 4_000_000;
/// Refuse runs whose buffer plus largest plausible windows exceed this many packet slots.
const MAX_PACKET_SLOTS: f64 = (1u64 << 27) as f64;
/// Access links run this many times faster than the bottleneck.
const ACCESS_SPEEDUP: f64 = 10.0;
/// Rings are pre-sized to the expected window, but not beyond this (they grow if needed).
const RING_PRESIZE_LIMIT: usize = 1 << 16;

/// A data packet on its way to the bottleneck or in its queue.
#[derive(Debug, Clone, Copy)]
struct Packet {
    flow: u32,
    seq: u64,
    sent_ps: SimTime,
}

/// Running totals of the bottleneck since t = 0; statistics are differences of two snapshots.
#[derive(Debug, Clone, Copy, Default)]
struct LinkAcc {
    arrived: u64,
    departed: u64,
    dropped: u64,
    /// ∫ queue dt in packet·picoseconds, exact.
    queue_area: u128,
}

#[derive(Debug, Clone, Copy, Default)]
struct FlowAcc {
    sent: u64,
    delivered: u64,
    dropped: u64,
    reductions: u64,
    cwnd_integral_pkt_s: f64,
}

/// RED state of the bottleneck (per-arrival EWMA of the occupancy).
#[derive(Debug)]
struct RedState {
    law: Red,
    weight: f64,
    avg_pkts: f64,
}

struct FlowState {
    sender: Sender,
    receiver: Receiver,
    start_ps: SimTime,
    /// Propagation before the bottleneck and on the way back.
    fwd_delay_ps: SimTime,
    rev_delay_ps: SimTime,
    access: Serializer,
    /// The access link is busy until then.
    access_free_ps: SimTime,
    /// Packets between the sender and the bottleneck, with their arrival times (FIFO).
    fwd: VecDeque<(SimTime, Packet)>,
    /// ACKs on the way back, with their arrival times (FIFO).
    rev: VecDeque<(SimTime, Ack)>,
    /// The RTO timer event in the heap, if any, and its generation.
    timer_pending: bool,
    timer_at_ps: SimTime,
    timer_gen: u32,
    dropped: u64,
    interval_delivered: u64,
    pacing: Option<Pacing>,
    /// Paced flows: the earliest time of the next send, and whether a `Pace` event is pending.
    pace_next_ps: SimTime,
    pace_pending: bool,
}

/// Congestion event under way: a cluster of drops whose gaps are below the mean base RTT
/// (models.md §5.3).
#[derive(Debug)]
struct Cluster {
    active: bool,
    start_ps: SimTime,
    last_ps: SimTime,
    measured: bool,
    candidates: u32,
    lost: Vec<bool>,
    lost_list: Vec<u32>,
}

/// A packet-level run in progress. Build with [`PacketEngine::new`], drive with
/// [`PacketEngine::advance`], then [`PacketEngine::finish`].
pub struct PacketEngine {
    scenario: Scenario,
    now_ps: SimTime,
    end_ps: SimTime,
    queue: EventQueue,
    flows: Vec<FlowState>,
    // The bottleneck.
    capacity_pps: f64,
    buffer_slots: usize,
    service: Serializer,
    service_ps: SimTime,
    bottleneck: VecDeque<Packet>,
    red: Option<RedState>,
    random_loss: f64,
    rng: Rng,
    idle_since_ps: SimTime,
    acc: LinkAcc,
    queue_changed_ps: SimTime,
    q_max: usize,
    interval_departed: u64,
    // Congestion events.
    tau_ps: SimTime,
    cluster: Cluster,
    started_flows: u32,
    events: u64,
    sync_sum: f64,
    sync_hist: Vec<u64>,
    event_log: Vec<EventRecord>,
    drop_log: Vec<(f64, usize)>,
    // Measurement.
    warm: bool,
    measuring: bool,
    measured_from_ps: SimTime,
    start_link: LinkAcc,
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
        if sc.links.len() != 1 {
            return Err(Error::field(
                "links",
                "the packet engine supports one bottleneck link (a dumbbell) in this version",
            ));
        }
        let link = &sc.links[0];
        let bits = 8.0 * link.packet_size_bytes;
        let buffer_slots = (link.buffer_pkts.round() as usize).max(1);

        // Memory: the buffer plus the packets in flight, which all share one link: at most twice
        // its capacity in flight plus the buffer (a slow-start overshoot), plus the initial
        // windows, and never more than the receive windows allow.
        let slots_of = |f: &crate::scenario::Flow| {
            (2.0 * (link.capacity_pps * f.rtt_s + buffer_slots as f64) + f.initial_window_pkts)
                .min(f.rwnd_pkts)
        };
        let max_rtt_s = sc.flows.iter().map(|f| f.rtt_s).fold(0.0, f64::max);
        let iw_sum: f64 = sc.flows.iter().map(|f| f.initial_window_pkts).sum();
        let in_flight = sc
            .flows
            .iter()
            .map(slots_of)
            .sum::<f64>()
            .min(2.0 * (link.capacity_pps * max_rtt_s + buffer_slots as f64) + iw_sum);
        let slots = buffer_slots as f64 + in_flight;
        if slots > MAX_PACKET_SLOTS {
            let field = if buffer_slots as f64 > MAX_PACKET_SLOTS / 2.0 {
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
        // Rings start at about a fair share of that (they grow if a flow takes more).
        let n_flows = sc.flows.len() as f64;
        let hints: Vec<usize> = sc
            .flows
            .iter()
            .map(|f| {
                let share = 2.0 * (link.capacity_pps * f.rtt_s + buffer_slots as f64) / n_flows
                    + f.initial_window_pkts;
                (share.min(f.rwnd_pkts) as usize).clamp(64, RING_PRESIZE_LIMIT)
            })
            .collect();

        let service = Serializer::new(bits, link.capacity_bps);
        let service_ps = service.nominal_ps();
        let mut flows = Vec::with_capacity(sc.flows.len());
        for (i, f) in sc.flows.iter().enumerate() {
            let field = format!("flows[{}]", f.group);
            let law = cc::build(&f.variant, &f.params, &format!("{field}.cc"))?;
            let access = Serializer::new(bits, ACCESS_SPEEDUP * link.capacity_bps);
            let rtt_ps = ps_from_s(f.rtt_s);
            let serialization_ps = access.nominal_ps() + service_ps;
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
            let hint = hints[i];
            flows.push(FlowState {
                sender: Sender::new(
                    law,
                    f.initial_window_pkts,
                    f.rwnd_pkts,
                    f.slow_start,
                    f.rtt_s,
                    hint,
                ),
                receiver: Receiver::new(hint),
                start_ps: ps_from_s(f.start_s),
                fwd_delay_ps: prop_ps / 2,
                rev_delay_ps: prop_ps - prop_ps / 2,
                access,
                access_free_ps: 0,
                fwd: VecDeque::with_capacity(hint),
                rev: VecDeque::with_capacity(hint),
                timer_pending: false,
                timer_at_ps: 0,
                timer_gen: 0,
                dropped: 0,
                interval_delivered: 0,
                pacing: f.pacing,
                pace_next_ps: 0,
                pace_pending: false,
            });
        }
        let red = match link.queue {
            Queue::Droptail => None,
            Queue::Red {
                min_th,
                max_th,
                max_p,
                weight,
                gentle,
            } => Some(RedState {
                law: Red::new(min_th, max_th, max_p, weight, gentle),
                weight,
                avg_pkts: 0.0,
            }),
        };
        let n = flows.len();
        let mean_rtt_s = sc.flows.iter().map(|f| f.rtt_s).sum::<f64>() / n as f64;
        let end_ps = ps_from_s(sc.run.duration_s);
        let record_every_ps = sc.run.record_interval_s * event::PS_PER_S;
        let n_records = (sc.run.duration_s / sc.run.record_interval_s).floor() as usize + 1;
        let n_cols = 3 + 2 * n;

        let mut queue = EventQueue::with_capacity(4 * n + 8);
        for (i, f) in flows.iter().enumerate() {
            queue.push(f.start_ps, Event::FlowStart(i as u32));
        }
        queue.push(ps_from_s(sc.run.warmup_s), Event::WarmupEnd);
        queue.push(0, Event::Record);

        Ok(PacketEngine {
            now_ps: 0,
            end_ps,
            queue,
            capacity_pps: link.capacity_pps,
            buffer_slots,
            service,
            service_ps,
            bottleneck: VecDeque::with_capacity(buffer_slots.min(RING_PRESIZE_LIMIT << 4)),
            red,
            random_loss: link.loss_rate,
            // Stream 3000 + link: the packet engine's per-link randomness (random loss, RED).
            rng: Rng::new(sc.run.seed, 3000),
            idle_since_ps: 0,
            acc: LinkAcc::default(),
            queue_changed_ps: 0,
            q_max: 0,
            interval_departed: 0,
            tau_ps: ps_from_s(mean_rtt_s),
            cluster: Cluster {
                active: false,
                start_ps: 0,
                last_ps: 0,
                measured: false,
                candidates: 0,
                lost: vec![false; n],
                lost_list: Vec::with_capacity(n),
            },
            started_flows: 0,
            events: 0,
            sync_sum: 0.0,
            sync_hist: vec![0; n + 1],
            event_log: Vec::new(),
            drop_log: Vec::new(),
            warm: false,
            measuring: false,
            measured_from_ps: 0,
            start_link: LinkAcc::default(),
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
            Event::ServiceDone => self.on_service_done(),
            Event::AckArrival(f) => self.on_ack_arrival(f as usize),
            Event::Rto { flow, gen } => self.on_timer(flow as usize, gen),
            Event::FlowStart(f) => {
                let f = f as usize;
                self.flows[f].sender.start(self.now_ps);
                self.started_flows += 1;
                self.send(f);
            }
            Event::Pace(f) => {
                self.flows[f as usize].pace_pending = false;
                self.send(f as usize);
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
            fl.access_free_ps = fl.access_free_ps.max(now) + fl.access.next_ps();
            let at = fl.access_free_ps + fl.fwd_delay_ps;
            if fl.fwd.is_empty() {
                self.queue.push(at, Event::DataArrival(f as u32));
            }
            fl.fwd.push_back((
                at,
                Packet {
                    flow: f as u32,
                    seq: seg.seq,
                    sent_ps: now,
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

    /// Adds the queue's occupancy over the time since its last change.
    fn integrate_queue(&mut self) {
        let dt = self.now_ps - self.queue_changed_ps;
        self.acc.queue_area += self.bottleneck.len() as u128 * dt as u128;
        self.queue_changed_ps = self.now_ps;
    }

    fn on_data_arrival(&mut self, f: usize) {
        let now = self.now_ps;
        let fl = &mut self.flows[f];
        let (_, pkt) = fl.fwd.pop_front().expect("a scheduled arrival");
        if let Some(&(next, _)) = fl.fwd.front() {
            self.queue.push(next, Event::DataArrival(f as u32));
        }
        self.acc.arrived += 1;
        let q = self.bottleneck.len();
        let mut drop = self.random_loss > 0.0 && self.rng.uniform() < self.random_loss;
        if !drop {
            if let Some(red) = &mut self.red {
                if q == 0 {
                    // Floyd & Jacobson 1993 §4: over an idle period the average decays as if
                    // m = idle / (packet time) empty-queue samples had been taken.
                    let m = (now - self.idle_since_ps) as f64 / self.service_ps as f64;
                    red.avg_pkts *= (1.0 - red.weight).powf(m);
                } else {
                    red.avg_pkts += red.weight * (q as f64 - red.avg_pkts);
                }
                let p = red.law.probability(red.avg_pkts);
                drop = p > 0.0 && self.rng.uniform() < p;
            }
        }
        if drop || q >= self.buffer_slots {
            self.on_drop(pkt.flow as usize);
            return;
        }
        self.integrate_queue();
        self.bottleneck.push_back(pkt);
        self.q_max = self.q_max.max(q + 1);
        if q == 0 {
            let t = self.service.next_ps();
            self.queue.push(now + t, Event::ServiceDone);
        }
    }

    fn on_service_done(&mut self) {
        let now = self.now_ps;
        self.integrate_queue();
        let pkt = self.bottleneck.pop_front().expect("a packet in service");
        self.acc.departed += 1;
        self.interval_departed += 1;
        if self.bottleneck.is_empty() {
            self.idle_since_ps = now;
        } else {
            let t = self.service.next_ps();
            self.queue.push(now + t, Event::ServiceDone);
        }
        // The receiver sits right behind the bottleneck.
        let f = pkt.flow as usize;
        let fl = &mut self.flows[f];
        let before = fl.receiver.delivered_pkts();
        let cum = fl.receiver.on_data(pkt.seq);
        fl.interval_delivered += fl.receiver.delivered_pkts() - before;
        let at = now + fl.rev_delay_ps;
        if fl.rev.is_empty() {
            self.queue.push(at, Event::AckArrival(f as u32));
        }
        fl.rev.push_back((
            at,
            Ack {
                cum,
                sacked: pkt.seq,
                echo_ps: pkt.sent_ps,
            },
        ));
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

    /// A bottleneck drop: counted, logged, clustered into congestion events, and (with
    /// `from_first_congestion`) the first one after the warm-up starts the statistics.
    fn on_drop(&mut self, f: usize) {
        let now = self.now_ps;
        self.acc.dropped += 1;
        self.flows[f].dropped += 1;
        if self.drop_log.len() < DROP_LOG_LIMIT {
            self.drop_log.push((s_from_ps(now), f));
        }
        if self.warm && !self.measuring {
            self.measuring = true;
            self.start_measuring();
        }
        let c = &self.cluster;
        if !(c.active && now - c.last_ps < self.tau_ps) {
            if c.active {
                self.close_cluster();
            }
            let c = &mut self.cluster;
            c.active = true;
            c.start_ps = now;
            c.measured = self.warm;
            c.candidates = self.started_flows;
        }
        let c = &mut self.cluster;
        c.last_ps = now;
        if !c.lost[f] {
            c.lost[f] = true;
            c.lost_list.push(f as u32);
        }
    }

    fn close_cluster(&mut self) {
        let c = &mut self.cluster;
        c.active = false;
        let lost = c.lost_list.len();
        for &f in &c.lost_list {
            c.lost[f as usize] = false;
        }
        c.lost_list.clear();
        if !c.measured {
            return;
        }
        self.events += 1;
        if c.candidates > 0 {
            self.sync_sum += lost as f64 / c.candidates as f64;
        }
        self.sync_hist[lost] += 1;
        if self.event_log.len() < EVENT_LOG_LIMIT {
            self.event_log.push(EventRecord {
                link: 0,
                start_s: s_from_ps(c.start_ps),
                candidates: c.candidates,
                signalled: 0,
                lost: lost as u32,
            });
        }
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
        self.integrate_queue();
        self.measured_from_ps = self.now_ps;
        self.start_link = self.acc;
        self.q_max = self.bottleneck.len();
        for f in 0..self.flows.len() {
            self.start_flows[f] = self.flow_acc(f);
        }
    }

    fn record(&mut self) {
        let now = self.now_ps;
        let span_s = s_from_ps(now - self.last_record_ps);
        let cap = self.capacity_pps;
        let mut cols = self.series.iter_mut();
        let mut push = |v: f64| cols.next().expect("one column per value").push(v);
        push(s_from_ps(now));
        push(self.bottleneck.len() as f64);
        push(if span_s > 0.0 {
            self.interval_departed as f64 / (cap * span_s)
        } else {
            f64::NAN
        });
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
        self.interval_departed = 0;
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
        self.integrate_queue();
        if self.cluster.active {
            self.close_cluster();
        }
        let now = self.now_ps;
        let from = self.measured_from_ps;
        let span_s = s_from_ps(now - from);
        let per = |v: f64| if span_s > 0.0 { v / span_s } else { 0.0 };
        let cap = self.capacity_pps;
        let flow_now: Vec<FlowAcc> = (0..self.flows.len()).map(|f| self.flow_acc(f)).collect();

        let sc = &self.scenario;
        let spec = &sc.links[0];
        let s = &self.start_link;
        let arrived = self.acc.arrived - s.arrived;
        let mean_q = if now > from {
            (self.acc.queue_area - s.queue_area) as f64 / (now - from) as f64
        } else {
            0.0
        };
        let link = LinkSummary {
            name: spec.name.clone(),
            capacity_bps: spec.capacity_bps,
            buffer_pkts: spec.buffer_pkts,
            utilization: per((self.acc.departed - s.departed) as f64) / cap,
            loss_rate: if arrived > 0 {
                (self.acc.dropped - s.dropped) as f64 / arrived as f64
            } else {
                0.0
            },
            mean_queue_pkts: mean_q,
            max_queue_pkts: self.q_max as f64,
            mean_queueing_delay_s: mean_q / cap,
            max_queueing_delay_s: self.q_max as f64 / cap,
            congestion_events: self.events,
            sync_rate_mean: if self.events > 0 {
                self.sync_sum / self.events as f64
            } else {
                f64::NAN
            },
            sync_histogram: self.sync_hist.clone(),
            arrivals_pkts: self.acc.arrived as f64,
            departures_pkts: self.acc.departed as f64,
            drops_pkts: self.acc.dropped as f64,
            queue_start_pkts: 0.0,
            queue_end_pkts: self.bottleneck.len() as f64,
        };
        let flows: Vec<FlowSummary> = flow_now
            .iter()
            .zip(&self.start_flows)
            .zip(&sc.flows)
            .enumerate()
            .map(|(i, ((a, s), spec))| {
                let pps = per((a.delivered - s.delivered) as f64);
                let sent = a.sent - s.sent;
                FlowSummary {
                    flow: i,
                    group: spec.group_name.clone(),
                    variant: spec.variant.clone(),
                    rtt_s: spec.rtt_s,
                    throughput_pps: pps,
                    throughput_bps: pps * 8.0 * sc.links[0].packet_size_bytes,
                    loss_rate: if sent > 0 {
                        (a.dropped - s.dropped) as f64 / sent as f64
                    } else {
                        0.0
                    },
                    mean_cwnd_pkts: per(a.cwnd_integral_pkt_s - s.cwnd_integral_pkt_s),
                    reductions: (a.reductions - s.reductions) as f64,
                }
            })
            .collect();
        let totals = RunTotals {
            engine: "packet",
            duration_s: s_from_ps(now),
            // No time step: the bottleneck's packet time is the natural unit.
            step_s: s_from_ps(self.service_ps),
            measured_from_s: s_from_ps(from),
            flow_updates: self.events_processed,
        };
        let summary = Summary::new(sc, totals, vec![link], flows);
        let series = Series::standard(sc, self.series);
        RunResult {
            summary,
            series,
            events: self.event_log,
        }
    }
}
