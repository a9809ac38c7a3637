//! Reads the records of a log file written in the block format described in
//! [`crate::log`], with LevelDB's tolerance for damage:
//!
//! * A fragment with a bad checksum, an impossible length or an unknown type
//!   is reported to the [`Reporter`] with the number of bytes dropped and
//!   the physical offset, and reading resumes at the next block; inner
//!   fragments of a record whose start was lost are dropped the same way.
//! * A record cut short at the end of the file (the writer died while
//!   appending it) is not damage: the log simply ends before it.
//! * Zero-type regions (preallocated, never written) are skipped silently.
//! * With an initial offset, reading starts at the first record that begins
//!   at or after it.
//!
//! Invariants: the block buffer holds at most one block; a record assembled
//! from fragments only holds bytes read from the file, so it is never larger
//! than the file. No input makes the reader panic.

use std::fmt;
use std::path::PathBuf;

use crate::env::SequentialFile;
use crate::error::{Error, Result};
use crate::util::coding::decode_fixed32;
use crate::util::crc;

use super::{record_type, BLOCK_SIZE, HEADER_SIZE};

/// Told about every stretch of the log that was dropped: the number of bytes
/// and a [`Error::Corruption`] naming the file, the offset and the reason.
pub type Reporter = Box<dyn FnMut(u64, &Error) + Send>;

/// What one step of the physical reader produced.
enum Physical {
    /// A fragment that passed its checks: its type byte, where its payload
    /// sits in the block buffer, and the file offset of its header.
    Fragment {
        kind: u8,
        start: usize,
        len: usize,
        offset: u64,
    },
    /// The end of the log (including a torn last write).
    Eof,
    /// Something to skip: a damaged fragment (already reported) or a
    /// zero-type region.
    Skip,
    /// A sound fragment that starts before the initial offset.
    BeforeStart,
}

/// Reads the records of a log.
pub struct Reader {
    file: Box<dyn SequentialFile>,
    path: PathBuf,
    reporter: Option<Reporter>,
    checksum: bool,
    /// One block; the unread part is `block[buf_start..buf_end]`.
    block: Box<[u8]>,
    buf_start: usize,
    buf_end: usize,
    /// True once a short read showed that the file has no more blocks.
    eof: bool,
    /// File offset of the start of the last record returned.
    last_record_offset: u64,
    /// File offset just past the bytes read into `block`.
    end_of_buffer_offset: u64,
    initial_offset: u64,
    /// True until the first block that can hold the initial record is reached.
    skipped_to_initial_block: bool,
    /// True while skipping the inner fragments of a record that began before
    /// the initial offset.
    resyncing: bool,
}

impl Reader {
    /// Reads `file` (at `path`, which is only used in error reports).
    ///
    /// Dropped bytes are reported to `reporter` when given. With `checksum`
    /// every fragment's CRC is verified. Records that start before
    /// `initial_offset` are skipped.
    pub fn new(
        file: Box<dyn SequentialFile>,
        path: PathBuf,
        reporter: Option<Reporter>,
        checksum: bool,
        initial_offset: u64,
    ) -> Reader {
        Reader {
            file,
            path,
            reporter,
            checksum,
            block: vec![0u8; BLOCK_SIZE].into_boxed_slice(),
            buf_start: 0,
            buf_end: 0,
            eof: false,
            last_record_offset: 0,
            end_of_buffer_offset: 0,
            initial_offset,
            skipped_to_initial_block: initial_offset == 0,
            resyncing: initial_offset > 0,
        }
    }

    /// The file offset of the start of the record last returned by
    /// [`Reader::read_record`].
    #[inline]
    pub fn last_record_offset(&self) -> u64 {
        self.last_record_offset
    }

    /// The file offset just past the last fragment read: after
    /// [`Reader::read_record`] returns a record, the end of that record, so
    /// that `last_record_offset()..position()` are the bytes it occupies.
    #[inline]
    pub fn position(&self) -> u64 {
        self.end_of_buffer_offset
            .saturating_sub((self.buf_end - self.buf_start) as u64)
    }

