//! A trace's records as a capture file: the classic libpcap format with nanosecond timestamps
//! (magic 0xa1b23c4d; https://www.tcpdump.org/manpages/pcap-savefile.5.html, IETF
//! draft-ietf-opsawg-pcap), link type RAW (101: each packet starts with its IPv4 header), which
//! Wireshark, tshark and tcpdump read.
//!
//! Each packet is a synthetic IPv4 header (RFC 791; DF set, TTL 64, the ECN field from the
//! engine, a correct header checksum) and TCP header (RFC 9293) and nothing else: the record
//! holds the headers (its captured length) and says how long the packet was (its original
//! length), as a capture with a short snap length does. Connection `f` runs from 10.0.0.0 + (f + 1)
//! to 10.64.0.0 + (f + 1), port 32768 + the slot's flow number to port 5001. Sequence numbers
//! count bytes: packet `s` starts at byte `s · MSS` (mod 2^32; the MSS is the data packet's size
//! less 40 bytes of headers), so a retransmission repeats its sequence number. Data segments
//! carry ACK (acknowledging byte 0 of the empty reverse stream) and CWR when the engine set it;
//! an ACK acknowledges `cum · MSS`, carries ECE when the engine's does, and, when the packet it
//! names lies above the cumulative ACK, one SACK block for it (RFC 2018). The TCP checksum is
//! left 0: the payload it covers is not in the capture.

use super::trace::{TraceRecord, CWR, ECE};
use std::io::{self, Write};

pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
pub const LINKTYPE_RAW: u32 = 101;
/// The longest header written: IPv4 (20) + TCP (20) + a SACK option with one block (12).
pub const SNAPLEN: u32 = 52;
const IP_TCP: usize = 40;
const RECORD_HEADER: usize = 16;
pub const DATA_PORT: u16 = 5001;

/// A connection's packets on the wire: data packet size, its MSS, ACK size (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowWire {
    pub data_len: u16,
    pub mss: u32,
    pub ack_len: u16,
}

impl FlowWire {
    /// From the scenario's sizes (at least 40 bytes each): a data packet keeps at least one byte
    /// of payload.
    pub fn new(packet_bytes: f64, ack_bytes: f64) -> Self {
        let data_len = packet_bytes.round().clamp(41.0, 65_535.0) as u16;
        FlowWire {
            data_len,
            mss: data_len as u32 - IP_TCP as u32,
            ack_len: ack_bytes.round().clamp(40.0, 65_535.0) as u16,
        }
    }
}

/// The file header: nanosecond timestamps, version 2.4, link type RAW.
pub fn file_header() -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone and sigfigs: 0.
    h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
    h
}

/// The connection's two addresses (sender, receiver).
pub fn addresses(flow: u32) -> ([u8; 4], [u8; 4]) {
    let host = flow % 0x3F_FFFE + 1;
    (
        (0x0A00_0000 | host).to_be_bytes(),
        (0x0A40_0000 | host).to_be_bytes(),
    )
}

/// The sender's port for the slot's `conn`-th flow.
pub fn sender_port(conn: u16) -> u16 {
    32_768 + conn % 28_000
}

