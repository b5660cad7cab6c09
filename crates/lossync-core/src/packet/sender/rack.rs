//! RACK-TLP loss detection (RFC 8985), as Linux runs it by default since 4.18 (`tcp_recovery`
//! = 1, `tcp_early_retrans` = 3; `tcp_recovery.c` and `tcp_output.c` as of 6.1): a flow group's
//! `loss_detection = "rack-tlp"`.
//!
//! RACK (§6) replaces the duplicate-ACK threshold by time: a packet is lost once a packet sent
//! after it has been delivered and a reordering window has passed since it should have arrived,
//! `xmit_ts + RACK.rtt + reo_wnd ≤ now`, RACK.rtt being the RTT of the latest-sent packet known
//! delivered. The window (§6.2 step 4, with `RACK.reord` false) is 0 in loss recovery or once
//! `DupThresh` packets are SACKed, and `min(min_RTT/4, SRTT)` otherwise; a packet still inside
//! it arms the reordering timer (Linux adds its 2 ms `TCP_TIMEOUT_MIN`). Every path in this
//! engine is FIFO, so no reordering is ever seen and the window never widens (`reo_wnd_mult`
//! stays 1): RACK differs from the threshold where fewer than three packets follow a loss
//! (small windows, the end of a flow) and in recovery, where one later delivery suffices.
//!
//! TLP (§7): in the Open state (or an ECN reduction) with data in flight, a probe timeout
//! `PTO = 2·SRTT`, plus Linux's 200 ms delayed-ACK allowance (`TCP_RTO_MIN`) with one packet
//! out and its 2 ms `TCP_TIMEOUT_MIN` otherwise, at most the time left to the RTO, is re-armed on
//! each new packet sent and each ACK that advances. When it fires the sender sends one new
//! packet beyond cwnd, or, with none allowed, the highest outstanding packet again; one probe
//! per episode (`tlp_high_seq`). The probe's ACK lets RACK find a tail loss without the RTO.
//! A retransmitted probe that repairs a loss (its ACK delivers the packet first: no DSACK) ends
//! the episode with a window reduction, `cwnd = ssthresh` (§7.4.2; Linux `tcp_process_tlp_ack`
//! enters and ends CWR at once; it does so on the next ACK beyond `tlp_high_seq`, this sender
//! on the probe's own ACK).

use super::super::event::SimTime;
use super::{Recovery, Segment, Sender, DUP_THRESH, IN_FLIGHT, LOST, RETX, SACKED};
use crate::queue::Ecn;

/// Linux `TCP_TIMEOUT_MIN_US`: added to the reordering timer and to the PTO with several
/// packets out (2 ms).
pub const TIMEOUT_MIN_PS: SimTime = 2_000_000_000;
/// The PTO's delayed-ACK allowance with one packet out (RFC 8985 §7.2 WCDelAckT; Linux
/// `TCP_RTO_MIN`, 200 ms).
pub const WC_DEL_ACK_PS: SimTime = 200_000_000_000;
/// The PTO before any RTT sample (Linux `TCP_TIMEOUT_INIT`, 1 s).
pub const PTO_INITIAL_PS: SimTime = 1_000_000_000_000;

/// A loss probe waiting for the sender's next send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Probe {
    #[default]
    None,
    /// One new packet beyond cwnd.
    New,
    /// This packet again.
    Again(u64),
}

/// RACK-TLP's state; `on` false leaves the sender on the duplicate-ACK threshold.
#[derive(Debug, Default)]
pub(super) struct Rack {
    pub(super) on: bool,
    /// Per outstanding packet (indexed as the scoreboard), its latest transmission's time.
    pub(super) sent_ps: Vec<SimTime>,
    /// RACK.xmit_ts and RACK.end_seq: the latest-sent transmission known delivered.
    xmit_ps: SimTime,
    xmit_seq: u64,
    /// RACK.rtt: that transmission's RTT.
    rtt_ps: SimTime,
    min_rtt_ps: SimTime,
    pub(super) reo_deadline_ps: Option<SimTime>,
    pub(super) pto_deadline_ps: Option<SimTime>,
    /// The TLP episode under way: `tlp_high_seq`, and the retransmitted probe with its send
    /// time, if the probe was one.
    high_seq: Option<u64>,
    again: Option<(u64, SimTime)>,
    /// New data left, or an ACK advanced, in the burst under way: its end re-arms the probe
    /// timeout.
    pub(super) sent_new: bool,
    pub(super) probe: Probe,
}

