//! Parsing of `db_bench` output: result lines in LevelDB's db_bench format,
//! `<name> : not supported (<why>)` lines, the `Engine:` and `Assertions:`
//! headers, the `skipped:` line, the `# io` lines, the `lsmiter-*`
//! per-iteration lines, and the `--timeseries` CSV.
//!
//! Invariants: every line that claims to be one of the machine-read kinds (it
//! contains `micros/op` or ` : not supported (`, or starts with `# io `,
//! `lsmiter-` or `skipped:`) either parses completely or yields a
//! [`ParseError`] naming the line; other lines (headers, warnings,
//! histograms) are kept or ignored, never guessed at. Numbers must be finite
//! and non-negative; a counter db_bench could not read is printed `na` and
//! read as `None`.

use std::fmt;

/// Why a piece of db_bench output could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// 1-based line number in the text that was parsed.
    pub line_no: usize,
    /// The offending line, verbatim.
    pub line: String,
    /// What was wrong with it.
    pub reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {:?}", self.line_no, self.reason, self.line)
    }
}

impl std::error::Error for ParseError {}

/// One benchmark result line, e.g.
/// `readrandom   :       4.170 micros/op; (632141 of 1000000 found)`.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchLine {
    /// Benchmark name (`fillseq`, `readrandom`, ...).
    pub name: String,
    /// Microseconds per operation (per entry for batch benchmarks), as db_bench
    /// prints it: summed thread time divided by operations done.
    pub micros_per_op: f64,
    /// The `MB/s` figure, when printed.
    pub mb_per_s: Option<f64>,
    /// `(found, of)` from `(F of N found)`, when printed.
    pub found: Option<(u64, u64)>,
    /// Anything else after `micros/op;` that was not recognised (e.g. `(1000 ops)`).
    pub extra: String,
    /// Operations done when db_bench's time cap stopped the benchmark early
    /// (`(stopped by --duration=S after N ops)`), if it did.
    pub stopped_after: Option<u64>,
}

impl BenchLine {
    /// Operations per second for a run with `threads` threads.
    ///
    /// db_bench (as LevelDB's) divides the *summed* time of all threads by the
    /// operations done, so the throughput of the whole run is `threads` times
    /// the single-thread rate.
    pub fn ops_per_sec(&self, threads: u32) -> f64 {
        if self.micros_per_op <= 0.0 {
            return 0.0;
        }
        f64::from(threads.max(1)) * 1e6 / self.micros_per_op
    }
}

/// Counters from a `# io <bench> key=value ...` line (db_bench prints one
/// after every benchmark; keys the report does not use are skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoCounters {
    /// Benchmark the counters belong to.
    pub bench: String,
    /// Bytes the process caused to be written to the device during the
    /// benchmark (`write_bytes` of /proc/self/io), when known.
    pub write_bytes: Option<u64>,
    /// Of those, bytes that never reached the device because their file was
    /// deleted or truncated first (`cancelled_write_bytes`), when known.
    pub cancelled_write_bytes: Option<u64>,
    /// Key and value bytes the benchmark wrote.
    pub user_bytes: u64,
    /// Size of the database directory after the benchmark.
    pub db_size: u64,
    /// Peak resident set of the process so far, KiB, when known.
    pub max_rss_kb: Option<u64>,
}

impl IoCounters {
    /// Bytes that reached (or will reach) the device: written minus
    /// cancelled.
    pub fn device_bytes(&self) -> Option<u64> {
        self.write_bytes
            .map(|w| w.saturating_sub(self.cancelled_write_bytes.unwrap_or(0)))
    }

    /// Write amplification: device bytes per user byte written, or `None`
    /// when the benchmark wrote no user data (reads) or the device counters
    /// are unknown.
    pub fn write_amplification(&self) -> Option<f64> {
        match (self.device_bytes(), self.user_bytes) {
            (_, 0) | (None, _) => None,
            (Some(d), u) => Some(d as f64 / u as f64),
        }
    }
}

/// Which half of an `lsmiter` iteration a line reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IterPhase {
    /// The 50,000 inserts.
    Insert,
    /// The 50,000 lookups.
    Lookup,
}

