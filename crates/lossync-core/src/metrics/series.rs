//! The time series: the columns every engine records, turned from raw counts into ratios here
//! (utilization, rates), named, with parallel connections summed into their logical flow, and the
//! delay columns of engines that record them.

use super::{dynamic_groups, mean_std, within_rounding_of_one};
use crate::scenario::Scenario;

/// Time series as named columns of equal length, sampled every `record_interval_s`.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub columns: Vec<(String, Vec<f64>)>,
}

impl Series {
    /// The columns every engine records, in order: `time_s`, then per link `queue_pkts.<link>`
    /// and `utilization.<link>`, then per flow `cwnd_pkts.<i>` and `rate_pps.<i>`, then per
    /// dynamic group `active_flows.<group>` (flows sending at the sample).
    ///
    /// Engines hand over raw counts for the interval each sample closes: in the utilization
    /// column the data packets the link sent, in the rate column the packets the flow delivered.
    /// Here, and only here, they become ratios: utilization = sent / (capacity · Δt), rate =
    /// delivered / Δt, with Δt the time since the previous sample (since 0 for the first; NaN
    /// where Δt is 0).
    pub fn standard(sc: &Scenario, data: Vec<Vec<f64>>) -> Series {
        let mut data = data;
        if let Some(time) = data.first().cloned() {
            let interval = |k: usize| time[k] - if k == 0 { 0.0 } else { time[k - 1] };
            let per_s = |count: f64, k: usize, scale: f64| {
                let dt = interval(k);
                if dt > 0.0 {
                    count / (scale * dt)
                } else {
                    f64::NAN
                }
            };
            for (li, l) in sc.links.iter().enumerate() {
                for (k, v) in data[2 + 2 * li].iter_mut().enumerate() {
                    // The sample times' rounding can put a full link a few 1e-15 above 1.
                    *v = within_rounding_of_one(per_s(*v, k, l.capacity_pps));
                }
            }
            let per_link = 1 + 2 * sc.links.len();
            for f in 0..sc.flows.len() {
                if let Some(col) = data.get_mut(per_link + 2 * f + 1) {
                    for (k, v) in col.iter_mut().enumerate() {
                        *v = per_s(*v, k, 1.0);
                    }
                }
            }
        }
        Self::named(sc, data)
    }

    /// The columns named, parallel connections summed into their logical flow.
    fn named(sc: &Scenario, data: Vec<Vec<f64>>) -> Series {
        let mut names = vec!["time_s".to_string()];
        for l in &sc.links {
            names.push(format!("queue_pkts.{}", l.name));
            names.push(format!("utilization.{}", l.name));
        }
        let per_link = 1 + 2 * sc.links.len();
        let mut data = data;
        // Dynamic groups' `active_flows` columns come last.
        let dynamic = dynamic_groups(sc);
        let active = if data.len() >= per_link + dynamic.len() {
            data.split_off(data.len() - dynamic.len())
        } else {
            Vec::new()
        };
        if sc.flows.iter().enumerate().any(|(i, f)| f.logical != i) {
            // Parallel connections: one window and one rate column per logical flow, summed.
            let mut conns = data.split_off(per_link).into_iter();
            for (i, f) in sc.flows.iter().enumerate() {
                let (w, r) = (
                    conns.next().unwrap_or_default(),
                    conns.next().unwrap_or_default(),
                );
                if i > 0 && f.logical == sc.flows[i - 1].logical {
                    let n = data.len();
                    for (a, b) in data[n - 2].iter_mut().zip(&w) {
                        *a += b;
                    }
                    for (a, b) in data[n - 1].iter_mut().zip(&r) {
                        *a += b;
                    }
                } else {
                    data.push(w);
                    data.push(r);
                }
            }
        }
        // Only the recorded flows' columns (`run.series_flows`), in flow order.
        let recorded = recorded_flows(sc);
        let mut flow_cols = data.split_off(per_link.min(data.len())).into_iter();
        for &keep in &recorded {
            let (w, r) = (flow_cols.next(), flow_cols.next());
            if keep {
                data.extend(w);
                data.extend(r);
            }
        }
        for (i, _) in recorded.iter().enumerate().filter(|(_, &keep)| keep) {
            names.push(format!("cwnd_pkts.{i}"));
            names.push(format!("rate_pps.{i}"));
        }
        if active.len() == dynamic.len() {
            for g in &dynamic {
                names.push(format!("active_flows.{}", sc.flows[*g].group_name));
            }
            data.extend(active);
        }
        Series {
            columns: names.into_iter().zip(data).collect(),
        }
    }

