//! How long packets waited in a queue: a histogram of sojourn times with log-spaced bins, kept by
//! a packet-level engine per port as raw counts, read here into a mean and quantiles.
//!
//! Bins: exact below 32 ps; above, 16 per octave (the value's top five bits), so a quantile is
//! known to within 1/32 of its value, from 1 ps to the longest run, in 976 counters.

use serde::{Deserialize, Serialize};

const EXACT: u64 = 32;
const SUB: u64 = 16;
/// Bins up to 2^64 ps.
pub const BINS: usize = (EXACT + (64 - 5) * SUB) as usize;

/// Sojourn times in picoseconds: counts per bin and their exact sum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SojournHistogram {
    pub count: u64,
    pub sum_ps: u128,
    /// Non-empty bins only when serialized (`[index, count]` pairs).
    #[serde(with = "sparse")]
    bins: Vec<u64>,
}

impl Default for SojournHistogram {
    fn default() -> Self {
        SojournHistogram {
            count: 0,
            sum_ps: 0,
            bins: vec![0; BINS],
        }
    }
}

/// The bin of a sojourn of `ps` picoseconds.
pub fn bin_of(ps: u64) -> usize {
    if ps < EXACT {
        return ps as usize;
    }
    let e = 63 - ps.leading_zeros() as u64; // ≥ 5
    let sub = (ps >> (e - 4)) & (SUB - 1);
    (EXACT + (e - 5) * SUB + sub) as usize
}

/// The middle of bin `i`, in picoseconds.
fn mid_ps(i: usize) -> f64 {
    let i = i as u64;
    if i < EXACT {
        return i as f64;
    }
    let e = (i - EXACT) / SUB + 5;
    let sub = (i - EXACT) % SUB;
    let width = 1u64 << (e - 4);
    ((SUB + sub) * width) as f64 + width as f64 / 2.0
}

impl SojournHistogram {
    #[inline]
    pub fn record(&mut self, ps: u64) {
        self.count += 1;
        self.sum_ps += ps as u128;
        self.bins[bin_of(ps)] += 1;
    }

    pub fn clear(&mut self) {
        self.count = 0;
        self.sum_ps = 0;
        self.bins.fill(0);
    }

    /// Adds a sojourn of `s` seconds (engines that measure in seconds: ns-3, the kernel).
    pub fn record_s(&mut self, s: f64) {
        self.record((s.max(0.0) * 1e12).round() as u64);
    }

    /// Mean sojourn in seconds (NaN without packets).
    pub fn mean_s(&self) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        self.sum_ps as f64 / self.count as f64 * 1e-12
    }

    /// The `q`-quantile in seconds (NaN without packets): the middle of the bin holding the
    /// ⌈q·n⌉-th smallest sojourn.
    pub fn quantile_s(&self, q: f64) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &n) in self.bins.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return mid_ps(i) * 1e-12;
            }
        }
        unreachable!("the bins add up to the count")
    }
}

mod sparse {
    use super::BINS;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(bins: &[u64], s: S) -> Result<S::Ok, S::Error> {
        let pairs: Vec<(usize, u64)> = bins
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (i, n))
            .collect();
        pairs.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
        let pairs = Vec::<(usize, u64)>::deserialize(d)?;
        let mut bins = vec![0; BINS];
        for (i, n) in pairs {
            let slot = bins
                .get_mut(i)
                .ok_or_else(|| serde::de::Error::custom(format!("bin {i} is beyond {BINS}")))?;
            *slot += n;
        }
        Ok(bins)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_exact_below_32_and_within_a_32nd_above() {
        for ps in 0..32 {
            assert_eq!(mid_ps(bin_of(ps)), ps as f64);
        }
        for ps in [32u64, 33, 100, 5_000_000_000, 1 << 40, u64::MAX] {
            let m = mid_ps(bin_of(ps));
            assert!((m - ps as f64).abs() <= ps as f64 / 32.0, "{ps} → {m}");
        }
        assert_eq!(bin_of(u64::MAX), BINS - 1);
    }

    #[test]
    fn mean_is_exact_and_quantiles_rank_the_samples() {
        // 1..=100 ms: mean 50.5 ms, median 50 ms, p99 99 ms.
        let mut h = SojournHistogram::default();
        for ms in 1..=100u64 {
            h.record(ms * 1_000_000_000);
        }
        assert!((h.mean_s() - 0.0505).abs() < 1e-15);
        assert!((h.quantile_s(0.5) - 0.050).abs() < 0.050 / 32.0);
        assert!((h.quantile_s(0.99) - 0.099).abs() < 0.099 / 32.0);
        let back: SojournHistogram =
            serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
        assert_eq!(back, h);
        assert!(SojournHistogram::default().mean_s().is_nan());
    }
}
