//! Runs a study: every job for every engine, `runs` times, interleaved
//! (run 1 of A B C, then run 2 of A B C, ...), each db_bench in its own process
//! on a freshly emptied directory, with progress and time estimates on a log.
//!
//! Invariants: the runner only ever deletes `<db-root>/<study>-<job>-<engine>`
//! directories it names itself; an engine that reports `skipped:` is not
//! started again; a failed run is recorded with its reason and the study goes
//! on. Raw output of every process is kept under `<out>/raw/<study>/`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::engines::Engine;
use crate::parse::{parse_output, parse_timeseries, BenchOutput, Sample};
use crate::studies::{Job, Study};

/// What became of one db_bench invocation.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The process ran and its output was read.
    Done {
        /// Parsed standard output (boxed: it is much larger than the other
        /// variants).
        output: Box<BenchOutput>,
        /// Parsed `--timeseries` CSV (when the job asks for one).
        timeseries: Option<Result<Vec<Sample>, String>>,
        /// Wall-clock seconds of the process.
        wall_s: f64,
    },
    /// The engine is not built into db_bench (its `skipped:` reason).
    Skipped(String),
    /// The engine cannot do the job (capability table reason); not started.
    Unsupported(&'static str),
    /// The process failed or printed something unreadable.
    Failed(String),
}

/// One (job, engine, run).
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// Index into the study's jobs.
    pub job: usize,
    /// Engine name.
    pub engine: &'static str,
    /// 1-based run number.
    pub run: usize,
    /// The db_bench arguments (empty when not started).
    pub args: Vec<String>,
    /// Result.
    pub outcome: Outcome,
}

/// A study after running.
#[derive(Debug, Clone)]
pub struct StudyRun {
    /// The study as built.
    pub study: Study,
    /// Engines in column order.
    pub engines: Vec<&'static Engine>,
    /// Runs per engine.
    pub runs: usize,
    /// Every (job, engine, run), in the order run.
    pub records: Vec<RunRecord>,
    /// Seconds estimated before starting.
    pub expected_s: f64,
    /// Where the estimate's speeds came from.
    pub estimate_source: String,
    /// Seconds it took.
    pub actual_s: f64,
}

impl StudyRun {
    /// Records of one job and engine, in run order.
    pub fn records_for(&self, job: usize, engine: &str) -> impl Iterator<Item = &RunRecord> {
        let engine = engine.to_string();
        self.records
            .iter()
            .filter(move |r| r.job == job && r.engine == engine)
    }
}

/// State shared by the studies of one report.
#[derive(Debug)]
pub struct Context {
    /// The db_bench binary.
    pub db_bench: PathBuf,
    /// Parent of every database directory.
    pub db_root: PathBuf,
    /// Report directory.
    pub out: PathBuf,
    /// Engines that printed `skipped:`, with the reason.
    pub skipped: BTreeMap<&'static str, String>,
    /// `Engine:` header versions, first seen.
    pub versions: BTreeMap<&'static str, String>,
    /// `Assertions:` headers, first seen.
    pub assertions: BTreeMap<&'static str, String>,
    /// `Library:` headers (the library file and its build), first seen.
    pub libraries: BTreeMap<&'static str, String>,
    /// Processes started per engine.
    pub started: BTreeMap<&'static str, usize>,
    /// Processes per engine that failed.
    pub failed: BTreeMap<&'static str, usize>,
}

impl Context {
    /// A context with nothing run yet.
    pub fn new(db_bench: PathBuf, db_root: PathBuf, out: PathBuf) -> Context {
        Context {
            db_bench,
            db_root,
            out,
            skipped: BTreeMap::new(),
            versions: BTreeMap::new(),
            assertions: BTreeMap::new(),
            libraries: BTreeMap::new(),
            started: BTreeMap::new(),
            failed: BTreeMap::new(),
        }
    }
}

/// Ops/s measured before, keyed by (job, engine, benchmark).
pub type Speeds = HashMap<(String, String, String), f64>;

