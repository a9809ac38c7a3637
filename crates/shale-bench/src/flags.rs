//! Command-line flags: LevelDB db_bench's flags with its defaults, plus the
//! engine choice and a few of this tool's own.
//!
//! Every flag has the form `--name=value` (db_bench's form); a later
//! occurrence overrides an earlier one. An unknown flag or a value that does
//! not parse or is out of range is an error (the binary exits with code 2).

use std::fmt;
use std::path::PathBuf;

use crate::benchmarks;
use crate::engine::EngineKind;

/// db_bench's default benchmark list.
pub const DEFAULT_BENCHMARKS: &str = "fillseq,fillsync,fillrandom,overwrite,readrandom,readrandom,readseq,readreverse,compact,readrandom,readseq,readreverse,fill100K,crc32c,snappycomp,snappyuncomp";

/// A block compression codec, by RocksDB's `--compression_type` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// Blocks stored as they are.
    None,
    /// Snappy: LevelDB's compressor, the default.
    Snappy,
    /// Zstandard (LevelDB's type 2 after 1.23, RocksDB's kZSTD).
    Zstd,
    /// LZ4 (Shale's type 4, RocksDB's kLZ4Compression).
    Lz4,
}

impl Codec {
    /// The names `--compression_type` takes.
    pub const NAMES: [&'static str; 4] = ["none", "snappy", "zstd", "lz4"];

    /// The codec named `name`.
    pub fn from_name(name: &str) -> Option<Codec> {
        match name {
            "none" => Some(Codec::None),
            "snappy" => Some(Codec::Snappy),
            "zstd" => Some(Codec::Zstd),
            "lz4" => Some(Codec::Lz4),
            _ => None,
        }
    }

    /// Its `--compression_type` name.
    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Snappy => "snappy",
            Codec::Zstd => "zstd",
            Codec::Lz4 => "lz4",
        }
    }

    /// True unless blocks are stored as they are.
    pub fn is_on(self) -> bool {
        self != Codec::None
    }

    /// The number LevelDB's C API (`leveldb_options_set_compression`) takes:
    /// the block type, none 0, snappy 1, and for Shale's library zstd 2 and
    /// lz4 4 (LevelDB 1.23 knows 0 and 1 only).
    pub fn leveldb_type(self) -> i32 {
        match self {
            Codec::None => 0,
            Codec::Snappy => 1,
            Codec::Zstd => 2,
            Codec::Lz4 => 4,
        }
    }

    /// RocksDB's `CompressionType` number (its C API's
    /// `rocksdb_*_compression`: none 0, snappy 1, zlib 2, bz2 3, lz4 4,
    /// lz4hc 5, xpress 6, zstd 7).
    pub fn rocksdb_type(self) -> i32 {
        match self {
            Codec::None => 0,
            Codec::Snappy => 1,
            Codec::Lz4 => 4,
            Codec::Zstd => 7,
        }
    }
}

