//! I/O errors: EIO and ENOSPC on every kind of file-system operation, at
//! every point of a workload.
//!
//! A fault case fails the n-th operation of one kind (on any file but the
//! advisory `LOG`) with EIO or ENOSPC, once or persistently, while the
//! workload of tests/common/workload.rs runs on `FaultFs` until a call fails.
//! The database is then probed with a synchronous write (the "probe"), closed,
//! the fault cleared, and reopened. The checks:
//!
//! 1. a fault on an operation that writes what the database needs (create,
//!    append, flush, sync, rename, directory sync, lock) surfaces as an error
//!    of some call, and the first error names a file that failed;
//! 2. after an error from a write to the log or from the background thread
//!    (tables, MANIFEST, CURRENT), the database refuses the probe: the error
//!    is sticky even though the fault was transient;
//! 3. reads keep working: the open database holds the acknowledged writes
//!    (and perhaps the failed one);
//! 4. after the fault clears, the database reopens without repair, holding
//!    every acknowledged write, the probe if it was acknowledged, and no
//!    later write without the earlier ones.
//!
//! `faults_sample` (in `cargo test`) runs 108 cases; the long version
//! runs every operation of the workload with each error, once and
//! persistently alternating, and prints the count:
//!
//! ```text
//! cargo test -p shale --release --test faults -- --ignored --nocapture
//! ```
//!
//! A failure names its case as `op/errno/n/once|persistent`; to rerun it
//! alone: `SHALE_FAULT_CASE=Sync/EIO/12/once cargo test -p shale --test
//! faults faults_sample -- --nocapture`.
//!
//! `blob_file_faults` runs the same checks with value separation on (the
//! `blobs` option set), failing creates, appends, flushes and syncs of the
//! blob files only; its cases are named `blob/op/errno/n/once|persistent`.
//!
//! `enospc_on_a_full_tmpfs` fills a real 8 MB tmpfs through `PosixFs`; it is
//! skipped, saying so, where tmpfs cannot be mounted (mounting needs root).

mod common;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::fault_fs::{os_error, Fault, FaultFs, Injected, Op, EIO, ENOSPC};
use common::history::{check_prefix, contents, Contents};
use common::workload::{generate, run, Config, Outcome, Step};
use shale::{Db, Error, Options, WriteOptions};

const DIR: &str = "/db";
const KEYS: u32 = 300;
const STEPS: usize = 200;
const SEED: u64 = 7;
const CASE_ENV: &str = "SHALE_FAULT_CASE";
/// The key of the probe write, after every workload key.
const PROBE: &[u8] = b"~probe";

/// One fault case: the `n`-th operation (from 0) of kind `op` fails with
/// `errno`, and so does every later one of that kind if `persistent`.
#[derive(Clone, Copy, Debug)]
struct Case {
    op: Op,
    errno: i32,
    n: u64,
    persistent: bool,
    /// Under the `blobs` option set, faults on blob files only.
    blobs: bool,
}

fn errno_name(errno: i32) -> &'static str {
    match errno {
        EIO => "EIO",
        ENOSPC => "ENOSPC",
        _ => "?",
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let times = if self.persistent {
            "persistent"
        } else {
            "once"
        };
        let (op, errno, n) = (self.op, errno_name(self.errno), self.n);
        let blob = if self.blobs { "blob/" } else { "" };
        write!(f, "{blob}{op:?}/{errno}/{n}/{times}")
    }
}

impl std::str::FromStr for Case {
    type Err = String;

