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
//! - no pacing, no delayed ACK, no PRR (RFC 6937): in recovery the sender waits until the pipe
//!   falls below the halved window, as RFC 6675 §5 says.
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

use super::event::{s_from_ps, SimTime};
use crate::cc::{self, CcContext, CongestionControl, RateSample, RecoveryState};
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ack {
    /// Cumulative ACK: every packet below this has arrived.
    pub cum: u64,
    /// The packet that triggered this ACK (ideal SACK).
    pub sacked: u64,
    /// That packet's send time (ideal timestamp echo).
    pub echo_ps: SimTime,
    /// XCP: the feedback of the packet's congestion header, echoed (packets of window).
    pub feedback_pkts: f32,
}

/// A packet the sender puts on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub retransmission: bool,
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

/// Bytes of a transmission's delivery-rate stamps (for memory estimates).
pub const TX_STAMP_BYTES: usize = std::mem::size_of::<TxStamp>();

/// A transmission's delivery-rate stamps (draft-cheng-iccrg-delivery-rate-estimation §3.2:
/// `P.delivered`, `P.delivered_time`, `P.first_sent_time`, `P.is_app_limited`, and its send time).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct TxStamp {
    delivered: u64,
    delivered_ps: SimTime,
    first_sent_ps: SimTime,
    sent_ps: SimTime,
    app_limited: bool,
}

/// The delivery-rate estimator's connection state (the draft's `C.*`) and this ACK's sample
/// under construction.
#[derive(Debug, Clone, Copy, Default)]
struct RateState {
    /// Packets delivered since the start (SACKed or cumulatively ACKed for the first time).
    delivered: u64,
    /// When the latest of them was delivered.
    delivered_ps: SimTime,
    /// Send time of the first packet of the current sampling flight.
    first_sent_ps: SimTime,
    /// Non-zero: the flight is application-limited until `delivered` passes this.
    app_limited: u64,
    /// The smallest RTT seen (samples shorter than it are invalid).
    min_rtt_ps: SimTime,
    // This ACK's sample: the newest packet it delivers.
    has_sample: bool,
    prior_delivered: u64,
    prior_ps: SimTime,
    prior_sent_ps: SimTime,
    send_elapsed_ps: SimTime,
    sample_app_limited: bool,
    acked: u64,
}

/// A sender's memory that a new connection in its place reuses.
struct Buffers {
    board: Vec<u8>,
    retx_fifo: VecDeque<(u64, u64)>,
    stamps: Vec<TxStamp>,
}