impl IterPhase {
    /// Name used in the output line (`lsmiter-insert` / `lsmiter-lookup`).
    pub fn line_name(self) -> &'static str {
        match self {
            IterPhase::Insert => "lsmiter-insert",
            IterPhase::Lookup => "lsmiter-lookup",
        }
    }
}

/// One `lsmiter-insert <i> : <ops/s> ops/sec` line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IterLine {
    /// Insert or lookup.
    pub phase: IterPhase,
    /// Iteration number as printed.
    pub iteration: u64,
    /// Operations per second in that iteration.
    pub ops_per_sec: f64,
}

/// Everything read from one db_bench process's standard output.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BenchOutput {
    /// `Some(reason)` when the engine is not built (`skipped: <reason>`).
    pub skipped: Option<String>,
    /// Engine name and version from the `Engine: <name> <version>` header.
    pub engine: Option<(String, String)>,
    /// Other `Key: value` header lines before the first result, in order.
    pub header: Vec<(String, String)>,
    /// Result lines, in output order (a benchmark may appear more than once).
    pub results: Vec<BenchLine>,
    /// `# io` lines, in output order.
    pub io: Vec<IoCounters>,
    /// `lsmiter-*` lines, in output order.
    pub iterations: Vec<IterLine>,
    /// `(benchmark, reason)` from `<name> : not supported (<reason>)` lines.
    pub unsupported: Vec<(String, String)>,
    /// The `Assertions:` header: whether the engine's code keeps its
    /// assertions (`on (...)`, `off (...)` or `unknown (...)`).
    pub assertions: Option<String>,
}

impl BenchOutput {
    /// The last result line for `name`: when a benchmark runs more than once in
    /// a process (e.g. a warming `readrandom`), the last instance counts, as in
    /// the WiredTiger write-up.
    pub fn last_result(&self, name: &str) -> Option<&BenchLine> {
        self.results.iter().rev().find(|r| r.name == name)
    }

    /// The last `# io` line for `name`.
    pub fn last_io(&self, name: &str) -> Option<&IoCounters> {
        self.io.iter().rev().find(|r| r.bench == name)
    }

    /// Why benchmark `name` was not run, if db_bench said it is not supported.
    pub fn unsupported_reason(&self, name: &str) -> Option<&str> {
        self.unsupported
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, why)| why.as_str())
    }

    /// Peak resident set of the whole process, KiB: the largest `max_rss_kb`
    /// of its `# io` lines.
    pub fn peak_rss_kb(&self) -> Option<u64> {
        self.io.iter().filter_map(|i| i.max_rss_kb).max()
    }

    /// Per-iteration ops/s for one phase, in output order.
    pub fn iteration_series(&self, phase: IterPhase) -> Vec<(u64, f64)> {
        self.iterations
            .iter()
            .filter(|l| l.phase == phase)
            .map(|l| (l.iteration, l.ops_per_sec))
            .collect()
    }
}

fn err(line_no: usize, line: &str, reason: impl Into<String>) -> ParseError {
    ParseError {
        line_no,
        line: line.to_string(),
        reason: reason.into(),
    }
}

