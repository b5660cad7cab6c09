//! The fluid engine: a time-stepped integration of the window, RTT and queue equations of
//! Misra, Gong, Towsley (2000) over any path of links as in Liu et al. (2003), with the
//! loss-synchronization module of Kumar, Xue, Park (2014). Equations: docs/model.md §1–2; what
//! this engine does exactly, and where it simplifies: docs/fluid.md.
//!
//! One step of length Δ:
//! 1. every sender's RTT `R = d + Σ_path q_l/C_l` and rate `x = W/R`;
//! 2. every link takes its arrivals (first hop: `x`; later hops: the flow's departure from the
//!    previous hop one step earlier), drops early (random loss, RED), queues, serves up to `C·Δ`
//!    and tail-drops what overflows the buffer; the overflow is assigned to flows by the loss model;
//! 3. each loss is signalled to its sender one RTT later through a per-flow ring buffer;
//! 4. every sender applies the signalled reductions, then grows its window by its law
//!    (`acked = x·Δ` packets acknowledged).
//!
//! All storage is allocated when the engine is built; a step allocates nothing.

mod checks;
mod dual;
mod event;
mod flow;
pub mod headroom;
mod link;
mod link_threads;
mod obs;
mod rate;
mod records;
mod ring;
mod send;
pub mod sync;
mod tcp;
mod workers;

pub use checks::check;
pub use headroom::burst_headroom_pkts;

use crate::cc::{self, CcContext};
use crate::error::Result;
use crate::metrics::{AggregateSample, EventRecord, RunResult};
use crate::queue::{Buffer, LinkContext};
use crate::rng::Rng;
use crate::scenario::{LossModel, Scenario};
use dual::DualState;
use event::{assign_overflow, close_event, open_event, EventState};
use flow::{
    grow_window, path_feedback, path_rtt, reduce_window, update_window, FlowAcc, FlowState,
};
use headroom::{link_headroom_pkts, link_members, link_rtt_classes};
use link::{DepartureStep, LinkAcc, LinkState};
use obs::FluidAssembler;
use ring::LossRing;
use std::sync::Arc;
use sync::SyncModule;
use tcp::TcpRings;
use workers::MIN_PARALLEL_FLOWS;

/// A fluid run in progress. Build with [`FluidEngine::new`], drive with [`FluidEngine::advance`]
/// (in chunks, so a caller can show progress), then [`FluidEngine::finish`].
pub struct FluidEngine {
    scenario: Arc<Scenario>,
    dt: f64,
    step_index: u64,
    total_steps: u64,
    flows: Vec<FlowState>,
    links: Vec<LinkState>,
    hop_in: Vec<f64>,
    /// As `hop_in`, the part of it marked CE upstream (empty when no flow is ECN-capable).
    hop_marked: Vec<f64>,
    path_links: Vec<usize>,
    /// ACKs queue behind data in these links (their queueing delay adds to the RTT; their
    /// bytes are not counted as load).
    ack_links: Vec<usize>,
    /// Per hop as `path_links`, where its queueing delay is read in `link_delay_s`: the link's
    /// own index, or its L queue's slot for an L4S flow at a dual-queue link.
    path_slots: Vec<usize>,
    /// Reductions on their way to the senders (empty under `tcp`: its ring has them).
    ring: LossRing,
    /// `tcp` loss model: what reaches the senders, and its per-flow state.
    tcp: TcpRings,
    /// The loss model is `tcp`.
    tcp_model: bool,
    /// Each link's queueing delay `q/C` at the start of the step (read while another link is
    /// updated); then, per dual-queue link, its L queue's (that link's own entry is its classic
    /// queue's).
    link_delay_s: Vec<f64>,
    reductions_per_event: f64,
    /// `loss.recovery_pause`: a sender reducing its window is silent until its data in flight
    /// has fallen to the new window.
    recovery_pause: bool,
    /// Past the warm-up (events are counted from here on).
    warm: bool,
    /// Statistics have started (at the warm-up, or at the first congestion event after it).
    measuring: bool,
    measured_from_s: f64,
    start_links: Vec<LinkAcc>,
    start_flows: Vec<FlowAcc>,
    event_log: Vec<EventRecord>,
    next_record_step: u64,
    record_every: u64,
    series: Vec<Vec<f64>>,
    /// The delay columns (`metrics::Records::delay_samples`), and the time of the last sample.
    delays: Vec<Vec<f64>>,
    last_record_s: f64,
    /// The aggregate Σ cwnd/RTT: every this many steps (0: off), the next one, the samples.
    aggregate_every: u64,
    next_aggregate_step: u64,
    aggregate: Vec<AggregateSample>,
    flow_updates: u64,
    /// Some link runs an XCP router (senders then look up their path's feedback every step).
    has_xcp: bool,
    /// Some link has a burst assembler (senders then add its wait to their ACKs' delay).
    has_obs: bool,
    /// Some link has a dual-queue discipline (its queues' delays are then set every step).
    has_dual: bool,
    /// The run's threads (`run.threads`); `None`: one.
    workers: Option<Arc<workers::Workers>>,
    /// The earliest start of a flow not started yet (`tcp`; infinite once all have).
    next_start_s: f64,
}

