//! LevelDB's built-in bloom filter (`leveldb.BuiltinBloomFilter2`).
//!
//! A filter is a bit array of `max(64, n * bits_per_key)` bits rounded up to
//! whole bytes, followed by one byte holding `k`, the number of probes. Each
//! key is hashed once (LevelDB's hash, seed `0xbc9f1d34`) and probed `k` times
//! by double hashing: the hash advances by its own value rotated right by 17
//! bits. The layout and arithmetic must match LevelDB exactly, or tables
//! written by one engine would give false negatives in the other.

use crate::filter_policy::FilterPolicy;
use crate::util::hash::hash;

/// The seed LevelDB's bloom filter hashes keys with.
const BLOOM_SEED: u32 = 0xbc9f_1d34;

/// Bits per key beyond this buy nothing (the probe count is capped at 30) and
/// would only make filters huge; larger settings are lowered to it.
const MAX_BITS_PER_KEY: usize = 1000;

/// Filters encoded with more probes than this are reserved for other encodings
/// and are treated as matching every key.
const MAX_PROBES: usize = 30;

/// `n mod d` for a fixed `d`, by two multiplications instead of a division
/// (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019:
/// exact for every 32-bit `n` when `1 < d < 2^32`). A bloom filter takes
/// one remainder per probe, six per key at 10 bits per key, and a 64-bit
/// division costs tens of cycles.
#[derive(Clone, Copy)]
struct Remainder {
    d: u64,
    /// `ceil(2^64 / d)`, or 0 when `d` is out of the method's range.
    c: u64,
}

impl Remainder {
    #[inline]
    fn new(d: u64) -> Remainder {
        let c = if d > 1 && d <= u64::from(u32::MAX) {
            u64::MAX / d + 1
        } else {
            0
        };
        Remainder { d, c }
    }

    #[inline]
    fn of(self, n: u32) -> u64 {
        if self.c == 0 {
            return u64::from(n) % self.d;
        }
        let low = self.c.wrapping_mul(u64::from(n));
        ((u128::from(low) * u128::from(self.d)) >> 64) as u64
    }
}

/// The hash a key's bloom filter bits come from (the whole-table filter
/// uses it too, so that a table's writer hashes each key once).
#[inline]
pub(crate) fn bloom_hash(key: &[u8]) -> u32 {
    hash(key, BLOOM_SEED)
}

/// A bloom filter policy with a fixed number of bits per key.
///
/// ```
/// use shale::{BloomFilterPolicy, FilterPolicy};
/// let policy = BloomFilterPolicy::new(10);
/// let mut filter = Vec::new();
/// policy.create_filter(&[b"hello", b"world"], &mut filter);
/// assert!(policy.key_may_match(b"hello", &filter));
/// assert_eq!(policy.name(), "leveldb.BuiltinBloomFilter2");
/// ```
#[derive(Debug, Clone)]
pub struct BloomFilterPolicy {
    bits_per_key: usize,
    /// Probes per key: `bits_per_key * ln 2`, rounded down, within `1..=30`.
    k: usize,
}

impl BloomFilterPolicy {
    /// A policy spending about `bits_per_key` bits per key; 10 gives a false
    /// positive rate near 1%. Values above 1000 are treated as 1000. Its
    /// filters are LevelDB's `leveldb.BuiltinBloomFilter2`, so tables keep
    /// working in both engines.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use shale::{BloomFilterPolicy, Options};
    /// let opts = Options {
    ///     filter_policy: Some(Arc::new(BloomFilterPolicy::new(10))),
    ///     ..Default::default()
    /// };
    /// # let _ = opts;
    /// ```
    pub fn new(bits_per_key: usize) -> BloomFilterPolicy {
        let bits_per_key = bits_per_key.min(MAX_BITS_PER_KEY);
        // 0.69 is ln(2) rounded down, as LevelDB computes it (in doubles,
        // truncated), so that filters are bit-identical.
        let k = ((bits_per_key as f64 * 0.69) as usize).clamp(1, MAX_PROBES);
        BloomFilterPolicy { bits_per_key, k }
    }
}

impl BloomFilterPolicy {
    /// Appends the filter of `n` keys given by their [`bloom_hash`]es: the
    /// bytes `create_filter` makes from the keys themselves.
    pub(crate) fn filter_from_hashes(
        &self,
        n: usize,
        hashes: impl Iterator<Item = u32>,
        dst: &mut Vec<u8>,
    ) {
        // A small n would give a high false positive rate: use at least 64 bits.
        let bits = n.saturating_mul(self.bits_per_key).max(64);
        let bytes = bits.div_ceil(8);
        let bits = Remainder::new((bytes * 8) as u64);
        let start = dst.len();
        dst.resize(start + bytes, 0);
        dst.push(self.k as u8);
        let array = &mut dst[start..start + bytes];
        for mut h in hashes {
            let delta = h.rotate_right(17);
            for _ in 0..self.k {
                let bit = bits.of(h) as usize;
                array[bit / 8] |= 1 << (bit % 8);
                h = h.wrapping_add(delta);
            }
        }
    }
}

impl FilterPolicy for BloomFilterPolicy {
    fn name(&self) -> &str {
        "leveldb.BuiltinBloomFilter2"
    }

