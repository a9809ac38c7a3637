//! Reading a database in key order: [`Iter`], a Rust iterator over a range
//! of entries from both ends, and [`Cursor`], a positioned cursor with
//! `seek` and `prev`, over user keys and values as of one sequence number,
//! over the memtables and every table of one version, which they keep alive.
//!
//! While they read, cursors sample the keys they pass (about one per
//! megabyte) and report them to the database, which charges a seek to a
//! table file when the sampled key overlaps several files: ranges that are
//! read often but spread over many files get compacted, as LevelDB does.

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Bound, RangeBounds};
use std::sync::{Arc, Weak};

use bytes::Bytes;

use crate::comparator::Comparator;
use crate::db::core::{Db, DbInner, SuperVersion};
use crate::db::snapshot::ReadOptions;
use crate::db::snapshot::Snapshot;
use crate::error::{Error, Result};
use crate::iter::db_iter::{DbIterator, ReadSampleHook, READ_BYTES_PERIOD};
use crate::iter::merging::MergingIterator;
use crate::iter::{EmptyIterator, InternalIterator};
use crate::keys::{InternalKeyComparator, SequenceNumber};
use crate::table_cache::TableCache;
use crate::version::version::Version;

/// A cursor over a database's keys in comparator order, in either direction.
///
/// Made by [`Db::cursor`]. Use it to move back and forth from one position
/// (`seek`, `next`, `prev`); for a plain scan, [`Db::iter`], [`Db::range`]
/// and [`Db::prefix`] return a Rust [`Iterator`].
///
/// A new cursor is not positioned: call a `seek*` method first. `key` and
/// `value` may only be called while `valid()`. When the cursor stops
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
/// let mut it = db.cursor(&ReadOptions::default());
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
pub struct Cursor {
    inner: DbIterator<MergingIterator>,
    // Keeps the memtables and table files this cursor reads alive.
    _pinned: Arc<SuperVersion>,
}

impl Cursor {
    /// A cursor over `merged` as of `sequence`, keeping `pinned` alive.
    /// `sample` is called about every [`READ_BYTES_PERIOD`] bytes read, at
    /// random points drawn from `seed`.
    pub(crate) fn new(
        icmp: InternalKeyComparator,
        merged: MergingIterator,
        sequence: SequenceNumber,
        pinned: Arc<SuperVersion>,
        sample: ReadSampleHook,
        seed: u64,
    ) -> Cursor {
        Cursor {
            inner: DbIterator::new(&icmp, merged, sequence, Some(sample))
                .with_sample_period(READ_BYTES_PERIOD, seed),
            _pinned: pinned,
        }
    }

    /// Resolves blob pointers through `blobs`.
    pub(crate) fn with_blobs(mut self, blobs: Arc<crate::blob::reader::BlobCache>) -> Cursor {
        self.inner = self.inner.with_blobs(blobs);
        self
    }

    /// A cursor that is never valid and whose `status()` is `error`.
    pub(crate) fn failed(
        icmp: InternalKeyComparator,
        pinned: Arc<SuperVersion>,
        error: Error,
    ) -> Cursor {
        let failed = MergingIterator::new(
            icmp.clone(),
            vec![Box::new(EmptyIterator::with_error(error)) as Box<dyn InternalIterator>],
        );
        Cursor {
            inner: DbIterator::new(&icmp, failed, 0, None),
            _pinned: pinned,
        }
    }

    /// True when positioned on an entry.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// let mut it = db.cursor(&shale::ReadOptions::default());
    /// assert!(!it.valid(), "a new cursor is not positioned");
    /// it.seek_to_first();
    /// assert!(!it.valid(), "the database is empty");
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn valid(&self) -> bool {
        self.inner.valid()
    }

    /// Positions at the first key.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"b", b"2")?;
    /// db.put(b"a", b"1")?;
    /// let mut it = db.cursor(&shale::ReadOptions::default());
    /// it.seek_to_first();
    /// assert_eq!(it.key(), b"a");
    /// # Ok(()) }
    /// ```
    pub fn seek_to_first(&mut self) {
        self.inner.seek_to_first()
    }

