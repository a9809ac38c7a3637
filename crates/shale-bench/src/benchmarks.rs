//! The benchmark names `--benchmarks=` accepts, each with one line saying
//! what it does: LevelDB 1.23 db_bench's names with their meanings, and the
//! few this tool adds for the studies of the benchmark report.
//!
//! The table also says how the runner carries each one out (`Run`): it is
//! the one list of benchmark names.
//!
//! Invariant: this table is the whole vocabulary. `flags::parse` rejects any
//! other name before anything runs, and the runner plans every name listed
//! here (a test checks both directions).

use crate::engine::Feature;

/// One benchmark: its name, what it does, and how the runner runs it.
#[derive(Debug, Clone, Copy)]
pub struct Benchmark {
    /// The name `--benchmarks=` takes.
    pub name: &'static str,
    /// One line saying what it does (for `--help`).
    pub help: &'static str,
    /// How the runner carries it out.
    pub run: Run,
}

/// How the runner carries out a benchmark.
#[derive(Debug, Clone, Copy)]
pub enum Run {
    /// Reopen the database (`open`).
    Reopen,
    /// Print a note that it is not supported (`heapprofile`).
    HeapProfile,
    /// Print this engine property (`stats`, `sstables`, `writestalls`).
    Property(&'static str),
    /// The SQLite4 LSM test (`lsmiter`).
    LsmIter,
    /// A workload run by threads.
    Threads {
        /// What each thread does.
        method: Method,
        /// Starts from an empty database.
        fresh_db: bool,
        /// What the engine must support, if anything.
        needs: Option<Feature>,
        /// Adjusts the parameters taken from the flags, and the thread count.
        tune: fn(&mut Params, &mut usize),
    },
}

/// What a benchmark thread does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Method {
    WriteSeq,
    WriteRandom,
    ReadSeq,
    ReadReverse,
    ReadRandom,
    GetSeq,
    ReadMissing,
    ReadHot,
    SeekRandom,
    SeekOrdered,
    DeleteSeq,
    DeleteRandom,
    ReadWhileWriting,
    Compact,
    Crc32c,
    SnappyComp,
    SnappyUncomp,
}

/// Per-benchmark parameters (db_bench's `num_`, `reads_`, ... members).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub(crate) num: u64,
    pub(crate) reads: u64,
    pub(crate) value_size: usize,
    pub(crate) entries_per_batch: u64,
    pub(crate) sync: bool,
    /// `num` and `reads` are totals shared out over the threads (the
    /// BangDB-style benchmarks) rather than counts per thread (LevelDB's).
    pub(crate) split: bool,
}

