//! Crash points of a bulk ingestion: a power cut at any file-system
//! operation from the start of a load to the end of its `finish` leaves a
//! database that opens, holds everything acknowledged before the load and
//! either none or all of the loaded entries, and keeps no table file that
//! its version does not name.
//!
//! Three scenarios, on `FaultFs` (see `tests/common/fault_fs.rs`) with
//! directory changes durable only once synced:
//!
//! - `deep`: synchronous writes (overwrites and deletions over the loaded
//!   range) sit in the memtable, which `finish` flushes first; the tables
//!   go below level 0;
//! - `level0`: six earlier loads fill levels 6 to 1 over the range, so the
//!   tables go to level 0, renamed to numbers after the flushed memtable's;
//! - `rewrite`: a synchronous write lands while the load runs, so `finish`
//!   rewrites the tables under a newer sequence number.
//!
//! Every operation of the load is a captured crash point (the run goes on,
//! the cut mode turns from one point to the next), and a few runs really
//! die at one. Each recovered database also takes a synchronous write that
//! a second power cut keeps.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use common::fault_fs::{Cut, FaultFs, Image};
use common::history::{contents, describe_difference, Contents};
use shale::env::FileSystem;
use shale::{BloomFilterPolicy, CompressionType, Db, Options, WriteOptions};

const DIR: &str = "/db";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    Deep,
    Level0,
    Rewrite,
}

