//! Per-thread benchmark statistics and db_bench's report line.
//!
//! A benchmark line reads
//! `fillseq      :       1.765 micros/op;   62.7 MB/s (1000 ops)`:
//! the name left-aligned in 12 columns, the microseconds per operation in
//! 11.3 format, then (when bytes were counted) the rate in MB/s over the wall
//! time, then the benchmark's message. As in db_bench, microseconds per op are
//! the sum of the threads' elapsed times over the sum of their operations.

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::histogram::Histogram;

/// Microseconds since an arbitrary fixed point in this process.
#[inline]
pub fn now_micros() -> f64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e6
}

/// Formats one db_bench result line (without a newline).
///
/// ```
/// use shale_bench::stats::format_line;
/// assert_eq!(
///     format_line("fillseq", 1.765, Some(62.7), ""),
///     "fillseq      :       1.765 micros/op;   62.7 MB/s"
/// );
/// ```
pub fn format_line(
    name: &str,
    micros_per_op: f64,
    mb_per_sec: Option<f64>,
    message: &str,
) -> String {
    let mut extra = match mb_per_sec {
        Some(rate) => format!("{rate:6.1} MB/s"),
        None => String::new(),
    };
    append_with_space(&mut extra, message);
    format!(
        "{name:<12} : {micros_per_op:11.3} micros/op;{}{extra}",
        if extra.is_empty() { "" } else { " " }
    )
}

/// A result line read back (for tests and report generators).
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLine {
    /// The benchmark name.
    pub name: String,
    /// Microseconds per operation.
    pub micros_per_op: f64,
    /// The MB/s figure, if the line has one.
    pub mb_per_sec: Option<f64>,
    /// Everything after the rate (e.g. `(1000 of 1000 found)`).
    pub message: String,
}

/// Parses a line made by [`format_line`]; `None` if it is not one.
pub fn parse_line(line: &str) -> Option<ParsedLine> {
    let (name, rest) = line.split_once(" : ")?;
    let (micros, rest) = rest.split_once(" micros/op;")?;
    let micros_per_op: f64 = micros.trim().parse().ok()?;
    let rest = rest.trim_start();
    let (mb_per_sec, message) = match rest.split_once(" MB/s") {
        Some((rate, msg)) if rate.trim().parse::<f64>().is_ok() => (
            rate.trim().parse::<f64>().ok(),
            msg.trim_start().to_string(),
        ),
        _ => (None, rest.to_string()),
    };
    let name = name.trim_end();
    if name.is_empty() || name.contains(' ') {
        return None;
    }
    Some(ParsedLine {
        name: name.to_string(),
        micros_per_op,
        mb_per_sec,
        message,
    })
}

fn append_with_space(s: &mut String, msg: &str) {
    if msg.is_empty() {
        return;
    }
    if !s.is_empty() {
        s.push(' ');
    }
    s.push_str(msg);
}

/// A cache-line-sized counter, so threads updating neighbours do not share a line.
#[repr(align(64))]
#[derive(Default)]
pub struct PaddedCounter(pub AtomicU64);

/// Where a thread reports its progress for the throughput-over-time series.
#[derive(Clone)]
pub enum OpTracker {
    /// Store this thread's operation count (read by a sampling thread).
    Counter(Arc<PaddedCounter>),
    /// Count into a shared total and log a timestamp each `every` operations.
    Events {
        /// The total over all threads.
        total: Arc<AtomicU64>,
        /// Log interval, in operations.
        every: u64,
        /// `(micros, total)` at each interval boundary.
        log: Arc<Mutex<Vec<(f64, u64)>>>,
    },
}

/// Statistics of one benchmark thread.
pub struct Stats {
    start: f64,
    finish: f64,
    seconds: f64,
    done: u64,
    next_report: u64,
    bytes: i64,
    written_bytes: u64,
    last_op_finish: f64,
    hist: Histogram,
    message: String,
    found: Option<(u64, u64)>,
    histogram: bool,
    progress: bool,
    tracker: Option<OpTracker>,
    /// Time cap of one run (`--duration`), if any.
    cap: Option<std::time::Duration>,
    /// When the running benchmark must stop (start + `cap`).
    deadline: Option<std::time::Instant>,
    /// The deadline has passed.
    expired: bool,
}

