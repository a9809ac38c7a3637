//! What a database tells about itself: `Db::stats` (typed values),
//! `Db::property` (LevelDB's property strings) and `Db::approximate_sizes`.

use std::fmt;
use std::sync::atomic::Ordering;

use crate::db::core::{Db, DbInner, StallCause};
use crate::keys::{InternalKey, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK};
use crate::version::NUM_LEVELS;

/// The property holding the error that stopped writes, if any.
const BACKGROUND_ERROR_PROPERTY: &str = "shale.background-error";

/// A database's state and work counters, from [`Db::stats`].
///
/// The same figures answer the LevelDB property strings of
/// [`Db::property`] (`leveldb.num-files-at-level<N>`, `leveldb.stats`,
/// `leveldb.approximate-memory-usage`). More fields may come: the struct is
/// `#[non_exhaustive]`.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"k", b"v")?;
/// let stats = db.stats();
/// assert_eq!(stats.last_sequence, 1);
/// assert!(stats.memtable_bytes > 0);
/// assert_eq!(stats.levels.len(), 7);
/// assert_eq!(stats.levels.iter().map(|l| l.files).sum::<usize>(), 0);
/// let snap = db.snapshot();
/// assert_eq!(db.stats().oldest_snapshot, Some(snap.sequence()));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Level 0 first: the table files of each level and the compactions
    /// that wrote into it.
    pub levels: Vec<LevelStats>,
    /// Approximate bytes held by the memtable that takes writes.
    pub memtable_bytes: usize,
    /// Approximate bytes held by the memtable being flushed, if one is.
    pub immutable_memtable_bytes: Option<usize>,
    /// Bytes of blocks held by the block cache.
    pub block_cache_bytes: usize,
    /// The sequence number of the last write readers see.
    pub last_sequence: u64,
    /// The sequence number of the oldest snapshot not yet dropped, if any:
    /// compactions keep every entry it sees.
    pub oldest_snapshot: Option<u64>,
}

/// One level's files and the work that wrote into it, in [`Stats::levels`].
///
/// The work counters count from the database's opening, in this process:
/// flushes and compactions into the level, and bulk loads
/// ([`Db::bulk_loader`]) that placed tables in it.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// for i in 0..1000u32 {
///     db.put(format!("key{i:04}").as_bytes(), b"value")?;
/// }
/// db.compact_range(None, None)?;
/// let stats = db.stats();
/// let deepest = stats.levels.iter().rev().find(|l| l.files > 0).unwrap();
/// assert!(deepest.bytes > 0 && deepest.compaction_bytes_written > 0);
/// assert_eq!(deepest.ingested_files, 0);
///
/// // A bulk load into a range no level holds goes to the deepest level.
/// let done = db.ingest_sorted([("zz1", "a"), ("zz2", "b")])?;
/// let level = db.stats().levels[6];
/// assert_eq!(level.ingested_files, 1);
/// assert_eq!(level.ingested_bytes, done.tables[0].bytes);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LevelStats {
    /// Table files in the level.
    pub files: usize,
    /// Their total size in bytes.
    pub bytes: u64,
    /// Time spent by compactions and flushes writing into the level, in
    /// microseconds, and by bulk loads finishing (the table that was open,
    /// any rewrite, the install) with tables placed in it, shared between
    /// levels by bytes. A loader's time between entries, while the caller
    /// adds them, is the caller's and is not counted.
    pub compaction_micros: u64,
    /// Bytes those compactions read.
    pub compaction_bytes_read: u64,
    /// Bytes written into the level: by compactions and flushes, and the
    /// tables bulk loads placed in it (`ingested_bytes`).
    pub compaction_bytes_written: u64,
    /// Table files bulk loads placed in the level.
    pub ingested_files: u64,
    /// Their bytes (also counted in `compaction_bytes_written`).
    pub ingested_bytes: u64,
}

