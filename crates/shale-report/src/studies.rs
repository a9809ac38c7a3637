//! The studies of `BENCHMARK.md`, each as the exact `db_bench` invocations
//! ("jobs") it needs and the seed sections ("lines" of a table) read from them.
//!
//! Invariants: every [`Line`] names a job of its own study and a benchmark that
//! job runs; every job's argument list is fully determined by the study, the
//! engine and the paths, so a report states the commands it ran. Sizes are
//! fixed per study; `--quick` divides them by ten or more.
//!
//! Benchmarks used beyond LevelDB 1.23's db_bench (`fillseqsync`, `fillrandsync`,
//! `fillseqbatch`, `fillrandbatch`, `getseq`, `lsmiter`) and their output are
//! specified in this crate's README ("The db_bench contract").

use std::path::Path;

use crate::engines::{Capability, Engine, MemoryModel};
use crate::markdown::thousands as th;
use crate::parse::IterPhase;
use crate::stats::Aggregation;

const MIB: u64 = 1 << 20;

/// Names accepted by `--studies=`, in the order they run.
pub const STUDY_IDS: [&str; 5] = ["leveldb", "wiredtiger", "bangdb", "bangdb-scale", "sqlite4"];

/// Largest key count of the BangDB scale test (the seed's billion).
pub const SCALE_MAX_KEYS: u64 = 1_000_000_000;
/// Bytes of disk budgeted per key in the scale test (10-byte key, 16-byte
/// value, plus index, log and compaction head-room).
pub const SCALE_BYTES_PER_KEY: u64 = 64;

/// What sizes to build a study at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// A tenth of the size or smaller, for a smoke test.
    pub quick: bool,
    /// Free bytes on the file system of the database root (sizes the scale test).
    pub free_bytes: Option<u64>,
}

/// How a job sets each engine's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    /// The LevelDB report's baseline: LSM engines keep db_bench's defaults
    /// (4 MB write buffer, the engine's default block cache); engines with a
    /// single page cache get `--cache_size=<cache>` (4 MB, the seed's
    /// "4 MB of cache memory").
    Baseline {
        /// Page cache of the single-cache engines.
        cache: u64,
    },
    /// A total budget split as the seed did: LSM engines get a write buffer and
    /// a block cache, single-cache engines get the whole total as cache.
    Split {
        /// LSM write buffer.
        write_buffer: u64,
        /// LSM block cache.
        cache: u64,
        /// Cache of the single-cache engines.
        total: u64,
    },
    /// `--cache_size` for every engine with a cache (the WiredTiger comparison).
    CacheOnly(u64),
    /// `--write_buffer_size` for every engine (the SQLite4 study); engines
    /// without a write buffer ignore it.
    WriteBuffer(u64),
    /// db_bench defaults for everyone.
    Defaults,
}

impl Memory {
    /// The memory flags for one engine.
    pub fn flags(self, engine: &Engine) -> Vec<(&'static str, u64)> {
        let model = engine.memory;
        match (self, model) {
            (_, MemoryModel::OsPageCache) | (Memory::Defaults, _) => vec![],
            (Memory::Baseline { .. }, MemoryModel::WriteBufferAndCache) => vec![],
            (Memory::Baseline { cache }, MemoryModel::SingleCache) => vec![("cache_size", cache)],
            (
                Memory::Split {
                    write_buffer,
                    cache,
                    ..
                },
                MemoryModel::WriteBufferAndCache,
            ) => vec![("write_buffer_size", write_buffer), ("cache_size", cache)],
            (Memory::Split { total, .. }, MemoryModel::SingleCache) => {
                vec![("cache_size", total)]
            }
            (Memory::CacheOnly(c), _) => vec![("cache_size", c)],
            (Memory::WriteBuffer(w), _) => vec![("write_buffer_size", w)],
        }
    }

    /// One sentence for the report.
    pub fn describe(self) -> String {
        match self {
            Memory::Baseline { cache } => format!(
                "LSM engines (shale, leveldb, rocksdb): db_bench defaults (4 MB write buffer, \
                 the engine's default block cache); single-cache engines: --cache_size={cache} \
                 ({}); lmdb: no cache setting (memory-mapped)",
                bytes_label(cache)
            ),
            Memory::Split {
                write_buffer,
                cache,
                total,
            } => format!(
                "LSM engines: --write_buffer_size={write_buffer} ({}) and --cache_size={cache} \
                 ({}); single-cache engines: --cache_size={total} ({}); lmdb: no cache setting",
                bytes_label(write_buffer),
                bytes_label(cache),
                bytes_label(total)
            ),
            Memory::CacheOnly(c) => format!(
                "every engine with a cache: --cache_size={c} ({}); write buffers at db_bench \
                 defaults; lmdb: no cache setting",
                bytes_label(c)
            ),
            Memory::WriteBuffer(w) => format!(
                "every engine: --write_buffer_size={w} ({}) (ignored by engines without a write \
                 buffer); caches at db_bench defaults",
                bytes_label(w)
            ),
            Memory::Defaults => "db_bench defaults for every engine".to_string(),
        }
    }
}

