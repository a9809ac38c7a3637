//! The version set: the current version, the counters that outlive it (next
//! file number, last sequence, log numbers), the live files, and the builder
//! that applies version edits to a version. Writing and recovering the
//! MANIFEST that records every change as a version edit is in `manifest.rs`.
//!
//! Invariants: `current` reflects every edit appended to the MANIFEST;
//! `next_file_number` is larger than the number of every file in the
//! directory that belongs to the database; an edit is durable (synced) before
//! the version it describes is installed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::keys::InternalKeyComparator;
use crate::log;
use crate::options::Options;
use crate::table_cache::TableCache;
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::version::{L0Limits, Version};
use crate::version::NUM_LEVELS;

/// The largest file number a MANIFEST may hold. Far beyond any real database
/// (a billion files a second for a century), it leaves the file number
/// counter room to grow without overflowing.
pub const MAX_FILE_NUMBER: u64 = 1 << 62;

/// The largest table file size a MANIFEST may hold: a thousand times the
/// largest table LevelDB or Shale writes, and small enough that sums of the
/// sizes of a level or a compaction's inputs cannot overflow.
pub const MAX_TABLE_FILE_SIZE: u64 = 1 << 40;

/// Bytes a level may hold before it needs compaction: 10 MB at level 1, ten times more per level.
pub fn max_bytes_for_level(level: usize) -> f64 {
    let mut result = 10.0 * 1_048_576.0;
    let mut l = level;
    while l > 1 {
        result *= 10.0;
        l -= 1;
    }
    result
}

/// The live version and the MANIFEST.
pub struct VersionSet {
    pub(crate) dir: PathBuf,
    pub(crate) options: Options,
    pub(crate) icmp: InternalKeyComparator,
    pub(crate) table_cache: Arc<TableCache>,
    /// The level-0 limits of this database's write buffer.
    l0_limits: L0Limits,
    /// The next file number to hand out.
    pub next_file_number: u64,
    /// The MANIFEST being written.
    pub manifest_file_number: u64,
    /// The sequence number of the last write applied.
    pub last_sequence: u64,
    /// Logs older than this are no longer needed.
    pub log_number: u64,
    /// A log being compacted when the database was closed (0 if none); LevelDB compatibility.
    pub prev_log_number: u64,
    pub(crate) descriptor_log: Option<log::Writer>,
    /// An edit is between `begin_apply` and `finish_apply` (it holds the
    /// MANIFEST writer).
    pub(crate) apply_pending: bool,
    /// Set when the start of a new MANIFEST failed after CURRENT may
    /// already name it: the file is kept (the database needs it to open)
    /// and no further edit is written, since starting another MANIFEST
    /// under the same number would truncate it.
    pub(crate) manifest_failed: Option<String>,
    pub(crate) current: Arc<Version>,
    /// Every version handed out that may still be in use by a reader.
    pub(crate) live_versions: Vec<std::sync::Weak<Version>>,
    /// Where the next size compaction of each level starts (encoded internal keys).
    pub(crate) compact_pointer: [Vec<u8>; NUM_LEVELS],
    /// The MANIFEST marks the database as using blob files (see `edit.rs`).
    pub uses_blobs: bool,
}

impl VersionSet {
    /// The level-0 limits of this database's write buffer.
    pub(crate) fn l0_limits(&self) -> L0Limits {
        self.l0_limits
    }

    /// A version set for the database in `dir`, empty until [`VersionSet::recover`].
    pub fn new(
        dir: &Path,
        options: &Options,
        icmp: InternalKeyComparator,
        table_cache: Arc<TableCache>,
    ) -> Self {
        VersionSet {
            dir: dir.to_path_buf(),
            l0_limits: L0Limits::for_write_buffer(options.write_buffer_size),
            options: options.clone(),
            current: Arc::new(Version::new(icmp.clone())),
            icmp,
            table_cache,
            next_file_number: 2,
            manifest_file_number: 0,
            last_sequence: 0,
            log_number: 0,
            prev_log_number: 0,
            descriptor_log: None,
            apply_pending: false,
            manifest_failed: None,
            live_versions: Vec::new(),
            compact_pointer: Default::default(),
            uses_blobs: false,
        }
    }

    /// The current version.
    pub fn current(&self) -> Arc<Version> {
        self.current.clone()
    }

    /// Hands out a new file number.
    pub fn new_file_number(&mut self) -> u64 {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }

