//! Optical burst switching in the fluid engine (docs/fluid.md, "Optical burst switching"): the
//! packet engine's timer-based assembler (`packet/assembler.rs`) run on the fluid's arrivals, for
//! the `tcp` loss model.
//!
//! Each assembly queue holds the fluid that arrived since its timer started. The timer starts
//! when the idle queue has received one whole segment; when it expires the queue's content leaves
//! as one burst (the part of the step's arrivals after the expiry starts the next). The `tcp`
//! model's sender carries the ACK clock: a window's ACKs return together, so a flow sends in
//! clumps, and flows whose clumps are in phase share bursts, as in the packet engine.
//!
//! Each released burst is lost with probability p (`burst_loss`): the link drops the fraction p
//! of what it carries, and a lost burst is a loss event for each flow it held. A flow with n
//! packets of fluid in the burst had a segment in it with probability min(1, n) (a fluid amount
//! below one packet is the chance of one packet; the same uniform threshold as the `tcp` model's
//! growth drops). A flow the burst left with fewer than DupThresh segments in flight recovers by
//! its retransmission timer, not by duplicate ACKs.
//!
//! With `m_distribution` (a `--sync-out` CSV of a packet run), a lost burst holds m flows drawn
//! from it instead: first among the flows with fluid in it, in proportion to that fluid, then at
//! random among the queue's other senders.
//!
//! Queue selection as in the packet engine: `mixed` one queue; `per_flow` one per flow; `random`
//! Q queues, a flow drawn into one with equal probability, kept until that queue's burst leaves;
//! `window` the queue of the flow's window class, each with its own timer. Wavelength contention
//! and `max_burst` have no fluid form here (refused).

use crate::metrics::{BurstRecord, EventRecord};
use crate::rng::Rng;
use crate::scenario::{Assembler, AssemblyPolicy};

/// RFC 6675 §2 DupThresh.
const DUP_THRESH: f64 = 3.0;
/// The random stream of the fluid assemblers (`+ link`), apart from every other draw.
const STREAM: u64 = 7_000_000;
/// A queue's timer starts once it holds this much fluid: one segment.
const FIRST_SEGMENT_PKTS: f64 = 1.0;

#[derive(Debug, Clone, Copy)]
struct Queue {
    timer_s: f64,
    /// When its timer expires (`f64::INFINITY`: idle, no timer running).
    deadline_s: f64,
    /// Fluid in it, and that fluid's waiting so far (packet · seconds, to the deadline).
    content_pkts: f64,
    wait_pkt_s: f64,
    /// Bursts it has released (a `random` assignment holds for one cycle).
    cycle: u64,
    /// Scratch of a step: its content at the step's start, and when it released a burst in it.
    content_at_step_pkts: f64,
    released_at_s: f64,
}

#[derive(Debug)]
pub(super) struct FluidAssembler {
    link: usize,
    policy: AssemblyPolicy,
    thresholds_pkts: Vec<f64>,
    burst_loss: f64,
    rng: Rng,
    queues: Vec<Queue>,
    /// Per member: its queue and that queue's cycle when it joined, and its fluid in the burst
    /// being assembled there.
    queue_of: Vec<usize>,
    cycle_of: Vec<u64>,
    in_burst: Vec<f64>,
    /// Per member (scratch): its arrivals of this step after its queue's expiry.
    carry: Vec<f64>,
    /// Per member (scratch): whether a lost burst of this step held it, and left it to a timeout.
    pub(super) hit: Vec<bool>,
    timeout: Vec<bool>,
    /// A segment's mean wait in the assembler, over the bursts released so far (per packet).
    wait_pkt_s: f64,
    waited_pkts: f64,
    /// `assembler.m_distribution`: m and P(m' ≤ m), from which a lost burst draws how many
    /// flows it holds (empty: those the fluid put in it).
    m_cdf: Vec<(usize, f64)>,
    record: BurstRecord,
}

