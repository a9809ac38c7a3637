//! The codecs behind a block trailer's type byte.
//!
//! | type | name   | stored bytes                                              | read by |
//! |------|--------|-----------------------------------------------------------|---------|
//! | 0    | none   | the block contents                                        | every LevelDB |
//! | 1    | snappy | one raw snappy block (varint length + elements)           | every LevelDB |
//! | 2    | zstd   | one Zstandard frame with its content size in its header   | LevelDB after 1.23 built with zstd |
//! | 4    | lz4    | varint32 uncompressed length + one raw LZ4 block          | Shale only |
//!
//! Types 2 and 4 are refused by LevelDB 1.23 with its "bad block type"
//! corruption, so a table that holds them is never misread there. Type 4 is
//! RocksDB's number for LZ4, and the framing is RocksDB's for LZ4 blocks of
//! `format_version` 2 and later; the rest of a RocksDB table differs.
//!
//! A block is stored compressed only when that saves at least an eighth of
//! its size, as LevelDB decides; otherwise it is stored as type 0.
//!
//! Decoding never trusts the stored bytes: the uncompressed length a block
//! claims is bounded by the most its compressed bytes can produce under its
//! codec (for zstd, by what the frame's block headers allow) and by 4 GiB,
//! the largest block a table can address, before anything is allocated,
//! and the decoded length must equal the claim.

use std::cell::RefCell;
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::util::coding::{get_varint32, put_varint32};

use super::buffers::BlockBuf;

/// How table blocks are compressed. The numbers are the on-disk block types.
///
/// `None` and `Snappy` are read by every LevelDB; `Zstd` (type 2) is written
/// byte for byte as LevelDB writes it since zstd support came after 1.23, and
/// is refused by LevelDB 1.23; `Lz4` (type 4) is Shale's own and refused by
/// every LevelDB.
///
/// ```
/// let options = shale::Options {
///     compression: shale::CompressionType::None,
///     ..Default::default()
/// };
/// assert_eq!(shale::Options::default().compression, shale::CompressionType::Snappy);
/// assert_eq!(shale::CompressionType::Zstd as u8, 2);
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CompressionType {
    /// Blocks are stored as they are.
    None = 0,
    /// Snappy (LevelDB's default).
    Snappy = 1,
    /// Zstandard, one frame per block with its content size, at
    /// [`Options::zstd_compression_level`](crate::Options::zstd_compression_level)
    /// (LevelDB's type 2).
    Zstd = 2,
    /// LZ4 block format behind a varint32 uncompressed length (Shale's type 4).
    Lz4 = 4,
}

impl CompressionType {
    /// Every type, in on-disk number order.
    ///
    /// ```
    /// let names: Vec<&str> = shale::CompressionType::ALL.iter().map(|t| t.name()).collect();
    /// assert_eq!(names, ["none", "snappy", "zstd", "lz4"]);
    /// ```
    pub const ALL: [CompressionType; 4] = [
        CompressionType::None,
        CompressionType::Snappy,
        CompressionType::Zstd,
        CompressionType::Lz4,
    ];

    /// Decodes an on-disk block type byte.
    pub(crate) fn from_u8(b: u8) -> Option<CompressionType> {
        match b {
            0 => Some(CompressionType::None),
            1 => Some(CompressionType::Snappy),
            2 => Some(CompressionType::Zstd),
            4 => Some(CompressionType::Lz4),
            _ => None,
        }
    }

    /// The lower-case name: `none`, `snappy`, `zstd` or `lz4`, as
    /// [`FromStr`] reads it.
    ///
    /// ```
    /// use shale::CompressionType;
    /// assert_eq!(CompressionType::Lz4.name(), "lz4");
    /// assert_eq!("zstd".parse::<CompressionType>().unwrap(), CompressionType::Zstd);
    /// assert!("gzip".parse::<CompressionType>().is_err());
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            CompressionType::None => "none",
            CompressionType::Snappy => "snappy",
            CompressionType::Zstd => "zstd",
            CompressionType::Lz4 => "lz4",
        }
    }
}

