//! `Db::stats`: what the engine tracks about itself, as typed values.

use std::fmt;
use std::sync::atomic::Ordering;

use crate::db::core::Db;
use crate::version::NUM_LEVELS;

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

/// One level's files and compaction work, in [`Stats::levels`].
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
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LevelStats {
    /// Table files in the level.
    pub files: usize,
    /// Their total size in bytes.
    pub bytes: u64,
    /// Time spent by compactions (and flushes) writing into the level, in
    /// microseconds.
    pub compaction_micros: u64,
    /// Bytes those compactions read.
    pub compaction_bytes_read: u64,
    /// Bytes those compactions wrote.
    pub compaction_bytes_written: u64,
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

impl fmt::Debug for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db")
            .field("dir", &self.inner.dir)
            .finish_non_exhaustive()
    }
}
