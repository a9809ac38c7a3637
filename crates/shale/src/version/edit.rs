//! A version edit: one MANIFEST record, the difference between two versions
//! of the set of live files (LevelDB's `VersionEdit`), and the metadata of a
//! table file.
//!
//! Encoding: a sequence of fields, each a varint32 tag followed by its value:
//!
//! ```text
//! 1 comparator        varstring
//! 2 log number        varint64
//! 3 next file number  varint64
//! 4 last sequence     varint64
//! 5 compact pointer   varint32 level, varstring internal key
//! 6 deleted file      varint32 level, varint64 file number
//! 7 new file          varint32 level, varint64 number, varint64 size,
//!                     varstring smallest, varstring largest
//! 9 prev log number   varint64
//! 30 uses blob files  (no value)
//! 31 table blob files varint32 level, varint64 table number,
//!                     varint32 count, count x varint64 blob file number
//! ```
//!
//! Tags 30 and 31 are Shale's own (value separation, `blob/`): 30 marks a
//! database that uses blob files, 31 lists the blob files a table added by
//! the same edit (an earlier 7 field) holds pointers into. LevelDB rejects
//! tags it does not know, so it refuses such a MANIFEST with a corruption
//! error instead of reading blob pointers as values.
//!
//! (Tag 8 was used by an old format and is rejected.) Decoding checks every
//! field: levels are below [`NUM_LEVELS`], internal keys hold at least their
//! 8-byte trailer, and a truncated field is corruption naming it.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::keys::{InternalKey, SequenceNumber};
use crate::sstable::whole_filter::WholeFilter;
use crate::util::coding::{
    get_length_prefixed_slice, get_varint32, get_varint64, put_length_prefixed_slice, put_varint32,
    put_varint64,
};

use super::NUM_LEVELS;

/// Field tags of the MANIFEST record encoding.
mod tag {
    pub const COMPARATOR: u32 = 1;
    pub const LOG_NUMBER: u32 = 2;
    pub const NEXT_FILE_NUMBER: u32 = 3;
    pub const LAST_SEQUENCE: u32 = 4;
    pub const COMPACT_POINTER: u32 = 5;
    pub const DELETED_FILE: u32 = 6;
    pub const NEW_FILE: u32 = 7;
    // 8 was used for large value refs.
    pub const PREV_LOG_NUMBER: u32 = 9;
    pub const USES_BLOB_FILES: u32 = 30;
    pub const TABLE_BLOB_FILES: u32 = 31;
}

/// Bytes of table data that cost as much as one seek (LevelDB's estimate:
/// a seek takes about as long as compacting 40 KB, and one seek too many
/// per 16 KB is a conservative trade).
const BYTES_PER_SEEK: u64 = 16 * 1024;

/// The fewest seeks a file is allowed before it is picked for compaction.
const MIN_ALLOWED_SEEKS: i64 = 100;

/// A table file: its number, size and key range, plus the seek budget the
/// version set spends on it.
pub struct FileMetaData {
    /// The file number (`NNNNNN.ldb`).
    pub number: u64,
    /// The file size in bytes.
    pub file_size: u64,
    /// The smallest internal key in the file.
    pub smallest: InternalKey,
    /// The largest internal key in the file.
    pub largest: InternalKey,
    /// Seeks left before the file should be compacted; readers on many
    /// threads decrement it through [`FileMetaData::record_seek`].
    pub allowed_seeks: AtomicI64,
    /// The blob files the table holds pointers into, sorted, without
    /// repeats (empty for a database without value separation).
    pub blob_files: Vec<u64>,
    /// The table's whole-table filter (`None` inside when it has none),
    /// kept here once a lookup has opened the table while the file was at
    /// level 0: see [`crate::version::version::Version::get`].
    pub l0_filter: OnceLock<Option<Arc<WholeFilter>>>,
}

impl FileMetaData {
    /// Metadata for a table file, with a fresh seek budget.
    pub fn new(
        number: u64,
        file_size: u64,
        smallest: InternalKey,
        largest: InternalKey,
    ) -> FileMetaData {
        FileMetaData {
            number,
            file_size,
            smallest,
            largest,
            allowed_seeks: AtomicI64::new(FileMetaData::initial_allowed_seeks(file_size)),
            blob_files: Vec::new(),
            l0_filter: OnceLock::new(),
        }
    }

