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
//!
//! This file holds what the studies share (sizes, memory, jobs, lines,
//! sections); each study is a file of its own: `leveldb.rs`,
//! `wiredtiger.rs`, `bangdb.rs`, `bangdb_scale.rs`, `sqlite4.rs`.

use std::path::Path;

use crate::engines::{Capability, Engine, MemoryModel};
use crate::markdown::thousands as th;
use crate::parse::IterPhase;
use crate::stats::Aggregation;

mod bangdb;
mod bangdb_scale;
mod leveldb;
mod sqlite4;
mod wiredtiger;

pub use bangdb::bangdb_keys;
pub use bangdb_scale::scale_keys;
pub use leveldb::LEVELDB_TIME_CAP_S;

const MIB: u64 = 1 << 20;

/// Names accepted by `--studies=`, in the order they run.
pub const STUDY_IDS: [&str; 5] = ["leveldb", "wiredtiger", "bangdb", "bangdb-scale", "sqlite4"];

/// Largest key count of the BangDB scale test (the seed's billion).
pub const SCALE_MAX_KEYS: u64 = 1_000_000_000;
/// Bytes of disk budgeted per key in the scale test: Shale's database of
/// 10,000,000 sequential 10-byte keys and 16-byte values takes 19.6 bytes
/// a key (db_bench putseq, light compression), plus head-room for the log
/// and compaction outputs. The test uses three quarters of the free space.
pub const SCALE_BYTES_PER_KEY: u64 = 24;

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

/// A block compression type, by db_bench's `--compression_type` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockType {
    /// Blocks stored as they are.
    None,
    /// Snappy (LevelDB's default).
    Snappy,
    /// Zstandard (LevelDB's type 2; RocksDB's kZSTD).
    Zstd,
    /// LZ4 (Shale's type 4; RocksDB's kLZ4Compression).
    Lz4,
}

impl BlockType {
    /// Every type, in table order.
    pub const ALL: [BlockType; 4] = [
        BlockType::None,
        BlockType::Snappy,
        BlockType::Zstd,
        BlockType::Lz4,
    ];

    /// The `--compression_type=` name.
    pub fn name(self) -> &'static str {
        match self {
            BlockType::None => "none",
            BlockType::Snappy => "snappy",
            BlockType::Zstd => "zstd",
            BlockType::Lz4 => "lz4",
        }
    }
}

/// How a job sets compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// `--compression=1`: the engine's light compressor (snappy for the
    /// LevelDB-like engines and WiredTiger, LZO for Kyoto Cabinet).
    On,
    /// `--compression=0`: none.
    Off,
    /// `--compression_type=<type>`: one block type, for the engines that
    /// have it (the job's `needs` keep the others out).
    Type(BlockType),
}

