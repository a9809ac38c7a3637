//! The contract between db_bench and the report generator (`shale-report`),
//! checked against the real binary: every command line the report's studies
//! build is one db_bench accepts; everything db_bench prints that the report
//! reads parses; and a whole report, at a tiny scale, runs over every engine
//! in this build with a figure in every cell an engine can fill.

use std::fs;
use std::path::Path;
use std::process::Command;

use shale_bench::engine::EngineKind;
use shale_bench::engines;
use shale_bench::flags;
use shale_bench::runner::{available_engines, skipped_line};
use shale_report::engines::ENGINES;
use shale_report::parse::{parse_output, parse_timeseries, IterPhase};
use shale_report::studies::{self, Size, STUDY_IDS};

const DB_BENCH: &str = env!("CARGO_BIN_EXE_db_bench");

#[test]
fn every_command_the_report_builds_is_accepted_by_db_bench() {
    // Option variants (`shale-blobs`) run db_bench's `--engine=shale`.
    let engine_names: Vec<&str> = ENGINES
        .iter()
        .filter(|e| e.variant_of.is_none())
        .map(|e| e.name)
        .collect();
    for e in ENGINES.iter().filter(|e| e.variant_of.is_some()) {
        assert!(engine_names.contains(&e.db_bench_engine()), "{}", e.name);
    }
    // `shale-c` (Shale through its C library) is not a peer: it is run side
    // by side with `shale` to measure the C boundary, and the report does
    // not chart it.
    let charted: Vec<&str> = EngineKind::names()
        .into_iter()
        .filter(|n| *n != EngineKind::ShaleC.name())
        .collect();
    assert_eq!(engine_names, charted, "the same engines, in order");
    for id in STUDY_IDS {
        for quick in [false, true] {
            let size = Size {
                quick,
                ..Size::full(Some(80_000_000_000))
            };
            let study = studies::build(id, size).expect("known study");
            for job in &study.jobs {
                for e in &ENGINES {
                    let args = job.args(e, Path::new("/tmp/db"), Some(Path::new("/tmp/t.csv")));
                    if let Err(err) = flags::parse(&args) {
                        panic!("{id}/{}: db_bench rejects {args:?}: {err}", job.id);
                    }
                }
            }
        }
    }
}

#[test]
fn the_report_reads_everything_db_bench_prints() {
    let skipped = parse_output(&skipped_line(EngineKind::Lmdb, "header <lmdb.h> not found"))
        .expect("a skipped line parses");
    assert_eq!(
        skipped.skipped.as_deref(),
        Some("lmdb is not in this build: header <lmdb.h> not found")
    );

    for kind in available_engines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let csv = dir.path().join("ts.csv");
        let out = Command::new(DB_BENCH)
            .args([
                format!("--engine={}", kind.name()),
                "--num=500".to_string(),
                "--threads=2".to_string(),
                "--benchmarks=fillseq,fillbatch,readrandom,putseq,getseq,lsmiter".to_string(),
                "--iterations=2".to_string(),
                "--iter_ops=50".to_string(),
                format!("--timeseries={}", csv.display()),
                "--stats_interval_seconds=0.01".to_string(),
                format!("--db={}", dir.path().join("db").display()),
                "--progress=0".to_string(),
            ])
            .output()
            .expect("db_bench runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}: {stdout}", kind.name());
        let parsed = parse_output(&stdout)
            .unwrap_or_else(|e| panic!("{}: the report cannot read {e}\n{stdout}", kind.name()));
        let name = kind.name();
        let (engine, version) = parsed.engine.clone().expect("Engine: header");
        assert_eq!(engine, name);
        assert!(
            !version.is_empty() && !version.starts_with("version"),
            "{version}"
        );
        assert!(parsed.assertions.is_some(), "{name}: Assertions: header");
        for bench in ["fillseq", "readrandom", "putseq", "getseq", "lsmiter"] {
            let line = parsed
                .last_result(bench)
                .unwrap_or_else(|| panic!("{name}: no {bench} result"));
            assert!(line.ops_per_sec(2) > 0.0, "{name} {bench}");
            let io = parsed
                .last_io(bench)
                .unwrap_or_else(|| panic!("{name}: no {bench} io line"));
            assert!(io.max_rss_kb.is_some_and(|k| k > 0), "{name} {bench}");
            assert!(io.db_size > 0, "{name} {bench}");
        }
        assert_eq!(
            parsed.last_result("getseq").and_then(|l| l.found),
            Some((500, 500)),
            "{name}: the two threads' hits are summed"
        );
        match parsed.unsupported_reason("fillbatch") {
            Some(why) => assert_eq!(kind, EngineKind::KyotoTreeDb, "{name}: {why}"),
            None => assert!(parsed.last_result("fillbatch").is_some(), "{name}"),
        }
        assert_eq!(
            parsed.iteration_series(IterPhase::Insert).len(),
            2,
            "{name}"
        );
        assert_eq!(
            parsed.iteration_series(IterPhase::Lookup).len(),
            2,
            "{name}"
        );
        let samples = parse_timeseries(&fs::read_to_string(&csv).expect("timeseries CSV"))
            .unwrap_or_else(|e| panic!("{name}: timeseries {e}"));
        assert!(samples.iter().any(|s| s.bench == "putseq"), "{name}");
    }
}

