//! Compaction: a set of input files from two adjacent levels, merged into
//! new files at the higher-numbered level.
//!
//! `picker` chooses the level and the input files, `job` runs the merge and
//! cuts the output tables, and this file holds the `Compaction` itself and
//! its output-cutting rules. The background thread (`db/background.rs`)
//! schedules compactions and installs their results.
//!
//! Invariants: `inputs[0]` are files of `level`, `inputs[1]` the files of
//! `level + 1` that overlap them; `grandparents` are the files of `level + 2`
//! that overlap the whole range, used to cut output files so that no single
//! output overlaps too much of the next level.

pub mod job;
pub mod picker;

use std::cmp::Ordering;
use std::sync::Arc;

use crate::keys::InternalKeyComparator;
use crate::options::Options;
use crate::version::edit::VersionEdit;
use crate::version::version::{
    max_grandparent_overlap_bytes, total_file_size, LevelFiles, Version,
};
use crate::version::NUM_LEVELS;

/// One compaction's inputs and bookkeeping.
pub struct Compaction {
    /// The level being compacted (outputs go to `level + 1`).
    pub level: usize,
    /// Input files: `[0]` from `level`, `[1]` from `level + 1`.
    pub inputs: [LevelFiles; 2],
    /// Files of `level + 2` overlapping the compaction's range.
    pub grandparents: LevelFiles,
    /// The version the inputs were picked from.
    pub input_version: Arc<Version>,
    /// The edit that installs the result.
    pub edit: VersionEdit,
    /// Blob files old enough for garbage collection: values the compaction
    /// keeps that are in them are copied to `gc_blob` (see `job.rs`).
    pub gc_blob_files: std::collections::BTreeSet<u64>,
    /// The compaction's own blob file, once it copied a value.
    pub gc_blob: Option<crate::blob::writer::BlobWriter>,
    /// Values copied to `gc_blob`.
    pub gc_values: u64,
    icmp: InternalKeyComparator,
    max_output_file_size: u64,
    grandparent_index: usize,
    seen_key: bool,
    overlapped_bytes: u64,
    level_ptrs: [usize; NUM_LEVELS],
}

impl Compaction {
    /// An empty compaction of `level` against `version`.
    pub fn new(options: &Options, version: Arc<Version>, level: usize) -> Compaction {
        Compaction {
            level,
            inputs: Default::default(),
            grandparents: Vec::new(),
            icmp: version.icmp().clone(),
            input_version: version,
            edit: VersionEdit::default(),
            gc_blob_files: Default::default(),
            gc_blob: None,
            gc_values: 0,
            max_output_file_size: options.max_file_size as u64,
            grandparent_index: 0,
            seen_key: false,
            overlapped_bytes: 0,
            level_ptrs: [0; NUM_LEVELS],
        }
    }

    /// The level the outputs go to.
    pub fn output_level(&self) -> usize {
        self.level + 1
    }

    /// True if no level below the output level holds a table in the input
    /// version: the outputs go to the bottommost level.
    pub fn output_is_bottommost(&self) -> bool {
        self.input_version.files[(self.level + 2).min(NUM_LEVELS)..]
            .iter()
            .all(|files| files.is_empty())
    }

    /// Bytes after which an output file is closed.
    pub fn max_output_file_size(&self) -> u64 {
        self.max_output_file_size
    }

    /// True if the single input file can simply be moved to the next level.
    pub fn is_trivial_move(&self) -> bool {
        self.inputs[0].len() == 1
            && self.inputs[1].is_empty()
            && total_file_size(&self.grandparents)
                <= max_grandparent_overlap_bytes(self.max_output_file_size)
    }

    /// Records the deletion of every input file in the edit.
    pub fn add_input_deletions(&mut self) {
        for (which, files) in self.inputs.iter().enumerate() {
            for f in files {
                self.edit
                    .deleted_files
                    .insert(((self.level + which) as u32, f.number));
            }
        }
    }

    /// True if no level below the output level holds `user_key`, so a
    /// deletion of it can be dropped. Calls must come in ascending key order.
    pub fn is_base_level_for_key(&mut self, user_key: &[u8]) -> bool {
        let ucmp = self.icmp.user_comparator().clone();
        for level in self.level + 2..NUM_LEVELS {
            let files = &self.input_version.files[level];
            while self.level_ptrs[level] < files.len() {
                let f = &files[self.level_ptrs[level]];
                if ucmp.compare(user_key, f.largest.user_key()) != Ordering::Greater {
                    if ucmp.compare(user_key, f.smallest.user_key()) != Ordering::Less {
                        return false;
                    }
                    break;
                }
                self.level_ptrs[level] += 1;
            }
        }
        true
    }

    /// True if the output file should be closed before `ikey` is added,
    /// because it already overlaps too much of the grandparent level.
    pub fn should_stop_before(&mut self, ikey: &[u8]) -> bool {
        while self.grandparent_index < self.grandparents.len()
            && self.icmp.compare(
                ikey,
                self.grandparents[self.grandparent_index].largest.encoded(),
            ) == Ordering::Greater
        {
            if self.seen_key {
                self.overlapped_bytes += self.grandparents[self.grandparent_index].file_size;
            }
            self.grandparent_index += 1;
        }
        self.seen_key = true;
        if self.overlapped_bytes > max_grandparent_overlap_bytes(self.max_output_file_size) {
            self.overlapped_bytes = 0;
            true
        } else {
            false
        }
    }
}
