//! Command-line options of `shale-report`.
//!
//! Invariants: every option is validated before anything runs (study and
//! engine names, run counts); unknown options are errors, not ignored.

use std::path::PathBuf;

use crate::engines::{engine, Engine, ENGINES};
use crate::studies::{build, Size, STUDY_IDS};

/// Usage text.
pub const USAGE: &str = "\
usage: shale-report [--studies=leveldb,wiredtiger,bangdb,bangdb-scale,sqlite4] [--quick]
                    [--runs=N] [--engines=shale,leveldb,...] [--out=report]
                    [--db-root=DIR] [--db-bench=PATH] [--font=FILE.ttf] [--dry-run]
                    [--jobs=ID,...]

  --studies   studies to run, in this order (default: leveldb)
              leveldb       every section of the LevelDB benchmark page (N = 1,000,000)
              wiredtiger    the LevelDB-vs-WiredTiger comparison (5 runs, trimmed mean)
              bangdb        BangDB put/get, 1 and 4 threads, over time (N = 10,000,000)
              bangdb-scale  opt-in: the largest sequential put/get the disk allows
              sqlite4       SQLite4 LSM: 200 iterations of 50,000 inserts + lookups
  --quick     every chosen study at a tenth of its size or smaller (smoke test)
  --runs      runs per engine (default 3; wiredtiger 5; bangdb, bangdb-scale
              and sqlite4 1, as their seeds)
  --engines   engines to compare (default: all): shale, leveldb, rocksdb, sqlite3,
              kyoto-treedb, wiredtiger-lsm, wiredtiger-btree, lmdb; and Shale's
              option variants shale-blobs, shale-split and shale-bulk, which
              run only in the sections that ask for them
  --out       report directory (default: report)
  --db-root   where databases are created, one fresh directory per run
              (default: <temp dir>/shale-report-db)
  --db-bench  the db_bench binary (default: next to shale-report, then $PATH)
  --font      TrueType/OpenType font for chart labels (default: found on the system)
  --dry-run   print the plan, estimates and every command; run nothing
  --jobs      run only these jobs of the chosen studies (ids as in the report's
              Commands list and --dry-run, e.g. compression-zstd,compression-lz4);
              sections keep the lines of the jobs that ran, sections with none
              are left out, and the report says so (default: every job)
";

/// Parsed options.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Study ids in run order.
    pub studies: Vec<&'static str>,
    /// Smoke-test sizes.
    pub quick: bool,
    /// Hidden `--scale=F`: multiplies every count (for tests; default 1).
    pub scale: f64,
    /// Runs per engine, when given.
    pub runs: Option<usize>,
    /// Engines, column order.
    pub engines: Vec<&'static Engine>,
    /// Report directory.
    pub out: PathBuf,
    /// Database root.
    pub db_root: PathBuf,
    /// db_bench binary, when given.
    pub db_bench: Option<PathBuf>,
    /// Font file, when given.
    pub font: Option<PathBuf>,
    /// Print the plan only.
    pub dry_run: bool,
    /// `--help` was asked for.
    pub help: bool,
    /// `--engines` was given: every study runs exactly those engines (else
    /// each study runs all engines but the ones it leaves out by default).
    pub engines_given: bool,
    /// `--jobs`: the only jobs to run, by id (empty: every job).
    pub jobs: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            studies: vec!["leveldb"],
            quick: false,
            scale: 1.0,
            runs: None,
            engines: ENGINES.iter().collect(),
            out: PathBuf::from("report"),
            db_root: std::env::temp_dir().join("shale-report-db"),
            db_bench: None,
            font: None,
            dry_run: false,
            help: false,
            engines_given: false,
            jobs: vec![],
        }
    }
}

/// Parses arguments (without the program name). Both `--opt=value` and
/// `--opt value` are accepted.
pub fn parse_args<I: IntoIterator<Item = String>>(args: I) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let (key, inline) = match arg.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (arg.clone(), None),
        };
        match key.as_str() {
            "--quick" | "--dry-run" | "--help" | "-h" => {
                if inline.is_some() {
                    return Err(format!("{key} takes no value"));
                }
                match key.as_str() {
                    "--quick" => o.quick = true,
                    "--dry-run" => o.dry_run = true,
                    _ => o.help = true,
                }
                continue;
            }
            _ => {}
        }
        let mut value = || -> Result<String, String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it.next().ok_or_else(|| format!("{key} needs a value")),
            }
        };
        match key.as_str() {
            "--studies" => {
                let v = value()?;
                let mut list = Vec::new();
                for name in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let id = STUDY_IDS.iter().find(|s| **s == name).ok_or_else(|| {
                        format!("unknown study `{name}` (known: {})", STUDY_IDS.join(", "))
                    })?;
                    if !list.contains(id) {
                        list.push(*id);
                    }
                }
                if list.is_empty() {
                    return Err("--studies needs at least one study".into());
                }
                o.studies = list;
            }
            "--engines" => {
                let v = value()?;
                let mut list: Vec<&'static Engine> = Vec::new();
                for name in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let e = engine(name).ok_or_else(|| {
                        let known: Vec<&str> = ENGINES.iter().map(|e| e.name).collect();
                        format!("unknown engine `{name}` (known: {})", known.join(", "))
                    })?;
                    if !list.iter().any(|x| x.name == e.name) {
                        list.push(e);
                    }
                }
                if list.is_empty() {
                    return Err("--engines needs at least one engine".into());
                }
                // Keep the canonical column order (shale first).
                list.sort_by_key(|e| ENGINES.iter().position(|x| x.name == e.name));
                o.engines = list;
                o.engines_given = true;
            }
            "--runs" => {
                let v = value()?;
                let n: usize = v
                    .parse()
                    .map_err(|_| format!("--runs wants a positive integer, not `{v}`"))?;
                if n == 0 || n > 100 {
                    return Err(format!("--runs must be between 1 and 100, not {n}"));
                }
                o.runs = Some(n);
            }
            "--scale" => {
                // Not in the usage text: for tests that need a report in
                // seconds. Figures at such sizes mean nothing.
                let v = value()?;
                let f: f64 = v
                    .parse()
                    .map_err(|_| format!("--scale wants a number, not `{v}`"))?;
                if !(f > 0.0 && f <= 1.0) {
                    return Err(format!("--scale must be in (0, 1], not {v}"));
                }
                o.scale = f;
            }
            "--jobs" => {
                let v = value()?;
                let mut list: Vec<String> = Vec::new();
                for id in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    if !list.iter().any(|x| x == id) {
                        list.push(id.to_string());
                    }
                }
                if list.is_empty() {
                    return Err("--jobs needs at least one job id".into());
                }
                o.jobs = list;
            }
            "--out" => o.out = PathBuf::from(value()?),
            "--db-root" => o.db_root = PathBuf::from(value()?),
            "--db-bench" => o.db_bench = Some(PathBuf::from(value()?)),
            "--font" => o.font = Some(PathBuf::from(value()?)),
            _ => return Err(format!("unknown option `{arg}`\n\n{USAGE}")),
        }
    }
    check_jobs(&o)?;
    Ok(o)
}

