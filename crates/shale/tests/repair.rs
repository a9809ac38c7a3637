//! What `shale::repair` reports: the tables of the new MANIFEST, what became
//! of each log's records, the parts of tables that could not be read, and
//! the files moved to `lost/`, each with its file and offset, checked
//! against the damage the test made (located by decoding the files with
//! `support`, not with the engine) and against what the repaired database
//! then holds.
//!
//! * A damaged data block: the report names the table and the block's
//!   offset and length; every other entry is salvaged and readable.
//! * A damaged log record: the report names the log and the record's
//!   offset; the records before it and those in the log's later blocks are
//!   recovered (the rest of its 32 KiB block is lost with it).
//! * An undamaged database: nothing dropped, every table and entry counted.
//! * A file that is not a table: moved to `lost/` and reported as
//!   unreadable whole.
//! * A log that cannot be read to its end (an I/O error): the rest of it,
//!   from the end of the last record read, is reported.

mod common;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::fault_fs::{Fault, FaultFs, Op, EIO};
use shale::env::FileSystem;
use shale::{CompressionType, Db, Options, ReadOptions, RepairReport};
use support::{contents, files_named, log_fragments, TableLayout, LOG_BLOCK, LOG_HEADER};

fn options() -> Options {
    Options {
        create_if_missing: true,
        compression: CompressionType::None,
        block_size: 1024,
        ..Default::default()
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// A value of 200 bytes that names its key.
fn value(i: usize) -> Vec<u8> {
    let mut v = format!("value of key{i:05};").repeat(12).into_bytes();
    v.truncate(200);
    v
}

/// Writes each key of `range` with its own `put` into the database in
/// `dir`, then closes it: the puts are left in the log.
fn put_range(dir: &Path, range: std::ops::Range<usize>) {
    let db = Db::open(dir, options()).unwrap();
    for i in range {
        db.put(&key(i), &value(i)).unwrap();
    }
}

/// Opens and closes the database: recovery writes the log to a level-0
/// table.
fn flush(dir: &Path) {
    drop(Db::open(dir, options()).unwrap());
}

fn the_only(dir: &Path, suffix: &str) -> PathBuf {
    let names = files_named(dir, suffix);
    assert_eq!(names.len(), 1, "{suffix} files: {names:?}");
    dir.join(&names[0])
}

/// The user keys a table holds, by decoding it.
fn table_keys(path: &Path) -> Vec<Vec<u8>> {
    TableLayout::decode(&std::fs::read(path).unwrap())
        .keys()
        .cloned()
        .collect()
}

fn flip_byte(path: &Path, at: u64) {
    let mut data = std::fs::read(path).unwrap();
    data[at as usize] ^= 0xff;
    std::fs::write(path, data).unwrap();
}

/// Checks what every report must say of its own tables: each one the new
/// MANIFEST lists exists with the size reported, and the totals add up.
fn check_tables_exist(report: &RepairReport) {
    for t in &report.tables {
        let size = std::fs::metadata(&t.file)
            .unwrap_or_else(|e| panic!("{}: {e}", t.file.display()))
            .len();
        assert_eq!(size, t.bytes, "{}", t.file.display());
    }
    let bytes: u64 = report.tables.iter().map(|t| t.bytes).sum();
    assert_eq!(report.bytes(), bytes);
    assert!(report.manifest.exists());
    let current = std::fs::read_to_string(report.manifest.parent().unwrap().join("CURRENT"));
    let name = report.manifest.file_name().unwrap().to_string_lossy();
    assert_eq!(current.unwrap(), format!("{name}\n"));
}

/// The report's record of a move of `from` into `lost/`, checking that the
/// file is there (a salvaged table's copy then takes its name).
fn moved(report: &RepairReport, from: &Path) -> PathBuf {
    let m = report
        .moved_to_lost
        .iter()
        .find(|m| m.from == from)
        .unwrap_or_else(|| panic!("{} not moved: {report:#?}", from.display()));
    let lost = from.parent().unwrap().join("lost");
    assert_eq!(m.to, lost.join(from.file_name().unwrap()));
    assert!(m.to.exists(), "{}", m.to.display());
    assert!(!m.reason.is_empty());
    m.to.clone()
}

#[test]
fn a_damaged_data_block_is_reported_and_every_other_entry_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    put_range(dir, 0..600);
    flush(dir);
    let table = the_only(dir, ".ldb");
    let layout = TableLayout::decode(&std::fs::read(&table).unwrap());
    assert!(layout.data.len() > 10, "blocks: {}", layout.data.len());
    // Damage a block in the middle of the table.
    let (block, lost_keys) = &layout.data[layout.data.len() / 2];
    flip_byte(&table, block.offset + block.size / 2);

    let report = shale::repair(dir, &options()).unwrap();

    assert_eq!(report.damaged_tables.len(), 1, "{report:#?}");
    let damaged = &report.damaged_tables[0];
    assert_eq!(damaged.file, table);
    assert!(damaged.reason.contains("checksum"), "{}", damaged.reason);
    assert_eq!(damaged.unreadable.len(), 1, "{damaged:#?}");
    let d = &damaged.unreadable[0];
    assert_eq!(d.file, table);
    assert_eq!(
        (d.offset, d.len),
        (block.offset, block.extent().end - block.offset)
    );
    assert!(d.reason.contains("checksum"), "{}", d.reason);
    let kept = 600 - lost_keys.len() as u64;
    assert_eq!(damaged.entries_salvaged, kept);
    // The damage is all that was dropped.
    let dropped: Vec<_> = report.dropped().collect();
    assert_eq!(dropped, [d]);

    // The salvaged copy takes the table's number; the original is in lost/.
    assert_eq!(report.tables.len(), 1, "{report:#?}");
    assert_eq!(report.tables[0].number, damaged.number);
    assert_eq!(report.tables[0].entries, kept);
    assert_eq!(report.entries(), kept);
    check_tables_exist(&report);
    assert_eq!(table_keys(&report.tables[0].file).len() as u64, kept);
    moved(&report, &table);

    let db = Db::open(dir, options()).unwrap();
    for i in 0..600 {
        let got = db.get(&key(i)).unwrap();
        if lost_keys.contains(&key(i)) {
            assert_eq!(got, None, "key {i} was in the damaged block");
        } else {
            assert_eq!(got, Some(value(i)), "key {i}");
        }
    }
}

#[test]
fn a_damaged_log_record_is_reported_and_the_intact_records_are_recovered() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // One put per record, in key order, over several 32 KiB log blocks.
    put_range(dir, 0..600);
    let log = the_only(dir, ".log");
    let fragments = log_fragments(&std::fs::read(&log).unwrap());
    // The record each fragment belongs to (a record is a FULL fragment, or
    // FIRST, MIDDLE... and LAST).
    let mut record_of = Vec::new();
    let mut record_start = Vec::new();
    for f in &fragments {
        if f.kind == 1 || f.kind == 2 {
            record_start.push(f.offset);
        }
        record_of.push(record_start.len() - 1);
    }
    assert_eq!(record_start.len(), 600);
    assert!(fragments.last().unwrap().offset > 3 * LOG_BLOCK as u64);
    // A whole record in the middle of the log's second block.
    let damaged = fragments
        .iter()
        .find(|f| f.kind == 1 && f.offset > LOG_BLOCK as u64 + 8000)
        .unwrap();
    flip_byte(&log, damaged.offset + LOG_HEADER as u64 + 20);
    // The reader drops the rest of the block with it: the records that start
    // there are lost, and the later fragments of the last of them are
    // reported where they are.
    let block_end = (damaged.offset / LOG_BLOCK as u64 + 1) * LOG_BLOCK as u64;
    let lost = |r: usize| (damaged.offset..block_end).contains(&record_start[r]);
    let stray: Vec<u64> = fragments
        .iter()
        .zip(&record_of)
        .filter(|(f, &r)| f.offset >= block_end && lost(r))
        .map(|(f, _)| f.offset)
        .collect();
    let recovered: Vec<usize> = (0..600).filter(|&r| !lost(r)).collect();
    assert!(recovered.len() > 400 && recovered.len() < 600);
    assert!(recovered.iter().any(|&r| record_start[r] > damaged.offset));

    let report = shale::repair(dir, &options()).unwrap();

    assert_eq!(report.logs.len(), 1, "{report:#?}");
    let l = &report.logs[0];
    assert_eq!(l.file, log);
    assert_eq!(l.batches, recovered.len() as u64);
    assert_eq!(l.entries, recovered.len() as u64);
    assert_eq!(l.skipped.len(), 1 + stray.len(), "{l:#?}");
    let first = &l.skipped[0];
    assert_eq!(first.file, log);
    assert_eq!(
        (first.offset, first.len),
        (damaged.offset, block_end - damaged.offset)
    );
    assert!(first.reason.contains("checksum"), "{}", first.reason);
    for (d, &at) in l.skipped[1..].iter().zip(&stray) {
        assert_eq!((&d.file, d.offset), (&log, at));
        assert!(d.reason.contains("missing start"), "{}", d.reason);
    }
    assert_eq!(report.dropped().count(), l.skipped.len());
    assert!(report.damaged_tables.is_empty());

    // The log became the one table, and went to lost/.
    assert_eq!(report.tables.len(), 1, "{report:#?}");
    assert_eq!(Some(report.tables[0].number), l.table);
    assert_eq!(report.entries(), recovered.len() as u64);
    check_tables_exist(&report);
    moved(&report, &log);
    assert!(!log.exists());

    let db = Db::open(dir, options()).unwrap();
    for i in 0..600 {
        let want = (!lost(i)).then(|| value(i));
        assert_eq!(db.get(&key(i)).unwrap(), want, "key {i}");
    }
}

