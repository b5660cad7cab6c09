//! The TCP sender of a persistent flow, counted in packets: slow start and the variant's
//! congestion-avoidance law per ACK, SACK loss recovery (RFC 6675) with one window reduction per
//! loss event, and the retransmission timer (RFC 6298).
//!
//! What the sender knows comes only from ACKs. Each ACK carries the receiver's cumulative ACK, the
//! sequence number of the packet that triggered it (an ideal SACK: the reverse path neither loses
//! nor reorders, so the sender learns every arrival), and that packet's send time (an ideal
//! timestamp echo, RFC 7323 §3, so every ACK is an RTT sample, retransmissions included).
//!
//! Loss detection (RFC 6675 §4 `IsLost`): a packet not SACKed is lost once `DUP_THRESH` packets
//! above it are SACKed, that is once it lies below the third-highest SACKed sequence number. That
//! number only grows, so losses are marked by one pointer moving forward: O(1) amortized work per
//! packet. A retransmission is presumed lost again once `DUP_THRESH` packets first sent after it
//! are SACKed (Linux's lost-retransmit detection; RFC 6675 alone would wait for the timer).
//!
//! Departures from the RFCs, on purpose:
//! - the minimum RTO is Linux's 200 ms, applied as Linux does, to the variance term:
//!   `RTO = SRTT + max(4·RTTVAR, 200 ms)`, rather than RFC 6298 (2.4)'s 1 s floor on the sum
//!   (per-packet RTT samples make RTTVAR tiny, so the RTO stays at least 200 ms above SRTT). In the
//!   single-flow closed-form tests `max(SRTT + 4·RTTVAR, 200 ms)` gives identical results: timeouts
//!   happen only in slow-start overshoots and with very small buffers;
//! - after a timeout the sender always slow-starts back to ssthresh (RFC 5681 §3.1), even for a
//!   flow configured without slow start;
//! - a timeout in a window that was already reduced (fast recovery, or a repeated timeout) keeps
//!   ssthresh (one reduction per loss event; RFC 5681 §3.1's note on repeated timeouts);
//! - in recovery, by default, the sender waits until the pipe falls below the reduced window, as
//!   RFC 6675 §5 says; Linux sends in proportion instead (PRR, RFC 9937), which a flow group's
//!   `recovery = "prr"` selects (`sender/prr.rs`).
//!
//! ECN (flows with `ecn`): new data is sent ECT (ECT(1) for an L4S law, RFC 9331; ECT(0)
//! otherwise), retransmissions Not-ECT (RFC 3168 §6.1.5) except for scalable laws, which Linux
//! sends all ECT (`INET_ECN_xmit` in tcp_dctcp.c). An ECN echo (a classic law: the ACK's ECE; a
//! scalable law: CE-marked packets counted in the ACK) reduces the window through the law's
//! `on_ecn` once per window of data and not during loss recovery (RFC 3168 §6.1.2), and the next
//! new packet carries CWR; a scalable law also sees every ACK's counts (RFC 8257 §3.3). As after
//! a loss, the reduced window does not grow until the window of data in flight at the reduction
//! is acknowledged (RFC 3168 §6.1.2: an echo is "treated just as a congestion loss" and cwnd is
//! not increased in response to it; RFC 8257 §3.3 keeps RFC 3168's response for DCTCP; Linux's
//! CWR state, in which `tcp_cong_control` calls no `cong_avoid`; ns-3's CA_CWR). An L4S law
//! (Prague) keeps growing there: Linux's tcp_prague.c sets the window in its own
//! `cong_control`, which ignores the CWR state.
//!
//! Model-based laws (BBR; [`CongestionControl::wants_rate_samples`]): the sender estimates the
//! delivery rate as draft-cheng-iccrg-delivery-rate-estimation §3 (Linux's tcp_rate.c) does:
//! each transmission is stamped with the flow's delivered count, the time of the latest delivery
//! and the send time of the first packet of the current sampling flight (in the sender's own
//! per-sequence ring beside the scoreboard, allocated only for such laws: the packets on the
//! wire carry nothing more); every ACK turns the newest packet it delivers into a
//! [`RateSample`], delivered packets over the longer of the send and ACK intervals (invalid if
//! shorter than the min RTT), and the law sets the window from it on every ACK, recovery
//! included. A dynamic flow out of data marks its flight application-limited (tcp_rate.c
//! `tcp_rate_check_app_limited`), as BBR's probe-RTT does.
//!
//! This file holds the sender's state, ACK processing and sending; `sender/rtt.rs` the RTT
//! estimate and RTO, `sender/recovery.rs` loss detection and the timeout, `sender/ecn.rs` the
//! answer to ECN echoes, `sender/rate.rs` the delivery-rate estimator, `sender/hystart.rs` the
//! end of slow start on a rising RTT (`hystart`), `sender/rack.rs` RACK-TLP loss detection
//! (`loss_detection = "rack-tlp"`, in place of the threshold above), `sender/options.rs` the
//! options a flow group sets (`with_*`).
//!
//! [`RateSample`]: crate::cc::RateSample

