//! Decoding single database files, for tools that show or check them
//! (`shale dump`, `shale check`): write-ahead logs and their write
//! batches, tables (footer, metaindex, filter, index, data blocks and
//! entries), blob files (value separation), MANIFESTs (version edits) and
//! CURRENT.
//!
//! Everything here only reads, takes no lock and trusts no byte: damage is
//! reported as [`Error::Corruption`](crate::Error::Corruption) naming the file and the offset, or
//! listed in a [`CheckReport`], never a panic. Keys of tables are taken as
//! LevelDB's internal keys (user key, then 7 bytes of sequence number and
//! one of type) ordered by the bytewise comparator, LevelDB's default.
//!
//! ```
//! use shale::inspect::{self, FileKind};
//! use shale::{Db, Options};
//!
//! # fn main() -> shale::Result<()> {
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("db");
//! let db = Db::open(&path, Options { create_if_missing: true, ..Default::default() })?;
//! db.put(b"apple", b"red")?;
//! db.compact_range(None, None)?;
//! drop(db);
//!
//! // The live tables, as the MANIFEST names them, and their entries.
//! let tables = inspect::live_tables(&path)?;
//! assert_eq!(tables.len(), 1);
//! assert_eq!(inspect::file_kind(&tables[0].path), FileKind::Table);
//! let table = inspect::TableFile::open(&tables[0].path)?;
//! let block = table.data_block(0)?;
//! assert_eq!(block.entries[0].user_key, b"apple");
//!
//! // A whole-database check.
//! let report = inspect::check(&path)?;
//! assert!(report.damage.is_empty());
//! # Ok(()) }
//! ```

mod blob;
mod check;
mod log;
mod manifest;
mod table;

use std::path::Path;

pub use self::blob::{blob_records, BlobRecord};
pub use self::check::{check, check_with, Affected, CheckReport, Damage};
pub use self::log::{decode_batch, log_records, Batch, LogEntry, LogRecords, Update, UpdateKind};
pub use self::manifest::{
    decode_edit, live_tables, manifest_edits, read_current, EditSummary, LiveTable, NewFile,
};
pub use self::table::{
    table_summary, BlockRef, DataBlock, FilterInfo, IndexEntry, MetaEntry, TableEntry, TableFile,
    TableSummary,
};

// The engine's own decoders and encodings this module builds on, named in
// one place.
use crate::filename::{
    parse_file_name, read_current_file, sst_table_file_name, table_file_name, FileType,
};
use crate::keys::parse_internal_key;
use crate::log::Reader as EngineLogReader;
use crate::util::coding::{decode_fixed32, get_varint32, get_varint64};
use crate::util::crc;
use crate::version::edit::VersionEdit;

/// What a database file is, by its name.
///
/// ```
/// use shale::inspect::{file_kind, FileKind};
/// assert_eq!(file_kind("db/CURRENT".as_ref()), FileKind::Current);
/// assert_eq!(file_kind("db/000003.log".as_ref()), FileKind::Log);
/// assert_eq!(file_kind("db/LOG.old".as_ref()), FileKind::InfoLog);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// A write-ahead log, `NNNNNN.log`.
    Log,
    /// A table, `NNNNNN.ldb` or `NNNNNN.sst`.
    Table,
    /// A MANIFEST, `MANIFEST-NNNNNN`.
    Manifest,
    /// `CURRENT`, the name of the current MANIFEST.
    Current,
    /// `LOCK`.
    Lock,
    /// The human-readable `LOG` or `LOG.old`.
    InfoLog,
    /// A temporary file, `NNNNNN.dbtmp`.
    Temp,
    /// A blob file of separated values, `NNNNNN.blob`.
    Blob,
    /// Anything else.
    Unknown,
}

/// What the file at `path` is, from its name.
///
/// ```
/// use shale::inspect::{file_kind, FileKind};
/// assert_eq!(file_kind("db/000005.ldb".as_ref()), FileKind::Table);
/// assert_eq!(file_kind("db/MANIFEST-000002".as_ref()), FileKind::Manifest);
/// assert_eq!(file_kind("notes.txt".as_ref()), FileKind::Unknown);
/// ```
pub fn file_kind(path: &Path) -> FileKind {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return FileKind::Unknown;
    };
    match parse_file_name(name) {
        Some((_, FileType::Log)) => FileKind::Log,
        Some((_, FileType::Table)) => FileKind::Table,
        Some((_, FileType::Descriptor)) => FileKind::Manifest,
        Some((_, FileType::Current)) => FileKind::Current,
        Some((_, FileType::DbLock)) => FileKind::Lock,
        Some((_, FileType::InfoLog)) => FileKind::InfoLog,
        Some((_, FileType::Temp)) => FileKind::Temp,
        Some((_, FileType::BlobFile)) => FileKind::Blob,
        _ => FileKind::Unknown,
    }
}

/// A key of a table, split into its parts.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"k", b"v")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// let table = &shale::inspect::live_tables(dir.path())?[0];
/// let parts = shale::inspect::split_internal_key(&table.smallest).unwrap();
/// assert_eq!(parts.user_key, b"k");
/// assert_eq!(parts.sequence, 1);
/// assert_eq!(parts.kind, 1);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalKeyParts {
    /// The user's key.
    pub user_key: Vec<u8>,
    /// The sequence number of the write.
    pub sequence: u64,
    /// The type byte: 1 a value, 0 a deletion.
    pub kind: u8,
}

/// Splits an internal key; `None` if it is shorter than its 8-byte trailer
/// or its type is unknown.
///
/// ```
/// use shale::inspect::split_internal_key;
/// // "k", sequence number 5, a value (type 1).
/// let mut key = b"k".to_vec();
/// key.extend_from_slice(&((5u64 << 8) | 1).to_le_bytes());
/// let parts = split_internal_key(&key).unwrap();
/// assert_eq!((&parts.user_key[..], parts.sequence, parts.kind), (&b"k"[..], 5, 1));
/// assert!(split_internal_key(b"short").is_none());
/// ```
pub fn split_internal_key(key: &[u8]) -> Option<InternalKeyParts> {
    let p = parse_internal_key(key)?;
    Some(InternalKeyParts {
        user_key: p.user_key.to_vec(),
        sequence: p.sequence,
        kind: p.value_type as u8,
    })
}

/// Orders internal keys as the database does with the bytewise
/// comparator: by user key, then newest (highest sequence) first.
fn compare_internal(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let split = |k: &[u8]| -> (Vec<u8>, u64) {
        if k.len() < 8 {
            return (k.to_vec(), 0);
        }
        let n = k.len() - 8;
        let mut tag = [0u8; 8];
        tag.copy_from_slice(&k[n..]);
        (k[..n].to_vec(), u64::from_le_bytes(tag))
    };
    let (ua, ta) = split(a);
    let (ub, tb) = split(b);
    ua.cmp(&ub).then(tb.cmp(&ta))
}

/// The user key of an internal key (the whole key if too short to have a trailer).
fn user_key(k: &[u8]) -> &[u8] {
    if k.len() >= 8 {
        &k[..k.len() - 8]
    } else {
        k
    }
}
