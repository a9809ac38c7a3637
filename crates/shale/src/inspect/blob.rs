//! Blob files (value separation): the records of a `NNNNNN.blob` file, read
//! front to back (format in `blob/format.rs`).

use std::path::Path;

use crate::blob::format::{check_header, decode_record, HEADER_LEN};
use crate::error::{Error, Result};
use crate::util::coding::get_varint32;

/// One record of a blob file: where it is, its key and its value's length.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let options = shale::Options {
///     create_if_missing: true,
///     blob_threshold: Some(100),
///     ..Default::default()
/// };
/// let db = shale::Db::open(dir.path(), options)?;
/// db.put(b"big", &[7u8; 1000])?;
/// drop(db);
/// let blob = std::fs::read_dir(dir.path()).unwrap()
///     .map(|e| e.unwrap().path())
///     .find(|p| p.extension().is_some_and(|e| e == "blob"))
///     .unwrap();
/// let records = shale::inspect::blob_records(&blob)?;
/// assert_eq!(records[0].key, b"big");
/// assert_eq!(records[0].value_len, 1000);
/// assert_eq!(records[0].offset, 12);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobRecord {
    /// The record's offset in the file (what a blob pointer names).
    pub offset: u64,
    /// The record's length, prefix included.
    pub len: u64,
    /// The user key the value belongs to.
    pub key: Vec<u8>,
    /// The value's length.
    pub value_len: u64,
}

/// Every record of the blob file at `path`, each checked (lengths, CRC).
/// The first damage (a bad header, a record cut short or failing its CRC)
/// is [`Error::Corruption`] naming the file and the record's offset.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("000007.blob");
/// std::fs::write(&path, b"not a blob file").unwrap();
/// let e = shale::inspect::blob_records(&path).unwrap_err();
/// assert!(e.is_corruption());
/// ```
pub fn blob_records(path: &Path) -> Result<Vec<BlobRecord>> {
    let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    check_header(&data).map_err(|e| e.in_file(path, Some(0)))?;
    let mut out = Vec::new();
    let mut at = HEADER_LEN;
    while at < data.len() {
        let rest = &data[at..];
        let corrupt = |reason: String| Error::corruption(path, Some(at as u64), reason);
        let mut lengths = rest.get(4..).unwrap_or_default();
        let before = lengths.len();
        let (Some(key_len), Some(value_len)) =
            (get_varint32(&mut lengths), get_varint32(&mut lengths))
        else {
            return Err(corrupt("blob record cut short in its prefix".into()));
        };
        let prefix = 4 + before - lengths.len();
        let len = prefix as u64 + u64::from(key_len) + u64::from(value_len);
        if len > rest.len() as u64 {
            return Err(corrupt(format!(
                "blob record of {len} bytes runs past the end of the file"
            )));
        }
        let record = &rest[..len as usize];
        let (key, value) = decode_record(record).map_err(|e| e.in_file(path, Some(at as u64)))?;
        out.push(BlobRecord {
            offset: at as u64,
            len,
            key: key.to_vec(),
            value_len: value.len() as u64,
        });
        at += len as usize;
    }
    Ok(out)
}