    /// Positions at the last key.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"b", b"2")?;
    /// db.put(b"a", b"1")?;
    /// let mut it = db.cursor(&shale::ReadOptions::default());
    /// it.seek_to_last();
    /// assert_eq!(it.key(), b"b");
    /// # Ok(()) }
    /// ```
    pub fn seek_to_last(&mut self) {
        self.inner.seek_to_last()
    }

    /// Positions at the first key >= `key`.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"apple", b"1")?;
    /// db.put(b"cherry", b"2")?;
    /// let mut it = db.cursor(&shale::ReadOptions::default());
    /// it.seek(b"banana");
    /// assert_eq!(it.key(), b"cherry");
    /// # Ok(()) }
    /// ```
    pub fn seek(&mut self, key: &[u8]) {
        self.inner.seek(key)
    }

    /// Moves to the next key. Requires `valid()` (does nothing otherwise).
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"a", b"1")?;
    /// db.put(b"b", b"2")?;
    /// let mut it = db.cursor(&shale::ReadOptions::default());
    /// it.seek_to_first();
    /// it.next();
    /// assert_eq!(it.key(), b"b");
    /// it.next();
    /// assert!(!it.valid());
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn next(&mut self) {
        if self.inner.valid() {
            self.inner.next()
        }
    }

    /// Moves to the previous key. Requires `valid()` (does nothing otherwise).
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"a", b"1")?;
    /// db.put(b"b", b"2")?;
    /// let mut it = db.cursor(&shale::ReadOptions::default());
    /// it.seek_to_last();
    /// it.prev();
    /// assert_eq!(it.key(), b"a");
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn prev(&mut self) {
        if self.inner.valid() {
            self.inner.prev()
        }
    }

    /// The current key. Requires `valid()` (returns an empty slice otherwise).
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"k", b"v")?;
    /// let mut it = db.cursor(&shale::ReadOptions::default());
    /// it.seek(b"k");
    /// assert_eq!((it.key(), it.value()), (&b"k"[..], &b"v"[..]));
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn key(&self) -> &[u8] {
        if self.inner.valid() {
            self.inner.key()
        } else {
            &[]
        }
    }

    /// The current value. Requires `valid()` (returns an empty slice otherwise).
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"k", b"v")?;
    /// let mut it = db.cursor(&shale::ReadOptions::default());
    /// it.seek_to_first();
    /// assert_eq!(it.value(), b"v");
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn value(&self) -> &[u8] {
        if self.inner.valid() {
            self.inner.value()
        } else {
            &[]
        }
    }

    /// The error that stopped the cursor, if any.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let options = shale::Options { create_if_missing: true, ..Default::default() };
    /// let db = shale::Db::open(dir.path().join("a"), options.clone())?;
    /// let other = shale::Db::open(dir.path().join("b"), options)?;
    /// let snap = other.snapshot();
    /// // A snapshot of another database cannot be read here.
    /// let opts = shale::ReadOptions { snapshot: Some(&snap), ..Default::default() };
    /// let mut it = db.cursor(&opts);
    /// it.seek_to_first();
    /// assert!(!it.valid());
    /// assert!(matches!(it.status(), Err(shale::Error::InvalidArgument(_))));
    /// # Ok(()) }
    /// ```
    pub fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

impl fmt::Debug for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Cursor");
        d.field("valid", &self.valid());
        if self.valid() {
            d.field("key", &String::from_utf8_lossy(self.key()));
        }
        d.finish_non_exhaustive()
    }
}

