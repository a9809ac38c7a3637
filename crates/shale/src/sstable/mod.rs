//! Table files (SSTables): immutable, sorted maps from keys to values, in
//! LevelDB 1.23's format byte for byte.
//!
//! A table is a run of data blocks, a filter block, a metaindex block, an
//! index block and a footer (see [`format`]). [`TableBuilder`] writes one from
//! keys in increasing order; [`Table`] opens one, keeping its index and filter
//! in memory, and reads data blocks through the optional block
//! [`Cache`](crate::sstable::cache::Cache).
//!
//! Tables made by the database hold internal keys (user key + 8-byte
//! trailer). Their filters are built over user keys: the table layer strips
//! the trailer before adding a key to the filter and before probing it, as
//! LevelDB's internal filter policy does.

pub mod block;
pub mod block_builder;
pub mod bloom;
pub(crate) mod buffers;
pub mod cache;
pub mod compression;
pub mod entries;
pub mod entry_index;
pub mod fences;
pub mod filter_block;
pub mod format;
pub mod table;
pub mod table_builder;
pub mod whole_filter;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::comparator::Comparator;
use crate::filter_policy::FilterPolicy;
use crate::sstable::cache::Cache;
use crate::sstable::format::CompressionType;

pub use table::{Table, TableIterator};
pub use table_builder::TableBuilder;

/// How a table is written and read.
#[derive(Clone)]
pub struct TableOptions {
    /// Orders the table's keys: the internal key comparator for database tables.
    pub comparator: Arc<dyn Comparator>,
    /// Builds and probes per-table filters over user keys. `None`: no filter.
    pub filter_policy: Option<Arc<dyn FilterPolicy>>,
    /// Also write a whole-table filter (`sstable/whole_filter.rs`) when the
    /// policy gives its bits per key. Read whenever present, if the policy
    /// gives them.
    pub whole_table_filter: bool,
    /// Approximate uncompressed size of a data block, in bytes.
    pub block_size: usize,
    /// Keys between restart points in data blocks.
    pub block_restart_interval: usize,
    /// How data, metaindex and index blocks are compressed.
    pub compression: CompressionType,
    /// The Zstandard level of [`CompressionType::Zstd`] blocks.
    pub zstd_compression_level: i32,
    /// Where uncompressed data blocks are cached. `None`: no caching.
    pub block_cache: Option<Arc<Cache>>,
    /// Verify every block's checksum, whatever the read asks for.
    pub paranoid_checks: bool,
}

impl TableOptions {
    #[cfg(any(test, feature = "internals"))]
    /// LevelDB's defaults (4 KiB blocks, restart interval 16, snappy), no
    /// filter and no cache, with keys ordered by `comparator`.
    pub fn new(comparator: Arc<dyn Comparator>) -> TableOptions {
        TableOptions {
            comparator,
            filter_policy: None,
            whole_table_filter: false,
            block_size: 4 << 10,
            block_restart_interval: 16,
            compression: CompressionType::Snappy,
            zstd_compression_level: 1,
            block_cache: None,
            paranoid_checks: false,
        }
    }
}

impl std::fmt::Debug for TableOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableOptions")
            .field("comparator", &self.comparator.name())
            .field(
                "filter_policy",
                &self.filter_policy.as_ref().map(|p| p.name().to_string()),
            )
            .field("block_size", &self.block_size)
            .field("block_restart_interval", &self.block_restart_interval)
            .field("compression", &self.compression)
            .field("zstd_compression_level", &self.zstd_compression_level)
            .field(
                "block_cache",
                &self.block_cache.as_ref().map(|c| c.capacity()),
            )
            .field("paranoid_checks", &self.paranoid_checks)
            .finish()
    }
}

/// The metaindex key under which a filter made by `policy` is stored.
pub(crate) fn filter_meta_key(policy: &dyn FilterPolicy) -> Vec<u8> {
    let mut key = b"filter.".to_vec();
    key.extend_from_slice(policy.name().as_bytes());
    key
}
