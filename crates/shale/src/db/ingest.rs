//! Bulk ingestion: sorted entries written straight into table files and
//! installed with one version edit ([`Db::bulk_loader`], [`Db::ingest_sorted`]).
//!
//! The loader writes its tables in the database directory as they fill,
//! with the database's own table builder and options, under file numbers
//! kept in `pending_outputs` so that no cleanup deletes them. Every entry
//! carries one sequence number, taken when the loader starts: the keys are
//! strictly increasing, so no two entries share an internal key.
//!
//! On a machine with more than one core the tables are written by threads
//! of their own (`TableSet`): the caller's thread copies the entries into
//! chunks of about a table's worth of input (sized from what the chunks
//! before took in tables) and each chunk is written, compressed and synced
//! by a thread while the next fills, at most `MAX_BUILD_THREADS` at a time.
//! A chunk's tables join the list in the chunks' order, which is the keys'
//! order; the tables do not overlap, and each is placed by its own keys, so
//! their file numbers need not follow the keys.
//!
//! `finish` takes the write path as a leader does (writers wait meanwhile),
//! then:
//!
//! 1. empties the memtables (a switch and a flush, when they hold anything),
//!    so that the edit can name the current log as the oldest one needed:
//!    recovery then never replays a log written before the ingestion
//!    followed by one written after it, whose sequence numbers would not
//!    run on (the ingestion's number is in no log);
//! 2. checks that no write took a sequence number since the loader started;
//!    if one did, the tables are rewritten under the next free number (a
//!    snapshot taken meanwhile may hold any number up to the last write's,
//!    and must not see the ingested entries);
//! 3. waits for the background thread to stop between steps and keeps it
//!    there, so that no flush or compaction changes the levels while the
//!    tables are placed;
//! 4. places each table at the deepest level that no file of it or of any
//!    level above it overlaps, so that every older entry for its keys lies
//!    deeper; when level 0 overlaps, the table goes to level 0 under a
//!    fresh (renamed) file number, since lookups search level 0 newest
//!    number first;
//! 5. records the tables, the new last sequence and the current log in one
//!    version edit (the directory synced, then the MANIFEST record synced),
//!    installs the new version and publishes the sequence number; the
//!    tables count in the level statistics (`leveldb.stats`, `Db::stats`)
//!    as bytes written into their levels.
//!
//! A crash before step 5's MANIFEST record is durable leaves table files no
//! version names, which the cleanup after the next open deletes; after it,
//! the whole ingestion is there. A failure to write the edit is sticky, as a
//! failed flush is: the record may be on disk, so the files are kept.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use parking_lot::MutexGuard;

use crate::batch::check_update;
use crate::comparator::Comparator;
use crate::db::core::{panic_message, Db, DbInner, State};
use crate::error::{Error, Result};
use crate::filename::table_file_name;
use crate::keys::{
    append_internal_key, parse_internal_key, InternalKey, SequenceNumber, ValueType,
    MAX_SEQUENCE_NUMBER,
};
use crate::sstable::TableBuilder;
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::version::{some_file_overlaps_range, Version};
use crate::version::NUM_LEVELS;

/// At most this many threads write a load's tables by default.
const MAX_BUILD_THREADS: usize = 4;

/// At most this many threads write a load's tables when asked for more.
const MOST_BUILD_THREADS: usize = 64;

/// The smallest chunk of entries handed to a table-building thread.
const MIN_CHUNK_BYTES: usize = 64 << 10;

/// The largest: a thread holds one chunk, so memory stays bounded whatever
/// the table size and however well the entries compress.
const MAX_CHUNK_BYTES: usize = 64 << 20;

/// The threads a loader uses by default: the machine's cores, at most
/// `MAX_BUILD_THREADS` (asked once: it may read the cgroup's limits).
fn default_build_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_BUILD_THREADS)
    })
}

