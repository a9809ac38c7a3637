//! The physical layout of a table file, as LevelDB 1.23 writes it.
//!
//! ```text
//! [data block 1] ... [data block N] [filter block] [metaindex block] [index block] [footer]
//! ```
//!
//! Every block is followed by a 5-byte trailer: the compression type (1 byte)
//! and the masked CRC32C of the block contents plus that type byte (fixed32).
//! A [`BlockHandle`] (varint64 offset, varint64 size) locates a block; its size
//! excludes the trailer. The [`Footer`] is the last 48 bytes of the file: the
//! metaindex and index handles, zero padding up to 40 bytes, and the magic
//! number as a fixed64.
//!
//! The type byte says how the block contents are stored (see
//! [`compression`](super::compression) for the codecs):
//!
//! - 0, none: the contents as they are;
//! - 1, snappy: one raw snappy block;
//! - 2, zstd: one Zstandard frame whose header gives the content size, as
//!   LevelDB after 1.23 writes it (`ZSTD_compress2` at the zstd level);
//! - 4, lz4 (Shale's own): the uncompressed length as a varint32, then one
//!   raw LZ4 block (the LZ4 block format, no frame).
//!
//! LevelDB 1.23 reads types 0 and 1 and refuses 2 and 4 as a "bad block
//! type"; later LevelDB reads 2 as well; type 3 is unused. Only data,
//! metaindex and index blocks are compressed: the filter block is type 0.
//!
//! Invariant of this module: bytes read from a file are never trusted. A handle
//! is checked against the file size before any buffer is allocated, and a
//! compressed block's claimed uncompressed length is checked against the largest
//! length its compressed size can produce under its codec before the output is
//! allocated.

use std::sync::Arc;

use bytes::Bytes;

use crate::env::RandomAccessFile;
use crate::error::{Error, Result};
use crate::util::coding::{decode_fixed32, get_varint64, put_fixed32, put_varint64};
use crate::util::crc;
use crate::util::prefetch::prefetch;

use super::block::Block;
use super::buffers::BlockBuf;
use super::compression;

pub use super::compression::CompressionType;

/// The number at the end of every table file.
pub const TABLE_MAGIC_NUMBER: u64 = 0xdb47_7524_8b80_fb57;

/// Bytes after each block: compression type and masked CRC32C.
pub const BLOCK_TRAILER_SIZE: usize = 5;

/// The largest encoding of a [`BlockHandle`] (two 10-byte varints).
pub const MAX_ENCODED_HANDLE_LENGTH: usize = 20;

/// The size of the [`Footer`]: two padded handles and the magic number.
pub const FOOTER_ENCODED_LENGTH: usize = 2 * MAX_ENCODED_HANDLE_LENGTH + 8;

/// Where a block lives in a file: its offset and its size without the trailer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockHandle {
    /// Byte offset of the block in the file.
    pub offset: u64,
    /// Size of the block contents, excluding the 5-byte trailer.
    pub size: u64,
}

impl BlockHandle {
    /// A handle for the block at `offset` of `size` bytes.
    pub fn new(offset: u64, size: u64) -> BlockHandle {
        BlockHandle { offset, size }
    }

    /// Appends the varint encoding of the handle to `dst`.
    #[inline]
    pub fn encode_to(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }

    /// Decodes a handle from the front of `src`, advancing it.
    #[inline]
    pub fn decode_from(src: &mut &[u8]) -> Result<BlockHandle> {
        let mut cursor = *src;
        match (get_varint64(&mut cursor), get_varint64(&mut cursor)) {
            (Some(offset), Some(size)) => {
                *src = cursor;
                Ok(BlockHandle { offset, size })
            }
            _ => Err(Error::bad_data("bad block handle")),
        }
    }

    /// The offset just past the block's trailer, or `None` on overflow.
    #[inline]
    pub fn end_with_trailer(&self) -> Option<u64> {
        self.offset
            .checked_add(self.size)?
            .checked_add(BLOCK_TRAILER_SIZE as u64)
    }
}

/// The fixed-size tail of every table file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Footer {
    /// The block mapping meta block names (such as `filter.<name>`) to handles.
    pub metaindex_handle: BlockHandle,
    /// The block mapping separator keys to data block handles.
    pub index_handle: BlockHandle,
}

