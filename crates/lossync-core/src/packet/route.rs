//! Packets and the routes they follow: each flow has a data route (sender to receiver) and an ACK
//! route (receiver to sender), each a short list of [`Hop`]s naming elements of the
//! [`Topology`](super::topology::Topology). A packet carries its flow, whether it is an ACK, and
//! its position on its route (an index into the [`RouteTable`], which lays every route out flat);
//! when an element releases it, the engine's `forward` steps to the next hop and hands it on.

use super::event::SimTime;
use super::sender::Ack;
use crate::error::{Error, Result};
use crate::queue::{Ecn, Header};

/// A packet on the network: data, or an ACK on its way back. 40 bytes: the one field that
/// means different things for data and ACKs keeps it there (pipes and queues hold many).
#[derive(Debug, Clone, Copy, Default)]
pub struct Pkt {
    pub flow: u32,
    pub is_ack: bool,
    /// Where it is: its hop's index in the [`RouteTable`], where each route's hops are
    /// consecutive, source first (the engine sets it to the route's start when it makes the
    /// packet; `forward` adds one per hop).
    pub at: u32,
    /// Data: the sequence number. ACK: the cumulative ACK.
    pub seq: u64,
    /// Data: when it was sent. ACK: the send time it echoes.
    pub stamp_ps: SimTime,
    /// Data: the cwnd and srtt of XCP's congestion header (their `f32` bits, low and high
    /// half; [`Pkt::header`]). ACK: the packet it SACKs ([`Pkt::sacked`], the low
    /// [`ACK_SEQ_BITS`] bits) and how long after the echoed packet that one was sent, in
    /// microseconds (the high bits, saturating at about 1 s: a delayed ACK's wait, at most
    /// 500 ms), so that the ACK packet stays 40 bytes.
    aux: u64,
    /// XCP's feedback: lowered by the routers on data, echoed by the ACK.
    pub feedback_pkts: f32,
    /// Data: the IP header's ECN field (bits 0–1, [`Ecn`]) and TCP's CWR flag (bit 2). ACK: the
    /// ECN feedback, ECE (bit 7) and the CE-marked packets it newly acknowledges (bits 0–6).
    ecn: u8,
}

const CWR: u8 = 1 << 2;
const ECE: u8 = 1 << 7;
/// An ACK's SACKed sequence number takes the low 44 bits of `aux` (1.7·10^13 packets: a flow at
/// 1.6 Tb/s would need 36 simulated hours to pass it), the wait the high 20 (µs).
pub const ACK_SEQ_BITS: u32 = 44;
const ACK_SEQ_MASK: u64 = (1 << ACK_SEQ_BITS) - 1;
const ACK_WAIT_MAX_US: u64 = (1 << (64 - ACK_SEQ_BITS)) - 1;

impl Pkt {
    /// A data packet of `flow` at route position `at`, sent at `stamp_ps` with XCP's `header`.
    #[inline]
    pub fn data(flow: u32, at: u32, seq: u64, stamp_ps: SimTime, header: Header) -> Pkt {
        let aux = header.cwnd_pkts.to_bits() as u64 | (header.rtt_s.to_bits() as u64) << 32;
        Pkt {
            flow,
            is_ack: false,
            at,
            seq,
            stamp_ps,
            aux,
            feedback_pkts: header.feedback_pkts,
            ecn: 0,
        }
    }

    /// Data: the ECN codepoint.
    #[inline]
    pub fn ecn(&self) -> Ecn {
        if self.is_ack {
            // Pure ACKs are sent Not-ECT (RFC 3168 §6.1.4).
            return Ecn::NotEct;
        }
        Ecn::from_bits(self.ecn)
    }

    /// Data: sets the ECN codepoint (a sender's ECT, a router's CE).
    #[inline]
    pub fn set_ecn(&mut self, ecn: Ecn) {
        if !self.is_ack {
            self.ecn = (self.ecn & !3) | ecn as u8;
        }
    }

    /// Data: whether TCP's CWR flag is set (RFC 3168 §6.1.2: the sender reduced its window).
    #[inline]
    pub fn cwr(&self) -> bool {
        !self.is_ack && self.ecn & CWR != 0
    }

    /// Data: sets TCP's CWR flag.
    #[inline]
    pub fn set_cwr(&mut self) {
        self.ecn |= CWR;
    }

    /// ACK: its ECN feedback, ECE and the CE-marked packets it newly acknowledges.
    #[inline]
    pub fn ecn_echo(&self) -> (bool, u8) {
        (self.ecn & ECE != 0, self.ecn & !ECE)
    }

    /// The ACK packet carrying `ack` back to `flow`'s sender, at route position `at`.
    #[inline]
    pub fn ack(flow: u32, at: u32, ack: &Ack) -> Pkt {
        Pkt {
            flow,
            is_ack: true,
            at,
            seq: ack.cum,
            stamp_ps: ack.echo_ps,
            aux: {
                debug_assert!(ack.sacked <= ACK_SEQ_MASK);
                let wait_us = ack.newest_sent_ps.saturating_sub(ack.echo_ps) / 1_000_000;
                ack.sacked | wait_us.min(ACK_WAIT_MAX_US) << ACK_SEQ_BITS
            },
            feedback_pkts: ack.feedback_pkts,
            ecn: (ack.ece as u8) << 7 | ack.ce_pkts.min(127),
        }
    }

    /// The packet at route position `at`.
    #[inline]
    pub fn at_hop(self, at: u32) -> Pkt {
        Pkt { at, ..self }
    }

