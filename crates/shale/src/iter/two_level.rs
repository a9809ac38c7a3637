//! A two-level iterator: an index iterator whose values describe blocks, and
//! an iterator over the block the index is positioned on.
//!
//! For a table, the index is the index block and each value a data block
//! handle. Invariants: when valid, the index is on the entry whose block the
//! data iterator walks; empty blocks are skipped in both directions; the data
//! iterator is reused (its buffers kept) when the next block is loaded; the
//! first error (from the index, a block load or a block's entries) stops the
//! iterator for good and is reported by `status`.

use crate::error::{Error, Result};
use crate::iter::InternalIterator;

/// Opens the blocks that index values describe.
pub trait BlockLoader: Send {
    /// The iterator over one block.
    type Iter: InternalIterator;

    /// Returns an iterator (unpositioned) over the block described by
    /// `index_value`. `reuse` is the previous block's iterator, to be
    /// re-targeted rather than rebuilt when possible.
    fn load(&mut self, index_value: &[u8], reuse: Option<Self::Iter>) -> Result<Self::Iter>;

    /// Adds context (such as the file and block offset) to an error an
    /// iterator reported: the index's when `from_index`, else the last loaded block's.
    fn annotate(&self, err: Error, from_index: bool) -> Error {
        let _ = from_index;
        err
    }

    /// A hint that the block described by `index_value` is read next:
    /// start fetching it. Does nothing by default.
    fn prefetch(&mut self, index_value: &[u8]) {
        let _ = index_value;
    }
}

/// Iterates the entries of all blocks of an index, in order.
pub struct TwoLevelIterator<I: InternalIterator, L: BlockLoader> {
    index: I,
    loader: L,
    /// The current block's iterator (kept for reuse even when not active).
    data: Option<L::Iter>,
    /// True when `data` walks the block described by `data_handle`.
    active: bool,
    data_handle: Vec<u8>,
    error: Option<Error>,
}

impl<I: InternalIterator, L: BlockLoader> TwoLevelIterator<I, L> {
    /// Iterates the blocks listed by `index`, opened by `loader`.
    pub fn new(index: I, loader: L) -> Self {
        TwoLevelIterator {
            index,
            loader,
            data: None,
            active: false,
            data_handle: Vec::new(),
            error: None,
        }
    }

    /// Loads the block the index is on, unless it is already loaded.
    fn init_data_block(&mut self) {
        if !self.index.valid() {
            self.active = false;
            return;
        }
        let handle = self.index.value();
        if self.active && handle == self.data_handle.as_slice() {
            return;
        }
        match self.loader.load(handle, self.data.take()) {
            Ok(it) => {
                self.data = Some(it);
                self.data_handle.clear();
                self.data_handle.extend_from_slice(handle);
                self.active = true;
            }
            Err(e) => {
                self.error = Some(e);
                self.active = false;
            }
        }
    }

    #[inline]
    fn data_valid(&self) -> bool {
        self.active && self.data.as_ref().is_some_and(|d| d.valid())
    }

    /// Collects an error from the index or the current block, if any; true
    /// when iteration must stop.
    fn take_error(&mut self) -> bool {
        if self.error.is_none() {
            if let (true, Some(d)) = (self.active, &self.data) {
                if let Err(e) = d.status() {
                    self.error = Some(self.loader.annotate(e, false));
                }
            }
        }
        if self.error.is_none() {
            if let Err(e) = self.index.status() {
                self.error = Some(self.loader.annotate(e, true));
            }
        }
        if self.error.is_some() {
            self.active = false;
            return true;
        }
        false
    }

    fn skip_empty_blocks_forward(&mut self) {
        while !self.data_valid() {
            if self.take_error() || !self.index.valid() {
                self.active = false;
                return;
            }
            self.index.next();
            self.init_data_block();
            if let (true, Some(d)) = (self.active, &mut self.data) {
                d.seek_to_first();
            }
            self.hint_next_block();
        }
    }

    /// Going forward, the block after the current one is read next: asks
    /// the loader to fetch it ahead (a table's blocks sit in several pages,
    /// which the hardware does not read ahead across).
    #[inline]
    fn hint_next_block(&mut self) {
        if let Some(v) = self.index.peek_next_value() {
            self.loader.prefetch(v);
        }
    }

    fn skip_empty_blocks_backward(&mut self) {
        while !self.data_valid() {
            if self.take_error() || !self.index.valid() {
                self.active = false;
                return;
            }
            self.index.prev();
            self.init_data_block();
            if let (true, Some(d)) = (self.active, &mut self.data) {
                d.seek_to_last();
            }
            self.hint_prev_block();
        }
    }

    /// Going backward, the block before the current one is read next: asks
    /// the loader to fetch it ahead (the hardware does not read ahead in
    /// descending order).
    #[inline]
    fn hint_prev_block(&mut self) {
        if let Some(v) = self.index.peek_prev_value() {
            self.loader.prefetch(v);
        }
    }