    /// Appends the delay columns of an engine that records them ([`Records::delay_samples`]):
    /// per link `queueing_delay_s.<link>`, the mean wait over the interval each sample closes
    /// (the sum over its weight; NaN for a weight of 0: no packet began its transmission), then
    /// per flow `rtt_s.<flow>`, the smoothed RTT at the sample (a parallel flow's: the mean of
    /// its connections' that send). Without delay columns, nothing.
    pub fn with_delays(mut self, sc: &Scenario, delays: Vec<Vec<f64>>) -> Series {
        let n_links = sc.links.len();
        if delays.len() != 2 * n_links + sc.flows.len() {
            return self;
        }
        let mut delays = delays.into_iter();
        for l in &sc.links {
            let (sum, weight) = (delays.next().unwrap(), delays.next().unwrap());
            let mean = (sum.iter().zip(&weight))
                .map(|(&s, &w)| if w > 0.0 { s / w } else { f64::NAN })
                .collect();
            self.columns
                .push((format!("queueing_delay_s.{}", l.name), mean));
        }
        let rtts: Vec<Vec<f64>> = delays.collect();
        // A logical flow's connections are consecutive (`Flow::logical` counts up): one pass,
        // not a search of every connection per logical flow (quadratic at 10^5 flows).
        let conns: Vec<(&crate::scenario::Flow, &Vec<f64>)> = sc.flows.iter().zip(&rtts).collect();
        let recorded = recorded_flows(sc);
        for flow in conns.chunk_by(|a, b| a.0.logical == b.0.logical) {
            if !recorded[flow[0].0.logical] {
                continue;
            }
            let samples = flow[0].1.len();
            let mean = (0..samples)
                .map(|k| {
                    let (n, sum) = (flow.iter().map(|c| c.1[k]))
                        .filter(|v| !v.is_nan())
                        .fold((0usize, 0.0), |(n, s), v| (n + 1, s + v));
                    if n > 0 {
                        sum / n as f64
                    } else {
                        f64::NAN
                    }
                })
                .collect();
            self.columns
                .push((format!("rtt_s.{}", flow[0].0.logical), mean));
        }
        self
    }

    /// The standard deviation (n − 1) of column `name` over the samples at or after `from_s`
    /// (NaN values left out; NaN under two samples or without the column).
    pub fn window_std(&self, name: &str, from_s: f64) -> f64 {
        let (Some(t), Some(v)) = (self.get("time_s"), self.get(name)) else {
            return f64::NAN;
        };
        let x: Vec<f64> = (t.iter().zip(v))
            .filter(|&(&t, v)| t >= from_s && !v.is_nan())
            .map(|(_, &v)| v)
            .collect();
        mean_std(&x, 1.0).1
    }

