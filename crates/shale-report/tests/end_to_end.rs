//! A whole `--quick` report driven by a fake db_bench (a shell script that
//! prints canned lines), so the crate is testable without the real binary.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const FAKE: &str = include_str!("fake_db_bench.sh");

struct Setup {
    _tmp: tempfile::TempDir,
    state: PathBuf,
    out: PathBuf,
    db_root: PathBuf,
    script: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().expect("temp dir");
    let state = tmp.path().join("state");
    fs::create_dir_all(&state).unwrap();
    let script = tmp.path().join("db_bench");
    fs::write(
        &script,
        FAKE.replace("STATE_DIR", &state.display().to_string()),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    Setup {
        out: tmp.path().join("report"),
        db_root: tmp.path().join("db"),
        state,
        script,
        _tmp: tmp,
    }
}

fn run_report(s: &Setup, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_shale-report"))
        .arg("--quick")
        .arg(format!("--db-bench={}", s.script.display()))
        .arg(format!("--out={}", s.out.display()))
        .arg(format!("--db-root={}", s.db_root.display()))
        .args(extra)
        .output()
        .expect("shale-report runs")
}

fn png_ok(p: &Path) {
    let bytes = fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        p.display()
    );
    assert!(
        bytes.len() > 5_000,
        "{} is only {} bytes",
        p.display(),
        bytes.len()
    );
}

fn row<'a>(md: &'a str, label: &str) -> &'a str {
    md.lines()
        .find(|l| l.starts_with(&format!("| {label} |")))
        .unwrap_or_else(|| panic!("no row {label:?} in\n{md}"))
}

