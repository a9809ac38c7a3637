//! The version set: the current version, the counters that outlive it (next
//! file number, last sequence, log numbers) and the MANIFEST that records
//! every change to them as a version edit.
//!
//! Invariants: `current` reflects every edit appended to the MANIFEST;
//! `next_file_number` is larger than the number of every file in the
//! directory that belongs to the database; an edit is durable (synced) before
//! the version it describes is installed.

use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::env::FileSystem;
use crate::error::{Error, Result};
use crate::filename::{
    current_may_name, descriptor_file_name, parse_file_name, read_current_file, set_current_file,
    FileType,
};
use crate::keys::{InternalKey, InternalKeyComparator, MAX_SEQUENCE_NUMBER};
use crate::log;
use crate::options::Options;
use crate::table_cache::TableCache;
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::version::{Version, L0_COMPACTION_TRIGGER};
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
    dir: PathBuf,
    pub(crate) options: Options,
    pub(crate) icmp: InternalKeyComparator,
    pub(crate) table_cache: Arc<TableCache>,
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
    descriptor_log: Option<log::Writer>,
    /// An edit is between `begin_apply` and `finish_apply` (it holds the
    /// MANIFEST writer).
    apply_pending: bool,
    /// Set when the start of a new MANIFEST failed after CURRENT may
    /// already name it: the file is kept (the database needs it to open)
    /// and no further edit is written, since starting another MANIFEST
    /// under the same number would truncate it.
    manifest_failed: Option<String>,
    pub(crate) current: Arc<Version>,
    /// Every version handed out that may still be in use by a reader.
    live_versions: Vec<std::sync::Weak<Version>>,
    /// Where the next size compaction of each level starts (encoded internal keys).
    pub(crate) compact_pointer: [Vec<u8>; NUM_LEVELS],
}

/// A version edit between [`VersionSet::begin_apply`] and
/// [`VersionSet::finish_apply`]: the new version and the MANIFEST record
/// that must be durable before it is installed.
pub struct PendingEdit {
    version: Version,
    record: Vec<u8>,
    log: Option<log::Writer>,
    new_manifest: Option<PathBuf>,
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    manifest_file_number: u64,
    log_number: Option<u64>,
    prev_log_number: Option<u64>,
    /// The edit names files created since the directory was last synced
    /// (new tables, a new log): see [`PendingEdit::write`].
    sync_dir: bool,
}

impl PendingEdit {
    /// Appends the record to the MANIFEST and syncs it (and points CURRENT
    /// at a new MANIFEST). Needs no lock: it touches only what the pending
    /// edit holds.
    ///
    /// When the edit names new files (tables, a new log) the directory is
    /// synced first: a table must have a durable directory entry before the
    /// MANIFEST that names it is durable (or a crash leaves a MANIFEST naming
    /// a missing file), and before the log whose data it now holds is
    /// deleted, which happens only after this edit. A new MANIFEST and the
    /// rename of CURRENT are made durable by the directory sync in
    /// `set_current_file`.
    pub fn write(&mut self) -> Result<()> {
        let w = self
            .log
            .as_mut()
            .ok_or_else(|| Error::Background("no MANIFEST".into()))?;
        if self.sync_dir {
            self.fs.sync_dir(&self.dir)?;
        }
        w.add_record(&self.record)?;
        w.sync()?;
        if self.new_manifest.is_some() {
            set_current_file(&*self.fs, &self.dir, self.manifest_file_number)?;
        }
        Ok(())
    }
}

