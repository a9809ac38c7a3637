//! A version: the set of live table files at each level at one point in time.
//!
//! Invariants: level 0 files may overlap and are kept in the order they were
//! added (file number ascending); every other level is sorted by smallest key
//! and its files' key ranges are disjoint. A version is immutable once built,
//! except for seek statistics, so readers share it through an `Arc`.

use std::cmp::Ordering;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::Result;
use crate::iter::level::LevelIterator;
use crate::iter::InternalIterator;
use crate::keys::{
    parse_internal_key, InternalKey, InternalKeyComparator, LookupKey, ValueType,
    MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK,
};
use crate::sstable::whole_filter::KeyHashes;
use crate::sstable::{Table, TableIterator};
use crate::table_cache::TableCache;
use crate::version::edit::FileMetaData;
use crate::version::NUM_LEVELS;

/// Level-0 file count that triggers a compaction (LevelDB's, for its 4 MB
/// write buffer; see [`L0Limits`]).
pub const L0_COMPACTION_TRIGGER: usize = 4;
/// Level-0 file count at which writes are slowed down (LevelDB's).
pub const L0_SLOWDOWN_WRITES_TRIGGER: usize = 8;
/// Level-0 file count at which writes stop until a compaction finishes
/// (LevelDB's).
pub const L0_STOP_WRITES_TRIGGER: usize = 12;

/// The write buffer LevelDB's level-0 counts were chosen for.
const L0_COUNTS_WRITE_BUFFER: usize = 4 << 20;
/// The most the level-0 counts grow for a small write buffer.
const L0_MAX_SCALE: usize = 4;

/// The level-0 file counts at which a compaction is due, writes slow down
/// and writes stop.
///
/// LevelDB's counts (4, 8, 12) are for files of its 4 MB write buffer. A
/// smaller buffer flushes smaller files, more often: with the same counts,
/// level 0 holds too little to absorb a burst of writes while a compaction
/// of deeper levels runs (writers then stall), and each level-0 compaction
/// rewrites level 1 for a few megabytes of new data (write amplification).
/// So the counts grow as the buffer shrinks, covering as many bytes as
/// LevelDB's counts cover with 4 MB files, up to [`L0_MAX_SCALE`] times the
/// counts (every read may have to look at every level-0 file). From a 4 MB
/// buffer up they are LevelDB's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L0Limits {
    /// Files that make level 0 due for compaction (score 1).
    pub compaction: usize,
    /// Files at which each write is delayed a little.
    pub slowdown: usize,
    /// Files at which writes wait for a compaction.
    pub stop: usize,
}

impl L0Limits {
    /// The limits for a database whose write buffer is `write_buffer_size`.
    pub fn for_write_buffer(write_buffer_size: usize) -> L0Limits {
        let scale = (L0_COUNTS_WRITE_BUFFER / write_buffer_size.max(1)).clamp(1, L0_MAX_SCALE);
        L0Limits {
            compaction: L0_COMPACTION_TRIGGER * scale,
            slowdown: L0_SLOWDOWN_WRITES_TRIGGER * scale,
            stop: L0_STOP_WRITES_TRIGGER * scale,
        }
    }
}
/// Highest level a flushed memtable may be placed at when it overlaps nothing.
pub const MAX_MEM_COMPACT_LEVEL: usize = 2;

/// Files of one level.
pub type LevelFiles = Vec<Arc<FileMetaData>>;

/// The result of looking a key up in the tables.
#[derive(Debug, PartialEq, Eq)]
pub enum TableGet {
    /// The newest visible entry is a value (written to the caller's buffer).
    Found,
    /// The newest visible entry is a blob pointer (written to the caller's buffer).
    Blob,
    /// The newest visible entry is a deletion.
    Deleted,
    /// No table holds the key.
    Absent,
}

/// A lookup in progress through the tables of a version.
struct Search<'a, 'k> {
    user_key: &'k [u8],
    ikey: &'k [u8],
    verify_checksums: bool,
    fill_cache: bool,
    /// The first table searched, charged a seek if another is searched too.
    first: Option<(&'a Arc<FileMetaData>, usize)>,
    /// Tables searched so far.
    searched: usize,
    /// The key's whole-table filter hashes, once computed.
    hashes: Option<KeyHashes>,
}

impl<'a> Search<'a, '_> {
    /// Counts `f` (at `level`) as searched: every table looked at counts,
    /// whether or not its filter rules the key out, as LevelDB charges it.
    #[inline]
    fn count(&mut self, f: &'a Arc<FileMetaData>, level: usize) {
        self.searched += 1;
        if self.searched == 1 {
            self.first = Some((f, level));
        }
    }