impl Db {
    /// The database's state and work counters (see [`Stats`]).
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// let files: usize = db.stats().levels.iter().map(|l| l.files).sum();
    /// assert_eq!(files, 0);
    /// # Ok(()) }
    /// ```
    pub fn stats(&self) -> Stats {
        let inner = &self.inner;
        let st = inner.state.lock();
        let current = st.versions.current();
        let levels = (0..NUM_LEVELS)
            .map(|level| LevelStats {
                files: current.num_files(level),
                bytes: current.level_bytes(level),
                compaction_micros: st.stats[level].micros,
                compaction_bytes_read: st.stats[level].bytes_read,
                compaction_bytes_written: st.stats[level].bytes_written,
                ingested_files: st.stats[level].ingested_files,
                ingested_bytes: st.stats[level].ingested_bytes,
            })
            .collect();
        Stats {
            levels,
            memtable_bytes: st.mem.approximate_memory_usage(),
            immutable_memtable_bytes: st.imm.as_ref().map(|m| m.approximate_memory_usage()),
            block_cache_bytes: inner.options.block_cache.as_ref().map_or(0, |c| c.usage()),
            last_sequence: inner.visible_sequence.load(Ordering::Acquire),
            oldest_snapshot: inner.snapshots.oldest(),
        }
    }
}

impl Db {
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
    /// in background work), empty while there is none;
    /// `shale.write-stalls`, how often and how long writers waited for room
    /// since the open, by cause (the short delays once level 0 reaches its
    /// slowdown trigger, a full memtable whose predecessor is still being
    /// flushed, level 0 at its stop trigger, a full memtable that groups
    /// still insert into); `None` for other names.
    ///
    /// `leveldb.stats` is LevelDB's table of levels: files, size, and the
    /// time, bytes read and bytes written of the work into each level since
    /// the database was opened (the figures of [`LevelStats`]). Tables a
    /// bulk load placed count as written into their levels; after one, a
    /// second table, `Bulk loads`, gives the files and bytes of each level
    /// that came from them.
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
    /// // Blob files (value separation): how many are live, their bytes, and
    /// // the values garbage collection moved out of old ones.
    /// assert_eq!(
    ///     db.property("shale.blob-stats").as_deref(),
    ///     Some("files: 0\nbytes: 0\ngc moved values: 0\n")
    /// );
    /// // Waits of writers for room, by cause: none yet.
    /// assert!(db.property("shale.write-stalls").unwrap().contains("memtable flush: 0 waits, 0 us"));
    /// assert_eq!(db.property("no.such.property"), None);
    /// # Ok(()) }
    /// ```
    pub fn property(&self, name: &str) -> Option<String> {
        self.inner.property(name)
    }
}

impl DbInner {
    fn property(&self, name: &str) -> Option<String> {
        if name == BACKGROUND_ERROR_PROPERTY {
            let st = self.state.lock();
            return Some(
                st.bg_error
                    .as_ref()
                    .map_or(String::new(), |e| e.to_string()),
            );
        }
        if name == "shale.blob-stats" {
            let (files, moved) = {
                let mut st = self.state.lock();
                let mut files = st.versions.live_blob_files_all_versions();
                files.extend(st.mem_blob);
                files.extend(st.imm_blob);
                (files, st.blob_gc_values)
            };
            let bytes: u64 = files
                .iter()
                .filter_map(|&n| {
                    let path = crate::filename::blob_file_name(&self.dir, n);
                    self.options.fs.file_size(&path).ok()
                })
                .sum();
            return Some(format!(
                "files: {}\nbytes: {bytes}\ngc moved values: {moved}\n",
                files.len()
            ));
        }
        if name == "shale.write-stalls" {
            let stalls = self.state.lock().stalls;
            let mut s = String::new();
            for cause in StallCause::ALL {
                let (count, micros) = stalls.by_cause[cause as usize];
                s.push_str(&format!("{}: {count} waits, {micros} us\n", cause.label()));
            }
            return Some(s);
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
                    if files > 0 || stats.micros > 0 || stats.bytes_written > 0 {
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
                // LevelDB's table above counts ingested tables as written
                // into their levels; this one, only there after a bulk
                // load, tells them apart.
                if st.stats.iter().any(|l| l.ingested_files > 0) {
                    s.push_str(
                        "\n                 Bulk loads\nLevel  Files Write(MB)\n---------------------------\n",
                    );
                    for (level, stats) in st.stats.iter().enumerate() {
                        if stats.ingested_files > 0 {
                            s.push_str(&format!(
                                "{:3} {:8} {:9.0}\n",
                                level,
                                stats.ingested_files,
                                stats.ingested_bytes as f64 / 1048576.0
                            ));
                        }
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

impl fmt::Debug for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db")
            .field("dir", &self.inner.dir)
            .finish_non_exhaustive()
    }
}
