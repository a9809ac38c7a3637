//! Background work, on one thread: flushing the immutable memtable to a
//! level-0 table, then compactions (manual first, then by size, then by
//! seeks), then deleting files no version needs.
//!
//! Invariants: a flush always wins over a compaction (a running compaction
//! stops between keys to flush), so writers wait at most one flush for room;
//! every file being written is in `pending_outputs` so it is never deleted.

use std::cmp::Ordering;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::MutexGuard;

use crate::compaction::job::{self, JobHost};
use crate::compaction::Compaction;
use crate::db::builder::build_table_range;
use crate::db::core::{panic_message, DbInner, ManualCompaction, State};
use crate::db::flush_split;
use crate::error::{Error, Result};
use crate::filename::{blob_file_name, parse_file_name, FileType};
use crate::keys::{
    InternalKey, InternalKeyComparator, ValueType, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK,
};
use crate::memtable::MemTable;
use crate::options::Options;
use crate::sstable::TableOptions;
use crate::table_cache::TableCache;
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::version::Version;
use crate::version::NUM_LEVELS;

impl JobHost for DbInner {
    fn options(&self) -> &Options {
        &self.options
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn icmp(&self) -> &InternalKeyComparator {
        &self.icmp
    }

    fn table_options(&self) -> &TableOptions {
        &self.table_options
    }

    fn table_cache(&self) -> &TableCache {
        &self.table_cache
    }

    #[inline]
    fn shutting_down(&self) -> bool {
        self.shutting_down.load(AtomicOrdering::Acquire)
    }

    #[inline]
    fn flush_waiting_memtable(&self) -> Result<()> {
        if self.has_imm.load(AtomicOrdering::Acquire) {
            let mut st = self.state.lock();
            self.compact_memtable(&mut st)?;
            self.work_done_cv.notify_all();
        }
        Ok(())
    }

    fn blob_cache(&self) -> &crate::blob::reader::BlobCache {
        &self.blob_cache
    }

    fn new_output_number(&self) -> u64 {
        let mut st = self.state.lock();
        let n = st.versions.new_file_number();
        st.pending_outputs.insert(n);
        st.compaction_outputs.push(n);
        n
    }
}

impl DbInner {
    /// Wakes the background thread if there is work for it.
    pub(crate) fn maybe_schedule_compaction(&self, st: &State) {
        if st.imm.is_some() || st.manual.is_some() || st.versions.needs_compaction() {
            self.bg_cv.notify_one();
        }
    }

    /// The background thread's body.
    pub(crate) fn background_loop(self: Arc<Self>) {
        let mut st = self.state.lock();
        loop {
            if self.shutting_down.load(AtomicOrdering::Acquire) {
                break;
            }
            // An ingestion installing its tables needs the version to stay
            // as it placed them until its edit is in.
            let has_work = st.bg_error.is_none()
                && !st.ingesting
                && (st.imm.is_some()
                    || st.manual.as_ref().is_some_and(|m| !m.done)
                    || st.versions.needs_compaction());
            if !has_work {
                self.bg_cv.wait(&mut st);
                continue;
            }
            st.bg_busy = true;
            // A panic (from a user comparator or filter policy, say) must
            // not end this thread: every writer and `compact_range` waiting
            // for its work would wait forever. It becomes a sticky error
            // that wakes them all. (The state lock is held again here
            // whether or not the step panicked while it had released it.)
            let step = panic::catch_unwind(AssertUnwindSafe(|| self.background_step(&mut st)))
                .unwrap_or_else(|payload| {
                    let e = Error::Background(format!(
                        "background work panicked: {}",
                        panic_message(&*payload)
                    ));
                    st.bg_error.get_or_insert_with(|| e.duplicate());
                    Err(e)
                });
            if let Err(e) = step {
                self.info_log.log(&format!("background error: {e}"));
                if !matches!(e, Error::Background(_)) {
                    st.bg_error.get_or_insert(e);
                }
            }
            st.bg_busy = false;
            self.work_done_cv.notify_all();
        }
        st.bg_busy = false;
        self.work_done_cv.notify_all();
    }

