#![cfg(feature = "shale")]
//! `--compression_type` on every engine of this build that compresses like
//! LevelDB: Shale writes the chosen block type, RocksDB is given its own
//! number for the codec, and LevelDB 1.23 refuses zstd and lz4 with a clear
//! message. The header names the compression in use.

use std::path::Path;
use std::process::{Command, Output};

use shale_bench::engine::EngineKind;
use shale_bench::runner::available_engines;

fn run(engine: &str, codec: &str, db: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_db_bench"))
        .args([
            &format!("--engine={engine}"),
            &format!("--compression_type={codec}"),
            "--benchmarks=fillseq,compact,readrandom",
            "--num=3000",
            "--progress=0",
        ])
        .arg(format!("--db={}", db.display()))
        .output()
        .expect("run db_bench")
}

fn stdout_ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what}\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The data blocks' compression type bytes of the database's tables.
fn block_types(db: &Path) -> Vec<u8> {
    let mut types = Vec::new();
    for t in shale::inspect::live_tables(db).unwrap() {
        let table = shale::inspect::TableFile::open(&t.path).unwrap();
        for i in 0..table.index.len() {
            types.push(table.data_block(i).unwrap().compression);
        }
    }
    types
}

#[test]
fn shale_writes_the_block_type_asked_for() {
    for (codec, type_byte, shown) in [
        ("none", 0u8, "none"),
        ("snappy", 1, "snappy"),
        ("zstd", 2, "zstd (level 1)"),
        ("lz4", 4, "lz4"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let out = stdout_ok(&run("shale", codec, &db), codec);
        assert!(
            out.contains(&format!("Setting:    shale.compression = {shown}\n")),
            "{codec}: {out}"
        );
        assert!(out.contains("(3000 of 3000 found)"), "{out}");
        let types = block_types(&db);
        assert!(
            !types.is_empty() && types.iter().all(|&t| t == type_byte),
            "{codec}: {types:?}"
        );
    }
}

#[test]
fn rocksdb_runs_every_codec() {
    if !available_engines().contains(&EngineKind::RocksDb) {
        eprintln!("RocksDB is not in this build: skipped");
        return;
    }
    for codec in ["none", "snappy", "zstd", "lz4"] {
        let dir = tempfile::tempdir().unwrap();
        let out = stdout_ok(&run("rocksdb", codec, &dir.path().join("db")), codec);
        assert!(
            out.contains(&format!("Setting:    rocksdb.compression = {codec}\n")),
            "{codec}: {out}"
        );
        assert!(out.contains("(3000 of 3000 found)"), "{out}");
    }
}

#[test]
fn leveldb_refuses_zstd_and_lz4() {
    if !available_engines().contains(&EngineKind::LevelDb) {
        eprintln!("LevelDB is not in this build: skipped");
        return;
    }
    for codec in ["zstd", "lz4"] {
        let dir = tempfile::tempdir().unwrap();
        let out = run("leveldb", codec, &dir.path().join("db"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{codec}");
        assert!(
            stderr.contains(&format!(
                "--compression_type={codec}: LevelDB 1.23 has no {codec} compression"
            )),
            "{codec}: {stderr}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let out = stdout_ok(&run("leveldb", "snappy", &dir.path().join("db")), "snappy");
    assert!(
        out.contains("Setting:    leveldb.compression = snappy\n"),
        "{out}"
    );
}

/// `--blob_threshold`: Shale writes the large values of fill100K to blob
/// files and reads them back; another engine says the flag does not apply.
#[test]
fn blob_threshold_separates_values_in_shale_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let out = Command::new(env!("CARGO_BIN_EXE_db_bench"))
        .args([
            "--engine=shale",
            "--blob_threshold=4096",
            "--benchmarks=fill100K,readseq",
            "--num=2000",
            "--progress=0",
        ])
        .arg(format!("--db={}", db.display()))
        .output()
        .expect("run db_bench");
    let stdout = stdout_ok(&out, "shale --blob_threshold");
    assert!(
        stdout.contains("Setting:    shale.blob_threshold = 4096 bytes"),
        "{stdout}"
    );
    let blobs = std::fs::read_dir(&db)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".blob")
        })
        .count();
    assert!(blobs > 0, "no blob file in {}", db.display());

    let other = available_engines()
        .into_iter()
        .find(|&e| e != EngineKind::Shale);
    if let Some(engine) = other {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_db_bench"))
            .args([
                &format!("--engine={}", engine.name()),
                "--blob_threshold=4096",
                "--benchmarks=fillseq",
                "--num=100",
                "--progress=0",
            ])
            .arg(format!("--db={}", dir.path().join("db").display()))
            .output()
            .expect("run db_bench");
        let stdout = stdout_ok(&out, engine.name());
        assert!(
            stdout.contains("--blob_threshold does not apply"),
            "{}: {stdout}",
            engine.name()
        );
    }
}

/// `--bulk_load=1`: Shale takes the runner's bulk-load hint (a sequential
/// load into a fresh database from one thread), so `fillseq` puts its
/// entries straight into tables below level 0 and writes no log record;
/// the entries read back. A random load or one from several threads takes
/// the write path as before. Without the flag, `fillseq` writes a log.
#[test]
fn bulk_load_puts_sequential_loads_straight_into_tables() {
    let run = |args: &[&str], db: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_db_bench"))
            .args(["--engine=shale", "--num=20000", "--progress=0"])
            .args(args)
            .arg(format!("--db={}", db.display()))
            .output()
            .expect("run db_bench");
        stdout_ok(&out, &format!("{args:?}"))
    };
    let stats = |db: &Path| {
        let db = shale::Db::open(db, shale::Options::default()).unwrap();
        let files: Vec<String> = (0..7)
            .map(|l| {
                db.property(&format!("leveldb.num-files-at-level{l}"))
                    .unwrap()
            })
            .collect();
        let count = db.iter().count();
        (files, count)
    };
    let log_bytes = |db: &Path| -> u64 {
        std::fs::read_dir(db)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
            .map(|e| e.metadata().unwrap().len())
            .sum()
    };

    let dir = tempfile::tempdir().unwrap();
    let bulk = dir.path().join("bulk");
    let stdout = run(&["--bulk_load=1", "--benchmarks=fillseq,readseq"], &bulk);
    assert!(stdout.contains("shale.bulk_load = on"), "{stdout}");
    assert!(stdout.contains("readseq"), "{stdout}");
    assert_eq!(log_bytes(&bulk), 0, "a bulk load writes no log record");
    let (files, count) = stats(&bulk);
    assert_eq!(count, 20000);
    assert_eq!(files[0], "0", "{files:?}");
    assert_ne!(files[6], "0", "{files:?}");

    let plain = dir.path().join("plain");
    run(&["--benchmarks=fillseq"], &plain);
    assert!(
        log_bytes(&plain) > 0,
        "fillseq without --bulk_load logs its puts"
    );
    assert_eq!(stats(&plain).1, 20000);

    // Random keys, and two threads: the write path (the log holds them).
    for args in [
        &["--bulk_load=1", "--benchmarks=fillrandom"][..],
        &["--bulk_load=1", "--benchmarks=fillseq", "--threads=2"][..],
    ] {
        let db = dir.path().join(format!("db{}", args.len() + args[1].len()));
        run(args, &db);
        assert!(log_bytes(&db) > 0, "{args:?}: no log");
    }
}
