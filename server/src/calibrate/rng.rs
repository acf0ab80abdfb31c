//! Small, fully specified pseudo-random generators: [`Rng`] (xoshiro256**
//! seeded by SplitMix64) for the calibration engine, and `SplitMix64`
//! itself, which also seeds `Rng` and orders the assignment planner's judges
//! (`crate::planner`). Both outputs are part of what users see (result
//! hashes, planned assignments), so neither generator may change.
//!
//! Why not `rand`/`rand_chacha`: the result hash of a calibration depends on
//! every random draw (CV fold assignment, bootstrap replicates). The sampling
//! helpers of `rand` (`random_range`, shuffles, ...) are explicitly not
//! value-stable across releases, so a dependency bump could silently change
//! published rankings' hashes. This generator is ~40 lines, its output is
//! defined here, and it is plenty for statistical resampling (it is not used
//! for anything security-related).

/// Named streams, so that each consumer of randomness gets an independent
/// sequence derived from the one user-facing seed.
pub(crate) const STREAM_FOLDS: u64 = 1;
pub(crate) const STREAM_BOOTSTRAP: u64 = 1_000;
pub(crate) const STREAM_SYNTH: u64 = 2_000_000;
/// Posterior draws: one stream per draw (engine v3).
pub(crate) const STREAM_POSTERIOR: u64 = 4_000_000;

/// SplitMix64's increment (the golden ratio in 64-bit fixed point).
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64 finaliser: a bijective 64-bit mixer.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64: a tiny, well-mixed, seedable generator (Steele, Lea & Flood, 2014).
#[derive(Clone, Debug)]
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN_GAMMA);
        mix64(self.0)
    }

    /// Uniform-enough integer in `0..n` (`n > 0`), by multiply-shift. Unlike
    /// [`Rng::below`] there is no rejection step (bias at most `n / 2^64`): the
    /// planner's published plans depend on this exact draw.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Fisher–Yates shuffle drawing with [`Self::below`].
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let r = self.below(i + 1);
            items.swap(i, r);
        }
    }
}

/// xoshiro256** generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// Independent stream `stream` derived from `seed`. Different
    /// `(seed, stream)` pairs give unrelated sequences.
    pub fn stream(seed: u64, stream: u64) -> Self {
        let mut sm = SplitMix64::new(mix64(seed ^ mix64(stream.wrapping_add(GOLDEN_GAMMA))));
        let mut s = [0u64; 4];
        for slot in &mut s {
            *slot = sm.next_u64();
        }
        // xoshiro must not start from the all-zero state; SplitMix64 outputs
        // make that astronomically unlikely, but be total anyway.
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform integer in `0..n` (Lemire's method with rejection, unbiased).
    /// Returns 0 when `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// Uniform index in `0..n` as `usize`.
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// Uniform float in `[0, 1)` with 53 bits of precision.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal draw (Box–Muller; one of the pair is discarded to
    /// keep the generator state simple and the sequence easy to reason about).
    pub fn normal(&mut self) -> f64 {
        // 1 - unit() is in (0, 1], so the logarithm is finite.
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.index(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_deterministic_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::stream(7, 1).next_u64()).collect();
        assert!(a.iter().all(|&x| x == a[0]));
        let mut r1 = Rng::stream(7, 1);
        let mut r2 = Rng::stream(7, 2);
        let mut r3 = Rng::stream(8, 1);
        let x1 = r1.next_u64();
        assert_ne!(x1, r2.next_u64());
        assert_ne!(x1, r3.next_u64());
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut r = Rng::stream(1, 0);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[r.index(6)] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
        assert_eq!(r.below(0), 0);
    }

    #[test]
    fn normal_has_unit_variance() {
        let mut r = Rng::stream(3, 0);
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.02, "{mean}");
        assert!((var - 1.0).abs() < 0.03, "{var}");
    }
}
