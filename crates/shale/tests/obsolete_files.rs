//! Files a compaction replaced are deleted once the new version is
//! installed: a database holds no table that no version uses, while open and
//! after it is closed.

use shale::{Db, Options};

fn table_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            name.ends_with(".ldb") || name.ends_with(".sst")
        })
        .count()
}

fn live_tables(db: &Db) -> usize {
    db.stats().levels.iter().map(|l| l.files).sum()
}

#[test]
fn compacted_tables_are_deleted_before_compact_range_returns_and_on_close() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        max_file_size: 64 << 10,
        ..Default::default()
    };
    let db = Db::open(dir.path(), options.clone()).unwrap();
    for round in 0..3 {
        for i in 0..5000u32 {
            let key = format!("key{:06}", (i * 7919 + round) % 5000);
            db.put(key.as_bytes(), &[b'v'; 100]).unwrap();
        }
        db.compact_range(None, None).unwrap();
        assert_eq!(
            table_files(dir.path()),
            live_tables(&db),
            "round {round}: tables on disk vs in the version"
        );
    }
    let live = live_tables(&db);
    drop(db);
    assert_eq!(table_files(dir.path()), live, "after close");
    let db = Db::open(dir.path(), options).unwrap();
    assert_eq!(table_files(dir.path()), live_tables(&db), "after reopen");
}