    /// The seek to charge: the first table searched, if there were two.
    fn charge(&self) -> Option<SeekCharge> {
        if self.searched < 2 {
            return None;
        }
        self.first.map(|(file, level)| SeekCharge {
            file: file.clone(),
            level,
        })
    }
}

/// A file that was searched without holding the key while a later file did:
/// reads like this are charged to it, and enough of them trigger its compaction.
pub struct SeekCharge {
    /// The file.
    pub file: Arc<FileMetaData>,
    /// Its level.
    pub level: usize,
}

/// An immutable set of files per level.
pub struct Version {
    icmp: InternalKeyComparator,
    /// The files of each level.
    pub files: [LevelFiles; NUM_LEVELS],
    /// The level most in need of compaction, and its score (>= 1 means needed).
    pub compaction_level: usize,
    /// See `compaction_level`.
    pub compaction_score: f64,
    /// A file whose seek allowance ran out, waiting for compaction.
    pub file_to_compact: Mutex<Option<(Arc<FileMetaData>, usize)>>,
}

impl Version {
    /// An empty version.
    pub fn new(icmp: InternalKeyComparator) -> Version {
        Version {
            icmp,
            files: Default::default(),
            compaction_level: 0,
            compaction_score: -1.0,
            file_to_compact: Mutex::new(None),
        }
    }

    /// The internal key comparator.
    pub fn icmp(&self) -> &InternalKeyComparator {
        &self.icmp
    }

    /// Number of files at `level`.
    pub fn num_files(&self, level: usize) -> usize {
        self.files[level].len()
    }

    /// Total bytes of the files at `level`.
    pub fn level_bytes(&self, level: usize) -> u64 {
        total_file_size(&self.files[level])
    }

    /// Looks `key` up in the tables, newest data first. When the result is
    /// [`TableGet::Found`], `value` holds the value (its old contents replaced).
    ///
    /// A lookup may probe every level-0 file, and with a small write buffer
    /// there may be dozens; most of their filters say no. So the first
    /// lookup that opens a level-0 table keeps its whole-table filter in the
    /// file's metadata (`FileMetaData::l0_filter`), and later lookups ask
    /// that filter without finding the table in the table cache. (Bounded:
    /// level 0 holds a few dozen files at most, and a file's metadata at a
    /// deeper level is a new one, without it.)
    pub fn get(
        &self,
        tc: &TableCache,
        verify_checksums: bool,
        fill_cache: bool,
        key: &LookupKey,
        value: &mut Vec<u8>,
    ) -> Result<(TableGet, Option<SeekCharge>)> {
        let user_key = key.user_key();
        let mut search = Search {
            user_key,
            ikey: key.internal_key(),
            verify_checksums,
            fill_cache,
            first: None,
            searched: 0,
            // Computed at the first table that has a whole-table filter.
            hashes: None,
        };

        // Level 0, newest (last) first.
        for f in self.files[0].iter().rev() {
            if !self.covers(f, user_key) {
                continue;
            }
            let hit = match f.l0_filter.get() {
                Some(Some(filter)) => {
                    search.count(f, 0);
                    let h = *search.hashes.get_or_insert_with(|| KeyHashes::of(user_key));
                    if !filter.may_contain(h) {
                        continue;
                    }
                    let table = tc.table(f.number, f.file_size)?;
                    self.search_past_filter(&search, f, &table, value)?
                }
                _ => {
                    let table = tc.table(f.number, f.file_size)?;
                    let _ = f.l0_filter.set(table.whole_filter().cloned());
                    self.search_table(&mut search, f, 0, &table, value)?
                }
            };
            if let Some(hit) = hit {
                return Ok((hit, search.charge()));
            }
        }

        for (f, level) in self.deeper_files_for_key(user_key, search.ikey) {
            let table = tc.table(f.number, f.file_size)?;
            if let Some(hit) = self.search_table(&mut search, f, level, &table, value)? {
                return Ok((hit, search.charge()));
            }
        }
        Ok((TableGet::Absent, search.charge()))
    }