    /// The seek budget of a file of `file_size` bytes: one seek per 16 KiB,
    /// and at least 100.
    #[inline]
    pub fn initial_allowed_seeks(file_size: u64) -> i64 {
        // u64::MAX / 16384 < i64::MAX, so the conversion cannot fail.
        i64::try_from(file_size / BYTES_PER_SEEK)
            .unwrap_or(i64::MAX)
            .max(MIN_ALLOWED_SEEKS)
    }

    #[cfg(test)]
    /// Restores the seek budget to its initial value.
    pub fn reset_allowed_seeks(&self) {
        self.allowed_seeks.store(
            FileMetaData::initial_allowed_seeks(self.file_size),
            Ordering::Relaxed,
        );
    }

    /// Spends one seek; true when the budget is used up (the file should be
    /// compacted).
    #[inline]
    pub fn record_seek(&self) -> bool {
        self.allowed_seeks.fetch_sub(1, Ordering::Relaxed) <= 1
    }

    /// Seeks left.
    #[inline]
    pub fn allowed_seeks(&self) -> i64 {
        self.allowed_seeks.load(Ordering::Relaxed)
    }
}

impl Clone for FileMetaData {
    fn clone(&self) -> FileMetaData {
        FileMetaData {
            number: self.number,
            file_size: self.file_size,
            smallest: self.smallest.clone(),
            largest: self.largest.clone(),
            allowed_seeks: AtomicI64::new(self.allowed_seeks()),
            blob_files: self.blob_files.clone(),
            l0_filter: OnceLock::new(),
        }
    }
}

/// Equality of what is stored in the MANIFEST; the seek budget is run-time
/// state and is not compared.
impl PartialEq for FileMetaData {
    fn eq(&self, other: &FileMetaData) -> bool {
        self.number == other.number
            && self.file_size == other.file_size
            && self.smallest == other.smallest
            && self.largest == other.largest
            && self.blob_files == other.blob_files
    }
}

impl Eq for FileMetaData {}

impl fmt::Debug for FileMetaData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileMetaData")
            .field("number", &self.number)
            .field("file_size", &self.file_size)
            .field("smallest", &self.smallest)
            .field("largest", &self.largest)
            .field("allowed_seeks", &self.allowed_seeks())
            .field("blob_files", &self.blob_files)
            .finish()
    }
}

/// The changes one MANIFEST record makes to the database's version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionEdit {
    /// Name of the comparator the database was created with.
    pub comparator: Option<String>,
    /// Logs numbered below this are no longer needed.
    pub log_number: Option<u64>,
    /// The log before the current one, still being compacted (old databases; now 0).
    pub prev_log_number: Option<u64>,
    /// The next file number to hand out.
    pub next_file_number: Option<u64>,
    /// The sequence number of the last write.
    pub last_sequence: Option<SequenceNumber>,
    /// Where the next compaction of a level starts: (level, key).
    pub compact_pointers: Vec<(u32, InternalKey)>,
    /// Files removed: (level, file number).
    pub deleted_files: BTreeSet<(u32, u64)>,
    /// Files added: (level, metadata).
    pub new_files: Vec<(u32, FileMetaData)>,
    /// The database uses blob files (see the module documentation).
    pub uses_blobs: bool,
}

impl VersionEdit {
    #[cfg(any(test, feature = "internals"))]
    /// An edit that changes nothing.
    pub fn new() -> VersionEdit {
        VersionEdit::default()
    }

    #[cfg(any(test, feature = "internals"))]
    /// Records the comparator name.
    pub fn set_comparator_name(&mut self, name: &str) {
        self.comparator = Some(name.to_owned());
    }

    #[cfg(any(test, feature = "internals"))]
    /// Records the log number.
    pub fn set_log_number(&mut self, n: u64) {
        self.log_number = Some(n);
    }

    #[cfg(any(test, feature = "internals"))]
    /// Records the previous log number.
    pub fn set_prev_log_number(&mut self, n: u64) {
        self.prev_log_number = Some(n);
    }

    #[cfg(any(test, feature = "internals"))]
    /// Records the next file number.
    pub fn set_next_file_number(&mut self, n: u64) {
        self.next_file_number = Some(n);
    }

    #[cfg(any(test, feature = "internals"))]
    /// Records the last sequence number.
    pub fn set_last_sequence(&mut self, seq: SequenceNumber) {
        self.last_sequence = Some(seq);
    }