    /// Runs a positioning of the index, then of the data iterator.
    #[inline]
    fn position(&mut self, index_op: impl FnOnce(&mut I), data_op: impl FnOnce(&mut L::Iter)) {
        if self.error.is_some() {
            return;
        }
        index_op(&mut self.index);
        self.init_data_block();
        if let (true, Some(d)) = (self.active, &mut self.data) {
            data_op(d);
        }
    }
}

impl<I: InternalIterator, L: BlockLoader> InternalIterator for TwoLevelIterator<I, L> {
    #[inline]
    fn valid(&self) -> bool {
        self.data_valid()
    }

    fn seek_to_first(&mut self) {
        self.position(|i| i.seek_to_first(), |d| d.seek_to_first());
        if self.data_valid() {
            self.hint_next_block();
        }
        self.skip_empty_blocks_forward();
    }

    fn seek_to_last(&mut self) {
        self.position(|i| i.seek_to_last(), |d| d.seek_to_last());
        if self.data_valid() {
            self.hint_prev_block();
        }
        self.skip_empty_blocks_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        self.position(|i| i.seek(target), |d| d.seek(target));
        self.skip_empty_blocks_forward();
    }

    #[inline]
    fn next(&mut self) {
        if !self.valid() {
            return;
        }
        if let Some(d) = &mut self.data {
            d.next();
        }
        if !self.data_valid() {
            self.skip_empty_blocks_forward();
        }
    }

    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if let Some(d) = &mut self.data {
            d.prev();
        }
        if !self.data_valid() {
            self.skip_empty_blocks_backward();
        }
    }

    #[inline]
    fn key(&self) -> &[u8] {
        match &self.data {
            Some(d) if self.active => d.key(),
            _ => &[],
        }
    }

    #[inline]
    fn value(&self) -> &[u8] {
        match &self.data {
            Some(d) if self.active => d.value(),
            _ => &[],
        }
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.duplicate());
        }
        self.index
            .status()
            .map_err(|e| self.loader.annotate(e, true))?;
        match &self.data {
            Some(d) if self.active => d.status().map_err(|e| self.loader.annotate(e, false)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory sorted list, for index and data levels alike.
    struct VecIter {
        entries: Vec<(Vec<u8>, Vec<u8>)>,
        pos: Option<usize>,
    }

    impl VecIter {
        fn new(entries: Vec<(Vec<u8>, Vec<u8>)>) -> VecIter {
            VecIter { entries, pos: None }
        }
    }

    impl InternalIterator for VecIter {
        fn valid(&self) -> bool {
            self.pos.is_some()
        }
        fn seek_to_first(&mut self) {
            self.pos = (!self.entries.is_empty()).then_some(0);
        }
        fn seek_to_last(&mut self) {
            self.pos = self.entries.len().checked_sub(1);
        }
        fn seek(&mut self, target: &[u8]) {
            self.pos = self
                .entries
                .iter()
                .position(|(k, _)| k.as_slice() >= target);
        }
        fn next(&mut self) {
            self.pos = self.pos.map(|p| p + 1).filter(|&p| p < self.entries.len());
        }
        fn prev(&mut self) {
            self.pos = self.pos.and_then(|p| p.checked_sub(1));
        }
        fn key(&self) -> &[u8] {
            &self.entries[self.pos.unwrap()].0
        }
        fn value(&self) -> &[u8] {
            &self.entries[self.pos.unwrap()].1
        }
        fn status(&self) -> Result<()> {
            Ok(())
        }
        fn peek_prev_value(&self) -> Option<&[u8]> {
            let p = self.pos?.checked_sub(1)?;
            Some(&self.entries[p].1)
        }
        fn peek_next_value(&self) -> Option<&[u8]> {
            self.entries.get(self.pos? + 1).map(|e| &e.1[..])
        }
    }

    /// Blocks are lists of keys named by the index value; "bad" fails to load.
    struct Blocks {
        blocks: Vec<(&'static str, Vec<&'static str>)>,
        loads: usize,
        /// Every block loaded, in order.
        loaded: Vec<String>,
        /// Every read-ahead hint, in order.
        prefetched: std::cell::RefCell<Vec<String>>,
    }

    impl BlockLoader for Blocks {
        type Iter = VecIter;
        fn load(&mut self, v: &[u8], _reuse: Option<VecIter>) -> Result<VecIter> {
            self.loads += 1;
            self.loaded.push(String::from_utf8(v.to_vec()).unwrap());
            if v == b"bad" {
                return Err(Error::bad_data("bad block"));
            }
            let (_, keys) = self
                .blocks
                .iter()
                .find(|(name, _)| name.as_bytes() == v)
                .expect("known block");
            Ok(VecIter::new(
                keys.iter()
                    .map(|k| (k.as_bytes().to_vec(), b"v".to_vec()))
                    .collect(),
            ))
        }
        fn prefetch(&mut self, v: &[u8]) {
            self.prefetched
                .borrow_mut()
                .push(String::from_utf8(v.to_vec()).unwrap());
        }
    }

    fn two_level(
        blocks: Vec<(&'static str, &'static str, Vec<&'static str>)>,
    ) -> TwoLevelIterator<VecIter, Blocks> {
        let index = VecIter::new(
            blocks
                .iter()
                .map(|(sep, name, _)| (sep.as_bytes().to_vec(), name.as_bytes().to_vec()))
                .collect(),
        );
        let blocks = blocks
            .into_iter()
            .map(|(_, name, keys)| (name, keys))
            .collect();
        TwoLevelIterator::new(
            index,
            Blocks {
                blocks,
                loads: 0,
                loaded: Vec::new(),
                prefetched: Default::default(),
            },
        )
    }

    fn keys_forward(it: &mut TwoLevelIterator<VecIter, Blocks>) -> Vec<String> {
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            out.push(String::from_utf8(it.key().to_vec()).unwrap());
            it.next();
        }
        out
    }

    fn keys_backward(it: &mut TwoLevelIterator<VecIter, Blocks>) -> Vec<String> {
        let mut out = Vec::new();
        it.seek_to_last();
        while it.valid() {
            out.push(String::from_utf8(it.key().to_vec()).unwrap());
            it.prev();
        }
        out.reverse();
        out
    }

    #[test]
    fn skips_empty_blocks_both_ways() {
        let mut it = two_level(vec![
            ("a", "b0", vec![]),
            ("c", "b1", vec!["a", "b", "c"]),
            ("d", "b2", vec![]),
            ("e", "b3", vec![]),
            ("g", "b4", vec!["f", "g"]),
            ("h", "b5", vec![]),
        ]);
        let all = vec!["a", "b", "c", "f", "g"];
        assert_eq!(keys_forward(&mut it), all);
        assert_eq!(keys_backward(&mut it), all);
        it.seek(b"d");
        assert_eq!(it.key(), b"f");
        it.prev();
        assert_eq!(it.key(), b"c");
        it.seek(b"z");
        assert!(!it.valid());
        it.status().unwrap();
    }

    #[test]
    fn a_walk_asks_for_the_block_it_reads_next() {
        let mut it = two_level(vec![
            ("b", "b0", vec!["a", "b"]),
            ("d", "b1", vec!["c", "d"]),
            ("e", "b2", vec![]),
            ("g", "b3", vec!["f", "g"]),
        ]);
        assert_eq!(keys_backward(&mut it), vec!["a", "b", "c", "d", "f", "g"]);
        assert_eq!(it.loader.loaded, ["b3", "b2", "b1", "b0"]);
        // Each step back to a block hints at the one before it, which is
        // then the next block loaded; the first block has none before it.
        assert_eq!(*it.loader.prefetched.borrow(), ["b2", "b1", "b0"]);
        // Forward, each block hints at the one after it.
        it.loader.prefetched.borrow_mut().clear();
        assert_eq!(keys_forward(&mut it).len(), 6);
        assert_eq!(*it.loader.prefetched.borrow(), ["b1", "b2", "b3"]);
        // A seek hints at nothing: a point read may read one block only.
        it.loader.prefetched.borrow_mut().clear();
        it.seek(b"c");
        assert_eq!(it.key(), b"c");
        assert!(it.loader.prefetched.borrow().is_empty());
    }

    #[test]
    fn does_not_reload_the_current_block() {
        let mut it = two_level(vec![("z", "b0", vec!["a", "b", "c"])]);
        it.seek(b"a");
        it.seek(b"b");
        it.seek(b"c");
        assert_eq!(it.key(), b"c");
        assert_eq!(it.loader.loads, 1);
    }

    #[test]
    fn a_failed_block_stops_the_iterator() {
        let mut it = two_level(vec![
            ("b", "b0", vec!["a", "b"]),
            ("d", "bad", vec![]),
            ("f", "b2", vec!["e", "f"]),
        ]);
        assert_eq!(keys_forward(&mut it), vec!["a", "b"]);
        assert!(it.status().unwrap_err().is_corruption());
        // The error is sticky: later positioning stays invalid.
        it.seek_to_first();
        assert!(!it.valid());
        assert!(it.status().is_err());
    }

    #[test]
    fn empty_index() {
        let mut it = two_level(vec![]);
        assert!(keys_forward(&mut it).is_empty());
        assert!(keys_backward(&mut it).is_empty());
        it.seek(b"a");
        assert!(!it.valid());
        it.status().unwrap();
    }
}
