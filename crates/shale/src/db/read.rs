//! The read path of a point lookup: `Db::get` and its variants. It takes no
//! lock: it loads the published `SuperVersion` (memtable, immutable memtable,
//! version) and the visible sequence number, then looks in the memtable, the
//! immutable memtable, and the table files of the version
//! (`Version::get`, `version/version.rs`), newest first. Iterators are in
//! `iter.rs`.

use std::sync::atomic::Ordering;

use crate::db::core::{Db, DbInner};
use crate::db::snapshot::ReadOptions;
use crate::error::{Error, Result};
use crate::keys::LookupKey;
use crate::memtable::MemGet;
use crate::version::version::TableGet;

impl Db {
    /// The value of `key`, or `None`.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"apple", b"red")?;
    /// assert_eq!(db.get(b"apple")?.as_deref(), Some(&b"red"[..]));
    /// assert_eq!(db.get(b"pear")?, None);
    /// # Ok(()) }
    /// ```
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_with(&ReadOptions::default(), key)
    }

    /// The value of `key` with explicit read options (e.g. a snapshot). A
    /// snapshot taken from another database (or before this one was
    /// reopened) is refused with [`Error::InvalidArgument`].
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"k", b"old")?;
    /// let snapshot = db.snapshot();
    /// db.put(b"k", b"new")?;
    /// let at_snapshot = shale::ReadOptions { snapshot: Some(&snapshot), ..Default::default() };
    /// assert_eq!(db.get_with(&at_snapshot, b"k")?.as_deref(), Some(&b"old"[..]));
    /// # Ok(()) }
    /// ```
    pub fn get_with(&self, opts: &ReadOptions<'_>, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut value = Vec::new();
        Ok(self.inner.get(opts, key, &mut value)?.then_some(value))
    }

    /// Looks `key` up into a caller's buffer, which a loop of lookups can
    /// reuse: true when found, with `value` holding the value (its old
    /// contents replaced); false when absent, leaving `value` as it was.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"k", b"v")?;
    /// let mut value = Vec::new();
    /// assert!(db.get_into(b"k", &mut value)?);
    /// assert_eq!(value, b"v");
    /// assert!(!db.get_into(b"missing", &mut value)?);
    /// # Ok(()) }
    /// ```
    pub fn get_into(&self, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        self.get_into_with(&ReadOptions::default(), key, value)
    }

    /// [`get_into`](Db::get_into) with explicit read options.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"k", b"v")?;
    /// let mut value = Vec::new();
    /// let verified = shale::ReadOptions { verify_checksums: true, ..Default::default() };
    /// assert!(db.get_into_with(&verified, b"k", &mut value)?);
    /// # Ok(()) }
    /// ```
    pub fn get_into_with(
        &self,
        opts: &ReadOptions<'_>,
        key: &[u8],
        value: &mut Vec<u8>,
    ) -> Result<bool> {
        self.inner.get(opts, key, value)
    }
}

impl DbInner {
    /// The sequence number reads with `opts` see: the snapshot's, which must
    /// be one of this database's, or the latest.
    pub(crate) fn read_sequence(&self, opts: &ReadOptions<'_>) -> Result<u64> {
        match opts.snapshot {
            Some(s) if s.is_from(&self.snapshots) => Ok(s.sequence()),
            Some(s) => Err(Error::InvalidArgument(format!(
                "{s:?} was taken from another database (or an earlier opening of this one)"
            ))),
            None => Ok(self.visible_sequence.load(Ordering::Acquire)),
        }
    }

    /// Looks `key` up; when found, `value` holds the value (its old contents
    /// replaced) and the result is true.
    fn get(&self, opts: &ReadOptions<'_>, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        let seq = self.read_sequence(opts)?;
        let sv = self.super_version.load();
        let lk = LookupKey::new(key, seq);
        let from_memtable = |got: MemGet<'_>, value: &mut Vec<u8>| match got {
            MemGet::Value(v) => {
                value.clear();
                value.extend_from_slice(v);
                Some(Ok(true))
            }
            MemGet::Blob(pointer) => Some(
                self.blob_cache
                    .read_value(key, pointer, value)
                    .map(|()| true),
            ),
            MemGet::Deleted => Some(Ok(false)),
            MemGet::NotFound => None,
        };
        if let Some(found) = from_memtable(sv.mem.get(&lk), value) {
            return found;
        }
        if let Some(imm) = &sv.imm {
            if let Some(found) = from_memtable(imm.get(&lk), value) {
                return found;
            }
        }
        let (found, charge) = sv.current.get(
            &self.table_cache,
            opts.verify_checksums,
            opts.fill_cache,
            &lk,
            value,
        )?;
        if let Some(charge) = charge {
            if sv.current.update_stats(charge) {
                // The background thread sees the version's file to compact.
                self.bg_cv.notify_one();
            }
        }
        match found {
            TableGet::Found => Ok(true),
            TableGet::Blob => {
                let pointer = std::mem::take(value);
                self.blob_cache.read_value(key, &pointer, value)?;
                Ok(true)
            }
            TableGet::Deleted | TableGet::Absent => Ok(false),
        }
    }
}
