//! Quantities with units, as written in scenario files: `"10Gbps"`, `"170ms"`, `"64KiB"`.
//! A bare number is taken in the base unit (bits/s, seconds, bytes).

use serde::de::{self, Deserializer, Visitor};
use std::fmt;

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == 'e' && i > 0
                || c == '-'
                || c == '+'
                || c == '_')
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // "1e" followed by a unit letter is not an exponent: back off to the last digit.
    let (mut num, mut unit) = s.split_at(end);
    if num.ends_with('e') {
        num = &num[..num.len() - 1];
        unit = &s[num.len()..];
    }
    let value: f64 = num.replace('_', "").parse().ok()?;
    Some((value, unit.trim()))
}

/// Parses a data rate into bits per second. Bits are written with a lower-case `b`, bytes with an
/// upper-case `B`, as iperf and ns-3 write them: `"10Gbps"`, `"1.5 Gb/s"`, `"622Mbit/s"`, `"100kbps"`
/// are bits; `"10GBps"`, `"10 MB/s"`, `"1 GiB/s"` are bytes (× 8). Prefixes: k or K (10^3), M
/// (10^6), G (10^9), T (10^12), and Ki, Mi, Gi, Ti (2^10, ...). A lower-case `m` is refused
/// (milli, or a mistyped mega?), as is any unit that names neither bits nor bytes.
pub fn parse_rate_bps(s: &str) -> Result<f64, String> {
    let (v, unit) = split_number(s).ok_or_else(|| format!("cannot read a rate from {s:?}"))?;
    let help = "use bps, kbps, Mbps, Gbps, Tbps (bits) or Bps, kBps, MBps, GBps (bytes), \
                optionally written b/s, B/s, bit/s, byte/s";
    if unit.is_empty() {
        return Ok(v);
    }
    let per_second = ["ps", "/s", "it/s", "its/s", "yte/s", "ytes/s", ""]
        .iter()
        .filter_map(|suffix| unit.strip_suffix(suffix))
        .find_map(|rest| {
            let (prefix, bits) = match rest.chars().last()? {
                'b' => (&rest[..rest.len() - 1], 1.0),
                'B' => (&rest[..rest.len() - 1], 8.0),
                _ => return None,
            };
            Some((prefix, bits))
        });
    let Some((prefix, bits)) = per_second else {
        return Err(format!("unknown rate unit {unit:?} ({help})"));
    };
    let scale = match prefix {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" | "g" => 1e9,
        "T" | "t" => 1e12,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024.0f64.powi(4),
        "m" => {
            return Err(format!(
                "rate unit {unit:?}: a lower-case m means milli; write M for mega ({help})"
            ))
        }
        _ => return Err(format!("unknown rate unit {unit:?} ({help})")),
    };
    Ok(v * scale * bits)
}

/// Parses a duration in seconds: `"170ms"`, `"3000s"`, `"10us"`, `"2min"`.
pub fn parse_time_s(s: &str) -> Result<f64, String> {
    let (v, unit) = split_number(s).ok_or_else(|| format!("cannot read a time from {s:?}"))?;
    let scale = match unit {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "ps" => 1e-12,
        "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "unknown time unit {unit:?} (use s, ms, us, ns, min, h)"
            ))
        }
    };
    Ok(v * scale)
}

/// Parses a size in bytes: `"1500B"`, `"200KB"` (10^3), `"64KiB"` (2^10), `"1MB"`.
pub fn parse_bytes(s: &str) -> Result<f64, String> {
    let (v, unit) = split_number(s).ok_or_else(|| format!("cannot read a size from {s:?}"))?;
    let scale = match unit {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "unknown size unit {unit:?} (use B, KB, MB, GB, KiB, MiB, GiB)"
            ))
        }
    };
    Ok(v * scale)
}

/// A number as people write it, for messages: `1e300`, `65535`, `0.1`, `1e-6`, `1.84467e19`
/// (not 300 digits; at most 6 significant digits in exponent form).
pub fn short(x: f64) -> String {
    if x.is_finite() && x != 0.0 && !(1e-3..1e6).contains(&x.abs()) {
        let exact = format!("{x:e}");
        if exact.len() <= 10 {
            return exact;
        }
        let rounded = format!("{x:.5e}");
        let (mantissa, exponent) = rounded.split_once('e').unwrap_or((&rounded, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        format!("{mantissa}e{exponent}")
    } else {
        format!("{x}")
    }
}

macro_rules! unit_type {
    ($name:ident, $parse:ident, $what:literal) => {
        #[doc = concat!("A ", $what, " read from a number (base unit) or a string with a unit.")]
        #[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(pub f64);

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "a {} (a number or a string with a unit)", $what)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Ok($name(v))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Ok($name(v as f64))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        Ok($name(v as f64))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $parse(v).map($name).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(Rate, parse_rate_bps, "rate in bits/s");
unit_type!(Time, parse_time_s, "time in seconds");
unit_type!(Bytes, parse_bytes, "size in bytes");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate_bps("10Gbps").unwrap(), 10e9);
        assert_eq!(parse_rate_bps("622Mbps").unwrap(), 622e6);
        assert_eq!(parse_rate_bps("1.5 Gb/s").unwrap(), 1.5e9);
        assert_eq!(parse_rate_bps("1e9").unwrap(), 1e9);
        assert_eq!(parse_rate_bps("622Mbit/s").unwrap(), 622e6);
        assert_eq!(parse_rate_bps("100kbps").unwrap(), 100e3);
        assert!(parse_rate_bps("10 furlongs").is_err());
    }

    /// iperf's convention: B is a byte, b a bit (`iperf3 -f`: "Kbits", "KBytes").
    #[test]
    fn bytes_per_second_are_bytes() {
        assert_eq!(parse_rate_bps("10GBps").unwrap(), 80e9);
        assert_eq!(parse_rate_bps("10 MB/s").unwrap(), 80e6);
        assert_eq!(
            parse_rate_bps("1 GiB/s").unwrap(),
            8.0 * 1024.0 * 1024.0 * 1024.0
        );
        assert_eq!(parse_rate_bps("5 MByte/s").unwrap(), 40e6);
        assert_eq!(parse_rate_bps("125 kB/s").unwrap(), 1e6);
        // Ambiguous or unknown: refused, not guessed.
        for bad in ["10mbps", "10 Mfoo", "10 M", "10 Gbpss", "10 /s"] {
            assert!(parse_rate_bps(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn numbers_in_messages_are_short() {
        assert_eq!(short(1e300), "1e300");
        assert_eq!(short(65535.0), "65535");
        assert_eq!(short(0.1), "0.1");
        assert_eq!(short(1e-6), "1e-6");
        assert_eq!(short(18_446_744_073_709_551_616.0), "1.84467e19");
        assert_eq!(short(f64::NAN), "NaN");
    }

    #[test]
    fn times_and_sizes() {
        assert!((parse_time_s("170ms").unwrap() - 0.17).abs() < 1e-15);
        assert_eq!(parse_time_s("3000s").unwrap(), 3000.0);
        assert_eq!(parse_time_s("2min").unwrap(), 120.0);
        assert_eq!(parse_bytes("64KiB").unwrap(), 65536.0);
        assert_eq!(parse_bytes("200KB").unwrap(), 200_000.0);
        assert!(parse_time_s("").is_err());
    }
}
