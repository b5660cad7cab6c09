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
use crate::queue::{self, Arrival, Buffer, Discipline, LinkContext, Verdict};
use crate::rng::Rng;
use crate::scenario::Link;

/// Running totals since t = 0 (data packets; ACKs apart); statistics are differences of two
/// snapshots.
#[derive(Debug, Clone, Copy, Default)]
pub struct PortAcc {
    pub arrived: u64,
    pub departed: u64,
    pub dropped: u64,
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
    /// Queued into an idle port: its service ends after this many picoseconds.
    Serving(SimTime),
}

pub struct Port {
    pub link: usize,
    pub capacity_pps: f64,
    /// Serializers by class (0: data packets).
    classes: Vec<Serializer>,
    /// Nominal service time of a data packet.
    pub service_ps: SimTime,
    queue: Ring<Pkt>,
    discipline: Box<dyn Discipline>,
    random_loss: f64,
    rng: Rng,
    pub acc: PortAcc,
    queue_changed_ps: SimTime,
    /// Whether the packet in service (the head) is a data packet.
    serving_data: bool,
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
            first_interval_s,
        });
        Port {
            link: index,
            capacity_pps: link.capacity_pps,
            service_ps: data_service.nominal_ps(),
            classes: vec![data_service],
            queue: Ring::with_capacity(buffer.slots.min(presize)),
            discipline,
            random_loss: link.loss_rate,
            // Stream 3000 + link: the packet engine's per-link randomness (random loss, RED).
            rng: Rng::new(seed, 3000 + index as u64),
            acc: PortAcc::default(),
            queue_changed_ps: 0,
            serving_data: false,
            q_max: 0,
            data_len_at_measuring: 0,
            started_flows: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Data packets queued (ACKs excluded): the term of the data-packet accounting
    /// arrivals = departures + drops + queued, whose counters count data only.
    pub fn data_len(&self) -> usize {
        self.queue.iter().filter(|p| !p.is_ack).count()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
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
        self.acc.queue_area += self.queue.len() as u128 * dt as u128;
        if self.serving_data {
            self.acc.data_busy_ps += dt;
        }
        self.queue_changed_ps = now_ps;
    }

    /// A packet of serializer class `class` arrives at route position `hop` (stored with it).
    /// Random loss applies to data only (a property of the wire, before the queue); the
    /// discipline decides the rest.
    pub fn admit(&mut self, now_ps: SimTime, pkt: Pkt, class: u32) -> Admit {
        let q = self.queue.len();
        let mut pkt = pkt;
        let verdict = if pkt.is_ack {
            let size_pkts =
                self.classes[class as usize].nominal_ps() as f64 / self.service_ps as f64;
            let arrival = Arrival::Ack { size_pkts };
            self.discipline.enqueue(now_ps, q, arrival, &mut self.rng)
        } else {
            self.acc.arrived += 1;
            if self.random_loss > 0.0 && self.rng.uniform() < self.random_loss {
                Verdict::Dropped(queue::DropReason::Early)
            } else {
                let mut header = pkt.header();
                let verdict =
                    self.discipline
                        .enqueue(now_ps, q, Arrival::Data(&mut header), &mut self.rng);
                if header.feedback_pkts.to_bits() != pkt.feedback_pkts.to_bits() {
                    pkt.feedback_pkts = header.feedback_pkts; // an XCP router's feedback
                }
                verdict
            }
        };
        if let Verdict::Dropped(_) = verdict {
            if pkt.is_ack {
                self.acc.acks_dropped += 1;
            } else {
                self.acc.dropped += 1;
            }
            return Admit::Dropped;
        }
        self.integrate(now_ps);
        self.queue.push_back(pkt);
        self.q_max = self.q_max.max(q + 1);
        if q == 0 {
            self.serving_data = !pkt.is_ack;
            Admit::Serving(self.classes[class as usize].next_ps())
        } else {
            Admit::Queued
        }
    }

    /// The packet in service leaves and is returned, or dropped by the discipline at dequeue
    /// (`None`); if another waits, the caller starts it with [`Port::start_next`].
    pub fn depart(&mut self, now_ps: SimTime) -> (Pkt, Verdict) {
        self.integrate(now_ps);
        let pkt = self.queue.pop_front().expect("a packet in service");
        // The next one, if any, starts now (the caller's `start_next`).
        self.serving_data = self.queue.front().is_some_and(|h| !h.is_ack);
        let verdict = self.discipline.dequeue(now_ps, self.queue.len());
        match (pkt.is_ack, verdict) {
            (true, Verdict::Queued) => self.acc.acks_departed += 1,
            (true, Verdict::Dropped(_)) => self.acc.acks_dropped += 1,
            (false, Verdict::Queued) => self.acc.departed += 1,
            (false, Verdict::Dropped(_)) => self.acc.dropped += 1,
        }
        (pkt, verdict)
    }

    /// Asks for the head's cache line: it leaves soon.
    #[inline]
    pub fn prefetch_head(&self) {
        self.queue.prefetch_front();
    }

    /// The packet now at the head, if any (its route's hop names its serializer class).
    pub fn head(&self) -> Option<&Pkt> {
        self.queue.front()
    }

    /// Starts serving the head, of serializer class `class`; returns its service time.
    #[inline]
    pub fn start_next(&mut self, class: u32) -> SimTime {
        debug_assert!(!self.queue.is_empty(), "a packet to serve");
        self.classes[class as usize].next_ps()
    }

    /// A feedback router's control interval ends now; returns the next one's length (`None`
    /// without one).
    pub fn end_interval(&mut self) -> Option<f64> {
        self.discipline.end_interval(self.queue.len())
    }

    pub fn has_feedback(&self) -> bool {
        self.discipline.feedback().is_some()
    }
}
