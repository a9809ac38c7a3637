//! Crash points: a database survives a power cut at any file-system
//! operation.
//!
//! A deterministic workload (tests/common/workload.rs: puts, deletes,
//! batches, synchronous and not, memtable switches, flushes, compactions and
//! reopenings) runs on `FaultFs`, which counts its operations. A crash point
//! k is a power cut just before operation k: what it leaves on disk is what
//! was synced by then, or that plus a torn last append, or plus some other
//! unsynced data (the mode turns with k). The machine boots from that image
//! and the database is reopened without repair. The checks:
//!
//! 1. the database opens and can be read;
//! 2. it holds the writes' model after some prefix of them (never a later
//!    write without an earlier one, never part of a batch), and that prefix
//!    includes every write acknowledged with `sync` before the crash and all
//!    writes before it;
//! 3. it takes a synchronous write, and a second power cut keeps that write
//!    and everything recovered.
//!
//! Most crash points are taken without stopping the run (`FaultFs` images
//! the disk before operation k and goes on); some runs really die at
//! operation k (it and every later operation fail), which leaves the same
//! image and also tests the engine on a dead machine.
//!
//! `crash_points_sample` (in `cargo test`) checks about 600 crash points of
//! five workloads (one with value separation, one with flushes cut between
//! key ranges). The long version checks every
//! crash point of seven workloads, one per option set (about 64,000), and
//! prints the count:
//!
//! ```text
//! cargo test -p shale --release --test crash_points -- --ignored --nocapture
//! ```
//!
//! A failure names its crash point as `config/seed/steps/k/cut`; to rerun
//! that point alone (the run dies at operation k):
//!
//! ```text
//! SHALE_CRASH_POINT=default/1/600/1234/torn cargo test -p shale --test crash_points -- --nocapture
//! ```
//!
//! The background thread flushes and compacts while the workload writes, so
//! operation k is not always the same operation from one run to the next;
//! each failure message lists the operations that led to the crash.

mod common;

use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use std::collections::BTreeMap;

use common::fault_fs::{Cut, FaultFs, Image};
use common::history::{check_prefix, contents, describe_difference, Contents};
use common::workload::{generate_keys, run, Config, Outcome, CONFIGS};
use shale::{Db, WriteOptions};

const DIR: &str = "/db";
/// Keys the workloads write.
const KEYS: u32 = 400;
/// Steps of each workload.
const STEPS: usize = 600;
/// The environment variable naming one crash point to run alone.
const REPLAY_ENV: &str = "SHALE_CRASH_POINT";

/// A workload: its options, seed and length, and whether the file system
/// makes directory changes durable at once (see
/// `FaultFs::set_synchronous_directories`).
#[derive(Clone, Copy, Debug)]
struct Workload {
    config: Config,
    seed: u64,
    steps: usize,
    dirsync: bool,
}

/// One crash point: a workload, the operation the power is cut before, and
/// what survives.
#[derive(Clone, Copy, Debug)]
struct Point {
    workload: Workload,
    k: u64,
    cut: Cut,
}

fn cut_name(cut: Cut) -> &'static str {
    match cut {
        Cut::DropUnsynced => "drop",
        Cut::TornTail => "torn",
        Cut::KeepSome => "keep",
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dirs = if self.dirsync { "dirsync" } else { "strict" };
        write!(
            f,
            "{}/{}/{}/{dirs}",
            self.config.name, self.seed, self.steps
        )
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.workload, self.k, cut_name(self.cut))
    }
}

impl FromStr for Point {
    type Err = String;

    fn from_str(s: &str) -> Result<Point, String> {
        let parts: Vec<&str> = s.split('/').collect();
        let [config, seed, steps, dirs, k, cut] = parts[..] else {
            return Err(format!("{s:?} is not config/seed/steps/dirs/k/cut"));
        };
        let number = |s: &str| s.parse::<u64>().map_err(|e| format!("{s:?}: {e}"));
        Ok(Point {
            workload: Workload {
                config: Config::named(config),
                seed: number(seed)?,
                steps: number(steps)? as usize,
                dirsync: match dirs {
                    "strict" => false,
                    "dirsync" => true,
                    _ => return Err(format!("{dirs:?} is not strict or dirsync")),
                },
            },
            k: number(k)?,
            cut: *Cut::ALL
                .iter()
                .find(|c| cut_name(**c) == cut)
                .ok_or_else(|| format!("{cut:?} is not drop, torn or keep"))?,
        })
    }
}

impl Workload {
    fn new(config: &str, seed: u64, dirsync: bool) -> Workload {
        Workload {
            config: Config::named(config),
            seed,
            steps: STEPS,
            dirsync,
        }
    }

    fn options(&self, fs: &FaultFs) -> shale::Options {
        self.config.options(Arc::new(fs.clone()))
    }