#[test]
fn an_undamaged_database_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Two tables, then overwrites and deletions left in the log.
    put_range(dir, 0..300);
    flush(dir);
    put_range(dir, 300..700);
    flush(dir);
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = (0..700).map(|i| (key(i), value(i))).collect();
    let tables: Vec<PathBuf> = files_named(dir, ".ldb")
        .iter()
        .map(|n| dir.join(n))
        .collect();
    assert_eq!(tables.len(), 2);
    {
        let db = Db::open(dir, options()).unwrap();
        for i in (0..700).step_by(7) {
            db.put(&key(i), b"new").unwrap();
            model.insert(key(i), b"new".to_vec());
        }
        let mut batch = shale::WriteBatch::new();
        for i in (3..700).step_by(10) {
            batch.delete(&key(i)).unwrap();
            model.remove(&key(i));
        }
        db.write(&Default::default(), &batch).unwrap();
    }
    let log_batches = 100 + 1;
    let log_updates = 100 + 70;
    let log = the_only(dir, ".log");
    let manifest = the_only(dir, "MANIFEST-");

    let report = shale::repair(dir, &options()).unwrap();

    assert_eq!(report.dropped().count(), 0, "{report:#?}");
    assert!(report.damaged_tables.is_empty());
    assert_eq!(report.logs.len(), 1);
    let l = &report.logs[0];
    assert_eq!(
        (&l.file, l.batches, l.entries),
        (&log, log_batches, log_updates)
    );
    assert!(l.skipped.is_empty());
    // The two tables as they were, and the log's.
    assert_eq!(report.tables.len(), 3, "{report:#?}");
    for t in &tables {
        let listed = report.tables.iter().find(|r| &r.file == t).unwrap();
        assert_eq!(listed.entries, table_keys(t).len() as u64);
    }
    let from_log = report.tables.iter().find(|t| Some(t.number) == l.table);
    assert_eq!(from_log.unwrap().entries, log_updates);
    assert_eq!(report.entries(), 300 + 400 + log_updates);
    check_tables_exist(&report);
    // The log and the old MANIFEST went to lost/, and nothing else.
    moved(&report, &log);
    moved(&report, &manifest);
    assert!(!log.exists() && !manifest.exists());
    assert_eq!(report.moved_to_lost.len(), 2, "{report:#?}");

    let db = Db::open(dir, options()).unwrap();
    let all = contents(&db, &ReadOptions::default()).unwrap();
    assert_eq!(all, model.into_iter().collect::<Vec<_>>());
}

