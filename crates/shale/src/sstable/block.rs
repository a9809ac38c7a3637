//! Reads blocks written by [`BlockBuilder`](super::block_builder::BlockBuilder):
//! a parsed [`Block`] and a bidirectional [`BlockIter`] over it.
//!
//! A block's bytes are untrusted. [`Block::new`] checks only the restart count;
//! every entry is checked as it is decoded (lengths inside the entry area, the
//! shared prefix no longer than the previous key, restart entries storing the
//! whole key), and a bad entry stops the iterator with a corruption status.
//!
//! Forward steps decode one entry into a reused key buffer. Backward steps do
//! not re-scan from the restart point each time: a run of entries is decoded
//! forward once, stacking for every entry its offsets and the key bytes that
//! the following entry does not share with it (its "tail"); each `prev` then
//! pops one entry and rebuilds its key by truncating the current key to the
//! shared length and appending the tail. A `prev` right after a forward move
//! decodes just the current restart interval; `seek_to_last` (where a reverse
//! scan enters each block) and the `prev`s of a reverse scan in progress
//! decode runs of up to [`REVERSE_RUN_INTERVALS`] intervals, so a reverse scan
//! reads each block front to back in long sequential runs, nearly as a forward
//! scan does. The tails of a run together are never longer than the key bytes
//! stored in it, so the stack is bounded by the block size.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU8, Ordering as AtomicOrdering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::comparator::Comparator;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::util::coding::{decode_fixed32, get_varint32};
use crate::util::prefetch::prefetch;

use super::entries::BlockEntries;
use super::entry_index::{EntryIndex, Probe};
use super::fences::Fences;

/// Point lookups a block serves by plain search before it builds its entry
/// index: a block read once and evicted (a small cache) never pays for one.
const LOOKUPS_BEFORE_INDEX: u8 = 1;

/// A parsed block: its bytes and the position of its restart array.
pub struct Block {
    /// The contents: a buffer of their own, or a slice of a mapped table.
    data: Bytes,
    /// Offset of the restart array, which is also the end of the entries.
    restarts_start: u32,
    num_restarts: u32,
    /// Point lookups served so far without an entry index (saturating).
    lookups: AtomicU8,
    /// Built by the point lookup after the first [`LOOKUPS_BEFORE_INDEX`]
    /// (`None` inside when the block cannot have one).
    entry_index: OnceLock<Option<EntryIndex>>,
    /// The block's checksum was checked when it was read (a cached block
    /// read without the check is read again by a reader that wants it).
    checksum_verified: bool,
}

impl Block {
    /// Parses block contents (as returned by the builder's `finish`).
    pub fn new(data: Vec<u8>) -> Result<Block> {
        Block::from_bytes(Bytes::from(data))
    }

    /// Parses block contents held in shared bytes (e.g. a slice of a mapped
    /// file), without copying them.
    pub fn from_bytes(data: Bytes) -> Result<Block> {
        let n = data.len();
        if n > u32::MAX as usize {
            return Err(Error::bad_data("block larger than 4 GiB"));
        }
        if n < 4 {
            return Err(Error::bad_data("block too short for its restart count"));
        }
        let num_restarts = decode_fixed32(&data[n - 4..]).unwrap_or(u32::MAX);
        if num_restarts as usize > (n - 4) / 4 {
            return Err(Error::bad_data(format!(
                "block of {n} bytes cannot hold {num_restarts} restart points"
            )));
        }
        let restarts_start = (n - 4 - 4 * num_restarts as usize) as u32;
        Ok(Block {
            data,
            restarts_start,
            num_restarts,
            lookups: AtomicU8::new(0),
            entry_index: OnceLock::new(),
            checksum_verified: false,
        })
    }

    /// Records whether the block's checksum was checked when it was read.
    pub(crate) fn set_checksum_verified(&mut self, verified: bool) {
        self.checksum_verified = verified;
    }

    /// True if the block's checksum was checked when it was read.
    pub(crate) fn checksum_verified(&self) -> bool {
        self.checksum_verified
    }

    /// The size of the block in bytes (what the block cache charges).
    #[inline]
    pub fn size(&self) -> usize {
        self.data.len()
    }

    /// The raw block contents.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The number of restart points.
    pub fn num_restarts(&self) -> u32 {
        self.num_restarts
    }

    /// An iterator over the entries, ordered by `cmp`.
    pub fn iter(self: &Arc<Self>, cmp: Arc<dyn Comparator>) -> BlockIter {
        BlockIter::new(self.clone(), cmp)
    }

