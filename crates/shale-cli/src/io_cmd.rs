//! load and export: JSON lines, CSV and a binary key-value stream, in
//! constant memory. `load` puts sorted input straight into tables (a bulk
//! load), and falls back to write batches from the first key that goes
//! back.
//!
//! Formats (also in the README's operator section):
//! - `jsonl`: one object a line, `{"key": K, "value": V}`; a key or value
//!   that is not UTF-8 is written as `key_hex`/`value_hex` in hexadecimal
//!   instead. `load` accepts either field of each pair.
//! - `csv`: a header `key,value`, then one record an entry; fields are in
//!   the escaped text form (`\\` a backslash, `\xNN` any byte).
//! - `kv`: binary. The 8 bytes `SHALEKV1`, then per entry the key length
//!   and the value length as little-endian u32, the key and the value; at
//!   the end the length pair `0xffffffff, 0` and the entry count as a
//!   little-endian u64. A stream without that end is truncated.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

use shale::{Db, WriteBatch, WriteOptions};

use crate::basic::{json_entry, Bounds};
use crate::bytes::{escape, from_hex, unescape};
use crate::open::{self, CliError, CliResult, WriteTuning};
use crate::out::output_error;
use crate::progress::{Progress, ProgressMode, Unit};

pub const KV_MAGIC: &[u8; 8] = b"SHALEKV1";
const KV_END: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DataFormat {
    /// JSON lines.
    Jsonl,
    /// CSV with a key,value header.
    Csv,
    /// The binary key-value stream.
    Kv,
}

/// Counts the bytes read through it, for progress.
struct Counting<R> {
    inner: R,
    count: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Reads entries of one format, one at a time.
pub trait EntryReader {
    /// The next entry, `None` at the end.
    fn next_entry(&mut self) -> CliResult<Option<(Vec<u8>, Vec<u8>)>>;
    /// The input line the last entry was read from, for a text format.
    fn line(&self) -> Option<u64>;
}

struct JsonlReader<R> {
    input: R,
    line: String,
    number: u64,
    name: String,
}

impl<R: BufRead> EntryReader for JsonlReader<R> {
    fn next_entry(&mut self) -> CliResult<Option<(Vec<u8>, Vec<u8>)>> {
        loop {
            self.line.clear();
            let n = self
                .input
                .read_line(&mut self.line)
                .map_err(|e| CliError::error(format!("{}: {e}", self.name)))?;
            if n == 0 {
                return Ok(None);
            }
            self.number += 1;
            let text = self.line.trim();
            if text.is_empty() {
                continue;
            }
            let bad = |what: String| {
                CliError::error(format!("{} line {}: {what}", self.name, self.number))
            };
            let v: serde_json::Value =
                serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
            let field = |name: &str| -> CliResult<Vec<u8>> {
                if let Some(s) = v.get(name).and_then(|s| s.as_str()) {
                    return Ok(s.as_bytes().to_vec());
                }
                if let Some(s) = v.get(format!("{name}_hex")).and_then(|s| s.as_str()) {
                    return from_hex(s).map_err(|e| bad(format!("{name}_hex: {e}")));
                }
                Err(bad(format!(
                    "no \"{name}\" (or \"{name}_hex\") string field"
                )))
            };
            return Ok(Some((field("key")?, field("value")?)));
        }
    }

    fn line(&self) -> Option<u64> {
        Some(self.number)
    }
}

struct CsvReader<R> {
    reader: csv::Reader<R>,
    record: csv::ByteRecord,
    name: String,
}

impl<R: Read> EntryReader for CsvReader<R> {
    fn next_entry(&mut self) -> CliResult<Option<(Vec<u8>, Vec<u8>)>> {
        let got = self
            .reader
            .read_byte_record(&mut self.record)
            .map_err(|e| CliError::error(format!("{}: {e}", self.name)))?;
        if !got {
            return Ok(None);
        }
        let line = self.record.position().map_or(0, |p| p.line());
        let bad = |what: String| CliError::error(format!("{} line {line}: {what}", self.name));
        if self.record.len() != 2 {
            return Err(bad(format!(
                "{} fields, expected 2 (key,value)",
                self.record.len()
            )));
        }
        let field = |i: usize| -> CliResult<Vec<u8>> {
            let s = std::str::from_utf8(&self.record[i])
                .map_err(|_| bad("not UTF-8 (write other bytes as \\xNN)".into()))?;
            unescape(s).map_err(&bad)
        };
        Ok(Some((field(0)?, field(1)?)))
    }

