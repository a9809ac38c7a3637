//! The `shale` binary, run on databases written by LevelDB 1.23 (through
//! its C library) and by Shale: every command, its output and exit codes,
//! damaged files of every kind, export and load round trips, and a
//! database held open by another process.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use predicates::str::contains;
use shale_compat::{RefDb, RefOptions};

fn shale() -> Command {
    let mut c = Command::cargo_bin("shale").unwrap();
    c.env_remove("RUST_LOG");
    c
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i}-{}", "x".repeat((i % 50) as usize)).into_bytes()
}

/// A database written by LevelDB: `n` keys in several tables (snappy,
/// bloom filters), every tenth deleted, and a few updates left in its log.
fn leveldb_db(dir: &Path, n: u32) -> PathBuf {
    let path = dir.join("leveldb");
    let db = RefDb::open(
        &path,
        RefOptions {
            snappy: true,
            bloom_bits_per_key: Some(10),
            write_buffer_size: 64 << 10,
            max_file_size: 64 << 10,
        },
    )
    .unwrap();
    for i in 0..n {
        db.put(&key(i), &value(i)).unwrap();
    }
    for i in (0..n).step_by(10) {
        db.delete(&key(i)).unwrap();
    }
    db.compact_all();
    db.put(b"in-the-log", b"yes").unwrap();
    db.put(b"bin\x00\xff", b"v\x01").unwrap();
    path
}

