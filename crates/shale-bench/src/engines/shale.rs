//! Shale, this project's engine, through its public database API. Built only
//! with the `shale` cargo feature.
//!
//! Configured like LevelDB in db_bench: write buffer, table file size, block
//! size, open files, compression, `reuse_logs` and
//! `concurrent_memtable_writes` from the flags, an LRU block
//! cache of `--cache_size` bytes (none given means Shale's own 8 MB cache)
//! and a bloom filter of `--bloom_bits` bits per key (unset: Shale's
//! default, 10 bits per key; 0: no filter).
//!
//! With `--bulk_load=1` it takes the runner's bulk-load hint as WiredTiger
//! does for its bulk cursor: a sequential load into a fresh database from
//! one thread goes through `Db::bulk_loader`, straight into tables, and the
//! loader is finished (tables synced, installed by one MANIFEST record) in
//! `finish_writes`, inside the benchmark's timing.
//!
//! Its codecs for db_bench's `crc32c` and snappy lines are the code Shale
//! runs: `shale::internals::crc32c`, the CRC-32C of its log records and table
//! blocks, and the `snap` crate's raw encoder and decoder called as the table
//! builder (`sstable/table_builder.rs`: one encoder kept, the output buffer
//! grown to the largest encoding and reused) and the block reader
//! (`sstable/format.rs`: a decoder into a buffer of the uncompressed length)
//! call them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::util::{self, setting};
use crate::engine::{
    Batch, BatchOp, Codecs, Crc32c, Engine, EngineConfig, EngineIter, EngineKind, Error, Result,
    Session, Snappy, SnappyCompressor,
};
use crate::flags::Codec;

fn err(e: shale::Error) -> Error {
    Error::new(e.to_string())
}

/// An open Shale database.
pub struct ShaleEngine {
    db: shale::Db,
    settings: Vec<(String, String)>,
    /// `--bulk_load`: the bulk-load hint is taken.
    bulk_load: bool,
    /// The runner's hint: the next sessions load sorted keys into an empty
    /// database from one thread.
    bulk: AtomicBool,
}

