//! `Options::reuse_logs`: on open, keep appending to the last log (its
//! contents stay in the memtable) and to the MANIFEST instead of starting
//! new ones, when they are small and end cleanly after their last record.
//! Without the option every open starts a new log and a new MANIFEST.

use std::path::Path;
use std::sync::Arc;

use shale::env::{read_file, write_file_sync, FileSystem, MemFs};
use shale::{Db, Options};

const DIR: &str = "/db";

fn options(fs: &MemFs, reuse_logs: bool) -> Options {
    Options {
        create_if_missing: true,
        reuse_logs,
        fs: Arc::new(fs.clone()),
        ..Default::default()
    }
}

/// The database's log and MANIFEST file names, sorted.
fn logs_and_manifests(fs: &MemFs) -> (Vec<String>, Vec<String>) {
    let mut names = fs.children(Path::new(DIR)).unwrap();
    names.sort();
    let logs = names.iter().filter(|n| n.ends_with(".log")).cloned();
    let manifests = names.iter().filter(|n| n.starts_with("MANIFEST-")).cloned();
    (logs.collect(), manifests.collect())
}

fn path(name: &str) -> std::path::PathBuf {
    Path::new(DIR).join(name)
}

/// The files as they are now, while the database may still be open: what
/// a machine crash would leave (MemFs loses nothing that was written).
fn crash_copy(fs: &MemFs) -> MemFs {
    let copy = MemFs::new();
    copy.create_dir_all(Path::new(DIR)).unwrap();
    for name in fs.children(Path::new(DIR)).unwrap() {
        let data = read_file(fs, &path(&name)).unwrap();
        write_file_sync(&copy, &path(&name), &data).unwrap();
    }
    copy
}

/// The number of table files of the current version.
fn tables(db: &Db) -> usize {
    (0..7)
        .map(|level| {
            let p = db.property(&format!("leveldb.num-files-at-level{level}"));
            p.and_then(|s| s.parse::<usize>().ok()).unwrap()
        })
        .sum()
}

fn key(cycle: usize, i: usize) -> Vec<u8> {
    format!("cycle{cycle:02}-key{i:03}").into_bytes()
}

fn value(cycle: usize, i: usize) -> Vec<u8> {
    format!("value {cycle} {i} {}", "x".repeat(i % 50)).into_bytes()
}

fn write_cycle(db: &Db, cycle: usize) {
    for i in 0..100 {
        db.put(&key(cycle, i), &value(cycle, i)).unwrap();
    }
    // Overwrites and deletions too.
    db.put(&key(cycle, 0), b"overwritten").unwrap();
    db.delete(&key(cycle, 1)).unwrap();
}

fn check_cycles(db: &Db, cycles: usize) {
    for cycle in 0..cycles {
        for i in 0..100 {
            let expected = match i {
                0 => Some(b"overwritten".to_vec()),
                1 => None,
                _ => Some(value(cycle, i)),
            };
            assert_eq!(
                db.get(&key(cycle, i)).unwrap(),
                expected,
                "cycle {cycle} key {i}"
            );
        }
    }
}

#[test]
fn reopening_with_reuse_logs_keeps_appending_to_the_same_log_and_manifest() {
    let fs = MemFs::new();
    let db = Db::open(DIR, options(&fs, true)).unwrap();
    write_cycle(&db, 0);
    drop(db);
    let files = logs_and_manifests(&fs);
    assert_eq!((files.0.len(), files.1.len()), (1, 1), "{files:?}");
    let current = read_file(&fs, &path("CURRENT")).unwrap();

    for cycle in 1..6 {
        let db = Db::open(DIR, options(&fs, true)).unwrap();
        assert_eq!(logs_and_manifests(&fs), files, "reopen {cycle}");
        check_cycles(&db, cycle);
        write_cycle(&db, cycle);
        check_cycles(&db, cycle + 1);
        drop(db);
        assert_eq!(logs_and_manifests(&fs), files, "after cycle {cycle}");
    }
    assert_eq!(read_file(&fs, &path("CURRENT")).unwrap(), current);
    // Nothing was flushed: the data is all in the reused log.
    let db = Db::open(DIR, options(&fs, true)).unwrap();
    assert_eq!(tables(&db), 0);
    check_cycles(&db, 6);
}

