//! The entry index of a cached data block: finds the entry of a point
//! lookup's user key without decoding the entries before it.
//!
//! A data block stores keys prefix-compressed in restart intervals (16
//! entries by default), so a plain lookup binary-searches the restart points
//! and then decodes and compares entry after entry, touching most of an
//! interval's bytes. A block read again and again from the block cache gets,
//! on its second point lookup, this index: for every entry, the 8 user-key
//! bytes that follow the prefix all the block's user keys share, as a
//! big-endian `u64` fence (zero-padded), with the entry's offset and how many
//! user-key bytes follow the shared prefix. It applies to comparators that
//! order keys bytewise apart from a fixed-size trailer
//! ([`Comparator::bytewise_with_trailer`]).
//!
//! A lookup binary-searches the fences. When a user key ends within 8 bytes
//! after the shared prefix, its fence and length determine it entirely, so
//! equal fences and lengths mean equal user keys: the entry is then decoded
//! on its own (its trailer must lie in its unshared bytes) and its key
//! rebuilt as the target's user key plus that trailer. Anything the index
//! cannot decide (longer keys, a trailer shared with the previous key) is
//! left to the plain search.
//!
//! Invariants: `words[..n]` are the fences of the `n` entries in block order
//! (non-decreasing for a sorted block); `words[n..]` pack two `u32`s each,
//! per entry `offset << 8 | tail`, where `tail` is the number of user-key
//! bytes after the shared prefix, or `LONG` (255) when more than 8. The index
//! is memory the block cache does not charge: about 12 bytes per entry.

use std::cmp::Ordering;

use crate::comparator::Comparator;

use super::entries::BlockEntries;

/// `tail` of an entry whose user key has more than 8 bytes after the prefix.
const LONG: u8 = 0xff;

/// The largest entry offset the index can record (24 bits).
const MAX_OFFSET: usize = (1 << 24) - 1;

/// The outcome of a lookup in the index.
#[derive(Debug, PartialEq, Eq)]
pub enum Probe {
    /// The first entry with the target's user key at or after the target
    /// starts at this offset of the block.
    Found(u32),
    /// The block holds no entry with the target's user key at or after the target.
    Absent,
    /// The index cannot tell: search the block.
    Unknown,
}

/// An entry index over one block.
pub struct EntryIndex {
    /// Bytes at the end of each key that are not part of the user key.
    trailer: usize,
    /// Where the shared user-key prefix lies in the block (in the first key).
    common_start: u32,
    common_len: u32,
    /// The number of entries.
    n: usize,
    /// Fences, then packed offsets and tails (see the module invariants).
    words: Box<[u64]>,
}

/// The fence of `key`'s bytes after the first `skip`.
#[inline]
fn fence(key: &[u8], skip: usize) -> u64 {
    let rest = &key[skip..];
    if let Some(word) = rest.first_chunk::<8>() {
        return u64::from_be_bytes(*word);
    }
    let mut word = [0u8; 8];
    let n = rest.len().min(8);
    word[..n].copy_from_slice(&rest[..n]);
    u64::from_be_bytes(word)
}

impl EntryIndex {
    /// Indexes the entries of `block`, ordered by `cmp`. `None` when `cmp`
    /// is not bytewise with a trailer, the block is empty or too large, or
    /// an entry does not decode.
    pub fn build<B: BlockEntries>(block: &B, cmp: &dyn Comparator) -> Option<EntryIndex> {
        let trailer = cmp.bytewise_with_trailer()?;
        let strip = |key: &[u8]| key.len().saturating_sub(trailer);
        let restarts = block.num_restarts();
        if restarts == 0 {
            return None;
        }
        // The prefix all user keys share is the first and last keys' one.
        let mut last = Vec::new();
        block.for_each_entry(restarts - 1, |_, _, _, key| {
            last.clear();
            last.extend_from_slice(&key[..strip(key)]);
            true
        });
        let first_key = block.restart_key(0)?;
        let first = &first_key[..strip(first_key)];
        let shared = first.iter().zip(&last).take_while(|(a, b)| a == b).count();
        let common = &first[..shared];
        let mut fences = Vec::with_capacity(restarts as usize * 16);
        let mut metas: Vec<u32> = Vec::with_capacity(restarts as usize * 16);
        let mut first_key_at = None;
        let complete = block.for_each_entry(0, |offset, key_at, entry_shared, key| {
            first_key_at.get_or_insert(key_at);
            let user = &key[..strip(key)];
            // An entry whose key shares the whole prefix with the previous
            // one (checked already) has it too.
            let inherited = entry_shared >= shared && user.len() >= shared;
            if !(inherited || user.starts_with(common)) || offset as usize > MAX_OFFSET {
                // Out of order (a corrupt block), or beyond 24-bit offsets.
                return false;
            }
            fences.push(fence(user, shared));
            let rest = user.len() - shared;
            let tail = if rest <= 8 { rest as u8 } else { LONG };
            metas.push(offset << 8 | tail as u32);
            true
        });
        if !complete || fences.is_empty() {
            return None;
        }
        let n = fences.len();
        let mut words = fences;
        words.extend(
            metas
                .chunks(2)
                .map(|pair| pair[0] as u64 | (pair.get(1).copied().unwrap_or(0) as u64) << 32),
        );
        Some(EntryIndex {
            trailer,
            common_start: first_key_at? as u32,
            common_len: shared as u32,
            n,
            words: words.into_boxed_slice(),
        })
    }

