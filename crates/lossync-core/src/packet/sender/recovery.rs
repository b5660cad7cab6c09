//! The sender's loss recovery: the SACK scoreboard's loss detection (RFC 6675 `IsLost`, lost
//! retransmissions), the entry into fast recovery, the retransmission timeout's go-back-N
//! (RFC 6298, RFC 5681 §3.1), and the scoreboard's growth.
//!
//! Undo (a flow group's `undo`): the first ACK that advances after a timeout tells, by its
//! timestamp echo, whether the original transmission arrived (Eifel detection, RFC 3522 §3.2;
//! Linux's `tcp_packet_delayed`): an echo older than the first retransmission means the timeout
//! was spurious, and Linux's `tcp_try_undo_loss` (6.x) undoes it: cwnd back to its value before
//! the timeout (Reno's and CUBIC's `undo_cwnd`), ssthresh to at least `max(ssthresh, ¾·cwnd)` of
//! then (`tcp_current_ssthresh`), the packets presumed lost back in flight, and the state Open
//! (RFC 4015's response restores the window too). The law's own state (CUBIC's `W_max`, its
//! epoch) stays as the reduction left it, as in Linux. Only a timeout that reduced the window
//! can be undone; the values are kept through repeated timeouts of one episode.

use super::super::event::SimTime;
use super::prr::Prr;
use super::rate::TxStamp;
use super::{LossRecovery, Recovery, Sender, IN_FLIGHT, LOST, MIN_SSTHRESH_PKTS, RETX};

/// What undoing a spurious timeout restores, and when its first retransmission was sent.
#[derive(Debug, Clone, Copy)]
pub(super) struct Undo {
    cwnd_pkts: f64,
    ssthresh_pkts: f64,
    retransmitted_ps: SimTime,
}

impl Sender {
    /// Records that `seq` has been SACKed, keeping the three highest.
    pub(super) fn note_sacked(&mut self, seq: u64) {
        let v = seq + 1;
        let t = &mut self.top_sacked;
        if v > t[0] {
            *t = [v, t[0], t[1]];
        } else if v > t[1] && v != t[0] {
            *t = [t[0], v, t[1]];
        } else if v > t[2] && v != t[1] && v != t[0] {
            t[2] = v;
        }
    }

    /// RFC 6675 `IsLost` for every packet not yet checked: those below the third-highest SACKed
    /// packet. Returns how many packets were newly presumed lost.
    pub(super) fn mark_losses(&mut self) -> u64 {
        if self.top_sacked[2] == 0 {
            return 0;
        }
        let limit = self.top_sacked[2] - 1;
        let mut newly = 0;
        let mut s = self.lost_scan.max(self.snd_una);
        while s < limit {
            if self.state(s) == IN_FLIGHT {
                self.set_state(s, LOST);
                self.pipe_pkts -= 1;
                newly += 1;
            }
            s += 1;
        }
        self.lost_scan = self.lost_scan.max(limit);
        newly
    }

    /// A retransmission is lost too once `DUP_THRESH` packets sent after it are SACKed: over a
    /// FIFO path they would have arrived after it. Returns how many.
    pub(super) fn mark_lost_retransmissions(&mut self) -> u64 {
        let mut lost = 0;
        while let Some(&(seq, sent_before)) = self.retx_fifo.front() {
            if seq < self.snd_una || self.state(seq) != RETX {
                self.retx_fifo.pop_front();
            } else if self.top_sacked[2] > sent_before {
                self.set_state(seq, LOST);
                self.pipe_pkts -= 1;
                self.retx_next = self.retx_next.min(seq);
                self.retx_fifo.pop_front();
                lost += 1;
            } else {
                break;
            }
        }
        lost
    }

