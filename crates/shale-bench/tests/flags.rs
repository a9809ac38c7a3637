//! Command-line parsing: db_bench's flags and defaults, ours, and errors.

use std::path::PathBuf;
use std::process::Command;

use shale_bench::engine::EngineKind;
use shale_bench::flags::{parse, Codec, FlagError, Flags, DEFAULT_BENCHMARKS};

fn ok(args: &[&str]) -> Flags {
    parse(args).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn invalid(args: &[&str]) -> String {
    match parse(args) {
        Err(FlagError::Invalid(msg)) => msg,
        other => panic!("{args:?} should be rejected, got {other:?}"),
    }
}

#[test]
fn defaults_are_db_bench_defaults() {
    let f = ok(&[]);
    assert_eq!(f.benchmarks.join(","), DEFAULT_BENCHMARKS);
    assert_eq!(f.num, 1_000_000);
    assert_eq!(f.reads, -1);
    assert_eq!(f.reads(), 1_000_000);
    assert_eq!(f.threads, 1);
    assert_eq!(f.value_size, 100);
    assert_eq!(f.compression_ratio, 0.5);
    assert!(!f.histogram && !f.comparisons && !f.use_existing_db && !f.reuse_logs);
    assert_eq!(f.write_buffer_size, 4 << 20);
    assert_eq!(f.max_file_size, 2 << 20);
    assert_eq!(f.block_size, 4096);
    assert_eq!(f.cache_size, -1);
    assert_eq!(f.bloom_bits, -1);
    assert_eq!(f.open_files, 1000);
    assert_eq!(f.compression, Codec::Snappy);
    assert_eq!(f.engine, EngineKind::Shale);
    assert_eq!(f.key_size, 16);
    assert_eq!(f.seed, 1000);
    assert_eq!(f.db_path(), PathBuf::from("/tmp/dbbench-shale"));
    assert!(!f.sync);
    assert!(!f.concurrent_memtable_writes);
    assert_eq!((f.iterations, f.iter_ops, f.pause_ms), (200, 50_000, 0));
}

#[test]
fn every_flag_is_accepted() {
    let f = ok(&[
        "--benchmarks=fillseq,readrandom",
        "--num=5000",
        "--reads=300",
        "--threads=4",
        "--value_size=16",
        "--compression_ratio=0.25",
        "--histogram=1",
        "--comparisons=1",
        "--use_existing_db=1",
        "--reuse_logs=1",
        "--write_buffer_size=1048576",
        "--max_file_size=4194304",
        "--block_size=8192",
        "--cache_size=134217728",
        "--bloom_bits=10",
        "--open_files=500",
        "--key_prefix=3",
        "--db=/tmp/x",
        "--compression=0",
        "--engine=wiredtiger-lsm",
        "--key_size=10",
        "--seed=7",
        "--print_settings=1",
        "--timeseries=/tmp/ts.csv",
        "--stats_interval_seconds=0.5",
        "--stats_interval_ops=1000",
        "--progress=0",
        "--wt_log=0",
        "--kyoto_zcomp=def",
        "--lmdb_map_size=1073741824",
        "--sync=1",
        "--iterations=20",
        "--iter_ops=5000",
        "--pause_ms=250",
        "--concurrent_memtable_writes=1",
        "--blob_threshold=4096",
        "--bulk_load=1",
    ]);
    assert_eq!(f.benchmarks, ["fillseq", "readrandom"]);
    assert_eq!(
        (f.num, f.reads, f.threads, f.value_size),
        (5000, 300, 4, 16)
    );
    assert_eq!(f.compression_ratio, 0.25);
    assert!(f.histogram && f.comparisons && f.use_existing_db && f.reuse_logs);
    assert_eq!(
        (f.write_buffer_size, f.max_file_size, f.block_size),
        (1 << 20, 4 << 20, 8192)
    );
    assert_eq!(
        (f.cache_size, f.bloom_bits, f.open_files),
        (128 << 20, 10, 500)
    );
    assert_eq!(f.key_prefix, 3);
    assert_eq!(f.db_path(), PathBuf::from("/tmp/x"));
    assert_eq!(f.compression, Codec::None);
    assert_eq!(f.engine, EngineKind::WiredTigerLsm);
    assert_eq!((f.key_size, f.seed), (10, 7));
    assert!(f.print_settings);
    assert_eq!(f.timeseries, Some(PathBuf::from("/tmp/ts.csv")));
    assert_eq!(f.stats_interval_seconds, 0.5);
    assert_eq!(f.stats_interval_ops, 1000);
    assert!(!f.progress && !f.wt_log);
    assert_eq!(f.kyoto_zcomp, "def");
    assert_eq!(f.lmdb_map_size, 1 << 30);
    assert!(f.sync);
    assert_eq!((f.iterations, f.iter_ops, f.pause_ms), (20, 5000, 250));
    assert!(f.concurrent_memtable_writes);
    assert_eq!(f.blob_threshold, 4096);
    assert!(f.bulk_load);
}

#[test]
fn later_flags_override_earlier_ones_and_values_may_contain_equals() {
    let f = ok(&["--num=1", "--num=2", "--db=/tmp/a=b"]);
    assert_eq!(f.num, 2);
    assert_eq!(f.db_path(), PathBuf::from("/tmp/a=b"));
    // Negative values mean "default" for these, as in db_bench.
    let f = ok(&["--reads=-5", "--cache_size=-1", "--bloom_bits=-1"]);
    assert_eq!(f.reads(), 1_000_000);
    assert_eq!(f.cache_size, -1);
}

#[test]
fn every_engine_name_parses() {
    for kind in EngineKind::ALL {
        assert_eq!(ok(&[&format!("--engine={}", kind.name())]).engine, kind);
    }
    assert_eq!(
        ok(&["--engine=leveldb"]).db_path(),
        PathBuf::from("/tmp/dbbench-leveldb")
    );
}

#[test]
fn unknown_and_malformed_flags_are_errors() {
    assert!(invalid(&["--nmu=5"]).contains("unknown flag '--nmu=5'"));
    assert!(invalid(&["--num"]).contains("--name=value"));
    assert!(invalid(&["num=5"]).contains("--name=value"));
    assert!(invalid(&["-num=5"]).contains("--name=value"));
    assert_eq!(parse(["--help"]), Err(FlagError::Help));
}

#[test]
fn bad_values_are_errors() {
    for bad in [
        "--num=abc",
        "--num=-1",
        "--duration=-1",
        "--duration=1.5",
        "--mmap_read=2",
        "--concurrent_memtable_writes=2",
        "--blob_threshold=-1",
        "--num=3000000000",
        "--num=10x",
        "--threads=0",
        "--histogram=2",
        "--histogram=yes",
        "--compression=true",
        "--compression_ratio=nan",
        "--compression_ratio=-0.5",
        "--value_size=2000000",
        "--engine=bangdb",
        "--key_size=0",
        "--db=",
        "--kyoto_zcomp=brotli",
        "--stats_interval_seconds=-1",
        "--lmdb_map_size=5",
        "--iterations=0",
        "--iter_ops=-3",
        "--sync=2",
    ] {
        let msg = invalid(&[bad]);
        assert!(msg.contains(bad), "{bad}: {msg}");
    }
}

#[test]
fn unknown_benchmarks_are_errors_before_anything_runs() {
    let msg = invalid(&["--benchmarks=fillseq,fillseqsync,readrandom"]);
    assert!(msg.contains("unknown benchmark 'fillseqsync'"), "{msg}");
    assert!(
        msg.contains("fillsync"),
        "the message lists the known names: {msg}"
    );
    // Empty names are skipped, as in db_bench.
    assert_eq!(ok(&["--benchmarks=fillseq,,readseq"]).benchmarks.len(), 3);
    // Every added benchmark is accepted.
    let f = ok(&["--benchmarks=fillrandbatch,putseq,putrandom,getseq,getrandom,lsmiter"]);
    assert_eq!(f.benchmarks.len(), 6);
    let msg = invalid(&["--iterations=100000", "--iter_ops=100000"]);
    assert!(msg.contains("inserts"), "{msg}");
}

#[test]
fn the_binary_exits_with_code_2_on_bad_flags() {
    let bin = env!("CARGO_BIN_EXE_db_bench");
    for args in [
        &["--bogus=1"][..],
        &["--num=abc"],
        &["--histogram"],
        &["--benchmarks=fillseq,nosuchbench"],
    ] {
        let out = Command::new(bin).args(args).output().expect("run db_bench");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("db_bench: "), "{stderr}");
    }
    let out = Command::new(bin)
        .arg("--help")
        .output()
        .expect("run db_bench");
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--benchmarks="));
    assert!(
        help.contains("\n  lsmiter "),
        "--help lists the benchmarks: {help}"
    );
}

