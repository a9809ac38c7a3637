//! The benchmark driver: runs the `--benchmarks` list against one engine the
//! way LevelDB's db_bench runs it against LevelDB.
//!
//! Each benchmark runs on `--threads` threads (one more for
//! `readwhilewriting`), each with its own session, statistics and random
//! generator seeded `--seed` (1000) + the number of threads started so far in
//! the run, as db_bench 1.23 does. Fill benchmarks start from a fresh
//! database. After each benchmark the tool prints db_bench's result line and a
//! `# io` line with the bytes the process wrote to the device, the user bytes
//! written, the database size and the peak memory, for the report generator.
//!
//! `crc32c`, `snappycomp` and `snappyuncomp` time the engine's own checksum
//! and snappy code ([`Engine::codecs`]); an engine without them prints
//! `<name> : not supported (<why>)` for those lines, as for any benchmark it
//! cannot do.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::benchmarks::{self, Method, Params, Run};
use crate::engine::{
    Batch, Crc32c, Engine, EngineConfig, EngineKind, Error, Feature, Session, Snappy,
};
use crate::engines::{self, OpenError};
use crate::flags::Flags;
use crate::keygen::{BlobKeys, KeyBuffer, ValueBuffer};
use crate::random::Random;
use crate::stats::{OpTracker, PaddedCounter, Stats};
use crate::sysinfo::{self, IoCounters};
use crate::timeseries::{self, CsvWriter, Sampler};

/// The file that marks a directory as a benchmark database this tool may
/// delete; a non-empty directory without it is never deleted.
pub const MARKER: &str = ".shale-bench-db";

/// How a run ended (errors are returned as `Err`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The benchmarks ran.
    Ran,
    /// The engine is not in this build; the reason was printed.
    Skipped(String),
}

impl Method {
    /// Which of the engine's codecs the benchmark times, if any.
    fn codec(self) -> Option<Codec> {
        match self {
            Method::Crc32c => Some(Codec::Crc32c),
            Method::SnappyComp | Method::SnappyUncomp => Some(Codec::Snappy),
            _ => None,
        }
    }

    fn writes(self) -> bool {
        matches!(
            self,
            Method::WriteSeq
                | Method::WriteRandom
                | Method::DeleteSeq
                | Method::DeleteRandom
                | Method::ReadWhileWriting
        )
    }
}

/// One of an engine's [`crate::engine::Codecs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Codec {
    Crc32c,
    Snappy,
}

/// A benchmark run on `threads` threads.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Spec {
    method: Method,
    params: Params,
    threads: usize,
    fresh_db: bool,
    needs: Option<Feature>,
}

/// What a benchmark name asks the runner to do.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Plan {
    /// The empty name: nothing.
    Nothing,
    /// `open`: reopen the database.
    Reopen,
    /// `heapprofile`: a note that it is not supported.
    HeapProfile,
    /// `stats`, `sstables`, `writestalls`: print this engine property.
    Property(&'static str),
    /// `lsmiter`: the SQLite4 LSM test.
    LsmIter,
    /// A benchmark run by threads.
    Threads(Spec),
}

/// How the runner carries out benchmark `name` under `f`; `None` for a name
/// it does not know (see [`crate::benchmarks`]).
fn plan(name: &str, f: &Flags) -> Option<Plan> {
    let mut p = Params {
        num: u64::from(f.num),
        reads: f.reads(),
        value_size: f.value_size as usize,
        entries_per_batch: 1,
        sync: f.sync,
        split: false,
    };
    let mut threads = f.threads as usize;
    if name.is_empty() {
        return Some(Plan::Nothing);
    }
    let (method, fresh_db, needs) = match benchmarks::find(name)?.run {
        Run::Reopen => return Some(Plan::Reopen),
        Run::HeapProfile => return Some(Plan::HeapProfile),
        Run::Property(name) => return Some(Plan::Property(name)),
        Run::LsmIter => return Some(Plan::LsmIter),
        Run::Threads {
            method,
            fresh_db,
            needs,
            tune,
        } => {
            tune(&mut p, &mut threads);
            (method, fresh_db, needs)
        }
    };
    Some(Plan::Threads(Spec {
        method,
        params: p,
        threads,
        fresh_db,
        needs,
    }))
}

/// Thread `tid`'s share of `total` operations split over `threads`: the
/// half-open range `[total * tid / threads, total * (tid + 1) / threads)`.
fn share(total: u64, tid: usize, threads: usize) -> std::ops::Range<u64> {
    let t = threads.max(1) as u128;
    let at = |i: usize| (u128::from(total) * i as u128 / t) as u64;
    at(tid)..at(tid + 1)
}

/// Deletes and recreates the database directory `path`, refusing to delete a
/// non-empty directory that this tool did not create.
pub fn destroy_db(path: &Path) -> Result<(), Error> {
    if path.exists() {
        if !path.is_dir() {
            return Err(Error::new(format!(
                "{} exists and is not a directory",
                path.display()
            )));
        }
        let empty = std::fs::read_dir(path)
            .map_err(|e| Error::new(format!("cannot list {}: {e}", path.display())))?
            .next()
            .is_none();
        if !empty && !path.join(MARKER).exists() {
            return Err(Error::new(format!(
                "refusing to delete {}: it was not created by db_bench (no {MARKER} file); remove it or pick another --db",
                path.display()
            )));
        }
        std::fs::remove_dir_all(path)
            .map_err(|e| Error::new(format!("cannot remove {}: {e}", path.display())))?;
    }
    std::fs::create_dir_all(path)
        .map_err(|e| Error::new(format!("cannot create {}: {e}", path.display())))?;
    std::fs::write(path.join(MARKER), b"")
        .map_err(|e| Error::new(format!("cannot write marker in {}: {e}", path.display())))?;
    Ok(())
}

