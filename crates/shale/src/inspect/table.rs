//! Table files, block by block.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{compare_internal, crc, decode_fixed32, get_varint32, get_varint64};
use crate::env::{FileSystem, PosixFs, RandomAccessFile};
use crate::error::{Error, Result};
use crate::sstable::compression::{self, CompressionType};
use crate::sstable::whole_filter::{WholeFilter, WHOLE_FILTER_META_KEY};

const FOOTER_LEN: u64 = 48;
const TRAILER_LEN: u64 = 5;
const MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// No block of a sound table is this large (LevelDB's blocks are KiBs).
const MAX_BLOCK: u64 = 1 << 30;

/// Where a block is: its offset and its size without the 5-byte trailer.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"a", b"1")?;
/// db.put(b"b", b"2")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// let path = &shale::inspect::live_tables(dir.path())?[0].path;
/// let table = shale::inspect::TableFile::open(path)?;
/// let first = table.index[0].block;
/// assert_eq!(first.offset, 0);
/// assert!(first.size > 0 && first.size < table.size);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockRef {
    /// The block's offset in the file.
    pub offset: u64,
    /// The size of its contents as stored.
    pub size: u64,
}

/// An entry of the index block: the separator key (an internal key no less
/// than every key of the block and less than every key of the next) and
/// the data block it leads to.
///
/// ```
/// use shale::inspect::{split_internal_key, TableFile};
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"a", b"1")?;
/// db.put(b"b", b"2")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// let path = &shale::inspect::live_tables(dir.path())?[0].path;
/// let table = TableFile::open(path)?;
/// assert_eq!(table.index.len(), 1);
/// let separator = split_internal_key(&table.index[0].key).unwrap();
/// assert!(separator.user_key.as_slice() >= b"b".as_slice());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The separator, an internal key.
    pub key: Vec<u8>,
    /// The data block.
    pub block: BlockRef,
}

/// An entry of the metaindex block.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let options = shale::Options {
///     create_if_missing: true,
///     filter_policy: Some(std::sync::Arc::new(shale::BloomFilterPolicy::new(10))),
///     ..Default::default()
/// };
/// let db = shale::Db::open(dir.path(), options)?;
/// db.put(b"k", b"v")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// let path = &shale::inspect::live_tables(dir.path())?[0].path;
/// let table = shale::inspect::TableFile::open(path)?;
/// assert_eq!(table.meta[0].name, "filter.leveldb.BuiltinBloomFilter2");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaEntry {
    /// Its name, such as `filter.leveldb.BuiltinBloomFilter2`.
    pub name: String,
    /// The meta block.
    pub block: BlockRef,
}

/// The filter block, if the table has one.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let options = shale::Options {
///     create_if_missing: true,
///     filter_policy: Some(std::sync::Arc::new(shale::BloomFilterPolicy::new(10))),
///     ..Default::default()
/// };
/// let db = shale::Db::open(dir.path(), options)?;
/// db.put(b"k", b"v")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// let path = &shale::inspect::live_tables(dir.path())?[0].path;
/// let table = shale::inspect::TableFile::open(path)?;
/// let filter = table.filter.as_ref().unwrap();
/// assert_eq!(filter.policy, "leveldb.BuiltinBloomFilter2");
/// assert_eq!(filter.filter_sizes.len(), filter.filters);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterInfo {
    /// The filter policy's name.
    pub policy: String,
    /// Where the filter block is.
    pub block: BlockRef,
    /// One filter per `2^base_lg` bytes of data blocks.
    pub base_lg: u8,
    /// How many filters it holds.
    pub filters: usize,
    /// The filters' sizes in bytes, in order.
    pub filter_sizes: Vec<usize>,
}

