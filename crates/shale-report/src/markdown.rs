//! Markdown rendering of the report: the header (machine, versions, settings,
//! command), the capability table, one speed table and one resource table per
//! seed section, chart links, and every db_bench command that ran.
//!
//! Invariants: output depends only on its inputs (no clock, no file system),
//! so tables can be compared against golden text; `|` in free text is escaped.

use crate::engines::{Capability, ENGINES};
use crate::report::{assertions_note, release_builds_note, Meta};
use crate::runner::{command_line, hms, Outcome, StudyRun};
use crate::stats::Summary;
use crate::tables::{Cell, Resources, Table};

/// A count with thousands separators: `1,000,000`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Integer with thousands separators (one decimal below 100).
pub fn fmt_ops(v: f64) -> String {
    if !v.is_finite() {
        return "?".to_string();
    }
    if v.abs() < 100.0 {
        return format!("{v:.1}");
    }
    let n = v.round() as i64;
    let s = thousands(n.unsigned_abs());
    if n < 0 {
        format!("-{s}")
    } else {
        s
    }
}

/// Longest reason shown whole in a table cell; longer ones go to a note.
pub const MAX_CELL_REASON: usize = 64;

/// Cell text for a missing figure, given a note number for long reasons:
/// `n/a: <why>`, or `n/a: <kind> [note k]` where `kind` is the reason's first
/// clause (`failed`, `skipped`, ...).
pub fn na_text(why: &str, note: Option<usize>) -> String {
    match note {
        None => format!("n/a: {why}"),
        Some(k) => {
            let kind = why.split(':').next().unwrap_or(why).trim();
            format!("n/a: {kind} [note {k}]")
        }
    }
}

/// Numbers long reasons: returns the note number for `why` (1-based), adding
/// it to `notes` if new, or `None` when the reason fits in a cell.
pub fn note_for(why: &str, notes: &mut Vec<String>) -> Option<usize> {
    if why.chars().count() <= MAX_CELL_REASON {
        return None;
    }
    match notes.iter().position(|n| n == why) {
        Some(i) => Some(i + 1),
        None => {
            notes.push(why.to_string());
            Some(notes.len())
        }
    }
}

/// Shale/peer ratio with two decimals, `n/a` when missing.
pub fn fmt_ratio(r: Option<f64>) -> String {
    r.map(|r| format!("{r:.2}"))
        .unwrap_or_else(|| "n/a".to_string())
}

/// Bytes as MiB (or KiB below 1 MiB).
pub fn fmt_bytes(b: f64) -> String {
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

/// The text of a speed cell.
pub fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Value {
            ops,
            planned,
            stopped,
        } => {
            let mut s = fmt_summary(ops);
            if ops.n < *planned {
                s.push_str(&format!(" [{} of {} runs]", ops.n, planned));
            }
            if let Some(most) = stopped.iter().max() {
                s.push_str(&format!(
                    " [time cap: stopped after at most {} ops in {} of {} runs]",
                    thousands(*most),
                    stopped.len(),
                    ops.n
                ));
            }
            s
        }
        Cell::NotAvailable(why) => format!("n/a: {why}"),
    }
}

fn fmt_summary(s: &Summary) -> String {
    if s.n > 1 && s.max > s.min {
        format!(
            "{} ({}–{})",
            fmt_ops(s.center),
            fmt_ops(s.min),
            fmt_ops(s.max)
        )
    } else {
        fmt_ops(s.center)
    }
}

/// The text of a resource cell: `WA · space · peak RSS`.
pub fn resources_text(r: Option<&Resources>) -> String {
    let Some(r) = r else {
        return "n/a".to_string();
    };
    let wa = r
        .write_amp
        .map(|s| format!("{:.2}×", s.center))
        .unwrap_or_else(|| "—".to_string());
    let size = r
        .db_size
        .map(|s| fmt_bytes(s.center))
        .unwrap_or_else(|| "?".to_string());
    let rss = r
        .peak_rss_kb
        .map(|s| fmt_bytes(s.center * 1024.0))
        .unwrap_or_else(|| "?".to_string());
    format!("{wa} · {size} · {rss}")
}