    #[cfg(any(test, feature = "internals"))]
    /// Records where the next compaction of `level` starts.
    pub fn set_compact_pointer(&mut self, level: u32, key: InternalKey) {
        debug_assert!((level as usize) < NUM_LEVELS);
        self.compact_pointers.push((level, key));
    }

    #[cfg(any(test, feature = "internals"))]
    /// Adds table file `number` to `level`.
    pub fn add_file(
        &mut self,
        level: u32,
        number: u64,
        file_size: u64,
        smallest: InternalKey,
        largest: InternalKey,
    ) {
        debug_assert!((level as usize) < NUM_LEVELS);
        self.new_files.push((
            level,
            FileMetaData::new(number, file_size, smallest, largest),
        ));
    }

    #[cfg(any(test, feature = "internals"))]
    /// Removes table file `number` from `level`.
    pub fn remove_file(&mut self, level: u32, number: u64) {
        debug_assert!((level as usize) < NUM_LEVELS);
        self.deleted_files.insert((level, number));
    }

    /// Appends the encoded edit to `dst` (the payload of a MANIFEST record).
    pub fn encode(&self, dst: &mut Vec<u8>) {
        if let Some(name) = &self.comparator {
            put_varint32(dst, tag::COMPARATOR);
            put_length_prefixed_slice(dst, name.as_bytes());
        }
        if let Some(n) = self.log_number {
            put_varint32(dst, tag::LOG_NUMBER);
            put_varint64(dst, n);
        }
        if let Some(n) = self.prev_log_number {
            put_varint32(dst, tag::PREV_LOG_NUMBER);
            put_varint64(dst, n);
        }
        if let Some(n) = self.next_file_number {
            put_varint32(dst, tag::NEXT_FILE_NUMBER);
            put_varint64(dst, n);
        }
        if let Some(n) = self.last_sequence {
            put_varint32(dst, tag::LAST_SEQUENCE);
            put_varint64(dst, n);
        }
        for (level, key) in &self.compact_pointers {
            put_varint32(dst, tag::COMPACT_POINTER);
            put_varint32(dst, *level);
            put_length_prefixed_slice(dst, key.encoded());
        }
        for &(level, number) in &self.deleted_files {
            put_varint32(dst, tag::DELETED_FILE);
            put_varint32(dst, level);
            put_varint64(dst, number);
        }
        for (level, f) in &self.new_files {
            put_varint32(dst, tag::NEW_FILE);
            put_varint32(dst, *level);
            put_varint64(dst, f.number);
            put_varint64(dst, f.file_size);
            put_length_prefixed_slice(dst, f.smallest.encoded());
            put_length_prefixed_slice(dst, f.largest.encoded());
        }
        if self.uses_blobs {
            put_varint32(dst, tag::USES_BLOB_FILES);
        }
        for (level, f) in &self.new_files {
            if f.blob_files.is_empty() {
                continue;
            }
            put_varint32(dst, tag::TABLE_BLOB_FILES);
            put_varint32(dst, *level);
            put_varint64(dst, f.number);
            // A table holds fewer pointers than bytes, let alone blob files.
            put_varint32(dst, u32::try_from(f.blob_files.len()).unwrap_or(u32::MAX));
            for &b in f.blob_files.iter().take(u32::MAX as usize) {
                put_varint64(dst, b);
            }
        }
    }