/// An entry of a data block.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"a", b"1")?;
/// db.put(b"b", b"2")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// let path = &shale::inspect::live_tables(dir.path())?[0].path;
/// let table = shale::inspect::TableFile::open(path)?;
/// let entry = &table.data_block(0)?.entries[1];
/// assert_eq!((&entry.user_key[..], &entry.value[..]), (&b"b"[..], &b"2"[..]));
/// assert_eq!(entry.kind, Some(1));
/// assert_eq!(entry.sequence, 2);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableEntry {
    /// The entry's offset in the (decompressed) block.
    pub offset: u32,
    /// The user key.
    pub user_key: Vec<u8>,
    /// The sequence number (0 if the key has no trailer).
    pub sequence: u64,
    /// The type byte: 1 a value, 0 a deletion; `None` if the key is too
    /// short to be an internal key.
    pub kind: Option<u8>,
    /// The value.
    pub value: Vec<u8>,
}

/// A data block, checked and decoded by [`TableFile::data_block`].
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"a", b"1")?;
/// db.put(b"b", b"2")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// let path = &shale::inspect::live_tables(dir.path())?[0].path;
/// let table = shale::inspect::TableFile::open(path)?;
/// let block = table.data_block(0)?;
/// assert_eq!(block.block, table.index[0].block);
/// assert_eq!(block.entries.len(), 2);
/// assert!(block.restarts >= 1);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataBlock {
    /// Where it is.
    pub block: BlockRef,
    /// The compression type byte: 0 none, 1 snappy, 2 zstd, 4 lz4 (see
    /// [`CompressionType`](crate::CompressionType)).
    pub compression: u8,
    /// Its size decompressed.
    pub raw_size: usize,
    /// The number of restart points.
    pub restarts: u32,
    /// Its entries, in order.
    pub entries: Vec<TableEntry>,
}

/// An open table file: its footer, metaindex, filter and index, read and
/// checked at [`TableFile::open`]; data blocks are read one at a time.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// # for i in 0..100u32 { db.put(format!("k{i:03}").as_bytes(), b"v")?; }
/// # db.compact_range(None, None)?;
/// # drop(db);
/// let path = &shale::inspect::live_tables(dir.path())?[0].path;
/// let table = shale::inspect::TableFile::open(path)?;
/// let mut n = 0;
/// for i in 0..table.index.len() {
///     n += table.data_block(i)?.entries.len();
/// }
/// assert_eq!(n, 100);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct TableFile {
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// The footer's handle of the metaindex block.
    pub metaindex: BlockRef,
    /// The footer's handle of the index block.
    pub index_block: BlockRef,
    /// The metaindex entries.
    pub meta: Vec<MetaEntry>,
    /// The filter, if there is one.
    pub filter: Option<FilterInfo>,
    /// The index entries, one per data block.
    pub index: Vec<IndexEntry>,
    file: Arc<dyn RandomAccessFile>,
}

impl std::fmt::Debug for TableFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableFile")
            .field("path", &self.path)
            .field("size", &self.size)
            .field("blocks", &self.index.len())
            .finish_non_exhaustive()
    }
}

