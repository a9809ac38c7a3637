//! The merging iterator: the sorted union of several sorted children.
//!
//! Children are given newest first (memtable, immutable memtable, level-0
//! files newest first, then levels 1..6). Entries are ordered by
//! (internal key, child index): when two children hold an equal key, the child
//! with the lower index comes first going forward, and last going backward.
//!
//! Invariants:
//! - `heap` holds exactly the indices of the valid children, as a binary heap
//!   whose top (`heap[0]`) is the current child: the smallest (key, index)
//!   going forward, the largest going backward.
//! - Going forward, every valid child is positioned at its first entry after
//!   everything already yielded; going backward, at its last entry before it.
//!   A change of direction re-positions every child except the current one.
//! - A child that stops with an error stops the whole merge: the error is kept
//!   and the iterator stays invalid.
//! - `keys[i]` is a copy of valid child `i`'s current key. Comparisons and
//!   `key()` read the copies, so a step calls into the moved child once for
//!   its new key instead of once per comparison and per read of the key.
//!
//! A step costs one step of the current child plus a sift-down of at most
//! `2 * log2(n)` comparisons. For `n <= 4` that is never more comparisons than
//! a linear scan for the minimum (`n - 1`), so there is no separate small-`n`
//! path.

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::keys::InternalKeyComparator;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    Forward,
    Reverse,
}

/// The sorted union of several internal iterators.
pub struct MergingIterator {
    cmp: InternalKeyComparator,
    children: Vec<Box<dyn InternalIterator>>,
    /// Indices of the valid children, heap-ordered for `direction`.
    heap: Vec<usize>,
    /// The current key of each valid child (buffers kept for reuse).
    keys: Vec<Vec<u8>>,
    direction: Direction,
    /// The first error met; it stops the iterator for good.
    error: Option<Error>,
}

/// True when child `a` comes before child `b` in the heap order of `dir`,
/// given the children's current `keys`.
#[inline]
fn before(
    cmp: &InternalKeyComparator,
    keys: &[Vec<u8>],
    dir: Direction,
    a: usize,
    b: usize,
) -> bool {
    let o = cmp.compare(&keys[a], &keys[b]).then(a.cmp(&b));
    match dir {
        Direction::Forward => o == Ordering::Less,
        Direction::Reverse => o == Ordering::Greater,
    }
}

/// Restores the heap order below position `i`, assuming only `heap[i]` may be out of place.
/// Always inlined: it is part of every step of a scan over three or more
/// sources, and the compiler, left to choose, sometimes calls it out of line
/// (about 27 instructions an entry, counted by callgrind).
#[inline(always)]
fn sift_down(
    cmp: &InternalKeyComparator,
    keys: &[Vec<u8>],
    dir: Direction,
    heap: &mut [usize],
    mut i: usize,
) {
    let n = heap.len();
    let item = heap[i];
    loop {
        let left = 2 * i + 1;
        if left >= n {
            break;
        }
        let right = left + 1;
        let child = if right < n && before(cmp, keys, dir, heap[right], heap[left]) {
            right
        } else {
            left
        };
        if before(cmp, keys, dir, heap[child], item) {
            heap[i] = heap[child];
            i = child;
        } else {
            break;
        }
    }
    heap[i] = item;
}

impl MergingIterator {
    /// Merges `children`, given newest first. The result is unpositioned.
    pub fn new(
        cmp: InternalKeyComparator,
        children: Vec<Box<dyn InternalIterator>>,
    ) -> MergingIterator {
        let heap = Vec::with_capacity(children.len());
        let keys = vec![Vec::new(); children.len()];
        MergingIterator {
            cmp,
            children,
            heap,
            keys,
            direction: Direction::Forward,
            error: None,
        }
    }

    /// Keeps the error of child `i` if it has one; returns true if so.
    #[inline]
    fn check_child_error(&mut self, i: usize) -> bool {
        if let Err(e) = self.children[i].status() {
            self.stop(e);
            true
        } else {
            false
        }
    }