    fn from_str(s: &str) -> Result<Case, String> {
        let (blobs, s) = match s.strip_prefix("blob/") {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let parts: Vec<&str> = s.split('/').collect();
        let [op, errno, n, times] = parts[..] else {
            return Err(format!("{s:?} is not op/errno/n/once|persistent"));
        };
        Ok(Case {
            op: *Op::ALL
                .iter()
                .find(|o| format!("{o:?}") == op)
                .ok_or_else(|| format!("no operation {op:?}"))?,
            errno: [EIO, ENOSPC]
                .into_iter()
                .find(|e| errno_name(*e) == errno)
                .ok_or_else(|| format!("{errno:?} is not EIO or ENOSPC"))?,
            n: n.parse().map_err(|e| format!("{n:?}: {e}"))?,
            persistent: times == "persistent",
            blobs,
        })
    }
}

/// Kinds of operation whose failure loses something the database needs, so
/// that it must surface as an error. (A failed read, listing, size or
/// removal may be retried or ignored; a failed close comes after the data
/// was handed over.)
fn must_surface(op: Op) -> bool {
    matches!(
        op,
        Op::Create | Op::Append | Op::Flush | Op::Sync | Op::Rename | Op::SyncDir | Op::Lock
    )
}

/// True if a failure of `fault` leaves the database unable to make further
/// writes durable, so that the error must be sticky: a write to the log, or
/// any write by the background thread (tables, MANIFEST, CURRENT). (A log
/// that could not be created holds nothing yet.)
fn must_stick(fault: &Injected) -> bool {
    let is_log = fault.path.extension().is_some_and(|e| e == "log");
    match fault.op {
        Op::Append | Op::Flush | Op::Sync => true,
        Op::Create | Op::Rename | Op::SyncDir => !is_log,
        _ => false,
    }
}

fn options(fs: &FaultFs, blobs: bool) -> Options {
    let config = if blobs { "blobs" } else { "default" };
    Config::named(config).options(Arc::new(fs.clone()))
}

fn steps() -> Vec<Step> {
    generate(SEED, STEPS, KEYS)
}

/// The number of operations of each kind in a run without faults.
fn op_counts() -> BTreeMap<Op, u64> {
    let fs = FaultFs::new();
    let clock = || fs.op_count();
    let outcome = run(&steps(), Path::new(DIR), &options(&fs, false), &clock);
    assert!(outcome.failure.is_none(), "a run without faults failed");
    fs.op_counts()
}

/// True if `e` names the file of one of the faults `injected`.
fn names_a_failed_file(e: &Error, injected: &[Injected]) -> bool {
    let text = e.to_string();
    injected.iter().any(|i| {
        i.path
            .file_name()
            .is_some_and(|n| text.contains(&*n.to_string_lossy()))
    })
}

/// Runs `case`; returns whether its fault fired, or what went wrong.
fn check_case(case: &Case) -> Result<bool, String> {
    let fs = FaultFs::new();
    let mut fault = Fault::new(case.errno)
        .on(case.op)
        .except_path("/LOG")
        .skip(case.n);
    if case.blobs {
        fault = fault.on_path(".blob");
    }
    if case.persistent {
        fault = fault.persistent();
    }
    if case.op == Op::Append && case.errno == ENOSPC {
        // Running out of space part way through a write.
        fault = fault.partial();
    }
    fs.inject(fault);
    let clock = || fs.op_count();
    let mut outcome: Outcome = run(&steps(), Path::new(DIR), &options(&fs, case.blobs), &clock);
    let injected = fs.injected();
    let Some(first) = injected.first().cloned() else {
        return Ok(false);
    };
    let fail =
        |what: String| {
            format!(
            "fault case {case} ({CASE_ENV}={case} reruns it): the fault fired first at {first}; \
             the run stopped at {}; {what}",
            outcome
                .failure
                .as_ref()
                .map_or("its end".to_string(), |f| format!("{}: {}", f.call, f.error))
        )
        };

    // The probe: a synchronous write after the failure (or at the end).
    let probe = outcome.db.as_ref().map(|db| {
        db.put_with(
            &WriteOptions {
                sync: true,
                ..Default::default()
            },
            PROBE,
            b"probe",
        )
    });
    let first_error = match (&outcome.failure, &probe) {
        (Some(f), _) => Some(&f.error),
        (None, Some(Err(e))) => Some(e),
        _ => None,
    };
    // 1. It surfaces, naming the file.
    match first_error {
        None if must_surface(first.op) => {
            return Err(fail("no call returned an error".to_string()));
        }
        Some(e) if !names_a_failed_file(e, &injected) => {
            return Err(fail(format!(
                "the error does not name the failed file: {e}"
            )));
        }
        _ => {}
    }
    // 2. It sticks.
    if outcome.failure.is_some() && must_stick(&first) {
        if let Some(Ok(())) = probe {
            return Err(fail(
                "after the error, the database acknowledged a synchronous write".to_string(),
            ));
        }
    }
    let writes = outcome.writes();
    let acked = outcome.acked();
    // 3. Reads work (unless the fault keeps failing reads: opening a table
    // for a read opens the file and compares its size with the MANIFEST's).
    if let Some(db) = &outcome.db {
        let keeps_failing_reads =
            case.persistent && matches!(case.op, Op::Read | Op::Open | Op::Size);
        match contents(db) {
            Ok(mut found) => {
                found.remove(PROBE);
                check_prefix(&Contents::new(), &writes, acked, &found)
                    .map_err(|e| fail(format!("the open database after the error: {e}")))?;
            }
            Err(e) if !keeps_failing_reads => {
                return Err(fail(format!("reads fail after the error: {e}")));
            }
            Err(_) => {}
        }
    }
    // 4. Cleared, it reopens with everything acknowledged.
    drop(outcome.db.take());
    fs.clear_faults();
    let db = Db::open(DIR, options(&fs, case.blobs)).map_err(|e| {
        fail(format!(
            "once the fault cleared, the database does not open: {e}"
        ))
    })?;
    let mut found = contents(&db).map_err(|e| fail(format!("reading after reopening: {e}")))?;
    let probe_found = found.remove(PROBE);
    check_prefix(&Contents::new(), &writes, acked, &found)
        .map_err(|e| fail(format!("after reopening: {e}")))?;
    if matches!(probe, Some(Ok(()))) && probe_found.is_none() {
        return Err(fail("the acknowledged probe write is lost".to_string()));
    }
    Ok(true)
}

/// Runs `cases`; panics listing the failures, if any. Returns how many
/// cases' faults fired.
fn check_all(cases: &[Case]) -> usize {
    let mut fired = 0;
    let mut failures = Vec::new();
    for case in cases {
        match check_case(case) {
            Ok(f) => fired += usize::from(f),
            Err(e) => failures.push(e),
        }
    }
    if !failures.is_empty() {
        panic!(
            "{} of {} fault cases failed:\n{}",
            failures.len(),
            cases.len(),
            failures.join("\n\n")
        );
    }
    fired
}

/// Cases for every kind of operation: `per_kind` positions spread over the
/// operations of that kind (all of them if fewer), the error and the
/// persistence turning from one to the next.
fn cases(per_kind: u64) -> Vec<Case> {
    let mut out = Vec::new();
    for (op, count) in op_counts() {
        let taken = per_kind.min(count);
        for i in 0..taken {
            for errno in [EIO, ENOSPC] {
                out.push(Case {
                    op,
                    errno,
                    n: i * count / taken,
                    persistent: (i + u64::from(errno == ENOSPC)) % 2 == 1,
                    blobs: false,
                });
            }
        }
    }
    out
}

#[test]
fn faults_sample() {
    if let Ok(s) = std::env::var(CASE_ENV) {
        let case: Case = s.parse().unwrap_or_else(|e| panic!("{CASE_ENV}: {e}"));
        let fired = check_case(&case).unwrap_or_else(|e| panic!("{e}"));
        println!("fault case {case} passed (its fault fired: {fired})");
        return;
    }
    let cases = cases(4);
    let fired = check_all(&cases);
    println!("{} fault cases, {fired} fired", cases.len());
}

/// EIO and ENOSPC on the blob files' creates, appends, flushes and syncs,
/// early and late in the workload: the error names the blob file, sticks,
/// and nothing acknowledged is lost.
#[test]
fn blob_file_faults() {
    let mut cases = Vec::new();
    for op in [Op::Create, Op::Append, Op::Flush, Op::Sync] {
        for (i, n) in [0u64, 2, 9, 40].into_iter().enumerate() {
            for errno in [EIO, ENOSPC] {
                cases.push(Case {
                    op,
                    errno,
                    n,
                    persistent: (i + usize::from(errno == ENOSPC)) % 2 == 1,
                    blobs: true,
                });
            }
        }
    }
    let fired = check_all(&cases);
    // Most of them fire (a workload syncs a blob file only a few times).
    assert!(
        fired * 2 > cases.len(),
        "only {fired} of {} fired",
        cases.len()
    );
    println!("{} blob fault cases, {fired} fired", cases.len());
}

#[test]
#[ignore = "long: every operation of the workload; see the file header"]
fn faults_all() {
    let cases = cases(u64::MAX);
    let fired = check_all(&cases);
    println!("{} fault cases, {fired} fired", cases.len());
}

/// Mounts an 8 MB tmpfs on a new temporary directory, unmounting on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount() -> Result<Tmpfs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(Tmpfs { dir })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn enospc_on_a_full_tmpfs() {
    let fs = match Tmpfs::mount() {
        Ok(fs) => fs,
        Err(e) => {
            println!("enospc_on_a_full_tmpfs: skipped, cannot mount an 8 MB tmpfs: {e}");
            return;
        }
    };
    let filler = fs.dir.path().join("filler");
    std::fs::write(&filler, vec![0u8; 2 << 20]).unwrap();
    let dir = fs.dir.path().join("db");
    let options = || Options {
        create_if_missing: true,
        write_buffer_size: 256 << 10,
        ..Default::default()
    };
    let db = Db::open(&dir, options()).unwrap();
    let key = |i: u32| format!("key{i:06}").into_bytes();
    // 4 KB that compression cannot shrink.
    let value = |i: u32| {
        let mut x = u64::from(i) + 1;
        let mut v = format!("{i:06}").into_bytes();
        v.extend((0..4096).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        }));
        v
    };
    let mut acked = 0;
    let error = loop {
        let sync = acked % 10 == 0;
        match db.put_with(
            &WriteOptions {
                sync,
                ..Default::default()
            },
            &key(acked),
            &value(acked),
        ) {
            Ok(()) => acked += 1,
            Err(e) => break e,
        }
        assert!(acked < 10_000, "8 MB never filled up");
    };
    assert_eq!(os_error(&error), Some(ENOSPC), "{error}");
    let Error::Io { path, .. } = &error else {
        panic!("not an I/O error: {error}");
    };
    assert!(
        path.starts_with(&dir),
        "the error names {}, not a file of the database",
        path.display()
    );
    // Reads keep working, and writes are refused.
    for i in (0..acked).step_by(97) {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    assert!(
        db.put(b"more", b"data").is_err(),
        "a write after ENOSPC was acknowledged"
    );
    drop(db);

    std::fs::remove_file(&filler).unwrap();
    let db = Db::open(&dir, options()).unwrap();
    for i in 0..acked {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(value(i)),
            "key {i} of {acked}"
        );
    }
    db.put_with(
        &WriteOptions {
            sync: true,
            ..Default::default()
        },
        b"more",
        b"data",
    )
    .unwrap();
}