/// db_bench's `crc32c`, `snappycomp` and `snappyuncomp` lines time each
/// engine's own code; an engine without such code says `not supported` for
/// them in a line the report reads, and the benchmarks after them keep
/// db_bench's seeds. (The engines that have codecs would take seconds per
/// line in a debug build; their codecs are tested in `engines`.)
#[test]
fn an_engine_without_its_own_codecs_says_so_in_a_line_the_report_reads() {
    for kind in available_engines() {
        let c = engines::codecs(kind);
        let (Err(crc_why), Err(snappy_why)) = (c.crc32c, c.snappy) else {
            continue;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let out = Command::new(DB_BENCH)
            .args([
                format!("--engine={}", kind.name()),
                "--num=100".to_string(),
                "--benchmarks=crc32c,snappycomp,snappyuncomp,fillrandom".to_string(),
                format!("--db={}", dir.path().join("db").display()),
                "--progress=0".to_string(),
            ])
            .output()
            .expect("db_bench runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let name = kind.name();
        assert!(out.status.success(), "{name}: {stdout}");
        let parsed = parse_output(&stdout)
            .unwrap_or_else(|e| panic!("{name}: the report cannot read {e}\n{stdout}"));
        assert_eq!(parsed.unsupported_reason("crc32c"), Some(crc_why.as_str()));
        for bench in ["snappycomp", "snappyuncomp"] {
            assert_eq!(
                parsed.unsupported_reason(bench),
                Some(snappy_why.as_str()),
                "{name}"
            );
            assert!(parsed.last_result(bench).is_none(), "{name}");
        }
        assert!(parsed.last_result("fillrandom").is_some(), "{name}");
        assert!(
            stdout.contains(&format!(
                "Setting:    {name}.crc32c = not supported ({crc_why})"
            )),
            "{name}: the header says what the line measures\n{stdout}"
        );
    }
}

/// The cells of one Markdown table row, without the outer pipes.
fn cells(row: &str) -> Vec<&str> {
    let inner = row.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split(" | ").map(str::trim).collect()
}

#[test]
fn a_whole_report_runs_over_the_real_db_bench() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("report");
    let args: Vec<String> = vec![
        "--quick".into(),
        "--scale=0.02".into(),
        "--runs=1".into(),
        "--studies=leveldb,wiredtiger,bangdb,sqlite4".into(),
        format!("--db-bench={DB_BENCH}"),
        format!("--db-root={}", dir.path().join("db").display()),
        format!("--out={}", out.display()),
    ];
    let opts = shale_report::cli::parse_args(args).expect("options");
    let mut log = Vec::new();
    let result = shale_report::run(&opts, "shale-report (test)", &mut log);
    let log = String::from_utf8_lossy(&log);
    result.unwrap_or_else(|e| panic!("the report failed: {e}\n{log}"));
    assert!(!log.contains("failed:"), "{log}");

    let built: Vec<&str> = available_engines().iter().map(|k| k.name()).collect();
    for study in ["leveldb", "wiredtiger", "bangdb", "sqlite4"] {
        let md = fs::read_to_string(out.join(format!("{study}.md"))).expect("study page");
        assert!(out.join(format!("{study}-raw.tsv")).is_file());
        let mut rows = 0;
        let mut header: Vec<&str> = Vec::new();
        for line in md.lines() {
            if line.starts_with("| workload (ops/s) |") {
                header = cells(line);
                continue;
            }
            if line.starts_with("|---") {
                continue;
            }
            if line.starts_with("| workload |") || !line.starts_with("| ") {
                header.clear();
                continue;
            }
            if header.is_empty() {
                continue;
            }
            let row = cells(line);
            assert_eq!(row.len(), header.len(), "{line}");
            for (engine, cell) in header.iter().zip(&row).skip(1) {
                if !built.contains(engine) {
                    continue;
                }
                rows += 1;
                let capability_gap = ENGINES.iter().find(|e| e.name == *engine).is_some_and(|e| {
                    e.lacks
                        .iter()
                        .any(|(_, why)| *cell == format!("n/a: {why}"))
                });
                assert!(
                    cell.starts_with(|c: char| c.is_ascii_digit()) || capability_gap,
                    "{study}: {engine} has no figure: {cell:?} in\n{line}"
                );
            }
        }
        assert!(
            rows > 0,
            "{study}: no table rows for the built engines\n{md}"
        );
    }
    // Section 2F: the zstd and lz4 jobs reach the engines that have those
    // blocks with the type asked for (db_bench's header names it).
    let md = fs::read_to_string(out.join("leveldb.md")).expect("study page");
    assert!(md.contains("## 2F. Compression types\n"), "{md}");
    for engine in ["shale", "rocksdb"] {
        if !built.contains(&engine) {
            continue;
        }
        for t in ["zstd", "lz4"] {
            let raw = out.join(format!("raw/leveldb/compression-{t}-{engine}-run1.txt"));
            let text = fs::read_to_string(&raw).unwrap_or_else(|e| panic!("{raw:?}: {e}"));
            assert!(
                text.contains(&format!("Setting:    {engine}.compression = {t}")),
                "{engine} {t}:\n{text}"
            );
        }
    }
    let html = fs::read_to_string(out.join("index.html")).expect("index.html");
    let pngs = fs::read_dir(out.join("charts"))
        .expect("charts")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "png"))
        })
        .count();
    assert!(pngs > 0);
    assert_eq!(
        html.matches("<svg").count(),
        pngs,
        "one inline SVG per chart"
    );
}