fn parse_f64(s: &str) -> Option<f64> {
    let v: f64 = s.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// Parses the whole standard output of one db_bench process.
pub fn parse_output(text: &str) -> Result<BenchOutput, ParseError> {
    let mut out = BenchOutput::default();
    for (idx, raw) in text.lines().enumerate() {
        let line_no = idx + 1;
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            continue;
        }
        if let Some(reason) = trimmed.strip_prefix("skipped:") {
            let reason = reason.trim();
            if reason.is_empty() {
                return Err(err(line_no, line, "`skipped:` line without a reason"));
            }
            out.skipped = Some(reason.to_string());
            continue;
        }
        if trimmed.starts_with("# io") {
            out.io
                .push(parse_io_line(trimmed).map_err(|r| err(line_no, line, r))?);
            continue;
        }
        if trimmed.starts_with("lsmiter-") {
            out.iterations
                .push(parse_iter_line(trimmed).map_err(|r| err(line_no, line, r))?);
            continue;
        }
        if let Some((name, rest)) = trimmed.split_once(" : not supported (") {
            let why = rest
                .strip_suffix(')')
                .ok_or_else(|| err(line_no, line, "`not supported (` without a closing `)`"))?;
            let name = name.trim();
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(err(
                    line_no,
                    line,
                    "`not supported` line without a benchmark name",
                ));
            }
            out.unsupported.push((name.to_string(), why.to_string()));
            continue;
        }
        if trimmed.contains("micros/op") {
            out.results
                .push(parse_bench_line(trimmed).map_err(|r| err(line_no, line, r))?);
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("Engine:") {
            let rest = rest.trim();
            let (name, version) = match rest.split_once(char::is_whitespace) {
                Some((n, v)) => {
                    // db_bench prints `Engine: <name> version <version>`.
                    let v = v.trim();
                    let v = v.strip_prefix("version ").unwrap_or(v).trim();
                    (n.to_string(), v.to_string())
                }
                None => (rest.to_string(), String::new()),
            };
            if name.is_empty() {
                return Err(err(line_no, line, "`Engine:` header without a name"));
            }
            out.engine = Some((name, version));
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("Assertions:") {
            out.assertions = Some(rest.trim().to_string());
            continue;
        }
        if out.results.is_empty() {
            if let Some((k, v)) = trimmed.split_once(':') {
                let k = k.trim();
                if !k.is_empty() && !k.contains(' ') {
                    out.header.push((k.to_string(), v.trim().to_string()));
                }
            }
        }
        // Anything else (separators, warnings, histograms) carries no figure.
    }
    Ok(out)
}

/// How db_bench says its `--duration` cap stopped a benchmark.
const STOPPED: &str = "(stopped by --duration=";

/// Parses `name : 1.234 micros/op; [<rate> MB/s] [(F of N found)] [more]`.
pub fn parse_bench_line(line: &str) -> Result<BenchLine, String> {
    let (name, rest) = line.split_once(':').ok_or("result line without `name :`")?;
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err("result line without a one-word benchmark name".into());
    }
    let (num, after) = rest
        .split_once("micros/op")
        .ok_or("result line without `micros/op`")?;
    let micros_per_op =
        parse_f64(num).ok_or_else(|| format!("`{}` is not a micros/op figure", num.trim()))?;
    let mut tail = after.trim_start();
    tail = tail.strip_prefix(';').unwrap_or(tail).trim();

    let mut mb_per_s = None;
    if let Some(pos) = tail.find("MB/s") {
        let before = tail[..pos].trim();
        let figure = before.rsplit(char::is_whitespace).next().unwrap_or(before);
        // Only a figure that starts the tail counts as the rate.
        if before == figure {
            mb_per_s =
                Some(parse_f64(figure).ok_or_else(|| format!("`{figure}` is not an MB/s figure"))?);
            tail = tail[pos + "MB/s".len()..].trim();
        }
    }

    let mut found = None;
    let mut extra = String::new();
    if let Some(open) = tail.find('(') {
        if let Some(close_rel) = tail[open..].find(')') {
            let inner = &tail[open + 1..open + close_rel];
            if let Some(counts) = inner.strip_suffix("found") {
                let mut parts = counts.split_whitespace();
                let (a, of, b) = (parts.next(), parts.next(), parts.next());
                match (a, of, b, parts.next()) {
                    (Some(a), Some("of"), Some(b), None) => {
                        let a: u64 = a
                            .parse()
                            .map_err(|_| format!("`{a}` is not a found count"))?;
                        let b: u64 = b
                            .parse()
                            .map_err(|_| format!("`{b}` is not a lookup count"))?;
                        found = Some((a, b));
                        extra = format!("{}{}", &tail[..open], &tail[open + close_rel + 1..])
                            .trim()
                            .to_string();
                    }
                    _ => return Err(format!("cannot read found counts in `({inner})`")),
                }
            }
        }
    }
    if found.is_none() {
        extra = tail.to_string();
    }
    let stopped_after = match extra.find(STOPPED) {
        None => None,
        Some(at) => {
            let rest = &extra[at + STOPPED.len()..];
            let (_, after) = rest
                .split_once(" after ")
                .ok_or("a time-cap message without `after N ops`")?;
            let n = after.split_whitespace().next().unwrap_or("");
            Some(
                n.parse::<u64>()
                    .map_err(|_| format!("`{n}` is not an operation count"))?,
            )
        }
    };
    Ok(BenchLine {
        name: name.to_string(),
        micros_per_op,
        mb_per_s,
        found,
        extra,
        stopped_after,
    })
}

