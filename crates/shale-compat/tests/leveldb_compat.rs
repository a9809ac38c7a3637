//! On-disk compatibility with the reference LevelDB 1.23 library.
//!
//! Each scenario runs with Snappy on and off and with a bloom filter on and
//! off. The workloads are deterministic (fixed seeds), large enough that both
//! engines flush and compact into levels below 0, and contain overwrites and
//! deletions. Every check compares a database against a `BTreeMap` model:
//! point reads of every key ever written (deleted ones must be absent), and
//! full forward and reverse iteration.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shale_compat::{RefDb, RefOptions};

const WRITE_BUFFER_SIZE: usize = 256 << 10;
const MAX_FILE_SIZE: usize = 256 << 10;
const BLOOM_BITS: usize = 10;

/// One configuration both engines are opened with.
#[derive(Debug, Clone, Copy)]
struct Config {
    snappy: bool,
    bloom: bool,
}

const CONFIGS: [Config; 4] = [
    Config {
        snappy: false,
        bloom: false,
    },
    Config {
        snappy: false,
        bloom: true,
    },
    Config {
        snappy: true,
        bloom: false,
    },
    Config {
        snappy: true,
        bloom: true,
    },
];

impl Config {
    fn reference(self) -> RefOptions {
        RefOptions {
            snappy: self.snappy,
            bloom_bits_per_key: self.bloom.then_some(BLOOM_BITS as i32),
            write_buffer_size: WRITE_BUFFER_SIZE,
            max_file_size: MAX_FILE_SIZE,
        }
    }

    fn shale(self) -> shale::Options {
        shale::Options {
            create_if_missing: true,
            compression: if self.snappy {
                shale::CompressionType::Snappy
            } else {
                shale::CompressionType::None
            },
            filter_policy: if self.bloom {
                Some(Arc::new(shale::BloomFilterPolicy::new(BLOOM_BITS)))
            } else {
                None
            },
            write_buffer_size: WRITE_BUFFER_SIZE,
            max_file_size: MAX_FILE_SIZE,
            ..Default::default()
        }
    }
}

/// One mutation of a workload.
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
}

/// The expected contents, and every key ever touched (to check absences).
#[derive(Default)]
struct Model {
    live: BTreeMap<Vec<u8>, Vec<u8>>,
    touched: BTreeSet<Vec<u8>>,
}

impl Model {
    fn apply(&mut self, op: &Op) {
        match op {
            Op::Put(k, v) => {
                self.touched.insert(k.clone());
                self.live.insert(k.clone(), v.clone());
            }
            Op::Delete(k) => {
                self.touched.insert(k.clone());
                self.live.remove(k);
            }
        }
    }
}

fn key(n: u32) -> Vec<u8> {
    // Shared prefixes of varying length, and some longer keys, exercise the
    // blocks' prefix compression.
    if n % 7 == 0 {
        format!("user{n:06}/profile/settings").into_bytes()
    } else {
        format!("user{n:06}").into_bytes()
    }
}

fn value(rng: &mut StdRng, tag: u32) -> Vec<u8> {
    // Mostly ~100 bytes, partly repetitive so Snappy has something to do;
    // occasionally empty or a few kilobytes.
    let len = match rng.gen_range(0..100) {
        0 => 0,
        1 => rng.gen_range(2_000..6_000),
        _ => rng.gen_range(80..120),
    };
    let mut v = format!("v{tag}:").into_bytes();
    let chunk: Vec<u8> = (0..12).map(|_| rng.gen_range(b'a'..=b'z')).collect();
    while v.len() < len {
        if rng.gen_bool(0.3) {
            v.push(rng.gen());
        } else {
            v.extend_from_slice(&chunk);
        }
    }
    v.truncate(len);
    v
}

/// `n` deterministic operations over a key space of `key_space` keys:
/// about 85% puts (many of them overwrites) and 15% deletes.
fn workload(seed: u64, n: u32, key_space: u32) -> Vec<Op> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let k = key(rng.gen_range(0..key_space));
            if rng.gen_range(0..100) < 15 {
                Op::Delete(k)
            } else {
                Op::Put(k, value(&mut rng, i))
            }
        })
        .collect()
}

