//! Many threads writing and reading one database at once lose nothing and
//! see consistent snapshots. Each test runs with the leader of a write group
//! inserting the whole group (the default) and with
//! `concurrent_memtable_writes`, where the members insert their own batches
//! and groups insert while later ones are logged.

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shale::{Cache, Db, Options, ReadOptions, WriteBatch, WriteOptions};

#[test]
fn concurrent_writers_and_readers() {
    writers_and_readers(false);
}

#[test]
fn concurrent_writers_and_readers_with_concurrent_memtable_writes() {
    writers_and_readers(true);
}

fn writers_and_readers(concurrent_memtable_writes: bool) {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        write_buffer_size: 256 << 10,
        concurrent_memtable_writes,
        ..Default::default()
    };
    let db = Arc::new(Db::open(dir.path(), opts.clone()).unwrap());
    const WRITERS: usize = 4;
    const PER_WRITER: usize = 5000;
    let stop = Arc::new(AtomicBool::new(false));

    // Each batch writes the same counter under two keys; a snapshot must
    // always see the pair equal.
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let db = db.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut checks = 0;
                while !stop.load(Ordering::Acquire) {
                    let snap = db.snapshot();
                    let at = ReadOptions {
                        snapshot: Some(&snap),
                        ..Default::default()
                    };
                    for w in 0..WRITERS {
                        let a = db.get_with(&at, format!("pair{w}-a").as_bytes()).unwrap();
                        let b = db.get_with(&at, format!("pair{w}-b").as_bytes()).unwrap();
                        assert_eq!(a, b, "a snapshot saw half a batch");
                    }
                    let mut it = db.cursor(&at);
                    it.seek_to_first();
                    let mut prev: Option<Vec<u8>> = None;
                    while it.valid() {
                        if let Some(p) = &prev {
                            assert!(p.as_slice() < it.key(), "iterator out of order");
                        }
                        prev = Some(it.key().to_vec());
                        it.next();
                    }
                    it.status().unwrap();
                    checks += 1;
                }
                checks
            })
        })
        .collect();

    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..PER_WRITER {
                    db.put(format!("w{w}-{i:06}").as_bytes(), format!("{i}").as_bytes())
                        .unwrap();
                    if i % 50 == 0 {
                        let mut b = WriteBatch::new();
                        b.put(format!("pair{w}-a").as_bytes(), format!("{i}").as_bytes())
                            .unwrap();
                        b.put(format!("pair{w}-b").as_bytes(), format!("{i}").as_bytes())
                            .unwrap();
                        db.write(
                            &WriteOptions {
                                sync: i % 500 == 0,
                                ..Default::default()
                            },
                            &b,
                        )
                        .unwrap();
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Release);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    for w in 0..WRITERS {
        for i in 0..PER_WRITER {
            assert_eq!(
                db.get(format!("w{w}-{i:06}").as_bytes()).unwrap(),
                Some(format!("{i}").into_bytes())
            );
        }
    }
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    for w in 0..WRITERS {
        assert_eq!(
            db.get(format!("w{w}-{:06}", PER_WRITER - 1).as_bytes())
                .unwrap(),
            Some(format!("{}", PER_WRITER - 1).into_bytes())
        );
    }
}

/// One view of the database: per writer, the indexes of its keys in scan
/// order and its counter.
type View = Vec<(Vec<usize>, Option<usize>)>;

/// The entries of `pairs` (a scan) grouped by writer: for each writer, the
/// indexes of its `w<writer>-<index>` keys in scan order, and its counter.
fn per_writer(pairs: &[(Vec<u8>, Vec<u8>)], writers: usize) -> View {
    let mut out = vec![(Vec::new(), None); writers];
    for (k, v) in pairs {
        let k = String::from_utf8(k.clone()).unwrap();
        let v: usize = String::from_utf8(v.clone()).unwrap().parse().unwrap();
        if let Some(rest) = k.strip_prefix('w') {
            let (w, i) = rest.split_once('-').unwrap();
            let (w, i): (usize, usize) = (w.parse().unwrap(), i.parse().unwrap());
            assert_eq!(i, v, "key {k} holds another index's value");
            out[w].0.push(i);
        } else if let Some(w) = k.strip_prefix('c') {
            out[w.parse::<usize>().unwrap()].1 = Some(v);
        }
    }
    out
}

