//! Many threads writing and reading one database at once lose nothing and
//! see consistent snapshots.

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