    fn background_step(&self, st: &mut MutexGuard<'_, State>) -> Result<()> {
        if st.imm.is_some() {
            return self.compact_memtable(st);
        }
        let compaction = if let Some(m) = st.manual.as_mut().filter(|m| !m.done) {
            let (level, begin, end) = (m.level, m.begin.clone(), m.end.clone());
            let c = st
                .versions
                .compact_range(level, begin.as_ref(), end.as_ref());
            if let Some(m) = st.manual.as_mut() {
                match &c {
                    None => m.done = true,
                    Some(c) => {
                        // Continue after this compaction's range next time.
                        let (_, largest) = crate::version::version::key_range(
                            c.input_version.icmp(),
                            &c.inputs[0],
                        );
                        m.begin = Some(largest);
                    }
                }
            }
            c
        } else {
            st.versions.pick_compaction()
        };
        let Some(mut c) = compaction else {
            return Ok(());
        };

        if c.is_trivial_move() {
            let f = c.inputs[0][0].clone();
            c.edit.deleted_files.insert((c.level as u32, f.number));
            c.edit
                .new_files
                .push(((c.level + 1) as u32, f.as_ref().clone()));
            self.apply_edit(st, &mut c.edit)?;
            self.install_super_version(st);
            self.info_log.log(&format!(
                "moved #{} to level-{} {} bytes; {}",
                f.number,
                c.level + 1,
                f.file_size,
                st.versions.level_summary()
            ));
        } else {
            let result = self.do_compaction_work(st, &mut c);
            // Once the compaction is over its outputs need no protection:
            // good ones are in the current version, failed ones are garbage.
            // (Only its own: a bulk load may be writing tables meanwhile.)
            for n in std::mem::take(&mut st.compaction_outputs) {
                st.pending_outputs.remove(&n);
            }
            // The compaction holds the version it read, which names the
            // files it replaced: released first, or they would look live
            // and stay on disk until some later compaction.
            drop(c);
            result?;
            self.delete_obsolete_files(st);
        }
        Ok(())
    }

    /// Flushes the immutable memtable to a table and drops the logs it covered.
    fn compact_memtable(&self, st: &mut MutexGuard<'_, State>) -> Result<()> {
        let Some(imm) = st.imm.clone() else {
            return Ok(());
        };
        // The log that replaced this memtable's is new: make its directory
        // entry durable now, off the writers' path, so that the synchronous
        // writes into it need not.
        let log_number = st.logfile_number;
        MutexGuard::unlocked(st, || self.sync_dir_for_log(log_number))?;
        let base = st.versions.current();
        let mut edit = VersionEdit::default();
        let numbers = self.write_level0_table(st, &imm, &mut edit, Some(&base))?;
        let result = if self.shutting_down.load(AtomicOrdering::Acquire) {
            Err(Error::Background(
                "shutting down during a memtable flush".into(),
            ))
        } else {
            edit.prev_log_number = Some(0);
            edit.log_number = Some(st.logfile_number);
            self.apply_edit(st, &mut edit)
        };
        // Installed (or failed): the new table needs no protection any more.
        // (A flush may run inside a compaction, whose outputs stay pending.)
        for number in &numbers {
            st.pending_outputs.remove(number);
        }
        result?;
        // The replaced log's writes are now in a synced table: it is closed
        // without a sync of its own (syncing it would write every log to
        // disk once more). Done before `imm` is cleared, so that no memtable
        // switch can put a newer log in its place meanwhile.
        drop(self.prev_log.lock().take());
        drop(self.prev_blob.lock().take());
        st.imm_blob = None;
        st.imm = None;
        self.has_imm.store(false, AtomicOrdering::Release);
        self.install_super_version(st);
        self.delete_obsolete_files(st);
        Ok(())
    }