impl Db {
    /// Starts a bulk load: sorted entries written straight into table files,
    /// installed all at once by [`BulkLoader::finish`]: no log, no memtable,
    /// and no compaction to move them down the levels, as writes need.
    ///
    /// Keys must come in strictly increasing order under the database's
    /// comparator. The loaded entries shadow older values of the same keys,
    /// deletions included, and are invisible to snapshots and iterators
    /// taken before `finish`. See [`BulkLoader`].
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"key0001", b"old")?;
    /// let mut loader = db.bulk_loader()?;
    /// for i in 0..1000u32 {
    ///     loader.add(format!("key{i:04}").as_bytes(), b"loaded")?;
    /// }
    /// let done = loader.finish()?;
    /// assert_eq!(done.entries, 1000);
    /// assert_eq!(db.get(b"key0001")?.as_deref(), Some(&b"loaded"[..]));
    /// # Ok(()) }
    /// ```
    pub fn bulk_loader(&self) -> Result<BulkLoader<'_>> {
        BulkLoader::new(&self.inner)
    }

    /// Loads `entries`, which must be sorted by key (strictly increasing
    /// under the database's comparator), straight into table files: a
    /// [`BulkLoader`] fed from an iterator. On any error, an out-of-order
    /// key among them, nothing is installed.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// let entries = (0..100u32).map(|i| (format!("k{i:03}"), i.to_string()));
    /// db.ingest_sorted(entries)?;
    /// assert_eq!(db.get(b"k042")?.as_deref(), Some(&b"42"[..]));
    ///
    /// // Out of order: refused, and nothing of it is loaded.
    /// let err = db.ingest_sorted([("x", "1"), ("w", "2")]).unwrap_err();
    /// assert!(matches!(err, shale::Error::InvalidArgument(_)), "{err}");
    /// assert_eq!(db.get(b"x")?, None);
    /// # Ok(()) }
    /// ```
    pub fn ingest_sorted<I, K, V>(&self, entries: I) -> Result<IngestStats>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let mut loader = self.bulk_loader()?;
        for (key, value) in entries {
            loader.add(key.as_ref(), value.as_ref())?;
        }
        loader.finish()
    }
}

/// A bulk load in progress, from [`Db::bulk_loader`]: entries added in
/// strictly increasing key order go straight into table files, installed
/// into the database all at once by [`finish`](BulkLoader::finish).
///
/// Why this shape: RocksDB splits the job in two, an `SstFileWriter` that
/// writes a file anywhere and an `IngestExternalFile` that checks it against
/// the database, then copies or links it in and stamps a sequence number
/// into it. A Shale table holds LevelDB's format, which has no place for a
/// stamped sequence number, so each entry's number must be known when it is
/// written; and a loader that belongs to the database builds its tables in
/// place, with the database's own options (block size, compression, filter
/// policy, `max_file_size`, at which tables are cut), and protects them from
/// the database's cleanup until they are installed. Memory stays bounded:
/// a table is written as it fills, and with several threads
/// ([`with_threads`](BulkLoader::with_threads)) at most one chunk of about a
/// table's input per thread, and the one filling, are held.
///
/// - [`add`](BulkLoader::add) refuses a key that does not come after the
///   one before it with [`Error::InvalidArgument`] naming both keys and the
///   entry's position (counted from 1); the refused entry is not added, and
///   the loader may go on or be finished with what it has.
/// - Dropping the loader without `finish` abandons it: its files are
///   removed and nothing is installed.
/// - Writes may go on while a load runs, from any thread. But every write
///   takes a sequence number, and when one was taken after the loader
///   started, `finish` must rewrite the tables under a newer number before
///   installing them (it reports it in [`IngestStats::rewritten`]). Writes
///   wait while `finish` installs the tables (and while it rewrites them).
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// let mut loader = db.bulk_loader()?;
/// loader.add(b"apple", b"red")?;
/// loader.add(b"cherry", b"dark red")?;
/// let err = loader.add(b"banana", b"yellow").unwrap_err();
/// assert!(err.to_string().contains("entry 3"), "{err}");
/// assert_eq!(loader.entries(), 2);
///
/// let snap = db.snapshot();
/// let done = loader.finish()?;
/// // The tables went to the deepest level, the database being empty.
/// assert_eq!(done.tables.len(), 1);
/// assert_eq!(done.tables[0].level, 6);
/// assert_eq!(db.get(b"cherry")?.as_deref(), Some(&b"dark red"[..]));
/// // A snapshot taken before does not see them.
/// let then = shale::ReadOptions { snapshot: Some(&snap), ..Default::default() };
/// assert_eq!(db.get_with(&then, b"cherry")?, None);
/// # Ok(()) }
/// ```
pub struct BulkLoader<'a> {
    tables: TableSet<'a>,
    ucmp: Arc<dyn Comparator>,
    entries: u64,
    /// The error that made an `add` fail midway (the table being written is
    /// unusable): every later call returns it.
    failed: Option<Error>,
}

/// What [`BulkLoader::finish`] installed.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// let done = db.ingest_sorted([("a", "1"), ("b", "2")])?;
/// assert_eq!(done.entries, 2);
/// assert_eq!(db.stats().last_sequence, done.sequence);
/// assert!(!done.rewritten);
/// let bytes: u64 = done.tables.iter().map(|t| t.bytes).sum();
/// assert!(bytes > 0);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IngestStats {
    /// Entries installed.
    pub entries: u64,
    /// The sequence number every installed entry carries (0 when there were
    /// none): the database's last sequence number once installed.
    pub sequence: u64,
    /// The table files installed, in key order.
    pub tables: Vec<IngestedTable>,
    /// Writes during the load took sequence numbers after the loader's, so
    /// the tables were rewritten under a newer one before being installed.
    pub rewritten: bool,
}

