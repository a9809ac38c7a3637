//! A write batch: a group of puts and deletes applied atomically, in
//! LevelDB's `WriteBatch` encoding, which is also the payload of a log record.
//!
//! ```text
//! rep    := sequence: fixed64, count: fixed32, record*
//! record := 0x01 varstring(key) varstring(value)   (put)
//!         | 0x00 varstring(key)                     (delete)
//! varstring := varint32 length, bytes
//! ```
//!
//! Invariants: `rep` always holds the 12-byte header (`from_contents`
//! refuses shorter input), and for a batch built through the public methods
//! `count` equals the number of well-formed records. A batch read back from
//! a log may break the second rule; `WriteBatch::for_each` checks it and
//! reports corruption.

use std::fmt;

use crate::error::{Error, Result};
use crate::keys::{SequenceNumber, ValueType};
use crate::util::coding::{
    decode_fixed32, decode_fixed64, get_length_prefixed_slice, put_length_prefixed_slice,
    varint_length,
};

/// Size of the header: an 8-byte sequence number and a 4-byte count.
pub(crate) const HEADER_SIZE: usize = 12;

/// A set of updates applied to the database atomically, in the order they
/// were added.
///
/// ```
/// use shale::WriteBatch;
///
/// let mut batch = WriteBatch::new();
/// batch.put(b"key", b"value")?;
/// batch.delete(b"old")?;
/// assert_eq!(batch.count(), 2);
/// # Ok::<(), shale::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct WriteBatch {
    rep: Vec<u8>,
}

/// One update of a [`WriteBatch`], borrowed from it.
///
/// ```
/// use shale::{BatchOp, WriteBatch};
/// # fn main() -> shale::Result<()> {
/// let mut batch = WriteBatch::new();
/// batch.put(b"k", b"v")?;
/// batch.delete(b"old")?;
/// let ops: Vec<BatchOp> = batch.iter().collect();
/// assert_eq!(ops, [BatchOp::Put { key: b"k", value: b"v" }, BatchOp::Delete { key: b"old" }]);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOp<'a> {
    /// Set `key` to `value`.
    Put {
        /// The key.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
    },
    /// Remove `key`.
    Delete {
        /// The key.
        key: &'a [u8],
    },
}

impl Default for WriteBatch {
    fn default() -> WriteBatch {
        WriteBatch::new()
    }
}

impl WriteBatch {
    /// An empty batch.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// let mut batch = shale::WriteBatch::new();
    /// assert!(batch.is_empty());
    /// batch.put(b"a", b"1")?;
    /// batch.put(b"b", b"2")?;
    /// db.write(&shale::WriteOptions::default(), &batch)?;
    /// assert_eq!(db.get(b"b")?.as_deref(), Some(&b"2"[..]));
    /// # Ok(()) }
    /// ```
    pub fn new() -> WriteBatch {
        WriteBatch::with_capacity(0)
    }

    /// An empty batch with room for about `bytes` bytes of updates (each
    /// update takes its key and value plus a few bytes), so that filling it
    /// does not reallocate.
    ///
    /// ```
    /// let mut batch = shale::WriteBatch::with_capacity(64);
    /// batch.put(b"key", b"value")?;
    /// assert_eq!(batch.count(), 1);
    /// # Ok::<(), shale::Error>(())
    /// ```
    pub fn with_capacity(bytes: usize) -> WriteBatch {
        let mut rep = Vec::with_capacity(HEADER_SIZE.saturating_add(bytes));
        rep.resize(HEADER_SIZE, 0);
        WriteBatch { rep }
    }