impl FluidAssembler {
    pub(super) fn new(
        link: usize,
        a: &Assembler,
        burst_loss: f64,
        members: usize,
        seed: u64,
    ) -> Self {
        let timers_s = match a.policy {
            AssemblyPolicy::Window => a.timers_s.clone(),
            AssemblyPolicy::Mixed => vec![a.timer_s],
            AssemblyPolicy::PerFlow => vec![a.timer_s; members],
            AssemblyPolicy::Random => vec![a.timer_s; a.queues as usize],
        };
        let queue = |timer_s| Queue {
            timer_s,
            deadline_s: f64::INFINITY,
            content_pkts: 0.0,
            wait_pkt_s: 0.0,
            cycle: 0,
            content_at_step_pkts: 0.0,
            released_at_s: f64::INFINITY,
        };
        FluidAssembler {
            link,
            policy: a.policy,
            thresholds_pkts: a.thresholds_pkts.clone(),
            burst_loss,
            rng: Rng::new(seed, STREAM + link as u64),
            queues: timers_s.into_iter().map(queue).collect(),
            queue_of: (0..members)
                .map(|k| {
                    if a.policy == AssemblyPolicy::PerFlow {
                        k
                    } else {
                        0
                    }
                })
                .collect(),
            // No `random` member has a queue yet (cycle 0 never matches a drawn one's `+ 1`).
            cycle_of: vec![0; members],
            in_burst: vec![0.0; members],
            carry: vec![0.0; members],
            hit: vec![false; members],
            timeout: vec![false; members],
            wait_pkt_s: 0.0,
            waited_pkts: 0.0,
            m_cdf: (a.m_probabilities.iter())
                .scan(0.0, |c, &(m, p)| {
                    *c += p;
                    Some((m, *c))
                })
                .collect(),
            record: BurstRecord {
                link,
                ..BurstRecord::default()
            },
        }
    }

    /// The fraction of arrivals the link loses (every segment of a lost burst).
    pub(super) fn loss(&self) -> f64 {
        self.burst_loss
    }

    /// Whether the lost burst left member `k` too few segments in flight for duplicate ACKs.
    pub(super) fn timeout(&self, k: usize) -> bool {
        self.timeout[k]
    }

    /// A segment's mean wait in the assembler so far.
    pub(super) fn mean_wait_s(&self) -> f64 {
        if self.waited_pkts > 0.0 {
            self.wait_pkt_s / self.waited_pkts
        } else {
            0.0
        }
    }

    /// One step from `t` to `t + dt`: the members' arrivals (`rate`, packets/s) join
    /// their queues and the queues whose timers expire release their bursts; `hit` marks the
    /// members a lost burst held (each lost burst is a congestion event, logged if `measured`).
    /// `window(k)` is member k's congestion window. Returns whether a burst was lost.
    pub(super) fn step(
        &mut self,
        rate: &[f64],
        window: impl Fn(usize) -> f64,
        t: f64,
        dt: f64,
        measured: bool,
        log: &mut Vec<EventRecord>,
    ) -> bool {
        self.hit.fill(false);
        self.timeout.fill(false);
        let end = t + dt;
        for q in &mut self.queues {
            q.content_at_step_pkts = q.content_pkts;
        }
        // 1. Arrivals join their queues; a queue whose timer expires within the step takes the
        //    part before the expiry, the rest waits for its next burst (`carry`).
        for (k, &r) in rate.iter().enumerate() {
            let a = r * dt;
            self.carry[k] = 0.0;
            if a <= 0.0 {
                continue;
            }
            let q = self.select(k, &window);
            let queue = &mut self.queues[q];
            let before = if queue.deadline_s < end {
                ((queue.deadline_s - t) / dt).clamp(0.0, 1.0)
            } else {
                1.0
            };
            let joined = a * before;
            if queue.deadline_s.is_finite() {
                // Arrivals come on average in the middle of their part of the step.
                queue.wait_pkt_s += joined * (queue.deadline_s - (t + 0.5 * dt * before)).max(0.0);
            }
            queue.content_pkts += joined;
            self.in_burst[k] += joined;
            self.carry[k] = a - joined;
        }
        // 2. Expired timers release their bursts.
        let mut any = false;
        for q in 0..self.queues.len() {
            if self.queues[q].deadline_s < end {
                any |= self.release(q, &window, measured, log);
            }
        }
        // 3. What came after an expiry joins the queue's next burst (`random`: a new draw).
        for k in 0..self.carry.len() {
            let c = self.carry[k];
            if c > 0.0 {
                let q = self.select(k, &window);
                self.queues[q].content_pkts += c;
                self.in_burst[k] += c;
            }
        }
        // 4. An idle queue's timer starts with its first whole segment: at the moment of the
        //    step its content crossed one packet (the expiry, for content carried over).
        for queue in &mut self.queues {
            if queue.deadline_s.is_finite() || queue.content_pkts < FIRST_SEGMENT_PKTS {
                continue;
            }
            let c0 = queue.content_at_step_pkts;
            let start = if queue.released_at_s.is_finite() {
                queue.released_at_s
            } else if queue.content_pkts > c0 {
                t + dt * ((FIRST_SEGMENT_PKTS - c0) / (queue.content_pkts - c0)).clamp(0.0, 1.0)
            } else {
                end
            };
            queue.deadline_s = start + queue.timer_s;
            queue.wait_pkt_s += queue.content_pkts * queue.timer_s;
        }
        for queue in &mut self.queues {
            queue.released_at_s = f64::INFINITY;
        }
        any
    }