impl FluidEngine {
    pub fn new(scenario: &Scenario) -> Result<Self> {
        Self::shared(Arc::new(scenario.clone()))
    }

    /// As [`FluidEngine::new`], keeping the caller's scenario instead of a copy of it (a few
    /// hundred bytes per flow).
    pub fn shared(sc: Arc<Scenario>) -> Result<Self> {
        check(&sc)?;
        let dt = sc.run.step_s;
        let total_steps = (sc.run.duration_s / dt).round() as u64;
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut path_links = Vec::new();
        let mut ack_links = Vec::new();
        let mut conns = vec![0usize; sc.flows.last().map_or(0, |f| f.logical + 1)];
        for f in &sc.flows {
            conns[f.logical] += 1;
        }
        let mut max_rtt: f64 = 0.0;
        for (i, f) in sc.flows.iter().enumerate() {
            let mut law = f.cc.build();
            law.seed(Rng::new(sc.run.seed, cc::LAW_STREAM + i as u64));
            let queueing: f64 = f
                .path
                .iter()
                .chain(&f.ack_path)
                .map(|&l| {
                    let timer_s = sc.links[l].assembler.as_ref().map_or(0.0, |a| {
                        a.timers_s.iter().copied().fold(a.timer_s, f64::max)
                    });
                    sc.links[l].buffer_pkts / sc.links[l].capacity_pps + timer_s
                })
                .sum();
            max_rtt = max_rtt.max(f.rtt_s + queueing);
            flows.push(FlowState {
                cc: law,
                w: f.initial_window_pkts.min(f.rwnd_pkts),
                ssthresh: cc::initial_ssthresh(f.slow_start, f.rwnd_pkts),
                rtt_s: f.rtt_s,
                x: 0.0,
                pause_s: 0.0,
                started: false,
                start_s: f.start_s,
                base_rtt_s: f.rtt_s,
                rwnd: f.rwnd_pkts,
                // The connections of a parallel flow share the access link: an equal part each.
                access_pps: f.access_capacity_bps.map_or(f64::INFINITY, |bps| {
                    bps / (8.0 * sc.links[f.path[0]].packet_size_bytes) / conns[f.logical] as f64
                }),
                hop_off: path_links.len(),
                hops: f.path.len(),
                ack_off: ack_links.len(),
                ack_hops: f.ack_path.len(),
                acc: FlowAcc::default(),
                delivered_at_record: 0.0,
            });
            path_links.extend_from_slice(&f.path);
            ack_links.extend_from_slice(&f.ack_path);
        }
        let (sync_spec, reductions_per_event, holdoff, recovery_pause) = match &sc.loss {
            LossModel::Proportional | LossModel::Tcp { .. } => (None, 1.0, None, false),
            LossModel::Sync {
                sync,
                policy,
                reductions_per_event,
                holdoff_s,
                recovery_pause,
            } => (
                Some((sync, *policy)),
                *reductions_per_event,
                *holdoff_s,
                *recovery_pause,
            ),
        };
        let tcp_model = matches!(sc.loss, LossModel::Tcp { .. });
        let l4s = |fi: usize| dual::l4s(&sc, fi);
        let mut links: Vec<LinkState> = Vec::with_capacity(sc.links.len());
        let mut dual_slots = sc.links.len();
        for (li, l) in sc.links.iter().enumerate() {
            let members = link_members(&sc, li);
            let n = members.len();
            let ecn: Vec<bool> = members.iter().map(|m| sc.flows[m.flow].ecn).collect();
            let any_ecn = ecn.contains(&true);
            // The link's time scale, as in every engine: XCP's first control interval and the
            // gap that ends a congestion event (docs/model.md §5.3).
            let mean_rtt = sc.mean_base_rtt_s(li);
            // Stream 2000 + link: each link's module draws from its own stream.
            let sync = sync_spec.map(|(s, p)| {
                SyncModule::new(s.clone(), p, n, Rng::new(sc.run.seed, 2000 + li as u64))
            });
            let rtt_class = link_rtt_classes(&sc, li, &members);
            let headroom = link_headroom_pkts(&sc, li, &rtt_class);
            let mut discipline = l.queue.build(LinkContext {
                buffer: Buffer::new(l.buffer_pkts),
                capacity_pps: l.capacity_pps,
                // The fluid faces do not use it; it was 8·packet_size times too large.
                packet_time_ps: l.packet_time_ps(),
                packet_size_bytes: l.packet_size_bytes,
                first_interval_s: mean_rtt,
            });
            // A dual-queue discipline (its `QueueParams::DUAL`, as fluid::check reads it, which
            // allows it under `tcp` only); its first signals give its scheduler's shares.
            let dual = (tcp_model && l.queue.dual())
                .then(|| {
                    discipline
                        .fluid_dual(0.0, 0.0, 0.0, 0.0)
                        .expect("a DUAL discipline has a fluid_dual face")
                })
                .map(|first| {
                    dual_slots += 1;
                    let members_l4s = members.iter().map(|m| l4s(m.flow)).collect();
                    DualState::new(
                        members_l4s,
                        first,
                        dual_slots - 1,
                        l.capacity_pps,
                        l.buffer_pkts,
                        dt,
                    )
                });
            links.push(LinkState {
                index: li,
                capacity_pps: l.capacity_pps,
                buffer_pkts: l.buffer_pkts - headroom,
                loss_rate: l.loss_rate,
                discipline,
                members,
                q: 0.0,
                q_member: vec![0.0; n],
                rate: vec![0.0; n],
                admitted: vec![0.0; n],
                dropped: vec![0.0; n],
                marked: vec![0.0; if any_ecn { n } else { 0 }],
                q_marked: vec![0.0; if any_ecn { n } else { 0 }],
                ecn,
                any_ecn,
                overflowed: vec![0.0; n],
                overflow_random: vec![0.0; n],
                excess: vec![0.0; n],
                class_rate: vec![0.0; n],
                clocked: vec![0.0; n],
                rtt_class,
                paced: Vec::new(), // set with the `tcp` model's flows below
                growth_share: match sc.loss {
                    LossModel::Tcp { growth_share, .. } => growth_share,
                    _ => None,
                },
                loss_event: vec![false; n],
                assembler: l
                    .assembler
                    .as_ref()
                    .map(|a| FluidAssembler::new(li, a, l.burst_loss, n, sc.run.seed)),
                burst_drop: vec![0.0; n],
                assembly_wait_s: 0.0,
                dual,
                threaded: None,
                event: EventState {
                    active: false,
                    start_s: 0.0,
                    measured: false,
                    holdoff_fixed: holdoff,
                    gap_s: crate::metrics::events::event_window_s(&sc, li),
                    last_drop_s: 0.0,
                    holdoff_s: 0.0,
                    candidates: 0,
                    order: Vec::with_capacity(n),
                    window: vec![0.0; n],
                    active_member: vec![false; n],
                    selected: vec![false; n],
                    lost: vec![false; n],
                },
                sync,
                acc: LinkAcc::default(),
                q_max: 0.0,
                q_at_measuring: 0.0,
                interval_departed: 0.0,
                q_integral_at_record: 0.0,
            });
        }
        // A drop now reaches its sender one RTT later, at most `max_rtt`.
        let ring_len = (max_rtt / dt).ceil() as usize + 3;
        let record_every = ((sc.run.record_interval_s / dt).round() as u64).max(1);
        let n_records = (total_steps / record_every + 1) as usize;
        let n_cols = 1 + 2 * sc.links.len() + 2 * sc.flows.len();
        let path_slots = dual::path_slots(&sc, &links, l4s);
        let tcp = TcpRings::new(&sc, &flows, tcp_model, dt, ring_len);
        for l in links.iter_mut() {
            l.paced = l
                .members
                .iter()
                .map(|m| tcp.flows.get(m.flow).is_some_and(|f| f.law_paced))
                .collect();
        }
        // Only the `tcp` model's loops are threaded (the others run on one thread).
        let workers =
            workers::Workers::new(if tcp_model { sc.run.threads } else { 1 }, flows.len());
        if workers.is_some() {
            for l in links.iter_mut().filter(|l| l.dual.is_none() && !l.any_ecn) {
                l.threaded = link_threads::ThreadedDepartures::new(&l.members, flows.len());
            }
        }
        Ok(FluidEngine {
            dt,
            step_index: 0,
            total_steps,
            hop_in: vec![0.0; path_links.len()],
            hop_marked: vec![
                0.0;
                if sc.flows.iter().any(|f| f.ecn) {
                    path_links.len()
                } else {
                    0
                }
            ],
            path_links,
            ack_links,
            ring: LossRing::new(ring_len, if tcp_model { 0 } else { sc.flows.len() }),
            link_delay_s: vec![0.0; dual_slots],
            path_slots,
            tcp,
            tcp_model,
            reductions_per_event,
            recovery_pause,
            warm: false,
            measuring: false,
            measured_from_s: 0.0,
            start_links: vec![LinkAcc::default(); links.len()],
            start_flows: vec![FlowAcc::default(); flows.len()],
            event_log: Vec::new(),
            next_record_step: 0,
            record_every,
            series: (0..n_cols).map(|_| Vec::with_capacity(n_records)).collect(),
            delays: (0..2 * sc.links.len() + sc.flows.len())
                .map(|_| Vec::with_capacity(n_records))
                .collect(),
            last_record_s: 0.0,
            aggregate_every: match sc.run.aggregate_interval_s {
                0.0 => 0,
                a => ((a / dt).round() as u64).max(1),
            },
            next_aggregate_step: 0,
            aggregate: Vec::new(),
            flow_updates: 0,
            has_xcp: links.iter().any(|l| l.discipline.feedback().is_some()),
            has_obs: links.iter().any(|l| l.assembler.is_some()),
            has_dual: links.iter().any(|l| l.dual.is_some()),
            workers: workers.map(Into::into),
            next_start_s: flows
                .iter()
                .map(|f| f.start_s)
                .fold(f64::INFINITY, f64::min),
            flows,
            links,
            scenario: sc,
        })
    }

