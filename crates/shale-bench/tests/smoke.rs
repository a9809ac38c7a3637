//! Runs the db_bench binary against every engine in this build and checks its
//! output line by line, including the "found" counts, which are
//! deterministic: the key streams are fixed (thread n of the run draws from
//! Random(1000 + n)), so the expected counts are computed here from the same
//! generator and must be identical for every engine.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use shale_bench::engine::EngineKind;
use shale_bench::random::Random;
use shale_bench::runner::available_engines;
use shale_bench::stats::parse_line;

const N: u32 = 2000;

/// The benchmarks of the smoke run; every one runs on one thread, so the
/// i-th (from 0) uses Random(1001 + i).
const BENCHMARKS: [&str; 15] = [
    "fillseq",
    "readrandom",
    "readseq",
    "readreverse",
    "seekrandom",
    "seekordered",
    "fillrandom",
    "readrandom",
    "overwrite",
    "readrandom",
    "deleterandom",
    "readrandom",
    "readmissing",
    "fillbatch",
    "readrandom",
];

fn draws(seed: u32) -> Vec<u32> {
    let mut r = Random::new(seed);
    (0..N).map(|_| r.uniform(N)).collect()
}

fn found(keys: &BTreeSet<u32>, seed: u32) -> usize {
    draws(seed).iter().filter(|k| keys.contains(k)).count()
}

/// The message each benchmark of the run must print (`None`: no message).
fn expected_messages(batches: bool) -> Vec<Option<String>> {
    let msg = |n: usize| Some(format!("({n} of {N} found)"));
    let seed = |i: usize| 1001 + i as u32;
    let mut keys: BTreeSet<u32> = draws(seed(6)).into_iter().collect(); // fillrandom
    let after_fill = found(&keys, seed(7));
    keys.extend(draws(seed(8))); // overwrite
    let after_overwrite = found(&keys, seed(9));
    for k in draws(seed(10)) {
        keys.remove(&k); // deleterandom
    }
    let after_delete = found(&keys, seed(11));
    let last = if batches {
        N as usize
    } else {
        found(&keys, seed(14))
    };
    vec![
        None,
        msg(N as usize),
        None,
        None,
        msg(N as usize),
        msg(N as usize),
        None,
        msg(after_fill),
        None,
        msg(after_overwrite),
        None,
        msg(after_delete),
        None,
        None,
        msg(last),
    ]
}

fn run(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_db_bench"))
        .args(args)
        .output()
        .expect("run db_bench")
}

