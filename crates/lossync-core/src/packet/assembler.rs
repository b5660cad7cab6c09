//! An optical burst switching (OBS) edge node: a timer-based burst assembler at the ingress of a
//! link (docs/packet.md, "Optical burst switching"; K. G. Vlachos, "Burstification effect on the
//! TCP synchronization and congestion window mechanism").
//!
//! Segments (data packets) wait in assembly queues. A queue's timer starts with the first
//! segment into the empty queue; when it expires, or when the queue holds `max_burst` segments,
//! the queue's contents leave together as one burst: every segment is forwarded at that instant,
//! in arrival order, to the link's port, which sends them back to back. The link's `burst_loss`
//! is drawn once per burst at its release: a lost burst drops all its segments at once (the
//! burst is lost in the OBS core the link stands for), and is recorded as a congestion event of
//! as many flows as it held. ACKs are not assembled (they do not cross this node; if one does, it
//! passes straight on).
//!
//! Queue selection: `mixed`, one queue for all flows; `per_flow`, one queue per flow; `random`,
//! a flow joins one of Q queues drawn with equal probability and stays with it until that
//! queue's burst leaves (one assembly cycle), then draws again for its next segment; `window`,
//! a queue per window class with a timer of its own (the paper's 1, 5, 10 ms for windows below
//! B, below C, above): the segment's congestion window, which its sender writes in the packet's
//! congestion header (the field XCP uses), picks the queue.
//!
//! With the link's `contention` instead, a burst is lost when every wavelength of the core is
//! busy ([`Contention`]): it holds a wavelength for its segments' transmission at the
//! wavelength's rate (the link's capacity over the wavelengths). A burst an FDL saves waits
//! there, its segments held in the line's slot, and goes on to the port when the line's delay
//! is over.
//!
//! A queue's storage is reused from burst to burst: after the largest burst, nothing is
//! allocated per packet (the histograms grow only when a larger burst than any before appears).

use super::contention::{Background, Contention, Fate};
use super::event::{ps_from_s, s_from_ps, SimTime};
use super::node::{Actions, Node};
use super::route::Pkt;
use crate::metrics::{BurstRecord, EventRecord};
use crate::rng::Rng;
use crate::scenario::{AssemblyPolicy, Link};

/// Random streams of the assemblers, apart from every other element's (`+ link`).
const DRAW_STREAM: u64 = 5_000_000;
const LOSS_STREAM: u64 = 6_000_000;
/// A flow without a queue (`random` policy).
const NONE: u32 = u32::MAX;

#[derive(Debug, Default)]
struct AssemblyQueue {
    pkts: Vec<Pkt>,
    /// Its assembly timer.
    timer_ps: SimTime,
    /// When the queue's timer expires (meaningful while it holds segments).
    deadline_ps: SimTime,
    /// Bursts released so far (a `random` assignment is valid for one cycle).
    cycle: u32,
}

/// The burst assembler of one link, shared by every flow whose path crosses it.
#[derive(Debug)]
pub struct Assembler {
    link: usize,
    policy: AssemblyPolicy,
    /// `window`: the thresholds between queues, in packets.
    thresholds: Vec<f64>,
    max_burst: usize,
    burst_loss: f64,
    /// The core's wavelengths and FDLs (instead of `burst_loss`), and the time one segment
    /// holds a wavelength.
    core: Option<Contention>,
    wavelength_pkt_ps: SimTime,
    /// Per FDL, the burst in it (storage kept); their timers' tokens follow the queues'.
    fdl_pkts: Vec<Vec<Pkt>>,
    queues: Vec<AssemblyQueue>,
    /// `random`: per flow, its queue and that queue's cycle when it was drawn.
    assigned: Vec<(u32, u32)>,
    draw: Rng,
    loss: Rng,
    /// Flows that have sent a segment through the node (an event's candidates).
    seen: Vec<bool>,
    seen_count: u32,
    /// Per-burst scratch: segments per flow, and the flows touched.
    count: Vec<u32>,
    touched: Vec<u32>,
    measuring: bool,
    record: BurstRecord,
    events: Vec<EventRecord>,
    /// Whole-run totals: segments in, forwarded, lost; and at the window's start, with the
    /// segments held then (the record is the window's).
    arrived: u64,
    forwarded: u64,
    lost: u64,
    at_start: [u64; 4],
}