fn options(fs: &FaultFs) -> Options {
    Options {
        create_if_missing: true,
        fs: Arc::new(fs.clone()),
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        block_size: 64 << 10,
        compression: CompressionType::None,
        filter_policy: Some(Arc::new(BloomFilterPolicy::new(10))),
        ..Default::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn entries(from: u32, to: u32, tag: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    (from..to)
        .map(|i| {
            let mut v = format!("{tag}-{i}-").into_bytes();
            v.resize(500, b'a' + (i % 26) as u8);
            (key(i), v)
        })
        .collect()
}

/// What a run of a scenario did, with the operation counts that tell what
/// was acknowledged before a crash point.
struct Run {
    /// The contents before the load, all written with sync.
    base: Contents,
    /// The synchronous write made while the load ran (`rewrite`).
    during: Option<(Vec<u8>, Vec<u8>)>,
    /// The loaded entries.
    loaded: Vec<(Vec<u8>, Vec<u8>)>,
    /// Operations done when the load started.
    start: u64,
    /// Operations done when the write during the load was acknowledged.
    during_acked: Option<u64>,
    /// Operations done when `finish` returned, if it succeeded.
    finished: Option<u64>,
}

/// Runs `scenario` on `fs` and closes the database.
fn run(scenario: Scenario, fs: &FaultFs) -> Run {
    let db = Db::open(DIR, options(fs)).expect("open");
    let sync = WriteOptions {
        sync: true,
        ..Default::default()
    };
    let mut base = Contents::new();
    if scenario == Scenario::Level0 {
        for round in 0..6 {
            let data = entries(0, 300, &format!("round{round}"));
            db.ingest_sorted(data.iter().cloned())
                .expect("earlier load");
            base.extend(data);
        }
    }
    for i in (0..300).step_by(7) {
        if i % 2 == 0 {
            db.delete_with(&sync, &key(i)).expect("delete");
            base.remove(&key(i));
        } else {
            db.put_with(&sync, &key(i), b"memtable").expect("put");
            base.insert(key(i), b"memtable".to_vec());
        }
    }
    db.put_with(&sync, b"zz-beside", b"kept").expect("put");
    base.insert(b"zz-beside".to_vec(), b"kept".to_vec());

    let start = fs.op_count();
    let loaded = entries(0, 2500, "loaded");
    let mut during = None;
    let mut during_acked = None;
    let result = (|| -> shale::Result<()> {
        let mut loader = db.bulk_loader()?;
        for (k, v) in &loaded {
            loader.add(k, v)?;
        }
        if scenario == Scenario::Rewrite {
            let w = (key(5), b"during".to_vec());
            during = Some(w.clone());
            db.put_with(&sync, &w.0, &w.1)?;
            during_acked = Some(fs.op_count());
        }
        let done = loader.finish()?;
        assert_eq!(done.rewritten, scenario == Scenario::Rewrite);
        if scenario == Scenario::Level0 {
            assert!(done.tables.iter().all(|t| t.level == 0), "{done:?}");
        } else {
            assert!(done.tables.iter().all(|t| t.level > 0), "{done:?}");
        }
        assert_eq!(done.tables.len(), 2);
        Ok(())
    })();
    let finished = result.is_ok().then(|| fs.op_count());
    drop(db);
    Run {
        base,
        during,
        loaded,
        start,
        during_acked,
        finished,
    }
}

/// Boots from `image`, the disk at crash point `k` of `run`, and checks the
/// database found there.
fn check(scenario: Scenario, run: &Run, k: u64, image: &Image) -> Result<(), String> {
    let fs = FaultFs::from_image(image);
    let db = Db::open(DIR, options(&fs)).map_err(|e| format!("does not open: {e}"))?;
    let got = contents(&db).map_err(|e| format!("cannot be read: {e}"))?;

    let mut with_write = run.base.clone();
    if let Some((k, v)) = &run.during {
        with_write.insert(k.clone(), v.clone());
    }
    let mut all = with_write.clone();
    all.extend(run.loaded.iter().cloned());
    let write_acked = run.during_acked.is_some_and(|d| k > d);
    let load_acked = run.finished.is_some_and(|f| k > f);
    let mut allowed = vec![("everything", &all)];
    if !load_acked {
        if run.during.is_some() {
            allowed.push(("none of the load", &with_write));
        }
        if !write_acked {
            allowed.push(("nothing since the load started", &run.base));
        }
    }
    if !allowed.iter().any(|(_, c)| **c == got) {
        let diffs: Vec<String> = allowed
            .iter()
            .map(|(what, c)| format!("against {what}:\n{}", describe_difference(c, &got)))
            .collect();
        return Err(format!(
            "{scenario:?}: holds no allowed state (write acknowledged: {write_acked}, load \
             acknowledged: {load_acked}):\n{}",
            diffs.join("\n")
        ));
    }

    // No table file outside the version.
    let tables = fs
        .children(Path::new(DIR))
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|n| n.ends_with(".ldb"))
        .count();
    let live: usize = db.stats().levels.iter().map(|l| l.files).sum();
    if tables != live {
        return Err(format!(
            "{tables} table files, {live} in the version: orphans were left"
        ));
    }

    // A synchronous write after recovery survives a second power cut.
    db.put_with(
        &WriteOptions {
            sync: true,
            ..Default::default()
        },
        b"~after",
        b"marker",
    )
    .map_err(|e| format!("refuses a write: {e}"))?;
    let second = fs.power_cut(Cut::DropUnsynced, 0);
    drop(db);
    let fs = FaultFs::from_image(&second);
    let db = Db::open(DIR, options(&fs)).map_err(|e| format!("second cut: no open: {e}"))?;
    let again = contents(&db).map_err(|e| format!("second cut: cannot be read: {e}"))?;
    let mut expected = got;
    expected.insert(b"~after".to_vec(), b"marker".to_vec());
    if again != expected {
        return Err(format!(
            "second power cut loses data:\n{}",
            describe_difference(&expected, &again)
        ));
    }
    Ok(())
}

fn crash_points(scenario: Scenario) {
    // A run without faults: how many operations the load takes.
    let fs = FaultFs::new();
    let dry = run(scenario, &fs);
    let end = dry
        .finished
        .unwrap_or_else(|| panic!("{scenario:?} fails without a fault"));
    let image = fs.power_cut(Cut::DropUnsynced, 0);
    let mut failures = Vec::new();
    if let Err(e) = check(scenario, &dry, end + 1, &image) {
        failures.push(format!("after the end: {e}"));
    }

    // Every operation of the load, captured from one run that goes on.
    let points: BTreeMap<u64, (Cut, u64)> = (dry.start + 1..=end)
        .map(|k| (k, (Cut::ALL[(k % 3) as usize], k)))
        .collect();
    let checked = points.len();
    let fs = FaultFs::new();
    fs.capture_at(points);
    let captured_run = run(scenario, &fs);
    for c in fs.captured() {
        if let Err(e) = check(scenario, &captured_run, c.index, &c.image) {
            failures.push(format!(
                "crash point {} ({:?}): {e}\noperations before it:\n{}",
                c.index, c.cut, c.trace
            ));
        }
    }

    // Some runs that die at an operation (it and all later ones fail).
    let step = ((end - dry.start) / 6).max(1);
    for k in (dry.start + 1..=end).step_by(step as usize) {
        let fs = FaultFs::new();
        fs.cut_at(k);
        let died = run(scenario, &fs);
        let cut = Cut::ALL[(k % 3) as usize];
        let image = fs.power_cut(cut, k);
        if let Err(e) = check(scenario, &died, k, &image) {
            failures.push(format!(
                "run dying at {k} ({cut:?}): {e}\n{}",
                fs.recent_ops()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{scenario:?}: {} of {checked} crash points failed; the first:\n{}",
        failures.len(),
        failures[0]
    );
}

#[test]
fn a_crash_during_a_load_below_level_0_keeps_none_or_all_of_it() {
    crash_points(Scenario::Deep);
}

#[test]
fn a_crash_during_a_load_into_level_0_keeps_none_or_all_of_it() {
    crash_points(Scenario::Level0);
}

#[test]
fn a_crash_during_a_rewritten_load_keeps_none_or_all_of_it() {
    crash_points(Scenario::Rewrite);
}
