//! BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based Congestion
//! Control", ACM Queue 2016; draft-cardwell-iccrg-bbr-congestion-control-00; Linux's
//! net/ipv4/tcp_bbr.c), packet engine only: a model of the path (the windowed maximum delivery
//! rate `BtlBw` and the windowed minimum RTT `RTprop`) sets the pacing rate and the window.
//!
//! - Startup paces at 2/ln 2 × BtlBw and ends when BtlBw has grown by less than 25% for three
//!   rounds; drain paces at ln 2 / 2 until the data in flight is one BDP; probe-bandwidth cycles
//!   the pacing gain over 5/4, 3/4, 1 ×6 (one phase per min RTT, the 5/4 phase until in flight
//!   reaches 5/4 BDP or a loss, the 3/4 phase until in flight falls to one BDP), from a random
//!   phase other than 3/4; probe-RTT caps the window at 4 packets for max(200 ms, one round)
//!   when the min RTT has not been refreshed for 10 s.
//! - The window is `cwnd_gain × BDP` plus tcp_bbr.c's quantization budget (3 send quanta, even,
//!   +2 in the 5/4 phase), reached by adding the packets ACKed (it never grows more per ACK), at
//!   least 4 packets. Losses do not reduce it, except as tcp_bbr.c does: lost packets are taken
//!   off it, the first round of fast recovery conserves packets (`cwnd = inflight + acked`), and
//!   the window of before the recovery (or probe-RTT) is restored at its end.
//! - Rounds are counted by delivered packets (a round ends when a packet sent after the round
//!   started is delivered); rate samples are the sender's ([`RateSample`], the delivery-rate
//!   draft), application-limited ones kept only if they raise the estimate.
//!
//! Not modelled: the long-term ("policer") bandwidth sampling and the ACK-aggregation allowance
//! of tcp_bbr.c (the engine's ACKs are neither policed nor aggregated: one ACK per packet, or a
//! receiver's delayed ACKs), and restarts from idle (the engine's flows are never idle while
//! they have data).

use super::{CcContext, CongestionControl, LawParams, Params, RateSample, RecoveryState};
use crate::error::Result;
use crate::rng::Rng;
use serde::Serialize;

/// Phases of the probe-bandwidth gain cycle (tcp_bbr.c `CYCLE_LEN`).
const CYCLE_LEN: usize = 8;
/// The most rounds the bandwidth filter may span (the filter's fixed storage).
pub const MAX_BW_ROUNDS: usize = 64;
/// tcp_bbr.c `bbr_cycle_rand`: the first probe-bandwidth phase is drawn among 7 (never 3/4).
const CYCLE_RAND: usize = 7;
/// Linux's TCP_INIT_CWND (RFC 6928): the target before any RTT sample, and the window grows
/// in startup at least until this many packets are delivered (tcp_bbr.c `bbr_set_cwnd`).
pub(super) const INIT_CWND: f64 = 10.0;
/// tcp_bbr.c `bbr_init_pacing_rate_from_rtt`: the RTT assumed before any sample, 1 ms.
pub(super) const NOMINAL_RTT_S: f64 = 1e-3;
/// tcp_bbr.c `bbr_tso_segs_goal`, the send quantum its window budgets for: Linux's TSO size at
/// the pacing rate without the short path's allowance ([`super::tso_autosize_pkts`]: about 1 ms
/// of data, at least 2 packets above 1.2 Mb/s, at most 64 KB).
fn send_quantum_pkts(pacing_rate_pps: f64) -> f64 {
    super::tso_autosize_pkts(pacing_rate_pps, f64::INFINITY) as f64
}

/// BBR's parameters, with tcp_bbr.c's values as defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BbrParams {
    /// Startup's pacing and window gain.
    pub high_gain: f64,
    /// Drain's pacing gain.
    pub drain_gain: f64,
    /// Probe-bandwidth's window gain.
    pub cwnd_gain: f64,
    /// Probe-bandwidth's probing pacing gain (the phase after it paces at 2 − this).
    pub probe_gain: f64,
    /// Length of the bandwidth filter, in rounds.
    pub bw_window_rounds: f64,
    /// Length of the min-RTT filter, seconds.
    pub min_rtt_window: f64,
    /// Least time spent at the probe-RTT window, seconds.
    pub probe_rtt_time: f64,
    /// The smallest window, packets (also probe-RTT's).
    pub min_cwnd: f64,
    /// Startup ends when the bandwidth grew by less than this factor ...
    pub full_bw_growth: f64,
    /// ... for this many rounds.
    pub full_bw_rounds: f64,
    /// Pacing below the estimate by this fraction.
    pub pacing_margin: f64,
}

