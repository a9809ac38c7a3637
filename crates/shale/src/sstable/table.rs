//! An open table file: its footer, index block and filter held in memory, its
//! data blocks read on demand through the block cache.
//!
//! Opening checks the checksums of the index, metaindex and filter blocks
//! whatever the options say (they are read once, and a damaged filter could
//! otherwise hide keys). A metaindex or filter block that cannot be read makes
//! the table readable without a filter, as in LevelDB, unless
//! `paranoid_checks` is set. Every corruption is reported as
//! [`Error::Corruption`] naming the file and the offset of the bad block.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::comparator::BytewiseComparator;
use crate::env::RandomAccessFile;
use crate::error::{Error, Result};
use crate::keys::extract_user_key;

use super::block::{Block, BlockIter};
use super::fences::Fences;
use super::filter_block::FilterBlockReader;
use super::format::{
    read_block, read_block_contents, read_block_shared, BlockHandle, Footer, FOOTER_ENCODED_LENGTH,
};
use super::whole_filter::{KeyHashes, WholeFilter, WHOLE_FILTER_META_KEY};
use super::{filter_meta_key, TableOptions};
use crate::iter::two_level::{BlockLoader, TwoLevelIterator};

thread_local! {
    /// A key buffer for point lookups, so `get` does not allocate.
    static LOOKUP_KEY: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// An open, immutable table.
pub struct Table {
    opts: TableOptions,
    file: Arc<dyn RandomAccessFile>,
    path: PathBuf,
    size: u64,
    /// This table's id in the block cache (0 without a cache).
    cache_id: u64,
    index: Arc<Block>,
    /// Narrows point lookups in `index` (`None` for orders it cannot summarize).
    index_fences: Option<Fences>,
    index_handle: BlockHandle,
    metaindex_handle: BlockHandle,
    filter: Option<FilterBlockReader>,
    /// The whole-table filter, when the table has one the options read
    /// (`filter` is then not loaded).
    whole_filter: Option<Arc<WholeFilter>>,
}

impl Table {
    /// Opens the table in `file` (of `size` bytes, named `path` in errors).
    pub fn open(
        opts: TableOptions,
        file: Arc<dyn RandomAccessFile>,
        path: PathBuf,
        size: u64,
    ) -> Result<Arc<Table>> {
        let footer_len = FOOTER_ENCODED_LENGTH as u64;
        if size < footer_len {
            return Err(Error::corruption(
                &path,
                None,
                format!("file is too short ({size} bytes) to be an sstable"),
            ));
        }
        let footer_at = size - footer_len;
        let mut footer = [0u8; FOOTER_ENCODED_LENGTH];
        if file.read_at(footer_at, &mut footer)? != footer.len() {
            return Err(Error::corruption(
                &path,
                Some(footer_at),
                "truncated footer read",
            ));
        }
        let footer = Footer::decode(&footer).map_err(|e| e.in_file(&path, Some(footer_at)))?;
        let index = read_block(&*file, size, &footer.index_handle, true)
            .map_err(|e| e.in_file(&path, Some(footer.index_handle.offset)))?;
        let (filter, whole_filter) =
            read_filters(&opts, &*file, &path, size, &footer.metaindex_handle)?;
        let cache_id = opts.block_cache.as_ref().map_or(0, |c| c.new_id());
        let index_fences = Fences::build(&index, &*opts.comparator);
        Ok(Arc::new(Table {
            opts,
            file,
            path,
            size,
            cache_id,
            index: Arc::new(index),
            index_fences,
            index_handle: footer.index_handle,
            metaindex_handle: footer.metaindex_handle,
            filter,
            whole_filter: whole_filter.map(Arc::new),
        }))
    }

    #[cfg(test)]
    /// True when the table has a filter made by the options' filter policy.
    pub fn has_filter(&self) -> bool {
        self.filter.is_some()
    }

    /// False when the table's whole-table filter shows that it holds no entry
    /// for `user_key`; true when it may, or has no such filter. `hashes`
    /// caches the key's filter hashes from one table to the next (`None`
    /// until the first table with a filter computes them).
    #[inline]
    pub fn may_contain(&self, hashes: &mut Option<KeyHashes>, user_key: &[u8]) -> bool {
        match &self.whole_filter {
            Some(filter) => {
                filter.may_contain(*hashes.get_or_insert_with(|| KeyHashes::of(user_key)))
            }
            None => true,
        }
    }

    /// The table's whole-table filter, if it has one.
    #[inline]
    pub fn whole_filter(&self) -> Option<&Arc<WholeFilter>> {
        self.whole_filter.as_ref()
    }

    /// The data block at `handle`, from the cache or the file, and whether it
    /// was read from the file.
    fn block(
        &self,
        handle: &BlockHandle,
        verify_checksums: bool,
        fill_cache: bool,
    ) -> Result<(Arc<Block>, bool)> {
        if let Some(block) = self.cached_block(handle, verify_checksums) {
            return Ok((block, false));
        }
        let cache = self.opts.block_cache.as_ref();
        let verify = verify_checksums || self.opts.paranoid_checks;
        let (mut block, cachable) = read_block_shared(&self.file, self.size, handle, verify)
            .map_err(|e| e.in_file(&self.path, Some(handle.offset)))?;
        block.set_checksum_verified(verify);
        let block = Arc::new(block);
        if let (Some(c), true, true) = (cache, fill_cache, cachable) {
            c.insert(self.cache_id, handle.offset, block.clone());
        }
        Ok((block, true))
    }

    /// The data block at `handle` if the block cache holds it in a form this
    /// read may use: a block cached by a read that skipped the checksum is
    /// read again by one that wants it checked (a compaction must never copy
    /// damaged data into a table with a fresh checksum).
    #[inline]
    fn cached_block(&self, handle: &BlockHandle, verify_checksums: bool) -> Option<Arc<Block>> {
        let verify = verify_checksums || self.opts.paranoid_checks;
        let block = self
            .opts
            .block_cache
            .as_ref()?
            .get(self.cache_id, handle.offset)?;
        (!verify || block.checksum_verified()).then_some(block)
    }

    /// An iterator over the table's entries. It holds the table open.
    pub fn iter(self: &Arc<Self>, verify_checksums: bool, fill_cache: bool) -> TableIterator {
        TwoLevelIterator::new(
            self.index.iter(self.opts.comparator.clone()),
            TableBlocks {
                table: self.clone(),
                verify_checksums,
                fill_cache,
                block_offset: 0,
                last_read: false,
                ahead: None,
            },
        )
    }

    /// Point lookup: finds the first entry with key >= `ikey` and calls `f`
    /// with its key and value.
    ///
    /// Like LevelDB, the lookup reads only the one data block whose index
    /// range covers `ikey`, and skips even that when the filter shows that
    /// the block holds no key with `ikey`'s user key. So: if the table holds
    /// an entry with `ikey`'s user key at or after `ikey`, `f` sees the first
    /// such entry; otherwise the result is `None` or some later entry with
    /// another user key (callers compare user keys).
    #[cfg(any(test, feature = "internals"))]
    pub fn get<R>(
        &self,
        verify_checksums: bool,
        fill_cache: bool,
        ikey: &[u8],
        f: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Option<R>> {
        let mut hashes = None;
        if !self.may_contain(&mut hashes, extract_user_key(ikey)) {
            return Ok(None);
        }
        self.get_past_filter(verify_checksums, fill_cache, ikey, f)
    }

    /// [`get`](Table::get) for a caller that has asked [`may_contain`](Table::may_contain)
    /// already.
    pub(crate) fn get_past_filter<R>(
        &self,
        verify_checksums: bool,
        fill_cache: bool,
        ikey: &[u8],
        f: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Option<R>> {
        // Borrow the thread's buffer (a fresh one if the thread is exiting, or
        // if `f` itself calls `get`).
        let mut key = LOOKUP_KEY.try_with(Cell::take).unwrap_or_default();
        let result = self.get_with(&mut key, verify_checksums, fill_cache, ikey, f);
        let _ = LOOKUP_KEY.try_with(|buf| buf.set(key));
        result
    }

    fn get_with<R>(
        &self,
        key: &mut Vec<u8>,
        verify_checksums: bool,
        fill_cache: bool,
        ikey: &[u8],
        f: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Option<R>> {
        let cmp = &*self.opts.comparator;
        let fences = self.index_fences.as_ref();
        let index_value = match fences.and_then(|f| f.locate(ikey)) {
            Some(i) if i == self.index.num_restarts() => None,
            Some(i) => Some(self.index.restart_value(i).ok_or_else(|| {
                Error::corruption(
                    &self.path,
                    Some(self.index_handle.offset),
                    "bad entry in index block",
                )
            })?),
            None => self
                .index
                .seek_entry_with(cmp, fences, ikey, key)
                .map_err(|e| e.in_file(&self.path, Some(self.index_handle.offset)))?,
        };
        let Some(mut index_value) = index_value else {
            return Ok(None);
        };
        let handle = BlockHandle::decode_from(&mut index_value)
            .map_err(|e| e.in_file(&self.path, Some(self.index_handle.offset)))?;
        if let Some(filter) = &self.filter {
            if !filter.key_may_match(handle.offset, extract_user_key(ikey)) {
                return Ok(None);
            }
        }
        let (block, _) = self.block(&handle, verify_checksums, fill_cache)?;
        let value = block
            .point_lookup(cmp, ikey, key)
            .map_err(|e| e.in_file(&self.path, Some(handle.offset)))?;
        Ok(value.map(|v| f(key, v)))
    }

    /// The approximate file offset where the data for `ikey` begins (or would,
    /// if present): the offset of the data block covering it, or the end of the
    /// data blocks for keys after the last one.
    pub fn approximate_offset_of(&self, ikey: &[u8]) -> u64 {
        let mut key = Vec::new();
        match self.index.seek_entry_with(
            &*self.opts.comparator,
            self.index_fences.as_ref(),
            ikey,
            &mut key,
        ) {
            Ok(Some(mut value)) => match BlockHandle::decode_from(&mut value) {
                Ok(handle) => handle.offset,
                // A bad index entry: the metaindex offset is near the end of the data.
                Err(_) => self.metaindex_handle.offset,
            },
            // Past the last key (or a bad index): near the end of the file.
            _ => self.metaindex_handle.offset,
        }
    }
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("path", &self.path)
            .field("size", &self.size)
            .field("index_size", &self.index.size())
            .field("has_filter", &self.filter.is_some())
            .field("has_whole_filter", &self.whole_filter.is_some())
            .finish()
    }
}

/// Reads the table's filters: its whole-table filter, when the options'
/// policy reads them and the table has one (the filter block is then read
/// only to be checked, under `paranoid_checks`, and not kept), else the
/// filter block of a policy of the options' policy's name. A filter that
/// cannot be read is an error under `paranoid_checks`; otherwise the table
/// is read without it (a whole-table filter, with its filter block instead),
/// as LevelDB reads a table whose filter is damaged.
fn read_filters(
    opts: &TableOptions,
    file: &dyn RandomAccessFile,
    path: &Path,
    size: u64,
    metaindex_handle: &BlockHandle,
) -> Result<(Option<FilterBlockReader>, Option<WholeFilter>)> {
    let Some(policy) = &opts.filter_policy else {
        return Ok((None, None));
    };
    let meta = match read_block(file, size, metaindex_handle, true) {
        Ok(meta) => meta,
        Err(e) if opts.paranoid_checks => {
            return Err(e.in_file(path, Some(metaindex_handle.offset)))
        }
        Err(_) => return Ok((None, None)),
    };
    // The contents of the meta block named `name`, with its offset.
    let meta_block = |name: &[u8]| -> Result<Option<(u64, Vec<u8>)>> {
        let mut key = Vec::new();
        let value = meta
            .seek_entry(&BytewiseComparator, name, &mut key)
            .map_err(|e| e.in_file(path, Some(metaindex_handle.offset)))?;
        let Some(mut value) = value.filter(|_| key == name) else {
            return Ok(None);
        };
        let handle = BlockHandle::decode_from(&mut value)
            .map_err(|e| e.in_file(path, Some(metaindex_handle.offset)))?;
        let contents = read_block_contents(file, size, &handle, true)
            .map_err(|e| e.in_file(path, Some(handle.offset)))?;
        Ok(Some((handle.offset, contents)))
    };
    let whole = match policy
        .whole_table_bits_per_key()
        .map(|_| meta_block(WHOLE_FILTER_META_KEY))
    {
        Some(Ok(Some((at, contents)))) => match WholeFilter::new(contents) {
            Some(filter) => Some(filter),
            None if opts.paranoid_checks => {
                return Err(Error::corruption(
                    path,
                    Some(at),
                    "bad whole-table filter block",
                ))
            }
            None => None,
        },
        Some(Err(e)) if opts.paranoid_checks => return Err(e),
        _ => None,
    };
    if whole.is_some() && !opts.paranoid_checks {
        return Ok((None, whole));
    }
    let filter = match meta_block(&filter_meta_key(&**policy)) {
        Ok(block) => block
            .filter(|_| whole.is_none())
            .map(|(_, contents)| FilterBlockReader::new(policy.clone(), contents)),
        Err(e) if opts.paranoid_checks => return Err(e),
        Err(_) => None,
    };
    Ok((filter, whole))
}

/// Loads a table's data blocks for its iterator.
pub struct TableBlocks {
    table: Arc<Table>,
    verify_checksums: bool,
    fill_cache: bool,
    /// Offset of the last block loaded, for error reports.
    block_offset: u64,
    /// The last block loaded was read from the file, not the block cache:
    /// the blocks around it are likely not cached either.
    last_read: bool,
    /// A cached block taken from the cache ahead of its load (at its
    /// offset), so that its bytes were on their way while the block before
    /// it was read; the load that asks for it takes it instead of looking it
    /// up again.
    ahead: Option<(u64, Arc<Block>)>,
}

impl BlockLoader for TableBlocks {
    type Iter = BlockIter;

    fn load(&mut self, index_value: &[u8], reuse: Option<BlockIter>) -> Result<BlockIter> {
        let table = &self.table;
        let handle = BlockHandle::decode_from(&mut &index_value[..])
            .map_err(|e| e.in_file(&table.path, Some(table.index_handle.offset)))?;
        self.block_offset = handle.offset;
        let (block, read) = match self.ahead.take() {
            Some((offset, block)) if offset == handle.offset => (block, false),
            _ => table.block(&handle, self.verify_checksums, self.fill_cache)?,
        };
        self.last_read = read;
        Ok(match reuse {
            Some(mut it) => {
                it.reset(block);
                it
            }
            None => BlockIter::new(block, table.opts.comparator.clone()),
        })
    }

    fn annotate(&self, err: Error, from_index: bool) -> Error {
        let at = if from_index {
            self.table.index_handle.offset
        } else {
            self.block_offset
        };
        err.in_file(&self.table.path, Some(at))
    }

    fn prefetch(&mut self, index_value: &[u8]) {
        // A bad handle is reported when the block is loaded, not here.
        let Ok(h) = BlockHandle::decode_from(&mut &index_value[..]) else {
            return;
        };
        if !self.last_read {
            // The blocks come from the cache: a cached block sits in memory
            // of its own, away from the one before it, so its first entries
            // would each wait for memory. Take it now and start its bytes on
            // their way; the load takes it from here.
            self.ahead = self
                .table
                .cached_block(&h, self.verify_checksums)
                .inspect(|block| crate::util::prefetch::prefetch(block.data()))
                .map(|block| (h.offset, block));
            return;
        }
        // Only a mapped file's bytes can be fetched ahead.
        let Some(map) = self.table.file.mapped() else {
            return;
        };
        let Some(end) = h.offset.checked_add(h.size) else {
            return;
        };
        if let (Ok(start), Ok(end)) = (usize::try_from(h.offset), usize::try_from(end)) {
            if let Some(raw) = map.get(start..end) {
                crate::util::prefetch::prefetch(raw);
            }
        }
    }
}

/// An iterator over a table's entries: the index block over its data blocks.
pub type TableIterator = TwoLevelIterator<BlockIter, TableBlocks>;