#[test]
fn without_reuse_logs_every_open_starts_a_new_log_and_manifest() {
    let fs = MemFs::new();
    let db = Db::open(DIR, options(&fs, false)).unwrap();
    write_cycle(&db, 0);
    drop(db);
    let before = logs_and_manifests(&fs);
    let db = Db::open(DIR, options(&fs, false)).unwrap();
    let after = logs_and_manifests(&fs);
    assert_eq!((after.0.len(), after.1.len()), (1, 1), "{after:?}");
    assert_ne!(after.0, before.0);
    assert_ne!(after.1, before.1);
    check_cycles(&db, 1);
}

#[test]
fn a_database_switches_freely_between_reusing_and_not() {
    let fs = MemFs::new();
    for cycle in 0..6 {
        let db = Db::open(DIR, options(&fs, cycle % 3 != 0)).unwrap();
        check_cycles(&db, cycle);
        write_cycle(&db, cycle);
    }
    let db = Db::open(DIR, options(&fs, false)).unwrap();
    check_cycles(&db, 6);
}

#[test]
fn reuse_survives_crashes_without_a_clean_close() {
    let mut fs = MemFs::new();
    let mut db = Db::open(DIR, options(&fs, true)).unwrap();
    write_cycle(&db, 0);
    // Databases whose machine "died": left open on files no longer used.
    let mut abandoned = Vec::new();
    let mut files = None;
    for cycle in 1..6 {
        // The machine dies with the database open: reopen what it left.
        fs = crash_copy(&fs);
        abandoned.push(db);
        db = Db::open(DIR, options(&fs, true)).unwrap();
        let now = logs_and_manifests(&fs);
        assert_eq!(now.0.len(), 1, "{now:?}");
        if let Some(before) = &files {
            assert_eq!(&now, before, "crash {cycle}: the same log and MANIFEST");
        }
        files = Some(now);
        check_cycles(&db, cycle);
        write_cycle(&db, cycle);
        check_cycles(&db, cycle + 1);
    }
    let crashed = crash_copy(&fs);
    let db = Db::open(DIR, options(&crashed, true)).unwrap();
    check_cycles(&db, 6);
}

#[test]
fn a_torn_log_tail_is_not_appended_to() {
    let fs = MemFs::new();
    let db = Db::open(DIR, options(&fs, true)).unwrap();
    write_cycle(&db, 0);
    db.put(b"last", b"torn away").unwrap();
    // Crash in the middle of the last write: its record is cut short.
    let fs = crash_copy(&fs);
    drop(db);
    let (logs, _) = logs_and_manifests(&fs);
    let log = path(&logs[0]);
    let len = fs.file_size(&log).unwrap();
    fs.truncate(&log, len as usize - 3).unwrap();

    let db = Db::open(DIR, options(&fs, true)).unwrap();
    // Appending after the torn record would hide new records from the next
    // recovery; a new log is started instead.
    let (new_logs, _) = logs_and_manifests(&fs);
    assert_eq!(new_logs.len(), 1);
    assert_ne!(new_logs, logs);
    check_cycles(&db, 1);
    assert_eq!(db.get(b"last").unwrap(), None);
    write_cycle(&db, 1);
    drop(db);

    let db = Db::open(DIR, options(&fs, true)).unwrap();
    assert_eq!(logs_and_manifests(&fs).0, new_logs, "the new log is reused");
    check_cycles(&db, 2);
}

#[test]
fn a_manifest_with_a_torn_tail_is_replaced() {
    let fs = MemFs::new();
    let db = Db::open(DIR, options(&fs, true)).unwrap();
    write_cycle(&db, 0);
    drop(db);
    let (_, manifests) = logs_and_manifests(&fs);
    // A few bytes of a record header that was never finished.
    let mut f = fs.new_appendable_file(&path(&manifests[0])).unwrap();
    f.append(&[0x12, 0x34, 0x56]).unwrap();
    f.close().unwrap();

    let db = Db::open(DIR, options(&fs, true)).unwrap();
    let (_, now) = logs_and_manifests(&fs);
    assert_eq!(now.len(), 1);
    assert_ne!(now, manifests);
    check_cycles(&db, 1);
    write_cycle(&db, 1);
    drop(db);
    let db = Db::open(DIR, options(&fs, true)).unwrap();
    assert_eq!(logs_and_manifests(&fs).1, now, "the new MANIFEST is reused");
    check_cycles(&db, 2);
}

