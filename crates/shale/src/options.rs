//! Options for opening a database and for writing, with LevelDB's meanings
//! and defaults, but for one: tables carry a bloom filter unless told not to
//! (see `Options::filter_policy`). `CompressionType` is defined with the table format
//! (`sstable/format.rs`) and `ReadOptions` with the snapshot it names
//! (`db/snapshot.rs`).

use std::sync::Arc;

use crate::comparator::{BytewiseComparator, Comparator};
use crate::env::{default_fs, FileSystem};
use crate::filter_policy::FilterPolicy;
use crate::sstable::bloom::BloomFilterPolicy;
use crate::sstable::cache::Cache;
use crate::sstable::format::CompressionType;

/// Bits per key of the default filter (`Options::filter_policy`).
const DEFAULT_BLOOM_BITS_PER_KEY: usize = 10;

/// Options for opening a database.
///
/// ```
/// let mut opts = shale::Options::default();
/// opts.create_if_missing = true;
/// opts.write_buffer_size = 64 << 20;
/// assert_eq!(opts.block_size, 4096);
/// ```
#[derive(Clone)]
pub struct Options {
    /// Orders user keys. Default: bytewise. Must match the comparator the database was created with.
    pub comparator: Arc<dyn Comparator>,
    /// Create the database if it is missing. Default: false.
    pub create_if_missing: bool,
    /// Fail if the database already exists. Default: false.
    pub error_if_exists: bool,
    /// Check data aggressively and stop at the first corruption. Default: false.
    pub paranoid_checks: bool,
    /// Where files live. Default: the operating system's file system.
    pub fs: Arc<dyn FileSystem>,
    /// Bytes of writes collected in memory before they are flushed to a table. Default: 4 MB.
    pub write_buffer_size: usize,
    /// Table files kept open at once. Default: 1000.
    pub max_open_files: usize,
    /// Cache for uncompressed blocks, shareable between databases. Default: none given, an 8 MB one is made.
    pub block_cache: Option<Arc<Cache>>,
    /// Approximate uncompressed size of a table's data block. Default: 4 KB.
    pub block_size: usize,
    /// Keys between restart points of a block's key prefix compression. Default: 16.
    pub block_restart_interval: usize,
    /// Bytes written to a table file before a new one is started. Default: 2 MB.
    pub max_file_size: usize,
    /// Block compression of every table that [`compression_per_level`](Self::compression_per_level)
    /// and [`bottommost_compression`](Self::bottommost_compression) leave to it. Default: Snappy,
    /// which every LevelDB reads; [`CompressionType::Zstd`] tables need a LevelDB newer than 1.23
    /// built with zstd, and [`CompressionType::Lz4`] tables are read by Shale only.
    pub compression: CompressionType,
    /// The Zstandard level of [`CompressionType::Zstd`] blocks, as LevelDB's
    /// `zstd_compression_level`: higher compresses more and writes slower; 0 means zstd's default
    /// (3), negative levels are faster still. Default: 1.
    pub zstd_compression_level: i32,
    /// Compression by output level, as RocksDB's option of this name: entry `i` is used for
    /// tables written to level `i`, the last entry for every deeper level. Empty: every level uses
    /// [`compression`](Self::compression). A table moved to another level whole keeps its blocks;
    /// bulk-loaded tables ([`Db::bulk_loader`](crate::Db::bulk_loader)), whose level is known only
    /// once written, use [`bottommost_compression`](Self::bottommost_compression) if set, else the
    /// last entry, as RocksDB does for files it ingests. Default: empty.
    ///
    /// ```
    /// use shale::CompressionType::{Lz4, Snappy, Zstd};
    /// let opts = shale::Options {
    ///     // Fast codecs where tables are rewritten often, zstd for levels 2 and deeper.
    ///     compression_per_level: vec![Lz4, Snappy, Zstd],
    ///     ..Default::default()
    /// };
    /// # let _ = opts;
    /// ```
    pub compression_per_level: Vec<CompressionType>,
    /// Compression of tables that a compaction writes to the bottommost level (the output level
    /// when no deeper level holds a table), which holds most of the data; overrides the other
    /// two options there. Flushes of the memtable never use it. `None`: no override. Default:
    /// none.
    ///
    /// ```
    /// let opts = shale::Options {
    ///     bottommost_compression: Some(shale::CompressionType::Zstd),
    ///     zstd_compression_level: 3,
    ///     ..Default::default()
    /// };
    /// # let _ = opts;
    /// ```
    pub bottommost_compression: Option<CompressionType>,
    /// Append to the existing log and MANIFEST on open instead of starting new ones, which makes
    /// opening faster (no flush of the recovered log to a table). Each is reused only if it ends
    /// cleanly after its last record; the log only if it fits in the write buffer, the MANIFEST
    /// only if smaller than `max_file_size`. Default: false.
    pub reuse_logs: bool,
    /// A filter stored in each table, so that a read skips the tables that cannot hold its key
    /// (most of those it would otherwise search, for a key that is absent or in a deep level).
    ///
    /// Default: a bloom filter of 10 bits per key (about 1% false positives, 1.25 bytes of
    /// memory per key while a table is open), the filter LevelDB ships
    /// (`leveldb.BuiltinBloomFilter2`), so the tables stay LevelDB's: LevelDB reads them
    /// whatever its options, and uses their filters when opened with `NewBloomFilterPolicy(10)`.
    /// Here Shale departs from LevelDB's defaults, which write no filter; `None` does the same.
    ///
    /// ```
    /// let opts = shale::Options::default();
    /// assert_eq!(opts.filter_policy.as_ref().map(|f| f.name()), Some("leveldb.BuiltinBloomFilter2"));
    /// let no_filter = shale::Options { filter_policy: None, ..Default::default() };
    /// # let _ = no_filter;
    /// ```
    pub filter_policy: Option<Arc<dyn FilterPolicy>>,
    /// Beside the filter policy's filters, write in each table one filter over all of its
    /// user keys (a blocked bloom filter at the policy's bits per key, about 1.25 bytes per
    /// key more on disk at 10), which a lookup probes in one 64-byte line before it reads
    /// the table's index. A read passes over a table that cannot hold its key in one wait
    /// for memory instead of four or five. The filter is a meta block of Shale's own
    /// (`fullfilter.shale.BlockedBloom1`), which LevelDB ignores: the tables stay
    /// LevelDB's. While a table with such a filter is open, its per-block filter is not
    /// held in memory. Needs a policy that gives its bits per key
    /// ([`FilterPolicy::whole_table_bits_per_key`]: the built-in bloom filter does);
    /// tables are read with their whole-table filter whenever they have one and the
    /// policy does. Default: true.
    ///
    /// ```
    /// assert!(shale::Options::default().whole_table_filters);
    /// ```
    pub whole_table_filters: bool,
    /// Let writes insert into the memtable in parallel (RocksDB's
    /// `allow_concurrent_memtable_write`, with its `enable_pipelined_write`):
    /// each writer of a write group inserts its own batch once the group is
    /// in the log, and the next group may be logged while the previous one
    /// inserts. Writes stay atomic and in sequence order: a group becomes
    /// visible to reads only once it and every group before it are wholly in
    /// the memtable. Off, the group's leader inserts every batch of the group
    /// itself, and the next group waits for that. Default: false.
    pub concurrent_memtable_writes: bool,
    /// Value separation (WiscKey-style): a value of at least this many bytes is written once,
    /// to a blob file (`NNNNNN.blob`), and the log, memtable and tables hold a small pointer to
    /// it instead, so that compactions do not copy it. `None` (the default) keeps every value in
    /// the tree, and the database byte-for-byte LevelDB-compatible. A database opened once
    /// with it set is marked as using blob files in its MANIFEST, which LevelDB then refuses to
    /// open; Shale reads it whatever this option says. With it set, the leader of a write group
    /// inserts the whole group, so `concurrent_memtable_writes` has no effect; bulk loads
    /// (`Db::bulk_loader`) keep their values in their tables.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let options = shale::Options {
    ///     create_if_missing: true,
    ///     blob_threshold: Some(4096),
    ///     ..Default::default()
    /// };
    /// let db = shale::Db::open(dir.path(), options)?;
    /// db.put(b"big", &[7u8; 10_000])?; // to a blob file
    /// db.put(b"small", b"v")?; // in the tree
    /// assert_eq!(db.get(b"big")?.map(|v| v.len()), Some(10_000));
    /// # Ok(()) }
    /// ```
    pub blob_threshold: Option<usize>,
    /// Garbage collection of blob files by age (RocksDB's `blob_garbage_collection_age_cutoff`):
    /// a compaction that meets a pointer into one of the oldest `blob_gc_age_cutoff` of the live
    /// blob files (a fraction, by file number, rounded down) copies the value into a blob file
    /// of its own and keeps the new pointer, so that old blob files stop being pointed into and
    /// are deleted. 0 turns it off (values of overwritten and deleted keys then stay on disk as
    /// long as anything else in their blob file lives). Default: 0.25.
    ///
    /// ```
    /// let options = shale::Options {
    ///     blob_threshold: Some(4096),
    ///     blob_gc_age_cutoff: 0.5,
    ///     ..Default::default()
    /// };
    /// assert!(options.blob_gc_age_cutoff > 0.25);
    /// ```
    pub blob_gc_age_cutoff: f64,
    /// With value separation, how large a memtable's blob file grows before the memtable is
    /// switched (and the file closed), whatever room the memtable itself has left: the values
    /// in a blob file take no memory, so they are bounded apart from `write_buffer_size`, which
    /// then counts only the keys and pointers the memtable holds. Smaller files let garbage
    /// collection free space sooner; larger ones mean fewer, larger flushes. At least 64 KB.
    /// Default: 256 MB (RocksDB's `blob_file_size`).
    ///
    /// ```
    /// let options = shale::Options {
    ///     blob_threshold: Some(4096),
    ///     blob_file_size: 64 << 20,
    ///     ..Default::default()
    /// };
    /// assert!(options.blob_file_size < shale::Options::default().blob_file_size);
    /// ```
    pub blob_file_size: u64,
    /// Cut a memtable flush into several tables where its keys jump: writers that each
    /// append keys in order to their own part of the key space (one per thread, tenant or
    /// prefix) then get one table per run, which lands in the gap its stream left and moves
    /// down the levels without being merged with the other streams. Only with the bytewise
    /// order; random keys and a single stream are flushed as one table either way. The
    /// tables are LevelDB's. Default: false.
    ///
    /// ```
    /// let options = shale::Options { split_flushes: true, ..Default::default() };
    /// assert!(options.split_flushes);
    /// ```
    pub split_flushes: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            comparator: Arc::new(BytewiseComparator),
            create_if_missing: false,
            error_if_exists: false,
            paranoid_checks: false,
            fs: default_fs(),
            write_buffer_size: 4 << 20,
            max_open_files: 1000,
            block_cache: None,
            block_size: 4 << 10,
            block_restart_interval: 16,
            max_file_size: 2 << 20,
            compression: CompressionType::Snappy,
            zstd_compression_level: 1,
            compression_per_level: Vec::new(),
            bottommost_compression: None,
            reuse_logs: false,
            filter_policy: Some(Arc::new(BloomFilterPolicy::new(DEFAULT_BLOOM_BITS_PER_KEY))),
            whole_table_filters: true,
            concurrent_memtable_writes: false,
            blob_threshold: None,
            blob_gc_age_cutoff: 0.25,
            blob_file_size: 256 << 20,
            split_flushes: false,
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("comparator", &self.comparator.name())
            .field("create_if_missing", &self.create_if_missing)
            .field("error_if_exists", &self.error_if_exists)
            .field("paranoid_checks", &self.paranoid_checks)
            .field("write_buffer_size", &self.write_buffer_size)
            .field("max_open_files", &self.max_open_files)
            .field("block_size", &self.block_size)
            .field("block_restart_interval", &self.block_restart_interval)
            .field("max_file_size", &self.max_file_size)
            .field("compression", &self.compression)
            .field("zstd_compression_level", &self.zstd_compression_level)
            .field("compression_per_level", &self.compression_per_level)
            .field("bottommost_compression", &self.bottommost_compression)
            .field("reuse_logs", &self.reuse_logs)
            .field(
                "filter_policy",
                &self.filter_policy.as_ref().map(|p| p.name().to_string()),
            )
            .field(
                "concurrent_memtable_writes",
                &self.concurrent_memtable_writes,
            )
            .field("blob_threshold", &self.blob_threshold)
            .field("blob_gc_age_cutoff", &self.blob_gc_age_cutoff)
            .field("blob_file_size", &self.blob_file_size)
            .field("split_flushes", &self.split_flushes)
            .finish()
    }
}

impl Options {
    /// The compression of a table written to `level`; `bottommost` when a compaction writes it
    /// and no deeper level holds a table.
    pub(crate) fn compression_for_level(&self, level: usize, bottommost: bool) -> CompressionType {
        if bottommost {
            if let Some(t) = self.bottommost_compression {
                return t;
            }
        }
        match self.compression_per_level.as_slice() {
            [] => self.compression,
            per_level => per_level[level.min(per_level.len() - 1)],
        }
    }
}

/// Options for writes.
///
/// ```
/// let durable = shale::WriteOptions { sync: true, ..Default::default() };
/// assert!(durable.sync);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// Wait for the write to reach stable storage (fdatasync) before returning. Default: false.
    pub sync: bool,
    /// Never wait: if the write cannot start at once, because another write
    /// is under way or queued, the memtable is full and must be switched, or
    /// level 0 asks writers to slow down, fail with [`Error::Incomplete`]
    /// (having written nothing) instead of waiting. The write itself, and its
    /// `sync`, still take the time they take. For callers that hold a lock
    /// of their own while writing (an interpreter lock, say) and would rather
    /// release it before waiting. Default: false.
    ///
    /// [`Error::Incomplete`]: crate::Error::Incomplete
    pub no_slowdown: bool,
}
