//! Recovery: what `Db::open` does to bring back the state the last run left.
//! The MANIFEST gives the files of each level (`VersionSet::recover`), then
//! every log it does not cover is replayed into a memtable, record by record
//! (`apply_log_record`), flushing to level-0 tables when the memtable fills;
//! the last log may be reused for appending when it ends cleanly.
//!
//! A logged blob pointer (value separation, `blob/`) is checked before its
//! record is applied: the blob record must exist, hold the key and match its
//! CRC. The blob file is synced before the log only by a synchronous write,
//! so a power cut may keep a log record and lose the value it points to;
//! replay then ends at that record, exactly as at a torn log tail (later
//! records, and later logs, which no longer continue the sequence, are
//! dropped): a prefix of the writes, never a wrong value. A log whose
//! records point into blob files is not reused: the memtable's blob file
//! is always one the write path made in this run.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::batch::{check_update, WriteBatch};
use crate::db::core::{insert_into, new_memtable, DbInner, State};
use crate::error::{Error, Result};
use crate::filename::{log_file_name, parse_file_name, FileType};
use crate::keys::{SequenceNumber, ValueType, MAX_SEQUENCE_NUMBER};
use crate::log;
use crate::memtable::MemTable;
use crate::version::edit::VersionEdit;
use crate::version::set::MAX_FILE_NUMBER;

/// What replaying one log found.
#[derive(Default)]
struct Replay {
    /// The memtable outgrew the write buffer and was flushed at least once.
    flushed: bool,
    /// The log's length, if it ends exactly after its last record and
    /// nothing in it was skipped: only then is appending to it safe.
    clean_end: Option<u64>,
    /// The log does not continue the history the logs before it ended with
    /// (see [`DbInner::replay_log`]): neither it nor any later log was
    /// replayed.
    gap: bool,
    /// A replayed record held a blob pointer.
    blobs: bool,
}