/// Microseconds per operation of the LevelDB baseline's benchmarks (fillseq,
/// fillrandom, overwrite, readrandom, readseq), one run per engine on the
/// 2-core, shared machine the report was developed on (4 MB of memory, 100-byte
/// values): at 100,000 entries (the medians of a `--quick` report) and at
/// 1,000,000 (a timed full-size run). The estimates before anything is
/// measured come from here.
const BASELINE_MICROS: [(&str, [f64; 5], [f64; 5]); 8] = [
    (
        "shale",
        [1.6, 2.0, 2.5, 1.9, 0.21],
        [1.5, 2.8, 3.4, 4.2, 0.11],
    ),
    (
        "leveldb",
        [1.6, 2.1, 2.6, 1.6, 0.13],
        [1.8, 3.0, 3.6, 4.5, 0.16],
    ),
    (
        "rocksdb",
        [2.6, 4.0, 4.4, 7.0, 0.45],
        [2.8, 5.2, 6.0, 14.4, 0.28],
    ),
    (
        "sqlite3",
        [6.3, 11.5, 10.5, 2.2, 0.27],
        [5.5, 16.6, 18.6, 5.6, 0.33],
    ),
    (
        "kyoto-treedb",
        [1.3, 2.3, 3.6, 2.3, 0.55],
        [2.0, 8.1, 10.0, 8.1, 0.75],
    ),
    // An LSM tree in a 4 MB cache: 1.3 MB chunks, and random reads that
    // cost hundreds of microseconds once the tree has grown.
    (
        "wiredtiger-lsm",
        [0.38, 3.4, 3.8, 5.4, 0.3],
        [0.39, 11.1, 12.5, 388.0, 0.8],
    ),
    (
        "wiredtiger-btree",
        [0.37, 9.2, 8.5, 3.8, 0.23],
        [0.38, 15.1, 26.7, 9.6, 0.27],
    ),
    (
        "lmdb",
        [3.7, 4.8, 5.0, 0.64, 0.08],
        [4.4, 5.8, 6.5, 1.0, 0.06],
    ),
];

/// The baseline micros/op of `engine` at `n` entries, interpolated between
/// the two measured sizes on a log scale (and held constant outside them).
/// `small_cache` false (a job with 128 MB of memory) reads at the 100,000-
/// entry speeds: most of the data is then in the cache.
fn baseline_micros(engine: &str, n: u64, small_cache: bool) -> [f64; 5] {
    let (_, small, large) = BASELINE_MICROS
        .iter()
        .find(|(e, _, _)| *e == engine)
        .unwrap_or(&BASELINE_MICROS[1]);
    let t = ((n.max(1) as f64).log10() - 5.0).clamp(0.0, 1.0);
    let mut m = [0.0; 5];
    for (i, v) in m.iter_mut().enumerate() {
        let read = i >= 3;
        let hi = if read && !small_cache {
            small[i]
        } else {
            large[i]
        };
        *v = small[i] + (hi - small[i]) * t;
    }
    m
}

/// Synchronous writes per second (an fsync each), as measured on the
/// development machine's ext4: Kyoto Cabinet syncs more than one file.
fn sync_writes_per_sec(engine: &Engine) -> f64 {
    if engine.name == "kyoto-treedb" {
        1_000.0
    } else {
        5_000.0
    }
}

