//! `index.html`: every study of the report on one page — the machine,
//! versions, settings and command at the top, then per seed section the bar
//! chart (inline SVG, PNG linked), the speed and resource tables, and the
//! over-time line charts.
//!
//! Invariants: all text from runs (reasons, labels, paths) is HTML-escaped;
//! each chart appears exactly once as an inline `<svg`.

use crate::engines::{Capability, ENGINES};
use crate::markdown::{cell_text, commands_text, fmt_ratio, na_text, note_for, resources_text};
use crate::report::{assertions_note, release_builds_note, ChartOut, Meta, StudyPage};
use crate::runner::hms;
use crate::tables::Cell;
use crate::tables::Table;

/// Escapes text for HTML content and attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

const STYLE: &str = "body{font-family:Helvetica,Arial,sans-serif;padding:20px;max-width:1200px}\
h2{padding-top:30px;border-bottom:1px solid #ccc}h3{padding-top:16px}\
table{border-collapse:collapse;margin:8px 0 16px 0;font-size:14px}\
td,th{border:1px solid #ddd;padding:3px 8px}td.n{text-align:right;white-space:nowrap}\
th{background:#f4f4f4}td.na{color:#888;font-size:12px}.chart svg{max-width:100%;height:auto}\
code{font-size:13px}p.note{color:#333}";