    /// Simulated time now, in seconds.
    pub fn now_s(&self) -> f64 {
        self.step_index as f64 * self.dt
    }

    pub fn duration_s(&self) -> f64 {
        self.total_steps as f64 * self.dt
    }

    /// The threads this run steps on: `run.threads` (every core when not given), or 1 when
    /// its flows are too few to share (`fluid/workers.rs`) or its loss model is not `tcp`.
    pub fn threads(&self) -> usize {
        self.workers.as_ref().map_or(1, |w| w.threads())
    }

    pub fn is_done(&self) -> bool {
        self.step_index >= self.total_steps
    }

    /// Runs until simulated time `until_s` (or the end of the run).
    pub fn advance(&mut self, until_s: f64) {
        let until = ((until_s / self.dt).round() as u64).min(self.total_steps);
        match self.workers.clone() {
            // On a thread of the run's pool, so its parallel loops run on the pool.
            Some(w) => w.install(|| self.advance_to(until)),
            None => self.advance_to(until),
        }
    }

    fn advance_to(&mut self, until: u64) {
        while self.step_index < until {
            if self.step_index == self.next_record_step {
                self.record();
            }
            if self.aggregate_every > 0 && self.step_index == self.next_aggregate_step {
                self.sample_aggregate();
            }
            self.step();
        }
    }