/// Ops/s assumed when nothing was measured yet, from the table of baseline timings (`BASELINE_MICROS`):
/// each benchmark is priced like the baseline benchmark it resembles.
pub fn nominal_ops_per_sec(bench: &str, engine: &Engine, job: &Job) -> f64 {
    if job.value_size >= 10_000 || bench == "fill100K" {
        return 800.0;
    }
    if job.sync || bench == "fillsync" {
        return sync_writes_per_sec(engine);
    }
    // Without --cache_size db_bench gives WiredTiger 128 MB and the others a
    // few MB, as in the baseline.
    let cache = job
        .memory
        .flags(engine)
        .into_iter()
        .find_map(|(flag, v)| (flag == "cache_size").then_some(v));
    let small_cache = match cache {
        Some(bytes) => bytes <= 8 << 20,
        None => !engine.name.starts_with("wiredtiger"),
    };
    let [seq, random, overwrite, read, scan] =
        baseline_micros(engine.db_bench_engine(), job.num, small_cache);
    let micros = match bench {
        "fillseq" | "putseq" => seq,
        "fillrandom" | "putrandom" => random,
        "overwrite" => overwrite,
        "fillbatch" => seq / 3.0,
        "fillrandbatch" => random * 0.6,
        "readseq" | "readreverse" => scan,
        "getseq" => read / 2.0,
        "lsmiter" => (random + read) / 2.0,
        _ => read,
    };
    1e6 / micros
}

/// Seconds one run of `job` on `engine` is expected to take.
pub fn estimate_job(job: &Job, engine: &Engine, speeds: &Speeds) -> f64 {
    let mut s = 0.3 + job.pause_seconds();
    for b in job.benchmarks_for(engine) {
        let key = (job.id.to_string(), engine.name.to_string(), b.to_string());
        let rate = speeds
            .get(&key)
            .copied()
            .filter(|r| *r > 0.0)
            .unwrap_or_else(|| nominal_ops_per_sec(b, engine, job));
        let t = job.ops(b) as f64 / rate;
        s += match job.time_cap {
            Some(cap) => t.min(cap as f64),
            None => t,
        };
    }
    s
}

/// `h:mm:ss`.
pub fn hms(secs: f64) -> String {
    let s = if secs.is_finite() && secs > 0.0 {
        secs.round() as u64
    } else {
        0
    };
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Path of a study's raw measurement table.
pub fn raw_tsv_path(out: &Path, study: &str) -> PathBuf {
    out.join(format!("{study}-raw.tsv"))
}

/// Reads measured speeds from a previous report's raw table (missing or
/// unreadable files give no speeds).
pub fn load_speeds(out: &Path, study: &str) -> Speeds {
    let mut sums: HashMap<(String, String, String), (f64, u32)> = HashMap::new();
    if let Ok(text) = fs::read_to_string(raw_tsv_path(out, study)) {
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            // job, engine, run, status, wall_s, bench, ops_per_sec, ...
            if f.len() < 7 || f[3] != "ok" {
                continue;
            }
            if let Ok(ops) = f[6].parse::<f64>() {
                if ops.is_finite() && ops > 0.0 {
                    let e = sums
                        .entry((f[0].to_string(), f[1].to_string(), f[5].to_string()))
                        .or_insert((0.0, 0));
                    e.0 += ops;
                    e.1 += 1;
                }
            }
        }
    }
    sums.into_iter()
        .map(|(k, (sum, n))| (k, sum / f64::from(n)))
        .collect()
}

/// Header of the raw measurement table.
pub const RAW_HEADER: &str = "job\tengine\trun\tstatus\twall_s\tbench\tops_per_sec\tmicros_per_op\tfound\tof\tdevice_bytes\tuser_bytes\tdb_size\tpeak_rss_kb\tnote";