impl fmt::Display for CompressionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CompressionType {
    type Err = Error;

    fn from_str(s: &str) -> Result<CompressionType> {
        CompressionType::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "unknown compression type '{s}' (expected none, snappy, zstd or lz4)"
                ))
            })
    }
}

/// The largest block a table can address: `Block` offsets are 32-bit.
const MAX_BLOCK_LEN: u64 = u32::MAX as u64;

/// Snappy's densest element (a 3-byte copy of up to 64 bytes) expands by at most
/// this factor, so no valid snappy block decompresses to more than this many
/// times its compressed size.
const SNAPPY_MAX_EXPANSION: u64 = 22;

/// An LZ4 sequence costs at least 3 bytes (token and match offset) for a
/// match of up to 19 bytes, and one more byte for each further 255 bytes of
/// match length; a literal costs at least its own byte. So no LZ4 block
/// decompresses to more than 255 times its size.
const LZ4_MAX_EXPANSION: u64 = 255;

/// The first four bytes of every Zstandard frame (0xFD2FB528, little-endian).
pub const ZSTD_MAGIC: [u8; 4] = 0xFD2F_B528u32.to_le_bytes();

/// A Zstandard block decodes to at most 128 KiB.
const ZSTD_BLOCK_MAX_CONTENT: u64 = 128 << 10;

/// The first `len` bytes of `out`, which grows to hold them, zeroing only
/// the bytes it adds.
fn grown(out: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if out.len() < len {
        out.resize(len, 0);
    }
    &mut out[..len]
}

/// Compresses blocks for a table writer, keeping its codec state and output
/// buffer between blocks.
pub(crate) struct BlockCompressor {
    ctype: CompressionType,
    zstd_level: i32,
    snappy: snap::raw::Encoder,
    /// Made on the first zstd block.
    zstd: Option<zstd::bulk::Compressor<'static>>,
    /// The output buffer; only `out[..out_len]` is the last block's. It is
    /// never shortened, so a block no larger than the ones before reuses it
    /// without zeroing it again (the codecs write into an initialized slice).
    out: Vec<u8>,
    out_len: usize,
}

impl BlockCompressor {
    /// A compressor writing `ctype` blocks; `zstd_level` is used for zstd.
    pub(crate) fn new(ctype: CompressionType, zstd_level: i32) -> BlockCompressor {
        BlockCompressor {
            ctype,
            zstd_level,
            snappy: snap::raw::Encoder::new(),
            zstd: None,
            out: Vec::new(),
            out_len: 0,
        }
    }

    /// The bytes to store for `raw` and their type: compressed when the
    /// codec succeeds and saves at least an eighth, `raw` as it is otherwise.
    pub(crate) fn compress<'a>(&'a mut self, raw: &'a [u8]) -> (&'a [u8], CompressionType) {
        let ok = match self.ctype {
            CompressionType::None => false,
            CompressionType::Snappy => self.snappy_compress(raw),
            CompressionType::Zstd => self.zstd_compress(raw),
            CompressionType::Lz4 => self.lz4_compress(raw),
        };
        if ok && self.out_len < raw.len() - raw.len() / 8 {
            (&self.out[..self.out_len], self.ctype)
        } else {
            (raw, CompressionType::None)
        }
    }

    fn snappy_compress(&mut self, raw: &[u8]) -> bool {
        let max = snap::raw::max_compress_len(raw.len());
        if max == 0 {
            return false;
        }
        let out = grown(&mut self.out, max);
        match self.snappy.compress(raw, out) {
            Ok(n) => {
                self.out_len = n;
                true
            }
            Err(_) => false,
        }
    }

    /// One frame with the content size in its header, as `ZSTD_compress2`
    /// writes it at the configured level.
    fn zstd_compress(&mut self, raw: &[u8]) -> bool {
        if self.zstd.is_none() {
            self.zstd = zstd::bulk::Compressor::new(self.zstd_level).ok();
        }
        let Some(z) = &mut self.zstd else {
            return false;
        };
        self.out.clear();
        self.out.reserve(zstd::zstd_safe::compress_bound(raw.len()));
        let ok = z.compress_to_buffer(raw, &mut self.out).is_ok();
        self.out_len = self.out.len();
        ok
    }

    fn lz4_compress(&mut self, raw: &[u8]) -> bool {
        let Ok(len) = u32::try_from(raw.len()) else {
            return false;
        };
        let mut header = Vec::with_capacity(5);
        put_varint32(&mut header, len);
        let start = header.len();
        let out = grown(
            &mut self.out,
            start + lz4_flex::block::get_maximum_output_size(raw.len()),
        );
        out[..start].copy_from_slice(&header);
        match lz4_flex::block::compress_into(raw, &mut out[start..]) {
            Ok(n) => {
                self.out_len = start + n;
                true
            }
            Err(_) => false,
        }
    }
}

