//! The partitioned scheduler (`run.scheduler = "partitioned"`): one packet-engine run on every
//! thread it is given, by conservative parallel discrete-event simulation (Chandy and Misra,
//! "Distributed simulation: a case study in design and verification of distributed programs",
//! IEEE TSE 5(5), 1979), in the synchronous-window form of ns-3's distributed and Unison
//! schedulers (Unison, EuroSys 2024, also partitions by the topology).
//!
//! **Partitions.** The network's elements (senders, access links, ports, receivers) are grouped
//! where no pipe separates them: a host with its access link, a router's ports with the
//! receivers behind them (a link's pipe is one FIFO into the next router's ports, so those go
//! together). The groups are dealt to one partition per thread (fewer when there are fewer
//! groups with work), largest first to the least loaded ([`partition`]). A packet goes from one partition to another only through a pipe, so
//! the shortest delay of a pipe between two partitions is a lookahead L: what a partition does
//! in `[T, T + L)` reaches another no earlier than `T + L`. The partitions run each window on
//! their own threads and hand over what entered each other's pipes between windows (no null
//! messages: every partition advances to the window's end). On a dumbbell L is the shortest
//! half of a flow's own propagation; on NSFNet, the shortest link delay between routers.
//!
//! **Each partition is a whole [`PacketEngine`]** built from the scenario, which acts only on
//! what it owns: a pipe it does not own takes a message instead of the packet, and it starts
//! only its own senders. Memory is one run's per partition. At the end the records are merged by
//! owner (see [`merge`]).
//!
//! **Determinism.** Events due at the same picosecond run in an order named by the event
//! ([`tie_key`](super::event::tie_key)), not in the order they were scheduled, since partitions
//! schedule in orders of their own. Given that order the partitions compute exactly what one
//! event list would (tested against the serial scheduler with the same tie order), however the
//! network is partitioned, so the result is the same for every thread count. It is not the
//! serial scheduler's result: ties at one picosecond are common in packet runs (17 of the 20
//! packet runs of the golden table change with that order alone), and a different tie changes
//! a run from there on, to another run alike in its statistics (docs/packet.md).

use super::event::{ps_from_s, s_from_ps, Event, SimTime};
use super::route::{Hop, Pkt};
use super::PacketEngine;
use crate::error::{Error, Result};
use crate::metrics::{self, Records, RunResult};
use crate::scenario::Scenario;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What each partition owns (partition indices), shared by the partitions.
#[derive(Debug)]
pub(super) struct Owners {
    /// Per pipe: the partition it delivers into.
    pipe: Vec<u16>,
    /// Per flow: its sender's partition and its receiver's.
    sender: Vec<u16>,
    receiver: Vec<u16>,
    /// Per port (link), per node.
    port: Vec<u16>,
    node: Vec<u16>,
}

/// What one partition is.
#[derive(Debug, Clone)]
pub(super) struct Part {
    me: u16,
    owners: Arc<Owners>,
}

/// A packet entering a pipe another partition owns, at `at_ps`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Msg {
    pipe: u32,
    at_ps: SimTime,
    pkt: Pkt,
}

/// What a partition does with an event it pops.
enum Take {
    /// Not its own: dropped unseen (another partition's copy of a timer set at the start).
    Skip,
    /// Run, not counted in `flow_updates` (counted once, where the event's real work is).
    Quiet,
    Count,
}

impl PacketEngine {
    /// Whether pipe `p` is another partition's: then `pkt` goes to it as a message.
    #[inline(always)]
    pub(super) fn remote_pipe(&mut self, p: u32, pkt: Pkt, at_ps: SimTime) -> bool {
        let Some(part) = &self.part else {
            return false;
        };
        let owner = part.owners.pipe[p as usize];
        if owner == part.me {
            return false;
        }
        self.outbox[owner as usize].push(Msg {
            pipe: p,
            at_ps,
            pkt,
        });
        true
    }

    /// Whether this engine runs flow `f`'s sender (the ports' count of started flows is kept in
    /// every partition, whose unowned ports see no packets).
    pub(super) fn runs_sender(&self, f: usize) -> bool {
        self.part
            .as_ref()
            .is_none_or(|p| p.owners.sender[f] == p.me)
    }

