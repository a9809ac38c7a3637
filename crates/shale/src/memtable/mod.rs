//! The memtable: recent writes, sorted in memory until they are flushed to a
//! table file.
//!
//! Each write is one skiplist entry in LevelDB's layout:
//! `varint32 internal_key_len | user_key | fixed64 (seq << 8 | type) |
//! varint32 value_len | value`. Entries are ordered by the internal key order
//! (user key ascending, then sequence and type descending), so for each user
//! key the newest version comes first and a lookup as of sequence `s` is one
//! seek to `(user_key, s)`.
//!
//! Invariants: entries are only added, never changed or removed; every entry
//! was encoded by [`MemTable::add`], so decoding one cannot fail (the decoders
//! still fall back to empty slices instead of panicking). Inserts may run from
//! several threads at once, and readers never lock.

pub mod arena;
pub mod filter;
pub mod skiplist;

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::keys::{
    pack_sequence_and_type, InternalKeyComparator, LookupKey, SequenceNumber, ValueType,
};
use crate::util::coding::{get_length_prefixed_slice, varint_length};

use filter::KeyFilter;
use skiplist::{Iter, KeyComparator, ListHandle, SkipList};

/// The internal key of an entry (the length-prefixed part at its start).
#[inline]
fn entry_key(entry: &[u8]) -> &[u8] {
    let mut s = entry;
    get_length_prefixed_slice(&mut s).unwrap_or_default()
}

/// The internal key and the value of an entry.
#[inline]
fn entry_key_value(entry: &[u8]) -> (&[u8], &[u8]) {
    let mut s = entry;
    let key = get_length_prefixed_slice(&mut s).unwrap_or_default();
    let value = get_length_prefixed_slice(&mut s).unwrap_or_default();
    (key, value)
}

/// Splits an internal key into user key and trailer (empty key and 0 if it
/// is shorter than a trailer, which entries written by `add` never are).
#[inline]
fn split_internal_key(ikey: &[u8]) -> (&[u8], u64) {
    match ikey.len().checked_sub(8) {
        Some(n) => {
            let (user, tag) = ikey.split_at(n);
            let mut t = [0u8; 8];
            t.copy_from_slice(tag);
            (user, u64::from_le_bytes(t))
        }
        None => (&[], 0),
    }
}

/// The user key and trailer of an entry; a single-byte length prefix (keys
/// under 120 bytes) takes the short path.
#[inline(always)]
fn entry_user_key_and_tag(entry: &[u8]) -> (&[u8], u64) {
    if let Some((&len, rest)) = entry.split_first() {
        let len = usize::from(len);
        if (8..0x80).contains(&len) {
            if let Some((user, tag)) = rest.get(..len).and_then(|k| k.split_at_checked(len - 8)) {
                if let Ok(tag) = <[u8; 8]>::try_from(tag) {
                    return (user, u64::from_le_bytes(tag));
                }
            }
        }
    }
    split_internal_key(entry_key(entry))
}

/// Orders memtable entries (and length-prefixed lookup keys) by their
/// internal keys.
#[derive(Clone)]
pub struct MemTableKeyComparator {
    icmp: InternalKeyComparator,
}

impl MemTableKeyComparator {
    fn new(icmp: InternalKeyComparator) -> MemTableKeyComparator {
        MemTableKeyComparator { icmp }
    }

    #[inline]
    fn compare_user_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.icmp.compare_user_keys(a, b)
    }
}

/// An internal key split for comparisons: the user key and the trailer.
#[derive(Clone, Copy, Debug)]
pub struct MemKey<'a> {
    user_key: &'a [u8],
    trailer: u64,
}

impl<'a> MemKey<'a> {
    /// Splits an internal key (a malformed one becomes an empty key with a
    /// zero trailer, which sorts last for the empty user key).
    #[inline]
    pub fn from_internal_key(ikey: &'a [u8]) -> MemKey<'a> {
        let (user_key, trailer) = split_internal_key(ikey);
        MemKey { user_key, trailer }
    }
}

impl KeyComparator for MemTableKeyComparator {
    type Key<'a> = MemKey<'a>;

    #[inline]
    fn decode<'a>(&self, key: &'a [u8]) -> MemKey<'a> {
        MemKey::from_internal_key(entry_key(key))
    }

    #[inline(always)]
    fn compare_key(&self, entry: &[u8], key: &MemKey<'_>) -> Ordering {
        let (user, tag) = entry_user_key_and_tag(entry);
        match self.compare_user_keys(user, key.user_key) {
            // Higher trailers (newer) sort first.
            Ordering::Equal => key.trailer.cmp(&tag),
            o => o,
        }
    }
}