    /// Runs to the end and returns the result.
    pub fn run(mut self) -> RunResult {
        self.advance(f64::INFINITY);
        self.finish()
    }

    fn step(&mut self) {
        if self.tcp_model {
            self.step_model::<true>();
        } else {
            self.step_model::<false>();
        }
    }

    /// One step; `TCP`: the loss model is `tcp`. A constant, so the other models' loops carry
    /// none of its branches (they cost the sync case 12% when they were tested per flow).
    fn step_model<const TCP: bool>(&mut self) {
        let dt = self.dt;
        let t = self.step_index as f64 * dt;
        if !self.warm && t + 0.5 * dt >= self.scenario.run.warmup_s {
            self.warm = true;
            self.start_measuring(t);
            self.measuring = !self.scenario.run.from_first_congestion;
        }
        let warm = self.warm;
        let measuring = self.measuring;
        // Every ring has the same length: one slot index for all of them.
        let now = self.ring.slot(self.step_index as usize);
        for (l, d) in self.links.iter().zip(self.link_delay_s.iter_mut()) {
            *d = l.q / l.capacity_pps + l.assembly_wait_s;
        }
        if self.has_dual {
            dual::set_delays(&self.links, &mut self.link_delay_s);
        }
        // The context of this step's law calls; only the RTT (and XCP's feedback) change per flow.
        let mut ctx = CcContext {
            now_s: t,
            rtt_s: 0.0,
            feedback_pkts: 0.0,
        };

        // 1. Senders: RTT and rate. ACK-clocked senders (`tcp`) first take this step's ACKs,
        //    detected losses and reductions, then send what their window allows.
        if TCP {
            // `ECN`: some flow is ECN-capable (a constant, so the other runs' loop carries none of
            // its work).
            if self.tcp.ecn.flows > 0 {
                self.step_senders_tcp::<true>(now, t);
            } else {
                self.step_senders_tcp::<false>(now, t);
            }
        } else {
            self.step_senders_rate(t);
        }

        // 2. Links.
        let congestion_began = self.step_links::<TCP>(now, t, warm, measuring);

        // 3–4. Rate-based senders: apply the reductions that arrive now, then grow.
        if !TCP {
            self.step_reactions_rate(now, &mut ctx);
        }
        if congestion_began {
            self.start_measuring(t);
        }
        self.flow_updates += self.flows.len() as u64;
        self.step_index += 1;
    }

