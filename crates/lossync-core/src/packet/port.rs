//! One direction of a link in the packet engine: a FIFO of at most B packets (data and ACKs)
//! served at the link's capacity, drop-tail or RED, with its running totals.

use super::event::{Serializer, SimTime};
use crate::queue::red::Red;
use crate::rng::Rng;
use crate::scenario::{Link, Queue};
use crate::xcp::{self, Feedback, IntervalTotals, XcpParams};
use std::collections::VecDeque;

/// A packet in a queue: data, or an ACK on its way back.
#[derive(Debug, Clone, Copy)]
pub struct Pkt {
    pub flow: u32,
    pub is_ack: bool,
    /// Data: the sequence number. ACK: the cumulative ACK.
    pub seq: u64,
    /// ACK: the packet it SACKs.
    pub sacked: u64,
    /// Data: when it was sent. ACK: the send time it echoes.
    pub stamp_ps: SimTime,
    /// XCP's congestion header (Katabi et al. 2002 §3.1): the sender's window and RTT, and the
    /// feedback the routers ask for (packets of window; an ACK echoes it).
    pub cwnd_pkts: f32,
    pub rtt_s: f32,
    pub feedback_pkts: f32,
}

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
}

/// What became of an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    Dropped,
    Queued,
    /// Queued into an idle port: its service ends after this many picoseconds.
    Serving(SimTime),
}

/// An XCP router on the port: this interval's totals and the feedback of the last one.
#[derive(Debug)]
struct XcpState {
    params: XcpParams,
    totals: IntervalTotals,
    /// The smallest occupancy an arrival saw this interval (the persistent queue).
    q_min: usize,
    feedback: Feedback,
    /// The current control interval (the mean RTT of the last interval's packets).
    interval_s: f64,
}

impl XcpState {
    /// Katabi et al. §3.5: accounts a data packet, then cuts its feedback to this router's.
    fn account(&mut self, pkt: &mut Pkt, queue_pkts: usize) {
        let (w, r) = (pkt.cwnd_pkts as f64, pkt.rtt_s as f64);
        self.totals.add(1.0, r, w);
        self.q_min = self.q_min.min(queue_pkts);
        pkt.feedback_pkts = pkt.feedback_pkts.min(self.feedback.per_packet(w, r) as f32);
    }
}

#[derive(Debug)]
struct RedState {
    law: Red,
    weight: f64,
    avg_pkts: f64,
}

pub struct Port {
    pub link: usize,
    pub capacity_pps: f64,
    pub buffer_slots: usize,
    data_service: Serializer,
    /// Nominal service time of a data packet.
    pub service_ps: SimTime,
    queue: VecDeque<Pkt>,
    red: Option<RedState>,
    xcp: Option<XcpState>,
    random_loss: f64,
    rng: Rng,
    idle_since_ps: SimTime,
    pub acc: PortAcc,
    queue_changed_ps: SimTime,
    /// Largest occupancy since the statistics started.
    pub q_max: usize,
    /// Data departures since the last time-series sample.
    pub interval_departed: u64,
    /// Flows whose data cross this port and have started (congestion-event candidates).
    pub started_flows: u32,
}