    /// The trailer length of the order it was built for: it serves every
    /// comparator with that [`Comparator::bytewise_with_trailer`].
    pub fn trailer(&self) -> usize {
        self.trailer
    }

    /// Entry `i`'s offset and tail.
    #[inline]
    fn meta(&self, i: usize) -> (u32, u8) {
        let packed = (self.words[self.n + i / 2] >> (32 * (i % 2))) as u32;
        (packed >> 8, packed as u8)
    }

    /// Looks `target` up in `block` (the block the index was built from,
    /// ordered by `cmp`). On [`Probe::Found`], `key` holds the entry's key.
    pub fn find<B: BlockEntries>(
        &self,
        block: &B,
        cmp: &dyn Comparator,
        target: &[u8],
        key: &mut Vec<u8>,
    ) -> Probe {
        let user = &target[..target.len().saturating_sub(self.trailer)];
        let shared = self.common_len as usize;
        let Some(common) = block
            .data()
            .get(self.common_start as usize..self.common_start as usize + shared)
        else {
            return Probe::Unknown;
        };
        if !user.starts_with(common) {
            // Before or after every user key of the block.
            return Probe::Absent;
        }
        let rest = user.len() - shared;
        if rest > 8 {
            return Probe::Unknown;
        }
        let f = fence(user, shared);
        let fences = &self.words[..self.n];
        let mut i = fences.partition_point(|&w| w < f);
        while i < self.n && fences[i] == f {
            let (offset, tail) = self.meta(i);
            i += 1;
            if tail as usize != rest {
                // Another user key: its length after the prefix differs.
                continue;
            }
            // The same user key. Its trailer must be in the entry's own bytes.
            let Some((unshared, _)) = block.entry_at(offset) else {
                return Probe::Unknown;
            };
            if unshared.len() < self.trailer {
                return Probe::Unknown;
            }
            key.clear();
            key.extend_from_slice(user);
            key.extend_from_slice(&unshared[unshared.len() - self.trailer..]);
            if cmp.compare(key, target) != Ordering::Less {
                return Probe::Found(offset);
            }
            // An entry of the user key before the target: a later version may follow.
        }
        Probe::Absent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::BytewiseComparator;
    use crate::keys::{extract_user_key, InternalKey, InternalKeyComparator, ValueType};
    use crate::sstable::block::Block;
    use crate::sstable::block_builder::BlockBuilder;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::sync::Arc;

    fn block_of(entries: &[(Vec<u8>, Vec<u8>)], interval: usize) -> Block {
        let mut b = BlockBuilder::new(interval);
        for (k, v) in entries {
            b.add(k, v);
        }
        Block::new(b.finish().to_vec()).unwrap()
    }

    /// What a plain search finds: the first entry at or after `target`.
    fn first_at_or_after<'a>(
        entries: &'a [(Vec<u8>, Vec<u8>)],
        cmp: &dyn Comparator,
        target: &[u8],
    ) -> Option<&'a (Vec<u8>, Vec<u8>)> {
        entries
            .iter()
            .find(|(k, _)| cmp.compare(k, target) != Ordering::Less)
    }

    /// Checks the index against the block for every target: a found entry
    /// is the first at or after the target and has its user key; an absent
    /// answer means no such entry has it.
    fn check(
        entries: &[(Vec<u8>, Vec<u8>)],
        targets: &[Vec<u8>],
        cmp: &dyn Comparator,
        trailer: usize,
    ) -> (usize, usize, usize) {
        let block = block_of(entries, 16);
        let index = EntryIndex::build(&block, cmp).expect("an index");
        let user = |k: &[u8]| k[..k.len().saturating_sub(trailer)].to_vec();
        let mut key = Vec::new();
        let mut tally = (0, 0, 0);
        for t in targets {
            let want = first_at_or_after(entries, cmp, t).filter(|(k, _)| user(k) == user(t));
            match index.find(&block, cmp, t, &mut key) {
                Probe::Found(offset) => {
                    tally.0 += 1;
                    let (k, v) = want.unwrap_or_else(|| panic!("{t:?}: found, none expected"));
                    assert_eq!(&key, k, "target {t:?}");
                    assert_eq!(block.entry_at(offset).unwrap().1, &v[..], "target {t:?}");
                }
                Probe::Absent => {
                    tally.1 += 1;
                    assert!(want.is_none(), "{t:?}: absent, but {want:?} holds it");
                }
                Probe::Unknown => tally.2 += 1,
            }
        }
        tally
    }

    #[test]
    fn not_built_for_orders_that_are_not_bytewise() {
        struct Reverse;
        impl Comparator for Reverse {
            fn name(&self) -> &str {
                "test.Reverse"
            }
            fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
                b.cmp(a)
            }
        }
        let block = block_of(&[(b"b".to_vec(), vec![]), (b"a".to_vec(), vec![])], 1);
        assert!(EntryIndex::build(&block, &Reverse).is_none());
        let empty = block_of(&[], 16);
        assert!(EntryIndex::build(&empty, &BytewiseComparator).is_none());
    }

    #[test]
    fn finds_benchmark_style_internal_keys() {
        let icmp = InternalKeyComparator::new(Arc::new(BytewiseComparator));
        // Decimal keys as db_bench writes them, two versions of every third.
        let mut entries = Vec::new();
        for i in 0..40u64 {
            let user = format!("{:016}", 123_400 + 2 * i);
            if i % 3 == 0 {
                entries.push((
                    InternalKey::new(user.as_bytes(), 900 + i, ValueType::Value)
                        .encoded()
                        .to_vec(),
                    format!("new{i}").into_bytes(),
                ));
            }
            let t = if i % 5 == 0 {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            entries.push((
                InternalKey::new(user.as_bytes(), 100 + i, t)
                    .encoded()
                    .to_vec(),
                format!("old{i}").into_bytes(),
            ));
        }
        let mut targets = Vec::new();
        for i in 0..90u64 {
            let user = format!("{:016}", 123_390 + i);
            for seq in [50, 120, 500, 950, (1 << 56) - 1] {
                targets.push(
                    InternalKey::new(user.as_bytes(), seq, ValueType::Value)
                        .encoded()
                        .to_vec(),
                );
            }
        }
        let (found, absent, unknown) = check(&entries, &targets, &icmp, 8);
        // Only an older version, whose trailer shares its type byte with the
        // newer one's, goes back to the plain search (14 keys, 5 targets each).
        assert!(unknown <= 14 * 5, "{unknown} undecided");
        assert!(
            found > 100 && absent > 100,
            "found {found}, absent {absent}"
        );
    }

    #[test]
    fn agrees_with_plain_search_for_random_internal_keys() {
        let seed = 5;
        let mut rng = StdRng::seed_from_u64(seed);
        let icmp = InternalKeyComparator::new(Arc::new(BytewiseComparator));
        for round in 0..30 {
            let prefix: Vec<u8> = (0..rng.gen_range(0..6)).map(|_| b'p').collect();
            let mut entries: Vec<(Vec<u8>, Vec<u8>)> = (0..rng.gen_range(1..80))
                .map(|_| {
                    let mut user = prefix.clone();
                    let len = rng.gen_range(0..12);
                    user.extend((0..len).map(|_| b"\x00ab\xff"[rng.gen_range(0..4)]));
                    let t = if rng.gen_bool(0.2) {
                        ValueType::Deletion
                    } else {
                        ValueType::Value
                    };
                    let k = InternalKey::new(&user, rng.gen_range(1..50), t);
                    (k.encoded().to_vec(), vec![round as u8; rng.gen_range(0..5)])
                })
                .collect();
            entries.sort_by(|a, b| icmp.compare(&a.0, &b.0));
            entries.dedup_by(|a, b| a.0 == b.0);
            let mut targets: Vec<Vec<u8>> = Vec::new();
            for (k, _) in &entries {
                let user = extract_user_key(k);
                for seq in [0, 10, 25, 49, 60] {
                    targets.push(
                        InternalKey::new(user, seq, ValueType::Value)
                            .encoded()
                            .to_vec(),
                    );
                }
                let mut longer = user.to_vec();
                longer.push(0);
                targets.push(
                    InternalKey::new(&longer, 30, ValueType::Value)
                        .encoded()
                        .to_vec(),
                );
            }
            targets.push(b"short".to_vec());
            targets.push(
                InternalKey::new(b"", 5, ValueType::Value)
                    .encoded()
                    .to_vec(),
            );
            check(&entries, &targets, &icmp, 8);
        }
    }

    #[test]
    fn agrees_with_plain_search_for_random_bytewise_keys() {
        let seed = 9;
        let mut rng = StdRng::seed_from_u64(seed);
        for _ in 0..30 {
            let mut entries: Vec<(Vec<u8>, Vec<u8>)> = (0..rng.gen_range(1..80))
                .map(|_| {
                    let len = rng.gen_range(0..14);
                    let k: Vec<u8> = (0..len)
                        .map(|_| b"\x00xy\xff"[rng.gen_range(0..4)])
                        .collect();
                    (k, b"v".to_vec())
                })
                .collect();
            entries.sort();
            entries.dedup_by(|a, b| a.0 == b.0);
            let mut targets: Vec<Vec<u8>> = entries.iter().map(|(k, _)| k.clone()).collect();
            targets.extend((0..200).map(|_| {
                let len = rng.gen_range(0..14);
                (0..len)
                    .map(|_| b"\x00xy\xff"[rng.gen_range(0..4)])
                    .collect()
            }));
            check(&entries, &targets, &BytewiseComparator, 0);
        }
    }
}