    fn line(&self) -> Option<u64> {
        self.record.position().map(|p| p.line())
    }
}

struct KvReader<R> {
    input: R,
    name: String,
    count: u64,
    started: bool,
}

impl<R: Read> KvReader<R> {
    fn read_exact(&mut self, buf: &mut [u8], what: &str) -> CliResult<()> {
        self.input.read_exact(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                CliError::error(format!(
                    "{}: truncated: the stream ends inside {what} after {} entries",
                    self.name, self.count
                ))
            } else {
                CliError::error(format!("{}: {e}", self.name))
            }
        })
    }
}

impl<R: Read> EntryReader for KvReader<R> {
    fn next_entry(&mut self) -> CliResult<Option<(Vec<u8>, Vec<u8>)>> {
        if !self.started {
            let mut magic = [0u8; 8];
            self.read_exact(&mut magic, "the header")?;
            if &magic != KV_MAGIC {
                return Err(CliError::error(format!(
                    "{}: not a key-value stream (it does not start with SHALEKV1)",
                    self.name
                )));
            }
            self.started = true;
        }
        let mut lens = [0u8; 8];
        self.read_exact(&mut lens, "an entry's lengths")?;
        let klen = u32::from_le_bytes([lens[0], lens[1], lens[2], lens[3]]);
        let vlen = u32::from_le_bytes([lens[4], lens[5], lens[6], lens[7]]);
        if klen == KV_END {
            let mut count = [0u8; 8];
            self.read_exact(&mut count, "the trailer")?;
            let claimed = u64::from_le_bytes(count);
            if claimed != self.count {
                return Err(CliError::error(format!(
                    "{}: the trailer counts {claimed} entries, the stream holds {}",
                    self.name, self.count
                )));
            }
            return Ok(None);
        }
        let mut key = vec![0u8; klen as usize];
        self.read_exact(&mut key, "a key")?;
        let mut value = vec![0u8; vlen as usize];
        self.read_exact(&mut value, "a value")?;
        self.count += 1;
        Ok(Some((key, value)))
    }

    fn line(&self) -> Option<u64> {
        None
    }
}

/// Writes entries of one format.
pub enum EntryWriter<W: Write> {
    Jsonl(W),
    Csv(Box<csv::Writer<W>>),
    Kv { out: W, count: u64 },
}

impl<W: Write> EntryWriter<W> {
    pub fn new(format: DataFormat, mut out: W) -> std::io::Result<EntryWriter<W>> {
        Ok(match format {
            DataFormat::Jsonl => EntryWriter::Jsonl(out),
            DataFormat::Csv => {
                let mut w = csv::WriterBuilder::new().from_writer(out);
                w.write_record(["key", "value"])
                    .map_err(std::io::Error::other)?;
                EntryWriter::Csv(Box::new(w))
            }
            DataFormat::Kv => {
                out.write_all(KV_MAGIC)?;
                EntryWriter::Kv { out, count: 0 }
            }
        })
    }

    pub fn write(&mut self, key: &[u8], value: &[u8]) -> std::io::Result<()> {
        match self {
            EntryWriter::Jsonl(out) => writeln!(out, "{}", json_entry(key, Some(value))),
            EntryWriter::Csv(w) => w
                .write_record([escape(key), escape(value)])
                .map_err(std::io::Error::other),
            EntryWriter::Kv { out, count } => {
                let too_long = |what: &str| {
                    std::io::Error::other(format!("a {what} too long for the kv format"))
                };
                let k = u32::try_from(key.len())
                    .ok()
                    .filter(|&k| k != KV_END)
                    .ok_or_else(|| too_long("key"))?;
                let v = u32::try_from(value.len()).map_err(|_| too_long("value"))?;
                out.write_all(&k.to_le_bytes())?;
                out.write_all(&v.to_le_bytes())?;
                out.write_all(key)?;
                out.write_all(value)?;
                *count += 1;
                Ok(())
            }
        }
    }