/// `--compression_type` takes RocksDB's names; `--compression=0|1` stays
/// LevelDB's switch; the later of the two wins.
#[test]
fn compression_type_names_the_codec() {
    for (name, codec, leveldb, rocksdb) in [
        ("none", Codec::None, 0, 0),
        ("snappy", Codec::Snappy, 1, 1),
        ("zstd", Codec::Zstd, 2, 7),
        ("lz4", Codec::Lz4, 4, 4),
    ] {
        let f = ok(&[&format!("--compression_type={name}")]);
        assert_eq!(f.compression, codec);
        assert_eq!(codec.name(), name);
        assert_eq!(
            (codec.leveldb_type(), codec.rocksdb_type()),
            (leveldb, rocksdb)
        );
    }
    assert_eq!(
        ok(&["--compression=0", "--compression_type=zstd"]).compression,
        Codec::Zstd
    );
    assert_eq!(
        ok(&["--compression_type=zstd", "--compression=1"]).compression,
        Codec::Snappy
    );
    assert_eq!(
        ok(&["--compression_type=lz4", "--compression=0"]).compression,
        Codec::None
    );
    for bad in ["zlib", "", "ZSTD", "lz4hc"] {
        let e = parse([format!("--compression_type={bad}")]).unwrap_err();
        assert!(
            matches!(&e, FlagError::Invalid(m) if m.contains("none, snappy, zstd, lz4")),
            "{e:?}"
        );
    }
}