/// "4 MB"-style label for a power-of-two byte count.
pub fn bytes_label(b: u64) -> String {
    if b >= MIB && b.is_multiple_of(MIB) {
        format!("{} MB", b / MIB)
    } else {
        format!("{b} bytes")
    }
}

/// Settings of the `lsmiter` benchmark (SQLite4 LSM study).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LsmIter {
    /// Number of iterations.
    pub iterations: u64,
    /// Inserts, then lookups, per iteration.
    pub iter_ops: u64,
    /// Sleep after each iteration, in milliseconds.
    pub pause_ms: u64,
}

/// One db_bench invocation (run once per engine per run).
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Short id, unique in its study; names directories and raw files.
    pub id: &'static str,
    /// `--benchmarks=` list, in order.
    pub benchmarks: Vec<&'static str>,
    /// `--num=`.
    pub num: u64,
    /// `--value_size=`.
    pub value_size: u64,
    /// `--key_size=`.
    pub key_size: u64,
    /// `--threads=`.
    pub threads: u32,
    /// `--compression=1` (the engine's light compressor) or `0`.
    pub compression: bool,
    /// Memory flags per engine.
    pub memory: Memory,
    /// Whether `--timeseries=` is passed.
    pub timeseries: bool,
    /// `lsmiter` settings, when the job runs it.
    pub lsmiter: Option<LsmIter>,
    /// Capabilities every engine must have to run this job.
    pub needs: Vec<Capability>,
}

impl Job {
    fn new(id: &'static str, benchmarks: &[&'static str], num: u64) -> Job {
        Job {
            id,
            benchmarks: benchmarks.to_vec(),
            num,
            value_size: 100,
            key_size: 16,
            threads: 1,
            compression: true,
            memory: Memory::Baseline { cache: 4 * MIB },
            timeseries: false,
            lsmiter: None,
            needs: vec![],
        }
    }

    /// The complete db_bench argument list (without the program) for `engine`.
    pub fn args(&self, engine: &Engine, db: &Path, timeseries: Option<&Path>) -> Vec<String> {
        let mut a = vec![
            format!("--engine={}", engine.name),
            format!("--db={}", db.display()),
            format!("--benchmarks={}", self.benchmarks.join(",")),
            format!("--num={}", self.num),
            format!("--value_size={}", self.value_size),
            format!("--key_size={}", self.key_size),
            format!("--threads={}", self.threads),
            format!("--compression={}", u8::from(self.compression)),
            "--bloom_bits=-1".to_string(),
            "--histogram=0".to_string(),
            "--use_existing_db=0".to_string(),
        ];
        for (flag, v) in self.memory.flags(engine) {
            a.push(format!("--{flag}={v}"));
        }
        if let Some(it) = self.lsmiter {
            a.push(format!("--iterations={}", it.iterations));
            a.push(format!("--iter_ops={}", it.iter_ops));
            a.push(format!("--pause_ms={}", it.pause_ms));
        }
        if self.timeseries {
            if let Some(ts) = timeseries {
                a.push(format!("--timeseries={}", ts.display()));
            }
        }
        a
    }

    /// Operations one benchmark of this job performs (all threads together).
    pub fn ops(&self, bench: &str) -> u64 {
        match bench {
            // LevelDB's fill100K writes num/1000 values of 100,000 bytes.
            "fill100K" => (self.num / 1000).max(1),
            "lsmiter" => self
                .lsmiter
                .map(|l| l.iterations.saturating_mul(l.iter_ops).saturating_mul(2))
                .unwrap_or(0),
            _ => self.num.saturating_mul(u64::from(self.threads)),
        }
    }

    /// Seconds of deliberate sleeping in one run (lsmiter pauses).
    pub fn pause_seconds(&self) -> f64 {
        self.lsmiter
            .map(|l| l.iterations as f64 * l.pause_ms as f64 / 1000.0)
            .unwrap_or(0.0)
    }

    /// Why `engine` cannot run this job, if it cannot.
    pub fn unsupported_by(&self, engine: &Engine) -> Option<&'static str> {
        self.needs.iter().find_map(|c| engine.lacks(*c))
    }
}