/// Runs the benchmarks `flags` ask for, printing to `out`.
pub fn run(flags: &Flags, out: &mut dyn Write) -> Result<Outcome, Error> {
    if let Err(reason) = engines::availability(flags.engine) {
        writeln!(out, "{}", skipped_line(flags.engine, &reason)).map_err(io_err)?;
        return Ok(Outcome::Skipped(reason));
    }
    let mut bench = Runner::new(flags)?;
    bench.run(out)?;
    Ok(Outcome::Ran)
}

fn io_err(e: std::io::Error) -> Error {
    Error::new(format!("output error: {e}"))
}

struct Runner<'f> {
    flags: &'f Flags,
    path: PathBuf,
    engine: Option<Box<dyn Engine>>,
    engine_sync: bool,
    values: ValueBuffer,
    total_thread_count: u64,
    csv: Option<CsvWriter>,
}

impl<'f> Runner<'f> {
    fn new(flags: &'f Flags) -> Result<Runner<'f>, Error> {
        let csv = match &flags.timeseries {
            Some(p) => Some(
                CsvWriter::create(p)
                    .map_err(|e| Error::new(format!("cannot create {}: {e}", p.display())))?,
            ),
            None => None,
        };
        Ok(Runner {
            flags,
            path: flags.db_path(),
            engine: None,
            engine_sync: false,
            values: ValueBuffer::new(flags.compression_ratio),
            total_thread_count: 0,
            csv,
        })
    }

    fn config(&self, sync: bool) -> EngineConfig {
        let mut cfg = EngineConfig::from_flags(self.flags, self.path.clone());
        cfg.sync_writes = sync;
        cfg
    }

    fn open(&mut self, sync: bool) -> Result<(), Error> {
        self.engine = None;
        let engine = engines::open(self.flags.engine, &self.config(sync)).map_err(|e| match e {
            OpenError::Unavailable(why) => Error::new(format!("engine not available: {why}")),
            OpenError::Failed(e) => Error::new(format!("open error: {e}")),
        })?;
        self.engine = Some(engine);
        self.engine_sync = sync;
        Ok(())
    }

    fn fresh(&mut self, sync: bool) -> Result<(), Error> {
        self.engine = None;
        destroy_db(&self.path)?;
        self.open(sync)
    }

    fn engine(&self) -> Result<&dyn Engine, Error> {
        self.engine
            .as_deref()
            .ok_or_else(|| Error::new("no open database"))
    }

    fn print_header(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let f = self.flags;
        let key_size = f.key_size as u64 + u64::from(f.key_prefix);
        let num = u64::from(f.num);
        let engine = self.engine.as_deref();
        let version = engine.map(|e| e.version()).unwrap_or_default();
        writeln!(out, "Engine:     {} version {version}", f.engine.name())?;
        if let Some((file, build)) = engines::library(f.engine) {
            writeln!(out, "{}", library_line(file, build))?;
        }
        writeln!(out, "Date:       {}", sysinfo::utc_now())?;
        if let Some((n, model, cache)) = sysinfo::cpu_info() {
            writeln!(out, "CPU:        {n} * {model}")?;
            writeln!(out, "CPUCache:   {cache}")?;
        }
        if let Some(fs) = sysinfo::fs_type(&self.path) {
            writeln!(out, "FileSystem: {fs} ({})", self.path.display())?;
        }
        writeln!(out, "Keys:       {key_size} bytes each")?;
        writeln!(
            out,
            "Values:     {} bytes each ({} bytes after compression)",
            f.value_size,
            (f64::from(f.value_size) * f.compression_ratio + 0.5) as i64
        )?;
        writeln!(out, "Entries:    {num}")?;
        writeln!(
            out,
            "RawSize:    {:.1} MB (estimated)",
            ((key_size + u64::from(f.value_size)) * num) as f64 / 1_048_576.0
        )?;
        writeln!(
            out,
            "FileSize:   {:.1} MB (estimated)",
            ((key_size as f64 + f64::from(f.value_size) * f.compression_ratio) * num as f64)
                / 1_048_576.0
        )?;
        if cfg!(debug_assertions) {
            writeln!(
                out,
                "WARNING: Optimization is disabled: benchmarks unnecessarily slow"
            )?;
        }
        if let Some(n) = engines::library_assert_sites(f.engine).filter(|&n| n > 0) {
            writeln!(
                out,
                "WARNING: the installed {} library was built with assertions enabled ({n} assert call sites): its figures are pessimistic (scripts/build-peers.sh builds a release copy, which db_bench links when built with SHALE_PEERS_DIR set, as `make report` does)",
                f.engine.name()
            )?;
        }
        writeln!(out, "Assertions: {}", assertions_text(f.engine))?;
        if f.comparisons {
            writeln!(
                out,
                "WARNING: --comparisons is not supported by this tool; ignored"
            )?;
        }
        for (flag, set) in [
            ("blob_threshold", f.blob_threshold > 0),
            ("blob_file_size", f.blob_file_size > 0),
            ("bulk_load", f.bulk_load),
        ] {
            if set && f.engine != EngineKind::Shale {
                writeln!(
                    out,
                    "WARNING: --{flag} does not apply to {} (Shale only); ignored",
                    f.engine.name()
                )?;
            }
        }
        for (name, value) in self.run_settings() {
            writeln!(out, "Setting:    {name} = {value}")?;
        }
        if let Some(e) = engine {
            for (name, value) in e.settings().into_iter().chain(e.codecs().settings()) {
                writeln!(out, "Setting:    {}.{name} = {value}", f.engine.name())?;
            }
        }
        writeln!(out, "------------------------------------------------")?;
        out.flush()
    }

    fn run_settings(&self) -> Vec<(String, String)> {
        let f = self.flags;
        vec![
            ("db".to_string(), self.path.display().to_string()),
            ("threads".to_string(), f.threads.to_string()),
            (
                "seeds".to_string(),
                format!("thread n of the run: {} + n; values: Random(301)", f.seed),
            ),
            (
                "key_format".to_string(),
                format!("'a' x {} + %0{}d", f.key_prefix, f.key_size),
            ),
            (
                "compression_ratio".to_string(),
                f.compression_ratio.to_string(),
            ),
            ("use_existing_db".to_string(), f.use_existing_db.to_string()),
            (
                "library assert call sites".to_string(),
                engines::library_assert_sites(f.engine)
                    .map_or("unknown".to_string(), |n| n.to_string()),
            ),
        ]
    }

    fn run(&mut self, out: &mut dyn Write) -> Result<(), Error> {
        if self.flags.use_existing_db {
            if !self.path.is_dir() {
                return Err(Error::new(format!(
                    "--use_existing_db=1 but {} does not exist",
                    self.path.display()
                )));
            }
            self.open(false)?;
        } else {
            self.fresh(false)?;
        }
        self.print_header(out).map_err(io_err)?;
        if self.flags.print_settings {
            return Ok(());
        }

        for (index, name) in self.flags.benchmarks.clone().iter().enumerate() {
            self.run_one(index, name, out)?;
        }
        self.engine = None;
        Ok(())
    }

    fn run_one(&mut self, index: usize, name: &str, out: &mut dyn Write) -> Result<(), Error> {
        let f = self.flags;
        let spec = match plan(name, f) {
            Some(Plan::Nothing) => return Ok(()),
            Some(Plan::Reopen) => {
                let n = (u64::from(f.num) / 10_000).max(1);
                return self.open_bench(name, n, out);
            }
            Some(Plan::HeapProfile) => {
                eprintln!("heap profiling not supported");
                return Ok(());
            }
            Some(Plan::Property(prop)) => {
                let text = self
                    .engine()?
                    .property(prop)
                    .unwrap_or_else(|| "(failed)".to_string());
                writeln!(out, "\n{text}").map_err(io_err)?;
                return Ok(());
            }
            Some(Plan::LsmIter) => return self.lsm_iter(name, out),
            Some(Plan::Threads(spec)) => spec,
            // `flags::parse` rejects unknown names; a caller that built the
            // flags by hand gets the same error here.
            None => return Err(Error::new(format!("unknown benchmark '{name}'"))),
        };
        let Spec {
            method,
            params: p,
            threads,
            fresh_db,
            needs,
        } = spec;

        if fresh_db && f.use_existing_db {
            writeln!(out, "{name:<12} : skipped (--use_existing_db is true)").map_err(io_err)?;
            return Ok(());
        }

        // Checked before a fresh database is made, so nothing is lost.
        let missing = match method.codec() {
            Some(Codec::Crc32c) => self.engine()?.codecs().crc32c.err(),
            Some(Codec::Snappy) => self.engine()?.codecs().snappy.err(),
            None => None,
        };
        if let Some(why) = missing {
            // Count the threads anyway, so later benchmarks keep db_bench's seeds.
            self.total_thread_count += threads as u64;
            writeln!(out, "{}", not_supported_line(name, &why)).map_err(io_err)?;
            out.flush().map_err(io_err)?;
            return Ok(());
        }
        if let Some(feature) = needs {
            if let Some(why) = self.engine()?.unsupported(feature) {
                // Count the threads anyway, so later benchmarks keep db_bench's seeds.
                self.total_thread_count += threads as u64;
                writeln!(out, "{}", not_supported_line(name, why)).map_err(io_err)?;
                out.flush().map_err(io_err)?;
                return Ok(());
            }
        }

        if fresh_db {
            self.fresh(p.sync)?;
        } else if method.writes() && self.engine_sync != p.sync {
            // Kyoto and LMDB choose durability at open time: reopen in the mode
            // this benchmark needs (keeping the data).
            self.open(p.sync)?;
        }

        // A bulk load (WiredTiger's bulk cursor) bypasses the log, so it is
        // not used when writes must be synchronous.
        let bulk = fresh_db && method == Method::WriteSeq && threads == 1 && !p.sync;
        if bulk {
            self.engine()?.set_bulk_load(true);
        }
        let result = self.run_benchmark(index, name, method, p, threads, out);
        if bulk {
            if let Some(e) = self.engine.as_deref() {
                e.set_bulk_load(false);
            }
        }
        result
    }

    /// The SQLite4 LSM test (`lsmiter`): on a fresh database, from one
    /// thread, `--iterations` times: `--iter_ops` inserts of new random
    /// binary keys, each its own write; `--iter_ops` lookups of keys drawn
    /// uniformly from those inserted so far; a pause of `--pause_ms` (not
    /// timed). Prints `lsmiter-insert <i> : <ops/s> ops/sec` and
    /// `lsmiter-lookup <i> : <ops/s> ops/sec` as each iteration ends, then
    /// the usual result and `# io` lines. With `--duration=S`, no iteration
    /// starts once the iterations so far took S seconds (pauses not
    /// counted), and the result says after how many it stopped.
    fn lsm_iter(&mut self, name: &str, out: &mut dyn Write) -> Result<(), Error> {
        let f = self.flags;
        if f.use_existing_db {
            writeln!(out, "{name:<12} : skipped (--use_existing_db is true)").map_err(io_err)?;
            return Ok(());
        }
        self.fresh(f.sync)?;
        self.total_thread_count += 1;
        let seed = (u64::from(f.seed) + self.total_thread_count) as u32;
        let mut keys = BlobKeys::new(seed, f.key_size as usize);
        let mut pick = Random::new(seed);
        let values = ValueBuffer::incompressible();
        let mut gen = values.generator();
        let value_size = f.value_size as usize;
        let engine = self.engine()?;
        let mut session = engine.session()?;
        let mut value = Vec::new();
        let (mut inserted, mut found, mut bytes) = (0u64, 0u64, 0u64);
        let mut paused = 0.0;
        let cap = (f.duration > 0).then_some(f.duration as f64);
        let (mut busy, mut ran) = (0.0, 0u64);

        let io_before = IoCounters::now();
        let mut stats = Stats::new(false, f.progress);
        stats.start();
        for i in 0..f.iterations {
            if cap.is_some_and(|c| busy >= c) {
                break;
            }
            let t0 = Instant::now();
            for _ in 0..f.iter_ops {
                let k = keys.key(inserted);
                let v = gen.generate(value_size);
                session.put(k, v, f.sync)?;
                bytes += (k.len() + v.len()) as u64;
                inserted += 1;
                stats.finished_single_op();
            }
            let insert_s = t0.elapsed().as_secs_f64();
            let t1 = Instant::now();
            // `flags::parse` keeps iterations x iter_ops below 2^31.
            let present = u32::try_from(inserted).unwrap_or(u32::MAX);
            for _ in 0..f.iter_ops {
                let j = u64::from(pick.uniform(present));
                if session.get(keys.key(j), &mut value)? {
                    found += 1;
                }
                stats.finished_single_op();
            }
            let lookup_s = t1.elapsed().as_secs_f64();
            busy += insert_s + lookup_s;
            ran += 1;
            let rate = |secs: f64| f.iter_ops as f64 / secs.max(1e-9);
            writeln!(out, "lsmiter-insert {i} : {:.1} ops/sec", rate(insert_s)).map_err(io_err)?;
            writeln!(out, "lsmiter-lookup {i} : {:.1} ops/sec", rate(lookup_s)).map_err(io_err)?;
            out.flush().map_err(io_err)?;
            if f.pause_ms > 0 {
                let p0 = Instant::now();
                thread::sleep(Duration::from_millis(f.pause_ms));
                paused += p0.elapsed().as_secs_f64();
            }
        }
        session.finish_writes()?;
        drop(session);
        stats.stop();
        stats.exclude_idle(paused);
        stats.add_found(found, ran * f.iter_ops);
        if ran < f.iterations {
            stats.add_message(&format!(
                "(stopped by --duration={} after {} ops, {ran} of {} iterations)",
                f.duration,
                2 * ran * f.iter_ops,
                f.iterations
            ));
        }
        stats.add_bytes(bytes as i64);
        stats.add_written(bytes);
        self.finish(name, &mut stats, io_before, out)
    }

    /// db_bench's `open` benchmark: reopen the database `n` times.
    fn open_bench(&mut self, name: &str, n: u64, out: &mut dyn Write) -> Result<(), Error> {
        self.total_thread_count += u64::from(self.flags.threads);
        let io_before = IoCounters::now();
        let mut stats = Stats::new(self.flags.histogram, self.flags.progress);
        stats.start();
        for _ in 0..n {
            self.engine = None;
            self.open(self.engine_sync)?;
            stats.finished_single_op();
        }
        stats.stop();
        self.finish(name, &mut stats, io_before, out)
    }

    fn run_benchmark(
        &mut self,
        index: usize,
        name: &str,
        method: Method,
        p: Params,
        n: usize,
        out: &mut dyn Write,
    ) -> Result<(), Error> {
        let f = self.flags;
        let seeds: Vec<u32> = (0..n)
            .map(|_| {
                self.total_thread_count += 1;
                (u64::from(f.seed) + self.total_thread_count) as u32
            })
            .collect();
        let engine = self.engine()?;
        let values = &self.values;

        // Throughput-over-time tracking, if asked for.
        let series =
            f.timeseries.is_some() || f.stats_interval_seconds > 0.0 || f.stats_interval_ops > 0;
        let counters: Vec<Arc<PaddedCounter>> =
            (0..n).map(|_| Arc::new(PaddedCounter::default())).collect();
        let events_log = Arc::new(Mutex::new(Vec::new()));
        let events_total = Arc::new(AtomicU64::new(0));
        let tracker = |tid: usize| -> Option<OpTracker> {
            if !series {
                None
            } else if f.stats_interval_ops > 0 {
                Some(OpTracker::Events {
                    total: events_total.clone(),
                    every: f.stats_interval_ops,
                    log: events_log.clone(),
                })
            } else {
                Some(OpTracker::Counter(counters[tid].clone()))
            }
        };

        let io_before = IoCounters::now();
        let barrier = Barrier::new(n + 1);
        let readers_done = AtomicUsize::new(0);
        let mut start_instant = Instant::now();
        let mut sampler = None;
        let results: Vec<thread::Result<Result<Stats, Error>>> = thread::scope(|scope| {
            let handles: Vec<_> = (0..n)
                .map(|tid| {
                    let barrier = &barrier;
                    let readers_done = &readers_done;
                    let seed = seeds[tid];
                    let tracker = tracker(tid);
                    scope.spawn(move || {
                        let session = engine.session();
                        barrier.wait();
                        let mut session = session?;
                        let mut ctx = ThreadCtx {
                            tid,
                            threads: n,
                            rand: Random::new(seed),
                            stats: Stats::new(f.histogram, f.progress && tid == 0),
                            engine,
                            session: &mut *session,
                            flags: f,
                            values,
                            readers_done,
                        };
                        ctx.stats.set_tracker(tracker);
                        ctx.stats.set_duration(f.duration);
                        ctx.stats.start();
                        let r = ctx.run(method, &p);
                        ctx.stats.stop();
                        if ctx.stats.expired() {
                            let cap = ctx.stats.duration_cap().unwrap_or(0);
                            let done = ctx.stats.done();
                            ctx.stats.add_message(&format!(
                                "(stopped by --duration={cap} after {done} ops)"
                            ));
                        }
                        if method == Method::ReadWhileWriting && tid > 0 {
                            readers_done.fetch_add(1, Ordering::SeqCst);
                        }
                        r.map(|()| ctx.stats)
                    })
                })
                .collect();
            barrier.wait();
            start_instant = Instant::now();
            if series && f.stats_interval_ops == 0 {
                let interval = if f.stats_interval_seconds > 0.0 {
                    f.stats_interval_seconds
                } else {
                    1.0
                };
                let label = f.timeseries.is_none().then(|| name.to_string());
                sampler = Some(Sampler::start(
                    counters.clone(),
                    Duration::from_secs_f64(interval),
                    start_instant,
                    label,
                ));
            }
            handles.into_iter().map(|h| h.join()).collect()
        });
        let points = sampler.map(Sampler::finish);

        let mut merged: Option<Stats> = None;
        for r in results {
            let stats = match r {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => return Err(Error::new(format!("{name}: {e}"))),
                Err(_) => return Err(Error::new(format!("{name}: a benchmark thread panicked"))),
            };
            match &mut merged {
                None => merged = Some(stats),
                Some(m) => m.merge(&stats),
            }
        }
        let Some(mut stats) = merged else {
            return Ok(());
        };

        if series {
            let points = match points {
                Some(p) => p,
                None => {
                    let start_us = stats.start_micros();
                    let log = events_log.lock().map(|l| l.clone()).unwrap_or_default();
                    log.iter()
                        .map(|&(t, ops)| ((t - start_us) * 1e-6, ops))
                        .collect()
                }
            };
            let rows = timeseries::rows_from_points(&points);
            if let Some(csv) = &mut self.csv {
                csv.write(f.engine.name(), index, name, &rows)
                    .map_err(|e| Error::new(format!("timeseries write failed: {e}")))?;
            } else if f.stats_interval_ops > 0 {
                for r in &rows {
                    eprintln!(
                        "... {name} {:8.2} s: {} ops, {:.0} ops/s",
                        r.elapsed_s, r.ops, r.interval_ops_per_sec
                    );
                }
            }
        }
        self.finish(name, &mut stats, io_before, out)
    }

    /// Prints a benchmark's result line and its `# io` line.
    fn finish(
        &self,
        name: &str,
        stats: &mut Stats,
        io_before: Option<IoCounters>,
        out: &mut dyn Write,
    ) -> Result<(), Error> {
        out.write_all(stats.report(name).as_bytes())
            .map_err(io_err)?;
        self.print_io(
            name,
            io_before,
            stats.written_bytes(),
            stats.elapsed_seconds(),
            out,
        )
    }

    fn print_io(
        &self,
        name: &str,
        before: Option<IoCounters>,
        user_bytes: u64,
        elapsed: f64,
        out: &mut dyn Write,
    ) -> Result<(), Error> {
        let io = match (before, IoCounters::now()) {
            (Some(b), Some(a)) => {
                let d = a.since(&b);
                format!(
                    "write_bytes={} cancelled_write_bytes={} read_bytes={} wchar={} rchar={}",
                    d.write_bytes, d.cancelled_write_bytes, d.read_bytes, d.wchar, d.rchar
                )
            }
            _ => "write_bytes=na cancelled_write_bytes=na read_bytes=na wchar=na rchar=na"
                .to_string(),
        };
        let rss = sysinfo::max_rss_kb().map_or("na".to_string(), |k| k.to_string());
        let (db_size, db_alloc) = sysinfo::dir_usage(&self.path);
        writeln!(
            out,
            "# io {name} engine={} {io} user_bytes={user_bytes} db_size={db_size} db_alloc={db_alloc} max_rss_kb={rss} elapsed_s={elapsed:.3}",
            self.flags.engine.name(),
        )
        .map_err(io_err)?;
        out.flush().map_err(io_err)
    }
}

/// One benchmark thread's state (db_bench's `ThreadState`).
struct ThreadCtx<'a> {
    tid: usize,
    threads: usize,
    rand: Random,
    stats: Stats,
    engine: &'a dyn Engine,
    session: &'a mut dyn Session,
    flags: &'a Flags,
    values: &'a ValueBuffer,
    readers_done: &'a AtomicUsize,
}