/// The result of a memtable lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemGet<'a> {
    /// The newest visible entry is a value (borrowed from the memtable).
    Value(&'a [u8]),
    /// The newest visible entry is a blob pointer (borrowed from the memtable).
    Blob(&'a [u8]),
    /// The newest visible entry is a deletion.
    Deleted,
    /// The memtable has no visible entry for the key.
    NotFound,
}

/// An in-memory sorted buffer of writes; see the module documentation.
pub struct MemTable {
    list: SkipList<MemTableKeyComparator>,
    /// Rules out most lookups of keys the memtable does not hold.
    filter: Option<KeyFilter>,
}

impl MemTable {
    /// An empty memtable ordered by `icmp`.
    pub fn new(icmp: InternalKeyComparator) -> MemTable {
        MemTable {
            list: SkipList::new(MemTableKeyComparator::new(icmp)),
            filter: None,
        }
    }

    /// An empty memtable ordered by `icmp` with a [`KeyFilter`] of about
    /// `filter_bytes` bytes over its user keys, when user keys are ordered
    /// bytewise (equal keys are then equal bytes), and `filter_bytes > 0`.
    pub fn with_key_filter(icmp: InternalKeyComparator, filter_bytes: usize) -> MemTable {
        let filter = (filter_bytes > 0 && icmp.user_comparator().is_bytewise())
            .then(|| KeyFilter::new(filter_bytes));
        MemTable {
            list: SkipList::new(MemTableKeyComparator::new(icmp)),
            filter,
        }
    }

    #[cfg(test)]
    /// The internal key comparator.
    pub fn comparator(&self) -> &InternalKeyComparator {
        &self.list.comparator().icmp
    }

    /// Adds an entry for `user_key` at sequence `seq`: a value, or (with
    /// [`ValueType::Deletion`]) a tombstone whose `value` is normally empty.
    /// Thread-safe: may be called from several threads at once. Each
    /// `(user_key, seq, t)` must be added at most once.
    ///
    /// # Panics
    /// If the entry would take more than 4 GiB: the write path refuses such
    /// an update before it is logged, and recovery treats one found in a log
    /// as corruption (`batch::check_update`).
    pub fn add(&self, seq: SequenceNumber, t: ValueType, user_key: &[u8], value: &[u8]) {
        let (Ok(key_len), Ok(value_len)) = (
            u32::try_from(user_key.len() + 8),
            u32::try_from(value.len()),
        ) else {
            panic!("memtable keys and values are limited to 4 GiB");
        };
        let len = varint_length(key_len as u64)
            + key_len as usize
            + varint_length(value_len as u64)
            + value.len();
        let tag = pack_sequence_and_type(seq, t).to_le_bytes();
        // Before the entry is visible (see the filter's invariants).
        if let Some(filter) = &self.filter {
            filter.add(user_key);
        }
        // `len` was computed from exactly these parts, so they fill the entry.
        let inserted = self.list.insert_with(len, |w| {
            w.put_varint32(key_len);
            w.put(user_key);
            w.put(&tag);
            w.put_varint32(value_len);
            w.put(value);
        });
        debug_assert!(inserted, "the same internal key was added twice");
    }

    /// The newest entry for `key.user_key()` with sequence `<=` the lookup's.
    #[inline]
    pub fn get(&self, key: &LookupKey) -> MemGet<'_> {
        if let Some(filter) = &self.filter {
            if !filter.may_contain(key.user_key()) {
                return MemGet::NotFound;
            }
        }
        let target = MemKey::from_internal_key(key.internal_key());
        let Some(entry) = self.list.first_at_or_after_key(&target) else {
            return MemGet::NotFound;
        };
        let (ikey, value) = entry_key_value(entry);
        let (found_user, tag) = split_internal_key(ikey);
        if self
            .list
            .comparator()
            .compare_user_keys(found_user, target.user_key)
            != Ordering::Equal
        {
            return MemGet::NotFound;
        }
        match ValueType::from_u8(tag as u8) {
            Some(ValueType::Value) => MemGet::Value(value),
            Some(ValueType::BlobIndex) => MemGet::Blob(value),
            Some(ValueType::Deletion) => MemGet::Deleted,
            None => MemGet::NotFound,
        }
    }

    /// An iterator over the entries, keeping the memtable alive.
    pub fn iter(self: &Arc<Self>) -> MemTableIterator {
        MemTableIterator {
            iter: Iter::new(MemTableHandle(Arc::clone(self))),
        }
    }

    /// Bytes of memory held (an atomic load).
    #[inline]
    pub fn approximate_memory_usage(&self) -> usize {
        self.list.memory_usage()
    }

    #[cfg(test)]
    /// Number of entries added.
    #[inline]
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True when nothing has been added.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// Keeps a memtable alive for an iterator.
struct MemTableHandle(Arc<MemTable>);

// SAFETY: the `Arc` keeps the memtable, and so its skiplist, alive and at a
// fixed address for as long as the handle exists.
unsafe impl ListHandle for MemTableHandle {
    type Cmp = MemTableKeyComparator;
    #[inline]
    fn list(&self) -> &SkipList<MemTableKeyComparator> {
        &self.0.list
    }
}

/// An iterator over a memtable: keys are internal keys, in internal key order.
pub struct MemTableIterator {
    iter: Iter<MemTableHandle>,
}

impl InternalIterator for MemTableIterator {
    #[inline]
    fn valid(&self) -> bool {
        self.iter.valid()
    }

    fn seek_to_first(&mut self) {
        self.iter.seek_to_first();
    }

    fn seek_to_last(&mut self) {
        self.iter.seek_to_last();
    }

    /// Positions at the first entry whose internal key is `>= target` (an internal key).
    fn seek(&mut self, target: &[u8]) {
        self.iter.seek_key(&MemKey::from_internal_key(target));
    }

    #[inline]
    fn next(&mut self) {
        self.iter.next();
    }

    #[inline]
    fn prev(&mut self) {
        self.iter.prev();
    }

    #[inline]
    fn key(&self) -> &[u8] {
        entry_key(self.iter.entry())
    }

    #[inline]
    fn value(&self) -> &[u8] {
        entry_key_value(self.iter.entry()).1
    }

    fn status(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