impl Stats {
    /// Fresh statistics; `histogram` records each operation's latency,
    /// `progress` prints db_bench's "... finished N ops" lines on stderr.
    pub fn new(histogram: bool, progress: bool) -> Stats {
        let mut s = Stats {
            start: 0.0,
            finish: 0.0,
            seconds: 0.0,
            done: 0,
            next_report: 100,
            bytes: 0,
            written_bytes: 0,
            last_op_finish: 0.0,
            hist: Histogram::new(),
            message: String::new(),
            found: None,
            histogram,
            progress,
            tracker: None,
            cap: None,
            deadline: None,
            expired: false,
        };
        s.start();
        s
    }

    /// Reports progress to `tracker` as operations finish.
    pub fn set_tracker(&mut self, tracker: Option<OpTracker>) {
        self.tracker = tracker;
    }

    /// Caps each run at `seconds` (0: no cap); see [`Stats::expired`].
    pub fn set_duration(&mut self, seconds: u64) {
        self.cap = (seconds > 0).then(|| std::time::Duration::from_secs(seconds));
        self.deadline = self.cap.map(|c| std::time::Instant::now() + c);
        self.expired = false;
    }

    /// The run has gone on for longer than its cap (checked every 64
    /// operations); the benchmark loop stops when this turns true.
    #[inline]
    pub fn expired(&self) -> bool {
        self.expired
    }

    /// The cap in seconds, when one is set.
    pub fn duration_cap(&self) -> Option<u64> {
        self.cap.map(|c| c.as_secs())
    }

    /// Resets the counters and starts the clock.
    pub fn start(&mut self) {
        self.deadline = self.cap.map(|c| std::time::Instant::now() + c);
        self.expired = false;
        self.next_report = 100;
        self.hist.clear();
        self.done = 0;
        self.bytes = 0;
        self.written_bytes = 0;
        self.seconds = 0.0;
        self.message.clear();
        self.found = None;
        let now = now_micros();
        self.start = now;
        self.finish = now;
        self.last_op_finish = now;
        if let Some(OpTracker::Counter(c)) = &self.tracker {
            c.0.store(0, Ordering::Relaxed);
        }
    }

    /// Stops the clock.
    pub fn stop(&mut self) {
        self.finish = now_micros();
        self.seconds = (self.finish - self.start) * 1e-6;
    }

    /// Takes `idle` seconds (deliberate sleeps) out of the timed seconds.
    /// Call after [`Stats::stop`].
    pub fn exclude_idle(&mut self, idle: f64) {
        self.seconds = (self.seconds - idle).max(0.0);
    }

    /// Adds `other`'s operations, bytes, lookups and latencies; keeps the
    /// earliest start, the latest finish, and the first non-empty message.
    pub fn merge(&mut self, other: &Stats) {
        self.hist.merge(&other.hist);
        self.done += other.done;
        self.bytes += other.bytes;
        self.written_bytes += other.written_bytes;
        self.seconds += other.seconds;
        if other.start < self.start {
            self.start = other.start;
        }
        if other.finish > self.finish {
            self.finish = other.finish;
        }
        if self.message.is_empty() {
            self.message = other.message.clone();
        }
        if let Some((f, n)) = other.found {
            self.add_found(f, n);
        }
    }

    /// Counts `found` hits of `looked_up` lookups; the report line ends with
    /// `(F of N found)` summed over the merged threads.
    pub fn add_found(&mut self, found: u64, looked_up: u64) {
        let (f, n) = self.found.unwrap_or((0, 0));
        self.found = Some((f + found, n + looked_up));
    }

    /// Appends to the message printed after the rate.
    pub fn add_message(&mut self, msg: &str) {
        append_with_space(&mut self.message, msg);
    }

    /// Counts bytes for the MB/s figure.
    pub fn add_bytes(&mut self, n: i64) {
        self.bytes += n;
    }

    /// Counts user bytes written (keys and values put, keys deleted), for
    /// write amplification.
    pub fn add_written(&mut self, n: u64) {
        self.written_bytes += n;
    }

    /// User bytes written so far.
    pub fn written_bytes(&self) -> u64 {
        self.written_bytes
    }

    /// Operations finished so far.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// Wall time between the earliest start and the latest finish, seconds.
    pub fn elapsed_seconds(&self) -> f64 {
        (self.finish - self.start) * 1e-6
    }

    /// Start time (see [`now_micros`]).
    pub fn start_micros(&self) -> f64 {
        self.start
    }

    /// The latency histogram.
    pub fn histogram(&self) -> &Histogram {
        &self.hist
    }