    /// The retransmission timer expired (the caller checked the deadline). RFC 6298 (5.4)–(5.6),
    /// RFC 5681 §3.1: cwnd = 1, every outstanding packet not SACKed is presumed lost and is
    /// retransmitted in order from `snd_una` (go-back-N over the holes).
    pub fn on_timeout(&mut self, now_ps: SimTime) {
        self.integrate(now_ps);
        if self.snd_una == self.snd_nxt {
            self.rto_deadline_ps = None;
            return;
        }
        self.stats.timeouts += 1;
        self.ss_exit.on_reduction(true);
        self.rack.clear();
        // A timeout during an ECN reduction by PRR keeps its ssthresh (Linux's `tcp_enter_loss`
        // from CWR with high_seq not yet acknowledged).
        if self.recovery == Recovery::Open && !std::mem::take(&mut self.ecn_prr) {
            if self.undo {
                self.undo_state = Some(Undo {
                    cwnd_pkts: self.cwnd_pkts,
                    ssthresh_pkts: self.ssthresh_pkts.max(0.75 * self.cwnd_pkts),
                    retransmitted_ps: now_ps,
                });
            }
            self.ssthresh_pkts = self.loss_ssthresh(now_ps);
            self.stats.reductions += 1;
        }
        self.cwnd_pkts = 1.0;
        for s in self.snd_una..self.snd_nxt {
            let st = self.state(s);
            if st == IN_FLIGHT || st == RETX {
                self.set_state(s, LOST);
            }
        }
        if self.model {
            // Every packet in the pipe is now presumed lost (`C.lost` of the rate sampler).
            self.rate.lost += self.pipe_pkts;
        }
        self.pipe_pkts = 0;
        self.retx_fifo.clear();
        self.retx_next = self.snd_una;
        self.lost_scan = self.snd_nxt;
        self.force_retx = false;
        self.recovery = Recovery::Timeout {
            point: self.snd_nxt,
        };
        self.backoff += 1;
        self.rto_deadline_ps = Some(now_ps + self.rto_ps());
    }

    /// The first ACK that advances `snd_una` after a timeout, echoing `echo_ps`, decides (RFC 3522
    /// §3.2): if it echoes a transmission from before the first retransmission, the timeout was
    /// spurious and is undone (see the module doc). Later ACKs do not judge: a late original
    /// could echo an old time after a genuine timeout (a real receiver's TS.Recent never goes
    /// back, RFC 7323 §4.3; this one echoes each packet's own time).
    pub(super) fn judge_timeout(&mut self, echo_ps: SimTime) {
        let Some(u) = self.undo_state.take() else {
            return;
        };
        if echo_ps >= u.retransmitted_ps {
            return;
        }
        self.cwnd_pkts = self.cwnd_pkts.max(u.cwnd_pkts).min(self.rwnd_pkts);
        self.ssthresh_pkts = self.ssthresh_pkts.max(u.ssthresh_pkts);
        for s in self.snd_una..self.snd_nxt {
            if self.state(s) == LOST {
                self.set_state(s, IN_FLIGHT);
                self.pipe_pkts += 1;
            }
        }
        // Nothing waits for a retransmission now; holes are judged afresh by the SACKs.
        self.lost_scan = self.snd_una;
        self.retx_next = self.snd_una;
        self.recovery = Recovery::Open;
        self.stats.spurious_timeouts += 1;
    }

    /// The law's window after one loss event, at least 2 packets (RFC 5681 §3.1 eq. (4)).
    pub(super) fn loss_ssthresh(&mut self, now_ps: SimTime) -> f64 {
        let ctx = self.ctx(now_ps);
        self.cc
            .on_loss(&ctx, self.cwnd_pkts, 1.0)
            .max(MIN_SSTHRESH_PKTS)
    }

    /// A loss starts fast recovery (RFC 6675 §5 (4.1)–(4.3)): one reduction for this loss
    /// event; everything sent so far belongs to it.
    pub(super) fn enter_recovery(&mut self, now_ps: SimTime) {
        self.recovery = Recovery::Fast {
            point: self.snd_nxt,
        };
        self.force_retx = true;
        self.stats.fast_recoveries += 1;
        self.rack.end_tlp();
        if std::mem::take(&mut self.ecn_prr) {
            // A loss while PRR takes the window down for an echo: recovery carries on with that
            // reduction, as Linux's `tcp_enter_recovery` does from CWR (no second cut).
            return;
        }
        let w = self.loss_ssthresh(now_ps);
        self.ssthresh_pkts = w;
        if self.loss_recovery == LossRecovery::Prr {
            // PRR sets the window on every ACK from here on, this one included.
            self.prr = Prr::start(self.cwnd_pkts);
        } else {
            self.cwnd_pkts = w.min(self.rwnd_pkts);
        }
        self.stats.reductions += 1;
        self.ss_exit.on_reduction(false);
    }