/// The IPv4 header checksum (RFC 1071): the one's complement of the one's-complement sum of the
/// header's 16-bit words, its checksum field zero.
pub fn ip_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|w| u16::from_be_bytes([w[0], w[1]]) as u32)
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// Writes record `r` (the `id`-th of the file) into `out`: its record header and packet headers;
/// returns the bytes written.
pub fn encode(r: &TraceRecord, wire: &FlowWire, id: u16, out: &mut [u8; 68]) -> usize {
    let sack = r.is_ack && r.sacked > r.seq;
    let tcp_len = 20 + if sack { 12 } else { 0 };
    let captured = 20 + tcp_len;
    let total = if r.is_ack {
        wire.ack_len.max(captured as u16)
    } else {
        wire.data_len
    };
    out.fill(0);
    // Record header: seconds, nanoseconds, captured and original length.
    let ns = r.time_ps / 1000;
    out[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
    out[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
    out[8..12].copy_from_slice(&(captured as u32).to_le_bytes());
    out[12..16].copy_from_slice(&(total as u32).to_le_bytes());

    let (sender, receiver) = addresses(r.flow);
    let (src, dst, sport, dport) = if r.is_ack {
        (receiver, sender, DATA_PORT, sender_port(r.conn))
    } else {
        (sender, receiver, sender_port(r.conn), DATA_PORT)
    };
    let ip = &mut out[RECORD_HEADER..RECORD_HEADER + 20];
    ip[0] = 0x45;
    ip[1] = r.ecn & 3;
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip[4..6].copy_from_slice(&id.to_be_bytes());
    ip[6] = 0x40; // DF
    ip[8] = 64;
    ip[9] = 6; // TCP
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&dst);
    let sum = ip_checksum(ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());

    let bytes = |pkt: u64| (pkt.wrapping_mul(wire.mss as u64)) as u32;
    let tcp = &mut out[RECORD_HEADER + 20..RECORD_HEADER + captured];
    tcp[0..2].copy_from_slice(&sport.to_be_bytes());
    tcp[2..4].copy_from_slice(&dport.to_be_bytes());
    let (seq, ack) = if r.is_ack {
        (0, bytes(r.seq))
    } else {
        (bytes(r.seq), 0)
    };
    tcp[4..8].copy_from_slice(&seq.to_be_bytes());
    tcp[8..12].copy_from_slice(&ack.to_be_bytes());
    tcp[12] = ((tcp_len / 4) as u8) << 4;
    let mut flags = 0x10; // ACK
    if r.ecn & CWR != 0 {
        flags |= 0x80;
    }
    if r.ecn & ECE != 0 {
        flags |= 0x40;
    }
    tcp[13] = flags;
    tcp[14..16].copy_from_slice(&u16::MAX.to_be_bytes());
    if sack {
        // NOP, NOP, SACK (kind 5, length 10): one block, [left, right).
        tcp[20..24].copy_from_slice(&[1, 1, 5, 10]);
        tcp[24..28].copy_from_slice(&bytes(r.sacked).to_be_bytes());
        tcp[28..32].copy_from_slice(&bytes(r.sacked + 1).to_be_bytes());
    }
    RECORD_HEADER + captured
}

/// Writes the file: its header, then every record, in order (`wire` per connection).
pub fn write(out: &mut impl Write, records: &[TraceRecord], wire: &[FlowWire]) -> io::Result<()> {
    let mut w = io::BufWriter::new(out);
    w.write_all(&file_header())?;
    let mut buf = [0u8; 68];
    for (i, r) in records.iter().enumerate() {
        let n = encode(r, &wire[r.flow as usize], i as u16, &mut buf);
        w.write_all(&buf[..n])?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_checksum_of_a_known_header() {
        // The worked example of RFC 1071's method in Wikipedia's "IPv4 header checksum":
        // 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ip_checksum(&h), 0xb861);
    }

    #[test]
    fn a_data_segment_and_a_sacking_ack() {
        let wire = FlowWire::new(1500.0, 40.0);
        assert_eq!(wire.mss, 1460);
        let data = TraceRecord {
            time_ps: 1_500_000_000_123_456, // 1500.000000123456 s
            seq: 3,
            sacked: 0,
            flow: 0,
            conn: 0,
            is_ack: false,
            ecn: 3 | CWR, // CE
        };
        let mut b = [0u8; 68];
        assert_eq!(encode(&data, &wire, 7, &mut b), 16 + 40);
        assert_eq!(u32::from_le_bytes(b[0..4].try_into().unwrap()), 1500);
        assert_eq!(u32::from_le_bytes(b[4..8].try_into().unwrap()), 123);
        assert_eq!(u32::from_le_bytes(b[8..12].try_into().unwrap()), 40);
        assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), 1500);
        let ip = &b[16..36];
        assert_eq!((ip[1], u16::from_be_bytes([ip[2], ip[3]])), (3, 1500));
        assert_eq!(&ip[12..20], &[10, 0, 0, 1, 10, 64, 0, 1]);
        // A header with its checksum in sums to 0xFFFF: its checksum over it is 0.
        assert_eq!(ip_checksum(ip), 0);
        let tcp = &b[36..56];
        assert_eq!(u16::from_be_bytes([tcp[0], tcp[1]]), 32_768);
        assert_eq!(u16::from_be_bytes([tcp[2], tcp[3]]), 5001);
        assert_eq!(u32::from_be_bytes(tcp[4..8].try_into().unwrap()), 3 * 1460);
        assert_eq!((tcp[12], tcp[13]), (5 << 4, 0x90)); // 20 bytes; CWR and ACK

        let ack = TraceRecord {
            seq: 2,
            sacked: 4,
            is_ack: true,
            ecn: ECE,
            conn: 1,
            ..data
        };
        assert_eq!(encode(&ack, &wire, 8, &mut b), 16 + 52);
        // Longer than the scenario's 40-byte ACK: the option is written.
        assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), 52);
        let ip = &b[16..36];
        assert_eq!(ip[1], 0, "pure ACKs are Not-ECT");
        assert_eq!(&ip[12..20], &[10, 64, 0, 1, 10, 0, 0, 1]);
        let tcp = &b[36..68];
        assert_eq!(u16::from_be_bytes([tcp[2], tcp[3]]), 32_769);
        assert_eq!(u32::from_be_bytes(tcp[8..12].try_into().unwrap()), 2 * 1460);
        assert_eq!((tcp[12], tcp[13]), (8 << 4, 0x50)); // 32 bytes; ECE and ACK
        assert_eq!(&tcp[20..24], &[1, 1, 5, 10]);
        assert_eq!(
            u32::from_be_bytes(tcp[24..28].try_into().unwrap()),
            4 * 1460
        );
        assert_eq!(
            u32::from_be_bytes(tcp[28..32].try_into().unwrap()),
            5 * 1460
        );
    }

    #[test]
    fn sequence_numbers_wrap_at_two_to_the_32() {
        let wire = FlowWire::new(1500.0, 40.0);
        let r = TraceRecord {
            time_ps: 0,
            seq: 3_000_000, // 4.38e9 bytes
            sacked: 0,
            flow: 0,
            conn: 0,
            is_ack: false,
            ecn: 0,
        };
        let mut b = [0u8; 68];
        encode(&r, &wire, 0, &mut b);
        let seq = u32::from_be_bytes(b[40..44].try_into().unwrap());
        assert_eq!(seq as u64, 3_000_000 * 1460 - (1u64 << 32));
    }
}
