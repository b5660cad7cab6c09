//! HighSpeed TCP: per ACK `w += a(w)/w`, per loss `w ← (1 − b(w))·w`, with `a(w) = 1`, `b(w) = 0.5`
//! (standard TCP) up to `Low_Window` and the continuous formulas of RFC 3649 §5 above it:
//!
//! ```text
//! b(w) = (High_Decrease − 0.5)·(ln w − ln Low_Window)/(ln High_Window − ln Low_Window) + 0.5
//! p(w) = 0.078 / w^1.2
//! a(w) = w²·p(w)·2·b(w)/(2 − b(w))
//! ```
//!
//! Sources: RFC 3649 §5 (formulas and the four constants), App. B (table of a(w), b(w)); Linux
//! `net/ipv4/tcp_highspeed.c` (the same table, "From AIMD tables from RFC 3649 appendix B"); ns-2
//! `tcp/tcp.cc` (`increase_param`/`decrease_param`, same continuous forms); docs/model.md §3.2.
//!
//! `p(w) = 0.078/w^1.2` is the RFC's rounded inverse of its response function, the log-log line
//! through `(Low_Window, Low_P)` and `(High_Window, High_P)`. The RFC's table is computed from the
//! rounded form, so we keep it exactly at the default constants; when `low_window`, `high_window`
//! or `high_p` differ from the defaults, `p(w)` is multiplied by the ratio of the RFC line for the
//! given constants to the RFC line for the default ones (also a power law, so `p` stays
//! `coef·w^(−exp)`). With default constants this ratio is exactly 1.
//!
//! The formulas are used unclamped above `High_Window`, as in RFC 3649 §5 and ns-2; note that
//! `b(w)` reaches 0 at `w ≈ 5.7e5` packets with the defaults, so windows beyond that are outside
//! the law's domain.

use super::{CcContext, CongestionControl, LawParams, Params};
use crate::error::Result;
use serde::Serialize;

/// RFC 3649 §5: below this window HighSpeed TCP is standard TCP (a = 1, b = 0.5).
pub const LOW_WINDOW: f64 = 38.0;
/// RFC 3649 §5: the window at which the response function reaches `High_P`.
pub const HIGH_WINDOW: f64 = 83000.0;
/// RFC 3649 §5: drop rate at `High_Window`.
pub const HIGH_P: f64 = 1e-7;
/// RFC 3649 §5: `b(High_Window)`.
pub const HIGH_DECREASE: f64 = 0.1;
/// RFC 3649 §5: `p(w) = 0.078/w^1.2` (rounded inverse of `w = 0.12/p^0.835`).
const P_COEF: f64 = 0.078;
const P_EXP: f64 = 1.2;
/// Standard TCP's response function `w = 1.2/sqrt(p)` (RFC 3649 §2, Table 1), which gives
/// `Low_P = (1.2/Low_Window)²` (≈ 1e-3 at 38, the RFC's Low_P).
const STD_RESPONSE: f64 = 1.2;

/// HighSpeed TCP's parameters: the four constants of RFC 3649 §5.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HighSpeedParams {
    pub low_window: f64,
    pub high_window: f64,
    pub high_p: f64,
    pub high_decrease: f64,
}

impl LawParams for HighSpeedParams {
    const NAME: &'static str = "highspeed";
    const ABOUT: &'static str =
        "HighSpeed TCP (RFC 3649): a(w), b(w) from Low_Window 38 to High_Window 83000";

    fn read(p: &mut Params) -> Result<Self> {
        // Ranges are disjoint so the constants are always consistent: low < high window and
        // High_P below Low_P = (1.2/Low_Window)² ≥ 1.44e-6.
        Ok(HighSpeedParams {
            low_window: p.f64(
                "low_window",
                LOW_WINDOW,
                |v| (1.0..=1000.0).contains(&v),
                "in [1, 1000]",
            )?,
            high_window: p.f64(
                "high_window",
                HIGH_WINDOW,
                |v| v > 1000.0 && v <= 1e9,
                "in (1000, 1e9]",
            )?,
            high_p: p.f64("high_p", HIGH_P, |v| v > 0.0 && v < 1e-6, "in (0, 1e-6)")?,
            high_decrease: p.f64(
                "high_decrease",
                HIGH_DECREASE,
                |v| v > 0.0 && v < 0.5,
                "in (0, 0.5)",
            )?,
        })
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(HighSpeed::new(
            self.low_window,
            self.high_window,
            self.high_p,
            self.high_decrease,
        ))
    }
}