    /// The next record, `None` at the end of the log.
    ///
    /// The record borrows either the reader's block buffer or `scratch`
    /// (which holds records assembled from several fragments), and is valid
    /// until the next call. Damage is reported to the reporter and skipped;
    /// only a failure to read the file is returned as an error, after which
    /// the reader is at its end.
    pub fn read_record<'a>(&'a mut self, scratch: &'a mut Vec<u8>) -> Result<Option<&'a [u8]>> {
        if !self.skipped_to_initial_block {
            self.skip_to_initial_block()?;
        }
        scratch.clear();
        let mut in_fragmented_record = false;
        // File offset of the record being assembled from fragments.
        let mut prospective_offset = 0u64;

        loop {
            let physical = self.read_physical_record()?;
            if let Physical::BeforeStart = physical {
                // Not part of what was asked for; leaves `resyncing` as it is,
                // so the rest of a record begun here is skipped silently.
                // (LevelDB ends resyncing here and reports such a record's
                // later fragments as dropped.)
                continue;
            }

            if self.resyncing {
                match physical {
                    Physical::Fragment {
                        kind: record_type::MIDDLE,
                        ..
                    } => continue,
                    Physical::Fragment {
                        kind: record_type::LAST,
                        ..
                    } => {
                        self.resyncing = false;
                        continue;
                    }
                    _ => self.resyncing = false,
                }
            }

            let (kind, start, len, offset) = match physical {
                Physical::Eof => {
                    // A record missing its last fragments at the end of the
                    // file is a torn write, not damage: drop it silently.
                    scratch.clear();
                    return Ok(None);
                }
                Physical::Skip => {
                    if in_fragmented_record {
                        self.report(
                            scratch.len() as u64,
                            prospective_offset,
                            "error in middle of record",
                        );
                        in_fragmented_record = false;
                        scratch.clear();
                    }
                    continue;
                }
                Physical::Fragment {
                    kind,
                    start,
                    len,
                    offset,
                } => (kind, start, len, offset),
                // Handled at the top of the loop.
                Physical::BeforeStart => continue,
            };

            match kind {
                record_type::FULL => {
                    // An earlier writer could leave an empty FIRST fragment at a
                    // block's tail; only a non-empty partial record is damage.
                    if in_fragmented_record && !scratch.is_empty() {
                        self.report(
                            scratch.len() as u64,
                            prospective_offset,
                            "partial record without end(1)",
                        );
                    }
                    scratch.clear();
                    self.last_record_offset = offset;
                    return Ok(Some(&self.block[start..start + len]));
                }
                record_type::FIRST => {
                    if in_fragmented_record && !scratch.is_empty() {
                        self.report(
                            scratch.len() as u64,
                            prospective_offset,
                            "partial record without end(2)",
                        );
                    }
                    prospective_offset = offset;
                    scratch.clear();
                    scratch.extend_from_slice(&self.block[start..start + len]);
                    in_fragmented_record = true;
                }
                record_type::MIDDLE => {
                    if in_fragmented_record {
                        scratch.extend_from_slice(&self.block[start..start + len]);
                    } else {
                        self.report(len as u64, offset, "missing start of fragmented record(1)");
                    }
                }
                record_type::LAST => {
                    if in_fragmented_record {
                        scratch.extend_from_slice(&self.block[start..start + len]);
                        self.last_record_offset = prospective_offset;
                        return Ok(Some(&scratch[..]));
                    }
                    self.report(len as u64, offset, "missing start of fragmented record(2)");
                }
                other => {
                    let (dropped, at) = if in_fragmented_record {
                        ((len + scratch.len()) as u64, prospective_offset)
                    } else {
                        (len as u64, offset)
                    };
                    self.report(dropped, at, format_args!("unknown record type {other}"));
                    in_fragmented_record = false;
                    scratch.clear();
                }
            }
        }
    }

