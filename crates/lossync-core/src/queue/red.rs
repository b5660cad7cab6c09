//! Random Early Detection (Floyd & Jacobson, IEEE/ACM ToN 1993), in the fluid form of Misra,
//! Gong, Towsley (SIGCOMM 2000): the average queue follows
//! `d avg/dt = ln(1 − w)/δ · (avg − q)` with δ = 1/C (one sample per packet served), and the drop
//! probability rises linearly from 0 at min_th to max_p at max_th; with `gentle` (Floyd 2000,
//! "Recommendation on using the gentle variant of RED") from max_p at max_th to 1 at 2·max_th.

use super::Discipline;

#[derive(Debug, Clone)]
pub struct Red {
    min_th: f64,
    max_th: f64,
    max_p: f64,
    weight: f64,
    gentle: bool,
    avg: f64,
}

impl Red {
    pub fn new(min_th: f64, max_th: f64, max_p: f64, weight: f64, gentle: bool) -> Self {
        Red {
            min_th,
            max_th,
            max_p,
            weight,
            gentle,
            avg: 0.0,
        }
    }

    pub fn average(&self) -> f64 {
        self.avg
    }

    /// Drop probability at average queue `avg` (packets).
    pub fn probability(&self, avg: f64) -> f64 {
        if avg < self.min_th {
            0.0
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle && avg < 2.0 * self.max_th {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            1.0
        }
    }
}

impl Discipline for Red {
    fn early_drop_probability(&mut self, q: f64, dt: f64, capacity_pps: f64) -> f64 {
        // One EWMA sample per packet time: after C·dt samples the old average keeps (1−w)^(C·dt).
        let keep = (1.0 - self.weight).powf(capacity_pps * dt);
        self.avg = q + (self.avg - q) * keep;
        self.probability(self.avg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piecewise_linear_probability() {
        let r = Red::new(10.0, 30.0, 0.1, 0.002, true);
        assert_eq!(r.probability(5.0), 0.0);
        assert!((r.probability(20.0) - 0.05).abs() < 1e-15); // halfway: max_p/2
        assert!((r.probability(45.0) - 0.55).abs() < 1e-15); // gentle: 0.1 + 0.9·15/30
        assert_eq!(r.probability(60.0), 1.0);
        let hard = Red::new(10.0, 30.0, 0.1, 0.002, false);
        assert_eq!(hard.probability(31.0), 1.0);
    }

    #[test]
    fn average_converges_at_the_ewma_rate() {
        // After n packet times the average has moved 1 − (1−w)^n of the way to a constant queue.
        let mut r = Red::new(10.0, 30.0, 0.1, 0.01, true);
        r.early_drop_probability(100.0, 1.0, 100.0); // 100 samples
        let expect = 100.0 * (1.0 - 0.99f64.powi(100));
        assert!((r.average() - expect).abs() < 1e-9);
    }
}
