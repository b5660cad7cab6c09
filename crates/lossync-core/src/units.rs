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

/// A decimal or binary prefix, case-insensitive as iperf (`-b 10g`) and tc (`rate 10gbit`) take it:
/// k, M, G, T (10^3 ...) and Ki, Mi, Gi, Ti (2^10 ...). Returns the factor and the rest of the unit.
fn split_prefix(unit: &str) -> (f64, &str) {
    let lower = unit.to_ascii_lowercase();
    for (p, f) in [
        ("ki", 1024.0),
        ("mi", 1024.0 * 1024.0),
        ("gi", 1024.0 * 1024.0 * 1024.0),
        ("ti", 1024.0f64.powi(4)),
    ] {
        // "mi" before "min" (a time, never a rate or size) is still Mi: the caller refuses "n".
        if lower.starts_with(p) {
            return (f, &unit[2..]);
        }
    }
    for (p, f) in [("k", 1e3), ("m", 1e6), ("g", 1e9), ("t", 1e12)] {
        if lower.starts_with(p) {
            return (f, &unit[1..]);
        }
    }
    (1.0, unit)
}

/// What a unit counts, after its prefix: bits, bytes, or nothing written (a bare prefix).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Quantity {
    Bits,
    Bytes,
    Bare,
}

/// Splits the quantity from the rest (`"bit/s"` -> bits, `"/s"`). The words are case-insensitive
/// (`bit`, `Bits`, `byte`, `MByte`); a single letter is a bit when lower-case and a byte when
/// upper-case (`Mb`, `MB`), iperf's and ns-3's convention.
fn split_quantity(rest: &str) -> Option<(Quantity, &str)> {
    let lower = rest.to_ascii_lowercase();
    for (word, q) in [
        ("bytes", Quantity::Bytes),
        ("byte", Quantity::Bytes),
        ("bits", Quantity::Bits),
        ("bit", Quantity::Bits),
    ] {
        if lower.starts_with(word) {
            return Some((q, &rest[word.len()..]));
        }
    }
    match rest.chars().next() {
        Some('b') => Some((Quantity::Bits, &rest[1..])),
        Some('B') => Some((Quantity::Bytes, &rest[1..])),
        None => Some((Quantity::Bare, "")),
        Some(_) => None,
    }
}

const RATE_HELP: &str = "bits: 10G, 10Gbit, 10gbps, 10Gb/s, 100mbit, 1.5Mbps (iperf, tc's \
     mbit/gbit); bytes: a capital B or the word byte, 10GB/s, 10GBps, 10GByte/s, 1GiB/s";

/// Parses a data rate into bits per second, as iperf, tc and ns-3 users write it.
///
/// Prefixes are case-insensitive: k, M, G, T (10^3, 10^6, 10^9, 10^12) and Ki, Mi, Gi, Ti (2^10,
/// ...). Bits: a bare prefix (`10G`, `100M`: iperf's `-b`), `bit`/`bits` in any case (`10Gbit`,
/// tc's `100mbit`), a lower-case `b` (`10Gb/s`), and `bps` in any case but all capitals (`10Gbps`,
/// `10gbps`, `1.5Mbps`). Bytes (× 8): the word `byte`/`bytes` in any case (`5MByte/s`) or a
/// capital `B` (`10GB/s`, `10GBps`, `1GiB/s`). A per-second suffix (`/s`, `/sec`, `ps`) is optional.
///
/// tc reads `bps`, `kbps`, `mbps` as BYTES per second; lossync does not: `bps` and its prefixed
/// forms are bits per second, as in iperf, ns-3 and networking writing generally (tc users write
/// `mbit`, which means the same here as in tc). All-capital `BPS` (`10GBPS`: bytes by its `B`,
/// bits by habit) is refused as ambiguous, as is any unit that is neither bits nor bytes.
pub fn parse_rate_bps(s: &str) -> Result<f64, String> {
    let (v, unit) = split_number(s).ok_or_else(|| format!("cannot read a rate from {s:?}"))?;
    if unit.is_empty() {
        return Ok(v);
    }
    let unknown = || format!("unknown rate unit {unit:?} ({RATE_HELP})");
    let (scale, rest) = split_prefix(unit);
    let (quantity, per) = split_quantity(rest).ok_or_else(unknown)?;
    if quantity == Quantity::Bare && scale == 1.0 {
        return Err(unknown());
    }
    if !["", "/s", "/sec", "ps"]
        .iter()
        .any(|p| per.eq_ignore_ascii_case(p))
    {
        return Err(unknown());
    }
    if rest == "BPS" {
        return Err(format!(
            "rate unit {unit:?} is ambiguous (bytes by its capital B, bits as often meant): \
             write {p}bps or {p}bit/s for bits, {p}B/s or {p}Byte/s for bytes",
            p = &unit[..unit.len() - rest.len()]
        ));
    }
    let bits = if quantity == Quantity::Bytes {
        8.0
    } else {
        1.0
    };
    Ok(v * scale * bits)
}

