//! Read-triggered compaction: iterators sample the keys they read (about one
//! per megabyte), and a key that several table files may hold charges a seek
//! to the first of them. When a file's seek budget runs out, the background
//! thread compacts it, so ranges that are read often end up in fewer files.

use std::sync::Arc;
use std::time::{Duration, Instant};

use shale::env::MemFs;
use shale::{CompressionType, Db, Options, ReadOptions};

/// Values big enough that each pass of an iterator reads megabytes.
const VALUE_LEN: usize = 100 << 10;
const KEYS: usize = 10;

fn options(fs: &MemFs) -> Options {
    Options {
        create_if_missing: true,
        fs: Arc::new(fs.clone()),
        compression: CompressionType::None,
        write_buffer_size: 8 << 20,
        block_cache: Some(shale::Cache::new(32 << 20)),
        ..Default::default()
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("key{i:02}").into_bytes()
}

fn files_at(db: &Db, level: usize) -> usize {
    db.property(&format!("leveldb.num-files-at-level{level}"))
        .and_then(|s| s.parse().ok())
        .expect("the property exists for every level")
}

fn total_files(db: &Db) -> usize {
    (0..7).map(|level| files_at(db, level)).sum()
}

/// Writes `keys` with values filled with `fill`, then reopens the database
/// so that the log is turned into a level-0 table.
fn write_then_reopen(fs: &MemFs, db: Db, keys: impl Iterator<Item = usize>, fill: u8) -> Db {
    for i in keys {
        db.put(&key(i), &vec![fill; VALUE_LEN]).unwrap();
    }
    drop(db);
    Db::open("/db", options(fs)).unwrap()
}

/// Reads every entry once, front to back; returns the entries seen.
fn scan(db: &Db) -> Vec<(Vec<u8>, u8)> {
    let mut it = db.cursor(&ReadOptions::default());
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        assert_eq!(it.value().len(), VALUE_LEN);
        seen.push((it.key().to_vec(), it.value()[0]));
        it.next();
    }
    it.status().unwrap();
    seen
}

/// Scans until `done(db)` holds, giving the background thread time to act
/// between scans; panics after `max_scans` scans.
fn scan_until(db: &Db, max_scans: usize, what: &str, done: impl Fn(&Db) -> bool) -> usize {
    for scans in 0..max_scans {
        if done(db) {
            return scans;
        }
        scan(db);
        std::thread::yield_now();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if done(db) {
            return max_scans;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!(
        "{what}: not reached after {max_scans} scans; files per level: {}",
        db.property("leveldb.sstables").unwrap_or_default()
    );
}

/// A database whose keys are all in two files: the newest versions in a
/// level-0 file, older ones in a level-2 file.
fn two_overlapping_files(fs: &MemFs) -> Db {
    let db = Db::open("/db", options(fs)).unwrap();
    for i in 0..KEYS {
        db.put(&key(i), &vec![b'a'; VALUE_LEN]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let db = write_then_reopen(fs, db, 0..KEYS, b'b');
    assert_eq!(files_at(&db, 0), 1, "{:?}", db.property("leveldb.sstables"));
    assert_eq!(total_files(&db), 2, "{:?}", db.property("leveldb.sstables"));
    assert!(files_at(&db, 0) + files_at(&db, 1) < total_files(&db));
    db
}

#[test]
fn iterating_over_overlapping_files_compacts_them() {
    let fs = MemFs::new();
    let db = two_overlapping_files(&fs);
    let expected: Vec<(Vec<u8>, u8)> = (0..KEYS).map(|i| (key(i), b'b')).collect();

    // Each scan reads about 2 MB (both versions of every key), so about two
    // samples; the level-0 file's budget is 100 seeks. Its seek compaction
    // moves it down to level 1, where it still overlaps the level-2 file...
    let n = scan_until(&db, 400, "level 0 emptied by a seek compaction", |db| {
        files_at(db, 0) == 0
    });
    // ...and further reads charge it there, until the two are merged.
    let m = scan_until(&db, 400, "the overlapping files merged", |db| {
        total_files(db) == 1
    });
    // Not before the budgets were spent: a scan takes about two samples.
    assert!(n >= 25 && m >= 25, "compacted after {n} and {m} scans");
    assert_eq!(scan(&db), expected);
    for i in 0..KEYS {
        assert_eq!(db.get(&key(i)).unwrap(), Some(vec![b'b'; VALUE_LEN]));
    }
}

#[test]
fn iterating_over_keys_held_by_one_file_compacts_nothing() {
    let fs = MemFs::new();
    // Old keys 0..10 at level 2; new keys 10..20 in a level-0 file that
    // overlaps nothing: every key read is in exactly one file.
    let db = Db::open("/db", options(&fs)).unwrap();
    for i in 0..KEYS {
        db.put(&key(i), &vec![b'a'; VALUE_LEN]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let db = write_then_reopen(&fs, db, KEYS..2 * KEYS, b'b');
    let before = db.property("leveldb.sstables").unwrap();
    assert_eq!(files_at(&db, 0), 1, "{before}");

    // As many bytes as it took to merge the overlapping files above, twice over.
    for _ in 0..800 {
        assert_eq!(scan(&db).len(), 2 * KEYS);
    }
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(db.property("leveldb.sstables").unwrap(), before);
}

#[test]
fn an_iterator_may_outlive_its_database() {
    let fs = MemFs::new();
    let db = two_overlapping_files(&fs);
    let mut it = db.cursor(&ReadOptions::default());
    drop(db);
    // The database is closed: reads still see the pinned files, and samples
    // that would make a compaction due are dropped quietly.
    let mut reads = 0;
    for _ in 0..200 {
        it.seek_to_first();
        while it.valid() {
            reads += 1;
            it.next();
        }
        it.status().unwrap();
    }
    assert_eq!(reads, 200 * KEYS);
    drop(it);
    // And the database reopens: the iterator did not keep it locked.
    let db = Db::open("/db", options(&fs)).unwrap();
    assert_eq!(scan(&db).len(), KEYS);
}
