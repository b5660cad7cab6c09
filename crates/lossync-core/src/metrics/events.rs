//! Congestion events as a metric (docs/model.md §5.3). A packet-level engine reports each drop;
//! [`DropClusters`] groups a link's drops into events: a drop more than `tau` after the previous
//! one begins a new event, and an event's size is the number of distinct flows that lost in it.
//! The fluid engine's events come from its loss model instead (one per overflow episode) and are
//! recorded directly. [`sync_statistics`] reads either kind.

use super::EventRecord;
use crate::scenario::Scenario;

/// A link's congestion-event window τ, in seconds, for every engine: drops less than τ apart
/// belong to one event. τ is the mean base RTT of the flows crossing the link (TCP reacts about
/// once per RTT; docs/model.md §5.3), so on a network of unequal paths each link keeps its own.
pub fn event_window_s(sc: &Scenario, link: usize) -> f64 {
    sc.mean_base_rtt_s(link)
}

/// Clusters one link's drops into congestion events, in the engine's integer time unit (the
/// packet engine's picoseconds; ns-3's drop times are converted to the same unit).
#[derive(Debug, Clone)]
pub struct DropClusters {
    link: usize,
    tau: u64,
    /// Time units per second.
    units_per_s: f64,
    active: bool,
    start: u64,
    last: u64,
    measured: bool,
    candidates: u32,
    lost: Vec<bool>,
    lost_list: Vec<u32>,
    log: Vec<EventRecord>,
}

impl DropClusters {
    /// `tau`: the largest gap inside an event; `n_flows` sizes the per-flow marks.
    pub fn new(link: usize, tau: u64, units_per_s: f64, n_flows: usize) -> Self {
        DropClusters {
            link,
            tau,
            units_per_s,
            active: false,
            start: 0,
            last: 0,
            measured: false,
            candidates: 0,
            lost: vec![false; n_flows],
            lost_list: Vec::with_capacity(n_flows),
            log: Vec::new(),
        }
    }

    /// A data drop of `flow` at time `now`. `candidates`: the flows that could have lost (those
    /// sending through the link now); `measured`: the drop is past the warm-up, so an event it
    /// begins is counted.
    pub fn drop(&mut self, now: u64, flow: usize, candidates: u32, measured: bool) {
        if !(self.active && now - self.last < self.tau) {
            self.close();
            self.active = true;
            self.start = now;
            self.measured = measured;
            self.candidates = candidates;
        }
        self.last = now;
        if !self.lost[flow] {
            self.lost[flow] = true;
            self.lost_list.push(flow as u32);
        }
    }

    /// A flow starts sending through the link at `now` (dynamic traffic): if an event is under
    /// way, it is one more flow that could lose in it.
    pub fn flow_started(&mut self, now: u64) {
        if self.active && now - self.last < self.tau {
            self.candidates += 1;
        }
    }

    /// Ends the event under way, if any (at the end of a run).
    pub fn close(&mut self) {
        if !self.active {
            return;
        }
        self.active = false;
        let lost = self.lost_list.len();
        for &f in &self.lost_list {
            self.lost[f as usize] = false;
        }
        self.lost_list.clear();
        if self.measured {
            self.log.push(EventRecord {
                link: self.link,
                start_s: self.start as f64 / self.units_per_s,
                candidates: self.candidates,
                signalled: 0,
                lost: lost as u32,
            });
        }
    }

    /// The measured events so far, taken out.
    pub fn take(&mut self) -> Vec<EventRecord> {
        std::mem::take(&mut self.log)
    }
}

/// One link's synchronization statistics over its events.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncStatistics {
    pub events: u64,
    /// Mean over events of lost / candidates (NaN without events).
    pub rate_mean: f64,
    /// `histogram[n]` = events in which exactly n flows lost.
    pub histogram: Vec<u64>,
}

/// Statistics of `link`'s events (in the order given) among `members` flows crossing it.
pub fn sync_statistics(events: &[EventRecord], link: usize, members: usize) -> SyncStatistics {
    let mut histogram = vec![0u64; members + 1];
    let (mut n, mut sum) = (0u64, 0.0f64);
    for e in events.iter().filter(|e| e.link == link) {
        n += 1;
        if e.candidates > 0 {
            sum += e.lost as f64 / e.candidates as f64;
        }
        let k = e.lost as usize;
        if k >= histogram.len() {
            histogram.resize(k + 1, 0);
        }
        histogram[k] += 1;
    }
    SyncStatistics {
        events: n,
        rate_mean: if n > 0 { sum / n as f64 } else { f64::NAN },
        histogram,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_closer_than_tau_form_one_event_counting_each_flow_once() {
        let mut c = DropClusters::new(0, 10, 1.0, 4);
        for (t, f) in [(0, 1), (5, 1), (9, 2), (14, 3)] {
            c.drop(t, f, 4, true);
        }
        // Gap 14 - 9 = 5 < 10: still one event. Then a gap of 10 starts another.
        c.drop(24, 0, 3, true);
        c.close();
        let ev = c.take();
        assert_eq!(ev.len(), 2);
        assert_eq!((ev[0].start_s, ev[0].candidates, ev[0].lost), (0.0, 4, 3));
        assert_eq!((ev[1].start_s, ev[1].candidates, ev[1].lost), (24.0, 3, 1));
        let s = sync_statistics(&ev, 0, 4);
        assert_eq!(s.events, 2);
        assert!((s.rate_mean - (0.75 + 1.0 / 3.0) / 2.0).abs() < 1e-15);
        assert_eq!(s.histogram, vec![0, 1, 0, 1, 0]);
    }

    #[test]
    fn events_begun_in_the_warm_up_are_not_counted() {
        let mut c = DropClusters::new(0, 10, 1.0, 2);
        c.drop(0, 0, 2, false);
        c.drop(5, 1, 2, true); // joins the unmeasured event
        c.drop(100, 1, 2, true);
        c.close();
        let ev = c.take();
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].start_s, 100.0);
        assert!(sync_statistics(&[], 0, 2).rate_mean.is_nan());
    }
}