/// An iterator over the entries of a database in a range of keys, in key
/// order from the front and in reverse from the back, as of one moment: a
/// snapshot, or the moment it was made. Later writes are not seen.
///
/// Made by [`Db::iter`], [`Db::range`], [`Db::prefix`] (and their `_with`
/// variants taking [`ReadOptions`]), and by the same methods of a
/// [`Snapshot`]. Each item is `Ok((key, value))`; an error (a damaged
/// table, a failed read) is yielded once, as `Err`, and the iterator ends.
/// [`next`](Iterator::next) and [`next_back`](DoubleEndedIterator::next_back)
/// may be mixed: together they yield every entry once and stop where they
/// meet.
///
/// Keys and values are [`Bytes`]: each item is one copy of the key and one
/// of the value out of the table block or memtable that holds them (a cheap
/// handle to share or clone; `Bytes` derefs to `&[u8]` and converts into a
/// `Vec<u8>` without a copy). The iterator keeps alive the memtables and
/// table files it reads, not the database: it may outlive the [`Db`].
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// for (k, v) in [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")] {
///     db.put(k.as_bytes(), v.as_bytes())?;
/// }
/// let mut it = db.iter();
/// assert_eq!(it.next().transpose()?.unwrap().0, "a");
/// assert_eq!(it.next_back().transpose()?.unwrap().0, "d");
/// let middle: Vec<_> = it.map(|item| item.map(|(k, _)| k)).collect::<shale::Result<_>>()?;
/// assert_eq!(middle, ["b", "c"]);
/// # Ok(()) }
/// ```
pub struct Iter {
    /// The state both ends read; `None` when the iterator failed to start.
    view: Option<View>,
    /// Orders keys (the database's comparator) for the bounds and for
    /// where the two ends meet.
    cmp: Option<Arc<dyn Comparator>>,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    /// Only keys starting with these bytes.
    prefix: Option<Vec<u8>>,
    /// The front's cursor, on the entry it yielded last; `None` before the
    /// first `next`.
    front: Option<Cursor>,
    /// The back's cursor, on the entry it yielded last.
    back: Option<Cursor>,
    /// An error to yield before ending.
    error: Option<Error>,
    done: bool,
}

impl Iter {
    /// An iterator over `view` within the bounds, of keys starting with `prefix`.
    fn new(
        view: View,
        cmp: Arc<dyn Comparator>,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        prefix: Option<Vec<u8>>,
    ) -> Iter {
        Iter {
            view: Some(view),
            cmp: Some(cmp),
            lower,
            upper,
            prefix,
            front: None,
            back: None,
            error: None,
            done: false,
        }
    }

    /// An iterator that yields `error` and ends.
    fn failed(error: Error) -> Iter {
        Iter {
            view: None,
            cmp: None,
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
            prefix: None,
            front: None,
            back: None,
            error: Some(error),
            done: false,
        }
    }

    /// Ends the iteration, yielding the cursor's error if it stopped on one.
    fn finish(&mut self, status: Result<()>) -> Option<Result<(Bytes, Bytes)>> {
        self.done = true;
        self.front = None;
        self.back = None;
        status.err().map(Err)
    }

    /// True if `key` is within the upper bound.
    fn below_upper(cmp: &dyn Comparator, upper: &Bound<Vec<u8>>, key: &[u8]) -> bool {
        match upper {
            Bound::Unbounded => true,
            Bound::Included(u) => cmp.compare(key, u) != Ordering::Greater,
            Bound::Excluded(u) => cmp.compare(key, u) == Ordering::Less,
        }
    }

    /// True if `key` is within the lower bound.
    fn above_lower(cmp: &dyn Comparator, lower: &Bound<Vec<u8>>, key: &[u8]) -> bool {
        match lower {
            Bound::Unbounded => true,
            Bound::Included(l) => cmp.compare(key, l) != Ordering::Less,
            Bound::Excluded(l) => cmp.compare(key, l) == Ordering::Greater,
        }
    }
}

