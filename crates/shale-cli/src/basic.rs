//! get, put, delete, scan, count, compact, destroy.

use std::io::{BufWriter, IsTerminal, Write};
use std::ops::Bound;
use std::path::Path;

use shale::{Db, WriteOptions};

use crate::bytes::{escape, to_hex, Encoding};
use crate::open::{self, exit, CliError, CliResult, WriteTuning};
use crate::out::output_error;
use crate::progress::{Progress, ProgressMode, Unit};

/// A key range: `start` included, `end` not.
#[derive(Debug, Clone, Default)]
pub struct Bounds {
    pub start: Option<Vec<u8>>,
    pub end: Option<Vec<u8>>,
}

impl Bounds {
    pub fn iter(&self, db: &Db) -> shale::Iter {
        let lo = match &self.start {
            Some(s) => Bound::Included(s.clone()),
            None => Bound::Unbounded,
        };
        let hi = match &self.end {
            Some(e) => Bound::Excluded(e.clone()),
            None => Bound::Unbounded,
        };
        db.range_with::<Vec<u8>, _>(&verified(), (lo, hi))
    }

    pub fn is_empty_range(&self) -> bool {
        matches!((&self.start, &self.end), (Some(s), Some(e)) if s >= e)
    }
}

/// Reads verify every block's checksum: damage is an error, not data.
pub fn verified() -> shale::ReadOptions<'static> {
    shale::ReadOptions {
        verify_checksums: true,
        ..Default::default()
    }
}

fn key_arg(hex: bool, key: &str) -> CliResult<Vec<u8>> {
    Encoding::from_hex_flag(hex)
        .decode("key", key)
        .map_err(CliError::usage)
}

pub fn get(db: &Path, key: &str, hex: bool, raw: bool) -> CliResult<i32> {
    let key = key_arg(hex, key)?;
    let db = open::open_read(db)?;
    match db.get_with(&verified(), &key)? {
        Some(v) => {
            let mut out = std::io::stdout().lock();
            if raw {
                out.write_all(&v).map_err(output_error)?;
            } else {
                let text = Encoding::from_hex_flag(hex).encode(&v);
                writeln!(out, "{text}").map_err(output_error)?;
            }
            out.flush().map_err(output_error)?;
            Ok(0)
        }
        None => {
            errln!("shale: key {} not found", escape(&key));
            Ok(exit::NEGATIVE)
        }
    }
}

pub fn put(
    db: &Path,
    key: &str,
    value: &str,
    hex: bool,
    create: bool,
    sync: bool,
    tune: &WriteTuning,
) -> CliResult<i32> {
    let key = key_arg(hex, key)?;
    let value = Encoding::from_hex_flag(hex)
        .decode("value", value)
        .map_err(CliError::usage)?;
    let db = open::open_write(db, create, Some(tune))?;
    db.put_with(
        &WriteOptions {
            sync,
            ..Default::default()
        },
        &key,
        &value,
    )?;
    Ok(0)
}

pub fn delete(db: &Path, key: &str, hex: bool, sync: bool) -> CliResult<i32> {
    let key = key_arg(hex, key)?;
    let db = open::open_write(db, false, None)?;
    db.delete_with(
        &WriteOptions {
            sync,
            ..Default::default()
        },
        &key,
    )?;
    Ok(0)
}

/// How `scan` prints entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScanFormat {
    Text,
    Hex,
    Json,
}

/// One entry as a JSON object: text fields when the bytes are UTF-8,
/// `key_hex`/`value_hex` fields otherwise.
pub fn json_entry(key: &[u8], value: Option<&[u8]>) -> String {
    let mut obj = serde_json::Map::new();
    let mut field = |name: &str, bytes: &[u8]| match std::str::from_utf8(bytes) {
        Ok(s) => {
            obj.insert(name.to_string(), serde_json::Value::String(s.to_string()));
        }
        Err(_) => {
            obj.insert(
                format!("{name}_hex"),
                serde_json::Value::String(to_hex(bytes)),
            );
        }
    };
    field("key", key);
    if let Some(v) = value {
        field("value", v);
    }
    serde_json::Value::Object(obj).to_string()
}

