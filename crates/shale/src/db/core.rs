//! The database: opening and recovery, the read path, properties, and the
//! shared state the write path (`write.rs`) and background work
//! (`background.rs`) operate on.
//!
//! Concurrency: one mutex guards the mutable state (memtables being switched,
//! the version set, the writer queue). Readers never take it: they load the
//! current `SuperVersion` (memtable, immutable memtable, version) through an
//! `ArcSwap`, and the visible sequence number from an atomic. Both are
//! published under the mutex after the data they describe is in place.

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};

use crate::batch::{check_update, WriteBatch};
use crate::db::info_log::InfoLog;
use crate::db::iter::Cursor;
use crate::db::snapshot::{ReadOptions, Snapshot, SnapshotList};
use crate::db::wakeup::Doorbell;
use crate::db::write::Writer;
use crate::env::FileLock;
use crate::error::{Error, Result};
use crate::filename::{
    current_file_name, current_may_name, descriptor_file_name, lock_file_name, log_file_name,
    parse_file_name, set_current_file, FileType,
};
use crate::iter::db_iter::ReadSampleHook;
use crate::keys::{
    InternalKey, InternalKeyComparator, LookupKey, SequenceNumber, ValueType, MAX_SEQUENCE_NUMBER,
    VALUE_TYPE_FOR_SEEK,
};
use crate::log;
use crate::memtable::{MemGet, MemTable};
use crate::options::{Options, WriteOptions};
use crate::sstable::cache::Cache;
use crate::sstable::TableOptions;
use crate::table_cache::TableCache;
use crate::version::edit::VersionEdit;
use crate::version::set::{VersionSet, MAX_FILE_NUMBER};
use crate::version::version::{TableGet, Version};
use crate::version::NUM_LEVELS;

/// The property holding the error that stopped writes, if any.
const BACKGROUND_ERROR_PROPERTY: &str = "shale.background-error";

/// Block cache made when the options give none.
const DEFAULT_BLOCK_CACHE: usize = 8 << 20;

/// Bytes of memtable key filter per byte of write buffer (a bit per 16 bytes).
const MEMTABLE_FILTER_RATIO: usize = 128;

/// A new, empty memtable for the database: with a key filter sized by the
/// write buffer.
pub(crate) fn new_memtable(icmp: &InternalKeyComparator, options: &Options) -> MemTable {
    MemTable::with_key_filter(
        icmp.clone(),
        options.write_buffer_size / MEMTABLE_FILTER_RATIO,
    )
}

/// What a reader needs to see one consistent state: published atomically.
pub(crate) struct SuperVersion {
    pub(crate) mem: Arc<MemTable>,
    pub(crate) imm: Option<Arc<MemTable>>,
    pub(crate) current: Arc<Version>,
}

/// What replaying one log found.
#[derive(Default)]
struct Replay {
    /// The memtable outgrew the write buffer and was flushed at least once.
    flushed: bool,
    /// The log's length, if it ends exactly after its last record and
    /// nothing in it was skipped: only then is appending to it safe.
    clean_end: Option<u64>,
    /// The log does not continue the history the logs before it ended with
    /// (see [`DbInner::replay_log`]): neither it nor any later log was
    /// replayed.
    gap: bool,
}

/// Per-level compaction statistics for `leveldb.stats`.
#[derive(Default, Clone, Copy)]
pub(crate) struct CompactionStats {
    pub(crate) micros: u64,
    pub(crate) bytes_read: u64,
    pub(crate) bytes_written: u64,
}

/// A compaction asked for by `compact_range`.
pub(crate) struct ManualCompaction {
    pub(crate) level: usize,
    pub(crate) begin: Option<InternalKey>,
    pub(crate) end: Option<InternalKey>,
    pub(crate) done: bool,
}

/// State guarded by the database mutex.
pub(crate) struct State {
    pub(crate) mem: Arc<MemTable>,
    pub(crate) imm: Option<Arc<MemTable>>,
    pub(crate) logfile_number: u64,
    pub(crate) versions: VersionSet,
    /// Writers waiting behind the current leader, in arrival order.
    pub(crate) writers: VecDeque<Arc<Writer>>,
    /// True while a leader (or a forced memtable switch) owns the write path.
    pub(crate) writing: bool,
    pub(crate) bg_error: Option<Error>,
    pub(crate) manual: Option<ManualCompaction>,
    pub(crate) pending_outputs: BTreeSet<u64>,
    pub(crate) stats: [CompactionStats; NUM_LEVELS],
    pub(crate) bg_busy: bool,
}

