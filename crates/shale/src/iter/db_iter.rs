//! The database iterator: user keys and values as of a sequence number.
//!
//! It wraps the merge of every source of internal entries (memtables and
//! table files) and presents, for each user key, only the newest entry whose
//! sequence number is at most the iterator's sequence; keys whose newest such
//! entry is a deletion are hidden.
//!
//! Invariants:
//! - Forward: the inner iterator sits on the entry yielded (the newest visible
//!   entry of the current user key); `key` and `value` are read from it.
//! - Reverse: the inner iterator sits just before all the entries of the
//!   current user key (on an entry of a smaller user key, or unpositioned),
//!   and the current key and value are kept in `saved_key` / `saved_value`.
//!   Changing direction re-positions the inner iterator accordingly.
//! - An internal key that cannot be parsed is a corruption: the error is kept
//!   and the iterator stops for good.
//!
//! - An entry of type `BlobIndex` holds a pointer to its value in a blob
//!   file: once the iterator stops on one, the value is read through the
//!   [`BlobResolver`] into `blob_value`, which `value` then returns; a
//!   failure to read it stops the iterator with that error.
//!
//! Going forward over many hidden entries of one key (old versions, or
//! versions newer than the sequence), the iterator re-seeks the inner
//! iterator past them once more than `max_skip` were stepped over in a row.

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::keys::{
    append_internal_key, extract_user_key, pack_sequence_and_type, parse_internal_key,
    InternalKeyComparator, SequenceNumber, ValueType, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK,
};
use crate::util::coding::put_fixed64;

/// The mean number of bytes read between two calls of the read-sample hook.
pub const READ_BYTES_PERIOD: u64 = 1 << 20;

/// The default for [`DbIterator::with_max_sequential_skip`]: about the cost of
/// a seek of a merge of several tables, measured in steps, so that re-seeking
/// at most doubles the cost of skipping when it does not pay.
pub const DEFAULT_MAX_SEQUENTIAL_SKIP: usize = 128;

/// Saved values whose buffer exceeds the value by more than this are released.
const MAX_SAVED_VALUE_SLACK: usize = 1 << 20;

/// Reads the value a blob pointer addresses (see `blob/`): given the user
/// key of the entry and the pointer, fills `out` with the value.
pub trait BlobResolver: Send + Sync {
    /// Reads the value of `user_key` that `pointer` addresses into `out`
    /// (its old contents replaced).
    fn resolve(&self, user_key: &[u8], pointer: &[u8], out: &mut Vec<u8>) -> Result<()>;
}

/// The hook called with an internal key about every [`READ_BYTES_PERIOD`]
/// bytes read, so the database can count reads against the files they hit.
pub type ReadSampleHook = Box<dyn FnMut(&[u8]) + Send>;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    Forward,
    Reverse,
}

/// Calls the hook after a random number of bytes read, with the given mean.
struct ReadSampler {
    hook: ReadSampleHook,
    mean_period: u64,
    rng: u64,
    bytes_until_sample: u64,
}

impl ReadSampler {
    fn new(hook: ReadSampleHook, mean_period: u64, seed: u64) -> ReadSampler {
        let mut s = ReadSampler {
            hook,
            mean_period: mean_period.max(1),
            rng: seed,
            bytes_until_sample: 0,
        };
        s.bytes_until_sample = s.random_period();
        s
    }

    /// A period drawn uniformly from `[1, 2 * mean]` (SplitMix64).
    fn random_period(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        1 + z % self.mean_period.saturating_mul(2)
    }

    /// Accounts for reading entry `ikey` of `bytes` bytes (key and value).
    #[inline]
    fn record(&mut self, ikey: &[u8], bytes: u64) {
        while self.bytes_until_sample < bytes {
            self.bytes_until_sample = self.bytes_until_sample.saturating_add(self.random_period());
            (self.hook)(ikey);
        }
        self.bytes_until_sample -= bytes;
    }
}

/// User-facing iteration over the entries visible at a sequence number.
///
/// Implements [`InternalIterator`], with *user* keys: `key()` is a user key
/// and `seek` takes a user key.
pub struct DbIterator<I: InternalIterator> {
    iter: I,
    /// Compares user keys (inline for the bytewise order).
    icmp: InternalKeyComparator,
    sequence: SequenceNumber,
    direction: Direction,
    valid: bool,
    /// Forward: the user key whose remaining entries are hidden (scratch).
    /// Reverse: the current user key.
    saved_key: Vec<u8>,
    /// Reverse: the current value.
    saved_value: Vec<u8>,
    /// Scratch for seek targets and for the key of a run of invisible entries.
    scratch: Vec<u8>,
    max_skip: usize,
    sampler: Option<ReadSampler>,
    /// A corruption met; it stops the iterator for good.
    error: Option<Error>,
    /// Reads separated values; without it a blob pointer is corruption.
    blobs: Option<std::sync::Arc<dyn BlobResolver>>,
    /// The current entry is a blob pointer whose value is in `blob_value`.
    is_blob: bool,
    blob_value: Vec<u8>,
}