/// What a line of a table reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Metric {
    /// Ops/s of a db_bench benchmark (its last instance in the output).
    Bench(&'static str),
    /// Mean ops/s over the `lsmiter` iterations of one phase.
    IterMean(IterPhase),
    /// Ops/s of the slowest `lsmiter` iteration of one phase (the deepest stall).
    IterMin(IterPhase),
}

impl Metric {
    /// The benchmark whose `# io` line the resource columns read.
    pub fn io_bench(&self) -> &'static str {
        match self {
            Metric::Bench(b) => b,
            Metric::IterMean(_) | Metric::IterMin(_) => "lsmiter",
        }
    }
}

/// One workload line of a section's table.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Row label.
    pub label: &'static str,
    /// Index into [`Study::jobs`].
    pub job: usize,
    /// What is measured.
    pub metric: Metric,
}

/// Which over-time chart a section gets besides its bar chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverTime {
    /// Bars only.
    None,
    /// Ops/s over elapsed seconds from `--timeseries`, one chart per benchmark.
    Timeseries,
    /// Ops/s per `lsmiter` iteration, one chart per phase.
    Iterations,
}

/// One seed section: a table and its charts.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// Short id, unique in its study (chart file names).
    pub id: &'static str,
    /// Heading, numbered as in the seed.
    pub title: String,
    /// What the section measures and how engines are set up.
    pub note: String,
    /// Table rows.
    pub lines: Vec<Line>,
    /// Extra chart kind.
    pub over_time: OverTime,
}

/// A whole study.
#[derive(Debug, Clone, PartialEq)]
pub struct Study {
    /// `--studies=` name.
    pub id: &'static str,
    /// Heading.
    pub title: &'static str,
    /// Seed write-up it reproduces.
    pub seed: &'static str,
    /// Sizes, keys and values, in a few sentences.
    pub intro: String,
    /// How runs are combined.
    pub aggregation: Aggregation,
    /// Runs per engine unless `--runs` says otherwise.
    pub default_runs: usize,
    /// The invocations.
    pub jobs: Vec<Job>,
    /// The tables.
    pub sections: Vec<Section>,
}

impl Study {
    /// Index of the job with this id.
    pub fn job_index(&self, id: &str) -> Option<usize> {
        self.jobs.iter().position(|j| j.id == id)
    }
}

/// Builds a study by its `--studies=` name.
pub fn build(id: &str, size: Size) -> Option<Study> {
    match id {
        "leveldb" => Some(leveldb(size)),
        "wiredtiger" => Some(wiredtiger(size)),
        "bangdb" => Some(bangdb(size)),
        "bangdb-scale" => Some(bangdb_scale(size)),
        "sqlite4" => Some(sqlite4(size)),
        _ => None,
    }
}

fn line(label: &'static str, job: usize, bench: &'static str) -> Line {
    Line {
        label,
        job,
        metric: Metric::Bench(bench),
    }
}

fn section(
    id: &'static str,
    title: &str,
    note: String,
    lines: Vec<Line>,
    over_time: OverTime,
) -> Section {
    Section {
        id,
        title: title.to_string(),
        note,
        lines,
        over_time,
    }
}

/// Fill, overwrite, then read: a warming `readrandom` runs first and the second
/// instance is reported, as LevelDB's default db_bench sequence does.
const READ_SEQUENCE: [&str; 6] = [
    "fillrandom",
    "overwrite",
    "readrandom",
    "readrandom",
    "readseq",
    "readreverse",
];

