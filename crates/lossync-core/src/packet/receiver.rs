//! The TCP receiver: a cumulative ACK for every packet, or delayed ACKs (RFC 5681 §4.2), and an
//! ideal SACK (the ACK also names the packet that triggered it, so over a lossless, in-order
//! reverse path the sender learns exactly which packets arrived).

use super::event::SimTime;
use super::sender::Ack;

/// Tracks which packets above `rcv_nxt` have arrived, in a bitmap ring indexed by sequence number.
#[derive(Debug, Clone)]
pub struct Receiver {
    /// The next in-order packet expected (the cumulative ACK).
    rcv_nxt: u64,
    /// Bit `s & mask` is set iff packet `s` (with `rcv_nxt < s < rcv_nxt + capacity`) arrived.
    bits: Vec<u64>,
    mask: u64,
    /// Packets delivered in order to the application (goodput), since the start.
    delivered_pkts: u64,
    /// Packets that arrived for the first time (duplicates not counted), since the start: what
    /// crossed the path. Unlike in-order delivery, a retransmission that fills a hole counts
    /// itself only, not the packets behind the hole that arrived earlier.
    first_arrivals_pkts: u64,
    /// Packets held above a hole.
    held: u64,
    /// Delayed ACKs: ACK every `ack_every` in-order packets (1: every packet).
    ack_every: u32,
    /// In-order packets not yet acknowledged, the earliest one's send time (RFC 7323 §4.3: the
    /// echo of a delayed ACK is the earliest unacknowledged segment's), and the latest one.
    pending: u32,
    pending_echo_ps: SimTime,
    pending_last: u64,
    /// And its send time.
    pending_last_sent_ps: SimTime,
    /// XCP: the feedback of the latest packet, for the delayed ACK that echoes it.
    pending_feedback: f32,
    /// ECN feedback: ECE is set from a CE arrival until a packet with CWR (RFC 3168 §6.1.3);
    /// the CE-marked packets since the last ACK are counted for it (RFC 8257 §3.2's information:
    /// the sender of a scalable law learns exactly how many packets were marked).
    ece: bool,
    ce_unacked: u8,
    /// CE-marked data packets received since the start.
    ce_received: u64,
}

impl Receiver {
    /// `capacity_pkts` is rounded up to a power of two (at least 64); the ring grows if a packet
    /// arrives further ahead than that.
    pub fn new(capacity_pkts: usize) -> Self {
        let cap = capacity_pkts.max(64).next_power_of_two();
        Receiver {
            rcv_nxt: 0,
            bits: vec![0; cap / 64],
            mask: cap as u64 - 1,
            delivered_pkts: 0,
            first_arrivals_pkts: 0,
            held: 0,
            ack_every: 1,
            pending: 0,
            pending_echo_ps: 0,
            pending_last: 0,
            pending_last_sent_ps: 0,
            pending_feedback: 0.0,
            ece: false,
            ce_unacked: 0,
            ce_received: 0,
        }
    }

    /// A new connection in this receiver's place (a dynamic flow taking a pool slot): nothing
    /// received yet; the bitmap's memory and the delivered count (over the slot's flows) kept.
    pub fn reset(&mut self) {
        self.rcv_nxt = 0;
        self.bits.fill(0);
        self.held = 0;
        self.pending = 0;
        self.pending_echo_ps = 0;
        self.pending_last = 0;
        self.pending_feedback = 0.0;
        self.ece = false;
        self.ce_unacked = 0;
    }

    /// The ECN field and CWR flag of the data packet about to be [received](Receiver::receive).
    #[inline]
    pub fn on_ecn(&mut self, ce: bool, cwr: bool) {
        if cwr {
            self.ece = false;
        }
        if ce {
            self.ece = true;
            self.ce_unacked = self.ce_unacked.saturating_add(1);
            self.ce_received += 1;
        }
    }

    /// The ECN feedback of the ACK sent now.
    fn take_ecn(&mut self) -> (bool, u8) {
        (self.ece, std::mem::take(&mut self.ce_unacked))
    }

