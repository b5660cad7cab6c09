//! Leaving slow start on a rising RTT, before the overshoot's burst of losses (a flow group's
//! `hystart`). Two detectors, both fed one RTT sample per ACK (the sender's ideal timestamp echo)
//! and counting rounds by sequence number: a round ends when the cumulative ACK passes the
//! `snd_nxt` of its start (RFC 9406 §4.2 "windowEnd"; Linux's `after(snd_una, end_seq)`).
//!
//! - **HyStart++** (RFC 9406 §4.2, constants §4.3): after [`N_RTT_SAMPLE`] samples in a round,
//!   slow start ends once the round's minimum RTT exceeds the last round's by
//!   `clamp(last/8, 4 ms, 16 ms)`. Conservative slow start (CSS) follows: growth divided by
//!   [`CSS_GROWTH_DIVISOR`], back to slow start if the RTT falls below the baseline that
//!   triggered CSS, congestion avoidance (`ssthresh = cwnd`) after [`CSS_ROUNDS`] rounds. Only the
//!   initial slow start uses it (§4.2: later slow starts end at the ssthresh that losses found).
//! - **Linux CUBIC's HyStart** (`tcp_cubic.c`, Linux 6.1; Ha & Rhee, "Taming the elephants",
//!   Computer Networks 2011): from a window of [`LINUX_LOW_WINDOW`] packets, slow start ends with
//!   `ssthresh = cwnd` when either
//!   - an ACK train, ACKs each within 2 ms of the last, lasts longer than half the minimum RTT
//!     (the window fills the pipe), or
//!   - the minimum of a round's samples after its first eight exceeds the connection's minimum
//!     RTT by `clamp(min/8, 4 ms, 16 ms)`.
//!
//!   Linux widens the train's threshold by `hystart_ack_delay`, the spacing TSO and GRO give a
//!   burst; this sender has neither and adds nothing. A timeout arms it again (`bictcp_state`
//!   resets it in TCP_CA_Loss), with a fresh minimum RTT.

use super::Sender;
use crate::packet::event::SimTime;
use crate::scenario::Hystart;

const MS: SimTime = 1_000_000_000;
/// RFC 9406 §4.3: bounds of the RTT rise that ends slow start, and the divisor of the RTT.
pub const MIN_RTT_THRESH_PS: SimTime = 4 * MS;
pub const MAX_RTT_THRESH_PS: SimTime = 16 * MS;
pub const MIN_RTT_DIVISOR: SimTime = 8;
/// RFC 9406 §4.3: samples a round needs before its minimum is judged.
pub const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3: CSS grows a quarter as fast as slow start, for at most five rounds.
pub const CSS_GROWTH_DIVISOR: f64 = 4.0;
pub const CSS_ROUNDS: u32 = 5;
/// RFC 9406 §4.3 L: packets an ACK may count for, when the sender does not pace (infinite when
/// it does).
pub const UNPACED_ACK_LIMIT: f64 = 8.0;
/// Linux `hystart_low_window`: no detection below this window (packets).
pub const LINUX_LOW_WINDOW: f64 = 16.0;
/// Linux `hystart_ack_delta_us`: the largest gap between two ACKs of one train.
pub const LINUX_ACK_DELTA_PS: SimTime = 2 * MS;
/// Linux HYSTART_MIN_SAMPLES: samples of a round before the delay test applies.
pub const LINUX_MIN_SAMPLES: u32 = 8;

/// The RTT rise that ends slow start above a minimum RTT of `min_ps`: `clamp(min/8, 4, 16 ms)`,
/// RFC 9406 §4.2's RttThresh and Linux's HYSTART_DELAY_THRESH alike.
pub fn rtt_thresh_ps(min_ps: SimTime) -> SimTime {
    (min_ps / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH_PS, MAX_RTT_THRESH_PS)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    SlowStart,
    /// RFC 9406 conservative slow start: the baseline that began it, and its rounds so far.
    Css {
        baseline_ps: SimTime,
        rounds: u32,
    },
    /// Slow start ended (or was never watched): standard behaviour from here on.
    Done,
}

/// What an ACK in slow start means for the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Grow as slow start does, with each packet acknowledged counting `1/divisor` and at most
    /// `ack_limit` packets per ACK.
    Grow { divisor: f64, ack_limit: f64 },
    /// Slow start ends here: ssthresh = cwnd.
    Exit,
}