    /// Runs the workload on a fresh `FaultFs` (which the caller may set up
    /// first with `prepare`, e.g. to cut at an operation); returns what it
    /// did and the file system. The database is closed.
    fn run(&self, prepare: impl FnOnce(&FaultFs)) -> (Outcome, FaultFs) {
        let fs = FaultFs::new();
        fs.set_synchronous_directories(self.dirsync);
        prepare(&fs);
        let steps = generate_keys(self.seed, self.steps, KEYS, self.config.key_fn());
        let clock = || fs.op_count();
        let mut outcome = run(&steps, Path::new(DIR), &self.options(&fs), &clock);
        drop(outcome.db.take());
        (outcome, fs)
    }

    /// The seed of the random choices of crash point `k`'s cut.
    fn cut_seed(&self, k: u64) -> u64 {
        self.seed.wrapping_mul(1_000_003).wrapping_add(k)
    }
}

/// A crash point that failed a check.
struct Failure {
    /// Which check.
    kind: &'static str,
    point: Point,
    /// All about it.
    message: String,
}

/// Boots from `image`, the disk after crash point `point` of a run that did
/// `outcome`, and checks the recovered database. `trace` lists the
/// operations that led to the crash.
fn check(point: &Point, outcome: &Outcome, image: &Image, trace: &str) -> Result<(), Failure> {
    let writes = outcome.writes();
    let attempted = outcome.started_before(point.k);
    let durable = outcome.durable_before(point.k);
    let context = || {
        let stopped = match &outcome.failure {
            Some(f) => format!("the run stopped when {} failed: {}", f.call, f.error),
            None => "the run went on to the end".to_string(),
        };
        format!(
            "crash point {point} (rerun: {REPLAY_ENV}={point}): {attempted} writes begun, \
             {durable} of them through the last acknowledged synchronous one; {stopped}; the \
             operations that led to the crash (the last did not happen):\n{trace}\n"
        )
    };
    let options = |fs: &FaultFs| point.workload.options(fs);
    let fail = |kind: &'static str, detail: String| Failure {
        kind,
        point: *point,
        message: format!("{}{kind}: {detail}", context()),
    };

    let rebooted = FaultFs::from_image(image);
    rebooted.set_synchronous_directories(point.workload.dirsync);
    let db = Db::open(DIR, options(&rebooted))
        .map_err(|e| fail("the database does not open", e.to_string()))?;
    let recovered =
        contents(&db).map_err(|e| fail("the database cannot be read", e.to_string()))?;
    check_prefix(&Contents::new(), &writes[..attempted], durable, &recovered)
        .map_err(|e| fail("the database holds no allowed prefix of the writes", e))?;

    // The recovered database takes a synchronous write, which a second power
    // cut keeps, with everything recovered.
    let (key, value) = (b"~after-recovery".to_vec(), b"marker".to_vec());
    db.put_with(
        &WriteOptions {
            sync: true,
            ..Default::default()
        },
        &key,
        &value,
    )
    .map_err(|e| fail("the recovered database refuses a write", e.to_string()))?;
    let second = rebooted.power_cut(Cut::DropUnsynced, 0);
    drop(db);
    const SECOND: &str = "after recovery and a synchronous write, a second power cut";
    let rebooted = FaultFs::from_image(&second);
    rebooted.set_synchronous_directories(point.workload.dirsync);
    let db = Db::open(DIR, options(&rebooted))
        .map_err(|e| fail(SECOND, format!("leaves a database that does not open: {e}")))?;
    let mut expected = recovered;
    expected.insert(key, value);
    let again = contents(&db).map_err(|e| {
        fail(
            SECOND,
            format!("leaves a database that cannot be read: {e}"),
        )
    })?;
    if again != expected {
        let diff = describe_difference(&expected, &again);
        return Err(fail(SECOND, format!("loses data:\n{diff}")));
    }
    Ok(())
}

/// The crash points `points` of `workload`, taken from one run that goes on
/// past them. Returns the failures.
fn check_captured(workload: &Workload, points: &BTreeMap<u64, Cut>) -> Vec<Failure> {
    let capture = points
        .iter()
        .map(|(&k, &cut)| (k, (cut, workload.cut_seed(k))))
        .collect();
    let (outcome, fs) = workload.run(|fs| fs.capture_at(capture));
    fs.captured()
        .iter()
        .filter_map(|c| {
            let point = Point {
                workload: *workload,
                k: c.index,
                cut: c.cut,
            };
            check(&point, &outcome, &c.image, &c.trace).err()
        })
        .collect()
}

/// Crash point `point`, reached by a run that dies there.
fn check_cut(point: &Point) -> Result<(), Failure> {
    let (outcome, fs) = point.workload.run(|fs| fs.cut_at(point.k));
    let image = fs.power_cut(point.cut, point.workload.cut_seed(point.k));
    check(point, &outcome, &image, &fs.recent_ops())
}

