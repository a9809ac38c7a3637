//! The block cache: uncompressed table blocks, bounded by bytes, shareable
//! between tables and databases. Keys are (cache id of the table, block
//! offset); each open table takes a fresh id from [`Cache::new_id`], so the
//! blocks of a closed table are never confused with those of a new one (they
//! simply age out).
//!
//! The cache is built on the `quick_cache` crate rather than a hand-written
//! sharded LRU: it is weighted (a block is charged its size in bytes), sharded
//! (lookups take a shard's read lock only, so many reader threads do not
//! contend), and its CLOCK-Pro style policy resists scans: one long iteration
//! does not flush out the blocks that point reads keep using, which a plain
//! LRU would. Blocks are handed out as `Arc<Block>`, so an evicted block stays
//! alive for the readers still using it; the capacity bounds what the cache
//! itself holds. A block is charged its size; the entry index a block builds
//! once it serves repeated point lookups (about 12 bytes per entry, some 10%
//! of a 4 KiB block, see `sstable/entry_index.rs`) is not charged.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quick_cache::sync::{Cache as ShardedCache, DefaultLifecycle};
use quick_cache::{DefaultHashBuilder, OptionsBuilder, Weighter};

use crate::sstable::block::Block;

/// Shards of the cache (at most: small caches use fewer, so each shard can
/// hold a reasonable number of blocks).
const SHARDS: usize = 16;

/// The block size the cache is tuned for (LevelDB's default).
const TYPICAL_BLOCK_SIZE: usize = 4096;

/// Charges a block its size in bytes (at least 1: a weight of 0 would pin it).
#[derive(Clone, Copy)]
struct ByteWeighter;

impl Weighter<(u64, u64), Arc<Block>> for ByteWeighter {
    #[inline]
    fn weight(&self, _key: &(u64, u64), block: &Arc<Block>) -> u64 {
        block.size().max(1) as u64
    }
}

type Blocks = ShardedCache<
    (u64, u64),
    Arc<Block>,
    ByteWeighter,
    DefaultHashBuilder,
    DefaultLifecycle<(u64, u64), Arc<Block>>,
>;

/// A cache of uncompressed blocks with a capacity in bytes.
///
/// ```
/// let cache = shale::Cache::new(64 << 20);
/// let opts = shale::Options { block_cache: Some(cache.clone()), ..Default::default() };
/// assert_eq!(cache.capacity(), 64 << 20);
/// # drop(opts);
/// ```
pub struct Cache {
    blocks: Blocks,
    capacity: usize,
    next_id: AtomicU64,
}

impl Cache {
    /// A cache holding up to `capacity` bytes of blocks. A capacity of 0
    /// caches nothing. One cache may be shared by several databases.
    ///
    /// ```
    /// use shale::{Cache, Options};
    /// let cache = Cache::new(256 << 20);
    /// let a = Options { block_cache: Some(cache.clone()), ..Default::default() };
    /// let b = Options { block_cache: Some(cache.clone()), ..Default::default() };
    /// assert_eq!(cache.capacity(), 256 << 20);
    /// # let _ = (a, b);
    /// ```
    pub fn new(capacity: usize) -> Arc<Cache> {
        let mut options = OptionsBuilder::new();
        options
            .estimated_items_capacity((capacity / TYPICAL_BLOCK_SIZE).max(1))
            .weight_capacity(capacity as u64)
            .shards(SHARDS);
        // `build` fails only when the capacities are not set; both are.
        let options = options.build().expect("cache options are complete");
        Arc::new(Cache {
            blocks: ShardedCache::with_options(
                options,
                ByteWeighter,
                DefaultHashBuilder::default(),
                DefaultLifecycle::default(),
            ),
            capacity,
            next_id: AtomicU64::new(1),
        })
    }

    /// The capacity in bytes.
    ///
    /// ```
    /// let cache = shale::Cache::new(1 << 20);
    /// assert_eq!(cache.capacity(), 1 << 20);
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// A new id for a table's blocks, unique within this cache.
    pub(crate) fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The block at `offset` of the table with cache id `id`, if cached.
    #[inline]
    pub(crate) fn get(&self, id: u64, offset: u64) -> Option<Arc<Block>> {
        self.blocks.get(&(id, offset))
    }

    /// Caches `block` as the block at `offset` of table `id`, evicting others
    /// to stay within capacity. A block larger than a shard's share of the
    /// capacity is not kept.
    pub(crate) fn insert(&self, id: u64, offset: u64, block: Arc<Block>) {
        self.blocks.insert((id, offset), block);
    }

    /// Drops the block at `offset` of table `id` from the cache.
    #[cfg(test)]
    pub(crate) fn erase(&self, id: u64, offset: u64) {
        self.blocks.remove(&(id, offset));
    }