impl Iterator for Iter {
    type Item = Result<(Bytes, Bytes)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(e) = self.error.take() {
            return self.finish(Err(e));
        }
        let (Some(view), Some(cmp)) = (&self.view, &self.cmp) else {
            return self.finish(Ok(()));
        };
        let cursor = match &mut self.front {
            Some(cursor) => {
                cursor.next();
                cursor
            }
            None => {
                let mut cursor = view.cursor();
                match &self.lower {
                    Bound::Unbounded => cursor.seek_to_first(),
                    Bound::Included(k) => cursor.seek(k),
                    Bound::Excluded(k) => {
                        cursor.seek(k);
                        if cursor.valid() && cmp.compare(cursor.key(), k) == Ordering::Equal {
                            cursor.next();
                        }
                    }
                }
                self.front.insert(cursor)
            }
        };
        if !cursor.valid() {
            let status = cursor.status();
            return self.finish(status);
        }
        let key = cursor.key();
        let past_back = self
            .back
            .as_ref()
            .is_some_and(|back| cmp.compare(key, back.key()) != Ordering::Less);
        let outside = !Self::below_upper(cmp.as_ref(), &self.upper, key)
            || self.prefix.as_ref().is_some_and(|p| !key.starts_with(p));
        if past_back || outside {
            return self.finish(Ok(()));
        }
        Some(Ok((
            Bytes::copy_from_slice(key),
            Bytes::copy_from_slice(cursor.value()),
        )))
    }
}

impl DoubleEndedIterator for Iter {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(e) = self.error.take() {
            return self.finish(Err(e));
        }
        let (Some(view), Some(cmp)) = (&self.view, &self.cmp) else {
            return self.finish(Ok(()));
        };
        let cursor = match &mut self.back {
            Some(cursor) => {
                cursor.prev();
                cursor
            }
            None => {
                let mut cursor = view.cursor();
                match &self.upper {
                    Bound::Unbounded => cursor.seek_to_last(),
                    Bound::Included(k) | Bound::Excluded(k) => {
                        cursor.seek(k);
                        if cursor.valid() {
                            let c = cmp.compare(cursor.key(), k);
                            let inclusive = matches!(self.upper, Bound::Included(_));
                            if c == Ordering::Greater || (c == Ordering::Equal && !inclusive) {
                                cursor.prev();
                            }
                        } else if cursor.status().is_ok() {
                            // Every key is below the bound.
                            cursor.seek_to_last();
                        }
                    }
                }
                self.back.insert(cursor)
            }
        };
        if !cursor.valid() {
            let status = cursor.status();
            return self.finish(status);
        }
        let key = cursor.key();
        let past_front = self
            .front
            .as_ref()
            .is_some_and(|front| cmp.compare(key, front.key()) != Ordering::Greater);
        let outside = !Self::above_lower(cmp.as_ref(), &self.lower, key)
            || self.prefix.as_ref().is_some_and(|p| !key.starts_with(p));
        if past_front || outside {
            return self.finish(Ok(()));
        }
        Some(Ok((
            Bytes::copy_from_slice(key),
            Bytes::copy_from_slice(cursor.value()),
        )))
    }
}

impl std::iter::FusedIterator for Iter {}

impl fmt::Debug for Iter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |b: &Bound<Vec<u8>>| match b {
            Bound::Unbounded => Bound::Unbounded,
            Bound::Included(k) => Bound::Included(String::from_utf8_lossy(k).into_owned()),
            Bound::Excluded(k) => Bound::Excluded(String::from_utf8_lossy(k).into_owned()),
        };
        f.debug_struct("Iter")
            .field("lower", &show(&self.lower))
            .field("upper", &show(&self.upper))
            .field(
                "prefix",
                &self
                    .prefix
                    .as_ref()
                    .map(|p| String::from_utf8_lossy(p).into_owned()),
            )
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

/// The bounds of `range` as owned keys.
fn owned_bounds<K: AsRef<[u8]>>(range: &impl RangeBounds<K>) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let own = |b: Bound<&K>| b.map(|k| k.as_ref().to_vec());
    (own(range.start_bound()), own(range.end_bound()))
}