/// One table file a bulk load installed, in [`IngestStats::tables`].
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// let done = db.ingest_sorted([("a", "1")])?;
/// let table = done.tables[0];
/// let at_level = format!("leveldb.num-files-at-level{}", table.level);
/// assert_eq!(db.property(&at_level).as_deref(), Some("1"));
/// assert!(dir.path().join(format!("{:06}.ldb", table.number)).exists());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct IngestedTable {
    /// The level it was placed at.
    pub level: usize,
    /// Its file number (the file is `NNNNNN.ldb`).
    pub number: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

impl<'a> BulkLoader<'a> {
    fn new(inner: &'a Arc<DbInner>) -> Result<BulkLoader<'a>> {
        let sequence = {
            let st = inner.state.lock();
            if let Some(e) = &st.bg_error {
                return Err(e.duplicate());
            }
            // The next number a write group would be given.
            st.last_allocated + 1
        };
        if sequence > MAX_SEQUENCE_NUMBER {
            return Err(Error::InvalidArgument(format!(
                "{}: sequence numbers exhausted (last used {})",
                inner.dir.display(),
                sequence - 1
            )));
        }
        Ok(BulkLoader {
            tables: TableSet::new(inner, sequence),
            ucmp: inner.icmp.user_comparator().clone(),
            entries: 0,
            failed: None,
        })
    }

    /// Adds an entry. `key` must sort after the key added before it (under
    /// the database's comparator), and the key and value must be no longer
    /// than [`put`](Db::put) accepts; otherwise the entry is refused with
    /// [`Error::InvalidArgument`] and the loader stays as it was. A failure
    /// to write a table (an I/O error, or an entry too large for a table)
    /// fails this call and every later one; with several threads
    /// ([`with_threads`](BulkLoader::with_threads)) the call that finds it,
    /// which may come after the entry's.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// let mut loader = db.bulk_loader()?;
    /// loader.add(b"k1", b"v")?;
    /// let err = loader.add(b"k1", b"again").unwrap_err();
    /// assert!(err.to_string().contains("repeats"), "{err}");
    /// loader.add(b"k2", b"v")?;
    /// assert_eq!(loader.finish()?.entries, 2);
    /// # Ok(()) }
    /// ```
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.duplicate());
        }
        let position = self.entries + 1;
        check_update(key.len(), value.len()).map_err(|e| match e {
            Error::InvalidArgument(why) => {
                Error::InvalidArgument(format!("bulk load, entry {position}: {why}"))
            }
            other => other,
        })?;
        if self.entries > 0 {
            let previous = &self.tables.last_key;
            match self.ucmp.compare(key, previous) {
                Ordering::Greater => {}
                Ordering::Equal => {
                    return Err(Error::InvalidArgument(format!(
                        "bulk load, entry {position}: key '{}' repeats the key of the entry \
                         before it (keys must be strictly increasing)",
                        key.escape_ascii()
                    )))
                }
                Ordering::Less => {
                    return Err(Error::InvalidArgument(format!(
                        "bulk load, entry {position}: key '{}' sorts before the previous key \
                         '{}' under the comparator {} (keys must be strictly increasing)",
                        key.escape_ascii(),
                        previous.escape_ascii(),
                        self.ucmp.name()
                    )))
                }
            }
        }
        if let Err(e) = self.tables.add(key, value) {
            self.failed = Some(e.duplicate());
            return Err(e);
        }
        self.entries += 1;
        Ok(())
    }

    /// Writes the tables on `threads` threads from the next entry on: with
    /// one, the calling thread writes them as entries are added; with more,
    /// entries are copied into chunks of about a table's worth, each written
    /// by a thread of its own, at most `threads` at a time (0 counts as 1).
    /// The default is the machine's parallelism, at most 4; at most 64 are
    /// used. The tables hold the same entries either way, cut at the
    /// chunks' ends too. Memory: one chunk per thread and the one filling,
    /// each about a table's input (at most 64 MiB).
    ///
    /// With more than one thread, a failure to write a chunk's tables (an
    /// I/O error, an entry too large for a table) is returned by the
    /// [`add`](BulkLoader::add) that finds it, or by
    /// [`finish`](BulkLoader::finish): a later call than the entry's.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// let mut loader = db.bulk_loader()?.with_threads(1)?;
    /// loader.add(b"a", b"1")?;
    /// assert_eq!(loader.finish()?.entries, 1);
    /// # Ok(()) }
    /// ```
    pub fn with_threads(mut self, threads: usize) -> Result<BulkLoader<'a>> {
        if let Some(e) = &self.failed {
            return Err(e.duplicate());
        }
        if let Err(e) = self.tables.set_threads(threads) {
            self.failed = Some(e.duplicate());
            return Err(e);
        }
        Ok(self)
    }

    /// The entries added so far.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// let mut loader = db.bulk_loader()?;
    /// loader.add(b"a", b"1")?;
    /// assert_eq!(loader.entries(), 1);
    /// # Ok(()) }
    /// ```
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Finishes the last table and installs every table into the database
    /// in one MANIFEST record (see the module notes in `db/ingest.rs`): when
    /// it returns, the entries are durable and visible. A loader with no
    /// entries installs nothing. On an error nothing is installed, unless
    /// the error is about the MANIFEST record itself (it may be on disk):
    /// then, as for a failed flush, the database refuses further writes.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// let mut loader = db.bulk_loader()?;
    /// loader.add(b"a", b"1")?;
    /// db.put(b"z", b"written meanwhile")?;
    /// let done = loader.finish()?;
    /// assert!(done.rewritten, "the put took a sequence number after the loader's");
    /// assert_eq!(db.get(b"a")?.as_deref(), Some(&b"1"[..]));
    /// # Ok(()) }
    /// ```
    pub fn finish(mut self) -> Result<IngestStats> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let started = Instant::now();
        self.tables.close_current()?;
        if self.tables.done.is_empty() {
            return Ok(IngestStats {
                entries: 0,
                sequence: 0,
                tables: Vec::new(),
                rewritten: false,
            });
        }
        let inner = self.tables.inner;
        inner.install_ingested(&mut self.tables, self.entries, started)
    }
}