impl TableFile {
    /// Opens the table at `path`, reading and checking its footer (magic
    /// number, handles inside the file), metaindex, filter and index blocks
    /// (checksums, entry encoding, index keys in order). Damage is
    /// [`Error::Corruption`] naming the file and the offset of the part.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"a", b"1")?;
    /// db.put(b"b", b"2")?;
    /// db.compact_range(None, None)?;
    /// drop(db);
    /// let path = &shale::inspect::live_tables(dir.path())?[0].path;
    /// let table = shale::inspect::TableFile::open(path)?;
    /// assert_eq!(table.size, std::fs::metadata(path).unwrap().len());
    /// // A file that is not a table is corruption.
    /// std::fs::write(dir.path().join("junk.ldb"), b"not a table").unwrap();
    /// assert!(shale::inspect::TableFile::open(&dir.path().join("junk.ldb")).unwrap_err().is_corruption());
    /// # Ok(()) }
    /// ```
    pub fn open(path: &Path) -> Result<TableFile> {
        let fs = PosixFs::new();
        let size = fs.file_size(path)?;
        let file = fs.new_random_access_file(path)?;
        let corrupt = |offset: u64, reason: String| Error::corruption(path, Some(offset), reason);
        if size < FOOTER_LEN {
            return Err(corrupt(
                0,
                format!("file of {size} bytes is too short for a table footer (48 bytes)"),
            ));
        }
        let footer_at = size - FOOTER_LEN;
        let mut footer = [0u8; FOOTER_LEN as usize];
        read_exact(&*file, path, footer_at, &mut footer)?;
        let magic = u64::from(decode_fixed32(&footer[40..]).unwrap_or(0))
            | u64::from(decode_fixed32(&footer[44..]).unwrap_or(0)) << 32;
        if magic != MAGIC {
            return Err(corrupt(
                footer_at + 40,
                format!(
                    "footer: bad magic number {magic:#018x}: not a table, or its end is damaged"
                ),
            ));
        }
        let mut handles = &footer[..40];
        let metaindex = decode_handle(&mut handles)
            .ok_or_else(|| corrupt(footer_at, "footer: bad metaindex handle".into()))?;
        let index_block = decode_handle(&mut handles)
            .ok_or_else(|| corrupt(footer_at, "footer: bad index handle".into()))?;
        let mut table = TableFile {
            path: path.to_path_buf(),
            size,
            metaindex,
            index_block,
            meta: Vec::new(),
            filter: None,
            index: Vec::new(),
            file,
        };
        for (what, h) in [("metaindex", metaindex), ("index", index_block)] {
            table
                .check_handle(h, footer_at)
                .map_err(|reason| corrupt(footer_at, format!("footer: {what} handle {reason}")))?;
        }

        let (_, meta_raw) = table.read_block(metaindex, "metaindex block")?;
        for (_, key, value) in decode_entries(&meta_raw)
            .map_err(|r| corrupt(metaindex.offset, format!("metaindex block: {r}")))?
        {
            let mut v = &value[..];
            let block = decode_handle(&mut v).ok_or_else(|| {
                corrupt(metaindex.offset, "metaindex block: bad block handle".into())
            })?;
            table.meta.push(MetaEntry {
                name: String::from_utf8_lossy(&key).into_owned(),
                block,
            });
        }
        if let Some(m) = table.meta.iter().find(|m| m.name.starts_with("filter.")) {
            let (policy, block) = (m.name["filter.".len()..].to_string(), m.block);
            table
                .check_handle(block, footer_at)
                .map_err(|r| corrupt(block.offset, format!("filter block handle {r}")))?;
            let (_, raw) = table.read_block(block, "filter block")?;
            table.filter = Some(
                parse_filter(policy, block, &raw)
                    .map_err(|r| corrupt(block.offset, format!("filter block: {r}")))?,
            );
        }

        if let Some(m) = table
            .meta
            .iter()
            .find(|m| m.name.as_bytes() == WHOLE_FILTER_META_KEY)
        {
            let block = m.block;
            table.check_handle(block, footer_at).map_err(|r| {
                corrupt(block.offset, format!("whole-table filter block handle {r}"))
            })?;
            let (_, raw) = table.read_block(block, "whole-table filter block")?;
            if WholeFilter::new(raw).is_none() {
                return Err(corrupt(
                    block.offset,
                    "whole-table filter block: not the filter's layout".into(),
                ));
            }
        }

        let (_, index_raw) = table.read_block(index_block, "index block")?;
        let entries = decode_entries(&index_raw)
            .map_err(|r| corrupt(index_block.offset, format!("index block: {r}")))?;
        let mut prev: Option<Vec<u8>> = None;
        let mut data_end = 0;
        for (at, key, value) in entries {
            let mut v = &value[..];
            let block = decode_handle(&mut v).ok_or_else(|| {
                corrupt(
                    index_block.offset,
                    format!("index block: bad block handle in the entry at byte {at}"),
                )
            })?;
            table.check_handle(block, footer_at).map_err(|r| {
                corrupt(
                    index_block.offset,
                    format!(
                        "index block: the handle of data block at {} {r}",
                        block.offset
                    ),
                )
            })?;
            if let Some(p) = &prev {
                if compare_internal(p, &key) != std::cmp::Ordering::Less {
                    return Err(corrupt(
                        index_block.offset,
                        format!("index block: key of entry at byte {at} is out of order"),
                    ));
                }
            }
            if block.offset < data_end {
                return Err(corrupt(
                    index_block.offset,
                    format!(
                        "index block: data block at {} overlaps the one before",
                        block.offset
                    ),
                ));
            }
            data_end = block.offset + block.size + TRAILER_LEN;
            prev = Some(key.clone());
            table.index.push(IndexEntry { key, block });
        }
        Ok(table)
    }

