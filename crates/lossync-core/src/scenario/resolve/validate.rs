//! The generic field checkers of resolution: each takes a value and its field path, and
//! refuses it with an error naming that field.

use crate::error::{Error, Result};
use crate::scenario::limits::*;
use crate::units::short;

pub(super) fn positive(field: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(Error::field(
            field,
            format!("must be a positive number, got {v}"),
        ))
    }
}

pub(super) fn non_negative(field: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(Error::field(
            field,
            format!("must be a number ≥ 0, got {v}"),
        ))
    }
}

pub(super) fn probability(field: &str, v: f64) -> Result<f64> {
    if v.is_finite() && (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(Error::field(
            field,
            format!("must be a probability in [0, 1], got {v}"),
        ))
    }
}

/// A number in `[lo, hi]`, refused otherwise with the range and `why` it is that.
pub(super) fn in_range(field: &str, v: f64, (lo, hi): (f64, f64), why: &str) -> Result<f64> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(out_of_range(field, v, "[", (lo, hi), why))
    }
}

/// A positive number up to `hi`, refused otherwise with the range `(0, hi]` and `why`.
pub(super) fn up_to(field: &str, v: f64, hi: f64, why: &str) -> Result<f64> {
    positive(field, v)?;
    if v <= hi {
        Ok(v)
    } else {
        Err(out_of_range(field, v, "(", (0.0, hi), why))
    }
}

fn out_of_range(field: &str, v: f64, open: &str, (lo, hi): (f64, f64), why: &str) -> Error {
    // A value just past a bound is written in full, not rounded onto it ("1e7 is out of range:
    // must be in [0, 1e7]" said 10000001).
    let (lo_s, hi_s) = (short(lo), short(hi));
    let v_s = match short(v) {
        s if s == lo_s || s == hi_s => format!("{v}"),
        s => s,
    };
    Error::field(
        field,
        format!("{v_s} is out of range: must be in {open}{lo_s}, {hi_s}] ({why})"),
    )
}

/// A rate in bits/s within [`RATE_BPS`].
pub(super) fn rate(field: &str, bps: f64) -> Result<f64> {
    positive(field, bps)?;
    in_range(field, bps, RATE_BPS, "bits/s: at most 1 Pb/s")
}

pub(super) const RTT_WHY: &str =
    "seconds: from 1 µs to the 60 s upper bound of TCP's retransmission timer";

/// A window in packets, in (0, [`MAX_WINDOW_BYTES`] / packet size].
pub(super) fn window(field: &str, pkts: f64, packet_size: f64) -> Result<f64> {
    up_to(
        field,
        pkts,
        MAX_WINDOW_BYTES / packet_size,
        "packets: TCP's largest window is 65535·2^14 bytes, RFC 7323",
    )
}

/// A base RTT within [`RTT_S`].
pub(super) fn rtt(field: &str, v: f64) -> Result<f64> {
    in_range(field, positive(field, v)?, RTT_S, RTT_WHY)
}

/// A start time, within the longest run.
pub(super) fn start_time(field: &str, t: f64) -> Result<f64> {
    in_range(
        field,
        non_negative(field, t)?,
        (0.0, MAX_DURATION_S),
        "seconds: the longest run",
    )
}
