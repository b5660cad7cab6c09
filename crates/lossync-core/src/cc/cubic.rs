//! CUBIC (RFC 9438): the window follows `W_cubic(t) = C·(t − K)³ + W_max` from the start of each
//! congestion-avoidance epoch, bounded below by the Reno-friendly estimate `W_est`.
//!
//! - §4.2: `K = cbrt((W_max − cwnd_epoch)/C)`; per ACK `target = W_cubic(t + RTT)` clamped to
//!   `[cwnd, 1.5·cwnd]` and `cwnd += (target − cwnd)/cwnd` per acknowledged segment (§4.4, §4.5).
//! - §4.3: `W_est = cwnd_epoch` at the epoch start, then `W_est += α_cubic·acked/cwnd` with
//!   `α_cubic = 3(1 − β)/(1 + β)`, switching to 1 once `W_est ≥ cwnd_prior`; when
//!   `W_cubic(t) < W_est`, `cwnd = W_est`. Linux (`tcp_friendliness` in tcp_cubic.c, through
//!   6.x) and ns-3's TcpCubic keep `α_cubic` throughout: `alpha_switch = false`.
//! - §4.6: `cwnd_prior = cwnd`, `cwnd ← β·cwnd` (here `β^reductions`).
//! - §4.7: fast convergence: `W_max = cwnd·(1 + β)/2` if `cwnd < W_max`, else `W_max = cwnd`.
//! - §4.10: with no congestion event yet, `W_max` = the window at the start of congestion
//!   avoidance and `K = 0` (also `cwnd_prior = cwnd`).
//!
//! The epoch (`t_epoch`, `cwnd_epoch`, `K`, `W_est`) starts at the first `on_ack` after a loss.
//! Implementation choices (documented deviations): if the window at the epoch start is already at
//! or above `W_max` (the engine's slow start after a timeout can do that), `W_max` is raised to it
//! and `K = 0`, as Linux `tcp_cubic.c` does (RFC 9438 §4.8 does the same after a timeout); in the
//! Reno-friendly region the window is set to `max(cwnd, W_est)` so an ACK never shrinks it (the two
//! differ only within one RTT of crossing from the cubic to the Reno-friendly region).
//! Sources also: RFC 8312 §4; Ha, Rhee, Xu, ACM SIGOPS OSR 2008; docs/model.md §3.4.

use super::{CcContext, CongestionControl, LawParams, Params};
use crate::error::Result;
use serde::Serialize;

/// RFC 9438 §5 (and §4.1.1): `C = 0.4` segments/s³.
pub const C: f64 = 0.4;
/// RFC 9438 §4.6: `β_cubic = 0.7` (retained fraction).
pub const BETA: f64 = 0.7;
/// The largest `C`: Linux's `bic_scale` module parameter (C = bic_scale/1024) is 32 bits.
const MAX_C: f64 = 4_294_967_296.0 / 1024.0;
/// RFC 9438 §4.2: the target is at most `1.5·cwnd`.
const MAX_TARGET_RATIO: f64 = 1.5;

/// CUBIC's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CubicParams {
    /// `C`, segments/s³.
    pub c: f64,
    /// `β_cubic`, the fraction retained at a loss.
    pub beta: f64,
    pub fast_convergence: bool,
    pub reno_friendly: bool,
    /// RFC 9438 §4.3: `α_cubic` becomes 1 once `W_est ≥ cwnd_prior` (false: Linux's and
    /// ns-3's CUBIC, which keep `3(1 − β)/(1 + β)`).
    pub alpha_switch: bool,
}

impl LawParams for CubicParams {
    const NAME: &'static str = "cubic";
    const ABOUT: &'static str =
        "CUBIC (RFC 9438): C=0.4, beta=0.7, fast convergence, Reno-friendly region";