    /// `pipe` recounted from the scoreboard (O(window): for checks, not for the hot path).
    pub fn recount_pipe(&self) -> u64 {
        (self.snd_una..self.snd_nxt)
            .filter(|&s| matches!(self.state(s), IN_FLIGHT | RETX))
            .count() as u64
    }

    /// Doubles the scoreboard, keeping the outstanding packets. Rare: only when the window
    /// outgrows the size given at build.
    pub(super) fn grow(&mut self) {
        let cap = (self.mask + 1) * 2;
        let mut board = vec![IN_FLIGHT; cap as usize];
        for s in self.snd_una..self.snd_nxt {
            board[(s & (cap - 1)) as usize] = self.state(s);
        }
        if self.rack.on {
            let mut sent = vec![0; cap as usize];
            for s in self.snd_una..self.snd_nxt {
                sent[(s & (cap - 1)) as usize] = self.rack.sent_ps[(s & self.mask) as usize];
            }
            self.rack.sent_ps = sent;
        }
        if self.model {
            let mut stamps = vec![TxStamp::default(); cap as usize];
            for s in self.snd_una..self.snd_nxt {
                stamps[(s & (cap - 1)) as usize] = self.stamps[(s & self.mask) as usize];
            }
            self.stamps = stamps;
        }
        self.board = board;
        self.mask = cap - 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::cc;
    use crate::packet::receiver::Receiver;
    use std::collections::BTreeMap;

    const RTT_PS: SimTime = 100_000_000_000; // 100 ms

    fn reno_sender(cwnd: f64, slow_start: bool) -> Sender {
        let law = cc::build("reno", &BTreeMap::new(), "cc").unwrap();
        let mut s = Sender::new(law, cwnd, f64::INFINITY, slow_start, 0.1, 64);
        s.start(0);
        s
    }

    fn drain(s: &mut Sender, now: SimTime) -> Vec<Segment> {
        std::iter::from_fn(|| s.next_segment(now)).collect()
    }

    fn seqs(v: &[Segment]) -> Vec<u64> {
        v.iter().map(|x| x.seq).collect()
    }

    /// A lossless-except-where-told FIFO path between the sender and a receiver: packets arrive in
    /// the order sent, 1 µs apart, each ACK returns at once. `drops` lists (seq, retransmission)
    /// transmissions to lose, each once.
    struct Net {
        wire: VecDeque<(Segment, SimTime)>,
        rx: Receiver,
        now: SimTime,
        drops: Vec<(u64, bool)>,
        /// The seq whose ACK put the sender into fast recovery, and cwnd just after.
        entered: Vec<(u64, f64)>,
        retransmitted: Vec<u64>,
    }

    impl Net {
        fn new(drops: &[(u64, bool)]) -> Self {
            Net {
                wire: VecDeque::new(),
                rx: Receiver::new(64),
                now: 0,
                drops: drops.to_vec(),
                entered: Vec::new(),
                retransmitted: Vec::new(),
            }
        }

        fn send(&mut self, s: &mut Sender) {
            while let Some(seg) = s.next_segment(self.now) {
                if seg.retransmission {
                    self.retransmitted.push(seg.seq);
                }
                self.wire.push_back((seg, self.now));
            }
        }

        /// Delivers (or drops) the packet at the head of the wire.
        fn step(&mut self, s: &mut Sender) {
            let (seg, sent_ps) = self.wire.pop_front().expect("something in flight");
            self.now += 1_000_000;
            let key = (seg.seq, seg.retransmission);
            if let Some(k) = self.drops.iter().position(|&d| d == key) {
                self.drops.remove(k);
                return;
            }
            let before = s.recovery();
            let cum = self.rx.on_data(seg.seq);
            s.on_ack(
                self.now,
                Ack {
                    cum,
                    sacked: seg.seq,
                    echo_ps: sent_ps,
                    feedback_pkts: 0.0,
                    ..Ack::default()
                },
            );
            if before == Recovery::Open && matches!(s.recovery(), Recovery::Fast { .. }) {
                self.entered.push((seg.seq, s.cwnd_pkts()));
            }
            self.send(s);
        }

        fn run_until_acked(&mut self, s: &mut Sender, seq: u64) {
            self.send(s);
            while s.snd_una() < seq {
                self.step(s);
            }
        }
    }

    #[test]
    fn one_reduction_for_two_losses_in_a_window_then_recovery_ends() {
        let mut s = reno_sender(20.0, false);
        let mut net = Net::new(&[(5, false), (12, false)]);
        net.run_until_acked(&mut s, 100);
        assert_eq!(s.pipe_pkts(), s.recount_pipe());
        // Reno grew by Σ 1/w over the five in-order ACKs (0..4) before the hole, then halved
        // once, on the ACK of 8: the third SACK above 5 (RFC 6675 IsLost, DupThresh = 3).
        let mut w = 20.0;
        for _ in 0..5 {
            w += 1.0 / w;
        }
        assert_eq!(net.entered.len(), 1, "{:?}", net.entered);
        assert_eq!(net.entered[0].0, 8);
        assert!(
            (net.entered[0].1 - w / 2.0).abs() < 1e-12,
            "{:?}",
            net.entered
        );
        // 12, lost in the same window, was retransmitted without a second reduction.
        assert_eq!(net.retransmitted, vec![5, 12]);
        let st = s.stats(net.now);
        assert_eq!((st.fast_recoveries, st.reductions, st.timeouts), (1, 1, 0));
        assert_eq!(s.recovery(), Recovery::Open);
        // Back in congestion avoidance: cwnd grew again from w/2.
        assert!(s.cwnd_pkts() > w / 2.0);
    }

    /// Packets sent after each of the first ACKs of fast recovery (one loss, seq 5, in a window
    /// of 20), and the window when recovery ends against ssthresh.
    fn recovery_sends(loss_recovery: LossRecovery) -> (Vec<usize>, f64, f64) {
        let mut s = reno_sender(20.0, false).with_loss_recovery(loss_recovery);
        let mut net = Net::new(&[(5, false)]);
        net.send(&mut s);
        while net.entered.is_empty() {
            net.step(&mut s);
        }
        let mut sent = vec![net.wire.iter().filter(|(seg, _)| seg.seq >= 27).count()];
        let mut end = None;
        while s.snd_una() < 60 {
            let before = net.wire.len();
            net.step(&mut s);
            let in_recovery = matches!(s.recovery(), Recovery::Fast { .. });
            if in_recovery {
                net.send(&mut s);
                sent.push(net.wire.len() + 1 - before);
            } else if end.is_none() {
                end = Some((s.cwnd_pkts(), s.ssthresh_pkts));
            }
            net.send(&mut s);
        }
        let (cwnd, ssthresh) = end.unwrap();
        (sent, cwnd, ssthresh)
    }

    #[test]
    fn prr_sends_in_proportion_through_recovery_and_ends_at_ssthresh() {
        // RFC 6675: after the fast retransmit, silence while the pipe (19 packets) is above the
        // halved window (≈ 10), about ten ACKs. PRR (RFC 9937): one new packet per two
        // delivered from the start (4 in the 8 ACKs after the entering one), and the window at
        // ssthresh when recovery ends.
        let (rfc, _, _) = recovery_sends(LossRecovery::Rfc6675);
        let (prr, cwnd, ssthresh) = recovery_sends(LossRecovery::Prr);
        let first = |v: &[usize]| v[1..9].iter().sum::<usize>();
        assert_eq!(first(&rfc), 0, "{rfc:?}");
        assert_eq!(first(&prr), 4, "{prr:?}");
        // cwnd = ssthresh at the end, then the ACK's congestion-avoidance growth (1/cwnd).
        assert!(
            (cwnd - (ssthresh + 1.0 / ssthresh)).abs() < 1e-12,
            "{cwnd} {ssthresh}"
        );
    }

    #[test]
    fn recovery_point_covers_limited_transmit_and_ends_there() {
        let mut s = reno_sender(20.0, false);
        let mut net = Net::new(&[(5, false)]);
        net.send(&mut s);
        // 0..4 advance the ACK and each sends one new packet (20..24); the SACKs of 6 and 7 each
        // send one more (25, 26: the pipe fell below cwnd, RFC 6675 §5 / RFC 3042); the SACK of 8
        // declares 5 lost with everything below 27 outstanding.
        while net.entered.is_empty() {
            net.step(&mut s);
        }
        assert_eq!(s.recovery(), Recovery::Fast { point: 27 });
        assert_eq!(net.retransmitted, vec![5]);
        while s.snd_una() < 27 {
            assert!(matches!(s.recovery(), Recovery::Fast { .. }));
            net.step(&mut s);
        }
        assert_eq!(s.recovery(), Recovery::Open);
    }

    #[test]
    fn lost_retransmission_is_sent_again_without_a_timeout() {
        let mut s = reno_sender(10.0, false);
        let mut net = Net::new(&[(0, false), (0, true)]);
        net.run_until_acked(&mut s, 50);
        assert_eq!(net.retransmitted, vec![0, 0]);
        let st = s.stats(net.now);
        assert_eq!((st.timeouts, st.reductions), (0, 1));
    }

    #[test]
    fn timeout_resets_to_one_packet_and_goes_back_to_the_first_hole() {
        let mut s = reno_sender(10.0, true);
        let first = drain(&mut s, 0);
        assert_eq!(first.len(), 10);
        let deadline = s.rto_deadline_ps().unwrap();
        // RFC 6298 §2.1: 1 s before any RTT sample.
        assert_eq!(deadline, RTO_INITIAL_PS);
        s.on_timeout(deadline);
        assert_eq!(s.cwnd_pkts(), 1.0);
        assert_eq!(s.ssthresh_pkts(), 5.0); // Reno halves the 10-packet window
        assert_eq!(s.recovery(), Recovery::Timeout { point: 10 });
        let again = drain(&mut s, deadline);
        assert_eq!(
            again,
            vec![Segment {
                seq: 0,
                retransmission: true,
                ecn: crate::queue::Ecn::NotEct,
                cwr: false,
            }]
        );
        // RFC 6298 (5.5): the RTO doubled.
        assert_eq!(s.rto_deadline_ps(), Some(deadline + 2 * RTO_INITIAL_PS));
        // The retransmission of 0 comes back: slow start sends the next two holes.
        let mut rx = Receiver::new(64);
        let cum = rx.on_data(0);
        s.on_ack(
            deadline + RTT_PS,
            Ack {
                cum,
                sacked: 0,
                echo_ps: deadline,
                feedback_pkts: 0.0,
                ..Ack::default()
            },
        );
        assert_eq!(s.cwnd_pkts(), 2.0);
        assert_eq!(seqs(&drain(&mut s, deadline + RTT_PS)), vec![1, 2]);
    }

    /// Eifel detection (RFC 3522 §3.2) and Linux's undo: a window of 10 times out, 0 is
    /// retransmitted, and the ACK of 0 comes back echoing either the original's send time (the
    /// original was only delayed: undone) or the retransmission's (it was lost: kept).
    #[test]
    fn a_timeout_found_spurious_by_the_echo_is_undone() {
        for (undo, echo_original) in [(true, true), (true, false), (false, true)] {
            let mut s = reno_sender(10.0, false).with_undo(undo);
            assert_eq!(drain(&mut s, 0).len(), 10);
            let deadline = s.rto_deadline_ps().unwrap();
            s.on_timeout(deadline);
            assert_eq!(seqs(&drain(&mut s, deadline)), vec![0]);
            let mut rx = Receiver::new(64);
            let cum = rx.on_data(0);
            let echo_ps = if echo_original { 0 } else { deadline };
            let ack = Ack {
                cum,
                sacked: 0,
                echo_ps,
                feedback_pkts: 0.0,
                ..Ack::default()
            };
            s.on_ack(deadline + RTT_PS, ack);
            let st = s.stats(deadline + RTT_PS);
            if undo && echo_original {
                // Back to 10 and Open, ssthresh max(5, ¾·10) = 7.5: congestion avoidance, so
                // this ACK adds Reno's 1/10. Packets 1–9 are in flight again.
                assert_eq!(s.recovery(), Recovery::Open);
                assert_eq!((s.cwnd_pkts(), s.ssthresh_pkts()), (10.1, 7.5));
                assert_eq!((st.timeouts, st.spurious_timeouts), (1, 1));
                assert_eq!((s.pipe_pkts(), s.recount_pipe()), (9, 9));
                assert_eq!(seqs(&drain(&mut s, deadline + RTT_PS)), vec![10]);
            } else {
                // A genuine timeout (or no undo): slow start from 1, the holes resent.
                assert_eq!(s.recovery(), Recovery::Timeout { point: 10 });
                assert_eq!((s.cwnd_pkts(), s.ssthresh_pkts()), (2.0, 5.0));
                assert_eq!(st.spurious_timeouts, 0);
                assert_eq!(seqs(&drain(&mut s, deadline + RTT_PS)), vec![1, 2]);
                // Only the first ACK that advances judges: the original of 1 arriving late, with
                // its old echo, undoes nothing.
                let cum = rx.on_data(1);
                let late = Ack {
                    cum,
                    sacked: 1,
                    echo_ps: 0,
                    ..ack
                };
                s.on_ack(deadline + RTT_PS + 1, late);
                assert_eq!(s.counters().spurious_timeouts, 0);
                assert!(matches!(s.recovery(), Recovery::Timeout { .. }));
            }
        }
    }

    /// RFC 3168 §6.1.2: one reduction per window for ECN echoes. The ACKs of the window that was
    /// in flight when the sender reduced still carry ECE (the receiver keeps it set until the
    /// packet with CWR arrives), the one acknowledging its last packet included: none of them
    /// may reduce again (the defect: `snd_una >= cwr_point` let that last one through; Linux
    /// waits until snd_una is past high_seq).
    #[test]
    fn an_echo_reduces_once_per_window_until_the_cwr_packet_is_acknowledged() {
        let law = cc::build("reno", &BTreeMap::new(), "cc").unwrap();
        let mut s = Sender::new(law, 10.0, f64::INFINITY, false, 0.1, 64)
            .with_ecn(crate::queue::Ecn::Ect0, cc::EcnUse::Classic);
        s.start(0);
        assert_eq!(seqs(&drain(&mut s, 0)), (0..10).collect::<Vec<_>>());
        let ack = |cum: u64, ece: bool| Ack {
            cum,
            sacked: cum - 1,
            echo_ps: 0,
            ece,
            ..Ack::default()
        };
        s.on_ack(RTT_PS, ack(1, true));
        assert_eq!(s.ssthresh_pkts(), 5.0);
        // The rest of the window, ECE still set: no second reduction, the last ACK included.
        for cum in 2..=10 {
            s.on_ack(RTT_PS, ack(cum, true));
        }
        assert_eq!(s.ssthresh_pkts(), 5.0);
        // The first new packet after the reduction carries CWR.
        let next = drain(&mut s, RTT_PS);
        assert!(next[0].cwr && next[0].seq == 10 && next.iter().skip(1).all(|g| !g.cwr));
        // A new echo once that packet is acknowledged: a new reduction.
        let before = s.cwnd_pkts();
        s.on_ack(2 * RTT_PS, ack(11, true));
        assert_eq!(s.ssthresh_pkts(), before / 2.0);
    }

    /// RFC 3168 §6.1.2: an ECN echo "should be treated just as a congestion loss", and "the
    /// sending TCP SHOULD NOT increase the congestion window in response to the receipt of an
    /// ECN-Echo ACK"; RFC 8257 §3.3 keeps RFC 3168's once-per-window response for DCTCP. As after
    /// a loss (no growth in fast recovery), the window stays at its reduced value until the
    /// window of data in flight at the reduction is acknowledged (Linux's CWR state,
    /// `tcp_cong_control`: no `cong_avoid` while `tcp_in_cwnd_reduction`; ns-3's CA_CWR). The
    /// defect: the sender grew by 1/cwnd per ACK through that window, about one packet per
    /// reduction, which for DCTCP, reducing about every other round trip, nearly doubled the
    /// growth between reductions and with it the marks needed to hold the queue. Prague, an L4S
    /// law, keeps growing (Linux's tcp_prague.c sets the window in its own `cong_control`).
    #[test]
    fn no_growth_until_the_reduced_window_is_acknowledged() {
        // A classic law reads the ACK's ECE, a scalable one its CE count: each ACK sets both.
        for (law, ecn) in [
            ("reno", cc::EcnUse::Classic),
            ("dctcp", cc::EcnUse::Scalable { l4s: false }),
        ] {
            let cc = cc::build(law, &BTreeMap::new(), "cc").unwrap();
            let mut s = Sender::new(cc, 10.0, f64::INFINITY, false, 0.1, 64)
                .with_ecn(crate::queue::Ecn::Ect0, ecn);
            s.start(0);
            assert_eq!(seqs(&drain(&mut s, 0)), (0..10).collect::<Vec<_>>());
            let ack = |cum: u64, marked: bool| Ack {
                cum,
                sacked: cum - 1,
                echo_ps: 0,
                ece: marked,
                ce_pkts: marked as u8,
                ..Ack::default()
            };
            // The first ACK echoes a mark: Reno halves, DCTCP (α = 1 at start) too.
            s.on_ack(RTT_PS, ack(1, true));
            assert_eq!(s.cwnd_pkts(), 5.0, "{law}: no growth on the echo itself");
            // The rest of the window, unmarked: no growth while it is acknowledged.
            for cum in 2..=10 {
                s.on_ack(RTT_PS, ack(cum, false));
                assert_eq!(
                    s.cwnd_pkts(),
                    5.0,
                    "{law}: grew in the reduced window at {cum}"
                );
            }
            // Past the window in flight at the reduction: congestion avoidance again.
            assert_eq!(seqs(&drain(&mut s, RTT_PS)), (10..15).collect::<Vec<_>>());
            s.on_ack(2 * RTT_PS, ack(11, false));
            assert!(
                (s.cwnd_pkts() - (5.0 + 1.0 / 5.0)).abs() < 1e-12,
                "{law}: {}",
                s.cwnd_pkts()
            );
        }
        let cc = cc::build("prague", &BTreeMap::new(), "cc").unwrap();
        let mut s = Sender::new(cc, 10.0, f64::INFINITY, false, 0.1, 64)
            .with_ecn(crate::queue::Ecn::Ect1, cc::EcnUse::Scalable { l4s: true });
        s.start(0);
        drain(&mut s, 0);
        let marked = Ack {
            cum: 1,
            sacked: 0,
            ce_pkts: 1,
            ..Ack::default()
        };
        s.on_ack(RTT_PS, marked);
        let reduced = s.ssthresh_pkts();
        s.on_ack(
            RTT_PS,
            Ack {
                cum: 2,
                sacked: 1,
                ..Ack::default()
            },
        );
        assert!(
            s.cwnd_pkts() > reduced,
            "prague grows in the reduced window"
        );
    }

    /// Linux's CWR state reduces the window by PRR as its Recovery state does
    /// (`tcp_enter_cwr` → `tcp_init_cwnd_reduction`, then `tcp_cwnd_reduction` per ACK, and
    /// cwnd = ssthresh when CWR ends): with `recovery = "prr"` an echo that halves a window of
    /// 10 sends one new packet per two ACKs while the pipe is above ssthresh (⌈delivered · 5/10⌉
    /// − out), then up to ssthresh (the conservative bound), where the immediate cut of RFC 3168 §6.1.2 is silent for five ACKs and then sends one per
    /// ACK. Both send 5 in all, and both end at ssthresh.
    #[test]
    fn with_prr_an_echo_spreads_the_reduction_over_the_round_trip() {
        for prr in [false, true] {
            let cc = cc::build("dctcp", &BTreeMap::new(), "cc").unwrap();
            let mut s = Sender::new(cc, 10.0, f64::INFINITY, false, 0.1, 64)
                .with_ecn(crate::queue::Ecn::Ect0, cc::EcnUse::Scalable { l4s: false });
            if prr {
                s = s.with_loss_recovery(LossRecovery::Prr);
            }
            s.start(0);
            drain(&mut s, 0);
            let sent: Vec<usize> = (1..=10u64)
                .map(|cum| {
                    s.on_ack(
                        RTT_PS,
                        Ack {
                            cum,
                            sacked: cum - 1,
                            ce_pkts: (cum == 1) as u8,
                            ..Ack::default()
                        },
                    );
                    drain(&mut s, RTT_PS).len()
                })
                .collect();
            let want = if prr {
                vec![1, 0, 1, 0, 1, 0, 1, 0, 0, 1]
            } else {
                vec![0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
            };
            assert_eq!(sent, want, "prr = {prr}");
            assert_eq!(s.ssthresh_pkts(), 5.0);
            // CWR ends once an ACK passes the window of the reduction: cwnd = ssthresh, then growth.
            s.on_ack(
                2 * RTT_PS,
                Ack {
                    cum: 11,
                    sacked: 10,
                    ..Ack::default()
                },
            );
            assert!(
                (s.cwnd_pkts() - 5.2).abs() < 1e-12,
                "prr = {prr}: {}",
                s.cwnd_pkts()
            );
        }
    }
}