impl std::fmt::Debug for BulkLoader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BulkLoader")
            .field("db", &self.tables.inner.dir)
            .field("entries", &self.entries)
            .field("sequence", &self.tables.sequence)
            .finish_non_exhaustive()
    }
}

/// The table being written.
struct OpenTable {
    number: u64,
    builder: TableBuilder,
    smallest: InternalKey,
}

/// Writes the tables of a run of entries on one thread: the entries in
/// order, one sequence number for all, cut at `max_file_size`. Its table
/// numbers are pending outputs; dropped, it removes the files of its
/// tables (`done` included: a caller keeps them by taking `done`).
struct TableWriter {
    inner: Arc<DbInner>,
    sequence: SequenceNumber,
    max_file_size: u64,
    current: Option<OpenTable>,
    done: Vec<FileMetaData>,
    /// The internal key of the entry being added, then of the last one
    /// added: `current`'s largest when it is closed. (After a failed add
    /// the writer is not used again.)
    ikey: Vec<u8>,
}

impl TableWriter {
    fn new(inner: Arc<DbInner>, sequence: SequenceNumber) -> TableWriter {
        TableWriter {
            max_file_size: inner.options.max_file_size as u64,
            inner,
            sequence,
            current: None,
            done: Vec::new(),
            ikey: Vec::new(),
        }
    }

    /// Adds an entry after every entry added before (the caller checked).
    fn add(&mut self, user_key: &[u8], value: &[u8]) -> Result<()> {
        self.ikey.clear();
        append_internal_key(&mut self.ikey, user_key, self.sequence, ValueType::Value);
        let table = match &mut self.current {
            Some(t) => t,
            slot @ None => slot.insert(open_table(&self.inner, &self.ikey)?),
        };
        table.builder.add(&self.ikey, value)?;
        if table.builder.file_size() >= self.max_file_size {
            self.close_current()?;
        }
        Ok(())
    }

    /// Finishes the table being written (if any), checks that it opens, and
    /// adds it to `done`.
    fn close_current(&mut self) -> Result<()> {
        let Some(table) = self.current.take() else {
            return Ok(());
        };
        let number = table.number;
        let finished = table.builder.finish().and_then(|size| {
            // Verify that the table is usable.
            self.inner.table_cache.table(number, size)?;
            Ok(size)
        });
        match finished {
            Ok(size) => {
                let largest = InternalKey::from_encoded(self.ikey.clone());
                self.done
                    .push(FileMetaData::new(number, size, table.smallest, largest));
                Ok(())
            }
            Err(e) => {
                self.inner.remove_unused_table(number);
                Err(e)
            }
        }
    }
}

