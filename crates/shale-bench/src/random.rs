//! db_bench's pseudo-random generator: the Park–Miller "minimal standard"
//! linear congruential generator `seed = seed * 16807 mod (2^31 - 1)`.
//!
//! It is reproduced exactly (including the seed normalisation and the
//! reduction trick) so that the key sequences this tool generates equal the
//! ones LevelDB's db_bench generates for the same seeds: db_bench seeds its
//! value buffer with 301 and each benchmark thread with 1000 + a counter of
//! threads started so far.
//!
//! Invariant: the state is always in `1..=2^31-2`, so the sequence never
//! collapses to 0 or M.

/// The modulus, 2^31 - 1 (a Mersenne prime).
const M: u32 = 2_147_483_647;
/// The multiplier (7^5).
const A: u64 = 16_807;

/// A small, fast and fully deterministic random number generator.
///
/// ```
/// use shale_bench::random::Random;
/// let mut r = Random::new(301);
/// assert_eq!(r.next(), 5_058_907);
/// ```
#[derive(Debug, Clone)]
pub struct Random {
    seed: u32,
}

impl Random {
    /// A generator seeded with `seed` (only its low 31 bits count; 0 and
    /// 2^31-1 are replaced by 1, since they are fixed points).
    pub fn new(seed: u32) -> Random {
        let mut s = seed & 0x7fff_ffff;
        if s == 0 || s == M {
            s = 1;
        }
        Random { seed: s }
    }

    /// The next value, in `1..=2^31-2`.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u32 {
        // seed * A fits in 46 bits. Since 2^31 ≡ 1 (mod M), the product
        // reduces to (high bits) + (low 31 bits), which may exceed M once.
        let product = u64::from(self.seed) * A;
        let mut s = ((product >> 31) + (product & u64::from(M))) as u32;
        if s > M {
            s -= M;
        }
        self.seed = s;
        s
    }

    /// A value in `0..n`. `n` must be positive (db_bench takes an `int`).
    #[inline]
    pub fn uniform(&mut self, n: u32) -> u32 {
        debug_assert!(n > 0, "uniform(0)");
        self.next() % n.max(1)
    }

    /// True about once in `n` calls.
    #[inline]
    pub fn one_in(&mut self, n: u32) -> bool {
        self.uniform(n) == 0
    }

    /// Picks a bit count uniformly in `0..=max_log`, then a value with that
    /// many random bits: a number in `0..2^max_log` biased towards small ones.
    #[inline]
    pub fn skewed(&mut self, max_log: u32) -> u32 {
        let bits = self.uniform(max_log + 1);
        self.uniform(1u32 << bits.min(31))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_and_modulus_seeds_are_replaced_by_one() {
        assert_eq!(Random::new(0).next(), 16_807);
        assert_eq!(Random::new(M).next(), 16_807);
        // Only the low 31 bits of the seed count.
        assert_eq!(Random::new(0x8000_0001).next(), 16_807);
    }

    #[test]
    fn state_stays_in_range_at_the_top() {
        // The largest state M-1 maps to M - 16807 (since -1 * A ≡ M - A).
        let mut r = Random { seed: M - 1 };
        assert_eq!(r.next(), M - 16_807);
    }

    #[test]
    fn skewed_stays_below_its_bound() {
        let mut r = Random::new(7);
        for _ in 0..10_000 {
            assert!(r.skewed(10) < 1024);
        }
    }
}
