//! Writing a study's results: tables built, charts drawn (SVG kept for the
//! HTML page, SVG and PNG files under `charts/`), `<study>.md` and
//! `<study>-raw.tsv` written; and the facts every page starts with.
//!
//! Invariants: file names come only from study and section ids (no user text);
//! a chart that cannot be drawn fails the report loudly rather than leaving a
//! page with a hole.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::charts::{self, Bar, BarGroup, Line, Rendered};
use crate::engines::{engine, Engine};
use crate::machine::{debian_version, Machine};
use crate::markdown::{self, ChartFiles};
use crate::runner::{write_raw_tsv, Context, StudyRun};
use crate::tables::{build_tables, Cell, Table};

/// One engine's version line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRow {
    /// Engine name.
    pub engine: &'static str,
    /// Version from db_bench's `Engine:` header, if it ran.
    pub reported: Option<String>,
    /// `package version` from dpkg, or a note.
    pub debian: String,
    /// db_bench's `Assertions:` header, if it ran.
    pub assertions: Option<String>,
    /// db_bench's `Library:` header (the library file the engine ran and
    /// its build: a Debian package, or a release build of
    /// `scripts/build-peers.sh`), if it ran.
    pub library: Option<String>,
    /// `ran`, `skipped: ...`, or `not chosen`.
    pub status: String,
}

/// Facts at the top of every page.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    /// The exact shale-report command line.
    pub command: String,
    /// Machine facts.
    pub machine: Machine,
    /// Database root.
    pub db_root: PathBuf,
    /// db_bench binary.
    pub db_bench: PathBuf,
    /// `--quick`.
    pub quick: bool,
    /// Font file used for the charts.
    pub font: PathBuf,
    /// Engine versions.
    pub versions: Vec<VersionRow>,
}