#[test]
fn a_file_that_is_not_a_table_goes_to_lost_and_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    put_range(dir, 0..300);
    flush(dir);
    put_range(dir, 300..600);
    flush(dir);
    let names = files_named(dir, ".ldb");
    assert_eq!(names.len(), 2);
    // The first table's bytes replaced: no footer, no index, no blocks.
    let garbage = dir.join(&names[0]);
    assert_eq!(table_keys(&garbage).first(), Some(&key(0)));
    let size = std::fs::metadata(&garbage).unwrap().len();
    let junk: Vec<u8> = (0..size).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&garbage, &junk).unwrap();
    let sound = dir.join(&names[1]);

    let report = shale::repair(dir, &options()).unwrap();

    assert_eq!(report.damaged_tables.len(), 1, "{report:#?}");
    let damaged = &report.damaged_tables[0];
    assert_eq!(damaged.file, garbage);
    assert_eq!(damaged.entries_salvaged, 0);
    assert_eq!(damaged.unreadable.len(), 1);
    let d = &damaged.unreadable[0];
    assert_eq!((&d.file, d.offset, d.len), (&garbage, 0, size));
    assert!(d.reason.contains("footer"), "{}", d.reason);
    assert_eq!(report.dropped().collect::<Vec<_>>(), [d]);
    // Moved to lost/ as it was.
    let kept = moved(&report, &garbage);
    assert!(!garbage.exists());
    assert_eq!(std::fs::read(kept).unwrap(), junk);
    // Only the sound table is listed, and no copy of the other.
    assert_eq!(report.tables.len(), 1, "{report:#?}");
    assert_eq!(report.tables[0].file, sound);
    assert_eq!(report.tables[0].entries, 300);
    assert!(report.tables.iter().all(|t| t.number != damaged.number));
    check_tables_exist(&report);

    let db = Db::open(dir, options()).unwrap();
    for i in 0..600 {
        let want = (i >= 300).then(|| value(i));
        assert_eq!(db.get(&key(i)).unwrap(), want, "key {i}");
    }
}