    /// Decodes an edit from a MANIFEST record. Errors are corruption without
    /// a file; the caller adds it with [`Error::in_file`].
    pub fn decode(src: &[u8]) -> Result<VersionEdit> {
        let mut edit = VersionEdit::default();
        let mut d = Decoder { src, input: src };
        while !d.input.is_empty() {
            let at = d.pos();
            let Some(tag) = get_varint32(&mut d.input) else {
                return Err(d.error(at, "invalid tag"));
            };
            match tag {
                tag::COMPARATOR => {
                    let name = d.bytes("comparator name")?;
                    let name = std::str::from_utf8(name)
                        .map_err(|_| d.error(at, "comparator name is not UTF-8"))?;
                    edit.comparator = Some(name.to_owned());
                }
                tag::LOG_NUMBER => edit.log_number = Some(d.varint64("log number")?),
                tag::PREV_LOG_NUMBER => {
                    edit.prev_log_number = Some(d.varint64("previous log number")?)
                }
                tag::NEXT_FILE_NUMBER => {
                    edit.next_file_number = Some(d.varint64("next file number")?)
                }
                tag::LAST_SEQUENCE => {
                    edit.last_sequence = Some(d.varint64("last sequence number")?)
                }
                tag::COMPACT_POINTER => {
                    const FIELD: &str = "compaction pointer";
                    let level = d.level(FIELD)?;
                    let key = d.internal_key(FIELD)?;
                    edit.compact_pointers.push((level, key));
                }
                tag::DELETED_FILE => {
                    const FIELD: &str = "deleted file";
                    let level = d.level(FIELD)?;
                    let number = d.varint64(FIELD)?;
                    edit.deleted_files.insert((level, number));
                }
                tag::NEW_FILE => {
                    const FIELD: &str = "new-file entry";
                    let level = d.level(FIELD)?;
                    let number = d.varint64(FIELD)?;
                    let file_size = d.varint64(FIELD)?;
                    let smallest = d.internal_key(FIELD)?;
                    let largest = d.internal_key(FIELD)?;
                    edit.new_files.push((
                        level,
                        FileMetaData::new(number, file_size, smallest, largest),
                    ));
                }
                tag::USES_BLOB_FILES => edit.uses_blobs = true,
                tag::TABLE_BLOB_FILES => {
                    const FIELD: &str = "table blob files";
                    let level = d.level(FIELD)?;
                    let number = d.varint64(FIELD)?;
                    let count = get_varint32(&mut d.input).ok_or_else(|| d.truncated(FIELD))?;
                    // Each number takes at least a byte: a count beyond the
                    // bytes left is damage, and allocates nothing.
                    if count as usize > d.input.len() {
                        return Err(d.error(at, format_args!("{count} blob files in {FIELD}")));
                    }
                    let mut files = Vec::with_capacity(count as usize);
                    for _ in 0..count {
                        files.push(d.varint64(FIELD)?);
                    }
                    files.sort_unstable();
                    files.dedup();
                    let Some((_, f)) = edit.new_files.iter_mut().find(|(l, f)| {
                        *l == level && f.number == number && f.blob_files.is_empty()
                    }) else {
                        return Err(d.error(
                            at,
                            format_args!(
                                "{FIELD} of table {number}, which the edit does not add \
                                 (or whose blob files it lists already)"
                            ),
                        ));
                    };
                    f.blob_files = files;
                }
                other => return Err(d.error(at, format_args!("unknown tag {other}"))),
            }
        }
        Ok(edit)
    }
}

/// A cursor over an encoded edit that names the field it failed on.
struct Decoder<'a> {
    src: &'a [u8],
    input: &'a [u8],
}

impl<'a> Decoder<'a> {
    fn pos(&self) -> usize {
        self.src.len() - self.input.len()
    }

    fn error(&self, at: usize, what: impl fmt::Display) -> Error {
        Error::bad_data(format_args!("VersionEdit: {what} (at byte {at})"))
    }

    fn truncated(&self, field: &str) -> Error {
        self.error(self.pos(), format_args!("bad or truncated {field}"))
    }

    fn varint64(&mut self, field: &str) -> Result<u64> {
        get_varint64(&mut self.input).ok_or_else(|| self.truncated(field))
    }

    fn bytes(&mut self, field: &str) -> Result<&'a [u8]> {
        get_length_prefixed_slice(&mut self.input).ok_or_else(|| self.truncated(field))
    }

    fn level(&mut self, field: &str) -> Result<u32> {
        let at = self.pos();
        let level = get_varint32(&mut self.input).ok_or_else(|| self.truncated(field))?;
        if level as usize >= NUM_LEVELS {
            return Err(self.error(at, format_args!("level {level} out of range in {field}")));
        }
        Ok(level)
    }

    fn internal_key(&mut self, field: &str) -> Result<InternalKey> {
        let at = self.pos();
        let key = self.bytes(field)?;
        if key.len() < 8 {
            return Err(self.error(
                at,
                format_args!("internal key of {} bytes in {field}", key.len()),
            ));
        }
        Ok(InternalKey::from_encoded(key.to_vec()))
    }
}