/// Runs db_bench, asserts that it succeeded, and returns its stdout.
fn run_ok(args: &[String]) -> String {
    let out = run(args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

const HEADER_PREFIXES: [&str; 15] = [
    "Assertions: ",
    "Engine:     ",
    "Library:    ",
    "Date:       ",
    "CPU:        ",
    "CPUCache:   ",
    "FileSystem: ",
    "Keys:       ",
    "Values:     ",
    "Entries:    ",
    "RawSize:    ",
    "FileSize:   ",
    "WARNING: ",
    "Setting:    ",
    "------------------------------------------------",
];

/// The result lines (name, message) of a run; panics on any line that is
/// neither a header line, a result line, a "not supported" line nor an
/// `# io` line with all its fields.
fn check_lines(stdout: &str) -> Vec<(String, String)> {
    let mut results = Vec::new();
    for line in stdout.lines() {
        if HEADER_PREFIXES.iter().any(|p| line.starts_with(p)) {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# io ") {
            let mut fields = rest.split(' ');
            let bench = fields.next().unwrap_or_default();
            assert!(!bench.is_empty(), "{line}");
            let kv: Vec<(&str, &str)> = fields
                .map(|f| {
                    f.split_once('=')
                        .unwrap_or_else(|| panic!("bad field in {line}"))
                })
                .collect();
            for key in [
                "write_bytes",
                "user_bytes",
                "db_size",
                "db_alloc",
                "max_rss_kb",
                "elapsed_s",
            ] {
                let v = kv
                    .iter()
                    .find(|(k, _)| *k == key)
                    .unwrap_or_else(|| panic!("{key} missing in {line}"))
                    .1;
                assert!(v == "na" || v.parse::<f64>().is_ok(), "{key}={v} in {line}");
            }
            continue;
        }
        if let Some((name, why)) = line.split_once(" : not supported (") {
            assert!(why.ends_with(')'), "{line}");
            results.push((name.trim().to_string(), "not supported".to_string()));
            continue;
        }
        if line.starts_with("lsmiter-") {
            let (_, rate) = line.split_once(" : ").unwrap_or_else(|| panic!("{line}"));
            let rate = rate
                .strip_suffix(" ops/sec")
                .unwrap_or_else(|| panic!("{line}"));
            assert!(rate.parse::<f64>().is_ok_and(|r| r > 0.0), "{line}");
            continue;
        }
        let parsed = parse_line(line).unwrap_or_else(|| panic!("unparsable output line: {line:?}"));
        assert!(parsed.micros_per_op >= 0.0, "{line}");
        results.push((parsed.name, parsed.message));
    }
    results
}

fn smoke(kind: EngineKind) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let args: Vec<String> = vec![
        format!("--engine={}", kind.name()),
        format!("--num={N}"),
        format!("--benchmarks={}", BENCHMARKS.join(",")),
        format!("--db={}", db.display()),
        "--progress=0".to_string(),
    ];
    let out = run(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !available_engines().contains(&kind) {
        eprintln!(
            "{}: not in this build, checking that it is skipped",
            kind.name()
        );
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(
            stdout.starts_with(&format!("skipped: {} is not in this build: ", kind.name())),
            "{stdout}"
        );
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        return;
    }
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains(&format!("Engine:     {} version ", kind.name())));
    assert!(stdout.contains("Entries:    2000\n"));
    let results = check_lines(&stdout);
    let names: Vec<&str> = results.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, BENCHMARKS, "{stdout}");

    let batches = results[13].1 != "not supported";
    let expected = expected_messages(batches);
    for (i, ((name, message), want)) in results.iter().zip(expected).enumerate() {
        if let Some(want) = want {
            assert_eq!(
                message,
                &want,
                "benchmark {i} ({name}) of {}:\n{stdout}",
                kind.name()
            );
        }
    }
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("# io ")).count(),
        BENCHMARKS.len() - usize::from(!batches),
        "{stdout}"
    );
    assert!(Path::new(&db).join(".shale-bench-db").exists());
    split_benchmarks_and_lsmiter(kind);
}

/// The benchmarks added for the report's studies: BangDB-style put/get with
/// the work split over three threads, and SQLite4's `lsmiter`.
fn split_benchmarks_and_lsmiter(kind: EngineKind) {
    const T: u32 = 3;
    let dir = tempfile::tempdir().expect("tempdir");
    let stdout = run_ok(&[
        format!("--engine={}", kind.name()),
        format!("--num={N}"),
        format!("--threads={T}"),
        "--benchmarks=putseq,getseq,putrandom,getrandom,lsmiter".to_string(),
        "--key_size=12".to_string(),
        "--iterations=3".to_string(),
        "--iter_ops=200".to_string(),
        "--pause_ms=1".to_string(),
        format!("--db={}", dir.path().join("db").display()),
        "--progress=0".to_string(),
    ]);
    let results = check_lines(&stdout);
    let names: Vec<&str> = results.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["putseq", "getseq", "putrandom", "getrandom", "lsmiter"]
    );
    // Thread t of each benchmark draws its share of N from Random(seed + t);
    // seeds count threads over the run (putseq 1001.., getseq 1004.., ...).
    let share = |t: u32| (N * (t + 1) / T - N * t / T) as usize;
    let mut keys = BTreeSet::new();
    for t in 0..T {
        let mut r = Random::new(1007 + t);
        keys.extend((0..share(t)).map(|_| r.uniform(N)));
    }
    let mut hits = 0;
    for t in 0..T {
        let mut r = Random::new(1010 + t);
        hits += (0..share(t))
            .filter(|_| keys.contains(&r.uniform(N)))
            .count();
    }
    assert_eq!(results[1].1, format!("({N} of {N} found)"), "{stdout}");
    assert_eq!(results[3].1, format!("({hits} of {N} found)"), "{stdout}");
    assert_eq!(
        results[4].1, "(600 of 600 found)",
        "every lookup hits: {stdout}"
    );
    for phase in ["insert", "lookup"] {
        let iters: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("lsmiter-{phase} ")))
            .map(|l| l.split(' ').next().unwrap_or_default())
            .collect();
        assert_eq!(iters, ["0", "1", "2"], "{stdout}");
    }
}

