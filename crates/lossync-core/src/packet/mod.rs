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
//! Not modelled in this version: routing that changes during a run.
//!
//! A link can be traced ([`PacketEngine::trace_link`]): a node after its ports records the
//! packets leaving them ([`trace`]), written as a capture file by [`pcap`].
//!
//! This file holds the engine, its construction, the event loop and the route walk; `flows.rs`
//! the connections' end points, `records.rs` the measurements, `limits.rs` what a run is refused
//! for.

pub mod access;
pub mod assembler;
pub mod contention;
pub mod dynamic;
pub mod event;
mod flows;
mod limits;
pub mod node;
pub mod partitioned;
pub mod pcap;
pub mod pipe;
pub mod port;
pub mod receiver;
mod records;
mod ring;
pub mod route;
pub mod sender;
pub mod topology;
pub mod trace;

use crate::cc::LAW_STREAM;
use crate::error::Result;
use crate::metrics::{self, AggregateSample, CompletionRecord, DropClusters, RunResult};
use crate::scenario::Scenario;
use access::Access;
use event::{ps_from_s, s_from_ps, Event, EventQueue, SimTime};
use flows::{ect_of, FlowState, Phase, SlotFlow};
pub use limits::{check, memory_estimate, MemoryEstimate};
use limits::{check_memory, expected_arrivals};
use node::{Action, Actions, Node};
use pipe::Pipe;
use port::{Admit, Next, Port, PortAcc};
use receiver::Receiver;
use records::FlowAcc;
use route::{Hop, Pkt, RouteTable};
use sender::{Ack, Sender};
use std::sync::Arc;
pub use topology::Topology;

/// At most this many drops are kept in the drop log (all are counted).
pub const DROP_LOG_LIMIT: usize = 4_000_000;

/// A packet-level run in progress. Build with [`PacketEngine::new`] (the scenario's network)
/// or [`PacketEngine::with_topology`], drive with [`PacketEngine::advance`], then
/// [`PacketEngine::finish`].
pub struct PacketEngine {
    scenario: Arc<Scenario>,
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
    /// Per port: its data serialization time at the last sample.
    last_record_busy_ps: Vec<u64>,
    series: Vec<Vec<f64>>,
    /// The delay columns (`metrics::Records::delay_samples`), and per port its sojourn
    /// histogram's (count, sum) at the last sample (wrapping: the histogram restarts when the
    /// measurement does).
    delays: Vec<Vec<f64>>,
    last_record_sojourn: Vec<(u64, u128)>,
    /// The aggregate Σ cwnd/RTT: its interval (0: off), samples taken, samples.
    aggregate_every_ps: f64,
    aggregate_taken: u64,
    aggregate: Vec<AggregateSample>,
    events_processed: u64,
    /// Dynamic traffic: per group with arrivals, its process and free slots.
    dynamic: Vec<dynamic::Group>,
    completions: Vec<CompletionRecord>,
    /// The node that records the packets crossing a traced link (`trace_link`), if any.
    trace_node: Option<u32>,
    /// Under the partitioned scheduler: what this partition owns, and the packets it sent into
    /// other partitions' pipes this window ([`partitioned`]).
    part: Option<partitioned::Part>,
    /// Per partition, what this one sent into its pipes this window.
    outbox: Vec<Vec<partitioned::Msg>>,
}

impl PacketEngine {
    /// The scenario's network of links and paths ([`topology::build`]).
    pub fn new(scenario: &Scenario) -> Result<Self> {
        Self::shared(Arc::new(scenario.clone()))
    }

    /// As [`PacketEngine::new`], keeping the caller's scenario instead of a copy of it (a few
    /// hundred bytes per flow).
    pub fn shared(scenario: Arc<Scenario>) -> Result<Self> {
        check(&scenario)?;
        let topology = topology::build(&scenario)?;
        Self::build(scenario, topology)
    }

    /// The scenario's flows on a topology built by the caller: one route per flow and one port
    /// per link (whose statistics are the links'), checked with [`Topology::check`]; refused if
    /// the run would need more memory than the machine has ([`memory_estimate`]).
    pub fn with_topology(scenario: &Scenario, topology: Topology) -> Result<Self> {
        check_memory(scenario)?;
        Self::build(Arc::new(scenario.clone()), topology)
    }

