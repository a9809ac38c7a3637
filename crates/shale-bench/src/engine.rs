//! The interface every engine adapter implements.
//!
//! An [`Engine`] is one open database, shared by all benchmark threads (so it
//! is `Send + Sync`). Each thread opens its own [`Session`] for the
//! operations: put, get, delete, batched writes and iterators (forward,
//! reverse, seek). Sessions exist because several engines keep per-thread
//! state that must not be shared: WiredTiger sessions and cursors, LMDB read
//! transactions, prepared SQLite statements. For the thread-safe LSM engines
//! a session is a thin handle on the engine.
//!
//! Every setting an engine runs with is reported by [`Engine::settings`], so
//! that a result can always be reproduced.
//!
//! db_bench's `crc32c`, `snappycomp` and `snappyuncomp` lines time the
//! engine's own checksum and compressor, which [`Engine::codecs`] hands out
//! as [`Codecs`]: plain function pointers into the engine's code (or the
//! library it links), or the reason it has none, so those lines compare the
//! engines' code rather than one shared implementation.

use std::fmt;
use std::path::PathBuf;

use crate::flags::{Codec, Flags};

/// An engine adapter failure (the message comes from the engine).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    msg: String,
}

impl Error {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> Error {
        Error { msg: msg.into() }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.msg
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Error {}

/// Result of engine operations.
pub type Result<T> = std::result::Result<T, Error>;

/// The engines this tool can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// This project's engine.
    Shale,
    /// This project's engine through its C library (LevelDB's C API).
    ShaleC,
    /// Google LevelDB through its C API.
    LevelDb,
    /// RocksDB through its C API.
    RocksDb,
    /// SQLite 3, one `WITHOUT ROWID` table.
    Sqlite3,
    /// Kyoto Cabinet's file B+ tree database.
    KyotoTreeDb,
    /// WiredTiger with an LSM tree.
    WiredTigerLsm,
    /// WiredTiger with a B-tree.
    WiredTigerBtree,
    /// LMDB.
    Lmdb,
}

impl EngineKind {
    /// Every engine, in the order reports list them.
    pub const ALL: [EngineKind; 9] = [
        EngineKind::Shale,
        EngineKind::ShaleC,
        EngineKind::LevelDb,
        EngineKind::RocksDb,
        EngineKind::Sqlite3,
        EngineKind::KyotoTreeDb,
        EngineKind::WiredTigerLsm,
        EngineKind::WiredTigerBtree,
        EngineKind::Lmdb,
    ];

    /// The name used by `--engine=`.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Shale => "shale",
            EngineKind::ShaleC => "shale-c",
            EngineKind::LevelDb => "leveldb",
            EngineKind::RocksDb => "rocksdb",
            EngineKind::Sqlite3 => "sqlite3",
            EngineKind::KyotoTreeDb => "kyoto-treedb",
            EngineKind::WiredTigerLsm => "wiredtiger-lsm",
            EngineKind::WiredTigerBtree => "wiredtiger-btree",
            EngineKind::Lmdb => "lmdb",
        }
    }

    /// The engine called `name`.
    pub fn from_name(name: &str) -> Option<EngineKind> {
        EngineKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// All engine names.
    pub fn names() -> Vec<&'static str> {
        EngineKind::ALL.iter().map(|k| k.name()).collect()
    }
}