pub fn scan(
    db: &Path,
    bounds: &Bounds,
    reverse: bool,
    limit: Option<u64>,
    keys_only: bool,
    format: ScanFormat,
) -> CliResult<i32> {
    let db = open::open_read(db)?;
    if bounds.is_empty_range() {
        return Ok(0);
    }
    let iter = bounds.iter(&db);
    let iter: Box<dyn Iterator<Item = shale::Result<_>>> = if reverse {
        Box::new(iter.rev())
    } else {
        Box::new(iter)
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let limit = limit.unwrap_or(u64::MAX);
    for (n, item) in iter.enumerate() {
        if n as u64 >= limit {
            break;
        }
        let (k, v) = item?;
        let line = match (format, keys_only) {
            (ScanFormat::Text, true) => escape(&k),
            (ScanFormat::Text, false) => format!("{}\t{}", escape(&k), escape(&v)),
            (ScanFormat::Hex, true) => to_hex(&k),
            (ScanFormat::Hex, false) => format!("{}\t{}", to_hex(&k), to_hex(&v)),
            (ScanFormat::Json, true) => json_entry(&k, None),
            (ScanFormat::Json, false) => json_entry(&k, Some(&v)),
        };
        writeln!(out, "{line}").map_err(output_error)?;
    }
    out.flush().map_err(output_error)?;
    Ok(0)
}

pub fn count(db: &Path, bounds: &Bounds, progress: ProgressMode) -> CliResult<i32> {
    let db = open::open_read(db)?;
    let mut n = 0u64;
    if !bounds.is_empty_range() {
        let mut bar = Progress::new(progress, "count", None, Unit::Items);
        for item in bounds.iter(&db) {
            item?;
            n += 1;
            if n.is_multiple_of(4096) {
                bar.set_position(n);
            }
        }
        bar.finish();
    }
    outln!("{n}")?;
    Ok(0)
}

pub fn compact(
    db: &Path,
    from: Option<&str>,
    to: Option<&str>,
    hex: bool,
    tune: &WriteTuning,
) -> CliResult<i32> {
    let enc = Encoding::from_hex_flag(hex);
    let from = from
        .map(|s| enc.decode("--from", s))
        .transpose()
        .map_err(CliError::usage)?;
    let to = to
        .map(|s| enc.decode("--to", s))
        .transpose()
        .map_err(CliError::usage)?;
    let db = open::open_write(db, false, Some(tune))?;
    let before = db.stats();
    db.compact_range(from.as_deref(), to.as_deref())?;
    let after = db.stats();
    let sum = |s: &shale::Stats| {
        (
            s.levels.iter().map(|l| l.files).sum::<usize>(),
            s.levels.iter().map(|l| l.bytes).sum::<u64>(),
        )
    };
    let (f0, b0) = sum(&before);
    let (f1, b1) = sum(&after);
    outln!(
        "compacted: {f0} files ({}) before, {f1} files ({}) after",
        crate::bytes::human_bytes(b0),
        crate::bytes::human_bytes(b1)
    )?;
    Ok(0)
}

pub fn destroy(db: &Path, yes: bool) -> CliResult<i32> {
    open::existing(db)?;
    if !yes {
        if !std::io::stdin().is_terminal() {
            return Err(CliError::usage(format!(
                "{}: destroy asks before deleting; give --yes to delete without asking",
                db.display()
            )));
        }
        err!(
            "Delete the database in {} and all its files? [y/N] ",
            db.display()
        );
        let mut answer = String::new();
        std::io::stdin()
            .read_line(&mut answer)
            .map_err(|e| CliError::error(format!("standard input: {e}")))?;
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
            errln!("shale: nothing deleted");
            return Ok(exit::NEGATIVE);
        }
    }
    shale::destroy(db, &shale::Options::default()).map_err(|e| open::open_error(db, e))?;
    outln!("destroyed {}", db.display())?;
    Ok(0)
}