mod ecn;
mod hystart;
mod options;
mod prr;
mod rack;
mod rate;
mod recovery;
mod rtt;

use super::event::{s_from_ps, SimTime};
use crate::cc::{self, CcContext, CongestionControl};
use crate::queue::Ecn;
use crate::scenario::{Hystart, LossRecovery};
use hystart::SlowStartExit;
use prr::Prr;
use rack::{Probe, Rack};
pub use rate::TX_STAMP_BYTES;
use rate::{RateState, TxStamp};
use std::collections::VecDeque;

/// RFC 6675 §2 DupThresh (RFC 5681 §3.2): SACKed packets above a hole that declare it lost.
pub const DUP_THRESH: u64 = 3;
/// RFC 6298 §2.1: RTO before the first RTT sample.
pub const RTO_INITIAL_PS: SimTime = 1_000_000_000_000;
/// Linux TCP_RTO_MIN (200 ms), used as the floor of the variance term (see the module doc).
pub const RTO_MIN_VAR_PS: SimTime = 200_000_000_000;
/// RFC 6298 §2.5: an upper bound on the RTO of at least 60 s.
pub const RTO_MAX_PS: SimTime = 60_000_000_000_000;
/// RFC 5681 §3.1 eq. (4): ssthresh after a loss is at least 2 segments.
pub const MIN_SSTHRESH_PKTS: f64 = 2.0;

/// What the receiver sends back for every data packet.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Ack {
    /// Cumulative ACK: every packet below this has arrived.
    pub cum: u64,
    /// The packet that triggered this ACK (ideal SACK).
    pub sacked: u64,
    /// The send time of the earliest packet this ACK acknowledges (the timestamp echo, RFC 7323
    /// §4.3: with delayed ACKs it includes the receiver's wait, as the RTO should).
    pub echo_ps: SimTime,
    /// The send time of the packet that triggered it, the newest it acknowledges (0: unknown, take
    /// `echo_ps`): congestion control's RTT sample, as Linux's `ca_rtt_us` (tcp_clean_rtx_queue
    /// measures from the most recently sent packet ACKed), without the delayed-ACK wait.
    pub newest_sent_ps: SimTime,
    /// XCP: the feedback of the packet's congestion header, echoed (packets of window).
    pub feedback_pkts: f32,
    /// ECN-Echo (RFC 3168 §6.1.3: set from a CE arrival until the sender's CWR).
    pub ece: bool,
    /// The CE-marked data packets this ACK newly acknowledges (RFC 8257 §3.2's per-packet
    /// feedback, as a count).
    pub ce_pkts: u8,
}

/// A packet the sender puts on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub retransmission: bool,
    /// Its ECN codepoint, and TCP's CWR flag.
    pub ecn: Ecn,
    pub cwr: bool,
}

/// Loss-recovery state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    Open,
    /// SACK fast recovery until the cumulative ACK reaches `point` (RFC 6675 RecoveryPoint + 1).
    Fast {
        point: u64,
    },
    /// Retransmission after a timeout (slow start allowed) until the ACK reaches `point`.
    Timeout {
        point: u64,
    },
}

