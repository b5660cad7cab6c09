//! Wavelength contention in a bufferless optical burst switching core (docs/packet.md, "Optical
//! burst switching"): the alternative to Bernoulli burst loss. The link's output has `W`
//! wavelengths and no optical buffer; a burst takes any wavelength that is free when it
//! arrives and holds it for its transmission; if every wavelength is busy it is lost whole
//! (Qiao and Yoo, "Optical burst switching", J. High Speed Networks 8(1), 1999: OBS cores
//! switch bursts without buffering them). Optionally `K` fibre delay lines (FDLs) of one delay
//! `D`: a contending burst enters the first free FDL and is retried `D` later on the
//! wavelengths; it is lost if no FDL is free or if no wavelength is free at the retry.
//!
//! The edge is electronic: it sends its own bursts on its `W` transmitters, a burst waiting
//! for the first one free, so its bursts never contend with each other (an edge node buffers
//! and schedules the bursts it assembles, as the edge router of Xiong et al., below, does). In
//! the core they meet the bursts of the network's other edges: an optional background of
//! Poisson arrivals with exponential holding times, of offered load `A` erlangs. A superposition of
//! many independent sparse streams tends to Poisson (Palm–Khintchine theorem; e.g. Cox and
//! Isham, Point Processes, §4.5), and the loss of Poisson arrivals depends on the holding
//! times only through their mean (Erlang B's insensitivity). Background bursts take a free
//! wavelength or are lost; they use no FDL.
//!
//! Scheduling is horizon scheduling without void filling (LAUC, Xiong, Vandenhoute, Cankaya,
//! "Control architecture in optical burst-switched WDM networks", IEEE JSAC 18(10), 2000): each
//! wavelength is reserved up to the end of its last burst, and the retry after an FDL is decided
//! when the burst arrives (its header, sent ahead as in JET, reserves the wavelength then), so a
//! burst that arrives meanwhile sees the reservation. An FDL holds one burst at a time, from the
//! burst's head entering to its tail leaving.
//!
//! A sparse burst of the edge's (arriving at a random time, holding the wavelength for a
//! negligible time) sees the background alone and is lost with Erlang B's fraction `B(W, A)`
//! (Poisson arrivals see time averages: Wolff, Operations Research 30(2), 1982); tested below.

use super::event::SimTime;
use crate::rng::Rng;

/// The background's random stream, apart from every other element's (`+ link`).
const BACKGROUND_STREAM: u64 = 7_000_000;

/// What became of a burst offered to the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// On a wavelength now, or as soon as the edge has sent its earlier bursts.
    Sent,
    /// Through fibre delay line `fdl`, on a wavelength at `at_ps`.
    Delayed { fdl: usize, at_ps: SimTime },
    /// Every wavelength busy, and no FDL could save it.
    Lost,
}

/// The other edges' bursts: Poisson arrivals, exponential holding times (picoseconds).
#[derive(Debug, Clone)]
pub struct Background {
    rng: Rng,
    mean_gap_ps: f64,
    mean_hold_ps: f64,
    next_ps: f64,
}

impl Background {
    /// Offered load `erlangs`, mean holding time `mean_hold_ps`, drawing from the run's `seed`
    /// on the stream of link `link`.
    pub fn new(erlangs: f64, mean_hold_ps: f64, seed: u64, link: usize) -> Self {
        let mut b = Background {
            rng: Rng::new(seed, BACKGROUND_STREAM + link as u64),
            mean_gap_ps: mean_hold_ps / erlangs,
            mean_hold_ps,
            next_ps: 0.0,
        };
        b.next_ps = b.exp(b.mean_gap_ps);
        b
    }

    fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.rng.uniform()).ln()
    }
}

/// The wavelengths of one link's core output, its fibre delay lines, the edge's transmitters
/// and the background bursts.
#[derive(Debug, Clone)]
pub struct Contention {
    /// Per wavelength of the core, the end of its last reserved burst.
    free_at_ps: Vec<SimTime>,
    /// Per transmitter of the edge, the end of the last burst it sent.
    edge_free_at_ps: Vec<SimTime>,
    /// Per FDL, when the burst in it has left.
    fdl_free_at_ps: Vec<SimTime>,
    fdl_delay_ps: SimTime,
    background: Option<Background>,
}

impl Contention {
    pub fn new(
        wavelengths: usize,
        fdls: usize,
        fdl_delay_ps: SimTime,
        background: Option<Background>,
    ) -> Self {
        Contention {
            free_at_ps: vec![0; wavelengths.max(1)],
            edge_free_at_ps: vec![0; wavelengths.max(1)],
            fdl_free_at_ps: vec![0; fdls],
            fdl_delay_ps,
            background,
        }
    }

    /// A wavelength free at `t`, reserved for `[t, t + hold)`.
    fn reserve(free_at_ps: &mut [SimTime], t: SimTime, hold_ps: SimTime) -> bool {
        match free_at_ps.iter_mut().find(|f| **f <= t) {
            Some(f) => {
                *f = t + hold_ps;
                true
            }
            None => false,
        }
    }

    /// The background bursts that arrive up to `t`, each on a free wavelength or lost.
    fn background_until(&mut self, t: SimTime) {
        let Some(b) = &mut self.background else {
            return;
        };
        while b.next_ps <= t as f64 {
            let hold = (b.exp(b.mean_hold_ps) as SimTime).max(1);
            Self::reserve(&mut self.free_at_ps, b.next_ps as SimTime, hold);
            let gap = b.exp(b.mean_gap_ps);
            b.next_ps += gap;
        }
    }

