//! The MANIFEST: a log of version edits. `begin_apply` / `PendingEdit::write`
//! / `finish_apply` append an edit (starting a new MANIFEST with a snapshot of
//! the whole version when needed, and pointing `CURRENT` at it), and
//! `recover` replays the MANIFEST named by `CURRENT` when a database opens,
//! checking the files it lists (`check_files`).
//!
//! Invariant: an edit is durable (synced) before the version it describes is
//! installed.

use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use crate::env::FileSystem;
use crate::error::{Error, Result};
use crate::filename::{
    current_may_name, descriptor_file_name, parse_file_name, read_current_file, set_current_file,
    FileType,
};
use crate::keys::{InternalKey, InternalKeyComparator, MAX_SEQUENCE_NUMBER};
use crate::log;
use crate::version::edit::VersionEdit;
use crate::version::set::{finalize, Builder, VersionSet, MAX_FILE_NUMBER, MAX_TABLE_FILE_SIZE};
use crate::version::version::Version;

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
        // Once marked, every later MANIFEST is (its snapshot carries it).
        self.uses_blobs |= edit.uses_blobs;

        let mut builder = Builder::new(self.icmp.clone(), self.current.clone());
        builder.apply(edit, &mut self.compact_pointer);
        let mut version = builder.save();
        finalize(&mut version, self.l0_limits());

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
            self.uses_blobs |= edit.uses_blobs;
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
        finalize(&mut v, self.l0_limits());
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
            uses_blobs: self.uses_blobs,
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::comparator::BytewiseComparator;
    use crate::env::{FileSystem, MemFs};
    use crate::keys::ValueType;
    use crate::options::Options;
    use crate::sstable::TableOptions;
    use crate::table_cache::TableCache;

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
