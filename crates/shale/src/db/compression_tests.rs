//! Tables are compressed as their output level asks
//! (`Options::compression_per_level`, `Options::bottommost_compression`),
//! and a database whose tables mix every compression type reads back
//! whole, after a reopen with other options too.
//!
//! The tests drive single-level manual compactions, which the public API
//! does not offer, to put tables on every level: a level's table is written
//! by a flush (levels 0 to 2) or by a compaction into it that merges with a
//! table already there (so not a trivial move, which keeps a table's
//! blocks).

use std::collections::BTreeMap;
use std::path::Path;

use crate::inspect::{live_tables, TableFile};
use crate::version::NUM_LEVELS;
use crate::{CompressionType, Db, Options, ReadOptions};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const KEYS: u32 = 600;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// Batch `b` writes every third key (by `b`) and both ends of the key
/// range, so that its tables overlap every other batch's, with values that
/// every codec shrinks by more than an eighth.
fn write_batch(db: &Db, model: &mut Model, b: u32) {
    for i in (0..KEYS).filter(|i| i % 3 == b % 3 || *i == 0 || *i == KEYS - 1) {
        let value = format!("value of key {i} from batch {b}; ")
            .repeat(4)
            .into_bytes();
        db.put(&key(i), &value).unwrap();
        model.insert(key(i), value);
    }
}

fn flush(db: &Db) {
    db.inner.flush_memtable().unwrap();
}

/// Compacts all of `level` into `level + 1`.
fn compact_level(db: &Db, level: usize) {
    db.inner.run_manual_compaction(level, None, None).unwrap();
}

/// The compression type bytes of the data blocks of each level's tables.
fn block_types(dir: &Path) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new(); NUM_LEVELS];
    for t in live_tables(dir).unwrap() {
        let table = TableFile::open(&t.path).unwrap();
        for i in 0..table.index.len() {
            out[t.level as usize].push(table.data_block(i).unwrap().compression);
        }
    }
    out
}

fn levels_holding_tables(dir: &Path) -> Vec<usize> {
    block_types(dir)
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.is_empty())
        .map(|(l, _)| l)
        .collect()
}

fn assert_reads(db: &Db, model: &Model, what: &str) {
    let got: Vec<(Vec<u8>, Vec<u8>)> = db
        .iter()
        .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect::<crate::Result<_>>()
        .unwrap();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.clone().into_iter().collect();
    assert_eq!(got.len(), want.len(), "{what}: entry count");
    assert!(got == want, "{what}: scan differs");
    let ro = ReadOptions {
        verify_checksums: true,
        ..Default::default()
    };
    for i in 0..KEYS + 2 {
        assert_eq!(
            db.get_with(&ro, &key(i)).unwrap(),
            model.get(&key(i)).cloned(),
            "{what}: key {i}"
        );
    }
}

fn options(per_level: Vec<CompressionType>) -> Options {
    Options {
        create_if_missing: true,
        compression_per_level: per_level,
        zstd_compression_level: 3,
        ..Default::default()
    }
}

/// Fills every level 6 down to 0 with a table written for that level (see
/// the module comment). Returns the model of the database's contents.
fn staircase(db: &Db) -> Model {
    let mut model = Model::new();
    let mut b = 0;
    for target in (0..NUM_LEVELS).rev() {
        // A flush goes to level 2 at most, and no deeper than the first
        // level under which a table overlaps it.
        let seeds = if target > 2 { 2 } else { 1 };
        for _ in 0..seeds {
            write_batch(db, &mut model, b);
            b += 1;
            flush(db);
            for level in 2.min(target)..target {
                compact_level(db, level);
            }
        }
    }
    model
}

/// Each compression type at each level: with four rotations of the types
/// over the seven levels, every type is written to every level; the
/// database reads back whole, then after a reopen with the same options and
/// with the defaults, and after a full compaction under the defaults
/// (which rewrites everything as snappy).
#[test]
fn every_type_at_every_level_round_trips() {
    for r in 0..CompressionType::ALL.len() {
        let per_level: Vec<CompressionType> = (0..NUM_LEVELS)
            .map(|l| CompressionType::ALL[(l + r) % CompressionType::ALL.len()])
            .collect();
        let what = format!("levels {per_level:?}");
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options(per_level.clone())).unwrap();
        let model = staircase(&db);
        assert_eq!(
            levels_holding_tables(dir.path()),
            (0..NUM_LEVELS).collect::<Vec<_>>(),
            "{what}"
        );
        for (level, types) in block_types(dir.path()).iter().enumerate() {
            assert!(
                types.iter().all(|&t| t == per_level[level] as u8),
                "{what}: level {level} has block types {types:?}"
            );
        }
        assert_reads(&db, &model, &what);
        drop(db);

        let db = Db::open(dir.path(), options(per_level.clone())).unwrap();
        assert_reads(&db, &model, &format!("{what}, reopened"));
        drop(db);

        let defaults = Options {
            create_if_missing: true,
            ..Default::default()
        };
        let db = Db::open(dir.path(), defaults).unwrap();
        assert_reads(&db, &model, &format!("{what}, reopened with defaults"));
        db.compact_range(None, None).unwrap();
        assert_reads(&db, &model, &format!("{what}, compacted with defaults"));
        drop(db);
        for types in block_types(dir.path()) {
            assert!(types.iter().all(|&t| t == 1), "{what}: {types:?}");
        }
    }
}

