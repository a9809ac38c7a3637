//! Bulk ingestion (`Db::bulk_loader`, `Db::ingest_sorted`): what it installs
//! reads back everywhere, shadows older data, stays invisible to earlier
//! snapshots and iterators, is refused whole when unsorted, lands at the
//! level it should, and goes along with writes from other threads.
//!
//! Crash safety is in `ingest_crash.rs`; opening an ingested database with
//! LevelDB 1.23 is in the `shale-compat` crate.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use shale::{CompressionType, Db, Error, IngestStats, Options, ReadOptions};
use support::{contents, contents_reverse, Pairs};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn options() -> Options {
    Options {
        create_if_missing: true,
        compression: CompressionType::None,
        max_file_size: 1 << 20,
        ..Default::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// A value of about 1 KB, different for every (key, tag).
fn value(i: u32, tag: &str) -> Vec<u8> {
    let mut v = format!("{tag}-{i}-").into_bytes();
    v.resize(1000, b'a' + (i % 26) as u8);
    v
}

/// Entries for keys `from..to` stepping by `step`, tagged `tag`.
fn entries(from: u32, to: u32, step: usize, tag: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    (from..to)
        .step_by(step)
        .map(|i| (key(i), value(i, tag)))
        .collect()
}

fn table_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ldb"))
        .collect()
}

fn files_at(db: &Db, level: usize) -> usize {
    db.stats().levels[level].files
}

/// Checks every way of reading `db` against `model`: a get of every key
/// (and of `absent` keys), a forward and a reverse walk.
fn check_reads(db: &Db, model: &Model, absent: &[Vec<u8>]) {
    for (k, v) in model {
        assert_eq!(
            db.get(k).unwrap().as_deref(),
            Some(v.as_slice()),
            "get {}",
            String::from_utf8_lossy(k)
        );
    }
    for k in absent {
        assert_eq!(db.get(k).unwrap(), None, "{}", String::from_utf8_lossy(k));
    }
    let expected: Pairs = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let forward = contents(db, &ReadOptions::default()).unwrap();
    assert!(forward == expected, "forward walk differs from the model");
    let mut reverse = contents_reverse(db, &ReadOptions::default()).unwrap();
    reverse.reverse();
    assert!(reverse == expected, "reverse walk differs from the model");
    // The Rust iterator, both ways.
    let keys: Vec<Vec<u8>> = db.iter().map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(keys.len(), model.len());
    let last = db.iter().next_back().transpose().unwrap();
    assert_eq!(
        last.map(|(k, _)| k.to_vec()),
        model.keys().next_back().cloned()
    );
}

#[test]
fn ingested_into_an_empty_database_reads_back_and_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let data = entries(0, 2500, 1, "ingested");
    let model: Model = data.iter().cloned().collect();
    let done: IngestStats;
    {
        let db = Db::open(dir.path(), options()).unwrap();
        done = db.ingest_sorted(data.iter().cloned()).unwrap();
        assert_eq!(done.entries, 2500);
        assert_eq!(done.sequence, 1);
        assert!(!done.rewritten);
        // About 2.5 MB, cut at max_file_size, 1 MB.
        assert_eq!(done.tables.len(), 3, "{done:?}");
        for t in &done.tables {
            assert_eq!(
                t.level, 6,
                "an empty database takes them at its deepest level"
            );
            assert!(t.bytes <= (1 << 20) + (64 << 10), "{t:?}");
        }
        assert_eq!(files_at(&db, 6), 3);
        assert_eq!(db.stats().last_sequence, 1);
        check_reads(&db, &model, &[key(2500), b"a".to_vec(), b"z".to_vec()]);
        // Later writes come after the ingestion.
        db.put(&key(7), b"after").unwrap();
        assert_eq!(db.get(&key(7)).unwrap().as_deref(), Some(&b"after"[..]));
        db.delete(&key(7)).unwrap();
    }
    let names: BTreeSet<String> = done
        .tables
        .iter()
        .map(|t| format!("{:06}.ldb", t.number))
        .collect();
    assert_eq!(
        table_files(dir.path()),
        names,
        "the installed tables, nothing more"
    );

    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = model;
    model.remove(&key(7));
    check_reads(&db, &model, &[key(7)]);
    assert_eq!(db.stats().last_sequence, 3);
}