    /// Bytes of blocks held now.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let cache = shale::Cache::new(8 << 20);
    /// let options = shale::Options { create_if_missing: true, block_cache: Some(cache.clone()), ..Default::default() };
    /// let db = shale::Db::open(dir.path(), options)?;
    /// // Uncompressed blocks of a memory-mapped table are read in place, not
    /// // cached; this value compresses, so its block is cached.
    /// db.put(b"k", &[b'x'; 4096])?;
    /// db.compact_range(None, None)?;
    /// db.get(b"k")?;
    /// assert!(cache.usage() > 0);
    /// assert!(cache.usage() <= cache.capacity());
    /// # Ok(()) }
    /// ```
    pub fn usage(&self) -> usize {
        self.blocks.weight() as usize
    }

    /// Blocks held now.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let cache = shale::Cache::new(8 << 20);
    /// let options = shale::Options { create_if_missing: true, block_cache: Some(cache.clone()), ..Default::default() };
    /// let db = shale::Db::open(dir.path(), options)?;
    /// // Uncompressed blocks of a memory-mapped table are read in place, not
    /// // cached; this value compresses, so its block is cached.
    /// db.put(b"k", &[b'x'; 4096])?;
    /// db.compact_range(None, None)?;
    /// assert_eq!(cache.len(), 0);
    /// db.get(b"k")?;
    /// assert_eq!(cache.len(), 1);
    /// # Ok(()) }
    /// ```
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// True when no block is held.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let cache = shale::Cache::new(8 << 20);
    /// let options = shale::Options { create_if_missing: true, block_cache: Some(cache.clone()), ..Default::default() };
    /// let db = shale::Db::open(dir.path(), options)?;
    /// // Uncompressed blocks of a memory-mapped table are read in place, not
    /// // cached; this value compresses, so its block is cached.
    /// db.put(b"k", &[b'x'; 4096])?;
    /// db.compact_range(None, None)?;
    /// assert!(cache.is_empty());
    /// db.get(b"k")?;
    /// assert!(!cache.is_empty());
    /// # Ok(()) }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("capacity", &self.capacity)
            .field("usage", &self.usage())
            .field("len", &self.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_of(size: usize) -> Arc<Block> {
        // A block with no entries: `size - 4` filler bytes and a zero restart count.
        assert!(size >= 4);
        Arc::new(Block::new(vec![0; size]).unwrap())
    }

    #[test]
    fn ids_are_unique() {
        let c = Cache::new(1 << 20);
        let a = c.new_id();
        let b = c.new_id();
        assert_ne!(a, b);
    }

    #[test]
    fn finds_what_was_inserted_by_table_and_offset() {
        let c = Cache::new(1 << 20);
        let b = block_of(100);
        c.insert(1, 0, b.clone());
        assert!(Arc::ptr_eq(&c.get(1, 0).unwrap(), &b));
        assert!(c.get(2, 0).is_none(), "another table's block");
        assert!(c.get(1, 100).is_none(), "another offset");
        assert_eq!(c.usage(), 100);
        c.erase(1, 0);
        assert!(c.get(1, 0).is_none());
        assert!(c.is_empty());
    }

    #[test]
    fn evicts_by_bytes() {
        let capacity = 10_000;
        let c = Cache::new(capacity);
        for i in 0..100u64 {
            c.insert(7, i * 1000, block_of(1000));
            assert!(c.usage() <= capacity, "usage {} after {i}", c.usage());
        }
        assert!(c.len() <= 10);
        assert!(
            c.len() >= 5,
            "the cache keeps what fits: {} blocks",
            c.len()
        );
        // Big blocks take the room of several small ones.
        let c = Cache::new(capacity);
        for i in 0..3u64 {
            c.insert(1, i, block_of(3000));
        }
        assert_eq!(c.usage(), 9000);
        c.insert(1, 99, block_of(3000));
        assert!(c.usage() <= capacity);
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn zero_capacity_caches_nothing() {
        let c = Cache::new(0);
        c.insert(1, 0, block_of(8));
        assert!(c.get(1, 0).is_none());
        assert_eq!(c.usage(), 0);
    }

    #[test]
    fn evicted_blocks_stay_alive_for_their_readers() {
        let c = Cache::new(2_000);
        let held = block_of(1500);
        c.insert(1, 0, held.clone());
        c.insert(1, 1, block_of(1500));
        c.insert(1, 2, block_of(1500));
        assert!(c.usage() <= 2_000);
        assert_eq!(held.size(), 1500);
    }

    #[test]
    fn shared_across_threads() {
        let c = Cache::new(1 << 20);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let c = &c;
                s.spawn(move || {
                    for i in 0..500u64 {
                        c.insert(t, i, block_of(64));
                        let got = c.get(t, i).expect("just inserted, far below capacity");
                        assert_eq!(got.size(), 64);
                    }
                });
            }
        });
        assert_eq!(c.len(), 2000);
        assert_eq!(c.usage(), 2000 * 64);
    }
}