impl Footer {
    /// Appends the 48-byte encoding to `dst`.
    pub fn encode_to(&self, dst: &mut Vec<u8>) {
        let start = dst.len();
        self.metaindex_handle.encode_to(dst);
        self.index_handle.encode_to(dst);
        dst.resize(start + 2 * MAX_ENCODED_HANDLE_LENGTH, 0);
        put_fixed32(dst, (TABLE_MAGIC_NUMBER & 0xffff_ffff) as u32);
        put_fixed32(dst, (TABLE_MAGIC_NUMBER >> 32) as u32);
    }

    /// Decodes a footer from exactly [`FOOTER_ENCODED_LENGTH`] bytes.
    pub fn decode(src: &[u8]) -> Result<Footer> {
        if src.len() != FOOTER_ENCODED_LENGTH {
            return Err(Error::bad_data("footer has the wrong length"));
        }
        let magic_at = FOOTER_ENCODED_LENGTH - 8;
        let lo = decode_fixed32(&src[magic_at..]).unwrap_or(0) as u64;
        let hi = decode_fixed32(&src[magic_at + 4..]).unwrap_or(0) as u64;
        if (hi << 32) | lo != TABLE_MAGIC_NUMBER {
            return Err(Error::bad_data("not an sstable (bad magic number)"));
        }
        let mut handles = &src[..magic_at];
        let metaindex_handle = BlockHandle::decode_from(&mut handles)?;
        let index_handle = BlockHandle::decode_from(&mut handles)?;
        Ok(Footer {
            metaindex_handle,
            index_handle,
        })
    }
}

/// Appends the trailer for `contents` stored with compression `ctype`.
#[inline]
pub fn block_trailer(contents: &[u8], ctype: CompressionType) -> [u8; BLOCK_TRAILER_SIZE] {
    let t = ctype as u8;
    let c = crc::mask(crc::extend(crc::value(contents), &[t]));
    let c = c.to_le_bytes();
    [t, c[0], c[1], c[2], c[3]]
}

/// Reads the contents of the block at `handle` from a file of `file_size`
/// bytes: checks the trailer's CRC when `verify_checksums` is set and
/// decompresses if needed. The result is the block as the builder produced it.
///
/// Errors are [`Error::Corruption`] without a file name; callers add it with
/// [`Error::in_file`].
pub fn read_block_contents(
    file: &dyn RandomAccessFile,
    file_size: u64,
    handle: &BlockHandle,
    verify_checksums: bool,
) -> Result<Vec<u8>> {
    let n = checked_block_len(handle, file_size)?;
    match read_block_raw(file, handle.offset, n, verify_checksums)? {
        RawBlock::Owned(data) => Ok(data.into_vec()),
        RawBlock::Mapped { contents, .. } => Ok(contents.to_vec()),
    }
}

/// Reads and parses the block at `handle` of a shared file; see
/// [`read_block_contents`]. An uncompressed block of a mapped file is not
/// copied: the block borrows the mapping (and keeps the file open). The flag
/// says whether the block is worth caching, false for such borrowed blocks,
/// which cost nothing to read again.
pub fn read_block_shared(
    file: &Arc<dyn RandomAccessFile>,
    file_size: u64,
    handle: &BlockHandle,
    verify_checksums: bool,
) -> Result<(Block, bool)> {
    let n = checked_block_len(handle, file_size)?;
    match read_block_raw(&**file, handle.offset, n, verify_checksums)? {
        RawBlock::Owned(data) => Ok((Block::from_bytes(data.into_bytes())?, true)),
        RawBlock::Mapped { start, .. } => {
            let whole = Bytes::from_owner(MappedFile(Arc::clone(file)));
            if whole.len() < start + n {
                return Err(Error::bad_data("truncated block read"));
            }
            Ok((Block::from_bytes(whole.slice(start..start + n))?, false))
        }
    }
}

/// A mapped file as the owner of the bytes it lends.
struct MappedFile(Arc<dyn RandomAccessFile>);

impl AsRef<[u8]> for MappedFile {
    fn as_ref(&self) -> &[u8] {
        self.0.mapped().unwrap_or(&[])
    }
}

/// The contents length of the block at `handle`, if it and its trailer lie
/// inside a file of `file_size` bytes.
fn checked_block_len(handle: &BlockHandle, file_size: u64) -> Result<usize> {
    let fits = handle
        .end_with_trailer()
        .is_some_and(|end| end <= file_size);
    match usize::try_from(handle.size) {
        Ok(n) if fits => Ok(n),
        _ => Err(Error::corruption(
            "",
            Some(handle.offset),
            format!(
                "block handle (offset {}, size {}) points past the end of the file ({} bytes)",
                handle.offset, handle.size, file_size
            ),
        )),
    }
}