impl Compression {
    /// The db_bench flag.
    pub fn flag(self) -> String {
        match self {
            Compression::On => "--compression=1".to_string(),
            Compression::Off => "--compression=0".to_string(),
            Compression::Type(t) => format!("--compression_type={}", t.name()),
        }
    }
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
    /// `--compression=1|0` or `--compression_type=<type>`.
    pub compression: Compression,
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
    /// The option variants (engine names of `ENGINES` with `variant_of`,
    /// such as `shale-blobs`) that run this job too; a variant runs only in
    /// the jobs that name it.
    pub variants: &'static [&'static str],
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
            compression: Compression::On,
            sync: false,
            memory: Memory::Baseline { cache: 4 * MIB },
            timeseries: None,
            lsmiter: None,
            needs: vec![],
            time_cap: None,
            reuse: None,
            variants: &[],
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
            format!("--engine={}", engine.db_bench_engine()),
            format!("--db={}", db.display()),
            format!("--benchmarks={}", self.benchmarks_for(engine).join(",")),
            format!("--num={}", self.num),
            format!("--value_size={}", self.value_size),
            format!("--key_size={}", self.key_size),
            format!("--threads={}", self.threads),
            self.compression.flag(),
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
        a.extend(engine.variant_flags().iter().map(|f| f.to_string()));
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

    /// True if `engine` is an option variant this job names.
    pub fn runs_variant(&self, engine: &Engine) -> bool {
        engine.variant_of.is_some() && self.variants.contains(&engine.name)
    }

    /// Why `engine` cannot run this job, if it cannot.
    pub fn unsupported_by(&self, engine: &Engine) -> Option<&'static str> {
        if engine.variant_of.is_some() && !self.runs_variant(engine) {
            return Some("an option variant of an engine runs only where a section asks for it");
        }
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
    /// Capabilities an engine needs for this line's figure besides its
    /// job's (a line that reads one aspect of a job every engine runs:
    /// the snappy lines of the compression types read the baseline's job);
    /// an engine without them gets the capability's reason in its cell.
    pub needs: Vec<Capability>,
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
            // An option variant runs in the studies with a job naming it.
            .filter(|e| e.variant_of.is_none() || self.jobs.iter().any(|j| j.runs_variant(e)))
            .collect()
    }
    /// Index of the job with this id.
    pub fn job_index(&self, id: &str) -> Option<usize> {
        self.jobs.iter().position(|j| j.id == id)
    }

    /// Keeps only the jobs named in `ids` (`--jobs`), in the study's order,
    /// and the lines read from them: a section keeps the lines of the jobs
    /// that run and says how many it lost; a section left with no line is
    /// dropped, and the intro names it. A kept job whose database would be
    /// copied from a job that does not run builds its own. Returns the
    /// number of jobs kept.
    pub fn keep_jobs(&mut self, ids: &[String]) -> usize {
        let kept: Vec<Option<usize>> = {
            let mut next = 0;
            self.jobs
                .iter()
                .map(|j| {
                    ids.iter().any(|id| id == j.id).then(|| {
                        next += 1;
                        next - 1
                    })
                })
                .collect()
        };
        let mut jobs = std::mem::take(&mut self.jobs);
        let mut own_database = Vec::new();
        jobs.retain(|j| ids.iter().any(|id| id == j.id));
        for j in &mut jobs {
            if let Some(r) = j.reuse {
                if !ids.iter().any(|id| id == r.from) {
                    j.reuse = None;
                    own_database.push((j.id, r.from));
                }
            }
        }
        self.jobs = jobs;
        let mut dropped = Vec::new();
        let list = ids.join(",");
        self.sections.retain_mut(|sec| {
            let before = sec.lines.len();
            sec.lines
                .retain_mut(|l| match kept.get(l.job).copied().flatten() {
                    Some(k) => {
                        l.job = k;
                        true
                    }
                    None => false,
                });
            let lost = before - sec.lines.len();
            if sec.lines.is_empty() {
                dropped.push(sec.title.clone());
                return false;
            }
            if lost > 0 {
                sec.note.push_str(&format!(
                    " With --jobs={list}: {lost} of the section's {before} lines are left out \
                     (their jobs did not run)."
                ));
            }
            true
        });
        let mut note = format!(" Run with --jobs={list}: only those jobs ran.");
        if !dropped.is_empty() {
            note.push_str(&format!(
                " Sections left out (none of their jobs ran): {}.",
                dropped.join("; ")
            ));
        }
        for (job, from) in own_database {
            note.push_str(&format!(
                " Job {job} builds its own database for every engine (job {from}, whose \
                 database it would copy, did not run)."
            ));
        }
        self.intro.push_str(&note);
        self.jobs.len()
    }
}

/// Builds a study by its `--studies=` name.
pub fn build(id: &str, size: Size) -> Option<Study> {
    match id {
        "leveldb" => Some(leveldb::leveldb(size)),
        "wiredtiger" => Some(wiredtiger::wiredtiger(size)),
        "bangdb" => Some(bangdb::bangdb(size)),
        "bangdb-scale" => Some(bangdb_scale::bangdb_scale(size)),
        "sqlite4" => Some(sqlite4::sqlite4(size)),
        _ => None,
    }
}