    /// Writes `mem` to a new table and adds it to `edit`, at level 0 or deeper
    /// when `base` shows it overlaps nothing there; with
    /// `Options::split_flushes`, to several tables cut where its keys jump
    /// (`flush_split`), each at its own level. Unlocks while writing.
    /// Returns the file numbers, which stay in `pending_outputs` (so the
    /// files are never deleted) until the caller has installed `edit`.
    pub(crate) fn write_level0_table(
        &self,
        st: &mut MutexGuard<'_, State>,
        mem: &Arc<MemTable>,
        edit: &mut VersionEdit,
        base: Option<&Arc<Version>>,
    ) -> Result<Vec<u64>> {
        let start = Instant::now();
        let max_file_size = self.options.max_file_size as u64;
        // The levels are chosen before the tables are written, so that each
        // table is compressed as its level asks.
        let pieces = match base {
            Some(base) => {
                // A flush can run in the middle of a compaction (`job.rs`).
                let running = st.compacting.clone();
                let split = self.options.split_flushes;
                let ucmp = self.options.comparator.clone();
                MutexGuard::unlocked(st, || {
                    flush_split::plan(mem, base, &*ucmp, max_file_size, split, running.as_ref())
                })
            }
            None => Vec::new(),
        };
        if pieces.len() > 1 {
            self.info_log.log(&describe_cuts(&pieces));
        }
        let pieces = if pieces.is_empty() {
            vec![flush_split::Piece {
                start: None,
                end: None,
                level: 0,
            }]
        } else {
            pieces
        };
        let numbers: Vec<u64> = pieces
            .iter()
            .map(|_| {
                let number = st.versions.new_file_number();
                st.pending_outputs.insert(number);
                number
            })
            .collect();
        let metas = MutexGuard::unlocked(st, || {
            let mut metas: Vec<FileMetaData> = Vec::with_capacity(pieces.len());
            let result = (|| -> Result<()> {
                for (piece, &number) in pieces.iter().zip(&numbers) {
                    let mut table_options = self.table_options.clone();
                    table_options.compression =
                        self.options.compression_for_level(piece.level, false);
                    let mut it = mem.iter();
                    let meta = build_table_range(
                        &self.dir,
                        &self.options,
                        &table_options,
                        &self.table_cache,
                        &mut it,
                        number,
                        piece.start.as_deref(),
                        piece.end.as_deref(),
                    )?;
                    metas.push(meta);
                }
                // The log the memtable came from is deleted once the tables
                // are installed: the blob records their pointers lead to
                // must be durable first.
                let blob_files: std::collections::BTreeSet<u64> = metas
                    .iter()
                    .flat_map(|m| m.blob_files.iter().copied())
                    .collect();
                self.sync_blob_files(&blob_files.into_iter().collect::<Vec<_>>())?;
                Ok(())
            })();
            match result {
                Ok(()) => Ok(metas),
                Err(e) => {
                    // The tables of the pieces written before the failure.
                    for m in metas.iter().filter(|m| m.file_size > 0) {
                        let _ = self
                            .options
                            .fs
                            .remove_file(&crate::filename::table_file_name(&self.dir, m.number));
                    }
                    Err(e)
                }
            }
        });
        // On success the numbers stay pending until the caller's version
        // edit is installed: the MANIFEST write runs unlocked, and until then
        // no version names the files.
        let metas: Vec<FileMetaData> = metas.inspect_err(|_: &Error| {
            for n in &numbers {
                st.pending_outputs.remove(n);
            }
        })?;
        let micros = start.elapsed().as_micros() as u64 / metas.len().max(1) as u64;
        for (piece, meta) in pieces.iter().zip(metas) {
            if meta.file_size == 0 {
                continue;
            }
            let level = piece.level;
            debug_assert!(base.is_none_or(|base| level
                <= base.pick_level_for_memtable_output(
                    meta.smallest.user_key(),
                    meta.largest.user_key(),
                    max_file_size,
                )));
            self.info_log.log(&format!(
                "level-{level} table #{}: {} bytes",
                meta.number, meta.file_size
            ));
            st.stats[level].micros += micros;
            st.stats[level].bytes_written += meta.file_size;
            edit.new_files.push((level as u32, meta));
        }
        Ok(numbers)
    }