// Scoreboard states of an outstanding packet (in [snd_una, snd_nxt)).
const IN_FLIGHT: u8 = 0;
const SACKED: u8 = 1;
/// Presumed lost and not retransmitted since: not in the pipe.
const LOST: u8 = 2;
/// Retransmitted after being presumed lost: in the pipe again.
const RETX: u8 = 3;

/// A sender's memory that a new connection in its place reuses.
struct Buffers {
    board: Vec<u8>,
    retx_fifo: VecDeque<(u64, u64)>,
    stamps: Vec<TxStamp>,
    sent_ps: Vec<SimTime>,
}

/// Counters since the flow started.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SenderStats {
    /// Transmissions, retransmissions included.
    pub sent_pkts: u64,
    pub retransmitted_pkts: u64,
    pub fast_recoveries: u64,
    pub timeouts: u64,
    /// Timeouts undone as spurious (`undo`).
    pub spurious_timeouts: u64,
    /// Tail loss probes sent (`loss_detection = "rack-tlp"`).
    pub loss_probes: u64,
    /// Window reductions (calls to the law's `on_loss` or `on_ecn`), and of them those for an
    /// ECN echo.
    pub reductions: u64,
    pub ecn_reductions: u64,
    /// ∫ cwnd dt, in packet·seconds.
    pub cwnd_integral_pkt_s: f64,
}

#[derive(Debug)]
pub struct Sender {
    cc: Box<dyn CongestionControl>,
    cwnd_pkts: f64,
    ssthresh_pkts: f64,
    rwnd_pkts: f64,
    /// Appropriate byte counting (RFC 3465 §2.2): an ACK grows the window for at most this many
    /// newly acknowledged packets: 1 with an ACK per packet, the delayed-ACK count otherwise.
    abc_limit: f64,
    /// Oldest unacknowledged packet, and the next new one.
    snd_una: u64,
    snd_nxt: u64,
    /// RFC 6675 `pipe`: packets presumed in the network, kept up to date incrementally.
    pipe_pkts: u64,
    /// One state byte per outstanding packet, indexed by `seq & mask`.
    board: Vec<u8>,
    mask: u64,
    /// The three highest packets ever SACKed, plus one (0 = none), highest first.
    top_sacked: [u64; 3],
    /// Packets SACKed above `snd_una` (Linux's `sacked_out`).
    sacked_out: u64,
    /// RACK-TLP loss detection, when on (`sender/rack.rs`); else the threshold above.
    rack: Rack,
    /// Every packet below this has been checked against `IsLost` (or marked lost by a timeout).
    lost_scan: u64,
    /// No packet below this (and above `snd_una`) waits for a retransmission.
    retx_next: u64,
    /// Retransmissions in flight, oldest first: (seq, snd_nxt when it was sent).
    retx_fifo: VecDeque<(u64, u64)>,
    recovery: Recovery,
    /// RFC 6675 §5 (4.3): on entering recovery, retransmit the first lost packet whatever the pipe.
    force_retx: bool,
    /// How fast recovery sends ([`LossRecovery`]), and PRR's state in the episode under way.
    loss_recovery: LossRecovery,
    prr: Prr,
    /// The detector that may end slow start early (`hystart`), and whether the sender paces.
    ss_exit: SlowStartExit,
    paced: bool,
    /// Whether a spurious timeout is undone (`undo`), and what undoing the one under way restores.
    undo: bool,
    undo_state: Option<recovery::Undo>,
    srtt_ps: f64,
    rttvar_ps: f64,
    has_rtt: bool,
    /// RTO from the RTT estimate, before backoff.
    rto_base_ps: SimTime,
    /// Consecutive timeouts (each doubles the RTO, RFC 6298 (5.5)); cleared by new data ACKed.
    backoff: u32,
    /// When the retransmission timer expires; `None` = not running.
    rto_deadline_ps: Option<SimTime>,
    latest_rtt_s: f64,
    /// The echoed XCP feedback of the ACK being processed.
    feedback_pkts: f64,
    last_integrated_ps: SimTime,
    started: bool,
    stats: SenderStats,
    /// The flow's size: no new packet at or above this sequence number (a dynamic flow's size;
    /// `u64::MAX` for a persistent flow).
    limit_pkts: u64,
    /// Whether the law is model-based (rate samples, it sets the window; see the module doc).
    model: bool,
    /// Per outstanding transmission, its delivery-rate stamps, indexed as `board` (empty unless
    /// `model`).
    stamps: Vec<TxStamp>,
    rate: RateState,
    /// ECN: the codepoint of new data (Not-ECT: off), whether the law counts marks, `snd_nxt`
    /// at the last ECN reduction (no other until the ACKs pass it: those up to it were sent
    /// before the receiver saw CWR and may still echo ECE; Linux's `high_seq`), and whether the
    /// next new packet carries CWR.
    ect: Ecn,
    scalable: bool,
    /// Whether the window holds (no growth) until the window reduced for an echo is
    /// acknowledged: every law but an L4S one (see the module doc).
    hold_after_echo: bool,
    cwr_point: Option<u64>,
    cwr_pending: bool,
    /// The window reduced for an ECN echo is reached by PRR (`recovery = "prr"`, as Linux's CWR
    /// state: `tcp_init_cwnd_reduction`, `tcp_cwnd_reduction`) and `prr` holds its episode.
    ecn_prr: bool,
}