/// Parses `# io <bench> key=value ...`: `user_bytes` and `db_size` must be
/// byte counts; `write_bytes`, `cancelled_write_bytes` and `max_rss_kb` are
/// byte counts or `na`; other keys (engine, read counters, elapsed time) are
/// skipped whatever their value.
pub fn parse_io_line(line: &str) -> Result<IoCounters, String> {
    let rest = line
        .strip_prefix("# io ")
        .ok_or("expected `# io <bench> write_bytes=.. user_bytes=.. db_size=..`")?;
    let mut words = rest.split_whitespace();
    let bench = words.next().ok_or("`# io` line without a benchmark name")?;
    let (mut w, mut c, mut u, mut d, mut rss) = (None, None, None, None, None);
    for word in words {
        let (k, v) = word
            .split_once('=')
            .ok_or_else(|| format!("`{word}` is not key=value"))?;
        let count = || -> Result<u64, String> {
            v.parse()
                .map_err(|_| format!("`{v}` is not a byte count for {k}"))
        };
        let maybe = || -> Result<Option<u64>, String> {
            if v == "na" {
                Ok(None)
            } else {
                count().map(Some)
            }
        };
        match k {
            "write_bytes" => w = Some(maybe()?),
            "cancelled_write_bytes" => c = Some(maybe()?),
            "max_rss_kb" => rss = Some(maybe()?),
            "user_bytes" => u = Some(count()?),
            "db_size" => d = Some(count()?),
            _ => {} // other counters are not used by the report
        }
    }
    match (w, u, d) {
        (Some(write_bytes), Some(user_bytes), Some(db_size)) => Ok(IoCounters {
            bench: bench.to_string(),
            write_bytes,
            cancelled_write_bytes: c.flatten(),
            user_bytes,
            db_size,
            max_rss_kb: rss.flatten(),
        }),
        _ => Err("`# io` line lacks one of write_bytes, user_bytes, db_size".into()),
    }
}

/// Parses `lsmiter-insert <i> : <ops/s> ops/sec` (or `lsmiter-lookup`).
pub fn parse_iter_line(line: &str) -> Result<IterLine, String> {
    let (left, right) = line
        .split_once(':')
        .ok_or("expected `lsmiter-<phase> <i> : <ops/s> ops/sec`")?;
    let mut words = left.split_whitespace();
    let phase = match words.next() {
        Some("lsmiter-insert") => IterPhase::Insert,
        Some("lsmiter-lookup") => IterPhase::Lookup,
        other => return Err(format!("unknown lsmiter phase {other:?}")),
    };
    let iteration: u64 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or("lsmiter line without an iteration number")?;
    if words.next().is_some() {
        return Err("unexpected words before `:`".into());
    }
    let figure = right
        .trim()
        .strip_suffix("ops/sec")
        .ok_or("lsmiter line does not end in `ops/sec`")?;
    let ops_per_sec =
        parse_f64(figure).ok_or_else(|| format!("`{}` is not an ops/sec figure", figure.trim()))?;
    Ok(IterLine {
        phase,
        iteration,
        ops_per_sec,
    })
}

/// One row of the `--timeseries` CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Position of the benchmark in `--benchmarks` (0-based), which tells
    /// apart two runs of the same benchmark in one process.
    pub index: usize,
    /// Benchmark the sample belongs to.
    pub bench: String,
    /// Seconds since that benchmark started.
    pub elapsed_s: f64,
    /// Operations completed so far in that benchmark (all threads).
    pub ops_done: u64,
    /// Throughput over the interval since the previous sample.
    pub interval_ops_per_sec: f64,
}