    /// Step 1 under `tcp`: each ACK-clocked sender takes this step's ACKs, detected losses and
    /// reductions, then sends what its window allows (`fluid/send.rs`), on every thread the run
    /// has. The flows that start now draw their loss thresholds first, in flow order (one
    /// stream, so the draws do not depend on the threads).
    #[inline]
    fn step_senders_tcp<const ECN: bool>(&mut self, now: usize, t: f64) {
        let dt = self.dt;
        if t + 0.5 * dt >= self.next_start_s {
            let mut next = f64::INFINITY;
            for (f, tf) in self.flows.iter_mut().zip(&mut self.tcp.flows) {
                if f.started {
                    continue;
                }
                if t + 0.5 * dt < f.start_s {
                    next = next.min(f.start_s);
                    continue;
                }
                f.started = true;
                tf.draw_thresholds(&mut self.tcp.rng, self.tcp.event_threshold);
            }
            self.next_start_s = next;
        }
        let step = send::SendStep {
            links: &self.links,
            path_links: &self.path_links,
            ack_links: &self.ack_links,
            delays: &self.link_delay_s,
            path_slots: &self.path_slots,
            step_index: self.step_index,
            t,
            dt,
            has_xcp: self.has_xcp,
            has_obs: self.has_obs,
        };
        let tcp = &mut self.tcp;
        let due = send::Due {
            acks: tcp.due.due(now),
            events: tcp.events.due(now),
            ecn: tcp.ecn.due(now), // empty unless some flow is ECN-capable
        };
        send::senders::<ECN>(
            self.workers.as_deref(),
            &step,
            &mut self.flows,
            &mut tcp.flows,
            due,
        );
    }