const GROW: Verdict = Verdict::Grow {
    divisor: 1.0,
    ack_limit: f64::INFINITY,
};

#[derive(Debug, Clone, Copy)]
pub struct SlowStartExit {
    kind: Hystart,
    phase: Phase,
    /// The round ends when the cumulative ACK passes this (`snd_nxt` at its start).
    window_end: u64,
    /// Minimum RTT of this round and of the last (`SimTime::MAX`: none yet), and this round's
    /// sample count.
    round_min_ps: SimTime,
    last_round_min_ps: SimTime,
    samples: u32,
    /// Linux: the connection's minimum RTT, and the current ACK train's start and last ACK.
    min_rtt_ps: SimTime,
    train_start_ps: SimTime,
    train_last_ps: SimTime,
}

impl SlowStartExit {
    pub fn new(kind: Hystart) -> Self {
        SlowStartExit {
            kind,
            phase: if kind == Hystart::Off {
                Phase::Done
            } else {
                Phase::SlowStart
            },
            window_end: 0,
            round_min_ps: SimTime::MAX,
            last_round_min_ps: SimTime::MAX,
            samples: 0,
            min_rtt_ps: SimTime::MAX,
            train_start_ps: 0,
            train_last_ps: 0,
        }
    }

    pub fn kind(&self) -> Hystart {
        self.kind
    }

    /// Whether a detector still watches slow start.
    #[inline]
    pub fn active(&self) -> bool {
        self.phase != Phase::Done
    }

    /// A loss or an ECN echo ends the watch (RFC 9406 §4.2: the usual response applies and the
    /// flow leaves slow start); a timeout re-arms Linux's detector (`bictcp_state`).
    pub fn on_reduction(&mut self, timeout: bool) {
        if timeout && self.kind == Hystart::Linux {
            *self = SlowStartExit::new(Hystart::Linux);
        } else {
            self.phase = Phase::Done;
        }
    }

    /// One ACK in slow start that acknowledges new data: `rtt_ps` its sample, `snd_una` the
    /// cumulative ACK after it, `snd_nxt` the next new packet, `cwnd` the window before growth,
    /// `paced` whether the sender paces.
    pub fn on_ack(
        &mut self,
        now_ps: SimTime,
        rtt_ps: SimTime,
        snd_una: u64,
        snd_nxt: u64,
        cwnd: f64,
        paced: bool,
    ) -> Verdict {
        match self.kind {
            Hystart::Off => GROW,
            Hystart::Rfc9406 => self.rfc9406(rtt_ps, snd_una, snd_nxt, paced),
            Hystart::Linux => self.linux(now_ps, rtt_ps, snd_una, snd_nxt, cwnd),
        }
    }

    /// Starts a new round if the last one is acknowledged; true if it did.
    fn next_round(&mut self, snd_una: u64, snd_nxt: u64) -> bool {
        if snd_una <= self.window_end {
            return false;
        }
        self.window_end = snd_nxt;
        self.last_round_min_ps = self.round_min_ps;
        self.round_min_ps = SimTime::MAX;
        self.samples = 0;
        true
    }

    fn sample(&mut self, rtt_ps: SimTime) {
        self.round_min_ps = self.round_min_ps.min(rtt_ps);
        self.samples += 1;
    }

    fn rfc9406(&mut self, rtt_ps: SimTime, snd_una: u64, snd_nxt: u64, paced: bool) -> Verdict {
        let new_round = self.next_round(snd_una, snd_nxt);
        if let Phase::Css { rounds, .. } = &mut self.phase {
            if new_round {
                *rounds += 1;
            }
            if *rounds >= CSS_ROUNDS {
                self.phase = Phase::Done;
                return Verdict::Exit;
            }
        }
        self.sample(rtt_ps);
        let judged = self.samples >= N_RTT_SAMPLE;
        match self.phase {
            Phase::SlowStart
                if judged
                    && self.last_round_min_ps != SimTime::MAX
                    && self.round_min_ps
                        >= self
                            .last_round_min_ps
                            .saturating_add(rtt_thresh_ps(self.last_round_min_ps)) =>
            {
                self.phase = Phase::Css {
                    baseline_ps: self.round_min_ps,
                    rounds: 0,
                };
            }
            Phase::Css { baseline_ps, .. } if judged && self.round_min_ps < baseline_ps => {
                // The rise was jitter, not the queue: back to slow start.
                self.phase = Phase::SlowStart;
            }
            _ => {}
        }
        let ack_limit = if paced {
            f64::INFINITY
        } else {
            UNPACED_ACK_LIMIT
        };
        let divisor = match self.phase {
            Phase::Css { .. } => CSS_GROWTH_DIVISOR,
            _ => 1.0,
        };
        Verdict::Grow { divisor, ack_limit }
    }

