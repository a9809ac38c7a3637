//! The studies of `BENCHMARK.md`, each as the exact `db_bench` invocations
//! ("jobs") it needs and the seed sections ("lines" of a table) read from them.
//!
//! Invariants: every [`Line`] names a job of its own study and a benchmark that
//! job runs; every job's argument list is fully determined by the study, the
//! engine and the paths, so a report states the commands it ran. Sizes are
//! fixed per study; `--quick` divides them by ten or more, and the hidden
//! `--scale` multiplies them again (for tests).
//!
//! Every benchmark name used is one db_bench knows (db_bench rejects any
//! other): LevelDB 1.23's, and the ones db_bench adds for these studies
//! (`fillrandbatch`; BangDB's `putseq`, `putrandom`, `getseq`, `getrandom`;
//! SQLite4's `lsmiter`). Their meaning and output are in this crate's README
//! ("The db_bench contract").

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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Size {
    /// A tenth of the size or smaller, for a smoke test.
    pub quick: bool,
    /// Multiplies every count (1 normally; smaller in tests).
    pub scale: f64,
    /// Free bytes on the file system of the database root (sizes the scale test).
    pub free_bytes: Option<u64>,
}

impl Size {
    /// The full size.
    pub fn full(free_bytes: Option<u64>) -> Size {
        Size {
            quick: false,
            scale: 1.0,
            free_bytes,
        }
    }

    /// `full` or `quick` as the size says, times the scale, at least 1.
    pub fn count(&self, full: u64, quick: u64) -> u64 {
        let base = if self.quick { quick } else { full };
        ((base as f64 * self.scale).round() as u64).max(1)
    }
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
    /// `--sync=1`: every write waits for stable storage.
    pub sync: bool,
    /// Memory flags per engine.
    pub memory: Memory,
    /// `--timeseries=` is passed, sampled every this many seconds.
    pub timeseries: Option<f64>,
    /// `lsmiter` settings, when the job runs it.
    pub lsmiter: Option<LsmIter>,
    /// Capabilities every engine must have to run this job.
    pub needs: Vec<Capability>,
    /// `--duration=`: seconds after which db_bench stops any one benchmark
    /// and reports what it finished (the report marks such figures).
    pub time_cap: Option<u64>,
    /// Engines whose database file does not depend on their memory
    /// settings start from a copy of an earlier job's database instead of
    /// building their own.
    pub reuse: Option<Reuse>,
}