/// Decompresses the stored bytes of a block of type `ctype`. `None` means
/// the block is stored uncompressed: the contents are `data` as it is.
///
/// Errors are [`Error::Corruption`] without a file name.
/// The output is in a recycled [`BlockBuf`] (see [`super::buffers`]).
pub(crate) fn decompress(ctype: CompressionType, data: &[u8]) -> Result<Option<BlockBuf>> {
    match ctype {
        CompressionType::None => Ok(None),
        CompressionType::Snappy => snappy_decompress(data).map(Some),
        CompressionType::Zstd => zstd_decompress(data).map(Some),
        CompressionType::Lz4 => lz4_decompress(data).map(Some),
    }
}

fn impossible_length(codec: &str, n: usize, len: u64) -> Error {
    Error::bad_data(format!(
        "{codec} block of {n} bytes claims an impossible uncompressed length {len}"
    ))
}

fn snappy_decompress(compressed: &[u8]) -> Result<BlockBuf> {
    let n = compressed.len();
    let len = snap::raw::decompress_len(compressed)
        .map_err(|_| Error::bad_data("corrupted snappy compressed block length"))?;
    let limit = (n as u64)
        .saturating_mul(SNAPPY_MAX_EXPANSION)
        .min(MAX_BLOCK_LEN);
    if len as u64 > limit {
        return Err(impossible_length("snappy", n, len as u64));
    }
    // The decoder checks that it wrote exactly `len` bytes: none of the
    // recycled buffer's old bytes survive a successful decode.
    let mut out = BlockBuf::with_len(len);
    match snap::raw::Decoder::new().decompress(compressed, out.as_mut_vec()) {
        Ok(written) if written == len => Ok(out),
        _ => Err(Error::bad_data(
            "corrupted snappy compressed block contents",
        )),
    }
}

thread_local! {
    /// A decompression context per thread: making one costs an allocation
    /// of about 100 KiB, too much for every block read.
    static ZSTD_DCTX: RefCell<Option<zstd::zstd_safe::DCtx<'static>>> = const { RefCell::new(None) };
}