/// How to open an engine; built from the flags.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The database directory (created by the runner).
    pub path: PathBuf,
    /// Create the database if it does not exist.
    pub create: bool,
    /// Memory buffered before a flush (LSM engines).
    pub write_buffer_size: u64,
    /// Target table file size (LSM engines).
    pub max_file_size: u64,
    /// Table block size (LSM engines).
    pub block_size: u64,
    /// Cache of data, bytes; `None` means the engine's (or study's) default.
    pub cache_size: Option<u64>,
    /// Bloom filter bits per key; `None` means no filter.
    pub bloom_bits: Option<u32>,
    /// Maximum open files.
    pub open_files: i32,
    /// Block compression; engines without compression ignore it, engines
    /// without the codec refuse to open.
    pub compression: Codec,
    /// Reuse the log and MANIFEST when reopening.
    pub reuse_logs: bool,
    /// Benchmark threads that will use the engine at once.
    pub threads: u32,
    /// The database is opened for a synchronous-write benchmark: engines whose
    /// durability is chosen at open time (Kyoto's `OAUTOSYNC`, LMDB without
    /// `MDB_NOSYNC`) open in their synchronous mode.
    pub sync_writes: bool,
    /// WiredTiger: keep the write-ahead log.
    pub wt_log: bool,
    /// Kyoto Cabinet: compressor name when compression is on.
    pub kyoto_zcomp: String,
    /// LMDB: map size in bytes.
    pub lmdb_map_size: u64,
    /// RocksDB: read tables through memory maps.
    pub mmap_read: bool,
    /// Shale: writers insert into the memtable in parallel.
    pub concurrent_memtable_writes: bool,
    /// Shale: flushes cut into several tables where their keys jump.
    pub split_flushes: bool,
    /// Shale: tables carry a whole-table filter.
    pub whole_table_filters: bool,
    /// Shale: sequential loads into a fresh database go through its bulk
    /// loader when the runner hints one ([`Engine::set_bulk_load`]).
    pub bulk_load: bool,
    /// Shale: values of at least this many bytes go to blob files.
    pub blob_threshold: Option<usize>,
    /// Shale: the blob file size that switches the memtable (None: default).
    pub blob_file_size: Option<u64>,
}

impl EngineConfig {
    /// The configuration `flags` ask for, at `path`.
    pub fn from_flags(flags: &Flags, path: PathBuf) -> EngineConfig {
        EngineConfig {
            path,
            create: !flags.use_existing_db,
            write_buffer_size: flags.write_buffer_size,
            max_file_size: flags.max_file_size,
            block_size: flags.block_size,
            cache_size: u64::try_from(flags.cache_size).ok(),
            bloom_bits: u32::try_from(flags.bloom_bits).ok(),
            open_files: flags.open_files,
            compression: flags.compression,
            reuse_logs: flags.reuse_logs,
            threads: flags.threads,
            sync_writes: false,
            wt_log: flags.wt_log,
            mmap_read: flags.mmap_read,
            concurrent_memtable_writes: flags.concurrent_memtable_writes,
            split_flushes: flags.split_flushes,
            whole_table_filters: flags.whole_table_filters,
            bulk_load: flags.bulk_load,
            blob_threshold: (flags.blob_threshold > 0).then_some(flags.blob_threshold as usize),
            blob_file_size: (flags.blob_file_size > 0).then_some(flags.blob_file_size),
            kyoto_zcomp: flags.kyoto_zcomp.clone(),
            lmdb_map_size: flags.lmdb_map_size,
        }
    }
}

/// Capabilities some engines lack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// Atomic multi-key write batches.
    Batch,
    /// Compaction of the whole key range on request.
    Compact,
}

/// An engine's CRC-32C: the checksum LevelDB-format logs and tables carry
/// (Castagnoli polynomial, unmasked: LevelDB's `crc32c::Value`).
#[derive(Debug, Clone)]
pub struct Crc32c {
    /// Which function (and library) the `crc32c` line measures, for the
    /// run's settings.
    pub implementation: String,
    /// The CRC-32C of the bytes.
    pub value: fn(&[u8]) -> u32,
}

/// A snappy compressor and its working memory, used from one thread.
pub trait SnappyCompressor {
    /// Compresses `input` into `output` in the raw snappy format, growing
    /// `output` as needed, and returns the encoded length: the encoding is
    /// `output[..n]`. `None` if the compressor failed.
    fn compress(&mut self, input: &[u8], output: &mut Vec<u8>) -> Option<usize>;
}

