//! The filter block: one filter per 2 KiB range of data-block offsets.
//!
//! ```text
//! [filter 0] ... [filter N-1]
//! [offset of filter 0: fixed32] ... [offset of filter N-1: fixed32]
//! [offset of the offset array: fixed32]
//! [base lg: 1 byte]  (11: a filter covers data blocks starting in [i*2048, (i+1)*2048))
//! ```
//!
//! Filter `i` summarizes the keys of every data block whose offset falls in
//! range `i`; a range without blocks gets an empty filter (two equal offsets).
//! The reader treats any inconsistency as "may match": a damaged filter can
//! only cost a read, never hide a key.

use std::sync::Arc;

use super::bloom::BloomFilterPolicy;
use crate::filter_policy::FilterPolicy;
use crate::util::coding::{decode_fixed32, put_fixed32};

/// log2 of the data-offset range each filter covers.
const FILTER_BASE_LG: u8 = 11;
const FILTER_BASE: u64 = 1 << FILTER_BASE_LG;

/// Builds the filter block of a table while its data blocks are written.
///
/// Calls follow the pattern `(start_block add_key*)* finish`.
pub struct FilterBlockBuilder {
    policy: Arc<dyn FilterPolicy>,
    /// The policy, when it is the built-in bloom filter: its filters are
    /// made from the keys' hashes (in `hashes`), without copying the keys.
    bloom: Option<BloomFilterPolicy>,
    /// Keys added since the last filter, concatenated (other policies).
    keys: Vec<u8>,
    /// Start of each key in `keys`.
    starts: Vec<usize>,
    /// Hashes of the keys added since the last filter (the bloom filter).
    hashes: Vec<u32>,
    result: Vec<u8>,
    filter_offsets: Vec<u32>,
}

impl FilterBlockBuilder {
    /// A builder making filters with `policy`.
    pub fn new(policy: Arc<dyn FilterPolicy>) -> FilterBlockBuilder {
        FilterBlockBuilder {
            bloom: policy
                .builtin_bloom_bits_per_key()
                .map(BloomFilterPolicy::new),
            policy,
            keys: Vec::new(),
            starts: Vec::new(),
            hashes: Vec::new(),
            result: Vec::new(),
            filter_offsets: Vec::new(),
        }
    }

    /// Announces that the next keys belong to the data block at `block_offset`.
    /// Offsets must not decrease.
    pub fn start_block(&mut self, block_offset: u64) {
        let filter_index = block_offset / FILTER_BASE;
        while filter_index > self.filter_offsets.len() as u64 {
            self.generate_filter();
        }
    }

    /// Adds a key to the current filter.
    #[cfg(any(test, feature = "internals"))]
    #[inline]
    pub fn add_key(&mut self, key: &[u8]) {
        self.add_key_with(key, || super::bloom::bloom_hash(key));
    }

    /// Adds a key to the current filter, with a way to its bloom hash
    /// (`bloom::bloom_hash`, called only for the bloom filter's policy).
    #[inline]
    pub fn add_key_with(&mut self, key: &[u8], hash: impl FnOnce() -> u32) {
        if self.bloom.is_some() {
            self.hashes.push(hash());
        } else {
            self.starts.push(self.keys.len());
            self.keys.extend_from_slice(key);
        }
    }

    /// True when the current filter has keys.
    fn pending(&self) -> bool {
        !self.starts.is_empty() || !self.hashes.is_empty()
    }

    /// Finishes the block and returns its contents.
    pub fn finish(&mut self) -> &[u8] {
        if self.pending() {
            self.generate_filter();
        }
        let array_offset = self.result.len() as u32;
        for &o in &self.filter_offsets {
            put_fixed32(&mut self.result, o);
        }
        put_fixed32(&mut self.result, array_offset);
        self.result.push(FILTER_BASE_LG);
        &self.result
    }

    fn generate_filter(&mut self) {
        self.filter_offsets.push(self.result.len() as u32);
        if !self.pending() {
            // An empty range: the filter is empty too.
            return;
        }
        if let Some(bloom) = &self.bloom {
            bloom.filter_from_hashes(
                self.hashes.len(),
                self.hashes.iter().copied(),
                &mut self.result,
            );
            self.hashes.clear();
            return;
        }
        let ends = self.starts[1..].iter().copied().chain([self.keys.len()]);
        let keys: Vec<&[u8]> = self
            .starts
            .iter()
            .zip(ends)
            .map(|(&s, e)| &self.keys[s..e])
            .collect();
        self.policy.create_filter(&keys, &mut self.result);
        self.keys.clear();
        self.starts.clear();
    }
}

/// Reads a filter block and answers "may this data block hold the key?".
pub struct FilterBlockReader {
    policy: Arc<dyn FilterPolicy>,
    contents: Vec<u8>,
    /// Where the offset array starts (also the end of the filter data).
    array_start: usize,
    num_filters: usize,
    base_lg: u8,
}

impl FilterBlockReader {
    /// Parses `contents`. A block too short or inconsistent to use yields a
    /// reader that answers "may match" for every key.
    pub fn new(policy: Arc<dyn FilterPolicy>, contents: Vec<u8>) -> FilterBlockReader {
        let mut reader = FilterBlockReader {
            policy,
            contents,
            array_start: 0,
            num_filters: 0,
            base_lg: 0,
        };
        let n = reader.contents.len();
        if n < 5 {
            return reader;
        }
        let array_start = decode_fixed32(&reader.contents[n - 5..]).unwrap_or(u32::MAX) as usize;
        if array_start > n - 5 {
            return reader;
        }
        reader.base_lg = reader.contents[n - 1];
        reader.array_start = array_start;
        reader.num_filters = (n - 5 - array_start) / 4;
        reader
    }