impl ThreadCtx<'_> {
    fn run(&mut self, method: Method, p: &Params) -> Result<(), Error> {
        match method {
            Method::WriteSeq => self.write(p, true, false),
            Method::WriteRandom => self.write(p, false, false),
            Method::ReadSeq => self.read_sequential(p, false),
            Method::ReadReverse => self.read_sequential(p, true),
            Method::ReadRandom => self.read_random(p),
            Method::GetSeq => self.get_seq(p),
            Method::ReadMissing => self.read_missing(p),
            Method::ReadHot => self.read_hot(p),
            Method::SeekRandom => self.seek_random(p),
            Method::SeekOrdered => self.seek_ordered(p),
            Method::DeleteSeq => self.write(p, true, true),
            Method::DeleteRandom => self.write(p, false, true),
            Method::ReadWhileWriting => self.read_while_writing(p),
            Method::Compact => self.engine.compact(),
            Method::Crc32c => self.crc32c(),
            Method::SnappyComp => self.snappy_compress(),
            Method::SnappyUncomp => self.snappy_uncompress(),
        }
    }

    fn key_buffer(&self) -> KeyBuffer {
        KeyBuffer::new(self.flags.key_size as usize, self.flags.key_prefix as usize)
    }

    /// A uniformly random key number below `--num`.
    #[inline]
    fn random_key(&mut self) -> u64 {
        u64::from(self.rand.uniform(self.flags.num.max(1)))
    }

    /// The keys this thread handles: `0..num` for LevelDB's benchmarks
    /// (every thread writes or reads the whole range), its share of it for
    /// the split ones.
    fn range(&self, p: &Params, total: u64) -> std::ops::Range<u64> {
        if p.split {
            share(total, self.tid, self.threads)
        } else {
            0..total
        }
    }

    /// db_bench's `DoWrite` and `DoDelete`: puts (`delete` false) or deletes
    /// of this thread's keys, in order (`seq`) or at random, one at a time or
    /// in batches of `p.entries_per_batch`.
    fn write(&mut self, p: &Params, seq: bool, delete: bool) -> Result<(), Error> {
        if !delete && p.num != u64::from(self.flags.num) {
            self.stats.add_message(&format!("({} ops)", p.num));
        }
        let range = self.range(p, p.num);
        let mut gen = self.values.generator();
        let mut key = self.key_buffer();
        let mut batch = Batch::new();
        let mut bytes: u64 = 0;
        let mut i = range.start;
        while i < range.end && !self.stats.expired() {
            let single = p.entries_per_batch == 1;
            if !single {
                batch.clear();
            }
            for j in 0..p.entries_per_batch {
                let k = if seq { i + j } else { self.random_key() };
                let kb = key.set(k);
                match (single, delete) {
                    (true, true) => self.session.delete(kb, p.sync)?,
                    (false, true) => batch.delete(kb),
                    (true, false) => {
                        let v = gen.generate(p.value_size);
                        self.session.put(kb, v, p.sync)?;
                        bytes += v.len() as u64;
                    }
                    (false, false) => {
                        let v = gen.generate(p.value_size);
                        batch.put(kb, v);
                        bytes += v.len() as u64;
                    }
                }
                bytes += kb.len() as u64;
                self.stats.finished_single_op();
            }
            if !single {
                self.session.write(&batch, p.sync)?;
            }
            i += p.entries_per_batch;
        }
        self.session.finish_writes()?;
        if !delete {
            self.stats.add_bytes(bytes as i64);
        }
        self.stats.add_written(bytes);
        Ok(())
    }

    /// One point lookup per key of this thread's share of `0..num`, in key
    /// order (BangDB's sequential get).
    fn get_seq(&mut self, p: &Params) -> Result<(), Error> {
        let range = self.range(p, p.num);
        let mut key = self.key_buffer();
        let mut value = Vec::new();
        let (mut found, mut bytes) = (0u64, 0u64);
        let mut looked_up = 0;
        for k in range {
            if self.stats.expired() {
                break;
            }
            looked_up += 1;
            let kb = key.set(k);
            if self.session.get(kb, &mut value)? {
                found += 1;
                bytes += (kb.len() + value.len()) as u64;
            }
            self.stats.finished_single_op();
        }
        self.stats.add_bytes(bytes as i64);
        self.stats.add_found(found, looked_up);
        Ok(())
    }

    // Kept out of line: scripts/callgrind-reads.sh counts the instructions of
    // this loop by its symbol.
    #[inline(never)]
    fn read_sequential(&mut self, p: &Params, reverse: bool) -> Result<(), Error> {
        let mut bytes: u64 = 0;
        let mut done = 0;
        {
            let mut it = self.session.iter()?;
            if reverse {
                it.seek_to_last();
            } else {
                it.seek_to_first();
            }
            while done < p.reads && it.valid() && !self.stats.expired() {
                bytes += (it.key().len() + it.value().len()) as u64;
                self.stats.finished_single_op();
                done += 1;
                if reverse {
                    it.prev();
                } else {
                    it.next();
                }
            }
            it.status()?;
        }
        self.stats.add_bytes(bytes as i64);
        Ok(())
    }

    // Out of line for scripts/callgrind-reads.sh, as `read_sequential`.
    #[inline(never)]
    fn read_random(&mut self, p: &Params) -> Result<(), Error> {
        let range = self.range(p, p.reads);
        let mut key = self.key_buffer();
        let mut value = Vec::new();
        let mut found = 0u64;
        let mut looked_up = 0;
        for _ in range {
            if self.stats.expired() {
                break;
            }
            looked_up += 1;
            let k = self.random_key();
            if self.session.get(key.set(k), &mut value)? {
                found += 1;
            }
            self.stats.finished_single_op();
        }
        if p.split {
            self.stats.add_found(found, looked_up);
        } else {
            // LevelDB's message: this thread's hits out of --num.
            self.stats
                .add_message(&format!("({found} of {} found)", p.num));
        }
        Ok(())
    }

    fn read_missing(&mut self, p: &Params) -> Result<(), Error> {
        let mut key = self.key_buffer();
        let mut value = Vec::new();
        for _ in 0..p.reads {
            if self.stats.expired() {
                break;
            }
            let k = self.random_key();
            let kb = key.set(k);
            // One byte short of a real key: never present.
            self.session.get(&kb[..kb.len() - 1], &mut value)?;
            self.stats.finished_single_op();
        }
        Ok(())
    }

    fn read_hot(&mut self, p: &Params) -> Result<(), Error> {
        let mut key = self.key_buffer();
        let mut value = Vec::new();
        let range = (self.flags.num.saturating_add(99) / 100).max(1);
        for _ in 0..p.reads {
            if self.stats.expired() {
                break;
            }
            let k = u64::from(self.rand.uniform(range));
            self.session.get(key.set(k), &mut value)?;
            self.stats.finished_single_op();
        }
        Ok(())
    }

    fn seek_random(&mut self, p: &Params) -> Result<(), Error> {
        let mut key = self.key_buffer();
        let mut found = 0u64;
        for _ in 0..p.reads {
            if self.stats.expired() {
                break;
            }
            let k = self.random_key();
            let kb = key.set(k);
            let mut it = self.session.iter()?;
            it.seek(kb);
            if it.valid() && it.key() == kb {
                found += 1;
            }
            it.status()?;
            drop(it);
            self.stats.finished_single_op();
        }
        self.stats
            .add_message(&format!("({found} of {} found)", p.num));
        Ok(())
    }

    fn seek_ordered(&mut self, p: &Params) -> Result<(), Error> {
        let mut key = self.key_buffer();
        let mut found = 0u64;
        let num = u64::from(self.flags.num.max(1));
        let mut k = 0u64;
        {
            let mut it = self.session.iter()?;
            for _ in 0..p.reads {
                if self.stats.expired() {
                    break;
                }
                k = (k + u64::from(self.rand.uniform(100))) % num;
                let kb = key.set(k);
                it.seek(kb);
                if it.valid() && it.key() == kb {
                    found += 1;
                }
                self.stats.finished_single_op();
            }
            it.status()?;
        }
        self.stats
            .add_message(&format!("({found} of {} found)", p.num));
        Ok(())
    }

    fn read_while_writing(&mut self, p: &Params) -> Result<(), Error> {
        if self.tid > 0 {
            return self.read_random(p);
        }
        // The extra thread writes until every reader is done; its work is
        // not counted.
        let readers = self.threads - 1;
        let mut gen = self.values.generator();
        let mut key = self.key_buffer();
        let mut written = 0u64;
        while self.readers_done.load(Ordering::SeqCst) < readers {
            let k = self.random_key();
            let kb = key.set(k);
            let v = gen.generate(p.value_size);
            self.session.put(kb, v, p.sync)?;
            written += (kb.len() + v.len()) as u64;
        }
        self.stats.start();
        self.stats.add_written(written);
        Ok(())
    }

    /// The engine's CRC-32C (`run_one` checked that it has one).
    fn crc32c_codec(&self) -> Result<Crc32c, Error> {
        self.engine.codecs().crc32c.map_err(Error::new)
    }

    /// The engine's snappy codec (`run_one` checked that it has one).
    fn snappy_codec(&self) -> Result<Snappy, Error> {
        self.engine.codecs().snappy.map_err(Error::new)
    }

    /// db_bench's `Crc32c`: the checksum of a 4 KB buffer of `x`, over and
    /// over, 500 MB in all.
    fn crc32c(&mut self) -> Result<(), Error> {
        const SIZE: usize = 4096;
        let value = self.crc32c_codec()?.value;
        let data = vec![b'x'; SIZE];
        let mut bytes: i64 = 0;
        let mut crc = 0u32;
        while bytes < 500 * 1_048_576 {
            crc = value(std::hint::black_box(&data));
            self.stats.finished_single_op();
            bytes += SIZE as i64;
        }
        // Print so the result is not optimized away.
        eprint!("... crc=0x{crc:x}\r");
        self.stats.add_bytes(bytes);
        self.stats.add_message("(4K per op)");
        Ok(())
    }

    /// db_bench's `SnappyCompress`: one block-sized (4 KB) value compressed
    /// over and over, 1 GB of input in all.
    fn snappy_compress(&mut self) -> Result<(), Error> {
        let mut compressor = (self.snappy_codec()?.compressor)();
        let mut gen = self.values.generator();
        let input = gen.generate(4096).to_vec();
        let mut compressed = Vec::new();
        let mut bytes: i64 = 0;
        let mut produced: i64 = 0;
        let mut ok = true;
        while ok && bytes < 1024 * 1_048_576 {
            match compressor.compress(&input, &mut compressed) {
                Some(n) => produced += n as i64,
                None => ok = false,
            }
            bytes += input.len() as i64;
            self.stats.finished_single_op();
        }
        if !ok {
            self.stats.add_message("(snappy failure)");
        } else {
            self.stats.add_message(&format!(
                "(output: {:.1}%)",
                (produced as f64 * 100.0) / bytes as f64
            ));
            self.stats.add_bytes(bytes);
        }
        Ok(())
    }

    /// db_bench's `SnappyUncompress`: the engine's own compression of one
    /// 4 KB value, uncompressed over and over, 1 GB of output in all.
    fn snappy_uncompress(&mut self) -> Result<(), Error> {
        let codec = self.snappy_codec()?;
        let mut gen = self.values.generator();
        let input = gen.generate(4096).to_vec();
        let mut compressed = Vec::new();
        let n = (codec.compressor)().compress(&input, &mut compressed);
        let compressed = n.and_then(|n| compressed.get(..n)).unwrap_or_default();
        let mut output = vec![0u8; input.len()];
        let mut bytes: i64 = 0;
        let mut ok = n.is_some();
        while ok && bytes < 1024 * 1_048_576 {
            ok = (codec.uncompress)(compressed, &mut output);
            bytes += input.len() as i64;
            self.stats.finished_single_op();
        }
        if !ok {
            self.stats.add_message("(snappy failure)");
        } else {
            self.stats.add_bytes(bytes);
        }
        Ok(())
    }
}