    /// The edge releases a burst at `now_ps` that holds a wavelength for `hold_ps`: it leaves
    /// on the first transmitter free and meets the core's other bursts there.
    pub fn offer(&mut self, now_ps: SimTime, hold_ps: SimTime) -> Fate {
        let edge = (self.edge_free_at_ps.iter_mut())
            .min_by_key(|f| **f)
            .expect("a wavelength");
        let t = now_ps.max(*edge);
        *edge = t + hold_ps;
        let retry = t + self.fdl_delay_ps;
        self.background_until(t);
        if Self::reserve(&mut self.free_at_ps, t, hold_ps) {
            return Fate::Sent;
        }
        // A line free from the release on: the burst's segments wait in its slot from then (a
        // line that frees between the release and `t` is not used).
        let Some(fdl) = self.fdl_free_at_ps.iter().position(|&f| f <= now_ps) else {
            return Fate::Lost;
        };
        self.background_until(retry);
        if !Self::reserve(&mut self.free_at_ps, retry, hold_ps) {
            return Fate::Lost;
        }
        self.fdl_free_at_ps[fdl] = retry + hold_ps;
        Fate::Delayed { fdl, at_ps: retry }
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

    const MS_PS: f64 = 1e9;

    /// The edge's bursts at Poisson times of mean gap 10 ms, each holding 1 ps (sparse: they
    /// see the background alone), against a background of `load` erlangs with 1 ms mean
    /// holding: the fraction of the edge's bursts lost.
    fn probe(w: usize, fdls: usize, fdl_delay_ps: SimTime, load: f64, n: usize) -> f64 {
        let bg = Background::new(load, MS_PS, 7, w);
        let mut c = Contention::new(w, fdls, fdl_delay_ps, Some(bg));
        let mut rng = Rng::new(11, 1 + w as u64);
        let (mut t, mut lost) = (0.0f64, 0usize);
        for _ in 0..n {
            t += -10.0 * MS_PS * (1.0 - rng.uniform()).ln();
            if c.offer(t as SimTime, 1) == Fate::Lost {
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

    /// A sparse burst of the edge's, against a Poisson background with exponential holding
    /// times, is lost with Erlang B's fraction, within three binomial standard errors.
    #[test]
    fn contention_loss_is_erlang_b() {
        let n = 100_000;
        for (w, load) in [(1, 0.02), (1, 0.3), (1, 1.0), (2, 1.0), (4, 2.0), (8, 6.0)] {
            let p = probe(w, 0, 0, load, n);
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
        let one = probe(1, 1, 500_000_000, 0.5, n);
        let four = probe(1, 4, 500_000_000, 0.5, n);
        println!("B = {b:.4}, one FDL {one:.4}, four {four:.4}");
        assert!(one < b - 5.0 * (b * (1.0 - b) / n as f64).sqrt());
        assert!(four <= one);
    }

    /// The edge sends its bursts one after another: a burst released while the edge still
    /// sends the last one waits for it, and is not lost to it (it was, when the core reserved
    /// from the release on).
    #[test]
    fn the_edge_never_contends_with_itself() {
        let mut c = Contention::new(1, 0, 0, None);
        assert_eq!(c.offer(0, 1000), Fate::Sent);
        assert_eq!(c.offer(500, 10), Fate::Sent);
        assert_eq!(c.edge_free_at_ps, vec![1010]);
        assert_eq!(c.free_at_ps, vec![1010]);
        // Two transmitters and two wavelengths: the second burst leaves at once on the other.
        let mut c = Contention::new(2, 0, 0, None);
        assert_eq!(c.offer(0, 1000), Fate::Sent);
        assert_eq!(c.offer(500, 10), Fate::Sent);
        assert_eq!(c.free_at_ps, vec![1000, 510]);
    }

    /// A wavelength a background burst holds loses the edge's burst, unless an FDL's retry
    /// finds it free.
    #[test]
    fn a_busy_wavelength_loses_the_burst_an_fdl_saves_it() {
        let mut c = Contention::new(1, 1, 100, None);
        c.free_at_ps[0] = 1000; // a background burst until 1000
        assert_eq!(c.offer(500, 10), Fate::Lost); // the retry at 600 finds it busy
        assert_eq!(
            c.offer(950, 10),
            Fate::Delayed {
                fdl: 0,
                at_ps: 1050
            }
        );
        assert_eq!(c.fdl_free_at_ps, vec![1060]);
    }

    /// A burst that waits for the edge's transmitter takes a fibre delay line only if the line
    /// is free at its release: its segments wait in the line's slot from then, and the slot may
    /// still hold the last burst until that one's retry.
    #[test]
    fn a_waiting_burst_takes_only_a_line_free_at_its_release() {
        let mut c = Contention::new(1, 1, 100, None);
        c.free_at_ps[0] = 1000; // a background burst until 1000
        c.edge_free_at_ps[0] = 950; // the edge sends until 950
        c.fdl_free_at_ps[0] = 940; // the line's last burst leaves at 940

        // Released at 900, sent at 950 and finds the wavelength busy; the line frees only at
        // 940, after the release.
        assert_eq!(c.offer(900, 10), Fate::Lost);
        let mut c = Contention::new(1, 1, 100, None);
        c.free_at_ps[0] = 1000;
        c.edge_free_at_ps[0] = 950;
        c.fdl_free_at_ps[0] = 900;
        assert_eq!(
            c.offer(900, 10),
            Fate::Delayed {
                fdl: 0,
                at_ps: 1050
            }
        );
    }
}