impl Sender {
    /// `window_hint_pkts` sizes the scoreboard (it grows if the window outgrows it).
    pub fn new(
        cc: Box<dyn CongestionControl>,
        initial_window_pkts: f64,
        rwnd_pkts: f64,
        slow_start: bool,
        base_rtt_s: f64,
        window_hint_pkts: usize,
    ) -> Self {
        let cap = window_hint_pkts.max(64).next_power_of_two();
        let board = vec![IN_FLIGHT; cap];
        let retx_fifo = VecDeque::with_capacity(64);
        Self::with_buffers(
            cc,
            initial_window_pkts,
            rwnd_pkts,
            slow_start,
            base_rtt_s,
            Buffers {
                board,
                retx_fifo,
                stamps: Vec::new(),
                sent_ps: Vec::new(),
            },
        )
    }

    /// [`Sender::new`] on a scoreboard (a power of two long, every state `IN_FLIGHT`),
    /// retransmission FIFO (empty) and stamp ring (resized as the law needs) of the caller's.
    fn with_buffers(
        cc: Box<dyn CongestionControl>,
        initial_window_pkts: f64,
        rwnd_pkts: f64,
        slow_start: bool,
        base_rtt_s: f64,
        buffers: Buffers,
    ) -> Self {
        let Buffers {
            board,
            retx_fifo,
            mut stamps,
            sent_ps,
        } = buffers;
        let cap = board.len();
        let model = cc.wants_rate_samples();
        if model {
            stamps.resize(cap, TxStamp::default());
        } else {
            stamps = Vec::new();
        }
        Sender {
            cc,
            cwnd_pkts: initial_window_pkts.min(rwnd_pkts).max(1.0),
            // Without slow start the flow is in congestion avoidance from the first ACK.
            ssthresh_pkts: cc::initial_ssthresh(slow_start, rwnd_pkts),
            rwnd_pkts,
            abc_limit: 1.0,
            snd_una: 0,
            snd_nxt: 0,
            pipe_pkts: 0,
            board,
            mask: cap as u64 - 1,
            top_sacked: [0; 3],
            sacked_out: 0,
            rack: Rack::fresh(false, sent_ps),
            lost_scan: 0,
            retx_next: 0,
            retx_fifo,
            recovery: Recovery::Open,
            force_retx: false,
            loss_recovery: LossRecovery::Rfc6675,
            prr: Prr::default(),
            ss_exit: SlowStartExit::new(Hystart::Off),
            paced: false,
            undo: false,
            undo_state: None,
            srtt_ps: 0.0,
            rttvar_ps: 0.0,
            has_rtt: false,
            rto_base_ps: RTO_INITIAL_PS,
            backoff: 0,
            rto_deadline_ps: None,
            latest_rtt_s: base_rtt_s,
            feedback_pkts: 0.0,
            last_integrated_ps: 0,
            started: false,
            stats: SenderStats::default(),
            limit_pkts: u64::MAX,
            model,
            stamps,
            rate: RateState {
                min_rtt_ps: SimTime::MAX,
                ..RateState::default()
            },
            ect: Ecn::NotEct,
            scalable: false,
            hold_after_echo: true,
            cwr_point: None,
            cwr_pending: false,
            ecn_prr: false,
        }
    }

