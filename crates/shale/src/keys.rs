//! Internal keys: a user key followed by an 8-byte trailer packing the
//! sequence number (56 bits) and the value type (8 bits), little-endian.
//!
//! Internal keys order by user key ascending (the user comparator), then by
//! sequence number descending, then by type descending, so the newest entry for
//! a user key comes first. This is LevelDB's `dbformat`.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::comparator::{compare_bytes, Comparator};
use crate::util::coding::{decode_fixed64, put_fixed64, put_varint32, varint_length};

/// A write's position in the history of the database.
pub type SequenceNumber = u64;

/// The largest sequence number that fits in the 56 bits of a trailer.
pub const MAX_SEQUENCE_NUMBER: SequenceNumber = (1 << 56) - 1;

/// The kind of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum ValueType {
    /// A tombstone: the key was deleted.
    Deletion = 0,
    /// A value.
    Value = 1,
    /// A pointer to a value in a blob file (`blob/format.rs`); Shale's own
    /// type, not LevelDB's (a tag LevelDB does not use).
    BlobIndex = 0x11,
}

impl ValueType {
    /// Decodes the on-disk tag byte.
    pub fn from_u8(b: u8) -> Option<ValueType> {
        match b {
            0 => Some(ValueType::Deletion),
            1 => Some(ValueType::Value),
            0x11 => Some(ValueType::BlobIndex),
            _ => None,
        }
    }
}

/// The type used when seeking: with sequence numbers sorted descending, the
/// highest type sorts first, so a seek key finds every entry of its sequence.
/// (Seek keys live in memory only; the keys written into tables use
/// [`ValueType::Value`], as LevelDB does, so that table files stay
/// byte-for-byte LevelDB's.)
pub const VALUE_TYPE_FOR_SEEK: ValueType = ValueType::BlobIndex;

/// Packs a sequence number and type into the 8-byte trailer value.
#[inline]
pub fn pack_sequence_and_type(seq: SequenceNumber, t: ValueType) -> u64 {
    debug_assert!(seq <= MAX_SEQUENCE_NUMBER);
    (seq << 8) | t as u64
}

/// Appends the internal key for (`user_key`, `seq`, `t`) to `dst`.
#[inline]
pub fn append_internal_key(dst: &mut Vec<u8>, user_key: &[u8], seq: SequenceNumber, t: ValueType) {
    dst.extend_from_slice(user_key);
    put_fixed64(dst, pack_sequence_and_type(seq, t));
}

/// The user key part of an internal key. The caller guarantees `ikey.len() >= 8`
/// (every internal key that passed [`parse_internal_key`] does); shorter input gives an empty key.
#[inline]
pub fn extract_user_key(ikey: &[u8]) -> &[u8] {
    &ikey[..ikey.len().saturating_sub(8)]
}

/// The packed trailer of an internal key (0 if the key is malformed).
#[inline]
pub fn extract_trailer(ikey: &[u8]) -> u64 {
    if ikey.len() < 8 {
        return 0;
    }
    decode_fixed64(&ikey[ikey.len() - 8..]).unwrap_or(0)
}

/// An internal key split into its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedInternalKey<'a> {
    /// The user's key.
    pub user_key: &'a [u8],
    /// The sequence number of the write.
    pub sequence: SequenceNumber,
    /// Value or deletion.
    pub value_type: ValueType,
}

/// Splits an internal key; `None` if it is shorter than 8 bytes or has an unknown type.
#[inline]
pub fn parse_internal_key(ikey: &[u8]) -> Option<ParsedInternalKey<'_>> {
    if ikey.len() < 8 {
        return None;
    }
    let n = ikey.len() - 8;
    let tag = decode_fixed64(&ikey[n..])?;
    let value_type = ValueType::from_u8((tag & 0xff) as u8)?;
    Some(ParsedInternalKey {
        user_key: &ikey[..n],
        sequence: tag >> 8,
        value_type,
    })
}

/// An owned internal key.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct InternalKey(Vec<u8>);

impl InternalKey {
    /// Builds the internal key for (`user_key`, `seq`, `t`).
    pub fn new(user_key: &[u8], seq: SequenceNumber, t: ValueType) -> InternalKey {
        let mut v = Vec::with_capacity(user_key.len() + 8);
        append_internal_key(&mut v, user_key, seq, t);
        InternalKey(v)
    }

    /// Wraps already-encoded bytes (as read from a MANIFEST).
    pub fn from_encoded(bytes: Vec<u8>) -> InternalKey {
        InternalKey(bytes)
    }

    /// The encoded bytes.
    pub fn encoded(&self) -> &[u8] {
        &self.0
    }

    /// The user key part.
    pub fn user_key(&self) -> &[u8] {
        extract_user_key(&self.0)
    }
}