/// A database written by Shale, with its tables compacted.
fn shale_db(dir: &Path, n: u32) -> PathBuf {
    let path = dir.join("shale");
    let db = shale::Db::open(
        &path,
        shale::Options {
            create_if_missing: true,
            write_buffer_size: 64 << 10,
            ..Default::default()
        },
    )
    .unwrap();
    for i in 0..n {
        db.put(&key(i), &value(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    db.put(b"in-the-log", b"yes").unwrap();
    path
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

fn manifest(dir: &Path) -> PathBuf {
    let name = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    dir.join(name.trim_end())
}

fn flip(path: &Path, offset: u64) {
    let mut data = std::fs::read(path).unwrap();
    data[offset as usize] ^= 0x40;
    std::fs::write(path, data).unwrap();
}

#[test]
fn get_put_delete_on_a_leveldb_database() {
    let tmp = tempfile::tempdir().unwrap();
    let db = leveldb_db(tmp.path(), 2000);
    shale()
        .arg("get")
        .arg(&db)
        .arg("key000001")
        .assert()
        .success()
        .stdout(format!("{}\n", String::from_utf8(value(1)).unwrap()));
    // Deleted, and never written: a negative answer, exit 1.
    shale()
        .arg("get")
        .arg(&db)
        .arg("key000010")
        .assert()
        .code(1)
        .stdout("")
        .stderr(contains("not found"));
    // Escaped bytes, hexadecimal and raw output.
    shale()
        .args(["get"])
        .arg(&db)
        .arg("bin\\x00\\xff")
        .assert()
        .success()
        .stdout("v\\x01\n");
    shale()
        .args(["get", "--hex"])
        .arg(&db)
        .arg("62696e00ff")
        .assert()
        .success()
        .stdout("7601\n");
    shale()
        .args(["get", "--raw"])
        .arg(&db)
        .arg("in-the-log")
        .assert()
        .success()
        .stdout("yes");
    // A bad escape is bad usage.
    shale()
        .arg("get")
        .arg(&db)
        .arg("bad\\q")
        .assert()
        .code(2)
        .stderr(contains("unknown escape"));

    shale()
        .arg("put")
        .arg(&db)
        .args(["new", "v\\x00"])
        .assert()
        .success();
    shale()
        .arg("delete")
        .arg(&db)
        .arg("key000001")
        .assert()
        .success();
    shale()
        .arg("get")
        .arg(&db)
        .arg("new")
        .assert()
        .stdout("v\\x00\n");
    shale()
        .arg("get")
        .arg(&db)
        .arg("key000001")
        .assert()
        .code(1);

    // LevelDB reads what the command wrote.
    let r = RefDb::open(
        &db,
        RefOptions {
            snappy: true,
            bloom_bits_per_key: Some(10),
            write_buffer_size: 64 << 10,
            max_file_size: 64 << 10,
        },
    )
    .unwrap();
    assert_eq!(r.get(b"new").unwrap().as_deref(), Some(&b"v\x00"[..]));
    assert_eq!(r.get(b"key000001").unwrap(), None);
}

#[test]
fn put_needs_create_for_a_new_database_and_errors_name_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("fresh");
    shale()
        .arg("put")
        .arg(&db)
        .args(["k", "v"])
        .assert()
        .code(3)
        .stderr(contains("fresh"));
    shale()
        .arg("put")
        .arg(&db)
        .args(["k", "v", "--create"])
        .assert()
        .success();
    shale().arg("get").arg(&db).arg("k").assert().stdout("v\n");
    shale()
        .arg("scan")
        .arg(tmp.path().join("nothing"))
        .assert()
        .code(3)
        .stderr(contains("nothing"));
}

#[test]
fn scan_and_count_select_ranges_and_formats() {
    let tmp = tempfile::tempdir().unwrap();
    let db = leveldb_db(tmp.path(), 2000);
    shale()
        .arg("scan")
        .arg(&db)
        .args(["--from", "key000011", "--limit", "2", "--keys-only"])
        .assert()
        .success()
        .stdout("key000011\nkey000012\n");
    shale()
        .arg("scan")
        .arg(&db)
        .args(["--prefix", "key00199", "--reverse", "--keys-only"])
        .assert()
        .success()
        .stdout("key001999\nkey001998\nkey001997\nkey001996\nkey001995\nkey001994\nkey001993\nkey001992\nkey001991\n");
    shale()
        .arg("scan")
        .arg(&db)
        .args(["--prefix", "bin", "--format", "json"])
        .assert()
        .success()
        .stdout("{\"key_hex\":\"62696e00ff\",\"value\":\"v\\u0001\"}\n");
    shale()
        .arg("scan")
        .arg(&db)
        .args(["--prefix", "bin", "--format", "hex"])
        .assert()
        .success()
        .stdout("62696e00ff\t7601\n");
    shale()
        .arg("scan")
        .arg(&db)
        .args(["--from", "key000001", "--to", "key000003"])
        .assert()
        .success()
        .stdout(format!(
            "key000001\t{}\nkey000002\t{}\n",
            String::from_utf8(value(1)).unwrap(),
            String::from_utf8(value(2)).unwrap()
        ));
    // 2000 keys less 200 deleted, and two written after.
    shale()
        .arg("count")
        .arg(&db)
        .assert()
        .success()
        .stdout("1802\n");
    shale()
        .arg("count")
        .arg(&db)
        .args(["--prefix", "key0001"])
        .assert()
        .success()
        .stdout("90\n");
}

#[test]
fn stats_shows_levels_counts_and_sequences() {
    let tmp = tempfile::tempdir().unwrap();
    let db = leveldb_db(tmp.path(), 3000);
    shale()
        .arg("stats")
        .arg(&db)
        .assert()
        .success()
        .stdout(contains("level").and(contains("live keys          2702")))
        .stdout(contains("compression").and(contains("newest sequence    3302")))
        .stdout(contains("oldest sequence"));
    let out = shale()
        .arg("stats")
        .arg(&db)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["live_keys"], 2702);
    assert_eq!(v["newest_sequence"], 3302);
    assert!(v["files"].as_u64().unwrap() >= 1);
    assert!(v["compression_ratio"].as_f64().unwrap() > 1.0);
    assert_eq!(v["levels"].as_array().unwrap().len(), 7);
}

#[test]
fn dump_decodes_every_kind_of_file() {
    let tmp = tempfile::tempdir().unwrap();
    let db = leveldb_db(tmp.path(), 500);
    let table = files(&db, "ldb").remove(0);
    shale()
        .arg("dump")
        .arg(&table)
        .assert()
        .success()
        .stdout(contains("footer: metaindex @"))
        .stdout(contains("filter.leveldb.BuiltinBloomFilter2"))
        .stdout(contains("index: "))
        .stdout(contains("data block 0 @0"))
        .stdout(contains("'key000001' @ 2 : put => 'value-1-x'"));
    let log = files(&db, "log").pop().unwrap();
    shale()
        .arg("dump")
        .arg(&log)
        .assert()
        .success()
        .stdout(contains("batch seq").and(contains("put 'in-the-log' => 'yes'")));
    shale()
        .arg("dump")
        .arg(manifest(&db))
        .assert()
        .success()
        .stdout(contains("comparator: leveldb.BytewiseComparator"))
        .stdout(contains("add file"));
    shale()
        .arg("dump")
        .arg(db.join("CURRENT"))
        .assert()
        .success()
        .stdout(contains("CURRENT names MANIFEST-"));
    let out = shale()
        .args(["dump", "--format", "json"])
        .arg(&table)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    for line in String::from_utf8(out).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["type"].is_string(), "{line}");
    }
    shale()
        .arg("dump")
        .arg(db.join("nope.txt"))
        .assert()
        .code(3);
}

