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

#[inline]
fn bloom_hash(key: &[u8]) -> u32 {
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

impl FilterPolicy for BloomFilterPolicy {
    fn name(&self) -> &str {
        "leveldb.BuiltinBloomFilter2"
    }

    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        // A small n would give a high false positive rate: use at least 64 bits.
        let bits = keys.len().saturating_mul(self.bits_per_key).max(64);
        let bytes = bits.div_ceil(8);
        let bits = (bytes * 8) as u64;
        let start = dst.len();
        dst.resize(start + bytes, 0);
        dst.push(self.k as u8);
        let array = &mut dst[start..start + bytes];
        for key in keys {
            let mut h = bloom_hash(key);
            let delta = h.rotate_right(17);
            for _ in 0..self.k {
                let bit = (h as u64 % bits) as usize;
                array[bit / 8] |= 1 << (bit % 8);
                h = h.wrapping_add(delta);
            }
        }
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
        let bits = (array.len() as u64) * 8;
        let mut h = bloom_hash(key);
        let delta = h.rotate_right(17);
        for _ in 0..k {
            let bit = (h as u64 % bits) as usize;
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