/// A block's contents, checked and decompressed.
enum RawBlock<'a> {
    /// In a buffer of their own, recycled when the block is dropped.
    Owned(BlockBuf),
    /// Stored uncompressed in the file's mapping, from offset `start`.
    Mapped { start: usize, contents: &'a [u8] },
}

/// Reads the `n` bytes of contents at `offset` and their trailer: from the
/// mapping when the file has one (leaving uncompressed contents where they
/// are), with one positional read otherwise.
fn read_block_raw(
    file: &dyn RandomAccessFile,
    offset: u64,
    n: usize,
    verify_checksums: bool,
) -> Result<RawBlock<'_>> {
    if let Some(map) = file.mapped() {
        let start = usize::try_from(offset)
            .ok()
            .filter(|&o| {
                o.checked_add(n + BLOCK_TRAILER_SIZE)
                    .is_some_and(|e| e <= map.len())
            })
            .ok_or_else(|| Error::bad_data("truncated block read"))?;
        let raw = &map[start..start + n + BLOCK_TRAILER_SIZE];
        return Ok(match decode_block(raw, n, verify_checksums)? {
            Some(decompressed) => RawBlock::Owned(decompressed),
            None => RawBlock::Mapped {
                start,
                contents: &raw[..n],
            },
        });
    }
    // A recycled buffer: the read must fill it (checked), so none of its
    // old bytes are used.
    let mut buf = BlockBuf::with_len(n + BLOCK_TRAILER_SIZE);
    let got = file.read_at(offset, buf.as_mut_vec())?;
    if got != buf.len() {
        return Err(Error::bad_data("truncated block read"));
    }
    Ok(RawBlock::Owned(
        match decode_block(&buf, n, verify_checksums)? {
            // `buf` returns to the spares here, for the next block.
            Some(decompressed) => decompressed,
            None => {
                buf.as_mut_vec().truncate(n);
                buf
            }
        },
    ))
}

/// Checks the trailer of `raw` (a block's `n` bytes of contents and its
/// trailer) and decompresses the contents; `None` means they are stored
/// uncompressed and are `raw[..n]` as they are.
fn decode_block(raw: &[u8], n: usize, verify_checksums: bool) -> Result<Option<BlockBuf>> {
    let ctype = raw[n];
    if verify_checksums {
        let stored = decode_fixed32(&raw[n + 1..]).unwrap_or(0);
        let actual = crc::extend(crc::value(&raw[..n]), &[ctype]);
        if crc::unmask(stored) != actual {
            return Err(Error::bad_data("block checksum mismatch"));
        }
    }
    match CompressionType::from_u8(ctype) {
        Some(CompressionType::None) => Ok(None),
        Some(t) => {
            // The decompressor walks the input once, front to back; a
            // reverse scan reads the mapped file's blocks in descending
            // order, which the hardware prefetcher does not follow.
            prefetch(&raw[..n]);
            compression::decompress(t, &raw[..n])
        }
        None => Err(Error::bad_data(format!("bad block type {ctype}"))),
    }
}