    /// Adds "set `key` to `value`".
    ///
    /// Fails with [`Error::InvalidArgument`] (leaving the batch unchanged) if
    /// the key is longer than [`MAX_KEY_LEN`], the value than
    /// [`MAX_VALUE_LEN`], the two together take more than `u32::MAX` bytes
    /// in a memtable entry (with their lengths and tag), or the batch already
    /// holds `u32::MAX` updates. Nothing oversized ever reaches the log.
    ///
    /// ```
    /// let mut batch = shale::WriteBatch::new();
    /// batch.put(b"fruit", b"apple")?;
    /// assert!(!batch.is_empty());
    /// # Ok::<(), shale::Error>(())
    /// ```
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let count = self.next_count(1)?;
        check_update(key.len(), value.len())?;
        self.rep.reserve(
            1 + varint_length(key.len() as u64)
                + key.len()
                + varint_length(value.len() as u64)
                + value.len(),
        );
        self.rep.push(ValueType::Value as u8);
        put_length_prefixed_slice(&mut self.rep, key);
        put_length_prefixed_slice(&mut self.rep, value);
        self.set_count(count);
        Ok(())
    }

    /// Adds "remove `key`" (a no-op for keys that are not present).
    ///
    /// Fails like [`WriteBatch::put`].
    ///
    /// ```
    /// let mut batch = shale::WriteBatch::new();
    /// batch.delete(b"fruit")?;
    /// assert_eq!(batch.count(), 1);
    /// # Ok::<(), shale::Error>(())
    /// ```
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        let count = self.next_count(1)?;
        check_update(key.len(), 0)?;
        self.rep.push(ValueType::Deletion as u8);
        put_length_prefixed_slice(&mut self.rep, key);
        self.set_count(count);
        Ok(())
    }

    /// Removes every update, keeping the allocated memory.
    ///
    /// ```
    /// let mut batch = shale::WriteBatch::new();
    /// batch.put(b"k", b"v")?;
    /// batch.clear();
    /// assert!(batch.is_empty());
    /// # Ok::<(), shale::Error>(())
    /// ```
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(HEADER_SIZE, 0);
    }

    /// Adds all of `other`'s updates after this batch's.
    ///
    /// Fails with [`Error::InvalidArgument`] (leaving the batch unchanged) if
    /// the combined count would exceed `u32::MAX`.
    ///
    /// ```
    /// let mut a = shale::WriteBatch::new();
    /// a.put(b"a", b"1")?;
    /// let mut b = shale::WriteBatch::new();
    /// b.delete(b"b")?;
    /// a.append(&b)?;
    /// assert_eq!(a.count(), 2);
    /// # Ok::<(), shale::Error>(())
    /// ```
    pub fn append(&mut self, other: &WriteBatch) -> Result<()> {
        let count = self.next_count(other.count())?;
        self.rep
            .extend_from_slice(other.rep.get(HEADER_SIZE..).unwrap_or_default());
        self.set_count(count);
        Ok(())
    }

    /// The size of the encoded batch in bytes, a measure of the memory and
    /// log space it will take.
    ///
    /// ```
    /// let mut batch = shale::WriteBatch::new();
    /// let empty = batch.approximate_size();
    /// batch.put(b"key", b"value")?;
    /// assert!(batch.approximate_size() > empty);
    /// # Ok::<(), shale::Error>(())
    /// ```
    #[inline]
    pub fn approximate_size(&self) -> usize {
        self.rep.len()
    }

    /// The number of updates.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// let mut batch = shale::WriteBatch::new();
    /// batch.put(b"k", b"v")?;
    /// batch.delete(b"k")?;
    /// assert_eq!(batch.count(), 2);
    /// batch.clear();
    /// assert_eq!(batch.count(), 0);
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn count(&self) -> u32 {
        self.rep.get(8..).and_then(decode_fixed32).unwrap_or(0)
    }

    /// True if the batch holds no updates.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// let mut batch = shale::WriteBatch::new();
    /// assert!(batch.is_empty());
    /// batch.delete(b"k")?;
    /// assert!(!batch.is_empty());
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// The updates, in the order they were added.
    ///
    /// ```
    /// use shale::BatchOp;
    ///
    /// let mut batch = shale::WriteBatch::new();
    /// batch.put(b"k", b"v")?;
    /// batch.delete(b"gone")?;
    /// let ops: Vec<BatchOp> = batch.iter().collect();
    /// assert_eq!(ops, [
    ///     BatchOp::Put { key: b"k", value: b"v" },
    ///     BatchOp::Delete { key: b"gone" },
    /// ]);
    /// # Ok::<(), shale::Error>(())
    /// ```
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            rest: self.rep.get(HEADER_SIZE..).unwrap_or_default(),
        }
    }
}