impl Assembler {
    /// Segments waiting now: in the assembly queues and the fibre delay lines.
    fn held(&self) -> u64 {
        (self.queues.iter().map(|q| &q.pkts))
            .chain(&self.fdl_pkts)
            .map(|p| p.len() as u64)
            .sum()
    }

    /// The assembler of link `l` (index `link`; it has an `assembler`), losing bursts as its
    /// `burst_loss` or `contention` says, for `n_flows` flows, drawing from the run's `seed`.
    pub fn new(link: usize, l: &Link, n_flows: usize, seed: u64) -> Self {
        let params = l.assembler.as_ref().expect("a link with an assembler");
        let core = l.contention.as_ref().map(|c| {
            let background = (c.background_erlangs > 0.0).then(|| {
                let hold_ps = c.background_burst_s * 1e12;
                Background::new(c.background_erlangs, hold_ps, seed, link)
            });
            Contention::new(
                c.wavelengths as usize,
                c.fdls as usize,
                ps_from_s(c.fdl_delay_s),
                background,
            )
        });
        let wavelengths = l.contention.as_ref().map_or(1, |c| c.wavelengths) as f64;
        let wavelength_pkt_ps =
            ps_from_s(8.0 * l.packet_size_bytes * wavelengths / l.capacity_bps).max(1);
        let n_queues = match params.policy {
            AssemblyPolicy::Mixed => 1,
            AssemblyPolicy::PerFlow => n_flows,
            AssemblyPolicy::Random => params.queues.max(1) as usize,
            AssemblyPolicy::Window => params.timers_s.len(),
        };
        let timer_ps = |q: usize| {
            let t = params.timers_s.get(q).copied().unwrap_or(params.timer_s);
            super::event::ps_from_s(t).max(1)
        };
        Assembler {
            link,
            policy: params.policy,
            thresholds: params.thresholds_pkts.clone(),
            max_burst: match params.max_burst_pkts {
                0 => usize::MAX,
                m => m as usize,
            },
            burst_loss: l.burst_loss,
            fdl_pkts: vec![Vec::new(); core.as_ref().map_or(0, Contention::fdls)],
            core,
            wavelength_pkt_ps,
            queues: (0..n_queues)
                .map(|q| AssemblyQueue {
                    timer_ps: timer_ps(q),
                    ..AssemblyQueue::default()
                })
                .collect(),
            assigned: vec![(NONE, 0); n_flows],
            draw: Rng::new(seed, DRAW_STREAM + link as u64),
            loss: Rng::new(seed, LOSS_STREAM + link as u64),
            seen: vec![false; n_flows],
            seen_count: 0,
            count: vec![0; n_flows],
            touched: Vec::with_capacity(n_flows),
            measuring: false,
            record: BurstRecord {
                link,
                ..BurstRecord::default()
            },
            events: Vec::new(),
            arrived: 0,
            forwarded: 0,
            lost: 0,
            at_start: [0; 4],
        }
    }

    /// The queue a segment of `flow` joins (`window`: by the window its sender signalled).
    fn select(&mut self, flow: usize, pkt: &Pkt) -> usize {
        match self.policy {
            AssemblyPolicy::Window => {
                let w = pkt.header().cwnd_pkts as f64;
                self.thresholds.iter().take_while(|&&t| w >= t).count()
            }
            AssemblyPolicy::Mixed => 0,
            AssemblyPolicy::PerFlow => flow,
            AssemblyPolicy::Random => {
                let (q, cycle) = self.assigned[flow];
                if q != NONE && self.queues[q as usize].cycle == cycle {
                    return q as usize;
                }
                let q = self.draw.below(self.queues.len());
                self.assigned[flow] = (q as u32, self.queues[q].cycle);
                q
            }
        }
    }

