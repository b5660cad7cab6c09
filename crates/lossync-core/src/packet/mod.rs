//! The packet engine: a deterministic discrete-event simulation of TCP flows, packet by packet,
//! in integer picoseconds (docs/model.md §7; a link is a queue plus a pipe, as in htsim).
//!
//! The network is a [`Topology`]: elements of a few kinds, and per flow a data route and an ACK
//! route through them ([`route`]). As in htsim, a link is a queue plus a pipe: a [`port::Port`]
//! (queue discipline, FIFO, serialization at the link's rate) followed by a [`pipe::Pipe`]
//! (propagation delay). Hosts reach the network through an [`access::Access`] link (a lossless
//! serializer). Other element kinds are [`node::Node`]s: the optical burst assembler
//! ([`assembler`]) sits at the ingress of a link with `assembler`, on the data route of every
//! flow crossing it, and loses whole bursts with the link's `burst_loss`. A packet carries its
//! flow, whether it is an ACK, and its position on its route; when an element releases it,
//! [`PacketEngine::forward`] moves it to the next hop. The sender and the receiver are the
//! routes' end points. Events are per element (a pipe's head leaves, a port ends a service, a
//! node's timer) or per flow (start, RTO, pacing, delayed ACK).
//!
//! [`topology::build`] builds the network the scenario describes, any graph of links: per link a
//! port and a pipe (its delay, between that port and the next one on a route), per flow an access
//! link and two pipes of its own for the rest of its base RTT, a data route through the ports of
//! its path and an ACK route through the ports of its ACK path (see there for the RTT budget).
//! Cross traffic enters and leaves mid-path by its own route: a port serves whatever reaches it,
//! FIFO. The dumbbell is the one-link case. Each port holds at most `B = round(buffer_pkts)`
//! packets *including the one in service* (at least one, so a bufferless link can still serve);
//! data and ACKs alike take a slot, in packets as in ns-2 and ns-3's packet mode. Drop-tail, or
//! RED on every arrival (Floyd & Jacobson 1993: EWMA of the occupancy with weight w, decayed over
//! idle time; the drop probability of [`crate::queue::red::Red::probability`], applied
//! independently per arrival, without the count-based spacing of the original). The link's
//! random `loss_rate` drops data arrivals before the queue. `loss.model` (the fluid engine's
//! synchronization module) does not apply here: drops are real.
//!
//! Two-way traffic: with `reverse` on a link (or a flow group with `direction = "reverse"`) the
//! way back is the link's other direction, a port of its own; forward flows' ACKs queue there
//! behind reverse flows' data, and reverse flows' ACKs queue in the forward port. Without it the
//! way back is a pure delay (ACKs never queue or drop).
//!
//! A pipe keeps its packets in its own FIFO ring and schedules only its head, and an access link
//! needs no event at all (it knows each packet's exit time on entry): the event heap holds a few
//! entries per element, not one per packet in flight. On the dumbbell there are three events per
//! data packet (arrival at the bottleneck, end of service, ACK at the sender), one more per ACK
//! that crosses a reverse port; each further port on a route adds two (its end of service, and
//! the head leaving the pipe that leads to it, unless the link has no delay). After the rings have grown to the largest window, nothing is
//! allocated per packet (the drop log grows per drop, up to [`DROP_LOG_LIMIT`]).
//!
//! Senders: [`sender`] (SACK recovery, RFC 6675; RTO, RFC 6298; the variant's law per ACK;
//! optional pacing). Receivers: [`receiver`] (an ACK per packet, or delayed ACKs).
//! Dynamic traffic: a flow group with `arrivals` is a pool of slots whose flows arrive, send
//! their size and finish ([`dynamic`]); a slot is reused once none of its packets is in the
//! network (a count per connection), so late packets never reach its next flow.
//!
//! Not modelled in this version: ECN, routing that changes during a run.

pub mod access;
pub mod assembler;
pub mod contention;
pub mod dynamic;
pub mod event;
pub mod node;
pub mod pipe;
pub mod port;
pub mod receiver;
mod ring;
pub mod route;
pub mod sender;
pub mod topology;

use crate::cc::{CcParams, LAW_STREAM};
use crate::error::{Error, Result};
use crate::metrics::{
    self, AggregateSample, ArrivalRecord, CompletionRecord, DropClusters, FlowRecord, LinkRecord,
    Records, RunResult,
};
use crate::queue::{Buffer, Header, Verdict};
use crate::scenario::{Pacing, Scenario};
use access::Access;
use event::{ps_from_s, s_from_ps, Event, EventQueue, SimTime};
use node::{Action, Actions, Node};
use pipe::Pipe;
use port::{Admit, Port, PortAcc};
use receiver::Receiver;
use route::{Hop, Pkt, RouteTable};
use sender::{Ack, Sender};
pub use topology::Topology;

/// At most this many drops are kept in the drop log (all are counted).
pub const DROP_LOG_LIMIT: usize = 4_000_000;
/// Refuse runs whose buffers plus largest plausible windows exceed this many packet slots.
const MAX_PACKET_SLOTS: f64 = (1u64 << 27) as f64;

#[derive(Debug, Clone, Copy, Default)]
struct FlowAcc {
    sent: u64,
    delivered: u64,
    dropped: u64,
    reductions: u64,
    cwnd_integral_pkt_s: f64,
}

/// A flow's end points: its sender and receiver, with their timers.
struct FlowState {
    sender: Sender,
    receiver: Receiver,
    /// Where its data route and its ACK route start in the route table.
    data_route: u32,
    ack_route: u32,
    start_ps: SimTime,
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
    /// Whether the law sets its own pacing rate (BBR): it then replaces the ratio pacing.
    law_paced: bool,
    /// Paced flows: the earliest time of the next send, and whether a `Pace` event is pending.
    pace_next_ps: SimTime,
    pace_pending: bool,
    /// Its packets (data and ACKs) in the network: a dynamic flow's slot is free again only at 0.
    in_net: u32,
    /// Data packets that reached its receiver, duplicates included.
    received: u64,
    /// Dynamic traffic: what the slot is doing, and its current flow.
    phase: Phase,
    slot: SlotFlow,
}