impl LawParams for BbrParams {
    // Not ECN-capable: its flows are Not-ECT.
    const ECN: super::EcnUse = super::EcnUse::Incapable;
    const NAME: &'static str = "bbr";
    const ABOUT: &'static str =
        "BBR v1: paced at the windowed max delivery rate, cwnd 2 BDP (tcp_bbr.c); packet engine";

    fn read(p: &mut Params) -> Result<Self> {
        let gain = |v: f64| v > 0.0 && v <= 100.0;
        Ok(BbrParams {
            // tcp_bbr.c bbr_high_gain = 2885/1000 (+1/256): 2/ln 2, the smallest gain that
            // doubles the sending rate each round (draft-cardwell-iccrg-bbr §4.3.1.1).
            high_gain: p.f64(
                "high_gain",
                2.0 / std::f64::consts::LN_2,
                gain,
                "in (0, 100]",
            )?,
            // tcp_bbr.c bbr_drain_gain = 1000/2885: ln 2 / 2, drains startup's queue in a round
            // (draft §4.3.2).
            drain_gain: p.f64(
                "drain_gain",
                std::f64::consts::LN_2 / 2.0,
                gain,
                "in (0, 100]",
            )?,
            // tcp_bbr.c bbr_cwnd_gain = 2 (draft §4.2.3.2).
            cwnd_gain: p.f64("cwnd_gain", 2.0, gain, "in (0, 100]")?,
            // tcp_bbr.c bbr_pacing_gain[] = {5/4, 3/4, 1, 1, 1, 1, 1, 1} (draft §4.3.3).
            probe_gain: p.f64("probe_gain", 1.25, |v| v > 1.0 && v < 2.0, "in (1, 2)")?,
            // tcp_bbr.c bbr_bw_rtts = CYCLE_LEN + 2 = 10 (draft §4.1.1.4: 10 round trips).
            bw_window_rounds: p.f64(
                "bw_window_rounds",
                10.0,
                |v| (1.0..=MAX_BW_ROUNDS as f64).contains(&v) && v.fract() == 0.0,
                "a whole number in [1, 64]",
            )?,
            // tcp_bbr.c bbr_min_rtt_win_sec = 10 (draft §4.1.2.3).
            min_rtt_window: p.f64("min_rtt_window", 10.0, |v| v > 0.0, "> 0 seconds")?,
            // tcp_bbr.c bbr_probe_rtt_mode_ms = 200 (draft §4.3.4.4).
            probe_rtt_time: p.f64("probe_rtt_time", 0.2, |v| v >= 0.0, ">= 0 seconds")?,
            // tcp_bbr.c bbr_cwnd_min_target = 4 (draft §4.3.4.4).
            min_cwnd: p.f64("min_cwnd", 4.0, |v| v >= 1.0, ">= 1 packet")?,
            // tcp_bbr.c bbr_full_bw_thresh = 5/4 (draft §4.3.1.2).
            full_bw_growth: p.f64("full_bw_growth", 1.25, |v| v > 1.0, "> 1")?,
            // tcp_bbr.c bbr_full_bw_cnt = 3 (draft §4.3.1.2).
            full_bw_rounds: p.f64(
                "full_bw_rounds",
                3.0,
                |v| (1.0..=1e6).contains(&v) && v.fract() == 0.0,
                "a whole number >= 1",
            )?,
            // tcp_bbr.c bbr_pacing_margin_percent = 1.
            pacing_margin: p.f64(
                "pacing_margin",
                0.01,
                |v| (0.0..0.5).contains(&v),
                "in [0, 0.5)",
            )?,
        })
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Bbr::new(*self))
    }
}

/// BBR's state machine (tcp_bbr.c `enum bbr_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// A windowed maximum over rounds: the largest sample of each of the last `len` rounds, in a
/// fixed ring (exact, where tcp_bbr.c's three-sample `minmax` approximates it).
#[derive(Debug, Clone)]
struct RoundMax {
    rounds: [u64; MAX_BW_ROUNDS],
    values: [f64; MAX_BW_ROUNDS],
    len: u64,
    best: f64,
}