impl<I: InternalIterator> DbIterator<I> {
    /// Iterates `iter` (internal entries ordered by `cmp`, typically a merge
    /// of every source) as of `sequence`. `sample`, if given, is called with
    /// an internal key about every [`READ_BYTES_PERIOD`] bytes read (a random
    /// period with that mean). The result is unpositioned.
    pub fn new(
        cmp: &InternalKeyComparator,
        iter: I,
        sequence: SequenceNumber,
        sample: Option<ReadSampleHook>,
    ) -> DbIterator<I> {
        DbIterator {
            iter,
            icmp: cmp.clone(),
            sequence: sequence.min(MAX_SEQUENCE_NUMBER),
            direction: Direction::Forward,
            valid: false,
            saved_key: Vec::new(),
            saved_value: Vec::new(),
            scratch: Vec::new(),
            max_skip: DEFAULT_MAX_SEQUENTIAL_SKIP,
            sampler: sample.map(|h| ReadSampler::new(h, READ_BYTES_PERIOD, 0x5a1e_5eed)),
            error: None,
            blobs: None,
            is_blob: false,
            blob_value: Vec::new(),
        }
    }

    /// Resolves blob pointers through `blobs`.
    pub fn with_blobs(mut self, blobs: std::sync::Arc<dyn BlobResolver>) -> DbIterator<I> {
        self.blobs = Some(blobs);
        self
    }

    /// After the iterator stopped on an entry of type `t` (its user key
    /// `key`, its raw value `raw`), reads a blob pointer's value; on failure
    /// keeps the error and stops.
    #[inline(always)]
    fn load_value(&mut self, t: ValueType, forward: bool) {
        self.is_blob = t == ValueType::BlobIndex;
        if self.is_blob {
            self.resolve_blob(forward);
        }
    }

    /// The blob half of [`Self::load_value`], out of the scan's way.
    #[cold]
    #[inline(never)]
    fn resolve_blob(&mut self, forward: bool) {
        let (key, raw) = if forward {
            (extract_user_key(self.iter.key()), self.iter.value())
        } else {
            (&self.saved_key[..], &self.saved_value[..])
        };
        let result = match &self.blobs {
            Some(b) => b.resolve(key, raw, &mut self.blob_value),
            None => Err(Error::bad_data(
                "a blob pointer met by an iterator that cannot read blob files",
            )),
        };
        if let Err(e) = result {
            self.error = Some(e);
            self.is_blob = false;
            self.finish();
        }
    }

    /// Sets the mean period of the read-sample hook, in bytes, and the seed
    /// of its random periods. No effect without a hook.
    pub fn with_sample_period(mut self, mean_bytes: u64, seed: u64) -> DbIterator<I> {
        if let Some(s) = self.sampler.take() {
            self.sampler = Some(ReadSampler::new(s.hook, mean_bytes, seed));
        }
        self
    }

    #[cfg(test)]
    /// Going forward, after more than `n` (at least 1) hidden entries of one
    /// user key stepped over in a row, seek past the rest of them instead.
    pub fn with_max_sequential_skip(mut self, n: usize) -> DbIterator<I> {
        self.max_skip = n.max(1);
        self
    }

    #[inline]
    fn clear_saved_value(&mut self) {
        if self.saved_value.capacity() > MAX_SAVED_VALUE_SLACK {
            self.saved_value = Vec::new();
        } else {
            self.saved_value.clear();
        }
    }

    /// Becomes invalid, at the end of the entries.
    #[inline]
    fn finish(&mut self) {
        self.valid = false;
        self.saved_key.clear();
        self.clear_saved_value();
    }

    #[cold]
    fn corrupt(&mut self) {
        let len = self.iter.key().len();
        self.error = Some(Error::bad_data(format!(
            "corrupted internal key of {len} bytes met by a database iterator"
        )));
        self.finish();
    }

    /// Feeds the current entry to the read sampler, if any.
    #[inline]
    fn sample(&mut self) {
        if let Some(s) = self.sampler.as_mut() {
            let k = self.iter.key();
            s.record(k, (k.len() + self.iter.value().len()) as u64);
        }
    }

