//! stats: levels, files, sizes, counts, compression and sequence numbers.

use std::path::Path;

use serde_json::json;

use crate::bytes::human_bytes;
use crate::open::{self, CliResult};
use crate::progress::{Progress, ProgressMode, Unit};

/// What a full pass over the tables found.
#[derive(Debug, Default)]
struct TableFigures {
    /// Entries in the tables, every version and deletion marker.
    entries: u64,
    deletions: u64,
    /// Bytes of the blocks as stored and as decompressed.
    stored_block_bytes: u64,
    raw_block_bytes: u64,
    oldest_sequence: Option<u64>,
    newest_sequence: Option<u64>,
}

pub fn stats(db_path: &Path, json: bool, fast: bool, progress: ProgressMode) -> CliResult<i32> {
    let db = open::open_read(db_path)?;
    let stats = db.stats();
    let total_files: usize = stats.levels.iter().map(|l| l.files).sum();
    let total_bytes: u64 = stats.levels.iter().map(|l| l.bytes).sum();

    // Live keys and their bytes, from a scan.
    let mut live = None;
    let mut tables = None;
    if !fast {
        let mut bar = Progress::new(progress, "scan", None, Unit::Items);
        let (mut keys, mut key_bytes, mut value_bytes) = (0u64, 0u64, 0u64);
        for item in db.iter_with(&crate::basic::verified()) {
            let (k, v) = item?;
            keys += 1;
            key_bytes += k.len() as u64;
            value_bytes += v.len() as u64;
            if keys.is_multiple_of(4096) {
                bar.set_position(keys);
            }
        }
        bar.finish();
        live = Some((keys, key_bytes, value_bytes));
        tables = Some(table_figures(db_path, progress)?);
    }
    let properties: Vec<(String, String)> = [
        "leveldb.stats",
        "leveldb.sstables",
        "leveldb.approximate-memory-usage",
    ]
    .iter()
    .filter_map(|p| db.property(p).map(|v| (p.to_string(), v)))
    .collect();

    if json {
        let levels: Vec<_> = stats
            .levels
            .iter()
            .enumerate()
            .map(|(i, l)| json!({"level": i, "files": l.files, "bytes": l.bytes}))
            .collect();
        let mut obj = json!({
            "path": db_path.display().to_string(),
            "levels": levels,
            "files": total_files,
            "table_bytes": total_bytes,
            "memtable_bytes": stats.memtable_bytes,
            "newest_sequence": stats.last_sequence,
            "properties": properties.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
        });
        if let Some((keys, kb, vb)) = live {
            obj["live_keys"] = json!(keys);
            obj["live_key_bytes"] = json!(kb);
            obj["live_value_bytes"] = json!(vb);
        }
        if let Some(t) = &tables {
            obj["table_entries"] = json!(t.entries);
            obj["table_deletions"] = json!(t.deletions);
            obj["stored_block_bytes"] = json!(t.stored_block_bytes);
            obj["raw_block_bytes"] = json!(t.raw_block_bytes);
            obj["compression_ratio"] = json!(ratio(t));
            obj["oldest_sequence"] = json!(t.oldest_sequence);
            obj["newest_table_sequence"] = json!(t.newest_sequence);
        }
        outln!("{obj}")?;
        return Ok(0);
    }

    outln!("database  {}", db_path.display())?;
    outln!()?;
    outln!("{:>5} {:>7} {:>12}", "level", "files", "size")?;
    for (i, l) in stats.levels.iter().enumerate() {
        outln!("{i:>5} {:>7} {:>12}", l.files, human_bytes(l.bytes))?;
    }
    outln!(
        "{:>5} {:>7} {:>12}",
        "total",
        total_files,
        human_bytes(total_bytes)
    )?;
    outln!()?;
    let mut rows: Vec<(&str, String)> =
        vec![("memtable", human_bytes(stats.memtable_bytes as u64))];
    if let Some((keys, kb, vb)) = live {
        rows.push(("live keys", keys.to_string()));
        rows.push(("live key bytes", human_bytes(kb)));
        rows.push(("live value bytes", human_bytes(vb)));
    }
    if let Some(t) = &tables {
        rows.push((
            "table entries",
            format!("{} ({} deletions)", t.entries, t.deletions),
        ));
        rows.push((
            "compression",
            match ratio(t) {
                Some(r) => format!(
                    "{r:.2}x ({} of blocks in {})",
                    human_bytes(t.raw_block_bytes),
                    human_bytes(t.stored_block_bytes)
                ),
                None => "-".into(),
            },
        ));
        rows.push((
            "oldest sequence",
            t.oldest_sequence.map_or("-".into(), |s| s.to_string()),
        ));
    }
    rows.push(("newest sequence", stats.last_sequence.to_string()));
    for (name, value) in rows {
        outln!("{name:<18} {value}")?;
    }
    for (name, value) in properties {
        outln!()?;
        outln!("{name}:")?;
        for line in value.lines() {
            outln!("  {line}")?;
        }
    }
    Ok(0)
}

fn ratio(t: &TableFigures) -> Option<f64> {
    (t.stored_block_bytes > 0).then(|| t.raw_block_bytes as f64 / t.stored_block_bytes as f64)
}

/// Reads every live table once.
fn table_figures(db_path: &Path, progress: ProgressMode) -> CliResult<TableFigures> {
    let tables = shale::inspect::live_tables(db_path)?;
    let total: u64 = tables.iter().map(|t| t.size).sum();
    let mut bar = Progress::new(progress, "tables", Some(total), Unit::Bytes);
    let mut f = TableFigures::default();
    for t in tables {
        let s = shale::inspect::table_summary(&t.path)?;
        f.entries += s.entries;
        f.deletions += s.deletions;
        f.stored_block_bytes += s.stored_block_bytes;
        f.raw_block_bytes += s.raw_block_bytes;
        if let Some(lo) = s.smallest_sequence {
            f.oldest_sequence = Some(f.oldest_sequence.map_or(lo, |o| o.min(lo)));
        }
        if let Some(hi) = s.largest_sequence {
            f.newest_sequence = Some(f.newest_sequence.map_or(hi, |o| o.max(hi)));
        }
        bar.inc(t.size);
    }
    bar.finish();
    Ok(f)
}