    fn take(&self, ev: &Event) -> Take {
        let Some(part) = &self.part else {
            return Take::Count;
        };
        let (o, me) = (&part.owners, part.me);
        let own = |yes: bool| if yes { Take::Count } else { Take::Skip };
        match *ev {
            Event::FlowStart(f) if o.sender[f as usize] != me => Take::Quiet,
            Event::Record | Event::WarmupEnd if me != 0 => Take::Quiet,
            Event::XcpInterval(p) => own(o.port[p as usize] == me),
            Event::NodeTimer { node, .. } => own(o.node[node as usize] == me),
            _ => Take::Count,
        }
    }

    /// Runs this partition's events due before `until` (up to it, with `inclusive`).
    fn run_window(&mut self, until: SimTime, inclusive: bool) {
        while let Some(t) = self.queue.peek_time() {
            if t > until || (t == until && !inclusive) {
                break;
            }
            let (t, ev) = self.queue.pop().expect("peeked");
            self.now_ps = t;
            match self.take(&ev) {
                Take::Skip => continue,
                Take::Quiet => {}
                Take::Count => self.events_processed += 1,
            }
            self.dispatch(ev);
        }
        self.now_ps = self.now_ps.max(until);
    }

    /// A packet another partition sent into one of this partition's pipes.
    fn deliver_msg(&mut self, m: Msg) {
        if let Some(exit) = self.pipes[m.pipe as usize].enter(m.at_ps, m.pkt) {
            let ev = self.pipe_event(m.pipe, m.pkt.at);
            self.queue.push(exit, ev);
        }
    }
}

/// What the partitioned scheduler cannot run yet, refused naming the field: flows that come and
/// go (a slot is reused once none of its packets is left anywhere), statistics from the first
/// drop (it starts them in every partition at once), aggregate samples (a sum over every host's
/// flows) and burst assembly. (A pipe without delay is never cut: its two ends share a
/// partition, so the lookahead is never zero.)
pub fn check(sc: &Scenario) -> Result<()> {
    let refuse = |field: &str, why: &str| {
        Err(Error::field(
            field,
            format!("the partitioned scheduler {why}; run.scheduler = \"serial\" runs it"),
        ))
    };
    if let Some(f) = sc.flows.iter().find(|f| f.arrivals.is_some()) {
        return refuse(
            &format!("flows[{}].arrivals", f.group),
            "runs persistent flows only",
        );
    }
    if sc.run.from_first_congestion {
        return refuse(
            "run.from_first_congestion",
            "starts the statistics at the warm-up's end only",
        );
    }
    if sc.run.aggregate_interval_s > 0.0 {
        return refuse("run.aggregate_interval", "takes no aggregate samples");
    }
    if let Some(i) = sc.links.iter().position(|l| l.assembler.is_some()) {
        return refuse(&format!("links[{i}].assembler"), "runs no burst assembly");
    }
    // Each partition is a whole engine. There are at most as many as threads, and as groups with
    // work (a flow's sender and its receiver, a link's port): checked here, before any is built,
    // so that `validate` refuses what `run` would.
    let threads = crate::threads::threads_for(sc.run.threads).max(1);
    let n_parts = threads.min(2 * sc.flows.len() + sc.links.len()).max(1);
    crate::memory::check(
        "packet",
        super::memory_estimate(sc).bytes * n_parts as f64,
        "run.threads",
        &format!("a whole run per partition, up to {n_parts} partitions"),
    )
}

/// A packet-engine run on partitions ([the module doc](self)).
pub struct Partitioned {
    parts: Vec<Own>,
    /// Per partition, the batches of messages waiting for it (one per sender and window).
    inbox: Vec<Mutex<Vec<Vec<Msg>>>>,
    owners: Arc<Owners>,
    lookahead_ps: SimTime,
    now_ps: SimTime,
    end_ps: SimTime,
    done: bool,
    /// Every partition's drops so far, by time then flow.
    drops: Vec<(f64, usize)>,
}