/// Escapes text for a Markdown table cell.
pub fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// One section: heading, note, speed table with ratio columns, resource table.
pub fn render_table(t: &Table) -> String {
    let mut s = format!("## {}\n\n{}\n\n", esc(&t.title), t.note);
    let mut notes: Vec<String> = Vec::new();
    let ratios_of = |row: &crate::tables::Row| row.ratio_columns(&t.engines);
    let peers: Vec<String> = t
        .rows
        .first()
        .map(|r| ratios_of(r).into_iter().map(|(p, _)| p).collect())
        .unwrap_or_default();
    s.push_str("| workload (ops/s) |");
    for e in &t.engines {
        s.push_str(&format!(" {e} |"));
    }
    for p in &peers {
        s.push_str(&format!(" {p} |"));
    }
    s.push_str("\n|---|");
    for _ in 0..t.engines.len() + peers.len() {
        s.push_str("--:|");
    }
    s.push('\n');
    for row in &t.rows {
        s.push_str(&format!("| {} |", esc(&row.label)));
        for c in &row.cells {
            let text = match c {
                Cell::NotAvailable(why) => na_text(why, note_for(why, &mut notes)),
                Cell::Value { .. } => cell_text(c),
            };
            s.push_str(&format!(" {} |", esc(&text)));
        }
        for (_, r) in ratios_of(row) {
            s.push_str(&format!(" {} |", fmt_ratio(r)));
        }
        s.push('\n');
    }
    if !notes.is_empty() {
        s.push_str("\nNotes:\n\n");
        for (i, n) in notes.iter().enumerate() {
            s.push_str(&format!("{}. {}\n", i + 1, esc(n)));
        }
    }
    s.push_str(
        "\nWrite amplification (device bytes written ÷ user bytes written; — for reads) · \
         space on disk after the benchmark · peak RSS of the db_bench process:\n\n| workload |",
    );
    for e in &t.engines {
        s.push_str(&format!(" {e} |"));
    }
    s.push_str("\n|---|");
    for _ in &t.engines {
        s.push_str("--:|");
    }
    s.push('\n');
    for row in &t.rows {
        s.push_str(&format!("| {} |", esc(&row.label)));
        for r in &row.resources {
            s.push_str(&format!(" {} |", resources_text(r.as_ref())));
        }
        s.push('\n');
    }
    s
}

/// Machine, versions, settings and command, shared by every page.
pub fn render_header(meta: &Meta) -> String {
    let m = &meta.machine;
    let mut s = String::new();
    s.push_str(&format!("- Command: `{}`\n", meta.command));
    s.push_str(&format!("- Date: {}\n", m.date));
    s.push_str(&format!("- CPU: {} ({})\n", m.cpu, m.cores));
    s.push_str(&format!("- Memory: {}\n", m.memory));
    s.push_str(&format!("- OS: {}, kernel {}\n", m.os, m.kernel));
    s.push_str(&format!(
        "- Database directory: `{}` on {}\n",
        meta.db_root.display(),
        m.file_system
    ));
    s.push_str(&format!("- db_bench: `{}`\n", meta.db_bench.display()));
    s.push_str(&format!(
        "- Size: {}\n",
        if meta.quick {
            "--quick (a tenth of the full size or smaller; a smoke test, not a measurement)"
        } else {
            "full"
        }
    ));
    s.push_str(
        "- Each engine runs in its own db_bench process on a directory emptied before the run; \
         runs are interleaved (run 1 of every engine, then run 2, ...).\n",
    );
    if let Some(note) = release_builds_note(&meta.versions) {
        s.push_str(&format!("- Peer builds: {note}\n"));
    }
    if let Some(note) = assertions_note(&meta.versions) {
        s.push_str(&format!("- Assertions: {note}\n"));
    }
    s.push_str(
        "\n| engine | version (db_bench header) | library (db_bench header) | Debian package | assertions | status |\n|---|---|---|---|---|---|\n",
    );
    for v in &meta.versions {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            v.engine,
            esc(v.reported.as_deref().unwrap_or("—")),
            esc(v.library.as_deref().unwrap_or("—")),
            esc(&v.debian),
            esc(v.assertions.as_deref().unwrap_or("—")),
            esc(&v.status)
        ));
    }
    s
}

/// The capability table (every engine, whether chosen or not).
pub fn render_capabilities() -> String {
    let mut s = String::from("| engine | memory settings |");
    for c in Capability::ALL {
        s.push_str(&format!(" {} |", c.heading()));
    }
    s.push_str(" notes |\n|---|---|");
    for _ in Capability::ALL {
        s.push_str("---|");
    }
    s.push_str("---|\n");
    for e in &ENGINES {
        s.push_str(&format!("| {} | {} |", e.name, e.memory.describe()));
        for c in Capability::ALL {
            match e.lacks(c) {
                Some(why) => s.push_str(&format!(" no: {} |", esc(why))),
                None => s.push_str(" yes |"),
            }
        }
        s.push_str(&format!(" {} |\n", esc(e.note)));
    }
    s
}

/// File names of one section's charts, relative to the report directory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChartFiles {
    /// The bar chart's PNG.
    pub bars: Option<String>,
    /// Line charts' PNGs with titles.
    pub lines: Vec<(String, String)>,
}