impl Rack {
    /// A new connection's state, keeping the switch and the memory of `sent_ps`.
    pub(super) fn fresh(on: bool, sent_ps: Vec<SimTime>) -> Self {
        Rack {
            on,
            sent_ps,
            min_rtt_ps: SimTime::MAX,
            ..Rack::default()
        }
    }

    /// Ends the TLP episode and cancels the probe timeout (a loss episode begins: Linux's
    /// `tcp_init_cwnd_reduction` resets `tlp_high_seq`).
    pub(super) fn end_tlp(&mut self) {
        self.pto_deadline_ps = None;
        self.high_seq = None;
        self.again = None;
        self.probe = Probe::None;
    }

    /// A timeout: the reordering timer goes too.
    pub(super) fn clear(&mut self) {
        self.end_tlp();
        self.reo_deadline_ps = None;
    }
}

impl Sender {
    /// The send-time ring, sized as the scoreboard when RACK is on and empty otherwise.
    pub(super) fn size_rack_buffer(&mut self) {
        if self.rack.on {
            self.rack.sent_ps.clear();
            self.rack.sent_ps.resize(self.board.len(), 0);
        } else {
            self.rack.sent_ps = Vec::new();
        }
    }

    /// RFC 8985 §6.2 step 4's reordering window, with no reordering ever seen.
    pub(super) fn rack_reo_wnd_ps(&self) -> SimTime {
        if self.recovery != Recovery::Open || self.sacked_out >= DUP_THRESH {
            return 0;
        }
        let srtt_ps = if self.has_rtt {
            self.srtt_ps as SimTime
        } else {
            SimTime::MAX
        };
        (self.rack.min_rtt_ps / 4).min(srtt_ps)
    }

    /// A transmission of `seq` leaves now.
    #[inline(always)]
    pub(super) fn rack_sent(&mut self, seq: u64, now_ps: SimTime) {
        self.rack.sent_ps[(seq & self.mask) as usize] = now_ps;
    }

    /// Whether `seq`'s latest transmission was a retransmission (a probe's included).
    pub(super) fn retransmitted(&self, seq: u64) -> bool {
        self.state(seq) == RETX || self.rack.again.is_some_and(|(s, _)| s == seq)
    }

    /// §6.2 step 2: the ACK delivered `seq`, whose latest transmission left at its send
    /// time; `retransmitted`: that was a retransmission, which an echo older than it shows
    /// the original's arrival delivered instead (ambiguous: skipped, as the RFC says).
    pub(super) fn rack_delivered(
        &mut self,
        seq: u64,
        retransmitted: bool,
        echo_ps: SimTime,
        now_ps: SimTime,
    ) {
        let xmit_ps = self.rack.sent_ps[(seq & self.mask) as usize];
        if retransmitted && echo_ps < xmit_ps {
            return;
        }
        let rtt_ps = now_ps.saturating_sub(xmit_ps);
        self.rack.min_rtt_ps = self.rack.min_rtt_ps.min(rtt_ps);
        if (xmit_ps, seq) > (self.rack.xmit_ps, self.rack.xmit_seq) {
            self.rack.xmit_ps = xmit_ps;
            self.rack.xmit_seq = seq;
            self.rack.rtt_ps = rtt_ps;
        }
    }