    /// Data: XCP's congestion header.
    #[inline]
    pub fn header(&self) -> Header {
        debug_assert!(!self.is_ack);
        Header {
            cwnd_pkts: f32::from_bits(self.aux as u32),
            rtt_s: f32::from_bits((self.aux >> 32) as u32),
            feedback_pkts: self.feedback_pkts,
        }
    }

    /// ACK: the packet it SACKs.
    #[inline]
    pub fn sacked(&self) -> u64 {
        debug_assert!(self.is_ack);
        self.aux & ACK_SEQ_MASK
    }

    /// ACK: what it tells the sender.
    #[inline]
    pub fn to_ack(&self) -> Ack {
        Ack {
            cum: self.seq,
            sacked: self.sacked(),
            echo_ps: self.stamp_ps,
            newest_sent_ps: self.stamp_ps + (self.aux >> ACK_SEQ_BITS) * 1_000_000,
            feedback_pkts: self.feedback_pkts,
            ece: self.ecn & ECE != 0,
            ce_pkts: self.ecn & !ECE,
        }
    }
}

/// One element of a route, by kind and index into the topology's table of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    /// The flow's sender: the data route's source, the ACK route's sink.
    Sender,
    /// The flow's receiver: the data route's sink, the ACK route's source.
    Receiver,
    /// An access link ([`Access`](super::access::Access)): lossless, it knows when a packet
    /// will leave as soon as it enters, and hands it on with that future time, so the next hop
    /// must be a pipe (or another access link).
    Access(u32),
    /// A pipe ([`Pipe`](super::pipe::Pipe)): propagation delay.
    Pipe(u32),
    /// A port ([`Port`](super::port::Port)): queue discipline, FIFO and serializer. `class`
    /// names the port's serializer for this route's packets (0: the link's data packets; an
    /// ACK route has one of its own, for its ACK size).
    Queue { port: u32, class: u32 },
    /// A node of any other kind ([`Node`](super::node::Node), e.g. a burst assembler).
    Node(u32),
}

/// A flow's two routes, source first, sink last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// `Sender`, the hops of the data, `Receiver`.
    pub data: Vec<Hop>,
    /// `Receiver`, the hops of the ACKs, `Sender`.
    pub ack: Vec<Hop>,
}

impl Route {
    /// Checks that the route is well formed: the right end points, known elements, and a pipe
    /// or access link after every access link. `has` says whether the
    /// topology holds an element; `field` names the route in errors.
    pub fn check(&self, field: &str, has: &dyn Fn(Hop) -> bool) -> Result<()> {
        for (hops, (from, to), what) in [
            (&self.data, (Hop::Sender, Hop::Receiver), "data"),
            (&self.ack, (Hop::Receiver, Hop::Sender), "ack"),
        ] {
            let bad = |why: String| Error::field(format!("{field}.{what}"), why);
            if hops.len() < 2 {
                return Err(bad("a route has at least its two end points".into()));
            }
            if hops[0] != from || hops[hops.len() - 1] != to {
                return Err(bad(format!("must run from {from:?} to {to:?}")));
            }
            for (i, &h) in hops.iter().enumerate() {
                let end = i == 0 || i == hops.len() - 1;
                if !end && matches!(h, Hop::Sender | Hop::Receiver) {
                    return Err(bad(format!("hop {i}: {h:?} can only end a route")));
                }
                if !end && !has(h) {
                    return Err(bad(format!("hop {i}: no element {h:?}")));
                }
                if let Hop::Access(_) = h {
                    if !matches!(hops[i + 1], Hop::Access(_) | Hop::Pipe(_)) {
                        return Err(bad(format!(
                            "hop {i}: an access link must be followed by a pipe or an access link"
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Every flow's routes in one flat table; a packet carries its index in it, so `hop(pkt)` is one
/// load.
#[derive(Debug, Default)]
pub struct RouteTable {
    hops: Vec<Hop>,
    /// Per flow: where its data route and its ACK route start in `hops`.
    start: Vec<[u32; 2]>,
}

impl RouteTable {
    pub fn new(routes: &[Route]) -> Self {
        let mut t = RouteTable::default();
        for r in routes {
            let data = t.hops.len() as u32;
            t.hops.extend_from_slice(&r.data);
            let ack = t.hops.len() as u32;
            t.hops.extend_from_slice(&r.ack);
            t.start.push([data, ack]);
        }
        t
    }

    /// Inserts `hop` after every hop `after` selects, in every route. Route positions move: only
    /// before any packet is on its way.
    pub fn insert_after(&mut self, after: impl Fn(Hop) -> bool, hop: Hop) {
        let mut hops = Vec::with_capacity(self.hops.len());
        let mut moved = Vec::with_capacity(self.hops.len());
        for &h in &self.hops {
            moved.push(hops.len() as u32);
            hops.push(h);
            if after(h) {
                hops.push(hop);
            }
        }
        for s in self.start.iter_mut().flatten() {
            *s = moved[*s as usize];
        }
        self.hops = hops;
    }

    /// The hop a packet is at.
    #[inline]
    pub fn hop(&self, pkt: &Pkt) -> Hop {
        self.hops[pkt.at as usize]
    }

    /// The hop at index `at`.
    #[inline]
    pub fn hop_at(&self, at: u32) -> Hop {
        self.hops[at as usize]
    }

    /// Where a flow's data route (`ack` false) or ACK route starts, for [`Pkt::at`].
    #[inline]
    pub fn start(&self, flow: usize, ack: bool) -> u32 {
        self.start[flow][ack as usize]
    }

    /// A flow's data route.
    pub fn data(&self, flow: usize) -> &[Hop] {
        let [d, a] = self.start[flow];
        &self.hops[d as usize..a as usize]
    }
}