fn leveldb(size: Size) -> Study {
    let n: u64 = if size.quick { 100_000 } else { 1_000_000 };
    let large_n: u64 = if size.quick { 100 } else { 1_000 };
    let sync_n: u64 = if size.quick { 1_000 } else { 10_000 };
    let (n_s, large_n_s, sync_n_s) = (th(n), th(large_n), th(sync_n));

    let mut baseline = Job::new(
        "baseline",
        &[
            "fillseq",
            "fillrandom",
            "overwrite",
            "readrandom",
            "readrandom",
            "readseq",
            "readreverse",
        ],
        n,
    );
    baseline.memory = Memory::Baseline { cache: 4 * MIB };

    let mut large = Job::new("large-values", &["fillseq", "fillrandom"], large_n);
    large.value_size = 100_000;

    let mut batch = Job::new("batch", &["fillseqbatch", "fillrandbatch"], n);
    batch.needs = vec![Capability::Batches];

    let sync = Job::new("sync", &["fillseqsync", "fillrandsync"], sync_n);

    let mut nocomp_w = Job::new("no-compression-writes", &["fillseq", "fillrandom"], n);
    nocomp_w.compression = false;
    nocomp_w.needs = vec![Capability::CompressionSwitch];

    let mut more_mem = Job::new("more-memory", &["fillseq", "fillrandom"], n);
    more_mem.memory = Memory::Split {
        write_buffer: 120 * MIB,
        cache: 8 * MIB,
        total: 128 * MIB,
    };

    let mut big_cache = Job::new("larger-caches", &READ_SEQUENCE, n);
    big_cache.memory = Memory::Split {
        write_buffer: 8 * MIB,
        cache: 120 * MIB,
        total: 128 * MIB,
    };

    let mut nocomp_r = Job::new("no-compression-reads", &READ_SEQUENCE, n);
    nocomp_r.compression = false;
    nocomp_r.needs = vec![Capability::CompressionSwitch];

    let jobs = vec![
        baseline, large, batch, sync, nocomp_w, more_mem, big_cache, nocomp_r,
    ];
    let mem = |i: usize| jobs[i].memory.describe();

    let sections = vec![
        section(
            "baseline",
            "1. Baseline performance",
            format!(
                "{n_s} entries, 16-byte keys, 100-byte values (half compressible), asynchronous \
                 writes, light compression on. The seed allows each database 4 MB of cache \
                 memory; here: {}. Reads follow fillrandom + overwrite; the second readrandom \
                 is reported.",
                mem(0)
            ),
            vec![
                line("A. Sequential reads (readseq)", 0, "readseq"),
                line("B. Random reads (readrandom)", 0, "readrandom"),
                line("C. Sequential writes (fillseq)", 0, "fillseq"),
                line("D. Random writes (fillrandom)", 0, "fillrandom"),
                line("Random overwrites (overwrite)", 0, "overwrite"),
                line("Reverse reads (readreverse)", 0, "readreverse"),
            ],
            OverTime::None,
        ),
        section(
            "large-values",
            "2A. Large values",
            format!(
                "{large_n_s} entries of 100,000-byte values (about half compressible), written \
                 into an empty database. Memory: {}.",
                mem(1)
            ),
            vec![
                line("Sequential writes (fillseq)", 1, "fillseq"),
                line("Random writes (fillrandom)", 1, "fillrandom"),
            ],
            OverTime::None,
        ),
        section(
            "batch",
            "2B. Batch writes",
            format!(
                "{} batches of 1000 entries of 100 bytes; ops/s counts entries. Memory: {}.",
                th(n / 1000),
                mem(2)
            ),
            vec![
                line("Sequential batches (fillseqbatch)", 2, "fillseqbatch"),
                line("Random batches (fillrandbatch)", 2, "fillrandbatch"),
            ],
            OverTime::None,
        ),
        section(
            "sync",
            "2C. Synchronous writes",
            format!(
                "{sync_n_s} writes, each waiting for the device (LevelDB-like engines: \
                 WriteOptions.sync; SQLite3: synchronous=FULL; Kyoto: OAUTOSYNC; LMDB: no \
                 MDB_NOSYNC). Disk write caching is left as the machine has it. Memory: {}.",
                mem(3)
            ),
            vec![
                line("Sequential writes (fillseqsync)", 3, "fillseqsync"),
                line("Random writes (fillrandsync)", 3, "fillrandsync"),
            ],
            OverTime::None,
        ),
        section(
            "no-compression-writes",
            "2D. Turning compression off",
            format!(
                "As the baseline writes with --compression=0. Engines that never compress \
                 are marked; compare with their baseline. Memory: {}.",
                mem(4)
            ),
            vec![
                line("Sequential writes (fillseq)", 4, "fillseq"),
                line("Random writes (fillrandom)", 4, "fillrandom"),
            ],
            OverTime::None,
        ),
        section(
            "more-memory",
            "2E. Using more memory",
            format!("128 MB per database: {}.", mem(5)),
            vec![
                line("Sequential writes (fillseq)", 5, "fillseq"),
                line("Random writes (fillrandom)", 5, "fillrandom"),
            ],
            OverTime::None,
        ),
        section(
            "larger-caches",
            "3A. Larger caches",
            format!(
                "128 MB per database, mostly cache: {}. The database is filled by fillrandom + \
                 overwrite in the same process.",
                mem(6)
            ),
            vec![
                line("Sequential reads (readseq)", 6, "readseq"),
                line("Random reads (readrandom)", 6, "readrandom"),
                line("Reverse reads (readreverse)", 6, "readreverse"),
            ],
            OverTime::None,
        ),
        section(
            "no-compression-reads",
            "3B. Reads without compression",
            format!(
                "{n_s} entries written with --compression=0, then read (the seed recompiled \
                 without compression; a run-time switch is used here). Memory: {}.",
                mem(7)
            ),
            vec![
                line("Sequential reads (readseq)", 7, "readseq"),
                line("Random reads (readrandom)", 7, "readrandom"),
                line("Reverse reads (readreverse)", 7, "readreverse"),
            ],
            OverTime::None,
        ),
    ];
    Study {
        id: "leveldb",
        title: "LevelDB report",
        seed: "seeds/leveldb-benchmarks.html",
        intro: format!(
            "Every section of the LevelDB benchmark page: {n_s} entries with 16-byte keys and \
             100-byte values unless a section says otherwise; values are cut from db_bench's \
             half-compressible random text; random keys come from db_bench's fixed seed."
        ),
        aggregation: Aggregation::Median,
        default_runs: 3,
        jobs,
        sections,
    }
}

