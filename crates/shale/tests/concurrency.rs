//! Many threads writing and reading one database at once lose nothing and
//! see consistent snapshots.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use shale::{Db, Options, ReadOptions, WriteBatch, WriteOptions};

#[test]
fn concurrent_writers_and_readers() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        write_buffer_size: 256 << 10,
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
                        db.write(&WriteOptions { sync: i % 500 == 0 }, &b).unwrap();
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
    const WRITERS: usize = 3;
    const PER_WRITER: usize = 3000;
    let dir = support::scratch_dir();
    let opts = Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        block_size: 1024,
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
