//! Blob files: values separated from the LSM tree (WiscKey-style value
//! separation, `Options::blob_threshold`).
//!
//! A value at least as long as the threshold is written once, by the write
//! path, to the blob file of the current memtable; the log, the memtable and
//! the tables hold a small blob pointer instead (an entry of type
//! `ValueType::BlobIndex`). Reads resolve the pointer through a
//! [`reader::BlobCache`]. `format` defines the file layout and the pointer,
//! `writer` appends records, `reader` reads and checks them.
//!
//! The format is Shale's own: LevelDB has no blob files, and a database that
//! uses them is marked in its MANIFEST so that LevelDB refuses to open it.

pub mod format;
pub mod reader;
pub mod writer;
