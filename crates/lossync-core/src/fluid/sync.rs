//! The loss-synchronization module of Kumar, Xue, Park (2014), docs/model.md §2: at the start of each
//! congestion event a *synchronization controller* picks how many flows lose (m_k) and a
//! *drop-policy controller* picks which (S_k) from a priority vector P_k.

use crate::rng::Rng;
use crate::scenario::{DropPolicy, Sync};

/// The module for one link with `n` flows.
#[derive(Debug)]
pub struct SyncModule {
    sync: Sync,
    policy: DropPolicy,
    rng: Rng,
    round_robin_next: usize,
    /// Scratch: candidate order (allocated once).
    order: Vec<usize>,
    keys: Vec<(f64, u64)>,
}

impl SyncModule {
    pub fn new(sync: Sync, policy: DropPolicy, n: usize, rng: Rng) -> Self {
        SyncModule {
            sync,
            policy,
            rng,
            round_robin_next: 0,
            order: Vec::with_capacity(n),
            keys: Vec::with_capacity(n),
        }
    }

    /// Draws m_k for `n` active flows (docs/model.md §2.2 eqs. 2–4): 1 ≤ m_k ≤ n.
    pub fn draw_m(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let m = match &self.sync {
            Sync::All => n,
            Sync::Fixed { m } => *m,
            Sync::Normal { x, mean, std } => {
                // eq. (3): m_k/N ≥ X ⇒ ⌈X·N⌉ ≤ m_k ≤ N. The mean and deviation are not in the
                // paper; defaults (design choice, docs/model.md §2.2): the middle of that range and a
                // quarter of its width.
                let lo = ((x * n as f64) - 1e-9).ceil().max(1.0);
                let mu = mean.unwrap_or((lo + n as f64) / 2.0);
                let sigma = std.unwrap_or((n as f64 - lo) / 4.0);
                (mu + sigma * self.rng.normal()).round().clamp(lo, n as f64) as usize
            }
            Sync::Empirical { probabilities, .. } => {
                let u = self.rng.uniform();
                let mut acc = 0.0;
                let mut pick = probabilities.last().map_or(n, |&(m, _)| m);
                for &(m, p) in probabilities {
                    acc += p;
                    if u < acc {
                        pick = m;
                        break;
                    }
                }
                pick
            }
        };
        m.clamp(1, n)
    }

    /// Orders the candidate flows by drop priority, highest first. `rate` and `window` give P_k
    /// for the rate and window policies (eq. 5); `active` says which flows can lose.
    /// Returns the order; the caller takes the first m_k (eq. 6) and, if they cannot absorb the
    /// overflow, the next ones.
    pub fn prioritize(&mut self, rate: &[f64], window: &[f64], active: &[bool]) -> &[usize] {
        let n = rate.len();
        self.order.clear();
        self.order.extend((0..n).filter(|&i| active[i]));
        match self.policy {
            DropPolicy::HighestRate | DropPolicy::LargestWindow => {
                let d = if self.policy == DropPolicy::HighestRate {
                    rate
                } else {
                    window
                };
                // Ties broken at random (eq. 6).
                self.keys.clear();
                for &v in d {
                    self.keys.push((v, self.rng.next_u64()));
                }
                let keys = &self.keys;
                self.order.sort_unstable_by(|&a, &b| {
                    keys[b]
                        .0
                        .total_cmp(&keys[a].0)
                        .then(keys[b].1.cmp(&keys[a].1))
                });
            }
            DropPolicy::Random => {
                for k in (1..self.order.len()).rev() {
                    let j = self.rng.below(k + 1);
                    self.order.swap(k, j);
                }
            }
            DropPolicy::RoundRobin => {
                // Start at the first active flow at or after the pointer, cyclically.
                if let Some(s) = self.order.iter().position(|&i| i >= self.round_robin_next) {
                    self.order.rotate_left(s);
                }
            }
        }
        &self.order
    }

    /// Called after the event's flows are chosen, so round robin moves on past them.
    pub fn advance_round_robin(&mut self, last_selected: usize) {
        self.round_robin_next = last_selected + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(sync: Sync, policy: DropPolicy) -> SyncModule {
        SyncModule::new(sync, policy, 10, Rng::new(3, 9))
    }

    #[test]
    fn normal_draws_respect_the_minimum_synchronization() {
        // X = 0.3, N = 10 ⇒ m ∈ {3..10}; X = 0.6 ⇒ {6..10} (docs/model.md §2.2 eq. 3).
        for (x, lo) in [(0.3, 3), (0.6, 6), (1.0, 10)] {
            let mut s = module(
                Sync::Normal {
                    x,
                    mean: None,
                    std: None,
                },
                DropPolicy::HighestRate,
            );
            let draws: Vec<usize> = (0..5000).map(|_| s.draw_m(10)).collect();
            assert!(draws.iter().all(|&m| (lo..=10).contains(&m)), "x={x}");
            let mean = draws.iter().sum::<usize>() as f64 / draws.len() as f64;
            // Default mean (lo + N)/2, clamping keeps it symmetric: 6.5, 8, 10.
            let want = (lo as f64 + 10.0) / 2.0;
            assert!((mean - want).abs() < 0.1, "x={x}: mean {mean}, want {want}");
            if x < 1.0 {
                assert!(draws.contains(&lo) && draws.contains(&10));
            }
        }
    }

    #[test]
    fn empirical_draws_follow_the_distribution() {
        let p = vec![(2, 0.25), (5, 0.75)];
        let mut s = module(
            Sync::Empirical {
                file: None,
                probabilities: p,
            },
            DropPolicy::Random,
        );
        let n = 20_000;
        let twos = (0..n).filter(|_| s.draw_m(10) == 2).count() as f64 / n as f64;
        // Binomial standard error sqrt(0.25·0.75/20000) = 0.003.
        assert!((twos - 0.25).abs() < 0.012, "{twos}");
    }

    #[test]
    fn highest_rate_first_and_inactive_flows_skipped() {
        let mut s = module(Sync::All, DropPolicy::HighestRate);
        let rate = [1.0, 5.0, 3.0, 9.0];
        let active = [true, true, true, false];
        assert_eq!(s.prioritize(&rate, &rate, &active), &[1, 2, 0]);
        let mut s = module(Sync::All, DropPolicy::LargestWindow);
        let window = [7.0, 1.0, 2.0, 3.0];
        assert_eq!(s.prioritize(&rate, &window, &[true; 4]), &[0, 3, 2, 1]);
    }

    #[test]
    fn round_robin_cycles() {
        let mut s = module(Sync::Fixed { m: 1 }, DropPolicy::RoundRobin);
        let r = [1.0; 3];
        let mut picks = Vec::new();
        for _ in 0..4 {
            let first = s.prioritize(&r, &r, &[true; 3])[0];
            s.advance_round_robin(first);
            picks.push(first);
        }
        assert_eq!(picks, vec![0, 1, 2, 0]);
    }
}
