//! Proportional Rate Reduction (RFC 9937, which obsoletes RFC 6937; Linux
//! `tcp_cwnd_reduction` in `net/ipv4/tcp_input.c`, 6.x): during fast recovery the window is
//! set on every ACK that delivers data to `pipe + sndcnt`, so that the sender keeps sending in
//! proportion to what is delivered while the pipe is above ssthresh (instead of falling silent
//! until it drops below it, RFC 6675), and catches up towards ssthresh once below it.
//!
//! On every ACK in recovery that delivers `DeliveredData` > 0 (newly cumulatively acknowledged
//! plus newly SACKed packets):
//! - `prr_delivered += DeliveredData`;
//! - pipe > ssthresh: `sndcnt = ⌈prr_delivered · ssthresh / RecoverFS⌉ − prr_out`;
//! - else `sndcnt = min(ssthresh − pipe, max(prr_delivered − prr_out, DeliveredData) [+ 1 on a
//!   safe ACK: the cumulative ACK advanced and no new loss was marked])`: the reduction bound,
//!   conservative (CRB) by default and slow-start (SSRB) on safe ACKs;
//! - at least one packet while nothing has been sent in recovery (the fast retransmit);
//! - `cwnd = pipe + sndcnt`. Every packet sent in recovery counts in `prr_out`; when recovery
//!   ends, `cwnd = ssthresh`.
//!
//! RecoverFS is the window before the reduction, as Linux takes it (`prior_cwnd`); RFC 9937 §5
//! takes the pipe at the start of recovery, equal to it for a sender limited by its window.

/// The PRR state of one recovery episode (all counts in packets).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Prr {
    /// RecoverFS: the window before the reduction.
    recover_fs: f64,
    /// prr_delivered: packets delivered to the receiver since recovery began.
    delivered: f64,
    /// prr_out: packets sent since recovery began.
    out: f64,
}

impl Prr {
    /// Recovery begins, from a window of `prior_cwnd`.
    pub fn start(prior_cwnd: f64) -> Self {
        Prr {
            recover_fs: prior_cwnd.max(1.0),
            delivered: 0.0,
            out: 0.0,
        }
    }

    /// A packet is sent (new data or a retransmission) during recovery.
    pub fn sent(&mut self) {
        self.out += 1.0;
    }

    /// An ACK in recovery delivered `delivered` packets, leaving `pipe` in flight; `safe`: it
    /// advanced the cumulative ACK and marked no new loss. Returns the window to set
    /// (`pipe + sndcnt`), or `None` when it delivered nothing (the window is left alone).
    pub fn on_ack(&mut self, delivered: f64, pipe: f64, ssthresh: f64, safe: bool) -> Option<f64> {
        if delivered <= 0.0 {
            return None;
        }
        self.delivered += delivered;
        let mut sndcnt = if pipe > ssthresh {
            (self.delivered * ssthresh / self.recover_fs).ceil() - self.out
        } else {
            let bound = (self.delivered - self.out).max(delivered) + if safe { 1.0 } else { 0.0 };
            (ssthresh - pipe).min(bound)
        };
        // Force the fast retransmit upon entering recovery.
        sndcnt = sndcnt.max(if self.out > 0.0 { 0.0 } else { 1.0 });
        Some(pipe + sndcnt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives one recovery: a window of `cwnd` packets in flight, ssthresh `ssthresh`, the
    /// first `lost` packets lost; every other packet's ACK delivers one packet (a SACK), and
    /// the sender sends whatever the window allows at once. Returns the packets sent after each
    /// ACK, and the pipe after it.
    fn drive(cwnd: u32, ssthresh: f64, lost: u32) -> Vec<(u32, u32)> {
        let mut prr = Prr::start(cwnd as f64);
        let mut pipe = (cwnd - lost) as f64; // the lost packets are out of the pipe
        let mut out = Vec::new();
        for _ in 0..(cwnd - lost) {
            pipe -= 1.0; // one packet delivered
            let w = prr.on_ack(1.0, pipe, ssthresh, false).unwrap();
            let mut sent = 0;
            while pipe < w {
                prr.sent();
                pipe += 1.0;
                sent += 1;
            }
            out.push((sent, pipe as u32));
        }
        out
    }

    #[test]
    fn one_loss_sends_ssthresh_over_recover_fs_per_packet_delivered() {
        // The case of RFC 6937's examples: a window of 20 packets, one lost, Reno's ssthresh of
        // 10. While the pipe is above ssthresh PRR sends ⌈k·10/20⌉ − prr_out after the k-th
        // packet delivered: one packet per two, the fast retransmit on the first ACK (RFC 6675
        // would send nothing until the pipe fell to 10, then one per ACK). The 17th ACK leaves
        // the pipe at ssthresh, where the reduction bound takes over and holds it there.
        let steps = drive(20, 10.0, 1);
        let sent: Vec<u32> = steps.iter().map(|s| s.0).collect();
        assert_eq!(
            sent,
            [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1]
        );
        let pipe: Vec<u32> = steps.iter().map(|s| s.1).collect();
        assert_eq!(&pipe[16..], [10, 10, 10], "{pipe:?}");
        assert!(pipe.windows(2).all(|w| w[1] <= w[0]), "{pipe:?}");
        // All told: the window's 19 deliveries clocked out ssthresh's 10 packets.
        assert_eq!(sent.iter().sum::<u32>(), 10);
    }

    #[test]
    fn with_ssthresh_at_0_7_cubic_sends_seven_of_every_ten() {
        // CUBIC's β = 0.7: ssthresh 14 of a window of 20; after 10 packets delivered PRR has sent
        // ⌈10·14/20⌉ = 7.
        let mut prr = Prr::start(20.0);
        let mut sent = 0.0;
        let mut pipe = 19.0;
        for _ in 0..10 {
            pipe -= 1.0;
            let w = prr.on_ack(1.0, pipe, 14.0, false).unwrap();
            while pipe < w {
                prr.sent();
                pipe += 1.0;
                sent += 1.0;
            }
        }
        assert_eq!(sent, 7.0);
    }

    #[test]
    fn below_ssthresh_the_reduction_bound_catches_up() {
        // Heavy losses take the pipe below ssthresh: PRR-CRB sends what was delivered beyond
        // what was sent (prr_delivered − prr_out), never more than ssthresh − pipe, and one
        // more on a safe ACK (PRR-SSRB).
        let mut prr = Prr::start(20.0);
        // The first ACK: pipe 4 after 10 losses; sndcnt = min(10 − 4, max(1 − 0, 1)) = 1.
        assert_eq!(prr.on_ack(1.0, 4.0, 10.0, false), Some(5.0));
        prr.sent();
        // Three delivered at once: max(4 − 1, 3) = 3, within ssthresh − pipe = 6.
        assert_eq!(prr.on_ack(3.0, 2.0, 10.0, false), Some(5.0));
        // A safe ACK adds one: max(5 − 1, 1) + 1 = 5, within 10 − 2 = 8.
        assert_eq!(prr.on_ack(1.0, 2.0, 10.0, true), Some(7.0));
        // ssthresh − pipe caps it.
        assert_eq!(prr.on_ack(10.0, 9.0, 10.0, true), Some(10.0));
        // An ACK delivering nothing leaves the window alone.
        assert_eq!(prr.on_ack(0.0, 9.0, 10.0, false), None);
    }
}
