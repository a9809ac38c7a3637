//! The report's data model: for every seed section a table whose rows are
//! workloads and whose cells are one engine's summarised ops/s (or why there
//! is none), with resource figures beside them, and the over-time series the
//! line charts draw. Built from a [`StudyRun`]; rendered by `markdown` and
//! `html`.
//!
//! Invariants: a cell either holds a summary of at least one run or says why
//! not (`n/a: <reason>`); ratios are only formed between two summaries.

use std::collections::BTreeMap;

use crate::engines::Engine;
use crate::parse::{last_run_of, BenchOutput, IterPhase};
use crate::runner::{Outcome, StudyRun};
use crate::stats::{median, median_index, ratio, summarize, Summary};
use crate::studies::{Metric, OverTime, Section};

/// One engine's speed on one workload.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Ops/s over the runs that worked; `runs` of `planned` contributed.
    Value {
        /// The summary.
        ops: Summary,
        /// Runs planned.
        planned: usize,
        /// Operations done in each run that db_bench's time cap stopped
        /// early (empty when none was).
        stopped: Vec<u64>,
    },
    /// No figure: the text after `n/a: `.
    NotAvailable(String),
}

impl Cell {
    /// The headline ops/s, if any.
    pub fn center(&self) -> Option<f64> {
        match self {
            Cell::Value { ops, .. } => Some(ops.center),
            Cell::NotAvailable(_) => None,
        }
    }
}

/// Resource figures of one engine on one workload (each summarised like ops/s).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Resources {
    /// Device bytes written / user bytes written (writes only).
    pub write_amp: Option<Summary>,
    /// Bytes of the database directory after the benchmark.
    pub db_size: Option<Summary>,
    /// Peak resident set of the db_bench process up to the end of the
    /// benchmark, KiB.
    pub peak_rss_kb: Option<Summary>,
}

/// One workload line.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Workload label.
    pub label: String,
    /// One cell per engine, in the table's engine order.
    pub cells: Vec<Cell>,
    /// One resource entry per engine (`None` where the cell is n/a).
    pub resources: Vec<Option<Resources>>,
}

impl Row {
    /// Shale's ratio to each peer (`(peer, shale/peer)`), when Shale is a
    /// column; empty otherwise.
    pub fn ratios<'a>(&self, engines: &[&'a str]) -> Vec<(&'a str, Option<f64>)> {
        let Some(si) = engines.iter().position(|e| *e == "shale") else {
            return vec![];
        };
        let shale = self.cells.get(si).and_then(Cell::center);
        engines
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != si)
            .map(|(i, e)| (*e, ratio(shale, self.cells.get(i).and_then(Cell::center))))
            .collect()
    }
}

impl Row {
    /// The ratio columns: each of Shale's columns (`shale`, and its option
    /// variants such as `shale-blobs`) over each peer, labelled
    /// `base/peer`; empty when no Shale column is in the table.
    pub fn ratio_columns(&self, engines: &[&str]) -> Vec<(String, Option<f64>)> {
        let is_base = |e: &str| crate::engines::engine(e).is_some_and(|x| x.is_shale_family());
        let mut out = Vec::new();
        for (bi, base) in engines.iter().enumerate().filter(|(_, e)| is_base(e)) {
            let b = self.cells.get(bi).and_then(Cell::center);
            for (pi, peer) in engines.iter().enumerate().filter(|(_, e)| !is_base(e)) {
                let r = ratio(b, self.cells.get(pi).and_then(Cell::center));
                out.push((format!("{base}/{peer}"), r));
            }
        }
        out
    }
}

/// A line of an over-time chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Engine name.
    pub engine: String,
    /// (x, ops/s) points.
    pub points: Vec<(f64, f64)>,
}

/// An over-time chart's data.
#[derive(Debug, Clone, PartialEq)]
pub struct OverTimeChart {
    /// File-name stem part (`fillseq`, `insert`, ...).
    pub id: String,
    /// Chart title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// One line per engine that has data.
    pub series: Vec<Series>,
}

/// One seed section's table and charts.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Section id.
    pub id: String,
    /// Heading.
    pub title: String,
    /// Explanatory note.
    pub note: String,
    /// Engine names, column order.
    pub engines: Vec<&'static str>,
    /// Rows.
    pub rows: Vec<Row>,
    /// Line charts.
    pub over_time: Vec<OverTimeChart>,
}