impl VersionSet {
    /// A version set for the database in `dir`, empty until [`VersionSet::recover`].
    pub fn new(
        dir: &Path,
        options: &Options,
        icmp: InternalKeyComparator,
        table_cache: Arc<TableCache>,
    ) -> Self {
        VersionSet {
            dir: dir.to_path_buf(),
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

    /// Applies `edit` to the current version, records it in the MANIFEST
    /// (starting a new MANIFEST if none is open) and installs the result.
    pub fn log_and_apply(&mut self, edit: &mut VersionEdit) -> Result<()> {
        let mut pending = self.begin_apply(edit)?;
        let written = pending.write();
        self.finish_apply(pending, written)
    }

    /// The first step of [`log_and_apply`](Self::log_and_apply), split so
    /// that the caller can release its lock for the MANIFEST write: applies
    /// `edit` to a new version (not yet installed) and encodes the record.
    /// Until [`finish_apply`](Self::finish_apply) the MANIFEST writer is out
    /// of the set, so only one edit may be pending at a time.
    pub fn begin_apply(&mut self, edit: &mut VersionEdit) -> Result<PendingEdit> {
        if self.apply_pending {
            return Err(Error::Background(
                "a version edit is already being written to the MANIFEST".into(),
            ));
        }
        if let Some(cause) = &self.manifest_failed {
            return Err(Error::Background(format!(
                "the MANIFEST cannot be written after an earlier failure: {cause}"
            )));
        }
        match edit.log_number {
            Some(n) if n < self.log_number || n >= self.next_file_number => {
                return Err(Error::InvalidArgument(format!(
                    "log number {n} outside [{}, {})",
                    self.log_number, self.next_file_number
                )));
            }
            Some(_) => {}
            None => edit.log_number = Some(self.log_number),
        }
        if edit.prev_log_number.is_none() {
            edit.prev_log_number = Some(self.prev_log_number);
        }
        edit.next_file_number = Some(self.next_file_number);
        edit.last_sequence = Some(self.last_sequence);

        let mut builder = Builder::new(self.icmp.clone(), self.current.clone());
        builder.apply(edit, &mut self.compact_pointer);
        let mut version = builder.save();
        finalize(&mut version);

        let mut new_manifest = None;
        if self.descriptor_log.is_none() {
            let path = descriptor_file_name(&self.dir, self.manifest_file_number);
            let file = self.options.fs.new_writable_file(&path)?;
            let mut w = log::Writer::new(file);
            let mut snapshot = Vec::new();
            self.write_snapshot(&mut snapshot);
            if let Err(e) = w.add_record(&snapshot) {
                let _ = self.options.fs.remove_file(&path);
                return Err(e);
            }
            self.descriptor_log = Some(w);
            new_manifest = Some(path);
        }
        let mut record = Vec::new();
        edit.encode(&mut record);
        let sync_dir = !edit.new_files.is_empty() || edit.log_number != Some(self.log_number);
        self.apply_pending = true;
        Ok(PendingEdit {
            version,
            record,
            log: self.descriptor_log.take(),
            new_manifest,
            fs: self.options.fs.clone(),
            dir: self.dir.clone(),
            manifest_file_number: self.manifest_file_number,
            log_number: edit.log_number,
            prev_log_number: edit.prev_log_number,
            sync_dir,
        })
    }

    /// The last step of [`log_and_apply`](Self::log_and_apply): given the
    /// outcome of [`PendingEdit::write`], installs the new version, or on
    /// failure drops a MANIFEST that was just started, unless CURRENT may
    /// already name it (the failure came after the rename, from the
    /// directory sync): then the MANIFEST is kept, no later edit is
    /// written, and the error is returned for the caller to keep (the
    /// database opens from that MANIFEST next time).
    pub fn finish_apply(&mut self, pending: PendingEdit, written: Result<()>) -> Result<()> {
        self.apply_pending = false;
        self.descriptor_log = pending.log;
        if let Err(e) = written {
            if let Some(path) = pending.new_manifest {
                self.descriptor_log = None;
                if current_may_name(&*self.options.fs, &self.dir, pending.manifest_file_number) {
                    self.manifest_failed = Some(format!("{}: {e}", path.display()));
                } else {
                    let _ = self.options.fs.remove_file(&path);
                }
            }
            return Err(e);
        }
        self.install(pending.version);
        if let Some(n) = pending.log_number {
            self.log_number = n;
        }
        if let Some(n) = pending.prev_log_number {
            self.prev_log_number = n;
        }
        Ok(())
    }

    /// Reads CURRENT and the MANIFEST it names and installs the version they
    /// describe. Returns whether a new MANIFEST must be written: false when,
    /// with `reuse_logs`, the MANIFEST was small and clean enough to keep
    /// appending to (see [`VersionSet::start_new_manifest`] otherwise).
    pub fn recover(&mut self) -> Result<bool> {
        let fs = self.options.fs.clone();
        let current = read_current_file(&*fs, &self.dir)?;
        let manifest_name = current.trim_end_matches('\n');
        let manifest_path = self.dir.join(manifest_name);
        let file = fs
            .new_sequential_file(&manifest_path)
            .map_err(|e| match e {
                Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                    Error::corruption(
                        &manifest_path,
                        None,
                        "CURRENT points to a non-existent MANIFEST",
                    )
                }
                other => other,
            })?;

        let mut builder = Builder::new(self.icmp.clone(), self.current.clone());
        let mut log_number = None;
        let mut prev_log_number = None;
        let mut next_file = None;
        let mut last_sequence = None;

        // The first damage the reader reports. Every record of a MANIFEST
        // was synced before the database relied on it, so a damaged record
        // (a checksum mismatch, a bad length, a fragment out of place) is
        // lost history, not a torn write: skipping it could drop a table
        // from the version and leave it to be deleted as obsolete. The open
        // fails instead, naming the file and offset, as LevelDB's does. (A
        // record cut short by the end of the file is a write that never
        // completed, so never synced; the reader drops it without a report.)
        let damage: Arc<Mutex<Option<Error>>> = Arc::new(Mutex::new(None));
        let first = damage.clone();
        let reporter: log::Reporter = Box::new(move |_, error| {
            let mut slot = first.lock();
            if slot.is_none() {
                *slot = Some(error.duplicate());
            }
        });
        let mut reader = log::Reader::new(file, manifest_path.clone(), Some(reporter), true, 0);
        let mut scratch = Vec::new();
        let mut end_of_records = 0;
        loop {
            let next = reader.read_record(&mut scratch)?;
            if let Some(error) = damage.lock().take() {
                return Err(error);
            }
            let (edit, len) = match next {
                None => break,
                Some(record) => (VersionEdit::decode(record), record.len()),
            };
            let offset = reader.last_record_offset();
            end_of_records = log::writer::record_end(offset, len);
            let edit = edit.map_err(|e| e.in_file(&manifest_path, Some(offset)))?;
            if let Some(name) = &edit.comparator {
                if name != self.icmp.user_comparator().name() {
                    return Err(Error::InvalidArgument(format!(
                        "{}: comparator '{}' does not match the database's '{}'",
                        manifest_path.display(),
                        self.icmp.user_comparator().name(),
                        name
                    )));
                }
            }
            builder.apply(&edit, &mut self.compact_pointer);
            log_number = edit.log_number.or(log_number);
            prev_log_number = edit.prev_log_number.or(prev_log_number);
            next_file = edit.next_file_number.or(next_file);
            last_sequence = edit.last_sequence.or(last_sequence);
        }
        let missing = |what: &str| {
            Error::corruption(&manifest_path, None, format!("no {what} entry in MANIFEST"))
        };
        let next_file = next_file.ok_or_else(|| missing("meta-nextfile"))?;
        let log_number = log_number.ok_or_else(|| missing("log-number"))?;
        let last_sequence = last_sequence.ok_or_else(|| missing("last-sequence-number"))?;
        let prev_log_number = prev_log_number.unwrap_or(0);
        let corrupt = |what: String| Error::corruption(&manifest_path, None, what);
        if last_sequence > MAX_SEQUENCE_NUMBER {
            return Err(corrupt(format!(
                "last sequence number {last_sequence} is larger than sequence numbers can be"
            )));
        }
        for (what, n) in [
            ("next file number", next_file),
            ("log number", log_number),
            ("previous log number", prev_log_number),
        ] {
            if n > MAX_FILE_NUMBER {
                return Err(corrupt(format!("{what} {n} is too large")));
            }
        }

        self.mark_file_number_used(prev_log_number);
        self.mark_file_number_used(log_number);

        let mut v = builder.save();
        check_files(&self.icmp, &v).map_err(corrupt)?;
        finalize(&mut v);
        self.install(v);
        self.last_sequence = last_sequence;
        self.log_number = log_number;
        self.prev_log_number = prev_log_number;

        let clean_end = fs.file_size(&manifest_path).ok() == Some(end_of_records);
        if clean_end && self.reuse_manifest(manifest_name, end_of_records) {
            self.next_file_number = self.next_file_number.max(next_file);
            return Ok(false);
        }
        // Otherwise the next `log_and_apply` starts a new MANIFEST: it
        // compacts the history and leaves the old one (and any torn tail it
        // may have) behind.
        self.manifest_file_number = next_file;
        self.next_file_number = self.next_file_number.max(next_file.saturating_add(1));
        Ok(true)
    }

    /// With `reuse_logs`, keeps appending to the MANIFEST `name` (`size`
    /// bytes, ending cleanly after its last record) instead of writing a new
    /// one, as long as it is smaller than a table file (LevelDB's rule: a
    /// bigger one is rewritten to drop its history). True if reused.
    fn reuse_manifest(&mut self, name: &str, size: u64) -> bool {
        if !self.options.reuse_logs || size >= self.options.max_file_size as u64 {
            return false;
        }
        let number = match parse_file_name(name) {
            Some((number, FileType::Descriptor)) => number,
            _ => return false,
        };
        let path = self.dir.join(name);
        match self.options.fs.new_appendable_file(&path) {
            Ok(file) => {
                self.descriptor_log = Some(log::Writer::with_offset(file, size));
                self.manifest_file_number = number;
                true
            }
            // Not fatal: a new MANIFEST will be written instead.
            Err(_) => false,
        }
    }

    /// Sets the number of the MANIFEST the next `log_and_apply` creates.
    pub fn start_new_manifest(&mut self) {
        self.descriptor_log = None;
        self.manifest_file_number = self.new_file_number();
    }

    fn write_snapshot(&self, dst: &mut Vec<u8>) {
        let mut edit = VersionEdit {
            comparator: Some(self.icmp.user_comparator().name().to_string()),
            ..Default::default()
        };
        for (level, ptr) in self.compact_pointer.iter().enumerate() {
            if !ptr.is_empty() {
                edit.compact_pointers
                    .push((level as u32, InternalKey::from_encoded(ptr.clone())));
            }
        }
        for (level, files) in self.current.files.iter().enumerate() {
            for f in files {
                edit.new_files.push((level as u32, f.as_ref().clone()));
            }
        }
        edit.encode(dst);
    }

    fn install(&mut self, v: Version) {
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

/// Checks the files of a version read from a MANIFEST: no file is listed
/// twice or larger than [`MAX_TABLE_FILE_SIZE`], each file's smallest key is not after its largest, and the files of
/// every level past 0 are sorted and disjoint, as the read path requires.
fn check_files(icmp: &InternalKeyComparator, v: &Version) -> std::result::Result<(), String> {
    use std::cmp::Ordering;
    let mut seen = BTreeSet::new();
    for (level, files) in v.files.iter().enumerate() {
        for f in files {
            if !seen.insert(f.number) {
                return Err(format!("file {} is listed twice", f.number));
            }
            if f.file_size > MAX_TABLE_FILE_SIZE {
                return Err(format!(
                    "file {} has an impossible size of {} bytes",
                    f.number, f.file_size
                ));
            }
            if icmp.compare(f.smallest.encoded(), f.largest.encoded()) == Ordering::Greater {
                return Err(format!(
                    "file {} at level {level} has its smallest key after its largest",
                    f.number
                ));
            }
        }
        if level > 0 {
            for w in files.windows(2) {
                if icmp.compare(w[0].largest.encoded(), w[1].smallest.encoded()) != Ordering::Less {
                    return Err(format!(
                        "files {} and {} overlap at level {level}",
                        w[0].number, w[1].number
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Computes the level most in need of compaction.
fn finalize(v: &mut Version) {
    let mut best_level = 0;
    let mut best_score = -1.0;
    for level in 0..NUM_LEVELS - 1 {
        let score = if level == 0 {
            // Count files rather than bytes at level 0: with big write buffers
            // there are few, large files, and every read merges all of them.
            v.num_files(0) as f64 / L0_COMPACTION_TRIGGER as f64
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

/// Applies a sequence of edits to a base version without copying it per edit.
struct Builder {
    icmp: InternalKeyComparator,
    base: Arc<Version>,
    deleted: [BTreeSet<u64>; NUM_LEVELS],
    added: [Vec<Arc<FileMetaData>>; NUM_LEVELS],
}

impl Builder {
    fn new(icmp: InternalKeyComparator, base: Arc<Version>) -> Builder {
        Builder {
            icmp,
            base,
            deleted: Default::default(),
            added: Default::default(),
        }
    }

    fn apply(&mut self, edit: &VersionEdit, compact_pointer: &mut [Vec<u8>; NUM_LEVELS]) {
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
            self.added[level].push(Arc::new(FileMetaData::new(
                f.number,
                f.file_size,
                f.smallest.clone(),
                f.largest.clone(),
            )));
        }
    }

    fn save(self) -> Version {
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
    use crate::comparator::BytewiseComparator;
    use crate::env::{FileSystem, MemFs};
    use crate::keys::ValueType;
    use crate::sstable::TableOptions;

    fn key(user: &[u8], seq: u64) -> InternalKey {
        InternalKey::new(user, seq, ValueType::Value)
    }

    /// Recovers a version set from a MANIFEST holding `edit` after the
    /// counters every MANIFEST has.
    fn recover_with(edit: VersionEdit) -> Result<VersionSet> {
        let fs = MemFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let options = Options {
            fs: Arc::new(fs.clone()),
            ..Options::default()
        };
        let mut base = VersionEdit::new();
        base.set_comparator_name("leveldb.BytewiseComparator");
        base.set_log_number(0);
        base.set_next_file_number(20);
        base.set_last_sequence(100);
        let mut w = log::Writer::new(
            options
                .fs
                .new_writable_file(&descriptor_file_name(dir, 1))
                .unwrap(),
        );
        for e in [base, edit] {
            let mut record = Vec::new();
            e.encode(&mut record);
            w.add_record(&record).unwrap();
        }
        w.close().unwrap();
        set_current_file(&*options.fs, dir, 1).unwrap();
        let icmp = InternalKeyComparator::new(Arc::new(BytewiseComparator));
        let table_options = TableOptions::new(Arc::new(icmp.clone()));
        let tc = Arc::new(TableCache::new(dir, &options, table_options));
        let mut vs = VersionSet::new(dir, &options, icmp, tc);
        vs.recover()?;
        Ok(vs)
    }

    fn corruption_containing(edit: VersionEdit, what: &str) {
        match recover_with(edit) {
            Err(e) => {
                assert!(e.is_corruption(), "{e}");
                assert!(e.to_string().contains(what), "{e}");
            }
            Ok(_) => panic!("recovered a MANIFEST with {what}"),
        }
    }

    #[test]
    fn sound_manifest_recovers() {
        let mut e = VersionEdit::new();
        e.add_file(1, 7, 100, key(b"a", 5), key(b"c", 4));
        e.add_file(1, 8, 100, key(b"d", 5), key(b"f", 4));
        e.add_file(0, 9, 100, key(b"b", 9), key(b"e", 9));
        let vs = recover_with(e).unwrap();
        assert_eq!(vs.level_summary(), "files[ 1 2 0 0 0 0 0 ]");
        assert_eq!((vs.next_file_number, vs.last_sequence), (21, 100));
    }

    #[test]
    fn overlapping_files_in_a_sorted_level_are_corruption() {
        // Once a debug assertion in the level iterator, and wrong reads without.
        let mut e = VersionEdit::new();
        e.add_file(2, 7, 100, key(b"a", 5), key(b"m", 4));
        e.add_file(2, 8, 100, key(b"k", 5), key(b"z", 4));
        corruption_containing(e, "overlap at level 2");
    }

    #[test]
    fn file_with_smallest_after_largest_is_corruption() {
        let mut e = VersionEdit::new();
        e.add_file(0, 7, 100, key(b"z", 5), key(b"a", 4));
        corruption_containing(e, "smallest key after its largest");
    }

    #[test]
    fn file_listed_at_two_levels_is_corruption() {
        let mut e = VersionEdit::new();
        e.add_file(1, 7, 100, key(b"a", 5), key(b"b", 4));
        e.add_file(3, 7, 100, key(b"a", 5), key(b"b", 4));
        corruption_containing(e, "listed twice");
    }

    #[test]
    fn file_sizes_that_could_overflow_sums_are_corruption() {
        // Once the sum of a level's file sizes overflowed while scoring levels.
        let mut e = VersionEdit::new();
        e.add_file(1, 7, u64::MAX / 2 + 1, key(b"a", 5), key(b"b", 4));
        e.add_file(1, 8, u64::MAX / 2 + 1, key(b"c", 5), key(b"d", 4));
        corruption_containing(e, "impossible size");
        let mut e = VersionEdit::new();
        e.add_file(1, 7, MAX_TABLE_FILE_SIZE, key(b"a", 5), key(b"b", 4));
        assert!(recover_with(e).is_ok());
    }

    #[test]
    fn counters_out_of_range_are_corruption() {
        // Once `next_file + 1` overflowed, and later writes would have used
        // sequence numbers that do not fit an internal key.
        let mut e = VersionEdit::new();
        e.set_next_file_number(u64::MAX);
        corruption_containing(e, "next file number");
        let mut e = VersionEdit::new();
        e.set_log_number(MAX_FILE_NUMBER + 1);
        corruption_containing(e, "log number");
        let mut e = VersionEdit::new();
        e.set_last_sequence(MAX_SEQUENCE_NUMBER + 1);
        corruption_containing(e, "last sequence number");
        let mut e = VersionEdit::new();
        e.set_last_sequence(MAX_SEQUENCE_NUMBER);
        e.set_next_file_number(MAX_FILE_NUMBER);
        assert!(recover_with(e).is_ok());
    }
}
