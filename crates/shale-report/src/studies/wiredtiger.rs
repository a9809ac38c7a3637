//! The WiredTiger study: WiredTiger's LevelDB benchmark comparison.

use super::leveldb::READ_SEQUENCE;
use super::*;

pub(super) fn wiredtiger(size: Size) -> Study {
    let n = size.count(1_000_000, 100_000);
    let n_s = th(n);
    let mut all = Job::new(
        "all",
        &[&["fillseq"][..], &READ_SEQUENCE, &["fill100K"]].concat(),
        n,
    );
    all.memory = Memory::CacheOnly(128 * MIB);
    // Shale with value separation (`shale-blobs`) runs here too, for
    // fill100K's large values (the other lines' values stay in its tables),
    // and Shale loading through its bulk loader (`shale-bulk`), for fillseq,
    // where WiredTiger's B-tree takes a bulk cursor.
    all.variants = &["shale-blobs", "shale-bulk"];
    let mem = all.memory.describe();
    let one = |id, title, what: String, label: &str, bench| {
        bars(
            id,
            title,
            format!("{what} Memory: {mem}."),
            vec![line(format!("{label} ({bench})"), 0, bench)],
        )
    };
    let mut sections = vec![
        one(
            "sequential-insert",
            "Sequential insert performance",
            format!(
                "{n_s} sequential 16-byte keys, 100-byte values (50 bytes after compression); \
                 WiredTiger's B-tree loads through a bulk cursor."
            ),
            "Sequential insert",
            "fillseq",
        ),
        one(
            "random-insert",
            "Random insert performance",
            format!("{n_s} random keys (db_bench's generator, which does not avoid repeats)."),
            "Random insert",
            "fillrandom",
        ),
        one(
            "random-overwrite",
            "Random overwrite performance",
            "Random overwrites of the database fillrandom left.".to_string(),
            "Random overwrite",
            "overwrite",
        ),
        one(
            "random-large-values",
            "Random large value performance",
            format!(
                "fill100K: {} random keys with 100,000-byte values into an empty database.",
                th((n / 1000).max(1))
            ),
            "Random large values",
            "fill100K",
        ),
        bars(
            "sequential-read",
            "Sequential read forward and reverse",
            format!(
                "Full forward and reverse scans of the database left by fillrandom + \
                 overwrite. Memory: {mem}."
            ),
            lines(
                0,
                &[
                    ("Sequential read forward (readseq)", "readseq"),
                    ("Sequential read reverse (readreverse)", "readreverse"),
                ],
            ),
        ),
    ];
    sections.push(one(
        "random-read",
        "Random read",
        "Random point reads; the second of two readrandom passes is reported.".to_string(),
        "Random read",
        "readrandom",
    ));
    Study {
        left_out: vec![],
        id: "wiredtiger",
        title: "WiredTiger comparison",
        seed: "seeds/leveldb-vs-wiredtiger.md",
        intro: format!(
            "The original LevelDB benchmark at a 128 MB cache ({n_s} entries, 16-byte keys, \
             100-byte values, fill100K with 100,000-byte values), all benchmarks in one \
             db_bench process per engine and run. Five runs; the minimum and maximum are \
             dropped and the middle three averaged, as in the write-up."
        ),
        aggregation: Aggregation::TrimmedMean,
        default_runs: 5,
        jobs: vec![all],
        sections,
    }
}
