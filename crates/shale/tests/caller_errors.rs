//! Mistakes in what a caller passes are errors or sanitized values, never
//! panics, and a refused write leaves no trace. Files on disk that the
//! engine could not have written are corruption, never panics.

use std::path::Path;
use std::sync::Arc;

use shale::env::{FileSystem, MemFs};
use shale::{
    Cache, Comparator, Db, Error, Options, ReadOptions, WriteBatch, WriteOptions, MAX_KEY_LEN,
    MAX_VALUE_LEN,
};

const DIR: &str = "/db";

fn options(fs: &MemFs) -> Options {
    Options {
        create_if_missing: true,
        fs: Arc::new(fs.clone()),
        ..Default::default()
    }
}

fn is_invalid_argument<T: std::fmt::Debug>(r: shale::Result<T>) -> bool {
    matches!(r, Err(Error::InvalidArgument(_)))
}

fn key(i: usize) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn fill(db: &Db, n: usize) {
    for i in 0..n {
        db.put(&key(i), format!("value{i}").as_bytes()).unwrap();
    }
}

fn check(db: &Db, n: usize) {
    for i in 0..n {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(format!("value{i}").into_bytes()),
            "key {i}"
        );
    }
    let mut it = db.cursor(&ReadOptions::default());
    it.seek_to_first();
    let mut count = 0;
    while it.valid() {
        count += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(count, n);
}

fn log_bytes(fs: &MemFs) -> u64 {
    let names = fs.children(Path::new(DIR)).unwrap();
    let logs = names.iter().filter(|n| n.ends_with(".log"));
    logs.map(|n| fs.file_size(&Path::new(DIR).join(n)).unwrap())
        .sum()
}