#[test]
fn check_passes_sound_databases_of_both_writers() {
    let tmp = tempfile::tempdir().unwrap();
    for db in [leveldb_db(tmp.path(), 2000), shale_db(tmp.path(), 2000)] {
        shale()
            .arg("check")
            .arg(&db)
            .assert()
            .success()
            .stdout(contains("no damage found"));
    }
}

/// Damages one file of a fresh LevelDB database with `damage`, then
/// expects `check` to exit 1 naming `what` (a file name part) and `why`.
fn check_finds(damage: impl Fn(&Path) -> PathBuf, why: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let db = leveldb_db(tmp.path(), 2000);
    let damaged = damage(&db);
    let name = damaged.file_name().unwrap().to_string_lossy().into_owned();
    let before = std::fs::read(&damaged).ok();
    shale()
        .arg("check")
        .arg(&db)
        .assert()
        .code(1)
        .stdout(contains(format!("DAMAGED {}", damaged.display())))
        .stdout(contains(why))
        .stdout(contains("affects"));
    // The check changed nothing.
    assert_eq!(std::fs::read(&damaged).ok(), before, "{name}");
    let out = shale()
        .args(["check", "--json"])
        .arg(&db)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["ok"], false);
    assert!(v["damage"][0]["file"].as_str().unwrap().ends_with(&name));
}

#[test]
fn check_finds_a_damaged_log() {
    check_finds(
        |db| {
            let log = files(db, "log").pop().unwrap();
            flip(&log, 12);
            log
        },
        "checksum",
    );
}

#[test]
fn check_finds_a_damaged_data_block_and_names_its_keys() {
    check_finds(
        |db| {
            let t = files(db, "ldb").remove(0);
            flip(&t, 20);
            t
        },
        "data block: checksum mismatch",
    );
}

#[test]
fn check_finds_a_damaged_index_block() {
    check_finds(
        |db| {
            let t = files(db, "ldb").remove(0);
            let table = shale::inspect::TableFile::open(&t).unwrap();
            flip(&t, table.index_block.offset + 2);
            t
        },
        "index block: checksum mismatch",
    );
}

#[test]
fn check_finds_a_damaged_footer() {
    check_finds(
        |db| {
            let t = files(db, "ldb").remove(0);
            let len = std::fs::metadata(&t).unwrap().len();
            flip(&t, len - 1);
            t
        },
        "bad magic number",
    );
}

#[test]
fn check_finds_a_damaged_manifest() {
    check_finds(
        |db| {
            let m = manifest(db);
            flip(&m, 9);
            m
        },
        "checksum",
    );
}

#[test]
fn check_finds_a_damaged_current() {
    check_finds(
        |db| {
            let c = db.join("CURRENT");
            std::fs::write(&c, "MANIFEST-000999\n").unwrap();
            c
        },
        "does not exist",
    );
    check_finds(
        |db| {
            let c = db.join("CURRENT");
            std::fs::write(&c, "garbage").unwrap();
            c
        },
        "newline",
    );
}

#[test]
fn reading_a_damaged_database_fails_without_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let db = leveldb_db(tmp.path(), 2000);
    for t in files(&db, "ldb") {
        flip(&t, 20);
    }
    shale()
        .arg("count")
        .arg(&db)
        .assert()
        .code(3)
        .stderr(contains(".ldb").and(contains("panicked").not()));
    flip(&manifest(&db), 9);
    shale()
        .arg("stats")
        .arg(&db)
        .assert()
        .code(3)
        .stderr(contains("MANIFEST"));
}

fn export(db: &Path, format: &str) -> Vec<u8> {
    shale()
        .arg("export")
        .arg(db)
        .args(["--format", format])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone()
}

fn round_trip(n: u32, formats: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let src = leveldb_db(tmp.path(), n);
    for format in formats {
        let dump = export(&src, format);
        let dst = tmp.path().join(format!("copy-{format}"));
        shale()
            .arg("load")
            .arg(&dst)
            .args(["--create", "--format", format])
            .write_stdin(dump.clone())
            .assert()
            .success()
            .stderr(contains("loaded"));
        assert!(export(&dst, format) == dump, "{format}: copies differ");
        assert!(export(&dst, "kv") == export(&src, "kv"), "{format}");
    }
}

#[test]
fn export_then_load_round_trips_100k_keys_in_every_format() {
    round_trip(100_000, &["kv", "jsonl", "csv"]);
}

/// The long version: `cargo test -p shale-cli --release -- --ignored million`.
#[test]
#[ignore]
fn export_then_load_round_trips_a_million_keys() {
    round_trip(1_000_000, &["kv", "jsonl"]);
}