impl Drop for TableWriter {
    fn drop(&mut self) {
        if let Some(t) = self.current.take() {
            t.builder.abandon();
            self.inner.remove_unused_table(t.number);
        }
        for t in std::mem::take(&mut self.done) {
            self.inner.remove_unused_table(t.number);
        }
    }
}

/// Entries copied for a table-building thread: each is the key's and the
/// value's lengths (u32, little-endian) and then their bytes.
#[derive(Default)]
struct Chunk {
    data: Vec<u8>,
}

impl Chunk {
    fn push(&mut self, key: &[u8], value: &[u8]) {
        // `check_update` bounds both lengths by u32::MAX.
        let (klen, vlen) = (key.len() as u32, value.len() as u32);
        self.data.extend_from_slice(&klen.to_le_bytes());
        self.data.extend_from_slice(&vlen.to_le_bytes());
        self.data.extend_from_slice(key);
        self.data.extend_from_slice(value);
    }

    /// Writes the entries into tables; on success the caller owns them.
    fn build(&self, inner: Arc<DbInner>, sequence: SequenceNumber) -> Result<Vec<FileMetaData>> {
        let mut writer = TableWriter::new(inner, sequence);
        let mut rest = &self.data[..];
        while !rest.is_empty() {
            let (key, value, after) = next_entry(rest).ok_or_else(|| {
                Error::Background(format!(
                    "bulk load: a chunk of {} bytes is cut short",
                    self.data.len()
                ))
            })?;
            writer.add(key, value)?;
            rest = after;
        }
        writer.close_current()?;
        Ok(std::mem::take(&mut writer.done))
    }
}

/// The first entry of a chunk's bytes and the bytes after it.
fn next_entry(data: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let klen = u32::from_le_bytes(data.get(..4)?.try_into().ok()?) as usize;
    let vlen = u32::from_le_bytes(data.get(4..8)?.try_into().ok()?) as usize;
    let rest = data.get(8..)?;
    let key = rest.get(..klen)?;
    let value = rest.get(klen..klen.checked_add(vlen)?)?;
    Some((key, value, &rest[klen + vlen..]))
}

/// The tables a chunk's thread built and the chunk's size.
struct Built {
    tables: Result<Vec<FileMetaData>>,
    raw_bytes: usize,
}

/// The tables of a load: they take the entries in order, one sequence
/// number for all, and are cut at `max_file_size`. Until installed, their
/// numbers are pending outputs; dropped, it removes their files.
///
/// With one thread the caller's thread writes them (`direct`). With more,
/// the entries are copied into chunks of about a table's worth, and each
/// chunk is written by a thread of its own, at most `threads` at a time;
/// the chunks' tables join `done` in the chunks' order, which is the keys'
/// order.
struct TableSet<'a> {
    inner: &'a Arc<DbInner>,
    sequence: SequenceNumber,
    threads: usize,
    direct: TableWriter,
    chunk: Chunk,
    /// A chunk is handed to a thread once it holds this many bytes.
    chunk_bytes: usize,
    building: VecDeque<JoinHandle<Built>>,
    done: Vec<FileMetaData>,
    /// The user key of the last entry added.
    last_key: Vec<u8>,
    /// The tables may be named by a MANIFEST record (its write was tried):
    /// they are never removed.
    keep: bool,
}