    /// From the inner iterator's (valid) position, moves forward to the
    /// newest visible entry of the next user key that is not deleted. When
    /// `skipping`, entries of user keys <= `saved_key` are hidden.
    fn find_next_user_entry(&mut self, mut skipping: bool) {
        debug_assert!(self.iter.valid() && self.direction == Direction::Forward);
        // Hidden entries of `saved_key` stepped over in a row.
        let mut hidden_run = 0usize;
        // Invisible entries of the user key in `scratch` stepped over in a row.
        let mut invisible_run = 0usize;
        loop {
            self.sample();
            let Some(p) = parse_internal_key(self.iter.key()) else {
                self.corrupt();
                return;
            };
            if p.sequence <= self.sequence {
                invisible_run = 0;
                let hidden = skipping
                    && self.icmp.compare_user_keys(p.user_key, &self.saved_key)
                        != Ordering::Greater;
                if hidden {
                    hidden_run += 1;
                } else if p.value_type == ValueType::Deletion {
                    // This and every older entry of the key are hidden.
                    self.saved_key.clear();
                    self.saved_key.extend_from_slice(p.user_key);
                    skipping = true;
                    hidden_run = 1;
                } else {
                    self.valid = true;
                    self.saved_key.clear();
                    let t = p.value_type;
                    self.load_value(t, true);
                    return;
                }
                if hidden_run > self.max_skip {
                    // Seek past every remaining entry of `saved_key`.
                    hidden_run = 0;
                    self.scratch.clear();
                    append_internal_key(&mut self.scratch, &self.saved_key, 0, ValueType::Deletion);
                    self.iter.seek(&self.scratch);
                    if !self.iter.valid() {
                        break;
                    }
                    continue;
                }
            } else {
                // Newer than the iterator's sequence: invisible.
                hidden_run = 0;
                if invisible_run > 0
                    && self.icmp.compare_user_keys(p.user_key, &self.scratch) == Ordering::Equal
                {
                    invisible_run += 1;
                } else {
                    self.scratch.clear();
                    self.scratch.extend_from_slice(p.user_key);
                    invisible_run = 1;
                }
                if invisible_run > self.max_skip {
                    // Seek to the newest visible entry of this key.
                    invisible_run = 0;
                    put_fixed64(
                        &mut self.scratch,
                        pack_sequence_and_type(self.sequence, VALUE_TYPE_FOR_SEEK),
                    );
                    self.iter.seek(&self.scratch);
                    if !self.iter.valid() {
                        break;
                    }
                    continue;
                }
            }
            self.iter.next();
            if !self.iter.valid() {
                break;
            }
        }
        self.finish();
    }

    /// From the inner iterator's position, moves backward to the previous user
    /// key that is not deleted, saving its newest visible entry and leaving the
    /// inner iterator just before that key's entries. `peeked`: the inner
    /// iterator's entry is the one the previous call stopped on, already fed
    /// to the read sampler (every entry is sampled once, as going forward).
    fn find_prev_user_entry(&mut self, mut peeked: bool) {
        debug_assert!(self.direction == Direction::Reverse);
        let mut value_type = ValueType::Deletion;
        while self.iter.valid() {
            if !peeked {
                self.sample();
            }
            peeked = false;
            let Some(p) = parse_internal_key(self.iter.key()) else {
                self.corrupt();
                return;
            };
            if p.sequence <= self.sequence {
                if value_type != ValueType::Deletion
                    && self.icmp.compare_user_keys(p.user_key, &self.saved_key) == Ordering::Less
                {
                    // A visible entry of an earlier key: the saved one is current.
                    break;
                }
                value_type = p.value_type;
                if value_type == ValueType::Deletion {
                    self.saved_key.clear();
                    self.clear_saved_value();
                } else {
                    let raw = self.iter.value();
                    if self.saved_value.capacity() > raw.len() + MAX_SAVED_VALUE_SLACK {
                        self.saved_value = Vec::new();
                    }
                    self.saved_key.clear();
                    self.saved_key.extend_from_slice(p.user_key);
                    self.saved_value.clear();
                    self.saved_value.extend_from_slice(raw);
                }
            }
            self.iter.prev();
        }
        if value_type == ValueType::Deletion || self.inner_failed() {
            self.finish();
            self.direction = Direction::Forward;
        } else {
            self.valid = true;
            self.load_value(value_type, false);
        }
    }

    /// True when the inner iterator stopped with an error (not merely at an end).
    #[inline]
    fn inner_failed(&self) -> bool {
        !self.iter.valid() && self.iter.status().is_err()
    }
}

impl<I: InternalIterator> InternalIterator for DbIterator<I> {
    #[inline]
    fn valid(&self) -> bool {
        self.valid
    }

    fn seek_to_first(&mut self) {
        if self.error.is_some() {
            return;
        }
        self.direction = Direction::Forward;
        self.clear_saved_value();
        self.iter.seek_to_first();
        if self.iter.valid() {
            self.find_next_user_entry(false);
        } else {
            self.finish();
        }
    }

    fn seek_to_last(&mut self) {
        if self.error.is_some() {
            return;
        }
        self.direction = Direction::Reverse;
        self.clear_saved_value();
        self.iter.seek_to_last();
        self.find_prev_user_entry(false);
    }