/// Every `--jobs` id must name a job of one of the chosen studies (job ids
/// do not depend on sizes).
fn check_jobs(o: &Options) -> Result<(), String> {
    if o.jobs.is_empty() {
        return Ok(());
    }
    let mut known: Vec<&'static str> = Vec::new();
    for id in &o.studies {
        if let Some(s) = build(id, Size::full(None)) {
            for j in &s.jobs {
                if !known.contains(&j.id) {
                    known.push(j.id);
                }
            }
        }
    }
    for id in &o.jobs {
        if !known.iter().any(|k| k == id) {
            return Err(format!(
                "--jobs: no job `{id}` in the chosen studies ({}); their jobs: {}",
                o.studies.join(", "),
                known.join(", ")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Options, String> {
        parse_args(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn defaults_are_the_full_leveldb_study_on_all_engines() {
        let o = p(&[]).unwrap();
        assert_eq!(o.studies, vec!["leveldb"]);
        assert!(!o.quick);
        assert_eq!(o.runs, None);
        assert_eq!(o.engines.len(), crate::engines::ENGINES.len());
        assert_eq!(o.out, PathBuf::from("report"));
    }

    #[test]
    fn options_parse_and_validate() {
        let o = p(&[
            "--studies=sqlite4,leveldb",
            "--quick",
            "--runs",
            "5",
            "--engines=lmdb,shale",
            "--out=/tmp/r",
            "--db-bench=/x/db_bench",
        ])
        .unwrap();
        assert_eq!(o.studies, vec!["sqlite4", "leveldb"]);
        assert!(o.quick);
        assert_eq!(o.runs, Some(5));
        let names: Vec<&str> = o.engines.iter().map(|e| e.name).collect();
        assert_eq!(names, vec!["shale", "lmdb"]);
        assert_eq!(o.db_bench, Some(PathBuf::from("/x/db_bench")));
        assert!(p(&["--studies=nope"])
            .unwrap_err()
            .contains("unknown study"));
        // Option variants are named like engines; columns keep ENGINES' order.
        let o = p(&["--engines=leveldb,shale-split,shale"]).unwrap();
        let names: Vec<&str> = o.engines.iter().map(|e| e.name).collect();
        assert_eq!(names, vec!["shale", "shale-split", "leveldb"]);
        for e in crate::engines::ENGINES.iter() {
            assert!(USAGE.contains(e.name), "{}", e.name);
        }
        assert!(p(&["--engines=bdb"])
            .unwrap_err()
            .contains("unknown engine"));
        assert!(p(&["--runs=0"]).is_err());
        assert!(p(&["--runs=x"]).is_err());
        assert!(p(&["--bogus"]).unwrap_err().contains("unknown option"));
        assert!(p(&["--out"]).unwrap_err().contains("needs a value"));
        assert!(p(&["--quick=1"]).is_err());
        assert_eq!(p(&["--scale=0.05"]).unwrap().scale, 0.05);
        assert_eq!(p(&[]).unwrap().scale, 1.0);
        assert!(p(&["--scale=0"]).is_err());
        assert!(p(&["--scale=2"]).is_err());
        assert!(!USAGE.contains("--scale"), "a hidden option");
    }

    #[test]
    fn jobs_name_jobs_of_the_chosen_studies() {
        let o = p(&["--jobs=compression-zstd, compression-lz4,compression-zstd"]).unwrap();
        assert_eq!(o.jobs, vec!["compression-zstd", "compression-lz4"]);
        assert!(p(&[]).unwrap().jobs.is_empty());
        let e = p(&["--jobs=nope"]).unwrap_err();
        assert!(
            e.contains("no job `nope` in the chosen studies (leveldb)"),
            "{e}"
        );
        assert!(e.contains("compression-zstd"), "{e}");
        // A job of another study than the chosen ones is not known.
        assert!(p(&["--jobs=baseline", "--studies=sqlite4"]).is_err());
        assert!(p(&["--studies=sqlite4,leveldb", "--jobs=baseline"]).is_ok());
        assert!(p(&["--jobs=,"]).unwrap_err().contains("at least one"));
        assert!(USAGE.contains("--jobs"));
    }
}
