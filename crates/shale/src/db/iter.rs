//! The public iterator: user keys and values as of one sequence number, over
//! the memtables and every table of one version, which it keeps alive.

use std::sync::Arc;

use crate::db::core::SuperVersion;
use crate::db::db_iter::DbIterator;
use crate::error::Result;
use crate::iterator::InternalIterator;
use crate::keys::{InternalKeyComparator, SequenceNumber};

/// A cursor over a database's keys in comparator order, in either direction.
///
/// A new iterator is not positioned: call a `seek*` method first. `key` and
/// `value` may only be called while `valid()`. When the iterator stops
/// because of an error, `valid()` is false and `status()` returns it.
pub struct DbIter {
    inner: DbIterator<Box<dyn InternalIterator>>,
    // Keeps the memtables and table files this iterator reads alive.
    _pinned: Arc<SuperVersion>,
}

impl DbIter {
    pub(crate) fn new(
        icmp: InternalKeyComparator,
        merged: Box<dyn InternalIterator>,
        sequence: SequenceNumber,
        pinned: Arc<SuperVersion>,
    ) -> DbIter {
        DbIter {
            inner: DbIterator::new(&icmp, merged, sequence, None),
            _pinned: pinned,
        }
    }

    /// True when positioned on an entry.
    #[inline]
    pub fn valid(&self) -> bool {
        self.inner.valid()
    }

    /// Positions at the first key.
    pub fn seek_to_first(&mut self) {
        self.inner.seek_to_first()
    }

    /// Positions at the last key.
    pub fn seek_to_last(&mut self) {
        self.inner.seek_to_last()
    }

    /// Positions at the first key >= `key`.
    pub fn seek(&mut self, key: &[u8]) {
        self.inner.seek(key)
    }

    /// Moves to the next key. Requires `valid()`.
    #[inline]
    pub fn next(&mut self) {
        if self.inner.valid() {
            self.inner.next()
        }
    }

    /// Moves to the previous key. Requires `valid()`.
    #[inline]
    pub fn prev(&mut self) {
        if self.inner.valid() {
            self.inner.prev()
        }
    }

    /// The current key. Requires `valid()` (returns an empty slice otherwise).
    #[inline]
    pub fn key(&self) -> &[u8] {
        if self.inner.valid() {
            self.inner.key()
        } else {
            &[]
        }
    }

    /// The current value. Requires `valid()` (returns an empty slice otherwise).
    #[inline]
    pub fn value(&self) -> &[u8] {
        if self.inner.valid() {
            self.inner.value()
        } else {
            &[]
        }
    }

    /// The error that stopped the iterator, if any.
    pub fn status(&self) -> Result<()> {
        self.inner.status()
    }
}