impl RoundMax {
    fn new(len: usize) -> Self {
        RoundMax {
            rounds: [u64::MAX; MAX_BW_ROUNDS],
            values: [0.0; MAX_BW_ROUNDS],
            len: len as u64,
            best: 0.0,
        }
    }

    fn update(&mut self, round: u64, v: f64) {
        let i = (round % self.len) as usize;
        if self.rounds[i] != round {
            self.rounds[i] = round;
            self.values[i] = v;
        } else if v > self.values[i] {
            self.values[i] = v;
        }
        let oldest = round.saturating_sub(self.len - 1);
        self.best = (0..self.len as usize)
            .filter(|&k| self.rounds[k] != u64::MAX && self.rounds[k] >= oldest)
            .map(|k| self.values[k])
            .fold(0.0, f64::max);
    }
}

/// BBR's state; see the module doc.
#[derive(Debug, Clone)]
pub struct Bbr {
    p: BbrParams,
    mode: Mode,
    bw: RoundMax,
    /// Rounds since the start, and the delivered count that ends the current one.
    round: u64,
    next_round_delivered: u64,
    round_start: bool,
    min_rtt_s: f64,
    min_rtt_stamp_s: f64,
    probe_rtt_done_s: Option<f64>,
    probe_rtt_round_done: bool,
    prior_cwnd: f64,
    prev_recovery: RecoveryState,
    packet_conservation: bool,
    full_bw: f64,
    full_bw_count: u32,
    full_bw_reached: bool,
    cycle_idx: usize,
    cycle_stamp_s: f64,
    pacing_gain: f64,
    cwnd_gain: f64,
    pacing_rate_pps: f64,
    has_seen_rtt: bool,
    rng: Rng,
    /// Observations for tests and reports: probe-RTT episodes entered, and the round startup
    /// ended in.
    pub probe_rtt_episodes: u64,
    pub startup_exit_round: Option<u64>,
}

impl Bbr {
    pub fn new(p: BbrParams) -> Self {
        Bbr {
            p,
            mode: Mode::Startup,
            bw: RoundMax::new(p.bw_window_rounds as usize),
            round: 0,
            next_round_delivered: 0,
            round_start: false,
            min_rtt_s: f64::INFINITY,
            min_rtt_stamp_s: f64::NAN,
            probe_rtt_done_s: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0.0,
            prev_recovery: RecoveryState::Open,
            packet_conservation: false,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp_s: 0.0,
            pacing_gain: p.high_gain,
            cwnd_gain: p.high_gain,
            // tcp_bbr.c bbr_init_pacing_rate_from_rtt: high_gain × initial window / 1 ms until
            // the first RTT sample.
            pacing_rate_pps: p.high_gain * INIT_CWND / NOMINAL_RTT_S * (1.0 - p.pacing_margin),
            has_seen_rtt: false,
            rng: Rng::new(0, 0),
            probe_rtt_episodes: 0,
            startup_exit_round: None,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The bandwidth estimate (windowed max delivery rate), packets per second.
    pub fn max_bw_pps(&self) -> f64 {
        self.bw.best
    }

    /// The min-RTT estimate, seconds (infinite before the first sample).
    pub fn min_rtt_s(&self) -> f64 {
        self.min_rtt_s
    }

    pub fn round(&self) -> u64 {
        self.round
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    fn phase_gain(&self, idx: usize) -> f64 {
        match idx {
            0 => self.p.probe_gain,
            1 => 2.0 - self.p.probe_gain,
            _ => 1.0,
        }
    }

    /// tcp_bbr.c `bbr_bdp`: `gain × bw × min_rtt`, rounded up; the initial window before any RTT.
    fn bdp(&self, gain: f64) -> f64 {
        if !self.min_rtt_s.is_finite() {
            return INIT_CWND;
        }
        (gain * self.bw.best * self.min_rtt_s).ceil()
    }

    /// tcp_bbr.c `bbr_quantization_budget`: three send quanta, rounded up to even, two more in
    /// the probing phase.
    fn with_budget(&self, cwnd: f64) -> f64 {
        let mut w = cwnd + 3.0 * send_quantum_pkts(self.pacing_rate_pps);
        w = 2.0 * (w / 2.0).ceil();
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            w += 2.0;
        }
        w
    }

    fn inflight(&self, gain: f64) -> f64 {
        self.with_budget(self.bdp(gain))
    }

    /// tcp_bbr.c `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: f64) {
        self.prior_cwnd =
            if self.prev_recovery == RecoveryState::Open && self.mode != Mode::ProbeRtt {
                cwnd
            } else {
                self.prior_cwnd.max(cwnd)
            };
    }

    fn enter_probe_bw(&mut self, now_s: f64) {
        self.mode = Mode::ProbeBw;
        // tcp_bbr.c bbr_reset_probe_bw_mode: start at CYCLE_LEN − 1 − rand(7), then advance:
        // any phase but the 3/4 one.
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND);
        self.advance_cycle(now_s);
    }

