//! The BangDB study: puts and gets split over threads (BangDB's comparison
//! with LevelDB).

use super::*;

/// A BangDB put-then-get job: `n` operations per benchmark in all, shared
/// out over `threads` threads, sampled over time.
pub(super) fn bangdb_job(
    id: &'static str,
    benches: &[&'static str],
    n: u64,
    threads: u32,
    size: Size,
) -> Job {
    let mut j = Job::new(id, benches, n);
    j.key_size = 10;
    j.value_size = 16;
    j.threads = threads;
    j.memory = Memory::Defaults;
    j.timeseries = Some(if size.quick { 0.05 } else { 1.0 });
    if !size.quick {
        j.time_cap = Some(BANGDB_TIME_CAP_S);
    }
    j
}

/// Seconds after which one benchmark of the full study stops (db_bench's
/// `--duration`), so that the study ends within two hours on two cores; a
/// stopped cell says after how many operations.
pub const BANGDB_TIME_CAP_S: u64 = 300;

/// Keys of the BangDB study's main runs.
pub fn bangdb_keys(size: Size) -> u64 {
    size.count(10_000_000, 100_000)
}

/// The section of one BangDB job: put then get, drawn over time.
pub(super) fn bangdb_section(
    id: &'static str,
    title: &str,
    note: String,
    job: usize,
    seq: bool,
) -> Section {
    let rows: [(&str, &'static str); 2] = if seq {
        [
            ("Sequential put (putseq)", "putseq"),
            ("Sequential get (getseq)", "getseq"),
        ]
    } else {
        [
            ("Random put (putrandom)", "putrandom"),
            ("Random get (getrandom)", "getrandom"),
        ]
    };
    section(id, title, note, lines(job, &rows), OverTime::Timeseries)
}

pub(super) fn bangdb(size: Size) -> Study {
    let n = bangdb_keys(size);
    let n_s = th(n);
    let mut seq_4t = bangdb_job("seq-4t", &["putseq", "getseq"], n, 4, size);
    // Shale with split flushes (`shale-split`) runs here too: each thread
    // puts its own key range in order, and a flush cut where the keys jump
    // gives each range tables of its own.
    seq_4t.variants = &["shale-split"];
    let mut seq_1t = bangdb_job("seq-1t", &["putseq", "getseq"], n, 1, size);
    // Shale loading through its bulk loader (`shale-bulk`) runs here too:
    // one thread's sequential puts into a fresh database are WiredTiger's
    // bulk-cursor case.
    seq_1t.variants = &["shale-bulk"];
    let jobs = vec![
        seq_1t,
        seq_4t,
        bangdb_job("rand-1t", &["putrandom", "getrandom"], n, 1, size),
        bangdb_job("rand-4t", &["putrandom", "getrandom"], n, 4, size),
    ];
    let common = "10-byte keys, 16-byte values, light compression on, db_bench default memory \
                  settings; throughput is sampled over time (--timeseries) and the run with the \
                  median ops/s is drawn.";
    let quarter = th(n / 4);
    let sections = vec![
        bangdb_section(
            "seq-1t",
            "1. Sequential put and get, 1 thread",
            format!("{n_s} keys put in order, then got in order (one Get per key). {common}"),
            0,
            true,
        ),
        bangdb_section(
            "seq-4t",
            "2. Sequential put and get, 4 threads",
            format!(
                "4 threads, each putting then getting its own quarter of the {n_s} keys in \
                 order ({quarter} each). {common}"
            ),
            1,
            true,
        ),
        bangdb_section(
            "rand-1t",
            "3. Random put and get, 1 thread",
            format!("{n_s} puts of random keys from 0..{n_s}, then {n_s} random gets. {common}"),
            2,
            false,
        ),
        bangdb_section(
            "rand-4t",
            "4. Random put and get, 4 threads",
            format!(
                "4 threads, each doing {quarter} puts of random keys from 0..{n_s}, then \
                 {quarter} random gets. {common}"
            ),
            3,
            false,
        ),
    ];
    Study {
        left_out: vec![],
        id: "bangdb",
        title: "BangDB comparison",
        seed: "seeds/bangdb-vs-leveldb.txt",
        intro: format!(
            "The BangDB write-up's put/get tests scaled to this machine: N = {n_s} keys (the seed \
             used 75-100 million on an 8 GB, 4-core machine; this machine has 2 cores shared \
             with builds). With 4 threads each thread takes a quarter of the N operations \
             (db_bench's putseq, putrandom, getseq, getrandom). One run per engine, as the \
             seed's. The 1-billion-key run is the separate opt-in study `bangdb-scale`."
        ),
        aggregation: Aggregation::Median,
        default_runs: 1,
        jobs,
        sections,
    }
}
