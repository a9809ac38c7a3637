//! MANIFESTs (version edits), CURRENT, and the live tables they name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::log::{log_records, LogEntry};
use super::{read_current_file, sst_table_file_name, table_file_name, VersionEdit};
use crate::env::{FileSystem, PosixFs};
use crate::error::{Error, Result};

/// A table a version edit adds.
///
/// ```
/// use shale::inspect::{manifest_edits, read_current, split_internal_key};
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"k", b"v")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// let edits = manifest_edits(&dir.path().join(read_current(dir.path())?))?;
/// let added = edits.iter().flat_map(|e| &e.new_files).next().unwrap();
/// assert_eq!(split_internal_key(&added.smallest).unwrap().user_key, b"k");
/// assert!(added.size > 0);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFile {
    /// Its level.
    pub level: u32,
    /// Its file number.
    pub number: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its smallest internal key.
    pub smallest: Vec<u8>,
    /// Its largest internal key.
    pub largest: Vec<u8>,
}

/// A version edit, one record of a MANIFEST.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// drop(db);
/// let name = shale::inspect::read_current(dir.path())?;
/// let edits = shale::inspect::manifest_edits(&dir.path().join(name))?;
/// assert!(edits.iter().any(|e| e.next_file_number.is_some()));
/// assert_eq!(edits[0].offset, 0);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EditSummary {
    /// The record's offset in the MANIFEST.
    pub offset: u64,
    /// The comparator's name.
    pub comparator: Option<String>,
    /// The log number: older logs are covered by tables.
    pub log_number: Option<u64>,
    /// The previous log number (0 since LevelDB 1.x).
    pub prev_log_number: Option<u64>,
    /// The next file number to hand out.
    pub next_file_number: Option<u64>,
    /// The last sequence number used.
    pub last_sequence: Option<u64>,
    /// Where compactions of a level resume: (level, internal key).
    pub compact_pointers: Vec<(u32, Vec<u8>)>,
    /// Tables removed: (level, number).
    pub deleted_files: Vec<(u32, u64)>,
    /// Tables added.
    pub new_files: Vec<NewFile>,
}

/// Decodes one MANIFEST record (`offset` is recorded in the summary).
/// A malformed edit is [`Error::Corruption`].
///
/// ```
/// use shale::inspect::{decode_edit, log_records, read_current, LogEntry};
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// drop(db);
/// let manifest = dir.path().join(read_current(dir.path())?);
/// for entry in log_records(&manifest)? {
///     if let LogEntry::Record { offset, data } = entry? {
///         let edit = decode_edit(&data, offset)?;
///         assert_eq!(edit.offset, offset);
///     }
/// }
/// # Ok(()) }
/// ```
pub fn decode_edit(record: &[u8], offset: u64) -> Result<EditSummary> {
    let e = VersionEdit::decode(record)?;
    Ok(EditSummary {
        offset,
        comparator: e.comparator.clone(),
        log_number: e.log_number,
        prev_log_number: e.prev_log_number,
        next_file_number: e.next_file_number,
        last_sequence: e.last_sequence,
        compact_pointers: e
            .compact_pointers
            .iter()
            .map(|(l, k)| (*l, k.encoded().to_vec()))
            .collect(),
        deleted_files: e.deleted_files.iter().copied().collect(),
        new_files: e
            .new_files
            .iter()
            .map(|(level, f)| NewFile {
                level: *level,
                number: f.number,
                size: f.file_size,
                smallest: f.smallest.encoded().to_vec(),
                largest: f.largest.encoded().to_vec(),
            })
            .collect(),
    })
}

