//! Value separation (`Options::blob_threshold`): large values written once,
//! to blob files, and read back through every read path.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use shale::env::{read_file, write_file_sync, FileSystem, MemFs};
use shale::{Db, Options, ReadOptions, WriteBatch, WriteOptions};

const THRESHOLD: usize = 100;

fn options(fs: &MemFs, threshold: Option<usize>) -> Options {
    Options {
        create_if_missing: true,
        fs: Arc::new(fs.clone()),
        blob_threshold: threshold,
        write_buffer_size: 64 << 10,
        // The smallest: a few large values fill a blob file and switch the
        // memtable, so that flushes and compactions meet blob pointers.
        blob_file_size: 64 << 10,
        ..Default::default()
    }
}

/// A value of `len` bytes that names its key and version.
fn value(key: u32, version: u32, len: usize) -> Vec<u8> {
    let mut v = format!("{key}/{version}/").into_bytes();
    let mut x = key.wrapping_mul(2_654_435_761) ^ version;
    while v.len() < len {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        v.push(b'a' + (x >> 16) as u8 % 26);
    }
    v.truncate(len);
    v
}

fn key(n: u32) -> Vec<u8> {
    format!("key{n:05}").into_bytes()
}

/// The database's files whose names end with `suffix`, sorted.
fn files_ending(fs: &MemFs, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = fs
        .children(Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(suffix))
        .collect();
    names.sort();
    names
}

fn blob_files(fs: &MemFs) -> Vec<String> {
    files_ending(fs, ".blob")
}

fn walk_forward(db: &Db, opts: &ReadOptions<'_>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut c = db.cursor(opts);
    c.seek_to_first();
    let mut out = Vec::new();
    while c.valid() {
        out.push((c.key().to_vec(), c.value().to_vec()));
        c.next();
    }
    c.status().unwrap();
    out
}

fn walk_backward(db: &Db, opts: &ReadOptions<'_>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut c = db.cursor(opts);
    c.seek_to_last();
    let mut out = Vec::new();
    while c.valid() {
        out.push((c.key().to_vec(), c.value().to_vec()));
        c.prev();
    }
    c.status().unwrap();
    out.reverse();
    out
}