    /// Step 1 under the rate-based models: each sender's RTT and rate.
    #[inline]
    fn step_senders_rate(&mut self, t: f64) {
        let dt = self.dt;
        let (flows, path_slots, ack_links) = (
            &mut self.flows[..],
            &self.path_slots[..],
            &self.ack_links[..],
        );
        let delays = &self.link_delay_s[..];
        for f in flows.iter_mut() {
            if !f.started {
                if t + 0.5 * dt < f.start_s {
                    continue;
                }
                f.started = true;
            }
            let rtt = path_rtt(f, delays, path_slots, ack_links);
            f.rtt_s = rtt;
            f.x = (f.w / rtt).min(f.access_pps);
            if f.pause_s > 0.0 {
                // Silent for the part of the step the recovery pause still covers.
                let silent_s = f.pause_s.min(dt);
                f.x *= 1.0 - silent_s / dt;
                f.pause_s -= silent_s;
            }
        }
    }

    /// Step 2: every link's arrivals, drops, congestion events and departures. Returns whether a
    /// congestion event began that starts the statistics (`from_first_congestion`).
    #[inline]
    fn step_links<const TCP: bool>(
        &mut self,
        now: usize,
        t: f64,
        warm: bool,
        measuring: bool,
    ) -> bool {
        let dt = self.dt;
        let reductions_per_event = self.reductions_per_event;
        let has_xcp = self.has_xcp;
        let (flows, links, hop_in, hop_marked, ring, ack_links, tcp) = (
            &mut self.flows[..],
            &mut self.links[..],
            &mut self.hop_in[..],
            &mut self.hop_marked[..],
            &mut self.ring,
            &self.ack_links[..],
            &mut self.tcp,
        );
        let delays = &self.link_delay_s[..];
        let workers = self.workers.as_deref();
        let mut congestion_began = false;
        for link in links.iter_mut() {
            let c = link.capacity_pps;
            let p_disc = link.discipline.early_drop_probability(link.q, dt, c);
            let p_early = 1.0 - (1.0 - link.loss_rate) * (1.0 - p_disc);
            // ECN-capable fluid is marked instead, where the discipline marks (`tcp` only:
            // fluid::check refuses ECN under the other loss models).
            let p_mark = if TCP && link.any_ecn && link.discipline.fluid_marks(p_disc) {
                p_disc
            } else {
                0.0
            };
            let dual = TCP && link.dual.is_some();
            let arrivals = if dual {
                link.dual_signals(t);
                link.arrivals_dual(flows, hop_in, hop_marked, dt)
            } else if p_mark > 0.0 {
                link.arrivals::<true>(flows, hop_in, hop_marked, dt, p_early, p_mark)
            } else if let Some(w) = workers.filter(|_| link.members.len() >= MIN_PARALLEL_FLOWS) {
                link.arrivals_threaded(w, flows, hop_in, dt, p_early)
            } else {
                link.arrivals::<false>(flows, hop_in, hop_marked, dt, p_early, 0.0)
            };
            let (mut arriving_sum, mut admitted_sum) = (arrivals.rate_sum, arrivals.admitted_sum);
            let early_sum = arrivals.early_sum;
            if TCP && link.assembler.is_some() {
                // Lost bursts never reach the link's port: its arrivals and drops are those of
                // the bursts that left, as in the packet engine (the flows count the loss).
                let lost = link.assemble(flows, tcp, now, t, dt, warm, &mut self.event_log);
                admitted_sum -= lost;
                arriving_sum -= lost / dt;
            }
            if has_xcp {
                for (m, &r) in link.members.iter().zip(&link.rate) {
                    let f = &flows[m.flow];
                    link.discipline.fluid_arrivals(r * dt, f.rtt_s, f.w);
                }
                link.discipline.fluid_step_end(link.q, t + dt, c);
            }
            let avail = link.q + admitted_sum;
            let mut out = avail.min(c * dt);
            let overflow = (avail - out - link.buffer_pkts).max(0.0);

            // Congestion events (docs/fluid.md): an overflow episode, held at least the hold-off;
            // with `tcp`, a cluster of drops (overflow or early) as the packet engine's.
            // (`tcp`: the loss events of this step are clustered after the flows' update below.)
            if TCP {
                let ev = &link.event;
                if ev.active && t - ev.last_drop_s >= ev.gap_s {
                    close_event(link, &mut self.event_log);
                }
            } else {
                if link.event.active && t >= link.event.start_s + link.event.holdoff_s {
                    close_event(link, &mut self.event_log);
                }
                if overflow > 0.0 && !link.event.active {
                    congestion_began |= warm && !measuring;
                    open_event(link, flows, ring, now, dt, t, warm, reductions_per_event);
                }
            }
            if overflow > 0.0 {
                if TCP {
                    link.gather_excess(&tcp.flows, workers);
                }
                assign_overflow(
                    link,
                    flows,
                    ring,
                    now,
                    dt,
                    overflow,
                    admitted_sum,
                    reductions_per_event,
                    TCP,
                );
            }

            // Queue and departures.
            let kept = avail - overflow;
            let share = if kept > 0.0 { out / kept } else { 0.0 };
            let mut shares = [share; 2];
            if dual {
                (out, shares) = link.dual_service(c * dt, dt);
            }
            let any_loss_event = if TCP {
                let args = DepartureStep {
                    delays,
                    ack_links,
                    now,
                    t,
                    dt,
                    shares,
                };
                if dual {
                    link.departures_dual(flows, hop_in, hop_marked, tcp, args)
                } else if let Some(w) = workers.filter(|_| link.threaded.is_some()) {
                    link.departures_threaded(w, flows, hop_in, tcp, args)
                } else if link.any_ecn {
                    link.departures_tcp::<true, false>(flows, hop_in, hop_marked, tcp, args)
                } else {
                    link.departures_tcp::<false, false>(flows, hop_in, hop_marked, tcp, args)
                }
            } else {
                link.departures(flows, hop_in, ring, now, dt, share);
                false
            };
            if dual {
                link.dual_backlogs();
                link.acc.dropped_early += arrivals.unmarked_early_sum;
            }
            if TCP && any_loss_event {
                // A congestion event is a cluster of loss events, as the packet engine's metric
                // clusters drops: one begins here unless one is under way.
                if !link.event.active {
                    congestion_began |= warm && !measuring;
                    open_event(link, flows, ring, now, dt, t, warm, reductions_per_event);
                }
                for k in 0..link.members.len() {
                    if std::mem::take(&mut link.loss_event[k]) {
                        link.event.lost[k] = true;
                        link.event.selected[k] = true;
                    }
                }
                link.event.last_drop_s = t;
            }
            link.q = kept - out;
            link.q_max = link.q_max.max(link.q);
            link.acc.arrived += arriving_sum * dt;
            link.acc.departed += out;
            link.acc.dropped += early_sum + overflow;
            link.acc.dropped_overflow += overflow;
            if p_early > 0.0 {
                // The discipline's part of the early drops: (1 − loss)·p_disc of p_early.
                link.acc.dropped_early +=
                    arrivals.unmarked_early_sum * (1.0 - link.loss_rate) * p_disc / p_early;
            }
            link.acc.marked += arrivals.marked_sum;
            link.acc.q_integral += link.q * dt;
            link.interval_departed += out;
        }
        congestion_began
    }

