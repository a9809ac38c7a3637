//! Bulk loads written by several threads (`BulkLoader::with_threads`): the
//! entries are cut into chunks, each written into tables by a thread of its
//! own. Whatever the number of threads, the load installs the same entries
//! in tables that follow one another in key order; a table that fails to
//! be written fails the load and leaves no file behind; a loader dropped
//! while its threads write leaves nothing either.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use common::fault_fs::{Fault, FaultFs, Op, EIO};
use shale::env::FileSystem;
use shale::{BloomFilterPolicy, CompressionType, Db, IngestStats, Options};

const DIR: &str = "/db";

fn options(fs: &FaultFs, compression: CompressionType) -> Options {
    Options {
        create_if_missing: true,
        fs: Arc::new(fs.clone()),
        // The smallest table size Options accepts (as LevelDB's).
        max_file_size: 1 << 20,
        compression,
        filter_policy: Some(Arc::new(BloomFilterPolicy::new(10))),
        ..Default::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// 600 bytes, half of them repeated (snappy halves them): few entries
/// make many tables, which keeps the test quick under ThreadSanitizer.
fn value(i: u32) -> Vec<u8> {
    let mut v = format!("value-{i}-").into_bytes();
    v.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, 300));
    let mut x = u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    while v.len() < 600 {
        // xorshift: bytes snappy cannot shorten.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(600);
    v
}

fn table_files(fs: &FaultFs) -> BTreeSet<String> {
    fs.children(Path::new(DIR))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".ldb"))
        .collect()
}

/// Loads keys `0..n` with `threads` threads into a fresh database.
fn load(fs: &FaultFs, compression: CompressionType, n: u32, threads: usize) -> (Db, IngestStats) {
    let db = Db::open(DIR, options(fs, compression)).unwrap();
    let mut loader = db.bulk_loader().unwrap().with_threads(threads).unwrap();
    for i in 0..n {
        loader.add(&key(i), &value(i)).unwrap();
    }
    let done = loader.finish().unwrap();
    (db, done)
}

#[test]
fn any_number_of_threads_installs_the_same_entries_in_key_ordered_tables() {
    const N: u32 = 40_000;
    for compression in [CompressionType::Snappy, CompressionType::None] {
        let mut counts = Vec::new();
        for threads in [1, 2, 3, 4] {
            let what = format!("{compression:?}, {threads} threads");
            let fs = FaultFs::new();
            let (db, done) = load(&fs, compression, N, threads);
            assert_eq!(done.entries, u64::from(N), "{what}");
            assert!(done.tables.len() >= 5, "{what}: {done:?}");
            for t in &done.tables {
                assert_eq!(t.level, 6, "{what}: {t:?}");
                // Cut at max_file_size (1 MB): a table ends with the block
                // that crosses it, then its filter and index.
                assert!(t.bytes < (1 << 20) + (64 << 10), "{what}: {t:?}");
            }
            // The tables cover the keys in order, without overlapping: every
            // key is read back from the table its place says.
            let names: BTreeSet<String> = done
                .tables
                .iter()
                .map(|t| format!("{:06}.ldb", t.number))
                .collect();
            assert_eq!(table_files(&fs), names, "{what}");
            // `tables` lists them in key order: as the version lists level 6.
            let sstables = db.property("leveldb.sstables").unwrap();
            let listed: Vec<u64> = sstables
                .lines()
                .filter_map(|l| l.trim().split_once(':'))
                .filter_map(|(n, _)| n.parse().ok())
                .collect();
            let returned: Vec<u64> = done.tables.iter().map(|t| t.number).collect();
            assert_eq!(listed, returned, "{what}: {sstables}");
            let mut i = 0u32;
            for entry in db.iter() {
                let (k, v) = entry.unwrap();
                assert_eq!((&k[..], &v[..]), (&key(i)[..], &value(i)[..]), "{what}");
                i += 1;
            }
            assert_eq!(i, N, "{what}");
            let mut i = N;
            for entry in db.iter().rev() {
                i -= 1;
                assert_eq!(&entry.unwrap().0[..], &key(i)[..], "{what}");
            }
            for j in (0..N).step_by(97) {
                assert_eq!(db.get(&key(j)).unwrap(), Some(value(j)), "{what}");
            }
            assert_eq!(db.get(&key(N)).unwrap(), None);
            drop(db);
            // It reopens with the same contents.
            let db = Db::open(DIR, options(&fs, compression)).unwrap();
            assert_eq!(db.iter().count(), N as usize, "{what}");
            counts.push(done.tables.len());
        }
        // The chunks are sized to fill a table each: as many tables, give
        // or take the few the chunk boundaries cut.
        let (least, most) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(most - least <= least / 4 + 2, "{compression:?}: {counts:?}");
    }
}