/// Shared between the handle, the writers and the background thread.
pub(crate) struct DbInner {
    pub(crate) dir: PathBuf,
    pub(crate) options: Options,
    pub(crate) icmp: InternalKeyComparator,
    pub(crate) table_options: TableOptions,
    pub(crate) table_cache: Arc<TableCache>,
    pub(crate) state: Mutex<State>,
    /// The write-ahead log; only the current write-group leader (or a
    /// memtable switch, which holds the state mutex and is done by the
    /// leader) touches it.
    pub(crate) log: Mutex<Option<log::Writer>>,
    /// The highest log number whose directory entry is known to be durable
    /// (see [`DbInner::sync_dir_for_log`]); the mutex also makes concurrent
    /// callers share one directory sync.
    pub(crate) log_dir_synced: Mutex<u64>,
    /// The log the current one replaced, until its contents are synced
    /// (see [`DbInner::sync_prev_log`]).
    pub(crate) prev_log: Mutex<Option<log::Writer>>,
    /// Wakes the background thread; may be rung with or without `state`.
    pub(crate) bg_cv: Doorbell,
    /// Signalled whenever background work finishes a step.
    pub(crate) work_done_cv: Condvar,
    pub(crate) super_version: ArcSwap<SuperVersion>,
    pub(crate) visible_sequence: AtomicU64,
    pub(crate) snapshots: Arc<SnapshotList>,
    pub(crate) shutting_down: AtomicBool,
    pub(crate) has_imm: AtomicBool,
    /// Counts iterators, to give each its own read-sampling seed.
    iterators_created: AtomicU64,
    pub(crate) info_log: InfoLog,
    _lock: Box<dyn FileLock>,
}

/// An open database. `Db` is `Send + Sync`: share it between threads (e.g. in an `Arc`).
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"apple", b"red")?;
/// assert_eq!(db.get(b"apple")?.as_deref(), Some(&b"red"[..]));
/// db.delete(b"apple")?;
/// assert_eq!(db.get(b"apple")?, None);
/// # Ok(()) }
/// ```
pub struct Db {
    pub(crate) inner: Arc<DbInner>,
    bg_thread: Option<JoinHandle<()>>,
}