impl<'a> TableSet<'a> {
    fn new(inner: &'a Arc<DbInner>, sequence: SequenceNumber) -> TableSet<'a> {
        TableSet {
            inner,
            sequence,
            threads: default_build_threads(),
            direct: TableWriter::new(Arc::clone(inner), sequence),
            chunk: Chunk::default(),
            // Twice a table's bytes before the first chunk shows how well
            // the entries compress.
            chunk_bytes: inner
                .options
                .max_file_size
                .saturating_mul(2)
                .clamp(MIN_CHUNK_BYTES, MAX_CHUNK_BYTES),
            building: VecDeque::new(),
            done: Vec::new(),
            last_key: Vec::new(),
            keep: false,
        }
    }

    /// Builds tables on `threads` threads from the next entry on (1: on the
    /// caller's).
    fn set_threads(&mut self, threads: usize) -> Result<()> {
        let threads = threads.clamp(1, MOST_BUILD_THREADS);
        if (threads > 1) != (self.threads > 1) {
            // The tables so far come first, in order.
            self.close_current()?;
        }
        self.threads = threads;
        Ok(())
    }

    /// Adds an entry after every entry added before (the caller checked).
    fn add(&mut self, user_key: &[u8], value: &[u8]) -> Result<()> {
        self.last_key.clear();
        self.last_key.extend_from_slice(user_key);
        if self.threads <= 1 {
            return self.direct.add(user_key, value);
        }
        self.chunk.push(user_key, value);
        if self.chunk.data.len() >= self.chunk_bytes {
            self.dispatch()?;
        }
        Ok(())
    }

    /// Hands the chunk to a thread of its own, after waiting for the oldest
    /// when `threads` are busy. A thread that cannot be started leaves the
    /// chunk to this one.
    fn dispatch(&mut self) -> Result<()> {
        while self.building.len() >= self.threads {
            self.join_oldest()?;
        }
        let chunk = Arc::new(std::mem::take(&mut self.chunk));
        let (inner, sequence, mine) = (Arc::clone(self.inner), self.sequence, Arc::clone(&chunk));
        let spawned = std::thread::Builder::new()
            .name("shale-bulk-load".into())
            .spawn(move || Built {
                tables: mine.build(inner, sequence),
                raw_bytes: mine.data.len(),
            });
        match spawned {
            Ok(handle) => {
                self.building.push_back(handle);
                // Most of the next chunk, without a reallocation per doubling.
                self.chunk.data.reserve(self.chunk_bytes.min(8 << 20));
                Ok(())
            }
            Err(e) => {
                self.inner.info_log.log(&format!(
                    "bulk load: no thread for a chunk of {} bytes ({e}); writing it on the caller's",
                    chunk.data.len()
                ));
                self.build_here(&chunk)
            }
        }
    }

    /// Writes `chunk` on this thread, after the chunks before it.
    fn build_here(&mut self, chunk: &Chunk) -> Result<()> {
        while !self.building.is_empty() {
            self.join_oldest()?;
        }
        let tables = chunk.build(Arc::clone(self.inner), self.sequence)?;
        self.done.extend(tables);
        Ok(())
    }

    /// Waits for the oldest chunk's thread and takes its tables; sizes the
    /// next chunks to what its entries took in tables.
    fn join_oldest(&mut self) -> Result<()> {
        let Some(handle) = self.building.pop_front() else {
            return Ok(());
        };
        let built = handle.join().map_err(|payload| {
            Error::Background(format!(
                "{}: a bulk load's table-building thread panicked: {}",
                self.inner.dir.display(),
                panic_message(&*payload)
            ))
        })?;
        let tables = built.tables?;
        let written = tables
            .iter()
            .map(|t| t.file_size)
            .fold(0u64, u64::saturating_add);
        self.done.extend(tables);
        if written > 0 {
            // A chunk that fills one table, less a margin for the index and
            // filter: bytes in per byte out, times the table size.
            let per_table = built.raw_bytes as f64 / written as f64
                * self.inner.options.max_file_size as f64
                * 0.95;
            self.chunk_bytes = (per_table as usize).clamp(MIN_CHUNK_BYTES, MAX_CHUNK_BYTES);
        }
        Ok(())
    }

    /// Finishes every table: the one being written, the chunk being
    /// filled, and the chunks' threads.
    fn close_current(&mut self) -> Result<()> {
        if !self.chunk.data.is_empty() {
            if self.building.is_empty() {
                // Nothing to overlap with: no thread for it.
                let chunk = std::mem::take(&mut self.chunk);
                self.build_here(&chunk)?;
            } else {
                self.dispatch()?;
            }
        }
        while !self.building.is_empty() {
            self.join_oldest()?;
        }
        self.direct.close_current()?;
        self.done.append(&mut self.direct.done);
        Ok(())
    }

    /// Rewrites every finished table with its entries under `sequence`,
    /// into new tables that replace them.
    fn renumber(&mut self, sequence: SequenceNumber) -> Result<()> {
        let old = std::mem::take(&mut self.done);
        self.sequence = sequence;
        self.direct.sequence = sequence;
        let copied = (|| -> Result<()> {
            for t in &old {
                let mut it = self
                    .inner
                    .table_cache
                    .iter(t.number, t.file_size, true, false)?;
                it.seek_to_first();
                while it.valid() {
                    let parsed = parse_internal_key(it.key()).ok_or_else(|| {
                        Error::corruption(
                            table_file_name(&self.inner.dir, t.number),
                            None,
                            "bad internal key in a table being ingested",
                        )
                    })?;
                    self.add(parsed.user_key, it.value())?;
                    it.next();
                }
                it.status()?;
            }
            self.close_current()
        })();
        match copied {
            Ok(()) => {
                for t in old {
                    self.inner.remove_unused_table(t.number);
                }
                Ok(())
            }
            Err(e) => {
                // The drop removes the old tables with the new ones.
                self.done.extend(old);
                Err(e)
            }
        }
    }
}

impl Drop for TableSet<'_> {
    fn drop(&mut self) {
        // The threads' tables, then the direct writer's (its own drop), then
        // the finished ones.
        while let Some(handle) = self.building.pop_front() {
            if let Ok(Built {
                tables: Ok(tables), ..
            }) = handle.join()
            {
                self.done.extend(tables);
            }
        }
        if self.keep {
            return;
        }
        for t in std::mem::take(&mut self.done) {
            self.inner.remove_unused_table(t.number);
        }
    }
}