/// The single line printed (with exit status 0) when `engine` is not in this
/// build: `skipped: <engine> is not in this build: <reason>`.
pub fn skipped_line(engine: EngineKind, reason: &str) -> String {
    format!("skipped: {} is not in this build: {reason}", engine.name())
}

/// The `Assertions:` header line's value: whether the engine's code keeps
/// its assertions (a library built without `-DNDEBUG` runs slower).
pub fn assertions_text(engine: EngineKind) -> String {
    let build = engines::library(engine).map_or("", |(_, build)| build);
    assertions_wording(engine, engines::library_assert_sites(engine), build)
}

/// The `Assertions:` header for `engine`, given the number of assert call
/// sites in its library (`None`: not counted) and the library's build (the
/// `Library:` line's description: a release build of
/// `scripts/build-peers.sh` or a Debian package).
pub fn assertions_wording(engine: EngineKind, sites: Option<usize>, build: &str) -> String {
    let release = build.starts_with("release build");
    match (engine, sites) {
        (EngineKind::Shale, _) if cfg!(debug_assertions) => "on (debug build)".to_string(),
        (EngineKind::Shale, _) => "off (release build)".to_string(),
        (EngineKind::ShaleC, _) if build.contains("debug build") => {
            "on (debug build of libshale_c.so)".to_string()
        }
        (EngineKind::ShaleC, _) if build.contains("release build") => {
            "off (release build of libshale_c.so)".to_string()
        }
        (_, Some(0)) if release => {
            "off (release build with -DNDEBUG: the library has no assert call sites)".to_string()
        }
        (_, Some(0)) => "off (the installed library has no assert call sites)".to_string(),
        (_, Some(n)) => {
            format!("on (the installed library has {n} assert call sites: built without -DNDEBUG)")
        }
        (_, None) => "unknown (objdump was not available when db_bench was built)".to_string(),
    }
}