#[test]
fn ingested_entries_shadow_older_values_and_deletions() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = Model::new();
    // Older values in tables, pushed down by a full compaction.
    for (k, v) in entries(0, 3000, 2, "old") {
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.compact_range(None, None).unwrap();
    let deepest = (0..7).rev().find(|&l| files_at(&db, l) > 0).unwrap();
    // Newer ones in the memtable: overwrites, new keys and deletions.
    for i in (1000..2000).step_by(3) {
        if i % 2 == 0 {
            db.delete(&key(i)).unwrap();
            model.remove(&key(i));
        } else {
            db.put(&key(i), &value(i, "memtable")).unwrap();
            model.insert(key(i), value(i, "memtable"));
        }
    }
    db.put(&key(5000), b"outside").unwrap();
    model.insert(key(5000), b"outside".to_vec());

    // The ingestion covers 1000..2000: every key of it, deleted ones too.
    let data = entries(1000, 2000, 1, "ingested");
    let done = db.ingest_sorted(data.iter().cloned()).unwrap();
    model.extend(data);
    assert!(!done.rewritten);
    for t in &done.tables {
        assert!(
            t.level < deepest,
            "{t:?} must lie above the older data at level {deepest}"
        );
    }
    check_reads(&db, &model, &[]);

    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    check_reads(&db, &model, &[]);
    // A full compaction merges the ingested tables with the older data
    // without bringing an older value back.
    db.compact_range(None, None).unwrap();
    check_reads(&db, &model, &[]);
}

#[test]
fn unsorted_or_repeated_keys_are_refused_with_nothing_installed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    db.put(b"existing", b"1").unwrap();
    let before = contents(&db, &ReadOptions::default()).unwrap();
    let sequence = db.stats().last_sequence;
    let files = table_files(dir.path());

    // Out of order after two full tables: the error names the entry's
    // position and both keys.
    let mut data = entries(0, 2500, 1, "x");
    data.push((key(100), b"back".to_vec()));
    match db.ingest_sorted(data) {
        Err(Error::InvalidArgument(why)) => {
            assert!(why.contains("entry 2501"), "{why}");
            assert!(why.contains("key000100"), "{why}");
            assert!(why.contains("key002499"), "{why}");
        }
        other => panic!("unsorted input: {other:?}"),
    }
    // A repeated key.
    match db.ingest_sorted([("a", "1"), ("b", "2"), ("b", "3")]) {
        Err(Error::InvalidArgument(why)) => {
            assert!(why.contains("entry 3") && why.contains("repeats"), "{why}");
        }
        other => panic!("repeated key: {other:?}"),
    }
    // Under another comparator, "increasing" is its order.
    let rev_dir = tempfile::tempdir().unwrap();
    let rev = Db::open(
        rev_dir.path(),
        Options {
            comparator: Arc::new(Reverse),
            ..options()
        },
    )
    .unwrap();
    rev.ingest_sorted([("c", "1"), ("b", "2"), ("a", "3")])
        .unwrap();
    assert!(rev.ingest_sorted([("x", "1"), ("y", "2")]).is_err());
    assert_eq!(rev.get(b"x").unwrap(), None);

    assert_eq!(contents(&db, &ReadOptions::default()).unwrap(), before);
    assert_eq!(db.stats().last_sequence, sequence);
    assert_eq!(
        table_files(dir.path()),
        files,
        "the refused loads left no table behind"
    );
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(contents(&db, &ReadOptions::default()).unwrap(), before);
}

/// Orders keys backwards.
struct Reverse;

impl shale::Comparator for Reverse {
    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        b.cmp(a)
    }
    fn name(&self) -> &str {
        "test.Reverse"
    }
}