    pub fn finish(self) -> std::io::Result<()> {
        match self {
            EntryWriter::Jsonl(mut out) => out.flush(),
            EntryWriter::Csv(mut w) => w.flush(),
            EntryWriter::Kv { mut out, count } => {
                out.write_all(&KV_END.to_le_bytes())?;
                out.write_all(&0u32.to_le_bytes())?;
                out.write_all(&count.to_le_bytes())?;
                out.flush()
            }
        }
    }
}

pub fn export(
    db_path: &Path,
    output: Option<&Path>,
    format: DataFormat,
    bounds: &Bounds,
    progress: ProgressMode,
) -> CliResult<i32> {
    let db = open::open_read(db_path)?;
    let to_file = output.filter(|p| *p != Path::new("-"));
    let sink: Box<dyn Write> = match to_file {
        Some(p) => Box::new(File::create(p).map_err(|e| open::io_error(p, e))?),
        None => Box::new(std::io::stdout().lock()),
    };
    let name = to_file.map_or("standard output".to_string(), |p| p.display().to_string());
    let werr = |e: std::io::Error| match to_file {
        Some(_) => CliError::error(format!("{name}: {e}")),
        None => output_error(e),
    };
    let mut w = EntryWriter::new(format, BufWriter::with_capacity(1 << 20, sink)).map_err(werr)?;
    let total: u64 = db.stats().levels.iter().map(|l| l.bytes).sum();
    let mut bar = Progress::new(progress, "export", Some(total.max(1)), Unit::Bytes);
    let mut n = 0u64;
    let mut bytes = 0u64;
    if !bounds.is_empty_range() {
        for item in bounds.iter(&db) {
            let (k, v) = item?;
            w.write(&k, &v).map_err(werr)?;
            n += 1;
            bytes += (k.len() + v.len()) as u64;
            if n.is_multiple_of(4096) {
                bar.set_position(bytes.min(total));
            }
        }
    }
    w.finish().map_err(werr)?;
    bar.finish();
    errln!("exported {n} entries");
    Ok(0)
}

/// The entry reader for `format` over `input`.
fn reader(format: DataFormat, input: Box<dyn Read>, name: String) -> Box<dyn EntryReader> {
    match format {
        DataFormat::Jsonl => Box::new(JsonlReader {
            input: BufReader::with_capacity(1 << 20, input),
            line: String::new(),
            number: 0,
            name,
        }),
        DataFormat::Csv => Box::new(CsvReader {
            reader: csv::ReaderBuilder::new()
                .has_headers(true)
                .from_reader(BufReader::with_capacity(1 << 20, input)),
            record: csv::ByteRecord::new(),
            name,
        }),
        DataFormat::Kv => Box::new(KvReader {
            input: BufReader::with_capacity(1 << 20, input),
            name,
            count: 0,
            started: false,
        }),
    }
}

#[allow(clippy::too_many_arguments)]
pub fn load(
    db_path: &Path,
    input: Option<&Path>,
    format: DataFormat,
    create: bool,
    batch_bytes: usize,
    bulk: Option<Option<usize>>,
    tune: &WriteTuning,
    progress: ProgressMode,
) -> CliResult<i32> {
    let from_file = input.filter(|p| *p != Path::new("-"));
    let (raw, total, name): (Box<dyn Read>, Option<u64>, String) = match from_file {
        Some(p) => {
            let f = File::open(p).map_err(|e| open::io_error(p, e))?;
            let len = f.metadata().ok().map(|m| m.len());
            (Box::new(f), len, p.display().to_string())
        }
        None => (
            Box::new(std::io::stdin().lock()),
            None,
            "standard input".to_string(),
        ),
    };
    let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = Counting {
        inner: raw,
        count: count.clone(),
    };
    let mut entries = reader(format, Box::new(counted), name);

    let mut options = shale::Options {
        create_if_missing: create,
        write_buffer_size: 32 << 20,
        ..shale::Options::default()
    };
    tune.apply(&mut options);
    let db = open::open_write_with(db_path, options)?;
    let mut bar = Progress::new(progress, "load", total, Unit::Bytes);
    let stats = load_entries(&db, &mut *entries, batch_bytes, bulk, &mut || {
        bar.set_position(count.load(std::sync::atomic::Ordering::Relaxed))
    })?;
    bar.finish();
    errln!("{stats}");
    Ok(0)
}