    /// The queue member `k` sends into now: `mixed` the one, `per_flow` its own, `window` its
    /// window's class (re-read only once none of its segments wait: they leave together),
    /// `random` its draw, kept until that queue's burst leaves.
    fn select(&mut self, k: usize, window: &impl Fn(usize) -> f64) -> usize {
        match self.policy {
            AssemblyPolicy::Mixed => 0,
            AssemblyPolicy::PerFlow => k,
            AssemblyPolicy::Window => {
                if self.in_burst[k] <= 0.0 {
                    let w = window(k);
                    self.queue_of[k] = self.thresholds_pkts.iter().filter(|&&b| b <= w).count();
                }
                self.queue_of[k]
            }
            AssemblyPolicy::Random => {
                let q = self.queue_of[k];
                if self.cycle_of[k] != self.queues[q].cycle + 1 {
                    let q = self.rng.below(self.queues.len());
                    self.queue_of[k] = q;
                    self.cycle_of[k] = self.queues[q].cycle + 1;
                }
                self.queue_of[k]
            }
        }
    }

    /// Releases queue `q`'s burst: drawn lost with p; a lost burst holds each member with n
    /// packets of fluid in it with probability min(1, n), and leaves it to a timeout if fewer
    /// than DupThresh of its window's segments are outside the burst. Returns whether lost.
    fn release(
        &mut self,
        q: usize,
        window: &impl Fn(usize) -> f64,
        measured: bool,
        log: &mut Vec<EventRecord>,
    ) -> bool {
        let queue = self.queues[q];
        let lost = self.rng.uniform() < self.burst_loss;
        let (mut held, mut candidates, mut fullest) = (0u32, 0u32, None::<(f64, usize)>);
        let members = if self.policy == AssemblyPolicy::PerFlow {
            q..q + 1
        } else {
            0..self.in_burst.len()
        };
        let m_imposed = if lost && !self.m_cdf.is_empty() {
            let u = self.rng.uniform();
            let i = self
                .m_cdf
                .iter()
                .position(|&(_, c)| u < c)
                .unwrap_or(self.m_cdf.len() - 1);
            Some(self.m_cdf[i].0)
        } else {
            None
        };
        for k in members.clone() {
            let n = self.in_burst[k];
            if self.queue_of[k] != q || n <= 0.0 {
                continue;
            }
            candidates += 1;
            if fullest.is_none_or(|(most, _)| n > most) {
                fullest = Some((n, k));
            }
            if lost && m_imposed.is_none() && self.rng.uniform() < n {
                self.hit[k] = true;
                held += 1;
            }
        }
        // A burst holds at least one segment (its timer started with one): if every draw
        // missed, it is the segment of the flow with the most fluid in it.
        if let (true, 0, Some((_, k))) = (lost && m_imposed.is_none(), held, fullest) {
            self.hit[k] = true;
            held = 1;
        }
        if let Some(m) = m_imposed {
            held = self.impose(q, m, candidates, members.clone(), window);
        }
        for k in members {
            if self.queue_of[k] == q && self.in_burst[k] > 0.0 {
                if self.hit[k] {
                    self.timeout[k] = window(k) - self.in_burst[k] < DUP_THRESH;
                }
                self.in_burst[k] = 0.0;
            }
        }
        // The mean wait, over recent bursts (weights decaying by 1% a burst).
        self.wait_pkt_s = 0.99 * self.wait_pkt_s + queue.wait_pkt_s;
        self.waited_pkts = 0.99 * self.waited_pkts + queue.content_pkts;
        let emptied = &mut self.queues[q];
        emptied.released_at_s = emptied.deadline_s;
        emptied.deadline_s = f64::INFINITY;
        emptied.content_pkts = 0.0;
        emptied.wait_pkt_s = 0.0;
        emptied.cycle += 1;
        if measured {
            let r = &mut self.record;
            r.bursts += 1;
            r.segments += queue.content_pkts.round() as u64;
            if lost {
                // The link's loss too (metrics: its loss rate and the headline's).
                r.lost_segments += queue.content_pkts.round() as u64;
            }
            if lost && held > 0 {
                r.count_lost_flows(held as usize);
                log.push(EventRecord {
                    link: self.link,
                    start_s: queue.deadline_s,
                    // As the packet engine's: the flows that have sent through the node.
                    candidates: (0..self.in_burst.len())
                        .filter(|&k| window(k) > 0.0)
                        .count() as u32,
                    signalled: 0,
                    lost: held,
                });
            }
        }
        lost && held > 0
    }