/// The crate-internal side: the write path stamps sequence numbers and logs
/// the encoding; recovery rebuilds batches from log records.
impl WriteBatch {
    /// The sequence number of the first update.
    #[inline]
    pub(crate) fn sequence(&self) -> SequenceNumber {
        decode_fixed64(&self.rep).unwrap_or(0)
    }

    /// Sets the sequence number of the first update; the others follow it.
    #[inline]
    pub(crate) fn set_sequence(&mut self, seq: SequenceNumber) {
        if let Some(header) = self.rep.get_mut(..8) {
            header.copy_from_slice(&seq.to_le_bytes());
        }
    }

    /// The encoded batch (the payload of a log record).
    #[inline]
    pub(crate) fn contents(&self) -> &[u8] {
        &self.rep
    }

    /// The encoded batch, taken out.
    pub(crate) fn into_contents(self) -> Vec<u8> {
        self.rep
    }

    /// A batch over encoded bytes read from a log. Only the header length is
    /// checked here; [`WriteBatch::for_each`] checks the records.
    pub(crate) fn from_contents(contents: Vec<u8>) -> Result<WriteBatch> {
        if contents.len() < HEADER_SIZE {
            return Err(Error::bad_data(format!(
                "malformed WriteBatch: {} bytes is too small for the header",
                contents.len()
            )));
        }
        Ok(WriteBatch { rep: contents })
    }