/// The last entry of `compression_per_level` serves every deeper level; an
/// empty list leaves every level to `compression`.
#[test]
fn short_lists_repeat_their_last_entry() {
    use CompressionType::*;
    let o = options(vec![None, Lz4]);
    let got: Vec<_> = (0..NUM_LEVELS)
        .map(|l| o.compression_for_level(l, false))
        .collect();
    assert_eq!(got, [None, Lz4, Lz4, Lz4, Lz4, Lz4, Lz4]);
    let o = Options {
        compression: Zstd,
        ..Default::default()
    };
    let got: Vec<_> = (0..NUM_LEVELS)
        .map(|l| o.compression_for_level(l, false))
        .collect();
    assert_eq!(got, [Zstd; NUM_LEVELS]);
    assert_eq!(Options::default().compression_for_level(6, true), Snappy);

    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(vec![None, Lz4])).unwrap();
    let model = staircase(&db);
    let types = block_types(dir.path());
    assert!(types[0].iter().all(|&t| t == 0), "{types:?}");
    for level in 1..NUM_LEVELS {
        assert!(
            !types[level].is_empty() && types[level].iter().all(|&t| t == 4),
            "level {level}: {types:?}"
        );
    }
    assert_reads(&db, &model, "short list");
}

/// `bottommost_compression` is used by compactions into the deepest level
/// holding tables, and nowhere else: not by compactions above it, not by
/// flushes.
#[test]
fn bottommost_compression_is_for_the_deepest_level() {
    use CompressionType::*;
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        compression: Lz4,
        bottommost_compression: Some(Zstd),
        ..Default::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let mut model = Model::new();
    // A flush to level 2, the only level with tables: not zstd.
    write_batch(&db, &mut model, 0);
    flush(&db);
    assert_eq!(block_types(dir.path())[2].first(), Some(&4));
    // A compaction into level 2, the deepest: zstd.
    write_batch(&db, &mut model, 1);
    flush(&db);
    assert_eq!(levels_holding_tables(dir.path()), [1, 2]);
    compact_level(&db, 1);
    assert_eq!(levels_holding_tables(dir.path()), [2]);
    assert!(block_types(dir.path())[2].iter().all(|&t| t == 2));
    // With a table at level 3, a compaction into level 2 is not bottommost.
    compact_level(&db, 2);
    assert_eq!(levels_holding_tables(dir.path()), [3]);
    write_batch(&db, &mut model, 2);
    flush(&db);
    write_batch(&db, &mut model, 3);
    flush(&db);
    assert_eq!(levels_holding_tables(dir.path()), [1, 2, 3]);
    compact_level(&db, 1);
    let types = block_types(dir.path());
    assert!(types[2].iter().all(|&t| t == 4), "{types:?}");
    // And one into level 3 is.
    compact_level(&db, 2);
    let types = block_types(dir.path());
    assert_eq!(levels_holding_tables(dir.path()), [3]);
    assert!(types[3].iter().all(|&t| t == 2), "{types:?}");
    assert_reads(&db, &model, "bottommost");
}

/// Default options write snappy blocks (type 1), which LevelDB 1.23 reads.
#[test]
fn defaults_write_snappy_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(Vec::new())).unwrap();
    let mut model = Model::new();
    write_batch(&db, &mut model, 0);
    write_batch(&db, &mut model, 1);
    db.compact_range(None, None).unwrap();
    write_batch(&db, &mut model, 2);
    flush(&db);
    let types: Vec<u8> = block_types(dir.path()).concat();
    assert!(
        types.len() > 10 && types.iter().all(|&t| t == 1),
        "{types:?}"
    );
    assert_reads(&db, &model, "defaults");
}

/// Bulk-loaded tables get their level only once written: they are
/// compressed with `bottommost_compression`, else the last entry of
/// `compression_per_level`, else `compression`, as RocksDB compresses files
/// for ingestion.
#[test]
fn ingested_tables_use_the_deepest_levels_compression() {
    use CompressionType as C;
    for (per_level, bottommost, want) in [
        (vec![], None, C::Snappy),
        (vec![C::None, C::Lz4], None, C::Lz4),
        (vec![C::Lz4, C::None], Some(C::Zstd), C::Zstd),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            bottommost_compression: bottommost,
            ..options(per_level)
        };
        let db = Db::open(dir.path(), opts).unwrap();
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..KEYS)
            .map(|i| {
                (
                    key(i),
                    format!("ingested value {i}; ").repeat(4).into_bytes(),
                )
            })
            .collect();
        db.ingest_sorted(entries.iter().map(|(k, v)| (k, v)))
            .unwrap();
        let types = block_types(dir.path()).concat();
        assert!(
            !types.is_empty() && types.iter().all(|&t| t == want as u8),
            "{want:?}: {types:?}"
        );
        assert_reads(&db, &entries.into_iter().collect(), "ingested");
    }
}