/// Checks that each writer's keys in one consistent view are exactly
/// indexes 0..=counter (each batch writes index i and sets the counter to
/// i, so a view holds a prefix of every writer's batches).
fn check_prefixes(view: &[(Vec<usize>, Option<usize>)], what: &str) {
    for (w, (indexes, counter)) in view.iter().enumerate() {
        let expected: Vec<usize> = match counter {
            Some(c) => (0..=*c).collect(),
            None => Vec::new(),
        };
        assert!(
            *indexes == expected,
            "{what}: writer {w} shows {} keys (first gap or excess near {:?}) with counter {counter:?}",
            indexes.len(),
            indexes.iter().zip(&expected).position(|(a, b)| a != b)
        );
    }
}

/// Writers, readers, iterators and snapshots at once while tiny buffers keep
/// flushes and compactions running: no write is lost, each writer reads its
/// own write as soon as it returns, every view (a snapshot or an
/// iterator's implicit one) holds a prefix of each writer's batches, and a
/// snapshot's view is the same when read again after more writes and
/// compactions.
#[test]
fn views_stay_consistent_while_compactions_run() {
    views_while_compactions_run(false, None);
}

#[test]
fn views_stay_consistent_while_compactions_run_with_concurrent_memtable_writes() {
    views_while_compactions_run(true, None);
}

/// The same through a block cache of 16 blocks, shared by two databases:
/// readers and compactions insert and evict blocks all the time, and a
/// block evicted while an iterator reads it stays whole.
#[test]
fn views_stay_consistent_through_a_tiny_shared_block_cache() {
    let cache = Cache::new(16 << 10);
    let other_dir = support::scratch_dir();
    let other = Db::open(
        other_dir.path(),
        Options {
            create_if_missing: true,
            block_cache: Some(cache.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    let churn = std::thread::spawn(move || {
        for i in 0..2000u32 {
            other.put(&i.to_be_bytes(), &[b'v'; 700]).unwrap();
            if i % 500 == 499 {
                other.compact_range(None, None).unwrap();
            }
            assert!(other.get(&(i / 2).to_be_bytes()).unwrap().is_some());
        }
    });
    views_while_compactions_run(false, Some(cache.clone()));
    churn.join().unwrap();
    let usage = cache.usage();
    assert!(
        usage > 0,
        "no block was cached; the test did not exercise the cache"
    );
    assert!(
        usage <= 16 << 10,
        "the cache holds {usage} bytes, over its capacity"
    );
}

fn views_while_compactions_run(concurrent_memtable_writes: bool, block_cache: Option<Arc<Cache>>) {
    const WRITERS: usize = 3;
    const PER_WRITER: usize = 3000;
    let dir = support::scratch_dir();
    let opts = Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        block_size: 1024,
        concurrent_memtable_writes,
        block_cache,
        ..Default::default()
    };
    let db = Arc::new(Db::open(dir.path(), opts.clone()).unwrap());
    let done = Arc::new(AtomicBool::new(false));

    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..PER_WRITER {
                    let k = format!("w{w}-{i:06}");
                    let mut b = WriteBatch::new();
                    b.put(k.as_bytes(), i.to_string().as_bytes()).unwrap();
                    b.put(format!("c{w}").as_bytes(), i.to_string().as_bytes())
                        .unwrap();
                    db.write(&WriteOptions::default(), &b).unwrap();
                    assert_eq!(
                        db.get(k.as_bytes()).unwrap(),
                        Some(i.to_string().into_bytes()),
                        "writer {w} does not see its own write {i}"
                    );
                }
            })
        })
        .collect();

    let readers: Vec<_> = (0..2)
        .map(|r| {
            let db = db.clone();
            let done = done.clone();
            std::thread::spawn(move || {
                let mut rounds = 0;
                // Snapshots taken earlier, with their first view, read again later.
                let mut held: Vec<(shale::Snapshot, View)> = Vec::new();
                while !done.load(Ordering::Acquire) || rounds < 2 {
                    let snap = db.snapshot();
                    let at = ReadOptions {
                        snapshot: Some(&snap),
                        ..Default::default()
                    };
                    let view = per_writer(&support::contents(&db, &at).unwrap(), WRITERS);
                    check_prefixes(&view, &format!("reader {r} snapshot scan"));
                    // The same snapshot read backwards, and by gets.
                    let mut back = support::contents_reverse(&db, &at).unwrap();
                    back.reverse();
                    assert!(
                        per_writer(&back, WRITERS) == view,
                        "reader {r}: backward scan differs"
                    );
                    for (w, (_, counter)) in view.iter().enumerate() {
                        let got = db.get_with(&at, format!("c{w}").as_bytes()).unwrap();
                        assert_eq!(got, counter.map(|c| c.to_string().into_bytes()));
                    }
                    // An iterator without a snapshot has its own consistent view.
                    let now = per_writer(
                        &support::contents(&db, &ReadOptions::default()).unwrap(),
                        WRITERS,
                    );
                    check_prefixes(&now, &format!("reader {r} scan"));
                    for w in 0..WRITERS {
                        assert!(
                            now[w].1 >= view[w].1,
                            "reader {r}: writer {w}'s counter went back"
                        );
                    }
                    // Earlier snapshots still show what they showed.
                    for (s, first) in &held {
                        let at = ReadOptions {
                            snapshot: Some(s),
                            ..Default::default()
                        };
                        let again = per_writer(&support::contents(&db, &at).unwrap(), WRITERS);
                        assert!(again == *first, "reader {r}: a snapshot's view changed");
                    }
                    if held.len() < 4 {
                        held.push((snap, view));
                    } else {
                        held[rounds % 4] = (snap, view);
                    }
                    rounds += 1;
                }
                rounds
            })
        })
        .collect();

    for w in writers {
        w.join().unwrap();
    }
    done.store(true, Ordering::Release);
    for r in readers {
        assert!(r.join().unwrap() >= 2);
    }
    let all = per_writer(
        &support::contents(&db, &ReadOptions::default()).unwrap(),
        WRITERS,
    );
    for (w, (indexes, counter)) in all.iter().enumerate() {
        assert_eq!(indexes.len(), PER_WRITER, "writer {w} lost writes");
        assert_eq!(*counter, Some(PER_WRITER - 1));
    }
    // Compactions ran: something left level 0.
    let deeper: usize = (1..7)
        .map(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert!(
        deeper > 0,
        "no compaction ran; the test did not exercise them"
    );
}