    fn linux(
        &mut self,
        now_ps: SimTime,
        rtt_ps: SimTime,
        snd_una: u64,
        snd_nxt: u64,
        cwnd: f64,
    ) -> Verdict {
        // `bictcp_acked`: the minimum RTT follows every sample; detection waits for the window.
        self.min_rtt_ps = self.min_rtt_ps.min(rtt_ps);
        if cwnd < LINUX_LOW_WINDOW {
            return GROW;
        }
        if self.next_round(snd_una, snd_nxt) {
            self.train_start_ps = now_ps;
            self.train_last_ps = now_ps;
        }
        // The ACK train: closely spaced ACKs for longer than half the minimum RTT.
        if now_ps.saturating_sub(self.train_last_ps) <= LINUX_ACK_DELTA_PS {
            self.train_last_ps = now_ps;
            if now_ps - self.train_start_ps > self.min_rtt_ps / 2 {
                self.phase = Phase::Done;
                return Verdict::Exit;
            }
        }
        // The delay increase, judged on each sample after the round's first eight.
        self.round_min_ps = self.round_min_ps.min(rtt_ps);
        if self.samples < LINUX_MIN_SAMPLES {
            self.samples += 1;
        } else if self.round_min_ps > self.min_rtt_ps + rtt_thresh_ps(self.min_rtt_ps) {
            self.phase = Phase::Done;
            return Verdict::Exit;
        }
        GROW
    }
}