    /// Calls `f(type, key, value)` for every update in order (`value` is
    /// empty for deletions), stopping at the first error `f` returns.
    ///
    /// Returns corruption for a malformed record, an unknown tag, or a count
    /// in the header that does not match the records. `f` has then already
    /// been called for the well-formed records before the damage.
    pub(crate) fn for_each(
        &self,
        mut f: impl FnMut(ValueType, &[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        let Some(mut input) = self.rep.get(HEADER_SIZE..) else {
            return Err(Error::bad_data("malformed WriteBatch (too small)"));
        };
        let mut found: u64 = 0;
        while let Some((&tag, rest)) = input.split_first() {
            let at = self.rep.len() - input.len();
            input = rest;
            found += 1;
            match ValueType::from_u8(tag) {
                Some(t @ (ValueType::Value | ValueType::BlobIndex)) => {
                    let (Some(key), Some(value)) = (
                        get_length_prefixed_slice(&mut input),
                        get_length_prefixed_slice(&mut input),
                    ) else {
                        return Err(Error::bad_data(format!("bad WriteBatch Put at byte {at}")));
                    };
                    f(t, key, value)?;
                }
                Some(ValueType::Deletion) => {
                    let Some(key) = get_length_prefixed_slice(&mut input) else {
                        return Err(Error::bad_data(format!(
                            "bad WriteBatch Delete at byte {at}"
                        )));
                    };
                    f(ValueType::Deletion, key, &[])?;
                }
                None => {
                    return Err(Error::bad_data(format!(
                        "unknown WriteBatch tag {tag} at byte {at}"
                    )));
                }
            }
        }
        let count = self.count();
        if found != u64::from(count) {
            return Err(Error::bad_data(format!(
                "WriteBatch has wrong count: header says {count}, found {found}"
            )));
        }
        Ok(())
    }
}

impl WriteBatch {
    /// Adds "set `key` to the value in a blob file that `pointer` (an
    /// encoded blob pointer) addresses": the write path's replacement of a
    /// large value. The pointer is a few bytes, so no size check applies.
    pub(crate) fn put_blob_index(&mut self, key: &[u8], pointer: &[u8]) -> Result<()> {
        let count = self.next_count(1)?;
        self.rep.push(ValueType::BlobIndex as u8);
        put_length_prefixed_slice(&mut self.rep, key);
        put_length_prefixed_slice(&mut self.rep, pointer);
        self.set_count(count);
        Ok(())
    }

    /// Adds an update of type `t` without the size check (it was checked
    /// when it entered another batch); `value` is ignored for a deletion.
    pub(crate) fn copy_op(&mut self, t: ValueType, key: &[u8], value: &[u8]) -> Result<()> {
        let count = self.next_count(1)?;
        self.rep.push(t as u8);
        put_length_prefixed_slice(&mut self.rep, key);
        if t != ValueType::Deletion {
            put_length_prefixed_slice(&mut self.rep, value);
        }
        self.set_count(count);
        Ok(())
    }

    /// The count after adding `n` updates, refusing to overflow.
    #[inline]
    fn next_count(&self, n: u32) -> Result<u32> {
        self.count().checked_add(n).ok_or_else(|| {
            Error::InvalidArgument(format!("a write batch holds at most {} updates", u32::MAX))
        })
    }

    #[inline]
    fn set_count(&mut self, count: u32) {
        if let Some(field) = self.rep.get_mut(8..HEADER_SIZE) {
            field.copy_from_slice(&count.to_le_bytes());
        }
    }
}

/// The longest key a batch takes: keys are stored with a 32-bit length, and
/// in the memtable and in tables with an 8-byte trailer inside that length.
///
/// ```
/// // The key's length and its 8-byte trailer fit a 32-bit length.
/// assert_eq!(shale::MAX_KEY_LEN + 8, u32::MAX as usize);
/// assert!(shale::MAX_KEY_LEN < shale::MAX_VALUE_LEN);
/// ```
pub const MAX_KEY_LEN: usize = u32::MAX as usize - 8;

/// The longest value a batch takes: values are stored with a 32-bit length.
/// (A value this long leaves no room for the rest of its memtable entry,
/// which may take at most `u32::MAX` bytes.)
///
/// ```
/// assert_eq!(shale::MAX_VALUE_LEN, u32::MAX as usize);
/// ```
pub const MAX_VALUE_LEN: usize = u32::MAX as usize;

/// The most bytes one update takes in the memtable: the key's length
/// (varint), the key and its 8-byte trailer, the value's length (varint)
/// and the value. The skiplist stores an entry's length in 32 bits, so a
/// key and a value that each pass their own limit may still be refused
/// together.
pub const MAX_ENTRY_LEN: usize = u32::MAX as usize;

/// The bytes an update with a key of `key_len` and a value of `value_len`
/// bytes takes in the memtable (see [`MAX_ENTRY_LEN`]); in 64 bits, where
/// lengths below `u32::MAX` cannot overflow.
pub(crate) fn memtable_entry_len(key_len: u64, value_len: u64) -> u64 {
    let internal_key = key_len.saturating_add(8);
    (varint_length(internal_key) as u64)
        .saturating_add(internal_key)
        .saturating_add(varint_length(value_len) as u64)
        .saturating_add(value_len)
}

/// Refuses an update whose key or value is too long for its 32-bit length,
/// or which together would not fit in one memtable entry: every limit that
/// the memtable, the tables and the log's batch encoding put on one update.
/// (A batch as a whole, the group commit that joins batches, and the log
/// record that carries a group have no limit of their own besides the
/// count of updates, which [`WriteBatch::append`] checks: the log cuts a
/// record of any length into fragments and reads it back whole.)
pub(crate) fn check_update(key_len: usize, value_len: usize) -> Result<()> {
    if key_len > MAX_KEY_LEN {
        return Err(Error::InvalidArgument(format!(
            "key of {key_len} bytes is too long (at most {MAX_KEY_LEN})"
        )));
    }
    if value_len > MAX_VALUE_LEN {
        return Err(Error::InvalidArgument(format!(
            "value of {value_len} bytes is too long (at most {MAX_VALUE_LEN})"
        )));
    }
    let entry = memtable_entry_len(key_len as u64, value_len as u64);
    if entry > MAX_ENTRY_LEN as u64 {
        return Err(Error::InvalidArgument(format!(
            "key of {key_len} bytes and value of {value_len} bytes are too long together: \
             their memtable entry would take {entry} bytes (at most {MAX_ENTRY_LEN})"
        )));
    }
    Ok(())
}

impl fmt::Debug for WriteBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteBatch")
            .field("sequence", &self.sequence())
            .field("count", &self.count())
            .field("bytes", &self.rep.len())
            .finish()
    }
}

