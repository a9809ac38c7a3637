//! Fences: an integer summary of a block's restart keys that lets a point
//! lookup find its restart interval without decoding keys all over the block.
//!
//! A table's index block is searched by every lookup in the table. Binary
//! search over its restart points decodes and compares a key at each step, and
//! each step lands on another cache line. When the comparator orders keys
//! bytewise (apart from a fixed-size trailer that only breaks ties, as
//! internal keys do, see [`Comparator::bytewise_with_trailer`]), the fences
//! hold, for every restart key, the 8 bytes that follow the prefix all restart
//! keys share, as a big-endian `u64` (zero-padded). Comparing fences orders
//! keys exactly except when two fences are equal, so a search over the small,
//! dense fence array narrows the block search to the restart points whose
//! fence equals the target's, usually none or one.
//!
//! Invariants: `words[i]` is the fence of restart point `i`; every restart
//! key (less its trailer) starts with `common` when the block is sorted. A
//! block that is not sorted yields wrong narrowing, never a panic: the block
//! search then answers as wrongly as it would on that block anyway.

use std::cmp::Ordering;

use crate::comparator::Comparator;

use super::entries::BlockEntries;

/// Fences over the restart keys of one block.
pub struct Fences {
    /// Bytes at the end of each key that the fences leave out.
    trailer: usize,
    /// The prefix that the first `words.len()` restart keys (less trailers)
    /// share; the restart keys after them are beyond every key with it.
    common: Box<[u8]>,
    /// One fence per restart point with the common prefix.
    words: Box<[u64]>,
    /// The number of restart points.
    restarts: u32,
    /// Every entry is a restart point (as in index blocks): the first entry
    /// at or after a target is then known from the fences alone when none
    /// ties with the target's.
    every_entry: bool,
}

/// The fence of `key`'s bytes after the first `skip` (`key` must be at least
/// `skip` bytes long).
#[inline]
fn fence(key: &[u8], skip: usize) -> u64 {
    let rest = &key[skip..];
    let mut word = [0u8; 8];
    let n = rest.len().min(8);
    word[..n].copy_from_slice(&rest[..n]);
    u64::from_be_bytes(word)
}

/// `key` less its last `trailer` bytes (all of it if shorter).
#[inline]
fn strip(key: &[u8], trailer: usize) -> &[u8] {
    &key[..key.len().saturating_sub(trailer)]
}

impl Fences {
    /// Fences for `block`, whose keys are ordered by `cmp`. `None` when the
    /// comparator is not bytewise with a trailer, the block has no restart
    /// points, or a restart key cannot be decoded.
    ///
    /// The common prefix is taken from the first and the second-to-last
    /// restart keys: in an index block the last key is often a short
    /// successor of the table's last key (such as `"1"` after
    /// `"0000000000199999"`) that shares little with the others.
    pub fn build<B: BlockEntries>(block: &B, cmp: &dyn Comparator) -> Option<Fences> {
        let trailer = cmp.bytewise_with_trailer()?;
        let restarts = block.num_restarts();
        if restarts == 0 {
            return None;
        }
        let first = strip(block.restart_key(0)?, trailer);
        let other = strip(block.restart_key(restarts.saturating_sub(2))?, trailer);
        let shared = first.iter().zip(other).take_while(|(a, b)| a == b).count();
        let common: Box<[u8]> = first[..shared].into();
        let mut words = Vec::with_capacity(restarts as usize);
        for i in 0..restarts {
            let key = strip(block.restart_key(i)?, trailer);
            if !key.starts_with(&common) {
                break;
            }
            words.push(fence(key, shared));
        }
        // Sorted keys with the prefix are contiguous: none may follow.
        for i in words.len() as u32..restarts {
            if strip(block.restart_key(i)?, trailer).starts_with(&common) {
                return None;
            }
        }
        let mut entries = 0u32;
        let every_entry = block.for_each_entry(0, |_, _, _, _| {
            entries += 1;
            entries <= restarts
        }) && entries == restarts;
        Some(Fences {
            trailer,
            common,
            words: words.into_boxed_slice(),
            restarts,
            every_entry,
        })
    }

    /// The restart point of the first entry at or after `target` (the number
    /// of restart points if there is none), when every entry is a restart
    /// point and the fences decide it; `None` when they cannot (search the
    /// [`window`](Fences::window) then).
    #[inline]
    pub fn locate(&self, target: &[u8]) -> Option<u32> {
        if !self.every_entry {
            return None;
        }
        let t = strip(target, self.trailer);
        let shared = self.common.len();
        let overlap = t.len().min(shared);
        match t[..overlap].cmp(&self.common[..overlap]) {
            // Before every key: the first entry.
            Ordering::Less => Some(0),
            Ordering::Equal if t.len() < shared => Some(0),
            // After every prefixed key: past the end, unless keys without the
            // prefix (not summarized) follow.
            Ordering::Greater if self.words.len() as u32 == self.restarts => Some(self.restarts),
            Ordering::Greater => None,
            Ordering::Equal => {
                let f = fence(t, shared);
                let i = self.words.partition_point(|&w| w < f);
                match self.words.get(i) {
                    // A tie: only the keys can tell.
                    Some(&w) if w == f => None,
                    // Entry `i` is after `target`, every one before it before.
                    Some(_) => Some(i as u32),
                    // After every prefixed key: the next entry, if any, is
                    // not summarized.
                    None if i as u32 == self.restarts => Some(self.restarts),
                    None => None,
                }
            }
        }
    }