#[derive(Debug, Clone)]
pub struct HighSpeed {
    low_window: f64,
    /// `b(w) = b0 + b1·ln w` above `low_window`.
    b0: f64,
    b1: f64,
    /// `p(w) = p_coef·w^(−p_exp)`.
    p_coef: f64,
    p_exp: f64,
    /// a(w) computed at a nearby window: reused while cwnd stays within ±1e-4 of that window,
    /// where a(w) ∝ w^0.8·b/(2−b) moves by under 1e-4 relative. Windows change by ~1e-5 per fluid
    /// step, so this saves the ln and exp on most steps.
    cache: (f64, f64, f64),
}

/// The RFC 3649 §5 response-function line inverted: `p(w) = Low_P·(w/Low_Window)^(−e)`, returned
/// as `(Low_P·Low_Window^e, e)` with `e = ln(Low_P/High_P)/ln(High_Window/Low_Window)`.
fn rfc_p_line(low_window: f64, high_window: f64, high_p: f64) -> (f64, f64) {
    let low_p = (STD_RESPONSE / low_window).powi(2);
    let e = (low_p / high_p).ln() / (high_window / low_window).ln();
    (low_p * low_window.powf(e), e)
}

impl HighSpeed {
    pub fn new(low_window: f64, high_window: f64, high_p: f64, high_decrease: f64) -> Self {
        let b1 = (high_decrease - 0.5) / (high_window.ln() - low_window.ln());
        let b0 = 0.5 - b1 * low_window.ln();
        let (g, e) = rfc_p_line(low_window, high_window, high_p);
        let (g0, e0) = rfc_p_line(LOW_WINDOW, HIGH_WINDOW, HIGH_P);
        HighSpeed {
            low_window,
            b0,
            b1,
            p_coef: P_COEF * (g / g0),
            p_exp: P_EXP + (e - e0),
            cache: (f64::INFINITY, f64::NEG_INFINITY, 0.0),
        }
    }

    /// `(a(w), b(w))` with one logarithm and one exponential.
    #[inline]
    pub fn a_b(&self, w: f64) -> (f64, f64) {
        if w <= self.low_window {
            return (1.0, 0.5);
        }
        let lw = w.ln();
        let b = self.b0 + self.b1 * lw;
        // w²·p(w) = p_coef·w^(2 − p_exp)
        let w2p = self.p_coef * ((2.0 - self.p_exp) * lw).exp();
        (w2p * 2.0 * b / (2.0 - b), b)
    }

    /// Increase per RTT, packets (RFC 3649 §5).
    pub fn a(&self, w: f64) -> f64 {
        self.a_b(w).0
    }

    /// Decrease fraction per loss (RFC 3649 §5).
    pub fn b(&self, w: f64) -> f64 {
        self.a_b(w).1
    }
}

impl Default for HighSpeed {
    fn default() -> Self {
        HighSpeed::new(LOW_WINDOW, HIGH_WINDOW, HIGH_P, HIGH_DECREASE)
    }
}

impl CongestionControl for HighSpeed {
    fn on_ack(&mut self, _ctx: &CcContext, cwnd: f64, acked: f64) -> f64 {
        let (lo, hi, mut a) = self.cache;
        if !(lo..=hi).contains(&cwnd) {
            a = self.a(cwnd);
            self.cache = (cwnd * (1.0 - 1e-4), cwnd * (1.0 + 1e-4), a);
        }
        cwnd + a * acked / cwnd
    }