impl Partitioned {
    /// The scenario's run on `run.threads` threads (every core when not given), a partition
    /// each (no more than the network has groups with work).
    pub fn shared(sc: Arc<Scenario>) -> Result<Self> {
        super::check(&sc)?;
        check(&sc)?;
        let threads = crate::threads::threads_for(sc.run.threads).max(1);
        let first = PacketEngine::shared(sc.clone())?;
        let (owners, lookahead_ps, n_parts) = partition(&first, threads);
        let mut parts = vec![Own(first)];
        for _ in 1..n_parts {
            parts.push(Own(PacketEngine::shared(sc.clone())?));
        }
        let owners = Arc::new(owners);
        for (me, Own(e)) in parts.iter_mut().enumerate() {
            e.outbox = vec![Vec::new(); n_parts];
            e.queue.canonical();
            e.part = Some(Part {
                me: me as u16,
                owners: owners.clone(),
            });
        }
        let end_ps = parts[0].0.end_ps;
        Ok(Partitioned {
            inbox: (0..n_parts).map(|_| Mutex::new(Vec::new())).collect(),
            parts,
            owners,
            lookahead_ps,
            now_ps: 0,
            end_ps,
            done: false,
            drops: Vec::new(),
        })
    }

    pub fn now_s(&self) -> f64 {
        s_from_ps(self.now_ps)
    }