    /// Finds the first entry with key >= `target` without building an
    /// iterator: on success `key` holds the entry's key and the value is
    /// returned. `key` is a reusable buffer; its prior contents are ignored.
    pub fn seek_entry<'a>(
        &'a self,
        cmp: &dyn Comparator,
        target: &[u8],
        key: &mut Vec<u8>,
    ) -> Result<Option<&'a [u8]>> {
        self.seek_entry_with(cmp, None, target, key)
    }

    /// [`seek_entry`](Block::seek_entry), narrowed by the block's `fences`
    /// (which must have been built from this block with `cmp`).
    pub fn seek_entry_with<'a>(
        &'a self,
        cmp: &dyn Comparator,
        fences: Option<&Fences>,
        target: &[u8],
        key: &mut Vec<u8>,
    ) -> Result<Option<&'a [u8]>> {
        key.clear();
        let mut cursor = Cursor {
            key: std::mem::take(key),
            ..Cursor::new(self)
        };
        let window = fences.map(|f| f.window(target));
        let found = cursor.seek(self, cmp, target, window);
        *key = std::mem::take(&mut cursor.key);
        match found {
            Ok(true) => Ok(Some(cursor.value(self))),
            Ok(false) => Ok(None),
            Err(reason) => Err(Error::bad_data(reason)),
        }
    }

    /// Point lookup: like [`seek_entry`](Block::seek_entry) when the block
    /// holds an entry with `target`'s user key (`cmp` must be bytewise with a
    /// trailer to tell user keys apart, else this is `seek_entry`), but
    /// otherwise it may answer `None` instead of a later entry with another
    /// user key. A block that serves point lookups repeatedly builds an
    /// [`EntryIndex`] to answer them without decoding the entries before
    /// the one it wants.
    pub fn point_lookup<'a>(
        &'a self,
        cmp: &dyn Comparator,
        target: &[u8],
        key: &mut Vec<u8>,
    ) -> Result<Option<&'a [u8]>> {
        let index = match self.entry_index.get() {
            Some(index) => index.as_ref(),
            None if self.lookups.load(AtomicOrdering::Relaxed) >= LOOKUPS_BEFORE_INDEX => self
                .entry_index
                .get_or_init(|| EntryIndex::build(self, cmp))
                .as_ref(),
            None => {
                self.lookups.fetch_add(1, AtomicOrdering::Relaxed);
                None
            }
        };
        // (A block is read with its table's comparator; an index built for
        // another order is not used.)
        if let Some(index) = index.filter(|i| cmp.bytewise_with_trailer() == Some(i.trailer())) {
            match index.find(self, cmp, target, key) {
                Probe::Found(offset) => {
                    // The index decoded this entry when it was built.
                    return Ok(self.entry_at(offset).map(|(_, value)| value));
                }
                Probe::Absent => return Ok(None),
                Probe::Unknown => {}
            }
        }
        self.seek_entry(cmp, target, key)
    }

    /// Calls `f(offset, key_at, shared, key)` for every entry in order from
    /// restart point `restart` on, with the entry's offset, where its
    /// unshared key bytes start, how many leading bytes its key shares with
    /// the previous entry's, and its whole key; stops when `f` returns false.
    /// True when every entry decoded and `f` never stopped.
    pub(crate) fn for_each_entry(
        &self,
        restart: u32,
        mut f: impl FnMut(u32, usize, usize, &[u8]) -> bool,
    ) -> bool {
        let entries = self.entries();
        let mut key = Vec::new();
        let mut offset = if restart == 0 {
            0
        } else if restart < self.num_restarts {
            self.restart_point(restart) as usize
        } else {
            return false;
        };
        while offset < entries.len() {
            let Some(h) = decode_entry(entries, offset) else {
                return false;
            };
            if h.shared > key.len() {
                return false;
            }
            key.truncate(h.shared);
            key.extend_from_slice(&entries[h.key_start..h.key_start + h.non_shared]);
            if !f(offset as u32, h.key_start, h.shared, &key) {
                return false;
            }
            offset = h.key_start + h.non_shared + h.value_len;
        }
        true
    }

    /// The unshared key bytes and the value of the entry at `offset`, if it decodes.
    #[inline]
    pub(crate) fn entry_at(&self, offset: u32) -> Option<(&[u8], &[u8])> {
        let entries = self.entries();
        let h = decode_entry(entries, offset as usize)?;
        let value_start = h.key_start + h.non_shared;
        Some((
            &entries[h.key_start..value_start],
            &entries[value_start..value_start + h.value_len],
        ))
    }

    /// The value of the entry at restart point `i`, if `i` is in range and
    /// the entry decodes.
    #[inline]
    pub fn restart_value(&self, i: u32) -> Option<&[u8]> {
        if i >= self.num_restarts {
            return None;
        }
        self.entry_at(self.restart_point(i)).map(|(_, value)| value)
    }

    /// The key stored at restart point `i` (restart entries store their key
    /// whole); `None` if `i` is out of range or the entry does not decode.
    pub(crate) fn restart_key(&self, i: u32) -> Option<&[u8]> {
        if i >= self.num_restarts {
            return None;
        }
        let entries = self.entries();
        let h = decode_entry(entries, self.restart_point(i) as usize)?;
        (h.shared == 0).then(|| &entries[h.key_start..h.key_start + h.non_shared])
    }

    /// The entry area: everything before the restart array.
    #[inline]
    fn entries(&self) -> &[u8] {
        &self.data[..self.restarts_start as usize]
    }

    /// The offset stored in restart point `i`; `i < num_restarts`.
    #[inline]
    fn restart_point(&self, i: u32) -> u32 {
        let at = self.restarts_start as usize + 4 * i as usize;
        // In range for every i < num_restarts (checked in `new`); a caller bug
        // yields an offset past the entries, which decoding reports as corrupt.
        self.data
            .get(at..)
            .and_then(decode_fixed32)
            .unwrap_or(u32::MAX)
    }
}

