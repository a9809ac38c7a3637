//! Compactions check the checksum of every block they read, whatever
//! `paranoid_checks` says: a damaged block fails the compaction with a
//! corruption error naming the file, and the damaged table stays, instead
//! of being rewritten under a fresh, valid checksum.

use std::path::{Path, PathBuf};

use shale::{CompressionType, Db, Error, Options};

fn options() -> Options {
    Options {
        create_if_missing: true,
        // Values stay readable in the file, so one can be damaged in place.
        compression: CompressionType::None,
        ..Default::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i:05}-").repeat(8).into_bytes()
}

fn tables(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ldb"))
        .collect();
    out.sort();
    out
}

/// The table holding `needle`, and the needle's offset in it.
fn find_in_tables(dir: &Path, needle: &[u8]) -> Option<(PathBuf, usize)> {
    tables(dir).into_iter().find_map(|p| {
        let data = std::fs::read(&p).unwrap();
        data.windows(needle.len())
            .position(|w| w == needle)
            .map(|at| (p, at))
    })
}

#[test]
fn a_compaction_refuses_a_damaged_block_instead_of_rewriting_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    {
        let db = Db::open(&dir, options()).unwrap();
        for i in 0..2000 {
            db.put(&key(i), &value(i)).unwrap();
        }
        db.compact_range(None, None).unwrap();
    }
    // Damage one byte of one value, leaving the block's structure intact.
    let original = value(1000);
    let (damaged, at) = find_in_tables(&dir, &original).expect("the value is in a table");
    let mut bytes = std::fs::read(&damaged).unwrap();
    bytes[at] = b'V';
    std::fs::write(&damaged, &bytes).unwrap();
    let mut laundered = original.clone();
    laundered[0] = b'V';

    let db = Db::open(&dir, options()).unwrap();
    // Newer versions of keys across the range pull the damaged table into
    // a compaction (rather than a move to another level).
    for i in (0..2000).step_by(100) {
        db.put(&key(i), b"newer").unwrap();
    }
    match db.compact_range(None, None) {
        Err(Error::Corruption { file, .. }) => assert_eq!(file, damaged),
        other => panic!("the compaction of a damaged table gave {other:?}"),
    }
    drop(db);

    // The damaged table is still there, damaged, and no other table holds
    // its damaged value under a fresh checksum.
    assert_eq!(std::fs::read(&damaged).unwrap(), bytes);
    for t in tables(&dir).into_iter().filter(|t| *t != damaged) {
        let data = std::fs::read(&t).unwrap();
        assert!(
            !data.windows(laundered.len()).any(|w| w == laundered),
            "{} holds the damaged value",
            t.display()
        );
    }
}