/// Writes every run's figures as a tab-separated table.
pub fn write_raw_tsv(out: &Path, run: &StudyRun) -> io::Result<()> {
    let mut s = String::from(RAW_HEADER);
    s.push('\n');
    for r in &run.records {
        let job = &run.study.jobs[r.job];
        let lead = format!("{}\t{}\t{}", job.id, r.engine, r.run);
        match &r.outcome {
            Outcome::Done { output, wall_s, .. } => {
                let process_rss = output
                    .peak_rss_kb()
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                let mut seen: HashMap<&str, usize> = HashMap::new();
                for b in &output.results {
                    // The k-th result of a benchmark goes with its k-th `# io` line.
                    let k = seen.entry(b.name.as_str()).or_insert(0);
                    let io = output.io.iter().filter(|i| i.bench == b.name).nth(*k);
                    *k += 1;
                    let rss = io
                        .and_then(|i| i.max_rss_kb)
                        .map(|v| v.to_string())
                        .unwrap_or_default();
                    let (found, of) = b
                        .found
                        .map(|(f, o)| (f.to_string(), o.to_string()))
                        .unwrap_or_default();
                    s.push_str(&format!(
                        "{lead}\tok\t{wall_s:.3}\t{}\t{:.1}\t{:.4}\t{found}\t{of}\t{}\t{}\t{}\t{rss}\t\n",
                        b.name,
                        b.ops_per_sec(job.threads),
                        b.micros_per_op,
                        io.and_then(|i| i.device_bytes())
                            .map(|v| v.to_string())
                            .unwrap_or_default(),
                        io.map(|i| i.user_bytes.to_string()).unwrap_or_default(),
                        io.map(|i| i.db_size.to_string()).unwrap_or_default(),
                    ));
                }
                for it in &output.iterations {
                    s.push_str(&format!(
                        "{lead}\tok\t{wall_s:.3}\t{}#{}\t{:.1}\t\t\t\t\t\t\t{process_rss}\t\n",
                        it.phase.line_name(),
                        it.iteration,
                        it.ops_per_sec
                    ));
                }
            }
            Outcome::Skipped(why) => s.push_str(&format!(
                "{lead}\tskipped\t\t\t\t\t\t\t\t\t\t\t{}\n",
                clean(why)
            )),
            Outcome::Unsupported(why) => s.push_str(&format!(
                "{lead}\tunsupported\t\t\t\t\t\t\t\t\t\t\t{}\n",
                clean(why)
            )),
            Outcome::Failed(why) => s.push_str(&format!(
                "{lead}\tfailed\t\t\t\t\t\t\t\t\t\t\t{}\n",
                clean(why)
            )),
        }
    }
    fs::write(raw_tsv_path(out, run.study.id), s)
}

fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

/// Directory a job's database lives in for one engine.
pub fn db_dir(db_root: &Path, study: &str, job: &str, engine: &str) -> PathBuf {
    db_root.join(format!("{study}-{job}-{engine}"))
}