#[test]
fn a_log_that_outgrows_the_write_buffer_is_flushed_not_reused() {
    let fs = MemFs::new();
    let big = Options {
        write_buffer_size: 4 << 20,
        ..options(&fs, true)
    };
    let db = Db::open(DIR, big).unwrap();
    for cycle in 0..20 {
        write_cycle(&db, cycle);
    }
    drop(db);
    let (logs, _) = logs_and_manifests(&fs);
    assert!(fs.file_size(&path(&logs[0])).unwrap() > 128 << 10);

    // Replayed into a 64 KiB write buffer, the log does not fit.
    let small = Options {
        write_buffer_size: 64 << 10,
        ..options(&fs, true)
    };
    let db = Db::open(DIR, small.clone()).unwrap();
    let (now, _) = logs_and_manifests(&fs);
    assert_eq!(now.len(), 1);
    assert_ne!(now, logs);
    assert!(tables(&db) > 1);
    check_cycles(&db, 20);
    drop(db);
    let db = Db::open(DIR, small).unwrap();
    assert_eq!(logs_and_manifests(&fs).0, now);
    check_cycles(&db, 20);
}

/// Writes a log by hand holding one batch: `key` -> `value` at `sequence`.
fn write_log(fs: &MemFs, number: u64, sequence: u64, key: &[u8], value: &[u8]) {
    let mut batch = Vec::new();
    batch.extend_from_slice(&sequence.to_le_bytes());
    batch.extend_from_slice(&1u32.to_le_bytes());
    batch.push(1); // A put.
    batch.push(key.len() as u8);
    batch.extend_from_slice(key);
    batch.push(value.len() as u8);
    batch.extend_from_slice(value);
    let file = fs
        .new_writable_file(&path(&format!("{number:06}.log")))
        .unwrap();
    let mut w = shale::internals::LogWriter::new(file);
    w.add_record(&batch).unwrap();
    w.close().unwrap();
}

#[test]
fn with_several_logs_the_older_ones_are_flushed_and_the_last_reused() {
    let fs = MemFs::new();
    let db = Db::open(DIR, options(&fs, true)).unwrap();
    write_cycle(&db, 0);
    let next = db.stats().last_sequence + 1;
    drop(db);
    // As if the previous run had switched to a new log and died before
    // flushing the old one (the new log's batch continues the sequence).
    let (logs, _) = logs_and_manifests(&fs);
    write_log(&fs, 900, next, b"late", b"in the newest log");

    let db = Db::open(DIR, options(&fs, true)).unwrap();
    assert_eq!(logs_and_manifests(&fs).0, ["000900.log"], "was {logs:?}");
    check_cycles(&db, 1);
    assert_eq!(
        db.get(b"late").unwrap().as_deref(),
        Some(&b"in the newest log"[..])
    );
    db.put(b"later", b"appended").unwrap();
    drop(db);

    let db = Db::open(DIR, options(&fs, true)).unwrap();
    assert_eq!(logs_and_manifests(&fs).0, ["000900.log"]);
    check_cycles(&db, 1);
    assert_eq!(
        db.get(b"late").unwrap().as_deref(),
        Some(&b"in the newest log"[..])
    );
    assert_eq!(db.get(b"later").unwrap().as_deref(), Some(&b"appended"[..]));
}

#[test]
fn a_log_that_skips_sequence_numbers_is_dropped_with_the_later_ones() {
    let fs = MemFs::new();
    let db = Db::open(DIR, options(&fs, false)).unwrap();
    write_cycle(&db, 0);
    let next = db.stats().last_sequence + 1;
    drop(db);
    // As after a power cut that lost the unsynced tail of the last log
    // (sequence numbers next..next+5) but kept the start of the log after it.
    write_log(&fs, 900, next + 5, b"after-gap", b"a later write");
    write_log(&fs, 901, next + 6, b"after-gap-2", b"later still");

    let db = Db::open(DIR, options(&fs, false)).unwrap();
    check_cycles(&db, 1);
    assert_eq!(db.get(b"after-gap").unwrap(), None);
    assert_eq!(db.get(b"after-gap-2").unwrap(), None);
    // New writes continue after what was kept, and survive a reopen.
    db.put(b"new", b"value").unwrap();
    drop(db);
    let db = Db::open(DIR, options(&fs, false)).unwrap();
    check_cycles(&db, 1);
    assert_eq!(db.get(b"new").unwrap().as_deref(), Some(&b"value"[..]));
    assert_eq!(db.get(b"after-gap").unwrap(), None);
}