/// Where a job's single-cache engines take their database from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reuse {
    /// Id of the earlier job of the same study and run whose final database
    /// is copied.
    pub from: &'static str,
    /// How many leading benchmarks of this job that database already
    /// stands for (they are not run again).
    pub skip: usize,
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
            sync: false,
            memory: Memory::Baseline { cache: 4 * MIB },
            timeseries: None,
            lsmiter: None,
            needs: vec![],
            time_cap: None,
            reuse: None,
        }
    }

    /// The reuse that applies to `engine`: engines with a single page cache,
    /// or none, read a copy of the earlier job's database; LSM engines,
    /// whose files depend on the write buffer, build their own.
    pub fn reuse_for(&self, engine: &Engine) -> Option<Reuse> {
        match engine.memory {
            MemoryModel::WriteBufferAndCache => None,
            MemoryModel::SingleCache | MemoryModel::OsPageCache => self.reuse,
        }
    }

    /// The benchmarks `engine` runs in this job, in order.
    pub fn benchmarks_for(&self, engine: &Engine) -> &[&'static str] {
        match self.reuse_for(engine) {
            Some(r) => &self.benchmarks[r.skip.min(self.benchmarks.len())..],
            None => &self.benchmarks,
        }
    }

    /// The complete db_bench argument list (without the program) for `engine`.
    pub fn args(&self, engine: &Engine, db: &Path, timeseries: Option<&Path>) -> Vec<String> {
        let mut a = vec![
            format!("--engine={}", engine.name),
            format!("--db={}", db.display()),
            format!("--benchmarks={}", self.benchmarks_for(engine).join(",")),
            format!("--num={}", self.num),
            format!("--value_size={}", self.value_size),
            format!("--key_size={}", self.key_size),
            format!("--threads={}", self.threads),
            format!("--compression={}", u8::from(self.compression)),
            "--bloom_bits=-1".to_string(),
            "--histogram=0".to_string(),
            format!(
                "--use_existing_db={}",
                u8::from(self.reuse_for(engine).is_some())
            ),
        ];
        if let Some(cap) = self.time_cap {
            a.push(format!("--duration={cap}"));
        }
        if self.sync {
            a.push("--sync=1".to_string());
        }
        for (flag, v) in self.memory.flags(engine) {
            a.push(format!("--{flag}={v}"));
        }
        if let Some(it) = self.lsmiter {
            a.push(format!("--iterations={}", it.iterations));
            a.push(format!("--iter_ops={}", it.iter_ops));
            a.push(format!("--pause_ms={}", it.pause_ms));
        }
        if let (Some(interval), Some(ts)) = (self.timeseries, timeseries) {
            a.push(format!("--stats_interval_seconds={interval}"));
            a.push(format!("--timeseries={}", ts.display()));
        }
        a
    }

    /// Operations one benchmark of this job performs (all threads together).
    pub fn ops(&self, bench: &str) -> u64 {
        match bench {
            // LevelDB's fill100K writes num/1000 values of 100,000 bytes.
            "fill100K" => (self.num / 1000).max(1),
            // BangDB's benchmarks share num out over the threads.
            "putseq" | "putrandom" | "getseq" | "getrandom" => self.num,
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

    /// False for the lookup lines of `lsmiter`, whose `# io` line counts the
    /// inserts' writes: they get no write amplification.
    pub fn measures_writes(&self) -> bool {
        !matches!(
            self,
            Metric::IterMean(IterPhase::Lookup) | Metric::IterMin(IterPhase::Lookup)
        )
    }
}

/// One workload line of a section's table.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Row label.
    pub label: String,
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
    /// Engines this study leaves out unless `--engines` names them, each
    /// with the reason (said in the report).
    pub left_out: Vec<(&'static str, &'static str)>,
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
    /// The engines this study runs: `chosen` as given when `given`, else
    /// all of `chosen` but the ones the study leaves out by default.
    pub fn engines_from(&self, chosen: &[&'static Engine], given: bool) -> Vec<&'static Engine> {
        chosen
            .iter()
            .copied()
            .filter(|e| given || !self.left_out.iter().any(|(n, _)| *n == e.name))
            .collect()
    }
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

fn line(label: impl Into<String>, job: usize, bench: &'static str) -> Line {
    Line {
        label: label.into(),
        job,
        metric: Metric::Bench(bench),
    }
}

/// `(label, benchmark)` lines read from one job.
fn lines(job: usize, rows: &[(&str, &'static str)]) -> Vec<Line> {
    rows.iter().map(|&(l, b)| line(l, job, b)).collect()
}

/// The write lines most LevelDB sections have.
fn write_lines(job: usize) -> Vec<Line> {
    lines(
        job,
        &[
            ("Sequential writes (fillseq)", "fillseq"),
            ("Random writes (fillrandom)", "fillrandom"),
        ],
    )
}

/// The read lines of the read sections.
fn read_lines(job: usize) -> Vec<Line> {
    lines(
        job,
        &[
            ("Sequential reads (readseq)", "readseq"),
            ("Random reads (readrandom)", "readrandom"),
            ("Reverse reads (readreverse)", "readreverse"),
        ],
    )
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

/// A table of bars only (most sections).
fn bars(id: &'static str, title: &str, note: String, lines: Vec<Line>) -> Section {
    section(id, title, note, lines, OverTime::None)
}

/// Seconds after which db_bench stops a benchmark of the full-size LevelDB
/// study (db_bench's `--duration`): only an engine far slower than the rest
/// reaches it, and its figure is marked; it keeps the study within its time
/// budget.
pub const LEVELDB_TIME_CAP_S: u64 = 45;

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
    let n = size.count(1_000_000, 100_000);
    let large_n = size.count(1_000, 100);
    let sync_n = size.count(10_000, 1_000);
    let (n_s, large_n_s, sync_n_s) = (th(n), th(large_n), th(sync_n));

    let mut baseline = Job::new("baseline", &[&["fillseq"][..], &READ_SEQUENCE].concat(), n);
    baseline.memory = Memory::Baseline { cache: 4 * MIB };

    let mut large = Job::new("large-values", &["fillseq", "fillrandom"], large_n);
    large.value_size = 100_000;

    let mut batch = Job::new("batch", &["fillbatch", "fillrandbatch"], n);
    batch.needs = vec![Capability::Batches];

    let mut sync = Job::new("sync", &["fillseq", "fillrandom"], sync_n);
    sync.sync = true;

    // The writes and the reads without compression come from one job: its
    // fillrandom + overwrite build the database the reads use.
    let mut nocomp = Job::new(
        "no-compression",
        &[&["fillseq"][..], &READ_SEQUENCE].concat(),
        n,
    );
    nocomp.compression = false;
    nocomp.needs = vec![Capability::CompressionSwitch];

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
    // A B-tree's file after fillrandom + overwrite is the same whatever its
    // cache: those engines read a copy of their baseline database.
    big_cache.reuse = Some(Reuse {
        from: "baseline",
        skip: 2,
    });

    let mut jobs = vec![baseline, large, batch, sync, nocomp, more_mem, big_cache];
    if !size.quick {
        for j in &mut jobs {
            j.time_cap = Some(LEVELDB_TIME_CAP_S);
        }
    }
    let mem = |i: usize| jobs[i].memory.describe();

    let baseline_lines = lines(
        0,
        &[
            ("A. Sequential reads (readseq)", "readseq"),
            ("B. Random reads (readrandom)", "readrandom"),
            ("C. Sequential writes (fillseq)", "fillseq"),
            ("D. Random writes (fillrandom)", "fillrandom"),
            ("Random overwrites (overwrite)", "overwrite"),
            ("Reverse reads (readreverse)", "readreverse"),
        ],
    );

    let sections = vec![
        bars(
            "baseline",
            "1. Baseline performance",
            format!(
                "{n_s} entries, 16-byte keys, 100-byte values (half compressible), asynchronous \
                 writes, light compression on. The seed allows each database 4 MB of cache \
                 memory; here: {}. Reads follow fillrandom + overwrite; the second readrandom \
                 is reported.",
                mem(0)
            ),
            baseline_lines,
        ),
        bars(
            "large-values",
            "2A. Large values",
            format!(
                "{large_n_s} entries of 100,000-byte values (about half compressible), written \
                 into an empty database. Memory: {}.",
                mem(1)
            ),
            write_lines(1),
        ),
        bars(
            "batch",
            "2B. Batch writes",
            format!(
                "{} batches of 1000 entries of 100 bytes (db_bench's fillbatch and \
                 fillrandbatch); ops/s counts entries. Memory: {}.",
                th(n.div_ceil(1000)),
                mem(2)
            ),
            lines(
                2,
                &[
                    ("Sequential batches (fillbatch)", "fillbatch"),
                    ("Random batches (fillrandbatch)", "fillrandbatch"),
                ],
            ),
        ),
        bars(
            "sync",
            "2C. Synchronous writes",
            format!(
                "{sync_n_s} writes (fillseq and fillrandom with --sync=1), each waiting for the \
                 device (LevelDB-like engines: WriteOptions.sync; SQLite3: synchronous=FULL; \
                 Kyoto: OAUTOSYNC; LMDB: no MDB_NOSYNC; WiredTiger: a synced log commit). Disk \
                 write caching is left as the machine has it. Memory: {}.",
                mem(3)
            ),
            write_lines(3),
        ),
        bars(
            "no-compression-writes",
            "2D. Turning compression off",
            format!(
                "As the baseline writes with --compression=0. Engines that never compress \
                 are marked; compare with their baseline. Memory: {}.",
                mem(4)
            ),
            write_lines(4),
        ),
        bars(
            "more-memory",
            "2E. Using more memory",
            format!("128 MB per database: {}.", mem(5)),
            write_lines(5),
        ),
        bars(
            "larger-caches",
            "3A. Larger caches",
            format!(
                "128 MB per database, mostly cache: {}. LSM engines fill the database by \
                 fillrandom + overwrite in the same process, with this section's write buffer; \
                 engines with one page cache (or none) read a copy of the database their \
                 baseline run built by the same fillrandom + overwrite (a B-tree's file does \
                 not depend on its cache size), opened in a new process with the larger cache; \
                 the first readrandom warms the cache and the second is reported.",
                mem(6)
            ),
            read_lines(6),
        ),
        bars(
            "no-compression-reads",
            "3B. Reads without compression",
            format!(
                "{n_s} entries written with --compression=0, then read (the seed recompiled \
                 without compression; a run-time switch is used here), by the job of section \
                 2D (fillseq, then fillrandom + overwrite, then the reads). Memory: {}.",
                mem(4)
            ),
            read_lines(4),
        ),
    ];
    Study {
        left_out: vec![(
            "wiredtiger-lsm",
            "WiredTiger's LSM tree needs a cache of three chunks; in the 4 MB sections its \
             chunks shrink to 1.3 MB and its random reads take about 0.4 ms each, which alone \
             would take this study past its 30-minute budget",
        )],
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
    let n = size.count(1_000_000, 100_000);
    let n_s = th(n);
    let mut all = Job::new(
        "all",
        &[&["fillseq"][..], &READ_SEQUENCE, &["fill100K"]].concat(),
        n,
    );
    all.memory = Memory::CacheOnly(128 * MIB);
    let mem = all.memory.describe();
    let one = |id, title, what: String, label: &str, bench| {
        bars(
            id,
            title,
            format!("{what} Memory: {mem}."),
            vec![line(format!("{label} ({bench})"), 0, bench)],
        )
    };
    let mut sections = vec![
        one(
            "sequential-insert",
            "Sequential insert performance",
            format!(
                "{n_s} sequential 16-byte keys, 100-byte values (50 bytes after compression); \
                 WiredTiger's B-tree loads through a bulk cursor."
            ),
            "Sequential insert",
            "fillseq",
        ),
        one(
            "random-insert",
            "Random insert performance",
            format!("{n_s} random keys (db_bench's generator, which does not avoid repeats)."),
            "Random insert",
            "fillrandom",
        ),
        one(
            "random-overwrite",
            "Random overwrite performance",
            "Random overwrites of the database fillrandom left.".to_string(),
            "Random overwrite",
            "overwrite",
        ),
        one(
            "random-large-values",
            "Random large value performance",
            format!(
                "fill100K: {} random keys with 100,000-byte values into an empty database.",
                th((n / 1000).max(1))
            ),
            "Random large values",
            "fill100K",
        ),
        bars(
            "sequential-read",
            "Sequential read forward and reverse",
            format!(
                "Full forward and reverse scans of the database left by fillrandom + \
                 overwrite. Memory: {mem}."
            ),
            lines(
                0,
                &[
                    ("Sequential read forward (readseq)", "readseq"),
                    ("Sequential read reverse (readreverse)", "readreverse"),
                ],
            ),
        ),
    ];
    sections.push(one(
        "random-read",
        "Random read",
        "Random point reads; the second of two readrandom passes is reported.".to_string(),
        "Random read",
        "readrandom",
    ));
    Study {
        left_out: vec![],
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

/// A BangDB put-then-get job: `n` operations per benchmark in all, shared
/// out over `threads` threads, sampled over time.
fn bangdb_job(id: &'static str, benches: &[&'static str], n: u64, threads: u32, size: Size) -> Job {
    let mut j = Job::new(id, benches, n);
    j.key_size = 10;
    j.value_size = 16;
    j.threads = threads;
    j.memory = Memory::Defaults;
    j.timeseries = Some(if size.quick { 0.05 } else { 1.0 });
    j
}

/// Keys of the BangDB study's main runs.
pub fn bangdb_keys(size: Size) -> u64 {
    size.count(10_000_000, 100_000)
}

/// The section of one BangDB job: put then get, drawn over time.
fn bangdb_section(id: &'static str, title: &str, note: String, job: usize, seq: bool) -> Section {
    let rows: [(&str, &'static str); 2] = if seq {
        [
            ("Sequential put (putseq)", "putseq"),
            ("Sequential get (getseq)", "getseq"),
        ]
    } else {
        [
            ("Random put (putrandom)", "putrandom"),
            ("Random get (getrandom)", "getrandom"),
        ]
    };
    section(id, title, note, lines(job, &rows), OverTime::Timeseries)
}

fn bangdb(size: Size) -> Study {
    let n = bangdb_keys(size);
    let n_s = th(n);
    let jobs = vec![
        bangdb_job("seq-1t", &["putseq", "getseq"], n, 1, size),
        bangdb_job("seq-4t", &["putseq", "getseq"], n, 4, size),
        bangdb_job("rand-1t", &["putrandom", "getrandom"], n, 1, size),
        bangdb_job("rand-4t", &["putrandom", "getrandom"], n, 4, size),
    ];
    let common = "10-byte keys, 16-byte values, light compression on, db_bench default memory \
                  settings; throughput is sampled over time (--timeseries) and the run with the \
                  median ops/s is drawn.";
    let quarter = th(n / 4);
    let sections = vec![
        bangdb_section(
            "seq-1t",
            "1. Sequential put and get, 1 thread",
            format!("{n_s} keys put in order, then got in order (one Get per key). {common}"),
            0,
            true,
        ),
        bangdb_section(
            "seq-4t",
            "2. Sequential put and get, 4 threads",
            format!(
                "4 threads, each putting then getting its own quarter of the {n_s} keys in \
                 order ({quarter} each). {common}"
            ),
            1,
            true,
        ),
        bangdb_section(
            "rand-1t",
            "3. Random put and get, 1 thread",
            format!("{n_s} puts of random keys from 0..{n_s}, then {n_s} random gets. {common}"),
            2,
            false,
        ),
        bangdb_section(
            "rand-4t",
            "4. Random put and get, 4 threads",
            format!(
                "4 threads, each doing {quarter} puts of random keys from 0..{n_s}, then \
                 {quarter} random gets. {common}"
            ),
            3,
            false,
        ),
    ];
    Study {
        left_out: vec![],
        id: "bangdb",
        title: "BangDB comparison",
        seed: "seeds/bangdb-vs-leveldb.txt",
        intro: format!(
            "The BangDB write-up's put/get tests scaled to this machine: N = {n_s} keys (the seed \
             used 75-100 million on an 8 GB, 4-core machine; this machine has 2 cores shared \
             with builds). With 4 threads each thread takes a quarter of the N operations \
             (db_bench's putseq, putrandom, getseq, getrandom). The 1-billion-key run is the \
             separate opt-in study `bangdb-scale`."
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
    let free = size
        .free_bytes
        .unwrap_or(100_000_000 * 2 * SCALE_BYTES_PER_KEY);
    let fit = free / 2 / SCALE_BYTES_PER_KEY;
    let millions = (fit / 1_000_000).max(1);
    size.count((millions * 1_000_000).min(SCALE_MAX_KEYS), 200_000)
}

fn bangdb_scale(size: Size) -> Study {
    let n = scale_keys(size);
    let n_s = th(n);
    let job = bangdb_job("seq-1t-scale", &["putseq", "getseq"], n, 1, size);
    let free = size
        .free_bytes
        .map(|b| format!("{:.1} GB free", b as f64 / 1e9))
        .unwrap_or_else(|| "free space unknown".to_string());
    Study {
        left_out: vec![],
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
        sections: vec![bangdb_section(
            "seq-1t-scale",
            "5. Sequential put and get, 1 thread, scale test",
            format!(
                "{n_s} keys put in order, then got in order; 10-byte keys, 16-byte values; \
                 throughput over time from the median run."
            ),
            0,
            true,
        )],
    }
}

/// The four lines of an SQLite4 section (job `j`).
fn iteration_lines(j: usize) -> Vec<Line> {
    let mut v = Vec::new();
    for (what, metric) in [
        (
            "mean over iterations",
            Metric::IterMean as fn(IterPhase) -> Metric,
        ),
        ("slowest iteration", Metric::IterMin),
    ] {
        for (phase, name) in [
            (IterPhase::Insert, "Inserts"),
            (IterPhase::Lookup, "Lookups"),
        ] {
            v.push(Line {
                label: format!("{name}, {what}"),
                job: j,
                metric: metric(phase),
            });
        }
    }
    v
}

fn sqlite4(size: Size) -> Study {
    let iterations = if size.quick { 20 } else { 200 };
    let iter_ops = size.count(50_000, 5_000);
    let pause_ms = size.count(2_500, 250);
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
    let what = format!(
        "{iterations_s} iterations of {iter_ops_s} random inserts (12-byte random keys, 100-byte \
         random values, each its own write) then {iter_ops_s} lookups of present keys"
    );
    let sections = [
        ("small-buffers", "Small write buffers test", ""),
        ("large-buffers", "Large write buffers test", ""),
        (
            "large-buffers-pauses",
            "Large write buffers test with pauses",
            "pause",
        ),
    ]
    .into_iter()
    .enumerate()
    .map(|(j, (id, title, pause))| {
        let sleep = if pause.is_empty() {
            String::new()
        } else {
            format!(
                ", sleeping {:.2} s after each iteration",
                pause_ms as f64 / 1000.0
            )
        };
        section(
            id,
            title,
            format!("{what}{sleep}. Memory: {}.", jobs[j].memory.describe()),
            iteration_lines(j),
            OverTime::Iterations,
        )
    })
    .collect();
    Study {
        left_out: vec![],
        id: "sqlite4",
        title: "SQLite4 LSM study",
        seed: "seeds/sqlite4-lsm-benchmarks.txt",
        intro: format!(
            "The SQLite4 LSM benchmark (db_bench's lsmiter): {what}; ops/s of every iteration \
             is recorded and drawn as a line per engine (the per-iteration median over runs), \
             so stalls show as dips. Sections follow the seed: 1 MB and 4 MB write buffers, and \
             4 MB with a pause per iteration."
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
        Size::full(Some(80_000_000_000))
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
             --bloom_bits=-1 --histogram=0 --use_existing_db=0 --duration=45"
        );
        let sqlite = s.jobs[0].args(engine("sqlite3").unwrap(), db, None);
        assert_eq!(sqlite.last().unwrap(), "--cache_size=4194304");
        let lmdb = s.jobs[0].args(engine("lmdb").unwrap(), db, None);
        assert!(!lmdb.iter().any(|a| a.starts_with("--cache_size")));
    }

    #[test]
    fn larger_caches_reuse_the_baseline_database_of_single_cache_engines() {
        let s = build("leveldb", full()).unwrap();
        let caches = &s.jobs[s.job_index("larger-caches").unwrap()];
        let db = Path::new("/db/x");
        let sqlite = caches.args(engine("sqlite3").unwrap(), db, None);
        assert!(sqlite.contains(&"--use_existing_db=1".to_string()));
        assert!(
            sqlite.contains(&"--benchmarks=readrandom,readrandom,readseq,readreverse".to_string())
        );
        let reuse = caches.reuse_for(engine("lmdb").unwrap()).unwrap();
        assert_eq!(reuse.from, "baseline");
        assert_eq!(
            s.jobs[0].benchmarks[s.jobs[0].benchmarks.len() - 6..][..reuse.skip],
            caches.benchmarks[..reuse.skip],
            "the copied database stands for the skipped benchmarks"
        );
        // LSM engines build their own with the section's write buffer.
        let shale = caches.args(engine("shale").unwrap(), db, None);
        assert!(shale.contains(&"--use_existing_db=0".to_string()));
        assert!(shale.contains(
            &"--benchmarks=fillrandom,overwrite,readrandom,readrandom,readseq,readreverse"
                .to_string()
        ));
        // Every other job builds its own database.
        assert!(s.jobs.iter().filter(|j| j.reuse.is_some()).count() == 1);
        // The quick study has no time cap; the full one caps every job.
        let quick = Size {
            quick: true,
            ..full()
        };
        assert!(build("leveldb", quick)
            .unwrap()
            .jobs
            .iter()
            .all(|j| j.time_cap.is_none()));
        assert!(s
            .jobs
            .iter()
            .all(|j| j.time_cap == Some(LEVELDB_TIME_CAP_S)));
    }

    #[test]
    fn the_leveldb_study_leaves_the_lsm_tree_of_wiredtiger_out_unless_named() {
        let s = build("leveldb", full()).unwrap();
        let all: Vec<&'static Engine> = ENGINES.iter().collect();
        let names = |v: Vec<&'static Engine>| v.iter().map(|e| e.name).collect::<Vec<_>>();
        let default = names(s.engines_from(&all, false));
        assert_eq!(default.len(), ENGINES.len() - 1);
        assert!(!default.contains(&"wiredtiger-lsm"));
        assert!(names(s.engines_from(&all, true)).contains(&"wiredtiger-lsm"));
        let wt = build("wiredtiger", full()).unwrap();
        assert_eq!(wt.engines_from(&all, false).len(), ENGINES.len());
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
        assert_eq!(s.jobs[2].benchmarks, ["fillbatch", "fillrandbatch"]);
        assert_eq!(s.jobs[3].num, 10_000);
        let sync = s.jobs[3].args(engine("lmdb").unwrap(), Path::new("/d"), None);
        assert!(sync.contains(&"--benchmarks=fillseq,fillrandom".to_string()));
        assert!(sync.contains(&"--sync=1".to_string()));
        assert!(!s.jobs[0]
            .args(engine("lmdb").unwrap(), Path::new("/d"), None)
            .contains(&"--sync=1".to_string()));
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
        let tiny = build(
            "leveldb",
            Size {
                quick: true,
                scale: 0.01,
                ..full()
            },
        )
        .unwrap();
        assert_eq!(tiny.jobs[0].num, 1_000);
        assert_eq!(tiny.jobs[1].num, 1, "counts never reach zero");
        let b = build("bangdb", full()).unwrap();
        // BangDB's benchmarks share the N operations out over the threads.
        assert_eq!(b.jobs[0].num, 10_000_000);
        assert_eq!(b.jobs[1].num, 10_000_000);
        assert_eq!(b.jobs[1].threads, 4);
        assert_eq!(b.jobs[1].ops("putseq"), 10_000_000);
        assert_eq!(b.jobs[1].benchmarks, ["putseq", "getseq"]);
        assert_eq!(b.jobs[3].benchmarks, ["putrandom", "getrandom"]);
        let args = b.jobs[0].args(
            engine("shale").unwrap(),
            Path::new("/d"),
            Some(Path::new("/t.csv")),
        );
        assert!(args.contains(&"--key_size=10".to_string()));
        assert!(args.contains(&"--value_size=16".to_string()));
        let tail: Vec<&str> = args[args.len() - 2..].iter().map(|s| s.as_str()).collect();
        assert_eq!(tail, ["--stats_interval_seconds=1", "--timeseries=/t.csv"]);
        // LevelDB's own per-thread counting for the other benchmarks.
        let mut j = Job::new("x", &["readrandom"], 100);
        j.threads = 4;
        assert_eq!(j.ops("readrandom"), 400);
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
        assert_eq!(scale_keys(Size::full(Some(1 << 50))), SCALE_MAX_KEYS);
        assert_eq!(scale_keys(Size::full(Some(1000))), 1_000_000);
        assert!(
            scale_keys(Size {
                quick: true,
                ..full()
            }) <= 1_000_000
        );
    }
}