    /// The blob files a compaction starting now collects: the oldest
    /// `blob_gc_age_cutoff` of those the current version's tables point
    /// into (by number, rounded down).
    fn blob_files_to_collect(&self, st: &State) -> std::collections::BTreeSet<u64> {
        let cutoff = self.options.blob_gc_age_cutoff;
        // (NaN and negative cutoffs collect nothing.)
        if cutoff.is_nan() || cutoff <= 0.0 {
            return Default::default();
        }
        let live: std::collections::BTreeSet<u64> = st
            .versions
            .current()
            .files
            .iter()
            .flatten()
            .flat_map(|f| f.blob_files.iter().copied())
            .collect();
        let n = (live.len() as f64 * cutoff.min(1.0)) as usize;
        live.into_iter().take(n).collect()
    }

    /// Makes blob files `numbers` durable: the replaced memtable's through
    /// its writer (then closed), any other (one a recovered log pointed
    /// into) by opening it to sync it.
    pub(crate) fn sync_blob_files(&self, numbers: &[u64]) -> Result<()> {
        for &number in numbers {
            let mut prev = self.prev_blob.lock();
            if let Some(w) = prev.as_mut().filter(|w| w.number() == number) {
                w.finish()
                    .map_err(|e| crate::db::core::blob_error(number, w.path(), e))?;
                *prev = None;
                continue;
            }
            drop(prev);
            if self
                .blob
                .lock()
                .as_ref()
                .is_some_and(|w| w.number() == number)
            {
                // Only a memtable's own flush points into its blob file, and
                // the memtable being flushed is never the current one.
                return Err(Error::Background(format!(
                    "a table points into blob file #{number} of the current memtable"
                )));
            }
            let path = blob_file_name(&self.dir, number);
            let mut f = self.options.fs.new_appendable_file(&path)?;
            f.sync()?;
            f.close()?;
        }
        Ok(())
    }

    fn do_compaction_work(&self, st: &mut MutexGuard<'_, State>, c: &mut Compaction) -> Result<()> {
        // Until its edit is installed, a flush made meanwhile keeps out of
        // the levels its outputs may cover.
        st.compacting = compaction_range(c, &*self.options.comparator);
        let result = self.run_compaction(st, c);
        st.compacting = None;
        result
    }

    fn run_compaction(&self, st: &mut MutexGuard<'_, State>, c: &mut Compaction) -> Result<()> {
        let start = Instant::now();
        self.info_log.log(&format!(
            "compacting {}@{} + {}@{} files",
            c.inputs[0].len(),
            c.level,
            c.inputs[1].len(),
            c.level + 1
        ));
        let smallest_snapshot = self.snapshots.oldest().unwrap_or(st.versions.last_sequence);
        c.gc_blob_files = self.blob_files_to_collect(st);
        let mut input = st.versions.make_input_iterator(c);
        let mut outputs: Vec<FileMetaData> = Vec::new();
        let mut current: Option<job::Output> = None;

        let result = MutexGuard::unlocked(st, || {
            job::merge(
                self,
                c,
                &mut *input,
                smallest_snapshot,
                &mut current,
                &mut outputs,
            )
        });
        job::abandon(self, current.take());
        for o in &outputs {
            c.edit.new_files.push(((c.level + 1) as u32, o.clone()));
        }
        // The copied values are durable before the tables that point to
        // them are installed (the edit's directory sync covers the file's
        // name), and the old copies go once nothing points to them.
        let gc = MutexGuard::unlocked(st, || job::finish_gc_blob(self, c, result.is_ok()));
        result?;
        gc?;
        if c.gc_values > 0 {
            st.blob_gc_values += c.gc_values;
            self.info_log.log(&format!(
                "compaction moved {} values out of old blob files",
                c.gc_values
            ));
        }

        // Sizes of input files come from the MANIFEST: add without overflow.
        let bytes_read = c.inputs.iter().flatten().map(|f| f.file_size);
        let bytes_read = bytes_read.fold(0u64, u64::saturating_add);
        let bytes_written: u64 = outputs.iter().map(|o| o.file_size).sum();
        let s = &mut st.stats[c.level + 1];
        s.micros += start.elapsed().as_micros() as u64;
        s.bytes_read = s.bytes_read.saturating_add(bytes_read);
        s.bytes_written += bytes_written;

        c.add_input_deletions();
        self.apply_edit(st, &mut c.edit)?;
        self.install_super_version(st);
        self.info_log.log(&format!(
            "compacted to level-{}: {} bytes; {}",
            c.level + 1,
            bytes_written,
            st.versions.level_summary()
        ));
        Ok(())
    }

