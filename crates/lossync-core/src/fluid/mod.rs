//! The fluid engine: a time-stepped integration of the window, RTT and queue equations of
//! Misra, Gong, Towsley (2000) over any path of links as in Liu et al. (2003), with the
//! loss-synchronization module of Kumar, Xue, Park (2014). Equations: docs/models.md §1–2 (shared)
//! and docs/fluid.md (what this engine does exactly, and where it simplifies).
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

pub mod sync;

use crate::cc::{self, CcContext, CongestionControl};
use crate::error::Result;
use crate::metrics::{self, FlowSummary, LinkSummary, RunResult, Series, Summary};
use crate::queue::{self, Discipline};
use crate::rng::Rng;
use crate::scenario::{LossModel, Scenario};
use sync::SyncModule;

/// A flow's place on a link: which flow, and which hop of its path this link is.
#[derive(Debug, Clone, Copy)]
struct Member {
    flow: usize,
    hop: usize,
}

#[derive(Debug)]
struct FlowState {
    cc: Box<dyn CongestionControl>,
    w: f64,
    ssthresh: f64,
    rtt_s: f64,
    x: f64,
    started: bool,
    /// Offset of this flow's entries in `hop_in`.
    hop_off: usize,
    // Measurement-window accumulators.
    sent: f64,
    delivered: f64,
    dropped: f64,
    cwnd_integral: f64,
    reductions: f64,
}

#[derive(Debug)]
struct LinkState {
    capacity_pps: f64,
    buffer_pkts: f64,
    loss_rate: f64,
    discipline: Box<dyn Discipline>,
    members: Vec<Member>,
    q: f64,
    /// Per member: backlog in the queue (the queue is a fluid mixture: departures are shared in
    /// proportion to the backlog).
    q_member: Vec<f64>,
    // Per-member scratch for one step.
    admitted: Vec<f64>,
    rate: Vec<f64>,
    window: Vec<f64>,
    active: Vec<bool>,
    over: Vec<f64>,
    // Congestion event state.
    event_active: bool,
    event_start: f64,
    event_measured: bool,
    /// A fixed hold-off from the scenario; `None`: the largest current RTT among the flows
    /// signalled at the event (every one of them has reacted before the next event can start).
    holdoff_fixed: Option<f64>,
    holdoff_s: f64,
    event_order: Vec<usize>,
    event_selected: Vec<bool>,
    event_lost: Vec<bool>,
    event_candidates: usize,
    sync: Option<SyncModule>,
    // Accumulators: whole run (conservation) and measurement window.
    total_in: f64,
    total_out: f64,
    total_drop: f64,
    meas_in: f64,
    meas_out: f64,
    meas_drop: f64,
    meas_q_integral: f64,
    meas_q_max: f64,
    events: u64,
    sync_sum: f64,
    sync_hist: Vec<u64>,
    interval_out: f64,
}

/// A fluid run in progress. Build with [`FluidEngine::new`], drive with [`FluidEngine::advance`]
/// (in chunks, so a caller can show progress), then [`FluidEngine::finish`].
pub struct FluidEngine {
    scenario: Scenario,
    dt: f64,
    step_index: u64,
    total_steps: u64,
    flows: Vec<FlowState>,
    links: Vec<LinkState>,
    hop_in: Vec<f64>,
    ring: Vec<f64>,
    ring_len: usize,
    reductions_per_event: f64,
    measuring: bool,
    measured_from_s: f64,
    next_record_step: u64,
    record_every: u64,
    last_record_s: f64,
    series: Vec<Vec<f64>>,
    flow_updates: u64,
}

