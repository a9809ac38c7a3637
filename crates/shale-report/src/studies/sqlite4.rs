//! The SQLite4 study: SQLite4 LSM's `lsm-test` iterations of random inserts
//! and lookups.

use super::*;

/// The four lines of an SQLite4 section (job `j`).
fn iteration_lines(j: usize) -> Vec<Line> {
    let mut v = Vec::new();
    for (what, metric) in [
        (
            "mean over iterations",
            Metric::IterMean as fn(IterPhase) -> Metric,
        ),
        ("slowest iteration", Metric::IterMin),
    ] {
        for (phase, name) in [
            (IterPhase::Insert, "Inserts"),
            (IterPhase::Lookup, "Lookups"),
        ] {
            v.push(Line {
                label: format!("{name}, {what}"),
                job: j,
                metric: metric(phase),
                needs: vec![],
            });
        }
    }
    v
}

/// Seconds of inserts and lookups (pauses not counted) after which an
/// engine's run of the full study starts no further iteration, so that the
/// study ends within two hours on two cores: an engine that cannot do the
/// 200 iterations in that time is marked with the iterations it did.
pub const SQLITE4_TIME_CAP_S: u64 = 240;

pub(super) fn sqlite4(size: Size) -> Study {
    let iterations = if size.quick { 20 } else { 200 };
    let iter_ops = size.count(50_000, 5_000);
    let pause_ms = size.count(2_500, 250);
    let (iterations_s, iter_ops_s) = (th(iterations), th(iter_ops));
    let cap = if size.quick {
        String::new()
    } else {
        format!(
            "; an engine stops after the iteration in which its inserts and lookups passed \
             {SQLITE4_TIME_CAP_S} s (marked in its cells)"
        )
    };
    let job = |id: &'static str, wb: u64, pause: u64| {
        let mut j = Job::new(id, &["lsmiter"], iterations * iter_ops);
        j.key_size = 12;
        j.value_size = 100;
        j.memory = Memory::WriteBuffer(wb);
        j.lsmiter = Some(LsmIter {
            iterations,
            iter_ops,
            pause_ms: pause,
        });
        if !size.quick {
            j.time_cap = Some(SQLITE4_TIME_CAP_S);
        }
        if pause > 0 {
            j.needs = vec![Capability::DeferredMerges];
        }
        j
    };
    let jobs = vec![
        job("small-buffers", MIB, 0),
        job("large-buffers", 4 * MIB, 0),
        job("large-buffers-pauses", 4 * MIB, pause_ms),
    ];
    let what = format!(
        "{iterations_s} iterations of {iter_ops_s} random inserts (12-byte random keys, 100-byte \
         random values, each its own write) then {iter_ops_s} lookups of present keys"
    );
    let sections = [
        ("small-buffers", "Small write buffers test", ""),
        ("large-buffers", "Large write buffers test", ""),
        (
            "large-buffers-pauses",
            "Large write buffers test with pauses",
            "pause",
        ),
    ]
    .into_iter()
    .enumerate()
    .map(|(j, (id, title, pause))| {
        let sleep = if pause.is_empty() {
            String::new()
        } else {
            format!(
                ", sleeping {:.2} s after each iteration",
                pause_ms as f64 / 1000.0
            )
        };
        section(
            id,
            title,
            format!("{what}{sleep}. Memory: {}.", jobs[j].memory.describe()),
            iteration_lines(j),
            OverTime::Iterations,
        )
    })
    .collect();
    Study {
        left_out: vec![],
        id: "sqlite4",
        title: "SQLite4 LSM study",
        seed: "seeds/sqlite4-lsm-benchmarks.txt",
        intro: format!(
            "The SQLite4 LSM benchmark (db_bench's lsmiter): {what}; ops/s of every iteration \
             is recorded and drawn as a line per engine (the per-iteration median over runs), \
             so stalls show as dips. Sections follow the seed: 1 MB and 4 MB write buffers, and \
             4 MB with a pause per iteration, which only engines that merge in the background \
             run (a pause gives their deferred work time to catch up; a B-tree has none). One \
             run per engine, as the seed's{cap}."
        ),
        aggregation: Aggregation::Median,
        default_runs: 1,
        jobs,
        sections,
    }
}