    /// Delays ACKs: one per `n` in-order packets (the caller runs the timeout).
    pub fn with_ack_every(mut self, n: u32) -> Self {
        self.ack_every = n.max(1);
        self
    }

    /// Packet `seq`, sent at `sent_ps` with XCP feedback `feedback_pkts`, arrives. Returns the ACK to send now, or `None` while
    /// it is delayed (an ACK is delayed only for in-order data with no hole; RFC 5681 §4.2 asks
    /// for an immediate ACK on out-of-order data and when a hole fills).
    pub fn receive(&mut self, seq: u64, sent_ps: SimTime, feedback_pkts: f32) -> Option<Ack> {
        self.pending_feedback = feedback_pkts;
        let in_order = seq == self.rcv_nxt && self.held == 0;
        let cum = self.on_data(seq);
        if self.pending == 0 {
            self.pending_echo_ps = sent_ps;
        }
        if in_order && self.ack_every > 1 {
            self.pending += 1;
            self.pending_last = seq;
            self.pending_last_sent_ps = sent_ps;
            if self.pending < self.ack_every {
                return None;
            }
        }
        let echo_ps = if self.pending > 0 {
            self.pending_echo_ps
        } else {
            sent_ps
        };
        self.pending = 0;
        let (ece, ce_pkts) = self.take_ecn();
        Some(Ack {
            cum,
            sacked: seq,
            echo_ps,
            newest_sent_ps: sent_ps,
            feedback_pkts,
            ece,
            ce_pkts,
        })
    }

    /// In-order packets waiting for a delayed ACK.
    pub fn pending(&self) -> u32 {
        self.pending
    }

    /// The delayed-ACK timer fired: the ACK for the waiting packets, if any.
    pub fn flush(&mut self) -> Option<Ack> {
        if self.pending == 0 {
            return None;
        }
        self.pending = 0;
        let (ece, ce_pkts) = self.take_ecn();
        Some(Ack {
            cum: self.rcv_nxt,
            sacked: self.pending_last,
            echo_ps: self.pending_echo_ps,
            newest_sent_ps: self.pending_last_sent_ps,
            feedback_pkts: self.pending_feedback,
            ece,
            ce_pkts,
        })
    }

    pub fn ce_received(&self) -> u64 {
        self.ce_received
    }

    pub fn delivered_pkts(&self) -> u64 {
        self.delivered_pkts
    }