/// A multi-line summary in the style of LevelDB's `DebugString`.
impl fmt::Display for VersionEdit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "VersionEdit {{")?;
        if let Some(name) = &self.comparator {
            writeln!(f, "  Comparator: {name}")?;
        }
        if let Some(n) = self.log_number {
            writeln!(f, "  LogNumber: {n}")?;
        }
        if let Some(n) = self.prev_log_number {
            writeln!(f, "  PrevLogNumber: {n}")?;
        }
        if let Some(n) = self.next_file_number {
            writeln!(f, "  NextFile: {n}")?;
        }
        if let Some(n) = self.last_sequence {
            writeln!(f, "  LastSeq: {n}")?;
        }
        for (level, key) in &self.compact_pointers {
            writeln!(f, "  CompactPointer: {level} {key:?}")?;
        }
        for (level, number) in &self.deleted_files {
            writeln!(f, "  RemoveFile: {level} {number}")?;
        }
        for (level, file) in &self.new_files {
            writeln!(
                f,
                "  AddFile: {level} {} {} {:?} .. {:?}",
                file.number, file.file_size, file.smallest, file.largest
            )?;
            if !file.blob_files.is_empty() {
                writeln!(
                    f,
                    "  BlobFiles: {level} {} {:?}",
                    file.number, file.blob_files
                )?;
            }
        }
        if self.uses_blobs {
            writeln!(f, "  UsesBlobFiles")?;
        }
        write!(f, "}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::ValueType;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    const BIG: u64 = 1 << 50;

    fn full_edit() -> VersionEdit {
        let mut edit = VersionEdit::new();
        for i in 0..4u64 {
            edit.add_file(
                3,
                BIG + 300 + i,
                BIG + 400 + i,
                InternalKey::new(b"foo", BIG + 500 + i, ValueType::Value),
                InternalKey::new(b"zoo", BIG + 600 + i, ValueType::Deletion),
            );
            edit.remove_file(4, BIG + 700 + i);
            edit.set_compact_pointer(
                i as u32,
                InternalKey::new(b"x", BIG + 900 + i, ValueType::Value),
            );
        }
        edit.set_comparator_name("foo");
        edit.set_log_number(BIG + 100);
        edit.set_prev_log_number(BIG + 150);
        edit.set_next_file_number(BIG + 200);
        edit.set_last_sequence(BIG + 1000);
        edit
    }

    fn encoded(edit: &VersionEdit) -> Vec<u8> {
        let mut buf = Vec::new();
        edit.encode(&mut buf);
        buf
    }

    #[test]
    fn round_trip_of_every_field() {
        let edit = full_edit();
        let bytes = encoded(&edit);
        let decoded = VersionEdit::decode(&bytes).unwrap();
        assert_eq!(decoded, edit);
        assert_eq!(encoded(&decoded), bytes, "re-encoding is identical");
    }

    #[test]
    fn blob_fields_round_trip_and_are_checked() {
        let mut edit = full_edit();
        edit.uses_blobs = true;
        edit.new_files[1].1.blob_files = vec![3, 9, BIG];
        let bytes = encoded(&edit);
        let decoded = VersionEdit::decode(&bytes).unwrap();
        assert_eq!(decoded, edit);
        assert_eq!(decoded.new_files[1].1.blob_files, [3, 9, BIG]);
        assert!(decoded.uses_blobs);
        assert!(decoded.to_string().contains("BlobFiles"));

        // The marker alone is the tag.
        let marker = VersionEdit {
            uses_blobs: true,
            ..Default::default()
        };
        assert_eq!(encoded(&marker), [30]);

        // Blob files of a table the edit does not add, or a count beyond
        // the bytes left, are corruption.
        let mut orphan = Vec::new();
        put_varint32(&mut orphan, tag::TABLE_BLOB_FILES);
        put_varint32(&mut orphan, 1);
        put_varint64(&mut orphan, 42);
        put_varint32(&mut orphan, 1);
        put_varint64(&mut orphan, 7);
        let e = VersionEdit::decode(&orphan).unwrap_err();
        assert!(
            e.is_corruption() && e.to_string().contains("does not add"),
            "{e}"
        );
        let mut huge = Vec::new();
        let mut with_table = VersionEdit::new();
        with_table.add_file(
            1,
            42,
            10,
            InternalKey::new(b"a", 1, ValueType::Value),
            InternalKey::new(b"b", 1, ValueType::Value),
        );
        with_table.encode(&mut huge);
        put_varint32(&mut huge, tag::TABLE_BLOB_FILES);
        put_varint32(&mut huge, 1);
        put_varint64(&mut huge, 42);
        put_varint32(&mut huge, u32::MAX);
        let e = VersionEdit::decode(&huge).unwrap_err();
        assert!(e.is_corruption(), "{e}");
    }

    #[test]
    fn empty_edit_encodes_to_nothing() {
        let edit = VersionEdit::new();
        assert!(encoded(&edit).is_empty());
        assert_eq!(VersionEdit::decode(&[]).unwrap(), edit);
    }

    #[test]
    fn encoding_is_leveldbs() {
        let mut edit = VersionEdit::new();
        edit.set_comparator_name("cmp");
        edit.set_log_number(5);
        edit.set_prev_log_number(0);
        edit.set_next_file_number(300);
        edit.set_last_sequence(7);
        edit.set_compact_pointer(1, InternalKey::new(b"k", 2, ValueType::Value));
        edit.remove_file(2, 9);
        edit.add_file(
            0,
            12,
            4096,
            InternalKey::new(b"a", 1, ValueType::Value),
            InternalKey::new(b"b", 3, ValueType::Deletion),
        );
        #[rustfmt::skip]
        let expected: Vec<u8> = vec![
            1, 3, b'c', b'm', b'p',            // comparator
            2, 5,                              // log number
            9, 0,                              // prev log number
            3, 0xac, 0x02,                     // next file number 300
            4, 7,                              // last sequence
            5, 1, 9, b'k', 1, 2, 0, 0, 0, 0, 0, 0, // compact pointer: level 1, 'k'@2 value
            6, 2, 9,                           // deleted file: level 2, number 9
            7, 0, 12, 0x80, 0x20,              // new file: level 0, number 12, size 4096
            9, b'a', 1, 1, 0, 0, 0, 0, 0, 0,   // smallest 'a'@1 value
            9, b'b', 0, 3, 0, 0, 0, 0, 0, 0,   // largest 'b'@3 deletion
        ];
        assert_eq!(encoded(&edit), expected);
        assert_eq!(VersionEdit::decode(&expected).unwrap(), edit);
    }

    #[test]
    fn every_truncated_prefix_fails_cleanly() {
        let bytes = encoded(&full_edit());
        // Prefixes that end exactly at a field boundary decode to a smaller
        // edit; every other prefix is corruption naming what was cut.
        let mut boundaries = 0;
        for len in 0..bytes.len() {
            match VersionEdit::decode(&bytes[..len]) {
                Ok(edit) => {
                    boundaries += 1;
                    let mut re = Vec::new();
                    edit.encode(&mut re);
                    assert!(bytes.starts_with(&re), "prefix {len}");
                }
                Err(e) => {
                    assert!(e.is_corruption(), "{e}");
                    let msg = e.to_string();
                    assert!(
                        msg.contains("VersionEdit")
                            && (msg.contains("truncated") || msg.contains("tag")),
                        "{msg}"
                    );
                }
            }
        }
        // 5 scalar fields + 4 pointers + 4 deletions + 4 new files, plus the empty prefix.
        assert_eq!(boundaries, 17);
    }

    #[test]
    fn truncation_names_the_field() {
        let mut edit = VersionEdit::new();
        edit.add_file(
            1,
            7,
            100,
            InternalKey::new(b"a", 1, ValueType::Value),
            InternalKey::new(b"z", 2, ValueType::Value),
        );
        let bytes = encoded(&edit);
        let err = VersionEdit::decode(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(err.to_string().contains("new-file entry"), "{err}");

        let mut edit = VersionEdit::new();
        edit.set_comparator_name("leveldb.BytewiseComparator");
        let bytes = encoded(&edit);
        let err = VersionEdit::decode(&bytes[..5]).unwrap_err();
        assert!(err.to_string().contains("comparator name"), "{err}");

        let err = VersionEdit::decode(&[tag::LOG_NUMBER as u8, 0x80]).unwrap_err();
        assert!(err.to_string().contains("log number"), "{err}");
        let err = VersionEdit::decode(&[tag::DELETED_FILE as u8, 1]).unwrap_err();
        assert!(err.to_string().contains("deleted file"), "{err}");
    }

    #[test]
    fn unknown_tag_is_corruption() {
        for t in [0u8, 8, 10, 127] {
            let err = VersionEdit::decode(&[t, 1]).unwrap_err();
            assert!(err.is_corruption());
            assert!(err.to_string().contains("unknown tag"), "{err}");
        }
        let err = VersionEdit::decode(&[0x80]).unwrap_err();
        assert!(err.to_string().contains("invalid tag"), "{err}");
    }

    #[test]
    fn level_out_of_range_is_corruption() {
        let err = VersionEdit::decode(&[tag::DELETED_FILE as u8, NUM_LEVELS as u8, 1]).unwrap_err();
        assert!(err.is_corruption());
        assert!(err.to_string().contains("level 7 out of range"), "{err}");
        let err = VersionEdit::decode(&[tag::COMPACT_POINTER as u8, 200, 1, 1, b'k']).unwrap_err();
        assert!(err.is_corruption());
        let ok = VersionEdit::decode(&[tag::DELETED_FILE as u8, NUM_LEVELS as u8 - 1, 1]).unwrap();
        assert!(ok.deleted_files.contains(&(6, 1)));
    }

    #[test]
    fn short_internal_key_is_corruption() {
        let mut bytes = vec![tag::COMPACT_POINTER as u8, 1, 3];
        bytes.extend_from_slice(b"abc");
        let err = VersionEdit::decode(&bytes).unwrap_err();
        assert!(err.to_string().contains("internal key of 3 bytes"), "{err}");
    }

    #[test]
    fn decode_error_takes_the_manifest_name() {
        let err = VersionEdit::decode(&[42])
            .unwrap_err()
            .in_file(std::path::Path::new("/db/MANIFEST-000002"), Some(100));
        let msg = err.to_string();
        assert!(
            msg.contains("MANIFEST-000002") && msg.contains("100"),
            "{msg}"
        );
    }

    #[test]
    fn summary_lists_every_field() {
        let s = full_edit().to_string();
        for needle in [
            "Comparator: foo",
            "LogNumber: ",
            "PrevLogNumber: ",
            "NextFile: ",
            "LastSeq: ",
            "CompactPointer: 3 'x'",
            "RemoveFile: 4 ",
            "AddFile: 3 ",
        ] {
            assert!(s.contains(needle), "{needle} in {s}");
        }
    }

    #[test]
    fn seek_budget() {
        assert_eq!(FileMetaData::initial_allowed_seeks(0), 100);
        assert_eq!(FileMetaData::initial_allowed_seeks(16384 * 100 - 1), 100);
        assert_eq!(FileMetaData::initial_allowed_seeks(2 << 20), 128);
        assert!(FileMetaData::initial_allowed_seeks(u64::MAX) > 0);
        let f = FileMetaData::new(
            1,
            0,
            InternalKey::new(b"a", 1, ValueType::Value),
            InternalKey::new(b"b", 1, ValueType::Value),
        );
        for _ in 0..99 {
            assert!(!f.record_seek());
        }
        assert!(f.record_seek(), "the 100th seek uses up the budget");
        assert!(f.record_seek(), "and stays used up");
        f.reset_allowed_seeks();
        assert_eq!(f.allowed_seeks(), 100);
        let copy = f.clone();
        assert_eq!(copy, f);
        assert_eq!(copy.allowed_seeks(), 100);
    }

    #[test]
    fn seek_budget_is_shared_between_threads() {
        let f = std::sync::Arc::new(FileMetaData::new(
            1,
            1 << 30,
            InternalKey::new(b"a", 1, ValueType::Value),
            InternalKey::new(b"b", 1, ValueType::Value),
        ));
        let start = f.allowed_seeks();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let f = f.clone();
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        f.record_seek();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(f.allowed_seeks(), start - 400);
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn random_bytes_never_panic() {
        let seed = 0xed17;
        let mut rng = StdRng::seed_from_u64(seed);
        let valid = encoded(&full_edit());
        for i in 0..5000 {
            let data: Vec<u8> = if i % 2 == 0 {
                let len = rng.gen_range(0..64);
                (0..len)
                    .map(|_| {
                        if rng.gen_bool(0.5) {
                            rng.gen_range(0..12)
                        } else {
                            rng.gen()
                        }
                    })
                    .collect()
            } else {
                let mut d = valid.clone();
                for _ in 0..rng.gen_range(1..4) {
                    let at = rng.gen_range(0..d.len());
                    d[at] = rng.gen();
                }
                d.truncate(rng.gen_range(0..=d.len()));
                d
            };
            if let Ok(edit) = VersionEdit::decode(&data) {
                // Whatever decodes must encode to something that decodes the same.
                let re = encoded(&edit);
                assert_eq!(
                    VersionEdit::decode(&re).unwrap(),
                    edit,
                    "iteration {i}, seed {seed:#x}"
                );
                assert!(edit
                    .new_files
                    .iter()
                    .all(|(l, _)| (*l as usize) < NUM_LEVELS));
            }
        }
    }
}
