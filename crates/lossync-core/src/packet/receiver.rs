//! The TCP receiver: a cumulative ACK for every packet (no delayed ACK) and an ideal SACK (the
//! ACK also names the packet that triggered it, so over a lossless, in-order reverse path the
//! sender learns exactly which packets arrived).

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
        }
    }

    pub fn delivered_pkts(&self) -> u64 {
        self.delivered_pkts
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
            self.rcv_nxt += 1;
            self.delivered_pkts += 1;
            // Hand over whatever was waiting behind the hole.
            while self.get(self.rcv_nxt) {
                self.clear(self.rcv_nxt);
                self.rcv_nxt += 1;
                self.delivered_pkts += 1;
            }
        } else if seq > self.rcv_nxt {
            while seq - self.rcv_nxt > self.mask {
                self.grow();
            }
            self.set(seq);
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
            delivered_pkts: 0,
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
    fn grows_past_its_initial_size() {
        let mut r = Receiver::new(64);
        for s in 1..1000 {
            assert_eq!(r.on_data(s), 0);
        }
        assert_eq!(r.on_data(0), 1000);
        assert_eq!(r.delivered_pkts(), 1000);
    }
}