/// What a load did.
#[derive(Default)]
pub struct LoadStats {
    pub entries: u64,
    /// Entries that went straight into tables, and how many tables.
    pub ingested: u64,
    pub tables: usize,
    pub batches: u64,
    /// The record whose key went back (the input is not sorted), with its line.
    pub unsorted_at: Option<(u64, Option<u64>)>,
}

impl std::fmt::Display for LoadStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tables = |n: usize| {
            if n == 1 {
                "1 table".to_string()
            } else {
                format!("{n} tables")
            }
        };
        let batches = match self.batches {
            1 => "1 write batch".to_string(),
            n => format!("{n} write batches"),
        };
        match self.unsorted_at {
            // --no-bulk: nothing went into tables directly.
            None if self.batches > 0 => {
                write!(f, "loaded {} entries through {batches}", self.entries)
            }
            None => write!(
                f,
                "loaded {} entries straight into {} (the input is sorted)",
                self.entries,
                tables(self.tables)
            ),
            Some((record, line)) => {
                let line = line.map_or(String::new(), |l| format!(" (line {l})"));
                writeln!(
                    f,
                    "record {record}{line} has a key before the one of the record before it: \
                     the input is not sorted, so the records from it on went through write \
                     batches"
                )?;
                write!(
                    f,
                    "loaded {} entries: {} straight into {}, {} through {batches}",
                    self.entries,
                    self.ingested,
                    tables(self.tables),
                    self.entries - self.ingested,
                )
            }
        }
    }
}

/// Loads `entries`: while their keys increase, straight into tables
/// through a bulk loader (memory stays constant: tables are written as they
/// fill); from the first key that does not, what came before is installed
/// and the rest goes through write batches of about `batch_bytes`, so that
/// a later record still wins over an earlier one with the same key. An
/// error in the input stops the load: the entries being loaded into tables
/// are then dropped, batches already written stay. Without `bulk`, every
/// entry goes through write batches; with it, `Some(n)` threads write the
/// tables (`None`: the loader's default).
fn load_entries(
    db: &Db,
    entries: &mut dyn EntryReader,
    batch_bytes: usize,
    bulk: Option<Option<usize>>,
    tick: &mut dyn FnMut(),
) -> CliResult<LoadStats> {
    let mut stats = LoadStats::default();
    let (mut loader, mut batch) = match bulk {
        Some(threads) => {
            let loader = db.bulk_loader()?;
            let loader = match threads {
                Some(n) => loader.with_threads(n)?,
                None => loader,
            };
            (Some(loader), WriteBatch::new())
        }
        None => (None, WriteBatch::with_capacity(batch_bytes + (64 << 10))),
    };
    let mut last_key = Vec::new();
    let write = |batch: &mut WriteBatch, stats: &mut LoadStats, sync: bool| -> CliResult<()> {
        if !batch.is_empty() || sync {
            db.write(
                &WriteOptions {
                    sync,
                    ..Default::default()
                },
                batch,
            )?;
            stats.batches += 1;
            batch.clear();
        }
        Ok(())
    };
    let bad_key = |k: &[u8], e: shale::Error| CliError::error(format!("key {}: {e}", escape(k)));
    while let Some((k, v)) = entries.next_entry()? {
        stats.entries += 1;
        if let Some(l) = loader.as_mut() {
            if stats.entries == 1 || k > last_key {
                l.add(&k, &v).map_err(|e| bad_key(&k, e))?;
                last_key.clear();
                last_key.extend_from_slice(&k);
                if stats.entries.is_multiple_of(4096) {
                    tick();
                }
                continue;
            }
            // The key goes back: what came before is installed first.
            if let Some(l) = loader.take() {
                let done = l.finish()?;
                stats.ingested = done.entries;
                stats.tables = done.tables.len();
            }
            stats.unsorted_at = Some((stats.entries, entries.line()));
            batch = WriteBatch::with_capacity(batch_bytes + (64 << 10));
        }
        batch.put(&k, &v).map_err(|e| bad_key(&k, e))?;
        if batch.approximate_size() >= batch_bytes {
            write(&mut batch, &mut stats, false)?;
            tick();
        }
    }
    match loader {
        Some(l) => {
            let done = l.finish()?;
            stats.ingested = done.entries;
            stats.tables = done.tables.len();
        }
        None => write(&mut batch, &mut stats, true)?,
    }
    Ok(stats)
}