impl ShaleEngine {
    /// Opens (or creates) the database in `cfg.path`.
    pub fn open(cfg: &EngineConfig) -> Result<ShaleEngine> {
        let mut opts = shale::Options {
            create_if_missing: cfg.create,
            write_buffer_size: cfg.write_buffer_size as usize,
            max_open_files: cfg.open_files.max(0) as usize,
            block_size: cfg.block_size as usize,
            max_file_size: cfg.max_file_size as usize,
            compression: match cfg.compression {
                Codec::None => shale::CompressionType::None,
                Codec::Snappy => shale::CompressionType::Snappy,
                Codec::Zstd => shale::CompressionType::Zstd,
                Codec::Lz4 => shale::CompressionType::Lz4,
            },
            reuse_logs: cfg.reuse_logs,
            concurrent_memtable_writes: cfg.concurrent_memtable_writes,
            split_flushes: cfg.split_flushes,
            whole_table_filters: cfg.whole_table_filters,
            blob_threshold: cfg.blob_threshold,
            ..Default::default()
        };
        if let Some(bytes) = cfg.blob_file_size {
            opts.blob_file_size = bytes;
        }
        if let Some(bytes) = cfg.cache_size {
            opts.block_cache = Some(shale::Cache::new(bytes as usize));
        }
        // Unset: Shale's default (a bloom filter of 10 bits per key); 0: no
        // filter (LevelDB makes a filter of no use then: 0 bits a key).
        match cfg.bloom_bits {
            None => {}
            Some(0) => opts.filter_policy = None,
            Some(bits) => {
                let policy: Arc<dyn shale::FilterPolicy> =
                    Arc::new(shale::BloomFilterPolicy::new(bits as _));
                opts.filter_policy = Some(policy);
            }
        }
        let settings = vec![
            setting("create_if_missing", cfg.create),
            setting("write_buffer_size", util::bytes(cfg.write_buffer_size)),
            setting("max_file_size", util::bytes(cfg.max_file_size)),
            setting("block_size", cfg.block_size),
            setting("block_restart_interval", opts.block_restart_interval),
            setting("max_open_files", opts.max_open_files),
            setting(
                "compression",
                match cfg.compression {
                    Codec::Zstd => format!("zstd (level {})", opts.zstd_compression_level),
                    c => c.name().to_string(),
                },
            ),
            setting("reuse_logs", cfg.reuse_logs),
            setting("concurrent_memtable_writes", cfg.concurrent_memtable_writes),
            setting("split_flushes", cfg.split_flushes),
            setting("whole_table_filters", cfg.whole_table_filters),
            setting(
                "bulk_load",
                if cfg.bulk_load {
                    "on: fillseq/fillbatch/putseq on a fresh database, 1 thread, asynchronous writes, through Db::bulk_loader"
                } else {
                    "off"
                },
            ),
            setting(
                "blob_threshold",
                match cfg.blob_threshold {
                    Some(n) => format!("{n} bytes (values this long go to blob files)"),
                    None => "off".to_string(),
                },
            ),
            setting(
                "blob_file_size",
                match cfg.blob_threshold {
                    Some(_) => util::bytes(opts.blob_file_size),
                    None => "-".to_string(),
                },
            ),
            setting(
                "block_cache",
                match cfg.cache_size {
                    Some(n) => format!("LRU {}", util::bytes(n)),
                    None => "Shale default (8 MB)".to_string(),
                },
            ),
            setting(
                "filter_policy",
                match cfg.bloom_bits {
                    None => "bloom, 10 bits per key (Shale default)".to_string(),
                    Some(0) => "none".to_string(),
                    Some(b) => format!("bloom, {b} bits per key"),
                },
            ),
        ];
        let db = shale::Db::open(&cfg.path, opts).map_err(err)?;
        Ok(ShaleEngine {
            db,
            settings,
            bulk_load: cfg.bulk_load,
            bulk: AtomicBool::new(false),
        })
    }
}

impl Engine for ShaleEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Shale
    }

    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_string()
    }

    fn settings(&self) -> Vec<(String, String)> {
        self.settings.clone()
    }

    fn session(&self) -> Result<Box<dyn Session + '_>> {
        Ok(Box::new(ShaleSession {
            db: &self.db,
            batch: shale::WriteBatch::new(),
            bulk: self.bulk_load && self.bulk.load(Ordering::Relaxed),
            loader: None,
        }))
    }

    fn compact(&self) -> Result<()> {
        self.db.compact_range(None, None).map_err(err)
    }

    fn property(&self, name: &str) -> Option<String> {
        self.db.property(name)
    }

    fn set_bulk_load(&self, on: bool) {
        self.bulk.store(on, Ordering::Relaxed);
    }
}

/// Shale's CRC-32C and snappy code (see the module comment).
pub fn codecs() -> Codecs {
    Codecs {
        crc32c: Ok(Crc32c {
            implementation: format!(
                "shale::internals::crc32c (the crc32c crate: {})",
                crc_code()
            ),
            value: shale::internals::crc32c,
        }),
        snappy: Ok(Snappy {
            implementation: "the snap crate's raw Encoder / Decoder, as Shale's table builder and block reader call them".to_string(),
            compressor: || Box::new(ShaleCompressor(snap::raw::Encoder::new())),
            uncompress: shale_uncompress,
        }),
    }
}

/// Which code the crc32c crate picks on this CPU.
fn crc_code() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("sse4.2") {
            "SSE4.2 crc32 instructions on this CPU"
        } else {
            "table-driven code, this CPU has no SSE4.2"
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        "the CPU's CRC instructions where it has them, else table-driven code"
    }
}

/// The table builder's compressor: one encoder, reused.
struct ShaleCompressor(snap::raw::Encoder);

impl SnappyCompressor for ShaleCompressor {
    fn compress(&mut self, input: &[u8], output: &mut Vec<u8>) -> Option<usize> {
        // As `BlockWriter::write_block`: grow the buffer to the largest
        // encoding (0: the input is too large for snappy) and compress into it.
        let max = snap::raw::max_compress_len(input.len());
        if max == 0 {
            return None;
        }
        output.resize(max, 0);
        self.0.compress(input, output).ok()
    }
}