#[test]
fn load_reports_bad_input_with_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    shale()
        .arg("load")
        .arg(&db)
        .arg("--create")
        .write_stdin("{\"key\":\"a\",\"value\":\"1\"}\nnot json\n")
        .assert()
        .code(3)
        .stderr(contains("line 2"));
    shale()
        .arg("load")
        .arg(&db)
        .args(["--format", "kv"])
        .write_stdin(&b"SHALEKV1\x01\x00\x00\x00"[..])
        .assert()
        .code(3)
        .stderr(contains("truncated"));
}

/// Every entry of the Shale database at `db`, in key order.
fn entries_of(db: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let db = shale::Db::open(db, shale::Options::default()).unwrap();
    db.iter()
        .map(|r| {
            let (k, v) = r.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect()
}

fn jsonl(entries: &[(&str, &str)]) -> String {
    entries
        .iter()
        .map(|(k, v)| format!("{{\"key\":\"{k}\",\"value\":\"{v}\"}}\n"))
        .collect()
}

#[test]
fn load_puts_sorted_input_straight_into_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let input: String = (0..5000u32)
        .map(|i| {
            let (k, v) = (key(i), value(i));
            let (k, v) = (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap());
            format!("{{\"key\":\"{k}\",\"value\":\"{v}\"}}\n")
        })
        .collect();
    shale()
        .arg("load")
        .arg(&db)
        .arg("--create")
        .write_stdin(input)
        .assert()
        .success()
        .stderr(contains(
            "loaded 5000 entries straight into 1 table (the input is sorted)",
        ));
    // A table at the deepest level, and no write in any log.
    let logs: u64 = files(&db, "log")
        .iter()
        .map(|l| std::fs::metadata(l).unwrap().len())
        .sum();
    assert_eq!(logs, 0, "nothing went through the log");
    let stats = shale()
        .args(["stats", "--fast"])
        .arg(&db)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let stats = String::from_utf8(stats).unwrap();
    let got = entries_of(&db);
    assert_eq!(got.len(), 5000, "{stats}");
    assert!(got
        .iter()
        .enumerate()
        .all(|(i, (k, v))| *k == key(i as u32) && *v == value(i as u32)));
    let opened = shale::Db::open(&db, shale::Options::default()).unwrap();
    assert_eq!(
        opened.property("leveldb.num-files-at-level6").as_deref(),
        Some("1"),
        "{stats}"
    );
    drop(opened);

    // Into a database with data: the loaded values win, the rest stays.
    shale()
        .args(["put"])
        .arg(&db)
        .args(["key000010", "old"])
        .assert()
        .success();
    shale()
        .args(["put"])
        .arg(&db)
        .args(["zzz", "kept"])
        .assert()
        .success();
    shale()
        .arg("load")
        .arg(&db)
        .write_stdin(jsonl(&[("key000010", "new"), ("key000011", "new")]))
        .assert()
        .success()
        .stderr(contains("straight into 1 table"));
    shale()
        .arg("get")
        .arg(&db)
        .arg("key000010")
        .assert()
        .success()
        .stdout("new\n");
    shale()
        .arg("get")
        .arg(&db)
        .arg("zzz")
        .assert()
        .success()
        .stdout("kept\n");
    shale()
        .arg("count")
        .arg(&db)
        .assert()
        .success()
        .stdout("5001\n");
}

#[test]
fn load_threads_write_the_same_tables_contents() {
    // About 9 MB of sorted input: several chunks of a table's input each,
    // so that three threads write tables at once.
    let input: String = (0..40_000u32)
        .map(|i| {
            let k = String::from_utf8(key(i)).unwrap();
            let v = format!("{}-{}", "v".repeat(150 + (i % 50) as usize), i);
            format!("{{\"key\":\"{k}\",\"value\":\"{v}\"}}\n")
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let mut loaded = Vec::new();
    for threads in ["1", "3"] {
        let db = tmp.path().join(format!("db{threads}"));
        shale()
            .arg("load")
            .arg(&db)
            .args(["--create", "--threads", threads])
            .write_stdin(input.clone())
            .assert()
            .success()
            .stderr(contains("loaded 40000 entries straight into "));
        let got = entries_of(&db);
        assert_eq!(got.len(), 40_000, "--threads {threads}");
        loaded.push(got);
    }
    assert!(loaded[0] == loaded[1], "the same entries either way");
    shale()
        .arg("load")
        .arg(tmp.path().join("db0"))
        .args(["--create", "--threads", "0"])
        .write_stdin(jsonl(&[("a", "1")]))
        .assert()
        .failure()
        .stderr(contains("--threads"));
}

#[test]
fn load_with_no_bulk_writes_sorted_input_through_the_log() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let pairs: Vec<(String, String)> = (0..3000u32)
        .map(|i| {
            (
                String::from_utf8(key(i)).unwrap(),
                String::from_utf8(value(i)).unwrap(),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    shale()
        .arg("load")
        .arg(&db)
        .args(["--create", "--no-bulk", "--batch-bytes", "65536"])
        .write_stdin(jsonl(&refs))
        .assert()
        .success()
        .stderr(contains("loaded 3000 entries through "))
        .stderr(contains("write batches"));
    // The records went through the log (a bulk load writes none).
    let logs: u64 = files(&db, "log")
        .iter()
        .map(|l| std::fs::metadata(l).unwrap().len())
        .sum();
    assert!(logs > 0, "the batches were logged");
    let got = entries_of(&db);
    assert_eq!(got.len(), 3000);
    assert!(got
        .iter()
        .enumerate()
        .all(|(i, (k, v))| *k == key(i as u32) && *v == value(i as u32)));
}

#[test]
fn load_turns_to_write_batches_when_a_key_goes_back() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    // Record 4 goes back; later records win over earlier ones with their key.
    shale()
        .arg("load")
        .arg(&db)
        .arg("--create")
        .write_stdin(jsonl(&[
            ("a", "1"),
            ("c", "1"),
            ("d", "1"),
            ("b", "2"),
            ("c", "2"),
            ("a", "3"),
        ]))
        .assert()
        .success()
        .stderr(
            contains("record 4 (line 4)")
                .and(contains("not sorted"))
                .and(contains(
                    "loaded 6 entries: 3 straight into 1 table, 3 through 1 write batch",
                )),
        );
    let expected: Vec<(Vec<u8>, Vec<u8>)> = [("a", "3"), ("b", "2"), ("c", "2"), ("d", "1")]
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect();
    assert_eq!(entries_of(&db), expected);

    // A repeated key goes back too; CSV lines count the header.
    let db = tmp.path().join("csv");
    shale()
        .arg("load")
        .arg(&db)
        .args(["--create", "--format", "csv"])
        .write_stdin("key,value\nk1,first\nk2,x\nk2,second\n")
        .assert()
        .success()
        .stderr(contains("record 3 (line 4)"));
    shale()
        .arg("get")
        .arg(&db)
        .arg("k2")
        .assert()
        .success()
        .stdout("second\n");

    // Bad input while loading into tables loads nothing of them.
    let db = tmp.path().join("bad");
    shale()
        .arg("load")
        .arg(&db)
        .arg("--create")
        .write_stdin(format!("{}not json\n", jsonl(&[("a", "1"), ("b", "2")])))
        .assert()
        .code(3)
        .stderr(contains("line 3"));
    shale()
        .arg("count")
        .arg(&db)
        .assert()
        .success()
        .stdout("0\n");
}

#[test]
fn read_commands_work_while_another_process_holds_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let db = shale_db(tmp.path(), 1000);
    // This test process holds it with Shale, as another program would.
    let holder = shale::Db::open(&db, shale::Options::default()).unwrap();
    holder.put(b"held", b"1").unwrap();
    shale()
        .arg("get")
        .arg(&db)
        .arg("held")
        .assert()
        .success()
        .stdout("1\n");
    shale()
        .arg("count")
        .arg(&db)
        .assert()
        .success()
        .stdout("1002\n");
    shale().arg("stats").arg(&db).assert().success();
    shale().arg("check").arg(&db).assert().success();
    shale().arg("export").arg(&db).assert().success();
    let pid = std::process::id().to_string();
    for args in [
        vec!["put", "k", "v"],
        vec!["delete", "k"],
        vec!["compact"],
        vec!["destroy", "--yes"],
        vec!["repair"],
    ] {
        let (cmd, rest) = args.split_first().unwrap();
        shale()
            .arg(cmd)
            .arg(&db)
            .args(rest)
            .assert()
            .code(4)
            .stderr(contains("LOCK").and(contains(pid.as_str())));
    }
    drop(holder);

    // And LevelDB holding it.
    let db = leveldb_db(tmp.path(), 100);
    let holder = RefDb::open(
        &db,
        RefOptions {
            snappy: true,
            bloom_bits_per_key: None,
            write_buffer_size: 64 << 10,
            max_file_size: 64 << 10,
        },
    )
    .unwrap();
    holder.put(b"from-leveldb", b"2").unwrap();
    shale()
        .arg("get")
        .arg(&db)
        .arg("from-leveldb")
        .assert()
        .success()
        .stdout("2\n");
    shale()
        .arg("put")
        .arg(&db)
        .args(["k", "v"])
        .assert()
        .code(4)
        .stderr(contains("is open in process").and(contains(pid.as_str())));
    drop(holder);
    shale()
        .arg("put")
        .arg(&db)
        .args(["k", "v"])
        .assert()
        .success();
}

#[test]
fn compact_repair_and_destroy() {
    let tmp = tempfile::tempdir().unwrap();
    let db = leveldb_db(tmp.path(), 2000);
    shale()
        .arg("compact")
        .arg(&db)
        .assert()
        .success()
        .stdout(contains("compacted"));
    shale()
        .arg("compact")
        .arg(&db)
        .args(["--from", "key000100", "--to", "key000200"])
        .assert()
        .success();
    shale().arg("count").arg(&db).assert().stdout("1802\n");

    std::fs::remove_file(db.join("CURRENT")).unwrap();
    shale()
        .arg("count")
        .arg(&db)
        .assert()
        .code(3)
        .stderr(contains("repair"));
    shale()
        .arg("repair")
        .arg(&db)
        .assert()
        .success()
        .stdout(contains("recovered:").and(contains("1802 keys readable")))
        // Only CURRENT was missing: no record is dropped, the MANIFEST it
        // named is replaced.
        .stdout(contains("dropped nothing"))
        .stdout(contains("moved to").and(contains("MANIFEST-")));
    shale().arg("count").arg(&db).assert().stdout("1802\n");
    shale().arg("check").arg(&db).assert().success();

    // destroy asks, and without a terminal to ask on it refuses.
    shale()
        .arg("destroy")
        .arg(&db)
        .assert()
        .code(2)
        .stderr(contains("--yes"));
    assert!(db.join("CURRENT").exists());
    shale()
        .arg("destroy")
        .arg(&db)
        .arg("--yes")
        .assert()
        .success();
    assert!(!db.join("CURRENT").exists());
}

/// `repair` prints what it dropped, where, and what it moved to `lost/`.
#[test]
fn repair_names_what_it_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let db = shale_db(tmp.path(), 2000);
    let table = files(&db, "ldb").remove(0);
    // In the table's first data block, which starts the file.
    flip(&table, 20);
    let lost = db.join("lost").join(table.file_name().unwrap());
    let log = files(&db, "log").pop().unwrap();
    shale()
        .arg("repair")
        .arg(&db)
        .assert()
        .success()
        .stdout(contains(format!(
            "dropped: {} at offset 0: data block: block checksum mismatch",
            table.display()
        )))
        .stdout(contains(format!(
            "table {} could not be read whole",
            table.display()
        )))
        .stdout(contains(format!(
            "moved to {}: a damaged table",
            lost.display()
        )))
        .stdout(contains(format!(
            "log {}: 1 batch (1 update) recovered",
            log.display()
        )))
        .stdout(contains("dropped nothing").not());
    assert!(lost.exists());
    shale().arg("check").arg(&db).assert().success();
}

#[test]
fn repair_says_when_it_compacted() {
    use shale::env::FileSystem;
    use shale::internals::{
        table_file_name, InternalKey, InternalKeyComparator, TableBuilder, TableOptions, ValueType,
    };
    // Table 9 holds "k" at sequence 100, older than table 5's at 200: level
    // 0, read newest number first, would return the older one.
    let write = |dir: &Path, number: u64, entries: &[(&[u8], u64, &[u8])]| {
        let icmp = InternalKeyComparator::new(std::sync::Arc::new(shale::BytewiseComparator));
        let file = shale::env::PosixFs
            .new_writable_file(&table_file_name(dir, number))
            .unwrap();
        let mut b = TableBuilder::new(TableOptions::new(std::sync::Arc::new(icmp)), file);
        for (k, seq, v) in entries {
            b.add(InternalKey::new(k, *seq, ValueType::Value).encoded(), v)
                .unwrap();
        }
        b.finish().unwrap();
    };
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    std::fs::create_dir(&db).unwrap();
    write(&db, 5, &[(b"k", 200, b"new")]);
    write(&db, 9, &[(b"a", 90, b"a"), (b"k", 100, b"old")]);
    shale()
        .arg("repair")
        .arg(&db)
        .assert()
        .success()
        .stdout(contains(
            "compacted: a table overlapped a lower-numbered one",
        ));
    shale()
        .arg("get")
        .arg(&db)
        .arg("k")
        .assert()
        .success()
        .stdout("new\n");

    // In level 0's order: no compaction, and no such line.
    let db = tmp.path().join("ordered");
    std::fs::create_dir(&db).unwrap();
    write(&db, 5, &[(b"a", 90, b"a"), (b"k", 100, b"old")]);
    write(&db, 9, &[(b"k", 200, b"new")]);
    shale()
        .arg("repair")
        .arg(&db)
        .assert()
        .success()
        .stdout(contains("compacted").not());
}

#[test]
fn every_command_has_help_with_an_example() {
    for cmd in [
        "get", "put", "delete", "scan", "count", "stats", "dump", "check", "compact", "repair",
        "destroy", "load", "export",
    ] {
        shale()
            .args([cmd, "--help"])
            .assert()
            .success()
            .stdout(contains("Example:").and(contains(format!("shale {cmd}"))));
    }
}

/// `--compression zstd|lz4`, `--zstd-level` and `--compression-per-level`
/// choose how new tables are compressed; `dump` names each data block's
/// compression, and the database reads back.
#[test]
fn compression_flags_choose_the_block_type_dump_shows() {
    let tmp = tempfile::tempdir().unwrap();
    let mut input = String::new();
    for i in 0..2000 {
        input.push_str(&format!(
            "{{\"key\":\"key{i:05}\",\"value\":\"{}\"}}\n",
            format!("value {i};").repeat(8)
        ));
    }
    for (name, flags, shown) in [
        (
            "zstd",
            vec!["--compression", "zstd", "--zstd-level", "-1"],
            "(zstd, ",
        ),
        ("lz4", vec!["--compression", "lz4"], "(lz4, "),
        // Sorted input is loaded straight into tables, compressed as the
        // deepest level asks (the last entry).
        (
            "by-level",
            vec!["--compression-per-level", "none,lz4"],
            "(lz4, ",
        ),
        ("none", vec!["--compression", "none"], "(uncompressed, "),
    ] {
        let db = tmp.path().join(name);
        shale()
            .arg("load")
            .arg(&db)
            .arg("--create")
            .args(&flags)
            .write_stdin(input.clone())
            .assert()
            .success();
        shale()
            .arg("compact")
            .arg(&db)
            .args(&flags)
            .assert()
            .success();
        let tables = files(&db, "ldb");
        assert!(!tables.is_empty(), "{name}");
        for t in tables {
            shale()
                .arg("dump")
                .arg(&t)
                .assert()
                .success()
                .stdout(contains(shown));
        }
        shale()
            .arg("count")
            .arg(&db)
            .assert()
            .success()
            .stdout(contains("2000"));
    }
    shale()
        .args(["compact", "--compression", "gzip"])
        .arg(tmp.path().join("zstd"))
        .assert()
        .code(2);
}

/// Runs `shale args` with standard output (or error) a pipe whose reading
/// end is already closed: every write to it fails with a broken pipe.
fn run_into_closed_pipe(args: &[&std::ffi::OsStr], stderr_too: bool) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("shale"));
    cmd.args(args).env_remove("RUST_LOG");
    if stderr_too {
        cmd.stdout(std::process::Stdio::null()).stderr(writer);
    } else {
        cmd.stdout(writer).stderr(std::process::Stdio::piped());
    }
    cmd.output().unwrap()
}