/// Decodes a block that must be exactly one Zstandard frame whose header
/// gives its content size.
fn zstd_decompress(data: &[u8]) -> Result<BlockBuf> {
    use zstd::zstd_safe;
    let n = data.len();
    if !data.starts_with(&ZSTD_MAGIC) {
        return Err(Error::bad_data(format!(
            "zstd block of {n} bytes is not a zstd frame (bad magic number)"
        )));
    }
    let claimed = match zstd_safe::get_frame_content_size(data) {
        Ok(Some(len)) => len,
        Ok(None) => {
            return Err(Error::bad_data(format!(
                "zstd block of {n} bytes: the frame header has no content size"
            )))
        }
        Err(_) => {
            return Err(Error::bad_data(format!(
                "zstd block of {n} bytes: bad frame header"
            )))
        }
    };
    match zstd_safe::find_frame_compressed_size(data) {
        Ok(len) if len == n => {}
        Ok(len) => {
            return Err(Error::bad_data(format!(
                "zstd block of {n} bytes holds a frame of {len} bytes and trailing bytes"
            )))
        }
        Err(code) => {
            return Err(Error::bad_data(format!(
                "zstd block of {n} bytes: truncated or damaged frame ({})",
                zstd_safe::get_error_name(code)
            )))
        }
    }
    let limit = zstd_content_bound(data)
        .ok_or_else(|| Error::bad_data(format!("zstd block of {n} bytes: bad frame structure")))?
        .min(MAX_BLOCK_LEN);
    if claimed == 0 || claimed > limit {
        return Err(impossible_length("zstd", n, claimed));
    }
    // `claimed` is at most 4 GiB, checked above.
    let len = claimed as usize;
    // Exactly `len` bytes of room: a frame that decodes to more fails the
    // same way whatever spare capacity a recycled buffer has.
    let mut out = BlockBuf::with_len(len);
    let result = ZSTD_DCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = zstd_safe::DCtx::try_create();
        }
        match slot.as_mut() {
            Some(dctx) => Ok(dctx.decompress(&mut out.as_mut_vec()[..], data)),
            None => Err(Error::io(
                "",
                std::io::Error::new(
                    std::io::ErrorKind::OutOfMemory,
                    "cannot make a zstd decompression context",
                ),
            )),
        }
    })?;
    match result {
        Ok(written) if written == len && out.len() == len => Ok(out),
        Ok(written) => Err(Error::bad_data(format!(
            "zstd block of {n} bytes claims {claimed} bytes but decodes to {written}"
        ))),
        Err(code) => Err(Error::bad_data(format!(
            "corrupted zstd compressed block contents ({})",
            zstd_safe::get_error_name(code)
        ))),
    }
}

