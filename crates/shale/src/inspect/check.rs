//! A read-only check of every file of a database.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::log::{decode_batch, log_records, LogEntry};
use super::manifest::{manifest_edits, read_current, replay, LiveTable};
use super::table::TableFile;
use super::{file_kind, user_key, FileKind};
use crate::error::{Error, Result};

/// Which data a damage puts at risk.
///
/// ```
/// use shale::inspect::{check, Affected};
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// drop(db);
/// // A CURRENT that names no MANIFEST puts the whole database at risk.
/// std::fs::write(dir.path().join("CURRENT"), "garbage").unwrap();
/// let report = check(dir.path())?;
/// assert_eq!(report.damage[0].affected, Affected::Database);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Affected {
    /// The user keys from `first` through `last` (an absent end is open):
    /// the entries of a damaged table or block lie in this range.
    Keys {
        /// The smallest key at risk, if known.
        first: Option<Vec<u8>>,
        /// The largest key at risk, if known.
        last: Option<Vec<u8>>,
    },
    /// Writes of a log between two sequence numbers: `after` is the last
    /// sequence number of the sound record before the damage, `before` the
    /// first of the sound record after it.
    Writes {
        /// The last sound write before the damage.
        after: Option<u64>,
        /// The first sound write after it.
        before: Option<u64>,
    },
    /// The whole database: it cannot be opened as it is (a damaged
    /// MANIFEST or CURRENT); `shale repair` rebuilds it from the tables.
    Database,
}

/// One damaged place.
///
/// ```
/// use shale::inspect::{check, FileKind};
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// drop(db);
/// std::fs::write(dir.path().join("CURRENT"), "garbage").unwrap();
/// let report = check(dir.path())?;
/// let damage = &report.damage[0];
/// assert_eq!(damage.kind, FileKind::Current);
/// assert_eq!(damage.file, dir.path().join("CURRENT"));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The file.
    pub file: PathBuf,
    /// What kind of file it is.
    pub kind: FileKind,
    /// Where in the file, when known.
    pub offset: Option<u64>,
    /// What is wrong.
    pub reason: String,
    /// What is at risk.
    pub affected: Affected,
}

/// What [`check`] found.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"k", b"v")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// let report = shale::inspect::check(dir.path())?;
/// assert!(report.damage.is_empty());
/// assert_eq!(report.tables, 1);
/// assert_eq!(report.entries, 1);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Every file read, with its size.
    pub files: Vec<(PathBuf, FileKind, u64)>,
    /// Tables read, data blocks read, entries in them.
    pub tables: u64,
    /// See `tables`.
    pub blocks: u64,
    /// See `tables`.
    pub entries: u64,
    /// Log records read.
    pub log_records: u64,
    /// Everything damaged, in the order found.
    pub damage: Vec<Damage>,
}

/// Reads every file of the database in `dir` and verifies every checksum
/// (log and MANIFEST records, table blocks), the encoding of every record,
/// edit, batch and block, the key order of every table, and that CURRENT,
/// the MANIFEST and the tables agree (every live table exists, with the
/// size and key range the MANIFEST records). Changes nothing and takes no
/// lock. `Err` only when the directory cannot be listed; damage is in the
/// report.
///
/// ```
/// use shale::inspect::{check, FileKind};
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"k", b"v")?;
/// drop(db);
/// let report = check(dir.path())?;
/// assert!(report.damage.is_empty());
/// assert!(report.files.iter().any(|(_, kind, _)| *kind == FileKind::Current));
/// # Ok(()) }
/// ```
pub fn check(dir: &Path) -> Result<CheckReport> {
    check_with(dir, &mut |_| {})
}

