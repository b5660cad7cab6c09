//! lossync-core: scenario model, congestion-control laws, the fluid engine with the
//! loss-synchronization module, the packet engine, queue disciplines and metrics. No Python here;
//! deterministic for a given seed, and for any thread count: a fluid run of many flows under the
//! `tcp` model steps them on every core (`run.threads`); the rest of one run is on one thread.

pub mod capabilities;
pub mod cc;
pub mod error;
pub mod fluid;
pub mod memory;
pub mod metrics;
pub mod packet;
pub mod params;
pub mod queue;
pub mod registry;
pub mod rng;
pub mod scenario;
pub mod threads;
pub mod units;

pub use capabilities::{Capabilities, EngineInfo};
pub use error::{Error, Result};
pub use fluid::FluidEngine;
pub use metrics::RunResult;
pub use packet::PacketEngine;
pub use scenario::Scenario;

/// The crate version, recorded in every result for provenance.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A run in progress on the engine its scenario names, driven in chunks (so a caller can show
/// progress and release locks between them).
pub enum Simulation {
    Fluid(Box<FluidEngine>),
    Packet(Box<PacketEngine>),
    /// The packet engine under its partitioned scheduler (`run.scheduler = "partitioned"`).
    Partitioned(Box<packet::partitioned::Partitioned>),
}

impl Simulation {
    pub fn new(scenario: &Scenario) -> Result<Self> {
        Self::shared(std::sync::Arc::new(scenario.clone()))
    }

    /// As [`Simulation::new`], the engine keeping the caller's scenario instead of a copy.
    pub fn shared(scenario: std::sync::Arc<Scenario>) -> Result<Self> {
        match &scenario.engine {
            scenario::Engine::Fluid => {
                check_scheduler(&scenario)?;
                Ok(Simulation::Fluid(Box::new(FluidEngine::shared(
                    scenario.clone(),
                )?)))
            }
            scenario::Engine::Packet
                if scenario.run.scheduler == scenario::Scheduler::Partitioned =>
            {
                Ok(Simulation::Partitioned(Box::new(
                    packet::partitioned::Partitioned::shared(scenario.clone())?,
                )))
            }
            scenario::Engine::Packet => Ok(Simulation::Packet(Box::new(PacketEngine::shared(
                scenario.clone(),
            )?))),
            scenario::Engine::External(name) => Err(Error::field(
                "engine",
                format!(
                    "{name:?} does not run in the core (its engines: {}); the front end that \
                     registers it runs it",
                    core_engine_names()
                ),
            )),
        }
    }

    pub fn now_s(&self) -> f64 {
        match self {
            Simulation::Fluid(e) => e.now_s(),
            Simulation::Packet(e) => e.now_s(),
            Simulation::Partitioned(e) => e.now_s(),
        }
    }

    pub fn duration_s(&self) -> f64 {
        match self {
            Simulation::Fluid(e) => e.duration_s(),
            Simulation::Packet(e) => e.duration_s(),
            Simulation::Partitioned(e) => e.duration_s(),
        }
    }

    /// Whether the whole run has been simulated.
    pub fn is_done(&self) -> bool {
        match self {
            Simulation::Fluid(e) => e.is_done(),
            Simulation::Packet(e) => e.is_done(),
            Simulation::Partitioned(e) => e.is_done(),
        }
    }

    /// Runs until simulated time `until_s` (or the end).
    pub fn advance(&mut self, until_s: f64) {
        match self {
            Simulation::Fluid(e) => e.advance(until_s),
            Simulation::Packet(e) => e.advance(until_s),
            Simulation::Partitioned(e) => e.advance(until_s),
        }
    }

    /// Bottleneck drops as (time s, flow): the packet engine's drop log; empty for the fluid
    /// engine, whose losses are not packets.
    pub fn drop_log(&self) -> &[(f64, usize)] {
        match self {
            Simulation::Fluid(_) => &[],
            Simulation::Packet(e) => e.drop_log(),
            Simulation::Partitioned(e) => e.drop_log(),
        }
    }

    /// Traces the link named `link` (packet engine; [`PacketEngine::trace_link`]), keeping at
    /// most `max_packets` packets. Refused, naming `pcap`, for an unknown link or on the fluid
    /// engine, which has no packets.
    pub fn trace_link(&mut self, link: &str, max_packets: usize) -> Result<()> {
        let links =
            match self {
                Simulation::Fluid(_) => {
                    return Err(Error::field(
                        "pcap",
                        "a packet trace needs the packet engine (engine = \"packet\"); the fluid \
                     engine has no packets",
                    ))
                }
                Simulation::Packet(e) => &e.scenario().links,
                Simulation::Partitioned(_) => return Err(Error::field(
                    "pcap",
                    "the partitioned scheduler traces no link (its partitions each see part of \
                     it); run.scheduler = \"serial\" traces it",
                )),
            };
        let Some(l) = links.iter().position(|l| l.name == link) else {
            let names: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
            return Err(Error::field(
                "pcap",
                format!("no link named {link:?} (links: {})", names.join(", ")),
            ));
        };
        match self {
            Simulation::Packet(e) => e.trace_link(l, max_packets),
            _ => unreachable!("refused above"),
        }
    }

    /// The packet trace, if one was asked for.
    pub fn trace(&self) -> Option<&packet::trace::Trace> {
        match self {
            Simulation::Fluid(_) => None,
            Simulation::Packet(e) => e.trace(),
            Simulation::Partitioned(_) => None,
        }
    }

    pub fn finish(self) -> RunResult {
        match self {
            Simulation::Fluid(e) => e.finish(),
            Simulation::Packet(e) => e.finish(),
            Simulation::Partitioned(e) => e.finish(),
        }
    }
}

/// Whether the engine the scenario names can run it (the checks its construction makes, without
/// building it). An engine outside the core is checked by the front end that registers it.
pub fn check(scenario: &Scenario) -> Result<()> {
    match scenario.engine {
        scenario::Engine::Fluid => check_scheduler(scenario).and_then(|_| fluid::check(scenario)),
        scenario::Engine::Packet if scenario.run.scheduler == scenario::Scheduler::Partitioned => {
            packet::check(scenario).and_then(|_| packet::partitioned::check(scenario))
        }
        scenario::Engine::Packet => packet::check(scenario),
        scenario::Engine::External(_) => Ok(()),
    }
}

/// The fluid engine has one scheduler: its steps (on every core already, `run.threads`).
fn check_scheduler(scenario: &Scenario) -> Result<()> {
    if scenario.run.scheduler == scenario::Scheduler::Partitioned {
        return Err(Error::field(
            "run.scheduler",
            "\"partitioned\" is the packet engine's; the fluid engine steps its flows on every \
             core already (run.threads)",
        ));
    }
    Ok(())
}

fn core_engine_names() -> String {
    let names: Vec<String> = registry::engines().into_iter().map(|e| e.name).collect();
    names.join(", ")
}

/// Runs a scenario to the end on the engine it names.
pub fn run(scenario: &Scenario) -> Result<RunResult> {
    let mut sim = Simulation::new(scenario)?;
    sim.advance(f64::INFINITY);
    Ok(sim.finish())
}