fn line(label: impl Into<String>, job: usize, bench: &'static str) -> Line {
    Line {
        label: label.into(),
        job,
        metric: Metric::Bench(bench),
        needs: vec![],
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::{engine, ENGINES};

    fn full() -> Size {
        Size::full(Some(80_000_000_000))
    }

    /// True if every job of `study` runs under time cap `cap`.
    fn every_job_capped(study: &Study, cap: Option<u64>) -> bool {
        study.jobs.iter().all(|j| j.time_cap == cap)
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
    fn compression_types_read_one_job_per_type() {
        let s = build("leveldb", full()).unwrap();
        let sec = s
            .sections
            .iter()
            .find(|x| x.id == "compression-types")
            .unwrap();
        assert_eq!(sec.title, "2F. Compression types");
        assert_eq!(sec.lines.len(), 5 * 4);
        let db = Path::new("/d");
        let shale = engine("shale").unwrap();
        for l in &sec.lines {
            let job = &s.jobs[l.job];
            let args = job.args(shale, db, None);
            let (bench, t) = l.label.split_once(" (").unwrap();
            let t = t.trim_end_matches(')');
            let flag = match t {
                "none" => "--compression=0",
                "snappy" => "--compression=1",
                "zstd" => "--compression_type=zstd",
                "lz4" => "--compression_type=lz4",
                other => panic!("{other}"),
            };
            assert!(args.contains(&flag.to_string()), "{}: {args:?}", l.label);
            assert!(!args
                .iter()
                .any(|a| a.starts_with("--compression") && a != flag));
            assert_eq!(l.metric.io_bench(), bench);
            // Every type's job runs the same sequence, so reads follow the
            // same fillrandom + overwrite.
            assert_eq!(job.benchmarks, s.jobs[0].benchmarks, "{}", l.label);
            assert_eq!(job.num, s.jobs[0].num);
            // Only snappy reads a job (the baseline's) that engines without
            // the type run too.
            assert_eq!(
                l.needs,
                if t == "snappy" {
                    vec![Capability::SnappyBlocks]
                } else {
                    vec![]
                },
                "{}",
                l.label
            );
        }
        let zstd = &s.jobs[s.job_index("compression-zstd").unwrap()];
        let lz4 = &s.jobs[s.job_index("compression-lz4").unwrap()];
        for j in [zstd, lz4] {
            assert!(j.unsupported_by(shale).is_none());
            assert!(j.unsupported_by(engine("rocksdb").unwrap()).is_none());
            for e in [
                "leveldb",
                "sqlite3",
                "kyoto-treedb",
                "wiredtiger-btree",
                "lmdb",
            ] {
                assert!(j.unsupported_by(engine(e).unwrap()).is_some(), "{e}");
            }
            assert_eq!(j.time_cap, Some(LEVELDB_TIME_CAP_S));
        }
        // The jobs before them keep their places and flags.
        assert_eq!(
            s.jobs[s.job_index("no-compression").unwrap()].compression,
            Compression::Off
        );
        assert_eq!(s.jobs[0].compression, Compression::On);
    }

    #[test]
    fn keeping_some_jobs_keeps_their_lines_and_drops_empty_sections() {
        let mut s = build("leveldb", full()).unwrap();
        let ids = [
            "compression-zstd".to_string(),
            "compression-lz4".to_string(),
        ];
        assert_eq!(s.keep_jobs(&ids), 2);
        let job_ids: Vec<&str> = s.jobs.iter().map(|j| j.id).collect();
        assert_eq!(job_ids, ["compression-zstd", "compression-lz4"]);
        assert_eq!(s.sections.len(), 1);
        let sec = &s.sections[0];
        assert_eq!(sec.id, "compression-types");
        assert_eq!(sec.lines.len(), 10);
        for l in &sec.lines {
            let want = if l.label.ends_with("(zstd)") { 0 } else { 1 };
            assert!(l.label.ends_with("(zstd)") || l.label.ends_with("(lz4)"));
            assert_eq!(l.job, want, "{}", l.label);
        }
        assert!(
            sec.note
                .contains("10 of the section's 20 lines are left out"),
            "{}",
            sec.note
        );
        assert!(s
            .intro
            .contains("Run with --jobs=compression-zstd,compression-lz4"));
        assert!(
            s.intro
                .contains("1. Baseline performance; 2A. Large values"),
            "{}",
            s.intro
        );

        // A job whose database source does not run builds its own.
        let mut s = build("leveldb", full()).unwrap();
        assert_eq!(s.keep_jobs(&["larger-caches".to_string()]), 1);
        assert_eq!(s.jobs[0].reuse, None);
        let sqlite = s.jobs[0].args(engine("sqlite3").unwrap(), Path::new("/d"), None);
        assert!(sqlite.contains(&"--use_existing_db=0".to_string()));
        assert!(
            s.intro
                .contains("job baseline, whose database it would copy, did not run"),
            "{}",
            s.intro
        );
        // With its source it still copies.
        let mut s = build("leveldb", full()).unwrap();
        s.keep_jobs(&["larger-caches".to_string(), "baseline".to_string()]);
        assert!(s.jobs[1].reuse.is_some());
        assert_eq!(
            s.jobs[0].id, "baseline",
            "the study's order, not the option's"
        );
        // No job of this study.
        let mut s = build("sqlite4", full()).unwrap();
        assert_eq!(s.keep_jobs(&["baseline".to_string()]), 0);
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
        assert!(every_job_capped(&build("leveldb", quick).unwrap(), None));
        assert!(every_job_capped(&s, Some(LEVELDB_TIME_CAP_S)));
    }

    #[test]
    fn the_leveldb_study_leaves_the_lsm_tree_of_wiredtiger_out_unless_named() {
        let s = build("leveldb", full()).unwrap();
        let all: Vec<&'static Engine> = ENGINES.iter().collect();
        let names = |v: Vec<&'static Engine>| v.iter().map(|e| e.name).collect::<Vec<_>>();
        let default = names(s.engines_from(&all, false));
        assert_eq!(default.len(), ENGINES.len() - 2);
        assert!(default.contains(&"shale-bulk"));
        assert!(!default.contains(&"wiredtiger-lsm"));
        assert!(!default.contains(&"shale-split"));
        assert!(names(s.engines_from(&all, true)).contains(&"wiredtiger-lsm"));
        // Option variants run where a job names them: shale-blobs in the
        // large values of the LevelDB and WiredTiger studies, shale-split in
        // the BangDB study's 4-thread sequential puts.
        assert!(default.contains(&"shale-blobs"));
        let wt = build("wiredtiger", full()).unwrap();
        let wt_engines = names(wt.engines_from(&all, false));
        assert!(wt_engines.contains(&"shale-blobs"));
        assert!(!wt_engines.contains(&"shale-split"));
        let bangdb = build("bangdb", full()).unwrap();
        let mut want: Vec<&str> = ENGINES
            .iter()
            .filter(|e| e.variant_of.is_none())
            .map(|e| e.name)
            .collect();
        want.insert(1, "shale-split");
        want.insert(2, "shale-bulk");
        assert_eq!(names(bangdb.engines_from(&all, false)), want);
        // Named in --engines, shale-split still runs in the BangDB study
        // only, and no study says it left it out.
        let chosen = [engine("shale").unwrap(), engine("shale-split").unwrap()];
        for id in STUDY_IDS {
            let s = build(id, full()).unwrap();
            let running = names(s.engines_from(&chosen, true));
            let want: &[&str] = if id == "bangdb" {
                &["shale", "shale-split"]
            } else {
                &["shale"]
            };
            assert_eq!(running, want, "{id}");
            assert!(s.left_out.iter().all(|(n, _)| *n != "shale-split"), "{id}");
        }
    }

    /// Every (study, job, variant) where an option variant runs, at full
    /// and quick size.
    fn variant_runs() -> Vec<(&'static str, &'static str, &'static str)> {
        let mut got = Vec::new();
        for quick in [false, true] {
            for id in STUDY_IDS {
                let s = build(id, Size { quick, ..full() }).unwrap();
                for j in &s.jobs {
                    for e in ENGINES.iter().filter(|e| e.variant_of.is_some()) {
                        if j.unsupported_by(e).is_none() {
                            assert!(j.runs_variant(e));
                            if !quick {
                                got.push((id, j.id, e.name));
                            }
                        } else {
                            assert!(!j.runs_variant(e));
                        }
                    }
                }
            }
        }
        got
    }

    #[test]
    fn option_variants_run_only_in_the_jobs_that_name_them() {
        assert_eq!(
            variant_runs(),
            [
                ("leveldb", "baseline", "shale-bulk"),
                ("leveldb", "large-values", "shale-blobs"),
                ("leveldb", "large-values", "shale-bulk"),
                ("leveldb", "batch", "shale-bulk"),
                ("leveldb", "no-compression", "shale-bulk"),
                ("leveldb", "more-memory", "shale-bulk"),
                ("wiredtiger", "all", "shale-blobs"),
                ("wiredtiger", "all", "shale-bulk"),
                ("bangdb", "seq-1t", "shale-bulk"),
                ("bangdb", "seq-4t", "shale-split"),
            ]
        );
        // A job names only option variants, each once.
        for id in STUDY_IDS {
            for j in &build(id, full()).unwrap().jobs {
                for (i, name) in j.variants.iter().enumerate() {
                    let e = engine(name).unwrap_or_else(|| panic!("{id}/{}: {name}", j.id));
                    assert!(e.variant_of.is_some(), "{id}/{}: {name}", j.id);
                    assert!(!j.variants[..i].contains(name), "{id}/{}: {name}", j.id);
                }
            }
        }
        // The studies run a variant only if one of their jobs names it,
        // even when `--engines` names it.
        let all: Vec<&'static Engine> = ENGINES.iter().collect();
        for id in STUDY_IDS {
            let s = build(id, full()).unwrap();
            for given in [false, true] {
                for e in s.engines_from(&all, given) {
                    assert!(
                        e.variant_of.is_none() || s.jobs.iter().any(|j| j.runs_variant(e)),
                        "{id}: {}",
                        e.name
                    );
                }
            }
        }
    }

    #[test]
    fn the_over_time_studies_fit_two_hours_with_one_run_and_time_caps() {
        let quick = Size {
            quick: true,
            ..full()
        };
        let sq = build("sqlite4", full()).unwrap();
        assert_eq!(sq.default_runs, 1);
        assert!(every_job_capped(&sq, Some(sqlite4::SQLITE4_TIME_CAP_S)));
        // Only the engines that merge in the background run the pauses.
        let pauses = &sq.jobs[sq.job_index("large-buffers-pauses").unwrap()];
        let runs = |j: &Job| {
            ENGINES
                .iter()
                .filter(|e| j.unsupported_by(e).is_none())
                .map(|e| e.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            runs(pauses),
            ["shale", "leveldb", "rocksdb", "wiredtiger-lsm"]
        );
        let peers = ENGINES.iter().filter(|e| e.variant_of.is_none()).count();
        assert_eq!(runs(&sq.jobs[0]).len(), peers);
        let bang = build("bangdb", full()).unwrap();
        assert_eq!(bang.default_runs, 1);
        assert!(every_job_capped(&bang, Some(bangdb::BANGDB_TIME_CAP_S)));
        // The scale test runs to its end.
        let scale = build("bangdb-scale", full()).unwrap();
        assert!(every_job_capped(&scale, None));
        // Quick runs (the tests') are never capped.
        for id in ["sqlite4", "bangdb"] {
            assert!(every_job_capped(&build(id, quick).unwrap(), None), "{id}");
        }
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
        for e in &ENGINES {
            let want = if e.memory == MemoryModel::OsPageCache {
                vec![]
            } else {
                vec![("cache_size", 134_217_728)]
            };
            assert_eq!(wt.jobs[0].memory.flags(e), want, "{}", e.name);
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
        // Shale with split flushes: db_bench's Shale with --split_flushes=1
        // in the 4-thread sequential job, the only one it runs.
        let split = engine("shale-split").unwrap();
        assert_eq!(b.jobs[1].id, "seq-4t");
        assert!(b.jobs[1].unsupported_by(split).is_none());
        let split_args = b.jobs[1].args(split, Path::new("/d"), None);
        let shale_args = b.jobs[1].args(engine("shale").unwrap(), Path::new("/d"), None);
        assert_eq!(split_args[0], "--engine=shale");
        assert!(split_args.contains(&"--split_flushes=1".to_string()));
        assert!(!shale_args.iter().any(|a| a.starts_with("--split_flushes")));
        assert_eq!(
            split_args
                .iter()
                .filter(|a| !shale_args.contains(a))
                .collect::<Vec<_>>(),
            ["--split_flushes=1"]
        );
        for j in [0, 2, 3] {
            assert!(
                b.jobs[j].unsupported_by(split).is_some(),
                "{}",
                b.jobs[j].id
            );
        }
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
        // 80 GB free: three quarters at 24 bytes a key is 2.5 billion.
        assert_eq!(scale_keys(full()), SCALE_MAX_KEYS);
        assert_eq!(scale_keys(Size::full(Some(20_000_000_000))), 625_000_000);
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