/// An engine's snappy codec: the raw snappy format both ways.
#[derive(Debug, Clone)]
pub struct Snappy {
    /// Which code (and library) the snappy lines measure, for the run's
    /// settings.
    pub implementation: String,
    /// A new compressor; each benchmark thread makes one and keeps it, as the
    /// engine's table builder keeps its own.
    pub compressor: fn() -> Box<dyn SnappyCompressor>,
    /// Decodes raw snappy `input` into `output`, whose length must be the
    /// uncompressed length; false if `input` is not a valid encoding of
    /// exactly that many bytes.
    pub uncompress: fn(&[u8], &mut [u8]) -> bool,
}

/// The checksum and compressor of an engine's own code, each `Err(reason)`
/// when the engine has none this tool can call.
#[derive(Debug, Clone)]
pub struct Codecs {
    /// What db_bench's `crc32c` line measures.
    pub crc32c: std::result::Result<Crc32c, String>,
    /// What db_bench's `snappycomp` and `snappyuncomp` lines measure.
    pub snappy: std::result::Result<Snappy, String>,
}

impl Codecs {
    /// No codecs, for the same `reason`.
    pub fn none(reason: &str) -> Codecs {
        Codecs {
            crc32c: Err(reason.to_string()),
            snappy: Err(reason.to_string()),
        }
    }

    /// The settings lines saying what the three lines measure (or why they
    /// are not run).
    pub fn settings(&self) -> Vec<(String, String)> {
        let text = |r: std::result::Result<&str, &str>| match r {
            Ok(implementation) => implementation.to_string(),
            Err(why) => format!("not supported ({why})"),
        };
        vec![
            (
                "crc32c".to_string(),
                text(
                    self.crc32c
                        .as_ref()
                        .map(|c| c.implementation.as_str())
                        .map_err(String::as_str),
                ),
            ),
            (
                "snappycomp/snappyuncomp".to_string(),
                text(
                    self.snappy
                        .as_ref()
                        .map(|s| s.implementation.as_str())
                        .map_err(String::as_str),
                ),
            ),
        ]
    }
}

/// One open database.
pub trait Engine: Send + Sync {
    /// Which engine this is.
    fn kind(&self) -> EngineKind;
    /// The library's version, e.g. `1.23`.
    fn version(&self) -> String;
    /// Every setting the engine runs with, as (name, value) pairs.
    fn settings(&self) -> Vec<(String, String)>;
    /// A handle for one thread's operations.
    fn session(&self) -> Result<Box<dyn Session + '_>>;
    /// Compacts the whole key range (or the engine's nearest equivalent).
    fn compact(&self) -> Result<()>;
    /// A LevelDB-style property (`leveldb.stats`, `leveldb.sstables`), or the
    /// engine's nearest equivalent; `None` if it has none.
    fn property(&self, name: &str) -> Option<String>;
    /// `Some(reason)` if the engine cannot do `feature`.
    fn unsupported(&self, _feature: Feature) -> Option<&'static str> {
        None
    }
    /// Hint that the next sessions load sorted keys into an empty database
    /// from one thread (WiredTiger then uses a bulk cursor, as its write-up).
    fn set_bulk_load(&self, _on: bool) {}
    /// The engine's own CRC-32C and snappy code, for db_bench's `crc32c`,
    /// `snappycomp` and `snappyuncomp` lines (by default, what
    /// [`crate::engines::codecs`] finds for [`Engine::kind`]).
    fn codecs(&self) -> Codecs {
        crate::engines::codecs(self.kind())
    }
}

