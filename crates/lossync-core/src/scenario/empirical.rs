//! The empirical distribution of m_k (`loss.sync = { kind = "empirical", file = ... }`): a CSV
//! file, the form `--sync-out` writes.

use crate::error::{Error, Result};
use std::path::Path;

/// Reads an empirical distribution of m_k: a CSV with a header naming `m` and `probability`
/// (or `count`). Probabilities are normalised. This is the form `--sync-out` writes.
/// `field` names the scenario field the file came from, in errors.
pub fn read_m_distribution(path: &Path, field: &str) -> Result<Vec<(usize, f64)>> {
    let text = super::limits::read_input_file(field, path)?;
    let bad =
        |line: usize, why: &str| Error::field(field, format!("{}:{line}: {why}", path.display()));
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let (_, header) = lines.next().ok_or_else(|| bad(1, "empty file"))?;
    let cols: Vec<String> = header
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    let mi = cols
        .iter()
        .position(|c| c == "m")
        .ok_or_else(|| bad(1, "no `m` column"))?;
    let pi = cols
        .iter()
        .position(|c| c == "probability" || c == "count")
        .ok_or_else(|| bad(1, "no `probability` or `count` column"))?;
    let mut out: Vec<(usize, f64)> = Vec::new();
    for (i, line) in lines {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let m: usize = cells
            .get(mi)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| bad(i + 1, "m must be a whole number ≥ 1"))?;
        let p: f64 = cells
            .get(pi)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| bad(i + 1, "weight must be a number"))?;
        if m == 0 || !(p.is_finite() && p >= 0.0) {
            return Err(bad(i + 1, "m must be ≥ 1 and the weight ≥ 0"));
        }
        out.push((m, p));
    }
    let total: f64 = out.iter().map(|&(_, p)| p).sum();
    if total <= 0.0 {
        return Err(bad(1, "the weights add up to zero"));
    }
    for (_, p) in &mut out {
        *p /= total;
    }
    Ok(out)
}