/// The value one run gives for a metric, or why it gives none.
pub fn metric_value(out: &BenchOutput, metric: &Metric, threads: u32) -> Result<f64, String> {
    match metric {
        Metric::Bench(b) => match (out.last_result(b), out.unsupported_reason(b)) {
            (Some(l), _) => Ok(l.ops_per_sec(threads)),
            (None, Some(why)) => Err(format!("not supported: {why}")),
            (None, None) => Err(format!("failed: no `{b}` line in the output")),
        },
        Metric::IterMean(phase) | Metric::IterMin(phase) => {
            let v: Vec<f64> = out
                .iteration_series(*phase)
                .into_iter()
                .map(|(_, x)| x)
                .collect();
            if v.is_empty() {
                return Err(format!(
                    "failed: no `{}` lines in the output",
                    phase.line_name()
                ));
            }
            Ok(if matches!(metric, Metric::IterMean(_)) {
                v.iter().sum::<f64>() / v.len() as f64
            } else {
                v.iter().copied().fold(f64::INFINITY, f64::min)
            })
        }
    }
}

/// Builds every section's table of a study run.
pub fn build_tables(run: &StudyRun) -> Vec<Table> {
    run.study
        .sections
        .iter()
        .map(|s| build_table(run, s))
        .collect()
}

fn build_table(run: &StudyRun, section: &Section) -> Table {
    // An option variant gets a column only where the section's jobs name it.
    let columns: Vec<&'static Engine> = run
        .engines
        .iter()
        .copied()
        .filter(|e| {
            e.variant_of.is_none()
                || section
                    .lines
                    .iter()
                    .any(|l| run.study.jobs[l.job].runs_variant(e))
        })
        .collect();
    let engines: Vec<&'static str> = columns.iter().map(|e| e.name).collect();
    let rule = run.study.aggregation;
    let mut rows = Vec::new();
    for line in &section.lines {
        let job = &run.study.jobs[line.job];
        let mut cells = Vec::new();
        let mut resources = Vec::new();
        for engine in &columns {
            let e = &engine.name;
            // The line's own needs beat whatever the job's run gave.
            if let Some(why) = line.needs.iter().find_map(|c| engine.lacks(*c)) {
                cells.push(Cell::NotAvailable(why.to_string()));
                resources.push(None);
                continue;
            }
            let mut ops = Vec::new();
            let mut stopped = Vec::new();
            let (mut wa, mut size, mut rss) = (Vec::new(), Vec::new(), Vec::new());
            let mut why: Option<String> = None;
            for r in run.records_for(line.job, e) {
                match &r.outcome {
                    Outcome::Done { output, .. } => {
                        match metric_value(output, &line.metric, job.threads) {
                            Ok(v) => {
                                ops.push(v);
                                if let Some(n) = output
                                    .last_result(line.metric.io_bench())
                                    .and_then(|l| l.stopped_after)
                                {
                                    stopped.push(n);
                                }
                                if let Some(io) = output.last_io(line.metric.io_bench()) {
                                    if let Some(a) = io
                                        .write_amplification()
                                        .filter(|_| line.metric.measures_writes())
                                    {
                                        wa.push(a);
                                    }
                                    size.push(io.db_size as f64);
                                    if let Some(k) = io.max_rss_kb {
                                        rss.push(k as f64);
                                    }
                                }
                            }
                            Err(e) => {
                                why.get_or_insert(e);
                            }
                        }
                    }
                    Outcome::Skipped(s) => {
                        why.get_or_insert(format!("skipped: {s}"));
                    }
                    Outcome::Unsupported(s) => {
                        why.get_or_insert(s.to_string());
                    }
                    Outcome::Failed(s) => {
                        why.get_or_insert(format!("failed: {s}"));
                    }
                }
            }
            match summarize(&ops, rule) {
                Some(sum) => {
                    cells.push(Cell::Value {
                        ops: sum,
                        planned: run.runs,
                        stopped,
                    });
                    resources.push(Some(Resources {
                        write_amp: summarize(&wa, rule),
                        db_size: summarize(&size, rule),
                        peak_rss_kb: summarize(&rss, rule),
                    }));
                }
                None => {
                    cells.push(Cell::NotAvailable(
                        why.unwrap_or_else(|| "not run".to_string()),
                    ));
                    resources.push(None);
                }
            }
        }
        rows.push(Row {
            label: line.label.to_string(),
            cells,
            resources,
        });
    }
    Table {
        id: section.id.to_string(),
        title: section.title.clone(),
        note: section.note.clone(),
        engines: engines.clone(),
        rows,
        over_time: over_time(run, section),
    }
}