/// The block reader's decompression: a fresh decoder into a buffer of the
/// uncompressed length, which must be filled exactly.
fn shale_uncompress(input: &[u8], output: &mut [u8]) -> bool {
    let len = output.len();
    matches!(snap::raw::Decoder::new().decompress(input, output), Ok(n) if n == len)
}

struct ShaleSession<'a> {
    db: &'a shale::Db,
    batch: shale::WriteBatch,
    /// Puts go to `loader` (see the module comment).
    bulk: bool,
    loader: Option<shale::BulkLoader<'a>>,
}

impl<'a> ShaleSession<'a> {
    /// The session's bulk loader, started by the first put.
    fn loader(&mut self) -> Result<&mut shale::BulkLoader<'a>> {
        Ok(match &mut self.loader {
            Some(loader) => loader,
            slot @ None => slot.insert(self.db.bulk_loader().map_err(err)?),
        })
    }
}

fn write_options(sync: bool) -> shale::WriteOptions {
    shale::WriteOptions {
        sync,
        ..Default::default()
    }
}

impl Session for ShaleSession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8], sync: bool) -> Result<()> {
        if self.bulk {
            return self.loader()?.add(key, value).map_err(err);
        }
        if sync {
            self.db
                .put_with(&write_options(true), key, value)
                .map_err(err)
        } else {
            self.db.put(key, value).map_err(err)
        }
    }

    fn get(&mut self, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        self.db.get_into(key, value).map_err(err)
    }

    fn delete(&mut self, key: &[u8], sync: bool) -> Result<()> {
        if sync {
            self.db.delete_with(&write_options(true), key).map_err(err)
        } else {
            self.db.delete(key).map_err(err)
        }
    }

    fn write(&mut self, batch: &Batch, sync: bool) -> Result<()> {
        if self.bulk {
            let loader = self.loader()?;
            for op in batch.iter() {
                match op {
                    BatchOp::Put(k, v) => loader.add(k, v).map_err(err)?,
                    BatchOp::Delete(_) => return Err(Error::new("a bulk load takes no deletions")),
                }
            }
            return Ok(());
        }
        self.batch.clear();
        for op in batch.iter() {
            match op {
                BatchOp::Put(k, v) => self.batch.put(k, v).map_err(err)?,
                BatchOp::Delete(k) => self.batch.delete(k).map_err(err)?,
            }
        }
        self.db
            .write(&write_options(sync), &self.batch)
            .map_err(err)
    }

    fn finish_writes(&mut self) -> Result<()> {
        match self.loader.take() {
            Some(loader) => loader.finish().map(drop).map_err(err),
            None => Ok(()),
        }
    }

    fn iter(&mut self) -> Result<Box<dyn EngineIter + '_>> {
        let it = self.db.cursor(&shale::ReadOptions::default());
        Ok(Box::new(ShaleIter { it }))
    }
}

struct ShaleIter {
    it: shale::Cursor,
}

impl EngineIter for ShaleIter {
    fn seek_to_first(&mut self) {
        self.it.seek_to_first();
    }
    fn seek_to_last(&mut self) {
        self.it.seek_to_last();
    }
    fn seek(&mut self, key: &[u8]) {
        self.it.seek(key);
    }
    fn next(&mut self) {
        if self.it.valid() {
            self.it.next();
        }
    }
    fn prev(&mut self) {
        if self.it.valid() {
            self.it.prev();
        }
    }
    fn valid(&self) -> bool {
        self.it.valid()
    }
    fn key(&self) -> &[u8] {
        if self.it.valid() {
            self.it.key()
        } else {
            &[]
        }
    }
    fn value(&self) -> &[u8] {
        if self.it.valid() {
            self.it.value()
        } else {
            &[]
        }
    }
    fn status(&self) -> Result<()> {
        self.it.status().map_err(err)
    }
}