#[test]
fn a_refused_entry_leaves_the_loader_usable_and_a_dropped_loader_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let files = table_files(dir.path());
    for threads in [1, 4] {
        {
            let mut loader = db.bulk_loader().unwrap().with_threads(threads).unwrap();
            for (k, v) in entries(0, 2500, 1, "dropped") {
                loader.add(&k, &v).unwrap();
            }
            if threads == 1 {
                assert!(
                    table_files(dir.path()).len() >= files.len() + 2,
                    "full tables are written as they fill"
                );
            }
            // Dropped without finish, with chunks being written when
            // several threads write them.
        }
        assert_eq!(table_files(dir.path()), files, "{threads} threads");
        assert_eq!(db.get(&key(0)).unwrap(), None);
    }

    let mut loader = db.bulk_loader().unwrap();
    loader.add(b"b", b"1").unwrap();
    assert!(loader.add(b"a", b"refused").is_err());
    loader.add(b"c", b"2").unwrap();
    assert_eq!(loader.entries(), 2);
    let done = loader.finish().unwrap();
    assert_eq!(done.entries, 2);
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"2"[..]));

    // An empty loader installs nothing.
    let sequence = db.stats().last_sequence;
    let done = db.bulk_loader().unwrap().finish().unwrap();
    assert_eq!((done.entries, done.tables.len()), (0, 0));
    assert_eq!(db.stats().last_sequence, sequence);
}

#[test]
fn snapshots_and_iterators_taken_before_do_not_see_the_ingestion() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    db.put(&key(10), b"old").unwrap();
    db.put(&key(20), b"old").unwrap();

    let mut loader = db.bulk_loader().unwrap();
    for (k, v) in entries(0, 100, 1, "new") {
        loader.add(&k, &v).unwrap();
    }
    let snap = db.snapshot();
    let mut cursor = db.cursor(&ReadOptions::default());
    let iter = db.range(key(15)..);
    loader.finish().unwrap();

    let then = ReadOptions {
        snapshot: Some(&snap),
        ..Default::default()
    };
    assert_eq!(
        db.get_with(&then, &key(10)).unwrap().as_deref(),
        Some(&b"old"[..])
    );
    assert_eq!(db.get_with(&then, &key(11)).unwrap(), None);
    let at_snap = contents(&db, &then).unwrap();
    assert_eq!(at_snap.len(), 2);
    assert_eq!(snap.iter().count(), 2);
    cursor.seek_to_first();
    let mut seen = Vec::new();
    while cursor.valid() {
        seen.push((cursor.key().to_vec(), cursor.value().to_vec()));
        cursor.next();
    }
    assert_eq!(seen, at_snap, "a cursor made before reads as of then");
    let rest: Vec<_> = iter.map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(rest, vec![key(20)]);

    // New reads see it.
    assert_eq!(db.get(&key(10)).unwrap(), Some(value(10, "new")));
    assert_eq!(db.iter().count(), 100);
}

#[test]
fn tables_go_to_the_deepest_level_free_above_and_level_0_last() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = Model::new();
    // The same range six times: each load lands one level above the last.
    for (round, level) in (1..=6).rev().enumerate() {
        let data = entries(0, 200, 1, &format!("round{round}"));
        let done = db.ingest_sorted(data.iter().cloned()).unwrap();
        model.extend(data);
        assert_eq!(done.tables.len(), 1);
        assert_eq!(done.tables[0].level, level, "round {round}");
        assert_eq!(files_at(&db, level), 1);
    }
    // A disjoint range still goes to the bottom.
    let done = db.ingest_sorted(entries(500, 600, 1, "aside")).unwrap();
    model.extend(entries(500, 600, 1, "aside"));
    assert_eq!(done.tables[0].level, 6);
    check_reads(&db, &model, &[]);

    // Levels 1 to 6 overlap: level 0. The loader's table is numbered
    // before the flush of the memtable (writes made before the load), which
    // also goes to level 0: the load's table is renamed to stay the newest.
    for i in (0..200).step_by(7) {
        db.put(&key(i), b"in the memtable").unwrap();
    }
    db.delete(&key(3)).unwrap();
    let mut loader = db.bulk_loader().unwrap();
    let data = entries(0, 200, 2, "last");
    for (k, v) in &data {
        loader.add(k, v).unwrap();
    }
    model.extend(data);
    for i in (0..200).step_by(7) {
        if i % 2 == 1 {
            model.insert(key(i), b"in the memtable".to_vec());
        }
    }
    model.remove(&key(3));
    let before = table_files(dir.path());
    let done = loader.finish().unwrap();
    assert!(!done.rewritten);
    assert_eq!(done.tables[0].level, 0);
    assert_eq!(files_at(&db, 0), 2, "the flushed memtable and the load");
    check_reads(&db, &model, &[key(3)]);
    let name = format!("{:06}.ldb", done.tables[0].number);
    assert!(
        !before.contains(&name),
        "renamed to a number after the flush's"
    );
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    check_reads(&db, &model, &[key(3)]);
}