    /// Makes sure `number` is never handed out.
    pub fn mark_file_number_used(&mut self, number: u64) {
        if self.next_file_number <= number {
            // A file number read from disk may be anything; u64::MAX stays in use.
            self.next_file_number = number.saturating_add(1);
        }
    }

    /// Gives back a number handed out by `new_file_number` when nothing used it.
    pub fn reuse_file_number(&mut self, number: u64) {
        if self.next_file_number == number + 1 {
            self.next_file_number = number;
        }
    }

    pub(super) fn install(&mut self, v: Version) {
        let old = std::mem::replace(&mut self.current, Arc::new(v));
        self.live_versions.retain(|w| w.strong_count() > 0);
        if Arc::strong_count(&old) > 1 {
            self.live_versions.push(Arc::downgrade(&old));
        }
    }

    /// Numbers of every table file referenced by any version still in use.
    pub fn live_files_all_versions(&mut self) -> BTreeSet<u64> {
        let mut live = self.live_files();
        self.live_versions.retain(|w| w.strong_count() > 0);
        for v in self.live_versions.iter().filter_map(|w| w.upgrade()) {
            live.extend(v.files.iter().flatten().map(|f| f.number));
        }
        live
    }

    /// Numbers of every blob file a table of any version still in use
    /// holds pointers into.
    pub fn live_blob_files_all_versions(&mut self) -> BTreeSet<u64> {
        self.live_versions.retain(|w| w.strong_count() > 0);
        let mut live = BTreeSet::new();
        let versions = self.live_versions.iter().filter_map(|w| w.upgrade());
        for v in versions.chain(std::iter::once(self.current.clone())) {
            for f in v.files.iter().flatten() {
                live.extend(f.blob_files.iter().copied());
            }
        }
        live
    }

    /// Numbers of every table file referenced by the current version.
    pub fn live_files(&self) -> BTreeSet<u64> {
        self.current
            .files
            .iter()
            .flatten()
            .map(|f| f.number)
            .collect()
    }

    /// The number of files at `level` in the current version.
    pub fn num_level_files(&self, level: usize) -> usize {
        self.current.num_files(level)
    }

    /// True if the current version needs a compaction.
    pub fn needs_compaction(&self) -> bool {
        self.current.compaction_score >= 1.0 || self.current.file_to_compact.lock().is_some()
    }

    /// A one-line summary of the file counts per level.
    pub fn level_summary(&self) -> String {
        let counts: Vec<String> = (0..NUM_LEVELS)
            .map(|l| self.current.num_files(l).to_string())
            .collect();
        format!("files[ {} ]", counts.join(" "))
    }
}

/// Computes the level most in need of compaction. Level 0 is due at
/// `limits.compaction` files; once it reaches `limits.slowdown` it goes
/// first whatever the deeper levels' scores, since only level 0 slows
/// writers (a deeper level over its size costs write amplification, not
/// stalls), unless level 1 has grown to [`L1_SCORE_CAP`] times its size:
/// every level-0 compaction rewrites the part of level 1 it overlaps, and
/// with level 1 never compacted those would grow without bound.
pub(super) fn finalize(v: &mut Version, limits: L0Limits) {
    let mut best_level = 0;
    let mut best_score = -1.0;
    let l1_score = v.level_bytes(1) as f64 / max_bytes_for_level(1);
    for level in 0..NUM_LEVELS - 1 {
        let score = if level == 0 {
            // Count files rather than bytes at level 0: with big write buffers
            // there are few, large files, and every read merges all of them.
            let files = v.num_files(0);
            let score = files as f64 / limits.compaction.max(1) as f64;
            if files >= limits.slowdown && l1_score < L1_SCORE_CAP {
                score + L0_SLOWDOWN_PRIORITY
            } else {
                score
            }
        } else {
            v.level_bytes(level) as f64 / max_bytes_for_level(level)
        };
        if score > best_score {
            best_level = level;
            best_score = score;
        }
    }
    v.compaction_level = best_level;
    v.compaction_score = best_score;
}

/// Added to level 0's score once writers slow down for it: more than any
/// deeper level's score can reach in practice.
const L0_SLOWDOWN_PRIORITY: f64 = 1e6;

/// Level 1's score up to which level 0 goes first once writers slow down.
const L1_SCORE_CAP: f64 = 4.0;

/// Applies a sequence of edits to a base version without copying it per edit.
pub(super) struct Builder {
    icmp: InternalKeyComparator,
    base: Arc<Version>,
    deleted: [BTreeSet<u64>; NUM_LEVELS],
    added: [Vec<Arc<FileMetaData>>; NUM_LEVELS],
}