    /// §6.2 step 5: marks lost every packet sent before RACK's and overdue by the reordering
    /// window; arms the reordering timer for the latest one not yet overdue. Returns the
    /// originals and the retransmissions newly presumed lost.
    pub(super) fn rack_detect(&mut self, now_ps: SimTime) -> (u64, u64) {
        if self.sacked_out == 0 && self.retx_fifo.is_empty() && self.lost_scan <= self.snd_una {
            // Nothing is SACKed and nothing retransmitted: every packet sent before a delivered
            // one is acknowledged (paths are FIFO), so none can be lost and none waits.
            self.rack.reo_deadline_ps = None;
            return (0, 0);
        }
        let reo_ps = self.rack_reo_wnd_ps();
        let (xmit, rtt) = ((self.rack.xmit_ps, self.rack.xmit_seq), self.rack.rtt_ps);
        let mut wait: Option<SimTime> = None;
        // Originals leave in sequence order, so the scan stops at the first sent after RACK's.
        let (mut lost, mut s, mut first_waiting) = (0, self.lost_scan.max(self.snd_una), None);
        while s < self.snd_nxt {
            if self.state(s) == IN_FLIGHT {
                let sent = self.rack.sent_ps[(s & self.mask) as usize];
                if (sent, s) > xmit {
                    break;
                }
                let due = sent.saturating_add(rtt).saturating_add(reo_ps);
                if due <= now_ps {
                    self.set_state(s, LOST);
                    self.pipe_pkts -= 1;
                    lost += 1;
                } else {
                    wait = Some(wait.map_or(due, |w| w.max(due)));
                    first_waiting.get_or_insert(s);
                }
            }
            s += 1;
        }
        self.lost_scan = first_waiting.unwrap_or(s);
        // Retransmissions, oldest first (the FIFO is in sending order).
        let mut again = 0;
        while let Some(&(seq, _)) = self.retx_fifo.front() {
            if seq < self.snd_una || self.state(seq) != RETX {
                self.retx_fifo.pop_front();
                continue;
            }
            let sent = self.rack.sent_ps[(seq & self.mask) as usize];
            if (sent, seq) > xmit {
                break;
            }
            let due = sent.saturating_add(rtt).saturating_add(reo_ps);
            if due > now_ps {
                wait = Some(wait.map_or(due, |w| w.max(due)));
                break;
            }
            self.set_state(seq, LOST);
            self.pipe_pkts -= 1;
            self.retx_next = self.retx_next.min(seq);
            self.retx_fifo.pop_front();
            again += 1;
        }
        self.rack.reo_deadline_ps = wait.map(|w| w + TIMEOUT_MIN_PS);
        (lost, again)
    }

    /// §6.3: the reordering timer expired; packets now overdue are lost, and recovery starts.
    fn on_reorder_timeout(&mut self, now_ps: SimTime) {
        self.integrate(now_ps);
        let (lost, _) = self.rack_detect(now_ps);
        if lost > 0 && self.recovery == Recovery::Open {
            self.enter_recovery(now_ps);
        }
    }

    /// §7.2: (re)arms the probe timeout, where a probe may be sent.
    pub(super) fn arm_pto(&mut self, now_ps: SimTime) {
        let out = self.snd_nxt - self.snd_una;
        if self.recovery != Recovery::Open || out == 0 {
            self.rack.pto_deadline_ps = None;
            return;
        }
        let pto_ps = if !self.has_rtt {
            PTO_INITIAL_PS
        } else {
            2 * self.srtt_ps as SimTime
                + if out == 1 {
                    WC_DEL_ACK_PS
                } else {
                    TIMEOUT_MIN_PS
                }
        };
        let at = now_ps + pto_ps;
        self.rack.pto_deadline_ps = Some(self.rto_deadline_ps.map_or(at, |rto| at.min(rto)));
    }

    /// The engine has sent what it could now: new data, or an ACK that advanced, re-arms the
    /// probe timeout (§7.2), once per burst as Linux's `tcp_write_xmit` does.
    #[inline(always)]
    pub fn end_burst(&mut self, now_ps: SimTime) {
        if self.rack.sent_new {
            self.rack.sent_new = false;
            self.arm_pto(now_ps);
        }
    }