    /// Records one finished operation.
    #[inline]
    pub fn finished_single_op(&mut self) {
        if self.histogram {
            let now = now_micros();
            let micros = now - self.last_op_finish;
            self.hist.add(micros);
            if micros > 20000.0 && self.progress {
                eprint!("long op: {micros:.1} micros{:30}\r", "");
                let _ = std::io::stderr().flush();
            }
            self.last_op_finish = now;
        }
        self.done += 1;
        if let Some(d) = self.deadline {
            if self.done.is_multiple_of(64) && std::time::Instant::now() >= d {
                self.expired = true;
            }
        }
        if let Some(t) = &self.tracker {
            match t {
                OpTracker::Counter(c) => c.0.store(self.done, Ordering::Relaxed),
                OpTracker::Events { total, every, log } => {
                    let n = total.fetch_add(1, Ordering::Relaxed) + 1;
                    if n % every == 0 {
                        if let Ok(mut log) = log.lock() {
                            log.push((now_micros(), n));
                        }
                    }
                }
            }
        }
        if self.done >= self.next_report {
            self.next_report += match self.next_report {
                0..=999 => 100,
                1000..=4999 => 500,
                5000..=9999 => 1000,
                10000..=49999 => 5000,
                50000..=99999 => 10000,
                100000..=499999 => 50000,
                _ => 100000,
            };
            if self.progress {
                eprint!("... finished {} ops{:30}\r", self.done, "");
                let _ = std::io::stderr().flush();
            }
        }
    }

    /// The result line for benchmark `name`, followed by the histogram when
    /// latencies were recorded. Counts at least one operation, as db_bench.
    pub fn report(&mut self, name: &str) -> String {
        if self.done < 1 {
            self.done = 1;
        }
        let rate = if self.bytes > 0 {
            let elapsed = (self.finish - self.start) * 1e-6;
            Some((self.bytes as f64 / 1_048_576.0) / elapsed)
        } else {
            None
        };
        let mut message = self.message.clone();
        if let Some((f, n)) = self.found {
            append_with_space(&mut message, &format!("({f} of {n} found)"));
        }
        let mut out = format_line(name, self.seconds * 1e6 / self.done as f64, rate, &message);
        out.push('\n');
        if self.histogram {
            out.push_str("Microseconds per op:\n");
            out.push_str(&self.hist.to_text());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_without_rate_has_only_the_message() {
        assert_eq!(
            format_line("readrandom", 2.5, None, "(10 of 10 found)"),
            "readrandom   :       2.500 micros/op; (10 of 10 found)"
        );
        assert_eq!(
            format_line("compact", 1e6, None, ""),
            "compact      : 1000000.000 micros/op;"
        );
    }

    #[test]
    fn long_names_are_not_truncated() {
        assert_eq!(
            format_line("readwhilewriting", 3.0, Some(1.0), ""),
            "readwhilewriting :       3.000 micros/op;    1.0 MB/s"
        );
    }

    #[test]
    fn lines_parse_back() {
        let l = format_line("fill100K", 1234.5, Some(77.26), "(1000 ops)");
        let p = parse_line(&l).unwrap();
        assert_eq!(p.name, "fill100K");
        assert_eq!(p.micros_per_op, 1234.5);
        assert_eq!(p.mb_per_sec, Some(77.3));
        assert_eq!(p.message, "(1000 ops)");
        let p = parse_line("readrandom   :       2.500 micros/op; (10 of 10 found)").unwrap();
        assert_eq!(p.mb_per_sec, None);
        assert_eq!(p.message, "(10 of 10 found)");
        assert!(parse_line("Keys:       16 bytes each").is_none());
    }

    #[test]
    fn merged_stats_sum_time_and_operations() {
        let mut a = Stats::new(false, false);
        let mut b = Stats::new(false, false);
        for _ in 0..3 {
            a.finished_single_op();
        }
        b.finished_single_op();
        a.stop();
        b.stop();
        a.add_message("(x)");
        b.add_message("(y)");
        a.merge(&b);
        assert_eq!(a.done(), 4);
        assert!(a.report("t").contains("(x)"));
    }

    #[test]
    fn found_counts_add_up_over_threads() {
        let mut a = Stats::new(false, false);
        let mut b = Stats::new(false, false);
        a.add_found(3, 5);
        b.add_found(5, 5);
        a.merge(&b);
        assert!(a.report("getseq").ends_with("micros/op; (8 of 10 found)\n"));
    }

    #[test]
    fn idle_time_is_not_timed() {
        let mut a = Stats::new(false, false);
        a.finished_single_op();
        std::thread::sleep(std::time::Duration::from_millis(20));
        a.stop();
        a.exclude_idle(1.0);
        assert!(a
            .report("lsmiter")
            .starts_with("lsmiter      :       0.000 micros/op;"));
    }
}