/// A connection's phase: a persistent flow's, or a dynamic slot's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
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
struct SlotFlow {
    /// Index of its group in `PacketEngine::dynamic`.
    group: u32,
    size_bytes: f64,
    /// `u64::MAX` for a persistent flow (never complete).
    size_pkts: u64,
    arrived_ps: SimTime,
    done_ps: SimTime,
    base_sent: u64,
    base_received: u64,
    base_delivered: u64,
    base_dropped: u64,
}

/// What the packet engine refuses in a valid scenario, checked without building anything:
/// `PacketEngine::new` and `lossync validate`.
pub fn check(sc: &Scenario) -> Result<()> {
    check_no_imposed_m(sc)?;
    check_slots(sc)?;
    check_memory(sc)
}

/// A lost burst here holds the flows whose segments it carries: a distribution of them to draw
/// from (`assembler.m_distribution`) is the fluid engine's stand-in for that, refused here.
fn check_no_imposed_m(sc: &Scenario) -> Result<()> {
    match sc
        .links
        .iter()
        .position(|l| l.assembler.as_ref().is_some_and(|a| a.m_file.is_some()))
    {
        Some(i) => Err(Error::field(
            format!("links[{i}].assembler.m_distribution"),
            "the fluid engine's (engine = \"fluid\"): the packet engine's bursts hold the flows \
             whose segments they carry",
        )),
        None => Ok(()),
    }
}

/// A packet-level run in progress. Build with [`PacketEngine::new`] (the scenario's network)
/// or [`PacketEngine::with_topology`], drive with [`PacketEngine::advance`], then
/// [`PacketEngine::finish`].
pub struct PacketEngine {
    scenario: Scenario,
    now_ps: SimTime,
    end_ps: SimTime,
    queue: EventQueue,
    flows: Vec<FlowState>,
    // The network (a `Topology`, taken apart so that elements borrow separately).
    access: Vec<Access>,
    pipes: Vec<Pipe>,
    /// One per link of the scenario, in order.
    ports: Vec<Port>,
    nodes: Vec<Box<dyn Node>>,
    routes: RouteTable,
    /// Spare action lists for nodes (one per nesting level; reused).
    spare_actions: Vec<Actions>,
    /// Per port: its drops grouped into congestion events (a metric; fed as drops happen).
    clusters: Vec<DropClusters>,
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
    /// Per port: its data serialization time at the last sample.
    last_record_busy_ps: Vec<u64>,
    series: Vec<Vec<f64>>,
    /// The aggregate Σ cwnd/RTT: its interval (0: off), samples taken, samples.
    aggregate_every_ps: f64,
    aggregate_taken: u64,
    aggregate: Vec<AggregateSample>,
    events_processed: u64,
    /// Dynamic traffic: per group with arrivals, its process and free slots.
    dynamic: Vec<dynamic::Group>,
    completions: Vec<CompletionRecord>,
}

/// Refuses a run whose buffers and packets in flight would need more than
/// [`MAX_PACKET_SLOTS`], naming the field to change.
fn check_slots(sc: &Scenario) -> Result<()> {
    let slots = Slots::of(sc);
    let all_buffers: f64 = slots.buffers.iter().sum();
    let total = all_buffers + slots.in_flight;
    if total > MAX_PACKET_SLOTS {
        let field = if all_buffers > MAX_PACKET_SLOTS / 2.0 {
            format!("links[{}].buffer", largest_buffer(sc, &slots))
        } else {
            let g = sc
                .flows
                .iter()
                .max_by(|a, b| slots.of_flow(sc, a).total_cmp(&slots.of_flow(sc, b)))
                .map_or(0, |f| f.group);
            format!("flows[{g}].rwnd")
        };
        return Err(Error::field(
            field,
            format!(
                "the packet engine would need about {total:.3e} packet slots (the buffer plus \
                 up to 2·(C·RTT + B) in flight), more than 2^27: lower the capacity, RTT or \
                 buffer, or cap the windows with rwnd"
            ),
        ));
    }
    Ok(())
}

/// The given link (not a reverse direction) with the largest buffer, the first of equals.
fn largest_buffer(sc: &Scenario, slots: &Slots) -> usize {
    (0..slots.buffers.len())
        .filter(|&l| sc.links[l].reverse_of.is_none())
        .fold(0, |a, l| {
            if slots.buffers[l] > slots.buffers[a] {
                l
            } else {
                a
            }
        })
}

/// Packets a run may hold: each link's buffer (its slots), and the packets in flight.
struct Slots {
    /// Per link, its buffer in whole packets (in floating point: a buffer of 10^13 packets
    /// must not overflow a sum).
    buffers: Vec<f64>,
    /// Packets in flight, all flows together: each flow at most twice its link's capacity in
    /// flight plus the buffer (a slow-start overshoot) plus its initial window, and never more
    /// than its receive window; all of them at most twice each link's pipe and buffer at the
    /// largest RTT plus the initial windows.
    in_flight: f64,
}

impl Slots {
    fn of(sc: &Scenario) -> Slots {
        let buffers: Vec<f64> = sc
            .links
            .iter()
            .map(|l| Buffer::new(l.buffer_pkts).slots as f64)
            .collect();
        let mut slots = Slots {
            buffers,
            in_flight: 0.0,
        };
        let max_rtt_s = sc.flows.iter().map(|f| f.rtt_s).fold(0.0, f64::max);
        let iw_sum: f64 = sc.flows.iter().map(|f| f.initial_window_pkts).sum();
        let pipe_limit: f64 = sc
            .links
            .iter()
            .zip(&slots.buffers)
            .map(|(l, &b)| 2.0 * (l.capacity_pps * max_rtt_s + b))
            .sum();
        slots.in_flight = sc
            .flows
            .iter()
            .map(|f| slots.of_flow(sc, f))
            .sum::<f64>()
            .min(pipe_limit + iw_sum);
        slots
    }