    fn build(sc: Arc<Scenario>, topology: Topology) -> Result<Self> {
        topology.check(&sc)?;
        let Topology {
            access,
            pipes,
            ports,
            nodes,
            routes,
        } = topology;
        let n = sc.flows.len();
        // Each link's drops form congestion events with its own window (docs/model.md §5.3).
        let clusters = (0..ports.len())
            .map(|i| {
                let tau_ps = ps_from_s(metrics::events::event_window_s(&sc, i));
                DropClusters::new(i, tau_ps, event::PS_PER_S, n)
            })
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
                .with_abc_limit(ack_every)
                .with_loss_recovery(f.recovery)
                .with_loss_detection(f.loss_detection)
                .with_hystart(f.hystart, f.pacing.is_some() || law_paced)
                .with_undo(f.undo)
                .with_ecn(ect_of(f), sc.ecn_use(f)),
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
                // XCP's first control interval: the mean base RTT of the link's flows.
                queue.push(
                    ps_from_s(sc.mean_base_rtt_s(i)),
                    Event::XcpInterval(i as u32),
                );
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
            delays: (0..2 * ports.len() + n)
                .map(|_| Vec::with_capacity(n_records))
                .collect(),
            last_record_sojourn: vec![(0, 0); ports.len()],
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
            series: (0..n_cols).map(|_| Vec::with_capacity(n_records)).collect(),
            aggregate_every_ps,
            aggregate_taken: 0,
            aggregate: Vec::with_capacity(n_aggregate),
            events_processed: 0,
            flows,
            dynamic,
            completions,
            trace_node: None,
            part: None,
            outbox: Vec::new(),
            scenario: sc,
        })
    }

    /// Events due at the same picosecond run in the partitioned scheduler's order
    /// ([`event::tie_key`]) instead of the order they were scheduled: the serial run that the
    /// partitioned scheduler reproduces exactly (for tests).
    pub fn with_canonical_ties(mut self) -> Self {
        self.queue.canonical();
        self
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

    /// The scenario it runs.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
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
        if self.remote_pipe(p, pkt.at_hop(i), at) {
            return;
        }
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
        self.deliver(pkt);
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

    /// A packet reaches port `p`: queued, or dropped (a data drop is logged and clustered).
    #[inline(never)]
    fn arrive(&mut self, p: usize, class: u32, pkt: Pkt) {
        let (admit, pushed_out) = self.ports[p].admit(self.now_ps, pkt, class);
        if let Some(victim) = pushed_out {
            self.dropped(p, victim);
        }
        match admit {
            Admit::Queued => {}
            Admit::Idle => self.serve_next(p),
            Admit::Dropped => self.dropped(p, pkt),
        }
    }

    /// A packet dropped at port `p`: a data drop is logged and clustered.
    fn dropped(&mut self, p: usize, pkt: Pkt) {
        if pkt.is_ack {
            self.gone(pkt.flow as usize);
        } else {
            self.on_drop(Some(p), pkt.flow as usize);
        }
    }

    /// Idle port `p` starts its next packet, if any (the discipline may drop some first).
    #[inline]
    fn serve_next(&mut self, p: usize) {
        let now = self.now_ps;
        loop {
            match self.ports[p].next(now) {
                Next::Idle => return,
                Next::Dropped(pkt) => self.dropped(p, pkt),
                Next::Serve(t) => return self.queue.push(now + t, Event::ServiceDone(p as u32)),
            }
        }
    }

    /// Port `p` has serialized its packet: it leaves, and the next one, if any, starts.
    fn on_service_done(&mut self, p: usize) {
        let now = self.now_ps;
        let pkt = self.ports[p].depart(now);
        self.serve_next(p);
        // The receiver right behind a port (the dumbbell's) gets the packet without a call.
        if let Hop::Receiver = self.routes.hop_at(pkt.at + 1) {
            return self.deliver_inline(&pkt);
        }
        self.forward(pkt, now);
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
}
