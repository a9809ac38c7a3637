//! The LevelDB study: LevelDB's own benchmark page (db_bench's default
//! sequence, batch and sync writes, large values, reads with and without a
//! cache), for every engine; and the block compression types (none, snappy,
//! zstd, lz4) for the engines that have them.

use super::*;

/// Seconds after which db_bench stops a benchmark of the full-size LevelDB
/// study (db_bench's `--duration`): only an engine far slower than the rest
/// reaches it, and its figure is marked; it keeps the study within its time
/// budget.
pub const LEVELDB_TIME_CAP_S: u64 = 45;

/// Fill, overwrite, then read: a warming `readrandom` runs first and the second
/// instance is reported, as LevelDB's default db_bench sequence does.
pub(super) const READ_SEQUENCE: [&str; 6] = [
    "fillrandom",
    "overwrite",
    "readrandom",
    "readrandom",
    "readseq",
    "readreverse",
];

/// The lines of section 2F: per benchmark, one line per block type, read
/// from the jobs that wrote with it (`snappy` from the baseline, which every
/// engine runs with its light compressor: only engines whose light
/// compressor is snappy count).
fn compression_type_lines(snappy: usize, none: usize, zstd: usize, lz4: usize) -> Vec<Line> {
    let mut v = Vec::new();
    for bench in [
        "fillseq",
        "fillrandom",
        "overwrite",
        "readrandom",
        "readseq",
    ] {
        for t in BlockType::ALL {
            let (job, needs) = match t {
                BlockType::None => (none, vec![]),
                BlockType::Snappy => (snappy, vec![Capability::SnappyBlocks]),
                BlockType::Zstd => (zstd, vec![]),
                BlockType::Lz4 => (lz4, vec![]),
            };
            let mut l = line(format!("{bench} ({})", t.name()), job, bench);
            l.needs = needs;
            v.push(l);
        }
    }
    v
}

