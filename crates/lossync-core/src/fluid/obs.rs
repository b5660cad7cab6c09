//! Optical burst switching in the fluid engine (docs/fluid.md, "Optical burst switching"): a
//! timer-based assembler's bursts as a rate, and their random loss as events that hit the flows
//! with segments in the lost burst. The packet engine assembles real bursts
//! (`packet/assembler.rs`); this is its fluid form, for the `tcp` loss model.
//!
//! What goes into a burst is set by the ACK clock, not by a flow's average rate: a window's
//! ACKs come back together (its segments left in few bursts), so the sender sends its next
//! window as one clump, at its access rate. A window w behind an access link of a packets/s
//! takes D = w/a; the timer T cuts it into ⌈D/T⌉ batches of at most a·T segments (the seed's
//! per-source ceiling), one clump per RTT: batches arrive at β = ⌈D/T⌉ / RTT, each lasting
//! d = D / ⌈D/T⌉.
//! - `per_flow`: each batch is a burst of its own: bursts at β, a flow in each of its bursts.
//! - `mixed` (and each queue of `window` and `random`): batches of all flows, taken as Poisson
//!   (rate Λ = Σβ), start a burst when none is being assembled: bursts at Λ / (1 + ΛT) (an idle
//!   wait of mean 1/Λ and the timer per cycle). A lost burst holds the flow of its first batch,
//!   drawn in proportion to β, and each flow with a batch overlapping the timer's window, with
//!   probability 1 − e^(−β(T + d)).
//! - A segment waits T − d/2 in a batch that starts a burst, and T/2 − d/2 (at least 0) on
//!   average in one that joins a burst under way.
//!
//! Each burst is lost with probability p (`burst_loss`), so the link drops the fraction p of what
//! it carries, and a lost burst is a loss event for every flow it held (one window reduction per
//! round trip, as a SACK sender's). `random` Q queues: Λ/Q each, a flow in the lost burst's queue
//! with probability 1/Q (the packet engine keeps a flow's queue for a whole assembly cycle).
//! Wavelength contention and `max_burst` have no fluid form here (refused).

use crate::metrics::{BurstRecord, EventRecord};
use crate::rng::Rng;
use crate::scenario::{Assembler, AssemblyPolicy};

/// RFC 6675 §2 DupThresh.
const DUP_THRESH: f64 = 3.0;
/// The random stream of the fluid assemblers (`+ link`), apart from every other draw.
const STREAM: u64 = 7_000_000;