fn wiredtiger(size: Size) -> Study {
    let n: u64 = if size.quick { 100_000 } else { 1_000_000 };
    let n_s = th(n);
    let mut all = Job::new(
        "all",
        &[
            "fillseq",
            "fillrandom",
            "overwrite",
            "readrandom",
            "readrandom",
            "readseq",
            "readreverse",
            "fill100K",
        ],
        n,
    );
    all.memory = Memory::CacheOnly(128 * MIB);
    let mem = all.memory.describe();
    let note = |what: &str| format!("{what} Memory: {mem}.");
    let sections = vec![
        section(
            "sequential-insert",
            "Sequential insert performance",
            note(&format!(
                "{n_s} sequential 16-byte keys, 100-byte values (50 bytes after compression); \
                 WiredTiger's B-tree loads through a bulk cursor."
            )),
            vec![line("Sequential insert (fillseq)", 0, "fillseq")],
            OverTime::None,
        ),
        section(
            "random-insert",
            "Random insert performance",
            note(&format!(
                "{n_s} random keys (db_bench's generator, which does not avoid repeats)."
            )),
            vec![line("Random insert (fillrandom)", 0, "fillrandom")],
            OverTime::None,
        ),
        section(
            "random-overwrite",
            "Random overwrite performance",
            note("Random overwrites of the database fillrandom left."),
            vec![line("Random overwrite (overwrite)", 0, "overwrite")],
            OverTime::None,
        ),
        section(
            "random-large-values",
            "Random large value performance",
            note(&format!(
                "fill100K: {} random keys with 100,000-byte values into an empty database.",
                th((n / 1000).max(1))
            )),
            vec![line("Random large values (fill100K)", 0, "fill100K")],
            OverTime::None,
        ),
        section(
            "sequential-read",
            "Sequential read forward and reverse",
            note("Full forward and reverse scans of the database left by fillrandom + overwrite."),
            vec![
                line("Sequential read forward (readseq)", 0, "readseq"),
                line("Sequential read reverse (readreverse)", 0, "readreverse"),
            ],
            OverTime::None,
        ),
        section(
            "random-read",
            "Random read",
            note("Random point reads; the second of two readrandom passes is reported."),
            vec![line("Random read (readrandom)", 0, "readrandom")],
            OverTime::None,
        ),
    ];
    Study {
        id: "wiredtiger",
        title: "WiredTiger comparison",
        seed: "seeds/leveldb-vs-wiredtiger.md",
        intro: format!(
            "The original LevelDB benchmark at a 128 MB cache ({n_s} entries, 16-byte keys, \
             100-byte values, fill100K with 100,000-byte values), all benchmarks in one \
             db_bench process per engine and run. Five runs; the minimum and maximum are \
             dropped and the middle three averaged, as in the write-up."
        ),
        aggregation: Aggregation::TrimmedMean,
        default_runs: 5,
        jobs: vec![all],
        sections,
    }
}

fn bangdb_job(id: &'static str, benches: &[&'static str], n: u64, threads: u32) -> Job {
    let mut j = Job::new(id, benches, (n / u64::from(threads)).max(1));
    j.key_size = 10;
    j.value_size = 16;
    j.threads = threads;
    j.memory = Memory::Defaults;
    j.timeseries = true;
    if threads > 1 {
        j.needs = vec![Capability::MultiThreaded];
    }
    j
}

/// Keys of the BangDB study's main runs.
pub fn bangdb_keys(size: Size) -> u64 {
    if size.quick {
        100_000
    } else {
        10_000_000
    }
}

