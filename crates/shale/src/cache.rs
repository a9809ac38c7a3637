//! The block cache: uncompressed table blocks, bounded by bytes, shareable
//! between databases. Keys are (cache id of the table, block offset).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A cache of uncompressed blocks with a capacity in bytes.
///
/// ```
/// let cache = shale::Cache::new(64 << 20);
/// let opts = shale::Options { block_cache: Some(cache.clone()), ..Default::default() };
/// assert_eq!(cache.capacity(), 64 << 20);
/// # drop(opts);
/// ```
pub struct Cache {
    capacity: usize,
    next_id: AtomicU64,
}

impl Cache {
    /// A cache holding up to `capacity` bytes of blocks.
    pub fn new(capacity: usize) -> Arc<Cache> {
        Arc::new(Cache {
            capacity,
            next_id: AtomicU64::new(1),
        })
    }

    /// The capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// A new id for a table's blocks, unique within this cache.
    pub fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
}
