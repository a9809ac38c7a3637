//! # Shale
//!
//! An embedded, ordered key-value store: a log-structured merge tree that
//! reads and writes LevelDB's on-disk format.
//!
//! The layout follows the data: `log` (write-ahead log), `memtable`,
//! `sstable` (table files), `version` (the MANIFEST and the set of live files),
//! `compaction`, and `db` (the write and read paths that tie them together).
//! All file access goes through `env`.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod batch;
pub mod cache;
pub mod compaction;
pub mod comparator;
pub mod db;
pub mod env;
pub mod error;
pub mod filter_policy;
#[doc(hidden)]
pub mod fuzzing;
pub mod iterator;
pub mod keys;
pub mod log;
pub mod memtable;
pub mod options;
pub mod snapshot;
pub mod sstable;
#[cfg(test)]
pub(crate) mod testutil;
pub mod util;
pub mod version;

pub use batch::WriteBatch;
pub use cache::Cache;
pub use comparator::{BytewiseComparator, Comparator};
pub use db::{destroy, repair, Db, DbIter};
pub use error::{Error, Result};
pub use filter_policy::FilterPolicy;
pub use options::{CompressionType, Options, ReadOptions, WriteOptions};
pub use snapshot::Snapshot;
pub use sstable::bloom::BloomFilterPolicy;