/// The smallest key after every key starting with `prefix`, in bytewise
/// order: the prefix with its last byte that is not 0xff incremented and
/// what follows dropped. `None` when there is none (the prefix is empty or
/// all 0xff).
fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let last = prefix.iter().rposition(|&b| b != 0xff)?;
    let mut next = prefix[..=last].to_vec();
    next[last] += 1;
    Some(next)
}

/// The bounds of the keys starting with `prefix`.
fn prefix_bounds(prefix: &[u8]) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let upper = match prefix_successor(prefix) {
        Some(next) => Bound::Excluded(next),
        None => Bound::Unbounded,
    };
    (Bound::Included(prefix.to_vec()), upper)
}

/// Iteration. Keys compare with the database's comparator; a range whose
/// start is after its end is empty.
impl Db {
    /// A cursor over the database (as of `opts.snapshot`, or now), for moving
    /// back and forth with `seek`, `next` and `prev`. With a snapshot of
    /// another database it is never valid and its `status()` is
    /// [`Error::InvalidArgument`]. For a scan, [`iter`](Db::iter) and
    /// [`range`](Db::range) are simpler.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"a", b"1")?;
    /// db.put(b"b", b"2")?;
    /// let mut it = db.cursor(&shale::ReadOptions::default());
    /// it.seek_to_last();
    /// assert_eq!(it.key(), b"b");
    /// it.prev();
    /// assert_eq!(it.key(), b"a");
    /// it.prev();
    /// assert!(!it.valid());
    /// it.status()?;
    /// # Ok(()) }
    /// ```
    pub fn cursor(&self, opts: &ReadOptions<'_>) -> Cursor {
        self.inner.new_iterator(opts)
    }

    /// Every entry, in key order (and in reverse with `.rev()`).
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"b", b"2")?;
    /// db.put(b"a", b"1")?;
    /// for item in db.iter() {
    ///     let (key, value) = item?;
    ///     println!("{key:?} = {value:?}");
    /// }
    /// let keys: Vec<_> = db.iter().rev().map(|item| item.map(|(k, _)| k)).collect::<shale::Result<_>>()?;
    /// assert_eq!(keys, ["b", "a"]);
    /// # Ok(()) }
    /// ```
    pub fn iter(&self) -> Iter {
        self.iter_with(&ReadOptions::default())
    }

    /// Every entry, read with `opts` (as of `opts.snapshot`, if any).
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"a", b"1")?;
    /// // A scan that checks checksums and leaves the block cache alone.
    /// let opts = shale::ReadOptions { verify_checksums: true, fill_cache: false, ..Default::default() };
    /// assert_eq!(db.iter_with(&opts).count(), 1);
    /// # Ok(()) }
    /// ```
    pub fn iter_with(&self, opts: &ReadOptions<'_>) -> Iter {
        self.read(opts, (Bound::Unbounded, Bound::Unbounded), None)
    }

    /// The entries whose keys are in `range`: any range of keys that are
    /// byte strings (`&[u8]`, `Vec<u8>`, `&str`, `[u8; N]`...), with
    /// included, excluded or unbounded ends.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// for k in ["a", "b", "c", "d"] {
    ///     db.put(k.as_bytes(), b"")?;
    /// }
    /// let keys = |it: shale::Iter| -> shale::Result<Vec<String>> {
    ///     it.map(|item| Ok(String::from_utf8_lossy(&item?.0).into_owned())).collect()
    /// };
    /// assert_eq!(keys(db.range("b".."d"))?, ["b", "c"]);
    /// assert_eq!(keys(db.range("b"..="d"))?, ["b", "c", "d"]);
    /// assert_eq!(keys(db.range(.."b"))?, ["a"]);
    /// assert_eq!(keys(db.range(b"c".to_vec()..))?, ["c", "d"]);
    /// # Ok(()) }
    /// ```
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        self.range_with(&ReadOptions::default(), range)
    }

    /// The entries whose keys are in `range`, read with `opts`.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"a", b"old")?;
    /// let snap = db.snapshot();
    /// db.put(b"a", b"new")?;
    /// let then = shale::ReadOptions { snapshot: Some(&snap), ..Default::default() };
    /// let (_, value) = db.range_with(&then, "a"..="a").next().unwrap()?;
    /// assert_eq!(value, "old");
    /// # Ok(()) }
    /// ```
    pub fn range_with<K: AsRef<[u8]>, R: RangeBounds<K>>(
        &self,
        opts: &ReadOptions<'_>,
        range: R,
    ) -> Iter {
        self.read(opts, owned_bounds(&range), None)
    }

    /// The entries whose keys start with `prefix` (every entry for an empty
    /// prefix). Needs a comparator under which the keys starting with a
    /// prefix follow it and one another, as the default bytewise order does.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// for k in ["user:1", "user:2", "users", "video:1"] {
    ///     db.put(k.as_bytes(), b"")?;
    /// }
    /// assert_eq!(db.prefix(b"user:").count(), 2);
    /// assert_eq!(db.prefix(b"user").rev().next().unwrap()?.0, "users");
    /// # Ok(()) }
    /// ```
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> Iter {
        self.prefix_with(&ReadOptions::default(), prefix)
    }

    /// The entries whose keys start with `prefix`, read with `opts`.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"k1", b"")?;
    /// let opts = shale::ReadOptions { fill_cache: false, ..Default::default() };
    /// assert_eq!(db.prefix_with(&opts, "k").count(), 1);
    /// # Ok(()) }
    /// ```
    pub fn prefix_with(&self, opts: &ReadOptions<'_>, prefix: impl AsRef<[u8]>) -> Iter {
        let prefix = prefix.as_ref();
        self.read(opts, prefix_bounds(prefix), Some(prefix.to_vec()))
    }

    fn read(
        &self,
        opts: &ReadOptions<'_>,
        bounds: (Bound<Vec<u8>>, Bound<Vec<u8>>),
        prefix: Option<Vec<u8>>,
    ) -> Iter {
        read(&self.inner, opts, bounds, prefix)
    }
}