/// Zero-filled buffers of several GiB: the system maps their pages only when
/// touched, and a refused write never touches them.
#[test]
#[cfg(target_pointer_width = "64")]
#[cfg_attr(miri, ignore)]
fn keys_and_values_too_long_for_the_format_are_refused_before_logging() {
    let fs = MemFs::new();
    let db = Db::open(DIR, options(&fs)).unwrap();
    db.put(b"before", b"1").unwrap();
    let logged = log_bytes(&fs);
    let sequence = db.snapshot().sequence();

    let long_key = vec![0u8; MAX_KEY_LEN + 1];
    assert!(is_invalid_argument(db.put(&long_key, b"v")));
    assert!(is_invalid_argument(db.delete(&long_key)));
    let long_value = vec![0u8; MAX_VALUE_LEN + 1];
    assert!(is_invalid_argument(db.put(b"k", &long_value)));

    let mut batch = WriteBatch::new();
    batch.put(b"fine", b"1").unwrap();
    let before = batch.clone();
    assert!(is_invalid_argument(batch.put(&long_key, b"v")));
    assert!(is_invalid_argument(batch.put(b"k", &long_value)));
    assert!(is_invalid_argument(batch.delete(&long_key)));
    assert_eq!(batch, before, "a refused update leaves the batch unchanged");
    drop((long_key, long_value));

    assert_eq!(log_bytes(&fs), logged, "nothing reached the log");
    assert_eq!(
        db.snapshot().sequence(),
        sequence,
        "no sequence number used"
    );
    db.write(&WriteOptions::default(), &batch).unwrap();
    assert_eq!(db.get(b"fine").unwrap().as_deref(), Some(&b"1"[..]));
    drop(db);
    let db = Db::open(DIR, options(&fs)).unwrap();
    assert_eq!(db.get(b"before").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"fine").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn zero_sizes_in_options_are_raised_to_leveldbs_minimums() {
    let fs = MemFs::new();
    let opts = Options {
        write_buffer_size: 0,
        max_open_files: 0,
        block_size: 0,
        block_restart_interval: 0,
        max_file_size: 0,
        block_cache: Some(Cache::new(0)),
        ..options(&fs)
    };
    let db = Db::open(DIR, opts.clone()).unwrap();
    fill(&db, 3000);
    db.compact_range(None, None).unwrap();
    check(&db, 3000);
    drop(db);
    let db = Db::open(DIR, opts.clone()).unwrap();
    check(&db, 3000);
    drop(db);
    shale::repair(DIR, &opts).unwrap();
    check(&Db::open(DIR, opts).unwrap(), 3000);
}

#[test]
fn huge_sizes_in_options_are_lowered_to_leveldbs_maximums() {
    let fs = MemFs::new();
    let opts = Options {
        write_buffer_size: usize::MAX,
        max_open_files: usize::MAX,
        block_size: usize::MAX,
        block_restart_interval: usize::MAX,
        max_file_size: usize::MAX,
        block_cache: Some(Cache::new(usize::MAX)),
        filter_policy: Some(Arc::new(shale::BloomFilterPolicy::new(usize::MAX))),
        ..options(&fs)
    };
    let db = Db::open(DIR, opts.clone()).unwrap();
    fill(&db, 3000);
    db.compact_range(None, None).unwrap();
    check(&db, 3000);
    drop(db);
    check(&Db::open(DIR, opts).unwrap(), 3000);
}

#[test]
fn a_snapshot_of_another_database_is_refused() {
    let fs = MemFs::new();
    let a = Db::open("/a", options(&fs)).unwrap();
    let b = Db::open("/b", options(&fs)).unwrap();
    a.put(b"k", b"in a").unwrap();
    b.put(b"k", b"in b").unwrap();
    let snap = a.snapshot();
    let foreign = ReadOptions {
        snapshot: Some(&snap),
        ..Default::default()
    };
    assert!(is_invalid_argument(b.get_with(&foreign, b"k")));
    let mut it = b.cursor(&foreign);
    it.seek_to_first();
    assert!(!it.valid());
    assert!(is_invalid_argument(it.status()));
    // Its own database takes it.
    assert_eq!(
        a.get_with(&foreign, b"k").unwrap().as_deref(),
        Some(&b"in a"[..])
    );

    // So is one taken before the database was closed and opened again.
    drop(a);
    let a = Db::open("/a", options(&fs)).unwrap();
    assert!(is_invalid_argument(a.get_with(&foreign, b"k")));
}

#[test]
fn compact_range_with_begin_after_end_does_nothing() {
    let fs = MemFs::new();
    let db = Db::open(DIR, options(&fs)).unwrap();
    fill(&db, 1000);
    let before = db.property("leveldb.sstables").unwrap();
    db.compact_range(Some(b"key00900"), Some(b"key00100"))
        .unwrap();
    assert_eq!(db.property("leveldb.sstables").unwrap(), before);
    assert_eq!(
        db.property("leveldb.num-files-at-level0").as_deref(),
        Some("0")
    );
    check(&db, 1000);
    // The same range the right way round compacts (here: flushes) it.
    db.compact_range(Some(b"key00100"), Some(b"key00900"))
        .unwrap();
    assert_ne!(db.property("leveldb.sstables").unwrap(), before);
    check(&db, 1000);
}

#[test]
fn approximate_sizes_of_empty_and_reversed_ranges_are_zero() {
    let fs = MemFs::new();
    let uncompressed = Options {
        compression: shale::CompressionType::None,
        ..options(&fs)
    };
    let db = Db::open(DIR, uncompressed).unwrap();
    for i in 0..2000 {
        db.put(&key(i), &[b'x'; 1000]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let sizes = db.approximate_sizes(&[
        (b"key00000", b"key02000"),
        (b"key01000", b"key01000"),
        (b"key02000", b"key00000"),
        (b"", b""),
    ]);
    assert!(sizes[0] > 1_000_000, "{sizes:?}");
    assert_eq!(&sizes[1..], [0, 0, 0]);
}

#[test]
fn unknown_properties_are_none() {
    let fs = MemFs::new();
    let db = Db::open(DIR, options(&fs)).unwrap();
    for name in [
        "",
        "leveldb.",
        "leveldb.num-files-at-level",
        "leveldb.num-files-at-level7",
        "leveldb.num-files-at-level-1",
        "leveldb.num-files-at-level99999999999999999999999",
        "rocksdb.stats",
    ] {
        assert_eq!(db.property(name), None, "{name:?}");
    }
    assert_eq!(
        db.property("leveldb.num-files-at-level6").as_deref(),
        Some("0")
    );
}

/// Orders keys backwards; named differently from the default comparator.
struct Reverse;

impl Comparator for Reverse {
    fn name(&self) -> &str {
        "test.Reverse"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        b.cmp(a)
    }
    fn find_shortest_separator(&self, _start: &mut Vec<u8>, _limit: &[u8]) {}
    fn find_short_successor(&self, _key: &mut Vec<u8>) {}
}

#[test]
fn opening_with_a_comparator_of_another_name_is_refused_naming_both() {
    let fs = MemFs::new();
    drop(Db::open(DIR, options(&fs)).unwrap());
    let opts = Options {
        comparator: Arc::new(Reverse),
        ..options(&fs)
    };
    match Db::open(DIR, opts) {
        Err(Error::InvalidArgument(msg)) => {
            assert!(msg.contains("test.Reverse"), "{msg}");
            assert!(msg.contains("leveldb.BytewiseComparator"), "{msg}");
        }
        other => panic!("expected InvalidArgument, got {:?}", other.map(|_| ())),
    }
    // The database is untouched and opens with its own comparator.
    Db::open(DIR, options(&fs)).unwrap();
}

/// A log holding one record: the batch `sequence`, `count`, then `records`.
fn write_log(fs: &MemFs, number: u64, sequence: u64, count: u32, records: &[u8]) {
    let mut batch = Vec::new();
    batch.extend_from_slice(&sequence.to_le_bytes());
    batch.extend_from_slice(&count.to_le_bytes());
    batch.extend_from_slice(records);
    let path = Path::new(DIR).join(format!("{number:06}.log"));
    let mut w = shale::internals::LogWriter::new(fs.new_writable_file(&path).unwrap());
    w.add_record(&batch).unwrap();
    w.close().unwrap();
}

/// A put of "k" -> "v", as batch records.
const PUT_K_V: &[u8] = &[1, 1, b'k', 1, b'v'];

#[test]
fn a_logged_empty_batch_at_sequence_zero_is_harmless() {
    let fs = MemFs::new();
    drop(Db::open(DIR, options(&fs)).unwrap());
    write_log(&fs, 100, 0, 0, &[]);
    let db = Db::open(DIR, options(&fs)).unwrap();
    db.put(b"a", b"1").unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn logged_sequence_numbers_out_of_range_are_corruption() {
    for sequence in [u64::MAX, 1 << 56] {
        let fs = MemFs::new();
        drop(Db::open(DIR, options(&fs)).unwrap());
        write_log(&fs, 100, sequence, 1, PUT_K_V);
        let paranoid = Options {
            paranoid_checks: true,
            ..options(&fs)
        };
        match Db::open(DIR, paranoid) {
            Err(e) => assert!(e.is_corruption(), "{sequence}: {e}"),
            Ok(_) => panic!("{sequence}: paranoid open succeeded"),
        }
        // Without paranoid checks the record is skipped.
        let db = Db::open(DIR, options(&fs)).unwrap();
        assert_eq!(db.get(b"k").unwrap(), None, "{sequence}");
        db.put(b"k", b"new").unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
    }
}

#[test]
fn a_file_numbered_at_the_top_of_the_range_is_corruption() {
    let fs = MemFs::new();
    drop(Db::open(DIR, options(&fs)).unwrap());
    write_log(&fs, u64::MAX, 1000, 1, PUT_K_V);
    match Db::open(DIR, options(&fs)) {
        Err(e) => assert!(e.is_corruption(), "{e}"),
        Ok(_) => panic!("open succeeded"),
    }
    // Repair does not panic on it either.
    let _ = shale::repair(DIR, &options(&fs));
}

/// A database whose MANIFEST says the last sequence numbers are used takes
/// the writes that still fit and refuses the rest, without harm to what it
/// holds: sequence numbers never wrap.
#[test]
fn writes_past_the_last_sequence_number_are_refused() {
    use shale::internals::{
        descriptor_file_name, set_current_file, LogWriter, VersionEdit, MAX_SEQUENCE_NUMBER,
    };

    let fs = MemFs::new();
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    let edit = VersionEdit {
        comparator: Some("leveldb.BytewiseComparator".into()),
        log_number: Some(0),
        next_file_number: Some(2),
        last_sequence: Some(MAX_SEQUENCE_NUMBER - 2),
        ..Default::default()
    };
    let mut record = Vec::new();
    edit.encode(&mut record);
    let mut w = LogWriter::new(fs.new_writable_file(&descriptor_file_name(dir, 1)).unwrap());
    w.add_record(&record).unwrap();
    w.close().unwrap();
    set_current_file(&fs, dir, 1).unwrap();

    let db = Db::open(dir, options(&fs)).unwrap();
    db.put(b"a", b"1").unwrap();
    db.put(b"b", b"2").unwrap();
    let e = db.put(b"c", b"3").unwrap_err();
    assert!(e.to_string().contains("sequence numbers exhausted"), "{e}");
    let mut batch = WriteBatch::new();
    batch.put(b"d", b"4").unwrap();
    assert!(db.write(&WriteOptions::default(), &batch).is_err());
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(db.get(b"c").unwrap(), None);
    drop(db);
    let db = Db::open(dir, options(&fs)).unwrap();
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(db.get(b"c").unwrap(), None);
}
