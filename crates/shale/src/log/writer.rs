//! Appends records to a log file in the block format described in
//! [`crate::log`].
//!
//! Invariant: `block_offset` is the write position inside the current block
//! (`file_len % BLOCK_SIZE`), and every fragment header fits in its block.
//! After a failed write the position in the file is unknown, so the writer
//! refuses further records (and the database refuses further writes: see
//! `db/write.rs`).

use crate::env::WritableFile;
use crate::error::{Error, Result};
use crate::util::crc;

use super::{record_type, BLOCK_SIZE, HEADER_SIZE};

/// Zeros used to fill a block tail too short for a header.
const TRAILER_ZEROS: [u8; HEADER_SIZE - 1] = [0; HEADER_SIZE - 1];

/// Writes records to a log file.
pub struct Writer {
    file: Box<dyn WritableFile>,
    /// Offset of the next write inside the current block.
    block_offset: usize,
    /// Bytes in the file, including those present before this writer.
    file_len: u64,
    /// CRC32C of each type byte, so a fragment costs a single `crc::extend`.
    type_crc: [u32; record_type::MAX as usize + 1],
    /// The first write error; once set, the writer refuses new records.
    failed: Option<Error>,
}

impl Writer {
    /// A writer for an empty file.
    pub fn new(file: Box<dyn WritableFile>) -> Writer {
        Writer::with_offset(file, 0)
    }

    /// A writer appending to a file that already holds `existing_len` bytes
    /// of log (used when an old log is reused after recovery).
    pub fn with_offset(file: Box<dyn WritableFile>, existing_len: u64) -> Writer {
        let mut type_crc = [0u32; record_type::MAX as usize + 1];
        for (t, c) in type_crc.iter_mut().enumerate() {
            *c = crc::value(&[t as u8]);
        }
        Writer {
            file,
            block_offset: (existing_len % BLOCK_SIZE as u64) as usize,
            file_len: existing_len,
            type_crc,
            failed: None,
        }
    }

    /// Appends `data` as one logical record and hands it to the operating
    /// system (a flush, not a sync: see [`Writer::sync`]).
    pub fn add_record(&mut self, data: &[u8]) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.duplicate());
        }
        let result = self.write_fragments(data).and_then(|()| self.file.flush());
        if let Err(e) = &result {
            self.failed = Some(e.duplicate());
        }
        result
    }

    fn write_fragments(&mut self, data: &[u8]) -> Result<()> {
        let mut rest = data;
        let mut begin = true;
        loop {
            let leftover = BLOCK_SIZE - self.block_offset;
            if leftover < HEADER_SIZE {
                // Too small for a header: pad the tail and start a new block.
                if leftover > 0 {
                    self.file.append(&TRAILER_ZEROS[..leftover])?;
                    self.file_len += leftover as u64;
                }
                self.block_offset = 0;
            }
            let avail = BLOCK_SIZE - self.block_offset - HEADER_SIZE;
            let fragment_len = rest.len().min(avail);
            let (fragment, tail) = rest.split_at(fragment_len);
            let end = tail.is_empty();
            let kind = match (begin, end) {
                (true, true) => record_type::FULL,
                (true, false) => record_type::FIRST,
                (false, false) => record_type::MIDDLE,
                (false, true) => record_type::LAST,
            };
            self.emit_fragment(kind, fragment)?;
            rest = tail;
            begin = false;
            if end {
                return Ok(());
            }
        }
    }

    #[inline]
    fn emit_fragment(&mut self, kind: u8, payload: &[u8]) -> Result<()> {
        debug_assert!(payload.len() <= BLOCK_SIZE - HEADER_SIZE);
        debug_assert!(self.block_offset + HEADER_SIZE + payload.len() <= BLOCK_SIZE);
        let crc = crc::mask(crc::extend(self.type_crc[kind as usize], payload));
        let mut header = [0u8; HEADER_SIZE];
        header[..4].copy_from_slice(&crc.to_le_bytes());
        // A fragment is at most BLOCK_SIZE - HEADER_SIZE bytes, so its length fits in 16 bits.
        header[4..6].copy_from_slice(&(payload.len() as u16).to_le_bytes());
        header[6] = kind;
        self.file.append(&header)?;
        self.file.append(payload)?;
        let written = HEADER_SIZE + payload.len();
        self.block_offset += written;
        self.file_len += written as u64;
        Ok(())
    }

    /// Makes everything written so far durable.
    pub fn sync(&mut self) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.duplicate());
        }
        self.file.sync()
    }

    /// Flushes and closes the file.
    pub fn close(&mut self) -> Result<()> {
        self.file.close()
    }

    #[cfg(test)]
    /// Bytes in the log file so far, including those present before this writer.
    #[inline]
    pub fn file_len(&self) -> u64 {
        self.file_len
    }
}

/// The file offset just past a record of `len` bytes whose first fragment
/// header is at `start`, laid out as [`Writer`] lays records out (block-tail
/// padding included). Recovery uses it to tell whether a log ends exactly
/// after its last record, so that appending to it is safe.
pub fn record_end(start: u64, len: usize) -> u64 {
    let block = BLOCK_SIZE as u64;
    let header = HEADER_SIZE as u64;
    let mut pos = start;
    let mut rest = len as u64;
    loop {
        let leftover = block - pos % block;
        if leftover < header {
            // The writer pads a tail too short for a header.
            pos += leftover;
        }
        // At most a block's payload, so the loop runs once per block.
        let fragment = rest.min(block - pos % block - header);
        pos += header + fragment;
        rest -= fragment;
        if rest == 0 {
            return pos;
        }
    }
}

#[cfg(test)]
mod record_end_tests {
    use super::*;
    use crate::env::{FileSystem, MemFs};
    use crate::log::Reader;
    use std::path::Path;

    #[test]
    fn record_end_matches_the_writers_layout() {
        let fs = MemFs::new();
        let path = Path::new("/log");
        let mut w = Writer::new(fs.new_writable_file(path).unwrap());
        // Lengths that end exactly at, just before and just after block
        // boundaries, leave tails too short for a header, and span blocks.
        const B: usize = BLOCK_SIZE;
        let lens = [
            B - HEADER_SIZE - 3, // ends 3 bytes before the block's end
            5,                   // so starts after 3 bytes of padding
            B - 26,              // ends with exactly a header's room left
            0,                   // a bare header filling that room
            1,
            2 * B - 29, // two fragments, again leaving a header's room
            10,         // an empty first fragment, the rest in the next block
            3 * B + 17, // four fragments
            0,
            B - HEADER_SIZE,
        ];
        let mut ends = Vec::new();
        for (i, &len) in lens.iter().enumerate() {
            w.add_record(&vec![i as u8; len]).unwrap();
            ends.push(fs.file_size(path).unwrap());
        }
        let mut r = Reader::new(
            fs.new_sequential_file(path).unwrap(),
            path.to_path_buf(),
            None,
            true,
            0,
        );
        let mut scratch = Vec::new();
        for (i, &len) in lens.iter().enumerate() {
            let got = r.read_record(&mut scratch).unwrap().map(<[u8]>::len);
            assert_eq!(got, Some(len), "record {i}");
            assert_eq!(
                record_end(r.last_record_offset(), len),
                ends[i],
                "record {i}"
            );
        }
    }
}
