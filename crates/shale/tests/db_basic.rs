//! The database's behaviour, specified through its public API.

use std::sync::Arc;

use shale::env::MemFs;
use shale::{Db, Options, ReadOptions, WriteBatch, WriteOptions};

fn mem_options(fs: &MemFs) -> Options {
    Options {
        create_if_missing: true,
        fs: Arc::new(fs.clone()),
        ..Default::default()
    }
}

fn collect(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = db.cursor(&ReadOptions::default());
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    out
}

#[test]
fn put_get_delete() {
    let fs = MemFs::new();
    let db = Db::open("/db", mem_options(&fs)).unwrap();
    assert_eq!(db.get(b"foo").unwrap(), None);
    db.put(b"foo", b"v1").unwrap();
    assert_eq!(db.get(b"foo").unwrap().as_deref(), Some(&b"v1"[..]));
    db.put(b"foo", b"v2").unwrap();
    assert_eq!(db.get(b"foo").unwrap().as_deref(), Some(&b"v2"[..]));
    db.delete(b"foo").unwrap();
    assert_eq!(db.get(b"foo").unwrap(), None);
    db.delete(b"never-there").unwrap();
}

#[test]
fn open_missing_database_fails_unless_create_if_missing() {
    let fs = MemFs::new();
    let opts = Options {
        fs: Arc::new(fs.clone()),
        ..Default::default()
    };
    let err = Db::open("/nothing", opts).expect_err("open must fail");
    assert!(matches!(err, shale::Error::InvalidArgument(_)), "{err}");
}

#[test]
fn error_if_exists() {
    let fs = MemFs::new();
    drop(Db::open("/db", mem_options(&fs)).unwrap());
    let opts = Options {
        error_if_exists: true,
        ..mem_options(&fs)
    };
    assert!(Db::open("/db", opts).is_err());
}

#[test]
fn second_open_fails_naming_the_lock_file() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        ..Default::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let err = Db::open(dir.path(), opts.clone()).expect_err("second open must fail");
    assert!(err.to_string().contains("LOCK"), "{err}");
    drop(db);
    Db::open(dir.path(), opts).unwrap();
}

#[test]
fn batches_are_atomic_and_ordered() {
    let fs = MemFs::new();
    let db = Db::open("/db", mem_options(&fs)).unwrap();
    db.put(b"a", b"old").unwrap();
    let mut b = WriteBatch::new();
    b.put(b"a", b"1").unwrap();
    b.put(b"b", b"2").unwrap();
    b.delete(b"a").unwrap();
    b.put(b"c", b"3").unwrap();
    db.write(
        &WriteOptions {
            sync: true,
            ..Default::default()
        },
        &b,
    )
    .unwrap();
    assert_eq!(
        collect(&db),
        vec![
            (b"b".to_vec(), b"2".to_vec()),
            (b"c".to_vec(), b"3".to_vec())
        ]
    );
}

#[test]
fn data_survives_reopen_from_the_log_and_from_tables() {
    let fs = MemFs::new();
    let opts = Options {
        write_buffer_size: 100_000,
        ..mem_options(&fs)
    };
    {
        let db = Db::open("/db", opts.clone()).unwrap();
        for i in 0..5000u32 {
            db.put(
                format!("key{i:06}").as_bytes(),
                format!("value{i}").as_bytes(),
            )
            .unwrap();
        }
        for i in (0..5000u32).step_by(3) {
            db.delete(format!("key{i:06}").as_bytes()).unwrap();
        }
    }
    for _ in 0..2 {
        let db = Db::open("/db", opts.clone()).unwrap();
        for i in 0..5000u32 {
            let got = db.get(format!("key{i:06}").as_bytes()).unwrap();
            if i % 3 == 0 {
                assert_eq!(got, None, "key{i:06} was deleted");
            } else {
                assert_eq!(got, Some(format!("value{i}").into_bytes()));
            }
        }
    }
}

