//! Records of logs and MANIFESTs, and the write batches of logs.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::{get_varint32, EngineLogReader};
use crate::env::{FileSystem, PosixFs};
use crate::error::{Error, Result};

/// One item of a log, in file order.
///
/// ```
/// use shale::inspect::{log_records, LogEntry};
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"k", b"v")?;
/// drop(db);
/// let log = std::fs::read_dir(dir.path()).unwrap()
///     .map(|e| e.unwrap().path())
///     .find(|p| p.extension().is_some_and(|x| x == "log"))
///     .unwrap();
/// let mut records = 0;
/// for entry in log_records(&log)? {
///     match entry? {
///         LogEntry::Record { .. } => records += 1,
///         LogEntry::Dropped { reason, .. } => panic!("damage: {reason}"),
///     }
/// }
/// assert_eq!(records, 1);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEntry {
    /// A record that passed its checksums.
    Record {
        /// The file offset of its first fragment's header.
        offset: u64,
        /// Its payload (a write batch in a log, a version edit in a MANIFEST).
        data: Vec<u8>,
    },
    /// Bytes the reader dropped: a checksum mismatch, a bad length, a
    /// fragment out of place.
    Dropped {
        /// Where the damage is.
        offset: Option<u64>,
        /// How many bytes were skipped.
        bytes: u64,
        /// What is wrong.
        reason: String,
    },
}

/// The records of a log or MANIFEST, from [`log_records`].
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"a", b"1")?;
/// db.put(b"b", b"2")?;
/// drop(db);
/// let log = std::fs::read_dir(dir.path()).unwrap()
///     .map(|e| e.unwrap().path())
///     .find(|p| p.extension().is_some_and(|x| x == "log"))
///     .unwrap();
/// let entries = shale::inspect::log_records(&log)?.collect::<shale::Result<Vec<_>>>()?;
/// assert_eq!(entries.len(), 2);
/// # Ok(()) }
/// ```
pub struct LogRecords {
    reader: EngineLogReader,
    dropped: Arc<Mutex<Vec<LogEntry>>>,
    queue: VecDeque<LogEntry>,
    scratch: Vec<u8>,
    done: bool,
}

impl std::fmt::Debug for LogRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogRecords")
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

/// Reads the records of the log or MANIFEST at `path`, reporting damage
/// as [`LogEntry::Dropped`] items in place and going on after it, as
/// recovery does. A record cut short by the end of the file (a write that
/// never completed) is left out without a report. An `Err` item is a
/// failure to read the file; the iterator ends after it.
///
/// ```
/// use shale::inspect::{decode_batch, log_records, LogEntry};
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"k", b"v")?;
/// drop(db);
/// let log = std::fs::read_dir(dir.path()).unwrap()
///     .map(|e| e.unwrap().path())
///     .find(|p| p.extension().is_some_and(|x| x == "log"))
///     .unwrap();
/// for entry in log_records(&log)? {
///     if let LogEntry::Record { data, .. } = entry? {
///         let batch = decode_batch(&data)?;
///         assert_eq!(batch.updates[0].key, b"k");
///     }
/// }
/// # Ok(()) }
/// ```
pub fn log_records(path: &Path) -> Result<LogRecords> {
    let file = PosixFs::new().new_sequential_file(path)?;
    let dropped: Arc<Mutex<Vec<LogEntry>>> = Arc::default();
    let sink = dropped.clone();
    let reporter: crate::log::Reporter = Box::new(move |bytes, error: &Error| {
        let (offset, reason) = match error {
            Error::Corruption { offset, reason, .. } => (*offset, reason.clone()),
            other => (None, other.to_string()),
        };
        sink.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(LogEntry::Dropped {
                offset,
                bytes,
                reason,
            });
    });
    Ok(LogRecords {
        reader: EngineLogReader::new(file, PathBuf::from(path), Some(reporter), true, 0),
        dropped,
        queue: VecDeque::new(),
        scratch: Vec::new(),
        done: false,
    })
}

impl Iterator for LogRecords {
    type Item = Result<LogEntry>;

    fn next(&mut self) -> Option<Result<LogEntry>> {
        if let Some(e) = self.queue.pop_front() {
            return Some(Ok(e));
        }
        if self.done {
            return None;
        }
        let read = self.reader.read_record(&mut self.scratch);
        let record = match read {
            Ok(Some(data)) => Some(data.to_vec()),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        let offset = self.reader.last_record_offset();
        self.queue.extend(
            self.dropped
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .drain(..),
        );
        if let Some(data) = record {
            self.queue.push_back(LogEntry::Record { offset, data });
        }
        self.queue.pop_front().map(Ok)
    }
}

/// A write batch, decoded from a log record by [`decode_batch`].
///
/// ```
/// use shale::inspect::{decode_batch, log_records, LogEntry};
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// let mut batch = shale::WriteBatch::new();
/// batch.put(b"a", b"1")?;
/// batch.delete(b"b")?;
/// db.write(&shale::WriteOptions::default(), &batch)?;
/// drop(db);
/// let log = std::fs::read_dir(dir.path()).unwrap()
///     .map(|e| e.unwrap().path())
///     .find(|p| p.extension().is_some_and(|x| x == "log"))
///     .unwrap();
/// for entry in log_records(&log)? {
///     if let LogEntry::Record { data, .. } = entry? {
///         let batch = decode_batch(&data)?;
///         assert_eq!(batch.count, 2);
///         assert_eq!(batch.sequence, 1);
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// The sequence number of its first update.
    pub sequence: u64,
    /// The count its header claims.
    pub count: u32,
    /// Its updates, in order.
    pub updates: Vec<Update>,
}

