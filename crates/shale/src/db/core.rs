//! The database's shared state (`DbInner`, `State`, `SuperVersion`, the
//! writer queue's entries, the live snapshots), opening and closing. The
//! other files of `db/` add to it: recovery (`recovery.rs`), the write path
//! (`write.rs`), point reads (`read.rs`), iterators (`iter.rs`), snapshots
//! (`snapshot.rs`), properties and stats (`properties.rs`), and background
//! work (`background.rs`).
//!
//! Concurrency: one mutex guards the mutable state (memtables being switched,
//! the version set, the writer queue). Readers never take it: they load the
//! current `SuperVersion` (memtable, immutable memtable, version) through an
//! `ArcSwap`, and the visible sequence number from an atomic. Both are
//! published under the mutex after the data they describe is in place.
//! Writers queued behind a leader wait on signals of their own
//! (`handoff.rs`), not on the mutex.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};

use crate::batch::WriteBatch;
use crate::blob::reader::BlobCache;
use crate::blob::writer::BlobWriter;
use crate::db::handoff::{Latch, Signal};
use crate::db::info_log::InfoLog;
use crate::db::wakeup::Doorbell;
use crate::env::FileLock;
use crate::error::{Error, Result};
use crate::filename::{
    current_file_name, current_may_name, descriptor_file_name, lock_file_name, parse_file_name,
    set_current_file, FileType,
};
use crate::keys::{InternalKey, InternalKeyComparator, SequenceNumber, ValueType};
use crate::log;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::sstable::cache::Cache;
use crate::sstable::TableOptions;
use crate::table_cache::TableCache;
use crate::version::edit::VersionEdit;
use crate::version::set::VersionSet;
use crate::version::version::Version;
use crate::version::NUM_LEVELS;

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

/// The multiset of live snapshot sequence numbers of one database.
#[derive(Default)]
pub(crate) struct SnapshotList {
    pub(super) live: Mutex<BTreeMap<SequenceNumber, usize>>,
}

impl SnapshotList {
    /// The oldest live snapshot, if any.
    pub(crate) fn oldest(&self) -> Option<SequenceNumber> {
        self.live.lock().keys().next().copied()
    }

    pub(super) fn release(&self, seq: SequenceNumber) {
        let mut live = self.live.lock();
        if let Some(n) = live.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                live.remove(&seq);
            }
        }
    }
}

/// The states of a queued writer's [`Writer::signal`] (see `db/write.rs`).
pub(crate) mod writer_state {
    /// Queued: waiting to be taken into a group or to lead.
    pub(crate) const WAITING: u8 = 0;
    /// The write path was released while the writer was at the queue's
    /// front: it may lead (it checks under the state mutex).
    pub(crate) const LEAD: u8 = 1;
    /// Its group is in the log: it inserts its own batch into the memtable
    /// (concurrent memtable writes only).
    pub(crate) const INSERT: u8 = 2;
    /// Its group is finished; the outcome is in [`Writer::done`](super::Writer::done).
    pub(crate) const DONE: u8 = 3;
}

/// A write waiting in the queue behind the current leader.
pub(crate) struct Writer {
    /// The update. A leader that takes it into its group takes it out, or,
    /// with concurrent memtable writes, copies it into the group's log
    /// record, stamps it with its first sequence number and leaves it for
    /// the writer to insert.
    pub(crate) batch: Mutex<Option<WriteBatch>>,
    pub(crate) sync: bool,
    /// The outcome, set by the leader before the signal turns `DONE`.
    pub(crate) done: Mutex<Option<Result<()>>>,
    /// The group's memtable and latch, set by the leader before the signal
    /// turns `INSERT`.
    pub(crate) inserts: Mutex<Option<Arc<GroupInserts>>>,
    /// The writer's state (see [`writer_state`]); owned by its thread.
    pub(crate) signal: Signal,
}

impl Writer {
    /// A writer of `batch`, to be waited for by the calling thread.
    pub(crate) fn new(batch: WriteBatch, sync: bool) -> Writer {
        Writer {
            batch: Mutex::new(Some(batch)),
            sync,
            done: Mutex::new(None),
            inserts: Mutex::new(None),
            signal: Signal::new(writer_state::WAITING),
        }
    }

    /// Tells the writer that the write path is free (it leads if it is at
    /// the queue's front when it looks). Called under the state mutex.
    pub(crate) fn wake(&self) {
        self.signal.set(writer_state::LEAD);
    }
}

/// The memtable inserts of a write group's members (concurrent memtable
/// writes): each member inserts its own batch and counts the latch down;
/// the leader waits for the latch before it publishes the group.
pub(crate) struct GroupInserts {
    pub(crate) mem: Arc<MemTable>,
    pub(crate) latch: Latch,
    /// The first failure of a member's insert (a panic, as an error).
    pub(crate) failure: Mutex<Option<Error>>,
}

