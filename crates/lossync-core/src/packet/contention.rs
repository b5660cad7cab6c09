//! Wavelength contention in a bufferless optical burst switching core (docs/packet.md, "Optical
//! burst switching"): the alternative to Bernoulli burst loss. The link's output has `W`
//! wavelengths and no optical buffer; a burst takes any wavelength that is free when it
//! arrives and holds it for its transmission; if every wavelength is busy it is lost whole
//! (Qiao and Yoo, "Optical burst switching", J. High Speed Networks 8(1), 1999: OBS cores
//! switch bursts without buffering them). Optionally `K` fibre delay lines (FDLs) of one delay
//! `D`: a contending burst enters the first free FDL and is retried `D` later on the
//! wavelengths; it is lost if no FDL is free or if no wavelength is free at the retry.
//!
//! Scheduling is horizon scheduling without void filling (LAUC, Xiong, Vandenhoute, Cankaya,
//! "Control architecture in optical burst-switched WDM networks", IEEE JSAC 18(10), 2000): each
//! wavelength is reserved up to the end of its last burst, and the retry after an FDL is decided
//! when the burst arrives (its header, sent ahead as in JET, reserves the wavelength then), so a
//! burst that arrives meanwhile sees the reservation. An FDL holds one burst at a time, from the
//! burst's head entering to its tail leaving.
//!
//! Without FDLs, with Poisson arrivals and any holding-time distribution, the loss is Erlang B,
//! `B(W, A)` for offered load `A` (arrival rate × mean holding time); tested below.

use super::event::SimTime;

/// What became of a burst offered to the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// On a wavelength now.
    Sent,
    /// Through fibre delay line `fdl`, on a wavelength at `at_ps`.
    Delayed { fdl: usize, at_ps: SimTime },
    /// Every wavelength busy, and no FDL could save it.
    Lost,
}

/// The wavelengths of one link's core output and its fibre delay lines.
#[derive(Debug, Clone)]
pub struct Contention {
    /// Per wavelength, the end of its last reserved burst.
    free_at_ps: Vec<SimTime>,
    /// Per FDL, when the burst in it has left.
    fdl_free_at_ps: Vec<SimTime>,
    fdl_delay_ps: SimTime,
}

impl Contention {
    pub fn new(wavelengths: usize, fdls: usize, fdl_delay_ps: SimTime) -> Self {
        Contention {
            free_at_ps: vec![0; wavelengths.max(1)],
            fdl_free_at_ps: vec![0; fdls],
            fdl_delay_ps,
        }
    }

    /// A wavelength free at `t`, reserved for `[t, t + hold)`.
    fn reserve(&mut self, t: SimTime, hold_ps: SimTime) -> bool {
        match self.free_at_ps.iter_mut().find(|f| **f <= t) {
            Some(f) => {
                *f = t + hold_ps;
                true
            }
            None => false,
        }
    }

    /// A burst arrives at `now_ps` and would hold a wavelength for `hold_ps`.
    pub fn offer(&mut self, now_ps: SimTime, hold_ps: SimTime) -> Fate {
        if self.reserve(now_ps, hold_ps) {
            return Fate::Sent;
        }
        let Some(fdl) = self.fdl_free_at_ps.iter().position(|&f| f <= now_ps) else {
            return Fate::Lost;
        };
        let at_ps = now_ps + self.fdl_delay_ps;
        if !self.reserve(at_ps, hold_ps) {
            return Fate::Lost;
        }
        self.fdl_free_at_ps[fdl] = at_ps + hold_ps;
        Fate::Delayed { fdl, at_ps }
    }

    pub fn fdls(&self) -> usize {
        self.fdl_free_at_ps.len()
    }
}