    fn of_flow(&self, sc: &Scenario, f: &crate::scenario::Flow) -> f64 {
        let l = &sc.links[f.path[0]];
        (2.0 * (l.capacity_pps * f.rtt_s + self.buffers[f.path[0]]) + f.initial_window_pkts)
            .min(f.rwnd_pkts)
    }
}

/// The most a law adds to a window in one RTT beyond doubling it (the overshoot the bound of
/// [`Slots`] allows), with the parameter that sets it: Reno's `a` packets per RTT, BIC's
/// `s_max`. The other laws grow by at most the window per RTT (CUBIC's target is at most
/// 1.5·cwnd, Scalable's `a` ≤ 1 per ACK, HighSpeed's a(w) < w).
fn law_burst(cc: &CcParams) -> (f64, &'static str) {
    match cc {
        CcParams::Reno(p) => (p.a, "a"),
        CcParams::Bic(p) => (p.s_max, "s_max"),
        _ => (0.0, ""),
    }
}

/// Bytes of a law's state, boxed (the largest, gHSTCP's, with its round statistics).
const LAW_BYTES: f64 = 512.0;

/// What a packet-engine run would allocate, estimated from its scenario before anything is, and
/// the field that would change it most.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryEstimate {
    pub bytes: f64,
    pub field: String,
    /// What the largest part is.
    pub what: String,
}

/// Estimates the memory of a run on the scenario's network ([`PacketEngine::new`]): per
/// connection its state, its law, its pipes' rings, scoreboard and receive bitmap as pre-sized
/// ([`topology::ring_hint`]); every port's queue as large as its buffer, and its pipe's ring
/// as pre-sized; the packets in flight
/// (a pipe ring slot each way, a scoreboard byte and a bitmap bit); the time series; the drop
/// log.
pub fn memory_estimate(sc: &Scenario) -> MemoryEstimate {
    use std::mem::size_of;
    let n = sc.flows.len() as f64;
    let ring_slot = size_of::<(SimTime, Pkt)>() as f64;
    // Per connection: its state and snapshots, its law, the retransmission FIFO (64 entries),
    // its routes' hops and pipes, its events (a few in the heap), its mark in each port's drop
    // clusters.
    let per_connection = size_of::<FlowState>() as f64
        + LAW_BYTES
        + 64.0 * size_of::<(u64, u64)>() as f64
        + 2.0 * size_of::<FlowAcc>() as f64
        + 16.0 * size_of::<Hop>() as f64
        + 2.0 * size_of::<Pipe>() as f64
        + size_of::<Access>() as f64
        + 8.0 * 32.0
        + sc.links.len() as f64 * (size_of::<bool>() + size_of::<u32>()) as f64;
    let rings: f64 = sc
        .flows
        .iter()
        .map(|f| {
            let hint = topology::ring_hint(sc, f).max(64);
            let pow2 = hint.next_power_of_two() as f64;
            // A model-based law's sender stamps every outstanding packet (sender::TxStamp), and
            // its state (BBR's, with its bandwidth filter) is larger than LAW_BYTES.
            let stamps = if f.cc.build().wants_rate_samples() {
                pow2 * sender::TX_STAMP_BYTES as f64
                    + size_of::<crate::cc::bbr::Bbr>().saturating_sub(LAW_BYTES as usize) as f64
            } else {
                0.0
            };
            2.0 * hint as f64 * ring_slot + pow2 + pow2 / 8.0 + stamps
        })
        .sum();
    let connections = n * per_connection + rings;
    // A pipe per link, pre-sized to the link's packets in flight over its delay.
    let link_pipes: f64 = sc
        .links
        .iter()
        .map(|l| {
            let hint =
                ((l.capacity_pps * l.delay_s) as usize).clamp(64, topology::RING_PRESIZE_LIMIT);
            size_of::<Pipe>() as f64 + hint as f64 * ring_slot
        })
        .sum();

    let slots = Slots::of(sc);
    let buffers: f64 = slots.buffers.iter().sum::<f64>() * size_of::<Pkt>() as f64;

    // In flight, with one RTT of the laws' own increase on top.
    let bursts: Vec<f64> = sc
        .flows
        .iter()
        .map(|f| law_burst(&f.cc).0.min(f.rwnd_pkts))
        .collect();
    let burst_sum: f64 = bursts.iter().sum();
    let in_flight_pkts = slots.in_flight + burst_sum;
    let in_flight = in_flight_pkts * (2.0 * ring_slot + 2.0 + 0.25);

    let n_records = (sc.run.duration_s / sc.run.record_interval_s).floor() + 1.0;
    let n_cols = 1.0 + 2.0 * sc.links.len() as f64 + 2.0 * n;
    let series = n_records * n_cols * 8.0;
    let drop_log = DROP_LOG_LIMIT as f64 * size_of::<(f64, usize)>() as f64;

    // Dynamic traffic: a record per finished flow.
    let completions = expected_arrivals(sc) * size_of::<CompletionRecord>() as f64;
    let bytes = connections + link_pipes + buffers + in_flight + series + drop_log + completions;
    let largest = connections
        .max(buffers)
        .max(in_flight)
        .max(series)
        .max(completions);
    let (field, what) = if largest == completions {
        let g = metrics::dynamic_groups(sc)
            .first()
            .map_or(0, |&i| sc.flows[i].group);
        (
            format!("flows[{g}].arrivals.rate"),
            format!("records of {:.3e} finished flows", expected_arrivals(sc)),
        )
    } else if largest == series {
        (
            "run.record_interval".to_string(),
            format!("a time series of {n_records} samples of {n_cols} columns"),
        )
    } else if largest == connections {
        // The group with the most connections, and the setting that multiplies them.
        let groups = sc.flows.last().map_or(0, |f| f.group + 1);
        let mut conns = vec![0usize; groups];
        let mut logical = vec![0usize; groups];
        for (i, f) in sc.flows.iter().enumerate() {
            conns[f.group] += 1;
            if i == 0 || sc.flows[i - 1].logical != f.logical {
                logical[f.group] += 1;
            }
        }
        let g = (0..groups)
            .max_by_key(|&g| (conns[g], usize::MAX - g))
            .unwrap_or(0);
        let dynamic = sc
            .flows
            .iter()
            .any(|f| f.group == g && f.arrivals.is_some());
        let setting = if dynamic {
            "arrivals.max_active"
        } else if conns[g] > logical[g] {
            "parallel"
        } else {
            "count"
        };
        (
            format!("flows[{g}].{setting}"),
            format!("the state of {n} connections ({} in flows[{g}])", conns[g]),
        )
    } else if largest == buffers {
        let l = (0..slots.buffers.len())
            .max_by(|&a, &b| slots.buffers[a].total_cmp(&slots.buffers[b]))
            .unwrap_or(0);
        (
            format!("links[{l}].buffer"),
            format!(
                "queues for {:.3e} packets of buffer",
                slots.buffers.iter().sum::<f64>()
            ),
        )
    } else if burst_sum > slots.in_flight {
        let i = (0..bursts.len())
            .max_by(|&a, &b| bursts[a].total_cmp(&bursts[b]))
            .unwrap_or(0);
        let f = &sc.flows[i];
        (
            format!("flows[{}].cc.{}", f.group, law_burst(&f.cc).1),
            format!(
                "{in_flight_pkts:.3e} packets in flight: the law may add {:.3e} packets per RTT",
                bursts[i]
            ),
        )
    } else {
        let all_buffers: f64 = slots.buffers.iter().sum();
        let field = if all_buffers > slots.in_flight / 2.0 {
            let l = (0..slots.buffers.len())
                .max_by(|&a, &b| slots.buffers[a].total_cmp(&slots.buffers[b]))
                .unwrap_or(0);
            format!("links[{l}].buffer")
        } else {
            let g = sc
                .flows
                .iter()
                .max_by(|a, b| slots.of_flow(sc, a).total_cmp(&slots.of_flow(sc, b)))
                .map_or(0, |f| f.group);
            format!("flows[{g}].rwnd")
        };
        (
            field,
            format!("{in_flight_pkts:.3e} packets in flight, up to 2·(C·RTT + B) per link"),
        )
    };
    MemoryEstimate { bytes, field, what }
}

