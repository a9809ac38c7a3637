//! # Shale
//!
//! An embedded, ordered key-value store: a log-structured merge tree that
//! reads and writes LevelDB's on-disk format.
//!
//! The layout follows the data, in layers that point one way (see
//! `docs/architecture.md` and `tests/layering.rs`): `util` and `env` at the
//! bottom (all file access goes through `env`), the key vocabulary, `iter`
//! (the iterators that combine other iterators), `log` (write-ahead log),
//! `memtable` and `sstable` (table files), `table_cache`, `version` (the
//! MANIFEST and the set of live files), `compaction`, and `db` (the write and
//! read paths that tie them together) at the top.
//!
//! ## Quick start
//!
//! ```
//! use shale::{Db, Options, ReadOptions, WriteBatch, WriteOptions};
//!
//! # fn main() -> shale::Result<()> {
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("db");
//! let db = Db::open(&path, Options { create_if_missing: true, ..Default::default() })?;
//!
//! // Single updates, and an atomic batch made durable with fdatasync.
//! db.put(b"apple", b"red")?;
//! let mut batch = WriteBatch::new();
//! batch.put(b"banana", b"yellow")?;
//! batch.delete(b"apple")?;
//! db.write(&WriteOptions { sync: true, ..Default::default() }, &batch)?;
//! assert_eq!(db.get(b"apple")?, None);
//!
//! // A snapshot keeps seeing the database as it was.
//! let snap = db.snapshot();
//! db.put(b"cherry", b"dark red")?;
//! let old = ReadOptions { snapshot: Some(&snap), ..Default::default() };
//! assert_eq!(db.get_with(&old, b"cherry")?, None);
//!
//! // Ordered iteration over everything, a range or a prefix, both ways.
//! let mut keys = Vec::new();
//! for item in db.range("b"..) {
//!     let (key, _value) = item?;
//!     keys.push(key);
//! }
//! assert_eq!(keys, ["banana", "cherry"]);
//! assert_eq!(snap.iter().rev().next().transpose()?.map(|(k, _)| k).as_deref(), Some(&b"banana"[..]));
//!
//! // A cursor, for moving back and forth from one position.
//! let mut cursor = db.cursor(&ReadOptions::default());
//! cursor.seek(b"c");
//! assert_eq!(cursor.key(), b"cherry");
//! cursor.prev();
//! assert_eq!(cursor.key(), b"banana");
//! # Ok(()) }
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]
#![warn(rustdoc::broken_intra_doc_links)]

// The engine's modules are private: an item declared `pub` inside them is
// visible to the rest of the crate only, unless it is re-exported below (the
// public API) or by `internals` (for the crate's own tests, fuzz targets and
// benchmark). A `pub` there is what lets `internals` re-export it.
mod batch;
mod blob;
mod compaction;
mod comparator;
mod db;
pub mod env;
mod error;
mod filename;
mod filter_policy;
#[cfg(feature = "internals")]
mod fuzzing;
pub mod inspect;
mod iter;
mod keys;
mod log;
mod memtable;
mod options;
mod read_only;
mod sstable;
mod table_cache;
#[cfg(test)]
pub(crate) mod testutil;
mod util;
mod version;

pub use batch::{BatchOp, Iter as BatchIter, WriteBatch, MAX_KEY_LEN, MAX_VALUE_LEN};
pub use comparator::{BytewiseComparator, Comparator};
pub use db::snapshot::{ReadOptions, Snapshot};
pub use db::{
    destroy, repair, BulkLoader, Cursor, DamagedTable, Db, DroppedRange, IngestStats,
    IngestedTable, Iter, LevelStats, MovedFile, RepairReport, RepairedLog, RepairedTable, Stats,
};
pub use error::{Error, Result};
pub use filter_policy::FilterPolicy;
pub use options::{Options, WriteOptions};
pub use sstable::bloom::BloomFilterPolicy;
pub use sstable::cache::Cache;
pub use sstable::format::CompressionType;

/// The example of the repository's README, compiled and run as a doctest.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The engine's inner parts, for Shale's own tests, fuzz targets and
/// benchmark: not part of the public API, and free to change in any release.
///
/// It exists only with the cargo feature `internals`, off by default, so
/// that no user reaches it by accident (a `#[doc(hidden)]` module would be
/// one `use` away from every user, and its items would look like API). The
/// crate's integration tests turn the feature on through a dev-dependency
/// on the crate itself; `fuzz/` and `shale-bench` name it in their
/// dependency on `shale`.
///
/// It re-exports exactly what those users need: the log writer, version
/// edits and file names (to build damaged or hand-made databases), the
/// table, block and filter builders and internal keys (to build the fuzz
/// corpus), the fuzz target bodies, and the CRC-32C the benchmark measures.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    /// The bodies of the fuzz targets (see `fuzz/` and `tests/fuzz_corpus.rs`).
    pub mod fuzzing {
        pub use crate::fuzzing::*;
    }
    pub use crate::blob::format::{
        encode_record_prefix as blob_record_prefix, header as blob_file_header,
    };
    pub use crate::filename::{
        descriptor_file_name, parse_file_name, set_current_file, table_file_name, FileType,
    };
    pub use crate::iter::InternalIterator;
    pub use crate::keys::{InternalKey, InternalKeyComparator, ValueType, MAX_SEQUENCE_NUMBER};
    pub use crate::log::Writer as LogWriter;
    pub use crate::sstable::block_builder::BlockBuilder;
    pub use crate::sstable::filter_block::FilterBlockBuilder;
    pub use crate::sstable::whole_filter::{KeyHashes, WholeFilter, WholeFilterBuilder};
    pub use crate::sstable::{Table, TableBuilder, TableOptions};
    pub use crate::util::crc::value as crc32c;
    pub use crate::version::edit::VersionEdit;
}