    pub fn first_arrivals_pkts(&self) -> u64 {
        self.first_arrivals_pkts
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    fn get(&self, s: u64) -> bool {
        let i = s & self.mask;
        self.bits[(i >> 6) as usize] & (1 << (i & 63)) != 0
    }

    fn set(&mut self, s: u64) {
        let i = s & self.mask;
        self.bits[(i >> 6) as usize] |= 1 << (i & 63);
    }

    fn clear(&mut self, s: u64) {
        let i = s & self.mask;
        self.bits[(i >> 6) as usize] &= !(1 << (i & 63));
    }

    /// Packet `seq` arrives; returns the cumulative ACK to send back.
    pub fn on_data(&mut self, seq: u64) -> u64 {
        if seq == self.rcv_nxt {
            self.first_arrivals_pkts += 1;
            self.rcv_nxt += 1;
            self.delivered_pkts += 1;
            // Hand over whatever was waiting behind the hole.
            while self.get(self.rcv_nxt) {
                self.clear(self.rcv_nxt);
                self.held -= 1;
                self.rcv_nxt += 1;
                self.delivered_pkts += 1;
            }
        } else if seq > self.rcv_nxt {
            while seq - self.rcv_nxt > self.mask {
                self.grow();
            }
            if !self.get(seq) {
                self.set(seq);
                self.held += 1;
                self.first_arrivals_pkts += 1;
            }
        }
        // seq < rcv_nxt: a duplicate (a spurious retransmission); ACK it again.
        self.rcv_nxt
    }

    /// Doubles the ring, keeping the bits of the window above `rcv_nxt`. Rare: only when the
    /// window outgrows the size given at build.
    fn grow(&mut self) {
        let old = Receiver {
            rcv_nxt: self.rcv_nxt,
            bits: std::mem::take(&mut self.bits),
            mask: self.mask,
            ..Receiver::new(64)
        };
        let cap = (self.mask + 1) * 2;
        self.bits = vec![0; (cap / 64) as usize];
        self.mask = cap - 1;
        for s in self.rcv_nxt + 1..self.rcv_nxt + old.mask + 1 {
            if old.get(s) {
                self.set(s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_hold_the_cumulative_ack_until_filled() {
        let mut r = Receiver::new(64);
        assert_eq!(r.on_data(0), 1);
        assert_eq!(r.on_data(2), 1);
        assert_eq!(r.on_data(3), 1);
        assert_eq!(r.delivered_pkts(), 1);
        assert_eq!(r.on_data(1), 4);
        assert_eq!(r.delivered_pkts(), 4);
        assert_eq!(r.on_data(1), 4); // duplicate
        assert_eq!(r.delivered_pkts(), 4);
    }

    #[test]
    fn delayed_acks_every_second_packet_and_at_once_around_holes() {
        // RFC 5681 §4.2: an ACK for every second in-order packet; an immediate ACK for
        // out-of-order data and for data that fills a hole.
        let mut r = Receiver::new(64).with_ack_every(2);
        assert_eq!(r.receive(0, 10, 0.0), None);
        assert_eq!(r.pending(), 1);
        let a = r.receive(1, 20, 0.0).expect("second packet");
        assert_eq!((a.cum, a.sacked, a.echo_ps), (2, 1, 10)); // echo of the earliest (RFC 7323)
        assert_eq!(r.receive(2, 30, 0.0), None);
        let a = r.receive(4, 50, 0.0).expect("out of order: at once");
        assert_eq!((a.cum, a.sacked, a.echo_ps), (3, 4, 30));
        let a = r.receive(3, 40, 0.0).expect("fills the hole: at once");
        assert_eq!((a.cum, a.sacked), (5, 3));
        assert_eq!(r.receive(5, 60, 0.0), None);
        let a = r.flush().expect("timer");
        assert_eq!((a.cum, a.sacked, a.echo_ps), (6, 5, 60));
        assert_eq!(r.flush(), None);
    }

    /// A delayed ACK echoes the earliest packet's time (RFC 7323 §4.3, for the RTO) and carries
    /// the newest one's (congestion control's sample, Linux's `ca_rtt_us`), through the ACK
    /// packet too (to the microsecond); without a wait the two are the same.
    #[test]
    fn a_delayed_ack_carries_the_newest_packets_send_time_too() {
        use crate::packet::route::Pkt;
        let mut r = Receiver::new(64).with_ack_every(2);
        assert_eq!(r.receive(0, 1_000_000, 0.0), None);
        let a = r.receive(1, 3_500_000_000, 0.0).expect("second packet");
        assert_eq!((a.echo_ps, a.newest_sent_ps), (1_000_000, 3_500_000_000));
        let back = Pkt::ack(0, 0, &a).to_ack();
        assert_eq!((back.sacked, back.echo_ps), (1, 1_000_000));
        assert!((3_499_000_000..=3_500_000_000).contains(&back.newest_sent_ps));
        assert_eq!(r.receive(2, 7_000_000_000, 0.0), None);
        let a = r.flush().expect("timer");
        assert_eq!(
            (a.echo_ps, a.newest_sent_ps),
            (7_000_000_000, 7_000_000_000)
        );
        let b = Pkt::ack(0, 0, &a).to_ack();
        assert_eq!(b.newest_sent_ps, b.echo_ps);
    }

    #[test]
    fn grows_past_its_initial_size() {
        let mut r = Receiver::new(64);
        for s in 1..1000 {
            assert_eq!(r.on_data(s), 0);
        }
        assert_eq!(r.on_data(0), 1000);
        assert_eq!(r.delivered_pkts(), 1000);
    }
}