/// The parsed flags.
#[derive(Debug, Clone, PartialEq)]
pub struct Flags {
    /// Benchmarks to run, in order (empty names are skipped silently).
    pub benchmarks: Vec<String>,
    /// Number of key/values to place in the database.
    pub num: u32,
    /// Number of read operations; negative means `num`.
    pub reads: i64,
    /// Concurrent threads per benchmark.
    pub threads: u32,
    /// Size of each value.
    pub value_size: u32,
    /// Values compress to this fraction of their size.
    pub compression_ratio: f64,
    /// Print a latency histogram per benchmark.
    pub histogram: bool,
    /// Count key comparisons (reported as not supported by the C engines).
    pub comparisons: bool,
    /// Keep the existing database; fill benchmarks are skipped.
    pub use_existing_db: bool,
    /// Reuse the log and MANIFEST when reopening (LevelDB family).
    pub reuse_logs: bool,
    /// Bytes buffered in memory before a flush (LSM engines).
    pub write_buffer_size: u64,
    /// Bytes per table file (LSM engines).
    pub max_file_size: u64,
    /// Uncompressed bytes per table block (LSM engines).
    pub block_size: u64,
    /// Cache of uncompressed data in bytes; negative means the engine's default.
    pub cache_size: i64,
    /// Bloom filter bits per key; negative means the engine's default (no
    /// filter but for Shale, whose default is 10 bits per key).
    pub bloom_bits: i32,
    /// Maximum open files (LSM engines).
    pub open_files: i32,
    /// Bytes of `'a'` before each key.
    pub key_prefix: u32,
    /// Database directory; default `/tmp/dbbench-<engine>`.
    pub db: Option<PathBuf>,
    /// Block compression: `--compression_type=none|snappy|zstd|lz4`, or
    /// `--compression=0|1` (none or snappy); the later flag wins.
    pub compression: Codec,
    /// The engine under test.
    pub engine: EngineKind,
    /// Digits per key (keys are `%0<key_size>d`); db_bench uses 16.
    pub key_size: u32,
    /// Base of the per-thread seeds: thread n of the run gets `seed + n`.
    pub seed: u32,
    /// Print the engine settings and exit.
    pub print_settings: bool,
    /// CSV file for throughput over time.
    pub timeseries: Option<PathBuf>,
    /// Sampling interval of the time series, seconds (0: off).
    pub stats_interval_seconds: f64,
    /// Log the time series every this many operations (0: off).
    pub stats_interval_ops: u64,
    /// Print db_bench's "... finished N ops" progress on stderr.
    pub progress: bool,
    /// WiredTiger: keep a write-ahead log (LevelDB writes one too).
    pub wt_log: bool,
    /// Kyoto Cabinet compressor name when compression is on.
    pub kyoto_zcomp: String,
    /// LMDB map size in bytes.
    pub lmdb_map_size: u64,
    /// Every write waits for stable storage (RocksDB db_bench's `--sync`);
    /// `fillsync` is synchronous either way.
    pub sync: bool,
    /// `lsmiter`: number of iterations.
    pub iterations: u64,
    /// `lsmiter`: inserts, then lookups, per iteration.
    pub iter_ops: u64,
    /// `lsmiter`: sleep after each iteration, milliseconds (not timed).
    pub pause_ms: u64,
    /// Time cap of each benchmark in seconds (RocksDB db_bench's
    /// `--duration`): a benchmark still running after this long stops and
    /// reports the operations it finished. 0: no cap.
    pub duration: u64,
    /// RocksDB: read tables through memory maps (`allow_mmap_reads`), as
    /// LevelDB and Shale do.
    pub mmap_read: bool,
    /// Shale: the writers of a write group insert into the memtable in
    /// parallel (`Options::concurrent_memtable_writes`, RocksDB db_bench's
    /// `--allow_concurrent_memtable_write`).
    pub concurrent_memtable_writes: bool,
    /// Shale: flushes cut into several tables where their keys jump
    /// (`Options::split_flushes`).
    pub split_flushes: bool,
    /// Shale: tables carry a whole-table filter beside the bloom filter
    /// (`Options::whole_table_filters`).
    pub whole_table_filters: bool,
    /// Shale: a sequential load into a fresh database from one thread
    /// (`fillseq`, `fillbatch`, `putseq`; WiredTiger's bulk-cursor case) goes
    /// through `Db::bulk_loader`, straight into tables, finished inside the
    /// benchmark's timing.
    pub bulk_load: bool,
    /// Shale: values of at least this many bytes go to blob files
    /// (`Options::blob_threshold`); 0: off. Other engines ignore it, saying
    /// so.
    pub blob_threshold: u64,
    /// Shale: the size a memtable's blob file reaches before the memtable is
    /// switched (`Options::blob_file_size`); 0: Shale's default.
    pub blob_file_size: u64,
}

impl Default for Flags {
    fn default() -> Flags {
        Flags {
            benchmarks: split_benchmarks(DEFAULT_BENCHMARKS),
            num: 1_000_000,
            reads: -1,
            threads: 1,
            value_size: 100,
            compression_ratio: 0.5,
            histogram: false,
            comparisons: false,
            use_existing_db: false,
            reuse_logs: false,
            write_buffer_size: 4 << 20,
            max_file_size: 2 << 20,
            block_size: 4096,
            cache_size: -1,
            bloom_bits: -1,
            open_files: 1000,
            key_prefix: 0,
            db: None,
            compression: Codec::Snappy,
            engine: EngineKind::Shale,
            key_size: 16,
            seed: 1000,
            print_settings: false,
            timeseries: None,
            stats_interval_seconds: 0.0,
            stats_interval_ops: 0,
            progress: true,
            wt_log: true,
            kyoto_zcomp: "lzo".to_string(),
            lmdb_map_size: 64 << 30,
            sync: false,
            iterations: 200,
            iter_ops: 50_000,
            pause_ms: 0,
            duration: 0,
            mmap_read: true,
            concurrent_memtable_writes: false,
            split_flushes: false,
            whole_table_filters: true,
            bulk_load: false,
            blob_threshold: 0,
            blob_file_size: 0,
        }
    }
}