/// One thread's operations on an [`Engine`].
pub trait Session {
    /// Stores `value` under `key`; `sync` waits for stable storage.
    fn put(&mut self, key: &[u8], value: &[u8], sync: bool) -> Result<()>;
    /// Copies the value of `key` into `value`; false if there is none.
    fn get(&mut self, key: &[u8], value: &mut Vec<u8>) -> Result<bool>;
    /// Removes `key` (absent keys are not an error).
    fn delete(&mut self, key: &[u8], sync: bool) -> Result<()>;
    /// Applies `batch` atomically.
    fn write(&mut self, batch: &Batch, sync: bool) -> Result<()>;
    /// An iterator over a consistent view of the database.
    fn iter(&mut self) -> Result<Box<dyn EngineIter + '_>>;
    /// Called at the end of each write benchmark, inside its timing: engines
    /// whose own db_bench flushed there (SQLite's WAL checkpoint, Kyoto's
    /// synchronize) do so here.
    fn finish_writes(&mut self) -> Result<()> {
        Ok(())
    }
}

/// A positioned cursor over the database, LevelDB style: positioning calls
/// record errors in [`EngineIter::status`] and leave the iterator invalid.
pub trait EngineIter {
    /// Positions at the first key.
    fn seek_to_first(&mut self);
    /// Positions at the last key.
    fn seek_to_last(&mut self);
    /// Positions at the first key at or after `key`.
    fn seek(&mut self, key: &[u8]);
    /// Moves to the next key. Requires `valid()`.
    fn next(&mut self);
    /// Moves to the previous key. Requires `valid()`.
    fn prev(&mut self);
    /// True if positioned at an entry.
    fn valid(&self) -> bool;
    /// The current key. Requires `valid()`.
    fn key(&self) -> &[u8];
    /// The current value. Requires `valid()`.
    fn value(&self) -> &[u8];
    /// The first error met, if any.
    fn status(&self) -> Result<()>;
}

/// One operation of a [`Batch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOp<'a> {
    /// Store a value.
    Put(&'a [u8], &'a [u8]),
    /// Remove a key.
    Delete(&'a [u8]),
}

#[derive(Debug, Clone, Copy)]
struct OpRef {
    put: bool,
    key: (usize, usize),
    value: (usize, usize),
}

/// An engine-neutral write batch: the bytes of all keys and values in one
/// buffer, reused across batches (no allocation once warmed up).
#[derive(Debug, Default, Clone)]
pub struct Batch {
    data: Vec<u8>,
    ops: Vec<OpRef>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Adds a put.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        let k = self.push(key);
        let v = self.push(value);
        self.ops.push(OpRef {
            put: true,
            key: k,
            value: v,
        });
    }

    /// Adds a delete.
    pub fn delete(&mut self, key: &[u8]) {
        let k = self.push(key);
        self.ops.push(OpRef {
            put: false,
            key: k,
            value: (0, 0),
        });
    }

    fn push(&mut self, bytes: &[u8]) -> (usize, usize) {
        let start = self.data.len();
        self.data.extend_from_slice(bytes);
        (start, self.data.len())
    }

    /// Removes every operation.
    pub fn clear(&mut self) {
        self.data.clear();
        self.ops.clear();
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True if there are no operations.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The operations, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = BatchOp<'_>> + '_ {
        self.ops.iter().map(move |op| {
            let key = &self.data[op.key.0..op.key.1];
            if op.put {
                BatchOp::Put(key, &self.data[op.value.0..op.value.1])
            } else {
                BatchOp::Delete(key)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names_round_trip() {
        for kind in EngineKind::ALL {
            assert_eq!(EngineKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(EngineKind::from_name("bangdb"), None);
    }

    #[test]
    fn batch_keeps_operations_in_order_and_reuses_its_buffer() {
        let mut b = Batch::new();
        b.put(b"k1", b"v1");
        b.delete(b"k2");
        b.put(b"k3", b"");
        let ops: Vec<_> = b.iter().collect();
        assert_eq!(
            ops,
            vec![
                BatchOp::Put(b"k1", b"v1"),
                BatchOp::Delete(b"k2"),
                BatchOp::Put(b"k3", b"")
            ]
        );
        let cap = b.data.capacity();
        b.clear();
        assert!(b.is_empty());
        b.put(b"k1", b"v1");
        assert_eq!(b.data.capacity(), cap);
        assert_eq!(b.len(), 1);
    }
}
