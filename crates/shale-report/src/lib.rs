//! # shale-report
//!
//! Runs the benchmark studies of `BENCHMARK.md` through the project's
//! `db_bench` for every engine and writes the report: `<study>.md` per study,
//! `index.html` with bar and line charts (inline SVG, PNG beside), raw output
//! and a tab-separated table of every figure.
//!
//! Layout: `parse` reads db_bench output, `studies` says what to run,
//! `runner` runs it, `stats` and `tables` summarise, `markdown`, `charts` and
//! `html` render, `machine` describes where it ran, `cli` reads options.
//! The db_bench contract this crate relies on is in the crate's README.

#![warn(missing_docs)]

pub mod charts;
pub mod cli;
pub mod engines;
pub mod html;
pub mod machine;
pub mod markdown;
pub mod parse;
pub mod report;
pub mod runner;
pub mod stats;
pub mod studies;
pub mod tables;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::Options;
use crate::engines::Engine;
use crate::report::{debian_lookup, version_rows, Meta, StudyPage};
use crate::runner::{command_line, estimate_job, hms, load_speeds, Context};
use crate::studies::Size;

/// Finds db_bench: the given path, else next to this executable, else `$PATH`.
pub fn locate_db_bench(given: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = given {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(format!("--db-bench={}: no such file", p.display()))
        };
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        let p = dir.join("db_bench");
        if p.is_file() {
            return Ok(p);
        }
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let p = dir.join("db_bench");
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err(
        "cannot find db_bench (build it with `cargo build --release -p shale-bench`, or pass \
         --db-bench=<path>)"
            .to_string(),
    )
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// Runs the report as the options say. `command` is the exact command line
/// quoted in the report; progress goes to `log`.
pub fn run(opts: &Options, command: &str, log: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| format!("i/o error: {e}");
    let out = absolute(&opts.out);
    let db_root = absolute(&opts.db_root);
    fs::create_dir_all(&db_root)
        .map_err(|e| format!("cannot create {}: {e}", db_root.display()))?;
    let machine = machine::probe(&db_root);
    let size = Size {
        quick: opts.quick,
        scale: opts.scale,
        free_bytes: machine.free_bytes,
    };
    if opts.dry_run {
        let db_bench =
            locate_db_bench(opts.db_bench.as_deref()).unwrap_or_else(|_| PathBuf::from("db_bench"));
        return dry_run(opts, size, &db_bench, &db_root, &out, log);
    }
    let db_bench = absolute(&locate_db_bench(opts.db_bench.as_deref())?);
    let font = charts::init_font(opts.font.as_deref())?;
    fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    if machine.fs_type == "tmpfs" {
        writeln!(
            log,
            "[shale-report] warning: {} is on tmpfs; disk figures will not mean much",
            db_root.display()
        )
        .map_err(io)?;
    }
    let debian = debian_lookup(&opts.engines);
    let mut ctx = Context::new(db_bench.clone(), db_root.clone(), out.clone());
    let mut pages: Vec<StudyPage> = Vec::new();
    for id in &opts.studies {
        let Some(mut study) = build_study(id, size, opts)? else {
            writeln!(
                log,
                "[shale-report] study {id}: none of the jobs named by --jobs; not run"
            )
            .map_err(io)?;
            continue;
        };
        let runs = opts.runs.unwrap_or(study.default_runs);
        let engines = study.engines_from(&opts.engines, opts.engines_given);
        for (name, why) in left_out(&study, &opts.engines, &engines) {
            writeln!(
                log,
                "[shale-report] {name} is left out of study {id} by default: {why} \
                 (name it in --engines to include it)"
            )
            .map_err(io)?;
            study.intro.push_str(&format!(
                " {name} is left out of this study by default: {why}; `--engines` naming it \
                 includes it."
            ));
        }
        let result = runner::run_study(study, &engines, runs, &mut ctx, log).map_err(io)?;
        let meta = Meta {
            command: command.to_string(),
            machine: machine.clone(),
            db_root: db_root.clone(),
            db_bench: db_bench.clone(),
            quick: opts.quick,
            font: font.clone(),
            versions: version_rows(&engines, &ctx, &|p| debian.get(p).cloned().flatten()),
        };
        pages.push(report::write_study(&meta, result, &out)?);
        // Rewritten after every study so that a long report is readable early.
        let index = html::render_index(&meta, &pages);
        fs::write(out.join("index.html"), index).map_err(io)?;
        writeln!(
            log,
            "[shale-report] wrote {} and {}",
            out.join(format!("{id}.md")).display(),
            out.join("index.html").display()
        )
        .map_err(io)?;
    }
    Ok(())
}

/// Builds a study at `size` with only the jobs `--jobs` names (all when it
/// names none); `None` when it names none of this study's.
fn build_study(id: &str, size: Size, opts: &Options) -> Result<Option<studies::Study>, String> {
    let mut study = studies::build(id, size).ok_or_else(|| format!("unknown study {id}"))?;
    if !opts.jobs.is_empty() && study.keep_jobs(&opts.jobs) == 0 {
        return Ok(None);
    }
    Ok(Some(study))
}

/// The study's default exclusions that removed one of `chosen`.
fn left_out(
    study: &studies::Study,
    chosen: &[&'static Engine],
    running: &[&'static Engine],
) -> Vec<(&'static str, &'static str)> {
    study
        .left_out
        .iter()
        .copied()
        .filter(|(n, _)| {
            chosen.iter().any(|e| e.name == *n) && !running.iter().any(|e| e.name == *n)
        })
        .collect()
}

fn dry_run(
    opts: &Options,
    size: Size,
    db_bench: &Path,
    db_root: &Path,
    out: &Path,
    log: &mut dyn Write,
) -> Result<(), String> {
    let io = |e: std::io::Error| format!("i/o error: {e}");
    for id in &opts.studies {
        let Some(study) = build_study(id, size, opts)? else {
            writeln!(
                log,
                "# study {id}: none of the jobs named by --jobs; not run"
            )
            .map_err(io)?;
            continue;
        };
        let runs = opts.runs.unwrap_or(study.default_runs);
        let engines = study.engines_from(&opts.engines, opts.engines_given);
        for (name, why) in left_out(&study, &opts.engines, &engines) {
            writeln!(log, "# {name}: left out of this study by default: {why}").map_err(io)?;
        }
        let speeds = load_speeds(out, id);
        let mut total = 0.0;
        writeln!(
            log,
            "# study {} ({}), {} run{} per engine",
            study.id,
            study.title,
            runs,
            if runs == 1 { "" } else { "s" }
        )
        .map_err(io)?;
        for job in &study.jobs {
            for e in &engines {
                if let Some(why) = job.unsupported_by(e) {
                    writeln!(log, "# {} {}: not run: {why}", job.id, e.name).map_err(io)?;
                    continue;
                }
                let est = estimate_job(job, e, &speeds);
                total += est * runs as f64;
                let db = runner::db_dir(db_root, study.id, job.id, e.name);
                let ts = out
                    .join("raw")
                    .join(study.id)
                    .join(format!("{}-{}-run1.csv", job.id, e.name));
                writeln!(
                    log,
                    "{}    # about {} per run",
                    command_line(db_bench, &job.args(e, &db, Some(&ts))),
                    hms(est)
                )
                .map_err(io)?;
            }
        }
        writeln!(
            log,
            "# expected duration of {}: about {}",
            study.id,
            hms(total)
        )
        .map_err(io)?;
    }
    Ok(())
}