/// Writers of the batch test.
const BATCH_WRITERS: usize = 8;
/// Batches per writer.
const BATCHES: usize = 600;
/// Keys of its own each batch writes (every batch of a writer writes all of them).
const OWN_KEYS: usize = 4;
/// Keys all writers share; each batch writes two of them.
const SHARED_KEYS: usize = 16;

/// The marker of batch `i` of writer `w`: the value of every key it writes.
fn marker(w: usize, i: usize) -> Vec<u8> {
    format!("{w}:{i:06}").into_bytes()
}

fn parse_marker(v: &[u8]) -> (usize, usize) {
    let s = std::str::from_utf8(v).unwrap();
    let (w, i) = s.split_once(':').unwrap();
    (w.parse().unwrap(), i.parse().unwrap())
}

fn own_key(w: usize, k: usize) -> Vec<u8> {
    format!("own{w}-{k}").into_bytes()
}

fn shared_key(x: usize) -> Vec<u8> {
    format!("shared{x:02}").into_bytes()
}

/// The shared keys batch `i` of writer `w` writes (the same in the writer
/// and in the final check).
fn shared_of(w: usize, i: usize) -> [usize; 2] {
    let mut rng = StdRng::seed_from_u64((w * 1_000_003 + i) as u64);
    [rng.gen_range(0..SHARED_KEYS), rng.gen_range(0..SHARED_KEYS)]
}

/// In one snapshot: the batch of each writer its own keys show (all the
/// same marker, or none yet), checked against a scan of the same snapshot,
/// in which a shared key holding batch `i` of writer `w` implies that `w`'s
/// own keys show batch `i` or later.
fn check_snapshot(db: &Db, reader: usize) -> Vec<Option<usize>> {
    let snap = db.snapshot();
    let at = ReadOptions {
        snapshot: Some(&snap),
        ..Default::default()
    };
    let mut shown = Vec::with_capacity(BATCH_WRITERS);
    for w in 0..BATCH_WRITERS {
        let values: Vec<Option<Vec<u8>>> = (0..OWN_KEYS)
            .map(|k| db.get_with(&at, &own_key(w, k)).unwrap())
            .collect();
        assert!(
            values.iter().all(|v| *v == values[0]),
            "reader {reader}: writer {w}'s batch is visible in part: {values:?}"
        );
        shown.push(values[0].as_deref().map(|v| {
            let (mw, i) = parse_marker(v);
            assert_eq!(
                mw, w,
                "reader {reader}: writer {w}'s key holds {mw}'s marker"
            );
            i
        }));
    }
    let scan = support::contents(db, &at).unwrap();
    let mut scanned: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (k, v) in &scan {
        let (w, i) = parse_marker(v);
        if k.starts_with(b"own") {
            scanned.entry(w).or_default().push(i);
        } else {
            assert!(
                shown[w].is_some_and(|own| own >= i),
                "reader {reader}: {} holds batch {i} of writer {w}, whose own keys show {:?}",
                String::from_utf8_lossy(k),
                shown[w]
            );
        }
    }
    for (w, s) in shown.iter().enumerate() {
        let expected = s.map_or(Vec::new(), |i| vec![i; OWN_KEYS]);
        assert_eq!(
            scanned.remove(&w).unwrap_or_default(),
            expected,
            "reader {reader}: a scan and gets of one snapshot differ for writer {w}"
        );
    }
    shown
}