impl Db {
    /// Opens (or with `create_if_missing`, creates) the database in directory `path`.
    ///
    /// Recovers whatever the last run left: the MANIFEST and the logs it
    /// does not cover are replayed. A second open of the same directory,
    /// from this process or another, fails with an error naming its `LOCK`.
    ///
    /// ```
    /// use shale::{BloomFilterPolicy, Cache, Db, Options};
    /// use std::sync::Arc;
    ///
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("db");
    /// let options = Options {
    ///     create_if_missing: true,
    ///     write_buffer_size: 8 << 20,
    ///     block_cache: Some(Cache::new(64 << 20)),
    ///     filter_policy: Some(Arc::new(BloomFilterPolicy::new(10))),
    ///     ..Default::default()
    /// };
    /// let db = Db::open(&path, options.clone())?;
    /// assert!(Db::open(&path, options).is_err(), "the directory is locked");
    /// # Ok(()) }
    /// ```
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let dir = path.as_ref().to_path_buf();
        let mut options = options;
        sanitize(&mut options);
        let fs = options.fs.clone();
        if options.create_if_missing {
            fs.create_dir_all(&dir)?;
        }
        let lock = fs.lock(&lock_file_name(&dir)).map_err(|e| match e {
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Error::InvalidArgument(format!(
                    "{}: database does not exist (create_if_missing is false)",
                    dir.display()
                ))
            }
            Error::Io { path, source } if source.kind() == std::io::ErrorKind::WouldBlock => {
                Error::Io {
                    source: std::io::Error::new(
                        source.kind(),
                        format!(
                            "{source}: the database is already open (lock file {})",
                            path.display()
                        ),
                    ),
                    path,
                }
            }
            other => other,
        })?;

        let icmp = InternalKeyComparator::new(options.comparator.clone());
        let table_options = TableOptions {
            comparator: Arc::new(icmp.clone()),
            filter_policy: options.filter_policy.clone(),
            block_size: options.block_size,
            block_restart_interval: options.block_restart_interval,
            compression: options.compression,
            block_cache: options.block_cache.clone(),
            paranoid_checks: options.paranoid_checks,
        };
        let table_cache = Arc::new(TableCache::new(&dir, &options, table_options.clone()));
        let versions = VersionSet::new(&dir, &options, icmp.clone(), table_cache.clone());
        let info_log = InfoLog::open(&*fs, &dir);

        if !fs.exists(&current_file_name(&dir)) {
            if !options.create_if_missing {
                return Err(Error::InvalidArgument(format!(
                    "{}: database does not exist (create_if_missing is false)",
                    dir.display()
                )));
            }
            new_db(&options, &dir, &icmp)?;
        } else if options.error_if_exists {
            return Err(Error::InvalidArgument(format!(
                "{}: database exists (error_if_exists is true)",
                dir.display()
            )));
        }

        let mem = Arc::new(new_memtable(&icmp, &options));
        let state = State {
            mem: mem.clone(),
            imm: None,
            logfile_number: 0,
            versions,
            writers: VecDeque::new(),
            writing: false,
            bg_error: None,
            manual: None,
            pending_outputs: BTreeSet::new(),
            stats: Default::default(),
            bg_busy: false,
        };
        let inner = Arc::new(DbInner {
            super_version: ArcSwap::from_pointee(SuperVersion {
                mem,
                imm: None,
                current: state.versions.current(),
            }),
            dir,
            icmp,
            table_options,
            table_cache,
            state: Mutex::new(state),
            log: Mutex::new(None),
            log_dir_synced: Mutex::new(0),
            prev_log: Mutex::new(None),
            bg_cv: Doorbell::default(),
            work_done_cv: Condvar::new(),
            visible_sequence: AtomicU64::new(0),
            snapshots: Arc::new(SnapshotList::default()),
            shutting_down: AtomicBool::new(false),
            has_imm: AtomicBool::new(false),
            iterators_created: AtomicU64::new(0),
            info_log,
            options,
            _lock: lock,
        });

        inner.recover()?;

        let bg = inner.clone();
        let handle = std::thread::Builder::new()
            .name("shale-bg".into())
            .spawn(move || bg.background_loop())
            .map_err(|e| Error::io(&inner.dir, e))?;
        let db = Db {
            inner,
            bg_thread: Some(handle),
        };
        {
            let mut st = db.inner.state.lock();
            db.inner.delete_obsolete_files(&mut st);
            db.inner.maybe_schedule_compaction(&st);
        }
        Ok(db)
    }

    /// Sets `key` to `value`. A key longer than [`MAX_KEY_LEN`], a value
    /// longer than [`MAX_VALUE_LEN`](crate::batch::MAX_VALUE_LEN), or a pair
    /// too long together for one memtable entry
    /// ([`MAX_ENTRY_LEN`](crate::batch::MAX_ENTRY_LEN)) is refused with
    /// [`Error::InvalidArgument`] before anything is written.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.put_with(&WriteOptions::default(), key, value)
    }

    /// Sets `key` to `value` with explicit write options.
    pub fn put_with(&self, opts: &WriteOptions, key: &[u8], value: &[u8]) -> Result<()> {
        // Checked before the batch's memory is reserved for them.
        check_update(key.len(), value.len())?;
        let mut batch = WriteBatch::with_capacity(key.len() + value.len() + 16);
        batch.put(key, value)?;
        self.inner.write_batch(opts, batch)
    }

    /// Removes `key` (not an error if it is absent).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        self.delete_with(&WriteOptions::default(), key)
    }

    /// Removes `key` with explicit write options.
    pub fn delete_with(&self, opts: &WriteOptions, key: &[u8]) -> Result<()> {
        check_update(key.len(), 0)?;
        let mut batch = WriteBatch::with_capacity(key.len() + 8);
        batch.delete(key)?;
        self.inner.write_batch(opts, batch)
    }

    /// Applies every update of `batch` atomically.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// let mut batch = shale::WriteBatch::new();
    /// batch.put(b"a", b"1")?;
    /// batch.delete(b"b")?;
    /// db.write(&shale::WriteOptions { sync: true }, &batch)?;
    /// # Ok(()) }
    /// ```
    pub fn write(&self, opts: &WriteOptions, batch: &WriteBatch) -> Result<()> {
        self.inner.write_batch(opts, batch.clone())
    }

    /// The value of `key`, or `None`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_with(&ReadOptions::default(), key)
    }

    /// The value of `key` with explicit read options (e.g. a snapshot). A
    /// snapshot taken from another database (or before this one was
    /// reopened) is refused with [`Error::InvalidArgument`].
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
    pub fn get_into_with(
        &self,
        opts: &ReadOptions<'_>,
        key: &[u8],
        value: &mut Vec<u8>,
    ) -> Result<bool> {
        self.inner.get(opts, key, value)
    }

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

    /// Compacts the key range [begin, end] (`None` is unbounded) down through
    /// the levels, after flushing the memtable. An empty range (`begin` after
    /// `end`) does nothing.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// for i in 0..1000u32 {
    ///     db.put(format!("key{i:04}").as_bytes(), b"value")?;
    /// }
    /// db.compact_range(None, None)?;
    /// // Everything left the memtable for a table below level 0.
    /// assert_eq!(db.property("leveldb.num-files-at-level0").as_deref(), Some("0"));
    /// # Ok(()) }
    /// ```
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.inner.compact_range(begin, end)
    }

    /// Approximate bytes on disk used by each user-key range [start, limit);
    /// 0 for an empty range (`start` at or after `limit`). Data still in
    /// the memtable is not counted.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// for i in 0..10_000u32 {
    ///     db.put(format!("key{i:05}").as_bytes(), &[b'x'; 100])?;
    /// }
    /// db.compact_range(None, None)?;
    /// let sizes = db.approximate_sizes(&[(b"key00000", b"key05000"), (b"z", b"a")]);
    /// assert!(sizes[0] > 10_000, "{sizes:?}");
    /// assert_eq!(sizes[1], 0);
    /// # Ok(()) }
    /// ```
    pub fn approximate_sizes(&self, ranges: &[(&[u8], &[u8])]) -> Vec<u64> {
        let sv = self.inner.super_version.load_full();
        ranges
            .iter()
            .map(|(start, limit)| {
                let k1 = InternalKey::new(start, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK);
                let k2 = InternalKey::new(limit, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK);
                let a = sv
                    .current
                    .approximate_offset_of(&self.inner.table_cache, k1.encoded());
                let b = sv
                    .current
                    .approximate_offset_of(&self.inner.table_cache, k2.encoded());
                b.saturating_sub(a)
            })
            .collect()
    }

    /// A named property: `leveldb.num-files-at-level<N>`, `leveldb.stats`,
    /// `leveldb.sstables`, `leveldb.approximate-memory-usage`, and
    /// `shale.background-error`, the error that made the database refuse
    /// writes (a failed log write or background step, a panic in a write or
    /// in background work), empty while there is none; `None` for other
    /// names.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"k", b"v")?;
    /// let memory: u64 = db.property("leveldb.approximate-memory-usage").unwrap().parse().unwrap();
    /// assert!(memory > 0);
    /// assert!(db.property("leveldb.stats").unwrap().contains("Level"));
    /// assert_eq!(db.property("shale.background-error").as_deref(), Some(""));
    /// assert_eq!(db.property("no.such.property"), None);
    /// # Ok(()) }
    /// ```
    pub fn property(&self, name: &str) -> Option<String> {
        self.inner.property(name)
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        {
            let _st = self.inner.state.lock();
            self.inner.shutting_down.store(true, Ordering::Release);
            self.inner.bg_cv.notify_all();
        }
        if let Some(h) = self.bg_thread.take() {
            let _ = h.join();
        }
        if let Some(log) = self.inner.log.lock().as_mut() {
            let _ = log.close();
        }
    }
}