    fn read(p: &mut Params) -> Result<Self> {
        Ok(CubicParams {
            // Linux reads C as `bic_scale`/1024 with a 32-bit `bic_scale` (tcp_cubic.c).
            c: p.f64(
                "c",
                C,
                |v| v > 0.0 && v <= MAX_C,
                "in (0, 4194304] segments/s³ (Linux: a 32-bit bic_scale over 1024)",
            )?,
            beta: p.f64("beta", BETA, |v| v > 0.0 && v < 1.0, "in (0, 1)")?,
            fast_convergence: p.bool("fast_convergence", true)?,
            reno_friendly: p.bool("reno_friendly", true)?,
            alpha_switch: p.bool("alpha_switch", true)?,
        })
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        let mut law = Cubic::new(self.c, self.beta, self.fast_convergence, self.reno_friendly);
        law.alpha_switch = self.alpha_switch;
        Box::new(law)
    }
}

/// `W_cubic(t) = C·(t − K)³ + W_max` (RFC 9438 eq. 1), `t` seconds since the epoch start.
#[inline]
pub fn w_cubic(t: f64, k: f64, w_max: f64, c: f64) -> f64 {
    let d = t - k;
    c * d * d * d + w_max
}

/// `K = cbrt((W_max − cwnd_epoch)/C)` (RFC 9438 eq. 2), seconds.
#[inline]
pub fn cubic_k(w_max: f64, cwnd_epoch: f64, c: f64) -> f64 {
    ((w_max - cwnd_epoch) / c).cbrt()
}

#[derive(Debug, Clone)]
pub struct Cubic {
    events: super::EventCounter,
    c: f64,
    beta: f64,
    fast_convergence: bool,
    reno_friendly: bool,
    /// Whether `α` becomes 1 once `W_est ≥ cwnd_prior` (RFC 9438 §4.3).
    alpha_switch: bool,
    /// `3(1 − β)/(1 + β)` (RFC 9438 §4.3).
    alpha_cubic: f64,
    /// `W_max`; 0 until the first ACK or loss.
    w_max: f64,
    /// `cwnd_prior`: the window before the last reduction.
    cwnd_prior: f64,
    /// Whether an epoch is running (false after a loss until the next ACK).
    in_epoch: bool,
    t_epoch: f64,
    k: f64,
    w_est: f64,
}

impl Cubic {
    pub fn new(c: f64, beta: f64, fast_convergence: bool, reno_friendly: bool) -> Self {
        Cubic {
            events: Default::default(),
            c,
            beta,
            fast_convergence,
            reno_friendly,
            alpha_switch: true,
            alpha_cubic: 3.0 * (1.0 - beta) / (1.0 + beta),
            w_max: 0.0,
            cwnd_prior: 0.0,
            in_epoch: false,
            t_epoch: 0.0,
            k: 0.0,
            w_est: 0.0,
        }
    }

    fn start_epoch(&mut self, now_s: f64, cwnd: f64) {
        self.in_epoch = true;
        self.t_epoch = now_s;
        if self.w_max <= cwnd {
            // No loss yet (RFC 9438 §4.10), or already above the old W_max: K = 0 from here.
            if self.w_max == 0.0 {
                self.cwnd_prior = cwnd;
            }
            self.w_max = cwnd;
            self.k = 0.0;
        } else {
            self.k = cubic_k(self.w_max, cwnd, self.c);
        }
        self.w_est = cwnd;
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, ctx: &CcContext, cwnd: f64, acked: f64) -> f64 {
        if !self.in_epoch {
            self.start_epoch(ctx.now_s, cwnd);
        }
        let t = ctx.now_s - self.t_epoch;
        if self.reno_friendly {
            let alpha = if self.alpha_switch && self.w_est >= self.cwnd_prior {
                1.0
            } else {
                self.alpha_cubic
            };
            self.w_est += alpha * acked / cwnd;
            if w_cubic(t, self.k, self.w_max, self.c) < self.w_est {
                return cwnd.max(self.w_est);
            }
        }
        let target =
            w_cubic(t + ctx.rtt_s, self.k, self.w_max, self.c).clamp(cwnd, MAX_TARGET_RATIO * cwnd);
        cwnd + (target - cwnd) / cwnd * acked
    }

