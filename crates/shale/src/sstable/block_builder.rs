//! Builds a block: sorted entries with prefix-compressed keys.
//!
//! ```text
//! entry:   shared: varint32, non_shared: varint32, value_len: varint32,
//!          key[shared..]: non_shared bytes, value: value_len bytes
//! trailer: restarts: fixed32 * num_restarts, num_restarts: fixed32
//! ```
//!
//! Every `restart_interval` entries the key is stored whole (`shared == 0`) and
//! its offset is recorded as a restart point, so readers can binary search.
//! Invariants: keys are added in increasing order; the first restart point is
//! always offset 0, so even an empty block has one restart point.

use crate::util::coding::{put_fixed32, put_varint32};

/// Accumulates entries and produces the encoded block.
pub struct BlockBuilder {
    buffer: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    counter: usize,
    finished: bool,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    /// A builder storing a whole key every `restart_interval` entries (at least 1).
    pub fn new(restart_interval: usize) -> BlockBuilder {
        BlockBuilder {
            buffer: Vec::new(),
            restarts: vec![0],
            restart_interval: restart_interval.max(1),
            counter: 0,
            finished: false,
            last_key: Vec::new(),
        }
    }

    /// Forgets all entries, keeping the allocated buffers.
    pub fn reset(&mut self) {
        self.buffer.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.finished = false;
        self.last_key.clear();
    }

    /// Appends an entry. `key` must be larger than every key added since the
    /// last reset, keys and values must each be shorter than 4 GiB, and
    /// [`finish`](Self::finish) must not have been called.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        debug_assert!(!self.finished, "add after finish");
        let shared = if self.counter < self.restart_interval {
            self.last_key
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count()
        } else {
            self.restarts.push(self.buffer.len() as u32);
            self.counter = 0;
            0
        };
        let non_shared = key.len() - shared;
        put_varint32(&mut self.buffer, shared as u32);
        put_varint32(&mut self.buffer, non_shared as u32);
        put_varint32(&mut self.buffer, value.len() as u32);
        self.buffer.extend_from_slice(&key[shared..]);
        self.buffer.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(&key[shared..]);
        self.counter += 1;
    }

    /// Appends the restart array and returns the finished block. The contents
    /// stay valid until [`reset`](Self::reset).
    pub fn finish(&mut self) -> &[u8] {
        if !self.finished {
            for &r in &self.restarts {
                put_fixed32(&mut self.buffer, r);
            }
            put_fixed32(&mut self.buffer, self.restarts.len() as u32);
            self.finished = true;
        }
        &self.buffer
    }

    /// The size of the block if it were finished now.
    #[inline]
    pub fn current_size_estimate(&self) -> usize {
        if self.finished {
            self.buffer.len()
        } else {
            self.buffer.len() + self.restarts.len() * 4 + 4
        }
    }

    /// True when no entry was added since the last reset.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    #[cfg(test)]
    /// The last key added (empty after a reset).
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_block_has_one_restart_point() {
        let mut b = BlockBuilder::new(16);
        assert!(b.is_empty());
        assert_eq!(b.current_size_estimate(), 8);
        assert_eq!(b.finish(), &[0, 0, 0, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn encodes_shared_prefixes_and_restarts() {
        let mut b = BlockBuilder::new(2);
        b.add(b"apple", b"1");
        b.add(b"apricot", b"22");
        b.add(b"avocado", b"");
        assert_eq!(b.current_size_estimate(), 29 + 4 * 2 + 4);
        let block = b.finish().to_vec();
        let mut expected = vec![0, 5, 1];
        expected.extend_from_slice(b"apple1");
        expected.extend_from_slice(&[2, 5, 2]);
        expected.extend_from_slice(b"ricot22");
        // The third entry starts a new restart interval: whole key, at offset 19.
        expected.extend_from_slice(&[0, 7, 0]);
        expected.extend_from_slice(b"avocado");
        expected.extend_from_slice(&[0, 0, 0, 0, 19, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(block, expected);
        assert_eq!(b.last_key(), b"avocado");

        b.reset();
        assert!(b.is_empty());
        assert_eq!(b.last_key(), b"");
        b.add(b"k", b"v");
        assert_eq!(b.finish(), &[0, 1, 1, b'k', b'v', 0, 0, 0, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn zero_interval_means_every_key_is_a_restart() {
        let mut b = BlockBuilder::new(0);
        b.add(b"aa", b"");
        b.add(b"ab", b"");
        let block = b.finish();
        assert_eq!(&block[..10], &[0, 2, 0, b'a', b'a', 0, 2, 0, b'a', b'b']);
        assert_eq!(&block[block.len() - 4..], &[2, 0, 0, 0]);
    }
}