    /// False only when the data block at `block_offset` certainly has no `key`.
    #[inline]
    pub fn key_may_match(&self, block_offset: u64, key: &[u8]) -> bool {
        // A base lg of 64 or more puts every block in filter 0.
        let index = block_offset.checked_shr(self.base_lg as u32).unwrap_or(0);
        if index >= self.num_filters as u64 {
            // Past the filters, or no usable filter block: maybe.
            return true;
        }
        let at = self.array_start + 4 * index as usize;
        let start = decode_fixed32(&self.contents[at..]).unwrap_or(u32::MAX) as usize;
        let limit = decode_fixed32(&self.contents[at + 4..]).unwrap_or(0) as usize;
        if start <= limit && limit <= self.array_start {
            // An empty filter means the range has no keys at all.
            start != limit && self.policy.key_may_match(key, &self.contents[start..limit])
        } else {
            // Inconsistent offsets: treat as a potential match.
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sstable::bloom::BloomFilterPolicy;
    use crate::util::hash::hash;

    /// A filter that lists the 32-bit hash of every key.
    struct HashList;
    impl FilterPolicy for HashList {
        fn name(&self) -> &str {
            "test.HashList"
        }
        fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
            for k in keys {
                put_fixed32(dst, hash(k, 1));
            }
        }
        fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
            let h = hash(key, 1).to_le_bytes();
            filter.chunks_exact(4).any(|c| c == h)
        }
    }

    fn policy() -> Arc<dyn FilterPolicy> {
        Arc::new(HashList)
    }

    #[test]
    fn empty_builder() {
        let mut b = FilterBlockBuilder::new(policy());
        let block = b.finish().to_vec();
        assert_eq!(block, [0, 0, 0, 0, 11]);
        let r = FilterBlockReader::new(policy(), block);
        assert!(r.key_may_match(0, b"foo"));
        assert!(r.key_may_match(100_000, b"foo"));
    }

    #[test]
    fn single_chunk() {
        let mut b = FilterBlockBuilder::new(policy());
        b.start_block(100);
        b.add_key(b"foo");
        b.add_key(b"bar");
        b.add_key(b"box");
        b.start_block(200);
        b.add_key(b"box");
        b.start_block(300);
        b.add_key(b"hello");
        let block = b.finish().to_vec();
        // One filter of five hashes, its offset, the array offset, base lg.
        assert_eq!(block.len(), 5 * 4 + 4 + 4 + 1);
        assert_eq!(&block[20..], &[0, 0, 0, 0, 20, 0, 0, 0, 11]);
        let r = FilterBlockReader::new(policy(), block);
        for k in [&b"foo"[..], b"bar", b"box", b"hello"] {
            assert!(r.key_may_match(100, k));
        }
        assert!(!r.key_may_match(100, b"missing"));
        assert!(!r.key_may_match(100, b"other"));
    }

    #[test]
    fn multi_chunk() {
        let mut b = FilterBlockBuilder::new(policy());
        // First filter.
        b.start_block(0);
        b.add_key(b"foo");
        b.start_block(2000);
        b.add_key(b"bar");
        // Second filter.
        b.start_block(3100);
        b.add_key(b"box");
        // Third filter is empty.
        // Last filter.
        b.start_block(9000);
        b.add_key(b"box");
        b.add_key(b"hello");
        let r = FilterBlockReader::new(policy(), b.finish().to_vec());

        assert!(r.key_may_match(0, b"foo"));
        assert!(r.key_may_match(2000, b"bar"));
        assert!(!r.key_may_match(0, b"box"));
        assert!(!r.key_may_match(0, b"hello"));

        assert!(r.key_may_match(3100, b"box"));
        assert!(!r.key_may_match(3100, b"foo"));
        assert!(!r.key_may_match(3100, b"bar"));
        assert!(!r.key_may_match(3100, b"hello"));

        assert!(!r.key_may_match(4100, b"foo"));
        assert!(!r.key_may_match(4100, b"bar"));
        assert!(!r.key_may_match(4100, b"box"));
        assert!(!r.key_may_match(4100, b"hello"));

        assert!(r.key_may_match(9000, b"box"));
        assert!(r.key_may_match(9000, b"hello"));
        assert!(!r.key_may_match(9000, b"foo"));
        assert!(!r.key_may_match(9000, b"bar"));
    }

    #[test]
    fn damaged_blocks_answer_maybe_and_never_panic() {
        let bloom: Arc<dyn FilterPolicy> = Arc::new(BloomFilterPolicy::new(10));
        let mut b = FilterBlockBuilder::new(bloom.clone());
        b.start_block(0);
        b.add_key(b"foo");
        b.start_block(5000);
        b.add_key(b"bar");
        let good = b.finish().to_vec();
        for i in 0..good.len() {
            for v in [0u8, 1, 0x7f, 0xff, good[i] ^ 0x20] {
                let mut bad = good.clone();
                bad[i] = v;
                let r = FilterBlockReader::new(bloom.clone(), bad);
                for off in [0u64, 2048, 5000, 1 << 40, u64::MAX] {
                    let _ = r.key_may_match(off, b"foo");
                }
            }
        }
        for cut in 0..good.len() {
            let r = FilterBlockReader::new(bloom.clone(), good[..cut].to_vec());
            assert!(r.key_may_match(0, b"foo"));
            assert!(r.key_may_match(5000, b"bar"));
        }
        // An absurd base lg maps every block to the first filter.
        let mut huge_lg = good.clone();
        *huge_lg.last_mut().unwrap() = 200;
        let r = FilterBlockReader::new(bloom, huge_lg);
        assert!(r.key_may_match(u64::MAX, b"foo"));
    }
}