impl Port {
    /// `buffer_slots` counts the packet in service; `xcp_interval_s` is XCP's first control
    /// interval; `seed` gives its random stream.
    pub fn new(
        index: usize,
        link: &Link,
        buffer_slots: usize,
        xcp_interval_s: f64,
        seed: u64,
        presize: usize,
    ) -> Self {
        let data_service = Serializer::new(8.0 * link.packet_size_bytes, link.capacity_bps);
        let xcp = match link.queue {
            Queue::Xcp(params) => Some(XcpState {
                params,
                totals: IntervalTotals::default(),
                q_min: usize::MAX,
                feedback: Feedback::default(),
                interval_s: xcp_interval_s,
            }),
            _ => None,
        };
        let red = match link.queue {
            Queue::Droptail | Queue::Xcp(_) => None,
            Queue::Red {
                min_th,
                max_th,
                max_p,
                weight,
                gentle,
            } => Some(RedState {
                law: Red::new(min_th, max_th, max_p, weight, gentle),
                weight,
                avg_pkts: 0.0,
            }),
        };
        Port {
            link: index,
            capacity_pps: link.capacity_pps,
            buffer_slots,
            service_ps: data_service.nominal_ps(),
            data_service,
            queue: VecDeque::with_capacity(buffer_slots.min(presize)),
            red,
            xcp,
            random_loss: link.loss_rate,
            // Stream 3000 + link: the packet engine's per-link randomness (random loss, RED).
            rng: Rng::new(seed, 3000 + index as u64),
            idle_since_ps: 0,
            acc: PortAcc::default(),
            queue_changed_ps: 0,
            q_max: 0,
            interval_departed: 0,
            started_flows: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Adds the occupancy over the time since its last change.
    pub fn integrate(&mut self, now_ps: SimTime) {
        let dt = now_ps - self.queue_changed_ps;
        self.acc.queue_area += self.queue.len() as u128 * dt as u128;
        self.queue_changed_ps = now_ps;
    }

    /// A packet arrives. `ack_service` serializes it if it is an ACK. Random loss applies to
    /// data only; RED and the buffer limit to every packet.
    pub fn admit(&mut self, now_ps: SimTime, pkt: Pkt, ack_service: &mut Serializer) -> Admit {
        let q = self.queue.len();
        if !pkt.is_ack {
            self.acc.arrived += 1;
        }
        let mut drop =
            !pkt.is_ack && self.random_loss > 0.0 && self.rng.uniform() < self.random_loss;
        if !drop {
            if let Some(red) = &mut self.red {
                if q == 0 {
                    // Floyd & Jacobson 1993 §4: over an idle period the average decays as if
                    // m = idle / (packet time) empty-queue samples had been taken.
                    let m = (now_ps - self.idle_since_ps) as f64 / self.service_ps as f64;
                    red.avg_pkts *= (1.0 - red.weight).powf(m);
                } else {
                    red.avg_pkts += red.weight * (q as f64 - red.avg_pkts);
                }
                let p = red.law.probability(red.avg_pkts);
                drop = p > 0.0 && self.rng.uniform() < p;
            }
        }
        if drop || q >= self.buffer_slots {
            if pkt.is_ack {
                self.acc.acks_dropped += 1;
            } else {
                self.acc.dropped += 1;
            }
            return Admit::Dropped;
        }
        self.integrate(now_ps);
        let mut pkt = pkt;
        if let Some(x) = &mut self.xcp {
            if pkt.is_ack {
                // ACKs are input traffic too (by their bytes), but carry no header to mark.
                if x.params.count_acks {
                    x.totals.input_pkts += ack_service.nominal_ps() as f64 / self.service_ps as f64;
                }
            } else {
                x.account(&mut pkt, q);
            }
        }
        self.queue.push_back(pkt);
        self.q_max = self.q_max.max(q + 1);
        if q == 0 {
            Admit::Serving(self.service_time(&pkt, ack_service))
        } else {
            Admit::Queued
        }
    }

    fn service_time(&mut self, pkt: &Pkt, ack_service: &mut Serializer) -> SimTime {
        if pkt.is_ack {
            ack_service.next_ps()
        } else {
            self.data_service.next_ps()
        }
    }

    /// The packet in service leaves and is returned; if another waits, the caller starts it with
    /// [`Port::start_next`].
    pub fn depart(&mut self, now_ps: SimTime) -> Pkt {
        self.integrate(now_ps);
        let pkt = self.queue.pop_front().expect("a packet in service");
        if pkt.is_ack {
            self.acc.acks_departed += 1;
        } else {
            self.acc.departed += 1;
            self.interval_departed += 1;
        }
        if self.queue.is_empty() {
            self.idle_since_ps = now_ps;
        }
        pkt
    }

    /// The packet now at the head, if any (its flow's ACK serializer is needed for an ACK).
    pub fn head(&self) -> Option<&Pkt> {
        self.queue.front()
    }

    /// Starts serving the head; returns its service time.
    pub fn start_next(&mut self, ack_service: &mut Serializer) -> SimTime {
        let pkt = *self.queue.front().expect("a packet to serve");
        self.service_time(&pkt, ack_service)
    }

    /// XCP: the control interval ends now; computes the next interval's feedback and returns
    /// when that interval ends (`None` without an XCP router).
    pub fn xcp_interval(&mut self) -> Option<f64> {
        let x = self.xcp.as_mut()?;
        let q = if x.q_min == usize::MAX {
            self.queue.len()
        } else {
            x.q_min
        };
        x.feedback = xcp::control(
            &x.params,
            x.interval_s,
            self.capacity_pps,
            q as f64,
            &x.totals,
        );
        if x.totals.packets > 0.0 && x.totals.rtt_sum > 0.0 {
            x.interval_s = x.totals.rtt_sum / x.totals.packets;
        }
        x.totals = IntervalTotals::default();
        x.q_min = usize::MAX;
        Some(x.interval_s)
    }

    pub fn has_xcp(&self) -> bool {
        self.xcp.is_some()
    }
}