/// A write group whose inserts are done, waiting for the groups before it
/// to publish (concurrent memtable writes).
pub(crate) struct PublishWaiter {
    /// The group's first sequence number.
    pub(crate) first: SequenceNumber,
    /// Set by the group that publishes the sequence number before `first`,
    /// or by a group that fails.
    pub(crate) signal: Arc<Signal>,
}

/// Per-level work statistics for `leveldb.stats`: what compactions,
/// flushes and bulk loads wrote into the level.
#[derive(Default, Clone, Copy)]
pub(crate) struct CompactionStats {
    pub(crate) micros: u64,
    pub(crate) bytes_read: u64,
    /// Every byte written into the level, ingested tables included.
    pub(crate) bytes_written: u64,
    /// The tables bulk loads placed in the level, and their bytes.
    pub(crate) ingested_files: u64,
    pub(crate) ingested_bytes: u64,
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
    /// The last sequence number given to a write group. The groups past
    /// `versions.last_sequence` (the last published) are in flight: in the
    /// log or being written to it, and not yet published. Only with
    /// concurrent memtable writes may a group be in flight without owning
    /// the write path.
    pub(crate) last_allocated: SequenceNumber,
    /// Groups in flight that wait for the groups before them to publish.
    pub(crate) publish_waiters: Vec<PublishWaiter>,
    pub(crate) bg_error: Option<Error>,
    pub(crate) manual: Option<ManualCompaction>,
    pub(crate) pending_outputs: BTreeSet<u64>,
    /// The outputs of the compaction running, also in `pending_outputs`
    /// until it ends (a bulk load's tables are pending meanwhile too).
    pub(crate) compaction_outputs: Vec<u64>,
    /// The level and input range of the compaction running, for the
    /// flushes made in its middle (see `flush_split::Running`).
    pub(crate) compacting: Option<crate::db::flush_split::Running>,
    pub(crate) stats: [CompactionStats; NUM_LEVELS],
    pub(crate) bg_busy: bool,
    /// An ingestion is installing its tables: the background thread starts
    /// no new step until it is done (see `db/ingest.rs`).
    pub(crate) ingesting: bool,
    /// The blob file of the memtable, once a large value was written to it.
    pub(crate) mem_blob: Option<u64>,
    /// The blob file of the immutable memtable, until its table is installed.
    pub(crate) imm_blob: Option<u64>,
    /// Values garbage collection moved to new blob files since the open.
    pub(crate) blob_gc_values: u64,
    /// The waits of writers for room since the open, by cause.
    pub(crate) stalls: WriteStalls,
    /// How far writers are behind on level 0's slowdown (see `db/write/throttle.rs`).
    pub(crate) throttle: crate::db::write::throttle::WriteThrottle,
    /// The last synchronous write group (see `DbInner::gather_sync_group`).
    pub(crate) last_sync_group: Option<SyncGroup>,
}

/// A synchronous write group once its log record was synced.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SyncGroup {
    /// Synchronous writers in the group, the leader included.
    pub(crate) writers: usize,
    /// When its sync ended.
    pub(crate) ended: std::time::Instant,
    /// How long its log append and sync took.
    pub(crate) took: std::time::Duration,
}

/// Why a writer waited for room (see `make_room_for_write`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum StallCause {
    /// Level 0 reached the slowdown trigger: a short delay.
    Level0Slowdown,
    /// The memtable was full and the previous one was still being flushed.
    MemtableFlush,
    /// Level 0 reached the stop trigger.
    Level0Stop,
    /// The memtable was full and groups still inserted into it.
    GroupsInFlight,
}

/// Counts and total time of the writers' waits for room, by cause.
#[derive(Default, Clone, Copy, Debug)]
pub(crate) struct WriteStalls {
    /// `(waits, microseconds)` per [`StallCause`], in its order.
    pub(crate) by_cause: [(u64, u64); 4],
}

impl StallCause {
    /// Every cause, in the order of [`WriteStalls::by_cause`].
    pub(crate) const ALL: [StallCause; 4] = [
        StallCause::Level0Slowdown,
        StallCause::MemtableFlush,
        StallCause::Level0Stop,
        StallCause::GroupsInFlight,
    ];

    /// The cause's name in `shale.write-stalls`.
    pub(crate) fn label(self) -> &'static str {
        match self {
            StallCause::Level0Slowdown => "level-0 slowdown",
            StallCause::MemtableFlush => "memtable flush",
            StallCause::Level0Stop => "level-0 stop",
            StallCause::GroupsInFlight => "groups in flight",
        }
    }
}