/// [`check`], calling `progress` with the bytes of each part read as it
/// goes (their sum is the size of the files checked).
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"k", b"v")?;
/// drop(db);
/// let mut read = 0;
/// let report = shale::inspect::check_with(dir.path(), &mut |bytes| read += bytes)?;
/// assert_eq!(read, report.files.iter().map(|(_, _, size)| size).sum::<u64>());
/// # Ok(()) }
/// ```
pub fn check_with(dir: &Path, progress: &mut dyn FnMut(u64)) -> Result<CheckReport> {
    let mut names = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        if let Some(name) = entry.file_name().to_str() {
            names.push(name.to_string());
        }
    }
    names.sort();
    let mut report = CheckReport::default();

    // CURRENT and the MANIFEST it names.
    let current = dir.join("CURRENT");
    let mut live: Option<Vec<LiveTable>> = None;
    match read_current(dir) {
        Err(e) => report.damage.push(damage(&current, e, Affected::Database)),
        Ok(name) => {
            let manifest = dir.join(&name);
            if !manifest.exists() {
                report.damage.push(Damage {
                    file: current.clone(),
                    kind: FileKind::Current,
                    offset: None,
                    reason: format!("names {name}, which does not exist"),
                    affected: Affected::Database,
                });
            } else {
                match manifest_edits(&manifest) {
                    Ok(edits) => live = Some(replay(dir, &edits)),
                    Err(e) => report.damage.push(damage(&manifest, e, Affected::Database)),
                }
            }
        }
    }
    if current.exists() {
        note(&mut report, &current, progress);
    }

    let live_by_number: BTreeMap<u64, LiveTable> = live
        .iter()
        .flatten()
        .map(|t| (t.number, t.clone()))
        .collect();
    for t in live_by_number.values() {
        if !t.path.exists() {
            report.damage.push(Damage {
                file: t.path.clone(),
                kind: FileKind::Table,
                offset: None,
                reason: format!(
                    "missing: the MANIFEST names table {} of level {}",
                    t.number, t.level
                ),
                affected: table_keys(Some(t)),
            });
        }
    }

    for name in &names {
        let path = dir.join(name);
        match file_kind(&path) {
            FileKind::Table => {
                let number = name.split('.').next().and_then(|n| n.parse::<u64>().ok());
                let meta = number.and_then(|n| live_by_number.get(&n));
                check_table(&path, meta, &mut report, progress);
            }
            FileKind::Log => check_log(&path, &mut report, progress),
            FileKind::Blob => {
                note(&mut report, &path, progress);
                if let Err(e) = super::blob_records(&path) {
                    // The values at and after the damage are lost; which
                    // keys point to them only their tables tell.
                    report.damage.push(damage(
                        &path,
                        e,
                        Affected::Keys {
                            first: None,
                            last: None,
                        },
                    ));
                }
            }
            // The current MANIFEST was read above; older ones are
            // obsolete and hold nothing the database needs.
            FileKind::Manifest => note(&mut report, &path, progress),
            _ => {}
        }
    }
    Ok(report)
}

fn note(report: &mut CheckReport, path: &Path, progress: &mut dyn FnMut(u64)) {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    report
        .files
        .push((path.to_path_buf(), file_kind(path), size));
    progress(size);
}

fn damage(path: &Path, e: Error, affected: Affected) -> Damage {
    let (file, offset, reason) = match e {
        Error::Corruption {
            file,
            offset,
            reason,
        } => (
            if file.as_os_str().is_empty() {
                path.to_path_buf()
            } else {
                file
            },
            offset,
            reason,
        ),
        other => (path.to_path_buf(), None, other.to_string()),
    };
    Damage {
        kind: file_kind(&file),
        file,
        offset,
        reason,
        affected,
    }
}

fn table_keys(meta: Option<&LiveTable>) -> Affected {
    Affected::Keys {
        first: meta.map(|m| user_key(&m.smallest).to_vec()),
        last: meta.map(|m| user_key(&m.largest).to_vec()),
    }
}