    /// Looks the key of `search` up in `table` (the table of `f`, at
    /// `level`): `None` if it holds no entry for the key.
    fn search_table<'a>(
        &self,
        search: &mut Search<'a, '_>,
        f: &'a Arc<FileMetaData>,
        level: usize,
        table: &Table,
        value: &mut Vec<u8>,
    ) -> Result<Option<TableGet>> {
        search.count(f, level);
        if !table.may_contain(&mut search.hashes, search.user_key) {
            return Ok(None);
        }
        self.search_past_filter(search, f, table, value)
    }

    /// [`Version::search_table`] once the table's whole-table filter (if
    /// any) has let the key through.
    fn search_past_filter(
        &self,
        search: &Search<'_, '_>,
        f: &FileMetaData,
        table: &Table,
        value: &mut Vec<u8>,
    ) -> Result<Option<TableGet>> {
        let user_key = search.user_key;
        let found = table.get_past_filter(
            search.verify_checksums,
            search.fill_cache,
            search.ikey,
            |k, v| match parse_internal_key(k) {
                None => Err(crate::error::Error::bad_data(format!(
                    "bad internal key in table {:06}",
                    f.number
                ))),
                Some(p) if self.icmp.compare_user_keys(p.user_key, user_key) == Ordering::Equal => {
                    match p.value_type {
                        ValueType::Value => {
                            value.clear();
                            value.extend_from_slice(v);
                            Ok(Some(TableGet::Found))
                        }
                        ValueType::BlobIndex => {
                            value.clear();
                            value.extend_from_slice(v);
                            Ok(Some(TableGet::Blob))
                        }
                        ValueType::Deletion => Ok(Some(TableGet::Deleted)),
                    }
                }
                Some(_) => Ok(None),
            },
        )?;
        match found {
            Some(r) => r,
            None => Ok(None),
        }
    }

    /// True if the user-key range of `f` covers `user_key`.
    #[inline]
    fn covers(&self, f: &FileMetaData, user_key: &[u8]) -> bool {
        self.icmp.compare_user_keys(user_key, f.smallest.user_key()) != Ordering::Less
            && self.icmp.compare_user_keys(user_key, f.largest.user_key()) != Ordering::Greater
    }

    /// The files that may hold entries for `user_key`, in the order a lookup
    /// searches them, with their levels: every level-0 file whose range
    /// covers the key, newest (highest number, last) first; then
    /// [`Version::deeper_files_for_key`].
    fn files_for_key<'a>(
        &'a self,
        user_key: &'a [u8],
        ikey: &'a [u8],
    ) -> impl Iterator<Item = (&'a Arc<FileMetaData>, usize)> + 'a {
        let l0 = self.files[0]
            .iter()
            .rev()
            .filter(move |f| self.covers(f, user_key))
            .map(|f| (f, 0));
        l0.chain(self.deeper_files_for_key(user_key, ikey))
    }

    /// At most one file per level below 0 that may hold entries for
    /// `user_key`, found by binary search on `ikey` (an internal key for
    /// `user_key`), shallowest first.
    fn deeper_files_for_key<'a>(
        &'a self,
        user_key: &'a [u8],
        ikey: &'a [u8],
    ) -> impl Iterator<Item = (&'a Arc<FileMetaData>, usize)> + 'a {
        let icmp = &self.icmp;
        (1..NUM_LEVELS).filter_map(move |level| {
            let files = &self.files[level];
            if files.is_empty() {
                return None;
            }
            let f = files.get(find_file(icmp, files, ikey))?;
            (icmp.compare_user_keys(user_key, f.smallest.user_key()) != Ordering::Less)
                .then_some((f, level))
        })
    }

    /// Accounts for an iterator having read the entry with internal key
    /// `ikey` (called about once per megabyte read, see
    /// [`crate::iter::db_iter::READ_BYTES_PERIOD`]). When two or more files
    /// may hold the key, a lookup of it would search the first one in vain,
    /// so a seek is charged to that file, as [`Version::get`] does. Returns
    /// true if that makes a compaction due. Lock-free unless the file's seek
    /// budget runs out; an unparsable key is ignored.
    pub fn record_read_sample(&self, ikey: &[u8]) -> bool {
        let Some(parsed) = parse_internal_key(ikey) else {
            return false;
        };
        let mut files = self.files_for_key(parsed.user_key, ikey);
        match (files.next(), files.next()) {
            (Some((file, level)), Some(_)) => self.update_stats(SeekCharge {
                file: file.clone(),
                level,
            }),
            _ => false,
        }
    }

    /// Charges a seek to a file; true if the file should now be compacted.
    pub fn update_stats(&self, charge: SeekCharge) -> bool {
        if charge.file.record_seek() {
            let mut slot = self.file_to_compact.lock();
            if slot.is_none() {
                *slot = Some((charge.file, charge.level));
                return true;
            }
        }
        false
    }

    /// True if some file of `level` overlaps the user-key range [smallest, largest]
    /// (`None` is unbounded).
    pub fn overlap_in_level(
        &self,
        level: usize,
        smallest: Option<&[u8]>,
        largest: Option<&[u8]>,
    ) -> bool {
        some_file_overlaps_range(&self.icmp, level > 0, &self.files[level], smallest, largest)
    }

    /// The level a flushed memtable spanning [smallest, largest] should go to:
    /// as deep as `MAX_MEM_COMPACT_LEVEL` while it overlaps nothing there and
    /// not too much of the level after.
    pub fn pick_level_for_memtable_output(
        &self,
        smallest: &[u8],
        largest: &[u8],
        max_file_size: u64,
    ) -> usize {
        let mut level = 0;
        if !self.overlap_in_level(0, Some(smallest), Some(largest)) {
            let start = InternalKey::new(smallest, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK);
            let limit = InternalKey::new(largest, 0, ValueType::Deletion);
            while level < MAX_MEM_COMPACT_LEVEL {
                if self.overlap_in_level(level + 1, Some(smallest), Some(largest)) {
                    break;
                }
                if level + 2 < NUM_LEVELS {
                    let overlaps = self.overlapping_inputs(level + 2, Some(&start), Some(&limit));
                    if total_file_size(&overlaps) > max_grandparent_overlap_bytes(max_file_size) {
                        break;
                    }
                }
                level += 1;
            }
        }
        level
    }

    /// The files of `level` that overlap the internal-key range [begin, end]
    /// by user key. At level 0 the range grows to cover every overlapping file.
    pub fn overlapping_inputs(
        &self,
        level: usize,
        begin: Option<&InternalKey>,
        end: Option<&InternalKey>,
    ) -> LevelFiles {
        let ucmp = self.icmp.user_comparator();
        let mut user_begin = begin.map(|k| k.user_key().to_vec());
        let mut user_end = end.map(|k| k.user_key().to_vec());
        let mut inputs = Vec::new();
        let mut i = 0;
        while i < self.files[level].len() {
            let f = &self.files[level][i];
            i += 1;
            let file_start = f.smallest.user_key();
            let file_limit = f.largest.user_key();
            if user_begin
                .as_deref()
                .is_some_and(|b| ucmp.compare(file_limit, b) == Ordering::Less)
            {
                continue;
            }
            if user_end
                .as_deref()
                .is_some_and(|e| ucmp.compare(file_start, e) == Ordering::Greater)
            {
                continue;
            }
            inputs.push(f.clone());
            if level == 0 {
                // Level-0 files may overlap each other: widen the range and restart.
                if user_begin
                    .as_deref()
                    .is_some_and(|b| ucmp.compare(file_start, b) == Ordering::Less)
                {
                    user_begin = Some(file_start.to_vec());
                    inputs.clear();
                    i = 0;
                } else if user_end
                    .as_deref()
                    .is_some_and(|e| ucmp.compare(file_limit, e) == Ordering::Greater)
                {
                    user_end = Some(file_limit.to_vec());
                    inputs.clear();
                    i = 0;
                }
            }
        }
        inputs
    }

    /// Approximate byte offset of `ikey` within the whole database.
    pub fn approximate_offset_of(&self, tc: &TableCache, ikey: &[u8]) -> u64 {
        let mut result = 0u64;
        for (level, files) in self.files.iter().enumerate() {
            for f in files {
                if self.icmp.compare(f.largest.encoded(), ikey) != Ordering::Greater {
                    result = result.saturating_add(f.file_size);
                } else if self.icmp.compare(f.smallest.encoded(), ikey) == Ordering::Greater {
                    // Entirely after ikey; later files of a sorted level are too.
                    if level > 0 {
                        break;
                    }
                } else if let Ok(t) = tc.table(f.number, f.file_size) {
                    result = result.saturating_add(t.approximate_offset_of(ikey));
                }
            }
        }
        result
    }

    /// A human-readable listing of the files of each level.
    pub fn debug_string(&self) -> String {
        let mut s = String::new();
        for (level, files) in self.files.iter().enumerate() {
            s.push_str(&format!("--- level {level} ---\n"));
            for f in files {
                s.push_str(&format!(
                    " {}:{}[{:?} .. {:?}]\n",
                    f.number, f.file_size, f.smallest, f.largest
                ));
            }
        }
        s
    }

    /// Iterators over the files of this version: one per level-0 file, one
    /// concatenating iterator per deeper level.
    pub fn add_iterators(
        &self,
        tc: &Arc<TableCache>,
        verify_checksums: bool,
        fill_cache: bool,
        out: &mut Vec<Box<dyn InternalIterator>>,
    ) {
        // Newest level-0 file first.
        for f in self.files[0].iter().rev() {
            match tc.iter(f.number, f.file_size, verify_checksums, fill_cache) {
                Ok(it) => out.push(it),
                Err(e) => out.push(Box::new(crate::iter::EmptyIterator::with_error(e))),
            }
        }
        for level in 1..NUM_LEVELS {
            if !self.files[level].is_empty() {
                out.push(level_iterator(
                    &self.icmp,
                    tc,
                    &self.files[level],
                    verify_checksums,
                    fill_cache,
                ));
            }
        }
    }
}