#[test]
fn every_command_ends_quietly_when_its_output_is_closed() {
    let tmp = tempfile::tempdir().unwrap();
    let db = shale_db(tmp.path(), 2000);
    let table = files(&db, "ldb").remove(0);
    let db = db.as_os_str();
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    let commands: Vec<Vec<&std::ffi::OsStr>> = vec![
        vec![os("--help")],
        vec![os("--version")],
        vec![os("stats"), db],
        vec![os("stats"), db, os("--json")],
        vec![os("stats"), db, os("--progress"), os("plain")],
        vec![os("count"), db],
        vec![os("get"), db, os("key000001")],
        vec![os("get"), db, os("key000001"), os("--raw")],
        vec![os("scan"), db],
        vec![os("scan"), db, os("--limit"), os("1")],
        vec![os("dump"), table.as_os_str()],
        vec![os("dump"), table.as_os_str(), os("--format"), os("json")],
        vec![os("check"), db],
        vec![os("check"), db, os("--json")],
        vec![os("export"), db],
        vec![os("compact"), db],
        vec![os("repair"), db],
        vec![os("destroy"), db, os("--yes")],
    ];
    for args in &commands {
        let out = run_into_closed_pipe(args, false);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && !stderr.contains("panicked"),
            "shale {args:?} into a closed pipe: {}, stderr: {stderr}",
            out.status
        );
        assert_eq!(stderr, "", "shale {args:?} said something on a closed pipe");
    }
    // `destroy` ran to its end: the database is gone.
    assert!(!Path::new(db).join("CURRENT").exists());
}

