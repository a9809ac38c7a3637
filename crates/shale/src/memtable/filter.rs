//! A memtable's key filter: a bloom filter over the user keys of its
//! entries, so that a point lookup of a key the memtable does not hold (most
//! lookups, the memtable holding only the latest writes) skips the skiplist
//! search and its cache misses.
//!
//! The filter is register-blocked: a key's bits all lie in one 64-bit word,
//! so an insert is one atomic OR and a probe one load. With the sizing the
//! database uses (one bit per 16 bytes of write buffer, some 9 bits per entry
//! of 100-byte values) about 3% of absent keys still search the skiplist.
//!
//! Invariants: bits are only ever set. An insert sets its key's bits before
//! the entry is added to the skiplist, and the database publishes a write's
//! sequence number (release) only after that, so a reader that sees the
//! sequence (acquire) sees the bits: the filter has no false negatives for
//! any entry a reader may see. It applies only when equal user keys are
//! equal bytes (a bytewise comparator).

use std::sync::atomic::{AtomicU64, Ordering};

/// Bits set per key, all in one word.
const BITS_PER_KEY: u32 = 5;

/// The filter: a power-of-two number of words.
pub struct KeyFilter {
    words: Box<[AtomicU64]>,
    /// `words.len() - 1`.
    mask: u64,
}

/// A 64-bit hash of `key`, eight bytes at a time, with a final mix so that
/// every output bit depends on every input bit.
#[inline]
fn hash(key: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (key.len() as u64).wrapping_mul(K);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    // Murmur3's 64-bit finalizer.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

impl KeyFilter {
    /// A filter of about `bytes` bytes (rounded down to a power of two, at
    /// least 8).
    pub fn new(bytes: usize) -> KeyFilter {
        let words = (bytes / 8).max(1);
        let words = 1usize << (usize::BITS - 1 - words.leading_zeros());
        KeyFilter {
            words: (0..words).map(|_| AtomicU64::new(0)).collect(),
            mask: words as u64 - 1,
        }
    }

    /// The word of `key` and its bits in it.
    #[inline]
    fn locate(&self, key: &[u8]) -> (usize, u64) {
        let h = hash(key);
        // The word from the high bits, the bit positions from the low ones.
        let word = ((h >> 32) & self.mask) as usize;
        let mut bits = 0u64;
        for i in 0..BITS_PER_KEY {
            bits |= 1 << ((h >> (6 * i)) & 63);
        }
        (word, bits)
    }

    /// Records `key`.
    #[inline]
    pub fn add(&self, key: &[u8]) {
        let (word, bits) = self.locate(key);
        self.words[word].fetch_or(bits, Ordering::Relaxed);
    }

    /// False only if `key` was never added.
    #[inline]
    pub fn may_contain(&self, key: &[u8]) -> bool {
        let (word, bits) = self.locate(key);
        self.words[word].load(Ordering::Relaxed) & bits == bits
    }

    #[cfg(test)]
    /// Bytes of memory held.
    pub fn memory_usage(&self) -> usize {
        8 * self.words.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_no_false_negatives() {
        let f = KeyFilter::new(4096);
        let keys: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| format!("{i:016}").into_bytes())
            .collect();
        for k in &keys {
            f.add(k);
        }
        for k in &keys {
            assert!(f.may_contain(k), "{k:?}");
        }
        f.add(b"");
        assert!(f.may_contain(b""));
    }

    #[test]
    fn rules_out_most_absent_keys_at_nine_bits_per_key() {
        // 64 KiB for 55,000 keys, as for an 8 MiB write buffer of 100-byte values.
        let f = KeyFilter::new(64 << 10);
        for i in 0..55_000u32 {
            f.add(format!("{:016}", i * 2).as_bytes());
        }
        let absent = 100_000u32;
        let false_positives = (0..absent)
            .filter(|i| f.may_contain(format!("{:016}", i * 2 + 1).as_bytes()))
            .count();
        let rate = false_positives as f64 / absent as f64;
        assert!(rate < 0.06, "false positive rate {rate}");
    }

    #[test]
    fn sizes_are_powers_of_two() {
        assert_eq!(KeyFilter::new(0).memory_usage(), 8);
        assert_eq!(KeyFilter::new(100).memory_usage(), 64);
        assert_eq!(KeyFilter::new(64 << 10).memory_usage(), 64 << 10);
    }

    #[test]
    fn concurrent_adds_are_all_kept() {
        let f = KeyFilter::new(1024);
        std::thread::scope(|s| {
            for t in 0..4u32 {
                let f = &f;
                s.spawn(move || {
                    for i in 0..500u32 {
                        f.add(format!("{t}-{i}").as_bytes());
                    }
                });
            }
        });
        for t in 0..4u32 {
            for i in 0..500u32 {
                assert!(f.may_contain(format!("{t}-{i}").as_bytes()));
            }
        }
    }
}