/// Reads and parses the block at `handle`; see [`read_block_contents`].
pub fn read_block(
    file: &dyn RandomAccessFile,
    file_size: u64,
    handle: &BlockHandle,
    verify_checksums: bool,
) -> Result<Block> {
    Block::new(read_block_contents(
        file,
        file_size,
        handle,
        verify_checksums,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Bytes(Vec<u8>);
    impl RandomAccessFile for Bytes {
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
            let start = (offset as usize).min(self.0.len());
            let n = buf.len().min(self.0.len() - start);
            buf[..n].copy_from_slice(&self.0[start..start + n]);
            Ok(n)
        }
    }

    /// The same bytes, offered as a memory mapping.
    struct Mapped(Vec<u8>);
    impl RandomAccessFile for Mapped {
        fn read_at(&self, _: u64, _: &mut [u8]) -> Result<usize> {
            panic!("a mapped file is read through its slice");
        }
        fn mapped(&self) -> Option<&[u8]> {
            Some(&self.0)
        }
    }

    /// Reads the block both with positional reads and from a mapping, checks
    /// that both give the same answer, and returns it.
    fn read_both(bytes: Vec<u8>, size: u64, h: &BlockHandle, verify: bool) -> Result<Vec<u8>> {
        let by_read = read_block_contents(&Bytes(bytes.clone()), size, h, verify);
        let by_map = read_block_contents(&Mapped(bytes), size, h, verify);
        match (&by_read, &by_map) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            _ => panic!("read {by_read:?} but mapped {by_map:?}"),
        }
        by_read
    }

    #[test]
    fn handle_round_trip_and_truncation() {
        for (o, s) in [(0u64, 0u64), (1, 2), (1 << 40, 300), (u64::MAX, u64::MAX)] {
            let mut buf = Vec::new();
            BlockHandle::new(o, s).encode_to(&mut buf);
            assert!(buf.len() <= MAX_ENCODED_HANDLE_LENGTH);
            let mut src = &buf[..];
            assert_eq!(
                BlockHandle::decode_from(&mut src).unwrap(),
                BlockHandle::new(o, s)
            );
            assert!(src.is_empty());
            for cut in 0..buf.len() {
                let mut short = &buf[..cut];
                assert!(BlockHandle::decode_from(&mut short)
                    .unwrap_err()
                    .is_corruption());
                assert_eq!(short.len(), cut, "cursor not advanced on failure");
            }
        }
    }

    #[test]
    fn footer_layout() {
        let f = Footer {
            metaindex_handle: BlockHandle::new(100, 20),
            index_handle: BlockHandle::new(125, 300),
        };
        let mut buf = Vec::new();
        f.encode_to(&mut buf);
        assert_eq!(buf.len(), FOOTER_ENCODED_LENGTH);
        assert_eq!(&buf[..6], &[100, 20, 125, 0xac, 0x02, 0]);
        assert!(buf[6..40].iter().all(|&b| b == 0));
        assert_eq!(
            &buf[40..],
            &[0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb]
        );
        assert_eq!(Footer::decode(&buf).unwrap(), f);
        let mut bad = buf.clone();
        bad[47] ^= 1;
        assert!(Footer::decode(&bad).unwrap_err().is_corruption());
        assert!(Footer::decode(&buf[1..]).unwrap_err().is_corruption());
    }

    fn stored(contents: &[u8], t: CompressionType) -> Vec<u8> {
        let mut f = contents.to_vec();
        f.extend_from_slice(&block_trailer(contents, t));
        f
    }

    #[test]
    fn reads_plain_and_snappy_blocks() {
        let plain: Vec<u8> = (0..200u8).collect();
        let f = Bytes(stored(&plain, CompressionType::None));
        let h = BlockHandle::new(0, plain.len() as u64);
        assert_eq!(
            read_both(f.0.clone(), f.0.len() as u64, &h, true).unwrap(),
            plain
        );

        let original = b"abcabcabcabcabcabcabcabcabcabcabcabcabcabc".repeat(10);
        let compressed = snap::raw::Encoder::new().compress_vec(&original).unwrap();
        let f = Bytes(stored(&compressed, CompressionType::Snappy));
        let h = BlockHandle::new(0, compressed.len() as u64);
        assert_eq!(
            read_both(f.0.clone(), f.0.len() as u64, &h, true).unwrap(),
            original
        );
    }

    #[test]
    fn reads_zstd_and_lz4_blocks() {
        let original = b"abcabcabcabcabcabcabcabcabcabcabcabcabcabc".repeat(10);
        for t in [CompressionType::Zstd, CompressionType::Lz4] {
            let mut c = super::compression::BlockCompressor::new(t, 1);
            let (compressed, ct) = c.compress(&original);
            assert_eq!(ct, t);
            let f = stored(compressed, t);
            assert_eq!(f[compressed.len()], t as u8);
            let h = BlockHandle::new(0, compressed.len() as u64);
            assert_eq!(
                read_both(f.clone(), f.len() as u64, &h, true).unwrap(),
                original
            );
            // The type byte is covered by the checksum.
            let mut other = f.clone();
            other[compressed.len()] = CompressionType::Snappy as u8;
            let e = read_both(other.clone(), f.len() as u64, &h, true).unwrap_err();
            assert!(e.to_string().contains("checksum"), "{e}");
            // Read as another codec without the check, it is corrupt.
            assert!(read_both(other, f.len() as u64, &h, false)
                .unwrap_err()
                .is_corruption());
        }
    }

    #[test]
    fn rejects_bad_blocks() {
        let plain = b"some block contents".to_vec();
        let mut bytes = stored(&plain, CompressionType::None);
        let size = bytes.len() as u64;
        let h = BlockHandle::new(0, plain.len() as u64);
        // Handles past the end, or absurdly large, are refused before reading.
        for bad in [
            BlockHandle::new(1, plain.len() as u64),
            BlockHandle::new(0, u64::MAX),
            BlockHandle::new(u64::MAX, 1),
        ] {
            let e = read_both(bytes.clone(), size, &bad, true).unwrap_err();
            assert!(e.is_corruption(), "{e}");
        }
        // A file shorter than it claims.
        let e = read_both(bytes[..10].to_vec(), size, &h, false).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
        // A flipped content byte fails the checksum only when it is checked.
        bytes[3] ^= 0x10;
        let e = read_both(bytes.clone(), size, &h, true).unwrap_err();
        assert!(e.to_string().contains("checksum"), "{e}");
        assert!(read_both(bytes.clone(), size, &h, false).is_ok());
        // Unknown compression types, 3 (unused) among them.
        for t in [3u8, 5, 9, 0xff] {
            let mut typed = stored(&plain, CompressionType::None);
            typed[plain.len()] = t;
            let e = read_both(typed, size, &h, false).unwrap_err();
            assert!(
                e.to_string().contains(&format!("bad block type {t}")),
                "{e}"
            );
        }
    }

    #[test]
    fn recycled_buffers_never_show_old_bytes() {
        // Blocks of each kind read one after another on this thread: each
        // reuses the buffer of the one dropped before it, and must read back
        // as itself, never with bytes of its predecessor.
        let mut blocks = Vec::new();
        for (i, n) in [5000usize, 300, 4000, 4100, 17].into_iter().enumerate() {
            let mut raw: Vec<u8> = (0..n).map(|j| (j * 7 + i * 31) as u8 % 13).collect();
            // No restart points: a block that parses.
            raw[n - 4..].fill(0);
            for t in CompressionType::ALL {
                let mut c = super::compression::BlockCompressor::new(t, 1);
                let (stored_bytes, ct) = c.compress(&raw);
                blocks.push((raw.clone(), stored(stored_bytes, ct), stored_bytes.len()));
            }
        }
        for _ in 0..2 {
            for (raw, file, n) in &blocks {
                let h = BlockHandle::new(0, *n as u64);
                let got = read_both(file.clone(), file.len() as u64, &h, true).unwrap();
                assert_eq!(&got, raw);
                // Shared blocks too, which keep their buffer until dropped.
                let shared: Arc<dyn RandomAccessFile> = Arc::new(Bytes(file.clone()));
                let (block, _) = read_block_shared(&shared, file.len() as u64, &h, true).unwrap();
                assert_eq!(block.data(), &raw[..]);
            }
        }
        // A snappy block that decodes to fewer bytes than its header claims
        // is refused, rather than padded with a spare's old bytes.
        let long = vec![9u8; 6000];
        let compressed = snap::raw::Encoder::new().compress_vec(&long).unwrap();
        let f = stored(&compressed, CompressionType::Snappy);
        let h = BlockHandle::new(0, compressed.len() as u64);
        drop(read_both(f.clone(), f.len() as u64, &h, true).unwrap());
        let mut short = Vec::new();
        put_varint64(&mut short, 5000);
        short.extend_from_slice(&compressed[2..]);
        let f = stored(&short, CompressionType::Snappy);
        let h = BlockHandle::new(0, short.len() as u64);
        assert!(read_both(f.clone(), f.len() as u64, &h, true)
            .unwrap_err()
            .is_corruption());
        // A positional read that comes up short is refused the same way.
        let plain = stored(&long, CompressionType::None);
        let h = BlockHandle::new(0, long.len() as u64);
        drop(read_block_contents(&Bytes(plain.clone()), plain.len() as u64, &h, true).unwrap());
        let e = read_block_contents(
            &Bytes(plain[..4000].to_vec()),
            plain.len() as u64,
            &h,
            false,
        )
        .unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
    }

    #[test]
    fn rejects_impossible_snappy_lengths() {
        // A 3-byte "snappy block" claiming 2^31 bytes of output.
        let mut block = Vec::new();
        put_varint64(&mut block, 1 << 31);
        let f = Bytes(stored(&block, CompressionType::Snappy));
        let h = BlockHandle::new(0, block.len() as u64);
        let e = read_both(f.0.clone(), f.0.len() as u64, &h, true).unwrap_err();
        assert!(e.to_string().contains("impossible"), "{e}");
        // A garbage body is refused without a panic.
        let garbage = [10u8, 0xff, 0xff, 0xff, 0xff];
        let f = Bytes(stored(&garbage, CompressionType::Snappy));
        let h = BlockHandle::new(0, garbage.len() as u64);
        assert!(read_both(f.0.clone(), f.0.len() as u64, &h, true)
            .unwrap_err()
            .is_corruption());
    }
}