    fn whole_table_bits_per_key(&self) -> Option<usize> {
        Some(self.bits_per_key)
    }

    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        self.filter_from_hashes(keys.len(), keys.iter().map(|k| bloom_hash(k)), dst);
    }

    fn builtin_bloom_bits_per_key(&self) -> Option<usize> {
        Some(self.bits_per_key)
    }

    #[inline]
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        let Some((&k, array)) = filter.split_last() else {
            return false;
        };
        if array.is_empty() {
            return false;
        }
        if k as usize > MAX_PROBES {
            // Reserved for newer encodings: say "maybe".
            return true;
        }
        let bits = Remainder::new((array.len() as u64) * 8);
        let mut h = bloom_hash(key);
        let delta = h.rotate_right(17);
        for _ in 0..k {
            let bit = bits.of(h) as usize;
            if array[bit / 8] & (1 << (bit % 8)) == 0 {
                return false;
            }
            h = h.wrapping_add(delta);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter_for(policy: &BloomFilterPolicy, keys: &[&[u8]]) -> Vec<u8> {
        let mut f = Vec::new();
        policy.create_filter(keys, &mut f);
        f
    }

    fn key(i: u32) -> [u8; 4] {
        i.to_le_bytes()
    }

    #[test]
    fn remainders_by_multiplication_are_exact() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let edges = [0u32, 1, 2, 63, 64, 65, 1 << 31, u32::MAX - 1, u32::MAX];
        let ds = [
            1u64,
            2,
            3,
            7,
            64,
            72,
            1000,
            4096,
            65_535,
            1 << 31,
            u64::from(u32::MAX),
            1 << 32,
            u64::MAX,
        ];
        let random_ds: Vec<u64> = (0..2000)
            .map(|_| (next() >> (next() % 64)).max(1))
            .collect();
        for d in ds.into_iter().chain(random_ds) {
            let r = Remainder::new(d);
            let random_ns: Vec<u32> = (0..200).map(|_| next() as u32).collect();
            for n in edges.into_iter().chain(random_ns) {
                assert_eq!(r.of(n), u64::from(n) % d, "{n} mod {d}");
            }
        }
    }

    #[test]
    fn name_is_leveldbs() {
        assert_eq!(
            BloomFilterPolicy::new(10).name(),
            "leveldb.BuiltinBloomFilter2"
        );
    }

    #[test]
    fn empty_filter_matches_nothing() {
        let p = BloomFilterPolicy::new(10);
        let f = filter_for(&p, &[]);
        assert_eq!(f.len(), 9, "64 bits and the probe count");
        assert!(!p.key_may_match(b"hello", &f));
        assert!(!p.key_may_match(b"world", &f));
        assert!(!p.key_may_match(b"hello", &[]));
        assert!(!p.key_may_match(b"hello", &[6]));
    }

    #[test]
    fn small_filter() {
        let p = BloomFilterPolicy::new(10);
        let f = filter_for(&p, &[b"hello", b"world"]);
        assert!(p.key_may_match(b"hello", &f));
        assert!(p.key_may_match(b"world", &f));
        assert!(!p.key_may_match(b"x", &f));
        assert!(!p.key_may_match(b"foo", &f));
    }

    #[test]
    fn filter_bytes_match_leveldb() {
        // Produced by libleveldb 1.23's NewBloomFilterPolicy(10)->CreateFilter.
        let p = BloomFilterPolicy::new(10);
        assert_eq!(
            filter_for(&p, &[b"hello", b"world"]),
            [0x11, 0x40, 0x00, 0x41, 0x44, 0x10, 0x40, 0x10, 0x06]
        );
        // Appending keeps what is already in `dst`.
        let mut f = vec![0xaa];
        p.create_filter(&[b"hello"], &mut f);
        assert_eq!(f[0], 0xaa);
        assert_eq!(f.len(), 10);
    }

    #[test]
    fn probe_count_follows_bits_per_key() {
        assert_eq!(BloomFilterPolicy::new(0).k, 1);
        assert_eq!(BloomFilterPolicy::new(1).k, 1);
        assert_eq!(BloomFilterPolicy::new(10).k, 6);
        assert_eq!(BloomFilterPolicy::new(20).k, 13);
        assert_eq!(BloomFilterPolicy::new(100).k, 30);
        assert_eq!(BloomFilterPolicy::new(usize::MAX).bits_per_key, 1000);
    }

    #[test]
    fn reserved_probe_counts_match_everything() {
        let p = BloomFilterPolicy::new(10);
        let mut f = filter_for(&p, &[b"hello"]);
        *f.last_mut().unwrap() = 31;
        assert!(p.key_may_match(b"anything", &f));
    }

    fn next_length(length: u32) -> u32 {
        match length {
            0..10 => length + 1,
            10..100 => length + 10,
            100..1000 => length + 100,
            _ => length + 1000,
        }
    }

    #[test]
    fn varying_lengths_have_no_false_negatives_and_few_false_positives() {
        let p = BloomFilterPolicy::new(10);
        let (mut mediocre, mut good) = (0, 0);
        let mut length = 1;
        while length <= 10_000 {
            let keys: Vec<[u8; 4]> = (0..length).map(key).collect();
            let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            let f = filter_for(&p, &refs);
            assert!(
                f.len() <= (length as usize * 10 / 8) + 40,
                "length {length}: filter of {} bytes",
                f.len()
            );
            for k in &keys {
                assert!(p.key_may_match(k, &f), "length {length}: false negative");
            }
            let hits = (0..10_000)
                .filter(|i| p.key_may_match(&key(i + 1_000_000_000), &f))
                .count();
            let rate = hits as f64 / 10_000.0;
            assert!(rate <= 0.02, "length {length}: false positive rate {rate}");
            if rate > 0.0125 {
                mediocre += 1;
            } else {
                good += 1;
            }
            length = next_length(length);
        }
        assert!(
            mediocre <= good / 5,
            "{mediocre} mediocre filters, {good} good"
        );
    }
}