    pub fn get(&self, name: &str) -> Option<&[f64]> {
        self.columns
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// Which logical flows the time series records: every one when they are at most
/// `run.series_flows`, else that many spread evenly over them (flow ⌊j·n/k⌋ for j = 0..k, n flows,
/// k recorded), so that every group of more than n/k flows has some in the series.
pub fn recorded_flows(sc: &Scenario) -> Vec<bool> {
    let n = sc.flows.last().map_or(0, |f| f.logical + 1);
    let k = sc.run.series_flows;
    if k >= n {
        return vec![true; n];
    }
    let mut keep = vec![false; n];
    for j in 0..k {
        // j·n < k·n ≤ 10^12: exact in u64.
        keep[(j as u64 * n as u64 / k as u64) as usize] = true;
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parallel_flows_rtt_is_the_mean_of_its_connections_that_send() {
        // Flow 0: one connection; flow 1: two (parallel = 2), the second not yet sending (NaN)
        // at the first sample.
        let sc = crate::scenario::from_toml(
            "[dumbbell]\ncapacity = \"10Mbps\"\nbuffer = { packets = 10 }\n\
             [[flows]]\ncount = 1\ncc = \"reno\"\nrtt = \"10ms\"\n\
             [[flows]]\ncount = 1\nparallel = 2\ncc = \"reno\"\nrtt = \"20ms\"\n\
             [run]\nduration = \"1s\"",
            std::path::Path::new("."),
        )
        .unwrap();
        let link = vec![vec![0.0, 0.0], vec![1.0, 1.0]];
        let rtts = vec![vec![0.01, 0.011], vec![0.02, 0.021], vec![f64::NAN, 0.025]];
        let s = Series::default().with_delays(&sc, [link, rtts].concat());
        assert_eq!(s.get("rtt_s.0"), Some(&[0.01, 0.011][..]));
        assert_eq!(s.get("rtt_s.1"), Some(&[0.02, (0.021 + 0.025) / 2.0][..]));
        assert_eq!(s.get("rtt_s.2"), None);
    }

    #[test]
    fn the_series_records_every_flow_up_to_series_flows_then_that_many_spread_evenly() {
        let sc = |flows: usize, series_flows: usize| {
            crate::scenario::from_toml(
                &format!(
                    "[dumbbell]\ncapacity = \"10Mbps\"\nbuffer = {{ packets = 10 }}\n\
                     [[flows]]\ncount = {flows}\ncc = \"reno\"\nrtt = \"10ms\"\n\
                     [run]\nduration = \"1s\"\nseries_flows = {series_flows}"
                ),
                std::path::Path::new("."),
            )
            .unwrap()
        };
        // One sample: time, the link's queue and sent count, then each flow's window (its
        // index) and delivered count (its index + 100); RTTs in the delay columns the same.
        let data = |n: usize| {
            let mut d = vec![vec![1.0], vec![0.0], vec![0.0]];
            for f in 0..n {
                d.push(vec![f as f64]);
                d.push(vec![f as f64 + 100.0]);
            }
            d
        };
        let delays = |n: usize| {
            let mut d = vec![vec![0.0], vec![0.0]];
            d.extend((0..n).map(|f| vec![f as f64 / 1000.0]));
            d
        };
        let flows_in = |s: &Series, prefix: &str| -> Vec<usize> {
            (s.columns.iter())
                .filter_map(|(name, _)| name.strip_prefix(prefix)?.parse().ok())
                .collect()
        };
        // 10 flows, 4 recorded: flows ⌊10j/4⌋ = 0, 2, 5, 7, each with its own columns' values.
        let s = Series::standard(&sc(10, 4), data(10)).with_delays(&sc(10, 4), delays(10));
        for prefix in ["cwnd_pkts.", "rate_pps.", "rtt_s."] {
            assert_eq!(flows_in(&s, prefix), [0, 2, 5, 7], "{prefix}");
        }
        assert_eq!(s.get("cwnd_pkts.5"), Some(&[5.0][..]));
        assert_eq!(s.get("rate_pps.7"), Some(&[107.0][..]));
        assert_eq!(s.get("rtt_s.2"), Some(&[0.002][..]));
        // At or below the limit, every flow; 0, none (the links' columns stay).
        let s = Series::standard(&sc(10, 10), data(10));
        assert_eq!(flows_in(&s, "cwnd_pkts."), (0..10).collect::<Vec<_>>());
        let s = Series::standard(&sc(10, 0), data(10)).with_delays(&sc(10, 0), delays(10));
        assert!(flows_in(&s, "cwnd_pkts.").is_empty() && flows_in(&s, "rtt_s.").is_empty());
        assert!(s.get("utilization.bottleneck").is_some());
        // 1,000 of 10^5: every 100th flow.
        let keep = recorded_flows(&sc(100_000, 1000));
        let kept: Vec<usize> = (0..keep.len()).filter(|&i| keep[i]).collect();
        assert_eq!(kept, (0..1000).map(|j| 100 * j).collect::<Vec<_>>());
    }
}