/// The most the single Zstandard frame `data` can decode to, from its
/// block headers (RFC 8878, section 3.1.1): a raw or RLE block decodes to
/// exactly its stated size, a compressed block to at most 128 KiB. `None`
/// if the headers do not lead exactly to the end of `data`.
///
/// libzstd offers no such bound for a frame that states its content size
/// (`ZSTD_decompressBound` returns the stated size), and the frame's size
/// alone allows over 40,000 times as much; this walk over the headers,
/// a few steps for a table block, keeps the allocation to what the frame
/// can really produce.
fn zstd_content_bound(data: &[u8]) -> Option<u64> {
    let descriptor = *data.get(ZSTD_MAGIC.len())?;
    let single_segment = descriptor & 0x20 != 0;
    let checksum = descriptor & 0x04 != 0;
    let dict_id_len = [0, 1, 2, 4][usize::from(descriptor & 0x03)];
    let fcs_len = match descriptor >> 6 {
        0 if single_segment => 1,
        0 => 0,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let window_len = usize::from(!single_segment);
    let mut at = ZSTD_MAGIC.len() + 1 + window_len + dict_id_len + fcs_len;
    let mut bound = 0u64;
    loop {
        let header = data.get(at..at + 3)?;
        let header = u32::from_le_bytes([header[0], header[1], header[2], 0]);
        at += 3;
        let size = u64::from(header >> 3);
        let (stored, decoded) = match (header >> 1) & 3 {
            0 => (size, size),
            1 => (1, size),
            2 => (size, ZSTD_BLOCK_MAX_CONTENT),
            _ => return None,
        };
        bound = bound.saturating_add(decoded);
        at = at.checked_add(usize::try_from(stored).ok()?)?;
        if header & 1 != 0 {
            break;
        }
    }
    if checksum {
        at = at.checked_add(4)?;
    }
    (at == data.len()).then_some(bound)
}

/// Decodes a varint32 uncompressed length followed by one LZ4 block.
fn lz4_decompress(data: &[u8]) -> Result<BlockBuf> {
    let n = data.len();
    let mut body = data;
    let claimed = get_varint32(&mut body).ok_or_else(|| {
        Error::bad_data(format!(
            "lz4 block of {n} bytes: bad uncompressed length prefix"
        ))
    })?;
    let limit = (body.len() as u64)
        .saturating_mul(LZ4_MAX_EXPANSION)
        .min(MAX_BLOCK_LEN);
    if claimed == 0 || claimed as u64 > limit {
        return Err(impossible_length("lz4", n, claimed as u64));
    }
    let len = claimed as usize;
    // Checked below: exactly `len` bytes written.
    let mut out = BlockBuf::with_len(len);
    match lz4_flex::block::decompress_into(body, out.as_mut_vec()) {
        Ok(written) if written == len => Ok(out),
        Ok(written) => Err(Error::bad_data(format!(
            "lz4 block of {n} bytes claims {claimed} bytes but decodes to {written}"
        ))),
        Err(e) => Err(Error::bad_data(format!(
            "corrupted lz4 compressed block contents ({e})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sstable::block_builder::BlockBuilder;
    use crate::util::coding::put_varint64;

    /// A finished data block of `n` entries with repetitive keys and values.
    fn block_contents(n: usize) -> Vec<u8> {
        let mut b = BlockBuilder::new(16);
        for i in 0..n {
            b.add(
                format!("key{i:06}").as_bytes(),
                format!("value {} of entry {i}", i % 7).as_bytes(),
            );
        }
        b.finish().to_vec()
    }

    fn compressed(ctype: CompressionType, level: i32, raw: &[u8]) -> Vec<u8> {
        let mut c = BlockCompressor::new(ctype, level);
        let (stored, t) = c.compress(raw);
        assert_eq!(t, ctype, "{ctype} did not save an eighth");
        stored.to_vec()
    }

    fn assert_corrupt(ctype: CompressionType, data: &[u8], what: &str) -> String {
        match decompress(ctype, data) {
            Err(e) => {
                assert!(e.is_corruption(), "{ctype}, {what}: {e}");
                e.to_string()
            }
            Ok(got) => panic!("{ctype}, {what}: decoded {got:?}"),
        }
    }

    #[test]
    fn a_zstd_frame_longer_than_it_claims_fails_alike_in_any_buffer() {
        // A fuzzer's find: a frame whose data decodes past its stated
        // content size. Decoded into a recycled buffer with room to spare
        // it failed with another error than into one of the stated size.
        let input = include_bytes!(
            "../../../../fuzz/corpus/compressed_block/regression-zstd-overlong-frame"
        );
        let stored = &input[1..];
        let claimed = zstd::zstd_safe::get_frame_content_size(stored)
            .unwrap()
            .unwrap() as usize;
        let mut errors = Vec::new();
        for room in [claimed, claimed + 64, 1 << 16] {
            // The next decode reuses this spare buffer of `room` bytes.
            drop(BlockBuf::from_vec(Vec::with_capacity(room)));
            let e = zstd_decompress(stored).map(|_| ()).unwrap_err();
            assert!(e.is_corruption(), "{e}");
            errors.push(e.to_string());
        }
        assert!(errors.iter().all(|e| *e == errors[0]), "{errors:?}");
    }

    #[test]
    fn one_compressor_round_trips_blocks_of_any_order_of_sizes() {
        // The output buffer is reused without being cleared: a smaller
        // block after a larger one must not carry the larger one's bytes.
        let block = |n: usize, seed: u8| -> Vec<u8> {
            (0..n)
                .map(|i| b"abcdefgh"[(i / 7 + seed as usize) % 8])
                .collect()
        };
        for ctype in [
            CompressionType::Snappy,
            CompressionType::Zstd,
            CompressionType::Lz4,
        ] {
            let mut c = BlockCompressor::new(ctype, 1);
            for (n, seed) in [
                (40_000, 1),
                (500, 2),
                (9_000, 3),
                (64, 4),
                (70_000, 5),
                (2_000, 6),
            ] {
                let raw = block(n, seed);
                let (stored, t) = c.compress(&raw);
                let stored = stored.to_vec();
                assert_eq!(t, ctype, "{ctype}, {n} bytes");
                let back = decompress(t, &stored).unwrap().expect("compressed");
                assert_eq!(&back[..], &raw[..], "{ctype}, {n} bytes");
            }
        }
    }

    #[test]
    fn names_parse_back() {
        for t in CompressionType::ALL {
            assert_eq!(t.name().parse::<CompressionType>().unwrap(), t);
            assert_eq!(
                t.to_string()
                    .to_uppercase()
                    .parse::<CompressionType>()
                    .unwrap(),
                t
            );
            assert_eq!(CompressionType::from_u8(t as u8), Some(t));
        }
        for b in [3u8, 5, 7, 0xff] {
            assert_eq!(CompressionType::from_u8(b), None);
        }
        assert!(matches!(
            "zlib".parse::<CompressionType>(),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn every_type_round_trips() {
        for n in [1, 10, 300, 5000] {
            let raw = block_contents(n);
            for t in CompressionType::ALL {
                for level in [-3, 1, 9] {
                    let mut c = BlockCompressor::new(t, level);
                    let (stored, st) = c.compress(&raw);
                    let stored = stored.to_vec();
                    if t == CompressionType::None {
                        assert_eq!((stored.as_slice(), st), (raw.as_slice(), t));
                        continue;
                    }
                    if n > 1 {
                        assert_eq!(st, t, "{n} entries compress with {t}");
                        assert!(stored.len() < raw.len() - raw.len() / 8);
                    }
                    let got = decompress(st, &stored).unwrap();
                    assert_eq!(got.as_deref().unwrap_or(&stored), raw, "{t}, {n} entries");
                }
            }
        }
    }

    #[test]
    fn incompressible_blocks_are_stored_plain() {
        let mut x = 0x1234_5678u32;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        for t in CompressionType::ALL {
            let mut c = BlockCompressor::new(t, 1);
            assert_eq!(
                c.compress(&noise),
                (noise.as_slice(), CompressionType::None)
            );
        }
    }

    /// A zstd block is one standard frame: the magic number, the content
    /// size in the header, nothing after the frame, and the same bytes as
    /// `ZSTD_compress` at the configured level, as LevelDB writes them.
    #[test]
    fn zstd_blocks_are_standard_frames() {
        for n in [10, 40, 400, 4000] {
            let raw = block_contents(n);
            for level in [1, 3, 19, -5] {
                let stored = compressed(CompressionType::Zstd, level, &raw);
                assert_eq!(stored[..4], [0x28, 0xb5, 0x2f, 0xfd], "magic 0xFD2FB528");
                assert_eq!(
                    zstd::zstd_safe::get_frame_content_size(&stored).unwrap(),
                    Some(raw.len() as u64)
                );
                assert_eq!(
                    zstd::zstd_safe::find_frame_compressed_size(&stored).unwrap(),
                    stored.len()
                );
                assert_eq!(zstd::decode_all(stored.as_slice()).unwrap(), raw);
                let mut simple = Vec::with_capacity(zstd::zstd_safe::compress_bound(raw.len()));
                zstd::zstd_safe::compress(&mut simple, &raw, level).unwrap();
                assert_eq!(stored, simple, "{n} entries at level {level}");
            }
        }
    }

    #[test]
    fn damaged_zstd_frames_are_corrupt() {
        let raw = block_contents(20);
        let good = compressed(CompressionType::Zstd, 1, &raw);
        let zstd = CompressionType::Zstd;

        let mut bad = good.clone();
        bad[0] ^= 1;
        assert!(assert_corrupt(zstd, &bad, "bad magic").contains("magic"));
        // A skippable frame is not a block either.
        let mut skippable = vec![0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4];
        assert!(assert_corrupt(zstd, &skippable, "skippable frame").contains("magic"));
        skippable.extend_from_slice(&good);
        assert_corrupt(zstd, &skippable, "skippable frame first");

        // A frame without its content size.
        let mut cctx = zstd::zstd_safe::CCtx::create();
        cctx.set_parameter(zstd::zstd_safe::CParameter::ContentSizeFlag(false))
            .unwrap();
        let mut unsized_frame = Vec::with_capacity(zstd::zstd_safe::compress_bound(raw.len()));
        cctx.compress2(&mut unsized_frame, &raw).unwrap();
        assert_eq!(zstd::decode_all(unsized_frame.as_slice()).unwrap(), raw);
        assert!(assert_corrupt(zstd, &unsized_frame, "no content size").contains("no content size"));

        // Content sizes that disagree with the frame's contents. The header
        // is the magic, the descriptor (single segment, 2-byte size field)
        // and the size less 256.
        assert_eq!(good[4] & 0xe0, 0x60, "single segment, 2-byte content size");
        let size_at = 5;
        let stated = u16::from_le_bytes([good[size_at], good[size_at + 1]]) as usize + 256;
        assert_eq!(stated, raw.len());
        for delta in [-1i32, 1, 100] {
            let mut bad = good.clone();
            let v = (stated as i32 + delta - 256) as u16;
            bad[size_at..size_at + 2].copy_from_slice(&v.to_le_bytes());
            assert_corrupt(zstd, &bad, &format!("content size {delta:+}"));
        }

        // Truncated frames, and a frame followed by more bytes.
        for cut in 0..good.len() {
            assert_corrupt(zstd, &good[..cut], &format!("cut at {cut}"));
        }
        let mut longer = good.clone();
        longer.extend_from_slice(&good);
        assert!(assert_corrupt(zstd, &longer, "two frames").contains("trailing"));

        // Huge or empty claimed sizes, refused before any allocation: an
        // 8-byte content size field and one empty last raw block.
        for claim in [1u64 << 40, u64::MAX - 2, 1 << 32, 1 << 20, 0] {
            let mut frame = ZSTD_MAGIC.to_vec();
            frame.push(0xe0);
            frame.extend_from_slice(&claim.to_le_bytes());
            frame.extend_from_slice(&[1, 0, 0]);
            let e = assert_corrupt(zstd, &frame, &format!("claim {claim}"));
            assert!(e.contains("impossible"), "{e}");
        }
        // The bound follows the block headers: an RLE block of 1000 bytes
        // cannot be claimed as 1001, one compressed block as over 128 KiB.
        let rle = |claim: u16, size: u32| {
            let mut frame = ZSTD_MAGIC.to_vec();
            frame.push(0x60);
            frame.extend_from_slice(&(claim - 256).to_le_bytes());
            frame.extend_from_slice(&((size << 3) | (1 << 1) | 1).to_le_bytes()[..3]);
            frame.push(b'x');
            frame
        };
        assert!(assert_corrupt(zstd, &rle(1001, 1000), "RLE over").contains("impossible"));
        assert_eq!(
            decompress(zstd, &rle(1000, 1000))
                .unwrap()
                .unwrap()
                .into_vec(),
            vec![b'x'; 1000]
        );
        let mut one_block = good.clone();
        one_block[4] = 0xa0; // single segment, 4-byte content size
        one_block.splice(5..7, ((128u32 << 10) + 1).to_le_bytes());
        assert!(assert_corrupt(zstd, &one_block, "one block over").contains("impossible"));
        // Reserved block types and headers that run past the end.
        let mut reserved = rle(1000, 1000);
        reserved[7] |= 0b110;
        assert_corrupt(zstd, &reserved, "reserved");
        assert_eq!(zstd_content_bound(&reserved), None);
        // A claim within the bound that the blocks do not fill.
        let mut frame = ZSTD_MAGIC.to_vec();
        frame.push(0x60);
        frame.extend_from_slice(&(1000u16 - 256).to_le_bytes());
        // Last RLE block of 999 bytes of 'x'.
        let header = (999u32 << 3) | (1 << 1) | 1;
        frame.extend_from_slice(&header.to_le_bytes()[..3]);
        frame.push(b'x');
        assert_corrupt(zstd, &frame, "RLE block one byte short");
        let header = (1000u32 << 3) | (1 << 1) | 1;
        let n = frame.len();
        frame[n - 4..n - 1].copy_from_slice(&header.to_le_bytes()[..3]);
        assert_eq!(
            decompress(zstd, &frame).unwrap().unwrap().into_vec(),
            vec![b'x'; 1000]
        );

        // Any single damaged byte is refused or decodes to the claimed size.
        for i in 0..good.len() {
            for flip in [1u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[i] ^= flip;
                if let Ok(Some(got)) = decompress(zstd, &bad) {
                    assert_eq!(
                        Some(got.len() as u64),
                        zstd::zstd_safe::get_frame_content_size(&bad).unwrap()
                    );
                }
            }
        }
    }

    /// Frames of several blocks, with a window descriptor, a dictionary ID
    /// field or a checksum, all decode: the header walk reads every form
    /// of frame header.
    #[test]
    fn every_frame_header_form_decodes() {
        use zstd::zstd_safe::{CCtx, CParameter};
        let raw: Vec<u8> = (0..400_000u32)
            .map(|i| (i.wrapping_mul(i) >> 7) as u8 | (i % 97 == 0) as u8)
            .collect();
        let params: [&[CParameter]; 4] = [
            &[],
            &[CParameter::ChecksumFlag(true)],
            &[CParameter::WindowLog(12)],
            &[CParameter::WindowLog(11), CParameter::ChecksumFlag(true)],
        ];
        for p in params {
            let mut cctx = CCtx::create();
            for &param in p {
                cctx.set_parameter(param).unwrap();
            }
            let mut frame = Vec::with_capacity(zstd::zstd_safe::compress_bound(raw.len()));
            cctx.compress2(&mut frame, &raw).unwrap();
            let bound = zstd_content_bound(&frame).unwrap();
            assert!(bound >= raw.len() as u64, "{p:?}: bound {bound}");
            assert_eq!(
                decompress(CompressionType::Zstd, &frame)
                    .unwrap()
                    .unwrap()
                    .into_vec(),
                raw,
                "{p:?}"
            );
        }
        // A dictionary ID field (4 bytes, ID 7) before the content size.
        let mut frame = ZSTD_MAGIC.to_vec();
        frame.extend_from_slice(&[0x23, 7, 0, 0, 0, 10]);
        frame.extend_from_slice(&((10u32 << 3) | 1).to_le_bytes()[..3]);
        frame.extend_from_slice(b"0123456789");
        assert_eq!(zstd_content_bound(&frame), Some(10));
        assert_eq!(zstd_content_bound(&frame[..frame.len() - 1]), None);
        frame.push(0);
        assert_eq!(zstd_content_bound(&frame), None);
    }

    #[test]
    fn damaged_lz4_blocks_are_corrupt() {
        let raw = block_contents(20);
        let good = compressed(CompressionType::Lz4, 1, &raw);
        let lz4 = CompressionType::Lz4;
        let mut prefix = &good[..];
        assert_eq!(get_varint32(&mut prefix), Some(raw.len() as u32));
        let body = prefix.to_vec();
        assert_eq!(
            lz4_flex::block::decompress(&body, raw.len()).unwrap(),
            raw,
            "the body is a plain LZ4 block"
        );

        let with_claim = |claim: u64| {
            let mut b = Vec::new();
            put_varint64(&mut b, claim);
            b.extend_from_slice(&body);
            b
        };
        // A length prefix that is not a varint32.
        assert!(assert_corrupt(lz4, &[0xff; 5], "bad prefix").contains("length prefix"));
        assert!(assert_corrupt(lz4, &[], "empty").contains("length prefix"));
        assert!(
            assert_corrupt(lz4, &with_claim(1 << 32), "33-bit prefix").contains("length prefix")
        );
        // Claims the body cannot hold, refused before any allocation.
        for claim in [u32::MAX as u64, 255 * body.len() as u64 + 1, 0] {
            let e = assert_corrupt(lz4, &with_claim(claim), &format!("claim {claim}"));
            assert!(e.contains("impossible"), "{e}");
        }
        // Claims that disagree with the body.
        for claim in [raw.len() - 1, raw.len() + 1, raw.len() * 2] {
            assert_corrupt(lz4, &with_claim(claim as u64), &format!("claim {claim}"));
        }
        // Truncated bodies.
        for cut in 0..good.len() {
            assert_corrupt(lz4, &good[..cut], &format!("cut at {cut}"));
        }
        // Any single damaged byte is refused or decodes to the claimed size.
        for i in 0..good.len() {
            for flip in [1u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[i] ^= flip;
                if let Ok(Some(got)) = decompress(lz4, &bad) {
                    let mut p = &bad[..];
                    assert_eq!(get_varint32(&mut p), Some(got.len() as u32));
                }
            }
        }
    }
}