#[test]
fn writes_during_a_load_make_it_rewrite_its_tables_under_a_newer_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut loader = db.bulk_loader().unwrap();
    let data = entries(0, 2500, 1, "loaded");
    for (k, v) in &data {
        loader.add(k, v).unwrap();
    }
    // Written after the loader started: the load is newer still.
    db.put(&key(5), b"written meanwhile").unwrap();
    db.put(b"zzz", b"elsewhere").unwrap();
    let snap = db.snapshot();
    let before = table_files(dir.path());
    let done = loader.finish().unwrap();
    assert!(done.rewritten);
    assert_eq!(done.sequence, 3);
    assert_eq!(done.tables.len(), 3);
    let after = table_files(dir.path());
    for t in &done.tables {
        let name = format!("{:06}.ldb", t.number);
        assert!(!before.contains(&name) && after.contains(&name), "{name}");
    }
    let mut model: Model = data.into_iter().collect();
    model.insert(b"zzz".to_vec(), b"elsewhere".to_vec());
    check_reads(&db, &model, &[]);
    // The snapshot, taken after the puts, still sees none of the load.
    let then = ReadOptions {
        snapshot: Some(&snap),
        ..Default::default()
    };
    assert_eq!(contents(&db, &then).unwrap().len(), 2);
    drop(snap);
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    check_reads(&db, &model, &[]);
    let on_disk = table_files(dir.path());
    for name in before.difference(&after) {
        assert!(
            !on_disk.contains(name),
            "the first tables were removed: {name}"
        );
    }
}

#[test]
fn a_compaction_during_a_load_leaves_its_tables_alone() {
    // Once the end of any compaction cleared every pending output, and the
    // cleanup after it deleted the loader's finished tables.
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options {
            write_buffer_size: 64 << 10,
            ..options()
        },
    )
    .unwrap();
    let mut loader = db.bulk_loader().unwrap();
    let data = entries(0, 2500, 1, "loaded");
    for (k, v) in &data[..1500] {
        loader.add(k, v).unwrap();
    }
    // Enough overlapping writes for real compactions (not moves).
    for round in 0..3 {
        for i in (10_000..10_400).step_by(1) {
            db.put(&key(i), &value(i, &format!("w{round}"))).unwrap();
        }
    }
    db.compact_range(None, None).unwrap();
    for (k, v) in &data[1500..] {
        loader.add(k, v).unwrap();
    }
    let done = loader.finish().unwrap();
    assert!(done.rewritten);
    let mut model: Model = data.into_iter().collect();
    for i in 10_000..10_400 {
        model.insert(key(i), value(i, "w2"));
    }
    check_reads(&db, &model, &[]);
}

#[test]
fn ingestion_goes_along_with_writers_and_their_snapshots() {
    ingestion_with_writers(false);
}

#[test]
fn ingestion_goes_along_with_writers_inserting_concurrently() {
    ingestion_with_writers(true);
}