    /// Deletes files that no version, pending output or live log needs.
    /// The directory is listed and the doomed files chosen under the state
    /// mutex; they are removed after it is released, so that writers do not
    /// wait for the file system. (A removed file's number is never reused, and
    /// only this thread deletes files while the database is open.)
    pub(crate) fn delete_obsolete_files(&self, st: &mut MutexGuard<'_, State>) {
        if st.bg_error.is_some() {
            // After an error we do not know whether a new version was committed.
            return;
        }
        let live = st.versions.live_files_all_versions();
        let mut live_blobs = st.versions.live_blob_files_all_versions();
        live_blobs.extend(st.mem_blob);
        live_blobs.extend(st.imm_blob);
        let Ok(names) = self.options.fs.children(&self.dir) else {
            return;
        };
        let mut doomed = Vec::new();
        for name in names {
            let Some((number, t)) = parse_file_name(&name) else {
                continue;
            };
            let keep = match t {
                FileType::Log => {
                    number >= st.versions.log_number || number == st.versions.prev_log_number
                }
                FileType::Descriptor => number >= st.versions.manifest_file_number,
                FileType::Table => live.contains(&number) || st.pending_outputs.contains(&number),
                FileType::Temp => st.pending_outputs.contains(&number),
                FileType::BlobFile => {
                    live_blobs.contains(&number) || st.pending_outputs.contains(&number)
                }
                FileType::Current | FileType::DbLock | FileType::InfoLog => true,
            };
            if !keep {
                doomed.push((name, number, t));
            }
        }
        if doomed.is_empty() {
            return;
        }
        MutexGuard::unlocked(st, || {
            for (name, number, t) in doomed {
                if t == FileType::Table {
                    self.table_cache.evict(number);
                }
                if t == FileType::BlobFile {
                    self.blob_cache.evict(number);
                }
                self.info_log.log(&format!("delete type={t:?} #{number}"));
                let _ = self.options.fs.remove_file(&self.dir.join(&name));
            }
        });
    }

    /// Flushes the memtable and compacts [begin, end] through every level.
    /// An empty range (`begin` after `end`) does nothing.
    pub(crate) fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        if let (Some(b), Some(e)) = (begin, end) {
            if self.icmp.user_comparator().compare(b, e) == Ordering::Greater {
                return Ok(());
            }
        }
        let max_level = {
            let current = self.super_version.load().current.clone();
            let mut max_level = 1;
            for level in 1..NUM_LEVELS {
                if current.overlap_in_level(level, begin, end) {
                    max_level = level;
                }
            }
            max_level
        };
        self.flush_memtable()?;
        for level in 0..max_level {
            self.run_manual_compaction(level, begin, end)?;
        }
        Ok(())
    }

    /// Records `edit` in the MANIFEST and installs the new version. The
    /// MANIFEST write and its fdatasync run without the state mutex, so
    /// writers and readers go on meanwhile; only this (the background)
    /// thread applies edits while the database is open, except an
    /// ingestion, which first waits for the thread to stop between steps.
    pub(crate) fn apply_edit(
        &self,
        st: &mut MutexGuard<'_, State>,
        edit: &mut VersionEdit,
    ) -> Result<()> {
        let mut pending = st.versions.begin_apply(edit)?;
        let written = MutexGuard::unlocked(st, || pending.write());
        st.versions.finish_apply(pending, written)
    }