fn bangdb(size: Size) -> Study {
    let n = bangdb_keys(size);
    let n_s = th(n);
    let jobs = vec![
        bangdb_job("seq-1t", &["fillseq", "getseq"], n, 1),
        bangdb_job("seq-4t", &["fillseq", "getseq"], n, 4),
        bangdb_job("rand-1t", &["fillrandom", "readrandom"], n, 1),
        bangdb_job("rand-4t", &["fillrandom", "readrandom"], n, 4),
    ];
    let common = "10-byte keys, 16-byte values, light compression on, db_bench default memory \
                  settings; throughput is sampled about once a second (--timeseries) and the \
                  run with the median ops/s is drawn.";
    let sections = vec![
        section(
            "seq-1t",
            "1. Sequential put and get, 1 thread",
            format!("{n_s} keys put in order, then got in order (one Get per key). {common}"),
            vec![
                line("Sequential put (fillseq)", 0, "fillseq"),
                line("Sequential get (getseq)", 0, "getseq"),
            ],
            OverTime::Timeseries,
        ),
        section(
            "seq-4t",
            "2. Sequential put and get, 4 threads",
            format!(
                "4 threads, each putting then getting {} keys in order ({n_s} operations per \
                 benchmark in all). {common}",
                th(n / 4)
            ),
            vec![
                line("Sequential put (fillseq)", 1, "fillseq"),
                line("Sequential get (getseq)", 1, "getseq"),
            ],
            OverTime::Timeseries,
        ),
        section(
            "rand-1t",
            "3. Random put and get, 1 thread",
            format!("{n_s} random puts, then {n_s} random gets. {common}"),
            vec![
                line("Random put (fillrandom)", 2, "fillrandom"),
                line("Random get (readrandom)", 2, "readrandom"),
            ],
            OverTime::Timeseries,
        ),
        section(
            "rand-4t",
            "4. Random put and get, 4 threads",
            format!(
                "4 threads, each doing {} random puts, then {} random gets. {common}",
                th(n / 4),
                th(n / 4)
            ),
            vec![
                line("Random put (fillrandom)", 3, "fillrandom"),
                line("Random get (readrandom)", 3, "readrandom"),
            ],
            OverTime::Timeseries,
        ),
    ];
    Study {
        id: "bangdb",
        title: "BangDB comparison",
        seed: "seeds/bangdb-vs-leveldb.txt",
        intro: format!(
            "The BangDB write-up's put/get tests scaled to this machine: N = {n_s} keys (the seed \
             used 75-100 million on an 8 GB, 4-core machine; this machine has 2 cores shared \
             with builds). With 4 threads db_bench runs N/4 operations per thread. The \
             1-billion-key run is the separate opt-in study `bangdb-scale`."
        ),
        aggregation: Aggregation::Median,
        default_runs: 3,
        jobs,
        sections,
    }
}

/// Key count of the scale test: the largest whole number of millions that fits
/// half the free space at [`SCALE_BYTES_PER_KEY`], at most a billion.
pub fn scale_keys(size: Size) -> u64 {
    if size.quick {
        return 200_000;
    }
    let free = size
        .free_bytes
        .unwrap_or(100_000_000 * 2 * SCALE_BYTES_PER_KEY);
    let fit = free / 2 / SCALE_BYTES_PER_KEY;
    let millions = (fit / 1_000_000).max(1);
    (millions * 1_000_000).min(SCALE_MAX_KEYS)
}

fn bangdb_scale(size: Size) -> Study {
    let n = scale_keys(size);
    let n_s = th(n);
    let job = bangdb_job("seq-1t-scale", &["fillseq", "getseq"], n, 1);
    let free = size
        .free_bytes
        .map(|b| format!("{:.1} GB free", b as f64 / 1e9))
        .unwrap_or_else(|| "free space unknown".to_string());
    Study {
        id: "bangdb-scale",
        title: "BangDB scale test",
        seed: "seeds/bangdb-vs-leveldb.txt",
        intro: format!(
            "Test 5 of the BangDB write-up (sequential put and get of 1 billion keys, 1 thread) \
             at the largest size the disk allows: N = {n_s} keys ({free} on the database file \
             system, budgeting {SCALE_BYTES_PER_KEY} bytes per key and half the free space; \
             capped at one billion)."
        ),
        aggregation: Aggregation::Median,
        default_runs: 3,
        jobs: vec![job],
        sections: vec![section(
            "seq-1t-scale",
            "5. Sequential put and get, 1 thread, scale test",
            format!(
                "{n_s} keys put in order, then got in order; 10-byte keys, 16-byte values; \
                 throughput over time from the median run."
            ),
            vec![
                line("Sequential put (fillseq)", 0, "fillseq"),
                line("Sequential get (getseq)", 0, "getseq"),
            ],
            OverTime::Timeseries,
        )],
    }
}

