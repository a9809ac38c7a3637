//! Whole-table filters (`Options::whole_table_filters`): written beside
//! LevelDB's filter block, read before a table's index, and never the
//! reason a key goes missing, whether the tables have them or not, or the
//! block is damaged.

mod support;

use std::path::Path;

use shale::{Db, Options, ReadOptions};
use support::{contents, files_named, TableLayout};

const WHOLE: &str = "fullfilter.shale.BlockedBloom1";

fn options(whole_table_filters: bool) -> Options {
    Options {
        create_if_missing: true,
        whole_table_filters,
        write_buffer_size: 64 << 10,
        ..Options::default()
    }
}

/// Writes keys `k00000`.. in `rounds` rounds of `per_round`, each round's
/// values marked with the round, reopening after each (the log becomes a
/// table), so that several tables hold versions of the same keys.
fn fill(dir: &Path, opts: Options, rounds: usize, per_round: usize) {
    for round in 0..rounds {
        let db = Db::open(dir, opts.clone()).unwrap();
        for i in (round..per_round * 2).step_by(2) {
            db.put(
                format!("k{i:05}").as_bytes(),
                format!("v{round}-{i}").as_bytes(),
            )
            .unwrap();
        }
    }
}

/// The table files of `dir` and the metaindex names of each.
fn meta_names(dir: &Path) -> Vec<(String, Vec<String>)> {
    files_named(dir, ".ldb")
        .into_iter()
        .map(|name| {
            let data = std::fs::read(dir.join(&name)).unwrap();
            let layout = TableLayout::decode(&data);
            let mut names = Vec::new();
            if layout.filter.is_some() {
                names.push("filter".to_string());
            }
            if layout.whole_filter.is_some() {
                names.push(WHOLE.to_string());
            }
            (name, names)
        })
        .collect()
}

fn expected(rounds: usize, per_round: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut model = std::collections::BTreeMap::new();
    for round in 0..rounds {
        for i in (round..per_round * 2).step_by(2) {
            model.insert(
                format!("k{i:05}").into_bytes(),
                format!("v{round}-{i}").into_bytes(),
            );
        }
    }
    model.into_iter().collect()
}

#[test]
fn tables_carry_both_filters_by_default_and_only_leveldbs_when_asked() {
    for (on, want) in [(true, vec!["filter", WHOLE]), (false, vec!["filter"])] {
        let dir = tempfile::tempdir().unwrap();
        fill(dir.path(), options(on), 3, 2000);
        let tables = meta_names(dir.path());
        assert!(!tables.is_empty());
        for (name, names) in tables {
            assert_eq!(names, want, "{name}, whole_table_filters {on}");
        }
    }
}

#[test]
fn every_key_reads_back_whichever_tables_have_the_filter() {
    // Tables written without the filter, then with it, in one database.
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), options(false), 3, 2000);
    let db = Db::open(dir.path(), options(true)).unwrap();
    for i in (1..4000).step_by(2) {
        db.put(format!("k{i:05}").as_bytes(), b"odd").unwrap();
    }
    drop(db);
    let db = Db::open(dir.path(), options(true)).unwrap();
    let mut model: std::collections::BTreeMap<_, _> = expected(3, 2000).into_iter().collect();
    for i in (1..4000).step_by(2) {
        model.insert(format!("k{i:05}").into_bytes(), b"odd".to_vec());
    }
    let tables = meta_names(dir.path());
    assert!(tables.iter().any(|(_, n)| n.len() == 2) && tables.iter().any(|(_, n)| n.len() == 1));
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&v[..]), "{k:?}");
    }
    // Absent keys, between and beyond the written ones.
    for i in 4000..6000 {
        assert_eq!(db.get(format!("k{i:05}").as_bytes()).unwrap(), None);
        assert_eq!(db.get(format!("j{i:05}").as_bytes()).unwrap(), None);
    }
    let all = contents(&db, &ReadOptions::default()).unwrap();
    assert_eq!(all, model.into_iter().collect::<Vec<_>>());
    // And with the filter off again, nothing changes.
    drop(db);
    let db = Db::open(dir.path(), options(false)).unwrap();
    assert_eq!(db.get(b"k00001").unwrap().as_deref(), Some(&b"odd"[..]));
    assert_eq!(db.get(b"k00004").unwrap().as_deref(), Some(&b"v2-4"[..]));
}

#[test]
fn a_damaged_whole_table_filter_costs_no_key_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), options(true), 2, 3000);
    let model = expected(2, 3000);
    // One level of tables, each key in one of them: a read of a key of the
    // damaged table reads that table.
    Db::open(dir.path(), options(true))
        .unwrap()
        .compact_range(None, None)
        .unwrap();
    let name = files_named(dir.path(), ".ldb").pop().unwrap();
    let path = dir.path().join(&name);
    let mut data = std::fs::read(&path).unwrap();
    let whole = TableLayout::decode(&data)
        .whole_filter
        .expect("a whole-table filter");
    // Clear every bit of the filter: read as it is, it would rule out every key.
    for b in &mut data[whole.offset as usize..(whole.offset + whole.size) as usize - 6] {
        *b = 0;
    }
    std::fs::write(&path, &data).unwrap();
    // A copy for the paranoid reads and the check, before a compaction of
    // the first copy rewrites the damaged table.
    let copy = tempfile::tempdir().unwrap();
    support::copy_dir(dir.path(), &copy.path().join("db"));
    let copy = copy.path().join("db");

    // The block's checksum no longer matches: the table is read with its
    // filter block instead, and every key is there.
    let db = Db::open(dir.path(), options(true)).unwrap();
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&v[..]), "{k:?}");
    }
    drop(db);

    // Under paranoid checks the damage is an error naming the file.
    let paranoid = Options {
        paranoid_checks: true,
        ..options(true)
    };
    let report = shale::inspect::check(&copy).unwrap();
    let err = Db::open(&copy, paranoid)
        .and_then(|db| {
            for (k, _) in &model {
                db.get(k)?;
            }
            Ok(())
        })
        .expect_err("paranoid checks report the damaged filter");
    assert!(err.to_string().contains(&name), "{err}");

    // `check` reports it too.
    assert!(
        report
            .damage
            .iter()
            .any(|d| d.file.ends_with(&name) && d.offset == Some(whole.offset)),
        "{:#?}",
        report.damage
    );
}