#[test]
fn snapshots_see_the_past() {
    let fs = MemFs::new();
    let db = Db::open("/db", mem_options(&fs)).unwrap();
    db.put(b"k", b"v1").unwrap();
    let s1 = db.snapshot();
    db.put(b"k", b"v2").unwrap();
    db.delete(b"k").unwrap();
    let at = ReadOptions {
        snapshot: Some(&s1),
        ..Default::default()
    };
    assert_eq!(db.get_with(&at, b"k").unwrap().as_deref(), Some(&b"v1"[..]));
    assert_eq!(db.get(b"k").unwrap(), None);
    db.compact_range(None, None).unwrap();
    assert_eq!(
        db.get_with(&at, b"k").unwrap().as_deref(),
        Some(&b"v1"[..]),
        "compaction keeps what a snapshot sees"
    );
    let mut it = db.cursor(&at);
    it.seek_to_first();
    assert!(it.valid());
    assert_eq!((it.key(), it.value()), (&b"k"[..], &b"v1"[..]));
}

#[test]
fn iteration_in_both_directions_with_seek() {
    let fs = MemFs::new();
    let db = Db::open(
        "/db",
        Options {
            write_buffer_size: 64 << 10,
            ..mem_options(&fs)
        },
    )
    .unwrap();
    for i in (0..3000u32).rev() {
        db.put(format!("{i:05}").as_bytes(), &[b'x'; 50]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in 3000..3100u32 {
        db.put(format!("{i:05}").as_bytes(), b"mem").unwrap();
    }
    let mut it = db.cursor(&ReadOptions::default());
    it.seek(b"01500");
    assert_eq!(it.key(), b"01500");
    it.prev();
    assert_eq!(it.key(), b"01499");
    it.next();
    it.next();
    assert_eq!(it.key(), b"01501");
    it.seek_to_last();
    let mut n = 0;
    let mut last: Option<Vec<u8>> = None;
    while it.valid() {
        if let Some(l) = &last {
            assert!(it.key() < l.as_slice());
        }
        last = Some(it.key().to_vec());
        n += 1;
        it.prev();
    }
    assert_eq!(n, 3100);
}

#[test]
fn compaction_moves_data_down_and_properties_report_it() {
    let fs = MemFs::new();
    let opts = Options {
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        ..mem_options(&fs)
    };
    let db = Db::open("/db", opts).unwrap();
    for i in 0..20_000u32 {
        db.put(
            format!("{:08}", (i * 7919) % 20_000).as_bytes(),
            &[b'v'; 100],
        )
        .unwrap();
    }
    db.compact_range(None, None).unwrap();
    assert_eq!(
        db.property("leveldb.num-files-at-level0").as_deref(),
        Some("0")
    );
    let deeper: usize = (1..7)
        .map(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert!(deeper > 0);
    assert!(db.property("leveldb.stats").unwrap().contains("Level"));
    assert!(db.property("leveldb.sstables").unwrap().contains("level 1") || deeper > 0);
    assert!(
        db.property("leveldb.approximate-memory-usage")
            .unwrap()
            .parse::<u64>()
            .unwrap()
            > 0
    );
    assert_eq!(db.property("leveldb.nonsense"), None);
    let sizes = db.approximate_sizes(&[
        (b"00000000", b"00010000"),
        (b"00000000", b"00020000"),
        (b"a", b"b"),
    ]);
    assert!(sizes[1] > 0, "{sizes:?}");
    let half = sizes[0] as f64 / sizes[1] as f64;
    assert!(
        (0.3..0.7).contains(&half),
        "half the keys should be about half the bytes: {sizes:?}"
    );
    assert_eq!(sizes[2], 0);
    for i in 0..20_000u32 {
        assert!(db.get(format!("{i:08}").as_bytes()).unwrap().is_some());
    }
}

#[test]
fn destroy_removes_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let opts = Options {
        create_if_missing: true,
        ..Default::default()
    };
    {
        let db = Db::open(&path, opts.clone()).unwrap();
        db.put(b"k", b"v").unwrap();
    }
    shale::destroy(&path, &opts).unwrap();
    assert!(!path.exists());
}