    pub fn duration_s(&self) -> f64 {
        s_from_ps(self.end_ps)
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The scenario it runs.
    pub fn scenario(&self) -> &Scenario {
        self.parts[0].0.scenario()
    }

    /// Its partitions, one per thread: `run.threads`, or fewer when the network has fewer groups
    /// with work (a host, a router).
    pub fn partitions(&self) -> usize {
        self.parts.len()
    }

    /// The shortest delay between two partitions: each window's length, in seconds.
    pub fn lookahead_s(&self) -> f64 {
        s_from_ps(self.lookahead_ps)
    }

    /// Every drop so far as (time in s, flow), by time, then flow ([`PacketEngine::drop_log`]).
    pub fn drop_log(&self) -> &[(f64, usize)] {
        &self.drops
    }

    /// Runs every window up to simulated time `until_s` (or the end of the run).
    pub fn advance(&mut self, until_s: f64) {
        let until = if until_s.is_finite() {
            ps_from_s(until_s.max(0.0)).min(self.end_ps)
        } else {
            self.end_ps
        };
        if self.done || (until <= self.now_ps && until < self.end_ps) {
            return;
        }
        let (start, lookahead, end) = (self.now_ps, self.lookahead_ps, self.end_ps);
        let inbox = &self.inbox;
        // Every thread walks the same windows: deliver what reached its partition, run the
        // window, post what it sent, wait for the others.
        let work = |i: usize, e: &mut PacketEngine, barrier: Option<&SpinBarrier>| {
            let mut now = start;
            loop {
                for batch in std::mem::take(&mut *inbox[i].lock().expect("inbox")) {
                    for m in batch {
                        e.deliver_msg(m);
                    }
                }
                // Windows end before their end time; the run's last instant, `end` itself (which
                // one event list runs too), is a window of its own, after the exchange that
                // brings every packet due then.
                let (next, last) = if now < until {
                    (now.saturating_add(lookahead).min(until), false)
                } else {
                    (end, true)
                };
                e.run_window(next, last);
                // One batch per partition it sent to: one lock each, not one per packet.
                for (to, out) in e.outbox.iter_mut().enumerate() {
                    if !out.is_empty() {
                        let batch = std::mem::replace(out, Vec::with_capacity(out.len()));
                        inbox[to].lock().expect("inbox").push(batch);
                    }
                }
                if let Some(b) = barrier {
                    b.wait();
                }
                now = next;
                if last || (now >= until && until < end) {
                    return;
                }
            }
        };
        if self.parts.len() == 1 {
            work(0, &mut self.parts[0].0, None);
        } else {
            let barrier = SpinBarrier::new(self.parts.len());
            std::thread::scope(|s| {
                for (i, Own(e)) in self.parts.iter_mut().enumerate() {
                    let (work, barrier) = (&work, &barrier);
                    s.spawn(move || work(i, e, Some(barrier)));
                }
            });
        }
        self.now_ps = until;
        self.done = until >= end;
        // The drops of this advance, merged: all later than the earlier ones.
        let from = self.drops.len();
        for Own(e) in &self.parts {
            let seen = e.drop_log();
            let before = seen.partition_point(|&(t, _)| t < s_from_ps(start));
            self.drops.extend_from_slice(&seen[before..]);
        }
        self.drops[from..].sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    }

    /// Closes the run and merges the partitions' records by owner.
    pub fn finish(self) -> RunResult {
        let mut sc = None;
        let mut records: Vec<Records> = self
            .parts
            .into_iter()
            .map(|Own(e)| {
                let (s, r) = e.into_records();
                sc.get_or_insert(s);
                r
            })
            .collect();
        let sc = sc.expect("a partition");
        let merged = merge(&sc, &mut records, &self.owners);
        metrics::summarize(&sc, merged)
    }
}

/// A partition's engine on cache lines of its own: the engines' hot fields (the clock, the
/// event count, the outbox) sat on shared lines when they lay side by side in one vector, and
/// two threads writing them took twice as long (false sharing).
#[repr(align(128))]
struct Own(PacketEngine);

/// The network cut into at most `n_parts` partitions (returns the owners, the lookahead and the
/// partitions used: no more than there are groups with work).
///
/// Elements joined without a pipe between them must run together: a sender and its access
/// link, a port and the receivers right behind it, ports joined by a link without delay, a
/// receiver and the port its ACKs queue at first, and every element a pipe delivers into (a
/// link's pipe leads to the next router's ports, one FIFO), or a zero-delay pipe's ends. The
/// groups (a router's ports with their receivers; a host) go to the partitions largest first,
/// each to the least loaded (LPT), weighing each element by the flows that cross it, a sender
/// thrice (it does most per ACK). Which partition gets what changes the speed only: the result
/// is the same for any partitioning.
fn partition(e: &PacketEngine, n_parts: usize) -> (Owners, SimTime, usize) {
    let n = e.flows.len();
    let (n_access, n_ports, n_nodes) = (e.access.len(), e.ports.len(), e.nodes.len());
    // Element ids: senders, access links, ports, receivers, nodes.
    let (access0, port0, recv0, node0) = (
        n,
        n + n_access,
        n + n_access + n_ports,
        2 * n + n_access + n_ports,
    );
    let elem = |h: Hop, f: usize| -> Option<usize> {
        match h {
            Hop::Sender => Some(f),
            Hop::Access(a) => Some(access0 + a as usize),
            Hop::Queue { port, .. } => Some(port0 + port as usize),
            Hop::Receiver => Some(recv0 + f),
            Hop::Node(k) => Some(node0 + k as usize),
            Hop::Pipe(_) => None,
        }
    };
    let mut uf = UnionFind::new(node0 + n_nodes);
    let mut weight = vec![0.0f64; node0 + n_nodes];
    // Per pipe: the element feeding it and those it delivers into (one, or a link's next ports).
    let mut pipe_from = vec![usize::MAX; e.pipes.len()];
    let mut pipe_to: Vec<Vec<usize>> = vec![Vec::new(); e.pipes.len()];
    for f in 0..n {
        for ack in [false, true] {
            let mut i = e.routes.start(f, ack);
            let sink = if ack { Hop::Sender } else { Hop::Receiver };
            let mut prev: Option<usize> = None;
            let mut pipe: Option<usize> = None;
            loop {
                let h = e.routes.hop_at(i);
                match (h, elem(h, f)) {
                    (Hop::Pipe(p), _) => {
                        pipe_from[p as usize] = prev.expect("a pipe follows an element");
                        pipe = Some(p as usize);
                    }
                    (_, Some(x)) => {
                        weight[x] += match h {
                            Hop::Queue { .. } => 2.5,
                            Hop::Receiver => 0.25,
                            Hop::Access(_) => 0.0,
                            _ => 1.0,
                        };
                        match pipe.take() {
                            Some(p) => pipe_to[p].push(x),
                            None => {
                                if let Some(y) = prev {
                                    uf.union(x, y);
                                }
                            }
                        }
                        prev = Some(x);
                    }
                    _ => unreachable!("a hop is a pipe or an element"),
                }
                if h == sink && i != e.routes.start(f, ack) {
                    break;
                }
                i += 1;
            }
        }
    }
    for (p, to) in pipe_to.iter().enumerate() {
        for w in to.windows(2) {
            uf.union(w[0], w[1]);
        }
        if e.pipes[p].delay_ps() == 0 && !to.is_empty() {
            uf.union(pipe_from[p], to[0]);
        }
    }
    // Then the links between routers, shortest first, for as long as the busiest partition
    // grows by at most a twentieth: each window is then as long as the shortest link left cut.
    // (The first 256 at most: each try deals every group again.)
    let is_port = |x: usize| (port0..recv0).contains(&x);
    let mut links: Vec<usize> = (0..e.pipes.len())
        .filter(|&p| {
            is_port(pipe_from[p])
                && pipe_to[p].iter().all(|&x| is_port(x))
                && !pipe_to[p].is_empty()
        })
        .collect();
    links.sort_by_key(|&p| (e.pipes[p].delay_ps(), p));
    links.truncate(256);
    let (mut part_of, first_load, mut used) = deal(&mut uf, &weight, n_parts);
    for p in links {
        let mut joined = uf.clone();
        joined.union(pipe_from[p], pipe_to[p][0]);
        let (parts, load, n) = deal(&mut joined, &weight, n_parts);
        if load > 1.05 * first_load {
            break;
        }
        (uf, part_of, used) = (joined, parts, n);
    }
    let mut owner = |x: usize| part_of[uf.find(x)];
    let pipe: Vec<u16> = pipe_to
        .iter()
        .map(|to| to.first().map_or(0, |&x| owner(x)))
        .collect();
    let mut lookahead_ps = SimTime::MAX;
    for (p, to) in pipe_to.iter().enumerate() {
        if !to.is_empty() && owner(pipe_from[p]) != pipe[p] {
            lookahead_ps = lookahead_ps.min(e.pipes[p].delay_ps());
        }
    }
    let owners = Owners {
        pipe,
        sender: (0..n).map(&mut owner).collect(),
        receiver: (0..n).map(|f| owner(recv0 + f)).collect(),
        port: (0..n_ports).map(|p| owner(port0 + p)).collect(),
        node: (0..n_nodes).map(|k| owner(node0 + k)).collect(),
    };
    (owners, lookahead_ps, used)
}

/// Deals the groups of `uf` to `n_parts` partitions (no more than there are groups with work),
/// largest first, each to the least loaded (ties by the group's first element and the
/// partition's index: the same every time). Returns each root's partition, the busiest
/// partition's load and the partitions used.
fn deal(uf: &mut UnionFind, weight: &[f64], n_parts: usize) -> (Vec<u16>, f64, usize) {
    let mut group_weight = vec![0.0f64; weight.len()];
    for (x, w) in weight.iter().enumerate() {
        group_weight[uf.find(x)] += w;
    }
    let mut groups: Vec<usize> = (0..weight.len()).filter(|&x| uf.find(x) == x).collect();
    groups.sort_by(|&a, &b| group_weight[b].total_cmp(&group_weight[a]).then(a.cmp(&b)));
    let working = groups.iter().filter(|&&g| group_weight[g] > 0.0).count();
    let n_parts = n_parts.min(working).max(1);
    let mut load = vec![0.0f64; n_parts];
    let mut part_of = vec![0u16; weight.len()];
    for g in groups {
        let lightest = (0..n_parts)
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .expect("a partition");
        load[lightest] += group_weight[g];
        part_of[g] = lightest as u16;
    }
    (part_of, load.into_iter().fold(0.0, f64::max), n_parts)
}

/// Partition 0's records with each element's from its owner: links and their congestion events
/// from the ports' partitions, what a sender counts (sent packets, reductions, timeouts, window
/// integral, window samples, smoothed RTTs) from its partition, what a receiver counts
/// (deliveries, marks) from its own; a flow's drops summed over the partitions of the ports
/// that dropped them.
fn merge(sc: &Scenario, recs: &mut [Records], o: &Owners) -> Records {
    let ports = sc.links.len();
    let placeholder = empty_like(&recs[0]);
    let mut out = std::mem::replace(&mut recs[0], placeholder);
    let take_col =
        |out: &mut Vec<Vec<f64>>, recs: &mut [Records], owner: u16, c: usize, delay: bool| {
            if owner != 0 {
                let r = &mut recs[owner as usize];
                out[c] = std::mem::take(if delay {
                    &mut r.delay_samples[c]
                } else {
                    &mut r.samples[c]
                });
            }
        };
    for p in 0..ports {
        let owner = o.port[p];
        if owner != 0 {
            out.links[p] = recs[owner as usize].links[p].clone();
        }
        for c in [1 + 2 * p, 2 + 2 * p] {
            take_col(&mut out.samples, recs, owner, c, false);
        }
        for c in [2 * p, 2 * p + 1] {
            take_col(&mut out.delay_samples, recs, owner, c, true);
        }
    }
    out.events = (0..ports)
        .flat_map(|p| {
            let from = if o.port[p] == 0 {
                &out.events
            } else {
                &recs[o.port[p] as usize].events
            };
            from.iter()
                .filter(move |ev| ev.link == p)
                .cloned()
                .collect::<Vec<_>>()
        })
        .collect();
    for f in 0..sc.flows.len() {
        let (s, r) = (o.sender[f], o.receiver[f]);
        let dropped: f64 = (1..recs.len()).map(|i| recs[i].flows[f].dropped_pkts).sum();
        let to = &mut out.flows[f];
        to.dropped_pkts += dropped;
        if s != 0 {
            let from = &recs[s as usize].flows[f];
            to.sent_pkts = from.sent_pkts;
            to.reductions = from.reductions;
            to.timeouts = from.timeouts;
            to.cwnd_integral_pkt_s = from.cwnd_integral_pkt_s;
        }
        if r != 0 {
            let from = &recs[r as usize].flows[f];
            to.delivered_pkts = from.delivered_pkts;
            to.marked_pkts = from.marked_pkts;
        }
        // Series: per flow (window, deliveries) after the time and the ports' two columns each;
        // delay columns: per flow its smoothed RTT after the ports' two.
        take_col(&mut out.samples, recs, s, 1 + 2 * ports + 2 * f, false);
        take_col(&mut out.samples, recs, r, 2 + 2 * ports + 2 * f, false);
        take_col(&mut out.delay_samples, recs, s, 2 * ports + f, true);
    }
    out.flow_updates += recs[1..].iter().map(|r| r.flow_updates).sum::<u64>();
    out
}

/// A placeholder for a partition's records once merged.
fn empty_like(r: &Records) -> Records {
    Records {
        engine: r.engine.clone(),
        duration_s: r.duration_s,
        step_s: r.step_s,
        measured_from_s: r.measured_from_s,
        span_s: r.span_s,
        flow_updates: 0,
        links: Vec::new(),
        flows: r.flows.clone(),
        events: Vec::new(),
        samples: Vec::new(),
        delay_samples: Vec::new(),
        warnings: Vec::new(),
        bursts: Vec::new(),
        arrivals: Vec::new(),
        completions: Vec::new(),
        aggregate: Vec::new(),
    }
}

/// Disjoint sets of elements (union by size, path halving).
#[derive(Clone)]
struct UnionFind {
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n).collect(),
            size: vec![1; n],
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a] < self.size[b] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b] = a;
        self.size[a] += self.size[b];
    }
}

/// A barrier that spins a little before it yields: windows are short (a link's delay), and a
/// thread put to sleep at each one costs more than the window's work on a small network.
struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn new(n: usize) -> Self {
        SpinBarrier {
            n,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < 4096 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}