    /// `m_distribution`: a lost burst of queue `q` holds `m` flows (held so far: none), first
    /// each drawn in proportion to its fluid in the burst among those not drawn, then, beyond the
    /// `candidates` with fluid in it, at random among the queue's other senders (the measured m
    /// counts flows the fluid's smoothed clumps may have missed). Returns how many it holds.
    fn impose(
        &mut self,
        q: usize,
        m: usize,
        candidates: u32,
        members: std::ops::Range<usize>,
        window: &impl Fn(usize) -> f64,
    ) -> u32 {
        let mut held = 0;
        for _ in 0..m.min(candidates as usize) {
            let total: f64 = members
                .clone()
                .filter(|&k| self.queue_of[k] == q && !self.hit[k])
                .map(|k| self.in_burst[k].max(0.0))
                .sum();
            let mut pick = self.rng.uniform() * total;
            for k in members.clone() {
                let n = self.in_burst[k];
                if self.queue_of[k] != q || n <= 0.0 || self.hit[k] {
                    continue;
                }
                pick -= n;
                if pick < 0.0 {
                    self.hit[k] = true;
                    held += 1;
                    break;
                }
            }
        }
        let sender = |s: &Self, k: usize| s.queue_of[k] == q && !s.hit[k] && window(k) > 0.0;
        let mut others = members.clone().filter(|&k| sender(self, k)).count() as u32;
        let mut wanted = (m as u32).saturating_sub(held).min(others);
        for k in members {
            if wanted == 0 {
                break;
            }
            if !sender(self, k) {
                continue;
            }
            // Selection sampling: each of the `others` left is taken with wanted/others.
            if self.rng.uniform() * (others as f64) < wanted as f64 {
                self.hit[k] = true;
                held += 1;
                wanted -= 1;
            }
            others -= 1;
        }
        held
    }

    /// The warm-up ends: counts start from here.
    pub(super) fn start_measuring(&mut self) {
        let link = self.record.link;
        self.record = BurstRecord {
            link,
            ..BurstRecord::default()
        };
    }

    /// The assembler's record: bursts and lost bursts, flows per lost burst; the per-burst
    /// histograms of all bursts are the packet engine's alone.
    pub(super) fn finish(self) -> BurstRecord {
        self.record
    }
}