/// A concatenating iterator over the sorted, disjoint files of one level.
pub fn level_iterator(
    icmp: &InternalKeyComparator,
    tc: &Arc<TableCache>,
    files: &LevelFiles,
    verify_checksums: bool,
    fill_cache: bool,
) -> Box<dyn InternalIterator> {
    let tc = tc.clone();
    let open: crate::iter::level::OpenFileFn<FileMetaData, TableIterator> =
        Arc::new(move |f: &FileMetaData| {
            tc.table_iter(f.number, f.file_size, verify_checksums, fill_cache)
        });
    // The files' iterators are of the table's own type: the level iterator's
    // steps and key reads reach them without a dynamic call.
    Box::new(LevelIterator::new(
        icmp.clone(),
        Arc::new(files.clone()),
        open,
    ))
}

/// Sum of the sizes of `files` (saturating: the sizes come from the MANIFEST).
pub fn total_file_size(files: &[Arc<FileMetaData>]) -> u64 {
    files
        .iter()
        .map(|f| f.file_size)
        .fold(0, u64::saturating_add)
}

/// Bytes of overlap with the grandparent level above which a compaction output file is cut.
pub fn max_grandparent_overlap_bytes(max_file_size: u64) -> u64 {
    10 * max_file_size
}

/// Index of the first file of a sorted level whose largest key is >= `ikey`
/// (`files.len()` if none).
pub fn find_file(icmp: &InternalKeyComparator, files: &[Arc<FileMetaData>], ikey: &[u8]) -> usize {
    files.partition_point(|f| icmp.compare(f.largest.encoded(), ikey) == Ordering::Less)
}