fn files_below_level0_ref(db: &RefDb) -> u64 {
    (1..7)
        .map(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0)
        })
        .sum()
}

fn files_below_level0_shale(db: &shale::Db) -> u64 {
    (1..7)
        .map(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0)
        })
        .sum()
}

fn write_ref(db: &RefDb, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Put(k, v) => db.put(k, v).expect("reference put"),
            Op::Delete(k) => db.delete(k).expect("reference delete"),
        }
    }
}

/// Writes `ops` to Shale, alternating single writes and batches of up to 50.
fn write_shale(db: &shale::Db, ops: &[Op]) {
    let wo = shale::WriteOptions::default();
    for (i, chunk) in ops.chunks(500).enumerate() {
        if i % 2 == 0 {
            for op in chunk {
                match op {
                    Op::Put(k, v) => db.put(k, v).expect("shale put"),
                    Op::Delete(k) => db.delete(k).expect("shale delete"),
                }
            }
        } else {
            for small in chunk.chunks(50) {
                let mut b = shale::WriteBatch::new();
                for op in small {
                    match op {
                        Op::Put(k, v) => b.put(k, v).expect("batch put"),
                        Op::Delete(k) => b.delete(k).expect("batch delete"),
                    }
                }
                db.write(&wo, &b).expect("shale batch write");
            }
        }
    }
}

fn show(k: &[u8]) -> String {
    String::from_utf8_lossy(k).into_owned()
}

fn verify_ref(db: &RefDb, model: &Model, cfg: Config) {
    for k in &model.touched {
        let got = db.get(k).expect("reference get");
        assert_eq!(
            got.as_deref(),
            model.live.get(k).map(|v| v.as_slice()),
            "{cfg:?}: reference get of {}",
            show(k)
        );
    }
    let mut it = db.iter();
    it.seek_to_first();
    let mut expected = model.live.iter();
    while it.valid() {
        let (k, v) = expected
            .next()
            .unwrap_or_else(|| panic!("{cfg:?}: extra key {} forward", show(it.key())));
        assert_eq!(it.key(), k.as_slice(), "{cfg:?}: forward key order");
        assert_eq!(
            it.value(),
            v.as_slice(),
            "{cfg:?}: forward value of {}",
            show(k)
        );
        it.next();
    }
    it.status().expect("reference forward iteration status");
    assert!(
        expected.next().is_none(),
        "{cfg:?}: forward iteration ended early"
    );

    it.seek_to_last();
    let mut expected = model.live.iter().rev();
    while it.valid() {
        let (k, v) = expected
            .next()
            .unwrap_or_else(|| panic!("{cfg:?}: extra key {} reverse", show(it.key())));
        assert_eq!(it.key(), k.as_slice(), "{cfg:?}: reverse key order");
        assert_eq!(
            it.value(),
            v.as_slice(),
            "{cfg:?}: reverse value of {}",
            show(k)
        );
        it.prev();
    }
    it.status().expect("reference reverse iteration status");
    assert!(
        expected.next().is_none(),
        "{cfg:?}: reverse iteration ended early"
    );
}

fn verify_shale(db: &shale::Db, model: &Model, cfg: Config) {
    let ro = shale::ReadOptions {
        verify_checksums: true,
        ..Default::default()
    };
    for k in &model.touched {
        let got = db.get_with(&ro, k).expect("shale get");
        assert_eq!(
            got.as_deref(),
            model.live.get(k).map(|v| v.as_slice()),
            "{cfg:?}: shale get of {}",
            show(k)
        );
    }
    let mut it = db.iter(&ro);
    it.seek_to_first();
    let mut expected = model.live.iter();
    while it.valid() {
        let (k, v) = expected
            .next()
            .unwrap_or_else(|| panic!("{cfg:?}: extra key {} forward", show(it.key())));
        assert_eq!(it.key(), k.as_slice(), "{cfg:?}: forward key order");
        assert_eq!(
            it.value(),
            v.as_slice(),
            "{cfg:?}: forward value of {}",
            show(k)
        );
        it.next();
    }
    it.status().expect("shale forward iteration status");
    assert!(
        expected.next().is_none(),
        "{cfg:?}: forward iteration ended early"
    );

    it.seek_to_last();
    let mut expected = model.live.iter().rev();
    while it.valid() {
        let (k, v) = expected
            .next()
            .unwrap_or_else(|| panic!("{cfg:?}: extra key {} reverse", show(it.key())));
        assert_eq!(it.key(), k.as_slice(), "{cfg:?}: reverse key order");
        assert_eq!(
            it.value(),
            v.as_slice(),
            "{cfg:?}: reverse value of {}",
            show(k)
        );
        it.prev();
    }
    it.status().expect("shale reverse iteration status");
    assert!(
        expected.next().is_none(),
        "{cfg:?}: reverse iteration ended early"
    );
}

