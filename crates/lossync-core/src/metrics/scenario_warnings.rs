//! What a scenario's own shape says about its numbers, whatever the engine ran: flows that never
//! start, links nothing crosses, a step queue that cannot mark, an L4S sender with no L4S queue.
//! Said in the summary's warnings, after the run's own.

use crate::scenario::Scenario;
use std::collections::BTreeMap;

/// The warnings, one sentence each, in a fixed order (late starts, idle links, step thresholds,
/// L4S fall-backs).
pub(super) fn of(sc: &Scenario) -> Vec<String> {
    let mut warnings = Vec::new();
    // Flows that start when the run is over send nothing: their rows are zeros, and Jain's index
    // counts them (a start beyond the duration, or a start range reaching past it).
    let mut late: BTreeMap<usize, (usize, usize)> = BTreeMap::new(); // group -> (late, flows)
    for f in &sc.flows {
        let (n, of) = late.entry(f.group).or_default();
        *of += 1;
        if f.start_s >= sc.run.duration_s {
            *n += 1;
        }
    }
    for (g, (n, of)) in late.into_iter().filter(|&(_, (n, _))| n > 0) {
        warnings.push(format!(
            "flows[{g}].start: {n} of its {of} flows start at or after the run's end ({} s) and \
             send nothing; their rows are zeros",
            sc.run.duration_s
        ));
    }
    // A link no flow's data or ACKs cross: idle for the whole run, most often a path that was
    // meant to name it.
    for (i, l) in sc.links.iter().enumerate() {
        if !sc
            .flows
            .iter()
            .any(|f| f.path.contains(&i) || f.ack_path.contains(&i))
        {
            warnings.push(format!(
                "links[{i}] ({}): no flow's path crosses it, so it carries nothing (utilization 0); \
                 check the flows' paths",
                l.name
            ));
        }
    }
    // A step threshold at the whole buffer: no packet ever queues above it, so the link never
    // marks (or drops early) and runs as drop-tail (the aqm study sets K = the buffer where
    // C·RTT/7 exceeds it). Allowed, since it is what such a buffer does, but said.
    for (i, l) in sc.links.iter().enumerate() {
        if let crate::queue::Queue::Step(p) = &l.queue {
            if p.threshold >= l.buffer_pkts {
                warnings.push(format!(
                    "links[{i}].queue.threshold: K = {} packets is the whole buffer, so no packet \
                     queues above it: this step queue never marks and runs as drop-tail",
                    p.threshold
                ));
            }
        }
    }
    let mut fell_back: Vec<&crate::scenario::Flow> = Vec::new();
    for f in sc.flows.iter().filter(|f| sc.l4s_falls_back(f)) {
        if !fell_back.iter().any(|g| g.group == f.group) {
            fell_back.push(f);
        }
    }
    for f in fell_back {
        warnings.push(format!(
            "flows[{}].ecn: {} sends ECT(1) but crosses no L4S-aware queue (dualpi2, step), so it \
             answers marks as classic ECN, one reduction per window as for a loss (RFC 9331 §4.3)",
            f.group,
            f.cc.name()
        ));
    }
    warnings
}
