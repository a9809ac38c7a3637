//! Writes a table file from keys added in increasing order.
//!
//! Data blocks are cut when they reach the configured block size. The index
//! entry for a block is added only when the first key of the next block is
//! known, so that its key can be a short separator between the two blocks
//! (or a short successor of the last key, for the final block). `finish`
//! writes the filter block (never compressed), the metaindex and index blocks
//! and the footer: the same bytes LevelDB 1.23 writes for the same input
//! with no or snappy compression, and the same bytes as later LevelDB with
//! zstd.
//!
//! The first write error is kept: every later call returns it.

use std::cmp::Ordering;

use crate::env::WritableFile;
use crate::error::{Error, Result};
use crate::keys::extract_user_key;
use crate::sstable::format::CompressionType;

use super::block_builder::BlockBuilder;
use super::compression::BlockCompressor;
use super::filter_block::FilterBlockBuilder;
use super::format::{block_trailer, BlockHandle, Footer};
use super::whole_filter::{KeyHashes, WholeFilterBuilder, WHOLE_FILTER_META_KEY};
use super::{filter_meta_key, TableOptions};

/// Data blocks are cut at no more than this, whatever the options say, so
/// that every block stays addressable by 32-bit offsets.
const MAX_BLOCK_SIZE: usize = 1 << 30;

/// The largest key plus value accepted in one entry.
const MAX_ENTRY_SIZE: usize = 1 << 31;

/// Appends blocks and their trailers to the file, tracking the offset.
struct BlockWriter {
    file: Box<dyn WritableFile>,
    offset: u64,
    compressor: BlockCompressor,
}

impl BlockWriter {
    /// Finishes `block`, writes it (compressed if that saves at least 1/8) and resets it.
    fn write_block(&mut self, block: &mut BlockBuilder) -> Result<BlockHandle> {
        let raw = block.finish();
        let (contents, ctype) = self.compressor.compress(raw);
        let handle = write_raw_block(&mut *self.file, &mut self.offset, contents, ctype);
        block.reset();
        handle
    }
}

/// Writes `contents` and its trailer at `*offset`, advancing it.
fn write_raw_block(
    file: &mut dyn WritableFile,
    offset: &mut u64,
    contents: &[u8],
    ctype: CompressionType,
) -> Result<BlockHandle> {
    let handle = BlockHandle::new(*offset, contents.len() as u64);
    file.append(contents)?;
    let trailer = block_trailer(contents, ctype);
    file.append(&trailer)?;
    *offset += (contents.len() + trailer.len()) as u64;
    Ok(handle)
}

/// Builds a table file.
///
/// ```
/// # use std::sync::Arc;
/// # use std::path::Path;
/// use shale::env::{FileSystem, MemFs};
/// use shale::internals::{Table, TableBuilder, TableOptions};
/// let fs = MemFs::new();
/// let path = Path::new("/000005.ldb");
/// let opts = TableOptions::new(Arc::new(shale::BytewiseComparator));
/// let mut builder = TableBuilder::new(opts.clone(), fs.new_writable_file(path)?);
/// builder.add(b"apple", b"red")?;
/// builder.add(b"banana", b"yellow")?;
/// let size = builder.finish()?;
/// let table = Table::open(opts, fs.new_random_access_file(path)?, path.into(), size)?;
/// let found = table.get(false, true, b"b", |k, v| (k.to_vec(), v.to_vec()))?;
/// assert_eq!(found, Some((b"banana".to_vec(), b"yellow".to_vec())));
/// # Ok::<(), shale::Error>(())
/// ```
pub struct TableBuilder {
    opts: TableOptions,
    block_size: usize,
    writer: BlockWriter,
    error: Option<Error>,
    data_block: BlockBuilder,
    index_block: BlockBuilder,
    last_key: Vec<u8>,
    num_entries: u64,
    filter_block: Option<FilterBlockBuilder>,
    /// The whole-table filter and its bits per key, when one is written.
    whole_filter: Option<(WholeFilterBuilder, usize)>,
    /// The last data block is written but its index entry is not (it waits
    /// for the next key, to choose a short separator).
    pending_index_entry: bool,
    pending_handle: BlockHandle,
    handle_encoding: Vec<u8>,
}

impl TableBuilder {
    /// Starts a table written to `file`.
    pub fn new(opts: TableOptions, file: Box<dyn WritableFile>) -> TableBuilder {
        let mut filter_block = opts.filter_policy.clone().map(FilterBlockBuilder::new);
        if let Some(f) = &mut filter_block {
            f.start_block(0);
        }
        let whole_filter = opts
            .filter_policy
            .as_ref()
            .filter(|_| opts.whole_table_filter)
            .and_then(|p| p.whole_table_bits_per_key())
            .map(|bits| (WholeFilterBuilder::new(), bits));
        TableBuilder {
            block_size: opts.block_size.clamp(1, MAX_BLOCK_SIZE),
            writer: BlockWriter {
                file,
                offset: 0,
                compressor: BlockCompressor::new(opts.compression, opts.zstd_compression_level),
            },
            error: None,
            data_block: BlockBuilder::new(opts.block_restart_interval),
            // Index entries are few and searched by binary search: store every key whole.
            index_block: BlockBuilder::new(1),
            last_key: Vec::new(),
            num_entries: 0,
            filter_block,
            whole_filter,
            pending_index_entry: false,
            pending_handle: BlockHandle::default(),
            handle_encoding: Vec::new(),
            opts,
        }
    }