impl FluidEngine {
    pub fn new(scenario: &Scenario) -> Result<Self> {
        let sc = scenario.clone();
        let dt = sc.run.step_s;
        let total_steps = (sc.run.duration_s / dt).round() as u64;
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut hop_off = 0;
        let mut max_rtt: f64 = 0.0;
        for (i, f) in sc.flows.iter().enumerate() {
            let law = cc::build(&f.variant, &f.params, &format!("flows[{}].cc", f.group))?;
            let queueing: f64 = f
                .path
                .iter()
                .map(|&l| sc.links[l].buffer_pkts / sc.links[l].capacity_pps)
                .sum();
            max_rtt = max_rtt.max(f.rtt_s + queueing);
            flows.push(FlowState {
                cc: law,
                w: f.initial_window_pkts.min(f.rwnd_pkts),
                ssthresh: if f.slow_start { f.rwnd_pkts } else { 0.0 },
                rtt_s: f.rtt_s,
                x: 0.0,
                started: false,
                hop_off,
                sent: 0.0,
                delivered: 0.0,
                dropped: 0.0,
                cwnd_integral: 0.0,
                reductions: 0.0,
            });
            hop_off += f.path.len();
            let _ = i;
        }
        let (sync_spec, reductions_per_event, holdoff) = match &sc.loss {
            LossModel::Proportional => (None, 1.0, None),
            LossModel::Sync {
                sync,
                policy,
                reductions_per_event,
                holdoff_s,
            } => (
                Some((sync.clone(), *policy)),
                *reductions_per_event,
                *holdoff_s,
            ),
        };
        let mut links = Vec::with_capacity(sc.links.len());
        for (li, l) in sc.links.iter().enumerate() {
            let members: Vec<Member> = sc
                .flows
                .iter()
                .enumerate()
                .filter_map(|(fi, f)| {
                    f.path
                        .iter()
                        .position(|&p| p == li)
                        .map(|hop| Member { flow: fi, hop })
                })
                .collect();
            let n = members.len();
            // Stream 2000 + link: each link's module draws from its own stream.
            let sync = sync_spec.as_ref().map(|(s, p)| {
                SyncModule::new(s.clone(), *p, n, Rng::new(sc.run.seed, 2000 + li as u64))
            });
            links.push(LinkState {
                capacity_pps: l.capacity_pps,
                buffer_pkts: l.buffer_pkts,
                loss_rate: l.loss_rate,
                discipline: queue::build(&l.queue),
                members,
                q: 0.0,
                q_member: vec![0.0; n],
                admitted: vec![0.0; n],
                rate: vec![0.0; n],
                window: vec![0.0; n],
                active: vec![false; n],
                over: vec![0.0; n],
                event_active: false,
                event_start: 0.0,
                event_measured: false,
                holdoff_fixed: holdoff,
                holdoff_s: 0.0,
                event_order: Vec::with_capacity(n),
                event_selected: vec![false; n],
                event_lost: vec![false; n],
                event_candidates: 0,
                sync,
                total_in: 0.0,
                total_out: 0.0,
                total_drop: 0.0,
                meas_in: 0.0,
                meas_out: 0.0,
                meas_drop: 0.0,
                meas_q_integral: 0.0,
                meas_q_max: 0.0,
                events: 0,
                sync_sum: 0.0,
                sync_hist: vec![0; n + 1],
                interval_out: 0.0,
            });
        }
        // The loss signal of a drop now reaches its sender one RTT later (at most max_rtt).
        let ring_len = (max_rtt / dt).ceil() as usize + 3;
        let record_every = ((sc.run.record_interval_s / dt).round() as u64).max(1);
        let n_records = (total_steps / record_every + 1) as usize;
        let n_cols = 1 + 2 * sc.links.len() + 2 * sc.flows.len();
        let measuring = sc.run.warmup_s <= 0.0 && !sc.run.from_first_congestion;
        Ok(FluidEngine {
            dt,
            step_index: 0,
            total_steps,
            hop_in: vec![0.0; hop_off],
            ring: vec![0.0; ring_len * sc.flows.len()],
            ring_len,
            reductions_per_event,
            measuring,
            measured_from_s: if measuring { 0.0 } else { f64::NAN },
            next_record_step: 0,
            record_every,
            last_record_s: 0.0,
            series: (0..n_cols).map(|_| Vec::with_capacity(n_records)).collect(),
            flow_updates: 0,
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

    pub fn is_done(&self) -> bool {
        self.step_index >= self.total_steps
    }

    /// Runs until simulated time `until_s` (or the end of the run).
    pub fn advance(&mut self, until_s: f64) {
        let until = ((until_s / self.dt).round() as u64).min(self.total_steps);
        while self.step_index < until {
            if self.step_index == self.next_record_step {
                self.record();
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
        let dt = self.dt;
        let t = self.step_index as f64 * dt;
        let n = self.step_index as usize;
        let sc = &self.scenario;
        let (flows, links, hop_in, ring) = (
            &mut self.flows,
            &mut self.links,
            &mut self.hop_in,
            &mut self.ring,
        );
        let ring_len = self.ring_len;

        // Statistics start after the warm-up, or at the first congestion event after it.
        let mut measuring = self.measuring;
        let was_measuring = measuring;
        if !measuring && t >= sc.run.warmup_s && !sc.run.from_first_congestion {
            measuring = true;
        }
        let start_on_event = !measuring && t >= sc.run.warmup_s;

        // 1. Senders: RTT and rate.
        for (f, spec) in flows.iter_mut().zip(&sc.flows) {
            if !f.started {
                if t + 0.5 * dt < spec.start_s {
                    continue;
                }
                f.started = true;
            }
            let mut rtt = spec.rtt_s;
            for &l in &spec.path {
                rtt += links[l].q / links[l].capacity_pps;
            }
            f.rtt_s = rtt;
            f.x = f.w / rtt;
        }

        // 2. Links.
        for link in links.iter_mut() {
            let c = link.capacity_pps;
            let mut a_sum = 0.0;
            for (k, m) in link.members.iter().enumerate() {
                let f = &flows[m.flow];
                let rate = if m.hop == 0 {
                    f.x
                } else {
                    hop_in[f.hop_off + m.hop]
                };
                link.rate[k] = rate;
                a_sum += rate;
            }
            let p_disc = link.discipline.early_drop_probability(link.q, dt, c);
            let p_early = 1.0 - (1.0 - link.loss_rate) * (1.0 - p_disc);
            let mut adm_sum = 0.0;
            let mut early_sum = 0.0;
            for k in 0..link.members.len() {
                let arriving = link.rate[k] * dt;
                let early = arriving * p_early;
                link.admitted[k] = arriving - early;
                adm_sum += arriving - early;
                early_sum += early;
                link.over[k] = early; // drops of this member this step (overflow added below)
            }
            let avail = link.q + adm_sum;
            let out = avail.min(c * dt);
            let overflow = (avail - out - link.buffer_pkts).max(0.0);

            // Congestion events: an overflow episode, held at least `holdoff_s` (models.md §2.3).
            if link.event_active && t >= link.event_start + link.holdoff_s {
                close_event(link);
            }
            if overflow > 0.0 && !link.event_active {
                if start_on_event {
                    measuring = true;
                }
                link.event_start = t;
                open_event(link, flows, measuring);
                // Default hold-off: the slowest signalled flow's RTT, plus two steps for the
                // rounding of the feedback delay to whole steps.
                let mut slowest = 0.0f64;
                if let Some(s) = link.sync.as_mut() {
                    // The module picks m_k and S_k now, and each selected flow is signalled once,
                    // one RTT later (eqs. 5–6, §2.3).
                    let m_k = s.draw_m(link.event_candidates);
                    let order = s.prioritize(&link.rate, &link.window, &link.active);
                    link.event_order.clear();
                    link.event_order.extend_from_slice(order);
                    for &k in link.event_order.iter().take(m_k) {
                        link.event_selected[k] = true;
                        let fi = link.members[k].flow;
                        slowest = slowest.max(flows[fi].rtt_s);
                        signal(
                            ring,
                            ring_len,
                            n,
                            dt,
                            &flows[fi],
                            fi,
                            self.reductions_per_event,
                        );
                    }
                    if let Some(&last) = link.event_order.get(m_k.saturating_sub(1)) {
                        s.advance_round_robin(last);
                    }
                } else {
                    for (k, m) in link.members.iter().enumerate() {
                        if link.active[k] {
                            slowest = slowest.max(flows[m.flow].rtt_s);
                        }
                    }
                }
                link.holdoff_s = link.holdoff_fixed.unwrap_or(slowest + 2.0 * dt);
            }

            // Assign the overflow to flows (eq. 7): among S_k by rate in `sync` mode, spilling to
            // the next flows in priority order if S_k cannot absorb it; among all flows by rate
            // in `proportional` mode.
            if overflow > 0.0 {
                if link.sync.is_some() {
                    let mut rest = overflow;
                    let sel_adm: f64 = (0..link.members.len())
                        .filter(|&k| link.event_selected[k])
                        .map(|k| link.admitted[k])
                        .sum();
                    if sel_adm >= rest && sel_adm > 0.0 {
                        for k in 0..link.members.len() {
                            if link.event_selected[k] {
                                link.over[k] += rest * link.admitted[k] / sel_adm;
                            }
                        }
                        rest = 0.0;
                    } else {
                        for k in 0..link.members.len() {
                            if link.event_selected[k] {
                                link.over[k] += link.admitted[k];
                                rest -= link.admitted[k];
                            }
                        }
                    }
                    let mut j = 0;
                    while rest > 1e-12 * overflow && j < link.event_order.len() {
                        let k = link.event_order[j];
                        j += 1;
                        if link.event_selected[k] || link.admitted[k] <= 0.0 {
                            continue;
                        }
                        let take = rest.min(link.admitted[k]);
                        link.over[k] += take;
                        rest -= take;
                        link.event_selected[k] = true;
                        signal(
                            ring,
                            ring_len,
                            n,
                            dt,
                            &flows[link.members[k].flow],
                            link.members[k].flow,
                            self.reductions_per_event,
                        );
                    }
                } else {
                    for k in 0..link.members.len() {
                        link.over[k] += overflow * link.admitted[k] / adm_sum;
                    }
                }
            }

            // Queue and departures: the backlog is a fluid mixture.
            let kept = avail - overflow;
            let share = if kept > 0.0 { out / kept } else { 0.0 };
            let last_hop_flags = &sc.flows;
            for (k, m) in link.members.iter().enumerate() {
                let overflow_k = link.over[k] - (link.rate[k] * dt - link.admitted[k]);
                let content = link.q_member[k] + link.admitted[k] - overflow_k;
                let dep = content * share;
                link.q_member[k] = content - dep;
                let f = &mut flows[m.flow];
                let path_len = last_hop_flags[m.flow].path.len();
                if m.hop + 1 < path_len {
                    hop_in[f.hop_off + m.hop + 1] = dep / dt;
                } else if measuring {
                    f.delivered += dep;
                }
                let drops = link.over[k];
                if drops > 0.0 {
                    if link.event_active {
                        link.event_lost[k] = true;
                    }
                    if measuring {
                        f.dropped += drops;
                    }
                    // Continuous loss indications: every early drop, and in `proportional`
                    // mode every overflow drop, is one loss signal to its sender (models.md §1.2).
                    let signals = if link.sync.is_some() {
                        drops - overflow_k
                    } else {
                        drops
                    };
                    if signals > 0.0 {
                        signal(ring, ring_len, n, dt, f, m.flow, signals);
                    }
                }
                if m.hop == 0 && measuring {
                    f.sent += link.rate[k] * dt;
                }
            }
            link.q = kept - out;
            let drop_total = early_sum + overflow;
            link.total_in += a_sum * dt;
            link.total_out += out;
            link.total_drop += drop_total;
            link.interval_out += out;
            if measuring {
                link.meas_in += a_sum * dt;
                link.meas_out += out;
                link.meas_drop += drop_total;
                link.meas_q_integral += link.q * dt;
                link.meas_q_max = link.meas_q_max.max(link.q);
            }
        }

        // 3–4. Senders: apply the reductions that arrive now, then grow.
        for (i, f) in flows.iter_mut().enumerate() {
            if !f.started {
                continue;
            }
            let spec = &sc.flows[i];
            let slot = i * ring_len + n % ring_len;
            let r = ring[slot];
            ring[slot] = 0.0;
            let ctx = CcContext {
                now_s: t,
                rtt_s: f.rtt_s,
            };
            if r > 0.0 {
                f.w = f.cc.on_loss(&ctx, f.w, r).max(1.0);
                f.ssthresh = f.w;
                if measuring {
                    f.reductions += r;
                }
            }
            let acked = f.x * dt;
            f.w = if f.w < f.ssthresh {
                f.w + acked
            } else {
                f.cc.on_ack(&ctx, f.w, acked)
            };
            f.w = f.w.clamp(1.0, spec.rwnd_pkts);
            if measuring {
                f.cwnd_integral += f.w * dt;
            }
        }
        if measuring && !was_measuring {
            self.measuring = true;
            self.measured_from_s = t;
        }
        self.flow_updates += flows.len() as u64;
        self.step_index += 1;
    }

    fn record(&mut self) {
        let t = self.now_s();
        let span = t - self.last_record_s;
        let mut col = 0;
        let mut push = |v: f64, series: &mut Vec<Vec<f64>>| {
            series[col].push(v);
            col += 1;
        };
        push(t, &mut self.series);
        for l in &mut self.links {
            push(l.q, &mut self.series);
            let u = if span > 0.0 {
                l.interval_out / (l.capacity_pps * span)
            } else {
                f64::NAN
            };
            push(u, &mut self.series);
            l.interval_out = 0.0;
        }
        for f in &self.flows {
            push(f.w, &mut self.series);
            push(f.x, &mut self.series);
        }
        self.last_record_s = t;
        self.next_record_step += self.record_every;
    }

    /// Closes the run and computes the summary.
    pub fn finish(mut self) -> RunResult {
        if self.step_index == self.next_record_step {
            self.record();
        }
        for l in &mut self.links {
            if l.event_active {
                close_event(l);
            }
        }
        let sc = &self.scenario;
        let end = self.now_s();
        let from = if self.measured_from_s.is_nan() {
            end
        } else {
            self.measured_from_s
        };
        let span = end - from;
        let per = |v: f64| if span > 0.0 { v / span } else { 0.0 };

        let links: Vec<LinkSummary> = self
            .links
            .iter()
            .zip(&sc.links)
            .map(|(l, spec)| {
                let mean_q = per(l.meas_q_integral);
                LinkSummary {
                    name: spec.name.clone(),
                    capacity_bps: spec.capacity_bps,
                    buffer_pkts: spec.buffer_pkts,
                    utilization: per(l.meas_out) / l.capacity_pps,
                    loss_rate: if l.meas_in > 0.0 {
                        l.meas_drop / l.meas_in
                    } else {
                        0.0
                    },
                    mean_queue_pkts: mean_q,
                    max_queue_pkts: l.meas_q_max,
                    mean_queueing_delay_s: mean_q / l.capacity_pps,
                    max_queueing_delay_s: l.meas_q_max / l.capacity_pps,
                    congestion_events: l.events,
                    sync_rate_mean: if l.events > 0 {
                        l.sync_sum / l.events as f64
                    } else {
                        f64::NAN
                    },
                    sync_histogram: l.sync_hist.clone(),
                    arrivals_pkts: l.total_in,
                    departures_pkts: l.total_out,
                    drops_pkts: l.total_drop,
                    queue_start_pkts: 0.0,
                    queue_end_pkts: l.q,
                }
            })
            .collect();
        let flows: Vec<FlowSummary> = self
            .flows
            .iter()
            .zip(&sc.flows)
            .enumerate()
            .map(|(i, (f, spec))| {
                let pps = per(f.delivered);
                FlowSummary {
                    flow: i,
                    group: spec.group_name.clone(),
                    variant: spec.variant.clone(),
                    rtt_s: spec.rtt_s,
                    throughput_pps: pps,
                    throughput_bps: pps * 8.0 * sc.links[spec.path[0]].packet_size_bytes,
                    loss_rate: if f.sent > 0.0 {
                        f.dropped / f.sent
                    } else {
                        0.0
                    },
                    mean_cwnd_pkts: per(f.cwnd_integral),
                    reductions: f.reductions,
                }
            })
            .collect();
        let b = (0..links.len())
            .max_by(|&a, &c| {
                links[a]
                    .drops_pkts
                    .total_cmp(&links[c].drops_pkts)
                    .then(c.cmp(&a))
            })
            .unwrap_or(0);
        let bl = &links[b];
        let tput: Vec<f64> = flows.iter().map(|f| f.throughput_pps).collect();
        let summary = Summary {
            scenario: sc.name.clone(),
            engine: "fluid".into(),
            seed: sc.run.seed,
            version: crate::VERSION.into(),
            duration_s: end,
            step_s: self.dt,
            measured_from_s: from,
            bottleneck: bl.name.clone(),
            utilization: bl.utilization,
            jain: metrics::jain(&tput),
            loss_rate: bl.loss_rate,
            congestion_events: bl.congestion_events,
            sync_rate_mean: bl.sync_rate_mean,
            mean_queue_pkts: bl.mean_queue_pkts,
            mean_queueing_delay_s: bl.mean_queueing_delay_s,
            flow_updates: self.flow_updates,
            links,
            flows,
        };
        let mut names = vec!["time_s".to_string()];
        for l in &sc.links {
            names.push(format!("queue_pkts.{}", l.name));
            names.push(format!("utilization.{}", l.name));
        }
        for i in 0..sc.flows.len() {
            names.push(format!("cwnd_pkts.{i}"));
            names.push(format!("rate_pps.{i}"));
        }
        let series = Series {
            columns: names.into_iter().zip(self.series).collect(),
        };
        RunResult { summary, series }
    }
}

/// Schedules `amount` reductions for flow `i`, to arrive one RTT (its current RTT) from step `n`.
fn signal(
    ring: &mut [f64],
    ring_len: usize,
    n: usize,
    dt: f64,
    f: &FlowState,
    i: usize,
    amount: f64,
) {
    let delay = ((f.rtt_s / dt).round() as usize).clamp(1, ring_len - 1);
    ring[i * ring_len + (n + delay) % ring_len] += amount;
}

fn open_event(link: &mut LinkState, flows: &[FlowState], measuring: bool) {
    link.event_active = true;
    link.event_measured = measuring;
    link.event_candidates = 0;
    for (k, m) in link.members.iter().enumerate() {
        link.active[k] = link.rate[k] > 0.0;
        link.window[k] = flows[m.flow].w;
        link.event_selected[k] = false;
        link.event_lost[k] = false;
        link.event_candidates += link.active[k] as usize;
    }
}

fn close_event(link: &mut LinkState) {
    link.event_active = false;
    if link.event_measured {
        let lost = link.event_lost.iter().filter(|&&b| b).count();
        link.events += 1;
        if link.event_candidates > 0 {
            link.sync_sum += lost as f64 / link.event_candidates as f64;
        }
        link.sync_hist[lost] += 1;
    }
}