    /// A new connection in this sender's place (a dynamic flow taking a pool slot): the state
    /// of [`Sender::new`] with law `cc`, sending `size_pkts` packets; the scoreboard's memory is
    /// kept, and so are the counters ([`SenderStats`] add up over the slot's flows).
    pub fn reset(
        &mut self,
        cc: Box<dyn CongestionControl>,
        initial_window_pkts: f64,
        slow_start: bool,
        base_rtt_s: f64,
        size_pkts: u64,
    ) {
        self.board.fill(IN_FLIGHT);
        self.retx_fifo.clear();
        let buffers = Buffers {
            board: std::mem::take(&mut self.board),
            retx_fifo: std::mem::take(&mut self.retx_fifo),
            stamps: std::mem::take(&mut self.stamps),
            sent_ps: std::mem::take(&mut self.rack.sent_ps),
        };
        let rack_on = self.rack.on;
        let (stats, abc_limit, ect, scalable, loss_recovery, hold_after_echo, paced, undo) = (
            self.stats,
            self.abc_limit,
            self.ect,
            self.scalable,
            self.loss_recovery,
            self.hold_after_echo,
            self.paced,
            self.undo,
        );
        let ss_exit = SlowStartExit::new(self.ss_exit.kind());
        *self = Sender {
            stats,
            abc_limit,
            ect,
            scalable,
            loss_recovery,
            hold_after_echo,
            ss_exit,
            paced,
            undo,
            limit_pkts: size_pkts,
            ..Self::with_buffers(
                cc,
                initial_window_pkts,
                self.rwnd_pkts,
                slow_start,
                base_rtt_s,
                buffers,
            )
        };
        self.rack.on = rack_on;
        self.size_rack_buffer();
    }

    /// The connection ends (its last packet is acknowledged): its window stops counting in
    /// ∫cwnd dt.
    pub fn stop(&mut self, now_ps: SimTime) {
        self.integrate(now_ps);
        self.started = false;
    }

    pub fn cwnd_pkts(&self) -> f64 {
        self.cwnd_pkts
    }

    /// The usable window: cwnd, capped by the receive window.
    pub fn window_pkts(&self) -> f64 {
        self.cwnd_pkts.min(self.rwnd_pkts)
    }

    /// The smoothed RTT in seconds, or the base RTT before the first sample.
    pub fn srtt_s(&self) -> f64 {
        if self.has_rtt {
            self.srtt_ps * 1e-12
        } else {
            self.latest_rtt_s
        }
    }

    pub fn ssthresh_pkts(&self) -> f64 {
        self.ssthresh_pkts
    }

    /// The counters so far, without bringing ∫cwnd dt up to date ([`Sender::stats`] does).
    pub fn counters(&self) -> SenderStats {
        self.stats
    }

