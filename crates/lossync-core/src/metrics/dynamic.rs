//! Dynamic traffic's metrics: flow completion times (FCT) overall and by size class, the
//! measured arrival rate, the mean number of active flows and the goodput of finished flows.
//! Computed from [`ArrivalRecord`]s, [`CompletionRecord`]s and the `active_flows.<group>` series.

use super::mean_std;
use super::records::{ArrivalRecord, CompletionRecord};
use crate::scenario::Scenario;
use serde::Serialize;

/// Size classes of the FCT statistics, in bytes: short (< 100 KB), medium (100 KB – 1 MB) and
/// long (≥ 1 MB) flows, the split of the flow-completion-time literature (Dukkipati & McKeown,
/// "Why flow-completion time is the right metric for congestion control", CCR 2006; pFabric,
/// Alizadeh et al., SIGCOMM 2013, uses the same 100 KB and 1 MB bounds).
pub const SIZE_CLASSES: [(&str, f64, f64); 3] = [
    ("<100KB", 0.0, 1e5),
    ("100KB-1MB", 1e5, 1e6),
    (">=1MB", 1e6, f64::INFINITY),
];

/// FCT statistics of a set of flows (NaN when there are none).
#[derive(Debug, Clone, Serialize)]
pub struct FctSummary {
    pub class: String,
    pub flows: usize,
    pub fct_mean_s: f64,
    pub fct_p50_s: f64,
    pub fct_p90_s: f64,
    pub fct_p99_s: f64,
}

/// A dynamic group's summary. Arrival counts cover the whole run; FCTs and goodput cover the
/// flows that arrived in the measurement window and finished.
#[derive(Debug, Clone, Serialize)]
pub struct DynamicSummary {
    pub group: String,
    pub rate_per_s: f64,
    pub arrivals: u64,
    /// Arrivals over the run's duration.
    pub arrival_rate_per_s: f64,
    pub refused: u64,
    pub completed: u64,
    pub active_end: u64,
    /// Mean of the `active_flows.<group>` samples in the measurement window.
    pub active_mean: f64,
    /// Sizes of the finished flows of the window, summed, over the window, in bits/s.
    pub goodput_bps: f64,
    /// Mean of size/FCT over those flows, in bits/s, and its sample variance (n − 1, as
    /// pandas' `var`; NaN under two flows), in (bits/s)²: seed 002's per-transfer throughput
    /// and its spread.
    pub flow_goodput_mean_bps: f64,
    pub flow_goodput_var_bps2: f64,
    /// All finished flows of the window, then one entry per [`SIZE_CLASSES`] class.
    pub fct: Vec<FctSummary>,
}

/// Quantile `q` of sorted values by linear interpolation between order statistics (Hyndman &
/// Fan 1996, definition 7: numpy's and pandas' default), NaN for none.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n => {
            let h = q * (n - 1) as f64;
            let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
            sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
        }
    }
}

fn fct_summary(class: &str, flows: &[&CompletionRecord]) -> FctSummary {
    let mut f: Vec<f64> = flows.iter().map(|c| c.fct_s).collect();
    f.sort_by(f64::total_cmp);
    let mean = if f.is_empty() {
        f64::NAN
    } else {
        f.iter().sum::<f64>() / f.len() as f64
    };
    FctSummary {
        class: class.to_string(),
        flows: f.len(),
        fct_mean_s: mean,
        fct_p50_s: quantile(&f, 0.5),
        fct_p90_s: quantile(&f, 0.9),
        fct_p99_s: quantile(&f, 0.99),
    }
}

/// One summary per dynamic group. `active` is the group's `active_flows` column and `times`
/// the series' `time_s`.
pub fn summarize_dynamic(
    sc: &Scenario,
    arrivals: &[ArrivalRecord],
    completions: &[CompletionRecord],
    series: &super::Series,
    (measured_from_s, duration_s, span_s): (f64, f64, f64),
) -> Vec<DynamicSummary> {
    let times = series.get("time_s").unwrap_or(&[]);
    arrivals
        .iter()
        .map(|a| {
            let spec = sc
                .flows
                .iter()
                .find(|f| f.group == a.group)
                .expect("a dynamic group has flows");
            let rate_per_s = spec.arrivals.map_or(f64::NAN, |x| x.rate_per_s);
            let window: Vec<&CompletionRecord> = completions
                .iter()
                .filter(|c| c.group == a.group && c.start_s >= measured_from_s)
                .collect();
            let mut fct = vec![fct_summary("all", &window)];
            for (name, lo, hi) in SIZE_CLASSES {
                let class: Vec<&CompletionRecord> = window
                    .iter()
                    .copied()
                    .filter(|c| c.size_bytes >= lo && c.size_bytes < hi)
                    .collect();
                fct.push(fct_summary(name, &class));
            }
            let active: Vec<f64> = series
                .get(&format!("active_flows.{}", spec.group_name))
                .unwrap_or(&[])
                .iter()
                .zip(times)
                .filter(|(_, &t)| t >= measured_from_s)
                .map(|(&v, _)| v)
                .collect();
            let bits: f64 = window.iter().map(|c| 8.0 * c.size_bytes).sum();
            let per_flow: Vec<f64> = window
                .iter()
                .map(|c| 8.0 * c.size_bytes / c.fct_s)
                .collect();
            let (goodput_mean, goodput_std) = mean_std(&per_flow, 1.0);
            DynamicSummary {
                group: spec.group_name.clone(),
                rate_per_s,
                arrivals: a.arrivals,
                arrival_rate_per_s: if duration_s > 0.0 {
                    a.arrivals as f64 / duration_s
                } else {
                    f64::NAN
                },
                refused: a.refused,
                completed: a.completed,
                active_end: a.active_end,
                active_mean: mean_std(&active, 0.0).0,
                goodput_bps: if span_s > 0.0 { bits / span_s } else { 0.0 },
                flow_goodput_mean_bps: goodput_mean,
                flow_goodput_var_bps2: goodput_std * goodput_std,
                fct,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::quantile;

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert!(quantile(&[], 0.5).is_nan());
    }
}