impl DbInner {
    /// Replays the MANIFEST and the logs it does not cover, then starts a new
    /// log, or with `reuse_logs` keeps appending to the last one (and to the
    /// MANIFEST) when they are small and end cleanly.
    pub(crate) fn recover(self: &Arc<Self>) -> Result<()> {
        let mut st = self.state.lock();
        let new_manifest = st.versions.recover()?;
        let fs = &self.options.fs;
        let min_log = st.versions.log_number;
        let prev_log = st.versions.prev_log_number;
        let mut expected = st.versions.live_files();
        let mut logs = Vec::new();
        // The highest number of a table or temporary file found: the previous
        // run may have been writing it without recording it in the MANIFEST.
        let mut highest_table = None;
        for name in fs.children(&self.dir)? {
            if let Some((number, t)) = parse_file_name(&name) {
                expected.remove(&number);
                // (Numbers beyond any we hand out cannot collide; a stray one
                // must not exhaust the numbers.)
                // Blob files too: the logs may point into one made after the
                // MANIFEST's last edit, which a new file must not replace.
                if matches!(t, FileType::Table | FileType::Temp | FileType::BlobFile)
                    && number <= MAX_FILE_NUMBER
                {
                    highest_table = highest_table.max(Some(number));
                }
                if t == FileType::Log && (number >= min_log || number == prev_log) {
                    if number > MAX_FILE_NUMBER {
                        return Err(Error::corruption(
                            log_file_name(&self.dir, number),
                            None,
                            "log file number too large",
                        ));
                    }
                    logs.push(number);
                }
            }
        }
        if let Some(missing) = expected.iter().next() {
            return Err(Error::corruption(
                crate::filename::table_file_name(&self.dir, *missing),
                None,
                format!("{} missing files", expected.len()),
            ));
        }
        logs.sort_unstable();
        // The previous run may have made these logs without recording their
        // numbers in the MANIFEST: none may be handed out again.
        for &number in &logs {
            st.versions.mark_file_number_used(number);
        }
        // Nor may the numbers of tables it left behind: they are deleted as
        // obsolete once open, while the background thread may already be
        // writing new tables, which must not have their names.
        if let Some(number) = highest_table {
            st.versions.mark_file_number_used(number);
        }
        if st.versions.next_file_number == u64::MAX {
            return Err(Error::corruption(
                &self.dir,
                None,
                "file numbers exhausted: a file or MANIFEST entry numbered 2^64 - 1",
            ));
        }
        let mut edit = VersionEdit::default();
        // The last sequence number the replayed logs used.
        let mut replayed = 0;
        let mut reusable = None;
        for (i, &number) in logs.iter().enumerate() {
            let last = i + 1 == logs.len();
            let may_reuse = last && self.options.reuse_logs && number >= min_log;
            if may_reuse && !st.mem.is_empty() {
                // The MANIFEST will name only the reused log: what the older
                // logs held goes to a table first.
                self.flush_recovered(&mut st, &mut edit)?;
            }
            let replay = self.replay_log(&mut st, number, &mut edit, &mut replayed)?;
            if replay.gap {
                break;
            }
            if may_reuse && !replay.flushed && !replay.blobs {
                reusable = replay.clean_end.map(|len| (number, len));
            }
        }
        if st.versions.last_sequence < replayed {
            st.versions.last_sequence = replayed;
        }
        let reused = match reusable {
            Some((number, len)) => self.reuse_log(number, len),
            None => None,
        };
        match reused {
            Some((number, writer)) => {
                // The memtable keeps what the log holds.
                *self.log.lock() = Some(writer);
                st.logfile_number = number;
            }
            None => {
                // Flush what the logs held so that the old logs can go.
                self.flush_recovered(&mut st, &mut edit)?;
                let new_log = st.versions.new_file_number();
                let file = fs.new_log_file(&log_file_name(&self.dir, new_log))?;
                *self.log.lock() = Some(log::Writer::new(file));
                st.logfile_number = new_log;
            }
        }
        edit.log_number = Some(st.logfile_number);
        edit.prev_log_number = Some(0);
        if self.options.blob_threshold.is_some() && !st.versions.uses_blobs {
            // From now on LevelDB refuses the database (see `version/edit.rs`).
            edit.uses_blobs = true;
        }
        let changed = edit.uses_blobs
            || !edit.new_files.is_empty()
            || st.logfile_number != st.versions.log_number
            || st.versions.prev_log_number != 0;
        if new_manifest {
            st.versions.start_new_manifest();
            st.versions.log_and_apply(&mut edit)?;
        } else if changed {
            // Appended to the reused MANIFEST.
            st.versions.log_and_apply(&mut edit)?;
        }
        // Makes the new (or reused) log's entry durable before any write to
        // it is acknowledged, along with everything else recovery created.
        fs.sync_dir(&self.dir)?;
        *self.log_dir_synced.lock() = st.logfile_number;
        // The tables recovery wrote are in the installed version now.
        st.pending_outputs.clear();
        st.last_allocated = st.versions.last_sequence;
        self.visible_sequence
            .store(st.versions.last_sequence, Ordering::Release);
        self.install_super_version(&st);
        self.info_log
            .log(&format!("recovered; {}", st.versions.level_summary()));
        Ok(())
    }

    /// Writes the memtable filled by log replay (if not empty) to a level-0
    /// table recorded in `edit`, and starts an empty one.
    fn flush_recovered(
        &self,
        st: &mut parking_lot::MutexGuard<'_, State>,
        edit: &mut VersionEdit,
    ) -> Result<()> {
        if st.mem.is_empty() {
            return Ok(());
        }
        let mem = std::mem::replace(
            &mut st.mem,
            Arc::new(new_memtable(&self.icmp, &self.options)),
        );
        self.write_level0_table(st, &mem, edit, None).map(|_| ())
    }

    /// Opens log `number`, which ends cleanly after `len` bytes, for
    /// appending. `None` (a new log is made instead) if it cannot be opened.
    fn reuse_log(&self, number: u64, len: u64) -> Option<(u64, log::Writer)> {
        let path = log_file_name(&self.dir, number);
        match self.options.fs.new_appendable_file(&path) {
            Ok(file) => {
                self.info_log
                    .log(&format!("reusing log {} ({len} bytes)", path.display()));
                Some((number, log::Writer::with_offset(file, len)))
            }
            Err(e) => {
                self.info_log
                    .log(&format!("not reusing log {}: {e}", path.display()));
                None
            }
        }
    }