#[test]
fn smoke_shale() {
    smoke(EngineKind::Shale);
}
#[test]
fn smoke_shale_c() {
    // Runs when libshale_c.so is in the target directory (`cargo test
    // --workspace` builds it); else checks that the engine is skipped.
    smoke(EngineKind::ShaleC);
}
#[test]
fn smoke_leveldb() {
    smoke(EngineKind::LevelDb);
}
#[test]
fn smoke_rocksdb() {
    smoke(EngineKind::RocksDb);
}
#[test]
fn smoke_sqlite3() {
    smoke(EngineKind::Sqlite3);
}
#[test]
fn smoke_kyoto_treedb() {
    smoke(EngineKind::KyotoTreeDb);
}
#[test]
fn smoke_wiredtiger_lsm() {
    smoke(EngineKind::WiredTigerLsm);
}
#[test]
fn smoke_wiredtiger_btree() {
    smoke(EngineKind::WiredTigerBtree);
}
#[test]
fn smoke_lmdb() {
    smoke(EngineKind::Lmdb);
}

/// Any engine of this build, preferring LevelDB.
fn some_engine() -> Option<EngineKind> {
    let engines = available_engines();
    if engines.contains(&EngineKind::LevelDb) {
        Some(EngineKind::LevelDb)
    } else {
        engines.first().copied()
    }
}