impl Builder {
    pub(super) fn new(icmp: InternalKeyComparator, base: Arc<Version>) -> Builder {
        Builder {
            icmp,
            base,
            deleted: Default::default(),
            added: Default::default(),
        }
    }

    pub(super) fn apply(
        &mut self,
        edit: &VersionEdit,
        compact_pointer: &mut [Vec<u8>; NUM_LEVELS],
    ) {
        for (level, key) in &edit.compact_pointers {
            if let Some(p) = compact_pointer.get_mut(*level as usize) {
                *p = key.encoded().to_vec();
            }
        }
        for &(level, number) in &edit.deleted_files {
            if let Some(d) = self.deleted.get_mut(level as usize) {
                d.insert(number);
            }
        }
        for (level, f) in &edit.new_files {
            let level = *level as usize;
            if level >= NUM_LEVELS {
                continue;
            }
            self.deleted[level].remove(&f.number);
            self.added[level].retain(|g| g.number != f.number);
            // A fresh seek budget, and the table's blob files.
            let mut added =
                FileMetaData::new(f.number, f.file_size, f.smallest.clone(), f.largest.clone());
            added.blob_files = f.blob_files.clone();
            self.added[level].push(Arc::new(added));
        }
    }

    pub(super) fn save(self) -> Version {
        let mut v = Version::new(self.icmp.clone());
        for level in 0..NUM_LEVELS {
            let mut files: Vec<Arc<FileMetaData>> = self.base.files[level]
                .iter()
                .chain(self.added[level].iter())
                .filter(|f| !self.deleted[level].contains(&f.number))
                .cloned()
                .collect();
            if level == 0 {
                files.sort_by_key(|f| f.number);
            } else {
                files.sort_by(|a, b| {
                    self.icmp
                        .compare(a.smallest.encoded(), b.smallest.encoded())
                        .then(a.number.cmp(&b.number))
                });
            }
            files.dedup_by_key(|f| f.number);
            v.files[level] = files;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{InternalKey, ValueType};
    use crate::BytewiseComparator;

    const LIMITS: L0Limits = L0Limits {
        compaction: 4,
        slowdown: 8,
        stop: 12,
    };

    /// A version with `l0` level-0 files and `l1_bytes` at level 1 (one file).
    fn version(l0: usize, l1_bytes: u64) -> Version {
        let mut v = Version::new(InternalKeyComparator::new(Arc::new(BytewiseComparator)));
        let file = |number: u64, size: u64| {
            Arc::new(FileMetaData::new(
                number,
                size,
                InternalKey::new(b"a", number, ValueType::Value),
                InternalKey::new(b"z", number, ValueType::Value),
            ))
        };
        for n in 0..l0 {
            v.files[0].push(file(n as u64 + 10, 1 << 20));
        }
        v.files[1].push(file(1, l1_bytes));
        v
    }

    const MB: u64 = 1 << 20;

    #[test]
    fn the_level_with_the_highest_score_is_compacted_first() {
        // Level 0 due (6 of 4 files: 1.5), level 1 at twice its size (2.0).
        let mut v = version(6, 20 * MB);
        finalize(&mut v, LIMITS);
        assert_eq!(v.compaction_level, 1);
        assert_eq!(v.compaction_score, 2.0);
        // Under its count level 0 is not due; level 1 under its size neither.
        let mut v = version(3, 5 * MB);
        finalize(&mut v, LIMITS);
        assert!(v.compaction_score < 1.0);
    }

    #[test]
    fn level_0_goes_first_once_writers_slow_down_for_it() {
        // 8 files: writers slow down. Level 1 at three times its size would
        // win on scores (3.0 against 2.0), but only level 0 stalls writers.
        let mut v = version(8, 30 * MB);
        finalize(&mut v, LIMITS);
        assert_eq!(v.compaction_level, 0);
        assert!(v.compaction_score >= 1.0);
    }

    #[test]
    fn level_1_grown_past_the_cap_goes_first_even_with_level_0_slowing_writers() {
        // Level 1 at five times its size: every level-0 compaction would
        // rewrite all of it, so it is shrunk first.
        let mut v = version(9, 50 * MB);
        finalize(&mut v, LIMITS);
        assert_eq!(v.compaction_level, 1);
        assert_eq!(v.compaction_score, 5.0);
    }
}
