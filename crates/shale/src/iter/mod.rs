//! The iterator contract shared by every sorted source: memtables, blocks,
//! tables, levels, and the merge of them all.
//!
//! Invariants: `key` and `value` may only be called while `valid()`; after any
//! positioning call the iterator is either valid or exhausted; an error stops
//! the iterator (it becomes invalid) and is reported by `status`.
//!
//! The iterators that combine other iterators live here too, knowing nothing
//! of tables or versions: `two_level` (an index iterator over per-entry
//! iterators: a table's blocks), `level` (the files of one sorted level),
//! `merging` (the merge of every source) and `db_iter` (the user's view of
//! the merge: one version per key, deletions hidden).

pub mod db_iter;
pub mod level;
pub mod merging;
pub mod two_level;

use crate::error::Result;

/// A bidirectional cursor over sorted (key, value) entries.
pub trait InternalIterator: Send {
    /// True when positioned on an entry.
    fn valid(&self) -> bool;
    /// Positions at the first entry.
    fn seek_to_first(&mut self);
    /// Positions at the last entry.
    fn seek_to_last(&mut self);
    /// Positions at the first entry with key >= `target`.
    fn seek(&mut self, target: &[u8]);
    /// Moves to the next entry. Requires `valid()`.
    fn next(&mut self);
    /// Moves to the previous entry. Requires `valid()`.
    fn prev(&mut self);
    /// The current key. Requires `valid()`.
    fn key(&self) -> &[u8];
    /// The current value. Requires `valid()`.
    fn value(&self) -> &[u8];
    /// The first error met, if any.
    fn status(&self) -> Result<()>;
    /// The value of the entry before the current one when the iterator
    /// already holds it decoded (a hint for read-ahead; `None` otherwise).
    fn peek_prev_value(&self) -> Option<&[u8]> {
        None
    }
    /// The value of the entry after the current one when the iterator can
    /// read it without moving (a hint for read-ahead; `None` otherwise).
    fn peek_next_value(&self) -> Option<&[u8]> {
        None
    }
}

/// An iterator over nothing, or one that only reports an error.
pub struct EmptyIterator {
    error: Option<crate::error::Error>,
}

impl EmptyIterator {
    /// An iterator with no entries.
    pub fn new() -> EmptyIterator {
        EmptyIterator { error: None }
    }

    /// An iterator with no entries whose status is `err`.
    pub fn with_error(err: crate::error::Error) -> EmptyIterator {
        EmptyIterator { error: Some(err) }
    }
}

impl Default for EmptyIterator {
    fn default() -> Self {
        EmptyIterator::new()
    }
}

impl InternalIterator for EmptyIterator {
    fn valid(&self) -> bool {
        false
    }
    fn seek_to_first(&mut self) {}
    fn seek_to_last(&mut self) {}
    fn seek(&mut self, _target: &[u8]) {}
    fn next(&mut self) {}
    fn prev(&mut self) {}
    fn key(&self) -> &[u8] {
        &[]
    }
    fn value(&self) -> &[u8] {
        &[]
    }
    fn status(&self) -> Result<()> {
        match &self.error {
            None => Ok(()),
            Some(e) => Err(e.duplicate()),
        }
    }
}

impl InternalIterator for Box<dyn InternalIterator> {
    #[inline]
    fn valid(&self) -> bool {
        (**self).valid()
    }
    fn seek_to_first(&mut self) {
        (**self).seek_to_first()
    }
    fn seek_to_last(&mut self) {
        (**self).seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) {
        (**self).seek(target)
    }
    #[inline]
    fn next(&mut self) {
        (**self).next()
    }
    #[inline]
    fn prev(&mut self) {
        (**self).prev()
    }
    #[inline]
    fn key(&self) -> &[u8] {
        (**self).key()
    }
    #[inline]
    fn value(&self) -> &[u8] {
        (**self).value()
    }
    fn status(&self) -> Result<()> {
        (**self).status()
    }
}