impl Flags {
    /// The database directory to use.
    pub fn db_path(&self) -> PathBuf {
        self.db
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("/tmp/dbbench-{}", self.engine.name())))
    }

    /// Reads per read benchmark (`--reads`, or `--num` when negative).
    pub fn reads(&self) -> u64 {
        if self.reads < 0 {
            u64::from(self.num)
        } else {
            self.reads as u64
        }
    }
}

/// Why the command line was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagError {
    /// `--help` was given.
    Help,
    /// A flag is unknown, malformed or out of range.
    Invalid(String),
}

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlagError::Help => f.write_str("help requested"),
            FlagError::Invalid(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for FlagError {}

fn split_benchmarks(s: &str) -> Vec<String> {
    s.split(',').map(|b| b.trim().to_string()).collect()
}

fn invalid(arg: &str, why: impl fmt::Display) -> FlagError {
    FlagError::Invalid(format!("invalid flag '{arg}': {why}"))
}

fn int_in(arg: &str, value: &str, min: i64, max: i64) -> Result<i64, FlagError> {
    let n: i64 = value
        .parse()
        .map_err(|_| invalid(arg, "expected an integer"))?;
    if n < min || n > max {
        return Err(invalid(
            arg,
            format_args!("must be between {min} and {max}"),
        ));
    }
    Ok(n)
}

fn boolean(arg: &str, value: &str) -> Result<bool, FlagError> {
    match value {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(invalid(arg, "expected 0 or 1")),
    }
}

fn float_at_least(arg: &str, value: &str, min: f64) -> Result<f64, FlagError> {
    let x: f64 = value
        .parse()
        .map_err(|_| invalid(arg, "expected a number"))?;
    if !x.is_finite() || x < min {
        return Err(invalid(
            arg,
            format_args!("must be a finite number >= {min}"),
        ));
    }
    Ok(x)
}

const I32_MAX: i64 = i32::MAX as i64;

/// Largest value size the 1 MB value buffer can serve.
pub const MAX_VALUE_SIZE: i64 = 1_048_575;

/// Parses the arguments (without the program name).
pub fn parse<I, S>(args: I) -> Result<Flags, FlagError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut f = Flags::default();
    for arg in args {
        let arg = arg.as_ref();
        if arg == "--help" || arg == "-h" {
            return Err(FlagError::Help);
        }
        let Some(body) = arg.strip_prefix("--") else {
            return Err(FlagError::Invalid(format!(
                "invalid flag '{arg}': flags have the form --name=value"
            )));
        };
        let Some((name, value)) = body.split_once('=') else {
            return Err(FlagError::Invalid(format!(
                "invalid flag '{arg}': flags have the form --name=value"
            )));
        };
        match name {
            "benchmarks" => {
                let list = split_benchmarks(value);
                if let Some(bad) = list.iter().find(|b| !benchmarks::is_known(b)) {
                    return Err(invalid(
                        arg,
                        format_args!("unknown benchmark '{bad}'; known: {}", benchmarks::names()),
                    ));
                }
                f.benchmarks = list;
            }
            "num" => f.num = int_in(arg, value, 0, I32_MAX)? as u32,
            "reads" => f.reads = int_in(arg, value, i64::from(i32::MIN), I32_MAX)?,
            "threads" => f.threads = int_in(arg, value, 1, 1024)? as u32,
            "value_size" => f.value_size = int_in(arg, value, 0, MAX_VALUE_SIZE)? as u32,
            "compression_ratio" => f.compression_ratio = float_at_least(arg, value, 0.0)?,
            "histogram" => f.histogram = boolean(arg, value)?,
            "comparisons" => f.comparisons = boolean(arg, value)?,
            "use_existing_db" => f.use_existing_db = boolean(arg, value)?,
            "reuse_logs" => f.reuse_logs = boolean(arg, value)?,
            "write_buffer_size" => f.write_buffer_size = int_in(arg, value, 1, i64::MAX)? as u64,
            "max_file_size" => f.max_file_size = int_in(arg, value, 1, i64::MAX)? as u64,
            "block_size" => f.block_size = int_in(arg, value, 1, I32_MAX)? as u64,
            "cache_size" => f.cache_size = int_in(arg, value, i64::MIN, i64::MAX)?,
            "bloom_bits" => f.bloom_bits = int_in(arg, value, i64::from(i32::MIN), I32_MAX)? as i32,
            "open_files" => f.open_files = int_in(arg, value, 0, I32_MAX)? as i32,
            "key_prefix" => f.key_prefix = int_in(arg, value, 0, 1000)? as u32,
            "db" => {
                if value.is_empty() {
                    return Err(invalid(arg, "empty path"));
                }
                f.db = Some(PathBuf::from(value));
            }
            "compression" => {
                f.compression = if boolean(arg, value)? {
                    Codec::Snappy
                } else {
                    Codec::None
                }
            }
            "compression_type" => {
                f.compression = Codec::from_name(value).ok_or_else(|| {
                    invalid(
                        arg,
                        format_args!(
                            "unknown compression type; one of {}",
                            Codec::NAMES.join(", ")
                        ),
                    )
                })?
            }
            "engine" => {
                f.engine = EngineKind::from_name(value).ok_or_else(|| {
                    invalid(
                        arg,
                        format_args!("unknown engine; one of {}", EngineKind::names().join(", ")),
                    )
                })?
            }
            "key_size" => f.key_size = int_in(arg, value, 1, 1000)? as u32,
            "seed" => f.seed = int_in(arg, value, 0, i64::from(u32::MAX))? as u32,
            "print_settings" => f.print_settings = boolean(arg, value)?,
            "timeseries" => {
                if value.is_empty() {
                    return Err(invalid(arg, "empty path"));
                }
                f.timeseries = Some(PathBuf::from(value));
            }
            "stats_interval_seconds" => f.stats_interval_seconds = float_at_least(arg, value, 0.0)?,
            "stats_interval_ops" => f.stats_interval_ops = int_in(arg, value, 0, i64::MAX)? as u64,
            "progress" => f.progress = boolean(arg, value)?,
            "wt_log" => f.wt_log = boolean(arg, value)?,
            "kyoto_zcomp" => {
                const KNOWN: [&str; 6] = ["lzo", "zlib", "def", "gz", "lzma", "none"];
                if !KNOWN.contains(&value) {
                    return Err(invalid(arg, format_args!("one of {}", KNOWN.join(", "))));
                }
                f.kyoto_zcomp = value.to_string();
            }
            "lmdb_map_size" => f.lmdb_map_size = int_in(arg, value, 1 << 20, i64::MAX)? as u64,
            "sync" => f.sync = boolean(arg, value)?,
            "iterations" => f.iterations = int_in(arg, value, 1, I32_MAX)? as u64,
            "iter_ops" => f.iter_ops = int_in(arg, value, 1, I32_MAX)? as u64,
            "pause_ms" => f.pause_ms = int_in(arg, value, 0, 86_400_000)? as u64,
            "duration" => f.duration = int_in(arg, value, 0, 86_400 * 365)? as u64,
            "mmap_read" => f.mmap_read = boolean(arg, value)?,
            "concurrent_memtable_writes" => f.concurrent_memtable_writes = boolean(arg, value)?,
            "split_flushes" => f.split_flushes = boolean(arg, value)?,
            "whole_table_filters" => f.whole_table_filters = boolean(arg, value)?,
            "bulk_load" => f.bulk_load = boolean(arg, value)?,
            "blob_threshold" => f.blob_threshold = int_in(arg, value, 0, I32_MAX)? as u64,
            "blob_file_size" => f.blob_file_size = int_in(arg, value, 0, i64::MAX)? as u64,
            _ => return Err(FlagError::Invalid(format!("unknown flag '{arg}'"))),
        }
    }
    if f.iterations.saturating_mul(f.iter_ops) > I32_MAX as u64 {
        return Err(FlagError::Invalid(format!(
            "--iterations={} times --iter_ops={} is more than {I32_MAX} inserts",
            f.iterations, f.iter_ops
        )));
    }
    Ok(f)
}

