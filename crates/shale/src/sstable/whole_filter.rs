//! The whole-table filter: one bloom filter over every user key of a table,
//! blocked so that a probe reads one 64-byte line, in a meta block of its own.
//!
//! LevelDB's filter block holds a small filter per 2 KiB of data-block
//! offsets, so a point lookup must first find the data block in the index
//! (a search whose last steps each wait for memory), then the filter's
//! offset, then the filter: four or five waits before a table that does not
//! hold the key is passed over. A lookup in a database with several levels,
//! and with several level-0 tables, passes over most of the tables it looks
//! at. The whole-table filter answers before the index is read, in one line.
//!
//! Compatibility: the block is listed in the metaindex under
//! [`WHOLE_FILTER_META_KEY`], which sorts after LevelDB's `filter.` entries;
//! LevelDB's reader looks up its own filter by name and ignores other
//! entries, so tables with this block stay LevelDB's. Tables without it (any
//! that LevelDB wrote) are read with their per-block filter as before.
//!
//! Layout of the block contents (stored uncompressed, with the usual block
//! trailer and checksum): `lines` 64-byte lines of bits, then `lines` as a
//! little-endian u32, the number of probes `k` (1..=30) as a byte, and the
//! layout's version, 1, as a byte. A user key's line is `(h1 * lines) >> 32`
//! and its bits in the line are `(h2 + i * d) mod 512` for `i` in `0..k`,
//! with `h1` LevelDB's bloom hash of the key (seed 0xbc9f1d34, the hash its
//! bloom filter uses), `h2 = (h1 * 0x9e3779b1).rotate_left(16)` and
//! `d = h2.rotate_right(17) | 1`: one hash per key, mixed for the bits.
//!
//! Invariants: a key added to the builder always matches (no false
//! negatives); contents that do not follow the layout are refused when read,
//! never trusted.

use super::bloom::bloom_hash;

/// The metaindex key of the whole-table filter block.
pub const WHOLE_FILTER_META_KEY: &[u8] = b"fullfilter.shale.BlockedBloom1";

/// 2^32 divided by the golden ratio: multiplying by it spreads every bit of
/// the hash over the high ones.
const MIX: u32 = 0x9e37_79b1;
const LINE_BYTES: usize = 64;
const LINE_BITS: u32 = 512;
const TRAILER: usize = 6;
const VERSION: u8 = 1;
const MAX_PROBES: u8 = 30;

/// The hash of a user key that places it in a whole-table filter (its
/// bloom hash, `h1`; `h2` is mixed from it where the bits are set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyHashes {
    line: u32,
}

impl KeyHashes {
    /// The hashes of `user_key`.
    #[inline]
    pub fn of(user_key: &[u8]) -> KeyHashes {
        KeyHashes::from_bloom_hash(bloom_hash(user_key))
    }

    /// The hashes of a user key whose [`bloom_hash`] is `line`.
    #[inline]
    pub fn from_bloom_hash(line: u32) -> KeyHashes {
        KeyHashes { line }
    }
}

/// Collects a table's user keys (their hashes) and builds the filter.
#[derive(Default)]
pub struct WholeFilterBuilder {
    hashes: Vec<KeyHashes>,
}

impl WholeFilterBuilder {
    /// An empty builder.
    pub fn new() -> WholeFilterBuilder {
        WholeFilterBuilder::default()
    }

    /// Adds a user key (a key equal to the one added just before counts once).
    #[cfg(test)]
    pub fn add_key(&mut self, user_key: &[u8]) {
        self.add(KeyHashes::of(user_key));
    }

    /// Adds a user key by its hashes.
    #[inline]
    pub fn add(&mut self, h: KeyHashes) {
        if self.hashes.last() != Some(&h) {
            self.hashes.push(h);
        }
    }

    /// The filter's block contents, at about `bits_per_key` bits per key.
    pub fn finish(&mut self, bits_per_key: usize) -> Vec<u8> {
        let bits_per_key = bits_per_key.clamp(1, 1000);
        let bits = self.hashes.len().saturating_mul(bits_per_key);
        let lines = bits
            .div_ceil(LINE_BITS as usize)
            .clamp(1, u32::MAX as usize);
        // Probes: bits per key times ln 2, as LevelDB's bloom filter.
        let k = ((bits_per_key * 69) / 100).clamp(1, MAX_PROBES as usize) as u8;
        let mut out = vec![0u8; lines * LINE_BYTES + TRAILER];
        for h in self.hashes.drain(..) {
            let line = line_of(h, lines as u32);
            let at = &mut out[line * LINE_BYTES..(line + 1) * LINE_BYTES];
            for bit in probes(h, k) {
                at[(bit / 8) as usize] |= 1 << (bit % 8);
            }
        }
        let t = lines * LINE_BYTES;
        out[t..t + 4].copy_from_slice(&(lines as u32).to_le_bytes());
        out[t + 4] = k;
        out[t + 5] = VERSION;
        out
    }
}

