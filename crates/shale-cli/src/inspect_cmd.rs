//! dump, check, repair: the commands that read files one by one.

use std::io::{BufWriter, Write};
use std::path::Path;

use serde_json::json;
use shale::inspect::{self, Affected, FileKind, LogEntry, UpdateKind};

use crate::bytes::{escape, human_bytes};
use crate::open::{self, exit, CliError, CliResult};
use crate::out::output_error;
use crate::progress::{Progress, ProgressMode, Unit};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DumpFormat {
    Text,
    Json,
}

/// Writes text or JSON lines.
struct Out {
    w: BufWriter<std::io::StdoutLock<'static>>,
    json: bool,
    /// Damage was found (and reported, or about to be): the exit code says
    /// so even if the reader of the output has gone.
    damaged: bool,
}

impl Out {
    /// Reports damage, as text or JSON.
    fn damage(&mut self, text: String, json: serde_json::Value) -> CliResult<()> {
        self.damaged = true;
        self.text(text)?;
        self.json(json)
    }
    fn text(&mut self, line: impl AsRef<str>) -> CliResult<()> {
        if !self.json {
            writeln!(self.w, "{}", line.as_ref()).map_err(output_error)?;
        }
        Ok(())
    }
    fn json(&mut self, v: serde_json::Value) -> CliResult<()> {
        if self.json {
            writeln!(self.w, "{v}").map_err(output_error)?;
        }
        Ok(())
    }
}

fn ikey(k: &[u8]) -> String {
    match inspect::split_internal_key(k) {
        Some(p) => format!(
            "'{}' @ {} : {}",
            escape(&p.user_key),
            p.sequence,
            if p.kind == 1 { "put" } else { "del" }
        ),
        None => format!("'{}' (not an internal key)", escape(k)),
    }
}

pub fn dump(file: &Path, entries: bool, format: DumpFormat) -> CliResult<i32> {
    if !file.is_file() {
        return Err(CliError::error(format!(
            "{}: no such file (dump decodes one file of a database)",
            file.display()
        )));
    }
    let mut out = Out {
        w: BufWriter::new(std::io::stdout().lock()),
        json: format == DumpFormat::Json,
        damaged: false,
    };
    let r = match inspect::file_kind(file) {
        FileKind::Log => dump_log(file, entries, &mut out),
        FileKind::Table => dump_table(file, entries, &mut out),
        FileKind::Manifest => dump_manifest(file, &mut out),
        FileKind::Current => dump_current(file, &mut out),
        FileKind::Blob => dump_blob(file, entries, &mut out),
        FileKind::InfoLog => {
            let text = std::fs::read(file).map_err(|e| open::io_error(file, e))?;
            out.text(String::from_utf8_lossy(&text))?;
            Ok(0)
        }
        _ => Err(CliError::error(format!(
            "{}: not a database file by its name (NNNNNN.log, NNNNNN.ldb, NNNNNN.sst, NNNNNN.blob, MANIFEST-NNNNNN, CURRENT)",
            file.display()
        ))),
    };
    let flushed = out.w.flush().map_err(output_error);
    with_verdict(r.and_then(|code| flushed.map(|()| code)), out.damaged)
}

/// A command's exit code when `damaged` may have been found before its
/// output was cut short: a closed pipe ends it quietly, but with the code
/// that says damage was found (`shale check ./db | head -1`).
fn with_verdict(r: CliResult<i32>, damaged: bool) -> CliResult<i32> {
    match r {
        Err(e) if e.code == 0 && damaged => Ok(exit::NEGATIVE),
        Ok(_) if damaged => Ok(exit::NEGATIVE),
        other => other,
    }
}