    /// §7.3: the probe timeout expired: one probe per episode, new data if the receive window
    /// and the flow's size allow, else the highest outstanding packet not SACKed.
    fn on_probe_timeout(&mut self, now_ps: SimTime) {
        self.integrate(now_ps);
        if self.recovery != Recovery::Open
            || self.rack.high_seq.is_some()
            || self.snd_nxt == self.snd_una
        {
            return;
        }
        let new_allowed = self.snd_nxt < self.limit_pkts
            && ((self.snd_nxt - self.snd_una) as f64) < self.rwnd_pkts;
        self.rack.probe = if new_allowed {
            Probe::New
        } else {
            match (self.snd_una..self.snd_nxt)
                .rev()
                .find(|&s| self.state(s) != SACKED)
            {
                Some(s) => Probe::Again(s),
                None => return,
            }
        };
        self.stats.loss_probes += 1;
    }

    /// The probe retransmission of `seq`, sent now: in flight already, so the pipe and the
    /// scoreboard do not change.
    pub(super) fn probe_again(&mut self, seq: u64, now_ps: SimTime) {
        self.rack_sent(seq, now_ps);
        self.rack.again = Some((seq, now_ps));
        self.probe_sent(now_ps);
        self.stats.sent_pkts += 1;
        self.stats.retransmitted_pkts += 1;
    }

    /// A probe has left: the episode runs until the ACKs pass it, and the RTO restarts from
    /// now (Linux's `tcp_send_loss_probe` clears `icsk_pending` so that `tcp_rearm_rto` does).
    pub(super) fn probe_sent(&mut self, now_ps: SimTime) {
        self.rack.high_seq = Some(self.snd_nxt);
        self.rto_deadline_ps = Some(now_ps + self.rto_ps());
    }

    /// Whether this ACK is the retransmitted probe's, with that packet not yet delivered: the
    /// probe repairs a loss (no DSACK). Asked before the ACK is processed.
    pub(super) fn probe_repairs(&self, echo_ps: SimTime) -> Option<bool> {
        let (seq, sent) = self.rack.again?;
        (echo_ps == sent).then(|| seq >= self.snd_una && self.state(seq) != SACKED)
    }

    /// §7.4: the episode ends at the probe's ACK (a retransmitted probe that repaired a loss
    /// reduces the window, once) or once the ACKs pass `tlp_high_seq`.
    pub(super) fn end_probe_episode(&mut self, repaired: Option<bool>, now_ps: SimTime) {
        let over = match repaired {
            Some(true) if self.recovery == Recovery::Open => {
                let w = self.loss_ssthresh(now_ps);
                self.ssthresh_pkts = w;
                self.cwnd_pkts = w.min(self.rwnd_pkts);
                self.stats.reductions += 1;
                self.ss_exit.on_reduction(false);
                true
            }
            Some(_) => true,
            None => self.rack.high_seq.is_some_and(|h| self.snd_una >= h),
        };
        if over {
            self.rack.high_seq = None;
            self.rack.again = None;
        }
    }

    /// The earliest of the retransmission, reordering and probe timers.
    #[inline(always)]
    pub fn timer_deadline_ps(&self) -> Option<SimTime> {
        if !self.rack.on {
            return self.rto_deadline_ps;
        }
        let none = SimTime::MAX;
        let at = (self.rto_deadline_ps.unwrap_or(none))
            .min(self.rack.reo_deadline_ps.unwrap_or(none))
            .min(self.rack.pto_deadline_ps.unwrap_or(none));
        (at != none).then_some(at)
    }

    /// A timer expired (the caller checked [`Sender::timer_deadline_ps`]): the reordering
    /// timer first, then the probe, then the retransmission timeout.
    pub fn on_timer(&mut self, now_ps: SimTime) {
        let due = |d: Option<SimTime>| d.is_some_and(|d| d <= now_ps);
        if due(self.rack.reo_deadline_ps) {
            self.rack.reo_deadline_ps = None;
            self.on_reorder_timeout(now_ps);
        } else if due(self.rack.pto_deadline_ps) {
            self.rack.pto_deadline_ps = None;
            self.on_probe_timeout(now_ps);
        } else if due(self.rto_deadline_ps) {
            self.on_timeout(now_ps);
        }
    }