    /// Checks that a block and its trailer lie before the footer.
    fn check_handle(&self, h: BlockRef, footer_at: u64) -> std::result::Result<(), String> {
        let end = h
            .offset
            .checked_add(h.size)
            .and_then(|e| e.checked_add(TRAILER_LEN));
        match end {
            Some(end) if end <= footer_at && h.size <= MAX_BLOCK => Ok(()),
            _ => Err(format!(
                "(offset {}, size {}) points past the data of the file ({footer_at} bytes before the footer)",
                h.offset, h.size
            )),
        }
    }

    /// Reads the block at `h`, checks its checksum and decompresses it:
    /// its compression type and its contents.
    fn read_block(&self, h: BlockRef, what: &str) -> Result<(u8, Vec<u8>)> {
        let corrupt = |reason: String| Error::corruption(&self.path, Some(h.offset), reason);
        let mut buf = vec![0u8; (h.size + TRAILER_LEN) as usize];
        read_exact(&*self.file, &self.path, h.offset, &mut buf)?;
        let n = h.size as usize;
        let ctype = buf[n];
        let stored = decode_fixed32(&buf[n + 1..]).unwrap_or(0);
        let actual = crc::extend(crc::value(&buf[..n]), &[ctype]);
        if crc::unmask(stored) != actual {
            return Err(corrupt(format!(
                "{what}: checksum mismatch (stored {:#010x}, computed {actual:#010x})",
                crc::unmask(stored)
            )));
        }
        buf.truncate(n);
        let t = CompressionType::from_u8(ctype)
            .ok_or_else(|| corrupt(format!("{what}: unknown compression type {ctype}")))?;
        match compression::decompress(t, &buf) {
            Ok(None) => Ok((ctype, buf)),
            Ok(Some(out)) => Ok((ctype, out.into_vec())),
            Err(Error::Corruption { reason, .. }) => Err(corrupt(format!("{what}: {reason}"))),
            Err(e) => Err(e),
        }
    }