/// A blob file: each record's offset, length, key and value length.
fn dump_blob(file: &Path, entries: bool, out: &mut Out) -> CliResult<i32> {
    out.text(format!("blob file {}", file.display()))?;
    let (records, damaged) = match inspect::blob_records(file) {
        Ok(r) => (r, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    if let Some(e) = &damaged {
        out.text(format!("DAMAGED: {e}"))?;
        out.json(json!({"type": "damage", "reason": e.to_string()}))?;
    }
    for r in &records {
        if entries {
            out.text(format!(
                "@{} record of {} bytes: '{}' => value of {} bytes",
                r.offset,
                r.len,
                escape(&r.key),
                r.value_len
            ))?;
        }
        let mut o = json!({"type": "blob_record", "offset": r.offset, "bytes": r.len, "value_bytes": r.value_len});
        bytes_field(&mut o, "key", &r.key);
        out.json(o)?;
    }
    out.text(format!("{} records", records.len()))?;
    Ok(if damaged.is_some() { exit::NEGATIVE } else { 0 })
}

fn dump_log(file: &Path, entries: bool, out: &mut Out) -> CliResult<i32> {
    out.text(format!("log {}", file.display()))?;
    let (mut records, mut updates) = (0u64, 0u64);
    for entry in inspect::log_records(file)? {
        match entry? {
            LogEntry::Dropped {
                offset,
                bytes,
                reason,
            } => {
                let at = offset.map_or("?".into(), |o| o.to_string());
                out.damage(
                    format!("@{at} DAMAGED: {reason} ({bytes} bytes dropped)"),
                    json!({"type": "damage", "offset": offset, "bytes": bytes, "reason": reason}),
                )?;
            }
            LogEntry::Record { offset, data } => {
                records += 1;
                match inspect::decode_batch(&data) {
                    Err(e) => {
                        out.damage(
                            format!("@{offset} record of {} bytes: BAD BATCH: {e}", data.len()),
                            json!({"type": "damage", "offset": offset, "reason": e.to_string()}),
                        )?;
                    }
                    Ok(b) => {
                        updates += b.updates.len() as u64;
                        out.text(format!(
                            "@{offset} record of {} bytes: batch seq {} count {}",
                            data.len(),
                            b.sequence,
                            b.count
                        ))?;
                        let mut ups = Vec::new();
                        for (i, u) in b.updates.iter().enumerate() {
                            let seq = b.sequence + i as u64;
                            if entries {
                                match u.kind {
                                    UpdateKind::Put => out.text(format!(
                                        "  put '{}' => '{}' @ {seq}",
                                        escape(&u.key),
                                        escape(&u.value)
                                    ))?,
                                    UpdateKind::Delete => {
                                        out.text(format!("  del '{}' @ {seq}", escape(&u.key)))?
                                    }
                                    UpdateKind::PutBlob => out.text(format!(
                                        "  put '{}' => blob pointer '{}' @ {seq}",
                                        escape(&u.key),
                                        escape(&u.value)
                                    ))?,
                                }
                            }
                            if out.json && entries {
                                let op = match u.kind {
                                    UpdateKind::Put => "put",
                                    UpdateKind::PutBlob => "put_blob",
                                    UpdateKind::Delete => "delete",
                                };
                                let mut o = json!({"op": op, "sequence": seq});
                                bytes_field(&mut o, "key", &u.key);
                                if u.kind != UpdateKind::Delete {
                                    bytes_field(&mut o, "value", &u.value);
                                }
                                ups.push(o);
                            }
                        }
                        let mut o = json!({"type": "batch", "offset": offset, "bytes": data.len(), "sequence": b.sequence, "count": b.count});
                        if entries {
                            o["updates"] = json!(ups);
                        }
                        out.json(o)?;
                    }
                }
            }
        }
    }
    out.text(format!("{records} records, {updates} updates"))?;
    Ok(0)
}

fn bytes_field(o: &mut serde_json::Value, name: &str, b: &[u8]) {
    match std::str::from_utf8(b) {
        Ok(s) => o[name] = json!(s),
        Err(_) => o[format!("{name}_hex")] = json!(crate::bytes::to_hex(b)),
    }
}

fn dump_table(file: &Path, entries: bool, out: &mut Out) -> CliResult<i32> {
    let t = inspect::TableFile::open(file)?;
    out.text(format!("table {} ({} bytes)", file.display(), t.size))?;
    out.text(format!(
        "footer: metaindex @{} size {}, index @{} size {}",
        t.metaindex.offset, t.metaindex.size, t.index_block.offset, t.index_block.size
    ))?;
    out.json(json!({"type": "footer", "size": t.size,
        "metaindex": {"offset": t.metaindex.offset, "size": t.metaindex.size},
        "index": {"offset": t.index_block.offset, "size": t.index_block.size}}))?;
    out.text(format!("metaindex: {} entries", t.meta.len()))?;
    for m in &t.meta {
        out.text(format!(
            "  {} => @{} size {}",
            m.name, m.block.offset, m.block.size
        ))?;
        out.json(
            json!({"type": "meta", "name": m.name, "offset": m.block.offset, "size": m.block.size}),
        )?;
    }
    match &t.filter {
        Some(f) => {
            out.text(format!(
                "filter: {} @{} size {}, {} filters, one per {} bytes of data",
                f.policy,
                f.block.offset,
                f.block.size,
                f.filters,
                1u64 << f.base_lg.min(63)
            ))?;
            out.json(json!({"type": "filter", "policy": f.policy, "offset": f.block.offset, "size": f.block.size, "filters": f.filters, "base_lg": f.base_lg}))?;
        }
        None => out.text("filter: none")?,
    }
    out.text(format!("index: {} data blocks", t.index.len()))?;
    for e in &t.index {
        out.text(format!(
            "  {} => @{} size {}",
            ikey(&e.key),
            e.block.offset,
            e.block.size
        ))?;
        if out.json {
            let mut o = json!({"type": "index", "offset": e.block.offset, "size": e.block.size});
            internal_fields(&mut o, &e.key);
            out.json(o)?;
        }
    }
    let mut n = 0u64;
    for i in 0..t.index.len() {
        let h = t.index[i].block;
        match t.data_block(i) {
            Err(e) => {
                out.damage(
                    format!("data block {i} @{}: DAMAGED: {e}", h.offset),
                    json!({"type": "damage", "block": i, "offset": h.offset, "reason": e.to_string()}),
                )?;
            }
            Ok(b) => {
                n += b.entries.len() as u64;
                out.text(format!(
                    "data block {i} @{} size {} ({}, {} bytes raw), {} entries, {} restarts",
                    h.offset,
                    h.size,
                    crate::open::compression_name(b.compression),
                    b.raw_size,
                    b.entries.len(),
                    b.restarts
                ))?;
                out.json(json!({"type": "block", "block": i, "offset": h.offset, "size": h.size, "compression": b.compression, "raw_size": b.raw_size, "entries": b.entries.len(), "restarts": b.restarts}))?;
                if entries {
                    for e in &b.entries {
                        let kind = match e.kind {
                            Some(1) => "put",
                            Some(0) => "del",
                            _ => "?",
                        };
                        out.text(format!(
                            "  '{}' @ {} : {kind} => '{}'",
                            escape(&e.user_key),
                            e.sequence,
                            escape(&e.value)
                        ))?;
                        if out.json {
                            let mut o = json!({"type": "entry", "block": i, "sequence": e.sequence, "kind": kind});
                            bytes_field(&mut o, "key", &e.user_key);
                            bytes_field(&mut o, "value", &e.value);
                            out.json(o)?;
                        }
                    }
                }
            }
        }
    }
    out.text(format!("{n} entries in {} data blocks", t.index.len()))?;
    Ok(0)
}

fn internal_fields(o: &mut serde_json::Value, k: &[u8]) {
    match inspect::split_internal_key(k) {
        Some(p) => {
            bytes_field(o, "key", &p.user_key);
            o["sequence"] = json!(p.sequence);
            o["kind"] = json!(if p.kind == 1 { "put" } else { "del" });
        }
        None => bytes_field(o, "key", k),
    }
}

fn dump_manifest(file: &Path, out: &mut Out) -> CliResult<i32> {
    out.text(format!("manifest {}", file.display()))?;
    let edits = inspect::manifest_edits(file)?;
    for e in &edits {
        out.text(format!("@{} version edit:", e.offset))?;
        if let Some(c) = &e.comparator {
            out.text(format!("  comparator: {c}"))?;
        }
        if let Some(n) = e.log_number {
            out.text(format!("  log number: {n}"))?;
        }
        if let Some(n) = e.prev_log_number {
            out.text(format!("  previous log number: {n}"))?;
        }
        if let Some(n) = e.next_file_number {
            out.text(format!("  next file number: {n}"))?;
        }
        if let Some(n) = e.last_sequence {
            out.text(format!("  last sequence: {n}"))?;
        }
        for (level, k) in &e.compact_pointers {
            out.text(format!("  compact pointer level {level}: {}", ikey(k)))?;
        }
        for (level, n) in &e.deleted_files {
            out.text(format!("  remove file {n} from level {level}"))?;
        }
        for f in &e.new_files {
            out.text(format!(
                "  add file {} to level {}: {} bytes, {} .. {}",
                f.number,
                f.level,
                f.size,
                ikey(&f.smallest),
                ikey(&f.largest)
            ))?;
        }
        if out.json {
            let files: Vec<_> = e
                .new_files
                .iter()
                .map(|f| {
                    let mut s = json!({});
                    internal_fields(&mut s, &f.smallest);
                    let mut l = json!({});
                    internal_fields(&mut l, &f.largest);
                    json!({"level": f.level, "number": f.number, "size": f.size, "smallest": s, "largest": l})
                })
                .collect();
            out.json(
                json!({"type": "edit", "offset": e.offset, "comparator": e.comparator,
                "log_number": e.log_number, "prev_log_number": e.prev_log_number,
                "next_file_number": e.next_file_number, "last_sequence": e.last_sequence,
                "deleted_files": e.deleted_files, "new_files": files}),
            )?;
        }
    }
    out.text(format!("{} version edits", edits.len()))?;
    Ok(0)
}

fn dump_current(file: &Path, out: &mut Out) -> CliResult<i32> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let name = inspect::read_current(dir)?;
    let exists = dir.join(&name).is_file();
    out.text(format!(
        "CURRENT names {name}{}",
        if exists { "" } else { " (MISSING)" }
    ))?;
    out.json(json!({"type": "current", "manifest": name, "exists": exists}))?;
    if !exists {
        return Err(CliError::error(format!(
            "{}: names {name}, which does not exist",
            file.display()
        )));
    }
    Ok(0)
}

fn describe(a: &Affected) -> String {
    match a {
        Affected::Keys {
            first: None,
            last: None,
        } => "keys: unknown".into(),
        Affected::Keys { first, last } => format!(
            "keys: from {} through {}",
            first
                .as_deref()
                .map_or("the start".into(), |k| format!("'{}'", escape(k))),
            last.as_deref()
                .map_or("the end".into(), |k| format!("'{}'", escape(k)))
        ),
        Affected::Writes { after, before } => format!(
            "writes: {} and {} are lost",
            after.map_or("from the start of the log".into(), |s| format!(
                "after sequence {s}"
            )),
            before.map_or("up to the end of the log".into(), |s| format!(
                "before sequence {s}"
            ))
        ),
        Affected::Database => {
            "the whole database: it cannot be opened as it is (`shale repair` rebuilds it)".into()
        }
        _ => "unknown".into(),
    }
}

fn affected_json(a: &Affected) -> serde_json::Value {
    let key = |k: &Option<Vec<u8>>| k.as_deref().map(escape);
    match a {
        Affected::Keys { first, last } => json!({"keys": {"first": key(first), "last": key(last)}}),
        Affected::Writes { after, before } => {
            json!({"writes": {"after_sequence": after, "before_sequence": before}})
        }
        Affected::Database => json!("database"),
        _ => json!(null),
    }
}

pub fn check(db: &Path, json_out: bool, progress: ProgressMode) -> CliResult<i32> {
    if !db.is_dir() {
        return Err(CliError::error(format!(
            "{}: no such directory",
            db.display()
        )));
    }
    let total: u64 = std::fs::read_dir(db)
        .map_err(|e| open::io_error(db, e))?
        .filter_map(|e| e.ok())
        .filter(|e| {
            matches!(
                inspect::file_kind(&e.path()),
                FileKind::Log
                    | FileKind::Table
                    | FileKind::Manifest
                    | FileKind::Current
                    | FileKind::Blob
            )
        })
        .filter_map(|e| e.metadata().ok().map(|m| m.len()))
        .sum();
    let mut bar = Progress::new(progress, "check", Some(total), Unit::Bytes);
    let report = inspect::check_with(db, &mut |n| bar.inc(n))?;
    bar.finish();
    let sound = report.damage.is_empty();
    with_verdict(print_check(&report, json_out).map(|()| 0), !sound)
}

/// Prints what `check` found.
fn print_check(report: &inspect::CheckReport, json_out: bool) -> CliResult<()> {
    let sound = report.damage.is_empty();
    if json_out {
        let damage: Vec<_> = report
            .damage
            .iter()
            .map(|d| {
                json!({"file": d.file.display().to_string(), "kind": format!("{:?}", d.kind),
                    "offset": d.offset, "reason": d.reason, "affected": affected_json(&d.affected)})
            })
            .collect();
        outln!(
            "{}",
            json!({"ok": sound, "files": report.files.len(), "tables": report.tables,
                "blocks": report.blocks, "entries": report.entries,
                "log_records": report.log_records, "damage": damage})
        )?;
    } else {
        for d in &report.damage {
            let at = d
                .offset
                .map_or(String::new(), |o| format!(" at offset {o}"));
            outln!(
                "DAMAGED {} ({:?}){at}: {}\n    affects {}",
                d.file.display(),
                d.kind,
                d.reason,
                describe(&d.affected)
            )?;
        }
        let bytes: u64 = report.files.iter().map(|f| f.2).sum();
        outln!(
            "checked {} files ({}): {} tables, {} blocks, {} entries, {} log records: {}",
            report.files.len(),
            human_bytes(bytes),
            report.tables,
            report.blocks,
            report.entries,
            report.log_records,
            if sound {
                "no damage found".to_string()
            } else {
                format!("{} damaged places", report.damage.len())
            }
        )?;
    }
    Ok(())
}

/// "1 thing" or "N things".
fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub fn repair(db: &Path, progress: ProgressMode) -> CliResult<i32> {
    if !db.is_dir() {
        return Err(CliError::error(format!(
            "{}: no such directory",
            db.display()
        )));
    }
    let report =
        shale::repair(db, &shale::Options::default()).map_err(|e| open::open_error(db, e))?;

    outln!("repaired {}", db.display())?;
    for log in &report.logs {
        match log.table {
            Some(n) => outln!(
                "  log {}: {} ({}) recovered into table {n:06}.ldb",
                log.file.display(),
                plural(log.batches, "batch", "batches"),
                plural(log.entries, "update", "updates"),
            )?,
            None => outln!("  log {}: no updates recovered", log.file.display())?,
        }
    }
    for t in &report.damaged_tables {
        outln!(
            "  table {} could not be read whole ({}): {} salvaged",
            t.file.display(),
            t.reason,
            plural(t.entries_salvaged, "entry", "entries"),
        )?;
    }
    let mut dropped = 0;
    for d in report.dropped() {
        dropped += 1;
        outln!(
            "  dropped: {} at offset {}: {} ({})",
            d.file.display(),
            d.offset,
            d.reason,
            plural(d.len, "byte", "bytes"),
        )?;
    }
    if dropped == 0 {
        outln!("  dropped nothing")?;
    }
    for m in &report.moved_to_lost {
        outln!("  moved to {}: {}", m.to.display(), m.reason)?;
    }
    let manifest = report.manifest.file_name().map_or_else(
        || report.manifest.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    outln!(
        "  recovered: {} ({}, {}) in the new {manifest}",
        plural(report.tables.len() as u64, "table", "tables"),
        human_bytes(report.bytes()),
        plural(report.entries(), "entry", "entries"),
    )?;
    if report.compacted {
        outln!(
            "  compacted: a table overlapped a lower-numbered one with newer updates; \
             merged by sequence number, so every key reads its newest version"
        )?;
    }
    let d = open::open_read(db)?;
    let mut bar = Progress::new(progress, "count", None, Unit::Items);
    let mut n = 0u64;
    for item in d.iter_with(&crate::basic::verified()) {
        if item.is_err() {
            break;
        }
        n += 1;
        if n.is_multiple_of(4096) {
            bar.set_position(n);
        }
    }
    bar.finish();
    outln!("  {n} keys readable")?;
    Ok(0)
}