/// The expected first line of the timeseries CSV (as db_bench writes it).
pub const TIMESERIES_HEADER: &str = "engine,index,benchmark,elapsed_s,ops,interval_ops_per_sec";

/// Parses a `--timeseries` CSV file's contents.
pub fn parse_timeseries(text: &str) -> Result<Vec<Sample>, ParseError> {
    let mut rows = Vec::new();
    let mut saw_header = false;
    for (idx, raw) in text.lines().enumerate() {
        let line_no = idx + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if !saw_header {
            if line != TIMESERIES_HEADER {
                return Err(err(
                    line_no,
                    line,
                    format!("timeseries CSV must start with `{TIMESERIES_HEADER}`"),
                ));
            }
            saw_header = true;
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        let [_engine, index, bench, elapsed, ops, rate] = fields.as_slice() else {
            return Err(err(line_no, line, "expected 6 comma-separated fields"));
        };
        let index = index
            .trim()
            .parse::<usize>()
            .map_err(|_| err(line_no, line, "bad index"))?;
        let elapsed_s = parse_f64(elapsed).ok_or_else(|| err(line_no, line, "bad elapsed_s"))?;
        let ops_done = ops
            .trim()
            .parse::<u64>()
            .map_err(|_| err(line_no, line, "bad ops"))?;
        let interval_ops_per_sec =
            parse_f64(rate).ok_or_else(|| err(line_no, line, "bad interval_ops_per_sec"))?;
        if bench.trim().is_empty() {
            return Err(err(line_no, line, "empty benchmark name"));
        }
        rows.push(Sample {
            index,
            bench: bench.trim().to_string(),
            elapsed_s,
            ops_done,
            interval_ops_per_sec,
        });
    }
    if !saw_header {
        return Err(err(0, "", "empty timeseries CSV"));
    }
    Ok(rows)
}

/// The samples of the last run of `bench` in a process's series.
pub fn last_run_of<'a>(samples: &'a [Sample], bench: &str) -> Vec<&'a Sample> {
    let last = samples
        .iter()
        .filter(|s| s.bench == bench)
        .map(|s| s.index)
        .max();
    samples
        .iter()
        .filter(|s| s.bench == bench && Some(s.index) == last)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Output in the form the project's db_bench prints it.
    const DB_BENCH: &str = "\
Engine:     leveldb version 1.23
Date:       2026-01-02 15:19:04 UTC
CPU:        2 * AMD EPYC
Keys:       16 bytes each
Values:     100 bytes each (50 bytes after compression)
Entries:    1000000
WARNING: the installed leveldb library was built with assertions enabled (251 assert call sites): its figures are pessimistic
Assertions: on (the installed library has 251 assert call sites: built without -DNDEBUG)
Setting:    leveldb.compression = snappy
------------------------------------------------
fillseq      :       1.765 micros/op;   62.7 MB/s
# io fillseq engine=leveldb write_bytes=123456789 cancelled_write_bytes=456789 read_bytes=0 wchar=1 rchar=2 user_bytes=116000000 db_size=60000000 db_alloc=60010000 max_rss_kb=40000 elapsed_s=1.765
fillsync     :    1378.532 micros/op;    0.1 MB/s (1000 ops)
fillbatch    : not supported (Kyoto TreeDB has no write batches)
readrandom   :       4.170 micros/op; (632141 of 1000000 found)
# io readrandom engine=leveldb write_bytes=na cancelled_write_bytes=na read_bytes=na wchar=na rchar=na user_bytes=0 db_size=60000000 db_alloc=1 max_rss_kb=51234 elapsed_s=4.2
readrandom   :       3.900 micros/op; (632000 of 1000000 found)
compact      :     211.000 micros/op;
Microseconds per op:
Count: 1000000  Average: 1.7650  StdDev: 3.21
Percentiles: P50: 1.00 P75: 2.00 P99: 5.00
[       0,       1 )  500000  50.000%  50.000% ##########
";

    #[test]
    fn reads_results_headers_io_and_rss() {
        let out = parse_output(DB_BENCH).expect("parses");
        assert_eq!(out.skipped, None);
        assert_eq!(out.engine, Some(("leveldb".into(), "1.23".into())));
        assert!(out
            .assertions
            .as_deref()
            .unwrap()
            .starts_with("on (the installed"));
        assert!(out.header.contains(&("Entries".into(), "1000000".into())));
        assert_eq!(out.results.len(), 5);
        let fillseq = &out.results[0];
        assert_eq!(fillseq.name, "fillseq");
        assert_eq!(fillseq.micros_per_op, 1.765);
        assert_eq!(fillseq.mb_per_s, Some(62.7));
        assert_eq!(fillseq.found, None);
        assert_eq!(out.results[1].extra, "(1000 ops)");
        assert_eq!(out.results[4].name, "compact");
        assert_eq!(out.results[4].mb_per_s, None);
        assert_eq!(out.peak_rss_kb(), Some(51234));
        let io = out.last_io("fillseq").expect("io line");
        assert_eq!(io.write_bytes, Some(123_456_789));
        assert_eq!(io.device_bytes(), Some(123_000_000));
        assert_eq!(io.user_bytes, 116_000_000);
        assert_eq!(io.db_size, 60_000_000);
        assert_eq!(io.max_rss_kb, Some(40_000));
        assert!((io.write_amplification().unwrap() - 1.0603).abs() < 1e-3);
        let rr = out.last_io("readrandom").unwrap();
        assert_eq!((rr.write_bytes, rr.write_amplification()), (None, None));
        assert_eq!(
            out.unsupported_reason("fillbatch"),
            Some("Kyoto TreeDB has no write batches")
        );
        assert_eq!(out.unsupported_reason("fillseq"), None);
    }

    #[test]
    fn found_counts_and_last_instance_wins() {
        let out = parse_output(DB_BENCH).unwrap();
        let rr = out.last_result("readrandom").unwrap();
        assert_eq!(rr.micros_per_op, 3.9);
        assert_eq!(rr.found, Some((632_000, 1_000_000)));
        assert_eq!(out.results[2].found, Some((632_141, 1_000_000)));
        assert_eq!(rr.extra, "");
    }

    #[test]
    fn ops_per_sec_scales_with_threads() {
        let l = parse_bench_line("readrandom : 4.000 micros/op;").unwrap();
        assert_eq!(l.ops_per_sec(1), 250_000.0);
        assert_eq!(l.ops_per_sec(4), 1_000_000.0);
        let zero = parse_bench_line("x : 0.000 micros/op;").unwrap();
        assert_eq!(zero.ops_per_sec(1), 0.0);
    }

    #[test]
    fn a_time_capped_line_says_how_many_operations_ran() {
        let l = parse_bench_line(
            "fillrandbatch :      31.627 micros/op;    3.5 MB/s (stopped by --duration=60 after 102000 ops)",
        )
        .unwrap();
        assert_eq!(l.stopped_after, Some(102_000));
        assert_eq!(l.mb_per_s, Some(3.5));
        let r = parse_bench_line(
            "readrandom : 4.791 micros/op; (126302 of 200000 found) (stopped by --duration=3 after 130000 ops)",
        )
        .unwrap();
        assert_eq!(r.found, Some((126_302, 200_000)));
        assert_eq!(r.stopped_after, Some(130_000));
        let plain = parse_bench_line("fillseq : 1.0 micros/op; 110.0 MB/s").unwrap();
        assert_eq!(plain.stopped_after, None);
        assert!(
            parse_bench_line("fillseq : 1.0 micros/op; (stopped by --duration=5 after x ops)")
                .is_err()
        );
    }

    #[test]
    fn rate_and_found_together() {
        let l = parse_bench_line("readseq : 0.250 micros/op;  442.5 MB/s (1000 of 1000 found)")
            .unwrap();
        assert_eq!(l.mb_per_s, Some(442.5));
        assert_eq!(l.found, Some((1000, 1000)));
    }

    #[test]
    fn skipped_engine() {
        let out = parse_output(
            "skipped: kyoto-treedb is not in this build: header <kclangc.h> not found\n",
        )
        .unwrap();
        assert_eq!(
            out.skipped.as_deref(),
            Some("kyoto-treedb is not in this build: header <kclangc.h> not found")
        );
        assert!(out.results.is_empty());
        let e = parse_output("skipped:\n").unwrap_err();
        assert_eq!(e.line_no, 1);
    }

    #[test]
    fn lsmiter_lines() {
        let out = parse_output(
            "Engine:     shale version 0.1.0\nlsmiter-insert 0 : 150000.5 ops/sec\nlsmiter-lookup 0 : 300000 ops/sec\nlsmiter-insert 1 : 140000 ops/sec\n",
        )
        .unwrap();
        assert_eq!(out.engine, Some(("shale".into(), "0.1.0".into())));
        assert_eq!(
            out.iteration_series(IterPhase::Insert),
            vec![(0, 150000.5), (1, 140000.0)]
        );
        assert_eq!(out.iteration_series(IterPhase::Lookup), vec![(0, 300000.0)]);
    }

    #[test]
    fn malformed_lines_are_clear_errors() {
        let cases = [
            ("fillseq : fast micros/op;\n", "micros/op figure"),
            ("fillseq : -1.0 micros/op;\n", "micros/op figure"),
            ("fill seq : 1.0 micros/op;\n", "one-word benchmark name"),
            (
                "readrandom : 1.0 micros/op; (many of 10 found)\n",
                "found count",
            ),
            (
                "readrandom : 1.0 micros/op; (1 in 10 found)\n",
                "found counts",
            ),
            ("fillseq : 1.0 micros/op; lots MB/s\n", "MB/s figure"),
            ("# io fillseq write_bytes=1 user_bytes=2\n", "lacks one of"),
            (
                "# io fillseq write_bytes=x user_bytes=2 db_size=3\n",
                "byte count",
            ),
            (
                "# io fillseq write_bytes=1 user_bytes=na db_size=3\n",
                "byte count",
            ),
            ("# io fillseq engine\n", "key=value"),
            ("# io\n", "expected `# io"),
            ("lsmiter-insert x : 1 ops/sec\n", "iteration number"),
            ("lsmiter-delete 1 : 1 ops/sec\n", "unknown lsmiter phase"),
            ("lsmiter-insert 1 : 1 ops\n", "ops/sec"),
            ("fillbatch : not supported (no batches\n", "closing"),
        ];
        for (text, want) in cases {
            let input = format!("Engine: shale 0.1\n{text}");
            let e = parse_output(&input).expect_err(text);
            assert_eq!(e.line_no, 2, "{text}");
            assert!(e.to_string().contains(want), "{text}: {e}");
            assert!(e.to_string().starts_with("line 2: "), "{e}");
        }
    }

    #[test]
    fn timeseries_csv() {
        let rows = parse_timeseries(
            "engine,index,benchmark,elapsed_s,ops,interval_ops_per_sec\nshale,0,fillseq,1.000,500000,500000.0\nshale,0,fillseq,2.001,900000,399600.4\nshale,1,readseq,1.000,100,100.0\nshale,3,readseq,0.5,10,20.0\n",
        )
        .unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!((rows[1].index, rows[1].bench.as_str()), (0, "fillseq"));
        assert_eq!(rows[1].ops_done, 900_000);
        assert_eq!(rows[1].interval_ops_per_sec, 399600.4);
        let last = last_run_of(&rows, "readseq");
        assert_eq!(last.len(), 1);
        assert_eq!(last[0].index, 3);
        assert_eq!(last_run_of(&rows, "fillseq").len(), 2);
        assert!(parse_timeseries("").is_err());
        assert!(parse_timeseries("a,b\n").is_err());
        let e = parse_timeseries(&format!("{TIMESERIES_HEADER}\nx,0,y,1,2\n")).unwrap_err();
        assert_eq!(e.line_no, 2);
        assert!(parse_timeseries(&format!("{TIMESERIES_HEADER}\nx,0,y,1,-2,3\n")).is_err());
    }
}