/// An iterator over `db` read with `opts`, within `lower..upper`, of the
/// keys starting with `prefix`.
fn read(
    db: &Arc<DbInner>,
    opts: &ReadOptions<'_>,
    (lower, upper): (Bound<Vec<u8>>, Bound<Vec<u8>>),
    prefix: Option<Vec<u8>>,
) -> Iter {
    match db.view(opts) {
        Ok(view) => Iter::new(view, db.options.comparator.clone(), lower, upper, prefix),
        Err(e) => Iter::failed(e),
    }
}

/// Reading through a snapshot: the same iterators as [`Db`]'s, as of the
/// snapshot. A snapshot does not keep its database open; once the [`Db`] is
/// dropped, these iterators yield one [`Error::InvalidArgument`].
impl Snapshot {
    /// Every entry as of the snapshot.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"a", b"1")?;
    /// let snap = db.snapshot();
    /// db.put(b"b", b"2")?;
    /// assert_eq!(snap.iter().count(), 1);
    /// assert_eq!(db.iter().count(), 2);
    /// # Ok(()) }
    /// ```
    pub fn iter(&self) -> Iter {
        self.read((Bound::Unbounded, Bound::Unbounded), None)
    }

    /// The entries in `range` as of the snapshot (see [`Db::range`]).
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"a", b"1")?;
    /// let snap = db.snapshot();
    /// db.delete(b"a")?;
    /// assert_eq!(snap.range("a"..).next().unwrap()?.1, "1");
    /// assert!(db.range("a"..).next().is_none());
    /// # Ok(()) }
    /// ```
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        self.read(owned_bounds(&range), None)
    }

    /// The entries whose keys start with `prefix` as of the snapshot (see
    /// [`Db::prefix`]).
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"k1", b"")?;
    /// let snap = db.snapshot();
    /// db.put(b"k2", b"")?;
    /// assert_eq!(snap.prefix("k").count(), 1);
    /// # Ok(()) }
    /// ```
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> Iter {
        let prefix = prefix.as_ref();
        self.read(prefix_bounds(prefix), Some(prefix.to_vec()))
    }

    fn read(&self, bounds: (Bound<Vec<u8>>, Bound<Vec<u8>>), prefix: Option<Vec<u8>>) -> Iter {
        let Some(db) = self.db.upgrade() else {
            return Iter::failed(Error::InvalidArgument(format!(
                "{self:?}: its database is closed"
            )));
        };
        let opts = ReadOptions {
            snapshot: Some(self),
            ..Default::default()
        };
        read(&db, &opts, bounds, prefix)
    }
}