    /// Reads data block `i` (in index order), checking its checksum, the
    /// encoding of its entries, their order, and that every key is within
    /// the index entry's separator. Damage is [`Error::Corruption`] naming
    /// the file and the block's offset.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"a", b"1")?;
    /// db.put(b"b", b"2")?;
    /// db.compact_range(None, None)?;
    /// drop(db);
    /// let path = &shale::inspect::live_tables(dir.path())?[0].path;
    /// let table = shale::inspect::TableFile::open(path)?;
    /// let keys: Vec<Vec<u8>> = table.data_block(0)?.entries.into_iter().map(|e| e.user_key).collect();
    /// assert_eq!(keys, [b"a", b"b"]);
    /// // There is no block past the index.
    /// assert!(table.data_block(table.index.len()).is_err());
    /// # Ok(()) }
    /// ```
    pub fn data_block(&self, i: usize) -> Result<DataBlock> {
        let entry = self.index.get(i).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{}: no data block {i} (the table has {})",
                self.path.display(),
                self.index.len()
            ))
        })?;
        let h = entry.block;
        let corrupt = |reason: String| Error::corruption(&self.path, Some(h.offset), reason);
        let (compression, raw) = self.read_block(h, "data block")?;
        let restarts = restart_count(&raw).unwrap_or(0);
        let decoded = decode_entries(&raw).map_err(|r| corrupt(format!("data block: {r}")))?;
        let mut entries = Vec::with_capacity(decoded.len());
        let mut prev: Option<Vec<u8>> = None;
        let first = decoded.first().map(|(_, k, _)| k.clone());
        for (at, key, value) in decoded {
            if let Some(p) = &prev {
                if compare_internal(p, &key) != std::cmp::Ordering::Less {
                    return Err(corrupt(format!(
                        "data block: the key at byte {at} is not greater than the one before"
                    )));
                }
            }
            let (user_key, sequence, kind) = match super::parse_internal_key(&key) {
                Some(p) => (p.user_key.to_vec(), p.sequence, Some(p.value_type as u8)),
                None => (key.clone(), 0, None),
            };
            entries.push(TableEntry {
                offset: at as u32,
                user_key,
                sequence,
                kind,
                value,
            });
            prev = Some(key);
        }
        if let Some(last) = &prev {
            if compare_internal(last, &entry.key) == std::cmp::Ordering::Greater {
                return Err(corrupt(
                    "data block: its last key is past the index entry that leads to it".into(),
                ));
            }
        }
        if let (Some(first), Some(before)) = (&first, i.checked_sub(1)) {
            if compare_internal(first, &self.index[before].key) != std::cmp::Ordering::Greater {
                return Err(corrupt(
                    "data block: its first key is not past the previous block's index entry".into(),
                ));
            }
        }
        Ok(DataBlock {
            block: h,
            compression,
            raw_size: raw.len(),
            restarts,
            entries,
        })
    }
}

/// Figures of a whole table, from [`table_summary`].
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"a", b"1")?;
/// db.put(b"b", b"2")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// let path = &shale::inspect::live_tables(dir.path())?[0].path;
/// let summary = shale::inspect::table_summary(path)?;
/// assert_eq!(summary.entries, 2);
/// assert_eq!(summary.deletions, 0);
/// assert_eq!((summary.smallest_sequence, summary.largest_sequence), (Some(1), Some(2)));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableSummary {
    /// Entries, every version and deletion marker.
    pub entries: u64,
    /// Deletion markers among them.
    pub deletions: u64,
    /// Data blocks.
    pub blocks: u64,
    /// Bytes of data blocks as stored.
    pub stored_block_bytes: u64,
    /// Bytes of data blocks decompressed.
    pub raw_block_bytes: u64,
    /// The smallest and largest sequence numbers of its entries.
    pub smallest_sequence: Option<u64>,
    /// See `smallest_sequence`.
    pub largest_sequence: Option<u64>,
}

/// Reads every block of the table at `path` and sums it up; the first
/// damage found is the error.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
/// db.put(b"a", b"1")?;
/// db.put(b"b", b"2")?;
/// db.compact_range(None, None)?;
/// drop(db);
/// let path = &shale::inspect::live_tables(dir.path())?[0].path;
/// let summary = shale::inspect::table_summary(path)?;
/// assert_eq!(summary.blocks, 1);
/// assert!(summary.raw_block_bytes > 0);
/// # Ok(()) }
/// ```
pub fn table_summary(path: &Path) -> Result<TableSummary> {
    let t = TableFile::open(path)?;
    let mut s = TableSummary::default();
    for i in 0..t.index.len() {
        let b = t.data_block(i)?;
        s.blocks += 1;
        s.stored_block_bytes += b.block.size;
        s.raw_block_bytes += b.raw_size as u64;
        for e in &b.entries {
            s.entries += 1;
            if e.kind == Some(0) {
                s.deletions += 1;
            }
            s.smallest_sequence = Some(
                s.smallest_sequence
                    .map_or(e.sequence, |x| x.min(e.sequence)),
            );
            s.largest_sequence = Some(s.largest_sequence.map_or(e.sequence, |x| x.max(e.sequence)));
        }
    }
    Ok(s)
}