/// Starts a table whose first internal key is `first`.
///
/// Its level is known only once it is written, so it is compressed as
/// RocksDB compresses files for ingestion: with `bottommost_compression`
/// if set, else the last entry of `compression_per_level`, else
/// `compression` (an ingested table mostly goes to the deepest free level).
fn open_table(inner: &DbInner, first: &[u8]) -> Result<OpenTable> {
    let number = inner.new_pending_number();
    let path = table_file_name(&inner.dir, number);
    let mut table_options = inner.table_options.clone();
    table_options.compression = inner.options.compression_for_level(NUM_LEVELS - 1, true);
    match inner.options.fs.new_writable_file(&path) {
        Ok(file) => Ok(OpenTable {
            number,
            builder: TableBuilder::new(table_options, file),
            smallest: InternalKey::from_encoded(first.to_vec()),
        }),
        Err(e) => {
            inner.state.lock().pending_outputs.remove(&number);
            Err(e)
        }
    }
}

/// The deepest level a table spanning the user keys [smallest, largest] may
/// go to in `v`: the last level of the run from level 0 down that no file
/// overlaps, so that every older entry for its keys lies deeper; level 0 if
/// level 0 overlaps it.
fn ingest_level(v: &Version, smallest: &[u8], largest: &[u8]) -> usize {
    let range = (Some(smallest), Some(largest));
    for level in 0..NUM_LEVELS {
        if v.overlap_in_level(level, range.0, range.1) {
            return level.saturating_sub(1);
        }
    }
    NUM_LEVELS - 1
}

/// Counts installed tables in the per-level statistics of `leveldb.stats`:
/// each table's bytes as written into its level, and `micros`, the time
/// `finish` took, shared between the levels by bytes.
fn record_ingestion(st: &mut State, tables: &[IngestedTable], micros: u64) {
    let total = tables
        .iter()
        .map(|t| t.bytes)
        .fold(0u64, u64::saturating_add);
    for t in tables {
        let share = if total == 0 {
            micros / tables.len() as u64
        } else {
            // At most `micros`: the product fits in a u128.
            (u128::from(micros) * u128::from(t.bytes) / u128::from(total)) as u64
        };
        let s = &mut st.stats[t.level];
        s.micros = s.micros.saturating_add(share);
        s.bytes_written = s.bytes_written.saturating_add(t.bytes);
        s.ingested_files += 1;
        s.ingested_bytes = s.ingested_bytes.saturating_add(t.bytes);
    }
}

impl DbInner {
    /// A new file number, recorded as a pending output.
    fn new_pending_number(&self) -> u64 {
        let mut st = self.state.lock();
        let n = st.versions.new_file_number();
        st.pending_outputs.insert(n);
        n
    }

    /// Removes table `number`, which no version names, and its protection.
    fn remove_unused_table(&self, number: u64) {
        self.table_cache.evict(number);
        let _ = self
            .options
            .fs
            .remove_file(&table_file_name(&self.dir, number));
        self.state.lock().pending_outputs.remove(&number);
    }