    fn on_loss(&mut self, _ctx: &CcContext, cwnd: f64, reductions: f64) -> f64 {
        if self.events.new_event(reductions) {
            self.w_max = if self.fast_convergence && cwnd < self.w_max {
                cwnd * (1.0 + self.beta) / 2.0
            } else {
                cwnd
            };
            self.cwnd_prior = cwnd;
            self.in_epoch = false;
        }
        cwnd * super::retained(self.beta, reductions)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use serde_json::Value;

    #[test]
    fn window_function_by_hand() {
        // W_max = 100, β = 0.7, C = 0.4: cwnd_epoch = 70, K = cbrt(30/0.4) = cbrt(75) = 4.21716
        // (4.21716³ = 17.7845·4.21716 = 75.000).
        let k = cubic_k(100.0, 70.0, 0.4);
        assert!((k - 4.21716).abs() < 1e-5, "{k}");
        // W_cubic(0) = 0.4·(−K)³ + 100 = −0.4·75 + 100 = 70; W_cubic(K) = 100;
        // W_cubic(2K) = 0.4·75 + 100 = 130.
        assert!((w_cubic(0.0, k, 100.0, 0.4) - 70.0).abs() < 1e-9);
        assert!((w_cubic(k, k, 100.0, 0.4) - 100.0).abs() < 1e-12);
        assert!((w_cubic(2.0 * k, k, 100.0, 0.4) - 130.0).abs() < 1e-9);
        // W_cubic(1) = 100 − 0.4·3.21716³ = 100 − 0.4·33.2981 = 86.6808.
        assert!((w_cubic(1.0, k, 100.0, 0.4) - 86.6808).abs() < 1e-4);
        // A negative argument gives a negative K (real cube root): W_max 10, cwnd_epoch 16.25:
        // (10 − 16.25)/0.4 = −15.625 = (−2.5)³ → K = −2.5.
        assert!((cubic_k(10.0, 16.25, 0.4) + 2.5).abs() < 1e-12);
    }

    #[test]
    fn concave_region_follows_w_cubic_after_a_loss_at_100() {
        let mut cc = default_law("cubic");
        let rtt = 0.1;
        // First loss at W = 100: W_max = 100, cwnd = 70 (RFC 9438 §4.6–4.7).
        let mut w = cc.on_loss(&ctx(0.0, rtt), 100.0, 1.0);
        assert!((w - 70.0).abs() < 1e-12);
        // Hand values of W_cubic(t) = 0.4·(t − 4.21716)³ + 100:
        //   t = 1.0: 100 − 0.4·3.21716³ = 86.681;   t = 1.1: 100 − 0.4·3.11716³ = 87.885
        //   t = 2.0: 100 − 0.4·2.21716³ = 95.640;   t = 2.1: 100 − 0.4·2.11716³ = 96.204
        //   t = 3.0: 100 − 0.4·1.21716³ = 99.279;   t = 3.1: 100 − 0.4·1.11716³ = 99.442
        // The Reno estimate W_est ≈ 70 + 0.529·t/0.1 stays below these (85.9 at t = 3).
        // cwnd moves toward W_cubic(t + RTT) with a one-RTT lag, so it tracks ≈ W_cubic(t):
        // never above W_cubic(t + RTT), and within half a packet below W_cubic(t).
        let checks = [
            (1.0, 86.681, 87.885),
            (2.0, 95.640, 96.204),
            (3.0, 99.279, 99.442),
        ];
        let mut t = 0.0;
        for &(at, lo, hi) in &checks {
            while t < at - 1e-9 {
                w = one_rtt_of_acks(cc.as_mut(), t, rtt, w);
                t += rtt;
            }
            assert!(
                w <= hi && w >= lo - 0.5,
                "t = {at}: cwnd {w} not in [{}, {hi}]",
                lo - 0.5
            );
        }
    }

    #[test]
    fn reno_friendly_region_and_alpha_switch() {
        let mut cc = default_law("cubic");
        // Loss at 10 with no history: W_max = 10, cwnd_prior = 10, cwnd = 7;
        // K = cbrt(3/0.4) = cbrt(7.5) = 1.95743 s, so W_cubic stays ≈ 7 for the first ms.
        let w = cc.on_loss(&ctx(0.0, 0.001), 10.0, 1.0);
        assert!((w - 7.0).abs() < 1e-12);
        // α_cubic = 3·0.3/1.7 = 0.529412. ACK 1 (t = 0, epoch start, W_est = 7):
        // W_est = 7 + 0.529412/7 = 7.075630 > W_cubic(0) = 7 → cwnd = 7.075630.
        let w = cc.on_ack(&ctx(0.0, 0.001), w, 1.0);
        assert!((w - 7.075630).abs() < 1e-6, "{w}");
        // ACK 2 at t = 1 ms: W_est += 0.529412/7.075630 = 0.074822 → 7.150452;
        // W_cubic(0.001) = 10 − 0.4·1.95643³ = 7.0046 < W_est → cwnd = 7.150452.
        let w = cc.on_ack(&ctx(0.001, 0.001), w, 1.0);
        assert!((w - 7.150452).abs() < 1e-6, "{w}");

        let mut cc = default_law("cubic");
        cc.on_loss(&ctx(0.0, 0.001), 10.0, 1.0);
        // A fluid step acknowledging 40 packets at cwnd 7: W_est = 7 + 0.529412·40/7 = 10.025210
        // (α still 0.529 since W_est = 7 < cwnd_prior = 10 before the step).
        let w = cc.on_ack(&ctx(0.0, 0.001), 7.0, 40.0);
        assert!((w - 10.025210).abs() < 1e-6, "{w}");
        // Now W_est ≥ cwnd_prior: α = 1, W_est = 10.025210 + 1/10.025210 = 10.124959.
        let w = cc.on_ack(&ctx(0.002, 0.001), w, 1.0);
        assert!((w - 10.124959).abs() < 1e-6, "{w}");
    }

    #[test]
    fn linux_keeps_alpha_cubic_past_cwnd_prior() {
        let mut cc = law_with("cubic", &[("alpha_switch", Value::from(false))]);
        cc.on_loss(&ctx(0.0, 0.001), 10.0, 1.0);
        // As in the test above up to W_est = 10.025210 ≥ cwnd_prior = 10; then Linux's
        // tcp_friendliness keeps α = 0.529412: W_est = 10.025210 + 0.529412/10.025210 = 10.078018
        // (RFC 9438 §4.3's α = 1 gives 10.124959).
        let w = cc.on_ack(&ctx(0.0, 0.001), 7.0, 40.0);
        assert!((w - 10.025210).abs() < 1e-6, "{w}");
        let w = cc.on_ack(&ctx(0.002, 0.001), w, 1.0);
        assert!((w - 10.078018).abs() < 1e-6, "{w}");
    }

    #[test]
    fn without_reno_friendliness_the_cubic_curve_rules() {
        let mut cc = law_with("cubic", &[("reno_friendly", Value::from(false))]);
        cc.on_loss(&ctx(0.0, 0.001), 10.0, 1.0);
        // Same ACK as above, but no W_est: target = W_cubic(0.001) = 7.004596, so
        // cwnd = 7 + (7.004596 − 7)/7 = 7.000657.
        let w = cc.on_ack(&ctx(0.0, 0.001), 7.0, 1.0);
        assert!((w - 7.000657).abs() < 1e-6, "{w}");
    }

    #[test]
    fn convex_from_the_first_ack_without_loss() {
        let mut cc = default_law("cubic");
        // First ACK at cwnd 50, t = 10 s: W_max = 50, K = 0, W_est = cwnd_prior = 50 (α = 1).
        // W_est = 50 + 1/50 = 50.02 > W_cubic(0) = 50 → cwnd = 50.02.
        let w = cc.on_ack(&ctx(10.0, 0.1), 50.0, 1.0);
        assert!((w - 50.02).abs() < 1e-9, "{w}");
        // t = 2 s: W_est = 50.02 + 1/50.02 = 50.03999 < W_cubic(2) = 0.4·8 + 50 = 53.2;
        // target = W_cubic(2.1) = 0.4·9.261 + 50 = 53.7044 (< 1.5·cwnd);
        // cwnd = 50.02 + (53.7044 − 50.02)/50.02 = 50.02 + 0.073659 = 50.093659.
        let w = cc.on_ack(&ctx(12.0, 0.1), w, 1.0);
        assert!((w - 50.093659).abs() < 1e-6, "{w}");
        // t = 10 s: W_cubic(10.1) = 0.4·1030.301 + 50 = 462.12 > 1.5·cwnd, so the target is
        // clamped to 1.5·cwnd and the step is exactly (1.5 − 1)·cwnd/cwnd = 0.5 packet.
        let w2 = cc.on_ack(&ctx(20.0, 0.1), w, 1.0);
        assert!((w2 - (w + 0.5)).abs() < 1e-9, "{w2}");
    }

    #[test]
    fn multiplicative_decrease_and_fast_convergence() {
        let mut cc = Cubic::new(C, BETA, true, true);
        let c0 = ctx(0.0, 0.1);
        // First loss at 100: W_max = 100, cwnd = 70; two reductions: 100·0.7² = 49.
        assert!((cc.on_loss(&c0, 100.0, 1.0) - 70.0).abs() < 1e-12);
        assert_eq!(cc.w_max, 100.0);
        assert_eq!(cc.cwnd_prior, 100.0);
        // Second loss at 90 < W_max: W_max = 90·(1 + 0.7)/2 = 76.5, cwnd = 63.
        cc.on_ack(&ctx(1.0, 0.1), 70.0, 1.0);
        assert!((cc.on_loss(&ctx(2.0, 0.1), 90.0, 1.0) - 63.0).abs() < 1e-12);
        assert!((cc.w_max - 76.5).abs() < 1e-12);
        // Next epoch: K = cbrt((76.5 − 63)/0.4) = cbrt(33.75) = 3.23165, W_cubic(0) = 63.
        cc.on_ack(&ctx(3.0, 0.1), 63.0, 1.0);
        assert!((cc.k - 3.23165).abs() < 1e-5, "{}", cc.k);
        assert!((w_cubic(0.0, cc.k, cc.w_max, C) - 63.0).abs() < 1e-9);

        // Without fast convergence W_max is the window before the reduction.
        let mut cc = Cubic::new(C, BETA, false, true);
        cc.on_loss(&c0, 100.0, 1.0);
        cc.on_loss(&c0, 90.0, 1.0);
        assert_eq!(cc.w_max, 90.0);
        // Two reductions at once: 100·0.49 = 49.
        assert!((cc.on_loss(&c0, 100.0, 2.0) - 49.0).abs() < 1e-12);
        // A window already above W_max at the epoch start restarts the curve there (K = 0).
        let mut cc = Cubic::new(C, BETA, true, true);
        cc.on_loss(&c0, 100.0, 1.0);
        cc.on_ack(&ctx(1.0, 0.1), 120.0, 1.0);
        assert_eq!((cc.w_max, cc.k), (120.0, 0.0));
    }

    #[test]
    fn beta_parameter() {
        let mut cc = law_with("cubic", &[("beta", Value::from(0.8))]);
        // Old Linux CUBIC v2.0 retained 0.8 (docs/model.md §3.4): 100 → 80.
        assert!((cc.on_loss(&ctx(0.0, 0.1), 100.0, 1.0) - 80.0).abs() < 1e-12);
    }
}