fn after_file(icmp: &InternalKeyComparator, user_key: Option<&[u8]>, f: &FileMetaData) -> bool {
    user_key.is_some_and(|k| {
        icmp.user_comparator().compare(k, f.largest.user_key()) == Ordering::Greater
    })
}

fn before_file(icmp: &InternalKeyComparator, user_key: Option<&[u8]>, f: &FileMetaData) -> bool {
    user_key
        .is_some_and(|k| icmp.user_comparator().compare(k, f.smallest.user_key()) == Ordering::Less)
}

/// True if some file in `files` overlaps the user-key range [smallest, largest].
pub fn some_file_overlaps_range(
    icmp: &InternalKeyComparator,
    disjoint_sorted: bool,
    files: &[Arc<FileMetaData>],
    smallest: Option<&[u8]>,
    largest: Option<&[u8]>,
) -> bool {
    if !disjoint_sorted {
        return files
            .iter()
            .any(|f| !after_file(icmp, smallest, f) && !before_file(icmp, largest, f));
    }
    let index = match smallest {
        Some(s) => {
            let small = InternalKey::new(s, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK);
            find_file(icmp, files, small.encoded())
        }
        None => 0,
    };
    match files.get(index) {
        None => false,
        Some(f) => !before_file(icmp, largest, f),
    }
}