impl DbInner {
    pub(crate) fn new_iterator(self: &Arc<Self>, opts: &ReadOptions<'_>) -> Cursor {
        match self.view(opts) {
            Ok(view) => view.cursor(),
            Err(e) => Cursor::failed(self.icmp.clone(), self.super_version.load_full(), e),
        }
    }

    /// The state iterators read as of `opts`: the published memtables and
    /// files, and the sequence number of `opts.snapshot` (or the last write).
    pub(crate) fn view(self: &Arc<Self>, opts: &ReadOptions<'_>) -> Result<View> {
        let sv = self.super_version.load_full();
        let sequence = self.read_sequence(opts)?;
        Ok(View {
            db: Arc::downgrade(self),
            icmp: self.icmp.clone(),
            table_cache: self.table_cache.clone(),
            blobs: self.blob_cache.clone(),
            sv,
            sequence,
            verify_checksums: opts.verify_checksums,
            fill_cache: opts.fill_cache,
            seed: self
                .iterators_created
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        })
    }
}

/// One consistent state of a database that cursors read: each cursor made
/// from it sees the same entries.
pub(crate) struct View {
    db: Weak<DbInner>,
    icmp: InternalKeyComparator,
    table_cache: Arc<TableCache>,
    blobs: Arc<crate::blob::reader::BlobCache>,
    sv: Arc<SuperVersion>,
    sequence: SequenceNumber,
    verify_checksums: bool,
    fill_cache: bool,
    seed: u64,
}

impl View {
    /// A new, unpositioned cursor over the view.
    pub(crate) fn cursor(&self) -> Cursor {
        let sv = &self.sv;
        let mut children: Vec<Box<dyn crate::iter::InternalIterator>> =
            vec![Box::new(sv.mem.iter())];
        if let Some(imm) = &sv.imm {
            children.push(Box::new(imm.iter()));
        }
        sv.current.add_iterators(
            &self.table_cache,
            self.verify_checksums,
            self.fill_cache,
            &mut children,
        );
        let merged = crate::iter::merging::MergingIterator::new(self.icmp.clone(), children);
        let hook = read_sample_hook(self.db.clone(), sv.current.clone());
        Cursor::new(
            self.icmp.clone(),
            merged,
            self.sequence,
            sv.clone(),
            hook,
            self.seed,
        )
        .with_blobs(self.blobs.clone())
    }
}

/// The hook an iterator calls about once per megabyte it reads: charges a
/// seek to the first of the files of `version` (the iterator's) that may
/// hold the sampled key when there are several, and wakes the background
/// thread when that makes a compaction due. Takes no database lock and does
/// no I/O; holds the database weakly, so an iterator outliving its `Db` does
/// not keep it open.
fn read_sample_hook(db: Weak<DbInner>, version: Arc<Version>) -> ReadSampleHook {
    Box::new(move |ikey: &[u8]| {
        if version.record_read_sample(ikey) {
            if let Some(db) = db.upgrade() {
                db.bg_cv.notify_one();
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::prefix_successor;

    #[test]
    fn prefix_successor_increments_the_last_byte_below_0xff() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(b"a\xff\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"\xff\xff"), None);
        assert_eq!(prefix_successor(b""), None);
    }
}