/// One line per flag with its default, for `--help`.
pub fn usage() -> String {
    let d = Flags::default();
    let mut s = String::from("Usage: db_bench [--name=value ...]\n\nLevelDB db_bench flags:\n");
    let rows: Vec<(&str, String)> = vec![
        ("benchmarks", DEFAULT_BENCHMARKS.to_string()),
        ("num", d.num.to_string()),
        ("reads", format!("{} (negative: --num)", d.reads)),
        ("threads", d.threads.to_string()),
        ("value_size", d.value_size.to_string()),
        ("compression_ratio", d.compression_ratio.to_string()),
        ("histogram", "0".into()),
        ("comparisons", "0".into()),
        ("use_existing_db", "0".into()),
        ("reuse_logs", "0".into()),
        ("write_buffer_size", d.write_buffer_size.to_string()),
        ("max_file_size", d.max_file_size.to_string()),
        ("block_size", d.block_size.to_string()),
        (
            "cache_size",
            format!("{} (negative: engine default)", d.cache_size),
        ),
        (
            "bloom_bits",
            format!(
                "{} (negative: engine default: none, Shale 10 bits per key)",
                d.bloom_bits
            ),
        ),
        ("open_files", d.open_files.to_string()),
        ("key_prefix", d.key_prefix.to_string()),
        ("db", "/tmp/dbbench-<engine>".into()),
        (
            "compression",
            "1 (0: --compression_type=none, 1: snappy)".into(),
        ),
        (
            "compression_type",
            format!(
                "{} (one of {})",
                d.compression.name(),
                Codec::NAMES.join(", ")
            ),
        ),
    ];
    for (name, default) in rows {
        s.push_str(&format!("  --{name}=  (default {default})\n"));
    }
    s.push_str("\nshale-bench flags:\n");
    let ours: Vec<(&str, String)> = vec![
        (
            "engine",
            format!(
                "{} (one of {})",
                d.engine.name(),
                EngineKind::names().join(", ")
            ),
        ),
        ("key_size", format!("{} (digits per key)", d.key_size)),
        (
            "seed",
            format!("{} (thread n uses seed+n, as db_bench's 1000+n)", d.seed),
        ),
        (
            "print_settings",
            "0 (print the engine's settings and exit)".into(),
        ),
        ("timeseries", "none (CSV of throughput over time)".into()),
        (
            "stats_interval_seconds",
            "0 (1 when --timeseries is given)".into(),
        ),
        ("stats_interval_ops", "0".into()),
        ("progress", "1".into()),
        ("wt_log", "1 (WiredTiger write-ahead log)".into()),
        (
            "kyoto_zcomp",
            format!("{} (Kyoto compressor when --compression=1)", d.kyoto_zcomp),
        ),
        ("lmdb_map_size", d.lmdb_map_size.to_string()),
        ("sync", "0 (1: every write waits for stable storage)".into()),
        ("iterations", format!("{} (lsmiter)", d.iterations)),
        ("iter_ops", format!("{} (lsmiter)", d.iter_ops)),
        ("pause_ms", format!("{} (lsmiter)", d.pause_ms)),
        (
            "duration",
            "0 (seconds; each benchmark stops after this long; 0: no cap)".into(),
        ),
        ("mmap_read", "1 (rocksdb: allow_mmap_reads)".into()),
        (
            "concurrent_memtable_writes",
            "0 (shale: writers insert into the memtable in parallel, as RocksDB's --allow_concurrent_memtable_write)".into(),
        ),
        (
            "split_flushes",
            "0 (shale: a flush is cut into several tables where its keys jump)".into(),
        ),
        (
            "whole_table_filters",
            "1 (shale: each table carries one bloom filter over all its keys, probed before its index)".into(),
        ),
        (
            "bulk_load",
            "0 (shale: sequential loads into a fresh database from one thread go straight into tables, as WiredTiger's bulk cursor)".into(),
        ),
        (
            "blob_threshold",
            "0 (shale: values of at least this many bytes go to blob files; 0: off)".into(),
        ),
    ];
    for (name, default) in ours {
        s.push_str(&format!("  --{name}=  (default {default})\n"));
    }
    s.push_str("\nBenchmarks (--benchmarks=a,b,...; N is --num, T is --threads):\n");
    for b in benchmarks::BENCHMARKS {
        s.push_str(&format!("  {:<17} {}\n", b.name, b.help));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_arguments_give_db_bench_defaults() {
        let f = parse(Vec::<String>::new()).unwrap();
        assert_eq!(f, Flags::default());
        assert_eq!(f.benchmarks.len(), 16);
        assert_eq!(
            f.benchmarks.last().map(String::as_str),
            Some("snappyuncomp")
        );
    }
}