/// Copies the directory tree `from` to `to` (which must not exist).
pub fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn remove_db(dir: &Path) -> io::Result<()> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Shell-quotes one argument for display.
pub fn shell_quote(a: &str) -> String {
    if !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=./,:+@%".contains(c))
    {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// A command line as one string.
pub fn command_line(program: &Path, args: &[String]) -> String {
    let mut s = shell_quote(&program.display().to_string());
    for a in args {
        s.push(' ');
        s.push_str(&shell_quote(a));
    }
    s
}

/// Runs one study and returns every record. Progress goes to `log`.
pub fn run_study(
    study: Study,
    engines: &[&'static Engine],
    runs: usize,
    ctx: &mut Context,
    log: &mut dyn Write,
) -> io::Result<StudyRun> {
    let started = Instant::now();
    let raw_dir = ctx.out.join("raw").join(study.id);
    fs::create_dir_all(&raw_dir)?;
    fs::create_dir_all(&ctx.db_root)?;

    let speeds = load_speeds(&ctx.out, study.id);
    let estimate_source = if speeds.is_empty() {
        "nominal speeds; no earlier measurements in the report directory".to_string()
    } else {
        format!(
            "speeds measured in the previous report ({})",
            raw_tsv_path(&ctx.out, study.id).display()
        )
    };
    // Planned tasks, in run order.
    let mut tasks = Vec::new();
    for run in 1..=runs {
        for (j, job) in study.jobs.iter().enumerate() {
            for e in engines {
                tasks.push((run, j, *e, job.unsupported_by(e)));
            }
        }
    }
    let mut per_task: HashMap<(usize, &'static str), f64> = HashMap::new();
    for (_, j, e, unsupported) in &tasks {
        if unsupported.is_none() && !ctx.skipped.contains_key(e.name) {
            per_task
                .entry((*j, e.name))
                .or_insert_with(|| estimate_job(&study.jobs[*j], e, &speeds));
        }
    }
    let remaining = |from: usize,
                     per_task: &HashMap<(usize, &'static str), f64>,
                     skipped: &BTreeMap<&'static str, String>| {
        tasks[from..]
            .iter()
            .filter(|(_, _, e, u)| u.is_none() && !skipped.contains_key(e.name))
            .map(|(_, j, e, _)| per_task.get(&(*j, e.name)).copied().unwrap_or(0.0))
            .sum::<f64>()
    };
    let expected_s = remaining(0, &per_task, &ctx.skipped);
    let processes = tasks
        .iter()
        .filter(|(_, _, e, u)| u.is_none() && !ctx.skipped.contains_key(e.name))
        .count();
    writeln!(
        log,
        "[shale-report] study {} ({}): {} jobs x {} engines x {} runs = {} db_bench processes; \
         expected duration about {} (from {})",
        study.id,
        study.title,
        study.jobs.len(),
        engines.len(),
        runs,
        processes,
        hms(expected_s),
        estimate_source
    )?;

    let mut records = Vec::with_capacity(tasks.len());
    let mut measured: HashSet<(usize, &'static str)> = HashSet::new();
    for (idx, &(run, j, engine, unsupported)) in tasks.iter().enumerate() {
        let job = &study.jobs[j];
        if let Some(why) = unsupported {
            records.push(RunRecord {
                job: j,
                engine: engine.name,
                run,
                args: vec![],
                outcome: Outcome::Unsupported(why),
            });
            continue;
        }
        if let Some(why) = ctx.skipped.get(engine.name) {
            records.push(RunRecord {
                job: j,
                engine: engine.name,
                run,
                args: vec![],
                outcome: Outcome::Skipped(why.clone()),
            });
            continue;
        }
        writeln!(
            log,
            "[shale-report] {} · {} · {} · run {}/{} · elapsed {} · est. left {}",
            study.id,
            job.id,
            engine.name,
            run,
            runs,
            hms(started.elapsed().as_secs_f64()),
            hms(remaining(idx, &per_task, &ctx.skipped))
        )?;
        let stem = format!("{}-{}-run{}", job.id, engine.name, run);
        let db = db_dir(&ctx.db_root, study.id, job.id, engine.name);
        let ts_path = raw_dir.join(format!("{stem}.csv"));
        let args = job.args(engine, &db, Some(&ts_path));
        let seed = job
            .reuse_for(engine)
            .map(|r| db_dir(&ctx.db_root, study.id, r.from, engine.name));
        // A database a later job of this run copies stays until that job ran.
        let keep = study.jobs[j + 1..]
            .iter()
            .any(|later| later.reuse_for(engine).is_some_and(|r| r.from == job.id));
        let outcome = run_one(
            ctx,
            job,
            &db,
            seed.as_deref(),
            keep,
            &ts_path,
            &args,
            &raw_dir.join(format!("{stem}.txt")),
        )?;
        if let Some(seed) = &seed {
            remove_db(seed)?;
        }
        *ctx.started.entry(engine.name).or_insert(0) += 1;
        match &outcome {
            Outcome::Skipped(why) => {
                writeln!(log, "[shale-report]   {} skipped: {why}", engine.name)?;
                ctx.skipped.insert(engine.name, why.clone());
            }
            Outcome::Failed(why) => {
                *ctx.failed.entry(engine.name).or_insert(0) += 1;
                writeln!(log, "[shale-report]   failed: {why}")?
            }
            Outcome::Done {
                output,
                wall_s,
                timeseries,
            } => {
                if let Some(Err(why)) = timeseries {
                    writeln!(log, "[shale-report]   no over-time data: {why}")?;
                }
                if let Some((_, version)) = &output.engine {
                    ctx.versions
                        .entry(engine.name)
                        .or_insert_with(|| version.clone());
                }
                if let Some(a) = &output.assertions {
                    ctx.assertions
                        .entry(engine.name)
                        .or_insert_with(|| a.clone());
                }
                if let Some((_, l)) = output.header.iter().find(|(k, _)| k == "Library") {
                    ctx.libraries
                        .entry(engine.name)
                        .or_insert_with(|| l.clone());
                }
                // The first measured run replaces the estimate for the rest.
                if measured.insert((j, engine.name)) {
                    per_task.insert((j, engine.name), *wall_s);
                }
            }
            Outcome::Unsupported(_) => {}
        }
        records.push(RunRecord {
            job: j,
            engine: engine.name,
            run,
            args,
            outcome,
        });
    }
    // Databases kept for a later job that did not run (its engine was
    // skipped) go too.
    for job in &study.jobs {
        for e in engines {
            if let Some(r) = job.reuse_for(e) {
                remove_db(&db_dir(&ctx.db_root, study.id, r.from, e.name))?;
            }
        }
    }
    let actual_s = started.elapsed().as_secs_f64();
    writeln!(
        log,
        "[shale-report] study {} finished in {} (expected {})",
        study.id,
        hms(actual_s),
        hms(expected_s)
    )?;
    Ok(StudyRun {
        study,
        engines: engines.to_vec(),
        runs,
        records,
        expected_s,
        estimate_source,
        actual_s,
    })
}

/// Runs one db_bench process on `db`, emptied first, or a copy of `seed`
/// when given (a missing seed fails the run: its job did not build it).
/// The directory is removed afterwards unless `keep`.
#[allow(clippy::too_many_arguments)]
fn run_one(
    ctx: &Context,
    job: &Job,
    db: &Path,
    seed: Option<&Path>,
    keep: bool,
    ts_path: &Path,
    args: &[String],
    raw_path: &Path,
) -> io::Result<Outcome> {
    remove_db(db)?;
    match seed {
        Some(from) if !from.is_dir() => {
            return Ok(Outcome::Failed(format!(
                "no database to start from: {} (its job did not finish)",
                from.display()
            )))
        }
        Some(from) => copy_dir(from, db)?,
        None => fs::create_dir_all(db)?,
    }
    if ts_path.exists() {
        fs::remove_file(ts_path)?;
    }
    let t0 = Instant::now();
    let result = Command::new(&ctx.db_bench).args(args).output();
    let wall_s = t0.elapsed().as_secs_f64();
    if !keep {
        remove_db(db)?;
    }
    let output = match result {
        Ok(o) => o,
        Err(e) => {
            return Ok(Outcome::Failed(format!(
                "cannot start {}: {e}",
                ctx.db_bench.display()
            )))
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    fs::write(
        raw_path,
        format!(
            "$ {}\n# exit: {}\n# wall_s: {wall_s:.3}\n# --- stdout\n{stdout}# --- stderr\n{stderr}",
            command_line(&ctx.db_bench, args),
            output.status
        ),
    )?;
    if !output.status.success() {
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        return Ok(Outcome::Failed(format!(
            "{}: {}",
            output.status,
            last.trim()
        )));
    }
    let parsed = match parse_output(&stdout) {
        Ok(p) => p,
        Err(e) => return Ok(Outcome::Failed(format!("unreadable db_bench output, {e}"))),
    };
    if let Some(why) = parsed.skipped {
        return Ok(Outcome::Skipped(why));
    }
    let timeseries = job.timeseries.map(|_| match fs::read_to_string(ts_path) {
        Ok(text) => parse_timeseries(&text).map_err(|e| format!("timeseries CSV {e}")),
        Err(e) => Err(format!("no timeseries CSV at {}: {e}", ts_path.display())),
    });
    Ok(Outcome::Done {
        output: Box::new(parsed),
        timeseries,
        wall_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::engine;
    use crate::studies::{build, Size, LEVELDB_TIME_CAP_S};

    #[test]
    fn hms_formats() {
        assert_eq!(hms(0.0), "0:00:00");
        assert_eq!(hms(61.4), "0:01:01");
        assert_eq!(hms(3600.0 * 2.0 + 5.0), "2:00:05");
        assert_eq!(hms(f64::NAN), "0:00:00");
    }

    #[test]
    fn estimates_use_measured_speeds_when_known() {
        let s = build("leveldb", Size::full(None)).unwrap();
        let job = &s.jobs[0];
        let e = engine("shale").unwrap();
        let nominal = estimate_job(job, e, &Speeds::new());
        assert!(nominal > 1.0);
        let mut fast = Speeds::new();
        for b in &job.benchmarks {
            fast.insert(("baseline".into(), "shale".into(), b.to_string()), 1e9);
        }
        let quick = estimate_job(job, e, &fast);
        assert!(quick < 0.4, "{quick}");
    }

    #[test]
    fn nominal_speeds_follow_the_measured_baseline() {
        let full = build("leveldb", Size::full(None)).unwrap();
        let baseline = &full.jobs[0];
        // shale's baseline took about 16 s at 1,000,000 entries.
        let shale = estimate_job(baseline, engine("shale").unwrap(), &Speeds::new());
        assert!((12.0..25.0).contains(&shale), "{shale}");
        // WiredTiger's LSM tree reads slowly in 4 MB (two readrandom passes),
        // each stopped by the study's time cap.
        let wt = estimate_job(baseline, engine("wiredtiger-lsm").unwrap(), &Speeds::new());
        assert!(wt > 2.0 * LEVELDB_TIME_CAP_S as f64, "{wt}");
        let mut uncapped = baseline.clone();
        uncapped.time_cap = None;
        let wt = estimate_job(&uncapped, engine("wiredtiger-lsm").unwrap(), &Speeds::new());
        assert!(wt > 600.0, "{wt}");
        let big = &full.jobs[full.job_index("larger-caches").unwrap()];
        let wt_big = estimate_job(big, engine("wiredtiger-lsm").unwrap(), &Speeds::new());
        assert!(wt_big < 100.0, "{wt_big}");
        // Interpolation between the two measured sizes.
        let a = baseline_micros("rocksdb", 100_000, true)[3];
        let b = baseline_micros("rocksdb", 1_000_000, true)[3];
        let mid = baseline_micros("rocksdb", 316_228, true)[3];
        assert!((mid - (a + b) / 2.0).abs() < 0.1, "{a} {mid} {b}");
        assert_eq!(baseline_micros("rocksdb", 10, true)[3], a);
        // Synchronous writes are priced per fsync.
        let sync = &full.jobs[full.job_index("sync").unwrap()];
        let s = estimate_job(sync, engine("leveldb").unwrap(), &Speeds::new());
        assert!((3.0..10.0).contains(&s), "{s}");
    }

    #[test]
    fn the_compression_type_jobs_fit_their_time_budget() {
        // Two engines have zstd and lz4 blocks; three runs each of the two
        // jobs must add well under ten minutes to the full study.
        let s = build("leveldb", Size::full(None)).unwrap();
        let mut extra = 0.0;
        let mut engines = Vec::new();
        for id in ["compression-zstd", "compression-lz4"] {
            let job = &s.jobs[s.job_index(id).unwrap()];
            for e in &crate::engines::ENGINES {
                if job.unsupported_by(e).is_none() {
                    extra += s.default_runs as f64 * estimate_job(job, e, &Speeds::new());
                    engines.push(e.name);
                }
            }
        }
        assert_eq!(engines, ["shale", "rocksdb", "shale", "rocksdb"]);
        assert!((60.0..480.0).contains(&extra), "{extra}");
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("--num=10"), "--num=10");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(
            command_line(Path::new("/x/db_bench"), &["--a=1".into()]),
            "/x/db_bench --a=1"
        );
    }
}
