//! A table file whose size is not the one the MANIFEST records (cut short,
//! or grown) is reported as corruption naming the file and both sizes when
//! it is opened, before any of it is read through its memory mapping.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use shale::{Db, Error, Options, ReadOptions};

fn options() -> Options {
    Options {
        create_if_missing: true,
        ..Default::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// A database with one table (and nothing in its log), closed.
fn one_table(dir: &Path) -> (PathBuf, u64) {
    let db = Db::open(dir, options()).unwrap();
    for i in 0..3000 {
        db.put(&key(i), format!("value {i}").repeat(5).as_bytes())
            .unwrap();
    }
    db.compact_range(None, None).unwrap();
    drop(db);
    let tables: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ldb"))
        .collect();
    assert_eq!(tables.len(), 1, "{tables:?}");
    let size = std::fs::metadata(&tables[0]).unwrap().len();
    (tables[0].clone(), size)
}

fn expect_size_mismatch(err: Error, table: &Path, expected: u64, actual: u64) {
    let msg = err.to_string();
    match &err {
        Error::Corruption { file, .. } => assert_eq!(file, table, "{msg}"),
        _ => panic!("not corruption: {msg}"),
    }
    assert!(
        msg.contains(&format!("{expected} bytes")) && msg.contains(&format!("{actual} bytes")),
        "{msg}"
    );
}

fn check_reads_fail(dir: &Path, table: &Path, expected: u64, actual: u64) {
    let db = Db::open(dir, options()).unwrap();
    expect_size_mismatch(db.get(&key(1500)).unwrap_err(), table, expected, actual);
    let mut it = db.cursor(&ReadOptions::default());
    it.seek_to_first();
    assert!(!it.valid());
    expect_size_mismatch(it.status().unwrap_err(), table, expected, actual);
}

#[test]
fn a_truncated_table_is_corruption_not_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (table, size) = one_table(&dir);
    for cut in [size / 2, size - 1, 0] {
        OpenOptions::new()
            .write(true)
            .open(&table)
            .unwrap()
            .set_len(cut)
            .unwrap();
        check_reads_fail(&dir, &table, size, cut);
    }
}

#[test]
fn a_grown_table_is_corruption() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (table, size) = one_table(&dir);
    OpenOptions::new()
        .write(true)
        .open(&table)
        .unwrap()
        .set_len(size + 4096)
        .unwrap();
    check_reads_fail(&dir, &table, size, size + 4096);
}