fn ingestion_with_writers(concurrent_memtable_writes: bool) {
    support::run_guarded(
        "ingestion with concurrent writers",
        std::time::Duration::from_secs(120),
        move || {
            let dir = tempfile::tempdir().unwrap();
            let db = Arc::new(
                Db::open(
                    dir.path(),
                    Options {
                        write_buffer_size: 64 << 10,
                        concurrent_memtable_writes,
                        ..options()
                    },
                )
                .unwrap(),
            );
            let stop = Arc::new(AtomicBool::new(false));
            // Two writers: one on keys of its own, one on keys the loads
            // also write. Each checks, around every write, that a snapshot
            // taken before it reads the same before and after.
            let writers: Vec<_> = [("own", 100_000u32), ("shared", 0)]
                .into_iter()
                .map(|(name, base)| {
                    let db = db.clone();
                    let stop = stop.clone();
                    std::thread::spawn(move || {
                        let mut written = BTreeMap::new();
                        let mut n = 0u32;
                        while !stop.load(Ordering::Acquire) || n < 200 {
                            let k = key(base + (n * 7) % 3000);
                            let snap = db.snapshot();
                            let at = ReadOptions {
                                snapshot: Some(&snap),
                                ..Default::default()
                            };
                            let probe = key((n * 13) % 3000);
                            let read = |at: &ReadOptions<'_>| {
                                let v = db.get_with(at, &probe).unwrap();
                                v.map(|v| {
                                    String::from_utf8_lossy(&v[..v.len().min(20)]).into_owned()
                                })
                            };
                            let seen = read(&at);
                            let v = format!("{name}{n}").into_bytes();
                            db.put(&k, &v).unwrap();
                            written.insert(k, v);
                            assert_eq!(read(&at), seen, "snapshot moved");
                            n += 1;
                        }
                        written
                    })
                })
                .collect();
            let mut loads = Vec::new();
            for round in 0..4 {
                let data = entries(0, 3000, 2, &format!("load{round}"));
                let done = db.ingest_sorted(data.iter().cloned()).unwrap();
                loads.push((done, data));
            }
            stop.store(true, Ordering::Release);
            let mut results: Vec<BTreeMap<Vec<u8>, Vec<u8>>> =
                writers.into_iter().map(|w| w.join().unwrap()).collect();
            let shared = results.pop().unwrap();
            let own = results.pop().unwrap();

            // The last load's values, or a later write's.
            let (_, last) = loads.last().unwrap();
            let expect_check = |db: &Db| {
                for (k, v) in &own {
                    assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
                }
                for (k, v) in last {
                    let got = db.get(k).unwrap().unwrap();
                    assert!(
                        &got == v || shared.get(k) == Some(&got),
                        "{}: neither the last load's value nor a write's",
                        String::from_utf8_lossy(k)
                    );
                }
                for (k, v) in &shared {
                    let got = db.get(k).unwrap().unwrap();
                    assert!(
                        &got == v || last.iter().any(|(lk, lv)| lk == k && *lv == got),
                        "{}: lost the last write",
                        String::from_utf8_lossy(k)
                    );
                }
            };
            expect_check(&db);
            let forward = contents(&db, &ReadOptions::default()).unwrap();
            let mut reverse = contents_reverse(&db, &ReadOptions::default()).unwrap();
            reverse.reverse();
            assert!(forward == reverse);
            let db = Arc::try_unwrap(db).ok().unwrap();
            drop(db);
            let db = Db::open(dir.path(), options()).unwrap();
            expect_check(&db);
        },
    );
}

/// The rows of one table of `leveldb.stats` (the one after the line
/// `title`): level → its numbers, as printed.
fn stats_rows(db: &Db, title: &str) -> BTreeMap<usize, Vec<String>> {
    let text = db.property("leveldb.stats").unwrap();
    let mut lines = text.lines().skip_while(|l| l.trim() != title).skip(3);
    let mut rows = BTreeMap::new();
    for line in lines.by_ref() {
        let fields: Vec<String> = line.split_whitespace().map(String::from).collect();
        let Some(level) = fields.first().and_then(|f| f.parse().ok()) else {
            break;
        };
        rows.insert(level, fields[1..].to_vec());
    }
    rows
}

fn megabytes(bytes: u64) -> String {
    format!("{:.0}", bytes as f64 / 1048576.0)
}