    #[cold]
    fn stop(&mut self, e: Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
        self.heap.clear();
    }

    /// Copies valid child `i`'s current key into `keys[i]`.
    #[inline]
    fn save_key(&mut self, i: usize) {
        let key = &mut self.keys[i];
        key.clear();
        key.extend_from_slice(self.children[i].key());
    }

    /// Rebuilds the heap from the valid children after all were re-positioned.
    fn rebuild(&mut self, dir: Direction) {
        self.direction = dir;
        self.heap.clear();
        for i in 0..self.children.len() {
            if self.children[i].valid() {
                self.save_key(i);
                self.heap.push(i);
            } else if self.check_child_error(i) {
                return;
            }
        }
        let n = self.heap.len();
        for i in (0..n / 2).rev() {
            sift_down(&self.cmp, &self.keys, dir, &mut self.heap, i);
        }
    }

    /// Positions every child other than the current one `cur` just after
    /// the current entry (key, cur), then makes the heap forward-ordered.
    fn switch_to_forward(&mut self) {
        let cur = self.heap[0];
        let (left, rest) = self.children.split_at_mut(cur);
        let Some((_, right)) = rest.split_first_mut() else {
            return; // cur is a valid child index: cannot happen.
        };
        let key = &self.keys[cur];
        // Children before `cur` hold (key, i) < (key, cur): skip an equal key.
        for child in left.iter_mut() {
            child.seek(key);
            if child.valid() && self.cmp.compare(child.key(), key) == Ordering::Equal {
                child.next();
            }
        }
        // Children after `cur` hold (key, i) > (key, cur): an equal key comes next.
        for child in right.iter_mut() {
            child.seek(key);
        }
        self.rebuild(Direction::Forward);
    }

    /// Positions every child other than the current one `cur` just before
    /// the current entry (key, cur), then makes the heap reverse-ordered.
    fn switch_to_reverse(&mut self) {
        let cur = self.heap[0];
        let (left, rest) = self.children.split_at_mut(cur);
        let Some((_, right)) = rest.split_first_mut() else {
            return; // cur is a valid child index: cannot happen.
        };
        let key = &self.keys[cur];
        // Children before `cur`: an equal key (key, i) < (key, cur) comes next.
        for child in left.iter_mut() {
            child.seek(key);
            if child.valid() {
                if self.cmp.compare(child.key(), key) != Ordering::Equal {
                    child.prev();
                }
            } else {
                child.seek_to_last();
            }
        }
        // Children after `cur`: the last entry < key.
        for child in right.iter_mut() {
            child.seek(key);
            if child.valid() {
                child.prev();
            } else {
                child.seek_to_last();
            }
        }
        self.rebuild(Direction::Reverse);
    }

    /// After the current child moved one step: re-establishes the heap.
    #[inline]
    fn after_step(&mut self) {
        let cur = self.heap[0];
        if self.children[cur].valid() {
            self.save_key(cur);
            if let [top, other] = self.heap[..] {
                // Two sources (a memtable and one level, say): one comparison.
                if before(&self.cmp, &self.keys, self.direction, other, top) {
                    self.heap.swap(0, 1);
                }
            } else {
                sift_down(&self.cmp, &self.keys, self.direction, &mut self.heap, 0);
            }
        } else {
            if self.check_child_error(cur) {
                return;
            }
            self.heap.swap_remove(0);
            if !self.heap.is_empty() {
                sift_down(&self.cmp, &self.keys, self.direction, &mut self.heap, 0);
            }
        }
    }
}

impl InternalIterator for MergingIterator {
    #[inline]
    fn valid(&self) -> bool {
        !self.heap.is_empty()
    }

    fn seek_to_first(&mut self) {
        if self.error.is_some() {
            return;
        }
        for c in self.children.iter_mut() {
            c.seek_to_first();
        }
        self.rebuild(Direction::Forward);
    }

    fn seek_to_last(&mut self) {
        if self.error.is_some() {
            return;
        }
        for c in self.children.iter_mut() {
            c.seek_to_last();
        }
        self.rebuild(Direction::Reverse);
    }