/// Every db_bench command of a study's first run, one per line, with `#`
/// comments for jobs and for engines that were not run.
pub fn commands_text(meta: &Meta, run: &StudyRun) -> String {
    let mut s = String::new();
    for (j, job) in run.study.jobs.iter().enumerate() {
        s.push_str(&format!("# job {}\n", job.id));
        for e in &run.engines {
            let first = run.records_for(j, e.name).next();
            match first.map(|r| (&r.args, &r.outcome)) {
                Some((args, _)) if !args.is_empty() => {
                    s.push_str(&command_line(&meta.db_bench, args));
                    s.push('\n');
                }
                Some((_, Outcome::Unsupported(why))) => {
                    s.push_str(&format!("# {}: not run: {why}\n", e.name))
                }
                Some((_, Outcome::Skipped(why))) => {
                    s.push_str(&format!("# {}: not run: skipped: {why}\n", e.name))
                }
                _ => s.push_str(&format!("# {}: not run\n", e.name)),
            }
        }
    }
    s
}

/// The whole `<study>.md`.
pub fn render_study(
    meta: &Meta,
    run: &StudyRun,
    tables: &[Table],
    charts: &[ChartFiles],
) -> String {
    let st = &run.study;
    let mut s = format!("# Shale benchmark report: {}\n\n", st.title);
    s.push_str(&format!("Reproduces `{}`. {}\n\n", st.seed, st.intro));
    s.push_str(
        "Figures are operations per second on this machine; the ratio columns are shale's \
         ops/s divided by each peer's (above 1: shale is faster).\n\n## Machine and settings\n\n",
    );
    s.push_str(&render_header(meta));
    s.push_str(&format!(
        "\n- Runs: {} per engine; figures: {}.\n- Expected duration: {} (from {}); actual: {}.\n\
         - Filters: every engine at its own default (`--bloom_bits=-1`): Shale writes a bloom \
         filter of 10 bits per key into each table; LevelDB and RocksDB write none.\n",
        run.runs,
        st.aggregation.describe(),
        hms(run.expected_s),
        run.estimate_source,
        hms(run.actual_s)
    ));
    s.push_str("\n### Capabilities\n\n");
    s.push_str(&render_capabilities());
    s.push('\n');
    for (i, t) in tables.iter().enumerate() {
        s.push_str(&render_table(t));
        if let Some(files) = charts.get(i) {
            if let Some(b) = &files.bars {
                s.push_str(&format!("\n![{}]({b})\n", esc(&t.title)));
            }
            for (title, f) in &files.lines {
                s.push_str(&format!("\n![{}]({f})\n", esc(title)));
            }
        }
        s.push('\n');
    }
    s.push_str("## Commands\n\nThe first run of every job and engine (later runs differ only in the timeseries file name):\n\n```\n");
    s.push_str(&commands_text(meta, run));
    s.push_str("```\n\nRaw output of every process: `raw/");
    s.push_str(st.id);
    s.push_str("/`; every figure: `");
    s.push_str(st.id);
    s.push_str("-raw.tsv`.\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_capped_cell_says_so() {
        let ops = Summary {
            center: 31_000.0,
            min: 30_000.0,
            max: 32_000.0,
            n: 3,
        };
        let capped = Cell::Value {
            ops,
            planned: 3,
            stopped: vec![102_000, 99_000],
        };
        assert_eq!(
            cell_text(&capped),
            "31,000 (30,000–32,000) [time cap: stopped after at most 102,000 ops in 2 of 3 runs]"
        );
        let whole = Cell::Value {
            ops,
            planned: 3,
            stopped: vec![],
        };
        assert_eq!(cell_text(&whole), "31,000 (30,000–32,000)");
    }

    #[test]
    fn number_formats() {
        assert_eq!(fmt_ops(4_030_000.0), "4,030,000");
        assert_eq!(fmt_ops(779_000.4), "779,000");
        assert_eq!(fmt_ops(999.6), "1,000");
        assert_eq!(fmt_ops(88.04), "88.0");
        assert_eq!(fmt_ops(7.0), "7.0");
        assert_eq!(fmt_ratio(Some(1.0449)), "1.04");
        assert_eq!(fmt_ratio(None), "n/a");
        assert_eq!(fmt_bytes(64.0 * 1024.0 * 1024.0), "64.0 MiB");
        assert_eq!(fmt_bytes(2048.0), "2.0 KiB");
        assert_eq!(fmt_bytes(12.0), "12 B");
        assert_eq!(esc("a|b"), "a\\|b");
    }
}