    fn advance_cycle(&mut self, now_s: f64) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp_s = now_s;
    }

    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_s <= 0.0 {
            return;
        }
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = rs.delivered;
            self.round += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let bw = rs.delivered_pkts / rs.interval_s;
        if !rs.is_app_limited || bw >= self.bw.best {
            self.bw.update(self.round, bw);
        }
    }

    fn update_cycle_phase(&mut self, now_s: f64, rs: &RateSample) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = now_s - self.cycle_stamp_s > self.min_rtt_s;
        let gain = self.phase_gain(self.cycle_idx);
        let next = if gain == 1.0 {
            full_length
        } else if gain > 1.0 {
            // tcp_bbr.c bbr_packets_in_net_at_edt: the packet about to leave counts, a quantum.
            let at_edt = rs.prior_inflight_pkts + send_quantum_pkts(self.pacing_rate_pps);
            full_length && (rs.lost_pkts > 0.0 || at_edt >= self.inflight(gain))
        } else {
            full_length || rs.prior_inflight_pkts <= self.inflight(1.0)
        };
        if next {
            self.advance_cycle(now_s);
        }
    }

    fn check_full_bw(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        if self.bw.best >= self.full_bw * self.p.full_bw_growth {
            self.full_bw = self.bw.best;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count as f64 >= self.p.full_bw_rounds;
    }

    fn check_drain(&mut self, now_s: f64, rs: &RateSample) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.startup_exit_round = Some(self.round);
        }
        if self.mode == Mode::Drain && rs.inflight_pkts <= self.inflight(1.0) {
            self.enter_probe_bw(now_s);
        }
    }

    fn update_min_rtt(&mut self, now_s: f64, rs: &RateSample, cwnd: &mut f64) {
        // tcp_bbr.c bbr_init stamps the filter when the connection starts: here, at its first
        // sample (a connection may start at any time of the run).
        if self.min_rtt_stamp_s.is_nan() {
            self.min_rtt_stamp_s = now_s;
        }
        let expired = now_s > self.min_rtt_stamp_s + self.p.min_rtt_window;
        if rs.rtt_s > 0.0 && (rs.rtt_s <= self.min_rtt_s || expired) {
            self.min_rtt_s = rs.rtt_s;
            self.min_rtt_stamp_s = now_s;
        }
        if self.p.probe_rtt_time > 0.0 && expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.probe_rtt_episodes += 1;
            self.save_cwnd(*cwnd);
            self.probe_rtt_done_s = None;
        }
        if self.mode == Mode::ProbeRtt {
            match self.probe_rtt_done_s {
                None if rs.inflight_pkts <= self.p.min_cwnd => {
                    self.probe_rtt_done_s = Some(now_s + self.p.probe_rtt_time);
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered = rs.delivered;
                }
                None => {}
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && now_s > done {
                        self.min_rtt_stamp_s = now_s;
                        *cwnd = cwnd.max(self.prior_cwnd);
                        if self.full_bw_reached {
                            self.enter_probe_bw(now_s);
                        } else {
                            self.mode = Mode::Startup;
                        }
                    }
                }
            }
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (self.p.high_gain, self.p.high_gain),
            Mode::Drain => (self.p.drain_gain, self.p.high_gain),
            Mode::ProbeBw => (self.phase_gain(self.cycle_idx), self.p.cwnd_gain),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// tcp_bbr.c `bbr_set_pacing_rate`: gain × bw less the margin; in startup it only rises.
    fn set_pacing_rate(&mut self, rs: &RateSample, srtt_s: f64, cwnd: f64) {
        if !self.has_seen_rtt && rs.rtt_s > 0.0 {
            self.has_seen_rtt = true;
            // tcp_bbr.c bbr_init_pacing_rate_from_rtt: high_gain × cwnd / srtt.
            self.pacing_rate_pps =
                self.p.high_gain * cwnd / srtt_s.max(1e-6) * (1.0 - self.p.pacing_margin);
        }
        let rate = self.pacing_gain * self.bw.best * (1.0 - self.p.pacing_margin);
        if self.full_bw_reached || rate > self.pacing_rate_pps {
            self.pacing_rate_pps = rate;
        }
    }

    /// tcp_bbr.c `bbr_set_cwnd_to_recover_or_restore` and `bbr_set_cwnd`.
    fn set_cwnd(&mut self, rs: &RateSample, mut cwnd: f64) -> f64 {
        let acked = rs.acked_pkts;
        if acked > 0.0 {
            if rs.lost_pkts > 0.0 {
                cwnd = (cwnd - rs.lost_pkts).max(1.0);
            }
            let was_in = self.prev_recovery != RecoveryState::Open;
            if rs.recovery == RecoveryState::Fast && self.prev_recovery != RecoveryState::Fast {
                // The first round of recovery conserves packets.
                self.packet_conservation = true;
                self.next_round_delivered = rs.delivered;
                cwnd = rs.inflight_pkts + acked;
            } else if was_in && rs.recovery == RecoveryState::Open {
                cwnd = cwnd.max(self.prior_cwnd);
                self.packet_conservation = false;
            }
            self.prev_recovery = rs.recovery;
            if self.packet_conservation {
                cwnd = cwnd.max(rs.inflight_pkts + acked);
            } else {
                let target = self.with_budget(self.bdp(self.cwnd_gain));
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || (rs.delivered as f64) < INIT_CWND {
                    cwnd += acked;
                }
                cwnd = cwnd.max(self.p.min_cwnd);
            }
        } else {
            self.prev_recovery = rs.recovery;
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(self.p.min_cwnd);
        }
        cwnd
    }
}