/// The smallest and largest internal keys of a set of files.
pub fn key_range(
    icmp: &InternalKeyComparator,
    files: &[Arc<FileMetaData>],
) -> (InternalKey, InternalKey) {
    let mut smallest: Option<&InternalKey> = None;
    let mut largest: Option<&InternalKey> = None;
    for f in files {
        if smallest
            .is_none_or(|s| icmp.compare(f.smallest.encoded(), s.encoded()) == Ordering::Less)
        {
            smallest = Some(&f.smallest);
        }
        if largest
            .is_none_or(|l| icmp.compare(f.largest.encoded(), l.encoded()) == Ordering::Greater)
        {
            largest = Some(&f.largest);
        }
    }
    (
        smallest.cloned().unwrap_or_default(),
        largest.cloned().unwrap_or_default(),
    )
}

impl crate::iter::level::LevelFile for FileMetaData {
    #[inline]
    fn smallest(&self) -> &[u8] {
        self.smallest.encoded()
    }
    #[inline]
    fn largest(&self) -> &[u8] {
        self.largest.encoded()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{icmp, ikey};
    use std::path::Path;

    #[test]
    fn level_0_limits_grow_as_the_write_buffer_shrinks() {
        let limits = |mb_64ths: usize| {
            let l = L0Limits::for_write_buffer(mb_64ths * (1 << 20) / 64);
            (l.compaction, l.slowdown, l.stop)
        };
        // LevelDB's counts from its 4 MB buffer up.
        assert_eq!(limits(4 * 64), (4, 8, 12));
        assert_eq!(limits(64 * 64), (4, 8, 12));
        assert_eq!(limits(3 * 64), (4, 8, 12));
        // The same level-0 bytes with smaller files...
        assert_eq!(limits(2 * 64), (8, 16, 24));
        assert_eq!(limits(64), (16, 32, 48));
        // ...up to four times the counts.
        assert_eq!(limits(1), (16, 32, 48));
        assert_eq!(L0Limits::for_write_buffer(0), L0Limits::for_write_buffer(1));
    }

    fn file(number: u64, smallest: &str, largest: &str) -> Arc<FileMetaData> {
        Arc::new(FileMetaData::new(
            number,
            1000,
            InternalKey::new(smallest.as_bytes(), 100, ValueType::Value),
            InternalKey::new(largest.as_bytes(), 1, ValueType::Value),
        ))
    }

    /// Level 0: #3 [c, k]; level 1: #1 [a, e], #2 [f, p]; level 2: #4 [a, z].
    fn version() -> Version {
        let mut v = Version::new(icmp());
        v.files[0] = vec![file(3, "c", "k")];
        v.files[1] = vec![file(1, "a", "e"), file(2, "f", "p")];
        v.files[2] = vec![file(4, "a", "z")];
        v
    }

    fn sample(v: &Version, user_key: &str) -> bool {
        v.record_read_sample(&ikey(user_key.as_bytes(), 50, ValueType::Value))
    }

    fn seeks(v: &Version, level: usize, i: usize) -> i64 {
        v.files[level][i].allowed_seeks()
    }

    #[test]
    fn a_sampled_key_in_one_file_charges_nothing() {
        let v = version();
        let before = FileMetaData::initial_allowed_seeks(1000);
        // Only the level-2 file covers "q".
        assert!(!sample(&v, "q"));
        assert_eq!(seeks(&v, 2, 0), before);
        assert!(v.file_to_compact.lock().is_none());
    }

    #[test]
    fn a_sampled_key_in_several_files_charges_the_first_searched() {
        let v = version();
        let before = FileMetaData::initial_allowed_seeks(1000);
        // "d": level-0 #3 is searched first, then #1 and #4.
        assert!(!sample(&v, "d"));
        assert_eq!(seeks(&v, 0, 0), before - 1);
        assert_eq!((seeks(&v, 1, 0), seeks(&v, 2, 0)), (before, before));
        // "m": not in level 0; level-1 #2 comes before level-2 #4.
        assert!(!sample(&v, "m"));
        assert_eq!(seeks(&v, 1, 1), before - 1);
        assert_eq!(seeks(&v, 2, 0), before);
    }

    #[test]
    fn the_sample_that_spends_the_last_seek_makes_a_compaction_due_once() {
        let v = version();
        let budget = FileMetaData::initial_allowed_seeks(1000);
        for _ in 1..budget {
            assert!(!sample(&v, "g"));
        }
        assert!(sample(&v, "g"), "the last seek of #3's budget");
        assert!(!sample(&v, "g"), "already waiting for compaction");
        let (f, level) = v.file_to_compact.lock().clone().expect("a file to compact");
        assert_eq!((f.number, level), (3, 0));
    }

    #[test]
    fn an_unparsable_sampled_key_is_ignored() {
        let v = version();
        assert!(!v.record_read_sample(b"short"));
        assert_eq!(seeks(&v, 0, 0), FileMetaData::initial_allowed_seeks(1000));
    }

    /// Writes table `number` of `/db` holding `keys` (values `v`), and its
    /// metadata.
    fn write_table(
        fs: &Arc<dyn crate::env::FileSystem>,
        opts: &crate::sstable::TableOptions,
        number: u64,
        keys: &[&str],
    ) -> Arc<FileMetaData> {
        let path = crate::filename::table_file_name(Path::new("/db"), number);
        let mut b =
            crate::sstable::TableBuilder::new(opts.clone(), fs.new_writable_file(&path).unwrap());
        for k in keys {
            b.add(&ikey(k.as_bytes(), number, ValueType::Value), b"v")
                .unwrap();
        }
        let size = b.finish().unwrap();
        Arc::new(FileMetaData::new(
            number,
            size,
            InternalKey::new(keys[0].as_bytes(), number, ValueType::Value),
            InternalKey::new(keys[keys.len() - 1].as_bytes(), number, ValueType::Value),
        ))
    }

    #[test]
    fn a_level_0_lookup_its_kept_filters_rule_out_needs_no_table() {
        let mem: Arc<dyn crate::env::FileSystem> = Arc::new(crate::env::MemFs::new());
        mem.create_dir_all(Path::new("/db")).unwrap();
        let options = crate::Options {
            fs: mem.clone(),
            ..crate::Options::default()
        };
        let mut topts = crate::sstable::TableOptions::new(Arc::new(icmp()));
        topts.whole_table_filter = true;
        topts.filter_policy = Some(Arc::new(crate::BloomFilterPolicy::new(10)));
        let tc = TableCache::new(Path::new("/db"), &options, topts.clone());
        let mut v = Version::new(icmp());
        let keys: Vec<String> = (0..200).map(|i| format!("k{i:04}")).collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        v.files[0] = vec![
            write_table(&mem, &topts, 7, &keys[..150]),
            write_table(&mem, &topts, 8, &keys[50..]),
        ];
        let get = |user_key: &str| {
            let mut value = Vec::new();
            let key = LookupKey::new(user_key.as_bytes(), 100);
            v.get(&tc, false, true, &key, &mut value).map(|(r, _)| r)
        };
        assert_eq!(get("k0100").unwrap(), TableGet::Found);
        // Both tables searched once: their filters are kept.
        let absent: Vec<String> = (0..100).map(|i| format!("k{:04}x", i * 2)).collect();
        for k in &absent {
            assert_eq!(get(k).unwrap(), TableGet::Absent);
        }
        // The tables are gone from the cache and the disk; keys their
        // filters rule out are still answered (a false positive would need
        // the table: about 1 in 100 per table, so a few may).
        for n in [7, 8] {
            tc.evict(n);
            mem.remove_file(&crate::filename::table_file_name(Path::new("/db"), n))
                .unwrap();
        }
        let answered = absent
            .iter()
            .filter(|k| get(k).ok() == Some(TableGet::Absent))
            .count();
        assert!(
            answered >= 90,
            "{answered} of 100 answered without the tables"
        );
        // A key a filter lets through needs its table: an error, not a miss.
        assert!(get("k0100").is_err());
    }
}