    /// Steps 3–4 under the rate-based models: each sender applies the reductions that arrive now,
    /// then grows.
    #[inline]
    fn step_reactions_rate(&mut self, now: usize, ctx: &mut CcContext) {
        let dt = self.dt;
        let has_xcp = self.has_xcp;
        let recovery_pause = self.recovery_pause;
        let (flows, links, ring, path_links) = (
            &mut self.flows[..],
            &self.links[..],
            &mut self.ring,
            &self.path_links[..],
        );
        let due = ring.due(now);
        for (f, slot) in flows.iter_mut().zip(due.iter_mut()) {
            if !f.started {
                continue;
            }
            let r = std::mem::take(slot);
            ctx.rtt_s = f.rtt_s;
            if has_xcp {
                ctx.feedback_pkts = path_feedback(f, links, path_links);
            }
            if recovery_pause && r > 0.0 {
                // In flight: W; allowed: W' < W. The ACKs of the old window's data arrive at its
                // rate W/RTT, so the sender waits (1 − W'/W)·RTT before it sends again (docs/
                // fluid.md, "Recovery pause"); its window does not grow meanwhile (no new ACK
                // clocks out new data).
                let before = f.w;
                reduce_window(f, ctx, r);
                f.pause_s += (1.0 - f.w / before).max(0.0) * f.rtt_s;
                grow_window(f, ctx, f.x * dt);
            } else {
                update_window(f, ctx, r, f.x * dt);
            }
            f.acc.cwnd_integral += f.w * dt;
        }
    }
}
