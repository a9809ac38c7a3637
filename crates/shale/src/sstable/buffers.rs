//! Block buffers recycled per thread, so that reading a block does not zero
//! a fresh buffer for the decompressor (or the positional read) to fill.
//!
//! The decompressors and [`RandomAccessFile::read_at`] write into an
//! initialised `&mut [u8]`. A fresh `vec![0; n]` pays for a `calloc` and
//! for zeroing every byte, which under callgrind was a quarter of a random
//! read's instructions. A [`BlockBuf`] instead reuses the buffer of a block
//! dropped earlier on the same thread (most often the one the block cache
//! just evicted): resizing it to the new block's length zeroes only the
//! bytes by which the new block is longer, and its allocation is reused. No
//! `unsafe` is needed, and stale bytes are never visible: every reader
//! checks that the whole buffer was written (the decompressors' exact
//! output length, `read_at`'s byte count) before the block is used.
//!
//! [`RandomAccessFile::read_at`]: crate::env::RandomAccessFile::read_at

use std::cell::RefCell;

use bytes::Bytes;

/// Buffers a thread keeps for reuse; past this, dropped buffers are freed.
const SPARE_BUFFERS: usize = 8;

/// Buffers of larger capacity are freed rather than kept: a table's blocks
/// are a few KiB (LevelDB's default block size is 4 KiB), and a large spare
/// would be handed to small blocks, whose cache charge counts only their
/// length.
const MAX_SPARE_CAPACITY: usize = 256 << 10;

thread_local! {
    static SPARE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// A block's buffer, returned to its thread's spares when dropped.
#[derive(Debug, Default)]
pub(crate) struct BlockBuf(Vec<u8>);

impl BlockBuf {
    /// A buffer of `len` bytes of unspecified contents (a spare's old bytes,
    /// or zeros): the caller overwrites all of them before reading any.
    pub(crate) fn with_len(len: usize) -> BlockBuf {
        match BlockBuf::spare(len) {
            Some(mut buf) => {
                // Truncates, or zeroes only the bytes past the spare's old
                // length.
                buf.resize(len, 0);
                BlockBuf(buf)
            }
            None => {
                // Zeroed by `calloc`, which skips memory fresh from the
                // system (already zero).
                let mut buf = vec![0; with_slack(len)];
                buf.truncate(len);
                BlockBuf(buf)
            }
        }
    }

    /// Wraps `v`, which returns to this thread's spares when dropped.
    #[cfg(test)]
    pub(crate) fn from_vec(v: Vec<u8>) -> BlockBuf {
        BlockBuf(v)
    }

    /// A spare of this thread with room for `len` bytes.
    fn spare(len: usize) -> Option<Vec<u8>> {
        SPARE
            .try_with(|s| {
                let mut s = s.borrow_mut();
                // The most recently returned spare that fits and is not
                // much larger than needed (one that is, is left for a
                // larger block).
                let limit = fit_limit(len);
                match s
                    .iter()
                    .rposition(|b| b.capacity() >= len && b.capacity() <= limit)
                {
                    Some(i) => Some(s.swap_remove(i)),
                    None => {
                        // None fits: make room for the new buffer's return
                        // by freeing the oldest spare, if the spares are full.
                        if s.len() == SPARE_BUFFERS {
                            s.remove(0);
                        }
                        None
                    }
                }
            })
            .ok()
            .flatten()
    }

    /// The bytes, to be written by the reader.
    pub(crate) fn as_mut_vec(&mut self) -> &mut Vec<u8> {
        &mut self.0
    }

    /// The bytes as a plain vector (no longer recycled).
    pub(crate) fn into_vec(mut self) -> Vec<u8> {
        std::mem::take(&mut self.0)
    }

    /// The bytes, shared; the buffer returns to the spares of the thread
    /// that drops the last reference.
    pub(crate) fn into_bytes(self) -> Bytes {
        Bytes::from_owner(self)
    }
}

/// The capacity of a new buffer for `len` bytes. Blocks of one table vary
/// by a few bytes around the block size: the slack lets a buffer serve the
/// slightly larger ones too.
fn with_slack(len: usize) -> usize {
    len.saturating_add(len / 8)
}

/// The largest capacity a spare may have to be given for a `len`-byte block.
fn fit_limit(len: usize) -> usize {
    len.saturating_mul(2).max(8 << 10)
}

impl AsRef<[u8]> for BlockBuf {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl std::ops::Deref for BlockBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for BlockBuf {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.0);
        if buf.capacity() == 0 || buf.capacity() > MAX_SPARE_CAPACITY {
            return;
        }
        // A thread that is exiting frees the buffer.
        let _ = SPARE.try_with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < SPARE_BUFFERS {
                s.push(buf);
            }
        });
    }
}