/// Iterator over the updates of a [`WriteBatch`], from [`WriteBatch::iter`].
///
/// A batch built through the public methods is always well formed; should
/// the bytes be damaged, iteration stops at the damage.
///
/// ```
/// # fn main() -> shale::Result<()> {
/// let mut batch = shale::WriteBatch::new();
/// batch.put(b"a", b"1")?;
/// batch.put(b"b", b"2")?;
/// let iter: shale::BatchIter<'_> = batch.iter();
/// assert_eq!(iter.count(), 2);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Iter<'a> {
    type Item = BatchOp<'a>;

    fn next(&mut self) -> Option<BatchOp<'a>> {
        let (&tag, mut input) = self.rest.split_first()?;
        let op = match ValueType::from_u8(tag) {
            Some(ValueType::Value) => get_length_prefixed_slice(&mut input).and_then(|key| {
                get_length_prefixed_slice(&mut input).map(|value| BatchOp::Put { key, value })
            }),
            Some(ValueType::Deletion) => {
                get_length_prefixed_slice(&mut input).map(|key| BatchOp::Delete { key })
            }
            // Only the write path makes blob pointers, in its own batches.
            Some(ValueType::BlobIndex) | None => None,
        };
        self.rest = if op.is_some() { input } else { &[] };
        op
    }
}