/// Parses a duration in seconds, in any case: `"170ms"`, `"3000s"`, `"10us"` (or `µs`),
/// `"2min"`, `"1h"`, and tc's `sec`, `msec`, `usec`. A bare `m` (minutes? milli?) is refused.
pub fn parse_time_s(s: &str) -> Result<f64, String> {
    let (v, unit) = split_number(s).ok_or_else(|| format!("cannot read a time from {s:?}"))?;
    let lower = unit.to_lowercase();
    let scale = match lower.as_str() {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "ms" | "msec" | "msecs" => 1e-3,
        "us" | "usec" | "usecs" | "µs" | "μs" => 1e-6,
        "ns" | "nsec" | "nsecs" => 1e-9,
        "ps" => 1e-12,
        "min" | "mins" | "minute" | "minutes" => 60.0,
        "h" | "hr" | "hour" | "hours" => 3600.0,
        "m" => {
            return Err(format!(
                "time unit {unit:?} is ambiguous: write min for minutes or ms for milliseconds"
            ))
        }
        _ => {
            return Err(format!(
                "unknown time unit {unit:?} (use s, ms, us, ns, min, h; or sec, msec, usec)"
            ))
        }
    };
    Ok(v * scale)
}

/// Parses a size in bytes: `"1500B"`, `"200KB"` (10^3), `"64KiB"` (2^10), `"1MB"`, `"1 MByte"`;
/// prefixes in any case (`1mB`, `1 mbyte`). A lower-case b (`Mb`: bits to iperf, bytes to tc), bits
/// (`Mbit`) and a bare prefix (`64K`: 10^3 or 2^10 bytes?) are refused, not guessed.
pub fn parse_bytes(s: &str) -> Result<f64, String> {
    let (v, unit) = split_number(s).ok_or_else(|| format!("cannot read a size from {s:?}"))?;
    if unit.is_empty() {
        return Ok(v);
    }
    let help = "use B, KB, MB, GB, KiB, MiB, GiB, or the word byte: MByte";
    let (scale, rest) = split_prefix(unit);
    match split_quantity(rest) {
        Some((Quantity::Bytes, "")) => Ok(v * scale),
        // tc reads `kb` and `mb` as bytes, iperf as bits: refused either way.
        Some((Quantity::Bits, "")) => Err(format!(
            "size unit {unit:?}: a lower-case b or bit is a bit (to tc, kb and mb are bytes); \
             a size is in bytes: write {p}B ({help})",
            p = &unit[..unit.len() - rest.len()]
        )),
        Some((Quantity::Bare, _)) if scale != 1.0 => {
            let p = &unit[..unit.len() - rest.len()];
            let decimal = p.trim_end_matches(['i', 'I']).to_ascii_uppercase();
            Err(format!(
                "size unit {unit:?} is ambiguous: write {decimal}B (10^3 steps) or {decimal}iB (2^10 steps)"
            ))
        }
        _ => Err(format!("unknown size unit {unit:?} ({help})")),
    }
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

    /// Every accepted spelling against its value worked out by hand.
    fn rate(s: &str) -> f64 {
        parse_rate_bps(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn rates_in_bits_as_iperf_and_tc_write_them() {
        let cases: &[(&str, f64)] = &[
            // iperf -b: a bare prefix is bits.
            ("10G", 10e9),
            ("10g", 10e9),
            ("100M", 100e6),
            ("100m", 100e6),
            ("64k", 64e3),
            ("64K", 64e3),
            ("2T", 2e12),
            // tc and iperf's own output: bit, bits, in any case.
            ("10Gbit", 10e9),
            ("10gbit", 10e9),
            ("10GBit", 10e9),
            ("10GBIT", 10e9),
            ("100mbit", 100e6),
            ("100Mbit", 100e6),
            ("512kbit", 512e3),
            ("1tbit", 1e12),
            ("1000bit", 1000.0),
            ("10 Gbits", 10e9),
            ("622Mbit/s", 622e6),
            ("10 Gbits/s", 10e9),
            ("10 Gbit/sec", 10e9),
            // bps in any case but all capitals: bits (iperf, ns-3, networking writing).
            ("10Gbps", 10e9),
            ("10gbps", 10e9),
            ("10mbps", 10e6),
            ("1.5Mbps", 1.5e6),
            ("100kbps", 100e3),
            ("100Kbps", 100e3),
            ("1Tbps", 1e12),
            ("9600bps", 9600.0),
            // A lower-case b: bits.
            ("10Gb/s", 10e9),
            ("1.5 Gb/s", 1.5e9),
            ("10Gb", 10e9),
            ("10gb/s", 10e9),
            // Binary prefixes (tc's kibit, mibit; ns-3's Mib/s).
            ("1Kibit", 1024.0),
            ("1kibit", 1024.0),
            ("2mibit", 2.0 * 1048576.0),
            ("1Mib/s", 1048576.0),
            ("1Gibps", 1073741824.0),
            ("1Gi", 1073741824.0),
            // A bare number: bits per second.
            ("1e9", 1e9),
            ("2_500_000", 2.5e6),
        ];
        for &(s, want) in cases {
            assert_eq!(rate(s), want, "{s}");
        }
    }

    /// A capital B or the word byte: bytes (× 8), iperf's convention (`iperf3 -f`: "Kbits",
    /// "KBytes") and ns-3's (`Bps`, `KBps`).
    #[test]
    fn rates_in_bytes() {
        let cases: &[(&str, f64)] = &[
            ("10GBps", 80e9),
            ("10gBps", 80e9),
            ("10 MB/s", 80e6),
            ("10MB", 80e6),
            ("125 kB/s", 1e6),
            ("125 KB/s", 1e6),
            ("1 GiB/s", 8.0 * 1073741824.0),
            ("1 KiBps", 8.0 * 1024.0),
            ("5 MByte/s", 40e6),
            ("5 Mbyte/s", 40e6),
            ("5 mbytes/s", 40e6),
            ("5 MBYTES/S", 40e6),
            ("100Bps", 800.0),
            ("100 B/s", 800.0),
            ("100 bytes/sec", 800.0),
        ];
        for &(s, want) in cases {
            assert_eq!(rate(s), want, "{s}");
        }
    }

    /// Ambiguous or unknown: refused, not guessed; the message names the unit.
    #[test]
    fn rates_refused() {
        for bad in [
            "10 furlongs",
            "10 Mfoo",
            "10 Gbpss",
            "10 /s",
            "10 G/s",
            "10 Gps",
            "10 s",
            "10 ms",
            "10 x",
            "10GBPS",
            "10 MBPS",
            "10BPS",
        ] {
            let e = parse_rate_bps(bad).expect_err(bad);
            let unit = bad.trim_start_matches(|c: char| c.is_ascii_digit() || c == ' ');
            assert!(e.contains(&format!("{unit:?}")), "{bad}: {e}");
        }
        assert!(parse_rate_bps("10GBPS").unwrap_err().contains("ambiguous"));
        assert!(parse_rate_bps("10GBPS").unwrap_err().contains("Gbps"));
        assert!(parse_rate_bps("").is_err());
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
    fn times() {
        let ms = |x: f64| x * 1e-3;
        let cases: &[(&str, f64)] = &[
            ("170ms", ms(170.0)),
            ("170MS", ms(170.0)),
            ("170 msec", ms(170.0)),
            ("3000s", 3000.0),
            ("3000S", 3000.0),
            ("3000 sec", 3000.0),
            ("3000 secs", 3000.0),
            ("3000 seconds", 3000.0),
            ("3000", 3000.0),
            ("10us", 10e-6),
            ("10usec", 10e-6),
            ("10µs", 10e-6),
            ("10μs", 10e-6),
            ("5ns", 5e-9),
            ("5nsec", 5e-9),
            ("7ps", 7e-12),
            ("2min", 120.0),
            ("2 mins", 120.0),
            ("2 Minutes", 120.0),
            ("1h", 3600.0),
            ("1 hour", 3600.0),
            ("1.5hr", 5400.0),
        ];
        for &(s, want) in cases {
            let got = parse_time_s(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert!(
                (got - want).abs() <= 1e-15 * want.abs(),
                "{s}: {got} != {want}"
            );
        }
        assert!(parse_time_s("").is_err());
        assert!(parse_time_s("10m").unwrap_err().contains("ambiguous"));
        assert!(parse_time_s("10 fortnights")
            .unwrap_err()
            .contains("\"fortnights\""));
    }

    #[test]
    fn sizes() {
        let cases: &[(&str, f64)] = &[
            ("1500", 1500.0),
            ("1500B", 1500.0),
            ("1500 bytes", 1500.0),
            ("1 byte", 1.0),
            ("200KB", 200e3),
            ("200kB", 200e3),
            ("1MB", 1e6),
            ("1mB", 1e6),
            ("1 MByte", 1e6),
            ("1 mbytes", 1e6),
            ("2GB", 2e9),
            ("1TB", 1e12),
            ("64KiB", 65536.0),
            ("1MiB", 1048576.0),
            ("1GiB", 1073741824.0),
            ("1 KiByte", 1024.0),
        ];
        for &(s, want) in cases {
            assert_eq!(
                parse_bytes(s).unwrap_or_else(|e| panic!("{s}: {e}")),
                want,
                "{s}"
            );
        }
        // Bits in a size, a bare prefix (10^3 or 2^10?), a rate: refused, naming the unit.
        for bad in [
            "1Mb", "1mb", "64kib", "1 Mbit", "64K", "64k", "1Mi", "1 MB/s", "1 parsec",
        ] {
            let e = parse_bytes(bad).expect_err(bad);
            let unit = bad.trim_start_matches(|c: char| c.is_ascii_digit() || c == ' ');
            assert!(e.contains(&format!("{unit:?}")), "{bad}: {e}");
        }
        assert!(parse_bytes("64K").unwrap_err().contains("KB"));
        assert!(parse_bytes("64K").unwrap_err().contains("KiB"));
        assert!(parse_bytes("1Mb").unwrap_err().contains("write MB"));
    }
}
