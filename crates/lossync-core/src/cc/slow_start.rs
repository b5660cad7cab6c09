//! Slow start, written once for both engines (RFC 5681 §3.1): below the slow-start threshold the
//! window grows by one packet per packet acknowledged, at most `abc_limit` per ACK (appropriate
//! byte counting, RFC 3465 §2.2: the packet engine's delayed ACKs count for up to L packets; the
//! fluid engine has no ACK boundaries and passes infinity); at or above it, or for a law that sets
//! its window itself ([`CongestionControl::slow_starts`] false, XCP), the law's congestion
//! avoidance applies. The window then stays within [1, rwnd].

use super::{CcContext, CongestionControl};

/// The slow-start threshold a flow starts with: with slow start, the receive window (slow start
/// until the first loss, RFC 5681 §3.1 "arbitrarily high"); without it 0, so the flow is in
/// congestion avoidance from its first ACK (the paper's model, which simulates no slow start).
#[inline]
pub fn initial_ssthresh(slow_start: bool, rwnd_pkts: f64) -> f64 {
    if slow_start {
        rwnd_pkts
    } else {
        0.0
    }
}

/// The window after `acked` packets are acknowledged at window `cwnd` with threshold `ssthresh`.
#[inline(always)]
pub fn on_ack(
    cc: &mut dyn CongestionControl,
    ctx: &CcContext,
    cwnd: f64,
    ssthresh: f64,
    acked: f64,
    abc_limit: f64,
    rwnd: f64,
) -> f64 {
    // Not `min`: a NaN count stays NaN, as it did in each engine before this was shared.
    let acked = if acked > abc_limit { abc_limit } else { acked };
    let w = if cwnd < ssthresh && cc.slow_starts() {
        cwnd + acked
    } else {
        cc.on_ack(ctx, cwnd, acked)
    };
    w.clamp(1.0, rwnd)
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn one_packet_per_packet_acked_below_ssthresh_then_the_law() {
        let mut cc = default_law("reno");
        let c = &ctx(0.0, 0.1);
        // Slow start: 10 + 3 = 13; with L = 2 an ACK of 3 counts for 2 (RFC 3465).
        assert_eq!(
            on_ack(cc.as_mut(), c, 10.0, 100.0, 3.0, f64::INFINITY, 1e9),
            13.0
        );
        assert_eq!(on_ack(cc.as_mut(), c, 10.0, 100.0, 3.0, 2.0, 1e9), 12.0);
        // At ssthresh: Reno's +1/cwnd per packet, 100 + 1/100.
        assert_eq!(on_ack(cc.as_mut(), c, 100.0, 100.0, 1.0, 1.0, 1e9), 100.01);
        // Capped by rwnd, floored at 1.
        assert_eq!(on_ack(cc.as_mut(), c, 10.0, 100.0, 8.0, 8.0, 12.0), 12.0);
        assert_eq!(initial_ssthresh(true, 64.0), 64.0);
        assert_eq!(initial_ssthresh(false, 64.0), 0.0);
    }

    #[test]
    fn a_law_that_sets_its_window_never_slow_starts() {
        let mut cc = default_law("xcp");
        let c = &CcContext {
            now_s: 0.0,
            rtt_s: 0.1,
            feedback_pkts: 0.5,
        };
        // XCP: cwnd + feedback·acked = 10 + 0.5·2, even below ssthresh.
        assert_eq!(
            on_ack(cc.as_mut(), c, 10.0, 100.0, 2.0, f64::INFINITY, 1e9),
            11.0
        );
    }
}
