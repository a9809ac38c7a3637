//! Throughput over time, so stalls show up as dips: either sampled every
//! `--stats_interval_seconds` from per-thread operation counters, or logged
//! every `--stats_interval_ops` operations. Rows go to the CSV file given by
//! `--timeseries` (`engine,index,benchmark,elapsed_s,ops,interval_ops_per_sec`)
//! or, without one, to stderr as they are taken.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::stats::PaddedCounter;

/// One point of the series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// Seconds since the benchmark started.
    pub elapsed_s: f64,
    /// Operations finished so far (all threads).
    pub ops: u64,
    /// Operations per second since the previous row.
    pub interval_ops_per_sec: f64,
}

/// Turns cumulative `(seconds, ops)` points into rows with interval rates.
pub fn rows_from_points(points: &[(f64, u64)]) -> Vec<Row> {
    let mut rows = Vec::with_capacity(points.len());
    let (mut prev_t, mut prev_ops) = (0.0, 0u64);
    for &(t, ops) in points {
        let dt = t - prev_t;
        let rate = if dt > 0.0 {
            ops.saturating_sub(prev_ops) as f64 / dt
        } else {
            0.0
        };
        rows.push(Row {
            elapsed_s: t,
            ops,
            interval_ops_per_sec: rate,
        });
        prev_t = t;
        prev_ops = ops;
    }
    rows
}

/// Adds the sample taken when the benchmark ended. A final interval shorter
/// than half the sampling interval is merged into the one before it (the
/// previous sample is replaced), so that a benchmark ending just after a tick
/// does not show a spurious dip or spike over a few milliseconds.
pub fn push_final(points: &mut Vec<(f64, u64)>, last: (f64, u64), interval: f64) {
    if points
        .last()
        .is_some_and(|&(t, _)| last.0 - t < interval / 2.0)
    {
        points.pop();
    }
    points.push(last);
}

/// A thread that sums the per-thread counters every interval.
pub struct Sampler {
    stop: mpsc::Sender<()>,
    handle: thread::JoinHandle<Vec<(f64, u64)>>,
}

impl Sampler {
    /// Starts sampling `counters` every `interval` from `start`; with
    /// `live_label`, each point is also printed on stderr.
    pub fn start(
        counters: Vec<Arc<PaddedCounter>>,
        interval: Duration,
        start: Instant,
        live_label: Option<String>,
    ) -> Sampler {
        let (stop, stopped) = mpsc::channel::<()>();
        let handle = thread::spawn(move || {
            let mut points = Vec::new();
            let mut prev = (0.0, 0u64);
            let mut tick = 1u32;
            loop {
                let deadline = start + interval * tick;
                let wait = deadline.saturating_duration_since(Instant::now());
                let done = !matches!(
                    stopped.recv_timeout(wait),
                    Err(mpsc::RecvTimeoutError::Timeout)
                );
                let t = start.elapsed().as_secs_f64();
                let ops: u64 = counters.iter().map(|c| c.0.load(Ordering::Relaxed)).sum();
                if done {
                    push_final(&mut points, (t, ops), interval.as_secs_f64());
                } else {
                    points.push((t, ops));
                }
                if let Some(label) = &live_label {
                    let rate = if t > prev.0 {
                        ops.saturating_sub(prev.1) as f64 / (t - prev.0)
                    } else {
                        0.0
                    };
                    eprintln!("... {label} {t:8.2} s: {ops} ops, {rate:.0} ops/s");
                }
                prev = (t, ops);
                if done {
                    break;
                }
                tick += 1;
            }
            points
        });
        Sampler { stop, handle }
    }

    /// Takes a last sample and returns all `(seconds, ops)` points.
    pub fn finish(self) -> Vec<(f64, u64)> {
        let _ = self.stop.send(());
        self.handle.join().unwrap_or_default()
    }
}

/// The CSV file of all benchmarks of a run.
pub struct CsvWriter {
    out: BufWriter<File>,
}

impl CsvWriter {
    /// Creates (truncates) `path` and writes the header.
    pub fn create(path: &Path) -> std::io::Result<CsvWriter> {
        let mut out = BufWriter::new(File::create(path)?);
        writeln!(
            out,
            "engine,index,benchmark,elapsed_s,ops,interval_ops_per_sec"
        )?;
        out.flush()?;
        Ok(CsvWriter { out })
    }

    /// Appends the rows of benchmark number `index` called `name`.
    pub fn write(
        &mut self,
        engine: &str,
        index: usize,
        name: &str,
        rows: &[Row],
    ) -> std::io::Result<()> {
        for r in rows {
            writeln!(
                self.out,
                "{engine},{index},{name},{:.3},{},{:.1}",
                r.elapsed_s, r.ops, r.interval_ops_per_sec
            )?;
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_rates_come_from_consecutive_points() {
        let rows = rows_from_points(&[(1.0, 100), (2.0, 100), (2.5, 200)]);
        assert_eq!(rows[0].interval_ops_per_sec, 100.0);
        assert_eq!(rows[1].interval_ops_per_sec, 0.0); // a stall
        assert_eq!(rows[2].interval_ops_per_sec, 200.0);
        assert_eq!(rows[2].ops, 200);
    }

    #[test]
    fn a_short_final_interval_joins_the_one_before() {
        let mut p = vec![(1.0, 100), (2.0, 200)];
        push_final(&mut p, (2.1, 200), 1.0);
        assert_eq!(p, [(1.0, 100), (2.1, 200)], "no zero-rate tail");
        push_final(&mut p, (3.0, 290), 1.0);
        assert_eq!(p, [(1.0, 100), (2.1, 200), (3.0, 290)]);
        let mut alone = Vec::new();
        push_final(&mut alone, (0.2, 50), 1.0);
        assert_eq!(alone, [(0.2, 50)]);
    }

    #[test]
    fn sampler_sums_thread_counters() {
        let counters = vec![
            Arc::new(PaddedCounter::default()),
            Arc::new(PaddedCounter::default()),
        ];
        counters[0].0.store(5, Ordering::Relaxed);
        counters[1].0.store(7, Ordering::Relaxed);
        let s = Sampler::start(counters, Duration::from_secs(60), Instant::now(), None);
        let points = s.finish();
        assert_eq!(points.len(), 1);
        assert_eq!(points[0].1, 12);
    }
}
