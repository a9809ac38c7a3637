//! Appends records to a blob file (format in `format.rs`).
//!
//! After a failed write the file's length is unknown, so the writer refuses
//! further records; the write path makes such a failure sticky for the
//! database, as it does a log failure.

use std::path::{Path, PathBuf};

use crate::env::{FileSystem, WritableFile};
use crate::error::{Error, Result};
use crate::filename::blob_file_name;

use super::format::{encode_record_prefix, header, BlobPointer, HEADER_LEN};

/// Writes one blob file.
pub struct BlobWriter {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    number: u64,
    /// Bytes in the file so far (header included).
    len: u64,
    /// Scratch for a record's prefix.
    prefix: Vec<u8>,
    /// The first write error; once set, the writer refuses new records.
    failed: Option<Error>,
    /// True once a sync made every record so far durable.
    synced: bool,
}

impl BlobWriter {
    /// Creates blob file `number` in `dir` and writes its header.
    pub fn create(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<BlobWriter> {
        let path = blob_file_name(dir, number);
        let mut file = fs.new_blob_file(&path)?;
        file.append(&header())?;
        Ok(BlobWriter {
            file,
            path,
            number,
            len: HEADER_LEN as u64,
            prefix: Vec::new(),
            failed: None,
            synced: false,
        })
    }

    /// The file's number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes written so far, header included.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Appends the record of `key` and `value` (buffered: see
    /// [`BlobWriter::flush`]) and returns its pointer.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<BlobPointer> {
        self.check()?;
        encode_record_prefix(key, value, &mut self.prefix);
        let offset = self.len;
        let result = (|| {
            self.file.append(&self.prefix)?;
            self.file.append(key)?;
            self.file.append(value)
        })();
        self.note(result)?;
        let len = (self.prefix.len() + key.len() + value.len()) as u64;
        self.len += len;
        self.synced = false;
        Ok(BlobPointer {
            file: self.number,
            offset,
            len,
        })
    }

    /// Hands buffered records to the operating system, so that readers see them.
    pub fn flush(&mut self) -> Result<()> {
        self.check()?;
        let r = self.file.flush();
        self.note(r)
    }

    /// Makes every record written so far durable (a no-op when nothing
    /// was written since the last sync).
    pub fn sync(&mut self) -> Result<()> {
        self.check()?;
        if self.synced {
            return Ok(());
        }
        let r = self.file.sync();
        self.note(r)?;
        self.synced = true;
        Ok(())
    }

    /// Syncs and closes the file.
    pub fn finish(&mut self) -> Result<()> {
        self.sync()?;
        let r = self.file.close();
        self.note(r)
    }

    fn check(&self) -> Result<()> {
        match &self.failed {
            Some(e) => Err(e.duplicate()),
            None => Ok(()),
        }
    }

    fn note(&mut self, r: Result<()>) -> Result<()> {
        if let Err(e) = &r {
            self.failed = Some(e.duplicate());
        }
        r
    }
}