#[inline]
fn line_of(h: KeyHashes, lines: u32) -> usize {
    ((u64::from(h.line) * u64::from(lines)) >> 32) as usize
}

/// The bits of a key in its line: `(h2 + i * d) mod 512`, stepped by
/// wrapping additions (512 divides 2^32, so the steps agree with the formula).
#[inline]
fn probes(h: KeyHashes, k: u8) -> impl Iterator<Item = u32> {
    let h2 = h.line.wrapping_mul(MIX).rotate_left(16);
    let d = h2.rotate_right(17) | 1;
    let mut bit = h2;
    (0..k).map(move |_| {
        let b = bit % LINE_BITS;
        bit = bit.wrapping_add(d);
        b
    })
}

/// A whole-table filter read from a table.
pub struct WholeFilter {
    contents: Vec<u8>,
    lines: u32,
    k: u8,
}

impl WholeFilter {
    /// Parses block contents; `None` when they do not follow the layout.
    pub fn new(contents: Vec<u8>) -> Option<WholeFilter> {
        let t = contents.len().checked_sub(TRAILER)?;
        let tail = contents.get(t..)?;
        let lines = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
        let (k, version) = (tail[4], tail[5]);
        let ok = version == VERSION
            && (1..=MAX_PROBES).contains(&k)
            && lines > 0
            && (lines as usize).checked_mul(LINE_BYTES) == Some(t);
        ok.then_some(WholeFilter { contents, lines, k })
    }

    /// False when the table holds no entry with the user key `h` was made
    /// from; true when it may.
    #[inline]
    pub fn may_contain(&self, h: KeyHashes) -> bool {
        let line = line_of(h, self.lines) * LINE_BYTES;
        let Some(at) = self.contents.get(line..line + LINE_BYTES) else {
            return true;
        };
        probes(h, self.k).all(|bit| at[(bit / 8) as usize] & (1 << (bit % 8)) != 0)
    }

    /// Bytes held.
    #[cfg(test)]
    pub fn size(&self) -> usize {
        self.contents.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> Vec<u8> {
        format!("{i:016}").into_bytes()
    }

    fn build(n: u32, bits_per_key: usize) -> WholeFilter {
        let mut b = WholeFilterBuilder::new();
        for i in 0..n {
            b.add_key(&key(i));
            b.add_key(&key(i));
        }
        WholeFilter::new(b.finish(bits_per_key)).unwrap()
    }

    #[test]
    fn every_added_key_matches_and_few_others_do() {
        for n in [0, 1, 10, 1000, 20_000] {
            let f = build(n, 10);
            assert!(
                (0..n).all(|i| f.may_contain(KeyHashes::of(&key(i)))),
                "{n} keys"
            );
            let false_positives = (n..n + 20_000)
                .filter(|&i| f.may_contain(KeyHashes::of(&key(i))))
                .count();
            // About 1% at 10 bits per key (a blocked filter does a little
            // worse than a plain one); far fewer than chance.
            assert!(
                false_positives < 500,
                "{n} keys: {false_positives} of 20000"
            );
        }
    }

    #[test]
    fn its_size_follows_the_bits_per_key() {
        assert_eq!(build(0, 10).size(), 64 + 6);
        assert_eq!(build(1000, 10).size(), 20 * 64 + 6);
        assert_eq!(build(1000, 20).size(), 40 * 64 + 6);
    }

    #[test]
    fn contents_off_the_layout_are_refused() {
        let good = {
            let mut b = WholeFilterBuilder::new();
            b.add_key(b"a");
            b.finish(10)
        };
        assert!(WholeFilter::new(good.clone()).is_some());
        assert!(WholeFilter::new(Vec::new()).is_none());
        assert!(WholeFilter::new(good[..good.len() - 1].to_vec()).is_none());
        let n = good.len();
        for (at, byte) in [(n - 1, 2), (n - 2, 0), (n - 2, 31), (n - 6, 2), (n - 6, 0)] {
            let mut bad = good.clone();
            bad[at] = byte;
            assert!(WholeFilter::new(bad).is_none(), "byte {at} = {byte}");
        }
        // Any bytes: refused or answered, never a panic.
        for len in 0..200 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 % 251) as u8).collect();
            if let Some(f) = WholeFilter::new(bytes) {
                f.may_contain(KeyHashes::of(b"x"));
            }
        }
    }
}