    fn on_loss(&mut self, _ctx: &CcContext, cwnd: f64, reductions: f64) -> f64 {
        let retained = 1.0 - self.b(cwnd);
        cwnd * super::retained(retained, reductions)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use serde_json::Value;

    /// RFC 3649 Appendix B rows `(w, a(w), b(w))`, transcribed via Linux `tcp_highspeed.c`'s copy
    /// of the table (`{cwnd, md}` rows with `b` in the comment; `a` is the row number, 1-based).
    /// The table lists, for each integer a, the window at which that a applies, and b rounded to
    /// two decimals. So the continuous a(w) of §5 at a listed w agrees with the integer a only up
    /// to that integer rounding (|Δa| ≤ 0.5), and b(w) agrees with the listed b up to two-decimal
    /// rounding (|Δb| ≤ 0.005).
    const APPENDIX_B: &[(f64, f64, f64)] = &[
        (38.0, 1.0, 0.50),
        (118.0, 2.0, 0.44),
        (221.0, 3.0, 0.41),
        (347.0, 4.0, 0.38),
        (495.0, 5.0, 0.37),
        (1058.0, 8.0, 0.33),
        (1529.0, 10.0, 0.31),
        (2699.0, 14.0, 0.28),
        (5036.0, 20.0, 0.25),
        (10661.0, 30.0, 0.21),
        (11358.0, 31.0, 0.20),
        (14424.0, 35.0, 0.19),
        (24402.0, 45.0, 0.16),
        (30975.0, 50.0, 0.15),
        (48961.0, 60.0, 0.13),
        (64851.0, 66.0, 0.11),
        (75401.0, 69.0, 0.10),
        (84035.0, 71.0, 0.10),
    ];

    #[test]
    fn matches_rfc3649_appendix_b() {
        let hs = HighSpeed::default();
        for &(w, a, b) in APPENDIX_B {
            assert!(
                (hs.a(w) - a).abs() <= 0.5,
                "a({w}) = {} vs table {a}",
                hs.a(w)
            );
            assert!(
                (hs.b(w) - b).abs() <= 0.005,
                "b({w}) = {} vs table {b}",
                hs.b(w)
            );
        }
    }

    #[test]
    fn model_reference_check_values() {
        let hs = HighSpeed::default();
        // docs/model.md §3.2: a(14167) = 34.7, b = 0.192. By hand: ln(14167/38) = 5.9212,
        // ln(83000/38) = 7.6890, b = 0.5 − 0.4·5.9212/7.6890 = 0.19197;
        // a = 0.156·14167^0.8·b/(2 − b) = 0.156·2094.22·0.19197/1.80803 = 34.688.
        assert!((hs.a(14167.0) - 34.688).abs() < 0.01, "{}", hs.a(14167.0));
        assert!((hs.b(14167.0) - 0.19197).abs() < 1e-4, "{}", hs.b(14167.0));
        // b(1058) = 0.5 − 0.4·ln(1058/38)/7.6890 = 0.5 − 0.4·3.32656/7.6890 = 0.32695;
        // a(1058) = 0.156·1058^0.8·b/(2 − b) = 0.156·262.778·0.32695/1.67305 = 8.0108.
        assert!((hs.a(1058.0) - 8.0108).abs() < 1e-3, "{}", hs.a(1058.0));
        // At High_Window b = High_Decrease exactly, a = 0.156·83000^0.8·0.1/1.9
        // = 0.156·8615.14·0.052632 = 70.735.
        assert!((hs.b(83000.0) - 0.1).abs() < 1e-12);
        assert!((hs.a(83000.0) - 70.735).abs() < 0.01, "{}", hs.a(83000.0));
    }

    #[test]
    fn standard_tcp_at_and_below_low_window() {
        let mut cc = default_law("highspeed");
        // w ≤ 38: a = 1, b = 0.5 (RFC 3649 §5): 20 + 1/20 = 20.05, 38 → 19.
        assert!((cc.on_ack(&ctx(0.0, 0.1), 20.0, 1.0) - 20.05).abs() < 1e-12);
        assert_eq!(cc.on_loss(&ctx(0.0, 0.1), 38.0, 1.0), 19.0);
        assert_eq!(cc.on_loss(&ctx(0.0, 0.1), 20.0, 2.0), 5.0);
    }

    #[test]
    fn per_ack_and_per_loss_above_low_window() {
        let mut cc = default_law("highspeed");
        // One ACK at w = 1058 adds a(1058)/1058 = 8.0108/1058 = 0.0075717.
        let w = cc.on_ack(&ctx(0.0, 0.1), 1058.0, 1.0);
        assert!((w - 1058.0075717).abs() < 1e-6, "{w}");
        // A fluid step acknowledging 10.58 packets adds a(1058)·10.58/1058 = 8.0108/100 = 0.080108.
        let w = cc.on_ack(&ctx(0.0, 0.1), 1058.0, 10.58);
        assert!((w - 1058.080108).abs() < 1e-5, "{w}");
        // Loss at 1058: (1 − 0.326945)·1058 = 712.092; two reductions: ·0.673055² → 479.277.
        assert!((cc.on_loss(&ctx(0.0, 0.1), 1058.0, 1.0) - 712.092).abs() < 0.01);
        assert!((cc.on_loss(&ctx(0.0, 0.1), 1058.0, 2.0) - 479.277).abs() < 0.01);
        // Loss at High_Window: 0.9·83000 = 74700.
        assert!((cc.on_loss(&ctx(0.0, 0.1), 83000.0, 1.0) - 74700.0).abs() < 1e-6);
    }

    #[test]
    fn parameters_move_the_law_as_the_rfc_line_does() {
        let d = HighSpeed::default();
        // Doubling High_P doubles p(High_Window) (the line still passes through
        // (High_Window, High_P)), hence doubles a(High_Window); b is unchanged.
        let hp = HighSpeed::new(LOW_WINDOW, HIGH_WINDOW, 2e-7, HIGH_DECREASE);
        assert!((hp.a(83000.0) / d.a(83000.0) - 2.0).abs() < 1e-9);
        assert_eq!(hp.b(83000.0), d.b(83000.0));
        // High_Decrease sets b(High_Window); b stays 0.5 at Low_Window.
        let mut hd = law_with("highspeed", &[("high_decrease", Value::from(0.2))]);
        // Loss at 83000 with b = 0.2: 0.8·83000 = 66400.
        assert!((hd.on_loss(&ctx(0.0, 0.1), 83000.0, 1.0) - 66400.0).abs() < 1e-6);
        let lw = HighSpeed::new(20.0, HIGH_WINDOW, HIGH_P, HIGH_DECREASE);
        assert_eq!(lw.a_b(20.0), (1.0, 0.5));
        assert!((lw.b(20.0 + 1e-9) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn parameter_ranges_are_checked() {
        let mut p = std::collections::BTreeMap::new();
        p.insert("high_decrease".to_string(), Value::from(0.6));
        assert!(super::super::build("highspeed", &p, "cc").is_err());
        let mut p = std::collections::BTreeMap::new();
        p.insert("high_p".to_string(), Value::from(1e-3));
        assert!(super::super::build("highspeed", &p, "cc").is_err());
    }

    #[test]
    fn cached_increase_stays_within_its_tolerance() {
        // 200,000 fluid-sized ACK batches from 1,000 packets, against the exact law.
        let mut cached = HighSpeed::default();
        let exact = HighSpeed::default();
        let c = ctx(0.0, 0.1);
        let (mut w, mut w_exact) = (1000.0, 1000.0);
        for _ in 0..200_000 {
            w = cached.on_ack(&c, w, 0.5);
            w_exact += exact.a(w_exact) * 0.5 / w_exact;
        }
        // Each increment is off by at most 1e-4 relative, so the growth is too.
        assert!(
            (w - w_exact).abs() <= 1e-4 * (w_exact - 1000.0),
            "{w} vs {w_exact}"
        );
        assert!(w_exact > 1100.0);
    }
}
