//! The core's engines, by name, with what each can run: data only (it uses no engine module, so
//! every engine may read it to name the engines that have a capability it lacks). A new core
//! engine is its module, one entry here and one arm in `Simulation` (lib.rs). The front end's
//! engines register there (python/lossync/engines/), never here: the core names none of them.

use crate::capabilities::{Capabilities, EngineInfo, Topology};
use crate::queue;

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The core's engines, in the order they are listed to users.
pub fn engines() -> Vec<EngineInfo> {
    vec![
        EngineInfo {
            name: "fluid".into(),
            about: "fluid model: windows and queues as rates, per step (docs/fluid.md)".into(),
            capabilities: Capabilities {
                topology: Topology::Graph,
                two_way: true,
                // The disciplines with a fluid law (each declares it: `QueueParams::FLUID`).
                queues: queue::DISCIPLINES
                    .iter()
                    .filter(|d| d.fluid)
                    .map(|d| d.name.to_string())
                    .collect(),
                loss_models: names(&["proportional", "sync", "tcp"]),
                dynamic_traffic: false,
                // Its burst form holds under loss.model = "tcp" only: fluid::check says so.
                burst_assembly: true,
                wavelength_contention: false,
                max_burst: false,
                // Under loss.model = "tcp" only: fluid::check says so.
                ecn: true,
                // Its steps run on every core already (run.threads).
                partitioned_scheduler: false,
                missing_queues: Default::default(),
            },
        },
        EngineInfo {
            name: "packet".into(),
            about: "packet-level discrete events: every packet, ACK and drop (docs/packet.md)"
                .into(),
            capabilities: Capabilities {
                topology: Topology::Graph,
                two_way: true,
                queues: names(&queue::names()),
                // Its drops are real: the scenario's loss model does not apply.
                loss_models: Vec::new(),
                dynamic_traffic: true,
                burst_assembly: true,
                wavelength_contention: true,
                max_burst: true,
                ecn: true,
                partitioned_scheduler: true,
                missing_queues: Default::default(),
            },
        },
    ]
}