    fn seek(&mut self, target: &[u8]) {
        if self.error.is_some() {
            return;
        }
        for c in self.children.iter_mut() {
            c.seek(target);
        }
        self.rebuild(Direction::Forward);
    }

    fn next(&mut self) {
        debug_assert!(self.valid());
        if self.heap.is_empty() {
            return;
        }
        if self.direction != Direction::Forward {
            self.switch_to_forward();
            if self.heap.is_empty() {
                return;
            }
        }
        let cur = self.heap[0];
        self.children[cur].next();
        self.after_step();
    }

    fn prev(&mut self) {
        debug_assert!(self.valid());
        if self.heap.is_empty() {
            return;
        }
        if self.direction != Direction::Reverse {
            self.switch_to_reverse();
            if self.heap.is_empty() {
                return;
            }
        }
        let cur = self.heap[0];
        self.children[cur].prev();
        self.after_step();
    }

    #[inline]
    fn key(&self) -> &[u8] {
        debug_assert!(self.valid());
        match self.heap.first() {
            Some(&i) => &self.keys[i],
            None => &[],
        }
    }

    #[inline]
    fn value(&self) -> &[u8] {
        debug_assert!(self.valid());
        match self.heap.first() {
            Some(&i) => self.children[i].value(),
            None => &[],
        }
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.duplicate());
        }
        for c in &self.children {
            c.status()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::ValueType;
    use crate::testutil::{icmp, ikey, VecIterator};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    type Entry = (Vec<u8>, Vec<u8>);

    fn merge_of(children: &[Vec<Entry>]) -> MergingIterator {
        let its: Vec<Box<dyn InternalIterator>> = children
            .iter()
            .map(|c| Box::new(VecIterator::internal(c.clone())) as Box<dyn InternalIterator>)
            .collect();
        MergingIterator::new(icmp(), its)
    }

    /// The expected merge: all entries ordered by (internal key, child index).
    fn model_of(children: &[Vec<Entry>]) -> Vec<Entry> {
        let mut all: Vec<(usize, Entry)> = children
            .iter()
            .enumerate()
            .flat_map(|(i, c)| c.iter().cloned().map(move |e| (i, e)))
            .collect();
        let c = icmp();
        all.sort_by(|a, b| c.compare(&a.1 .0, &b.1 .0).then(a.0.cmp(&b.0)));
        all.into_iter().map(|(_, e)| e).collect()
    }

    fn collect_forward(it: &mut MergingIterator) -> Vec<Entry> {
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        out
    }

    fn collect_backward(it: &mut MergingIterator) -> Vec<Entry> {
        let mut out = Vec::new();
        it.seek_to_last();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        out.reverse();
        out
    }

    /// Random children: keys from a small alphabet so children overlap, some
    /// internal keys present in several children (values name the child).
    fn random_children(rng: &mut StdRng, n: usize, max_len: usize) -> Vec<Vec<Entry>> {
        let c = icmp();
        let mut out = Vec::new();
        for child in 0..n {
            let len = rng.gen_range(0..=max_len);
            let mut entries: Vec<Entry> = (0..len)
                .map(|_| {
                    let uk = format!("k{:03}", rng.gen_range(0..60));
                    let seq = rng.gen_range(1..6);
                    let t = if rng.gen_bool(0.2) {
                        ValueType::Deletion
                    } else {
                        ValueType::Value
                    };
                    let k = ikey(uk.as_bytes(), seq, t);
                    let v = format!("{uk}@{seq}#child{child}").into_bytes();
                    (k, v)
                })
                .collect();
            entries.sort_by(|a, b| c.compare(&a.0, &b.0));
            entries.dedup_by(|a, b| a.0 == b.0);
            out.push(entries);
        }
        out
    }

    fn e(k: &str, seq: u64, v: &str) -> Entry {
        (
            ikey(k.as_bytes(), seq, ValueType::Value),
            v.as_bytes().to_vec(),
        )
    }

    #[test]
    fn no_children_is_always_empty() {
        let mut it = MergingIterator::new(icmp(), Vec::new());
        it.seek_to_first();
        assert!(!it.valid());
        it.seek_to_last();
        assert!(!it.valid());
        it.seek(&ikey(b"a", 1, ValueType::Value));
        assert!(!it.valid());
        assert!(it.status().is_ok());
    }

    #[test]
    fn one_child_is_passed_through() {
        let child = vec![e("a", 1, "1"), e("b", 1, "2"), e("c", 1, "3")];
        let mut it = merge_of(std::slice::from_ref(&child));
        assert_eq!(collect_forward(&mut it), child);
        assert_eq!(collect_backward(&mut it), child);
    }

    #[test]
    fn interleaved_children_yield_the_sorted_union() {
        let children = vec![
            vec![e("a", 1, "a"), e("d", 1, "d"), e("g", 1, "g")],
            vec![],
            vec![e("b", 1, "b"), e("e", 1, "e")],
            vec![e("c", 1, "c"), e("f", 1, "f"), e("h", 1, "h")],
        ];
        let mut it = merge_of(&children);
        let keys: Vec<Vec<u8>> = collect_forward(&mut it).into_iter().map(|e| e.1).collect();
        assert_eq!(keys, [b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h"]);
        assert_eq!(collect_backward(&mut it), collect_forward(&mut it));
    }

    #[test]
    fn newer_versions_of_a_user_key_come_first() {
        let children = vec![
            vec![e("k", 9, "newest")],
            vec![e("k", 5, "middle")],
            vec![e("k", 1, "oldest"), e("l", 1, "other")],
        ];
        let mut it = merge_of(&children);
        let vals: Vec<Vec<u8>> = collect_forward(&mut it).into_iter().map(|e| e.1).collect();
        assert_eq!(vals, [&b"newest"[..], b"middle", b"oldest", b"other"]);
    }

    #[test]
    fn equal_keys_yield_lower_child_index_first_and_last_backward() {
        let children = vec![
            vec![e("a", 1, "a0"), e("k", 1, "k0")],
            vec![e("k", 1, "k1"), e("z", 1, "z1")],
            vec![e("k", 1, "k2")],
        ];
        let mut it = merge_of(&children);
        let vals: Vec<Vec<u8>> = collect_forward(&mut it).into_iter().map(|e| e.1).collect();
        assert_eq!(vals, [&b"a0"[..], b"k0", b"k1", b"k2", b"z1"]);
        assert_eq!(collect_backward(&mut it), collect_forward(&mut it));

        // Direction switches in the middle of the run of equal keys.
        it.seek(&ikey(b"k", 1, ValueType::Value));
        assert_eq!(it.value(), b"k0");
        it.next();
        assert_eq!(it.value(), b"k1");
        it.prev();
        assert_eq!(it.value(), b"k0");
        it.prev();
        assert_eq!(it.value(), b"a0");
        it.next();
        assert_eq!(it.value(), b"k0");
        it.next();
        it.next();
        assert_eq!(it.value(), b"k2");
        it.prev();
        assert_eq!(it.value(), b"k1");
        it.next();
        assert_eq!(it.value(), b"k2");
        it.next();
        assert_eq!(it.value(), b"z1");
    }

    #[test]
    fn direction_switch_at_both_ends() {
        let children = vec![vec![e("b", 1, "b")], vec![e("a", 1, "a"), e("c", 1, "c")]];
        let mut it = merge_of(&children);
        it.seek_to_first();
        it.prev();
        assert!(!it.valid());
        it.seek_to_last();
        assert_eq!(it.value(), b"c");
        it.next();
        assert!(!it.valid());
        it.seek_to_last();
        it.prev();
        assert_eq!(it.value(), b"b");
        it.next();
        assert_eq!(it.value(), b"c");
        it.seek_to_first();
        it.next();
        it.prev();
        assert_eq!(it.value(), b"a");
        assert!(it.status().is_ok());
    }

    #[test]
    fn full_scans_match_the_model() {
        let mut rng = StdRng::seed_from_u64(0x5eed_0001);
        for round in 0..200 {
            let n = rng.gen_range(0..9);
            let children = random_children(&mut rng, n, 30);
            let model = model_of(&children);
            let mut it = merge_of(&children);
            assert_eq!(collect_forward(&mut it), model, "round {round}");
            assert_eq!(collect_backward(&mut it), model, "round {round}");
        }
    }

    /// Compares the iterator with the model position after every step of a
    /// random walk of seeks and steps in both directions.
    #[test]
    fn random_walks_match_the_model() {
        let seed = 0x5eed_0002;
        let mut rng = StdRng::seed_from_u64(seed);
        let c = icmp();
        for round in 0..60 {
            let n = [1, 2, 3, 4, 5, 8, 16][round % 7];
            let children = random_children(&mut rng, n, 40);
            let model = model_of(&children);
            let mut it = merge_of(&children);
            let mut pos: Option<usize> = None;
            for step in 0..2000 {
                let op = rng.gen_range(0..10);
                match op {
                    0 => {
                        it.seek_to_first();
                        pos = (!model.is_empty()).then_some(0);
                    }
                    1 => {
                        it.seek_to_last();
                        pos = model.len().checked_sub(1);
                    }
                    2 | 3 => {
                        let uk = format!("k{:03}", rng.gen_range(0..62));
                        let target = ikey(uk.as_bytes(), rng.gen_range(0..7), ValueType::Value);
                        it.seek(&target);
                        let p = model.partition_point(|e| c.compare(&e.0, &target).is_lt());
                        pos = (p < model.len()).then_some(p);
                    }
                    4..=6 => {
                        if let Some(p) = pos {
                            it.next();
                            pos = (p + 1 < model.len()).then_some(p + 1);
                        }
                    }
                    _ => {
                        if let Some(p) = pos {
                            it.prev();
                            pos = p.checked_sub(1);
                        }
                    }
                }
                let ctx = format!("seed {seed:#x} round {round} step {step} op {op}");
                assert_eq!(it.valid(), pos.is_some(), "{ctx}");
                if let Some(p) = pos {
                    assert_eq!(it.key(), &model[p].0[..], "{ctx}");
                    assert_eq!(it.value(), &model[p].1[..], "{ctx}");
                }
            }
            assert!(it.status().is_ok());
        }
    }

    #[test]
    fn a_child_error_stops_the_merge_and_is_reported() {
        let a = vec![e("a", 1, "a"), e("c", 1, "c"), e("e", 1, "e")];
        let b = vec![e("b", 1, "b"), e("d", 1, "d"), e("f", 1, "f")];
        let children: Vec<Box<dyn InternalIterator>> = vec![
            Box::new(VecIterator::internal(a)),
            Box::new(VecIterator::internal(b).fail_at(1)),
        ];
        let mut it = MergingIterator::new(icmp(), children);
        it.seek_to_first();
        assert_eq!(it.value(), b"a");
        it.next();
        assert_eq!(it.value(), b"b");
        // Child 1 steps onto its failing entry: the merge stops at once, even
        // though child 0 still holds "c", so no entry is yielded out of place.
        it.next();
        assert!(!it.valid());
        assert!(it.status().unwrap_err().is_corruption());
        // The error is kept: the merge stays stopped.
        it.seek_to_first();
        assert!(!it.valid());
        assert!(it.status().is_err());
    }

    #[test]
    fn a_child_error_during_seek_stops_the_merge() {
        let a = vec![e("a", 1, "a"), e("c", 1, "c")];
        let b = vec![e("b", 1, "b"), e("d", 1, "d")];
        let children: Vec<Box<dyn InternalIterator>> = vec![
            Box::new(VecIterator::internal(a)),
            Box::new(VecIterator::internal(b).fail_at(1)),
        ];
        let mut it = MergingIterator::new(icmp(), children);
        it.seek(&ikey(b"c", 1, ValueType::Value));
        assert!(!it.valid());
        assert!(it.status().is_err());
    }
}