#[derive(Debug)]
pub(super) struct FluidAssembler {
    link: usize,
    policy: AssemblyPolicy,
    timers_s: Vec<f64>,
    thresholds_pkts: Vec<f64>,
    queues: usize,
    burst_loss: f64,
    rng: Rng,
    /// Per queue (scratch): batches per second.
    queue_rate: Vec<f64>,
    /// Per member (scratch): its queue (`window`), its batches per second and their duration,
    /// and whether the lost burst held it.
    queue_of: Vec<usize>,
    batch_rate: Vec<f64>,
    batch_s: Vec<f64>,
    batch_pkts: Vec<f64>,
    /// Per member: its packets that arrived over the last timer (an exponential window of the
    /// shortest timer), the ACK clock's on/off pattern as the fluid carries it.
    recent_pkts: Vec<f64>,
    /// Per member: its window, and whether the lost burst leaves it to a timeout.
    window_pkts: Vec<f64>,
    timeout: Vec<bool>,
    pub(super) hit: Vec<bool>,
    /// Bursts released since the start (expected, fractional) and at the warm-up's end.
    bursts: f64,
    bursts_from: f64,
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
            _ => vec![a.timer_s],
        };
        let queues = match a.policy {
            AssemblyPolicy::Mixed => 1,
            AssemblyPolicy::PerFlow => members,
            AssemblyPolicy::Random => a.queues as usize,
            AssemblyPolicy::Window => timers_s.len(),
        };
        FluidAssembler {
            link,
            policy: a.policy,
            thresholds_pkts: a.thresholds_pkts.clone(),
            timers_s,
            queues,
            burst_loss,
            rng: Rng::new(seed, STREAM + link as u64),
            queue_rate: vec![0.0; queues.max(1)],
            queue_of: vec![0; members],
            batch_rate: vec![0.0; members],
            batch_s: vec![0.0; members],
            batch_pkts: vec![0.0; members],
            recent_pkts: vec![0.0; members],
            window_pkts: vec![0.0; members],
            timeout: vec![false; members],
            hit: vec![false; members],
            bursts: 0.0,
            bursts_from: 0.0,
            record: BurstRecord {
                link,
                ..BurstRecord::default()
            },
        }
    }

    /// Whether the lost burst took so much of member `k`'s window that fewer than DupThresh
    /// segments are left to bring duplicate ACKs: its loss is found by the retransmission timer.
    pub(super) fn timeout(&self, k: usize) -> bool {
        self.timeout[k]
    }

    /// The fraction of arrivals the link loses (every segment of a lost burst).
    pub(super) fn loss(&self) -> f64 {
        self.burst_loss
    }

    /// One step: this step's lost bursts, drawn from the members' sources (`source(k)`: window
    /// in packets, RTT in seconds, access rate in packets/s, or `None` while it does not send);
    /// `hit` marks the members a lost burst held, and each lost burst is logged as a congestion
    /// event (if `measured`). Returns whether a burst was lost, and a segment's mean wait in the
    /// assembler (weighted by the members' rates w/RTT).
    pub(super) fn step(
        &mut self,
        source: impl Fn(usize) -> Option<(f64, f64, f64)>,
        rate: &[f64],
        t: f64,
        dt: f64,
        measured: bool,
        log: &mut Vec<EventRecord>,
    ) -> (bool, f64) {
        let n = self.hit.len();
        self.hit.fill(false);
        self.timeout.fill(false);
        let keep = (-dt / self.timers_s[0]).exp();
        for (recent, &r) in self.recent_pkts.iter_mut().zip(rate) {
            *recent = *recent * keep + r * dt;
        }
        self.queue_rate.fill(0.0);
        let (mut packets, mut wait_sum) = (0.0, 0.0);
        for k in 0..n {
            let Some((w, rtt_s, access_pps)) = source(k).filter(|s| s.0 > 0.0) else {
                self.batch_rate[k] = 0.0;
                continue;
            };
            let q = match self.policy {
                AssemblyPolicy::Mixed | AssemblyPolicy::Random => 0,
                AssemblyPolicy::PerFlow => k,
                AssemblyPolicy::Window => self.thresholds_pkts.iter().filter(|&&b| b <= w).count(),
            };
            let t_q = self.timers_s[q.min(self.timers_s.len() - 1)];
            let clump_s = w / access_pps;
            let batches = (clump_s / t_q).ceil().max(1.0);
            self.queue_of[k] = q;
            self.batch_rate[k] = batches / rtt_s;
            self.batch_s[k] = clump_s / batches;
            self.batch_pkts[k] = w / batches;
            self.window_pkts[k] = w;
            if self.policy != AssemblyPolicy::PerFlow {
                self.queue_rate[q] += self.batch_rate[k];
            }
            packets += w / rtt_s;
        }
        if packets <= 0.0 {
            return (false, 0.0);
        }
        let q_count = self.queues.max(1);
        let mut any = false;
        if self.policy == AssemblyPolicy::PerFlow {
            let t_s = self.timers_s[0];
            for k in 0..n {
                let beta = self.batch_rate[k];
                if beta <= 0.0 {
                    continue;
                }
                let (w, rtt_s, _) = source(k).unwrap_or_default();
                wait_sum += w / rtt_s * (t_s - 0.5 * self.batch_s[k]);
                self.bursts += beta * dt;
                if self.draw_loss(beta * dt) {
                    any = true;
                    self.hit[k] = true;
                    // Its burst is one whole batch.
                    self.timeout[k] = self.window_pkts[k] - self.batch_pkts[k] < DUP_THRESH;
                    self.count(1, t, measured, log);
                }
            }
            return (any, wait_sum / packets);
        }
        // `random`: the batches spread over Q queues alike; the others have one rate per queue.
        let share = if self.policy == AssemblyPolicy::Random {
            let lam = self.queue_rate[0] / q_count as f64;
            self.queue_rate[..q_count].fill(lam);
            1.0 / q_count as f64
        } else {
            1.0
        };
        for q in 0..q_count {
            let (lam, t_s) = (
                self.queue_rate[q],
                self.timers_s[q.min(self.timers_s.len() - 1)],
            );
            if lam <= 0.0 {
                continue;
            }
            let starts = 1.0 / (1.0 + lam * t_s);
            for k in 0..n {
                if self.batch_rate[k] > 0.0 && (share < 1.0 || self.queue_of[k] == q) {
                    let (w, rtt_s, _) = source(k).unwrap_or_default();
                    let d = self.batch_s[k];
                    let wait =
                        starts * (t_s - 0.5 * d) + (1.0 - starts) * (0.5 * (t_s - d)).max(0.0);
                    wait_sum += share * w / rtt_s * wait;
                }
            }
            let b = lam * starts;
            self.bursts += b * dt;
            if self.draw_loss(b * dt) {
                any = true;
                let held = self.hold(q, t_s, share);
                self.count(held, t, measured, log);
            }
        }
        (any, wait_sum / packets)
    }

    /// Marks the flows a lost burst of queue `q` held: the flow of its first segment, drawn in
    /// proportion to the packets that arrived over the last timer, and each flow with one of its
    /// arrivals in the burst: with n packets over the timer, probability 1 − e^(−n) (`share` < 1,
    /// `random`: in the burst's queue with that probability). The arrivals are the fluid's own,
    /// so flows whose ACK clocks are in phase are held together, as in the packet engine.
    /// Returns how many.
    fn hold(&mut self, q: usize, t_s: f64, share: f64) -> u32 {
        let inside =
            |s: &Self, k: usize| s.batch_rate[k] > 0.0 && (share < 1.0 || s.queue_of[k] == q);
        let total: f64 = (0..self.hit.len())
            .filter(|&k| inside(self, k))
            .map(|k| self.recent_pkts[k])
            .sum();
        let mut pick = self.rng.uniform() * total;
        let mut held = 0;
        for k in 0..self.hit.len() {
            if !inside(self, k) {
                continue;
            }
            let n = self.recent_pkts[k];
            let first = (0.0..n).contains(&pick);
            pick -= n;
            if first || self.rng.uniform() < share * (1.0 - (-n).exp()) {
                self.hit[k] = true;
                held += 1;
                // The burst takes the batch that began it whole; another batch, begun at a
                // uniform offset in (−d, T) of the timer's window, whole enough to leave fewer
                // than DupThresh segments with probability (T − d(1 − 2·DupThresh/w)) / (T + d).
                let (w, batch, d) = (self.window_pkts[k], self.batch_pkts[k], self.batch_s[k]);
                if w - batch < DUP_THRESH {
                    let whole = if first {
                        1.0
                    } else {
                        ((t_s - d * (1.0 - 2.0 * DUP_THRESH / w)) / (t_s + d)).clamp(0.0, 1.0)
                    };
                    self.timeout[k] = self.rng.uniform() < whole;
                }
            }
        }
        held
    }

    /// Whether a burst of this step is lost: `expected_bursts` leave, each lost with p.
    fn draw_loss(&mut self, expected_bursts: f64) -> bool {
        let p = 1.0 - (-self.burst_loss * expected_bursts).exp();
        self.rng.uniform() < p
    }

    fn count(&mut self, held: u32, t: f64, measured: bool, log: &mut Vec<EventRecord>) {
        if !measured || held == 0 {
            return;
        }
        let r = &mut self.record;
        r.lost_bursts += 1;
        r.lost_flows += held as u64;
        let h = &mut r.lost_flows_histogram;
        if held as usize >= h.len() {
            h.resize(held as usize + 1, 0);
        }
        h[held as usize] += 1;
        log.push(EventRecord {
            link: self.link,
            start_s: t,
            candidates: self.batch_rate.iter().filter(|&&b| b > 0.0).count() as u32,
            signalled: 0,
            lost: held,
        });
    }

    /// The warm-up ends: counts start from here.
    pub(super) fn start_measuring(&mut self) {
        self.bursts_from = self.bursts;
        self.record.lost_bursts = 0;
        self.record.lost_flows = 0;
        self.record.lost_flows_histogram.clear();
    }

    /// The assembler's record: bursts (the expected count, rounded) and the lost ones; the
    /// per-burst histograms of packets are the packet engine's alone.
    pub(super) fn finish(mut self) -> BurstRecord {
        self.record.bursts = (self.bursts - self.bursts_from).round() as u64;
        self.record
    }
}