/// Erlang's loss formula `B(W, A)` by its recursion `B(0) = 1`, `B(k) = A·B(k−1) / (k + A·B(k−1))`
/// (numerically stable; A. K. Erlang 1917; e.g. Kleinrock, Queueing Systems I, §3.7).
pub fn erlang_b(wavelengths: usize, offered_erlangs: f64) -> f64 {
    (1..=wavelengths).fold(1.0, |b, k| {
        offered_erlangs * b / (k as f64 + offered_erlangs * b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Poisson arrivals of rate λ with exponential holding times of mean h: the fraction lost,
    /// and the number of bursts offered.
    fn simulate(w: usize, fdls: usize, fdl_delay_ps: SimTime, load: f64, n: usize) -> f64 {
        let mut c = Contention::new(w, fdls, fdl_delay_ps);
        let mut rng = Rng::new(7, 1 + w as u64);
        let mean_hold_ps = 1e9; // 1 ms
        let mean_gap_ps = mean_hold_ps / load;
        let exp = |rng: &mut Rng, mean: f64| -mean * (1.0 - rng.uniform()).ln();
        let (mut t, mut lost) = (0.0f64, 0usize);
        for _ in 0..n {
            t += exp(&mut rng, mean_gap_ps);
            let hold = exp(&mut rng, mean_hold_ps).max(1.0) as SimTime;
            if c.offer(t as SimTime, hold) == Fate::Lost {
                lost += 1;
            }
        }
        lost as f64 / n as f64
    }

    #[test]
    fn erlang_b_closed_forms() {
        // B(1, A) = A / (1 + A); B(2, A) = A² / (2 + 2A + A²).
        for a in [0.1, 0.5, 1.0, 3.0] {
            assert!((erlang_b(1, a) - a / (1.0 + a)).abs() < 1e-12);
            assert!((erlang_b(2, a) - a * a / (2.0 + 2.0 * a + a * a)).abs() < 1e-12);
        }
    }

    /// Bufferless contention with Poisson arrivals and exponential holding times loses Erlang
    /// B's fraction, within three binomial standard errors.
    #[test]
    fn contention_loss_is_erlang_b() {
        let n = 200_000;
        for (w, load) in [(1, 0.05), (1, 0.3), (1, 1.0), (2, 1.0), (4, 2.0), (8, 6.0)] {
            let p = simulate(w, 0, 0, load, n);
            let b = erlang_b(w, load);
            let se = (b * (1.0 - b) / n as f64).sqrt();
            println!(
                "W = {w}, A = {load}: loss {p:.5} vs Erlang B {b:.5} ({:.2} SE)",
                (p - b) / se
            );
            assert!((p - b).abs() < 3.0 * se, "W = {w}, A = {load}: {p} vs {b}");
        }
    }

    /// Fibre delay lines save some contending bursts: the loss falls below Erlang B, and more
    /// lines save more.
    #[test]
    fn fdls_lower_the_loss() {
        let n = 100_000;
        let b = erlang_b(1, 0.5);
        let one = simulate(1, 1, 500_000_000, 0.5, n);
        let four = simulate(1, 4, 500_000_000, 0.5, n);
        println!("B = {b:.4}, one FDL {one:.4}, four {four:.4}");
        assert!(one < b - 5.0 * (b * (1.0 - b) / n as f64).sqrt());
        assert!(four < one);
    }

    #[test]
    fn a_busy_wavelength_loses_the_next_burst() {
        let mut c = Contention::new(1, 1, 100);
        assert_eq!(c.offer(0, 1000), Fate::Sent);
        // Busy until 1000; the FDL's retry at 600 still finds it busy.
        assert_eq!(c.offer(500, 10), Fate::Lost);
        // At 950 the retry at 1050 finds it free: delayed.
        assert_eq!(
            c.offer(950, 10),
            Fate::Delayed {
                fdl: 0,
                at_ps: 1050
            }
        );
        // The FDL is taken until 1060, the wavelength until 1060.
        assert_eq!(c.offer(1000, 10), Fate::Lost);
        assert_eq!(c.offer(1060, 10), Fate::Sent);
    }
}
