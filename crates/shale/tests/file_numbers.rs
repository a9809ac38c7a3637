//! File numbers are never handed out twice, even for files the MANIFEST
//! does not know: a table a crashed (or closed mid-compaction) process was
//! writing stays in the directory until the next open deletes it, and that
//! deletion runs while the background thread may already be compacting. Had
//! the compaction been given the orphan's number, the deletion would remove
//! its fresh output, leaving the database without a file its version names.

use std::path::Path;
use std::sync::Arc;

use shale::env::{write_file_sync, FileSystem, MemFs};
use shale::internals::{parse_file_name, table_file_name, FileType};
use shale::{Db, Options};

const DIR: &str = "/db";

fn options(fs: &MemFs, reuse_logs: bool) -> Options {
    Options {
        create_if_missing: true,
        reuse_logs,
        fs: Arc::new(fs.clone()),
        ..Default::default()
    }
}

/// The numbers of the table files in the directory.
fn table_numbers(fs: &MemFs) -> Vec<u64> {
    let mut numbers: Vec<u64> = fs
        .children(Path::new(DIR))
        .unwrap()
        .iter()
        .filter_map(|name| parse_file_name(name))
        .filter(|&(_, t)| t == FileType::Table)
        .map(|(n, _)| n)
        .collect();
    numbers.sort_unstable();
    numbers
}

fn fill(db: &Db, round: usize) {
    for i in 0..200 {
        db.put(
            format!("key{i:04}").as_bytes(),
            format!("value {round} {i}").as_bytes(),
        )
        .unwrap();
    }
    db.compact_range(None, None).unwrap();
}

#[test]
fn numbers_of_files_left_in_the_directory_are_not_handed_out_again() {
    for reuse_logs in [false, true] {
        let fs = MemFs::new();
        let db = Db::open(DIR, options(&fs, reuse_logs)).unwrap();
        fill(&db, 0);
        drop(db);
        let highest = *table_numbers(&fs).last().expect("a table");
        // Outputs the previous process never recorded, just ahead of the
        // numbers the MANIFEST has handed out.
        let orphans = highest + 1..=highest + 8;
        for n in orphans.clone() {
            write_file_sync(&fs, &table_file_name(Path::new(DIR), n), b"partial").unwrap();
        }
        let orphan = *orphans.end();

        let db = Db::open(DIR, options(&fs, reuse_logs)).unwrap();
        for round in 1..4 {
            fill(&db, round);
        }
        let after = table_numbers(&fs);
        assert!(
            !after.iter().any(|n| orphans.contains(n)),
            "reuse_logs {reuse_logs}: the orphans are deleted, their numbers never reused: {after:?}"
        );
        assert!(
            after.iter().all(|&n| n > orphan || n <= highest),
            "reuse_logs {reuse_logs}: new tables are numbered after the orphans: {after:?}"
        );
        for i in 0..200 {
            assert_eq!(
                db.get(format!("key{i:04}").as_bytes()).unwrap(),
                Some(format!("value 3 {i}").into_bytes())
            );
        }
    }
}