/// Many writers of multi-key batches, each marked with its writer and
/// index, with readers checking every snapshot: no batch is ever visible in
/// part, a writer's batches become visible in its order (what a reader sees
/// of a writer never goes back), a writer reads its write as soon as it
/// returns, and the last write to a key wins (each shared key ends with the
/// last batch of some writer that wrote it). Memtables switch and flush
/// meanwhile (a 64 KB write buffer), and some writes are synchronous.
fn batches_stay_whole_and_in_order(concurrent_memtable_writes: bool) {
    let dir = support::scratch_dir();
    let opts = Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        concurrent_memtable_writes,
        ..Default::default()
    };
    let db = Arc::new(Db::open(dir.path(), opts).unwrap());
    let done = Arc::new(AtomicBool::new(false));

    let readers: Vec<_> = (0..2)
        .map(|r| {
            let db = db.clone();
            let done = done.clone();
            std::thread::spawn(move || {
                let mut last = vec![None; BATCH_WRITERS];
                let mut rounds = 0;
                while !done.load(Ordering::Acquire) || rounds < 2 {
                    let shown = check_snapshot(&db, r);
                    for (w, (now, before)) in shown.iter().zip(&last).enumerate() {
                        assert!(
                            now >= before,
                            "reader {r}: writer {w} went back from batch {before:?} to {now:?}"
                        );
                    }
                    last = shown;
                    rounds += 1;
                }
                rounds
            })
        })
        .collect();

    let writers: Vec<_> = (0..BATCH_WRITERS)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..BATCHES {
                    let m = marker(w, i);
                    let mut b = WriteBatch::new();
                    for k in 0..OWN_KEYS {
                        b.put(&own_key(w, k), &m).unwrap();
                    }
                    for x in shared_of(w, i) {
                        b.put(&shared_key(x), &m).unwrap();
                    }
                    let sync = i % 97 == 0;
                    db.write(
                        &WriteOptions {
                            sync,
                            ..Default::default()
                        },
                        &b,
                    )
                    .unwrap();
                    assert_eq!(
                        db.get(&own_key(w, OWN_KEYS - 1)).unwrap(),
                        Some(m),
                        "writer {w} does not read its write {i}"
                    );
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    done.store(true, Ordering::Release);
    for r in readers {
        assert!(r.join().unwrap() >= 2);
    }

    let shown = check_snapshot(&db, usize::MAX);
    assert!(
        shown.iter().all(|s| *s == Some(BATCHES - 1)),
        "writers' last batches missing: {shown:?}"
    );
    // For each shared key, the last batch of each writer that wrote it.
    let mut last_writes: BTreeMap<usize, BTreeMap<usize, usize>> = BTreeMap::new();
    for w in 0..BATCH_WRITERS {
        for i in 0..BATCHES {
            for x in shared_of(w, i) {
                last_writes.entry(x).or_default().insert(w, i);
            }
        }
    }
    for (x, lasts) in last_writes {
        let got = db
            .get(&shared_key(x))
            .unwrap()
            .expect("a shared key written");
        let (w, i) = parse_marker(&got);
        assert_eq!(
            lasts.get(&w),
            Some(&i),
            "shared key {x} ends with batch {i} of writer {w}, not that writer's last write to it"
        );
    }
    // Memtables were switched and flushed while the writers ran.
    let tables: usize = (0..7)
        .map(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert!(
        tables > 0,
        "no memtable was flushed; the test did not exercise switches"
    );
}

#[test]
fn batches_stay_whole_and_in_order_with_many_writers() {
    batches_stay_whole_and_in_order(false);
}

#[test]
fn batches_stay_whole_and_in_order_with_many_writers_and_concurrent_memtable_writes() {
    batches_stay_whole_and_in_order(true);
}