#[test]
fn a_reader_that_stops_early_ends_a_long_command_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    // Far more output than a pipe holds.
    let db = shale_db(tmp.path(), 20_000);
    for cmd in ["scan", "export", "dump"] {
        let target = if cmd == "dump" {
            files(&db, "ldb").remove(0)
        } else {
            db.clone()
        };
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shale"))
            .arg(cmd)
            .arg(&target)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
        std::io::BufRead::read_line(&mut reader, &mut first).unwrap();
        assert!(!first.is_empty(), "shale {cmd} printed nothing");
        drop(reader);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && !stderr.contains("panicked"),
            "shale {cmd} | head -1: {}, stderr: {stderr}",
            out.status
        );
    }
}

#[test]
fn a_closed_standard_error_does_not_stop_a_command() {
    let tmp = tempfile::tempdir().unwrap();
    let db = shale_db(tmp.path(), 100);
    // `get` of a missing key says so on standard error, and answers 1.
    let out = run_into_closed_pipe(
        &[
            std::ffi::OsStr::new("get"),
            db.as_os_str(),
            std::ffi::OsStr::new("missing"),
        ],
        true,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "get of a missing key: {}",
        out.status
    );
    // `load` reports what it did on standard error.
    let input = tmp.path().join("in.jsonl");
    std::fs::write(&input, jsonl(&[("a", "1"), ("b", "2")])).unwrap();
    let out = run_into_closed_pipe(
        &[
            std::ffi::OsStr::new("load"),
            db.as_os_str(),
            std::ffi::OsStr::new("--input"),
            input.as_os_str(),
        ],
        true,
    );
    assert!(out.status.success(), "load: {}", out.status);
    shale()
        .arg("get")
        .arg(&db)
        .arg("b")
        .assert()
        .success()
        .stdout("2\n");
    // So does a failing command: it still fails with its code.
    let out = run_into_closed_pipe(
        &[
            std::ffi::OsStr::new("count"),
            tmp.path().join("nothing-here").as_os_str(),
        ],
        true,
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "count of no database: {}",
        out.status
    );
}