    /// Switches to a new memtable and waits until the old one is a table.
    pub(crate) fn flush_memtable(&self) -> Result<()> {
        // Take the write path like a leader, so that the switch is ordered
        // with writes and no leader switches memtables at the same time.
        let mut st = self.state.lock();
        while st.writing {
            self.work_done_cv.wait(&mut st);
        }
        st.writing = true;
        let switched = if st.mem.is_empty() {
            Ok(())
        } else {
            // Creating the new log calls into the file system, which may
            // panic: the write path must be released all the same.
            panic::catch_unwind(AssertUnwindSafe(|| self.make_room_for_write(&mut st, true)))
                .unwrap_or_else(|payload| {
                    let e = Error::Background(format!(
                        "a memtable switch panicked: {}",
                        panic_message(&*payload)
                    ));
                    st.bg_error.get_or_insert_with(|| e.duplicate());
                    Err(e)
                })
        };
        st.writing = false;
        if let Some(next) = st.writers.front() {
            next.wake();
        }
        switched?;
        while st.imm.is_some() {
            if let Some(e) = &st.bg_error {
                return Err(e.duplicate());
            }
            self.bg_cv.notify_one();
            self.work_done_cv.wait(&mut st);
        }
        match &st.bg_error {
            Some(e) => Err(e.duplicate()),
            None => Ok(()),
        }
    }

    pub(crate) fn run_manual_compaction(
        &self,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        let mut st = self.state.lock();
        while st.manual.is_some() {
            self.work_done_cv.wait(&mut st);
        }
        st.manual = Some(ManualCompaction {
            level,
            begin: begin.map(|k| InternalKey::new(k, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK)),
            end: end.map(|k| InternalKey::new(k, 0, ValueType::Deletion)),
            done: false,
        });
        self.bg_cv.notify_one();
        loop {
            if let Some(e) = st.bg_error.as_ref().map(Error::duplicate) {
                st.manual = None;
                return Err(e);
            }
            if st.manual.as_ref().is_none_or(|m| m.done) {
                break;
            }
            if self.shutting_down.load(AtomicOrdering::Acquire) {
                break;
            }
            self.work_done_cv.wait(&mut st);
        }
        st.manual = None;
        self.work_done_cv.notify_all();
        Ok(())
    }
}

/// The level and user-key range of compaction `c`'s inputs (both levels).
fn compaction_range(
    c: &Compaction,
    ucmp: &dyn crate::comparator::Comparator,
) -> Option<flush_split::Running> {
    let mut files = c.inputs.iter().flatten();
    let first = files.next()?;
    let mut smallest = first.smallest.user_key();
    let mut largest = first.largest.user_key();
    for f in files {
        if ucmp.compare(f.smallest.user_key(), smallest) == Ordering::Less {
            smallest = f.smallest.user_key();
        }
        if ucmp.compare(f.largest.user_key(), largest) == Ordering::Greater {
            largest = f.largest.user_key();
        }
    }
    Some(flush_split::Running {
        level: c.level,
        smallest: smallest.to_vec(),
        largest: largest.to_vec(),
    })
}

/// The info log's line for a flush cut into `pieces`: where each table after
/// the first starts (at most 32 bytes of each key).
fn describe_cuts(pieces: &[flush_split::Piece]) -> String {
    let starts: Vec<String> = pieces
        .iter()
        .filter_map(|p| p.start.as_deref())
        .map(|k| {
            let shown = String::from_utf8_lossy(&k[..k.len().min(32)]).into_owned();
            let more = if k.len() > 32 { "..." } else { "" };
            format!("{shown:?}{more}")
        })
        .collect();
    format!(
        "flush cut into {} tables where the keys jump, at {}",
        pieces.len(),
        starts.join(", ")
    )
}