    /// Adds an entry. `key` must be greater than every key added before it,
    /// under the table's comparator.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.status()?;
        if key.len().saturating_add(value.len()) > MAX_ENTRY_SIZE {
            return Err(Error::InvalidArgument(format!(
                "table entry too large: {} byte key, {} byte value",
                key.len(),
                value.len()
            )));
        }
        if self.num_entries > 0
            && self.opts.comparator.compare(key, &self.last_key) != Ordering::Greater
        {
            return Err(Error::InvalidArgument(format!(
                "table keys out of order: '{}' added after '{}'",
                key.escape_ascii(),
                self.last_key.escape_ascii()
            )));
        }
        if self.pending_index_entry {
            debug_assert!(self.data_block.is_empty());
            self.opts
                .comparator
                .find_shortest_separator(&mut self.last_key, key);
            self.add_pending_index_entry();
        }
        let user_key = extract_user_key(key);
        // The bloom hash, computed once for both filters.
        let mut hash = None;
        let mut bloom_hash = || *hash.get_or_insert_with(|| super::bloom::bloom_hash(user_key));
        if let Some(f) = &mut self.filter_block {
            f.add_key_with(user_key, &mut bloom_hash);
        }
        if let Some((f, _)) = &mut self.whole_filter {
            f.add(KeyHashes::from_bloom_hash(bloom_hash()));
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.num_entries += 1;
        self.data_block.add(key, value);
        if self.data_block.current_size_estimate() >= self.block_size {
            self.flush()?;
        }
        Ok(())
    }

    fn add_pending_index_entry(&mut self) {
        self.handle_encoding.clear();
        self.pending_handle.encode_to(&mut self.handle_encoding);
        self.index_block.add(&self.last_key, &self.handle_encoding);
        self.pending_index_entry = false;
    }

    /// Keeps the first error; returns it.
    fn fail(&mut self, e: Error) -> Error {
        if self.error.is_none() {
            self.error = Some(e.duplicate());
        }
        e
    }

    /// Writes the current data block, if it has entries.
    fn flush(&mut self) -> Result<()> {
        if self.data_block.is_empty() {
            return Ok(());
        }
        debug_assert!(!self.pending_index_entry);
        let written = self
            .writer
            .write_block(&mut self.data_block)
            .and_then(|h| self.writer.file.flush().map(|()| h));
        match written {
            Ok(handle) => {
                self.pending_handle = handle;
                self.pending_index_entry = true;
            }
            Err(e) => return Err(self.fail(e)),
        }
        if let Some(f) = &mut self.filter_block {
            f.start_block(self.writer.offset);
        }
        Ok(())
    }

    /// The first error met, if any.
    pub fn status(&self) -> Result<()> {
        match &self.error {
            None => Ok(()),
            Some(e) => Err(e.duplicate()),
        }
    }

    /// Entries added so far.
    pub fn num_entries(&self) -> u64 {
        self.num_entries
    }

    /// Bytes written to the file so far (excluding the unfinished data block).
    pub fn file_size(&self) -> u64 {
        self.writer.offset
    }

    /// Writes the rest of the table, syncs and closes the file, and returns
    /// the file's size.
    pub fn finish(mut self) -> Result<u64> {
        self.status()?;
        self.flush()?;
        match self.write_tail() {
            Ok(size) => Ok(size),
            Err(e) => Err(self.fail(e)),
        }
    }

    fn write_tail(&mut self) -> Result<u64> {
        let w = &mut self.writer;
        let mut meta = BlockBuilder::new(self.opts.block_restart_interval);
        if let (Some(fb), Some(policy)) = (&mut self.filter_block, &self.opts.filter_policy) {
            let handle = write_raw_block(
                &mut *w.file,
                &mut w.offset,
                fb.finish(),
                CompressionType::None,
            )?;
            self.handle_encoding.clear();
            handle.encode_to(&mut self.handle_encoding);
            meta.add(&filter_meta_key(&**policy), &self.handle_encoding);
        }
        // After LevelDB's `filter.` entry: metaindex keys are sorted.
        if let Some((f, bits)) = &mut self.whole_filter {
            let handle = write_raw_block(
                &mut *w.file,
                &mut w.offset,
                &f.finish(*bits),
                CompressionType::None,
            )?;
            self.handle_encoding.clear();
            handle.encode_to(&mut self.handle_encoding);
            meta.add(WHOLE_FILTER_META_KEY, &self.handle_encoding);
        }
        let metaindex_handle = w.write_block(&mut meta)?;

        if self.pending_index_entry {
            self.opts
                .comparator
                .find_short_successor(&mut self.last_key);
            self.add_pending_index_entry();
        }
        let w = &mut self.writer;
        let index_handle = w.write_block(&mut self.index_block)?;

        let mut footer = Vec::with_capacity(super::format::FOOTER_ENCODED_LENGTH);
        Footer {
            metaindex_handle,
            index_handle,
        }
        .encode_to(&mut footer);
        w.file.append(&footer)?;
        w.offset += footer.len() as u64;
        w.file.sync()?;
        w.file.close()?;
        Ok(w.offset)
    }

    /// Stops building: the file is closed as it is, and should be removed by
    /// the caller.
    pub fn abandon(mut self) {
        // The table is being thrown away: a failure to close changes nothing.
        let _ = self.writer.file.close();
    }
}