#[test]
fn quick_report_with_every_study() {
    let s = setup();
    let o = run_report(&s, &["--studies=leveldb,wiredtiger,bangdb,sqlite4"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "shale-report failed:\n{stderr}");

    // Progress and estimates on stderr.
    assert!(
        stderr.contains("study leveldb (LevelDB report):"),
        "{stderr}"
    );
    assert!(stderr.contains("expected duration about"), "{stderr}");
    assert!(
        stderr.contains("leveldb · baseline · shale · run 1/3 · elapsed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("wiredtiger · all · rocksdb · run 5/5"),
        "{stderr}"
    );
    assert!(stderr.contains("est. left"), "{stderr}");

    // The LevelDB study's table: shale 1.0/1.1/1.2 us -> median 909,091,
    // leveldb 2.0/2.1/2.2 us -> median 476,190; ratio 1.91.
    let md = fs::read_to_string(s.out.join("leveldb.md")).unwrap();
    let fillseq = row(&md, "C. Sequential writes (fillseq)");
    assert!(
        fillseq.contains("| 909,091 (833,333–1,000,000) |"),
        "{fillseq}"
    );
    assert!(
        fillseq.contains("| 476,190 (454,545–500,000) |"),
        "{fillseq}"
    );
    assert!(fillseq.contains("| 1.91 |"), "{fillseq}");
    assert!(fillseq.contains("n/a: skipped [note 1]"), "{fillseq}");
    assert!(fillseq.contains("| n/a: failed [note 2] |"), "{fillseq}");
    assert!(
        md.contains("1. skipped: kyoto-treedb is not in this build: header <kclangc.h> not found"),
        "the long reason is a note below the table"
    );
    assert!(
        md.contains(
            "2. failed: unreadable db_bench output, line 6: `quick` is not a micros/op figure"
        ),
        "{md}"
    );
    let batch = row(&md, "Sequential batches (fillbatch)");
    assert!(
        batch.contains("n/a: Kyoto TreeDB has no batch writes"),
        "capability beats skip: {batch}"
    );
    assert!(
        md.contains("n/a: SQLite3 never compresses"),
        "compression n/a"
    );
    // Resource columns: WA 2.00x, 5.7 MiB db, 20 MiB RSS; reads have no WA.
    assert!(md.contains("| 2.00× · 5.7 MiB · 20.0 MiB |"), "{md}");
    assert!(md.contains("| — · 4.8 MiB · 20.0 MiB |"), "{md}");
    // 2F: one line per benchmark and block type; engines without a type
    // are marked, not run.
    assert!(md.contains("## 2F. Compression types\n"), "{md}");
    let zstd = row(&md, "fillrandom (zstd)");
    assert!(
        zstd.starts_with("| fillrandom (zstd) | 909,091 (833,333–1,000,000) | n/a: an option variant of an engine runs only where a section asks for it [note 2] | n/a: LevelDB 1.23 has no zstd or lz4 blocks (none and snappy only) | 243,902 (238,095–250,000) | n/a: SQLite3 never compresses | n/a: Kyoto Cabinet has no zstd or lz4 compressor | n/a: db_bench loads WiredTiger's snappy compressor only | n/a: LMDB never compresses |"),
        "{zstd}"
    );
    let snappy = row(&md, "fillseq (snappy)");
    assert!(
        snappy.contains(
            "| 476,190 (454,545–500,000) | 243,902 (238,095–250,000) | n/a: SQLite3 never compresses | n/a: Kyoto TreeDB compresses with LZO (--kyoto_zcomp), not snappy | 243,902"
        ),
        "{snappy}"
    );
    let none = row(&md, "readseq (none)");
    assert!(
        none.contains("| n/a: SQLite3 never compresses (the seed repeats its baseline) |"),
        "{none}"
    );
    for t in ["none", "snappy", "zstd", "lz4"] {
        for b in [
            "fillseq",
            "fillrandom",
            "overwrite",
            "readrandom",
            "readseq",
        ] {
            // A speed row and a resource row each.
            let label = format!("| {b} ({t}) |");
            assert_eq!(
                md.lines().filter(|l| l.starts_with(&label)).count(),
                2,
                "{label}"
            );
        }
    }
    assert!(md.contains("![2F. Compression types](charts/leveldb-compression-types.png)"));
    assert!(md.contains("| zstd and lz4 blocks |"), "capability column");
    assert!(md.contains("# job compression-zstd\n"));
    assert!(md.contains("# leveldb: not run: LevelDB 1.23 has no zstd or lz4 blocks"));
    // Header facts and the commands.
    for want in [
        "- CPU: ",
        "- Memory: ",
        "- Database directory: ",
        "- Command: `",
        "--quick",
        "| shale | 9.9-fake | — | this workspace | off (release build) | ran |",
        "| leveldb | 9.9-fake | /usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0 (Debian package libleveldb1d 1.23-4) | libleveldb-dev",
        "| rocksdb | 9.9-fake | /x/target/peers/rocksdb-7.8.3-2/lib/librocksdb.so.7.8.3 (release build (-O2 -DNDEBUG) of Debian's source package rocksdb 7.8.3-2, by scripts/build-peers.sh) | librocksdb-dev ",
        "(not the library run: see the library column) |",
        "- Peer builds: rocksdb ran a release build (-O2 -DNDEBUG) of Debian's source package, made by scripts/build-peers.sh",
        "- Assertions: Debian's libleveldb (251 assert call sites) is built without -DNDEBUG",
        "--benchmarks=fillseq,fillrandom --num=1000 ",
        "--use_existing_db=0 --sync=1",
        "| lmdb | — | — | liblmdb-dev",
        "| every run failed (see the raw output) |",
        "| kyoto-treedb | — | — | libkyotocabinet-dev",
        "### Capabilities",
        "# job baseline",
        "--benchmarks=fillseq,fillrandom,overwrite,readrandom,readrandom,readseq,readreverse",
        "--cache_size=4194304",
        "![1. Baseline performance](charts/leveldb-baseline.png)",
    ] {
        assert!(md.contains(want), "leveldb.md lacks {want:?}\n{md}");
    }

    // WiredTiger: five runs, trimmed mean of shale's 1.1, 1.2, 1.3 us runs.
    let wt = fs::read_to_string(s.out.join("wiredtiger.md")).unwrap();
    let seq = row(&wt, "Sequential insert (fillseq)");
    assert!(seq.contains("| 837,218 (714,286–1,000,000) |"), "{seq}");
    assert!(wt.contains("--cache_size=134217728"));

    // BangDB: 4-thread throughput counts every thread; sqlite3 cannot.
    let bang = fs::read_to_string(s.out.join("bangdb.md")).unwrap();
    assert!(bang.contains("--key_size=10 --threads=4"), "{bang}");
    assert!(
        bang.contains("--benchmarks=putseq,getseq --num=100000"),
        "{bang}"
    );
    let put4 = bang
        .lines()
        .filter(|l| l.starts_with("| Sequential put (putseq) |"))
        .nth(2) // section 1's speed and resource rows come first
        .unwrap();
    // One run (the seed's), 4 threads at 1.0 us/op of summed thread time:
    // 4 / 1.0 us = 4,000,000 ops/s.
    assert!(put4.contains("| 4,000,000 |"), "{put4}");
    assert!(bang.contains("charts/bangdb-seq-1t-putseq.png"));

    // SQLite4: per-iteration lines.
    let lsm = fs::read_to_string(s.out.join("sqlite4.md")).unwrap();
    assert!(lsm.contains("--benchmarks=lsmiter"));
    assert!(lsm.contains("--iterations=20 --iter_ops=5000 --pause_ms=250"));
    let mean = row(&lsm, "Lookups, mean over iterations");
    // Lookups: 200000 - 500 i for i in 0..20 -> mean 195,250.
    assert!(mean.contains("| 195,250 |"), "{mean}");
    // Resource rows: the inserts wrote (3.00x), the lookups did not.
    let res = |label: &str| {
        lsm.lines()
            .filter(|l| l.starts_with(&format!("| {label} |")))
            .nth(1)
            .unwrap()
            .to_string()
    };
    assert!(
        res("Inserts, mean over iterations").contains("| 3.00× · 3.8 MiB · 20.0 MiB |"),
        "{lsm}"
    );
    assert!(
        res("Lookups, mean over iterations").contains("| — · 3.8 MiB · 20.0 MiB |"),
        "{lsm}"
    );

    // index.html: one inline SVG per chart, and every chart's PNG renders.
    let html = fs::read_to_string(s.out.join("index.html")).unwrap();
    let pngs: Vec<PathBuf> = fs::read_dir(s.out.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    // leveldb 9 bars; wiredtiger 6; bangdb 4 bars + 8 lines; sqlite4 3 + 6.
    assert_eq!(pngs.len(), 9 + 6 + 12 + 9);
    assert_eq!(html.matches("<svg").count(), pngs.len());
    for p in &pngs {
        png_ok(p);
        let rel = format!("charts/{}", p.file_name().unwrap().to_string_lossy());
        assert!(html.contains(&rel), "index.html does not link {rel}");
        assert!(p.with_extension("svg").is_file());
    }
    for want in [
        "CPU:",
        "Command:",
        "Chart font:",
        "Capabilities",
        "shale/leveldb",
    ] {
        assert!(html.contains(want), "index.html lacks {want:?}");
    }

    // Interleaving: run 1 of every job and engine, then run 2, ... and each
    // engine in its own fresh directory under the db root.
    let log = fs::read_to_string(s.state.join("args.log")).unwrap();
    let baseline: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("leveldb-baseline-"))
        .map(|l| {
            l.split_whitespace()
                .find_map(|a| a.strip_prefix("--engine="))
                .unwrap()
        })
        .collect();
    assert_eq!(
        baseline,
        [
            "shale",
            "shale", // shale-bulk
            "leveldb",
            "rocksdb",
            "sqlite3",
            "kyoto-treedb",
            "wiredtiger-btree",
            "lmdb", // run 1; kyoto is not started again
            "shale",
            "shale",
            "leveldb",
            "rocksdb",
            "sqlite3",
            "wiredtiger-btree",
            "lmdb",
            "shale",
            "shale",
            "leveldb",
            "rocksdb",
            "sqlite3",
            "wiredtiger-btree",
            "lmdb"
        ]
    );
    // The LevelDB study leaves WiredTiger's LSM tree out by default and says
    // so; the other studies run it.
    assert!(log
        .lines()
        .any(|l| l.contains("--engine=wiredtiger-lsm") && l.contains("/wiredtiger-")));
    let md = fs::read_to_string(s.out.join("leveldb.md")).unwrap();
    assert!(md.contains("wiredtiger-lsm is left out of this study by default"));
    let order: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("--engine=shale") && l.contains("/leveldb-"))
        .map(|l| {
            l.split_whitespace()
                .find_map(|a| a.strip_prefix("--db="))
                .unwrap()
        })
        .collect();
    assert!(order[0].ends_with("leveldb-baseline-shale"));
    assert!(order[1].ends_with("leveldb-baseline-shale-bulk"));
    assert!(order[2].ends_with("leveldb-large-values-shale"));
    // Shale with value separation runs the large values (the LevelDB
    // study's section and the WiredTiger study's one process, which ends
    // with fill100K), and nothing else.
    assert!(order[3].ends_with("leveldb-large-values-shale-blobs"));
    assert!(order[4].ends_with("leveldb-large-values-shale-bulk"));
    // Shale with its bulk loader runs the jobs that start with a sequential
    // load from one thread: five of the LevelDB study's (3 runs each), the
    // WiredTiger study's one (5 runs), the BangDB study's seq-1t (1 run).
    let bulk: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("--bulk_load=1"))
        .collect();
    let bulk_in = |dir: &str| bulk.iter().filter(|l| l.contains(dir)).count();
    for job in [
        "baseline",
        "large-values",
        "batch",
        "no-compression",
        "more-memory",
    ] {
        assert_eq!(
            bulk_in(&format!("/leveldb-{job}-shale-bulk ")),
            3,
            "{job}: {bulk:?}"
        );
    }
    assert_eq!(bulk_in("/wiredtiger-all-shale-bulk "), 5, "{bulk:?}");
    assert_eq!(bulk_in("/bangdb-seq-1t-shale-bulk"), 1, "{bulk:?}");
    assert_eq!(bulk.len(), 15 + 5 + 1, "{bulk:?}");
    assert!(bulk.iter().all(|l| l.contains("--engine=shale ")));
    let blobs: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("--blob_threshold="))
        .collect();
    let in_dir = |dir: &str| blobs.iter().filter(|l| l.contains(dir)).count();
    assert_eq!(in_dir("/leveldb-large-values-shale-blobs "), 3, "{blobs:?}");
    assert_eq!(in_dir("/wiredtiger-all-shale-blobs "), 5, "{blobs:?}");
    assert_eq!(blobs.len(), 8, "{blobs:?}");
    assert!(blobs.iter().all(|l| l.contains("--engine=shale ")));
    assert!(md.contains("| shale-blobs/leveldb |"), "{md}");
    let baseline = &md[md.find("## 1. Baseline").unwrap()..md.find("## 2A.").unwrap()];
    assert!(!baseline.contains("shale-blobs"), "{baseline}");
    assert!(baseline.contains("shale-bulk/leveldb"), "{baseline}");
    assert!(order[13].ends_with("leveldb-compression-zstd-shale"));
    assert!(order[14].ends_with("leveldb-compression-lz4-shale"));
    assert!(
        order[15].ends_with("leveldb-baseline-shale"),
        "run 2 starts after run 1"
    );
    // The block type reaches db_bench only for the engines that have it.
    let typed: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("--compression_type="))
        .collect();
    assert_eq!(typed.len(), 2 * 2 * 3, "{typed:?}");
    for l in typed {
        assert!(
            l.contains("--engine=shale ") || l.contains("--engine=rocksdb "),
            "{l}"
        );
        assert!(!l.contains("--compression="), "{l}");
        let zstd = l.contains("/leveldb-compression-zstd-");
        assert!(zstd || l.contains("/leveldb-compression-lz4-"), "{l}");
        let want = if zstd {
            "--compression_type=zstd "
        } else {
            "--compression_type=lz4 "
        };
        assert!(l.contains(want), "{l}");
    }
    assert!(!log.contains("was not fresh"));
    assert!(!log.contains("no database to reuse"));
    let reused = log
        .lines()
        .filter(|l| l.contains("--use_existing_db=1"))
        .collect::<Vec<_>>();
    assert!(
        !reused.is_empty()
            && reused
                .iter()
                .all(|l| l.contains("/leveldb-larger-caches-") && !l.contains("--engine=shale")),
        "only single-cache engines reuse, in the larger-caches job: {reused:?}"
    );
    let leftovers: Vec<_> = fs::read_dir(&s.db_root).unwrap().collect();
    assert!(
        leftovers.is_empty(),
        "database directories are removed after each run: {leftovers:?}"
    );
    // Raw output kept.
    assert!(s.out.join("raw/leveldb/baseline-shale-run1.txt").is_file());
    let tsv = fs::read_to_string(s.out.join("leveldb-raw.tsv")).unwrap();
    let cols = tsv.lines().next().unwrap().split('\t').count();
    for l in tsv.lines() {
        assert_eq!(l.split('\t').count(), cols, "{l}");
    }
}