    /// Positions the file at the start of the first block that can hold a
    /// record starting at or after the initial offset.
    fn skip_to_initial_block(&mut self) -> Result<()> {
        self.skipped_to_initial_block = true;
        let block_size = BLOCK_SIZE as u64;
        let offset_in_block = self.initial_offset % block_size;
        let mut block_start = self.initial_offset - offset_in_block;
        // An offset inside a block's trailer cannot start a record.
        if offset_in_block > block_size - 6 {
            block_start = block_start.saturating_add(block_size);
        }
        self.end_of_buffer_offset = block_start;
        if block_start > 0 {
            if let Err(e) = self.file.skip(block_start) {
                self.eof = true;
                return Err(e);
            }
        }
        Ok(())
    }

    /// Reads a whole block (fewer bytes only at the end of the file).
    fn fill_block(&mut self) -> Result<usize> {
        let mut n = 0;
        while n < BLOCK_SIZE {
            let got = self.file.read(&mut self.block[n..])?;
            if got == 0 {
                break;
            }
            // A misbehaving file claiming more than it was given must not
            // move us past the buffer.
            n += got.min(BLOCK_SIZE - n);
        }
        Ok(n)
    }

    fn read_physical_record(&mut self) -> Result<Physical> {
        loop {
            let available = self.buf_end - self.buf_start;
            if available < HEADER_SIZE {
                if self.eof {
                    // A partial header at the end of the file is a torn
                    // write: the log ends here.
                    self.buf_start = self.buf_end;
                    return Ok(Physical::Eof);
                }
                // The rest of the block is a trailer: read the next block.
                self.buf_start = 0;
                self.buf_end = 0;
                let n = match self.fill_block() {
                    Ok(n) => n,
                    Err(e) => {
                        self.eof = true;
                        return Err(e);
                    }
                };
                self.buf_end = n;
                self.end_of_buffer_offset += n as u64;
                if n < BLOCK_SIZE {
                    self.eof = true;
                }
                continue;
            }

            let header_pos = self.buf_start;
            let header_offset = self.end_of_buffer_offset - available as u64;
            let header = &self.block[header_pos..header_pos + HEADER_SIZE];
            let length = u16::from_le_bytes([header[4], header[5]]) as usize;
            let kind = header[6];
            let stored_crc = decode_fixed32(header).unwrap_or(0);

            if HEADER_SIZE + length > available {
                self.buf_start = self.buf_end;
                if self.eof {
                    // The file ends inside this fragment's payload: the
                    // writer died while appending it. Not damage.
                    return Ok(Physical::Eof);
                }
                self.report(available as u64, header_offset, "bad record length");
                return Ok(Physical::Skip);
            }

            if kind == record_type::ZERO && length == 0 {
                // A preallocated region: skip the rest of the block silently.
                self.buf_start = self.buf_end;
                return Ok(Physical::Skip);
            }

            if self.checksum {
                let covered =
                    &self.block[header_pos + HEADER_SIZE - 1..header_pos + HEADER_SIZE + length];
                if crc::value(covered) != crc::unmask(stored_crc) {
                    // The length may be what is damaged, so nothing after the
                    // header in this block can be trusted.
                    self.buf_start = self.buf_end;
                    self.report(available as u64, header_offset, "checksum mismatch");
                    return Ok(Physical::Skip);
                }
            }

            self.buf_start += HEADER_SIZE + length;
            if header_offset < self.initial_offset {
                return Ok(Physical::BeforeStart);
            }
            return Ok(Physical::Fragment {
                kind,
                start: header_pos + HEADER_SIZE,
                len: length,
                offset: header_offset,
            });
        }
    }

    /// Tells the reporter that `bytes` bytes starting near `offset` were dropped.
    fn report(&mut self, bytes: u64, offset: u64, reason: impl fmt::Display) {
        if offset < self.initial_offset {
            return;
        }
        if let Some(reporter) = self.reporter.as_mut() {
            let error = Error::corruption(self.path.clone(), Some(offset), reason);
            reporter(bytes, &error);
        }
    }
}
