//! Dynamic traffic: flows that arrive as a Poisson process, send a Pareto-distributed size and
//! finish (seed 002, Vlachos: 50 flows/s, sizes Pareto with a 40 KB minimum and a 700 KB mean,
//! 100 Mb/s access links). A group's connections are the slots of a pool built with the network;
//! an arrival takes a free slot (the sender and receiver are reset, their buffers kept), and a
//! finished flow gives it back once none of its packets is left in the network, so that a late
//! duplicate or ACK never reaches the slot's next flow. An arrival that finds no free slot is
//! refused and counted (`arrivals.max_active` bounds the pool).

use crate::rng::Rng;
use crate::scenario::Arrivals;

/// Random streams of the arrival processes, apart from every other element's (`+ group`):
/// one stream per group draws its inter-arrival times and sizes.
pub const ARRIVAL_STREAM: u64 = 7_000_000;

/// Pareto sizes: `x_m / U^(1/α)` with `U` uniform in (0, 1] (inverse transform; P(X > x) =
/// (x_m/x)^α for x ≥ x_m).
#[derive(Debug, Clone, Copy)]
pub struct ParetoSizes {
    pub shape: f64,
    pub min_size_bytes: f64,
}

impl ParetoSizes {
    pub fn sample_bytes(&self, rng: &mut Rng) -> f64 {
        let u = 1.0 - rng.uniform(); // (0, 1]
        self.min_size_bytes / u.powf(1.0 / self.shape)
    }
}

/// An exponential inter-arrival time of a Poisson process of `rate_per_s`, by inverse transform.
pub fn interarrival_s(rate_per_s: f64, rng: &mut Rng) -> f64 {
    let u = 1.0 - rng.uniform(); // (0, 1]
    -u.ln() / rate_per_s
}

/// One dynamic group's arrival process and its pool of slots.
#[derive(Debug)]
pub struct Group {
    /// The scenario's group index.
    pub group: usize,
    pub rate_per_s: f64,
    pub sizes: ParetoSizes,
    pub packet_size_bytes: f64,
    pub rng: Rng,
    /// Free slots (flow indices), popped from the end: the lowest index is used first.
    pub free: Vec<u32>,
    pub arrivals: u64,
    pub refused: u64,
    pub completed: u64,
    /// Flows sending now (arrived, not yet completed).
    pub active: u32,
}

impl Group {
    pub fn new(
        group: usize,
        a: &Arrivals,
        packet_size_bytes: f64,
        seed: u64,
        slots: Vec<u32>,
    ) -> Self {
        let mut free = slots;
        free.reverse();
        Group {
            group,
            rate_per_s: a.rate_per_s,
            sizes: ParetoSizes {
                shape: a.shape,
                min_size_bytes: a.min_size_bytes,
            },
            packet_size_bytes,
            rng: Rng::new(seed, ARRIVAL_STREAM + group as u64),
            free,
            arrivals: 0,
            refused: 0,
            completed: 0,
            active: 0,
        }
    }

    /// The next flow's size in bytes and in whole packets (the last one partly filled counts
    /// as a packet, as a TCP segment carrying the tail would).
    pub fn draw_size(&mut self) -> (f64, u64) {
        let bytes = self.sizes.sample_bytes(&mut self.rng);
        let pkts = (bytes / self.packet_size_bytes).ceil().max(1.0);
        (bytes, pkts as u64)
    }

    /// Seconds to the next arrival.
    pub fn draw_gap_s(&mut self) -> f64 {
        interarrival_s(self.rate_per_s, &mut self.rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample mean of Pareto sizes with α = 3 (finite variance) is within 3 standard errors
    /// of the closed-form mean α·x_m/(α−1), and no size is below x_m.
    #[test]
    fn pareto_mean_and_minimum() {
        let p = ParetoSizes {
            shape: 3.0,
            min_size_bytes: 40e3,
        };
        let mut rng = Rng::new(7, ARRIVAL_STREAM);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| p.sample_bytes(&mut rng)).collect();
        let mean = 3.0 * 40e3 / 2.0;
        // Var = x_m² α / ((α−1)²(α−2)).
        let sd = (40e3f64.powi(2) * 3.0 / (4.0 * 1.0)).sqrt();
        let m = xs.iter().sum::<f64>() / n as f64;
        assert!(
            (m - mean).abs() < 3.0 * sd / (n as f64).sqrt(),
            "{m} vs {mean}"
        );
        assert!(xs.iter().all(|&x| x >= 40e3));
    }
}