/// Flows a run's dynamic groups are expected to start: a Poisson count, mean plus 5σ.
fn expected_arrivals(sc: &Scenario) -> f64 {
    let mean: f64 = metrics::dynamic_groups(sc)
        .iter()
        .filter_map(|&i| sc.flows[i].arrivals)
        .map(|a| a.rate_per_s * sc.run.duration_s)
        .sum();
    mean + 5.0 * mean.sqrt()
}

/// Refuses a run whose [`memory_estimate`] exceeds the memory available ([`crate::memory`]).
fn check_memory(sc: &Scenario) -> Result<()> {
    let e = memory_estimate(sc);
    crate::memory::check("packet", e.bytes, &e.field, &e.what)
}

impl PacketEngine {
    /// The scenario's network of links and paths ([`topology::build`]).
    pub fn new(scenario: &Scenario) -> Result<Self> {
        check(scenario)?;
        let topology = topology::build(scenario)?;
        Self::build(scenario, topology)
    }

    /// The scenario's flows on a topology built by the caller: one route per flow and one port
    /// per link (whose statistics are the links'), checked with [`Topology::check`]; refused if
    /// the run would need more memory than the machine has ([`memory_estimate`]).
    pub fn with_topology(scenario: &Scenario, topology: Topology) -> Result<Self> {
        check_memory(scenario)?;
        Self::build(scenario, topology)
    }