#[test]
fn other_errors_writing_the_output_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let db = shale_db(tmp.path(), 100);
    for cmd in ["stats", "count", "scan", "check", "export"] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("shale"))
            .arg(cmd)
            .arg(&db)
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(3),
            "shale {cmd} > /dev/full: {stderr}"
        );
        assert!(
            stderr.contains("standard output") && !stderr.contains("panicked"),
            "shale {cmd} > /dev/full: {stderr}"
        );
    }
}

#[test]
fn damage_found_keeps_its_exit_code_when_the_output_is_closed() {
    let tmp = tempfile::tempdir().unwrap();
    let db = leveldb_db(tmp.path(), 2000);
    let table = files(&db, "ldb").remove(0);
    flip(&table, 20);
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    for args in [
        vec![os("check"), db.as_os_str()],
        vec![os("check"), db.as_os_str(), os("--json")],
        vec![os("dump"), table.as_os_str()],
        vec![os("dump"), table.as_os_str(), os("--format"), os("json")],
    ] {
        let out = run_into_closed_pipe(&args, false);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "shale {args:?} into a closed pipe: {}, stderr: {stderr}",
            out.status
        );
        assert_eq!(stderr, "", "shale {args:?} said something on a closed pipe");
    }
}

/// A database with blob files (value separation): `get` reads separated
/// values, `dump` decodes blob files and logs' blob pointers, `check`
/// passes it and finds a damaged blob file.
#[test]
fn blob_databases_are_read_dumped_and_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("blobs");
    let big = |i: u32| format!("{i:04}-").repeat(60).into_bytes();
    {
        let db = shale::Db::open(
            &path,
            shale::Options {
                create_if_missing: true,
                blob_threshold: Some(100),
                ..Default::default()
            },
        )
        .unwrap();
        for i in 0..300 {
            db.put(&key(i), &big(i)).unwrap();
        }
        db.compact_range(None, None).unwrap();
        db.put(b"in-the-log", &big(9999)).unwrap();
    }
    shale()
        .arg("get")
        .arg(&path)
        .arg("key000007")
        .assert()
        .success()
        .stdout(format!("{}\n", String::from_utf8(big(7)).unwrap()));
    let blob = files(&path, "blob").remove(0);
    shale()
        .arg("dump")
        .arg(&blob)
        .assert()
        .success()
        .stdout(contains("@12 record of").and(contains("'key000000' => value of 300 bytes")));
    let log = files(&path, "log").pop().unwrap();
    shale()
        .arg("dump")
        .arg(&log)
        .assert()
        .success()
        .stdout(contains("put 'in-the-log' => blob pointer"));
    shale()
        .arg("check")
        .arg(&path)
        .assert()
        .success()
        .stdout(contains("no damage found"));
    flip(&blob, 500);
    shale()
        .arg("check")
        .arg(&path)
        .assert()
        .code(1)
        .stdout(contains(format!("DAMAGED {}", blob.display())));
}