impl WriteStalls {
    pub(crate) fn add(&mut self, cause: StallCause, waited: std::time::Duration) {
        let entry = &mut self.by_cause[cause as usize];
        entry.0 = entry.0.saturating_add(1);
        entry.1 = entry
            .1
            .saturating_add(u64::try_from(waited.as_micros()).unwrap_or(u64::MAX));
    }
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
    /// The blob file of the memtable (value separation; see `db/write.rs`).
    /// Lock order: `state` before `blob`, never the reverse.
    pub(crate) blob: Mutex<Option<BlobWriter>>,
    /// The blob file of the memtable the current one replaced, until it is
    /// synced (by a synchronous write, or by the flush before the table that
    /// points into it is installed).
    pub(crate) prev_blob: Mutex<Option<BlobWriter>>,
    /// Bytes written to the memtable's blob file: the memtable is switched
    /// once they pass `blob_file_size`, so that blob files, and the values
    /// recovery reads back to check a log's pointers, stay bounded.
    pub(crate) blob_bytes: AtomicU64,
    /// Reads separated values.
    pub(crate) blob_cache: Arc<BlobCache>,
    /// Wakes the background thread; may be rung with or without `state`.
    pub(crate) bg_cv: Doorbell,
    /// Signalled whenever background work finishes a step.
    pub(crate) work_done_cv: Condvar,
    pub(crate) super_version: ArcSwap<SuperVersion>,
    pub(crate) visible_sequence: AtomicU64,
    /// The length of `State::writers`, stored whenever it changes: a hint a
    /// leader reads without the mutex (see `db/write.rs`).
    pub(crate) queued_writers: AtomicUsize,
    pub(crate) snapshots: Arc<SnapshotList>,
    pub(crate) shutting_down: AtomicBool,
    pub(crate) has_imm: AtomicBool,
    /// Counts iterators, to give each its own read-sampling seed.
    pub(crate) iterators_created: AtomicU64,
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
            whole_table_filter: options.whole_table_filters,
            block_size: options.block_size,
            block_restart_interval: options.block_restart_interval,
            compression: options.compression,
            zstd_compression_level: options.zstd_compression_level,
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
            last_allocated: 0,
            publish_waiters: Vec::new(),
            bg_error: None,
            manual: None,
            pending_outputs: BTreeSet::new(),
            compaction_outputs: Vec::new(),
            compacting: None,
            stats: Default::default(),
            bg_busy: false,
            ingesting: false,
            mem_blob: None,
            imm_blob: None,
            blob_gc_values: 0,
            stalls: WriteStalls::default(),
            throttle: Default::default(),
            last_sync_group: None,
        };
        let blob_cache = Arc::new(BlobCache::new(fs.clone(), &dir, options.comparator.clone()));
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
            blob: Mutex::new(None),
            prev_blob: Mutex::new(None),
            blob_bytes: AtomicU64::new(0),
            blob_cache,
            bg_cv: Doorbell::default(),
            work_done_cv: Condvar::new(),
            visible_sequence: AtomicU64::new(0),
            queued_writers: AtomicUsize::new(0),
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
        // A blob file is flushed before the log record that points into it
        // is written; closing it only releases it.
        drop(self.inner.blob.lock().take());
        drop(self.inner.prev_blob.lock().take());
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
    o.blob_file_size = o.blob_file_size.clamp(64 << 10, 1 << 40);
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
    /// earlier ones, a history that never was. Only a synchronous write
    /// calls it; once the memtable the log holds is flushed, the background
    /// thread closes the log without a sync, its writes being in a synced
    /// table. (A power cut that keeps some of a newer log but loses the
    /// unsynced tail of this one is caught by recovery, which stops at a
    /// log that does not continue the sequence numbers of the one before.)
    /// Once done, this is a check of an empty slot.
    pub(crate) fn sync_prev_log(&self) -> Result<()> {
        let mut prev = self.prev_log.lock();
        // The replaced memtable's blob file first: its records are what the
        // replaced log's pointers lead to.
        let mut prev_blob = self.prev_blob.lock();
        if let Some(blob) = prev_blob.as_mut() {
            blob.finish()
                .map_err(|e| blob_error(blob.number(), blob.path(), e))?;
            *prev_blob = None;
        }
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
}

/// The error of a failed write or sync of blob file `number` at `path`:
/// kept as it is when it names the file already (an I/O error), else
/// wrapped to name it.
pub(crate) fn blob_error(number: u64, path: &Path, e: Error) -> Error {
    match e {
        e @ Error::Io { .. } => e,
        e => Error::Background(format!(
            "blob file #{number} ({}) failed: {e}",
            path.display()
        )),
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

/// Applies the updates of `batch` to `mem`, numbering them from the batch's sequence.
pub(crate) fn insert_into(mem: &MemTable, batch: &WriteBatch) -> Result<()> {
    let mut seq = batch.sequence();
    batch.for_each(|t, key, value| {
        mem.add(
            seq,
            t,
            key,
            if t == ValueType::Deletion { &[] } else { value },
        );
        seq += 1;
        Ok(())
    })
}