impl std::fmt::Debug for InternalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match parse_internal_key(&self.0) {
            Some(p) => write!(
                f,
                "'{}' @ {} : {:?}",
                p.user_key.escape_ascii(),
                p.sequence,
                p.value_type
            ),
            None => write!(f, "(bad) {}", self.0.escape_ascii()),
        }
    }
}

/// Orders internal keys: user key ascending, then trailer descending.
#[derive(Clone)]
pub struct InternalKeyComparator {
    user: Arc<dyn Comparator>,
    /// `user.is_bytewise()`, cached: user keys are then compared inline.
    bytewise: bool,
}

impl InternalKeyComparator {
    /// Wraps a user comparator.
    pub fn new(user: Arc<dyn Comparator>) -> InternalKeyComparator {
        let bytewise = user.is_bytewise();
        InternalKeyComparator { user, bytewise }
    }

    /// The user comparator.
    pub fn user_comparator(&self) -> &Arc<dyn Comparator> {
        &self.user
    }

    /// Compares two user keys with the user comparator (inline when it is
    /// the bytewise order).
    #[inline]
    pub fn compare_user_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.bytewise {
            compare_bytes(a, b)
        } else {
            self.user.compare(a, b)
        }
    }

    /// Compares two encoded internal keys.
    #[inline]
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self.compare_user_keys(extract_user_key(a), extract_user_key(b)) {
            Ordering::Equal => extract_trailer(b).cmp(&extract_trailer(a)),
            o => o,
        }
    }
}

impl Comparator for InternalKeyComparator {
    fn name(&self) -> &str {
        "leveldb.InternalKeyComparator"
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        InternalKeyComparator::compare(self, a, b)
    }

    fn bytewise_with_trailer(&self) -> Option<usize> {
        // User keys first, then the 8-byte trailer.
        self.bytewise.then_some(8)
    }

    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let user_start = extract_user_key(start);
        let user_limit = extract_user_key(limit);
        let mut tmp = user_start.to_vec();
        self.user.find_shortest_separator(&mut tmp, user_limit);
        if tmp.len() < user_start.len() && self.user.compare(user_start, &tmp) == Ordering::Less {
            // The user key became shorter physically but larger logically:
            // give it the earliest possible trailer.
            put_fixed64(
                &mut tmp,
                pack_sequence_and_type(MAX_SEQUENCE_NUMBER, ValueType::Value),
            );
            debug_assert!(self.compare(start, &tmp) == Ordering::Less);
            debug_assert!(self.compare(&tmp, limit) == Ordering::Less);
            *start = tmp;
        }
    }

    fn find_short_successor(&self, key: &mut Vec<u8>) {
        let user_key = extract_user_key(key);
        let mut tmp = user_key.to_vec();
        self.user.find_short_successor(&mut tmp);
        if tmp.len() < user_key.len() && self.user.compare(user_key, &tmp) == Ordering::Less {
            put_fixed64(
                &mut tmp,
                pack_sequence_and_type(MAX_SEQUENCE_NUMBER, ValueType::Value),
            );
            *key = tmp;
        }
    }
}

/// Lookup keys of up to this many bytes (length prefix and internal key)
/// are built on the stack; longer ones allocate.
const LOOKUP_KEY_INLINE: usize = 64;

/// A key for looking up `user_key` as of `sequence`, in the three forms the
/// read path needs: the memtable key (varint length + internal key), the
/// internal key, and the user key.
///
/// Invariant: the key is `inline[..len]` when `heap` is empty, else `heap`.
pub struct LookupKey {
    inline: [u8; LOOKUP_KEY_INLINE],
    len: usize,
    heap: Vec<u8>,
    key_start: usize,
}

impl LookupKey {
    /// Builds the lookup key (without allocating for keys up to 50 bytes or so).
    #[inline]
    pub fn new(user_key: &[u8], sequence: SequenceNumber) -> LookupKey {
        let internal_len = user_key.len() + 8;
        let total = internal_len + varint_length(internal_len as u64);
        let mut k = LookupKey {
            inline: [0; LOOKUP_KEY_INLINE],
            len: 0,
            heap: Vec::new(),
            key_start: 0,
        };
        if total <= LOOKUP_KEY_INLINE {
            // A length below 64 is a one-byte varint.
            k.inline[0] = internal_len as u8;
            let mut at = 1;
            k.key_start = at;
            k.inline[at..at + user_key.len()].copy_from_slice(user_key);
            at += user_key.len();
            k.inline[at..at + 8].copy_from_slice(
                &pack_sequence_and_type(sequence, VALUE_TYPE_FOR_SEEK).to_le_bytes(),
            );
            k.len = at + 8;
        } else {
            let mut data = Vec::with_capacity(total);
            put_varint32(&mut data, internal_len as u32);
            k.key_start = data.len();
            append_internal_key(&mut data, user_key, sequence, VALUE_TYPE_FOR_SEEK);
            k.heap = data;
        }
        k
    }