/// Deletes the database in `path`: every file it made, then the directory if empty.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("db");
/// let options = shale::Options { create_if_missing: true, ..Default::default() };
/// drop(shale::Db::open(&path, options.clone())?);
/// shale::destroy(&path, &options)?;
/// assert!(!path.exists());
/// # Ok(()) }
/// ```
pub fn destroy(path: impl AsRef<Path>, options: &Options) -> Result<()> {
    let dir = path.as_ref();
    let fs = &options.fs;
    let names = match fs.children(dir) {
        Ok(n) => n,
        Err(_) => return Ok(()), // Nothing to destroy.
    };
    let lock = fs.lock(&lock_file_name(dir))?;
    let mut first_error = None;
    for name in names {
        if let Some((_, t)) = parse_file_name(&name) {
            if t != FileType::DbLock {
                if let Err(e) = fs.remove_file(&dir.join(&name)) {
                    first_error.get_or_insert(e);
                }
            }
        }
    }
    drop(lock);
    let _ = fs.remove_file(&lock_file_name(dir));
    let _ = fs.remove_dir(dir);
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Brings option values into the ranges LevelDB allows (and makes a block
/// cache when none is given), as `open` and `repair` do.
pub(crate) fn sanitize(o: &mut Options) {
    o.max_open_files = o.max_open_files.clamp(64 + 10, 50_000);
    o.write_buffer_size = o.write_buffer_size.clamp(64 << 10, 1 << 30);
    o.max_file_size = o.max_file_size.clamp(1 << 20, 1 << 30);
    o.block_size = o.block_size.clamp(1 << 10, 4 << 20);
    o.block_restart_interval = o.block_restart_interval.max(1);
    if o.block_cache.is_none() {
        o.block_cache = Some(Cache::new(DEFAULT_BLOCK_CACHE));
    }
}

fn new_db(options: &Options, dir: &Path, icmp: &InternalKeyComparator) -> Result<()> {
    let edit = VersionEdit {
        comparator: Some(icmp.user_comparator().name().to_string()),
        log_number: Some(0),
        next_file_number: Some(2),
        last_sequence: Some(0),
        ..Default::default()
    };
    let manifest = descriptor_file_name(dir, 1);
    let result = (|| -> Result<()> {
        let file = options.fs.new_writable_file(&manifest)?;
        let mut w = log::Writer::new(file);
        let mut record = Vec::new();
        edit.encode(&mut record);
        w.add_record(&record)?;
        w.sync()?;
        drop(w);
        set_current_file(&*options.fs, dir, 1)
    })();
    // Once CURRENT may name the MANIFEST (the failure was the directory
    // sync after the rename), the MANIFEST stays: the next open reads it.
    if result.is_err() && !current_may_name(&*options.fs, dir, 1) {
        let _ = options.fs.remove_file(&manifest);
    }
    result
}

impl DbInner {
    /// Replays the MANIFEST and the logs it does not cover, then starts a new
    /// log, or with `reuse_logs` keeps appending to the last one (and to the
    /// MANIFEST) when they are small and end cleanly.
    fn recover(self: &Arc<Self>) -> Result<()> {
        let mut st = self.state.lock();
        let new_manifest = st.versions.recover()?;
        let fs = &self.options.fs;
        let min_log = st.versions.log_number;
        let prev_log = st.versions.prev_log_number;
        let mut expected = st.versions.live_files();
        let mut logs = Vec::new();
        // The highest number of a table or temporary file found: the previous
        // run may have been writing it without recording it in the MANIFEST.
        let mut highest_table = None;
        for name in fs.children(&self.dir)? {
            if let Some((number, t)) = parse_file_name(&name) {
                expected.remove(&number);
                // (Numbers beyond any we hand out cannot collide; a stray one
                // must not exhaust the numbers.)
                if matches!(t, FileType::Table | FileType::Temp) && number <= MAX_FILE_NUMBER {
                    highest_table = highest_table.max(Some(number));
                }
                if t == FileType::Log && (number >= min_log || number == prev_log) {
                    if number > MAX_FILE_NUMBER {
                        return Err(Error::corruption(
                            log_file_name(&self.dir, number),
                            None,
                            "log file number too large",
                        ));
                    }
                    logs.push(number);
                }
            }
        }
        if let Some(missing) = expected.iter().next() {
            return Err(Error::corruption(
                crate::filename::table_file_name(&self.dir, *missing),
                None,
                format!("{} missing files", expected.len()),
            ));
        }
        logs.sort_unstable();
        // The previous run may have made these logs without recording their
        // numbers in the MANIFEST: none may be handed out again.
        for &number in &logs {
            st.versions.mark_file_number_used(number);
        }
        // Nor may the numbers of tables it left behind: they are deleted as
        // obsolete once open, while the background thread may already be
        // writing new tables, which must not have their names.
        if let Some(number) = highest_table {
            st.versions.mark_file_number_used(number);
        }
        if st.versions.next_file_number == u64::MAX {
            return Err(Error::corruption(
                &self.dir,
                None,
                "file numbers exhausted: a file or MANIFEST entry numbered 2^64 - 1",
            ));
        }
        let mut edit = VersionEdit::default();
        // The last sequence number the replayed logs used.
        let mut replayed = 0;
        let mut reusable = None;
        for (i, &number) in logs.iter().enumerate() {
            let last = i + 1 == logs.len();
            let may_reuse = last && self.options.reuse_logs && number >= min_log;
            if may_reuse && !st.mem.is_empty() {
                // The MANIFEST will name only the reused log: what the older
                // logs held goes to a table first.
                self.flush_recovered(&mut st, &mut edit)?;
            }
            let replay = self.replay_log(&mut st, number, &mut edit, &mut replayed)?;
            if replay.gap {
                break;
            }
            if may_reuse && !replay.flushed {
                reusable = replay.clean_end.map(|len| (number, len));
            }
        }
        if st.versions.last_sequence < replayed {
            st.versions.last_sequence = replayed;
        }
        let reused = match reusable {
            Some((number, len)) => self.reuse_log(number, len),
            None => None,
        };
        match reused {
            Some((number, writer)) => {
                // The memtable keeps what the log holds.
                *self.log.lock() = Some(writer);
                st.logfile_number = number;
            }
            None => {
                // Flush what the logs held so that the old logs can go.
                self.flush_recovered(&mut st, &mut edit)?;
                let new_log = st.versions.new_file_number();
                let file = fs.new_log_file(&log_file_name(&self.dir, new_log))?;
                *self.log.lock() = Some(log::Writer::new(file));
                st.logfile_number = new_log;
            }
        }
        edit.log_number = Some(st.logfile_number);
        edit.prev_log_number = Some(0);
        let changed = !edit.new_files.is_empty()
            || st.logfile_number != st.versions.log_number
            || st.versions.prev_log_number != 0;
        if new_manifest {
            st.versions.start_new_manifest();
            st.versions.log_and_apply(&mut edit)?;
        } else if changed {
            // Appended to the reused MANIFEST.
            st.versions.log_and_apply(&mut edit)?;
        }
        // Makes the new (or reused) log's entry durable before any write to
        // it is acknowledged, along with everything else recovery created.
        fs.sync_dir(&self.dir)?;
        *self.log_dir_synced.lock() = st.logfile_number;
        // The tables recovery wrote are in the installed version now.
        st.pending_outputs.clear();
        self.visible_sequence
            .store(st.versions.last_sequence, Ordering::Release);
        self.install_super_version(&st);
        self.info_log
            .log(&format!("recovered; {}", st.versions.level_summary()));
        Ok(())
    }

    /// Writes the memtable filled by log replay (if not empty) to a level-0
    /// table recorded in `edit`, and starts an empty one.
    fn flush_recovered(
        &self,
        st: &mut parking_lot::MutexGuard<'_, State>,
        edit: &mut VersionEdit,
    ) -> Result<()> {
        if st.mem.is_empty() {
            return Ok(());
        }
        let mem = std::mem::replace(
            &mut st.mem,
            Arc::new(new_memtable(&self.icmp, &self.options)),
        );
        self.write_level0_table(st, &mem, edit, None).map(|_| ())
    }

    /// Opens log `number`, which ends cleanly after `len` bytes, for
    /// appending. `None` (a new log is made instead) if it cannot be opened.
    fn reuse_log(&self, number: u64, len: u64) -> Option<(u64, log::Writer)> {
        let path = log_file_name(&self.dir, number);
        match self.options.fs.new_appendable_file(&path) {
            Ok(file) => {
                self.info_log
                    .log(&format!("reusing log {} ({len} bytes)", path.display()));
                Some((number, log::Writer::with_offset(file, len)))
            }
            Err(e) => {
                self.info_log
                    .log(&format!("not reusing log {}: {e}", path.display()));
                None
            }
        }
    }

    /// Replays log `number` into the memtable, flushing it to level-0 tables
    /// (recorded in `edit`) whenever it outgrows the write buffer.
    ///
    /// Sequence numbers run on without a hole from one log into the next, so
    /// a log whose first batch does not start right after the last sequence
    /// `replayed` from the logs before it shows that their tail was lost: it
    /// was never synced (a synchronous write syncs the earlier log first) and
    /// a power cut dropped it while keeping some of this one, which the
    /// kernel had written back. Replaying this log would keep later writes
    /// without earlier ones, a history that never was; it and every later
    /// log are dropped instead (`gap`), as the unsynced writes they hold may
    /// be.
    fn replay_log(
        &self,
        st: &mut parking_lot::MutexGuard<'_, State>,
        number: u64,
        edit: &mut VersionEdit,
        replayed: &mut SequenceNumber,
    ) -> Result<Replay> {
        let path = log_file_name(&self.dir, number);
        let file = self.options.fs.new_sequential_file(&path)?;
        let file_len = self.options.fs.file_size(&path).ok();
        let paranoid = self.options.paranoid_checks;
        let first_error: Arc<Mutex<Option<Error>>> = Arc::default();
        let sink = first_error.clone();
        let reporter: log::Reporter = Box::new(move |_bytes, err| {
            let mut slot = sink.lock();
            if slot.is_none() {
                *slot = Some(err.duplicate());
            }
        });
        let mut reader = log::Reader::new(file, path.clone(), Some(reporter), true, 0);
        let mut scratch = Vec::new();
        let mut outcome = Replay::default();
        // Where the last record read ends, and whether any was skipped.
        let mut end_of_records = 0;
        let mut skipped = false;
        let mut first_in_log = true;
        loop {
            let record = match reader.read_record(&mut scratch) {
                Ok(Some(r)) => r.to_vec(),
                Ok(None) => break,
                Err(e) => return Err(e),
            };
            let offset = reader.last_record_offset();
            if first_in_log && *replayed > 0 {
                if let Some(first) = batch_start(&record) {
                    if first > replayed.saturating_add(1) {
                        self.info_log.log(&format!(
                            "{}: starts at sequence {first}, but the logs before it end at {}: \
                             their unsynced tail was lost; dropping this log and later ones",
                            path.display(),
                            *replayed
                        ));
                        outcome.gap = true;
                        return Ok(outcome);
                    }
                }
            }
            first_in_log = false;
            end_of_records = log::writer::record_end(offset, record.len());
            let mem = st.mem.clone();
            if let Err(e) = apply_log_record(&mem, record, replayed) {
                let e = e.in_file(&path, Some(offset));
                if paranoid {
                    return Err(e);
                }
                self.info_log.log(&e.to_string());
                skipped = true;
                continue;
            }
            if mem.approximate_memory_usage() > self.options.write_buffer_size {
                let full = std::mem::replace(
                    &mut st.mem,
                    Arc::new(new_memtable(&self.icmp, &self.options)),
                );
                self.write_level0_table(st, &full, edit, None)?;
                outcome.flushed = true;
            }
        }
        if let Some(e) = first_error.lock().take() {
            self.info_log
                .log(&format!("{}: dropped bytes: {e}", path.display()));
            if paranoid {
                return Err(e);
            }
            skipped = true;
        }
        if !skipped && file_len == Some(end_of_records) {
            outcome.clean_end = file_len;
        }
        Ok(outcome)
    }

    /// Makes the directory entry of log `number` (and of every older file)
    /// durable, unless a sync of the directory already did since the log was
    /// created. Without it a synchronous write could be acknowledged into a
    /// log whose name a crash then loses, and with it the write. One sync
    /// per new log: the background thread does it as soon as it starts
    /// flushing the memtable the log replaced, and a synchronous write that
    /// gets there first does it itself (callers arriving meanwhile wait for
    /// that one sync instead of starting another).
    pub(crate) fn sync_dir_for_log(&self, number: u64) -> Result<()> {
        let mut synced = self.log_dir_synced.lock();
        if *synced >= number {
            return Ok(());
        }
        self.options.fs.sync_dir(&self.dir)?;
        *synced = number;
        Ok(())
    }

    /// Makes the contents of the log that the current one replaced durable,
    /// then closes it. A synchronous write is acknowledged as durable
    /// together with every write before it, and those still in the replaced
    /// log (written without sync) are durable only once that log is synced:
    /// without this a power cut could keep the synchronous write and lose
    /// earlier ones, a history that never was. The background thread does
    /// it as soon as it starts flushing the memtable the log holds, so the
    /// closed log is synced before the next switch (RocksDB syncs its closed
    /// logs the same way); a synchronous write that gets there first does it
    /// itself. Once done, this is a check of an empty slot.
    pub(crate) fn sync_prev_log(&self) -> Result<()> {
        let mut prev = self.prev_log.lock();
        if let Some(log) = prev.as_mut() {
            log.sync()?;
            log.close()?;
            *prev = None;
        }
        Ok(())
    }

    /// Publishes the current memtables and version to readers.
    pub(crate) fn install_super_version(&self, st: &State) {
        self.super_version.store(Arc::new(SuperVersion {
            mem: st.mem.clone(),
            imm: st.imm.clone(),
            current: st.versions.current(),
        }));
    }

    /// The sequence number reads with `opts` see: the snapshot's, which must
    /// be one of this database's, or the latest.
    fn read_sequence(&self, opts: &ReadOptions<'_>) -> Result<u64> {
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
                Some(true)
            }
            MemGet::Deleted => Some(false),
            MemGet::NotFound => None,
        };
        if let Some(found) = from_memtable(sv.mem.get(&lk), value) {
            return Ok(found);
        }
        if let Some(imm) = &sv.imm {
            if let Some(found) = from_memtable(imm.get(&lk), value) {
                return Ok(found);
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
        Ok(matches!(found, TableGet::Found))
    }

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
            sv,
            sequence,
            verify_checksums: opts.verify_checksums,
            fill_cache: opts.fill_cache,
            seed: self.iterators_created.fetch_add(1, Ordering::Relaxed),
        })
    }

    fn property(&self, name: &str) -> Option<String> {
        if name == BACKGROUND_ERROR_PROPERTY {
            let st = self.state.lock();
            return Some(
                st.bg_error
                    .as_ref()
                    .map_or(String::new(), |e| e.to_string()),
            );
        }
        let rest = name.strip_prefix("leveldb.")?;
        let st = self.state.lock();
        let current = st.versions.current();
        if let Some(level) = rest.strip_prefix("num-files-at-level") {
            let level: usize = level.parse().ok()?;
            return (level < NUM_LEVELS).then(|| current.num_files(level).to_string());
        }
        match rest {
            "stats" => {
                let mut s = String::from(
                    "                               Compactions\nLevel  Files Size(MB) Time(sec) Read(MB) Write(MB)\n--------------------------------------------------\n",
                );
                for level in 0..NUM_LEVELS {
                    let files = current.num_files(level);
                    let stats = st.stats[level];
                    if files > 0 || stats.micros > 0 {
                        s.push_str(&format!(
                            "{:3} {:8} {:8.0} {:9.0} {:8.0} {:9.0}\n",
                            level,
                            files,
                            current.level_bytes(level) as f64 / 1048576.0,
                            stats.micros as f64 / 1e6,
                            stats.bytes_read as f64 / 1048576.0,
                            stats.bytes_written as f64 / 1048576.0
                        ));
                    }
                }
                Some(s)
            }
            "sstables" => Some(current.debug_string()),
            "approximate-memory-usage" => {
                let mut total = st.mem.approximate_memory_usage();
                if let Some(imm) = &st.imm {
                    total += imm.approximate_memory_usage();
                }
                if let Some(cache) = &self.options.block_cache {
                    total += cache.usage();
                }
                Some(total.to_string())
            }
            _ => None,
        }
    }
}