/// What an update does.
///
/// ```
/// use shale::inspect::{decode_batch, UpdateKind};
/// # fn main() -> shale::Result<()> {
/// // Sequence number 7, two updates: put "k" = "v", delete "old".
/// let mut record = Vec::new();
/// record.extend_from_slice(&7u64.to_le_bytes());
/// record.extend_from_slice(&2u32.to_le_bytes());
/// record.extend_from_slice(&[1, 1, b'k', 1, b'v']);
/// record.extend_from_slice(&[0, 3, b'o', b'l', b'd']);
/// let kinds: Vec<UpdateKind> = decode_batch(&record)?.updates.iter().map(|u| u.kind).collect();
/// assert_eq!(kinds, [UpdateKind::Put, UpdateKind::Delete]);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateKind {
    /// Sets the key to the value.
    Put,
    /// Removes the key.
    Delete,
    /// Sets the key to the value in a blob file that the update's value,
    /// a blob pointer, addresses (value separation; Shale's own tag 0x11).
    PutBlob,
}

/// One update of a [`Batch`].
///
/// ```
/// use shale::inspect::{decode_batch, UpdateKind};
/// # fn main() -> shale::Result<()> {
/// // Sequence number 7, two updates: put "k" = "v", delete "old".
/// let mut record = Vec::new();
/// record.extend_from_slice(&7u64.to_le_bytes());
/// record.extend_from_slice(&2u32.to_le_bytes());
/// record.extend_from_slice(&[1, 1, b'k', 1, b'v']);
/// record.extend_from_slice(&[0, 3, b'o', b'l', b'd']);
/// let batch = decode_batch(&record)?;
/// let put = &batch.updates[0];
/// assert_eq!((put.kind, &put.key[..], &put.value[..]), (UpdateKind::Put, &b"k"[..], &b"v"[..]));
/// assert!(batch.updates[1].value.is_empty());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// Put or delete.
    pub kind: UpdateKind,
    /// The key.
    pub key: Vec<u8>,
    /// The value (empty for a delete).
    pub value: Vec<u8>,
}

/// Decodes a log record as a write batch: a 12-byte header (sequence
/// number, count) and tagged updates. A malformed batch, an unknown tag or
/// a count that does not match the updates is [`Error::Corruption`] naming
/// the byte.
///
/// ```
/// use shale::inspect::decode_batch;
/// # fn main() -> shale::Result<()> {
/// // Sequence number 7, two updates: put "k" = "v", delete "old".
/// let mut record = Vec::new();
/// record.extend_from_slice(&7u64.to_le_bytes());
/// record.extend_from_slice(&2u32.to_le_bytes());
/// record.extend_from_slice(&[1, 1, b'k', 1, b'v']);
/// record.extend_from_slice(&[0, 3, b'o', b'l', b'd']);
/// let batch = decode_batch(&record)?;
/// assert_eq!(batch.sequence, 7);
/// assert_eq!(batch.updates.len(), 2);
/// assert_eq!(batch.updates[1].key, b"old");
/// // A count that does not match the updates is corruption.
/// record[8] = 3;
/// assert!(decode_batch(&record).unwrap_err().is_corruption());
/// # Ok(()) }
/// ```
pub fn decode_batch(record: &[u8]) -> Result<Batch> {
    if record.len() < 12 {
        return Err(Error::bad_data(format!(
            "write batch of {} bytes is too small for its 12-byte header",
            record.len()
        )));
    }
    let sequence = u64::from_le_bytes(record[..8].try_into().unwrap_or([0; 8]));
    let count = u32::from_le_bytes(record[8..12].try_into().unwrap_or([0; 4]));
    let mut input = &record[12..];
    let mut updates = Vec::new();
    let slice = |input: &mut &[u8]| -> Option<Vec<u8>> {
        let n = get_varint32(input)? as usize;
        let s = input.get(..n)?.to_vec();
        *input = &input[n..];
        Some(s)
    };
    while let Some((&tag, rest)) = input.split_first() {
        let at = record.len() - input.len();
        input = rest;
        let bad = |what: &str| Error::bad_data(format!("bad {what} in write batch at byte {at}"));
        match tag {
            1 => {
                let key = slice(&mut input).ok_or_else(|| bad("put"))?;
                let value = slice(&mut input).ok_or_else(|| bad("put"))?;
                updates.push(Update {
                    kind: UpdateKind::Put,
                    key,
                    value,
                });
            }
            0x11 => {
                let key = slice(&mut input).ok_or_else(|| bad("blob put"))?;
                let value = slice(&mut input).ok_or_else(|| bad("blob put"))?;
                updates.push(Update {
                    kind: UpdateKind::PutBlob,
                    key,
                    value,
                });
            }
            0 => {
                let key = slice(&mut input).ok_or_else(|| bad("delete"))?;
                updates.push(Update {
                    kind: UpdateKind::Delete,
                    key,
                    value: Vec::new(),
                });
            }
            t => {
                return Err(Error::bad_data(format!(
                    "unknown write batch tag {t} at byte {at}"
                )))
            }
        }
    }
    if updates.len() as u64 != u64::from(count) {
        return Err(Error::bad_data(format!(
            "write batch header counts {count} updates, but it holds {}",
            updates.len()
        )));
    }
    Ok(Batch {
        sequence,
        count,
        updates,
    })
}
