//! The benchmark names `--benchmarks=` accepts, each with one line saying
//! what it does: LevelDB 1.23 db_bench's names with their meanings, and the
//! few this tool adds for the studies of the benchmark report.
//!
//! Invariant: this table is the whole vocabulary. `flags::parse` rejects any
//! other name before anything runs, and the runner plans every name listed
//! here (a test checks both directions).

/// `(name, what it does)` for every benchmark, LevelDB's first.
pub const BENCHMARKS: &[(&str, &str)] = &[
    ("fillseq", "write N values in sequential key order into a fresh database"),
    ("fillrandom", "write N values in random key order into a fresh database"),
    ("overwrite", "overwrite N values in random key order"),
    ("fillsync", "write N/1000 values in random key order, each synchronously, into a fresh database"),
    ("fillbatch", "write N values in sequential key order in batches of 1000, into a fresh database"),
    ("fill100K", "write N/1000 values of 100,000 bytes in random key order into a fresh database"),
    ("readseq", "read N entries in order with an iterator"),
    ("readreverse", "read N entries in reverse order with an iterator"),
    ("readrandom", "read N random keys (point lookups)"),
    ("readmissing", "read N missing keys"),
    ("readhot", "read N random keys from the first 1% of the key range"),
    ("readrandomsmall", "read N/1000 random keys"),
    ("seekrandom", "N seeks to random keys, each with a new iterator"),
    ("seekordered", "N seeks with one iterator, each a little further on"),
    ("deleteseq", "delete N keys in sequential order"),
    ("deleterandom", "delete N keys in random order"),
    ("readwhilewriting", "--threads readers of random keys while one more thread writes"),
    ("compact", "compact the whole key range"),
    ("open", "reopen the database N/10000 times"),
    ("crc32c", "CRC-32C of 4 KB blocks, 500 MB in all"),
    ("snappycomp", "snappy compression of 4 KB blocks, 1 GB in all"),
    ("snappyuncomp", "snappy decompression of 4 KB blocks, 1 GB in all"),
    ("heapprofile", "not supported (prints a note)"),
    ("stats", "print the engine's statistics"),
    ("sstables", "print the engine's table files"),
    // Added by this tool.
    ("fillrandbatch", "write N values in random key order in batches of 1000, into a fresh database"),
    ("putseq", "write keys 0..N in order into a fresh database, split over the threads (thread t of T takes the t-th N/T keys)"),
    ("putrandom", "write N random keys from [0, N) into a fresh database, N/T per thread"),
    ("getseq", "point lookups of keys 0..N in order, split over the threads as putseq"),
    ("getrandom", "point lookups of N random keys from [0, N), N/T per thread"),
    ("lsmiter", "SQLite4 LSM test on a fresh database, one thread: --iterations times insert --iter_ops random --key_size-byte binary keys with --value_size-byte random values (each its own write), then look up --iter_ops of the keys present, then sleep --pause_ms; prints ops/s per phase and iteration"),
];

/// True if `name` is a benchmark this tool runs (the empty name, which
/// db_bench skips silently, counts as known).
pub fn is_known(name: &str) -> bool {
    name.is_empty() || BENCHMARKS.iter().any(|(n, _)| *n == name)
}

/// The benchmark names, comma-separated, for messages.
pub fn names() -> String {
    BENCHMARKS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_known() {
        for (i, (a, _)) in BENCHMARKS.iter().enumerate() {
            assert!(is_known(a));
            assert!(BENCHMARKS[i + 1..].iter().all(|(b, _)| a != b), "{a}");
        }
        assert!(is_known(""));
        assert!(!is_known("fillseqsync"));
        assert!(!is_known("FILLSEQ"));
    }
}