#[test]
fn ingested_tables_count_in_the_level_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    assert!(
        !db.property("leveldb.stats").unwrap().contains("Bulk loads"),
        "no table of bulk loads before one"
    );

    // About 2.5 MB in three tables, at the deepest level.
    let done = db.ingest_sorted(entries(0, 2500, 1, "first")).unwrap();
    let bytes: u64 = done.tables.iter().map(|t| t.bytes).sum();
    assert_eq!(done.tables.len(), 3);
    let stats = db.stats();
    for (level, l) in stats.levels.iter().enumerate() {
        if level == 6 {
            assert_eq!(l.ingested_files, 3);
            assert_eq!(l.ingested_bytes, bytes);
            assert_eq!(l.compaction_bytes_written, bytes);
            assert_eq!(l.compaction_bytes_read, 0);
            assert!(l.compaction_micros > 0, "finishing took some time");
        } else {
            assert_eq!(
                (
                    l.ingested_files,
                    l.compaction_bytes_written,
                    l.compaction_micros
                ),
                (0, 0, 0),
                "level {level}"
            );
        }
    }
    let levels = stats_rows(&db, "Compactions");
    assert_eq!(levels.keys().copied().collect::<Vec<_>>(), [6]);
    // Files Size(MB) Time(sec) Read(MB) Write(MB)
    assert_eq!(levels[&6][0], "3");
    assert_eq!(levels[&6][4], megabytes(bytes), "written into level 6");
    let loads = stats_rows(&db, "Bulk loads");
    assert_eq!(loads.len(), 1);
    assert_eq!(loads[&6], ["3".to_string(), megabytes(bytes)]);

    // The same range again lands at level 5; level 6 keeps its figures.
    let again = db.ingest_sorted(entries(0, 1200, 1, "second")).unwrap();
    assert!(again.tables.iter().all(|t| t.level == 5), "{again:?}");
    let bytes5: u64 = again.tables.iter().map(|t| t.bytes).sum();
    let stats = db.stats();
    assert_eq!(stats.levels[5].ingested_files, again.tables.len() as u64);
    assert_eq!(stats.levels[5].ingested_bytes, bytes5);
    assert_eq!(stats.levels[6].ingested_files, 3);
    assert_eq!(stats.levels[6].ingested_bytes, bytes);
    let loads = stats_rows(&db, "Bulk loads");
    assert_eq!(loads.keys().copied().collect::<Vec<_>>(), [5, 6]);
    assert_eq!(loads[&5][0], again.tables.len().to_string());

    // Loads that install nothing count nothing.
    let before = db.stats();
    let property = db.property("leveldb.stats").unwrap();
    db.ingest_sorted([("x", "1"), ("w", "2")]).unwrap_err();
    let mut loader = db.bulk_loader().unwrap();
    loader.add(b"y", b"1").unwrap();
    drop(loader);
    assert_eq!(
        db.ingest_sorted(Vec::<(&str, &str)>::new())
            .unwrap()
            .entries,
        0
    );
    assert_eq!(db.stats(), before);
    assert_eq!(db.property("leveldb.stats").unwrap(), property);

    // A load rewritten under a newer sequence counts its tables once, as
    // installed; the flush its finish makes counts as a flush.
    let mut loader = db.bulk_loader().unwrap();
    for (k, v) in entries(5000, 5100, 1, "third") {
        loader.add(&k, &v).unwrap();
    }
    db.put(b"written meanwhile", b"1").unwrap();
    let third = loader.finish().unwrap();
    assert!(third.rewritten);
    let after = db.stats();
    let ingested = |s: &shale::Stats| -> (u64, u64) {
        s.levels.iter().fold((0, 0), |(f, b), l| {
            (f + l.ingested_files, b + l.ingested_bytes)
        })
    };
    let (f0, b0) = ingested(&before);
    let (f1, b1) = ingested(&after);
    assert_eq!(f1 - f0, third.tables.len() as u64);
    assert_eq!(b1 - b0, third.tables.iter().map(|t| t.bytes).sum::<u64>());
    let written =
        |s: &shale::Stats| -> u64 { s.levels.iter().map(|l| l.compaction_bytes_written).sum() };
    assert!(
        written(&after) - written(&before) > b1 - b0,
        "the flushed memtable is written too"
    );
}