const OPS: u32 = 60_000;
const KEY_SPACE: u32 = 30_000;

fn temp_db() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("db");
    (dir, path)
}

fn reference_writes(path: &Path, cfg: Config, ops: &[Op]) {
    let db = RefDb::open(path, cfg.reference()).expect("reference open");
    write_ref(&db, ops);
    assert!(
        files_below_level0_ref(&db) > 0,
        "{cfg:?}: the reference workload should compact below level 0"
    );
}

#[test]
fn database_written_by_leveldb_reads_back_in_shale() {
    for (i, cfg) in CONFIGS.into_iter().enumerate() {
        let seed = 0x5ea1_0001 + i as u64;
        let ops = workload(seed, OPS, KEY_SPACE);
        let mut model = Model::default();
        ops.iter().for_each(|op| model.apply(op));

        let (_dir, path) = temp_db();
        reference_writes(&path, cfg, &ops);

        let db = shale::Db::open(&path, cfg.shale())
            .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: shale open: {e}"));
        verify_shale(&db, &model, cfg);
    }
}

#[test]
fn database_written_by_shale_reads_back_in_leveldb() {
    for (i, cfg) in CONFIGS.into_iter().enumerate() {
        let seed = 0x5ea1_0101 + i as u64;
        let ops = workload(seed, OPS, KEY_SPACE);
        let mut model = Model::default();
        ops.iter().for_each(|op| model.apply(op));

        let (_dir, path) = temp_db();
        {
            let db = shale::Db::open(&path, cfg.shale()).expect("shale open");
            write_shale(&db, &ops);
            assert!(
                files_below_level0_shale(&db) > 0,
                "{cfg:?}: the shale workload should compact below level 0"
            );
        }

        let db = RefDb::open(&path, cfg.reference())
            .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: reference open: {e}"));
        verify_ref(&db, &model, cfg);
    }
}

#[test]
fn leveldb_then_shale_then_leveldb_agree() {
    for (i, cfg) in CONFIGS.into_iter().enumerate() {
        let seed = 0x5ea1_0201 + i as u64;
        let first = workload(seed, OPS, KEY_SPACE);
        // The second phase reaches past the first key space, so it both
        // updates and deletes old keys and adds new ones.
        let second = workload(seed ^ 0xffff, OPS / 3, KEY_SPACE + KEY_SPACE / 3);
        let mut model = Model::default();
        first.iter().for_each(|op| model.apply(op));

        let (_dir, path) = temp_db();
        reference_writes(&path, cfg, &first);

        {
            let db = shale::Db::open(&path, cfg.shale())
                .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: shale open: {e}"));
            write_shale(&db, &second);
            second.iter().for_each(|op| model.apply(op));
            db.compact_range(None, None).expect("shale compact_range");
            assert!(
                files_below_level0_shale(&db) > 0,
                "{cfg:?}: a full compaction leaves files below level 0"
            );
            assert_eq!(
                db.property("leveldb.num-files-at-level0").as_deref(),
                Some("0"),
                "{cfg:?}: a full compaction empties level 0"
            );
            verify_shale(&db, &model, cfg);
        }

        let db = RefDb::open(&path, cfg.reference())
            .unwrap_or_else(|e| panic!("{cfg:?} seed {seed:#x}: reference reopen: {e}"));
        verify_ref(&db, &model, cfg);
    }
}