/// The number of operations of a whole run of `workload`, and the failure
/// of the crash point after its last operation, if it fails.
fn count_operations(workload: &Workload) -> (u64, Option<Failure>) {
    let (outcome, fs) = workload.run(|_| {});
    if let Some(f) = &outcome.failure {
        panic!("{workload}: {} failed without a fault: {}", f.call, f.error);
    }
    let n = fs.op_count();
    let end = Point {
        workload: *workload,
        k: n + 1,
        cut: Cut::DropUnsynced,
    };
    let image = fs.power_cut(end.cut, 0);
    (n, check(&end, &outcome, &image, &fs.recent_ops()).err())
}

/// Panics if there are `failures` among `checked` crash points, with their
/// count for each check and the first failure of each check in full.
fn report(failures: &[Failure], checked: usize) {
    if failures.is_empty() {
        return;
    }
    let mut by_kind: BTreeMap<&str, Vec<&Failure>> = BTreeMap::new();
    for f in failures {
        by_kind.entry(f.kind).or_default().push(f);
    }
    let mut summary = String::new();
    let mut details = String::new();
    for (kind, fs) in &by_kind {
        let first = fs.iter().map(|f| f.point.to_string()).take(3);
        let first = first.collect::<Vec<_>>().join(", ");
        summary.push_str(&format!("  {} x {kind} (first at {first})\n", fs.len()));
        details.push_str(&format!("\n{}\n", fs[0].message));
    }
    panic!(
        "{} of {checked} crash points failed:\n{summary}{details}",
        failures.len()
    );
}

/// The points to check among `n` operations: `count` of them spread evenly,
/// the cut mode turning from one to the next (every point if `count >= n`).
fn spread(n: u64, count: u64) -> BTreeMap<u64, Cut> {
    let count = count.min(n);
    (0..count)
        .map(|i| (1 + i * n / count, Cut::ALL[(i % 3) as usize]))
        .collect()
}

/// Checks about 600 crash points of five workloads: from each, the point
/// after its end, 140 points captured from one run and 8 runs that die.
fn sample(dirsync: bool) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (config, seed) in [
        ("default", 1),
        ("reuse-logs", 2),
        ("concurrent-memtable", 3),
        ("blobs", 4),
        ("split-streams", 5),
    ] {
        let workload = Workload::new(config, seed, dirsync);
        let (n, end) = count_operations(&workload);
        failures.extend(end);
        let captured = spread(n, 140);
        failures.extend(check_captured(&workload, &captured));
        // Between the captured points.
        let cuts = spread(n, 8);
        for (&k, &cut) in &cuts {
            let point = Point {
                workload,
                k: k + 1,
                cut,
            };
            failures.extend(check_cut(&point).err());
        }
        checked += 1 + captured.len() + cuts.len();
    }
    report(&failures, checked);
}

/// Runs the crash point named by the replay variable; false if it is unset.
fn replay() -> bool {
    let Ok(s) = std::env::var(REPLAY_ENV) else {
        return false;
    };
    let point: Point = s.parse().unwrap_or_else(|e| panic!("{REPLAY_ENV}: {e}"));
    check_cut(&point).unwrap_or_else(|e| panic!("{}", e.message));
    println!("crash point {point} passed");
    true
}

#[test]
fn crash_points_sample() {
    if !replay() {
        sample(false);
    }
}

/// The same crash points on a file system whose directory changes are
/// durable when made: what is left to check once directory entries cannot
/// be lost.
#[test]

fn crash_points_sample_synchronous_directories() {
    if !replay() {
        sample(true);
    }
}

/// Every crash point of seven workloads, one per option set.
fn all(dirsync: bool) {
    // Images kept at once (each holds the files that changed since the
    // last sync).
    const BATCH: usize = 500;
    let mut failures = Vec::new();
    let mut checked = 0;
    for (i, config) in CONFIGS.iter().enumerate() {
        let workload = Workload::new(config.name, 100 + i as u64, dirsync);
        let (n, end) = count_operations(&workload);
        failures.extend(end);
        let all = spread(n, n);
        let keys: Vec<u64> = all.keys().copied().collect();
        for batch in keys.chunks(BATCH) {
            let points = batch.iter().map(|k| (*k, all[k])).collect();
            failures.extend(check_captured(&workload, &points));
        }
        println!("{workload}: {} crash points", 1 + all.len());
        checked += 1 + all.len();
    }
    println!("{checked} crash points checked, {} failed", failures.len());
    report(&failures, checked);
}

#[test]
#[ignore = "long: every crash point of seven workloads; see the file header"]
fn crash_points_all() {
    all(false);
}

#[test]
#[ignore = "long: every crash point of seven workloads; see the file header"]
fn crash_points_all_synchronous_directories() {
    all(true);
}