    /// Installs the finished tables of `set` (see the module notes), holding
    /// the write path as a leader does.
    fn install_ingested(
        &self,
        set: &mut TableSet<'_>,
        entries: u64,
        started: Instant,
    ) -> Result<IngestStats> {
        let mut st = self.state.lock();
        while st.writing {
            self.work_done_cv.wait(&mut st);
        }
        st.writing = true;
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            self.install_holding_write_path(&mut st, set, entries, started)
        }))
        .unwrap_or_else(|payload| {
            let e = Error::Background(format!(
                "an ingestion panicked: {}",
                panic_message(&*payload)
            ));
            st.bg_error.get_or_insert_with(|| e.duplicate());
            Err(e)
        });
        st.ingesting = false;
        st.writing = false;
        if let Some(next) = st.writers.front() {
            next.wake();
        }
        self.work_done_cv.notify_all();
        self.maybe_schedule_compaction(&st);
        result
    }

    fn install_holding_write_path(
        &self,
        st: &mut MutexGuard<'_, State>,
        set: &mut TableSet<'_>,
        entries: u64,
        started: Instant,
    ) -> Result<IngestStats> {
        // 1. Empty the memtables. Groups given numbers before the write path
        // was taken may still be inserting (concurrent memtable writes):
        // wait for them first, so that the memtable holds all they write and
        // the tables get a number above theirs, published after theirs.
        while st.last_allocated != st.versions.last_sequence {
            if let Some(e) = &st.bg_error {
                return Err(e.duplicate());
            }
            self.work_done_cv.wait(st);
        }
        if !st.mem.is_empty() {
            self.make_room_for_write(st, true)?;
        }
        while st.imm.is_some() {
            if let Some(e) = &st.bg_error {
                return Err(e.duplicate());
            }
            self.bg_cv.notify_one();
            self.work_done_cv.wait(st);
        }
        if let Some(e) = &st.bg_error {
            return Err(e.duplicate());
        }

        // 2. The sequence number: the loader's, unless a write took it.
        let last = st.last_allocated;
        if last >= MAX_SEQUENCE_NUMBER {
            return Err(Error::InvalidArgument(format!(
                "{}: sequence numbers exhausted (last used {last})",
                self.dir.display()
            )));
        }
        let sequence = last + 1;
        let rewritten = sequence != set.sequence;
        if rewritten {
            // Writers wait: none may take `sequence` meanwhile.
            MutexGuard::unlocked(st, || set.renumber(sequence))?;
        }

        // 3. Keep the background thread between steps.
        st.ingesting = true;
        while st.bg_busy {
            self.work_done_cv.wait(st);
        }
        if let Some(e) = &st.bg_error {
            return Err(e.duplicate());
        }

        // 4. Place the tables.
        let current = st.versions.current();
        let mut levels = Vec::with_capacity(set.done.len());
        for i in 0..set.done.len() {
            let (smallest, largest) = (
                set.done[i].smallest.user_key(),
                set.done[i].largest.user_key(),
            );
            let level = ingest_level(&current, smallest, largest);
            let newer_in_level0 = level == 0
                && current.files[0].iter().any(|f| {
                    f.number > set.done[i].number
                        && some_file_overlaps_range(
                            &self.icmp,
                            false,
                            std::slice::from_ref(f),
                            Some(smallest),
                            Some(largest),
                        )
                });
            if newer_in_level0 {
                self.rename_table(st, &mut set.done[i])?;
            }
            levels.push(level);
        }

        // 5. One version edit.
        let mut edit = VersionEdit::default();
        for (t, &level) in set.done.iter().zip(&levels) {
            edit.new_files.push((level as u32, t.clone()));
        }
        // The memtables are empty: no older log is needed.
        edit.log_number = Some(st.logfile_number);
        edit.prev_log_number = Some(0);
        st.versions.last_sequence = sequence;
        st.last_allocated = sequence;
        set.keep = true;
        if let Err(e) = self.apply_edit(st, &mut edit) {
            st.bg_error.get_or_insert_with(|| {
                Error::Background(format!("recording ingested tables failed: {e}"))
            });
            return Err(e);
        }
        let installed = std::mem::take(&mut set.done);
        for t in &installed {
            st.pending_outputs.remove(&t.number);
        }
        self.install_super_version(st);
        self.visible_sequence
            .store(sequence, AtomicOrdering::Release);

        let tables: Vec<IngestedTable> = installed
            .iter()
            .zip(levels)
            .map(|(t, level)| IngestedTable {
                level,
                number: t.number,
                bytes: t.file_size,
            })
            .collect();
        record_ingestion(st, &tables, started.elapsed().as_micros() as u64);
        let placed: Vec<String> = tables
            .iter()
            .map(|t| format!("#{}@{}", t.number, t.level))
            .collect();
        self.info_log.log(&format!(
            "ingested {entries} entries at sequence {sequence}{} into {}; {}",
            if rewritten { " (rewritten)" } else { "" },
            placed.join(" "),
            st.versions.level_summary()
        ));
        Ok(IngestStats {
            entries,
            sequence,
            tables,
            rewritten,
        })
    }

    /// Gives table `t` a new file number (renaming its file), so that it is
    /// the newest of level 0.
    fn rename_table(&self, st: &mut MutexGuard<'_, State>, t: &mut FileMetaData) -> Result<()> {
        let number = st.versions.new_file_number();
        st.pending_outputs.insert(number);
        let from = table_file_name(&self.dir, t.number);
        let to = table_file_name(&self.dir, number);
        match MutexGuard::unlocked(st, || self.options.fs.rename(&from, &to)) {
            Ok(()) => {
                self.table_cache.evict(t.number);
                st.pending_outputs.remove(&t.number);
                t.number = number;
                Ok(())
            }
            Err(e) => {
                st.pending_outputs.remove(&number);
                Err(e)
            }
        }
    }
}