fn over_time(run: &StudyRun, section: &Section) -> Vec<OverTimeChart> {
    match section.over_time {
        OverTime::None => vec![],
        OverTime::Timeseries => section
            .lines
            .iter()
            .filter_map(|line| {
                let Metric::Bench(bench) = line.metric else {
                    return None;
                };
                let threads = run.study.jobs[line.job].threads;
                let mut series = Vec::new();
                for e in &run.engines {
                    // The run with the median ops/s is drawn.
                    let candidates: Vec<(usize, f64)> = run
                        .records_for(line.job, e.name)
                        .enumerate()
                        .filter_map(|(i, r)| match &r.outcome {
                            Outcome::Done {
                                output,
                                timeseries: Some(Ok(_)),
                                ..
                            } => metric_value(output, &line.metric, threads)
                                .ok()
                                .map(|v| (i, v)),
                            _ => None,
                        })
                        .collect();
                    let Some(pick) = median_index(&candidates) else {
                        continue;
                    };
                    let Some(rec) = run.records_for(line.job, e.name).nth(pick) else {
                        continue;
                    };
                    if let Outcome::Done {
                        timeseries: Some(Ok(samples)),
                        ..
                    } = &rec.outcome
                    {
                        let points: Vec<(f64, f64)> = last_run_of(samples, bench)
                            .into_iter()
                            .map(|s| (s.elapsed_s, s.interval_ops_per_sec))
                            .collect();
                        if !points.is_empty() {
                            series.push(Series {
                                engine: e.name.to_string(),
                                points,
                            });
                        }
                    }
                }
                Some(OverTimeChart {
                    id: bench.to_string(),
                    title: format!("{} — {}: ops/s over time", section.title, line.label),
                    x_label: "seconds since the benchmark started".to_string(),
                    series,
                })
            })
            .collect(),
        OverTime::Iterations => [IterPhase::Insert, IterPhase::Lookup]
            .into_iter()
            .map(|phase| {
                let job = section.lines.first().map(|l| l.job).unwrap_or(0);
                let mut series = Vec::new();
                for e in &run.engines {
                    let mut by_iter: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
                    for r in run.records_for(job, e.name) {
                        if let Outcome::Done { output, .. } = &r.outcome {
                            for (i, v) in output.iteration_series(phase) {
                                by_iter.entry(i).or_default().push(v);
                            }
                        }
                    }
                    let points: Vec<(f64, f64)> = by_iter
                        .into_iter()
                        .filter_map(|(i, v)| median(&v).map(|m| (i as f64, m)))
                        .collect();
                    if !points.is_empty() {
                        series.push(Series {
                            engine: e.name.to_string(),
                            points,
                        });
                    }
                }
                let what = match phase {
                    IterPhase::Insert => "inserts",
                    IterPhase::Lookup => "lookups",
                };
                OverTimeChart {
                    id: what.to_string(),
                    title: format!("{} — {what}: ops/s per iteration", section.title),
                    x_label: "iteration".to_string(),
                    series,
                }
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::{engine, ENGINES};
    use crate::studies::{build, Size, STUDY_IDS};

    /// Each section's columns when a study runs every engine (`--engines`
    /// naming them all), before anything ran.
    fn columns(id: &str) -> Vec<(String, Vec<&'static str>)> {
        let study = build(
            id,
            Size {
                quick: true,
                scale: 1.0,
                free_bytes: None,
            },
        )
        .unwrap();
        let all: Vec<&'static Engine> = ENGINES.iter().collect();
        let engines = study.engines_from(&all, true);
        let run = StudyRun {
            study,
            engines,
            runs: 1,
            records: vec![],
            expected_s: 0.0,
            estimate_source: String::new(),
            actual_s: 0.0,
        };
        build_tables(&run)
            .into_iter()
            .map(|t| (t.id, t.engines))
            .collect()
    }

    #[test]
    fn an_option_variant_has_a_column_only_where_the_sections_jobs_name_it() {
        let peers = ENGINES.iter().filter(|e| e.variant_of.is_none()).count();
        for id in STUDY_IDS {
            for (section, engines) in columns(id) {
                let variants: Vec<&str> = engines
                    .iter()
                    .copied()
                    .filter(|e| engine(e).unwrap().variant_of.is_some())
                    .collect();
                let want: &[&str] = match (id, section.as_str()) {
                    ("leveldb", "large-values") => &["shale-blobs", "shale-bulk"],
                    // The jobs that start with a sequential load from one
                    // thread, and the sections that read their lines.
                    (
                        "leveldb",
                        "baseline"
                        | "batch"
                        | "no-compression-writes"
                        | "more-memory"
                        | "compression-types"
                        | "no-compression-reads",
                    ) => &["shale-bulk"],
                    // The study's one job (every section) starts with
                    // fillseq and ends with fill100K.
                    ("wiredtiger", _) => &["shale-blobs", "shale-bulk"],
                    ("bangdb", "seq-1t") => &["shale-bulk"],
                    ("bangdb", "seq-4t") => &["shale-split"],
                    _ => &[],
                };
                assert_eq!(variants, want, "{id}/{section}");
                assert_eq!(engines.len() - variants.len(), peers, "{id}/{section}");
            }
        }
    }
}