    /// The window `(left, right)` of restart points that holds the last one
    /// whose key is before `target` (or restart point 0 if none is): when
    /// `left > 0`, restart point `left` is known to be before `target`, and
    /// every restart point after `right` is known to be after it.
    #[inline]
    pub fn window(&self, target: &[u8]) -> (u32, u32) {
        let m = self.words.len();
        let t = strip(target, self.trailer);
        let shared = self.common.len();
        let overlap = t.len().min(shared);
        let (lo, hi) = match t[..overlap].cmp(&self.common[..overlap]) {
            // A proper prefix of the common prefix, or below it: before every key.
            Ordering::Equal if t.len() < shared => (0, 0),
            Ordering::Less => (0, 0),
            // Beyond every key with the common prefix.
            Ordering::Greater => (m, self.restarts as usize),
            Ordering::Equal => {
                let f = fence(t, shared);
                let lo = self.words.partition_point(|&w| w < f);
                // Usually no fence, or one, equals the target's.
                let hi = match self.words.get(lo) {
                    Some(&w) if w == f => {
                        lo + 1 + self.words[lo + 1..].partition_point(|&w| w == f)
                    }
                    _ => lo,
                };
                (lo, hi)
            }
        };
        // Restart points below `lo` are before `target`, from `hi` on after it.
        let left = lo.saturating_sub(1);
        let right = hi.saturating_sub(1).max(left);
        (left as u32, right as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::BytewiseComparator;
    use crate::keys::{InternalKey, InternalKeyComparator, ValueType};
    use crate::sstable::block::Block;
    use crate::sstable::block_builder::BlockBuilder;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::sync::Arc;

    fn block_of(keys: &[Vec<u8>], interval: usize) -> Block {
        let mut b = BlockBuilder::new(interval);
        for k in keys {
            b.add(k, b"v");
        }
        Block::new(b.finish().to_vec()).unwrap()
    }

    /// The restart window a plain search would need: the last restart point
    /// whose key is before `target` (0 if none).
    fn last_before(block: &Block, cmp: &dyn Comparator, target: &[u8]) -> u32 {
        (0..block.num_restarts())
            .rev()
            .find(|&i| cmp.compare(block.restart_key(i).unwrap(), target) == Ordering::Less)
            .unwrap_or(0)
    }

    fn check(keys: &[Vec<u8>], targets: &[Vec<u8>], cmp: &dyn Comparator, interval: usize) {
        let block = block_of(keys, interval);
        let fences = Fences::build(&block, cmp).expect("a bytewise order");
        for t in targets {
            let (left, right) = fences.window(t);
            let want = last_before(&block, cmp, t);
            assert!(
                left <= want && want <= right,
                "target {t:?}: window {left}..={right}, answer {want}"
            );
            assert!(right < block.num_restarts());
            if let Some(i) = fences.locate(t) {
                let first = (0..block.num_restarts())
                    .find(|&i| cmp.compare(block.restart_key(i).unwrap(), t) != Ordering::Less)
                    .unwrap_or(block.num_restarts());
                assert_eq!(i, first, "target {t:?}: located");
            }
        }
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
        let block = block_of(&[b"b".to_vec(), b"a".to_vec()], 1);
        assert!(Fences::build(&block, &Reverse).is_none());
        let icmp = InternalKeyComparator::new(Arc::new(Reverse));
        assert!(Fences::build(&block, &icmp).is_none());
    }

    #[test]
    fn narrows_to_one_point_when_keys_differ_early() {
        let keys: Vec<Vec<u8>> = (0..100u32)
            .map(|i| format!("{:016}", i * 10).into_bytes())
            .collect();
        let block = block_of(&keys, 1);
        let f = Fences::build(&block, &BytewiseComparator).unwrap();
        assert_eq!(&*f.common, b"0000000000000");
        assert_eq!(f.words.len(), 100);
        assert_eq!(f.window(b"0000000000000005"), (0, 0));
        // A key equal to the target: its own restart point stays in the window.
        assert_eq!(f.window(b"0000000000000010"), (0, 1));
        assert_eq!(f.window(b"0000000000000011"), (1, 1));
        assert_eq!(f.window(b"0000000000000990"), (98, 99));
        assert_eq!(f.window(b"0000000000000985"), (98, 98));
        assert_eq!(f.window(b"0000000000000991"), (99, 99));
        assert_eq!(f.window(b"1"), (99, 99), "beyond every key");
        assert_eq!(f.window(b"0"), (0, 0), "a prefix of every key");
        assert_eq!(f.window(b""), (0, 0));
    }

    #[test]
    fn locates_entries_of_blocks_whose_every_entry_is_a_restart_point() {
        let keys: Vec<Vec<u8>> = (0..100u32)
            .map(|i| format!("{:016}", i * 10).into_bytes())
            .collect();
        let f = Fences::build(&block_of(&keys, 1), &BytewiseComparator).unwrap();
        assert_eq!(f.locate(b"0000000000000005"), Some(1));
        assert_eq!(f.locate(b"0000000000000011"), Some(2));
        assert_eq!(f.locate(b"0000000000000010"), None, "a tie");
        assert_eq!(f.locate(b"0000000000000991"), Some(100), "past the end");
        assert_eq!(f.locate(b""), Some(0));
        assert_eq!(f.locate(b"1"), Some(100));
        // With restart intervals of two entries the fences do not see every key.
        let f = Fences::build(&block_of(&keys, 2), &BytewiseComparator).unwrap();
        assert_eq!(f.locate(b"0000000000000005"), None);
        // A short last key after the prefixed ones is not summarized.
        let mut keys = keys;
        keys.push(b"1".to_vec());
        let f = Fences::build(&block_of(&keys, 1), &BytewiseComparator).unwrap();
        assert_eq!(f.locate(b"0000000000000991"), None);
        assert_eq!(f.locate(b"0000000000000985"), Some(99));
        assert_eq!(f.locate(b"2"), None);
    }

    #[test]
    fn leaves_out_a_last_key_without_the_common_prefix() {
        // An index block's last key is often a short successor.
        let mut keys: Vec<Vec<u8>> = (0..50u32)
            .map(|i| format!("{:016}", 1000 + i).into_bytes())
            .collect();
        keys.push(b"1".to_vec());
        let block = block_of(&keys, 1);
        let f = Fences::build(&block, &BytewiseComparator).unwrap();
        assert_eq!(&*f.common, b"00000000000010");
        assert_eq!(f.words.len(), 50);
        assert_eq!(f.window(b"0000000000001020"), (19, 20));
        assert_eq!(f.window(b"0000000000001099"), (49, 49));
        // Beyond the common prefix: the short last key may still be after it.
        assert_eq!(f.window(b"0000000000002000"), (49, 50));
        assert_eq!(f.window(b"2"), (49, 50));
        assert_eq!(f.window(b"0000000000000999"), (0, 0));
        let targets: Vec<Vec<u8>> = (900..1200u32)
            .map(|i| format!("{i:016}").into_bytes())
            .chain([b"0".to_vec(), b"1".to_vec(), b"10".to_vec(), b"2".to_vec()])
            .collect();
        check(&keys, &targets, &BytewiseComparator, 1);
    }

    #[test]
    fn agrees_with_plain_search_for_random_bytewise_keys() {
        let seed = 7;
        let mut rng = StdRng::seed_from_u64(seed);
        for round in 0..40 {
            let n = rng.gen_range(1..200);
            let prefix_len = rng.gen_range(0..12);
            let mut keys: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    let len = prefix_len + rng.gen_range(0..14);
                    (0..len)
                        .map(|i| {
                            if i < prefix_len {
                                b'p'
                            } else {
                                b"\x00\x01ab\xff"[rng.gen_range(0..5)]
                            }
                        })
                        .collect()
                })
                .collect();
            if rng.gen_bool(0.3) {
                // A short key after all others, like an index block's last.
                keys.push(b"q".to_vec());
            }
            keys.sort();
            keys.dedup();
            let mut targets = keys.clone();
            for k in &keys {
                let mut t = k.clone();
                t.push(0);
                targets.push(t);
                let mut t = k.clone();
                t.pop();
                targets.push(t);
            }
            targets.extend([
                b"".to_vec(),
                b"p".to_vec(),
                b"q".to_vec(),
                b"\xff\xff".to_vec(),
            ]);
            for interval in [1, 3, 16] {
                check(&keys, &targets, &BytewiseComparator, interval);
            }
            let _ = round;
        }
    }

    #[test]
    fn agrees_with_plain_search_for_internal_keys() {
        let seed = 11;
        let mut rng = StdRng::seed_from_u64(seed);
        let icmp = InternalKeyComparator::new(Arc::new(BytewiseComparator));
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for i in 0..300u64 {
            let user = format!("key{:06}", rng.gen_range(0..400));
            let t = if i % 7 == 0 {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            keys.push(InternalKey::new(user.as_bytes(), i, t).encoded().to_vec());
        }
        keys.sort_by(|a, b| icmp.compare(a, b));
        keys.dedup();
        let mut targets = keys.clone();
        for u in 0..410 {
            let user = format!("key{u:06}");
            for seq in [0, 150, u64::MAX >> 8] {
                targets.push(
                    InternalKey::new(user.as_bytes(), seq, ValueType::Value)
                        .encoded()
                        .to_vec(),
                );
            }
        }
        targets.push(b"short".to_vec());
        for interval in [1, 4, 16] {
            check(&keys, &targets, &icmp, interval);
        }
    }
}
