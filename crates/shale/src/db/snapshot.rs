//! Snapshots: a pinned sequence number. Reads through a snapshot see the
//! database as it was when the snapshot was taken. Compactions keep every
//! entry a live snapshot can see; dropping the snapshot releases it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use crate::db::core::{Db, DbInner, SnapshotList};
use crate::keys::SequenceNumber;

impl SnapshotList {
    /// Registers a snapshot at `seq` of the database `db`.
    pub(crate) fn acquire(self: &Arc<Self>, seq: SequenceNumber, db: Weak<DbInner>) -> Snapshot {
        *self.live.lock().entry(seq).or_insert(0) += 1;
        Snapshot {
            sequence: seq,
            list: self.clone(),
            db,
        }
    }
}

impl Db {
    /// A snapshot of the current state, released when dropped.
    ///
    /// ```
    /// use shale::ReadOptions;
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"k", b"old")?;
    /// let snap = db.snapshot();
    /// db.put(b"k", b"new")?;
    /// let then = ReadOptions { snapshot: Some(&snap), ..Default::default() };
    /// assert_eq!(db.get_with(&then, b"k")?.as_deref(), Some(&b"old"[..]));
    /// assert_eq!(db.get(b"k")?.as_deref(), Some(&b"new"[..]));
    /// # Ok(()) }
    /// ```
    pub fn snapshot(&self) -> Snapshot {
        self.inner.snapshots.acquire(
            self.inner.visible_sequence.load(Ordering::Acquire),
            Arc::downgrade(&self.inner),
        )
    }
}

/// A consistent, read-only view of a database, released when dropped.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"k", b"old")?;
/// let snap = db.snapshot();
/// db.put(b"k", b"new")?;
/// let at_snap = shale::ReadOptions { snapshot: Some(&snap), ..Default::default() };
/// assert_eq!(db.get_with(&at_snap, b"k")?.as_deref(), Some(&b"old"[..]));
/// # Ok(()) }
/// ```
pub struct Snapshot {
    sequence: SequenceNumber,
    list: Arc<SnapshotList>,
    /// The database, for reading through the snapshot (`Snapshot::iter`
    /// and friends); weak, so that a snapshot does not keep it open.
    pub(crate) db: Weak<DbInner>,
}

impl Snapshot {
    /// The sequence number this snapshot reads at.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"a", b"1")?;
    /// db.put(b"b", b"2")?;
    /// let snap = db.snapshot();
    /// assert_eq!(snap.sequence(), 2);
    /// db.put(b"c", b"3")?;
    /// assert!(snap.sequence() < db.stats().last_sequence);
    /// # Ok(()) }
    /// ```
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// True if the snapshot was taken from the database owning `list`.
    pub(crate) fn is_from(&self, list: &Arc<SnapshotList>) -> bool {
        Arc::ptr_eq(&self.list, list)
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.list.release(self.sequence);
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Snapshot({})", self.sequence)
    }
}

/// Options for reads.
///
/// ```
/// let opts = shale::ReadOptions { verify_checksums: true, ..Default::default() };
/// assert!(opts.fill_cache);
/// ```
#[derive(Debug, Clone)]
pub struct ReadOptions<'a> {
    /// Check the checksum of every block read. Default: false.
    pub verify_checksums: bool,
    /// Keep blocks read by this call in the block cache. Default: true.
    pub fill_cache: bool,
    /// Read as of this snapshot instead of the latest state.
    pub snapshot: Option<&'a Snapshot>,
}

impl Default for ReadOptions<'_> {
    /// No checksum verification, fill the cache, latest state.
    fn default() -> Self {
        ReadOptions {
            verify_checksums: false,
            fill_cache: true,
            snapshot: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oldest_tracks_live_snapshots() {
        let list = Arc::new(SnapshotList::default());
        assert_eq!(list.oldest(), None);
        let a = list.acquire(5, Weak::new());
        let b = list.acquire(3, Weak::new());
        let c = list.acquire(3, Weak::new());
        assert_eq!(list.oldest(), Some(3));
        drop(b);
        assert_eq!(list.oldest(), Some(3));
        drop(c);
        assert_eq!(list.oldest(), Some(5));
        drop(a);
        assert_eq!(list.oldest(), None);
    }
}
