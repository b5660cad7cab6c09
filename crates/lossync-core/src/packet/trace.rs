//! A packet trace of one link: what crossed it, recorded as the packets leave its port (the end
//! of their serialization, as a capture on the wire would see them), in both directions when the
//! link's other direction is modelled. Asking for a trace ([`PacketEngine::trace_link`]) puts a
//! [`Node`] that records each packet and passes it on at once after the link's ports, on every
//! route that crosses them; without one the routes, and so the engine's work, are exactly what
//! they were. The records are raw (time, flow, sequence numbers, flags); turning them into a
//! capture file is [`super::pcap`]'s.

use super::event::SimTime;
use super::node::{Actions, Node};
use super::pcap::{self, FlowWire};
use super::route::{Hop, Pkt};
use super::PacketEngine;
use crate::error::{Error, Result};
use crate::scenario::Scenario;
use std::io::{self, Write};

/// Records are pre-allocated up to this many (the vector grows beyond, up to the cap).
const PRESIZE: usize = 1 << 16;

/// One packet that crossed the traced link. 32 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    /// When its last bit left the port.
    pub time_ps: SimTime,
    /// Data: its sequence number (packets). ACK: the cumulative ACK.
    pub seq: u64,
    /// ACK: the packet it SACKs (the receiver's ideal SACK: the packet that triggered it).
    pub sacked: u64,
    pub flow: u32,
    /// Which of the flows its slot has carried (dynamic traffic; 0 for a persistent flow).
    pub conn: u16,
    pub is_ack: bool,
    /// Bits 0–1: the IP ECN field (RFC 3168 §5); bit 2: TCP's CWR; bit 3: TCP's ECE.
    pub ecn: u8,
}

pub const CWR: u8 = 1 << 2;
pub const ECE: u8 = 1 << 3;

impl TraceRecord {
    fn of(time_ps: SimTime, pkt: &Pkt, conn: u16) -> Self {
        let (sacked, ecn) = if pkt.is_ack {
            (pkt.sacked(), if pkt.ecn_echo().0 { ECE } else { 0 })
        } else {
            (0, pkt.ecn() as u8 | if pkt.cwr() { CWR } else { 0 })
        };
        TraceRecord {
            time_ps,
            seq: pkt.seq,
            sacked,
            flow: pkt.flow,
            conn,
            is_ack: pkt.is_ack,
            ecn,
        }
    }
}

/// The packets that crossed one link, the first `max_packets` of them.
#[derive(Debug, Clone)]
pub struct Trace {
    /// The link asked for (its other direction, if modelled, is traced with it).
    pub link: usize,
    pub records: Vec<TraceRecord>,
    pub max_packets: usize,
    /// Every packet that crossed the link, beyond the cap too.
    pub seen: u64,
    /// Per connection, its current flow's number in its slot.
    conn: Vec<u16>,
    /// Per connection, its packets' sizes and sequence-number scale in the capture.
    wire: Vec<FlowWire>,
}

impl Trace {
    fn new(sc: &Scenario, link: usize, max_packets: usize) -> Self {
        Trace {
            link,
            records: Vec::with_capacity(max_packets.min(PRESIZE)),
            max_packets,
            seen: 0,
            conn: vec![0; sc.flows.len()],
            wire: sc
                .flows
                .iter()
                .map(|f| FlowWire::new(sc.links[f.path[0]].packet_size_bytes, f.ack_size_bytes))
                .collect(),
        }
    }

    /// Whether packets were left out for the cap.
    pub fn capped(&self) -> bool {
        self.seen > self.records.len() as u64
    }

    #[inline]
    fn record(&mut self, time_ps: SimTime, pkt: &Pkt) {
        self.seen += 1;
        if self.records.len() < self.max_packets {
            let conn = self.conn[pkt.flow as usize];
            self.records.push(TraceRecord::of(time_ps, pkt, conn));
        }
    }

    /// The records as a capture file (pcap, [`pcap::write`]).
    pub fn write_pcap(&self, out: &mut impl Write) -> io::Result<()> {
        pcap::write(out, &self.records, &self.wire)
    }
}

/// The trace as a node: it records each packet that reaches it and forwards it now.
impl Node for Trace {
    fn receive(&mut self, now_ps: SimTime, pkt: Pkt, out: &mut Actions) {
        self.record(now_ps, &pkt);
        out.forward(pkt);
    }

    fn timer(&mut self, _now_ps: SimTime, _token: u32, _out: &mut Actions) {}

    fn trace(&self) -> Option<&Trace> {
        Some(self)
    }

    fn trace_mut(&mut self) -> Option<&mut Trace> {
        Some(self)
    }
}

impl PacketEngine {
    /// Traces link `link` (and its other direction, when the scenario models it): every packet
    /// leaving its port, data and ACKs, up to `max_packets` records (the rest are counted). Only
    /// before the run starts (routes change), and once.
    pub fn trace_link(&mut self, link: usize, max_packets: usize) -> Result<()> {
        if self.events_processed > 0 || self.trace_node.is_some() {
            return Err(Error::field(
                "pcap",
                "a trace is asked for once, before the run starts",
            ));
        }
        let links = &self.scenario.links;
        let traced: Vec<bool> = (0..links.len())
            .map(|l| {
                l == link || links[l].reverse_of == Some(link) || links[link].reverse_of == Some(l)
            })
            .collect();
        let node = self.nodes.len() as u32;
        self.nodes
            .push(Box::new(Trace::new(&self.scenario, link, max_packets)));
        self.trace_node = Some(node);
        self.routes.insert_after(
            |h| matches!(h, Hop::Queue { port, .. } if traced[port as usize]),
            Hop::Node(node),
        );
        for (f, fl) in self.flows.iter_mut().enumerate() {
            fl.data_route = self.routes.start(f, false);
            fl.ack_route = self.routes.start(f, true);
        }
        Ok(())
    }

    /// The trace, if one was asked for.
    pub fn trace(&self) -> Option<&Trace> {
        self.trace_node.and_then(|n| self.nodes[n as usize].trace())
    }

    /// Slot `f` carries a new flow: its packets get a connection of their own in the trace.
    pub(super) fn trace_new_connection(&mut self, f: usize) {
        if let Some(t) = (self.trace_node).and_then(|n| self.nodes[n as usize].trace_mut()) {
            t.conn[f] = t.conn[f].wrapping_add(1);
        }
    }
}
