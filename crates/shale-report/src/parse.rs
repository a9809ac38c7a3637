//! Parsing of `db_bench` output: result lines in LevelDB's db_bench format,
//! the `Engine:` header, the `skipped:` line, the `# io` and `# peak_rss_kb`
//! lines, the `lsmiter-*` per-iteration lines, and the `--timeseries` CSV.
//!
//! Invariants: every line that claims to be one of the machine-read kinds (it
//! contains `micros/op`, or starts with `# io `, `# peak_rss_kb`, `lsmiter-` or
//! `skipped:`) either parses completely or yields a [`ParseError`] naming the
//! line; other lines (headers, warnings, histograms) are kept or ignored, never
//! guessed at. Numbers must be finite and non-negative.

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

/// Counters from a `# io <bench> write_bytes=.. user_bytes=.. db_size=..` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoCounters {
    /// Benchmark the counters belong to.
    pub bench: String,
    /// Bytes the device was asked to write during the benchmark.
    pub write_bytes: u64,
    /// Key and value bytes the benchmark wrote.
    pub user_bytes: u64,
    /// Size of the database directory after the benchmark.
    pub db_size: u64,
}

impl IoCounters {
    /// Write amplification: device bytes written per user byte, or `None`
    /// when the benchmark wrote no user data (reads).
    pub fn write_amplification(&self) -> Option<f64> {
        if self.user_bytes == 0 {
            None
        } else {
            Some(self.write_bytes as f64 / self.user_bytes as f64)
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
    /// From `# peak_rss_kb=<n>`.
    pub peak_rss_kb: Option<u64>,
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
        if let Some(rest) = trimmed.strip_prefix("# peak_rss_kb") {
            let v = rest
                .strip_prefix('=')
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| err(line_no, line, "expected `# peak_rss_kb=<integer>`"))?;
            out.peak_rss_kb = Some(v);
            continue;
        }
        if trimmed.starts_with("lsmiter-") {
            out.iterations
                .push(parse_iter_line(trimmed).map_err(|r| err(line_no, line, r))?);
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
                Some((n, v)) => (n.to_string(), v.trim().to_string()),
                None => (rest.to_string(), String::new()),
            };
            if name.is_empty() {
                return Err(err(line_no, line, "`Engine:` header without a name"));
            }
            out.engine = Some((name, version));
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
    Ok(BenchLine {
        name: name.to_string(),
        micros_per_op,
        mb_per_s,
        found,
        extra,
    })
}

/// Parses `# io <bench> write_bytes=<n> user_bytes=<n> db_size=<n>`.
pub fn parse_io_line(line: &str) -> Result<IoCounters, String> {
    let rest = line
        .strip_prefix("# io ")
        .ok_or("expected `# io <bench> write_bytes=.. user_bytes=.. db_size=..`")?;
    let mut words = rest.split_whitespace();
    let bench = words.next().ok_or("`# io` line without a benchmark name")?;
    let (mut w, mut u, mut d) = (None, None, None);
    for word in words {
        let (k, v) = word
            .split_once('=')
            .ok_or_else(|| format!("`{word}` is not key=value"))?;
        let v: u64 = v
            .parse()
            .map_err(|_| format!("`{v}` is not a byte count for {k}"))?;
        let slot = match k {
            "write_bytes" => &mut w,
            "user_bytes" => &mut u,
            "db_size" => &mut d,
            _ => continue, // later additions are tolerated
        };
        *slot = Some(v);
    }
    match (w, u, d) {
        (Some(write_bytes), Some(user_bytes), Some(db_size)) => Ok(IoCounters {
            bench: bench.to_string(),
            write_bytes,
            user_bytes,
            db_size,
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
    /// Benchmark the sample belongs to.
    pub bench: String,
    /// Seconds since that benchmark started.
    pub elapsed_s: f64,
    /// Operations completed so far in that benchmark (all threads).
    pub ops_done: u64,
    /// Throughput over the interval since the previous sample.
    pub interval_ops_per_sec: f64,
}

/// The expected first line of the timeseries CSV.
pub const TIMESERIES_HEADER: &str = "bench,elapsed_s,ops_done,interval_ops_per_sec";

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
        let [bench, elapsed, ops, rate] = fields.as_slice() else {
            return Err(err(line_no, line, "expected 4 comma-separated fields"));
        };
        let elapsed_s = parse_f64(elapsed).ok_or_else(|| err(line_no, line, "bad elapsed_s"))?;
        let ops_done = ops
            .trim()
            .parse::<u64>()
            .map_err(|_| err(line_no, line, "bad ops_done"))?;
        let interval_ops_per_sec =
            parse_f64(rate).ok_or_else(|| err(line_no, line, "bad interval_ops_per_sec"))?;
        if bench.trim().is_empty() {
            return Err(err(line_no, line, "empty bench name"));
        }
        rows.push(Sample {
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

#[cfg(test)]
mod tests {
    use super::*;

    const LEVELDB_LIKE: &str = "\
Engine: leveldb 1.23
Date:       Thu Jun  2 15:19:04 2022
CPU:        8 * Intel(R) Core(TM) i5-8250U CPU @ 1.60GHz
Keys:       16 bytes each
Values:     100 bytes each (50 bytes after compression)
Entries:    1000000
WARNING: Assertions are enabled; benchmarks unnecessarily slow
------------------------------------------------
fillseq      :       1.765 micros/op;   62.7 MB/s
# io fillseq write_bytes=123456789 user_bytes=116000000 db_size=60000000
fillsync     :    1378.532 micros/op;    0.1 MB/s (1000 ops)
readrandom   :       4.170 micros/op; (632141 of 1000000 found)
# io readrandom write_bytes=0 user_bytes=0 db_size=60000000
readrandom   :       3.900 micros/op; (632000 of 1000000 found)
compact      :     211.000 micros/op;
Microseconds per op:
Count: 1000000  Average: 1.7650  StdDev: 3.21
Percentiles: P50: 1.00 P75: 2.00 P99: 5.00
[       0,       1 )  500000  50.000%  50.000% ##########
# peak_rss_kb=51234
";

    #[test]
    fn reads_results_headers_io_and_rss() {
        let out = parse_output(LEVELDB_LIKE).expect("parses");
        assert_eq!(out.skipped, None);
        assert_eq!(out.engine, Some(("leveldb".into(), "1.23".into())));
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
        assert_eq!(out.peak_rss_kb, Some(51234));
        let io = out.last_io("fillseq").expect("io line");
        assert_eq!(io.write_bytes, 123_456_789);
        assert_eq!(io.user_bytes, 116_000_000);
        assert_eq!(io.db_size, 60_000_000);
        assert!((io.write_amplification().unwrap() - 1.0643).abs() < 1e-3);
        assert_eq!(
            out.last_io("readrandom").unwrap().write_amplification(),
            None
        );
    }

    #[test]
    fn found_counts_and_last_instance_wins() {
        let out = parse_output(LEVELDB_LIKE).unwrap();
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
    fn rate_and_found_together() {
        let l = parse_bench_line("readseq : 0.250 micros/op;  442.5 MB/s (1000 of 1000 found)")
            .unwrap();
        assert_eq!(l.mb_per_s, Some(442.5));
        assert_eq!(l.found, Some((1000, 1000)));
    }

    #[test]
    fn skipped_engine() {
        let out = parse_output("skipped: kyoto-treedb: libkyotocabinet not built in\n").unwrap();
        assert_eq!(
            out.skipped.as_deref(),
            Some("kyoto-treedb: libkyotocabinet not built in")
        );
        assert!(out.results.is_empty());
        let e = parse_output("skipped:\n").unwrap_err();
        assert_eq!(e.line_no, 1);
    }

    #[test]
    fn lsmiter_lines() {
        let out = parse_output(
            "Engine: shale 0.1.0\nlsmiter-insert 0 : 150000.5 ops/sec\nlsmiter-lookup 0 : 300000 ops/sec\nlsmiter-insert 1 : 140000 ops/sec\n",
        )
        .unwrap();
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
            ("# io\n", "expected `# io"),
            ("# peak_rss_kb=lots\n", "peak_rss_kb"),
            ("lsmiter-insert x : 1 ops/sec\n", "iteration number"),
            ("lsmiter-delete 1 : 1 ops/sec\n", "unknown lsmiter phase"),
            ("lsmiter-insert 1 : 1 ops\n", "ops/sec"),
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
            "bench,elapsed_s,ops_done,interval_ops_per_sec\nfillseq,1.0,500000,500000\nfillseq,2.001,900000,399600.4\nreadseq,1.0,100,100\n",
        )
        .unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1].bench, "fillseq");
        assert_eq!(rows[1].ops_done, 900_000);
        assert_eq!(rows[1].interval_ops_per_sec, 399600.4);
        assert!(parse_timeseries("").is_err());
        assert!(parse_timeseries("a,b\n").is_err());
        let e =
            parse_timeseries("bench,elapsed_s,ops_done,interval_ops_per_sec\nx,1,2\n").unwrap_err();
        assert_eq!(e.line_no, 2);
        assert!(
            parse_timeseries("bench,elapsed_s,ops_done,interval_ops_per_sec\nx,1,-2,3\n").is_err()
        );
    }
}