fn table_html(t: &Table) -> String {
    let mut notes: Vec<String> = Vec::new();
    let mut s = String::from("<table class=\"speed\">\n<tr><th>workload (ops/s)</th>");
    let peers: Vec<String> = t
        .rows
        .first()
        .map(|r| {
            r.ratio_columns(&t.engines)
                .into_iter()
                .map(|(p, _)| p)
                .collect()
        })
        .unwrap_or_default();
    for e in &t.engines {
        s.push_str(&format!("<th>{}</th>", esc(e)));
    }
    for p in &peers {
        s.push_str(&format!("<th>{}</th>", esc(p)));
    }
    s.push_str("</tr>\n");
    for row in &t.rows {
        s.push_str(&format!("<tr><td>{}</td>", esc(&row.label)));
        for c in &row.cells {
            match c {
                Cell::Value { .. } => {
                    s.push_str(&format!("<td class=\"n\">{}</td>", esc(&cell_text(c))))
                }
                Cell::NotAvailable(why) => s.push_str(&format!(
                    "<td class=\"na\" title=\"{}\">{}</td>",
                    esc(why),
                    esc(&na_text(why, note_for(why, &mut notes)))
                )),
            }
        }
        for (_, r) in row.ratio_columns(&t.engines) {
            s.push_str(&format!("<td class=\"n\">{}</td>", fmt_ratio(r)));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    if !notes.is_empty() {
        s.push_str("<p>Notes:</p><ol class=\"notes\">\n");
        for n in &notes {
            s.push_str(&format!("<li>{}</li>\n", esc(n)));
        }
        s.push_str("</ol>\n");
    }
    s.push_str("<p>Write amplification · space on disk · peak RSS:</p>\n<table class=\"res\">\n<tr><th>workload</th>");
    for e in &t.engines {
        s.push_str(&format!("<th>{}</th>", esc(e)));
    }
    s.push_str("</tr>\n");
    for row in &t.rows {
        s.push_str(&format!("<tr><td>{}</td>", esc(&row.label)));
        for r in &row.resources {
            s.push_str(&format!(
                "<td class=\"n\">{}</td>",
                esc(&resources_text(r.as_ref()))
            ));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}

fn chart_html(c: &ChartOut) -> String {
    format!(
        "<div class=\"chart\">{}</div>\n<p><a href=\"{}\">PNG</a> · <a href=\"{}\">SVG</a></p>\n",
        c.rendered.svg,
        esc(&c.png_rel),
        esc(&c.png_rel.replace(".png", ".svg"))
    )
}

/// The whole page.
pub fn render_index(meta: &Meta, pages: &[StudyPage]) -> String {
    let m = &meta.machine;
    let mut s = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Shale benchmark report</title>\
         <style>{STYLE}</style></head><body>\n<h1>Shale benchmark report</h1>\n"
    );
    s.push_str(
        "<p>Shale against its peers, each a real library driven by the same db_bench, on the \
         same machine and file system in one run of the report. Figures are operations per \
         second on this machine; ratio columns are shale's ops/s divided by the peer's \
         (above 1: shale is faster).</p>\n<ul>\n",
    );
    let item = |k: &str, v: String| format!("<li><b>{k}:</b> {v}</li>\n");
    s.push_str(&item(
        "Command",
        format!("<code>{}</code>", esc(&meta.command)),
    ));
    s.push_str(&item("Date", esc(&m.date)));
    s.push_str(&item("CPU", esc(&format!("{} ({})", m.cpu, m.cores))));
    s.push_str(&item("Memory", esc(&m.memory)));
    s.push_str(&item("OS", esc(&format!("{}, kernel {}", m.os, m.kernel))));
    s.push_str(&item(
        "Database directory",
        format!(
            "<code>{}</code> on {}",
            esc(&meta.db_root.display().to_string()),
            esc(&m.file_system)
        ),
    ));
    s.push_str(&item(
        "db_bench",
        format!("<code>{}</code>", esc(&meta.db_bench.display().to_string())),
    ));
    s.push_str(&item(
        "Size",
        if meta.quick {
            "--quick (a tenth of the full size or smaller; a smoke test, not a measurement)".into()
        } else {
            "full".into()
        },
    ));
    s.push_str(&item(
        "Chart font",
        format!("<code>{}</code>", esc(&meta.font.display().to_string())),
    ));
    if let Some(note) = release_builds_note(&meta.versions) {
        s.push_str(&item("Peer builds", esc(&note)));
    }
    if let Some(note) = assertions_note(&meta.versions) {
        s.push_str(&item("Assertions", esc(&note)));
    }
    s.push_str("</ul>\n<table><tr><th>engine</th><th>version (db_bench header)</th><th>library (db_bench header)</th><th>Debian package</th><th>assertions</th><th>status</th></tr>\n");
    for v in &meta.versions {
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(v.engine),
            esc(v.reported.as_deref().unwrap_or("—")),
            esc(v.library.as_deref().unwrap_or("—")),
            esc(&v.debian),
            esc(v.assertions.as_deref().unwrap_or("—")),
            esc(&v.status)
        ));
    }
    s.push_str(
        "</table>\n<h3>Capabilities</h3>\n<table><tr><th>engine</th><th>memory settings</th>",
    );
    for c in Capability::ALL {
        s.push_str(&format!("<th>{}</th>", esc(c.heading())));
    }
    s.push_str("<th>notes</th></tr>\n");
    for e in &ENGINES {
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td>",
            esc(e.name),
            esc(e.memory.describe())
        ));
        for c in Capability::ALL {
            s.push_str(&format!(
                "<td>{}</td>",
                esc(&e
                    .lacks(c)
                    .map(|w| format!("no: {w}"))
                    .unwrap_or("yes".into()))
            ));
        }
        s.push_str(&format!("<td>{}</td></tr>\n", esc(e.note)));
    }
    s.push_str("</table>\n<p>Studies:</p><ul>\n");
    for p in pages {
        s.push_str(&format!(
            "<li><a href=\"#{}\">{}</a> (<a href=\"{}.md\">Markdown</a>)</li>\n",
            esc(p.run.study.id),
            esc(p.run.study.title),
            esc(p.run.study.id)
        ));
    }
    s.push_str("</ul>\n");
    for p in pages {
        let st = &p.run.study;
        s.push_str(&format!(
            "<h2 id=\"{}\">{}</h2>\n<p>Reproduces <code>{}</code>. {}</p>\n",
            esc(st.id),
            esc(st.title),
            esc(st.seed),
            esc(&st.intro)
        ));
        s.push_str(&format!(
            "<p>Runs: {} per engine; figures: {}. Expected duration {} (from {}); actual {}.</p>\n",
            p.run.runs,
            esc(st.aggregation.describe()),
            hms(p.run.expected_s),
            esc(&p.run.estimate_source),
            hms(p.run.actual_s)
        ));
        s.push_str(&format!(
            "<details><summary>db_bench commands (first run)</summary><pre>{}</pre></details>\n",
            esc(&commands_text(meta, &p.run))
        ));
        for sec in &p.sections {
            s.push_str(&format!(
                "<h3>{}</h3>\n<p class=\"note\">{}</p>\n",
                esc(&sec.table.title),
                esc(&sec.table.note)
            ));
            s.push_str(&chart_html(&sec.bars));
            s.push_str(&table_html(&sec.table));
            for l in &sec.lines {
                s.push_str(&chart_html(l));
            }
        }
    }
    s.push_str("</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