    /// Replays log `number` into the memtable, flushing it to level-0 tables
    /// (recorded in `edit`) whenever it outgrows the write buffer.
    ///
    /// Sequence numbers run on without a hole from one log into the next, so
    /// a log whose first batch does not start right after the last sequence
    /// `replayed` from the logs before it shows that their tail was lost: it
    /// was never synced (a synchronous write syncs the earlier log first) and
    /// a power cut dropped it while keeping some of this one, which the
    /// kernel had written back. Replaying this log would keep later writes
    /// without earlier ones, a history that never was; it and every later
    /// log are dropped instead (`gap`), as the unsynced writes they hold may
    /// be.
    fn replay_log(
        &self,
        st: &mut parking_lot::MutexGuard<'_, State>,
        number: u64,
        edit: &mut VersionEdit,
        replayed: &mut SequenceNumber,
    ) -> Result<Replay> {
        let path = log_file_name(&self.dir, number);
        let file = self.options.fs.new_sequential_file(&path)?;
        let file_len = self.options.fs.file_size(&path).ok();
        let paranoid = self.options.paranoid_checks;
        let first_error: Arc<Mutex<Option<Error>>> = Arc::default();
        let sink = first_error.clone();
        let reporter: log::Reporter = Box::new(move |_bytes, err| {
            let mut slot = sink.lock();
            if slot.is_none() {
                *slot = Some(err.duplicate());
            }
        });
        let mut reader = log::Reader::new(file, path.clone(), Some(reporter), true, 0);
        let mut scratch = Vec::new();
        let mut outcome = Replay::default();
        // Where the last record read ends, and whether any was skipped.
        let mut end_of_records = 0;
        let mut skipped = false;
        let mut first_in_log = true;
        loop {
            let record = match reader.read_record(&mut scratch) {
                Ok(Some(r)) => r.to_vec(),
                Ok(None) => break,
                Err(e) => return Err(e),
            };
            let offset = reader.last_record_offset();
            if first_in_log && *replayed > 0 {
                if let Some(first) = batch_start(&record) {
                    if first > replayed.saturating_add(1) {
                        self.info_log.log(&format!(
                            "{}: starts at sequence {first}, but the logs before it end at {}: \
                             their unsynced tail was lost; dropping this log and later ones",
                            path.display(),
                            *replayed
                        ));
                        outcome.gap = true;
                        return Ok(outcome);
                    }
                }
            }
            first_in_log = false;
            let (record, blobs) = self.check_blob_pointers(record, &mut outcome.blobs);
            if let Err(e) = blobs {
                self.info_log.log(&format!(
                    "{}: the record at offset {offset} points to a value that is not in its \
                     blob file ({e}); replay of the log ends there",
                    path.display()
                ));
                skipped = true;
                break;
            }
            end_of_records = log::writer::record_end(offset, record.len());
            let mem = st.mem.clone();
            if let Err(e) = apply_log_record(&mem, record, replayed) {
                let e = e.in_file(&path, Some(offset));
                if paranoid {
                    return Err(e);
                }
                self.info_log.log(&e.to_string());
                skipped = true;
                continue;
            }
            if mem.approximate_memory_usage() > self.options.write_buffer_size {
                let full = std::mem::replace(
                    &mut st.mem,
                    Arc::new(new_memtable(&self.icmp, &self.options)),
                );
                self.write_level0_table(st, &full, edit, None)?;
                outcome.flushed = true;
            }
        }
        if let Some(e) = first_error.lock().take() {
            self.info_log
                .log(&format!("{}: dropped bytes: {e}", path.display()));
            if paranoid {
                return Err(e);
            }
            skipped = true;
        }
        if !skipped && file_len == Some(end_of_records) {
            outcome.clean_end = file_len;
        }
        Ok(outcome)
    }
}

impl DbInner {
    /// Reads the value of every blob pointer of the logged batch `record`
    /// (given back), checking that it is there whole; sets `seen` if there
    /// was one. A malformed batch is left for `apply_log_record` to report.
    fn check_blob_pointers(&self, record: Vec<u8>, seen: &mut bool) -> (Vec<u8>, Result<()>) {
        if record.len() < crate::batch::HEADER_SIZE {
            return (record, Ok(()));
        }
        let batch = match WriteBatch::from_contents(record) {
            Ok(b) => b,
            Err(e) => return (Vec::new(), Err(e)),
        };
        let mut failure = None;
        let mut value = Vec::new();
        let _ = batch.for_each(|t, key, pointer| {
            if t != ValueType::BlobIndex {
                return Ok(());
            }
            *seen = true;
            if let Err(e) = self.blob_cache.read_value(key, pointer, &mut value) {
                failure = Some(e);
                return Err(Error::bad_data("stop"));
            }
            Ok(())
        });
        (batch.into_contents(), failure.map_or(Ok(()), Err))
    }
}

