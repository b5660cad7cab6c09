//! The sender's delivery-rate estimator for model-based laws (draft-cheng's delivery-rate
//! estimation, Linux tcp_rate.c): per-transmission stamps, and each ACK's rate sample for the law.

use super::super::event::{s_from_ps, SimTime};
use super::{Recovery, Sender};
use crate::cc::{RateSample, RecoveryState};

/// Bytes of a transmission's delivery-rate stamps (for memory estimates).
pub const TX_STAMP_BYTES: usize = std::mem::size_of::<TxStamp>();

/// A transmission's delivery-rate stamps (draft-cheng-iccrg-delivery-rate-estimation §3.2:
/// `P.delivered`, `P.delivered_time`, `P.first_sent_time`, `P.is_app_limited`, and its send time;
/// draft-ietf-ccwg-bbr §5.5.10.2's `P.tx_in_flight` and `P.lost`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct TxStamp {
    delivered: u64,
    delivered_ps: SimTime,
    first_sent_ps: SimTime,
    sent_ps: SimTime,
    lost: u64,
    in_flight: u32,
    app_limited: bool,
}

/// The delivery-rate estimator's connection state (the draft's `C.*`) and this ACK's sample
/// under construction.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct RateState {
    /// Packets delivered since the start (SACKed or cumulatively ACKed for the first time).
    pub(super) delivered: u64,
    /// When the latest of them was delivered.
    pub(super) delivered_ps: SimTime,
    /// Send time of the first packet of the current sampling flight.
    pub(super) first_sent_ps: SimTime,
    /// Non-zero: the flight is application-limited until `delivered` passes this.
    pub(super) app_limited: u64,
    /// The smallest RTT seen (samples shorter than it are invalid).
    pub(super) min_rtt_ps: SimTime,
    /// Packets declared lost since the start (`C.lost`).
    pub(super) lost: u64,
    // This ACK's sample: the newest packet it delivers.
    pub(super) has_sample: bool,
    pub(super) prior_delivered: u64,
    pub(super) prior_ps: SimTime,
    pub(super) prior_sent_ps: SimTime,
    pub(super) send_elapsed_ps: SimTime,
    pub(super) sample_app_limited: bool,
    pub(super) sample_lost: u64,
    pub(super) sample_in_flight: u32,
    pub(super) acked: u64,
}

impl Sender {
    /// Stamps a transmission of `seq` (draft-cheng §3.2 "Transmitting a data packet"; Linux
    /// tcp_rate_skb_sent): a flight that starts from nothing outstanding starts a new interval.
    #[inline]
    pub(super) fn stamp_sent(&mut self, seq: u64, now_ps: SimTime) {
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
            lost: r.lost,
            // The pipe with this packet in it (the caller counts it after the stamp).
            in_flight: (self.pipe_pkts + 1).min(u32::MAX as u64) as u32,
            app_limited: r.app_limited != 0,
        };
    }

    /// `seq` is delivered for the first time (draft-cheng §3.3 "Upon receiving ACK"; Linux
    /// tcp_rate_skb_delivered): counted, and taken as this ACK's sample if it was sent last.
    #[inline]
    pub(super) fn rate_delivered(&mut self, seq: u64, now_ps: SimTime) {
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
            r.sample_lost = p.lost;
            r.sample_in_flight = p.in_flight;
            r.send_elapsed_ps = p.sent_ps.saturating_sub(p.first_sent_ps);
            // The next sampling flight starts at this packet's send time.
            r.first_sent_ps = p.sent_ps;
        }
    }

    /// This ACK's rate sample (draft-cheng §3.3; Linux tcp_rate_gen), then the law's window. Out
    /// of line and marked cold so the loss-based laws' ACK path is laid out as before it existed.
    #[cold]
    #[inline(never)]
    pub(super) fn model_update(&mut self, now_ps: SimTime, prior_inflight: u64, lost: u64) {
        let r = &mut self.rate;
        if r.app_limited != 0 && r.delivered > r.app_limited {
            r.app_limited = 0;
        }
        r.lost += lost;
        let mut rs = RateSample {
            rtt_s: self.latest_rtt_s,
            is_app_limited: r.sample_app_limited,
            acked_pkts: r.acked as f64,
            lost_pkts: lost as f64,
            tx_in_flight_pkts: if r.has_sample {
                r.sample_in_flight as f64
            } else {
                0.0
            },
            lost_since_sent_pkts: if r.has_sample {
                (r.lost - r.sample_lost) as f64
            } else {
                0.0
            },
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
}