/// The `Library:` header: the shared library file an engine runs and where
/// it comes from.
pub fn library_line(file: &str, build: &str) -> String {
    if build.is_empty() {
        format!("Library:    {file}")
    } else {
        format!("Library:    {file} ({build})")
    }
}

/// Formats a line for a benchmark that was not run (kept for report tools).
pub fn not_supported_line(name: &str, why: &str) -> String {
    format!("{name:<12} : not supported ({why})")
}

/// The engines compiled into this binary.
pub fn available_engines() -> Vec<EngineKind> {
    EngineKind::ALL
        .into_iter()
        .filter(|k| engines::availability(*k).is_ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchmarks::BENCHMARKS;

    #[test]
    fn every_listed_benchmark_is_planned_and_nothing_else() {
        let f = Flags::default();
        for b in BENCHMARKS {
            assert!(
                plan(b.name, &f).is_some(),
                "{} is listed but not run",
                b.name
            );
        }
        assert_eq!(plan("", &f), Some(Plan::Nothing));
        assert_eq!(plan("fillseqsync", &f), None);
    }

    #[test]
    fn plans_keep_leveldb_meanings() {
        let f = crate::flags::parse(["--num=10000", "--threads=4"]).unwrap();
        let spec = |name| match plan(name, &f) {
            Some(Plan::Threads(s)) => s,
            other => panic!("{name}: {other:?}"),
        };
        let sync = spec("fillsync");
        assert_eq!((sync.params.num, sync.params.sync), (10, true));
        assert!(sync.fresh_db);
        assert_eq!(spec("fillbatch").params.entries_per_batch, 1000);
        assert_eq!(spec("fillbatch").method, Method::WriteSeq);
        assert_eq!(spec("fillrandbatch").method, Method::WriteRandom);
        assert_eq!(spec("fill100K").params.value_size, 100_000);
        assert!(!spec("fillseq").params.sync);
        assert!(!spec("fillseq").params.split);
        assert_eq!(spec("readwhilewriting").threads, 5);
        assert!(spec("putseq").params.split && spec("putseq").fresh_db);
        assert!(spec("getrandom").params.split && !spec("getrandom").fresh_db);
        assert_eq!(spec("getseq").method, Method::GetSeq);
        let synced = crate::flags::parse(["--sync=1"]).unwrap();
        match plan("fillrandom", &synced) {
            Some(Plan::Threads(s)) => assert!(s.params.sync),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn shares_cover_the_range_once() {
        for (total, threads) in [(10u64, 4usize), (3, 4), (1_000_000, 3), (0, 2), (7, 1)] {
            let mut next = 0;
            for tid in 0..threads {
                let r = share(total, tid, threads);
                assert_eq!(r.start, next, "{total}/{threads}");
                next = r.end;
            }
            assert_eq!(next, total);
        }
        assert_eq!(share(10, 1, 4), 2..5);
    }

    #[test]
    fn skipped_line_format() {
        assert_eq!(
            skipped_line(EngineKind::Lmdb, "header <lmdb.h> not found"),
            "skipped: lmdb is not in this build: header <lmdb.h> not found"
        );
    }

    #[test]
    fn destroy_refuses_foreign_directories() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        destroy_db(&db).unwrap();
        assert!(db.join(MARKER).exists());
        std::fs::write(db.join("000001.log"), b"x").unwrap();
        destroy_db(&db).unwrap();
        assert!(!db.join("000001.log").exists());

        let foreign = dir.path().join("home");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::write(foreign.join("precious"), b"x").unwrap();
        let err = destroy_db(&foreign).unwrap_err();
        assert!(err.message().contains("refusing"), "{err}");
        assert!(foreign.join("precious").exists());
    }
}