fn read_exact(file: &dyn RandomAccessFile, path: &Path, offset: u64, buf: &mut [u8]) -> Result<()> {
    let n = file.read_at(offset, buf)?;
    if n != buf.len() {
        return Err(Error::corruption(
            path,
            Some(offset),
            format!(
                "wanted {} bytes at offset {offset}, the file ends after {n}",
                buf.len()
            ),
        ));
    }
    Ok(())
}

fn decode_handle(src: &mut &[u8]) -> Option<BlockRef> {
    let offset = get_varint64(src)?;
    let size = get_varint64(src)?;
    Some(BlockRef { offset, size })
}

fn restart_count(block: &[u8]) -> Option<u32> {
    decode_fixed32(block.get(block.len().checked_sub(4)?..)?)
}

/// An entry of a block: its offset, its whole key, its value.
type RawEntry = (usize, Vec<u8>, Vec<u8>);

/// The entries of a block: (offset, whole key, value), checking the
/// restart array and each entry's lengths.
fn decode_entries(block: &[u8]) -> std::result::Result<Vec<RawEntry>, String> {
    let n = restart_count(block).ok_or("too short for its restart count")? as usize;
    let array = n
        .checked_mul(4)
        .and_then(|a| a.checked_add(4))
        .filter(|&a| a <= block.len())
        .ok_or_else(|| format!("{n} restart points do not fit in {} bytes", block.len()))?;
    let data = &block[..block.len() - array];
    for r in 0..n {
        let at = data.len() + r * 4;
        let point = decode_fixed32(&block[at..]).unwrap_or(u32::MAX) as usize;
        if point > data.len() {
            return Err(format!("restart point {r} ({point}) is past the entries"));
        }
    }
    let mut out = Vec::new();
    let mut key: Vec<u8> = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let mut input = &data[pos..];
        let bad = || format!("malformed entry at byte {pos}");
        let shared = get_varint32(&mut input).ok_or_else(bad)? as usize;
        let non_shared = get_varint32(&mut input).ok_or_else(bad)? as usize;
        let value_len = get_varint32(&mut input).ok_or_else(bad)? as usize;
        if shared > key.len() {
            return Err(format!(
                "entry at byte {pos} shares {shared} bytes with a key of {}",
                key.len()
            ));
        }
        let total = non_shared.checked_add(value_len).ok_or_else(bad)?;
        if total > input.len() {
            return Err(format!(
                "entry at byte {pos} runs past the end of the block"
            ));
        }
        key.truncate(shared);
        key.extend_from_slice(&input[..non_shared]);
        let value = input[non_shared..total].to_vec();
        out.push((pos, key.clone(), value));
        pos = data.len() - (input.len() - total);
    }
    Ok(out)
}

fn parse_filter(
    policy: String,
    block: BlockRef,
    raw: &[u8],
) -> std::result::Result<FilterInfo, String> {
    let n = raw.len();
    if n < 5 {
        return Err(format!("{n} bytes is too short"));
    }
    let array_start = decode_fixed32(&raw[n - 5..]).unwrap_or(u32::MAX) as usize;
    if array_start > n - 5 {
        return Err(format!(
            "offset array start {array_start} is past the block"
        ));
    }
    let base_lg = raw[n - 1];
    let filters = (n - 5 - array_start) / 4;
    let mut sizes = Vec::with_capacity(filters);
    for i in 0..filters {
        let start = decode_fixed32(&raw[array_start + i * 4..]).unwrap_or(0) as usize;
        let limit = if i + 1 < filters {
            decode_fixed32(&raw[array_start + (i + 1) * 4..]).unwrap_or(0) as usize
        } else {
            array_start
        };
        if start > limit || limit > array_start {
            return Err(format!("filter {i} has bad bounds {start}..{limit}"));
        }
        sizes.push(limit - start);
    }
    Ok(FilterInfo {
        policy,
        block,
        base_lg,
        filters,
        filter_sizes: sizes,
    })
}