impl Sender {
    /// What an ACK of `newly_acked` packets counts for in the window's growth, and at most how
    /// much per ACK (RFC 3465's L): the detector's say while it watches slow start, which may
    /// also end it here (ssthresh = cwnd).
    pub(super) fn slow_start_count(
        &mut self,
        now_ps: SimTime,
        rtt_ps: SimTime,
        newly_acked: f64,
    ) -> (f64, f64) {
        if !self.ss_exit.active() || self.cwnd_pkts >= self.ssthresh_pkts {
            return (newly_acked, self.abc_limit);
        }
        let (una, nxt, cwnd) = (self.snd_una, self.snd_nxt, self.cwnd_pkts);
        match self
            .ss_exit
            .on_ack(now_ps, rtt_ps, una, nxt, cwnd, self.paced)
        {
            Verdict::Exit => {
                self.ssthresh_pkts = cwnd;
                (newly_acked, self.abc_limit)
            }
            Verdict::Grow { divisor, ack_limit } => (
                newly_acked / divisor,
                self.abc_limit.min(ack_limit) / divisor,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grow(divisor: f64, ack_limit: f64) -> Verdict {
        Verdict::Grow { divisor, ack_limit }
    }

    /// Feeds one round of `n` ACKs at RTT `rtt_ms`, for packets `first..first + n`, while the
    /// next `n` are sent (`snd_nxt` = `first + n` at the round's start); the verdicts.
    fn round(h: &mut SlowStartExit, first: u64, n: u64, rtt_ms: f64) -> Vec<Verdict> {
        let rtt = (rtt_ms * MS as f64) as SimTime;
        (0..n)
            .map(|i| {
                let una = first + i + 1;
                h.on_ack(una * MS, rtt, una, first + n, 100.0, false)
            })
            .collect()
    }

    #[test]
    fn the_threshold_is_an_eighth_of_the_rtt_within_4_and_16_ms() {
        // RFC 9406 §4.2: RttThresh = max(4 ms, min(lastRoundMinRTT / 8, 16 ms)).
        assert_eq!(rtt_thresh_ps(20 * MS), 4 * MS);
        assert_eq!(rtt_thresh_ps(80 * MS), 10 * MS);
        assert_eq!(rtt_thresh_ps(200 * MS), 16 * MS);
    }

    #[test]
    fn hystart_pp_leaves_slow_start_on_the_rfc_threshold_and_not_below_it() {
        // Last round's minimum 80 ms: the threshold is 10 ms, so 89.9 ms stays in slow start
        // and 90 ms enters CSS, at the eighth sample of the round (N_RTT_SAMPLE) and not before.
        for (rtt, css) in [(89.9, false), (90.0, true)] {
            let mut h = SlowStartExit::new(Hystart::Rfc9406);
            round(&mut h, 0, 16, 80.0);
            let v = round(&mut h, 16, 16, rtt);
            assert!(v[..7].iter().all(|&v| v == grow(1.0, 8.0)), "{v:?}");
            let after = if css { grow(4.0, 8.0) } else { grow(1.0, 8.0) };
            assert!(v[7..].iter().all(|&v| v == after), "{rtt}: {v:?}");
        }
    }

    #[test]
    fn hystart_pp_css_ends_after_five_rounds_or_returns_on_a_lower_rtt() {
        let mut h = SlowStartExit::new(Hystart::Rfc9406);
        round(&mut h, 0, 16, 80.0);
        round(&mut h, 16, 16, 95.0);
        // CSS rounds 1–4 grow at a quarter; the fifth round's first ACK ends slow start.
        let mut first = 32;
        for _ in 1..CSS_ROUNDS {
            let v = round(&mut h, first, 16, 95.0);
            assert!(v.iter().all(|&v| v == grow(4.0, 8.0)), "{v:?}");
            first += 16;
        }
        assert_eq!(round(&mut h, first, 1, 95.0), [Verdict::Exit]);
        assert!(!h.active());

        // A round in CSS whose minimum falls below the baseline (95 ms) resumes slow start.
        let mut h = SlowStartExit::new(Hystart::Rfc9406);
        round(&mut h, 0, 16, 80.0);
        round(&mut h, 16, 16, 95.0);
        let v = round(&mut h, 32, 16, 94.0);
        assert_eq!(v[6], grow(4.0, 8.0));
        assert_eq!(v[7], grow(1.0, 8.0));
        // A paced sender's ACKs count without limit (L = infinity).
        let mut h = SlowStartExit::new(Hystart::Rfc9406);
        assert_eq!(
            h.on_ack(MS, 80 * MS, 1, 2, 10.0, true),
            grow(1.0, f64::INFINITY)
        );
    }

    #[test]
    fn hystart_pp_watches_only_the_initial_slow_start() {
        let mut h = SlowStartExit::new(Hystart::Rfc9406);
        h.on_reduction(true);
        assert!(!h.active());
        // Linux's is armed again by a timeout, and ended by a fast recovery.
        let mut h = SlowStartExit::new(Hystart::Linux);
        h.on_reduction(true);
        assert!(h.active());
        h.on_reduction(false);
        assert!(!h.active());
    }

    #[test]
    fn linux_delay_increase_uses_the_connection_minimum_after_eight_samples() {
        // Minimum 40 ms: threshold 5 ms. A round whose samples are all 45.5 ms ends slow start
        // at its ninth ACK (HYSTART_MIN_SAMPLES collected first); 44.5 ms never does. ACKs
        // 10 ms apart: no train. Rounds of 20 packets.
        for (rtt, exit_at) in [(44.5, None), (45.5, Some(8))] {
            let mut h = SlowStartExit::new(Hystart::Linux);
            let at = |i: u64| i * 10 * MS;
            for i in 0..20 {
                h.on_ack(at(i), 40 * MS, i + 1, 20, 20.0, false);
            }
            let v: Vec<_> = (20..40)
                .map(|i| {
                    let rtt = (rtt * MS as f64) as SimTime;
                    h.on_ack(at(i), rtt, i + 1, 40, 20.0, false)
                })
                .collect();
            let first_exit = v.iter().position(|&v| v == Verdict::Exit);
            assert_eq!(first_exit, exit_at, "{v:?}");
        }
    }

    #[test]
    fn linux_ack_train_ends_slow_start_past_half_the_minimum_rtt() {
        // Minimum RTT 100 ms; ACKs 1 ms apart from the round's start: the train passes 50 ms
        // at its 51st ACK. Below the low window (16) nothing is detected.
        let mut h = SlowStartExit::new(Hystart::Linux);
        let v: Vec<_> = (0..60)
            .map(|i| h.on_ack(1000 * MS + i * MS, 100 * MS, 1 + i, 200, 20.0, false))
            .collect();
        assert_eq!(v.iter().position(|&v| v == Verdict::Exit), Some(51));
        let mut h = SlowStartExit::new(Hystart::Linux);
        assert!((0..60)
            .all(|i| h.on_ack(1000 * MS + i * MS, 100 * MS, 1 + i, 200, 15.0, false) == GROW));
    }
}