/// Decodes a record of a write-ahead log as a write batch and adds its
/// updates to `mem`, all or none of them: the one check of a logged batch,
/// used by recovery and by repair.
///
/// `replayed` is the last sequence number applied by earlier records of the
/// logs being replayed (0 before the first); the batch must come after it,
/// as every batch the write path logs does. A batch that fails a check is
/// corruption and changes nothing: a malformed record, a count that does not
/// match the records, an update the write path would have refused for its
/// size (see [`logged_update_fits`]: the memtable could not hold it, and
/// inserting it would panic), sequence numbers past [`MAX_SEQUENCE_NUMBER`], or sequence
/// numbers already used (which would add an internal key twice). The caller
/// counts such a record as skipped (a log with skipped records is not
/// reused). On success `replayed` becomes the batch's last sequence number
/// (an empty batch leaves it unchanged).
pub(crate) fn apply_log_record(
    mem: &MemTable,
    record: Vec<u8>,
    replayed: &mut SequenceNumber,
) -> Result<()> {
    if record.len() < 12 {
        return Err(Error::bad_data("log record too small"));
    }
    let batch = WriteBatch::from_contents(record)?;
    // Check every record before applying any, so a damaged batch is dropped whole.
    batch.for_each(|_, key, value| logged_update_fits(key.len(), value.len()))?;
    let count = u64::from(batch.count());
    if count == 0 {
        return Ok(());
    }
    let first = batch.sequence();
    let last = first
        .checked_add(count - 1)
        .filter(|&last| last <= MAX_SEQUENCE_NUMBER)
        .ok_or_else(|| {
            Error::bad_data(format!(
                "write batch of {count} updates at sequence {first} runs past the largest sequence number"
            ))
        })?;
    if first <= *replayed {
        return Err(Error::bad_data(format!(
            "write batch at sequence {first} reuses sequence numbers up to {} of an earlier batch",
            *replayed
        )));
    }
    insert_into(mem, &batch)?;
    *replayed = last;
    Ok(())
}

/// The first sequence number of the write batch `record` holds, if it
/// holds any updates (a record too short to be a batch is left to
/// [`apply_log_record`] to report).
fn batch_start(record: &[u8]) -> Option<SequenceNumber> {
    let seq = u64::from_le_bytes(record.get(..8)?.try_into().ok()?);
    let count = u32::from_le_bytes(record.get(8..12)?.try_into().ok()?);
    (count > 0).then_some(seq)
}

