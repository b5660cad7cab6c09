//! The queue of one direction of a link (a link is a port followed by a [pipe](super::pipe)): a
//! FIFO of packets (data and ACKs) served at the link's capacity, behind the link's random loss
//! and its queue discipline (which owns the buffer: drop-tail, RED, an XCP router; see
//! [`crate::queue`]), with its running totals.
//!
//! Serialization keeps its sub-picosecond carry per class of packets: class 0 is the link's data
//! packets (one carry for all flows); each ACK route that crosses the port has a class of its
//! own (its flow's ACK size), added with [`Port::add_class`] and named by the route's hop.

use super::event::{Serializer, SimTime};
use super::ring::Ring;
use super::route::Pkt;
use crate::metrics::sojourn::SojournHistogram;
use crate::queue::{Arrival, Buffer, Departure, Discipline, DropReason, Ecn, LinkContext, Verdict};
use crate::rng::Rng;
use crate::scenario::Link;

/// Running totals since t = 0 (data packets; ACKs apart); statistics are differences of two
/// snapshots.
#[derive(Debug, Clone, Copy, Default)]
pub struct PortAcc {
    pub arrived: u64,
    pub departed: u64,
    /// Every data drop; of them, the discipline's early (AQM) drops and its overflow drops (the
    /// rest are the wire's random losses).
    pub dropped: u64,
    pub dropped_early: u64,
    pub dropped_overflow: u64,
    /// Data packets the discipline marked CE.
    pub marked: u64,
    pub acks_departed: u64,
    pub acks_dropped: u64,
    /// ∫ queue dt in packet·picoseconds, exact (data and ACKs).
    pub queue_area: u128,
    /// Picoseconds spent serializing data packets (ACKs apart), exact: the link's utilization
    /// over a window is this over the window's length, at most 1 (the link serializes one
    /// packet at a time), however the window's edges cut a packet's transmission.
    pub data_busy_ps: u64,
}

/// What became of an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    Dropped,
    Queued,
    /// Queued into an idle port: the caller starts its service ([`Port::next`]).
    Idle,
}

/// What the port does next, when a transmission ends or a packet reaches it idle.
#[derive(Debug, Clone, Copy)]
pub enum Next {
    /// Nothing waits.
    Idle,
    /// A packet is now on the wire, for this many picoseconds.
    Serve(SimTime),
    /// The discipline dropped this packet at dequeue; ask again.
    Dropped(Pkt),
}

/// A packet waiting in a sub-queue, with the time it arrived and its serializer class (its size,
/// which a discipline weighing sub-queues in bytes is told when it leaves or is pushed out).
#[derive(Debug, Clone, Copy, Default)]
struct Waiting {
    pkt: Pkt,
    enqueued_ps: SimTime,
    class: u32,
    /// It arrived ECT(1) or CE (RFC 9331 §5.1), before this port's own verdict: a classic
    /// packet this port marks CE at enqueue (RED) stays out of the L4S sojourn.
    l4s: bool,
}

pub struct Port {
    pub link: usize,
    pub capacity_pps: f64,
    /// Serializers by class (0: data packets).
    classes: Vec<Serializer>,
    /// Nominal service time of a data packet.
    pub service_ps: SimTime,
    /// The discipline's sub-queues (one for a FIFO), and the packet on the wire.
    waiting: Vec<Ring<Waiting>>,
    waiting_len: usize,
    serving: Option<Pkt>,
    discipline: Box<dyn Discipline>,
    /// The discipline acts at dequeue or departure ([`Discipline::acts_after_enqueue`]).
    acts_after_enqueue: bool,
    /// Sojourn times of the data packets that left for the wire since the window began, and of
    /// those of them that left with an L4S codepoint (ECT(1) or CE, RFC 9331 §5.1: DualPI2's
    /// L queue).
    pub sojourn: SojournHistogram,
    pub sojourn_l4s: SojournHistogram,
    random_loss: f64,
    rng: Rng,
    pub acc: PortAcc,
    queue_changed_ps: SimTime,
    /// Largest occupancy since the statistics started.
    pub q_max: usize,
    /// Data packets held when the measurement window began (its accounting starts from them).
    pub data_len_at_measuring: usize,
    /// Flows whose data cross this port, started and not yet drained (congestion-event
    /// candidates: a finished flow can lose its last packets).
    pub started_flows: u32,
}