/// Every version edit of the MANIFEST at `path`, in order. Damage (a bad
/// record checksum, a malformed edit) is [`Error::Corruption`] naming the
/// file and offset: unlike a log, a MANIFEST with a damaged record cannot
/// be trusted past it.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// drop(db);
/// let name = shale::inspect::read_current(dir.path())?;
/// let edits = shale::inspect::manifest_edits(&dir.path().join(name))?;
/// assert_eq!(edits[0].comparator.as_deref(), Some("leveldb.BytewiseComparator"));
/// # Ok(()) }
/// ```
pub fn manifest_edits(path: &Path) -> Result<Vec<EditSummary>> {
    let mut edits = Vec::new();
    for entry in log_records(path)? {
        match entry? {
            LogEntry::Record { offset, data } => edits
                .push(decode_edit(&data, offset).map_err(|e| with_file(e, path, Some(offset)))?),
            LogEntry::Dropped { offset, reason, .. } => {
                return Err(Error::corruption(path, offset, reason))
            }
        }
    }
    Ok(edits)
}

/// Puts `path` and `offset` into a corruption error that lacks them.
pub(crate) fn with_file(e: Error, path: &Path, offset: Option<u64>) -> Error {
    match e {
        Error::Corruption {
            file,
            offset: o,
            reason,
        } if file.as_os_str().is_empty() => Error::Corruption {
            file: path.to_path_buf(),
            offset: o.or(offset),
            reason,
        },
        other => other,
    }
}

/// The name of the MANIFEST that `dir/CURRENT` names. Corruption if
/// CURRENT does not end with a newline or does not name a MANIFEST.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// drop(db);
/// let name = shale::inspect::read_current(dir.path())?;
/// assert!(name.starts_with("MANIFEST-"));
/// assert!(dir.path().join(&name).exists());
/// # Ok(()) }
/// ```
pub fn read_current(dir: &Path) -> Result<String> {
    read_current_file(&PosixFs::new(), dir)
}

/// A table of the current version.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"a", b"1")?;
/// db.put(b"z", b"2")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// let table = &shale::inspect::live_tables(dir.path())?[0];
/// assert!(table.path.exists());
/// assert_eq!(table.size, std::fs::metadata(&table.path).unwrap().len());
/// assert_eq!(shale::inspect::split_internal_key(&table.largest).unwrap().user_key, b"z");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveTable {
    /// Its level.
    pub level: u32,
    /// Its file number.
    pub number: u64,
    /// Its path (`NNNNNN.ldb`, or `NNNNNN.sst` when only that exists).
    pub path: PathBuf,
    /// Its size as the MANIFEST records it.
    pub size: u64,
    /// Its smallest internal key.
    pub smallest: Vec<u8>,
    /// Its largest internal key.
    pub largest: Vec<u8>,
}

/// The tables of the current version of the database in `dir`: CURRENT's
/// MANIFEST replayed, level by level, in file-number order within a level.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// assert!(shale::inspect::live_tables(dir.path())?.is_empty());
/// db.put(b"k", b"v")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// assert_eq!(shale::inspect::live_tables(dir.path())?.len(), 1);
/// # Ok(()) }
/// ```
pub fn live_tables(dir: &Path) -> Result<Vec<LiveTable>> {
    let name = read_current(dir)?;
    let edits = manifest_edits(&dir.join(name))?;
    Ok(replay(dir, &edits))
}

/// The tables `edits` leave.
pub(crate) fn replay(dir: &Path, edits: &[EditSummary]) -> Vec<LiveTable> {
    let mut files: BTreeMap<(u32, u64), NewFile> = BTreeMap::new();
    for e in edits {
        for key in &e.deleted_files {
            files.remove(key);
        }
        for f in &e.new_files {
            files.insert((f.level, f.number), f.clone());
        }
    }
    let fs = PosixFs::new();
    files
        .into_values()
        .map(|f| {
            let ldb = table_file_name(dir, f.number);
            let sst = sst_table_file_name(dir, f.number);
            let path = if !fs.exists(&ldb) && fs.exists(&sst) {
                sst
            } else {
                ldb
            };
            LiveTable {
                level: f.level,
                number: f.number,
                path,
                size: f.size,
                smallest: f.smallest,
                largest: f.largest,
            }
        })
        .collect()
}