/// Every benchmark, LevelDB's first.
pub const BENCHMARKS: &[Benchmark] = &[
    Benchmark {
        name: "fillseq",
        help: "write N values in sequential key order into a fresh database",
        run: Run::Threads { method: Method::WriteSeq, fresh_db: true, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "fillrandom",
        help: "write N values in random key order into a fresh database",
        run: Run::Threads { method: Method::WriteRandom, fresh_db: true, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "overwrite",
        help: "overwrite N values in random key order",
        run: Run::Threads { method: Method::WriteRandom, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "fillsync",
        help: "write N/1000 values in random key order, each synchronously, into a fresh database",
        run: Run::Threads { method: Method::WriteRandom, fresh_db: true, needs: None, tune: |p, _| {
            p.num /= 1000;
            p.sync = true;
        } },
    },
    Benchmark {
        name: "fillbatch",
        help: "write N values in sequential key order in batches of 1000, into a fresh database",
        run: Run::Threads { method: Method::WriteSeq, fresh_db: true, needs: Some(Feature::Batch), tune: |p, _| p.entries_per_batch = 1000 },
    },
    Benchmark {
        name: "fill100K",
        help: "write N/1000 values of 100,000 bytes in random key order into a fresh database",
        run: Run::Threads { method: Method::WriteRandom, fresh_db: true, needs: None, tune: |p, _| {
            p.num /= 1000;
            p.value_size = 100 * 1000;
        } },
    },
    Benchmark {
        name: "readseq",
        help: "read N entries in order with an iterator",
        run: Run::Threads { method: Method::ReadSeq, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "readreverse",
        help: "read N entries in reverse order with an iterator",
        run: Run::Threads { method: Method::ReadReverse, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "readrandom",
        help: "read N random keys (point lookups)",
        run: Run::Threads { method: Method::ReadRandom, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "readmissing",
        help: "read N missing keys",
        run: Run::Threads { method: Method::ReadMissing, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "readhot",
        help: "read N random keys from the first 1% of the key range",
        run: Run::Threads { method: Method::ReadHot, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "readrandomsmall",
        help: "read N/1000 random keys",
        run: Run::Threads { method: Method::ReadRandom, fresh_db: false, needs: None, tune: |p, _| p.reads /= 1000 },
    },
    Benchmark {
        name: "seekrandom",
        help: "N seeks to random keys, each with a new iterator",
        run: Run::Threads { method: Method::SeekRandom, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "seekordered",
        help: "N seeks with one iterator, each a little further on",
        run: Run::Threads { method: Method::SeekOrdered, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "deleteseq",
        help: "delete N keys in sequential order",
        run: Run::Threads { method: Method::DeleteSeq, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "deleterandom",
        help: "delete N keys in random order",
        run: Run::Threads { method: Method::DeleteRandom, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "readwhilewriting",
        help: "--threads readers of random keys while one more thread writes",
        run: Run::Threads { method: Method::ReadWhileWriting, fresh_db: false, needs: None, tune: |_, threads| *threads += 1 },
    },
    Benchmark {
        name: "compact",
        help: "compact the whole key range",
        run: Run::Threads { method: Method::Compact, fresh_db: false, needs: Some(Feature::Compact), tune: |_, _| {} },
    },
    Benchmark {
        name: "open",
        help: "reopen the database N/10000 times",
        run: Run::Reopen,
    },
    Benchmark {
        name: "crc32c",
        help: "CRC-32C of 4 KB blocks, 500 MB in all",
        run: Run::Threads { method: Method::Crc32c, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "snappycomp",
        help: "snappy compression of 4 KB blocks, 1 GB in all",
        run: Run::Threads { method: Method::SnappyComp, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "snappyuncomp",
        help: "snappy decompression of 4 KB blocks, 1 GB in all",
        run: Run::Threads { method: Method::SnappyUncomp, fresh_db: false, needs: None, tune: |_, _| {} },
    },
    Benchmark {
        name: "heapprofile",
        help: "not supported (prints a note)",
        run: Run::HeapProfile,
    },
    Benchmark {
        name: "stats",
        help: "print the engine's statistics",
        run: Run::Property("leveldb.stats"),
    },
    Benchmark {
        name: "sstables",
        help: "print the engine's table files",
        run: Run::Property("leveldb.sstables"),
    },
    // Added by this tool.
    Benchmark {
        name: "writestalls",
        help: "print how often and how long writers waited for room, by cause (shale only)",
        run: Run::Property("shale.write-stalls"),
    },
    Benchmark {
        name: "fillrandbatch",
        help: "write N values in random key order in batches of 1000, into a fresh database",
        run: Run::Threads { method: Method::WriteRandom, fresh_db: true, needs: Some(Feature::Batch), tune: |p, _| p.entries_per_batch = 1000 },
    },
    Benchmark {
        name: "putseq",
        help: "write keys 0..N in order into a fresh database, split over the threads (thread t of T takes the t-th N/T keys)",
        run: Run::Threads { method: Method::WriteSeq, fresh_db: true, needs: None, tune: |p, _| p.split = true },
    },
    Benchmark {
        name: "putrandom",
        help: "write N random keys from [0, N) into a fresh database, N/T per thread",
        run: Run::Threads { method: Method::WriteRandom, fresh_db: true, needs: None, tune: |p, _| p.split = true },
    },
    Benchmark {
        name: "getseq",
        help: "point lookups of keys 0..N in order, split over the threads as putseq",
        run: Run::Threads { method: Method::GetSeq, fresh_db: false, needs: None, tune: |p, _| {
            p.split = true;
            p.reads = p.num;
        } },
    },
    Benchmark {
        name: "getrandom",
        help: "point lookups of N random keys from [0, N), N/T per thread",
        run: Run::Threads { method: Method::ReadRandom, fresh_db: false, needs: None, tune: |p, _| p.split = true },
    },
    Benchmark {
        name: "lsmiter",
        help: "SQLite4 LSM test on a fresh database, one thread: --iterations times insert --iter_ops random --key_size-byte binary keys with --value_size-byte random values (each its own write), then look up --iter_ops of the keys present, then sleep --pause_ms; prints ops/s per phase and iteration",
        run: Run::LsmIter,
    },
];

/// True if `name` is a benchmark this tool runs (the empty name, which
/// db_bench skips silently, counts as known).
pub fn is_known(name: &str) -> bool {
    name.is_empty() || find(name).is_some()
}

/// The benchmark named `name`.
pub fn find(name: &str) -> Option<&'static Benchmark> {
    BENCHMARKS.iter().find(|b| b.name == name)
}

/// The benchmark names, comma-separated, for messages.
pub fn names() -> String {
    BENCHMARKS
        .iter()
        .map(|b| b.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_known() {
        for (i, a) in BENCHMARKS.iter().enumerate() {
            assert!(is_known(a.name));
            assert!(
                BENCHMARKS[i + 1..].iter().all(|b| a.name != b.name),
                "{}",
                a.name
            );
        }
        assert!(is_known(""));
        assert!(!is_known("fillseqsync"));
        assert!(!is_known("FILLSEQ"));
    }
}