#[test]
fn histogram_timeseries_and_threads() {
    let Some(kind) = some_engine() else {
        eprintln!("no engine in this build; skipping");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("ts.csv");
    let stdout = run_ok(&[
        format!("--engine={}", kind.name()),
        format!("--num={N}"),
        "--threads=2".to_string(),
        "--benchmarks=fillseq,readrandom,readwhilewriting".to_string(),
        "--histogram=1".to_string(),
        format!("--timeseries={}", csv.display()),
        "--stats_interval_seconds=0.001".to_string(),
        format!("--db={}", dir.path().join("db").display()),
        "--progress=0".to_string(),
    ]);
    // Two threads each read N keys; the message keeps one thread's count.
    assert!(stdout.contains("(2000 of 2000 found)"), "{stdout}");
    assert_eq!(
        stdout.matches("Microseconds per op:\n").count(),
        3,
        "{stdout}"
    );
    assert!(stdout.contains("Percentiles: P50: "), "{stdout}");
    assert!(stdout.contains("\nCount: 4000  Average: "), "{stdout}");

    let text = std::fs::read_to_string(&csv).expect("timeseries file");
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("engine,index,benchmark,elapsed_s,ops,interval_ops_per_sec")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(!rows.is_empty());
    for r in &rows {
        assert_eq!(r.len(), 6, "{r:?}");
        assert_eq!(r[0], kind.name());
        assert!(
            r[3].parse::<f64>().is_ok()
                && r[4].parse::<u64>().is_ok()
                && r[5].parse::<f64>().is_ok()
        );
    }
    // The last sample of fillseq counts both threads' operations.
    let last_fill = rows
        .iter()
        .rev()
        .find(|r| r[2] == "fillseq")
        .expect("fillseq rows");
    assert_eq!(last_fill[4], "4000");
}

#[test]
fn print_settings_lists_the_engine_configuration() {
    let Some(kind) = some_engine() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(&[
        format!("--engine={}", kind.name()),
        "--print_settings=1".to_string(),
        "--cache_size=1048576".to_string(),
        format!("--db={}", dir.path().join("db").display()),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout.contains(&format!("Setting:    {}.", kind.name())),
        "{stdout}"
    );
    assert!(!stdout.contains("micros/op"), "{stdout}");
}

#[test]
fn the_header_shows_whether_shale_inserts_into_the_memtable_concurrently() {
    if !available_engines().contains(&EngineKind::Shale) {
        eprintln!("shale is not in this build; skipping");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    for (flag, shown) in [(None, "false"), (Some("1"), "true"), (Some("0"), "false")] {
        let mut args = vec![
            "--engine=shale".to_string(),
            "--print_settings=1".to_string(),
            format!("--db={}", dir.path().join("db").display()),
        ];
        args.extend(flag.map(|v| format!("--concurrent_memtable_writes={v}")));
        let stdout = run_ok(&args);
        let line = format!("Setting:    shale.concurrent_memtable_writes = {shown}");
        assert!(stdout.contains(&line), "{args:?}:\n{stdout}");
    }
}

#[test]
fn foreign_directories_are_not_deleted() {
    let Some(kind) = some_engine() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("precious.txt"), b"keep me").unwrap();
    let out = run(&[
        format!("--engine={}", kind.name()),
        "--num=10".to_string(),
        "--benchmarks=fillseq".to_string(),
        format!("--db={}", dir.path().display()),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to delete"));
    assert!(dir.path().join("precious.txt").exists());
}

/// Runs db_bench with `args` and `--duration=1` on some engine of this
/// build and a fresh database; `None` when the build has no engine.
fn run_capped_at_one_second(args: &[&str]) -> Option<String> {
    let Some(kind) = some_engine() else {
        eprintln!("no engine in this build; skipping");
        return None;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut all = vec![
        format!("--engine={}", kind.name()),
        format!("--db={}", dir.path().join("db").display()),
        "--duration=1".to_string(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    Some(run_ok(&all))
}

#[test]
fn duration_stops_a_benchmark_and_says_after_how_many_ops() {
    // Far more writes and reads than one second allows, on any machine.
    let Some(stdout) =
        run_capped_at_one_second(&["--benchmarks=fillrandom,readrandom", "--num=2000000000"])
    else {
        return;
    };
    let lines = check_lines(&stdout);
    assert_eq!(lines.len(), 2, "{stdout}");
    for (name, message) in &lines {
        let after = message
            .split("(stopped by --duration=1 after ")
            .nth(1)
            .unwrap_or_else(|| panic!("{name} was not stopped: {message}"));
        let ops: u64 = after
            .trim_end_matches(" ops)")
            .parse()
            .unwrap_or_else(|_| panic!("{name}: {message}"));
        assert!(ops > 0 && ops < 2_000_000_000, "{name}: {ops}");
    }
}

#[test]
fn duration_stops_lsmiter_after_whole_iterations_not_counting_pauses() {
    // 200 iterations of 30,000 writes and lookups cannot fit in one
    // second; the 1.1 s pause after each would end the run after the
    // first iteration if pauses counted towards the cap.
    let Some(stdout) = run_capped_at_one_second(&[
        "--benchmarks=lsmiter",
        "--key_size=12",
        "--iterations=200",
        "--iter_ops=30000",
        "--pause_ms=1100",
        "--progress=0",
    ]) else {
        return;
    };
    let inserts = stdout
        .lines()
        .filter(|l| l.starts_with("lsmiter-insert "))
        .count() as u64;
    let lines = check_lines(&stdout);
    assert_eq!(lines.len(), 1, "{stdout}");
    let message = &lines[0].1;
    let expected = format!(
        "(stopped by --duration=1 after {} ops, {inserts} of 200 iterations)",
        2 * inserts * 30_000
    );
    assert!(message.contains(&expected), "{expected} not in {stdout}");
    assert!(inserts < 200, "{inserts} iterations: {stdout}");
    // A second iteration starts unless the first alone kept the engine
    // busy for the whole second (a loaded machine): counting the 1.1 s
    // pause would stop the run after the first iteration whatever it took.
    if inserts < 2 {
        let busy_s: f64 = ["lsmiter-insert 0 : ", "lsmiter-lookup 0 : "]
            .iter()
            .map(|prefix| {
                let line = stdout
                    .lines()
                    .find_map(|l| l.strip_prefix(prefix))
                    .unwrap_or_else(|| panic!("no {prefix:?} line: {stdout}"));
                let rate: f64 = line
                    .trim_end_matches(" ops/sec")
                    .parse()
                    .unwrap_or_else(|_| panic!("{line}"));
                30_000.0 / rate
            })
            .sum();
        assert!(
            busy_s >= 1.0,
            "one iteration ({busy_s:.3} s busy) ended a 1 s cap: {stdout}"
        );
    }
}
