//! A small, portable PRNG: xoshiro256++ (Blackman & Vigna, "Scrambled linear pseudorandom number
//! generators", ACM TOMS 2021) seeded through SplitMix64, as its authors recommend. Written here
//! rather than taken from a crate so that results stay bit-identical across dependency upgrades.

/// One independent random stream. Streams are derived from `(seed, stream id)`, so adding a flow
/// or a link does not shift the draws of the others.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut x = seed ^ splitmix64(&mut stream.wrapping_mul(0x632b_e59b_d9b4_e019).clone());
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in 0..n (n > 0), by Lemire's multiply-shift (bias below 2^-64·n).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Standard normal by the Box–Muller transform (one of the pair is used: simple and exact).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_value() {
        // First output of SplitMix64 from state 0, as published with the reference C code
        // (prng.di.unimi.it/splitmix64.c): 0xe220a8397b1dcdaf.
        let mut x = 0u64;
        assert_eq!(splitmix64(&mut x), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn xoshiro_reference_value() {
        // xoshiro256++ from state {1, 2, 3, 4}: first output is rotl(1 + 4, 23) + 1 = 41943041.
        let mut r = Rng { s: [1, 2, 3, 4] };
        assert_eq!(r.next_u64(), 41_943_041);
    }

    #[test]
    fn xoshiro_reference_vector() {
        // The first ten outputs of xoshiro256++ from state {1, 2, 3, 4}, produced with the
        // reference C code (prng.di.unimi.it/xoshiro256plusplus.c) and published as the test
        // vector of rand_xoshiro (rust-random/rngs, rand_xoshiro/src/xoshiro256plusplus.rs).
        let mut r = Rng { s: [1, 2, 3, 4] };
        let want: [u64; 10] = [
            41943041,
            58720359,
            3588806011781223,
            3591011842654386,
            9228616714210784205,
            9973669472204895162,
            14011001112246962877,
            12406186145184390807,
            15849039046786891736,
            10450023813501588000,
        ];
        assert_eq!(want.map(|_| r.next_u64()), want);
    }

    #[test]
    fn splitmix64_reference_vector() {
        // SplitMix64 from seed 1234567, as published by Rosetta Code ("Pseudo-random
        // numbers/Splitmix64") and in rand_xoshiro's splitmix64 test.
        let mut x = 1_234_567u64;
        let want: [u64; 5] = [
            6457827717110365317,
            3203168211198807973,
            9817491932198370423,
            4593380528125082431,
            16408922859458223821,
        ];
        assert_eq!(want.map(|_| splitmix64(&mut x)), want);
    }

    // Golden vectors for `Rng::new(seed, stream)` and its samplers, computed outside this code by
    // an independent Python implementation (big integers masked to 64 bits) written from the
    // reference C code of SplitMix64 and xoshiro256++. It first reproduces both published vectors
    // above. How `Rng::new` turns (seed, stream) into a state is this file's own choice (one
    // SplitMix64 step of stream·0x632be59bd9b4e019, xored into the seed, then four SplitMix64
    // outputs), so no published vector exists for it; the Python code follows that description:
    //
    //     M = 2**64 - 1
    //     def splitmix(x):            # -> (new state, output)
    //         x = (x + 0x9E3779B97F4A7C15) & M
    //         z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M
    //         z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    //         return x, z ^ (z >> 31)
    //     def new(seed, stream):      # the xoshiro256++ state
    //         _, k = splitmix((stream * 0x632BE59BD9B4E019) & M)
    //         x, s = seed ^ k, []
    //         for _ in range(4):
    //             x, out = splitmix(x); s.append(out)
    //         return s
    //     uniform = (next >> 11) * 2.0**-53           # exact
    //     below(n) = (next * n) >> 64
    //     normal = sqrt(-2 log(1 - uniform)) * cos(2 pi uniform)   # math.log, math.cos
    //
    // Normal values are compared to 1e-13: they go through the platform's log and cos.

    /// (seed, stream), first six raw outputs, first four uniforms, first eight `below(10)`, first
    /// four normals (each sampler from a fresh generator).
    type Golden = ((u64, u64), [u64; 6], [f64; 4], [usize; 8], [f64; 4]);
    const GOLDEN: [Golden; 2] = [
        (
            (1, 0),
            [
                0x4887_886c_7244_e091,
                0x4cfa_fb3b_6cc3_ea99,
                0xfbce_2116_7403_a2c1,
                0x2a5a_56f4_77b6_1858,
                0xf17a_4b62_7ee5_de1f,
                0x4c0f_0ec4_89b0_4f3c,
            ],
            [
                0.28331806800476356,
                0.300704671867393,
                0.983614032727941,
                0.16544097393462953,
            ],
            [2, 3, 9, 1, 9, 2, 8, 2],
            [
                -0.25566636145936567,
                1.4528411931339205,
                -0.6987199738208676,
                -0.3692438123784811,
            ],
        ),
        (
            (12345, 7),
            [
                0x2beb_6aaf_b407_bb16,
                0xdfd1_9ae7_1f32_c718,
                0x5e05_2b75_d241_50a9,
                0x6028_d697_24ea_b3f8,
                0x077b_22a5_d38b_c821,
                0xb366_3af4_85fc_b921,
            ],
            [
                0.1715609244311328,
                0.8742920698416112,
                0.3672663843774491,
                0.3756231421474847,
            ],
            [1, 8, 3, 3, 0, 7, 4, 4],
            [
                0.43190004367992546,
                -0.6791832330915933,
                -0.07412674075377396,
                -1.0443470843000013,
            ],
        ),
    ];

    #[test]
    fn seeded_streams_match_the_golden_vectors() {
        for ((seed, stream), raw, uniform, below, normal) in GOLDEN {
            let mut r = Rng::new(seed, stream);
            assert_eq!(raw.map(|_| r.next_u64()), raw, "raw, ({seed}, {stream})");
            let mut r = Rng::new(seed, stream);
            assert_eq!(
                uniform.map(|_| r.uniform()),
                uniform,
                "uniform, ({seed}, {stream})"
            );
            let mut r = Rng::new(seed, stream);
            assert_eq!(
                below.map(|_| r.below(10)),
                below,
                "below, ({seed}, {stream})"
            );
            let mut r = Rng::new(seed, stream);
            for want in normal {
                let got = r.normal();
                assert!(
                    (got - want).abs() < 1e-13,
                    "normal, ({seed}, {stream}): {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn uniform_moments() {
        // U[0, 1): mean 1/2, variance 1/12. Standard errors for n draws: of the mean
        // sqrt(1/12/n) = 0.00091, of the variance sqrt((1/80 − 1/144)/n) = sqrt(1/180/n) = 0.00024.
        let n = 100_000;
        let mut r = Rng::new(3, 11);
        let xs: Vec<f64> = (0..n).map(|_| r.uniform()).collect();
        assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)));
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        let (se_mean, se_var) = (
            (1.0 / 12.0 / n as f64).sqrt(),
            (1.0 / 180.0 / n as f64).sqrt(),
        );
        assert!((mean - 0.5).abs() < 4.0 * se_mean, "mean {mean}");
        assert!((var - 1.0 / 12.0).abs() < 4.0 * se_var, "var {var}");
    }

    #[test]
    fn streams_differ_and_repeat() {
        let a: Vec<u64> = (0..4).map(|_| Rng::new(1, 0).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::new(1, 0).next_u64(), Rng::new(1, 1).next_u64());
        assert_ne!(Rng::new(1, 0).next_u64(), Rng::new(2, 0).next_u64());
    }

    #[test]
    fn normal_moments() {
        let mut r = Rng::new(7, 3);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        // Standard error of the mean is 1/sqrt(n) = 0.0022; of the variance about 0.0032.
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.015, "var {var}");
    }
}