impl Port {
    /// `buffer_pkts` as resolved (the discipline keeps at least one slot); `first_interval_s`
    /// is a feedback router's first control interval; `seed` gives its random stream.
    pub fn new(
        index: usize,
        link: &Link,
        buffer_pkts: f64,
        first_interval_s: f64,
        seed: u64,
        presize: usize,
    ) -> Self {
        let data_service = Serializer::new(8.0 * link.packet_size_bytes, link.capacity_bps);
        let buffer = Buffer::new(buffer_pkts);
        let discipline = link.queue.build(LinkContext {
            buffer,
            capacity_pps: link.capacity_pps,
            packet_time_ps: data_service.nominal_ps(),
            packet_size_bytes: link.packet_size_bytes,
            first_interval_s,
        });
        Port {
            link: index,
            capacity_pps: link.capacity_pps,
            service_ps: data_service.nominal_ps(),
            classes: vec![data_service],
            waiting: (0..discipline.queues())
                .map(|k| Ring::with_capacity(if k == 0 { buffer.slots.min(presize) } else { 1 }))
                .collect(),
            waiting_len: 0,
            serving: None,
            acts_after_enqueue: discipline.acts_after_enqueue(),
            discipline,
            sojourn: SojournHistogram::default(),
            sojourn_l4s: SojournHistogram::default(),
            random_loss: link.loss_rate,
            // Stream 3000 + link: the packet engine's per-link randomness (random loss, RED).
            rng: Rng::new(seed, 3000 + index as u64),
            acc: PortAcc::default(),
            queue_changed_ps: 0,
            q_max: 0,
            data_len_at_measuring: 0,
            started_flows: 0,
        }
    }

    /// Packets held, the one on the wire included.
    pub fn len(&self) -> usize {
        self.waiting_len + self.serving.is_some() as usize
    }