pub(super) fn leveldb(size: Size) -> Study {
    let n = size.count(1_000_000, 100_000);
    let large_n = size.count(1_000, 100);
    let sync_n = size.count(10_000, 1_000);
    let (n_s, large_n_s, sync_n_s) = (th(n), th(large_n), th(sync_n));

    let mut baseline = Job::new("baseline", &[&["fillseq"][..], &READ_SEQUENCE].concat(), n);
    baseline.memory = Memory::Baseline { cache: 4 * MIB };
    // Shale loading through its bulk loader (`shale-bulk`) runs in the jobs
    // with a sequential load from one thread (fillseq, fillbatch), where
    // WiredTiger's B-tree takes a bulk cursor.
    baseline.variants = &["shale-bulk"];

    let mut large = Job::new("large-values", &["fillseq", "fillrandom"], large_n);
    large.value_size = 100_000;
    // Shale with value separation (`shale-blobs`) runs here too.
    large.variants = &["shale-blobs", "shale-bulk"];

    let mut batch = Job::new("batch", &["fillbatch", "fillrandbatch"], n);
    batch.needs = vec![Capability::Batches];
    batch.variants = &["shale-bulk"];

    let mut sync = Job::new("sync", &["fillseq", "fillrandom"], sync_n);
    sync.sync = true;

    // The writes and the reads without compression come from one job: its
    // fillrandom + overwrite build the database the reads use.
    let mut nocomp = Job::new(
        "no-compression",
        &[&["fillseq"][..], &READ_SEQUENCE].concat(),
        n,
    );
    nocomp.compression = Compression::Off;
    nocomp.needs = vec![Capability::CompressionSwitch];
    nocomp.variants = &["shale-bulk"];

    // The block types beside none (the job above) and snappy (the
    // baseline's): the same sequence, for the engines that have the type.
    let typed = |id: &'static str, t: BlockType| {
        let mut j = Job::new(id, &[&["fillseq"][..], &READ_SEQUENCE].concat(), n);
        j.compression = Compression::Type(t);
        j.needs = vec![Capability::ZstdLz4Blocks];
        j
    };
    let zstd = typed("compression-zstd", BlockType::Zstd);
    let lz4 = typed("compression-lz4", BlockType::Lz4);

    let mut more_mem = Job::new("more-memory", &["fillseq", "fillrandom"], n);
    more_mem.memory = Memory::Split {
        write_buffer: 120 * MIB,
        cache: 8 * MIB,
        total: 128 * MIB,
    };
    more_mem.variants = &["shale-bulk"];

    let mut big_cache = Job::new("larger-caches", &READ_SEQUENCE, n);
    big_cache.memory = Memory::Split {
        write_buffer: 8 * MIB,
        cache: 120 * MIB,
        total: 128 * MIB,
    };
    // A B-tree's file after fillrandom + overwrite is the same whatever its
    // cache: those engines read a copy of their baseline database.
    big_cache.reuse = Some(Reuse {
        from: "baseline",
        skip: 2,
    });

    let mut jobs = vec![
        baseline, large, batch, sync, nocomp, more_mem, big_cache, zstd, lz4,
    ];
    if !size.quick {
        for j in &mut jobs {
            j.time_cap = Some(LEVELDB_TIME_CAP_S);
        }
    }
    let mem = |i: usize| jobs[i].memory.describe();

    let baseline_lines = lines(
        0,
        &[
            ("A. Sequential reads (readseq)", "readseq"),
            ("B. Random reads (readrandom)", "readrandom"),
            ("C. Sequential writes (fillseq)", "fillseq"),
            ("D. Random writes (fillrandom)", "fillrandom"),
            ("Random overwrites (overwrite)", "overwrite"),
            ("Reverse reads (readreverse)", "readreverse"),
        ],
    );

    let sections = vec![
        bars(
            "baseline",
            "1. Baseline performance",
            format!(
                "{n_s} entries, 16-byte keys, 100-byte values (half compressible), asynchronous \
                 writes, light compression on. The seed allows each database 4 MB of cache \
                 memory; here: {}. Reads follow fillrandom + overwrite; the second readrandom \
                 is reported.",
                mem(0)
            ),
            baseline_lines,
        ),
        bars(
            "large-values",
            "2A. Large values",
            format!(
                "{large_n_s} entries of 100,000-byte values (about half compressible), written \
                 into an empty database. Memory: {}.",
                mem(1)
            ),
            write_lines(1),
        ),
        bars(
            "batch",
            "2B. Batch writes",
            format!(
                "{} batches of 1000 entries of 100 bytes (db_bench's fillbatch and \
                 fillrandbatch); ops/s counts entries. Memory: {}.",
                th(n.div_ceil(1000)),
                mem(2)
            ),
            lines(
                2,
                &[
                    ("Sequential batches (fillbatch)", "fillbatch"),
                    ("Random batches (fillrandbatch)", "fillrandbatch"),
                ],
            ),
        ),
        bars(
            "sync",
            "2C. Synchronous writes",
            format!(
                "{sync_n_s} writes (fillseq and fillrandom with --sync=1), each waiting for the \
                 device (LevelDB-like engines: WriteOptions.sync; SQLite3: synchronous=FULL; \
                 Kyoto: OAUTOSYNC; LMDB: no MDB_NOSYNC; WiredTiger: a synced log commit). Disk \
                 write caching is left as the machine has it. Memory: {}.",
                mem(3)
            ),
            write_lines(3),
        ),
        bars(
            "no-compression-writes",
            "2D. Turning compression off",
            format!(
                "As the baseline writes with --compression=0. Engines that never compress \
                 are marked; compare with their baseline. Memory: {}.",
                mem(4)
            ),
            write_lines(4),
        ),
        bars(
            "more-memory",
            "2E. Using more memory",
            format!("128 MB per database: {}.", mem(5)),
            write_lines(5),
        ),
        bars(
            "compression-types",
            "2F. Compression types",
            format!(
                "{n_s} entries written and read as in the baseline (fillseq, then fillrandom + \
                 overwrite, then the reads; the second readrandom is reported), once per block \
                 compression type: none is the job of section 2D (--compression=0), snappy the \
                 baseline's (--compression=1), zstd and lz4 two jobs of their own \
                 (--compression_type=zstd|lz4: Shale writes block types 2 (LevelDB's zstd, at \
                 level 1) and 4 (its lz4); RocksDB its own zstd and LZ4 blocks with its default \
                 compression options). Engines without a type are marked in its lines. The \
                 second table gives each line's write amplification and the space on disk after \
                 it (after overwrite: the database the reads use). Memory: {}.",
                mem(0)
            ),
            compression_type_lines(0, 4, 7, 8),
        ),
        bars(
            "larger-caches",
            "3A. Larger caches",
            format!(
                "128 MB per database, mostly cache: {}. LSM engines fill the database by \
                 fillrandom + overwrite in the same process, with this section's write buffer; \
                 engines with one page cache (or none) read a copy of the database their \
                 baseline run built by the same fillrandom + overwrite (a B-tree's file does \
                 not depend on its cache size), opened in a new process with the larger cache; \
                 the first readrandom warms the cache and the second is reported.",
                mem(6)
            ),
            read_lines(6),
        ),
        bars(
            "no-compression-reads",
            "3B. Reads without compression",
            format!(
                "{n_s} entries written with --compression=0, then read (the seed recompiled \
                 without compression; a run-time switch is used here), by the job of section \
                 2D (fillseq, then fillrandom + overwrite, then the reads). Memory: {}.",
                mem(4)
            ),
            read_lines(4),
        ),
    ];
    Study {
        left_out: vec![(
            "wiredtiger-lsm",
            "WiredTiger's LSM tree needs a cache of three chunks; in the 4 MB sections its \
             chunks shrink to 1.3 MB and its random reads take about 0.4 ms each, which alone \
             would take this study past its 30-minute budget",
        )],
        id: "leveldb",
        title: "LevelDB report",
        seed: "seeds/leveldb-benchmarks.html",
        intro: format!(
            "Every section of the LevelDB benchmark page: {n_s} entries with 16-byte keys and \
             100-byte values unless a section says otherwise; values are cut from db_bench's \
             half-compressible random text; random keys come from db_bench's fixed seed."
        ),
        aggregation: Aggregation::Median,
        default_runs: 3,
        jobs,
        sections,
    }
}