#[test]
fn the_number_of_threads_may_change_between_entries() {
    let fs = FaultFs::new();
    let db = Db::open(DIR, options(&fs, CompressionType::Snappy)).unwrap();
    let mut loader = db.bulk_loader().unwrap().with_threads(1).unwrap();
    let mut n = 0;
    for threads in [3, 1, 2, 1] {
        for _ in 0..6_000 {
            loader.add(&key(n), &value(n)).unwrap();
            n += 1;
        }
        loader = loader.with_threads(threads).unwrap();
    }
    let done = loader.finish().unwrap();
    assert_eq!(done.entries, u64::from(n));
    let keys: Vec<Vec<u8>> = db.iter().map(|e| e.unwrap().0.to_vec()).collect();
    assert_eq!(keys, (0..n).map(key).collect::<Vec<_>>());
}

#[test]
fn a_table_that_fails_to_be_written_fails_the_load_and_leaves_no_file() {
    // Uncompressed, the first chunk (twice a table's bytes) makes two
    // tables: a failure at its second leaves its first to remove too. Which
    // sync is that second table's depends on the threads' timing: the first
    // four syncs cover it.
    let mut cases = vec![
        (Op::Append, 40, CompressionType::Snappy),
        (Op::Create, 5, CompressionType::Snappy),
    ];
    cases.extend((0..4).map(|k| (Op::Sync, k, CompressionType::None)));
    for (op, skip, compression) in cases {
        let fs = FaultFs::new();
        let db = Db::open(DIR, options(&fs, compression)).unwrap();
        db.put(b"before", b"1").unwrap();
        let before = table_files(&fs);
        fs.inject(Fault::new(EIO).on(op).on_path(".ldb").skip(skip));
        let mut loader = db.bulk_loader().unwrap().with_threads(3).unwrap();
        let mut failed = None;
        for i in 0..40_000 {
            if let Err(e) = loader.add(&key(i), &value(i)) {
                failed = Some(e);
                break;
            }
        }
        let failed = match failed {
            Some(e) => {
                // Every later call says so too.
                assert!(loader.add(b"zzz", b"v").is_err());
                assert!(loader.finish().is_err());
                e
            }
            None => loader.finish().unwrap_err(),
        };
        let what = format!("{op:?} after {skip}");
        assert!(failed.to_string().contains(".ldb"), "{what}: {failed}");
        assert_eq!(fs.injected().len(), 1, "{what}");
        assert_eq!(table_files(&fs), before, "{what}: tables left behind");
        // The database goes on: reads, writes and another load.
        assert_eq!(db.get(b"before").unwrap().as_deref(), Some(&b"1"[..]));
        assert_eq!(db.get(&key(0)).unwrap(), None);
        db.put(b"after", b"2").unwrap();
        let mut loader = db.bulk_loader().unwrap().with_threads(3).unwrap();
        for i in 0..10_000 {
            loader.add(&key(i), &value(i)).unwrap();
        }
        assert_eq!(loader.finish().unwrap().entries, 10_000, "{what}");
        assert_eq!(db.get(&key(9_999)).unwrap(), Some(value(9_999)));
    }
}

#[test]
fn a_loader_dropped_while_its_threads_write_leaves_nothing() {
    let fs = FaultFs::new();
    let db = Db::open(DIR, options(&fs, CompressionType::Snappy)).unwrap();
    let before = table_files(&fs);
    for n in [1, 700, 6_000, 40_000] {
        let mut loader = db.bulk_loader().unwrap().with_threads(4).unwrap();
        for i in 0..n {
            loader.add(&key(i), &value(i)).unwrap();
        }
        drop(loader);
        assert_eq!(table_files(&fs), before, "{n} entries");
    }
    assert_eq!(db.iter().count(), 0);
}

#[test]
fn writes_during_a_threaded_load_make_it_rewrite_its_tables_under_a_newer_sequence() {
    let fs = FaultFs::new();
    let db = Db::open(DIR, options(&fs, CompressionType::Snappy)).unwrap();
    db.put(&key(5), b"old").unwrap();
    let mut loader = db.bulk_loader().unwrap().with_threads(4).unwrap();
    for i in 0..20_000 {
        loader.add(&key(i), &value(i)).unwrap();
        if i == 10_000 {
            db.put(b"zz-during", b"written meanwhile").unwrap();
        }
    }
    let snap = db.snapshot();
    let done = loader.finish().unwrap();
    assert!(done.rewritten);
    assert!(done.tables.len() >= 3, "{done:?}");
    assert_eq!(done.sequence, db.stats().last_sequence);
    // Only the rewritten tables are left, and every entry reads back.
    let names: BTreeSet<String> = done
        .tables
        .iter()
        .map(|t| format!("{:06}.ldb", t.number))
        .collect();
    let files = table_files(&fs);
    assert!(names.is_subset(&files), "{names:?} {files:?}");
    assert_eq!(
        files.len(),
        names.len() + 1,
        "the memtable's flush and the load's: {files:?}"
    );
    for i in (0..20_000).step_by(41) {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)));
    }
    assert_eq!(
        db.get(b"zz-during").unwrap().as_deref(),
        Some(&b"written meanwhile"[..])
    );
    let before = shale::ReadOptions {
        snapshot: Some(&snap),
        ..Default::default()
    };
    assert_eq!(
        db.get_with(&before, &key(5)).unwrap().as_deref(),
        Some(&b"old"[..])
    );
    assert_eq!(db.get_with(&before, &key(6)).unwrap(), None);
}