/// Version rows for the chosen engines, from what the runs saw.
pub fn version_rows(
    engines: &[&'static Engine],
    ctx: &Context,
    debian: &dyn Fn(&str) -> Option<String>,
) -> Vec<VersionRow> {
    let reported = &ctx.versions;
    engines
        .iter()
        .map(|e| VersionRow {
            engine: e.name,
            reported: reported.get(e.name).cloned(),
            assertions: ctx.assertions.get(e.name).cloned(),
            library: ctx.libraries.get(e.name).cloned(),
            debian: match e.debian_package {
                Some(p) if is_release_build(ctx.libraries.get(e.name)) => match debian(p) {
                    Some(v) => format!("{p} {v} (not the library run: see the library column)"),
                    None => format!("{p} not installed (not the library run)"),
                },
                Some(p) => match debian(p) {
                    Some(v) => format!("{p} {v}"),
                    None => format!("{p} not installed"),
                },
                None => "this workspace".to_string(),
            },
            status: {
                let started = ctx.started.get(e.name).copied().unwrap_or(0);
                let failed = ctx.failed.get(e.name).copied().unwrap_or(0);
                match ctx.skipped.get(e.name) {
                    Some(why) => format!("skipped: {why}"),
                    None if started == 0 => "not run".to_string(),
                    None if failed == started => {
                        "every run failed (see the raw output)".to_string()
                    }
                    None if failed > 0 => format!("ran; {failed} of {started} runs failed"),
                    None => "ran".to_string(),
                }
            },
        })
        .collect()
}

/// Whether a `Library:` header names a release build of
/// `scripts/build-peers.sh` rather than the system's library.
fn is_release_build(library: Option<&String>) -> bool {
    library.is_some_and(|l| l.contains("(release build"))
}

/// A sentence naming the peers that ran a release build of
/// `scripts/build-peers.sh` (db_bench's `Library:` header), or `None`.
pub fn release_builds_note(versions: &[VersionRow]) -> Option<String> {
    let names: Vec<&str> = versions
        .iter()
        .filter(|v| is_release_build(v.library.as_ref()))
        .map(|v| v.engine)
        .collect();
    let list = match names.as_slice() {
        [] => return None,
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    let one = names.len() == 1;
    Some(format!(
        "{list} ran {} (-O2 -DNDEBUG) of Debian's source {}, made by \
         scripts/build-peers.sh, instead of Debian's binary {}, which {} assertions on; \
         every other peer ran Debian's binary package (the library column names each file).",
        if one {
            "a release build"
        } else {
            "release builds"
        },
        if one { "package" } else { "packages" },
        if one { "package" } else { "packages" },
        if one { "keeps its" } else { "keep their" },
    ))
}

/// A sentence naming the peer libraries whose installed build keeps its
/// assertions (db_bench's `Assertions: on ...`), or `None` when none does.
pub fn assertions_note(versions: &[VersionRow]) -> Option<String> {
    let on: Vec<String> = versions
        .iter()
        .filter(|v| v.engine != "shale")
        .filter(|v| v.assertions.as_deref().is_some_and(|a| a.starts_with("on")))
        .map(|v| {
            let lib = engine(v.engine)
                .and_then(|e| e.debian_package)
                .map_or(v.engine.to_string(), |p| {
                    p.trim_end_matches("-dev").to_string()
                });
            let sites = v
                .assertions
                .as_deref()
                .and_then(|a| a.split_whitespace().find_map(|w| w.parse::<u64>().ok()));
            match sites {
                Some(n) => format!("{lib} ({n} assert call sites)"),
                None => lib,
            }
        })
        .collect();
    if on.is_empty() {
        return None;
    }
    let list = match on.as_slice() {
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
        [] => return None,
    };
    Some(format!(
        "Debian's {list} {} built without -DNDEBUG: {} assertions stay on, which makes {} \
         slower than a release build would be (db_bench counts the calls to __assert_fail in \
         the installed library).",
        if on.len() == 1 { "is" } else { "are" },
        if on.len() == 1 { "its" } else { "their" },
        if on.len() == 1 { "it" } else { "them" },
    ))
}

/// Debian versions looked up once per package.
pub fn debian_lookup(engines: &[&'static Engine]) -> BTreeMap<&'static str, Option<String>> {
    let mut m = BTreeMap::new();
    for e in engines {
        if let Some(p) = e.debian_package {
            m.entry(p).or_insert_with(|| debian_version(p));
        }
    }
    m
}

/// A drawn chart and where its files are.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartOut {
    /// Title.
    pub title: String,
    /// The drawing.
    pub rendered: Rendered,
    /// PNG path relative to the report directory.
    pub png_rel: String,
}

/// One section with its charts.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionOut {
    /// The table.
    pub table: Table,
    /// Bar chart.
    pub bars: ChartOut,
    /// Line charts.
    pub lines: Vec<ChartOut>,
}

/// A study as written.
#[derive(Debug, Clone)]
pub struct StudyPage {
    /// The run.
    pub run: StudyRun,
    /// Its sections.
    pub sections: Vec<SectionOut>,
}

fn color_of(name: &str) -> (u8, u8, u8) {
    engine(name).map(|e| e.color).unwrap_or((0, 0, 0))
}

/// Bar groups (one per workload) of a table.
pub fn bar_groups(t: &Table) -> Vec<BarGroup> {
    t.rows
        .iter()
        .map(|r| BarGroup {
            label: r.label.clone(),
            bars: t
                .engines
                .iter()
                .zip(&r.cells)
                .map(|(e, c)| Bar {
                    label: e.to_string(),
                    color: color_of(e),
                    value: match c {
                        Cell::Value { ops, .. } => Ok(*ops),
                        Cell::NotAvailable(why) => Err(why.clone()),
                    },
                })
                .collect(),
        })
        .collect()
}

fn save_chart(
    out: &Path,
    rel_png: &str,
    rendered: Rendered,
    title: &str,
) -> Result<ChartOut, String> {
    let svg_path = out.join(rel_png).with_extension("svg");
    fs::write(&svg_path, &rendered.svg)
        .map_err(|e| format!("cannot write {}: {e}", svg_path.display()))?;
    Ok(ChartOut {
        title: title.to_string(),
        rendered,
        png_rel: rel_png.to_string(),
    })
}

/// Builds tables, draws charts and writes `<study>.md` and `<study>-raw.tsv`.
pub fn write_study(meta: &Meta, run: StudyRun, out: &Path) -> Result<StudyPage, String> {
    let chart_dir = out.join("charts");
    fs::create_dir_all(&chart_dir)
        .map_err(|e| format!("cannot create {}: {e}", chart_dir.display()))?;
    write_raw_tsv(out, &run).map_err(|e| format!("cannot write the raw table: {e}"))?;
    let tables = build_tables(&run);
    let mut sections = Vec::new();
    let mut files = Vec::new();
    for t in tables {
        let title = format!("{}: {}", run.study.title, t.title);
        let rel = format!("charts/{}-{}.png", run.study.id, t.id);
        let r = charts::bar_chart(&title, &bar_groups(&t), &out.join(&rel))?;
        let bars = save_chart(out, &rel, r, &title)?;
        let mut lines = Vec::new();
        for ot in &t.over_time {
            let rel = format!("charts/{}-{}-{}.png", run.study.id, t.id, ot.id);
            let series: Vec<Line> = ot
                .series
                .iter()
                .map(|s| Line {
                    label: s.engine.clone(),
                    color: color_of(&s.engine),
                    points: s.points.clone(),
                })
                .collect();
            let r = charts::line_chart(&ot.title, &ot.x_label, &series, &out.join(&rel))?;
            lines.push(save_chart(out, &rel, r, &ot.title)?);
        }
        files.push(ChartFiles {
            bars: Some(bars.png_rel.clone()),
            lines: lines
                .iter()
                .map(|c| (c.title.clone(), c.png_rel.clone()))
                .collect(),
        });
        sections.push(SectionOut {
            table: t,
            bars,
            lines,
        });
    }
    let tables: Vec<Table> = sections.iter().map(|s| s.table.clone()).collect();
    let md = markdown::render_study(meta, &run, &tables, &files);
    let md_path = out.join(format!("{}.md", run.study.id));
    fs::write(&md_path, md).map_err(|e| format!("cannot write {}: {e}", md_path.display()))?;
    Ok(StudyPage { run, sections })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(engine: &'static str, assertions: Option<&str>) -> VersionRow {
        VersionRow {
            engine,
            reported: None,
            debian: String::new(),
            assertions: assertions.map(str::to_string),
            library: None,
            status: "ran".to_string(),
        }
    }

    #[test]
    fn release_builds_note_names_the_peers_built_from_source() {
        let release = "/x/target/peers/leveldb-1.23-4/lib/libleveldb.so.1.23.0 (release build \
                       (-O2 -DNDEBUG) of Debian's source package leveldb 1.23-4, by \
                       scripts/build-peers.sh)";
        let mut rows = vec![
            row("shale", Some("off (release build)")),
            row("leveldb", Some("off (release build with -DNDEBUG: ...)")),
            row(
                "lmdb",
                Some("off (the installed library has no assert call sites)"),
            ),
        ];
        rows[2].library = Some(
            "/usr/lib/x86_64-linux-gnu/liblmdb.so.0.0.0 (Debian package liblmdb0 0.9.24-1)"
                .to_string(),
        );
        assert_eq!(release_builds_note(&rows), None);
        rows[1].library = Some(release.to_string());
        let note = release_builds_note(&rows).unwrap();
        assert!(
            note.starts_with(
                "leveldb ran a release build (-O2 -DNDEBUG) of Debian's source package,"
            ),
            "{note}"
        );
        let mut rocks = row("rocksdb", None);
        rocks.library = Some(release.replace("leveldb", "rocksdb"));
        rows.push(rocks);
        let note = release_builds_note(&rows).unwrap();
        assert!(
            note.starts_with("leveldb and rocksdb ran release builds (-O2 -DNDEBUG)"),
            "{note}"
        );
    }

    #[test]
    fn assertions_note_names_the_libraries_built_without_ndebug() {
        let on = |n: u32| {
            format!("on (the installed library has {n} assert call sites: built without -DNDEBUG)")
        };
        let rows = vec![
            row("shale", Some("off (release build)")),
            row("leveldb", Some(&on(251))),
            row("rocksdb", Some(&on(6390))),
            row(
                "sqlite3",
                Some("off (the installed library has no assert call sites)"),
            ),
            row("lmdb", None),
        ];
        let note = assertions_note(&rows).unwrap();
        assert!(
            note.starts_with(
                "Debian's libleveldb (251 assert call sites) and librocksdb (6390 assert call \
                 sites) are built without -DNDEBUG: their assertions stay on"
            ),
            "{note}"
        );
        assert!(!note.contains("  "), "{note}");
        assert_eq!(assertions_note(&rows[..1]), None);
        assert_eq!(
            assertions_note(&[row("shale", Some("on (debug build)"))]),
            None
        );
        let one = assertions_note(&rows[1..2]).unwrap();
        assert!(
            one.contains("libleveldb (251 assert call sites) is built"),
            "{one}"
        );
    }
}