#[test]
fn a_log_that_cannot_be_read_to_its_end_is_reported_from_where_reading_stopped() {
    let fs = FaultFs::new();
    let dir = Path::new("/db");
    let opts = Options {
        fs: Arc::new(fs.clone()),
        ..options()
    };
    {
        let db = Db::open(dir, opts.clone()).unwrap();
        for i in 0..600 {
            db.put(&key(i), &value(i)).unwrap();
        }
    }
    let names: Vec<String> = fs.children(dir).unwrap();
    let log = dir.join(names.iter().find(|n| n.ends_with(".log")).unwrap());
    let data = shale::env::read_file(&fs, &log).unwrap();
    let fragments = log_fragments(&data);
    // The records that end in the first block: the reader gets them before
    // its read of the second block fails.
    let mut whole = 0;
    let mut read_to = 0;
    for f in &fragments {
        let end = f.offset + (LOG_HEADER + f.len) as u64;
        if end > LOG_BLOCK as u64 {
            break;
        }
        if f.kind == 1 || f.kind == 4 {
            whole += 1;
            read_to = end;
        }
    }
    assert!(whole > 100 && whole < 600, "{whole}");
    // Reads of the log fail from its second block on.
    fs.inject(
        Fault::new(EIO)
            .on(Op::Read)
            .on_path(".log")
            .skip(1)
            .persistent(),
    );

    let report = shale::repair(dir, &opts).unwrap();

    fs.clear_faults();
    let l = &report.logs[0];
    assert_eq!((&l.file, l.batches), (&log, whole as u64));
    assert_eq!(l.skipped.len(), 1, "{l:#?}");
    let d = &l.skipped[0];
    assert_eq!(d.file, log);
    assert_eq!((d.offset, d.len), (read_to, data.len() as u64 - read_to));
    assert!(d.reason.contains("could not be read"), "{}", d.reason);
    assert_eq!(report.entries(), whole as u64);

    let db = Db::open(dir, opts).unwrap();
    for i in 0..600 {
        let want = (i < whole).then(|| value(i));
        assert_eq!(db.get(&key(i)).unwrap(), want, "key {i}");
    }
}

/// Writes table `number` of `dir` with `entries` (user key, sequence,
/// value), in order.
fn write_table(dir: &Path, number: u64, entries: &[(&[u8], u64, &[u8])]) {
    use shale::internals::{
        table_file_name, InternalKey, InternalKeyComparator, TableBuilder, TableOptions, ValueType,
    };
    let icmp = InternalKeyComparator::new(Arc::new(shale::BytewiseComparator));
    let fs = shale::env::PosixFs;
    let file = fs.new_writable_file(&table_file_name(dir, number)).unwrap();
    let mut b = TableBuilder::new(TableOptions::new(Arc::new(icmp)), file);
    for (k, seq, v) in entries {
        b.add(InternalKey::new(k, *seq, ValueType::Value).encoded(), v)
            .unwrap();
    }
    b.finish().unwrap();
}

/// Level 0 is searched newest file number first. A table with a higher
/// number may hold older updates of a key than one with a lower number (a
/// compaction's output beside an older level-0 table): repair then
/// compacts, and every key reads its newest version.
#[test]
fn a_higher_numbered_table_with_older_updates_does_not_hide_newer_ones() {
    let dir = tempfile::tempdir().unwrap();
    // Table 5: "k" written at sequence 200. Table 9: "k" at 100 among
    // older keys around it, as a compaction writes them.
    write_table(dir.path(), 5, &[(b"k", 200, b"new")]);
    write_table(
        dir.path(),
        9,
        &[(b"a", 90, b"a"), (b"k", 100, b"old"), (b"z", 110, b"z")],
    );
    let report = shale::repair(dir.path(), &options()).unwrap();
    assert_eq!(report.tables.len(), 2);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
    assert!(report.compacted, "{report:?}");
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"a"[..]));
    assert_eq!(
        contents(&db, &ReadOptions::default()).unwrap(),
        [
            (b"a".to_vec(), b"a".to_vec()),
            (b"k".to_vec(), b"new".to_vec()),
            (b"z".to_vec(), b"z".to_vec())
        ]
    );
    drop(db);

    // Tables in the order level 0 reads them (higher numbers newer) need
    // no compaction.
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), 5, &[(b"a", 90, b"a"), (b"k", 100, b"old")]);
    write_table(dir.path(), 9, &[(b"k", 200, b"new"), (b"z", 210, b"z")]);
    let report = shale::repair(dir.path(), &options()).unwrap();
    assert!(!report.compacted, "{report:?}");
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
}