    /// Queue `q` leaves as one burst, now: forwarded whole, or lost whole.
    fn release(&mut self, q: usize, now_ps: SimTime, out: &mut Actions) {
        let queue = &mut self.queues[q];
        let fate = match &mut self.core {
            Some(core) => {
                let hold_ps = queue.pkts.len() as SimTime * self.wavelength_pkt_ps;
                core.offer(now_ps, hold_ps)
            }
            None if self.burst_loss > 0.0 && self.loss.uniform() < self.burst_loss => Fate::Lost,
            None => Fate::Sent,
        };
        let lost = fate == Fate::Lost;
        queue.cycle = queue.cycle.wrapping_add(1);
        for p in &queue.pkts {
            let c = &mut self.count[p.flow as usize];
            if *c == 0 {
                self.touched.push(p.flow);
            }
            *c += 1;
        }
        if self.measuring {
            let count = &self.count;
            self.record.add(
                queue.pkts.len(),
                self.touched.iter().map(|&f| count[f as usize]),
                lost,
            );
            if lost {
                self.events.push(EventRecord {
                    link: self.link,
                    start_s: s_from_ps(now_ps),
                    candidates: self.seen_count,
                    signalled: 0,
                    lost: self.touched.len() as u32,
                });
            }
        }
        for &f in &self.touched {
            self.count[f as usize] = 0;
        }
        self.touched.clear();
        let n = queue.pkts.len() as u64;
        if lost {
            self.lost += n;
        } else {
            self.forwarded += n;
        }
        if let Fate::Delayed { fdl, at_ps } = fate {
            if self.measuring {
                self.record.delayed_bursts += 1;
            }
            let line = &mut self.fdl_pkts[fdl];
            debug_assert!(line.is_empty(), "an FDL holds one burst");
            line.append(&mut queue.pkts);
            out.timer(at_ps, (self.queues.len() + fdl) as u32);
            return;
        }
        for pkt in queue.pkts.drain(..) {
            if lost {
                out.drop(pkt);
            } else {
                out.forward(pkt);
            }
        }
    }
}

impl Node for Assembler {
    fn receive(&mut self, now_ps: SimTime, pkt: Pkt, out: &mut Actions) {
        if pkt.is_ack {
            return out.forward(pkt);
        }
        self.arrived += 1;
        let f = pkt.flow as usize;
        if !self.seen[f] {
            self.seen[f] = true;
            self.seen_count += 1;
        }
        let q = self.select(f, &pkt);
        let queue = &mut self.queues[q];
        if queue.pkts.is_empty() {
            queue.deadline_ps = now_ps + queue.timer_ps;
            out.timer(queue.deadline_ps, q as u32);
        }
        queue.pkts.push(pkt);
        if queue.pkts.len() >= self.max_burst {
            self.release(q, now_ps, out);
        }
    }

    fn timer(&mut self, now_ps: SimTime, token: u32, out: &mut Actions) {
        let q = token as usize;
        if let Some(fdl) = q.checked_sub(self.queues.len()) {
            // A burst leaves its fibre delay line for a wavelength reserved for it.
            for pkt in self.fdl_pkts[fdl].drain(..) {
                out.forward(pkt);
            }
            return;
        }
        let queue = &self.queues[q];
        // A queue released early (max_burst) leaves its timer behind: a later cycle's deadline
        // is always later than now.
        if !queue.pkts.is_empty() && queue.deadline_ps == now_ps {
            self.release(q, now_ps, out);
        }
    }

    fn start_measuring(&mut self, _now_ps: SimTime) {
        self.measuring = true;
        self.at_start = [self.arrived, self.forwarded, self.lost, self.held()];
        self.record = BurstRecord {
            link: self.link,
            ..BurstRecord::default()
        };
        self.events.clear();
    }

    fn take_records(&mut self, bursts: &mut Vec<BurstRecord>, events: &mut Vec<EventRecord>) {
        let mut record = std::mem::take(&mut self.record);
        let [arrived, forwarded, lost, held] = self.at_start;
        record.arrived_pkts = self.arrived - arrived;
        record.forwarded_pkts = self.forwarded - forwarded;
        record.lost_pkts = self.lost - lost;
        record.held_start_pkts = held;
        record.held_end_pkts = self.held();
        bursts.push(record);
        events.append(&mut self.events);
    }
}