/// Corruption if a logged update with a key of `key_len` and a value of
/// `value_len` bytes is one the write path refuses (an older writer, or
/// damage, may have logged it): the memtable cannot hold it.
fn logged_update_fits(key_len: usize, value_len: usize) -> Result<()> {
    check_update(key_len, value_len).map_err(|e| {
        let reason = match e {
            Error::InvalidArgument(reason) => reason,
            other => other.to_string(),
        };
        Error::bad_data(format!("an update in a log record is too large: {reason}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::BytewiseComparator;
    use crate::keys::InternalKeyComparator;

    fn mem() -> MemTable {
        MemTable::new(InternalKeyComparator::new(Arc::new(BytewiseComparator)))
    }

    fn record(seq: SequenceNumber, keys: &[&[u8]]) -> Vec<u8> {
        let mut b = WriteBatch::new();
        for k in keys {
            b.put(k, b"v").unwrap();
        }
        b.set_sequence(seq);
        b.contents().to_vec()
    }

    #[test]
    fn logged_updates_too_large_for_the_memtable_are_corruption() {
        // Once such a record, logged by a writer that let it through,
        // panicked in the memtable at every recovery.
        for (k, v) in [
            (1usize << 31, 1usize << 31),
            (u32::MAX as usize, 0),
            (0, u32::MAX as usize),
        ] {
            let err = logged_update_fits(k, v).unwrap_err();
            assert!(
                err.is_corruption() && err.to_string().contains("too large"),
                "{err}"
            );
        }
        logged_update_fits(1 << 20, 1 << 30).unwrap();
    }

    #[test]
    fn log_records_apply_in_sequence_order() {
        let m = mem();
        let mut replayed = 0;
        apply_log_record(&m, record(1, &[b"a", b"b"]), &mut replayed).unwrap();
        assert_eq!(replayed, 2);
        apply_log_record(&m, record(3, &[b"a"]), &mut replayed).unwrap();
        assert_eq!(replayed, 3);
        assert_eq!(m.len(), 3);
    }

    #[test]
    fn empty_log_record_changes_nothing_even_at_sequence_zero() {
        // Once `sequence + count - 1` underflowed here.
        let m = mem();
        let mut replayed = 0;
        apply_log_record(&m, record(0, &[]), &mut replayed).unwrap();
        assert_eq!(replayed, 0);
        assert!(m.is_empty());
    }

    #[test]
    fn log_record_past_the_largest_sequence_number_is_corruption() {
        // Once an overflow (u64::MAX) or keys whose sequence does not fit the
        // 56 bits of their trailer.
        let m = mem();
        let mut replayed = 0;
        for seq in [u64::MAX, MAX_SEQUENCE_NUMBER + 1, MAX_SEQUENCE_NUMBER] {
            let err = apply_log_record(&m, record(seq, &[b"a", b"b"]), &mut replayed).unwrap_err();
            assert!(err.is_corruption(), "{err}");
        }
        assert!(m.is_empty());
        apply_log_record(&m, record(MAX_SEQUENCE_NUMBER, &[b"a"]), &mut replayed).unwrap();
        assert_eq!(replayed, MAX_SEQUENCE_NUMBER);
    }

    #[test]
    fn log_record_reusing_sequence_numbers_is_corruption() {
        // Once the same internal key went into the memtable twice.
        let m = mem();
        let mut replayed = 0;
        apply_log_record(&m, record(5, &[b"a", b"b"]), &mut replayed).unwrap();
        for seq in [5, 6, 1] {
            let err = apply_log_record(&m, record(seq, &[b"a"]), &mut replayed).unwrap_err();
            assert!(err.to_string().contains("reuses sequence numbers"), "{err}");
        }
        assert_eq!((m.len(), replayed), (2, 6));
    }

    #[test]
    fn damaged_log_record_adds_none_of_its_updates() {
        let m = mem();
        let mut replayed = 0;
        let mut r = record(1, &[b"a", b"b"]);
        r[8] = 1; // count 1, but two updates follow
        assert!(apply_log_record(&m, r, &mut replayed)
            .unwrap_err()
            .is_corruption());
        let mut r = record(1, &[b"a", b"b"]);
        r.truncate(r.len() - 1);
        assert!(apply_log_record(&m, r, &mut replayed)
            .unwrap_err()
            .is_corruption());
        assert!(m.is_empty());
        assert_eq!(replayed, 0);
    }
}

#[cfg(test)]
mod open_tests {
    use std::path::Path;

    use super::*;
    use crate::db::core::Db;
    use crate::env::{FileSystem, MemFs};
    use crate::options::Options;

    #[test]
    fn log_file_with_a_number_too_large_is_corruption() {
        // Once `number + 1` overflowed when the log's number was marked used.
        let fs = MemFs::new();
        let dir = Path::new("/db");
        let options = Options {
            fs: Arc::new(fs.clone()),
            create_if_missing: true,
            ..Options::default()
        };
        Db::open(dir, options.clone())
            .unwrap()
            .put(b"k", b"v")
            .unwrap();
        let huge = log_file_name(dir, u64::MAX);
        crate::env::write_file_sync(&fs, &huge, b"").unwrap();
        match Db::open(dir, options.clone()) {
            Err(e) => assert!(
                e.is_corruption() && e.to_string().contains("too large"),
                "{e}"
            ),
            Ok(_) => panic!("opened a database with log {}", huge.display()),
        }
        fs.remove_file(&huge).unwrap();
        let db = Db::open(dir, options).unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    }
}
