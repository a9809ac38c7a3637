//! # Shale
//!
//! An embedded, ordered key-value store: a log-structured merge tree that
//! reads and writes LevelDB's on-disk format.
//!
//! The layout follows the data: `log` (write-ahead log), `memtable`,
//! `sstable` (table files), `version` (the MANIFEST and the set of live files),
//! `compaction`, and `db` (the write and read paths that tie them together).
//! All file access goes through `env`.
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
//! db.write(&WriteOptions { sync: true }, &batch)?;
//! assert_eq!(db.get(b"apple")?, None);
//!
//! // A snapshot keeps seeing the database as it was.
//! let snap = db.snapshot();
//! db.put(b"cherry", b"dark red")?;
//! let old = ReadOptions { snapshot: Some(&snap), ..Default::default() };
//! assert_eq!(db.get_with(&old, b"cherry")?, None);
//!
//! // Ordered iteration, both ways.
//! let mut it = db.iter(&ReadOptions::default());
//! it.seek_to_first();
//! let mut keys = Vec::new();
//! while it.valid() {
//!     keys.push(it.key().to_vec());
//!     it.next();
//! }
//! it.status()?;
//! assert_eq!(keys, [b"banana".to_vec(), b"cherry".to_vec()]);
//! # Ok(()) }
//! ```

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
