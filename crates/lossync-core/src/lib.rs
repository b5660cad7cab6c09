//! lossync-core: scenario model, congestion-control laws, the fluid engine with the
//! loss-synchronization module, queue disciplines and metrics. No Python here; deterministic for
//! a given seed; single-threaded (parallelism belongs to sweeps, one run per core).

pub mod cc;
pub mod error;
pub mod rng;
pub mod units;

pub use error::{Error, Result};
pub mod fluid;
pub mod metrics;
pub mod queue;
pub mod scenario;

pub use fluid::FluidEngine;
pub use metrics::RunResult;
pub use scenario::Scenario;

/// The crate version, recorded in every result for provenance.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Runs a scenario to the end on the engine it names.
pub fn run(scenario: &Scenario) -> Result<RunResult> {
    match scenario.engine {
        scenario::Engine::Fluid => Ok(FluidEngine::new(scenario)?.run()),
        other => Err(Error::field(
            "engine",
            format!("the {other:?} engine is not available in this version (only \"fluid\")")
                .to_lowercase(),
        )),
    }
}