fn sqlite4(size: Size) -> Study {
    let (iterations, iter_ops, pause_ms) = if size.quick {
        (20, 5_000, 250)
    } else {
        (200, 50_000, 2_500)
    };
    let (iterations_s, iter_ops_s) = (th(iterations), th(iter_ops));
    let job = |id: &'static str, wb: u64, pause: u64| {
        let mut j = Job::new(id, &["lsmiter"], iterations * iter_ops);
        j.key_size = 12;
        j.value_size = 100;
        j.memory = Memory::WriteBuffer(wb);
        j.lsmiter = Some(LsmIter {
            iterations,
            iter_ops,
            pause_ms: pause,
        });
        j
    };
    let jobs = vec![
        job("small-buffers", MIB, 0),
        job("large-buffers", 4 * MIB, 0),
        job("large-buffers-pauses", 4 * MIB, pause_ms),
    ];
    let lines = |j: usize| {
        vec![
            Line {
                label: "Inserts, mean over iterations",
                job: j,
                metric: Metric::IterMean(IterPhase::Insert),
            },
            Line {
                label: "Lookups, mean over iterations",
                job: j,
                metric: Metric::IterMean(IterPhase::Lookup),
            },
            Line {
                label: "Inserts, slowest iteration",
                job: j,
                metric: Metric::IterMin(IterPhase::Insert),
            },
            Line {
                label: "Lookups, slowest iteration",
                job: j,
                metric: Metric::IterMin(IterPhase::Lookup),
            },
        ]
    };
    let what = format!(
        "{iterations_s} iterations of {iter_ops_s} random inserts (12-byte random keys, 100-byte \
         random values, each its own write) then {iter_ops_s} lookups of present keys"
    );
    let sections = vec![
        section(
            "small-buffers",
            "Small write buffers test",
            format!("{what}. {}.", jobs[0].memory.describe()),
            lines(0),
            OverTime::Iterations,
        ),
        section(
            "large-buffers",
            "Large write buffers test",
            format!("{what}. {}.", jobs[1].memory.describe()),
            lines(1),
            OverTime::Iterations,
        ),
        section(
            "large-buffers-pauses",
            "Large write buffers test with pauses",
            format!(
                "{what}, sleeping {:.2} s after each iteration. {}.",
                pause_ms as f64 / 1000.0,
                jobs[2].memory.describe()
            ),
            lines(2),
            OverTime::Iterations,
        ),
    ];
    Study {
        id: "sqlite4",
        title: "SQLite4 LSM study",
        seed: "seeds/sqlite4-lsm-benchmarks.txt",
        intro: format!(
            "The SQLite4 LSM benchmark: {what}; ops/s of every iteration is recorded and drawn \
             as a line per engine (the per-iteration median over runs), so stalls show as dips. \
             Sections follow the seed: 1 MB and 4 MB write buffers, and 4 MB with a pause per \
             iteration."
        ),
        aggregation: Aggregation::Median,
        default_runs: 3,
        jobs,
        sections,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::{engine, ENGINES};

    fn full() -> Size {
        Size {
            quick: false,
            free_bytes: Some(80_000_000_000),
        }
    }

    #[test]
    fn every_line_points_at_a_benchmark_its_job_runs() {
        for quick in [false, true] {
            for id in STUDY_IDS {
                let s = build(id, Size { quick, ..full() }).unwrap();
                assert!(!s.sections.is_empty(), "{id}");
                for sec in &s.sections {
                    for l in &sec.lines {
                        let job = &s.jobs[l.job];
                        assert!(
                            job.benchmarks.contains(&l.metric.io_bench()),
                            "{id}/{}: {} not in {:?}",
                            sec.id,
                            l.label,
                            job.benchmarks
                        );
                    }
                }
                for (i, j) in s.jobs.iter().enumerate() {
                    assert!(s.jobs[..i].iter().all(|k| k.id != j.id), "{id}: dup job");
                }
            }
        }
        assert!(build("nope", full()).is_none());
    }

    #[test]
    fn baseline_invocation_is_exact() {
        let s = build("leveldb", full()).unwrap();
        let db = Path::new("/db/x");
        let args = s.jobs[0].args(engine("leveldb").unwrap(), db, None);
        assert_eq!(
            args.join(" "),
            "--engine=leveldb --db=/db/x \
             --benchmarks=fillseq,fillrandom,overwrite,readrandom,readrandom,readseq,readreverse \
             --num=1000000 --value_size=100 --key_size=16 --threads=1 --compression=1 \
             --bloom_bits=-1 --histogram=0 --use_existing_db=0"
        );
        let sqlite = s.jobs[0].args(engine("sqlite3").unwrap(), db, None);
        assert_eq!(sqlite.last().unwrap(), "--cache_size=4194304");
        let lmdb = s.jobs[0].args(engine("lmdb").unwrap(), db, None);
        assert!(!lmdb.iter().any(|a| a.starts_with("--cache_size")));
    }

    #[test]
    fn memory_settings_follow_the_seed() {
        let s = build("leveldb", full()).unwrap();
        let more = &s.jobs[s.job_index("more-memory").unwrap()];
        assert_eq!(
            more.memory.flags(engine("shale").unwrap()),
            vec![
                ("write_buffer_size", 125_829_120),
                ("cache_size", 8_388_608)
            ]
        );
        assert_eq!(
            more.memory.flags(engine("kyoto-treedb").unwrap()),
            vec![("cache_size", 134_217_728)]
        );
        let caches = &s.jobs[s.job_index("larger-caches").unwrap()];
        assert_eq!(
            caches.memory.flags(engine("rocksdb").unwrap()),
            vec![
                ("write_buffer_size", 8_388_608),
                ("cache_size", 125_829_120)
            ]
        );
        let wt = build("wiredtiger", full()).unwrap();
        for e in &ENGINES[..7] {
            assert_eq!(
                wt.jobs[0].memory.flags(e),
                vec![("cache_size", 134_217_728)]
            );
        }
        assert_eq!(wt.default_runs, 5);
        assert_eq!(wt.aggregation, Aggregation::TrimmedMean);
    }

    #[test]
    fn sizes_and_quick_mode() {
        let s = build("leveldb", full()).unwrap();
        assert_eq!(s.jobs[1].num, 1000);
        assert_eq!(s.jobs[1].value_size, 100_000);
        assert_eq!(s.jobs[3].num, 10_000);
        let q = build(
            "leveldb",
            Size {
                quick: true,
                ..full()
            },
        )
        .unwrap();
        for (a, b) in s.jobs.iter().zip(&q.jobs) {
            assert!(b.num * 10 <= a.num, "{}", a.id);
        }
        let b = build("bangdb", full()).unwrap();
        assert_eq!(b.jobs[0].num, 10_000_000);
        assert_eq!(b.jobs[1].num, 2_500_000);
        assert_eq!(b.jobs[1].ops("fillseq"), 10_000_000);
        assert!(b.jobs[1].needs.contains(&Capability::MultiThreaded));
        let args = b.jobs[0].args(
            engine("shale").unwrap(),
            Path::new("/d"),
            Some(Path::new("/t.csv")),
        );
        assert!(args.contains(&"--key_size=10".to_string()));
        assert!(args.contains(&"--value_size=16".to_string()));
        assert_eq!(args.last().unwrap(), "--timeseries=/t.csv");
    }

    #[test]
    fn sqlite4_invocations() {
        let s = build("sqlite4", full()).unwrap();
        let args = s.jobs[2].args(engine("shale").unwrap(), Path::new("/d"), None);
        let tail: Vec<&str> = args[args.len() - 4..].iter().map(|s| s.as_str()).collect();
        assert_eq!(
            tail,
            [
                "--write_buffer_size=4194304",
                "--iterations=200",
                "--iter_ops=50000",
                "--pause_ms=2500"
            ]
        );
        assert!(args.contains(&"--benchmarks=lsmiter".to_string()));
        assert!(args.contains(&"--key_size=12".to_string()));
        assert_eq!(s.jobs[0].ops("lsmiter"), 20_000_000);
        assert_eq!(s.jobs[2].pause_seconds(), 500.0);
        assert_eq!(s.jobs[0].pause_seconds(), 0.0);
    }

    #[test]
    fn scale_test_fits_the_disk() {
        assert_eq!(scale_keys(full()), 625_000_000);
        let huge = Size {
            quick: false,
            free_bytes: Some(1 << 50),
        };
        assert_eq!(scale_keys(huge), SCALE_MAX_KEYS);
        let tiny = Size {
            quick: false,
            free_bytes: Some(1000),
        };
        assert_eq!(scale_keys(tiny), 1_000_000);
        assert!(
            scale_keys(Size {
                quick: true,
                ..full()
            }) <= 1_000_000
        );
    }
}