    pub fn pipe_pkts(&self) -> u64 {
        self.pipe_pkts
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    pub fn recovery(&self) -> Recovery {
        self.recovery
    }

    /// The law's pacing rate, if it sets one (packets per second).
    pub fn law_pacing_rate_pps(&self) -> Option<f64> {
        self.cc.pacing_rate_pps()
    }

    /// The packets the law's pacing sends back to back (one TSO/GSO send).
    pub fn law_send_quantum_pkts(&self) -> u32 {
        self.cc.send_quantum_pkts()
    }

    /// The law (for tests and reports that read its state).
    pub fn law(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// Packets delivered since the start, as the delivery-rate estimator counts them (model-based
    /// laws only; 0 otherwise).
    pub fn delivered_pkts(&self) -> u64 {
        self.rate.delivered
    }

    pub fn rto_deadline_ps(&self) -> Option<SimTime> {
        self.rto_deadline_ps
    }

    pub fn is_started(&self) -> bool {
        self.started
    }

    /// Counters, with ∫cwnd brought up to `now_ps`.
    pub fn stats(&mut self, now_ps: SimTime) -> SenderStats {
        self.integrate(now_ps);
        self.stats
    }

    pub fn start(&mut self, now_ps: SimTime) {
        self.started = true;
        self.last_integrated_ps = now_ps;
    }

    fn state(&self, seq: u64) -> u8 {
        self.board[(seq & self.mask) as usize]
    }

    fn set_state(&mut self, seq: u64, s: u8) {
        self.board[(seq & self.mask) as usize] = s;
    }

    fn ctx(&self, now_ps: SimTime) -> CcContext {
        CcContext {
            now_s: s_from_ps(now_ps),
            rtt_s: self.latest_rtt_s,
            feedback_pkts: self.feedback_pkts,
        }
    }

    /// Adds cwnd × elapsed time to ∫cwnd dt; called before every change of cwnd.
    fn integrate(&mut self, now_ps: SimTime) {
        if self.started && now_ps > self.last_integrated_ps {
            self.stats.cwnd_integral_pkt_s +=
                self.cwnd_pkts * s_from_ps(now_ps - self.last_integrated_ps);
        }
        self.last_integrated_ps = self.last_integrated_ps.max(now_ps);
    }

    /// Processes one ACK.
    #[inline(always)]
    pub fn on_ack(&mut self, now_ps: SimTime, ack: Ack) {
        self.integrate(now_ps);
        self.on_rtt_sample(now_ps.saturating_sub(ack.echo_ps));
        // Congestion control's sample (the law's, HyStart's, RACK's and the delivery-rate
        // estimator's): from the newest packet acknowledged, without a delayed ACK's wait (Linux's
        // ca_rtt_us); the RTO's above is from the earliest (RFC 7323 §4.3).
        let newest_sent_ps = ack.echo_ps.max(ack.newest_sent_ps);
        let rtt_ps = now_ps.saturating_sub(newest_sent_ps);
        self.latest_rtt_s = s_from_ps(rtt_ps);
        self.feedback_pkts = ack.feedback_pkts as f64;
        let prior_inflight = self.pipe_pkts;
        if self.model {
            self.rate.min_rtt_ps = self.rate.min_rtt_ps.min(rtt_ps);
        }
        // RACK-TLP: the packet this ACK is for, and whether it was a retransmission; whether
        // it answers a probe.
        let (rack_seq, probe_repairs) = if self.rack.on {
            let seen = (ack.sacked >= self.snd_una && ack.sacked < self.snd_nxt)
                .then(|| (ack.sacked, self.retransmitted(ack.sacked)));
            (seen, self.probe_repairs(ack.echo_ps))
        } else {
            (None, None)
        };

        // The SACK: the packet that triggered this ACK has arrived.
        let mut delivered = 0u64;
        if ack.sacked >= self.snd_una && ack.sacked < self.snd_nxt {
            let st = self.state(ack.sacked);
            if st != SACKED {
                delivered += 1;
                if st == IN_FLIGHT || st == RETX {
                    self.pipe_pkts -= 1;
                }
                self.set_state(ack.sacked, SACKED);
                self.sacked_out += 1;
                self.note_sacked(ack.sacked);
                if self.model {
                    self.rate_delivered(ack.sacked, now_ps);
                }
            }
        }

        // The cumulative ACK.
        let advanced = ack.cum > self.snd_una;
        let newly_acked = ack.cum.saturating_sub(self.snd_una) as f64;
        if advanced {
            for s in self.snd_una..ack.cum {
                let st = self.state(s);
                if st == IN_FLIGHT || st == RETX {
                    self.pipe_pkts -= 1;
                }
                if st != SACKED {
                    delivered += 1;
                    if self.model {
                        self.rate_delivered(s, now_ps);
                    }
                } else {
                    self.sacked_out -= 1;
                }
                self.set_state(s, IN_FLIGHT);
            }
            self.snd_una = ack.cum;
            self.backoff = 0;
            // RFC 6298 (5.2), (5.3): stop the timer if all is acknowledged, else restart it.
            self.rto_deadline_ps = if self.snd_una == self.snd_nxt {
                None
            } else {
                Some(now_ps + self.rto_ps())
            };
        }

        // RFC 6675 §5: recovery ends when the cumulative ACK covers RecoveryPoint.
        match self.recovery {
            Recovery::Fast { point } if self.snd_una >= point => {
                self.recovery = Recovery::Open;
                if self.loss_recovery == LossRecovery::Prr {
                    // RFC 9937: at the end of recovery, cwnd = ssthresh.
                    self.cwnd_pkts = self.ssthresh_pkts.min(self.rwnd_pkts);
                }
            }
            Recovery::Timeout { point } => {
                if advanced {
                    self.judge_timeout(ack.echo_ps);
                }
                if self.recovery != Recovery::Open && self.snd_una >= point {
                    self.recovery = Recovery::Open;
                }
            }
            _ => {}
        }
        if self.ecn_prr && !self.in_ecn_reduction() {
            // Linux's `tcp_end_cwnd_reduction`: CWR ends with cwnd = ssthresh.
            self.ecn_prr = false;
            self.cwnd_pkts = self.ssthresh_pkts.min(self.rwnd_pkts);
        }

        let (newly_lost, lost_again) = if self.rack.on {
            if let Some((seq, retransmitted)) = rack_seq.filter(|_| delivered > 0) {
                self.rack_delivered(seq, retransmitted, newest_sent_ps, now_ps);
            }
            self.rack_detect(now_ps)
        } else {
            (self.mark_losses(), self.mark_lost_retransmissions())
        };
        if newly_lost > 0 && self.recovery == Recovery::Open {
            self.enter_recovery(now_ps);
        }
        if self.rack.on {
            self.end_probe_episode(probe_repairs, now_ps);
            // §7.2: an ACK that advances re-arms the probe timeout, at the burst's end.
            self.rack.sent_new |= advanced;
        }

        let safe = advanced && newly_lost + lost_again == 0;
        if self.ect != Ecn::NotEct {
            self.on_ecn_echo(now_ps, &ack, delivered);
        }

        if self.loss_recovery == LossRecovery::Prr && !self.model && self.prr_reducing() {
            let pipe = self.pipe_pkts as f64;
            if let Some(w) = self
                .prr
                .on_ack(delivered as f64, pipe, self.ssthresh_pkts, safe)
            {
                self.cwnd_pkts = w.min(self.rwnd_pkts);
            }
        }

        if self.model {
            // A model-based law sets the window on every ACK, in recovery too.
            return self.model_update(now_ps, prior_inflight, newly_lost + lost_again);
        }
        // Growth: per new cumulative ACK, not during fast recovery (RFC 6675 keeps cwnd there)
        // nor while the window reduced for an ECN echo is acknowledged (see the module doc).
        let reducing = match self.recovery {
            Recovery::Fast { .. } => true,
            Recovery::Open => self.hold_after_echo && self.in_ecn_reduction(),
            Recovery::Timeout { .. } => false,
        };
        if advanced && !reducing {
            // RFC 5681 §3.1 eq. (2), with RFC 3465's byte counting: one packet per packet
            // acknowledged, at most L per ACK; the law above ssthresh. HyStart may slow or end
            // slow start first.
            let (acked, limit) = self.slow_start_count(now_ps, rtt_ps, newly_acked);
            let ctx = self.ctx(now_ps);
            self.cwnd_pkts = cc::grow_window(
                self.cc.as_mut(),
                &ctx,
                self.cwnd_pkts,
                self.ssthresh_pkts,
                acked,
                limit,
                self.rwnd_pkts,
            );
        }
    }

    /// The next packet to send now, if the window allows one (RFC 6675 §5 NextSeg rules 1 and 2:
    /// lost packets first, lowest first; then new data within the receive window).
    pub fn next_segment(&mut self, now_ps: SimTime) -> Option<Segment> {
        if !self.started {
            return None;
        }
        if self.rack.probe != Probe::None {
            if let Some(seg) = self.send_probe(now_ps) {
                return Some(seg);
            }
        }
        // pipe < ⌊cwnd⌋ (a window is never negative): a cast, where `floor` is a libm call.
        let window_open = self.pipe_pkts < self.cwnd_pkts as u64;
        if !window_open && !self.force_retx {
            return None;
        }
        let end = self.lost_scan.min(self.snd_nxt);
        let mut s = self.retx_next.max(self.snd_una);
        while s < end && self.state(s) != LOST {
            s += 1;
        }
        self.retx_next = s;
        if s < end {
            if self.model {
                self.stamp_sent(s, now_ps);
            }
            if self.rack.on {
                self.rack_sent(s, now_ps);
            }
            self.set_state(s, RETX);
            self.pipe_pkts += 1;
            self.retx_fifo.push_back((s, self.snd_nxt));
            self.retx_next = s + 1;
            self.stats.sent_pkts += 1;
            self.stats.retransmitted_pkts += 1;
            self.count_prr_out();
            if std::mem::take(&mut self.force_retx) {
                // RFC 6675 §5 (4.3): restart the timer with the first retransmission.
                self.rto_deadline_ps = Some(now_ps + self.rto_ps());
            } else if self.rto_deadline_ps.is_none() {
                self.rto_deadline_ps = Some(now_ps + self.rto_ps());
            }
            return Some(Segment {
                seq: s,
                retransmission: true,
                ecn: if self.scalable { self.ect } else { Ecn::NotEct },
                cwr: false,
            });
        }
        self.force_retx = false;
        if !window_open
            || (self.snd_nxt - self.snd_una) as f64 >= self.rwnd_pkts
            || self.snd_nxt >= self.limit_pkts
        {
            if self.model && window_open && self.snd_nxt >= self.limit_pkts {
                // Out of data with the window open: the flight is application-limited
                // (tcp_rate_check_app_limited).
                self.rate.app_limited = (self.rate.delivered + self.pipe_pkts).max(1);
            }
            return None;
        }
        if self.rack.on {
            self.rack.sent_new = true;
        }
        Some(self.send_new(now_ps))
    }

    /// The next new packet leaves now.
    #[inline(always)]
    pub(super) fn send_new(&mut self, now_ps: SimTime) -> Segment {
        if self.snd_nxt - self.snd_una > self.mask {
            self.grow();
        }
        let seq = self.snd_nxt;
        if self.model {
            self.stamp_sent(seq, now_ps);
        }
        if self.rack.on {
            self.rack_sent(seq, now_ps);
        }
        self.set_state(seq, IN_FLIGHT);
        self.snd_nxt += 1;
        self.pipe_pkts += 1;
        self.stats.sent_pkts += 1;
        self.count_prr_out();
        // RFC 6298 (5.1): start the timer if it is not running.
        if self.rto_deadline_ps.is_none() {
            self.rto_deadline_ps = Some(now_ps + self.rto_ps());
        }
        Segment {
            seq,
            retransmission: false,
            ecn: self.ect,
            cwr: std::mem::take(&mut self.cwr_pending),
        }
    }

    /// PRR's prr_out: a packet sent during fast recovery or an ECN reduction by PRR.
    fn count_prr_out(&mut self) {
        if self.loss_recovery == LossRecovery::Prr && self.prr_reducing() {
            self.prr.sent();
        }
    }

    /// A PRR episode is under way: fast recovery, or an ECN reduction (Linux's
    /// `tcp_in_cwnd_reduction`: the Recovery or CWR state).
    fn prr_reducing(&self) -> bool {
        matches!(self.recovery, Recovery::Fast { .. }) || self.ecn_prr
    }
}