    fn build(scenario: &Scenario, topology: Topology) -> Result<Self> {
        let sc = scenario.clone();
        topology.check(&sc)?;
        let Topology {
            access,
            pipes,
            ports,
            nodes,
            routes,
        } = topology;
        let n = sc.flows.len();
        let mean_rtt_s = sc.flows.iter().map(|f| f.rtt_s).sum::<f64>() / n as f64;
        // Drops less than the mean base RTT apart belong to one congestion event (docs/model.md
        // §5.3); XCP's first control interval is the same mean RTT.
        let tau_ps = ps_from_s(mean_rtt_s);
        let clusters = (0..ports.len())
            .map(|i| DropClusters::new(i, tau_ps, event::PS_PER_S, n))
            .collect();

        let routes = RouteTable::new(&routes);
        let mut dynamic = Vec::new();
        for g in metrics::dynamic_groups(&sc) {
            let f = &sc.flows[g];
            let a = f.arrivals.expect("a dynamic group");
            let slots = (g..n)
                .take_while(|&i| sc.flows[i].group == f.group)
                .map(|i| i as u32)
                .collect();
            let packet_bytes = sc.links[f.path[0]].packet_size_bytes;
            dynamic.push(dynamic::Group::new(
                f.group,
                &a,
                packet_bytes,
                sc.run.seed,
                slots,
            ));
        }
        let mut flows = Vec::with_capacity(n);
        for (i, f) in sc.flows.iter().enumerate() {
            let group = dynamic.iter().position(|d| d.group == f.group);
            let mut law = f.cc.build();
            law.seed(crate::rng::Rng::new(sc.run.seed, LAW_STREAM + i as u64));
            let law_paced = law.pacing_rate_pps().is_some();
            let hint = topology::ring_hint(&sc, f);
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
                data_route: routes.start(i, false),
                ack_route: routes.start(i, true),
                start_ps: ps_from_s(f.start_s),
                timer_pending: false,
                timer_at_ps: 0,
                timer_gen: 0,
                delack_ps: f.delayed_ack.map_or(0, |d| ps_from_s(d.timeout_s)),
                delack_gen: 0,
                dropped: 0,
                interval_delivered: 0,
                pacing: f.pacing,
                law_paced,
                pace_next_ps: 0,
                pace_pending: false,
                in_net: 0,
                received: 0,
                phase: if group.is_some() {
                    Phase::Idle
                } else {
                    Phase::Persistent
                },
                slot: SlotFlow {
                    group: group.map_or(u32::MAX, |g| g as u32),
                    size_pkts: u64::MAX,
                    ..SlotFlow::default()
                },
            });
        }
        let end_ps = ps_from_s(sc.run.duration_s);
        let record_every_ps = sc.run.record_interval_s * event::PS_PER_S;
        let n_records = (sc.run.duration_s / sc.run.record_interval_s).floor() as usize + 1;
        let n_cols = 1 + 2 * ports.len() + 2 * n + dynamic.len();

        let mut queue = EventQueue::with_capacity(4 * n + 8);
        for (i, f) in flows.iter().enumerate() {
            if f.phase == Phase::Persistent {
                queue.push(f.start_ps, Event::FlowStart(i as u32));
            }
        }
        for (g, d) in dynamic.iter_mut().enumerate() {
            let t = ps_from_s(d.draw_gap_s());
            if t <= end_ps {
                queue.push(t, Event::Arrival(g as u32));
            }
        }
        // Completions, pre-sized for the expected arrivals (capped: beyond, the list doubles).
        let completions = Vec::with_capacity(expected_arrivals(&sc).min(1e5) as usize);
        queue.push(ps_from_s(sc.run.warmup_s), Event::WarmupEnd);
        for (i, p) in ports.iter().enumerate() {
            if p.has_feedback() {
                queue.push(ps_from_s(mean_rtt_s), Event::XcpInterval(i as u32));
            }
        }
        queue.push(0, Event::Record);
        let aggregate_every_ps = sc.run.aggregate_interval_s * event::PS_PER_S;
        let n_aggregate = if aggregate_every_ps > 0.0 {
            queue.push(0, Event::Aggregate);
            (sc.run.duration_s / sc.run.aggregate_interval_s).floor() as usize + 1
        } else {
            0
        };

        Ok(PacketEngine {
            now_ps: 0,
            end_ps,
            queue,
            start_ports: vec![PortAcc::default(); ports.len()],
            last_record_busy_ps: vec![0; ports.len()],
            access,
            pipes,
            ports,
            nodes,
            routes,
            spare_actions: Vec::new(),
            clusters,
            drop_log: Vec::new(),
            warm: false,
            measuring: false,
            measured_from_ps: 0,
            start_flows: vec![FlowAcc::default(); n],
            record_every_ps,
            records: 0,
            last_record_ps: 0,
            series: (0..n_cols).map(|_| Vec::with_capacity(n_records)).collect(),
            aggregate_every_ps,
            aggregate_taken: 0,
            aggregate: Vec::with_capacity(n_aggregate),
            events_processed: 0,
            flows,
            dynamic,
            completions,
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

    /// Connection `f`'s sender (its window, its law's state), for tests and reports.
    pub fn sender(&self, f: usize) -> &Sender {
        &self.flows[f].sender
    }

    /// Packets queued at link `l`'s port now (data and ACKs).
    pub fn queue_pkts(&self, l: usize) -> usize {
        self.ports[l].len()
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
            self.prefetch_next();
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

    /// Asks for the packet the next event will take, while this one runs: with many independent
    /// bottlenecks the rings interleave and their heads are cache misses (ring.rs).
    #[inline(always)]
    fn prefetch_next(&self) {
        match self.queue.peek() {
            Some(
                Event::PipeToQueue(p)
                | Event::PipeToReceiver(p)
                | Event::PipeToSender(p)
                | Event::PipeHead(p),
            ) => self.pipes[p as usize].prefetch_head(),
            Some(Event::ServiceDone(p)) => self.ports[p as usize].prefetch_head(),
            _ => {}
        }
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::PipeToQueue(p) => {
                let pkt = self.pipe_pop(p);
                let i = pkt.at + 1;
                let Hop::Queue { port, class } = self.routes.hop_at(i) else {
                    unreachable!("scheduled as bound for a port")
                };
                self.arrive(port as usize, class, pkt.at_hop(i));
            }
            Event::PipeToReceiver(p) => {
                let pkt = self.pipe_pop(p);
                self.at_receiver(&pkt);
            }
            Event::PipeToSender(p) => {
                let pkt = self.pipe_pop(p);
                let (f, ack) = Self::ack_of(&pkt);
                self.ack_at_sender(f, ack);
            }
            Event::PipeHead(p) => {
                let pkt = self.pipe_pop(p);
                self.forward(pkt, self.now_ps);
            }
            Event::ServiceDone(p) => self.on_service_done(p as usize),
            Event::Rto { flow, gen } => self.on_timer(flow as usize, gen),
            Event::DelAck { flow, gen } => {
                let fl = &mut self.flows[flow as usize];
                if gen == fl.delack_gen {
                    if let Some(ack) = fl.receiver.flush() {
                        self.send_ack(flow as usize, ack);
                    }
                }
            }
            Event::FlowStart(f) => self.start_flow(f as usize),
            Event::Pace(f) => {
                self.flows[f as usize].pace_pending = false;
                self.send(f as usize);
                self.maybe_release(f as usize);
            }
            Event::Arrival(g) => self.on_arrival(g as usize),
            Event::NodeTimer { node, token } => {
                let now = self.now_ps;
                self.node_call(node, |n, out| n.timer(now, token, out));
            }
            Event::XcpInterval(p) => {
                if let Some(d) = self.ports[p as usize].end_interval() {
                    self.queue
                        .push(self.now_ps + ps_from_s(d), Event::XcpInterval(p));
                }
            }
            Event::Record => self.record(),
            Event::Aggregate => self.sample_aggregate(),
            Event::WarmupEnd => {
                self.warm = true;
                self.start_measuring();
                // Nodes count from the warm-up's end, as the ports' congestion events do.
                for node in &mut self.nodes {
                    node.start_measuring(self.now_ps);
                }
                self.measuring = !self.scenario.run.from_first_congestion;
            }
        }
    }

    /// Moves `pkt`, released at time `at` by the element at its position, to the next hop of its
    /// route. `at` is now, except after an access link, which hands a packet on at the future
    /// time it leaves; a pipe takes it from there. Inlined: the hops that do much are calls.
    #[inline(always)]
    fn forward(&mut self, pkt: Pkt, mut at: SimTime) {
        let mut i = pkt.at + 1;
        match self.routes.hop_at(i) {
            Hop::Access(a) => {
                // An access link leads to a pipe (or another access link, checked by
                // `Route::check`): step there without a dispatch (a two-way branch).
                at = self.access[a as usize].pass(at);
                loop {
                    i += 1;
                    match self.routes.hop_at(i) {
                        Hop::Pipe(p) => return self.enter_pipe(p, pkt, i, at),
                        Hop::Access(a) => at = self.access[a as usize].pass(at),
                        _ => unreachable!("an access link leads to a pipe"),
                    }
                }
            }
            Hop::Pipe(p) => self.enter_pipe(p, pkt, i, at),
            Hop::Queue { port, class } => {
                debug_assert_eq!(at, self.now_ps, "a port receives packets now");
                self.arrive(port as usize, class, pkt.at_hop(i));
            }
            Hop::Receiver => self.at_receiver(&pkt),
            Hop::Sender => {
                let (f, ack) = Self::ack_of(&pkt);
                self.ack_at_sender_call(f, ack);
            }
            Hop::Node(n) => {
                debug_assert_eq!(at, self.now_ps, "a node receives packets now");
                self.at_node(n, pkt.at_hop(i));
            }
        }
    }

    /// `pkt` enters pipe `p`, route position `i`, at `at`.
    #[inline(always)]
    fn enter_pipe(&mut self, p: u32, pkt: Pkt, i: u32, at: SimTime) {
        if let Some(exit) = self.pipes[p as usize].enter(at, pkt.at_hop(i)) {
            let ev = self.pipe_event(p, i);
            self.queue.push(exit, ev);
        }
    }

    /// The head of pipe `p` leaves it; the next one, if any, is scheduled.
    #[inline(always)]
    fn pipe_pop(&mut self, p: u32) -> Pkt {
        let (pkt, next) = self.pipes[p as usize].pop();
        if let Some((t, at)) = next {
            let ev = self.pipe_event(p, at);
            self.queue.push(t, ev);
        }
        pkt
    }

    /// The event that takes the head of pipe `p`, at route position `at`, out of it: named by
    /// the kind of its next hop when that is a port, a receiver or a sender.
    #[inline(always)]
    fn pipe_event(&self, p: u32, at: u32) -> Event {
        match self.routes.hop_at(at + 1) {
            Hop::Queue { .. } => Event::PipeToQueue(p),
            Hop::Receiver => Event::PipeToReceiver(p),
            Hop::Sender => Event::PipeToSender(p),
            _ => Event::PipeHead(p),
        }
    }

    /// A data packet reaches the end of its route.
    #[inline(always)]
    fn at_receiver(&mut self, pkt: &Pkt) {
        self.deliver(pkt.flow as usize, pkt.seq, pkt.stamp_ps, pkt.feedback_pkts);
    }

    /// What an ACK packet tells its sender, and the sender's flow.
    #[inline(always)]
    fn ack_of(pkt: &Pkt) -> (usize, Ack) {
        (pkt.flow as usize, pkt.to_ack())
    }

    #[cold]
    #[inline(never)]
    fn at_node(&mut self, n: u32, pkt: Pkt) {
        let now = self.now_ps;
        self.node_call(n, |node, out| node.receive(now, pkt, out));
    }

    /// Calls node `n` and applies its actions in order.
    fn node_call(&mut self, n: u32, call: impl FnOnce(&mut dyn Node, &mut Actions)) {
        let mut out = self.spare_actions.pop().unwrap_or_default();
        call(self.nodes[n as usize].as_mut(), &mut out);
        for a in out.0.drain(..) {
            match a {
                Action::Forward(pkt) => self.forward(pkt, self.now_ps),
                Action::Drop(pkt) => {
                    if !pkt.is_ack {
                        self.on_drop(None, pkt.flow as usize);
                    } else {
                        self.gone(pkt.flow as usize);
                    }
                }
                Action::Timer { at_ps, token } => {
                    let at = at_ps.max(self.now_ps);
                    self.queue.push(at, Event::NodeTimer { node: n, token });
                }
            }
        }
        self.spare_actions.push(out);
    }

    /// Puts every packet the sender may send now on its route; a paced flow sends at most one,
    /// then waits `packet bits / (ratio · cwnd · packet bits / srtt)` = `srtt/(ratio·cwnd)`, or
    /// `1/rate` at its law's own pacing rate.
    fn send(&mut self, f: usize) {
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
            let pkt = Pkt::data(f as u32, fl.data_route, seg.seq, now, header);
            let pace_next_ps = if fl.law_paced {
                s.law_pacing_rate_pps()
                    .map(|r| now + ps_from_s(1.0 / r.max(1e-3)))
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
            fl.in_net += 1;
            self.forward(pkt, now);
            if let Some(t) = pace_next_ps {
                let fl = &mut self.flows[f];
                fl.pace_next_ps = t;
                fl.pace_pending = true;
                self.queue.push(t, Event::Pace(f as u32));
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
    #[inline(never)]
    fn arrive(&mut self, p: usize, class: u32, pkt: Pkt) {
        let now = self.now_ps;
        match self.ports[p].admit(now, pkt, class) {
            Admit::Queued => {}
            Admit::Serving(t) => self.queue.push(now + t, Event::ServiceDone(p as u32)),
            Admit::Dropped if pkt.is_ack => self.gone(pkt.flow as usize),
            Admit::Dropped => self.on_drop(Some(p), pkt.flow as usize),
        }
    }

    /// Port `p` has serialized its head: it leaves (or the discipline drops it at dequeue) and
    /// the next one, if any, starts.
    fn on_service_done(&mut self, p: usize) {
        let now = self.now_ps;
        let port = &mut self.ports[p];
        let (pkt, verdict) = port.depart(now);
        if let Some(head) = port.head() {
            let Hop::Queue { class, .. } = self.routes.hop(head) else {
                unreachable!("a queued packet is at a queue hop")
            };
            let t = port.start_next(class);
            self.queue.push(now + t, Event::ServiceDone(p as u32));
        }
        if verdict != Verdict::Queued {
            if !pkt.is_ack {
                self.on_drop(Some(p), pkt.flow as usize);
            } else {
                self.gone(pkt.flow as usize);
            }
            return;
        }
        // The receiver right behind a port (the dumbbell's) gets the packet without a call.
        if let Hop::Receiver = self.routes.hop_at(pkt.at + 1) {
            let (f, fb) = (pkt.flow as usize, pkt.feedback_pkts);
            return self.deliver_inline(f, pkt.seq, pkt.stamp_ps, fb);
        }
        self.forward(pkt, now);
    }

    /// A data packet reaches its flow's receiver, which ACKs it now or arms the delayed-ACK
    /// timer.
    #[inline(never)]
    fn deliver(&mut self, f: usize, seq: u64, stamp_ps: SimTime, feedback_pkts: f32) {
        self.deliver_inline(f, seq, stamp_ps, feedback_pkts);
    }

    #[inline(always)]
    fn deliver_inline(&mut self, f: usize, seq: u64, stamp_ps: SimTime, feedback_pkts: f32) {
        let now = self.now_ps;
        let fl = &mut self.flows[f];
        fl.received += 1;
        let before = fl.receiver.delivered_pkts();
        let ack = fl.receiver.receive(seq, stamp_ps, feedback_pkts);
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
        self.gone(f);
    }

    /// One of flow `f`'s packets left the network (arrived or dropped); a draining dynamic
    /// flow's slot is freed with its last one.
    #[inline(always)]
    fn gone(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        fl.in_net -= 1;
        if fl.in_net == 0 && fl.phase == Phase::Draining {
            self.maybe_release(f);
        }
    }

    /// The receiver sends an ACK along the flow's ACK route.
    #[inline]
    fn send_ack(&mut self, f: usize, ack: Ack) {
        let fl = &mut self.flows[f];
        fl.delack_gen = fl.delack_gen.wrapping_add(1); // cancels a pending delayed-ACK timer
        let pkt = Pkt::ack(f as u32, fl.ack_route, &ack);
        fl.in_net += 1;
        self.forward(pkt, self.now_ps);
    }

    /// An ACK reaches its flow's sender, which may send more. Inlined where ACKs leave pipes
    /// ([`Event::PipeToSender`]); a call from the route walk's other sites.
    #[inline(always)]
    fn ack_at_sender(&mut self, f: usize, ack: Ack) {
        let fl = &mut self.flows[f];
        fl.in_net -= 1;
        fl.sender.on_ack(self.now_ps, ack);
        if fl.sender.snd_una() >= fl.slot.size_pkts {
            return self.flow_done(f);
        }
        self.send(f);
    }

    #[inline(never)]
    fn ack_at_sender_call(&mut self, f: usize, ack: Ack) {
        self.ack_at_sender(f, ack);
    }

    /// A data drop at port `p` (`None`: at a node): counted, logged, clustered into the port's
    /// congestion events, and (with `from_first_congestion`) the first one after the warm-up
    /// starts the statistics.
    fn on_drop(&mut self, p: Option<usize>, f: usize) {
        let now = self.now_ps;
        self.flows[f].dropped += 1;
        if self.drop_log.len() < DROP_LOG_LIMIT {
            self.drop_log.push((s_from_ps(now), f));
        }
        if self.warm && !self.measuring {
            self.measuring = true;
            self.start_measuring();
        }
        if let Some(p) = p {
            let candidates = self.ports[p].started_flows;
            self.clusters[p].drop(now, f, candidates, self.warm);
        }
        self.gone(f);
    }

    /// A dynamic flow arrives (group `g` of `dynamic`): the next arrival is drawn, then its
    /// size; it takes a free slot, or is refused if there is none.
    #[cold]
    #[inline(never)]
    fn on_arrival(&mut self, g: usize) {
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
        self.start_flow(f);
    }

    /// Flow `f` starts sending.
    fn start_flow(&mut self, f: usize) {
        self.flows[f].sender.start(self.now_ps);
        for h in self.routes.data(f) {
            if let Hop::Queue { port, .. } = *h {
                self.ports[port as usize].started_flows += 1;
            }
        }
        self.send(f);
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
            for h in self.routes.data(f) {
                if let Hop::Queue { port, .. } = *h {
                    self.ports[port as usize].started_flows -= 1;
                }
            }
        }
        self.maybe_release(f);
    }

    /// Frees a draining slot once none of its packets is in the network and no pacing event
    /// is pending: its flow's record is taken then, so that its packets add up.
    fn maybe_release(&mut self, f: usize) {
        let fl = &self.flows[f];
        if fl.phase != Phase::Draining || fl.in_net > 0 || fl.pace_pending {
            return;
        }
        let record = self.completion(f, true);
        self.completions.push(record);
        let fl = &mut self.flows[f];
        fl.phase = Phase::Idle;
        self.dynamic[fl.slot.group as usize].free.push(f as u32);
    }

    /// The record of dynamic flow `f` (completed) now.
    fn completion(&mut self, f: usize, drained: bool) -> CompletionRecord {
        let now = self.now_ps;
        let fl = &mut self.flows[f];
        let s = fl.slot;
        CompletionRecord {
            group: self.dynamic[s.group as usize].group,
            slot: f,
            start_s: s_from_ps(s.arrived_ps),
            size_bytes: s.size_bytes,
            size_pkts: s.size_pkts,
            fct_s: s_from_ps(s.done_ps - s.arrived_ps),
            sent_pkts: fl.sender.stats(now).sent_pkts - s.base_sent,
            received_pkts: fl.received - s.base_received,
            delivered_pkts: fl.receiver.delivered_pkts() - s.base_delivered,
            dropped_pkts: fl.dropped - s.base_dropped,
            drained,
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
        let span_ps = now - self.last_record_ps;
        let span_s = s_from_ps(span_ps);
        let mut cols = self.series.iter_mut();
        let mut push = |v: f64| cols.next().expect("one column per value").push(v);
        push(s_from_ps(now));
        for (port, last_busy) in self.ports.iter_mut().zip(&mut self.last_record_busy_ps) {
            port.integrate(now);
            push(port.len() as f64);
            // The time the link spent sending data over the interval: at most all of it.
            let busy = port.acc.data_busy_ps - *last_busy;
            push(if span_ps > 0 {
                busy as f64 / span_ps as f64
            } else {
                f64::NAN
            });
            *last_busy = port.acc.data_busy_ps;
        }
        for fl in &mut self.flows {
            debug_assert_eq!(fl.sender.pipe_pkts(), fl.sender.recount_pipe());
            // A free or finished dynamic slot has no window.
            push(if matches!(fl.phase, Phase::Idle | Phase::Draining) {
                0.0
            } else {
                fl.sender.cwnd_pkts()
            });
            push(if span_s > 0.0 {
                fl.interval_delivered as f64 / span_s
            } else {
                f64::NAN
            });
            fl.interval_delivered = 0;
        }
        for d in &self.dynamic {
            push(d.active as f64);
        }
        self.last_record_ps = now;
        self.records += 1;
        let next = (self.records as f64 * self.record_every_ps).round() as SimTime;
        if next <= self.end_ps {
            self.queue.push(next, Event::Record);
        }
    }

    /// One sample of Σ cwnd/srtt over the flows that have started (the seed 002 metric; the
    /// smoothed RTT holds the queueing and burstification delays, the base RTT before any
    /// sample).
    fn sample_aggregate(&mut self) {
        let now = self.now_ps;
        // Flows that are sending: a dynamic slot counts only while it carries a flow.
        let rate_pps = (self.flows.iter())
            .filter(|f| f.start_ps <= now && matches!(f.phase, Phase::Persistent | Phase::Sending))
            .map(|f| f.sender.cwnd_pkts() / f.sender.srtt_s())
            .sum();
        self.aggregate.push(AggregateSample {
            time_s: s_from_ps(now),
            rate_pps,
        });
        self.aggregate_taken += 1;
        let next = (self.aggregate_taken as f64 * self.aggregate_every_ps).round() as SimTime;
        if next <= self.end_ps {
            self.queue.push(next, Event::Aggregate);
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
                    // The data the link sent in the window, in packets: its exact sending time
                    // at the link's rate, so that a packet whose transmission straddles an edge
                    // counts for the part inside (counting departures, a whole packet, could
                    // put utilization above 1).
                    departed_pkts: s_from_ps(a.data_busy_ps - s.data_busy_ps) * port.capacity_pps,
                    dropped_pkts: (a.dropped - s.dropped) as f64,
                    // In packet·picoseconds over picoseconds: exact until the division.
                    queue_integral: (a.queue_area - s.queue_area) as f64,
                    queue_integral_span: (now - from) as f64,
                    max_queue_pkts: port.q_max as f64,
                    total_arrived_pkts: a.arrived as f64,
                    total_departed_pkts: a.departed as f64,
                    total_dropped_pkts: a.dropped as f64,
                    queue_start_pkts: 0.0,
                    queue_end_pkts: port.data_len() as f64,
                }
            })
            .collect();
        let mut events = Vec::new();
        for c in &mut self.clusters {
            c.close();
            events.append(&mut c.take());
        }
        let mut bursts = Vec::new();
        for node in &mut self.nodes {
            node.take_records(&mut bursts, &mut events);
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
        // Flows acknowledged whose last packets are still in the network.
        for f in 0..self.flows.len() {
            if self.flows[f].phase == Phase::Draining {
                let r = self.completion(f, false);
                self.completions.push(r);
            }
        }
        let arrivals = self
            .dynamic
            .iter()
            .map(|d| ArrivalRecord {
                group: d.group,
                arrivals: d.arrivals,
                refused: d.refused,
                completed: d.completed,
                active_end: d.active as u64,
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
            bursts,
            arrivals,
            completions: std::mem::take(&mut self.completions),
            aggregate: self.aggregate,
        };
        metrics::summarize(&self.scenario, records)
    }
}