/// The message of a caught panic's payload (a `&str` or a `String`, as
/// `panic!` makes them), for the error that replaces the panic.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_string()
    }
}

/// One consistent state of a database that cursors read: each cursor made
/// from it sees the same entries.
pub(crate) struct View {
    db: Weak<DbInner>,
    icmp: InternalKeyComparator,
    table_cache: Arc<TableCache>,
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

/// Decodes a record of a write-ahead log as a write batch and adds its
/// updates to `mem`, all or none of them: the one check of a logged batch,
/// used by recovery and by repair.
///
/// `replayed` is the last sequence number applied by earlier records of the
/// logs being replayed (0 before the first); the batch must come after it,
/// as every batch the write path logs does. A batch that fails a check is
/// corruption and changes nothing: a malformed record, a count that does not
/// match the records, an update the write path would have refused for its
/// size (see [`logged_update_fits`]: the memtable could not hold it, and
/// inserting it would panic), sequence numbers past [`MAX_SEQUENCE_NUMBER`], or sequence
/// numbers already used (which would add an internal key twice). The caller
/// counts such a record as skipped (a log with skipped records is not
/// reused). On success `replayed` becomes the batch's last sequence number
/// (an empty batch leaves it unchanged).
/// The first sequence number of the write batch `record` holds, if it
/// holds any updates (a record too short to be a batch is left to
/// [`apply_log_record`] to report).
fn batch_start(record: &[u8]) -> Option<SequenceNumber> {
    let seq = u64::from_le_bytes(record.get(..8)?.try_into().ok()?);
    let count = u32::from_le_bytes(record.get(8..12)?.try_into().ok()?);
    (count > 0).then_some(seq)
}

pub(crate) fn apply_log_record(
    mem: &MemTable,
    record: Vec<u8>,
    replayed: &mut SequenceNumber,
) -> Result<()> {
    if record.len() < 12 {
        return Err(Error::bad_data("log record too small"));
    }
    let batch = WriteBatch::from_contents(record)?;
    // Check every record before applying any, so a damaged batch is dropped whole.
    batch.for_each(|_, key, value| logged_update_fits(key.len(), value.len()))?;
    let count = u64::from(batch.count());
    if count == 0 {
        return Ok(());
    }
    let first = batch.sequence();
    let last = first
        .checked_add(count - 1)
        .filter(|&last| last <= MAX_SEQUENCE_NUMBER)
        .ok_or_else(|| {
            Error::bad_data(format!(
                "write batch of {count} updates at sequence {first} runs past the largest sequence number"
            ))
        })?;
    if first <= *replayed {
        return Err(Error::bad_data(format!(
            "write batch at sequence {first} reuses sequence numbers up to {} of an earlier batch",
            *replayed
        )));
    }
    insert_into(mem, &batch)?;
    *replayed = last;
    Ok(())
}

/// Corruption if a logged update with a key of `key_len` and a value of
/// `value_len` bytes is one the write path refuses (an older writer, or
/// damage, may have logged it): the memtable cannot hold it.
fn logged_update_fits(key_len: usize, value_len: usize) -> Result<()> {
    check_update(key_len, value_len).map_err(|e| {
        let reason = match e {
            Error::InvalidArgument(reason) => reason,
            other => other.to_string(),
        };
        Error::bad_data(format!("an update in a log record is too large: {reason}"))
    })
}

/// Applies the updates of `batch` to `mem`, numbering them from the batch's sequence.
pub(crate) fn insert_into(mem: &MemTable, batch: &WriteBatch) -> Result<()> {
    let mut seq = batch.sequence();
    batch.for_each(|t, key, value| {
        mem.add(seq, t, key, if t == ValueType::Value { value } else { &[] });
        seq += 1;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::BytewiseComparator;

    fn mem() -> MemTable {
        MemTable::new(InternalKeyComparator::new(Arc::new(BytewiseComparator)))
    }

    fn record(seq: SequenceNumber, keys: &[&[u8]]) -> Vec<u8> {
        let mut b = WriteBatch::new();
        for k in keys {
            b.put(k, b"v").unwrap();
        }
        b.set_sequence(seq);
        b.contents().to_vec()
    }

    #[test]
    fn logged_updates_too_large_for_the_memtable_are_corruption() {
        // Once such a record, logged by a writer that let it through,
        // panicked in the memtable at every recovery.
        for (k, v) in [
            (1usize << 31, 1usize << 31),
            (u32::MAX as usize, 0),
            (0, u32::MAX as usize),
        ] {
            let err = logged_update_fits(k, v).unwrap_err();
            assert!(
                err.is_corruption() && err.to_string().contains("too large"),
                "{err}"
            );
        }
        logged_update_fits(1 << 20, 1 << 30).unwrap();
    }

    #[test]
    fn log_records_apply_in_sequence_order() {
        let m = mem();
        let mut replayed = 0;
        apply_log_record(&m, record(1, &[b"a", b"b"]), &mut replayed).unwrap();
        assert_eq!(replayed, 2);
        apply_log_record(&m, record(3, &[b"a"]), &mut replayed).unwrap();
        assert_eq!(replayed, 3);
        assert_eq!(m.len(), 3);
    }

    #[test]
    fn empty_log_record_changes_nothing_even_at_sequence_zero() {
        // Once `sequence + count - 1` underflowed here.
        let m = mem();
        let mut replayed = 0;
        apply_log_record(&m, record(0, &[]), &mut replayed).unwrap();
        assert_eq!(replayed, 0);
        assert!(m.is_empty());
    }

    #[test]
    fn log_record_past_the_largest_sequence_number_is_corruption() {
        // Once an overflow (u64::MAX) or keys whose sequence does not fit the
        // 56 bits of their trailer.
        let m = mem();
        let mut replayed = 0;
        for seq in [u64::MAX, MAX_SEQUENCE_NUMBER + 1, MAX_SEQUENCE_NUMBER] {
            let err = apply_log_record(&m, record(seq, &[b"a", b"b"]), &mut replayed).unwrap_err();
            assert!(err.is_corruption(), "{err}");
        }
        assert!(m.is_empty());
        apply_log_record(&m, record(MAX_SEQUENCE_NUMBER, &[b"a"]), &mut replayed).unwrap();
        assert_eq!(replayed, MAX_SEQUENCE_NUMBER);
    }

    #[test]
    fn log_record_reusing_sequence_numbers_is_corruption() {
        // Once the same internal key went into the memtable twice.
        let m = mem();
        let mut replayed = 0;
        apply_log_record(&m, record(5, &[b"a", b"b"]), &mut replayed).unwrap();
        for seq in [5, 6, 1] {
            let err = apply_log_record(&m, record(seq, &[b"a"]), &mut replayed).unwrap_err();
            assert!(err.to_string().contains("reuses sequence numbers"), "{err}");
        }
        assert_eq!((m.len(), replayed), (2, 6));
    }

    #[test]
    fn damaged_log_record_adds_none_of_its_updates() {
        let m = mem();
        let mut replayed = 0;
        let mut r = record(1, &[b"a", b"b"]);
        r[8] = 1; // count 1, but two updates follow
        assert!(apply_log_record(&m, r, &mut replayed)
            .unwrap_err()
            .is_corruption());
        let mut r = record(1, &[b"a", b"b"]);
        r.truncate(r.len() - 1);
        assert!(apply_log_record(&m, r, &mut replayed)
            .unwrap_err()
            .is_corruption());
        assert!(m.is_empty());
        assert_eq!(replayed, 0);
    }
}

#[cfg(test)]
mod open_tests {
    use super::*;
    use crate::env::{FileSystem, MemFs};

    #[test]
    fn log_file_with_a_number_too_large_is_corruption() {
        // Once `number + 1` overflowed when the log's number was marked used.
        let fs = MemFs::new();
        let dir = Path::new("/db");
        let options = Options {
            fs: Arc::new(fs.clone()),
            create_if_missing: true,
            ..Options::default()
        };
        Db::open(dir, options.clone())
            .unwrap()
            .put(b"k", b"v")
            .unwrap();
        let huge = log_file_name(dir, u64::MAX);
        crate::env::write_file_sync(&fs, &huge, b"").unwrap();
        match Db::open(dir, options.clone()) {
            Err(e) => assert!(
                e.is_corruption() && e.to_string().contains("too large"),
                "{e}"
            ),
            Ok(_) => panic!("opened a database with log {}", huge.display()),
        }
        fs.remove_file(&huge).unwrap();
        let db = Db::open(dir, options).unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    }
}