    /// The tail loss probe that the probe timeout asked for ([`rack`](self::rack)).
    #[cold]
    pub(super) fn send_probe(&mut self, now_ps: SimTime) -> Option<Segment> {
        match std::mem::take(&mut self.rack.probe) {
            Probe::New => {
                let seg = self.send_new(now_ps);
                self.probe_sent(now_ps);
                Some(seg)
            }
            Probe::Again(seq) if seq >= self.snd_una => {
                self.probe_again(seq, now_ps);
                Some(Segment {
                    seq,
                    retransmission: true,
                    ecn: if self.scalable { self.ect } else { Ecn::NotEct },
                    cwr: false,
                })
            }
            // The packet was acknowledged meanwhile: the usual rules send.
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;
    use crate::cc;
    use crate::packet::receiver::Receiver;
    use crate::scenario::LossDetection;
    use std::collections::BTreeMap;

    const MS: SimTime = 1_000_000_000;
    /// The path's RTT besides the bottleneck's 1 ms per packet.
    const RTT_PS: SimTime = 100 * MS;

    /// A Reno flow of `size` packets sent from a window of `cwnd`, in congestion avoidance.
    fn flow(cwnd: f64, size: u64, d: LossDetection) -> Sender {
        let law = || cc::build("reno", &BTreeMap::new(), "cc").unwrap();
        let mut s = Sender::new(law(), cwnd, f64::INFINITY, false, 0.1, 64).with_loss_detection(d);
        s.reset(law(), cwnd, false, 0.1, size);
        s.start(0);
        s
    }

    /// A FIFO path: a bottleneck that serves a packet per ms, then RTT_PS to the ACK's return.
    /// `drops`: transmissions (seq, retransmission) lost before the bottleneck, once each;
    /// `late`: extra delay of the first ACK for a seq.
    #[derive(Default)]
    struct Path {
        rx: Option<Receiver>,
        acks: Vec<(SimTime, Ack)>,
        busy_until: SimTime,
        now: SimTime,
        drops: Vec<(u64, bool)>,
        late: Vec<(u64, SimTime)>,
        /// Every transmission (time, seq, retransmission), and when each one's ACK came back.
        sent: Vec<(SimTime, u64, bool)>,
        acked_at: BTreeMap<(u64, bool), SimTime>,
    }

    impl Path {
        fn new(drops: &[(u64, bool)]) -> Self {
            Path {
                rx: Some(Receiver::new(64)),
                drops: drops.to_vec(),
                ..Path::default()
            }
        }

        fn send(&mut self, s: &mut Sender) {
            while let Some(seg) = s.next_segment(self.now) {
                let key = (seg.seq, seg.retransmission);
                self.sent.push((self.now, seg.seq, seg.retransmission));
                if let Some(k) = self.drops.iter().position(|&d| d == key) {
                    self.drops.remove(k);
                    continue;
                }
                self.busy_until = self.busy_until.max(self.now) + MS;
                let mut back = self.busy_until + RTT_PS;
                if let Some(k) = self.late.iter().position(|&(q, _)| q == seg.seq) {
                    back += self.late.remove(k).1;
                }
                let rx = self.rx.as_mut().unwrap();
                let ack = rx.receive(seg.seq, self.now, 0.0).unwrap();
                self.acks.push((back, ack));
                self.acked_at.entry(key).or_insert(back);
            }
            s.end_burst(self.now);
        }

        /// The next ACK or timer, until `until` or nothing is left.
        fn run(&mut self, s: &mut Sender, until: SimTime) {
            self.send(s);
            loop {
                let next_ack = self.acks.iter().enumerate().min_by_key(|(_, a)| a.0);
                let ack_at = next_ack.map(|(_, a)| a.0);
                let next = match (ack_at, s.timer_deadline_ps()) {
                    (Some(a), Some(t)) => a.min(t),
                    (a, t) => match a.or(t) {
                        Some(x) => x,
                        None => break,
                    },
                };
                if next > until {
                    break;
                }
                self.now = next;
                if ack_at == Some(next) {
                    let i = next_ack.unwrap().0;
                    let (_, ack) = self.acks.remove(i);
                    s.on_ack(next, ack);
                } else {
                    s.on_timer(next);
                }
                self.send(s);
            }
        }

        fn retransmissions(&self, seq: u64) -> Vec<SimTime> {
            self.sent
                .iter()
                .filter(|x| x.1 == seq && x.2)
                .map(|x| x.0)
                .collect()
        }
    }

    #[test]
    fn two_sacks_after_a_hole_declare_it_lost_a_reordering_window_after_it_was_due() {
        // RFC 8985 §6.2: 0 is lost, 1 and 2 arrive (ACKs at 101 and 102 ms; all three sent at 0).
        // With two SACKed (< DupThresh) the window is min_RTT/4 = 25.25 ms; 0 is due at
        // xmit 0 + RACK.rtt 102 ms, so the timer fires at 127.25 ms + Linux's 2 ms, and 0 is
        // retransmitted then. The threshold never sees three SACKs: it waits for the RTO.
        let mut s = flow(3.0, 3, LossDetection::RackTlp);
        let mut p = Path::new(&[(0, false)]);
        p.run(&mut s, 102 * MS);
        assert_eq!(s.rack_reo_wnd_ps(), 101 * MS / 4);
        p.run(&mut s, 10_000 * MS);
        assert_eq!(p.retransmissions(0), vec![102 * MS + 101 * MS / 4 + 2 * MS]);
        let st = s.counters();
        assert_eq!((st.fast_recoveries, st.timeouts, s.snd_una()), (1, 0, 3));

        let mut s = flow(3.0, 3, LossDetection::DupThresh);
        let mut p = Path::new(&[(0, false)]);
        p.run(&mut s, 10_000 * MS);
        let st = s.counters();
        assert_eq!((st.fast_recoveries, st.timeouts, s.snd_una()), (0, 1, 3));
    }

    #[test]
    fn the_window_closes_with_three_sacks_and_in_recovery() {
        // §6.2 step 4: the third SACK makes the window 0 and 0 is lost at once (103 ms), as with
        // the threshold; in recovery it stays 0.
        let mut s = flow(4.0, 4, LossDetection::RackTlp);
        let mut p = Path::new(&[(0, false)]);
        p.run(&mut s, 10_000 * MS);
        assert_eq!(p.retransmissions(0), vec![103 * MS]);
        let mut s = flow(20.0, 100, LossDetection::RackTlp);
        let mut p = Path::new(&[(0, false)]);
        p.run(&mut s, 103 * MS);
        assert!(matches!(s.recovery(), Recovery::Fast { .. }));
        assert_eq!(s.rack_reo_wnd_ps(), 0);
    }

    #[test]
    fn a_lost_retransmission_is_found_by_the_first_later_delivery() {
        // RFC 8985 §3.3: the retransmission of 2 is lost too. In recovery RACK declares it lost
        // at the ACK of the first packet sent after it; the threshold waits for the third.
        let second_retx = |d: LossDetection| {
            let mut s = flow(10.0, 200, d);
            let mut p = Path::new(&[(2, false), (2, true)]);
            p.run(&mut s, 10_000 * MS);
            assert_eq!(s.snd_una(), 200);
            let r = p.retransmissions(2);
            assert_eq!(r.len(), 2, "{r:?}");
            let after: Vec<SimTime> = p
                .sent
                .iter()
                .filter(|x| x.0 >= r[0] && !(x.1 == 2 && x.2))
                .map(|x| p.acked_at[&(x.1, x.2)])
                .collect();
            (r[1], after)
        };
        let (rack, after) = second_retx(LossDetection::RackTlp);
        assert_eq!(rack, after[0]);
        let (dup, after) = second_retx(LossDetection::DupThresh);
        assert_eq!(dup, after[2]);
    }

    #[test]
    fn a_tail_loss_is_probed_at_two_srtt_and_repaired_without_a_timeout() {
        // RFC 8985 §7: 7, 8 and 9, the flow's last packets, are lost. After the ACK of 6 the PTO
        // is 2·SRTT + 2 ms (three packets out), before the RTO. The probe resends 9 (no new data
        // is left); its SACK lets RACK declare 7 and 8 lost at once: one fast recovery, no RTO.
        let mut s = flow(10.0, 10, LossDetection::RackTlp);
        let mut p = Path::new(&[(7, false), (8, false), (9, false)]);
        p.run(&mut s, 107 * MS);
        assert_eq!(s.snd_una(), 7);
        let pto = 107 * MS + 2 * s.srtt_ps as SimTime + TIMEOUT_MIN_PS;
        assert!(pto < s.rto_deadline_ps().unwrap());
        assert_eq!(s.timer_deadline_ps(), Some(pto));
        p.run(&mut s, 10_000 * MS);
        assert_eq!(p.retransmissions(9)[0], pto);
        let st = s.counters();
        assert_eq!(
            (st.loss_probes, st.fast_recoveries, st.timeouts, s.snd_una()),
            (1, 1, 0, 10)
        );
        assert_eq!(st.reductions, 1);
        // The threshold: the RTO.
        let mut s = flow(10.0, 10, LossDetection::DupThresh);
        let mut p = Path::new(&[(7, false), (8, false), (9, false)]);
        p.run(&mut s, 10_000 * MS);
        assert_eq!((s.counters().timeouts, s.snd_una()), (1, 10));
    }

    #[test]
    fn one_packet_out_waits_for_a_delayed_ack_or_the_rto() {
        // §7.2: with one packet out the PTO adds WCDelAckT (200 ms), but never passes the RTO.
        let mut s = flow(10.0, 10, LossDetection::RackTlp);
        let mut p = Path::new(&[(9, false)]);
        p.run(&mut s, 109 * MS);
        assert_eq!(s.snd_nxt() - s.snd_una(), 1);
        let pto = 109 * MS + 2 * s.srtt_ps as SimTime + WC_DEL_ACK_PS;
        assert_eq!(
            s.timer_deadline_ps(),
            Some(pto.min(s.rto_deadline_ps().unwrap()))
        );
    }

    #[test]
    fn a_probe_that_repairs_a_loss_reduces_once_and_one_whose_original_arrived_does_not() {
        // §7.4: 9 alone is lost; the probe (9 again) repairs it: ssthresh = cwnd/2 (Reno) and
        // cwnd = ssthresh, no fast recovery, no RTO.
        let mut s = flow(10.0, 10, LossDetection::RackTlp);
        let mut p = Path::new(&[(8, false), (9, false)]);
        p.drops.retain(|&d| d != (8, false));
        p.run(&mut s, 109 * MS);
        let w = s.cwnd_pkts();
        p.run(&mut s, 10_000 * MS);
        let st = s.counters();
        assert_eq!(
            (
                st.loss_probes,
                st.reductions,
                st.fast_recoveries,
                st.timeouts
            ),
            (1, 1, 0, 0)
        );
        assert_eq!(s.ssthresh_pkts(), w / 2.0);
        assert_eq!(s.snd_una(), 10);
        // The ACKs of 8 and 9 come 250 ms late: the probe leaves, then they arrive, and the
        // probe's own ACK is a duplicate (a DSACK in TCP): no loss, no reduction.
        let mut s = flow(10.0, 10, LossDetection::RackTlp);
        let mut p = Path::new(&[]);
        p.late = vec![(8, 250 * MS), (9, 250 * MS)];
        p.run(&mut s, 10_000 * MS);
        let st = s.counters();
        assert_eq!((st.loss_probes, st.reductions, st.timeouts), (1, 0, 0));
        assert!(
            s.cwnd_pkts() > w,
            "no reduction: {} against {w}",
            s.cwnd_pkts()
        );
    }
}