impl<'a> IntoIterator for &'a WriteBatch {
    type Item = BatchOp<'a>;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn updates_too_long_together_for_a_memtable_entry_are_refused() {
        // Once a key and a value that each passed their own limit, 4 GiB or
        // more together, were logged and then panicked in the memtable, at
        // the write and at every recovery.
        let key = 1usize << 31; // internal key 2^31 + 8: a 5-byte varint
        let largest_value = u32::MAX as usize - (5 + key + 8 + 5);
        assert!(key <= MAX_KEY_LEN && largest_value < MAX_VALUE_LEN);
        assert_eq!(
            memtable_entry_len(key as u64, largest_value as u64),
            MAX_ENTRY_LEN as u64
        );
        check_update(key, largest_value).unwrap();
        for (k, v) in [
            (key, largest_value + 1),
            (key, 1 << 31),
            (1 << 31, 1 << 31),
            (MAX_KEY_LEN, 0),
            (0, MAX_VALUE_LEN),
            (MAX_KEY_LEN, MAX_VALUE_LEN),
        ] {
            match check_update(k, v) {
                Err(Error::InvalidArgument(msg)) => assert!(
                    msg.contains("too long together") && msg.contains(&format!("{MAX_ENTRY_LEN}")),
                    "{msg}"
                ),
                other => panic!("key {k}, value {v}: {other:?}"),
            }
        }
        // Each field's own limit is still reported as such.
        for (k, v, what) in [
            (MAX_KEY_LEN + 1, 0, "key of"),
            (0, MAX_VALUE_LEN + 1, "value of"),
            (usize::MAX, usize::MAX, "key of"),
        ] {
            match check_update(k, v) {
                Err(Error::InvalidArgument(msg)) => assert!(msg.starts_with(what), "{msg}"),
                other => panic!("key {k}, value {v}: {other:?}"),
            }
        }
        // Small updates take what the memtable's encoding takes.
        assert_eq!(memtable_entry_len(3, 5), 1 + 11 + 1 + 5);
        assert_eq!(memtable_entry_len(119, 128), 1 + 127 + 2 + 128);
        assert_eq!(memtable_entry_len(120, 128), 2 + 128 + 2 + 128);
        check_update(0, 0).unwrap();
    }

    /// Renders the batch as LevelDB's write_batch_test does, via `for_each`.
    fn print_contents(b: &WriteBatch) -> String {
        let mut out = String::new();
        let r = b.for_each(|t, k, v| {
            match t {
                ValueType::Value => out.push_str(&format!(
                    "Put({}, {})",
                    String::from_utf8_lossy(k),
                    String::from_utf8_lossy(v)
                )),
                ValueType::Deletion => {
                    out.push_str(&format!("Delete({})", String::from_utf8_lossy(k)))
                }
                ValueType::BlobIndex => {
                    out.push_str(&format!("PutBlob({})", String::from_utf8_lossy(k)))
                }
            }
            Ok(())
        });
        if let Err(e) = r {
            out.push_str(&format!("ParseError({e})"));
        }
        out
    }

    #[test]
    fn empty_batch() {
        let b = WriteBatch::new();
        assert_eq!(print_contents(&b), "");
        assert_eq!(b.count(), 0);
        assert!(b.is_empty());
        assert_eq!(b.approximate_size(), HEADER_SIZE);
        assert_eq!(b.contents(), &[0u8; 12]);
    }

    #[test]
    fn multiple_updates_keep_order_and_sequence() {
        let mut b = WriteBatch::new();
        b.put(b"foo", b"bar").unwrap();
        b.delete(b"box").unwrap();
        b.put(b"baz", b"boo").unwrap();
        b.set_sequence(100);
        assert_eq!(b.sequence(), 100);
        assert_eq!(b.count(), 3);
        assert_eq!(print_contents(&b), "Put(foo, bar)Delete(box)Put(baz, boo)");
    }

    #[test]
    fn encoding_is_leveldbs() {
        let mut b = WriteBatch::new();
        b.set_sequence(0x0102_0304_0506_0708);
        b.put(b"k", b"vv").unwrap();
        b.delete(b"d").unwrap();
        let expected: &[u8] = &[
            8, 7, 6, 5, 4, 3, 2, 1, // sequence
            2, 0, 0, 0, // count
            1, 1, b'k', 2, b'v', b'v', // put
            0, 1, b'd', // delete
        ];
        assert_eq!(b.contents(), expected);
    }

    #[test]
    fn encode_decode_round_trip() {
        let mut b = WriteBatch::new();
        b.put(b"", b"").unwrap();
        b.put(b"key", &vec![7u8; 300]).unwrap();
        b.delete(&[b'k'; 200]).unwrap();
        b.set_sequence(42);
        let decoded = WriteBatch::from_contents(b.contents().to_vec()).unwrap();
        assert_eq!(decoded, b);
        assert_eq!(decoded.sequence(), 42);
        let ops: Vec<BatchOp> = decoded.iter().collect();
        assert_eq!(
            ops,
            [
                BatchOp::Put {
                    key: b"",
                    value: b""
                },
                BatchOp::Put {
                    key: b"key",
                    value: &[7u8; 300],
                },
                BatchOp::Delete { key: &[b'k'; 200] },
            ]
        );
        let mut seen = 0;
        decoded
            .for_each(|_, _, _| {
                seen += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(seen, 3);
    }

    #[test]
    fn from_contents_needs_a_whole_header() {
        for len in 0..HEADER_SIZE {
            let err = WriteBatch::from_contents(vec![0; len]).unwrap_err();
            assert!(err.is_corruption());
        }
        assert!(WriteBatch::from_contents(vec![0; HEADER_SIZE]).is_ok());
    }

    #[test]
    fn corrupted_batch_reports_after_good_records() {
        let mut b = WriteBatch::new();
        b.put(b"foo", b"bar").unwrap();
        b.delete(b"box").unwrap();
        b.set_sequence(200);
        let mut rep = b.contents().to_vec();
        rep.truncate(rep.len() - 1);
        let b = WriteBatch::from_contents(rep).unwrap();
        let printed = print_contents(&b);
        assert!(printed.starts_with("Put(foo, bar)ParseError("), "{printed}");
        assert!(printed.contains("bad WriteBatch Delete"), "{printed}");
    }

    #[test]
    fn truncated_put_is_corruption() {
        let mut b = WriteBatch::new();
        b.put(b"foo", b"bar").unwrap();
        let full = b.contents().to_vec();
        for len in HEADER_SIZE + 1..full.len() {
            let b = WriteBatch::from_contents(full[..len].to_vec()).unwrap();
            let err = b.for_each(|_, _, _| Ok(())).unwrap_err();
            assert!(err.to_string().contains("bad WriteBatch Put"), "{err}");
            assert_eq!(b.iter().count(), 0, "iteration stops at the damage");
        }
    }

    #[test]
    fn wrong_count_is_corruption() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1").unwrap();
        let mut rep = b.contents().to_vec();
        rep[8] = 2;
        let b = WriteBatch::from_contents(rep).unwrap();
        let err = b.for_each(|_, _, _| Ok(())).unwrap_err();
        assert!(err.is_corruption());
        assert!(
            err.to_string().contains("WriteBatch has wrong count"),
            "{err}"
        );

        let mut rep = vec![0u8; HEADER_SIZE];
        rep[8] = 1;
        let b = WriteBatch::from_contents(rep).unwrap();
        assert!(b.for_each(|_, _, _| Ok(())).is_err(), "count 1, no records");
    }

    #[test]
    fn unknown_tag_is_corruption() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1").unwrap();
        let mut rep = b.contents().to_vec();
        rep[HEADER_SIZE] = 7;
        let b = WriteBatch::from_contents(rep).unwrap();
        let err = b.for_each(|_, _, _| Ok(())).unwrap_err();
        assert!(
            err.to_string().contains("unknown WriteBatch tag 7"),
            "{err}"
        );
    }

    #[test]
    fn callback_error_stops_iteration() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1").unwrap();
        b.put(b"b", b"2").unwrap();
        let mut calls = 0;
        let err = b
            .for_each(|_, _, _| {
                calls += 1;
                Err(Error::InvalidArgument("stop".into()))
            })
            .unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)));
        assert_eq!(calls, 1);
    }

    #[test]
    fn append_concatenates_updates() {
        let mut b1 = WriteBatch::new();
        let mut b2 = WriteBatch::new();
        b1.set_sequence(200);
        b2.set_sequence(300);
        b1.append(&b2).unwrap();
        assert_eq!(print_contents(&b1), "");
        b2.put(b"a", b"va").unwrap();
        b1.append(&b2).unwrap();
        assert_eq!(print_contents(&b1), "Put(a, va)");
        b2.clear();
        b2.put(b"b", b"vb").unwrap();
        b1.append(&b2).unwrap();
        assert_eq!(print_contents(&b1), "Put(a, va)Put(b, vb)");
        b2.delete(b"foo").unwrap();
        b1.append(&b2).unwrap();
        assert_eq!(
            print_contents(&b1),
            "Put(a, va)Put(b, vb)Put(b, vb)Delete(foo)"
        );
        assert_eq!(b1.sequence(), 200, "append keeps the target's sequence");
        assert_eq!(b1.count(), 4);
    }

    #[test]
    fn approximate_size_grows_with_updates() {
        let mut b = WriteBatch::new();
        let empty = b.approximate_size();
        b.put(b"foo", b"bar").unwrap();
        let one = b.approximate_size();
        assert!(empty < one);
        b.put(b"baz", b"boo").unwrap();
        let two = b.approximate_size();
        assert!(one < two);
        b.delete(b"box").unwrap();
        assert!(two < b.approximate_size());
    }

    #[test]
    fn clear_resets_to_empty() {
        let mut b = WriteBatch::new();
        b.put(b"k", b"v").unwrap();
        b.set_sequence(9);
        b.clear();
        assert_eq!(b, WriteBatch::new());
        assert_eq!(b.iter().count(), 0);
    }

    #[test]
    fn count_overflow_is_refused() {
        let mut rep = vec![0u8; HEADER_SIZE];
        rep[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut full = WriteBatch::from_contents(rep).unwrap();
        let before = full.clone();
        assert!(matches!(
            full.put(b"k", b"v"),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(full.delete(b"k"), Err(Error::InvalidArgument(_))));
        let mut one = WriteBatch::new();
        one.put(b"k", b"v").unwrap();
        assert!(matches!(full.append(&one), Err(Error::InvalidArgument(_))));
        assert_eq!(full, before, "a refused update leaves the batch unchanged");
        // Appending an empty batch is fine.
        full.append(&WriteBatch::new()).unwrap();
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn random_bytes_never_panic() {
        let seed = 0xba7c4;
        let mut rng = StdRng::seed_from_u64(seed);
        for i in 0..5000 {
            let len = rng.gen_range(0..80);
            let mut rep: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            // Bias towards valid tags and short lengths to reach deeper.
            for b in rep.iter_mut().skip(HEADER_SIZE) {
                if rng.gen_bool(0.5) {
                    *b = rng.gen_range(0..4);
                }
            }
            let Ok(b) = WriteBatch::from_contents(rep) else {
                assert!(len < HEADER_SIZE);
                continue;
            };
            let mut bytes = 0usize;
            let r = b.for_each(|_, k, v| {
                bytes += k.len() + v.len();
                Ok(())
            });
            assert!(bytes <= len, "iteration {i}, seed {seed:#x}");
            if r.is_ok() {
                assert_eq!(b.iter().count() as u32, b.count());
            }
            let _ = b.iter().count();
        }
    }
}