    fn seek(&mut self, target: &[u8]) {
        if self.error.is_some() {
            return;
        }
        self.direction = Direction::Forward;
        self.clear_saved_value();
        self.saved_key.clear();
        self.scratch.clear();
        append_internal_key(
            &mut self.scratch,
            target,
            self.sequence,
            VALUE_TYPE_FOR_SEEK,
        );
        self.iter.seek(&self.scratch);
        if self.iter.valid() {
            self.find_next_user_entry(false);
        } else {
            self.finish();
        }
    }

    fn next(&mut self) {
        debug_assert!(self.valid);
        if !self.valid {
            return;
        }
        if self.direction == Direction::Reverse {
            self.direction = Direction::Forward;
            // The inner iterator is just before the entries of the current key
            // (`saved_key`): step onto them; they are then skipped as hidden.
            if self.iter.valid() {
                self.iter.next();
            } else if self.iter.status().is_ok() {
                self.iter.seek_to_first();
            }
            self.clear_saved_value();
        } else {
            // Hide the remaining entries of the current key.
            self.saved_key.clear();
            self.saved_key
                .extend_from_slice(extract_user_key(self.iter.key()));
            self.iter.next();
        }
        if self.iter.valid() {
            self.find_next_user_entry(true);
        } else {
            self.finish();
        }
    }

    fn prev(&mut self) {
        debug_assert!(self.valid);
        if !self.valid {
            return;
        }
        // Going on backward, the inner iterator rests on the entry the last
        // step stopped on (already sampled), or is exhausted.
        let peeked = self.direction == Direction::Reverse;
        if self.direction == Direction::Forward {
            // The inner iterator is on the current entry: move before every
            // entry of the current key (the ones before it are invisible).
            self.saved_key.clear();
            self.saved_key
                .extend_from_slice(extract_user_key(self.iter.key()));
            loop {
                self.iter.prev();
                if !self.iter.valid() {
                    self.finish();
                    return;
                }
                if self
                    .icmp
                    .compare_user_keys(extract_user_key(self.iter.key()), &self.saved_key)
                    == Ordering::Less
                {
                    break;
                }
            }
            self.direction = Direction::Reverse;
        }
        self.find_prev_user_entry(peeked);
    }

    #[inline]
    fn key(&self) -> &[u8] {
        debug_assert!(self.valid);
        match self.direction {
            Direction::Forward => extract_user_key(self.iter.key()),
            Direction::Reverse => &self.saved_key,
        }
    }

    #[inline]
    fn value(&self) -> &[u8] {
        debug_assert!(self.valid);
        if self.is_blob {
            return &self.blob_value;
        }
        match self.direction {
            Direction::Forward => self.iter.value(),
            Direction::Reverse => &self.saved_value,
        }
    }

    fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.duplicate()),
            None => self.iter.status(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iter::merging::MergingIterator;
    use crate::iter::EmptyIterator;
    use crate::testutil::{icmp, ikey, CallCounter, VecIterator};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;
    use std::ops::Bound;
    use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
    use std::sync::Arc;

    type Entry = (Vec<u8>, Vec<u8>);

    const V: ValueType = ValueType::Value;
    const D: ValueType = ValueType::Deletion;

    /// One write of a history: (user key, sequence, type, value).
    type Write = (Vec<u8>, u64, ValueType, Vec<u8>);

    fn w(k: &str, seq: u64, t: ValueType, v: &str) -> Write {
        (k.as_bytes().to_vec(), seq, t, v.as_bytes().to_vec())
    }

    fn sorted(writes: &[Write]) -> Vec<Entry> {
        let c = icmp();
        let mut entries: Vec<Entry> = writes
            .iter()
            .map(|(k, s, t, v)| (ikey(k, *s, *t), v.clone()))
            .collect();
        entries.sort_by(|a, b| c.compare(&a.0, &b.0));
        entries
    }

    /// A database iterator at `seq` over `writes` spread over `children` sources.
    fn db_iter(
        writes: &[Write],
        seq: SequenceNumber,
        children: usize,
        rng: &mut StdRng,
    ) -> DbIterator<MergingIterator> {
        let mut parts: Vec<Vec<Write>> = vec![Vec::new(); children.max(1)];
        for wr in writes {
            let i = rng.gen_range(0..parts.len());
            parts[i].push(wr.clone());
        }
        let its: Vec<Box<dyn InternalIterator>> = parts
            .iter()
            .map(|p| Box::new(VecIterator::internal(sorted(p))) as Box<dyn InternalIterator>)
            .collect();
        DbIterator::new(&icmp(), MergingIterator::new(icmp(), its), seq, None)
    }

    fn simple(writes: &[Write], seq: SequenceNumber) -> DbIterator<VecIterator> {
        DbIterator::new(&icmp(), VecIterator::internal(sorted(writes)), seq, None)
    }

    /// The visible map at `seq`: the newest entry per key, deletions removed.
    fn model(writes: &[Write], seq: SequenceNumber) -> BTreeMap<Vec<u8>, Vec<u8>> {
        let mut by_seq: Vec<&Write> = writes.iter().filter(|w| w.1 <= seq).collect();
        by_seq.sort_by_key(|w| w.1);
        let mut m = BTreeMap::new();
        for (k, _, t, v) in by_seq {
            match t {
                ValueType::Value | ValueType::BlobIndex => m.insert(k.clone(), v.clone()),
                ValueType::Deletion => m.remove(k),
            };
        }
        m
    }

    fn forward<I: InternalIterator>(it: &mut DbIterator<I>) -> Vec<Entry> {
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        out
    }

    fn backward<I: InternalIterator>(it: &mut DbIterator<I>) -> Vec<Entry> {
        let mut out = Vec::new();
        it.seek_to_last();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        out.reverse();
        out
    }

    fn pairs(kv: &[(&str, &str)]) -> Vec<Entry> {
        kv.iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    }

    fn at<I: InternalIterator>(it: &DbIterator<I>) -> Option<(String, String)> {
        it.valid().then(|| {
            (
                String::from_utf8_lossy(it.key()).into_owned(),
                String::from_utf8_lossy(it.value()).into_owned(),
            )
        })
    }

    fn kv(k: &str, v: &str) -> Option<(String, String)> {
        Some((k.to_string(), v.to_string()))
    }

    #[test]
    fn empty_source_is_empty() {
        let mut it = DbIterator::new(&icmp(), EmptyIterator::new(), 100, None);
        it.seek_to_first();
        assert!(!it.valid());
        it.seek_to_last();
        assert!(!it.valid());
        it.seek(b"a");
        assert!(!it.valid());
        assert!(it.status().is_ok());
    }

    #[test]
    fn yields_the_newest_visible_value_of_each_key() {
        let writes = [
            w("a", 1, V, "a1"),
            w("a", 4, V, "a4"),
            w("b", 2, V, "b2"),
            w("c", 3, V, "c3"),
            w("c", 6, V, "c6"),
        ];
        let mut it = simple(&writes, 5);
        let want = pairs(&[("a", "a4"), ("b", "b2"), ("c", "c3")]);
        assert_eq!(forward(&mut it), want);
        assert_eq!(backward(&mut it), want);
        let mut it = simple(&writes, 3);
        let want = pairs(&[("a", "a1"), ("b", "b2"), ("c", "c3")]);
        assert_eq!(forward(&mut it), want);
        assert_eq!(backward(&mut it), want);
    }

    #[test]
    fn a_newest_deletion_hides_older_values() {
        let writes = [
            w("a", 2, V, "a2"),
            w("a", 3, D, ""),
            w("b", 1, V, "b1"),
            w("c", 5, D, ""),
            w("c", 4, V, "c4"),
        ];
        let mut it = simple(&writes, 10);
        assert_eq!(forward(&mut it), pairs(&[("b", "b1")]));
        assert_eq!(backward(&mut it), pairs(&[("b", "b1")]));
        it.seek(b"a");
        assert_eq!(at(&it), kv("b", "b1"));
        it.prev();
        assert_eq!(at(&it), None, "a is deleted");
        it.seek(b"b");
        it.next();
        assert_eq!(at(&it), None, "c is deleted");
        // Before a deletion, the older value is visible.
        let mut it = simple(&writes, 4);
        assert_eq!(forward(&mut it), pairs(&[("b", "b1"), ("c", "c4")]));
        assert_eq!(backward(&mut it), pairs(&[("b", "b1"), ("c", "c4")]));
        let mut it = simple(&writes, 2);
        assert_eq!(backward(&mut it), pairs(&[("a", "a2"), ("b", "b1")]));
    }

    #[test]
    fn nothing_is_visible_when_every_entry_is_newer() {
        let writes = [w("a", 5, V, "a"), w("b", 6, V, "b"), w("c", 7, D, "")];
        for seq in [0, 4] {
            let mut it = simple(&writes, seq);
            it.seek_to_first();
            assert!(!it.valid());
            it.seek_to_last();
            assert!(!it.valid());
            it.seek(b"b");
            assert!(!it.valid());
            assert!(it.status().is_ok());
        }
        // Only deletions visible.
        let mut it = simple(&[w("a", 1, D, ""), w("b", 2, D, "")], 10);
        assert!(forward(&mut it).is_empty());
        assert!(backward(&mut it).is_empty());
    }

    #[test]
    fn direction_switches_at_the_first_and_last_keys() {
        let writes = [
            w("a", 1, V, "a"),
            w("a", 9, V, "a-new"),
            w("b", 2, V, "b"),
            w("c", 3, V, "c"),
            w("c", 8, V, "c-new"),
        ];
        let mut it = simple(&writes, 5);
        it.seek_to_first();
        it.prev();
        assert_eq!(at(&it), None, "prev from the first key");
        it.seek_to_first();
        it.next();
        it.prev();
        assert_eq!(at(&it), kv("a", "a"));
        it.next();
        assert_eq!(at(&it), kv("b", "b"));
        it.seek_to_last();
        assert_eq!(at(&it), kv("c", "c"));
        it.next();
        assert_eq!(at(&it), None, "next from the last key");
        it.seek_to_last();
        it.prev();
        assert_eq!(at(&it), kv("b", "b"));
        it.next();
        assert_eq!(at(&it), kv("c", "c"));
        it.prev();
        assert_eq!(at(&it), kv("b", "b"));
        it.prev();
        assert_eq!(at(&it), kv("a", "a"));
        it.next();
        assert_eq!(at(&it), kv("b", "b"));
    }

    #[test]
    fn seek_finds_the_first_visible_key_at_or_after_the_target() {
        let writes = [
            w("b", 1, V, "b1"),
            w("b", 7, V, "b7"),
            w("d", 2, V, "d2"),
            w("d", 3, D, ""),
            w("f", 4, V, "f4"),
        ];
        let mut it = simple(&writes, 5);
        it.seek(b"a");
        assert_eq!(at(&it), kv("b", "b1"));
        it.seek(b"b");
        assert_eq!(at(&it), kv("b", "b1"), "the newer b7 is invisible");
        it.seek(b"c");
        assert_eq!(at(&it), kv("f", "f4"), "d is deleted");
        it.seek(b"g");
        assert_eq!(at(&it), None);
        it.seek(b"f");
        it.prev();
        assert_eq!(at(&it), kv("b", "b1"));
    }

    #[test]
    fn many_versions_of_one_key() {
        let mut writes = vec![w("a", 1, V, "a"), w("z", 2, V, "z")];
        for s in 3..1003 {
            let t = if s % 7 == 0 { D } else { V };
            writes.push(w("k", s, t, &format!("k{s}")));
        }
        // 1002 is a value (1002 % 7 != 0); 1001 = 7 * 143 is a deletion.
        for (seq, want_k) in [
            (2, None),
            (500, Some("k500")),
            (1001, None),
            (2000, Some("k1002")),
        ] {
            let mut it = simple(&writes, seq);
            let mut want = vec![(b"a".to_vec(), b"a".to_vec())];
            if let Some(v) = want_k {
                want.push((b"k".to_vec(), v.as_bytes().to_vec()));
            }
            if seq >= 2 {
                want.push((b"z".to_vec(), b"z".to_vec()));
            }
            assert_eq!(forward(&mut it), want, "seq {seq}");
            assert_eq!(backward(&mut it), want, "seq {seq}");
            // Direction switches around the key with many versions.
            it.seek(b"k");
            assert_eq!(it.key(), want[1].0, "seq {seq}");
            it.prev();
            assert_eq!(it.key(), b"a", "seq {seq}");
            it.next();
            assert_eq!(it.key(), want[1].0, "seq {seq}");
            assert_eq!(it.value(), want[1].1, "seq {seq}");
            if want.len() == 3 {
                it.next();
                assert_eq!(it.key(), b"z", "seq {seq}");
                it.prev();
                assert_eq!(it.key(), b"k", "seq {seq}");
                assert_eq!(it.value(), want[1].1, "seq {seq}");
            }
        }
    }

    #[test]
    fn skipping_many_hidden_versions_reseeks_instead_of_stepping() {
        let mut writes = vec![w("a", 1, V, "a"), w("z", 2, V, "z")];
        for s in 3..2003 {
            writes.push(w("k", s, V, "k"));
        }
        let counter = Arc::new(CallCounter::default());
        let inner = VecIterator::internal(sorted(&writes)).counted(counter.clone());
        // At sequence 1000: 1003 entries of k are newer (invisible), 998 older (hidden).
        let mut it = DbIterator::new(&icmp(), inner, 1000, None).with_max_sequential_skip(8);
        assert_eq!(
            forward(&mut it),
            pairs(&[("a", "a"), ("k", "k"), ("z", "z")])
        );
        assert!(counter.steps() < 40, "{} steps", counter.steps());
        assert!(counter.seeks() <= 3, "{} seeks", counter.seeks());
    }

    #[test]
    fn a_corrupt_internal_key_stops_the_iterator() {
        let c = icmp();
        let mut entries = sorted(&[w("a", 1, V, "a"), w("m", 4, V, "m"), w("z", 3, V, "z")]);
        // A key for "m" with the unknown type 7.
        let mut bad = b"m".to_vec();
        put_fixed64(&mut bad, (5 << 8) | 7);
        entries.push((bad, b"bad".to_vec()));
        entries.sort_by(|a, b| c.compare(&a.0, &b.0));
        let make = || DbIterator::new(&icmp(), VecIterator::internal(entries.clone()), 10, None);

        let mut it = make();
        it.seek_to_first();
        assert_eq!(at(&it), kv("a", "a"));
        it.next();
        assert!(!it.valid());
        assert!(it.status().unwrap_err().is_corruption());
        it.seek_to_first();
        assert!(!it.valid(), "the error is kept");

        let mut it = make();
        it.seek_to_last();
        assert_eq!(at(&it), kv("z", "z"));
        it.prev();
        assert!(!it.valid());
        assert!(it.status().unwrap_err().is_corruption());

        // A key shorter than a trailer.
        let short = vec![(b"xyz".to_vec(), b"v".to_vec())];
        let mut it = DbIterator::new(&icmp(), VecIterator::internal(short), 10, None);
        it.seek_to_first();
        assert!(!it.valid());
        assert!(it.status().unwrap_err().is_corruption());
    }

    #[test]
    fn an_inner_error_stops_the_iterator() {
        let entries = sorted(&[w("a", 1, V, "a"), w("b", 2, V, "b"), w("c", 3, V, "c")]);
        let mut it = DbIterator::new(
            &icmp(),
            VecIterator::internal(entries.clone()).fail_at(2),
            10,
            None,
        );
        it.seek_to_first();
        it.next();
        assert_eq!(at(&it), kv("b", "b"));
        it.next();
        assert!(!it.valid());
        assert!(it.status().is_err());

        // Backward, the error in the middle of a key's entries must not let an
        // older version through.
        let entries = sorted(&[
            w("a", 1, V, "a"),
            w("b", 2, V, "b-old"),
            w("b", 3, V, "b-new"),
        ]);
        let mut it = DbIterator::new(&icmp(), VecIterator::internal(entries).fail_at(0), 10, None);
        it.seek_to_last();
        assert!(!it.valid());
        assert!(it.status().is_err());
    }

    /// 2,000 entries of 8 + 8 + 10 = 26 bytes (52,000 bytes), read through
    /// a sampler with a mean period of 520 bytes: about 100 samples if each
    /// entry is sampled once. Returns the iterator, the count of samples
    /// and the count of samples whose key was not an internal key.
    fn sampled_history() -> (DbIterator<VecIterator>, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let mut writes = Vec::new();
        for i in 0..2000u64 {
            writes.push(w(&format!("key{i:05}"), i + 1, V, "0123456789"));
        }
        let calls = Arc::new(AtomicUsize::new(0));
        let bad = Arc::new(AtomicUsize::new(0));
        let (c, b) = (calls.clone(), bad.clone());
        let hook: ReadSampleHook = Box::new(move |k: &[u8]| {
            c.fetch_add(1, AtomicOrdering::Relaxed);
            if parse_internal_key(k).is_none() {
                b.fetch_add(1, AtomicOrdering::Relaxed);
            }
        });
        let it = DbIterator::new(
            &icmp(),
            VecIterator::internal(sorted(&writes)),
            5000,
            Some(hook),
        )
        .with_sample_period(520, 42);
        (it, calls, bad)
    }

    #[test]
    fn the_read_sampler_is_called_about_once_per_period() {
        let (mut it, calls, bad) = sampled_history();
        assert_eq!(forward(&mut it).len(), 2000);
        let n = calls.load(AtomicOrdering::Relaxed);
        assert!((60..=150).contains(&n), "{n} samples, about 100 expected");
        assert_eq!(bad.load(AtomicOrdering::Relaxed), 0);
    }

    #[test]
    fn a_reverse_scan_samples_each_entry_once() {
        // A step back looks at the entry before the one it returns, which
        // the next step returns: still one sample per entry read.
        let (mut it, calls, bad) = sampled_history();
        let mut n = 0;
        it.seek_to_last();
        while it.valid() {
            n += 1;
            it.prev();
        }
        assert_eq!(n, 2000);
        let n = calls.load(AtomicOrdering::Relaxed);
        assert!((60..=150).contains(&n), "{n} samples, about 100 expected");
        assert_eq!(bad.load(AtomicOrdering::Relaxed), 0);
    }

    /// Random histories, read at several sequences, by random walks mixing
    /// seeks and steps in both directions, compared with the visible map.
    #[test]
    fn random_walks_match_the_visible_map() {
        let seed = 0x00db_17e4;
        let mut rng = StdRng::seed_from_u64(seed);
        for round in 0..24 {
            let nkeys = [3, 20, 100][round % 3];
            let nwrites = rng.gen_range(1..1500);
            let writes: Vec<Write> = (1..=nwrites as u64)
                .map(|s| {
                    let k = format!("k{:03}", rng.gen_range(0..nkeys));
                    if rng.gen_bool(0.3) {
                        (k.into_bytes(), s, D, Vec::new())
                    } else {
                        let v = format!("{k}@{s}").into_bytes();
                        (k.into_bytes(), s, V, v)
                    }
                })
                .collect();
            let max_skip = [1, 2, 5, DEFAULT_MAX_SEQUENTIAL_SKIP][round % 4];
            for seq in [
                0,
                nwrites as u64 / 3,
                nwrites as u64 / 2,
                nwrites as u64,
                u64::MAX,
            ] {
                let m = model(&writes, seq);
                let children = rng.gen_range(1..6);
                let mut it =
                    db_iter(&writes, seq, children, &mut rng).with_max_sequential_skip(max_skip);
                let mut cur: Option<Vec<u8>> = None;
                for step in 0..1500 {
                    let op = rng.gen_range(0..10);
                    match op {
                        0 => {
                            it.seek_to_first();
                            cur = m.keys().next().cloned();
                        }
                        1 => {
                            it.seek_to_last();
                            cur = m.keys().next_back().cloned();
                        }
                        2 | 3 => {
                            let t = format!("k{:03}", rng.gen_range(0..nkeys + 1));
                            let t = if rng.gen_bool(0.2) {
                                format!("{t}+")
                            } else {
                                t
                            };
                            it.seek(t.as_bytes());
                            cur = m.range(t.into_bytes()..).next().map(|e| e.0.clone());
                        }
                        4..=6 => {
                            if let Some(k) = cur.take() {
                                it.next();
                                cur = m
                                    .range((Bound::Excluded(k), Bound::Unbounded))
                                    .next()
                                    .map(|e| e.0.clone());
                            }
                        }
                        _ => {
                            if let Some(k) = cur.take() {
                                it.prev();
                                cur = m.range(..k).next_back().map(|e| e.0.clone());
                            }
                        }
                    }
                    let ctx = format!(
                        "seed {seed:#x} round {round} seq {seq} step {step} op {op} max_skip {max_skip}"
                    );
                    assert_eq!(it.valid(), cur.is_some(), "{ctx}");
                    if let Some(k) = &cur {
                        assert_eq!(it.key(), &k[..], "{ctx}");
                        assert_eq!(it.value(), &m[k][..], "{ctx}");
                    }
                }
                assert!(it.status().is_ok());
                let all: Vec<Entry> = m.into_iter().collect();
                assert_eq!(
                    forward(&mut it),
                    all,
                    "seed {seed:#x} round {round} seq {seq}"
                );
                assert_eq!(
                    backward(&mut it),
                    all,
                    "seed {seed:#x} round {round} seq {seq}"
                );
            }
        }
    }

    /// Resolves a pointer to the pointer's bytes reversed; fails for "bad".
    struct Reverser;

    impl BlobResolver for Reverser {
        fn resolve(&self, _key: &[u8], pointer: &[u8], out: &mut Vec<u8>) -> Result<()> {
            if pointer == b"bad" {
                return Err(Error::corruption("/db/000009.blob", Some(12), "torn"));
            }
            out.clear();
            out.extend(pointer.iter().rev());
            Ok(())
        }
    }

    #[test]
    fn blob_pointers_resolve_both_ways() {
        const B: ValueType = ValueType::BlobIndex;
        let writes = [
            w("a", 1, B, "old"),
            w("a", 3, V, "new"),
            w("b", 2, B, "1ab"),
            w("c", 4, B, "2ab"),
            w("c", 5, D, ""),
            w("d", 6, B, "3ab"),
        ];
        let mut it = DbIterator::new(&icmp(), VecIterator::internal(sorted(&writes)), 10, None)
            .with_blobs(std::sync::Arc::new(Reverser));
        let want: Vec<(Vec<u8>, Vec<u8>)> = [("a", "new"), ("b", "ba1"), ("d", "ba3")]
            .iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect();
        assert_eq!(forward(&mut it), want);
        assert_eq!(backward(&mut it), want);
        it.status().unwrap();
        // At an older sequence, the older blob of "a".
        let mut old = DbIterator::new(&icmp(), VecIterator::internal(sorted(&writes)), 2, None)
            .with_blobs(std::sync::Arc::new(Reverser));
        old.seek(b"a");
        assert_eq!(old.value(), b"dlo");

        // A pointer that does not resolve stops the iterator with its error;
        // so does one met without a resolver.
        let bad = [w("a", 1, V, "x"), w("b", 2, B, "bad")];
        let mut it = DbIterator::new(&icmp(), VecIterator::internal(sorted(&bad)), 10, None)
            .with_blobs(std::sync::Arc::new(Reverser));
        it.seek_to_first();
        it.next();
        assert!(!it.valid());
        let e = it.status().unwrap_err();
        assert!(e.to_string().contains("000009.blob"), "{e}");
        let mut none = DbIterator::new(&icmp(), VecIterator::internal(sorted(&bad)), 10, None);
        none.seek_to_last();
        assert!(!none.valid());
        assert!(none.status().unwrap_err().is_corruption());
    }
}
