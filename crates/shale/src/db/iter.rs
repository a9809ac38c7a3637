//! The public iterator: user keys and values as of one sequence number, over
//! the memtables and every table of one version, which it keeps alive.
//!
//! While it reads, it samples the keys it passes (about one per megabyte) and
//! reports them to the database, which charges a seek to a table file when
//! the sampled key overlaps several files: ranges that are read often but
//! spread over many files get compacted, as LevelDB does.

use std::sync::Arc;

use crate::db::core::SuperVersion;
use crate::db::db_iter::{DbIterator, ReadSampleHook, READ_BYTES_PERIOD};
use crate::db::merging_iter::MergingIterator;
use crate::error::Result;
use crate::iterator::InternalIterator;
use crate::keys::{InternalKeyComparator, SequenceNumber};

/// A cursor over a database's keys in comparator order, in either direction.
///
/// A new iterator is not positioned: call a `seek*` method first. `key` and
/// `value` may only be called while `valid()`. When the iterator stops
/// because of an error, `valid()` is false and `status()` returns it.
///
/// ```
/// use shale::ReadOptions;
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// for k in ["apple", "banana", "cherry", "date"] {
///     db.put(k.as_bytes(), b"fruit")?;
/// }
/// let mut it = db.iter(&ReadOptions::default());
/// // Everything from "b" on, forward...
/// it.seek(b"b");
/// let mut forward = Vec::new();
/// while it.valid() {
///     forward.push(String::from_utf8_lossy(it.key()).into_owned());
///     it.next();
/// }
/// assert_eq!(forward, ["banana", "cherry", "date"]);
/// // ...and the whole range backward.
/// it.seek_to_last();
/// let mut backward = Vec::new();
/// while it.valid() {
///     backward.push(String::from_utf8_lossy(it.key()).into_owned());
///     it.prev();
/// }
/// assert_eq!(backward, ["date", "cherry", "banana", "apple"]);
/// it.status()?;
/// # Ok(()) }
/// ```
pub struct DbIter {
    inner: DbIterator<MergingIterator>,
    // Keeps the memtables and table files this iterator reads alive.
    _pinned: Arc<SuperVersion>,
}

impl DbIter {
    /// An iterator over `merged` as of `sequence`, keeping `pinned` alive.
    /// `sample` is called about every [`READ_BYTES_PERIOD`] bytes read, at
    /// random points drawn from `seed`.
    pub(crate) fn new(
        icmp: InternalKeyComparator,
        merged: MergingIterator,
        sequence: SequenceNumber,
        pinned: Arc<SuperVersion>,
        sample: ReadSampleHook,
        seed: u64,
    ) -> DbIter {
        DbIter {
            inner: DbIterator::new(&icmp, merged, sequence, Some(sample))
                .with_sample_period(READ_BYTES_PERIOD, seed),
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