impl BlockEntries for Block {
    #[inline]
    fn data(&self) -> &[u8] {
        Block::data(self)
    }

    #[inline]
    fn num_restarts(&self) -> u32 {
        Block::num_restarts(self)
    }

    #[inline]
    fn restart_key(&self, i: u32) -> Option<&[u8]> {
        Block::restart_key(self, i)
    }

    #[inline]
    fn entry_at(&self, offset: u32) -> Option<(&[u8], &[u8])> {
        Block::entry_at(self, offset)
    }

    #[inline]
    fn for_each_entry(
        &self,
        restart: u32,
        f: impl FnMut(u32, usize, usize, &[u8]) -> bool,
    ) -> bool {
        Block::for_each_entry(self, restart, f)
    }
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block")
            .field("size", &self.data.len())
            .field("num_restarts", &self.num_restarts)
            .finish()
    }
}

/// Restart intervals decoded at once while scanning backward.
pub const REVERSE_RUN_INTERVALS: u32 = 16;

const BAD_ENTRY: &str = "bad entry in block";
const BAD_SHARED: &str = "bad entry in block: shares more bytes than the previous key has";
const BAD_RESTART: &str = "bad restart point in block";

/// The header of an entry, with lengths checked against the entry area.
struct EntryHeader {
    shared: usize,
    non_shared: usize,
    value_len: usize,
    /// Offset of the unshared key bytes; the value follows them.
    key_start: usize,
}

/// Decodes the header of the entry at `offset`; `None` when it does not fit.
/// Always inlined: it is the inner step of every scan, and with several
/// callers the compiler otherwise keeps it out of line (about 10
/// instructions more per entry of a `readseq`, counted with callgrind).
#[inline(always)]
fn decode_entry(entries: &[u8], offset: usize) -> Option<EntryHeader> {
    let rest = entries.get(offset..)?;
    if rest.len() < 3 {
        return None;
    }
    let (shared, non_shared, value_len, header_len);
    if (rest[0] | rest[1] | rest[2]) < 0x80 {
        // Fast path: all three lengths fit in one byte each.
        (shared, non_shared, value_len, header_len) =
            (rest[0] as u32, rest[1] as u32, rest[2] as u32, 3);
    } else {
        let mut c = rest;
        shared = get_varint32(&mut c)?;
        non_shared = get_varint32(&mut c)?;
        value_len = get_varint32(&mut c)?;
        header_len = rest.len() - c.len();
    }
    let body = (non_shared as usize).checked_add(value_len as usize)?;
    if rest.len() - header_len < body {
        return None;
    }
    Some(EntryHeader {
        shared: shared as usize,
        non_shared: non_shared as usize,
        value_len: value_len as usize,
        key_start: offset + header_len,
    })
}

type Step = std::result::Result<bool, &'static str>;

/// A position in a block plus the key there. Holds no reference to the block,
/// so it serves both the iterator and one-off lookups.
struct Cursor {
    /// Offset of the current entry; at or past the entry area when not valid.
    current: u32,
    /// Offset just past the current entry (where the next one starts).
    next: u32,
    /// The restart interval holding the current entry.
    restart_index: u32,
    key: Vec<u8>,
    value_start: u32,
    value_len: u32,
}

impl Cursor {
    fn new(block: &Block) -> Cursor {
        Cursor {
            current: block.restarts_start,
            next: block.restarts_start,
            restart_index: block.num_restarts,
            key: Vec::new(),
            value_start: 0,
            value_len: 0,
        }
    }

    #[inline]
    fn valid(&self, block: &Block) -> bool {
        self.current < block.restarts_start
    }