/// Counters since the flow started.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SenderStats {
    /// Transmissions, retransmissions included.
    pub sent_pkts: u64,
    pub retransmitted_pkts: u64,
    pub fast_recoveries: u64,
    pub timeouts: u64,
    /// Window reductions (calls to the law's `on_loss`).
    pub reductions: u64,
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
    /// Every packet below this has been checked against `IsLost` (or marked lost by a timeout).
    lost_scan: u64,
    /// No packet below this (and above `snd_una`) waits for a retransmission.
    retx_next: u64,
    /// Retransmissions in flight, oldest first: (seq, snd_nxt when it was sent).
    retx_fifo: VecDeque<(u64, u64)>,
    recovery: Recovery,
    /// RFC 6675 §5 (4.3): on entering recovery, retransmit the first lost packet whatever the pipe.
    force_retx: bool,
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
            lost_scan: 0,
            retx_next: 0,
            retx_fifo,
            recovery: Recovery::Open,
            force_retx: false,
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
        };
        let (stats, abc_limit) = (self.stats, self.abc_limit);
        *self = Sender {
            stats,
            abc_limit,
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
    }

    /// The connection ends (its last packet is acknowledged): its window stops counting in
    /// ∫cwnd dt.
    pub fn stop(&mut self, now_ps: SimTime) {
        self.integrate(now_ps);
        self.started = false;
    }

    /// The receiver ACKs every `n` packets: each ACK may count for up to `n` (RFC 3465 L).
    pub fn with_abc_limit(mut self, n: u32) -> Self {
        self.abc_limit = n.max(1) as f64;
        self
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

    /// The current RTO, backoff included.
    pub fn rto_ps(&self) -> SimTime {
        (self.rto_base_ps << self.backoff.min(20)).min(RTO_MAX_PS)
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

    /// RFC 6298 §2.2–2.3 with α = 1/8, β = 1/4, and the RTO floor described in the module doc.
    fn on_rtt_sample(&mut self, rtt_ps: SimTime) {
        let r = rtt_ps as f64;
        if self.has_rtt {
            self.rttvar_ps = 0.75 * self.rttvar_ps + 0.25 * (self.srtt_ps - r).abs();
            self.srtt_ps = 0.875 * self.srtt_ps + 0.125 * r;
        } else {
            self.srtt_ps = r;
            self.rttvar_ps = r / 2.0;
            self.has_rtt = true;
        }
        let var = (4.0 * self.rttvar_ps).max(RTO_MIN_VAR_PS as f64);
        self.rto_base_ps = ((self.srtt_ps + var) as SimTime).min(RTO_MAX_PS);
        self.latest_rtt_s = s_from_ps(rtt_ps);
    }

    /// Records that `seq` has been SACKed, keeping the three highest.
    fn note_sacked(&mut self, seq: u64) {
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
    fn mark_losses(&mut self) -> u64 {
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
    fn mark_lost_retransmissions(&mut self) -> u64 {
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

    /// Stamps a transmission of `seq` (draft-cheng §3.2 "Transmitting a data packet"; Linux
    /// tcp_rate_skb_sent): a flight that starts from nothing outstanding starts a new interval.
    #[inline]
    fn stamp_sent(&mut self, seq: u64, now_ps: SimTime) {
        if self.snd_una == self.snd_nxt {
            self.rate.first_sent_ps = now_ps;
            self.rate.delivered_ps = now_ps;
        }
        let r = &self.rate;
        self.stamps[(seq & self.mask) as usize] = TxStamp {
            delivered: r.delivered,
            delivered_ps: r.delivered_ps,
            first_sent_ps: r.first_sent_ps,
            sent_ps: now_ps,
            app_limited: r.app_limited != 0,
        };
    }

    /// `seq` is delivered for the first time (draft-cheng §3.3 "Upon receiving ACK"; Linux
    /// tcp_rate_skb_delivered): counted, and taken as this ACK's sample if it was sent last.
    #[inline]
    fn rate_delivered(&mut self, seq: u64, now_ps: SimTime) {
        let p = self.stamps[(seq & self.mask) as usize];
        let r = &mut self.rate;
        r.delivered += 1;
        r.delivered_ps = now_ps;
        r.acked += 1;
        if !r.has_sample || p.sent_ps >= r.prior_sent_ps {
            r.has_sample = true;
            r.prior_delivered = p.delivered;
            r.prior_ps = p.delivered_ps;
            r.prior_sent_ps = p.sent_ps;
            r.sample_app_limited = p.app_limited;
            r.send_elapsed_ps = p.sent_ps.saturating_sub(p.first_sent_ps);
            // The next sampling flight starts at this packet's send time.
            r.first_sent_ps = p.sent_ps;
        }
    }

    /// This ACK's rate sample (draft-cheng §3.3; Linux tcp_rate_gen), then the law's window. Out
    /// of line and marked cold so the loss-based laws' ACK path is laid out as before it existed.
    #[cold]
    #[inline(never)]
    fn model_update(&mut self, now_ps: SimTime, prior_inflight: u64, lost: u64) {
        let r = &mut self.rate;
        if r.app_limited != 0 && r.delivered > r.app_limited {
            r.app_limited = 0;
        }
        let mut rs = RateSample {
            rtt_s: self.latest_rtt_s,
            is_app_limited: r.sample_app_limited,
            acked_pkts: r.acked as f64,
            lost_pkts: lost as f64,
            prior_inflight_pkts: prior_inflight as f64,
            inflight_pkts: self.pipe_pkts as f64,
            prior_delivered: r.prior_delivered,
            delivered: r.delivered,
            recovery: match self.recovery {
                Recovery::Open => RecoveryState::Open,
                Recovery::Fast { .. } => RecoveryState::Fast,
                Recovery::Timeout { .. } => RecoveryState::Timeout,
            },
            ..RateSample::default()
        };
        if r.has_sample {
            let ack_elapsed = now_ps.saturating_sub(r.prior_ps);
            let interval = r.send_elapsed_ps.max(ack_elapsed);
            // tcp_rate_gen: an interval shorter than the min RTT is not a valid sample.
            if interval >= r.min_rtt_ps && interval > 0 {
                rs.delivered_pkts = (r.delivered - r.prior_delivered) as f64;
                rs.interval_s = s_from_ps(interval);
            }
        }
        r.has_sample = false;
        r.acked = 0;
        let ctx = self.ctx(now_ps);
        let w = self.cc.on_rate_sample(&ctx, &rs, self.cwnd_pkts);
        self.cwnd_pkts = w.clamp(1.0, self.rwnd_pkts);
        if self.cc.marks_app_limited() {
            self.rate.app_limited = (self.rate.delivered + self.pipe_pkts).max(1);
        }
    }

    /// Processes one ACK.
    #[inline(always)]
    pub fn on_ack(&mut self, now_ps: SimTime, ack: Ack) {
        self.integrate(now_ps);
        let rtt_ps = now_ps.saturating_sub(ack.echo_ps);
        self.on_rtt_sample(rtt_ps);
        self.feedback_pkts = ack.feedback_pkts as f64;
        let prior_inflight = self.pipe_pkts;
        if self.model {
            self.rate.min_rtt_ps = self.rate.min_rtt_ps.min(rtt_ps);
        }

        // The SACK: the packet that triggered this ACK has arrived.
        if ack.sacked >= self.snd_una && ack.sacked < self.snd_nxt {
            let st = self.state(ack.sacked);
            if st != SACKED {
                if st == IN_FLIGHT || st == RETX {
                    self.pipe_pkts -= 1;
                }
                self.set_state(ack.sacked, SACKED);
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
                if self.model && st != SACKED {
                    self.rate_delivered(s, now_ps);
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
            Recovery::Fast { point } | Recovery::Timeout { point } if self.snd_una >= point => {
                self.recovery = Recovery::Open;
            }
            _ => {}
        }

        let newly_lost = self.mark_losses();
        let lost_again = self.mark_lost_retransmissions();

        if newly_lost > 0 && self.recovery == Recovery::Open {
            // RFC 6675 §5 (4.1)–(4.3): one reduction for this loss event; everything sent so far
            // belongs to it.
            let ctx = self.ctx(now_ps);
            let w = self
                .cc
                .on_loss(&ctx, self.cwnd_pkts, 1.0)
                .max(MIN_SSTHRESH_PKTS);
            self.ssthresh_pkts = w;
            self.cwnd_pkts = w.min(self.rwnd_pkts);
            self.recovery = Recovery::Fast {
                point: self.snd_nxt,
            };
            self.force_retx = true;
            self.stats.fast_recoveries += 1;
            self.stats.reductions += 1;
        }

        if self.model {
            // A model-based law sets the window on every ACK, in recovery too.
            return self.model_update(now_ps, prior_inflight, newly_lost + lost_again);
        }
        // Growth: per new cumulative ACK, not during fast recovery (RFC 6675 keeps cwnd there).
        if advanced && !matches!(self.recovery, Recovery::Fast { .. }) {
            // RFC 5681 §3.1 eq. (2), with RFC 3465's byte counting: one packet per packet
            // acknowledged, at most L per ACK; the law above ssthresh.
            let ctx = self.ctx(now_ps);
            self.cwnd_pkts = cc::grow_window(
                self.cc.as_mut(),
                &ctx,
                self.cwnd_pkts,
                self.ssthresh_pkts,
                newly_acked,
                self.abc_limit,
                self.rwnd_pkts,
            );
        }
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
        if self.recovery == Recovery::Open {
            let ctx = self.ctx(now_ps);
            self.ssthresh_pkts = self
                .cc
                .on_loss(&ctx, self.cwnd_pkts, 1.0)
                .max(MIN_SSTHRESH_PKTS);
            self.stats.reductions += 1;
        }
        self.cwnd_pkts = 1.0;
        for s in self.snd_una..self.snd_nxt {
            let st = self.state(s);
            if st == IN_FLIGHT || st == RETX {
                self.set_state(s, LOST);
            }
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

    /// The next packet to send now, if the window allows one (RFC 6675 §5 NextSeg rules 1 and 2:
    /// lost packets first, lowest first; then new data within the receive window).
    pub fn next_segment(&mut self, now_ps: SimTime) -> Option<Segment> {
        if !self.started {
            return None;
        }
        let window_open = (self.pipe_pkts as f64) < self.cwnd_pkts.floor();
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
            self.set_state(s, RETX);
            self.pipe_pkts += 1;
            self.retx_fifo.push_back((s, self.snd_nxt));
            self.retx_next = s + 1;
            self.stats.sent_pkts += 1;
            self.stats.retransmitted_pkts += 1;
            if std::mem::take(&mut self.force_retx) {
                // RFC 6675 §5 (4.3): restart the timer with the first retransmission.
                self.rto_deadline_ps = Some(now_ps + self.rto_ps());
            } else if self.rto_deadline_ps.is_none() {
                self.rto_deadline_ps = Some(now_ps + self.rto_ps());
            }
            return Some(Segment {
                seq: s,
                retransmission: true,
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
        if self.snd_nxt - self.snd_una > self.mask {
            self.grow();
        }
        let seq = self.snd_nxt;
        if self.model {
            self.stamp_sent(seq, now_ps);
        }
        self.set_state(seq, IN_FLIGHT);
        self.snd_nxt += 1;
        self.pipe_pkts += 1;
        self.stats.sent_pkts += 1;
        // RFC 6298 (5.1): start the timer if it is not running.
        if self.rto_deadline_ps.is_none() {
            self.rto_deadline_ps = Some(now_ps + self.rto_ps());
        }
        Some(Segment {
            seq,
            retransmission: false,
        })
    }

    /// `pipe` recounted from the scoreboard (O(window): for checks, not for the hot path).
    pub fn recount_pipe(&self) -> u64 {
        (self.snd_una..self.snd_nxt)
            .filter(|&s| matches!(self.state(s), IN_FLIGHT | RETX))
            .count() as u64
    }

    /// Doubles the scoreboard, keeping the outstanding packets. Rare: only when the window
    /// outgrows the size given at build.
    fn grow(&mut self) {
        let cap = (self.mask + 1) * 2;
        let mut board = vec![IN_FLIGHT; cap as usize];
        for s in self.snd_una..self.snd_nxt {
            board[(s & (cap - 1)) as usize] = self.state(s);
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
    use super::super::receiver::Receiver;
    use super::*;
    use crate::cc;
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
                retransmission: true
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
            },
        );
        assert_eq!(s.cwnd_pkts(), 2.0);
        assert_eq!(seqs(&drain(&mut s, deadline + RTT_PS)), vec![1, 2]);
    }
}