    /// Data packets queued (ACKs excluded): the term of the data-packet accounting
    /// arrivals = departures + drops + queued, whose counters count data only.
    pub fn data_len(&self) -> usize {
        let waiting: usize = self
            .waiting
            .iter()
            .map(|q| q.iter().filter(|w| !w.pkt.is_ack).count())
            .sum();
        waiting + self.serving.is_some_and(|p| !p.is_ack) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A serializer class for packets of another size (an ACK route's); returns its number.
    pub fn add_class(&mut self, service: Serializer) -> u32 {
        self.classes.push(service);
        (self.classes.len() - 1) as u32
    }

    /// Serializer classes (for checking routes).
    pub fn classes(&self) -> usize {
        self.classes.len()
    }

    pub fn buffer(&self) -> Buffer {
        self.discipline.buffer()
    }

    /// Adds the occupancy, and the time spent serializing data, over the time since the last
    /// change.
    pub fn integrate(&mut self, now_ps: SimTime) {
        let dt = now_ps - self.queue_changed_ps;
        self.acc.queue_area += self.len() as u128 * dt as u128;
        if self.serving.is_some_and(|p| !p.is_ack) {
            self.acc.data_busy_ps += dt;
        }
        self.queue_changed_ps = now_ps;
    }

    /// A packet's size in data packets of this link (ACK classes are smaller).
    fn size_pkts(&self, is_ack: bool, class: u32) -> f64 {
        if is_ack {
            self.classes[class as usize].nominal_ps() as f64 / self.service_ps as f64
        } else {
            1.0
        }
    }

    /// A packet of serializer class `class` arrives at route position `hop` (stored with it).
    /// Random loss applies to data only (a property of the wire, before the queue); the
    /// discipline decides the rest. Returns what became of it, and a packet the discipline
    /// pushed out of a full buffer to make room (flow queuing drops from the fattest queue).
    pub fn admit(&mut self, now_ps: SimTime, pkt: Pkt, class: u32) -> (Admit, Option<Pkt>) {
        let q = self.len();
        let mut pkt = pkt;
        let ecn = pkt.ecn();
        let size_pkts = self.size_pkts(pkt.is_ack, class);
        // One FIFO (every discipline but the flow-queuing ones): no call to classify.
        let sub = if self.waiting.len() == 1 {
            0
        } else {
            self.discipline.classify(pkt.flow, pkt.is_ack, ecn)
        };
        let verdict = if pkt.is_ack {
            let arrival = Arrival {
                flow: pkt.flow,
                sub,
                ecn,
                size_pkts,
                header: None,
            };
            self.discipline.enqueue(now_ps, q, arrival, &mut self.rng)
        } else {
            self.acc.arrived += 1;
            if self.random_loss > 0.0 && self.rng.uniform() < self.random_loss {
                Verdict::Dropped(DropReason::Wire)
            } else {
                let mut header = pkt.header();
                let arrival = Arrival {
                    flow: pkt.flow,
                    sub,
                    ecn,
                    size_pkts,
                    header: Some(&mut header),
                };
                let verdict = self.discipline.enqueue(now_ps, q, arrival, &mut self.rng);
                if header.feedback_pkts.to_bits() != pkt.feedback_pkts.to_bits() {
                    pkt.feedback_pkts = header.feedback_pkts; // an XCP router's feedback
                }
                verdict
            }
        };
        match verdict {
            Verdict::Dropped(reason) => {
                self.count_drop(pkt.is_ack, reason);
                return (Admit::Dropped, None);
            }
            Verdict::Marked => self.mark(&mut pkt),
            Verdict::Queued => {}
        }
        self.integrate(now_ps);
        self.waiting[sub].push_back(Waiting {
            pkt,
            enqueued_ps: now_ps,
            class,
            l4s: ecn.l4s(),
        });
        self.waiting_len += 1;
        self.q_max = self.q_max.max(q + 1);
        // A discipline with sub-queues takes the arrival, then drops from the queue it names.
        let mut pushed = None;
        if self.waiting.len() > 1 && self.len() > self.discipline.buffer().slots {
            let k = self.discipline.overflow_victim();
            if let Some(w) = self.waiting[k].pop_front() {
                self.waiting_len -= 1;
                self.integrate(now_ps);
                self.discipline
                    .pushed_out(k, self.size_pkts(w.pkt.is_ack, w.class));
                self.count_drop(w.pkt.is_ack, DropReason::Overflow);
                pushed = Some(w.pkt);
            }
        }
        let admit = if self.serving.is_none() {
            Admit::Idle
        } else {
            Admit::Queued
        };
        (admit, pushed)
    }

    fn count_drop(&mut self, is_ack: bool, reason: DropReason) {
        if is_ack {
            self.acc.acks_dropped += 1;
            return;
        }
        self.acc.dropped += 1;
        match reason {
            DropReason::Early => self.acc.dropped_early += 1,
            DropReason::Overflow => self.acc.dropped_overflow += 1,
            DropReason::Wire => {}
        }
    }

    fn mark(&mut self, pkt: &mut Pkt) {
        if !pkt.is_ack && pkt.ecn() != Ecn::Ce {
            self.acc.marked += 1;
        }
        pkt.set_ecn(Ecn::Ce);
    }

    /// The packet on the wire has been serialized: it leaves (the caller then asks for the
    /// next with [`Port::next`]).
    pub fn depart(&mut self, now_ps: SimTime) -> Pkt {
        self.integrate(now_ps);
        let pkt = self.serving.take().expect("a packet in service");
        if pkt.is_ack {
            self.acc.acks_departed += 1;
        } else {
            self.acc.departed += 1;
        }
        if self.acts_after_enqueue {
            self.discipline.departed(now_ps, self.len());
        }
        pkt
    }

    /// The idle port takes its next packet from the sub-queue the discipline chooses, which
    /// may still drop it (then it takes no time on the wire) or mark it.
    #[inline]
    pub fn next(&mut self, now_ps: SimTime) -> Next {
        debug_assert!(self.serving.is_none(), "the wire is free");
        if self.waiting_len == 0 {
            return Next::Idle;
        }
        let k = if self.waiting.len() == 1 {
            0
        } else {
            let waiting = &self.waiting;
            let head = |k: usize| waiting[k].front().map(|w| w.enqueued_ps);
            self.discipline.next_queue(now_ps, &head)
        };
        let Some(w) = self.waiting[k].pop_front() else {
            unreachable!("the discipline chose an empty sub-queue")
        };
        self.integrate(now_ps);
        self.waiting_len -= 1;
        let mut pkt = w.pkt;
        let sojourn_ps = now_ps - w.enqueued_ps;
        // Its codepoint as it left its queue, before this port's verdict at dequeue.
        let ecn = pkt.ecn();
        if self.acts_after_enqueue {
            let departure = Departure {
                flow: pkt.flow,
                sub: k,
                ecn,
                size_pkts: self.size_pkts(pkt.is_ack, w.class),
                is_ack: pkt.is_ack,
                sojourn_ps,
            };
            match self
                .discipline
                .dequeue(now_ps, self.waiting_len, &departure, &mut self.rng)
            {
                Verdict::Dropped(reason) => {
                    self.count_drop(pkt.is_ack, reason);
                    return Next::Dropped(pkt);
                }
                Verdict::Marked => self.mark(&mut pkt),
                Verdict::Queued => {}
            }
        }
        if !pkt.is_ack {
            self.sojourn.record(sojourn_ps);
            if w.l4s {
                self.sojourn_l4s.record(sojourn_ps);
            }
        }
        self.serving = Some(pkt);
        Next::Serve(self.classes[w.class as usize].next_ps())
    }

    /// Asks for the next packet's cache line: it leaves soon.
    #[inline]
    pub fn prefetch_head(&self) {
        self.waiting[0].prefetch_front();
    }

    /// A feedback router's control interval ends now; returns the next one's length (`None`
    /// without one).
    pub fn end_interval(&mut self) -> Option<f64> {
        self.discipline.end_interval(self.len())
    }

    pub fn has_feedback(&self) -> bool {
        self.discipline.feedback().is_some()
    }
}
