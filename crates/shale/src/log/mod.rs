//! The write-ahead log format (LevelDB's `log_format`).
//!
//! A log is a sequence of 32 KiB blocks. Each logical record is cut into one
//! or more fragments; a fragment never crosses a block boundary and starts
//! with a 7-byte header:
//!
//! ```text
//! +----------------+-----------------+--------+-------------------+
//! | masked crc32c  | length (LE u16) |  type  | payload (length)  |
//! |    4 bytes     |     2 bytes     | 1 byte |                   |
//! +----------------+-----------------+--------+-------------------+
//! ```
//!
//! The checksum covers the type byte followed by the payload. A record that
//! fits in the rest of its block is one `FULL` fragment; otherwise it is a
//! `FIRST`, any number of `MIDDLE` and a `LAST` fragment. When fewer than 7
//! bytes remain in a block they are filled with zeros and the next fragment
//! starts in the next block. Type 0 marks preallocated (zero-filled) regions.

pub mod reader;
pub mod writer;

pub use reader::{Reader, Reporter};
pub use writer::Writer;

/// Size of a log block in bytes.
pub const BLOCK_SIZE: usize = 32768;

/// Size of a fragment header: checksum (4), length (2), type (1).
pub const HEADER_SIZE: usize = 4 + 2 + 1;

/// Fragment types, as stored in the header's type byte.
pub mod record_type {
    /// Reserved for preallocated, zero-filled file regions.
    pub const ZERO: u8 = 0;
    /// A whole record.
    pub const FULL: u8 = 1;
    /// The first fragment of a record.
    pub const FIRST: u8 = 2;
    /// An inner fragment of a record.
    pub const MIDDLE: u8 = 3;
    /// The last fragment of a record.
    pub const LAST: u8 = 4;
    /// The largest valid type.
    pub const MAX: u8 = LAST;
}

#[cfg(test)]
mod tests;