#[test]
fn jobs_runs_only_the_named_jobs() {
    let s = setup();
    let o = run_report(
        &s,
        &[
            "--studies=leveldb,sqlite4",
            "--jobs=compression-lz4,compression-zstd",
            "--runs=1",
        ],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "shale-report failed:\n{stderr}");
    assert!(
        stderr.contains("study sqlite4: none of the jobs named by --jobs; not run"),
        "{stderr}"
    );
    assert!(!s.out.join("sqlite4.md").exists());
    // Only Shale and RocksDB have the types; each job ran once for each.
    let log = fs::read_to_string(s.state.join("args.log")).unwrap();
    let runs: Vec<&str> = log.lines().collect();
    assert_eq!(runs.len(), 4, "{log}");
    for (l, (job, engine)) in runs.iter().zip([
        ("compression-zstd", "shale"),
        ("compression-zstd", "rocksdb"),
        ("compression-lz4", "shale"),
        ("compression-lz4", "rocksdb"),
    ]) {
        assert!(l.contains(&format!("--engine={engine} ")), "{l}");
        assert!(l.contains(&format!("/leveldb-{job}-{engine} ")), "{l}");
    }
    let md = fs::read_to_string(s.out.join("leveldb.md")).unwrap();
    assert!(md.contains("## 2F. Compression types\n"), "{md}");
    assert!(!md.contains("## 1. Baseline performance"), "{md}");
    assert!(!md.contains("## 2D. Turning compression off"), "{md}");
    assert!(
        md.contains("Run with --jobs=compression-lz4,compression-zstd: only those jobs ran. Sections left out (none of their jobs ran): 1. Baseline performance; 2A. Large values;"),
        "{md}"
    );
    assert!(
        md.contains("10 of the section's 20 lines are left out"),
        "{md}"
    );
    let zstd = row(&md, "fillrandom (zstd)");
    assert!(zstd.contains("| 1,000,000 | n/a: LevelDB 1.23"), "{zstd}");
    assert!(!md.contains("| fillrandom (snappy) |"), "{md}");
    let charts: Vec<_> = fs::read_dir(s.out.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".png"))
        .collect();
    assert_eq!(charts, ["leveldb-compression-types.png"]);
    let html = fs::read_to_string(s.out.join("index.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 1);
    assert!(html.contains("2F. Compression types"));

    // The dry run plans the same jobs and prices only them.
    let o = run_report(&s, &["--dry-run", "--jobs=compression-zstd"]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--compression_type=zstd"), "{err}");
    assert!(
        err.contains("# compression-zstd leveldb: not run: LevelDB 1.23 has no zstd or lz4 blocks"),
        "{err}"
    );
    assert!(!err.contains("/leveldb-baseline-"), "{err}");
    assert!(!err.contains("compression_type=lz4"), "{err}");
    assert!(
        err.contains("# expected duration of leveldb: about"),
        "{err}"
    );

    let o = run_report(&s, &["--jobs=nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no job `nope`"));
}

/// The columns of every speed table in a study's page, with the heading of
/// the section it belongs to.
fn speed_tables(md: &str) -> Vec<(String, Vec<String>)> {
    let mut heading = String::new();
    let mut out = Vec::new();
    for l in md.lines() {
        if let Some(h) = l.strip_prefix("## ") {
            heading = h.to_string();
        } else if let Some(cols) = l.strip_prefix("| workload (ops/s) |") {
            let cols = cols
                .split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect();
            out.push((heading.clone(), cols));
        }
    }
    out
}

#[test]
fn option_variants_run_and_get_columns_only_where_their_jobs_name_them() {
    let s = setup();
    let o = run_report(
        &s,
        &[
            "--studies=leveldb,wiredtiger,bangdb,bangdb-scale,sqlite4",
            "--engines=shale,shale-split,shale-blobs,leveldb",
        ],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "shale-report failed:\n{stderr}");
    assert!(!stderr.contains("shale-split is left out"), "{stderr}");
    assert!(
        stderr.contains("bangdb · seq-4t · shale-split · run 1/1"),
        "{stderr}"
    );

    // Every process a variant ran: db_bench's Shale with the variant's flag,
    // in the variant's own directories, and only in the jobs naming it.
    let log = fs::read_to_string(s.state.join("args.log")).unwrap();
    let db_of = |l: &str| {
        l.split_whitespace()
            .find_map(|a| a.strip_prefix("--db="))
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
            .to_string()
    };
    let runs_of = |variant: &str, flag: &str| {
        let mut dirs: Vec<String> = log
            .lines()
            .filter(|l| db_of(l).ends_with(&format!("-{variant}")))
            .map(|l| {
                assert!(l.starts_with("--engine=shale "), "{l}");
                assert!(l.split_whitespace().any(|a| a == flag), "{l}");
                db_of(l)
            })
            .collect();
        let flagged = log.lines().filter(|l| l.contains(flag)).count();
        assert_eq!(flagged, dirs.len(), "{flag} outside {variant}'s runs");
        dirs.dedup();
        (dirs, flagged)
    };
    let (split, n) = runs_of("shale-split", "--split_flushes=1");
    assert_eq!(split, ["bangdb-seq-4t-shale-split"]);
    assert_eq!(n, 1, "one run, as every BangDB job");
    let split_line = log
        .lines()
        .find(|l| l.contains("--split_flushes="))
        .unwrap();
    assert!(split_line.contains(" --threads=4 "), "{split_line}");
    assert!(
        split_line.contains(" --benchmarks=putseq,getseq "),
        "{split_line}"
    );
    assert!(!split_line.contains("--blob_threshold"), "{split_line}");
    let (blobs, n) = runs_of("shale-blobs", "--blob_threshold=4096");
    assert_eq!(
        blobs,
        [
            "leveldb-large-values-shale-blobs",
            "wiredtiger-all-shale-blobs"
        ]
    );
    assert_eq!(
        n,
        3 + 5,
        "the LevelDB study's 3 runs, the WiredTiger study's 5"
    );
    assert!(!log
        .lines()
        .any(|l| l.contains("--blob_threshold") && l.contains("--split_flushes")));

    // A variant has a column only in the sections whose jobs name it.
    let mut split_sections = Vec::new();
    let mut blobs_sections = Vec::new();
    for study in ["leveldb", "wiredtiger", "bangdb", "bangdb-scale", "sqlite4"] {
        let md = fs::read_to_string(s.out.join(format!("{study}.md"))).unwrap();
        let tables = speed_tables(&md);
        assert!(!tables.is_empty(), "{study}");
        for (heading, cols) in tables {
            assert!(cols.contains(&"shale".to_string()), "{study}: {heading}");
            assert!(cols.contains(&"leveldb".to_string()), "{study}: {heading}");
            if cols.contains(&"shale-split".to_string()) {
                assert!(cols.contains(&"shale-split/leveldb".to_string()));
                split_sections.push(format!("{study}: {heading}"));
            }
            if cols.contains(&"shale-blobs".to_string()) {
                blobs_sections.push(format!("{study}: {heading}"));
            }
        }
    }
    assert_eq!(
        split_sections,
        ["bangdb: 2. Sequential put and get, 4 threads"]
    );
    assert_eq!(blobs_sections.len(), 1 + 6, "{blobs_sections:?}");
    assert!(blobs_sections[0].starts_with("leveldb: 2A. Large values"));
    assert!(blobs_sections[1..]
        .iter()
        .all(|h| h.starts_with("wiredtiger: ")));
    // shale-split's figure (the fake's Shale speed, 4 threads).
    let bang = fs::read_to_string(s.out.join("bangdb.md")).unwrap();
    let section2 = &bang[bang.find("## 2. ").unwrap()..bang.find("## 3. ").unwrap()];
    let put = row(section2, "Sequential put (putseq)");
    assert!(
        put.starts_with("| Sequential put (putseq) | 4,000,000 | 4,000,000 | "),
        "{put}"
    );
    // The over-time charts draw it in that section only.
    for chart in ["seq-1t", "seq-4t", "rand-1t", "rand-4t"] {
        for bench in ["putseq", "getseq", "putrandom", "getrandom"] {
            let svg = s.out.join(format!("charts/bangdb-{chart}-{bench}.svg"));
            if let Ok(svg) = fs::read_to_string(&svg) {
                assert_eq!(
                    svg.contains("shale-split"),
                    chart == "seq-4t",
                    "bangdb-{chart}-{bench}"
                );
            }
        }
    }
    assert!(s.out.join("charts/bangdb-seq-4t-putseq.svg").is_file());
}

#[test]
fn dry_run_prints_every_command_and_runs_nothing() {
    let s = setup();
    let o = run_report(
        &s,
        &["--dry-run", "--studies=sqlite4", "--engines=shale,sqlite3"],
    );
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--engine=shale"), "{err}");
    assert!(err.contains("--engine=sqlite3"), "{err}");
    assert!(err.contains("--pause_ms=250"), "{err}");
    assert!(
        err.contains("# expected duration of sqlite4: about"),
        "{err}"
    );
    assert!(!s.state.join("args.log").exists());
}

#[test]
fn bad_options_and_missing_binary_are_errors() {
    let s = setup();
    let o = run_report(&s, &["--studies=nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown study"));
    let o = Command::new(env!("CARGO_BIN_EXE_shale-report"))
        .args(["--quick", "--db-bench=/nonexistent/db_bench"])
        .arg(format!("--db-root={}", s.db_root.display()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no such file"));
}
