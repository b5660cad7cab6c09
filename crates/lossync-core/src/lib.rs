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
}

impl Simulation {
    pub fn new(scenario: &Scenario) -> Result<Self> {
        Self::shared(std::sync::Arc::new(scenario.clone()))
    }

    /// As [`Simulation::new`], the engine keeping the caller's scenario instead of a copy.
    pub fn shared(scenario: std::sync::Arc<Scenario>) -> Result<Self> {
        match &scenario.engine {
            scenario::Engine::Fluid => Ok(Simulation::Fluid(Box::new(FluidEngine::shared(
                scenario.clone(),
            )?))),
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
        }
    }

    pub fn duration_s(&self) -> f64 {
        match self {
            Simulation::Fluid(e) => e.duration_s(),
            Simulation::Packet(e) => e.duration_s(),
        }
    }

    /// Whether the whole run has been simulated.
    pub fn is_done(&self) -> bool {
        match self {
            Simulation::Fluid(e) => e.is_done(),
            Simulation::Packet(e) => e.is_done(),
        }
    }

    /// Runs until simulated time `until_s` (or the end).
    pub fn advance(&mut self, until_s: f64) {
        match self {
            Simulation::Fluid(e) => e.advance(until_s),
            Simulation::Packet(e) => e.advance(until_s),
        }
    }

    /// Bottleneck drops as (time s, flow): the packet engine's drop log; empty for the fluid
    /// engine, whose losses are not packets.
    pub fn drop_log(&self) -> &[(f64, usize)] {
        match self {
            Simulation::Fluid(_) => &[],
            Simulation::Packet(e) => e.drop_log(),
        }
    }

    /// Traces the link named `link` (packet engine; [`PacketEngine::trace_link`]), keeping at
    /// most `max_packets` packets. Refused, naming `pcap`, for an unknown link or on the fluid
    /// engine, which has no packets.
    pub fn trace_link(&mut self, link: &str, max_packets: usize) -> Result<()> {
        let Simulation::Packet(e) = self else {
            return Err(Error::field(
                "pcap",
                "a packet trace needs the packet engine (engine = \"packet\"); the fluid engine \
                 has no packets",
            ));
        };
        let links = &e.scenario().links;
        let Some(l) = links.iter().position(|l| l.name == link) else {
            let names: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
            return Err(Error::field(
                "pcap",
                format!("no link named {link:?} (links: {})", names.join(", ")),
            ));
        };
        e.trace_link(l, max_packets)
    }

    /// The packet trace, if one was asked for.
    pub fn trace(&self) -> Option<&packet::trace::Trace> {
        match self {
            Simulation::Fluid(_) => None,
            Simulation::Packet(e) => e.trace(),
        }
    }

    pub fn finish(self) -> RunResult {
        match self {
            Simulation::Fluid(e) => e.finish(),
            Simulation::Packet(e) => e.finish(),
        }
    }
}

/// Whether the engine the scenario names can run it (the checks its construction makes, without
/// building it). An engine outside the core is checked by the front end that registers it.
pub fn check(scenario: &Scenario) -> Result<()> {
    match scenario.engine {
        scenario::Engine::Fluid => fluid::check(scenario),
        scenario::Engine::Packet => packet::check(scenario),
        scenario::Engine::External(_) => Ok(()),
    }
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