    #[inline]
    fn data(&self) -> &[u8] {
        if self.heap.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }

    #[cfg(test)]
    /// Length-prefixed internal key, the memtable's entry format.
    #[inline]
    pub fn memtable_key(&self) -> &[u8] {
        self.data()
    }

    /// The internal key.
    #[inline]
    pub fn internal_key(&self) -> &[u8] {
        &self.data()[self.key_start..]
    }

    /// The user key.
    #[inline]
    pub fn user_key(&self) -> &[u8] {
        let data = self.data();
        &data[self.key_start..data.len() - 8]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::BytewiseComparator;

    fn ikey(k: &[u8], s: u64, t: ValueType) -> Vec<u8> {
        InternalKey::new(k, s, t).encoded().to_vec()
    }

    #[test]
    fn encode_decode() {
        for k in [&b""[..], b"k", b"hello", b"longggggggggggggggggggggg"] {
            for s in [
                1u64,
                2,
                3,
                (1 << 8) - 1,
                1 << 8,
                (1 << 32) + 1,
                MAX_SEQUENCE_NUMBER,
            ] {
                for t in [ValueType::Value, ValueType::Deletion] {
                    let enc = ikey(k, s, t);
                    let p = parse_internal_key(&enc).unwrap();
                    assert_eq!((p.user_key, p.sequence, p.value_type), (k, s, t));
                }
            }
        }
        assert!(parse_internal_key(b"bar").is_none());
        let mut bad = ikey(b"k", 5, ValueType::Value);
        bad[1] = 7; // type byte 7 is unknown
        assert!(parse_internal_key(&bad).is_none());
    }

    #[test]
    fn order_is_user_key_then_newest_first() {
        let c = InternalKeyComparator::new(Arc::new(BytewiseComparator));
        let a1 = ikey(b"a", 1, ValueType::Value);
        let a2 = ikey(b"a", 2, ValueType::Value);
        let a2d = ikey(b"a", 2, ValueType::Deletion);
        let b1 = ikey(b"b", 1, ValueType::Value);
        assert_eq!(c.compare(&a2, &a1), Ordering::Less);
        assert_eq!(c.compare(&a2, &a2d), Ordering::Less);
        assert_eq!(c.compare(&a1, &b1), Ordering::Less);
    }

    fn shorten(s: &[u8], l: &[u8]) -> Vec<u8> {
        let c = InternalKeyComparator::new(Arc::new(BytewiseComparator));
        let mut v = s.to_vec();
        c.find_shortest_separator(&mut v, l);
        v
    }

    #[test]
    fn internal_separator() {
        let v = ValueType::Value;
        // When user keys are the same.
        assert_eq!(
            shorten(&ikey(b"foo", 100, v), &ikey(b"foo", 99, v)),
            ikey(b"foo", 100, v)
        );
        // When user keys are misordered.
        assert_eq!(
            shorten(&ikey(b"foo", 100, v), &ikey(b"bar", 99, v)),
            ikey(b"foo", 100, v)
        );
        // When user keys are different but correctly ordered.
        assert_eq!(
            shorten(&ikey(b"foo", 100, v), &ikey(b"hello", 200, v)),
            // LevelDB's trailer: tables stay byte-for-byte LevelDB's.
            ikey(b"g", MAX_SEQUENCE_NUMBER, ValueType::Value)
        );
        // When start user key is a prefix of limit user key.
        assert_eq!(
            shorten(&ikey(b"foo", 100, v), &ikey(b"foobar", 200, v)),
            ikey(b"foo", 100, v)
        );
    }

    #[test]
    fn lookup_key_forms() {
        let lk = LookupKey::new(b"user", 42);
        assert_eq!(lk.user_key(), b"user");
        assert_eq!(
            lk.internal_key(),
            &ikey(b"user", 42, VALUE_TYPE_FOR_SEEK)[..]
        );
        assert_eq!(lk.memtable_key()[0] as usize, 12);
        assert_eq!(&lk.memtable_key()[1..], lk.internal_key());
    }

    #[test]
    fn lookup_keys_of_every_size_have_the_same_forms() {
        // Around the inline limit, and long enough for a two-byte length.
        for len in [0usize, 1, 40, 54, 55, 56, 57, 100, 119, 120, 121, 300] {
            let user: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            let lk = LookupKey::new(&user, 7 << 20);
            assert_eq!(lk.user_key(), &user[..], "len {len}");
            let want = ikey(&user, 7 << 20, VALUE_TYPE_FOR_SEEK);
            assert_eq!(lk.internal_key(), &want[..], "len {len}");
            let mut memkey = Vec::new();
            put_varint32(&mut memkey, want.len() as u32);
            memkey.extend_from_slice(&want);
            assert_eq!(lk.memtable_key(), &memkey[..], "len {len}");
        }
    }
}