#[cfg(test)]
pub(crate) fn spare_count() -> usize {
    SPARE.with(|s| s.borrow().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_buffers_are_reused_and_resized() {
        // Tests run on threads of their own: the spares start empty.
        assert_eq!(spare_count(), 0);
        let mut a = BlockBuf::with_len(4000);
        assert_eq!(a.as_ref(), &[0u8; 4000][..]);
        a.as_mut_vec().fill(7);
        let ptr = a.as_ref().as_ptr();
        drop(a);
        assert_eq!(spare_count(), 1);
        // The same allocation comes back, at the new length.
        let mut b = BlockBuf::with_len(3900);
        assert_eq!(b.as_ref().as_ptr(), ptr);
        assert_eq!(spare_count(), 0);
        assert_eq!(b.as_ref(), &[7u8; 3900][..]);
        b.as_mut_vec().fill(8);
        drop(b);
        let b = BlockBuf::with_len(4000);
        assert_eq!(b.as_ref().as_ptr(), ptr);
        // Only the bytes past the old length were zeroed.
        assert!(b.as_ref()[..3900].iter().all(|&x| x == 8));
        assert!(b.as_ref()[3900..].iter().all(|&x| x == 0));
        // Shared bytes return their buffer when the last clone goes.
        let bytes = b.into_bytes();
        let clone = bytes.clone();
        drop(bytes);
        assert_eq!(spare_count(), 0);
        assert_eq!(clone.len(), 4000);
        drop(clone);
        assert_eq!(spare_count(), 1);
        let c = BlockBuf::with_len(100);
        assert_eq!(c.as_ref().len(), 100);
        assert_eq!(c.as_ref().as_ptr(), ptr);
        // A vector taken out is no longer recycled.
        let v = c.into_vec();
        assert!(v.capacity() >= 4000);
        drop(v);
        assert_eq!(spare_count(), 0);
    }

    #[test]
    fn spares_are_bounded_in_number_and_size() {
        assert_eq!(spare_count(), 0);
        let many: Vec<BlockBuf> = (0..SPARE_BUFFERS + 3)
            .map(|_| BlockBuf::with_len(100))
            .collect();
        drop(many);
        assert_eq!(spare_count(), SPARE_BUFFERS);
        let taken: Vec<BlockBuf> = (0..SPARE_BUFFERS)
            .map(|_| BlockBuf::with_len(100))
            .collect();
        assert_eq!(spare_count(), 0);
        drop(taken);
        let huge = BlockBuf::with_len(MAX_SPARE_CAPACITY + 1);
        let before = spare_count();
        drop(huge);
        assert_eq!(spare_count(), before, "an oversized buffer is freed");
        // A spare much larger than a small block is left for a larger one.
        SPARE.with(|s| s.borrow_mut().clear());
        let big = BlockBuf::with_len(64 << 10);
        let big_ptr = big.as_ref().as_ptr();
        drop(big);
        drop(BlockBuf::with_len(100));
        assert_eq!(spare_count(), 2);
        let small = BlockBuf::with_len(90);
        assert_ne!(small.as_ref().as_ptr(), big_ptr);
        assert_eq!(spare_count(), 1, "the 64 KiB spare is kept");
        let large = BlockBuf::with_len(40 << 10);
        assert_eq!(
            large.as_ref().as_ptr(),
            big_ptr,
            "and given to a 40 KiB block"
        );
        assert_eq!(spare_count(), 0);
        assert_eq!(large.as_ref().len(), 40 << 10);
        drop((small, large));
        // Spares too small for every block asked for are freed, oldest
        // first, to make room for buffers that fit.
        SPARE.with(|s| s.borrow_mut().clear());
        let tiny: Vec<BlockBuf> = (0..SPARE_BUFFERS).map(|_| BlockBuf::with_len(10)).collect();
        drop(tiny);
        assert_eq!(spare_count(), SPARE_BUFFERS);
        let fresh = BlockBuf::with_len(4096);
        assert_eq!(spare_count(), SPARE_BUFFERS - 1);
        let ptr = fresh.as_ref().as_ptr();
        drop(fresh);
        assert_eq!(spare_count(), SPARE_BUFFERS);
        // With its slack, the new buffer serves a slightly larger block.
        let next = BlockBuf::with_len(4200);
        assert_eq!(next.as_ref().as_ptr(), ptr);
    }
}