fn check_table(
    path: &Path,
    meta: Option<&LiveTable>,
    report: &mut CheckReport,
    progress: &mut dyn FnMut(u64),
) {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    report
        .files
        .push((path.to_path_buf(), FileKind::Table, size));
    report.tables += 1;
    if let Some(m) = meta {
        if m.size != size {
            report.damage.push(Damage {
                file: path.to_path_buf(),
                kind: FileKind::Table,
                offset: None,
                reason: format!("{size} bytes, but the MANIFEST records {}", m.size),
                affected: table_keys(meta),
            });
        }
    }
    let table = match TableFile::open(path) {
        Ok(t) => t,
        Err(e) => {
            report.damage.push(damage(path, e, table_keys(meta)));
            progress(size);
            return;
        }
    };
    let mut read = 0;
    let mut first_key: Option<(Vec<u8>, u64)> = None;
    let mut last_key: Option<(Vec<u8>, u64)> = None;
    for i in 0..table.index.len() {
        report.blocks += 1;
        let h = table.index[i].block;
        match table.data_block(i) {
            Ok(b) => {
                report.entries += b.entries.len() as u64;
                if let (None, Some(e)) = (&first_key, b.entries.first()) {
                    first_key = Some((e.user_key.clone(), e.sequence));
                }
                if let Some(e) = b.entries.last() {
                    last_key = Some((e.user_key.clone(), e.sequence));
                }
            }
            Err(e) => {
                let first = i
                    .checked_sub(1)
                    .map(|p| user_key(&table.index[p].key).to_vec())
                    .or_else(|| meta.map(|m| user_key(&m.smallest).to_vec()));
                let last = Some(user_key(&table.index[i].key).to_vec());
                report
                    .damage
                    .push(damage(path, e, Affected::Keys { first, last }));
            }
        }
        read += h.size + 5;
        progress(h.size + 5);
    }
    progress(size.saturating_sub(read));
    if let Some(m) = meta {
        let key = |k: &[u8]| super::split_internal_key(k).map(|p| (p.user_key, p.sequence));
        let mismatch = |what: &str| Damage {
            file: path.to_path_buf(),
            kind: FileKind::Table,
            offset: None,
            reason: format!("its {what} key differs from the one the MANIFEST records"),
            affected: table_keys(meta),
        };
        let all_read = !report.damage.iter().any(|d| d.file == path);
        if all_read && first_key.is_some() && key(&m.smallest) != first_key {
            report.damage.push(mismatch("smallest"));
        }
        if all_read && last_key.is_some() && key(&m.largest) != last_key {
            report.damage.push(mismatch("largest"));
        }
    }
}

fn check_log(path: &Path, report: &mut CheckReport, progress: &mut dyn FnMut(u64)) {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    report.files.push((path.to_path_buf(), FileKind::Log, size));
    progress(size);
    let records = match log_records(path) {
        Ok(r) => r,
        Err(e) => {
            report.damage.push(damage(
                path,
                e,
                Affected::Writes {
                    after: None,
                    before: None,
                },
            ));
            return;
        }
    };
    // Damage waiting for the first sound write after it.
    let mut open: Vec<usize> = Vec::new();
    let mut last_sequence: Option<u64> = None;
    for entry in records {
        match entry {
            Err(e) => {
                report.damage.push(damage(
                    path,
                    e,
                    Affected::Writes {
                        after: last_sequence,
                        before: None,
                    },
                ));
                break;
            }
            Ok(LogEntry::Dropped {
                offset,
                bytes,
                reason,
            }) => {
                open.push(report.damage.len());
                report.damage.push(Damage {
                    file: path.to_path_buf(),
                    kind: FileKind::Log,
                    offset,
                    reason: format!("{reason} ({bytes} bytes dropped)"),
                    affected: Affected::Writes {
                        after: last_sequence,
                        before: None,
                    },
                });
            }
            Ok(LogEntry::Record { offset, data }) => {
                report.log_records += 1;
                match decode_batch(&data) {
                    Ok(batch) => {
                        if batch.count > 0 {
                            for i in open.drain(..) {
                                if let Affected::Writes { before, .. } =
                                    &mut report.damage[i].affected
                                {
                                    *before = Some(batch.sequence);
                                }
                            }
                            last_sequence =
                                Some(batch.sequence.saturating_add(u64::from(batch.count) - 1));
                        }
                    }
                    Err(e) => {
                        open.push(report.damage.len());
                        let mut d = damage(
                            path,
                            e,
                            Affected::Writes {
                                after: last_sequence,
                                before: None,
                            },
                        );
                        d.offset = Some(offset);
                        d.reason = format!("record at {offset}: {}", d.reason);
                        report.damage.push(d);
                    }
                }
            }
        }
    }
}