    #[inline]
    fn value<'a>(&self, block: &'a Block) -> &'a [u8] {
        let start = self.value_start as usize;
        // Checked against the entry area when the entry was decoded.
        &block.data[start..start + self.value_len as usize]
    }

    fn invalidate(&mut self, block: &Block) {
        self.current = block.restarts_start;
        self.next = block.restarts_start;
        self.restart_index = block.num_restarts;
        self.key.clear();
        self.value_start = 0;
        self.value_len = 0;
    }

    #[inline]
    fn seek_to_restart(&mut self, block: &Block, index: u32) {
        self.key.clear();
        self.restart_index = index;
        self.next = block.restart_point(index);
    }

    /// Decodes the entry at `next`. `Ok(false)` at the end of the entries.
    /// Always inlined: the step of every forward scan; left to the
    /// compiler it went out of line once the engine grew (readseq +14
    /// instructions per entry, counted with callgrind).
    #[inline(always)]
    fn parse_next(&mut self, block: &Block) -> Step {
        let entries = block.entries();
        let offset = self.next as usize;
        if offset >= entries.len() {
            let past = offset > entries.len();
            self.invalidate(block);
            return if past { Err(BAD_RESTART) } else { Ok(false) };
        }
        let h = decode_entry(entries, offset).ok_or(BAD_ENTRY)?;
        if h.shared > self.key.len() {
            return Err(BAD_SHARED);
        }
        self.key.truncate(h.shared);
        self.key
            .extend_from_slice(&entries[h.key_start..h.key_start + h.non_shared]);
        self.current = offset as u32;
        self.value_start = (h.key_start + h.non_shared) as u32;
        self.value_len = h.value_len as u32;
        self.next = self.value_start + self.value_len;
        while self.restart_index + 1 < block.num_restarts
            && block.restart_point(self.restart_index + 1) < self.current
        {
            self.restart_index += 1;
        }
        Ok(true)
    }

    fn seek_to_first(&mut self, block: &Block) -> Step {
        if block.num_restarts == 0 {
            self.invalidate(block);
            return Ok(false);
        }
        self.seek_to_restart(block, 0);
        self.parse_next(block)
    }

    /// Positions at the first entry with key >= `target`. `window`, if
    /// given, bounds the restart points to search (see [`Fences::window`]).
    fn seek(
        &mut self,
        block: &Block,
        cmp: &dyn Comparator,
        target: &[u8],
        window: Option<(u32, u32)>,
    ) -> Step {
        if block.num_restarts == 0 {
            self.invalidate(block);
            return Ok(false);
        }
        let entries = block.entries();
        let last = block.num_restarts - 1;
        let (mut left, mut right) = match window {
            Some((l, r)) => (l.min(last), r.min(last)),
            None => (0, last),
        };
        // Narrow the search with the current position, when there is one.
        let mut current_order = Ordering::Equal;
        let was_valid = self.valid(block);
        if was_valid {
            current_order = cmp.compare(&self.key, target);
            match current_order {
                Ordering::Less => left = self.restart_index,
                Ordering::Greater => right = self.restart_index,
                Ordering::Equal => return Ok(true),
            }
        }
        // Find the last restart point whose key is < target.
        while left < right {
            let mid = left + (right - left).div_ceil(2);
            let offset = block.restart_point(mid) as usize;
            let h = decode_entry(entries, offset).ok_or(BAD_RESTART)?;
            if h.shared != 0 {
                return Err(BAD_RESTART);
            }
            let mid_key = &entries[h.key_start..h.key_start + h.non_shared];
            if cmp.compare(mid_key, target) == Ordering::Less {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        // Already inside that interval and before the target: scan on from here.
        let scan_from_here =
            was_valid && current_order == Ordering::Less && left == self.restart_index;
        if !scan_from_here {
            self.seek_to_restart(block, left);
        }
        loop {
            if !self.parse_next(block)? {
                return Ok(false);
            }
            if cmp.compare(&self.key, target) != Ordering::Less {
                return Ok(true);
            }
        }
    }
}

/// An entry decoded while walking backward, waiting on the stack.
#[derive(Clone, Copy)]
struct BackEntry {
    offset: u32,
    value_start: u32,
    value_len: u32,
    /// The restart interval holding the entry.
    restart_index: u32,
    /// Key bytes this entry shares with the entry after it.
    shared_next: u32,
    /// Where this entry's remaining key bytes start in `BackStack::tails`.
    tail_start: u32,
}

/// Entries before the current one, nearest last.
#[derive(Default)]
struct BackStack {
    entries: Vec<BackEntry>,
    tails: Vec<u8>,
    /// Decoding buffer for the keys of the run.
    scratch: Vec<u8>,
    /// The iterator has been moving backward since its last forward move.
    reversing: bool,
}

impl BackStack {
    #[inline]
    fn clear(&mut self) {
        self.entries.clear();
        self.tails.clear();
    }

    /// Decodes the entries from restart point `ri` up to `end` (which must
    /// be where an entry starts, or the end of the entries). The key of the
    /// last one is stacked relative to `end_shared`, the bytes the entry at
    /// `end` shares with it. `Ok(false)` if there are no such entries.
    fn fill(&mut self, block: &Block, mut ri: u32, end: usize, end_shared: usize) -> Step {
        self.clear();
        self.scratch.clear();
        let entries = block.entries();
        let mut offset = block.restart_point(ri) as usize;
        if offset > end {
            return Err(BAD_RESTART);
        }
        // The run is decoded forward and handed out last first: the first
        // touch of a cached block's run would otherwise be a string of
        // dependent cache misses.
        prefetch(entries.get(offset..end).unwrap_or_default());
        let mut last: Option<(usize, usize, usize, u32)> = None;
        while offset < end {
            while ri + 1 < block.num_restarts && block.restart_point(ri + 1) as usize <= offset {
                ri += 1;
            }
            let h = decode_entry(entries, offset).ok_or(BAD_ENTRY)?;
            if h.shared > self.scratch.len() {
                return Err(BAD_SHARED);
            }
            if let Some(prev) = last {
                self.push(prev, h.shared);
            }
            self.scratch.truncate(h.shared);
            self.scratch
                .extend_from_slice(&entries[h.key_start..h.key_start + h.non_shared]);
            let value_start = h.key_start + h.non_shared;
            last = Some((offset, value_start, h.value_len, ri));
            offset = value_start + h.value_len;
        }
        let Some(prev) = last else {
            return Ok(false);
        };
        if offset != end {
            return Err("block entries do not line up with the restart points");
        }
        if end_shared > self.scratch.len() {
            return Err(BAD_SHARED);
        }
        self.push(prev, end_shared);
        Ok(true)
    }

    /// Stacks the entry whose full key is in `scratch`.
    #[inline]
    fn push(
        &mut self,
        (offset, value_start, value_len, restart_index): (usize, usize, usize, u32),
        shared_next: usize,
    ) {
        self.entries.push(BackEntry {
            offset: offset as u32,
            value_start: value_start as u32,
            value_len: value_len as u32,
            restart_index,
            shared_next: shared_next as u32,
            tail_start: self.tails.len() as u32,
        });
        self.tails.extend_from_slice(&self.scratch[shared_next..]);
    }

    /// Moves `cursor` to the top entry. The cursor must be on the entry that
    /// follows it. `Ok(false)` when the stack is empty.
    #[inline]
    fn pop_into(&mut self, cursor: &mut Cursor) -> Step {
        let Some(e) = self.entries.pop() else {
            return Ok(false);
        };
        let shared = e.shared_next as usize;
        if shared > cursor.key.len() {
            return Err(BAD_SHARED);
        }
        let tail_start = e.tail_start as usize;
        cursor.key.truncate(shared);
        cursor.key.extend_from_slice(&self.tails[tail_start..]);
        self.tails.truncate(tail_start);
        cursor.current = e.offset;
        cursor.value_start = e.value_start;
        cursor.value_len = e.value_len;
        cursor.next = e.value_start + e.value_len;
        cursor.restart_index = e.restart_index;
        Ok(true)
    }
}

/// A bidirectional iterator over a block's entries.
///
/// Invariants: when the back stack is not empty, its top entry immediately
/// precedes the current entry; any other movement clears it. A corrupt entry
/// makes the iterator invalid with a corruption status.
pub struct BlockIter {
    block: Arc<Block>,
    cmp: Arc<dyn Comparator>,
    cursor: Cursor,
    back: BackStack,
    status: Option<Error>,
}

impl BlockIter {
    /// An unpositioned iterator over `block`, ordered by `cmp`.
    pub fn new(block: Arc<Block>, cmp: Arc<dyn Comparator>) -> BlockIter {
        let cursor = Cursor::new(&block);
        BlockIter {
            block,
            cmp,
            cursor,
            back: BackStack::default(),
            status: None,
        }
    }

    /// Re-targets the iterator at another block (unpositioned, status cleared),
    /// keeping its buffers.
    pub fn reset(&mut self, block: Arc<Block>) {
        self.block = block;
        self.cursor.invalidate(&self.block);
        self.back.clear();
        self.status = None;
    }

    /// Records the outcome of a movement: a corruption stops the iterator.
    #[inline]
    fn settle(&mut self, step: Step) {
        if let Err(reason) = step {
            self.status = Some(Error::bad_data(reason));
            self.cursor.invalidate(&self.block);
            self.back.clear();
        }
    }

    /// Forgets the stacked entries before a forward move.
    #[inline]
    fn clear_back(&mut self) {
        if !self.back.entries.is_empty() {
            self.back.clear();
        }
        self.back.reversing = false;
    }
}

impl InternalIterator for BlockIter {
    #[inline]
    fn valid(&self) -> bool {
        self.cursor.valid(&self.block)
    }

    fn seek_to_first(&mut self) {
        self.clear_back();
        let step = self.cursor.seek_to_first(&self.block);
        self.settle(step);
    }

    fn seek_to_last(&mut self) {
        let block = &*self.block;
        let step = if block.num_restarts == 0 {
            Ok(false)
        } else {
            // A reverse scan will want more than the last entry: decode a long run.
            let end = block.restarts_start as usize;
            let first = block.num_restarts.saturating_sub(REVERSE_RUN_INTERVALS);
            self.cursor.key.clear();
            self.back.reversing = true;
            match self.back.fill(block, first, end, 0) {
                Ok(true) => self.back.pop_into(&mut self.cursor),
                other => other,
            }
        };
        if step == Ok(false) {
            self.cursor.invalidate(&self.block);
        }
        self.settle(step);
    }

    fn seek(&mut self, target: &[u8]) {
        self.clear_back();
        let step = self.cursor.seek(&self.block, &*self.cmp, target, None);
        self.settle(step);
    }

    #[inline]
    fn next(&mut self) {
        if !self.valid() {
            return;
        }
        self.clear_back();
        let step = self.cursor.parse_next(&self.block);
        self.settle(step);
    }

    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        let block = &*self.block;
        let mut step = Ok(true);
        if self.back.entries.is_empty() {
            // Find the restart interval holding the entry before the current one.
            let current = self.cursor.current;
            let mut ri = self
                .cursor
                .restart_index
                .min(block.num_restarts.saturating_sub(1));
            while block.restart_point(ri) >= current {
                if ri == 0 {
                    // The current entry is the first one.
                    self.cursor.invalidate(block);
                    return;
                }
                ri -= 1;
            }
            let current_shared = decode_entry(block.entries(), current as usize)
                .map(|h| h.shared)
                .unwrap_or(usize::MAX);
            // One interval for a lone step back; a long run once scanning backward.
            if self.back.reversing {
                ri = ri.saturating_sub(REVERSE_RUN_INTERVALS - 1);
            }
            self.back.reversing = true;
            step = self.back.fill(block, ri, current as usize, current_shared);
        }
        if step == Ok(true) {
            step = self.back.pop_into(&mut self.cursor);
        }
        if step == Ok(false) {
            self.cursor.invalidate(&self.block);
        }
        self.settle(step);
    }

    #[inline]
    fn key(&self) -> &[u8] {
        &self.cursor.key
    }

    #[inline]
    fn value(&self) -> &[u8] {
        self.cursor.value(&self.block)
    }

    fn status(&self) -> Result<()> {
        match &self.status {
            None => Ok(()),
            Some(e) => Err(e.duplicate()),
        }
    }

    #[inline]
    fn peek_next_value(&self) -> Option<&[u8]> {
        if !self.valid() {
            return None;
        }
        let h = decode_entry(self.block.entries(), self.cursor.next as usize)?;
        let start = h.key_start + h.non_shared;
        self.block.entries().get(start..start + h.value_len)
    }

    #[inline]
    fn peek_prev_value(&self) -> Option<&[u8]> {
        let e = self.back.entries.last()?;
        let start = e.value_start as usize;
        self.block
            .entries()
            .get(start..start.checked_add(e.value_len as usize)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::BytewiseComparator;
    use crate::sstable::block_builder::BlockBuilder;
    use crate::util::coding::put_fixed32;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;

    type Model = BTreeMap<Vec<u8>, Vec<u8>>;

    fn build(model: &Model, interval: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(interval);
        for (k, v) in model {
            b.add(k, v);
        }
        Arc::new(Block::new(b.finish().to_vec()).unwrap())
    }

    fn iter(block: &Arc<Block>) -> BlockIter {
        block.iter(Arc::new(BytewiseComparator))
    }

    /// Keys of varied lengths with long shared prefixes, some longer than 127
    /// bytes so lengths take multi-byte varints.
    fn random_model(rng: &mut StdRng, n: usize) -> Model {
        let mut m = Model::new();
        while m.len() < n {
            let len = match rng.gen_range(0..10) {
                0 => rng.gen_range(100..300),
                _ => rng.gen_range(0..24),
            };
            let k: Vec<u8> = (0..len)
                .map(|_| b"abc\x00\xff"[rng.gen_range(0..5)])
                .collect();
            let vlen = if rng.gen_bool(0.1) {
                rng.gen_range(128..400)
            } else {
                rng.gen_range(0..20)
            };
            let v: Vec<u8> = (0..vlen).map(|_| rng.gen()).collect();
            m.insert(k, v);
        }
        m
    }

    fn entry(it: &BlockIter) -> Option<(Vec<u8>, Vec<u8>)> {
        it.valid().then(|| (it.key().to_vec(), it.value().to_vec()))
    }

    fn check_walks(model: &Model, interval: usize) {
        let block = build(model, interval);
        let expected: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let mut it = iter(&block);
        assert!(!it.valid());

        let mut forward = Vec::new();
        it.seek_to_first();
        while let Some(e) = entry(&it) {
            forward.push(e);
            it.next();
        }
        assert_eq!(forward, expected, "forward walk, interval {interval}");

        let mut backward = Vec::new();
        it.seek_to_last();
        while let Some(e) = entry(&it) {
            backward.push(e);
            it.prev();
        }
        backward.reverse();
        assert_eq!(backward, expected, "backward walk, interval {interval}");
        it.status().unwrap();
    }

    #[test]
    fn round_trips_for_several_restart_intervals() {
        for seed in 0..4u64 {
            let mut rng = StdRng::seed_from_u64(seed);
            let model = random_model(&mut rng, 300);
            for interval in [1, 2, 16] {
                check_walks(&model, interval);
            }
        }
    }

    #[test]
    fn seeks_and_mixed_steps_agree_with_a_sorted_map() {
        for seed in 0..4u64 {
            let mut rng = StdRng::seed_from_u64(seed);
            let model = random_model(&mut rng, 200);
            let keys: Vec<&Vec<u8>> = model.keys().collect();
            for interval in [1, 2, 16] {
                let block = build(&model, interval);
                let mut it = iter(&block);
                // Model position: index into `keys`, or None when invalid.
                let mut pos: Option<usize> = None;
                for step in 0..3000 {
                    match rng.gen_range(0..10) {
                        0 => {
                            it.seek_to_first();
                            pos = (!keys.is_empty()).then_some(0);
                        }
                        1 => {
                            it.seek_to_last();
                            pos = keys.len().checked_sub(1);
                        }
                        2 | 3 => {
                            let target: Vec<u8> = if rng.gen_bool(0.5) {
                                keys[rng.gen_range(0..keys.len())].clone()
                            } else {
                                (0..rng.gen_range(0..6))
                                    .map(|_| b"abc\x00\xff"[rng.gen_range(0..5)])
                                    .collect()
                            };
                            it.seek(&target);
                            pos = model
                                .range(target..)
                                .next()
                                .map(|(k, _)| keys.binary_search(&k).unwrap());
                        }
                        4..=6 => {
                            if pos.is_some() {
                                it.next();
                                pos = pos.map(|p| p + 1).filter(|&p| p < keys.len());
                            }
                        }
                        _ => {
                            if pos.is_some() {
                                it.prev();
                                pos = pos.and_then(|p| p.checked_sub(1));
                            }
                        }
                    }
                    let want = pos.map(|p| (keys[p].clone(), model[keys[p]].clone()));
                    assert_eq!(
                        entry(&it),
                        want,
                        "seed {seed}, interval {interval}, step {step}"
                    );
                }
                it.status().unwrap();
            }
        }
    }

    /// Walks `it` from its last entry back to the start, checking that each
    /// peek at the previous value is the value the next step reaches; the
    /// number of steps that had a peek.
    fn walk_back_checking_peeks(it: &mut BlockIter) -> usize {
        it.seek_to_last();
        let mut peeked = 0;
        while it.valid() {
            let hint = it.peek_prev_value().map(<[u8]>::to_vec);
            it.prev();
            if let Some(v) = hint {
                peeked += 1;
                assert_eq!(it.value(), v.as_slice());
            }
        }
        peeked
    }

    /// Small enough for Miri (`scripts/miri.sh`), which checks the walks'
    /// prefetches and the peeks at the stacked entries.
    #[test]
    fn a_short_block_walks_both_ways() {
        let mut rng = StdRng::seed_from_u64(9);
        let model = random_model(&mut rng, 24);
        for interval in [1, 4] {
            check_walks(&model, interval);
            let block = build(&model, interval);
            let mut it = iter(&block);
            walk_back_checking_peeks(&mut it);
            it.seek_to_first();
            let next = it.peek_next_value().map(<[u8]>::to_vec);
            it.next();
            assert_eq!(next.as_deref(), it.valid().then(|| it.value()));
        }
    }

    #[test]
    fn peeking_back_gives_the_value_the_next_step_back_reaches() {
        let mut rng = StdRng::seed_from_u64(7);
        let model = random_model(&mut rng, 200);
        for interval in [1, 3, 16] {
            let block = build(&model, interval);
            let mut it = iter(&block);
            let peeked = walk_back_checking_peeks(&mut it);
            // Most steps back come off the stack of a decoded run.
            assert!(peeked > model.len() / 2, "{peeked} of {}", model.len());
            // A forward step forgets the run: nothing to peek at.
            it.seek_to_first();
            it.next();
            assert_eq!(it.peek_prev_value(), None);
        }
    }

    #[test]
    fn peeking_ahead_gives_the_value_the_next_step_reaches() {
        let mut rng = StdRng::seed_from_u64(8);
        let model = random_model(&mut rng, 200);
        for interval in [1, 3, 16] {
            let block = build(&model, interval);
            let mut it = iter(&block);
            assert_eq!(it.peek_next_value(), None, "not positioned");
            it.seek_to_first();
            let mut seen = 1;
            while it.valid() {
                let hint = it.peek_next_value().map(<[u8]>::to_vec);
                it.next();
                match hint {
                    Some(v) => {
                        seen += 1;
                        assert_eq!(it.value(), v.as_slice(), "interval {interval}");
                    }
                    None => assert!(!it.valid(), "only the last entry has none after it"),
                }
            }
            assert_eq!(seen, model.len());
        }
    }

    #[test]
    fn backward_stack_stays_within_the_block_size() {
        // One restart interval of 500 keys sharing a 2000-byte prefix: storing
        // each key whole would take 1 MB; the stacked tails must not.
        let prefix = vec![b'p'; 2000];
        let mut model = Model::new();
        for i in 0..500u32 {
            let mut k = prefix.clone();
            k.extend_from_slice(format!("{i:04}").as_bytes());
            model.insert(k, vec![b'v'; 3]);
        }
        let block = build(&model, 1000);
        let mut it = iter(&block);
        it.seek_to_last();
        assert!(
            it.back.tails.len() <= block.size(),
            "{} bytes",
            it.back.tails.len()
        );
        assert_eq!(it.back.entries.len(), 499);
        check_walks(&model, 1000);
        // From the middle: a lone step back decodes only the current interval,
        // later steps longer runs.
        let small = build(&model, 16);
        let mut it = iter(&small);
        it.seek(&[prefix.as_slice(), b"0250"].concat());
        it.prev();
        assert_eq!(&it.key()[2000..], b"0249");
        assert_eq!(it.back.entries.len(), 249 % 16);
        for _ in 0..249 % 16 + 1 {
            it.prev();
        }
        assert_eq!(&it.key()[2000..], b"0239");
        assert_eq!(it.back.entries.len(), 239);
        // The last intervals of a block with many.
        it.seek_to_last();
        assert_eq!(it.back.entries.len(), 16 * 16 - 1 - (16 - 500 % 16));
    }

    #[test]
    fn single_entry_block() {
        let mut model = Model::new();
        model.insert(b"only".to_vec(), b"value".to_vec());
        check_walks(&model, 16);
        let block = build(&model, 16);
        let mut it = iter(&block);
        it.seek(b"a");
        assert_eq!(entry(&it), Some((b"only".to_vec(), b"value".to_vec())));
        it.prev();
        assert!(!it.valid());
        it.seek(b"only\x00");
        assert!(!it.valid());
        it.seek_to_last();
        it.next();
        assert!(!it.valid());
        it.status().unwrap();
    }

    #[test]
    fn empty_block() {
        let block = build(&Model::new(), 16);
        assert_eq!(block.size(), 8);
        let mut it = iter(&block);
        it.seek_to_first();
        assert!(!it.valid());
        it.seek_to_last();
        assert!(!it.valid());
        it.seek(b"x");
        assert!(!it.valid());
        it.status().unwrap();
        // No restart points at all (never written by LevelDB, but readable).
        let bare = Arc::new(Block::new(vec![0, 0, 0, 0]).unwrap());
        let mut it = iter(&bare);
        it.seek_to_first();
        it.seek_to_last();
        it.seek(b"x");
        assert!(!it.valid());
        it.status().unwrap();
    }

    #[test]
    fn seek_entry_finds_the_first_key_at_or_after_the_target() {
        let mut model = Model::new();
        for i in 0..100u32 {
            model.insert(
                format!("key{:04}", i * 2).into_bytes(),
                i.to_le_bytes().to_vec(),
            );
        }
        let block = build(&model, 16);
        let mut key = b"stale".to_vec();
        let v = block
            .seek_entry(&BytewiseComparator, b"key0013", &mut key)
            .unwrap();
        assert_eq!(
            (key.as_slice(), v),
            (&b"key0014"[..], Some(&7u32.to_le_bytes()[..]))
        );
        let v = block
            .seek_entry(&BytewiseComparator, b"key0000", &mut key)
            .unwrap();
        assert_eq!(
            (key.as_slice(), v),
            (&b"key0000"[..], Some(&0u32.to_le_bytes()[..]))
        );
        assert_eq!(
            block
                .seek_entry(&BytewiseComparator, b"key9", &mut key)
                .unwrap(),
            None
        );
    }

    #[test]
    fn restart_counts_that_cannot_fit_are_refused() {
        assert!(Block::new(vec![]).unwrap_err().is_corruption());
        assert!(Block::new(vec![1, 0, 0]).unwrap_err().is_corruption());
        assert!(Block::new(vec![1, 0, 0, 0]).unwrap_err().is_corruption());
        let mut b = vec![0u8; 8];
        put_fixed32(&mut b, 3);
        assert!(Block::new(b).unwrap_err().is_corruption());
    }

    #[test]
    fn corrupt_entries_stop_the_iterator_with_a_corruption() {
        // Second entry claims to share 9 bytes of a 3-byte key.
        let mut data = vec![0, 3, 0, b'a', b'b', b'c', 9, 1, 0, b'd'];
        put_fixed32(&mut data, 0);
        put_fixed32(&mut data, 1);
        let block = Arc::new(Block::new(data).unwrap());
        let mut it = iter(&block);
        it.seek_to_first();
        assert_eq!(it.key(), b"abc");
        it.next();
        assert!(!it.valid());
        assert!(it.status().unwrap_err().is_corruption());
        let mut it = iter(&block);
        it.seek_to_last();
        assert!(!it.valid());
        assert!(it.status().unwrap_err().is_corruption());

        // A value length that runs past the entries.
        let mut data = vec![0, 1, 50, b'a'];
        put_fixed32(&mut data, 0);
        put_fixed32(&mut data, 1);
        let block = Arc::new(Block::new(data).unwrap());
        let mut it = iter(&block);
        it.seek(b"a");
        assert!(!it.valid());
        assert!(it.status().unwrap_err().is_corruption());

        // A restart point beyond the entries.
        let mut data = vec![0, 1, 0, b'a'];
        put_fixed32(&mut data, 0);
        put_fixed32(&mut data, 40);
        put_fixed32(&mut data, 2);
        let block = Arc::new(Block::new(data).unwrap());
        let mut it = iter(&block);
        it.seek(b"b");
        assert!(!it.valid());
        assert!(it.status().unwrap_err().is_corruption());
    }

    /// Runs every kind of movement over a possibly corrupt block, with a step
    /// budget so a bug cannot hang the test.
    fn exercise(block: &Arc<Block>, targets: &[&[u8]]) {
        let mut it = iter(block);
        let mut steps = 0;
        it.seek_to_first();
        while it.valid() && steps < 10_000 {
            let _ = (it.key(), it.value());
            it.next();
            steps += 1;
        }
        it.seek_to_last();
        while it.valid() && steps < 20_000 {
            let _ = (it.key(), it.value());
            it.prev();
            steps += 1;
        }
        for t in targets {
            it.seek(t);
            for _ in 0..3 {
                if it.valid() {
                    it.prev();
                }
            }
            for _ in 0..3 {
                if it.valid() {
                    it.next();
                }
            }
        }
        if let Err(e) = it.status() {
            assert!(e.is_corruption(), "{e}");
        }
    }

    #[test]
    fn damaged_blocks_never_panic() {
        let mut rng = StdRng::seed_from_u64(7);
        let model = random_model(&mut rng, 40);
        let targets: Vec<&[u8]> = model.keys().map(|k| k.as_slice()).take(10).collect();
        for interval in [1, 3, 16] {
            let good = build(&model, interval).data().to_vec();
            for i in 0..good.len() {
                for v in [good[i] ^ 0x01, good[i] ^ 0x80, 0xff, 0x00] {
                    let mut bad = good.clone();
                    bad[i] = v;
                    if let Ok(b) = Block::new(bad) {
                        exercise(&Arc::new(b), &targets);
                    }
                }
            }
            for cut in 0..good.len() {
                if let Ok(b) = Block::new(good[..cut].to_vec()) {
                    exercise(&Arc::new(b), &targets);
                }
            }
        }
    }
}
