//! `Options::split_flushes`: writers that each append keys in order to their
//! own part of the key space get one table per stream from every flush, and
//! those tables go down the levels without being merged with one another.

use std::sync::Arc;
use std::time::{Duration, Instant};

use shale::env::MemFs;
use shale::{Db, Options, Stats};

const DIR: &str = "/db";
const STREAMS: u64 = 4;
const PER_STREAM: u64 = 5_000;

fn options(fs: &MemFs, split_flushes: bool) -> Options {
    Options {
        create_if_missing: true,
        fs: Arc::new(fs.clone()),
        write_buffer_size: 64 << 10,
        split_flushes,
        ..Default::default()
    }
}

fn key(stream: u64, i: u64) -> Vec<u8> {
    format!("{:010}", stream * 1_000_000_000 / STREAMS + i).into_bytes()
}

fn value(stream: u64, i: u64) -> Vec<u8> {
    format!("value {stream} {i} {}", "x".repeat(80)).into_bytes()
}

/// The streams' writes, interleaved as writers taking turns would make them.
fn write_streams(db: &Db) {
    for i in 0..PER_STREAM {
        for s in 0..STREAMS {
            db.put(&key(s, i), &value(s, i)).unwrap();
        }
    }
}

/// The stats once no memtable is being flushed and `done` holds (or 10 s).
fn settled(db: &Db, done: impl Fn(&Stats) -> bool) -> Stats {
    let start = Instant::now();
    loop {
        let stats = db.stats();
        if stats.immutable_memtable_bytes.is_none() && done(&stats) {
            return stats;
        }
        if start.elapsed() > Duration::from_secs(10) {
            return stats;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn compaction_bytes_read(stats: &Stats) -> u64 {
    stats.levels.iter().map(|l| l.compaction_bytes_read).sum()
}

fn check_contents(db: &Db) {
    for s in 0..STREAMS {
        for i in (0..PER_STREAM).step_by(7) {
            assert_eq!(db.get(&key(s, i)).unwrap(), Some(value(s, i)), "{s}/{i}");
        }
    }
    let mut n = 0u64;
    let mut expected = (0..STREAMS).flat_map(|s| (0..PER_STREAM).map(move |i| (s, i)));
    for item in db.iter() {
        let (k, v) = item.unwrap();
        let (s, i) = expected.next().unwrap();
        assert_eq!((&k[..], &v[..]), (&key(s, i)[..], &value(s, i)[..]));
        n += 1;
    }
    assert_eq!(n, STREAMS * PER_STREAM);
}

#[test]
fn interleaved_streams_are_never_merged() {
    let fs = MemFs::new();
    let db = Db::open(DIR, options(&fs, true)).unwrap();
    write_streams(&db);
    let stats = settled(&db, |_| true);
    assert_eq!(compaction_bytes_read(&stats), 0, "{stats:?}");
    assert_eq!(stats.levels[0].files, 0, "{stats:?}");
    // Each flush wrote one table per stream.
    let tables: usize = stats.levels.iter().map(|l| l.files).sum();
    assert!(tables >= 4 * STREAMS as usize, "{stats:?}");
    check_contents(&db);
    drop(db);
    let db = Db::open(DIR, options(&fs, true)).unwrap();
    check_contents(&db);
}

#[test]
fn without_the_option_the_same_streams_are_merged() {
    // The premise of the test above: one table per flush spans the gaps
    // between the streams, and compactions merge them.
    let fs = MemFs::new();
    let db = Db::open(DIR, options(&fs, false)).unwrap();
    write_streams(&db);
    let stats = settled(&db, |s| compaction_bytes_read(s) > 0);
    assert!(compaction_bytes_read(&stats) > 0, "{stats:?}");
    check_contents(&db);
}

#[test]
fn streams_over_existing_data_are_written_and_read_back() {
    // A second pass over the same keys overlaps every table: the flushes'
    // pieces go to level 0 as one table and are merged as usual.
    let fs = MemFs::new();
    let db = Db::open(DIR, options(&fs, true)).unwrap();
    write_streams(&db);
    for i in 0..PER_STREAM {
        for s in 0..STREAMS {
            if i % 3 == 0 {
                db.delete(&key(s, i)).unwrap();
            }
        }
    }
    let stats = settled(&db, |_| true);
    for s in 0..STREAMS {
        for i in (0..PER_STREAM).step_by(5) {
            let want = (i % 3 != 0).then(|| value(s, i));
            assert_eq!(db.get(&key(s, i)).unwrap(), want, "{s}/{i} {stats:?}");
        }
    }
    let n = db.iter().count() as u64;
    assert_eq!(n, STREAMS * (PER_STREAM - PER_STREAM.div_ceil(3)));
    drop(db);
    let db = Db::open(DIR, options(&fs, true)).unwrap();
    assert_eq!(db.iter().count() as u64, n);
}