impl CongestionControl for Bbr {
    /// Not called: BBR sets its window per rate sample ([`Bbr::on_rate_sample`]).
    fn on_ack(&mut self, _ctx: &CcContext, cwnd: f64, _acked: f64) -> f64 {
        cwnd
    }

    /// tcp_bbr.c `bbr_ssthresh`: no reduction; the window is saved for after the recovery.
    fn on_loss(&mut self, _ctx: &CcContext, cwnd: f64, _reductions: f64) -> f64 {
        self.save_cwnd(cwnd);
        cwnd
    }

    fn slow_starts(&self) -> bool {
        false
    }

    fn grows_until_loss(&self) -> bool {
        false
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    /// tcp_bbr.c `bbr_main`: update the model, then the pacing rate and the window.
    fn on_rate_sample(&mut self, ctx: &CcContext, rs: &RateSample, cwnd: f64) -> f64 {
        let now = ctx.now_s;
        if rs.recovery == RecoveryState::Timeout && self.prev_recovery != RecoveryState::Timeout {
            // tcp_bbr.c bbr_set_state(TCP_CA_Loss): after a timeout startup's plateau is
            // measured afresh.
            self.full_bw = 0.0;
        }
        let mut cwnd = cwnd;
        self.update_bw(rs);
        self.update_cycle_phase(now, rs);
        self.check_full_bw(rs);
        self.check_drain(now, rs);
        self.update_min_rtt(now, rs, &mut cwnd);
        self.update_gains();
        self.set_pacing_rate(rs, ctx.rtt_s, cwnd);
        self.set_cwnd(rs, cwnd)
    }

    fn pacing_rate_pps(&self) -> Option<f64> {
        Some(self.pacing_rate_pps)
    }

    fn send_quantum_pkts(&self) -> u32 {
        super::tso_autosize_pkts(self.pacing_rate_pps, self.min_rtt_s)
    }

    fn marks_app_limited(&self) -> bool {
        self.mode == Mode::ProbeRtt
    }

    fn seed(&mut self, rng: Rng) {
        self.rng = rng;
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    /// A rate sample of `delivered` packets over `rtt` (one round's worth), the round's end.
    fn sample(prior_delivered: u64, delivered: u64, rtt: f64, inflight: f64) -> RateSample {
        RateSample {
            delivered_pkts: (delivered - prior_delivered) as f64,
            interval_s: rtt,
            rtt_s: rtt,
            acked_pkts: 1.0,
            prior_inflight_pkts: inflight,
            inflight_pkts: inflight,
            prior_delivered,
            delivered,
            ..RateSample::default()
        }
    }

    fn bbr() -> Bbr {
        Bbr::new(BbrParams::read(&mut Params::new(&Default::default(), "cc")).unwrap())
    }

    /// Startup doubles while the rate grows and ends after 3 rounds without 25% growth
    /// (draft §4.3.1.2); drain then paces at ln 2 / 2 and probe-bandwidth follows once in
    /// flight is down to a BDP.
    #[test]
    fn startup_ends_after_three_flat_rounds_then_drain_then_probe_bw() {
        let mut b = bbr();
        let rtt = 0.1;
        let mut delivered = 0;
        let mut cwnd = 10.0;
        // Rates 10, 20, 40, 80, 100, 100, 100, 100 packets per RTT.
        for (k, per_rtt) in [10u64, 20, 40, 80, 100, 100, 100, 100].iter().enumerate() {
            let prior = delivered;
            delivered += per_rtt;
            let c = ctx(k as f64 * rtt, rtt);
            // In flight: startup's 2.89× the rate per RTT, above the BDP once the pipe is full.
            let inflight = 2.89 * *per_rtt as f64;
            cwnd = b.on_rate_sample(&c, &sample(prior, delivered, rtt, inflight), cwnd);
            let flat_rounds = k.saturating_sub(4);
            assert_eq!(b.full_bw_reached(), flat_rounds >= 3, "round {k}");
        }
        assert_eq!(b.mode(), Mode::Drain);
        assert!((b.pacing_rate_pps().unwrap() - 1000.0 * LN_2_HALF * 0.99).abs() < 1e-6);
        // In flight at the BDP (100 packets): probe-bandwidth.
        let c = ctx(1.0, rtt);
        b.on_rate_sample(&c, &sample(delivered, delivered + 100, rtt, 100.0), cwnd);
        assert_eq!(b.mode(), Mode::ProbeBw);
    }

    const LN_2_HALF: f64 = std::f64::consts::LN_2 / 2.0;

    /// The gain cycle is 5/4, 3/4, then 1 six times (tcp_bbr.c bbr_pacing_gain), and never
    /// starts in the 3/4 phase (tcp_bbr.c bbr_reset_probe_bw_mode).
    #[test]
    fn the_gain_cycle_never_starts_by_draining() {
        let b = bbr();
        let gains: Vec<f64> = (0..CYCLE_LEN).map(|i| b.phase_gain(i)).collect();
        assert_eq!(gains, [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        let mut first = [0; CYCLE_LEN];
        for seed in 0..700 {
            let mut b = bbr();
            b.seed(Rng::new(seed, 8_000_000));
            b.enter_probe_bw(0.0);
            first[b.cycle_idx] += 1;
        }
        assert_eq!(first[1], 0, "{first:?}");
        // The other 7 phases about equally often (100 each; 5σ ≈ 46).
        assert!(
            first
                .iter()
                .enumerate()
                .all(|(i, &n)| i == 1 || (54..=146).contains(&n)),
            "{first:?}"
        );
    }

    /// A loss does not reduce the window (tcp_bbr.c bbr_ssthresh); probe-bandwidth's target is
    /// 2 BDP plus the quantization budget (3 quanta of 2 packets, even).
    #[test]
    fn the_window_is_two_bdp_and_a_loss_does_not_halve_it() {
        let mut b = default_law("bbr");
        assert!(!b.slow_starts() && b.wants_rate_samples());
        assert_eq!(b.on_loss(&ctx(0.0, 0.1), 50.0, 1.0), 50.0);
        let mut b = bbr();
        b.full_bw_reached = true;
        b.mode = Mode::ProbeBw;
        b.cycle_idx = 3;
        b.min_rtt_s = 0.1;
        b.bw.update(1, 1000.0);
        b.pacing_rate_pps = 1000.0;
        // BDP 100: 200 + 3·2 = 206.
        assert_eq!(b.inflight(2.0), 206.0);
    }
}