/// Every read path agrees with `model`.
fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>, opts: &ReadOptions<'_>) {
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.clone().into_iter().collect();
    assert_eq!(walk_forward(db, opts), want, "forward");
    assert_eq!(walk_backward(db, opts), want, "backward");
    for (k, v) in model {
        assert_eq!(db.get_with(opts, k).unwrap().as_ref(), Some(v), "get {k:?}");
    }
    // The iterator API, a range and a prefix.
    let items: Vec<(Vec<u8>, Vec<u8>)> = match opts.snapshot {
        Some(s) => s
            .iter()
            .map(|r| r.unwrap())
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect(),
        None => db
            .iter()
            .map(|r| r.unwrap())
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect(),
    };
    assert_eq!(items, want, "iter");
    if opts.snapshot.is_none() {
        let lo = key(10);
        let hi = key(40);
        let ranged: Vec<(Vec<u8>, Vec<u8>)> = db
            .range(&lo[..]..&hi[..])
            .map(|r| r.unwrap())
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect();
        let want_range: Vec<(Vec<u8>, Vec<u8>)> = model
            .range(lo.clone()..hi.clone())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(ranged, want_range, "range");
        let prefixed: Vec<(Vec<u8>, Vec<u8>)> = db
            .prefix(b"key0002")
            .rev()
            .map(|r| r.unwrap())
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect();
        let mut want_prefix: Vec<(Vec<u8>, Vec<u8>)> = model
            .iter()
            .filter(|(k, _)| k.starts_with(b"key0002"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        want_prefix.reverse();
        assert_eq!(prefixed, want_prefix, "prefix");
    }
}

/// The values in a blob file take no memory: the memtable is switched when
/// its blob file passes `blob_file_size`, not when the values alone would
/// fill the write buffer.
#[test]
fn a_blob_file_fills_to_its_size_before_the_memtable_switches() {
    let fs = MemFs::new();
    let opts = Options {
        blob_file_size: 1 << 20,
        ..options(&fs, Some(THRESHOLD))
    };
    let db = Db::open("/db", opts).unwrap();
    let mut model = BTreeMap::new();
    let mut put = |db: &Db, i: u32| {
        let v = value(i, 0, 10_000);
        db.put(&key(i), &v).unwrap();
        model.insert(key(i), v);
    };
    // 500 KB of values, eight times the 64 KB write buffer: one memtable,
    // one blob file, nothing flushed.
    for i in 0..50 {
        put(&db, i);
    }
    assert_eq!(blob_files(&fs).len(), 1, "{:?}", blob_files(&fs));
    assert_eq!(
        files_ending(&fs, ".ldb"),
        Vec::<String>::new(),
        "a memtable of 50 pointers was flushed"
    );
    // Past 1 MB the memtable is switched: its blob file is closed and the
    // next write starts another.
    for i in 50..120 {
        put(&db, i);
    }
    assert_eq!(blob_files(&fs).len(), 2, "{:?}", blob_files(&fs));
    check(&db, &model, &ReadOptions::default());
}

/// Values just below, at and above the threshold, through the memtable, a
/// flush, compactions and a reopen, with a snapshot taken before overwrites.
#[test]
fn values_around_the_threshold_read_back_everywhere() {
    let fs = MemFs::new();
    let db = Db::open("/db", options(&fs, Some(THRESHOLD))).unwrap();
    let lens = [0, 1, THRESHOLD - 1, THRESHOLD, THRESHOLD + 1, 1000, 70_000];
    let mut model = BTreeMap::new();
    for n in 0..60u32 {
        let v = value(n, 0, lens[n as usize % lens.len()]);
        db.put(&key(n), &v).unwrap();
        model.insert(key(n), v);
    }
    assert!(!blob_files(&fs).is_empty(), "no blob file written");
    check(&db, &model, &ReadOptions::default());

    let snap = db.snapshot();
    let old = model.clone();
    // Overwrites (large over small, small over large) and deletions in one batch.
    let mut batch = WriteBatch::new();
    for n in (0..60u32).step_by(3) {
        let v = value(n, 1, lens[(n as usize + 2) % lens.len()]);
        batch.put(&key(n), &v).unwrap();
        model.insert(key(n), v);
    }
    for n in (1..60u32).step_by(7) {
        batch.delete(&key(n)).unwrap();
        model.remove(&key(n));
    }
    db.write(
        &WriteOptions {
            sync: true,
            ..Default::default()
        },
        &batch,
    )
    .unwrap();
    let at_snap = ReadOptions {
        snapshot: Some(&snap),
        ..Default::default()
    };
    check(&db, &model, &ReadOptions::default());
    check(&db, &old, &at_snap);

    db.compact_range(None, None).unwrap();
    check(&db, &model, &ReadOptions::default());
    check(&db, &old, &at_snap);
    drop(snap);
    drop(db);

    // Reopened: from tables; with the option off, Shale still reads them.
    for threshold in [Some(THRESHOLD), None] {
        let db = Db::open("/db", options(&fs, threshold)).unwrap();
        check(&db, &model, &ReadOptions::default());
    }
}

/// Values only in the log (never flushed) come back through recovery, which
/// checks every pointer's blob record; a reopen with blobs then a flush
/// keeps them.
#[test]
fn recovery_replays_blob_pointers_from_the_log() {
    let fs = MemFs::new();
    let mut model = BTreeMap::new();
    {
        let db = Db::open("/db", options(&fs, Some(THRESHOLD))).unwrap();
        for n in 0..40u32 {
            let v = value(n, 0, 150 + n as usize);
            db.put(&key(n), &v).unwrap();
            model.insert(key(n), v);
        }
    }
    for _ in 0..2 {
        let db = Db::open("/db", options(&fs, Some(THRESHOLD))).unwrap();
        check(&db, &model, &ReadOptions::default());
        // The values are in a table now, pointing into the old blob file.
        assert!(!blob_files(&fs).is_empty());
    }
}

/// A power cut may keep a log record but not the blob record it points to
/// (the blob file is synced before the log only by synchronous writes):
/// recovery ends the log there, as at a torn tail: a prefix of the writes,
/// never an error or a wrong value.
#[test]
fn a_torn_blob_file_ends_replay_at_the_first_lost_value() {
    let fs = MemFs::new();
    let mut values = Vec::new();
    {
        let db = Db::open("/db", options(&fs, Some(THRESHOLD))).unwrap();
        for n in 0..20u32 {
            let v = value(n, 0, 200);
            db.put(&key(n), &v).unwrap();
            values.push(v);
        }
    }
    let names = blob_files(&fs);
    assert_eq!(names.len(), 1, "{names:?}");
    let path = Path::new("/db").join(&names[0]);
    let data = read_file(&fs, &path).unwrap();
    // Cut the file inside the record of key 12 (header 12 bytes, then
    // records of equal length).
    let record = (data.len() - 12) / 20;
    write_file_sync(&fs, &path, &data[..12 + record * 12 + record / 2]).unwrap();

    let db = Db::open("/db", options(&fs, Some(THRESHOLD))).unwrap();
    for n in 0..20u32 {
        let got = db.get(&key(n)).unwrap();
        if n < 12 {
            assert_eq!(got.as_ref(), Some(&values[n as usize]), "key {n}");
        } else {
            assert_eq!(got, None, "key {n} after the lost value");
        }
    }
    assert_eq!(walk_forward(&db, &ReadOptions::default()).len(), 12);
}

/// Blob files no table, memtable or compaction needs are deleted; the
/// ones the tables point into stay, whatever happens to the database.
#[test]
fn only_blob_files_something_points_into_are_kept() {
    let fs = MemFs::new();
    let db = Db::open("/db", options(&fs, Some(THRESHOLD))).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..4u32 {
        for n in 0..300u32 {
            let v = value(n, round, 400);
            db.put(&key(n), &v).unwrap();
            model.insert(key(n), v);
        }
    }
    // Several memtables' worth (a blob file each).
    assert!(blob_files(&fs).len() >= 3, "{:?}", blob_files(&fs));
    db.compact_range(None, None).unwrap();
    check(&db, &model, &ReadOptions::default());
    drop(db);
    let db = Db::open("/db", options(&fs, None)).unwrap();
    check(&db, &model, &ReadOptions::default());
    // Deleting everything and compacting leaves no table pointing anywhere:
    // every blob file goes.
    for n in 0..300u32 {
        db.delete(&key(n)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    drop(db);
    let db = Db::open("/db", options(&fs, None)).unwrap();
    assert!(walk_forward(&db, &ReadOptions::default()).is_empty());
    assert_eq!(blob_files(&fs), Vec::<String>::new());
}

/// A damaged blob record read through `get` or an iterator is a
/// corruption naming the blob file and the record's offset.
#[test]
fn a_damaged_blob_record_is_corruption_naming_file_and_offset() {
    let fs = MemFs::new();
    let db = Db::open("/db", options(&fs, Some(THRESHOLD))).unwrap();
    db.put(b"a", &value(1, 0, 500)).unwrap();
    db.put(b"b", &value(2, 0, 500)).unwrap();
    db.compact_range(None, None).unwrap();
    let names = blob_files(&fs);
    assert_eq!(names.len(), 1, "{names:?}");
    let path = Path::new("/db").join(&names[0]);
    let mut data = read_file(&fs, &path).unwrap();
    let last = data.len() - 10;
    data[last] ^= 0x55; // inside the value of "b"
    write_file_sync(&fs, &path, &data).unwrap();
    drop(db);
    let db = Db::open("/db", options(&fs, Some(THRESHOLD))).unwrap();
    assert!(db.get(b"a").unwrap().is_some());
    let e = db.get(b"b").unwrap_err();
    let shale::Error::Corruption { file, offset, .. } = &e else {
        panic!("not a corruption: {e}");
    };
    assert_eq!(file, &path);
    assert!(offset.is_some_and(|o| o > 12), "{e}");
    let mut c = db.cursor(&ReadOptions::default());
    c.seek_to_last();
    assert!(!c.valid());
    assert!(c.status().unwrap_err().to_string().contains(&names[0]));
}

/// A read-only open replays the logs' blob pointers in memory and reads
/// the values from the blob files, which it leaves as they are.
#[test]
fn a_read_only_open_reads_separated_values() {
    let fs = MemFs::new();
    let db = Db::open("/db", options(&fs, Some(THRESHOLD))).unwrap();
    let mut model = BTreeMap::new();
    for n in 0..50u32 {
        let v = value(n, 0, 300);
        db.put(&key(n), &v).unwrap();
        model.insert(key(n), v);
        if n == 25 {
            db.compact_range(None, None).unwrap();
        }
    }
    let before: Vec<(String, Vec<u8>)> = blob_files(&fs)
        .into_iter()
        .map(|n| {
            let data = read_file(&fs, &Path::new("/db").join(&n)).unwrap();
            (n, data)
        })
        .collect();
    let reader = Db::open_read_only("/db", options(&fs, Some(THRESHOLD))).unwrap();
    check(&reader, &model, &ReadOptions::default());
    drop(reader);
    let after: Vec<(String, Vec<u8>)> = blob_files(&fs)
        .into_iter()
        .map(|n| {
            let data = read_file(&fs, &Path::new("/db").join(&n)).unwrap();
            (n, data)
        })
        .collect();
    assert_eq!(before, after);
    check(&db, &model, &ReadOptions::default());
}

/// Repair finds each table's blob files again by reading its pointers (and
/// a log's pointers are checked): nothing blob-backed is lost, and the
/// blob files stay through later opens and compactions.
#[test]
fn repair_keeps_blob_backed_values() {
    let fs = MemFs::new();
    let mut model = BTreeMap::new();
    {
        let db = Db::open("/db", options(&fs, Some(THRESHOLD))).unwrap();
        for n in 0..80u32 {
            let v = value(n, 0, 50 + 10 * n as usize);
            db.put(&key(n), &v).unwrap();
            model.insert(key(n), v);
            if n == 40 {
                db.compact_range(None, None).unwrap();
            }
        }
    }
    for name in fs.children(Path::new("/db")).unwrap() {
        if name.starts_with("MANIFEST") || name == "CURRENT" {
            fs.remove_file(&Path::new("/db").join(name)).unwrap();
        }
    }
    let report = shale::repair("/db", &options(&fs, None)).unwrap();
    assert_eq!(report.dropped().count(), 0, "{report:#?}");
    for _ in 0..2 {
        let db = Db::open("/db", options(&fs, None)).unwrap();
        check(&db, &model, &ReadOptions::default());
        db.compact_range(None, None).unwrap();
        check(&db, &model, &ReadOptions::default());
    }
}

fn blob_numbers(fs: &MemFs) -> Vec<u64> {
    blob_files(fs)
        .iter()
        .map(|n| n.trim_end_matches(".blob").parse().unwrap())
        .collect()
}

/// Writes keys 0..300 once, then overwrites five in six of them four times
/// (so that compactions of any key range meet values of the first round
/// still live); returns the model and the last blob file of the first round.
fn old_and_new(db: &Db, fs: &MemFs) -> (BTreeMap<Vec<u8>, Vec<u8>>, u64) {
    let mut model = BTreeMap::new();
    for n in 0..300u32 {
        let v = value(n, 0, 300);
        db.put(&key(n), &v).unwrap();
        model.insert(key(n), v);
    }
    db.compact_range(None, None).unwrap();
    let first_round_last = *blob_numbers(fs).last().unwrap();
    for round in 1..5u32 {
        for n in (0..300u32).filter(|n| n % 6 != 0) {
            let v = value(n, round, 300);
            db.put(&key(n), &v).unwrap();
            model.insert(key(n), v);
        }
    }
    (model, first_round_last)
}

/// Garbage collection: compactions move the values still live in the
/// oldest blob files into new ones, so that the old files, which hold
/// mostly overwritten values, are deleted; every key (and a snapshot's
/// view) still reads back. Without it (cutoff 0) the first blob files stay
/// as long as a few of their values live.
#[test]
fn gc_deletes_old_blob_files_after_overwrites_and_compactions() {
    for cutoff in [0.25, 0.0] {
        let fs = MemFs::new();
        let opts = Options {
            blob_gc_age_cutoff: cutoff,
            ..options(&fs, Some(THRESHOLD))
        };
        let db = Db::open("/db", opts.clone()).unwrap();
        let (model, first_round_last) = old_and_new(&db, &fs);
        // A snapshot of the current state, kept through the compactions.
        let snap = db.snapshot();
        let snap_model = model.clone();
        let mut model = model;
        for n in (0..300u32).step_by(5) {
            db.put(&key(n), &value(n, 9, 300)).unwrap();
            model.insert(key(n), value(n, 9, 300));
        }
        // Compactions over the whole key range, with some new writes each
        // time (garbage collection rides on compactions).
        for i in 0..8u32 {
            for n in (i..300).step_by(7) {
                let v = value(n, 10 + i, 300);
                db.put(&key(n), &v).unwrap();
                model.insert(key(n), v);
            }
            db.compact_range(None, None).unwrap();
        }
        let at_snap = ReadOptions {
            snapshot: Some(&snap),
            ..Default::default()
        };
        check(&db, &model, &ReadOptions::default());
        check(&db, &snap_model, &at_snap);
        let old_left = blob_numbers(&fs)
            .into_iter()
            .filter(|&n| n <= first_round_last)
            .count();
        if cutoff > 0.0 {
            assert_eq!(old_left, 0, "old blob files left: {:?}", blob_numbers(&fs));
            let stats = db.property("shale.blob-stats").unwrap();
            let files = format!("files: {}\n", blob_numbers(&fs).len());
            assert!(stats.starts_with(&files), "{stats} vs {files}");
            assert!(!stats.ends_with("gc moved values: 0\n"), "{stats}");
        } else {
            assert!(old_left > 0, "without gc the first blob files stay");
        }
        drop(snap);
        drop(db);
        let db = Db::open("/db", opts).unwrap();
        check(&db, &model, &ReadOptions::default());
    }
}

/// A blob file made after the MANIFEST's last edit (its number at or past
/// the MANIFEST's next file number), pointed into by a log: recovery keeps
/// its number from being handed out again, so no later file replaces it.
#[test]
fn recovery_never_reuses_the_number_of_a_blob_file_a_log_points_into() {
    use shale::internals::{
        blob_file_header, blob_record_prefix, descriptor_file_name, set_current_file, LogWriter,
        VersionEdit,
    };
    let fs = MemFs::new();
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    let edit = VersionEdit {
        comparator: Some("leveldb.BytewiseComparator".into()),
        log_number: Some(0),
        next_file_number: Some(2),
        last_sequence: Some(0),
        ..Default::default()
    };
    let mut record = Vec::new();
    edit.encode(&mut record);
    let mut w = LogWriter::new(fs.new_writable_file(&descriptor_file_name(dir, 1)).unwrap());
    w.add_record(&record).unwrap();
    w.close().unwrap();
    set_current_file(&fs, dir, 1).unwrap();

    // Blob files 6 to 9 each hold the value of a key a batch in log 3
    // points to. (Recovery hands out the next numbers to its table, new log
    // and MANIFEST; the first blob file after it would take one of these.)
    let value = self::value(1, 0, 5000);
    let mut batch = Vec::new();
    batch.extend_from_slice(&1u64.to_le_bytes());
    batch.extend_from_slice(&4u32.to_le_bytes());
    for file in 6u8..10 {
        let k = [b'k', b'0' + file];
        let mut rec = Vec::new();
        blob_record_prefix(&k, &value, &mut rec);
        rec.extend_from_slice(&k);
        rec.extend_from_slice(&value);
        let mut blob = blob_file_header().to_vec();
        blob.extend_from_slice(&rec);
        write_file_sync(&fs, &dir.join(format!("00000{file}.blob")), &blob).unwrap();
        batch.push(0x11);
        batch.push(2);
        batch.extend_from_slice(&k);
        // The pointer: the file, offset 12, the record's length (a
        // two-byte varint).
        let pointer = [
            file,
            12,
            (rec.len() & 0x7f) as u8 | 0x80,
            (rec.len() >> 7) as u8,
        ];
        batch.push(pointer.len() as u8);
        batch.extend_from_slice(&pointer);
    }
    let mut log = LogWriter::new(fs.new_writable_file(&dir.join("000003.log")).unwrap());
    log.add_record(&batch).unwrap();
    log.close().unwrap();
    let keys: Vec<Vec<u8>> = (6u8..10).map(|f| vec![b'k', b'0' + f]).collect();

    let db = Db::open(dir, options(&fs, Some(THRESHOLD))).unwrap();
    for k in &keys {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(&value));
    }
    for n in 0..5u32 {
        db.put(&key(n), &self::value(n, 1, 3000)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    drop(db);
    let db = Db::open(dir, options(&fs, None)).unwrap();
    for k in &keys {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(&value), "{k:?}");
    }
}
