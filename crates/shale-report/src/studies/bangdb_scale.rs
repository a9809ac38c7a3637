//! The BangDB scale study: the BangDB workload with as many keys as the
//! machine's disk allows.

use super::bangdb::{bangdb_job, bangdb_section};
use super::*;
use crate::engines::ENGINES;

/// Key count of the scale test: the largest whole number of millions that fits
/// three quarters of the free space at [`SCALE_BYTES_PER_KEY`], at most a
/// billion.
pub fn scale_keys(size: Size) -> u64 {
    let free = size
        .free_bytes
        .unwrap_or(100_000_000 * 2 * SCALE_BYTES_PER_KEY);
    let fit = free / 4 * 3 / SCALE_BYTES_PER_KEY;
    let millions = (fit / 1_000_000).max(1);
    size.count((millions * 1_000_000).min(SCALE_MAX_KEYS), 200_000)
}

pub(super) fn bangdb_scale(size: Size) -> Study {
    let n = scale_keys(size);
    let n_s = th(n);
    let mut job = bangdb_job("seq-1t-scale", &["putseq", "getseq"], n, 1, size);
    // The scale test runs to the end, however long that takes.
    job.time_cap = None;
    let free = size
        .free_bytes
        .map(|b| format!("{:.1} GB free", b as f64 / 1e9))
        .unwrap_or_else(|| "free space unknown".to_string());
    // The peers run only when named: at a billion keys each takes hours,
    // and their databases are larger than Shale's, which sized N. (Option
    // variants run only in the jobs that name them, and the job names none.)
    let left_out = ENGINES
        .iter()
        .filter(|e| !e.is_shale() && e.variant_of.is_none())
        .map(|e| {
            (
                e.name,
                "the scale test runs Shale; a peer named in --engines runs with the same N \
                 (its database may need more than the 24 bytes a key budgeted)",
            )
        })
        .collect();
    Study {
        left_out,
        id: "bangdb-scale",
        title: "BangDB scale test",
        seed: "seeds/bangdb-vs-leveldb.txt",
        intro: format!(
            "Test 5 of the BangDB write-up (sequential put and get of 1 billion keys, 1 thread) \
             at the largest size the disk allows: N = {n_s} keys ({free} on the database file \
             system, budgeting {SCALE_BYTES_PER_KEY} bytes per key and three quarters of the \
             free space; capped at one billion). Shale runs by default; peers run when named."
        ),
        aggregation: Aggregation::Median,
        default_runs: 1,
        jobs: vec![job],
        sections: vec![bangdb_section(
            "seq-1t-scale",
            "5. Sequential put and get, 1 thread, scale test",
            format!(
                "{n_s} keys put in order, then got in order; 10-byte keys, 16-byte values; \
                 throughput over time from the median run."
            ),
            0,
            true,
        )],
    }
}
