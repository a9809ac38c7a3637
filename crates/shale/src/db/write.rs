//! The write path: writers queue up, the one at the front becomes the leader,
//! takes the batches queued behind it into one group, writes the group to the
//! log with a single append (and a single fdatasync when any member asked for
//! sync), has it inserted into the memtable, publishes the new sequence
//! number and wakes the members.
//!
//! Who inserts: by default the leader inserts every batch of its group and
//! owns the write path until the group is published. With
//! `Options::concurrent_memtable_writes`, once the group is in the log each
//! member inserts its own batch (the leader inserts its own) while the
//! leader waits for them on a latch; and a leader that sees writers queued
//! hands the write path on right after its log append, so that the next
//! group is logged, and inserts, while this one inserts.
//!
//! Invariants:
//! - only the owner of the write path (`State::writing`) touches the log,
//!   switches memtables and gives out sequence numbers
//!   (`State::last_allocated`, under the state mutex), so the log holds the
//!   groups in sequence order;
//! - a group is published (`versions.last_sequence`, then
//!   `visible_sequence`) only once all its updates are in the memtable and
//!   every group before it is published, so a reader never sees part of a
//!   batch, nor a write without the writes before it;
//! - a memtable is replaced only when no group is in flight
//!   (`last_allocated == versions.last_sequence`), so no insert reaches a
//!   memtable once it is immutable;
//! - a failure after a group was given sequence numbers is sticky
//!   (`bg_error`): the numbers are never published, and the groups after it
//!   fail too instead of waiting for it.
//!
//! Value separation (`Options::blob_threshold`): before the group is logged,
//! the leader appends each value of at least the threshold to the
//! memtable's blob file (created on the first such value, numbered from the
//! file counter) and logs and inserts a copy of the group's record in which
//! those values are blob pointers (`ValueType::BlobIndex`): a large value is
//! written once, read from the caller's batch. The blob file is flushed
//! before the log append (so readers find what the memtable points to) and,
//! for a group with `sync`, synced before the log is. Its bytes count
//! toward the memtable's size. With separation on, the leader inserts the
//! whole group itself even with concurrent memtable writes: the members'
//! batches still hold the large values, the rewritten record does not.
//!
//! A queued writer (`Writer`, `writer_state` in `db/core.rs`) waits on its
//! own signal: `WAITING`, then `LEAD` whenever the write path is released
//! while it is at the queue's front (it leads, or goes back to `WAITING` if
//! the path was taken again first), or, once taken into a group, `INSERT`
//! (concurrent memtable writes) and `DONE`.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard};

use crate::batch::{check_update, WriteBatch};
use crate::blob::writer::BlobWriter;
use crate::db::core::{
    blob_error, insert_into, panic_message, writer_state, Db, DbInner, GroupInserts, PublishWaiter,
    StallCause, State, SyncGroup, Writer,
};
use crate::db::handoff::{Latch, Signal};
use crate::error::{Error, Result};
use crate::filename::log_file_name;
use crate::keys::{SequenceNumber, ValueType, MAX_SEQUENCE_NUMBER};
use crate::log;
use crate::memtable::MemTable;
use crate::options::WriteOptions;

/// Upper bound of a write group's size in bytes.
const MAX_GROUP_BYTES: usize = 1 << 20;

/// The longest a synchronous leader waits for the writers of the last
/// synchronous group to come back (see `DbInner::gather_sync_group`).
#[cfg(not(miri))]
const MAX_SYNC_GATHER: Duration = Duration::from_micros(200);
#[cfg(miri)]
const MAX_SYNC_GATHER: Duration = Duration::ZERO;

impl Db {
    /// Sets `key` to `value`. A key longer than
    /// [`MAX_KEY_LEN`](crate::batch::MAX_KEY_LEN), a value longer than
    /// [`MAX_VALUE_LEN`](crate::batch::MAX_VALUE_LEN), or a pair
    /// too long together for one memtable entry (`u32::MAX` bytes with
    /// their lengths and tag) is refused with
    /// [`Error::InvalidArgument`] before anything is written.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"apple", b"red")?;
    /// db.put(b"apple", b"green")?; // replaces the value
    /// assert_eq!(db.get(b"apple")?.as_deref(), Some(&b"green"[..]));
    /// # Ok(()) }
    /// ```
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.put_with(&WriteOptions::default(), key, value)
    }

    /// Sets `key` to `value` with explicit write options: with
    /// `sync: true` the call returns once the write (and every write before
    /// it) is durable on disk.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put_with(&shale::WriteOptions { sync: true, ..Default::default() }, b"balance", b"100")?;
    /// # Ok(()) }
    /// ```
    pub fn put_with(&self, opts: &WriteOptions, key: &[u8], value: &[u8]) -> Result<()> {
        // Checked before the batch's memory is reserved for them.
        check_update(key.len(), value.len())?;
        let mut batch = WriteBatch::with_capacity(key.len() + value.len() + 16);
        batch.put(key, value)?;
        self.inner.write_batch(opts, batch)
    }

    /// Removes `key` (not an error if it is absent).
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.put(b"k", b"v")?;
    /// db.delete(b"k")?;
    /// db.delete(b"never-written")?;
    /// assert_eq!(db.get(b"k")?, None);
    /// # Ok(()) }
    /// ```
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        self.delete_with(&WriteOptions::default(), key)
    }

    /// Removes `key` with explicit write options.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// db.delete_with(&shale::WriteOptions { sync: true, ..Default::default() }, b"k")?;
    /// # Ok(()) }
    /// ```
    pub fn delete_with(&self, opts: &WriteOptions, key: &[u8]) -> Result<()> {
        check_update(key.len(), 0)?;
        let mut batch = WriteBatch::with_capacity(key.len() + 8);
        batch.delete(key)?;
        self.inner.write_batch(opts, batch)
    }

    /// Applies every update of `batch` atomically.
    ///
    /// ```
    /// # fn main() -> shale::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = shale::Db::open(dir.path(), shale::Options { create_if_missing: true, ..Default::default() })?;
    /// let mut batch = shale::WriteBatch::new();
    /// batch.put(b"a", b"1")?;
    /// batch.delete(b"b")?;
    /// db.write(&shale::WriteOptions { sync: true, ..Default::default() }, &batch)?;
    /// # Ok(()) }
    /// ```
    pub fn write(&self, opts: &WriteOptions, batch: &WriteBatch) -> Result<()> {
        self.inner.write_batch(opts, batch.clone())
    }
}

impl DbInner {
    /// Writes `batch` (an empty batch only waits for earlier writes and room).
    ///
    /// A writer that finds no leader and no queue leads at once, without
    /// allocating; otherwise it queues and either finds its batch written by
    /// a leader's group or becomes the leader when it reaches the front.
    pub(crate) fn write_batch(&self, opts: &WriteOptions, batch: WriteBatch) -> Result<()> {
        let mut st = self.state.lock();
        if !st.writing && st.writers.is_empty() {
            if opts.no_slowdown {
                self.check_room_now(&st)?;
            }
            st.writing = true;
            return self.lead(st, batch, opts.sync, !opts.no_slowdown);
        }
        if opts.no_slowdown {
            return Err(Error::Incomplete(format!(
                "{}: another write is under way",
                self.dir.display()
            )));
        }
        let w = Arc::new(Writer::new(batch, opts.sync));
        st.writers.push_back(w.clone());
        self.queued_writers
            .store(st.writers.len(), Ordering::Relaxed);
        drop(st);
        loop {
            let waited = if w.sync {
                w.signal.wait_while_sync(writer_state::WAITING)
            } else {
                w.signal.wait_while(writer_state::WAITING)
            };
            match waited {
                writer_state::DONE => return take_outcome(&w),
                writer_state::INSERT => {
                    self.insert_as_member(&w);
                    // The leader hands out the outcome once the group is
                    // published (or has failed).
                    w.signal.wait_while(writer_state::INSERT);
                    return take_outcome(&w);
                }
                _ => {
                    let mut st = self.state.lock();
                    if !st.writing && st.writers.front().is_some_and(|f| Arc::ptr_eq(f, &w)) {
                        st.writers.pop_front();
                        self.queued_writers
                            .store(st.writers.len(), Ordering::Relaxed);
                        st.writing = true;
                        let batch = w.batch.lock().take().unwrap_or_default();
                        return self.lead(st, batch, w.sync, true);
                    }
                    // The path was taken first (by a forced memtable switch):
                    // whoever releases it wakes the writer at the front again.
                    w.signal.reset(writer_state::LEAD, writer_state::WAITING);
                }
            }
        }
    }

    /// Runs one write group as its leader: makes room, takes the writes
    /// queued behind (see [`take_group`]), logs and inserts them without the
    /// state mutex, then publishes the sequence and wakes the members and the
    /// next leader. The caller has set `st.writing`.
    ///
    /// A panic while leading (from a user comparator inserting into the
    /// memtable, say) fails the group instead of unwinding through it: the
    /// write path is released and every member is woken with the error.
    /// The group may be partly in the log and the memtable, under sequence
    /// numbers never published, so the error is also made sticky: later
    /// writes fail, reads go on.
    fn lead<'a>(
        &'a self,
        st: MutexGuard<'a, State>,
        batch: WriteBatch,
        sync: bool,
        may_gather: bool,
    ) -> Result<()> {
        let mut members = Vec::new();
        let mut owns_path = true;
        let led = panic::catch_unwind(AssertUnwindSafe(|| {
            self.lead_group(st, batch, sync, may_gather, &mut members, &mut owns_path)
        }));
        match led {
            Ok((st, result)) => self.finish_group(st, members, owns_path, result),
            Err(payload) => {
                let e = write_panicked(&*payload);
                let mut st = self.state.lock();
                st.bg_error.get_or_insert_with(|| e.duplicate());
                self.finish_group(st, members, owns_path, Err(e))
            }
        }
    }

    /// The body of [`lead`](Self::lead): returns the state lock and the
    /// group's outcome; the writers taken into the group are in `members`,
    /// and `owns_path` is cleared if the write path was handed on early.
    fn lead_group<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        batch: WriteBatch,
        sync: bool,
        may_gather: bool,
        members: &mut Vec<Arc<Writer>>,
        owns_path: &mut bool,
    ) -> (MutexGuard<'a, State>, Result<()>) {
        // Before the checks of `make_room_for_write`, which must hold until
        // the group takes its sequence numbers: the gathering unlocks.
        if sync && may_gather {
            self.gather_sync_group(&mut st);
        }
        if let Err(e) = self.make_room_for_write(&mut st, false) {
            return (st, Err(e));
        }
        let (count, size) = take_group(&mut st, &batch, sync, members);
        if !members.is_empty() {
            self.queued_writers
                .store(st.writers.len(), Ordering::Relaxed);
        }
        let last = st.last_allocated;
        let Some(end) = last
            .checked_add(count)
            .filter(|&end| end <= MAX_SEQUENCE_NUMBER)
        else {
            // Only a database recovered from files that claim the last
            // sequence numbers gets here; its writes are refused, as a
            // wrapped sequence number would reorder history.
            let e = Error::InvalidArgument(format!(
                "{}: sequence numbers exhausted (last used {last}, {count} more asked)",
                self.dir.display()
            ));
            return (st, Err(e));
        };
        // From here on the group holds sequence numbers `first..=end`: a
        // failure is sticky (see the module documentation).
        st.last_allocated = end;
        let first = last + 1;
        let mem = st.mem.clone();
        // Stable while this leader owns the write path: only the owner
        // switches logs.
        let log_number = st.logfile_number;
        drop(st);

        let concurrent =
            self.options.concurrent_memtable_writes && self.options.blob_threshold.is_none();
        let mut record = batch;
        let mut own = None;
        if !members.is_empty() {
            match add_members(&mut record, members, first, size, concurrent) {
                Ok(o) => own = o,
                Err(e) => return self.fail_group(e),
            }
        }
        record.set_sequence(first);
        let mut synced_dir_for = log_number;
        if let Some(threshold) = self.options.blob_threshold {
            match self.separate_values(&record, threshold, sync) {
                Ok((small, blob_number)) => {
                    if let Some(small) = small {
                        record = small;
                    }
                    synced_dir_for = synced_dir_for.max(blob_number.unwrap_or(0));
                }
                Err(e) => {
                    // The blob file's length is unknown now: as for the log,
                    // later writes fail too, naming this cause.
                    let mut st = self.state.lock();
                    st.bg_error.get_or_insert_with(|| e.duplicate());
                    return (st, Err(e));
                }
            }
        }
        let log_start = sync.then(Instant::now);
        let logged = self.write_log(&record, sync, synced_dir_for, log_number);
        let synced = log_start.map(|start| (Instant::now(), start.elapsed()));
        if let Err(e) = logged {
            // A failed append or sync leaves the log in an unknown state (a
            // torn record, data the kernel may have dropped): later writes
            // must fail too, naming this cause.
            let mut st = self.state.lock();
            st.bg_error.get_or_insert_with(|| {
                Error::Background(format!("writing log #{log_number} failed: {e}"))
            });
            return (st, Err(e));
        }
        if concurrent && self.queued_writers.load(Ordering::Relaxed) > 0 {
            // The next group may be logged while this one inserts; it
            // publishes after this one.
            self.release_write_path(&mut self.state.lock());
            *owns_path = false;
        }
        let inserted = match &own {
            Some(own) => self.insert_group(own, members, &mem),
            None => insert_into(&mem, &record),
        };
        if let Err(e) = inserted {
            return self.fail_group(e);
        }
        let mut st = self.state.lock();
        if let Some((ended, took)) = synced {
            // Only synchronous writers count: a lone one among writers
            // that do not sync does not wait for them.
            st.last_sync_group = Some(SyncGroup {
                writers: 1 + members.iter().filter(|m| m.sync).count(),
                ended,
                took,
            });
        }
        let published = self.publish(&mut st, first, end);
        (st, published)
    }

    /// Before a synchronous leader takes its group: lets the writers of the
    /// last synchronous group catch up and join it.
    ///
    /// Threads that each write synchronously in a loop come back with their
    /// next write a moment after their group's sync ends. By then the next
    /// leader (often the last one, back first) may have taken its group and
    /// started the next sync, which they then wait out whole before a sync
    /// of their own: with two such threads, most groups would hold one
    /// write. So a synchronous leader that, right after the last synchronous
    /// group, finds fewer writers queued than that group had synchronous
    /// writers waits for them a little: at most half of that group's log
    /// append and sync, and never more than [`MAX_SYNC_GATHER`] (checked
    /// between yields of the processor). A synchronous writer alone never
    /// waits (its last group had no other), nor does a write with
    /// `no_slowdown`; writers that stop coming back cost one such wait,
    /// after which the last group is the smaller one. Called before
    /// `make_room_for_write`, whose checks must hold until the group takes
    /// its sequence numbers: this unlocks the state meanwhile.
    fn gather_sync_group(&self, st: &mut MutexGuard<'_, State>) {
        let Some(last) = st.last_sync_group else {
            return;
        };
        let others = last.writers.saturating_sub(1);
        if others == 0 || st.writers.len() >= others || last.ended.elapsed() > last.took {
            return;
        }
        let deadline = Instant::now() + (last.took / 2).min(MAX_SYNC_GATHER);
        MutexGuard::unlocked(st, || {
            while self.queued_writers.load(Ordering::Relaxed) < others && Instant::now() < deadline
            {
                std::thread::yield_now();
            }
        });
    }

    /// Makes `e`, a failure of a group that holds sequence numbers, sticky,
    /// and returns it with the state lock.
    fn fail_group(&self, e: Error) -> (MutexGuard<'_, State>, Result<()>) {
        let mut st = self.state.lock();
        st.bg_error.get_or_insert_with(|| e.duplicate());
        (st, Err(e))
    }

    /// Writes the values of `record` of at least `threshold` bytes to the
    /// memtable's blob file (creating it first if needed) and returns a copy
    /// of the record with blob pointers in their place (`None` when no value
    /// is that large), and the number of the memtable's blob file, if it has
    /// one. The file is flushed, and with `sync` synced (even when this
    /// group wrote nothing to it: the writes before it did; its directory
    /// entry is the caller's to sync). Called by the owner of the write path.
    fn separate_values(
        &self,
        record: &WriteBatch,
        threshold: usize,
        sync: bool,
    ) -> Result<(Option<WriteBatch>, Option<u64>)> {
        let large = |t: ValueType, value: &[u8]| t == ValueType::Value && value.len() >= threshold;
        let mut any = false;
        record.for_each(|t, _, value| {
            any |= large(t, value);
            Ok(())
        })?;
        if !any {
            let mut guard = self.blob.lock();
            let Some(blob) = guard.as_mut() else {
                return Ok((None, None));
            };
            if sync {
                // A synchronous write makes the writes before it durable
                // too, and their values may be in the blob file.
                blob.sync()
                    .map_err(|e| blob_error(blob.number(), blob.path(), e))?;
            }
            return Ok((None, Some(blob.number())));
        }
        if self.blob.lock().is_none() {
            let mut st = self.state.lock();
            let number = st.versions.new_file_number();
            match BlobWriter::create(&*self.options.fs, &self.dir, number) {
                Ok(w) => {
                    st.mem_blob = Some(number);
                    *self.blob.lock() = Some(w);
                }
                Err(e) => {
                    st.versions.reuse_file_number(number);
                    return Err(e);
                }
            }
        }
        let mut guard = self.blob.lock();
        let Some(blob) = guard.as_mut() else {
            return Err(Error::Background("no blob file".into()));
        };
        let mut small = WriteBatch::with_capacity(256);
        small.set_sequence(record.sequence());
        let mut pointer = Vec::new();
        let written = record.for_each(|t, key, value| {
            if large(t, value) {
                let p = blob.add(key, value)?;
                pointer.clear();
                p.encode(&mut pointer);
                small.put_blob_index(key, &pointer)
            } else {
                small.copy_op(t, key, value)
            }
        });
        let result =
            written.and_then(|()| blob.flush()).and_then(
                |()| {
                    if sync {
                        blob.sync()
                    } else {
                        Ok(())
                    }
                },
            );
        if let Err(e) = result {
            return Err(blob_error(blob.number(), blob.path(), e));
        }
        self.blob_bytes.store(blob.len(), Ordering::Relaxed);
        Ok((Some(small), Some(blob.number())))
    }

    /// Appends the group's record to the current log (number `log_number`).
    /// With `sync`, the directory entries of files up to number
    /// `newest_file` (the log, and the blob file the record points into)
    /// and the log it replaced (the writes before it) are made durable
    /// first, and the log after the append.
    fn write_log(
        &self,
        record: &WriteBatch,
        sync: bool,
        newest_file: u64,
        log_number: u64,
    ) -> Result<()> {
        if sync {
            // A synchronous write is durable only once the log's directory
            // entry is; after the first write to a new log this is a check
            // of a counter.
            self.sync_dir_for_log(newest_file.max(log_number))?;
            self.sync_prev_log()?;
        }
        let mut log = self.log.lock();
        let log = log
            .as_mut()
            .ok_or_else(|| Error::Background("no log file".into()))?;
        log.add_record(record.contents())?;
        if sync {
            log.sync()?;
        }
        Ok(())
    }

    /// Inserts a group's batches into `mem` concurrently (concurrent memtable
    /// writes): tells each member to insert its own (stamped with its
    /// sequence numbers by [`add_members`]), inserts the leader's `own`,
    /// and returns once every insert has finished, with the first failure.
    /// A panic in the leader's own insert is caught here, so that the
    /// leader never leaves while members still insert.
    fn insert_group(
        &self,
        own: &WriteBatch,
        members: &[Arc<Writer>],
        mem: &Arc<MemTable>,
    ) -> Result<()> {
        let inserts = Arc::new(GroupInserts {
            mem: mem.clone(),
            latch: Latch::new(members.len()),
            failure: Mutex::new(None),
        });
        for m in members {
            *m.inserts.lock() = Some(inserts.clone());
            m.signal.set(writer_state::INSERT);
        }
        let own_result = panic::catch_unwind(AssertUnwindSafe(|| insert_into(mem, own)))
            .unwrap_or_else(|payload| Err(write_panicked(&*payload)));
        inserts.latch.wait();
        let failure = inserts.failure.lock().take();
        own_result.and(failure.map_or(Ok(()), Err))
    }

    /// A member's part of [`insert_group`](Self::insert_group): inserts its
    /// batch, records a failure (a panic from a user comparator, caught),
    /// and counts the group's latch down.
    fn insert_as_member(&self, w: &Writer) {
        // Set by the leader before it signalled `INSERT`.
        let Some(inserts) = w.inserts.lock().take() else {
            return;
        };
        let batch = w.batch.lock().take();
        let result = panic::catch_unwind(AssertUnwindSafe(|| match &batch {
            Some(b) => insert_into(&inserts.mem, b),
            None => Ok(()),
        }))
        .unwrap_or_else(|payload| Err(write_panicked(&*payload)));
        if let Err(e) = result {
            inserts.failure.lock().get_or_insert(e);
        }
        inserts.latch.count_down();
    }

    /// Publishes the group `first..=last` once every group before it is
    /// published, waiting for them if they are still inserting (only with
    /// concurrent memtable writes can they be); then wakes the waiting
    /// groups whose turn has come. Fails with the sticky error instead of
    /// waiting for a group that failed.
    fn publish(
        &self,
        st: &mut MutexGuard<'_, State>,
        first: SequenceNumber,
        last: SequenceNumber,
    ) -> Result<()> {
        // An empty group (`last == first - 1`) only waits for the earlier
        // ones: a later group may publish before it, hence `>=`.
        while st.versions.last_sequence < first.saturating_sub(1) {
            if let Some(e) = &st.bg_error {
                return Err(e.duplicate());
            }
            let signal = Arc::new(Signal::new(0));
            st.publish_waiters.push(PublishWaiter {
                first,
                signal: signal.clone(),
            });
            MutexGuard::unlocked(st, || {
                signal.wait_while(0);
            });
        }
        if last > st.versions.last_sequence {
            st.versions.last_sequence = last;
            self.visible_sequence.store(last, Ordering::Release);
        }
        if !st.publish_waiters.is_empty() {
            wake_publish_waiters(st, false);
        }
        Ok(())
    }

    /// Frees the write path and wakes the writer at the queue's front to
    /// lead (and a forced memtable switch waiting for the path).
    fn release_write_path(&self, st: &mut State) {
        st.writing = false;
        if let Some(next) = st.writers.front() {
            next.wake();
        }
        self.work_done_cv.notify_all();
    }

    /// Ends a leader's turn: releases the write path if it still owns it,
    /// lets the waiting groups after a failed one fail too, and hands
    /// `result` to the members of its group.
    fn finish_group(
        &self,
        mut st: MutexGuard<'_, State>,
        members: Vec<Arc<Writer>>,
        owns_path: bool,
        result: Result<()>,
    ) -> Result<()> {
        if result.is_err() && !st.publish_waiters.is_empty() {
            wake_publish_waiters(&mut st, true);
        }
        if owns_path {
            self.release_write_path(&mut st);
        } else {
            // A memtable switch may be waiting for the groups in flight.
            self.work_done_cv.notify_all();
        }
        drop(st);
        if members.is_empty() {
            return result;
        }
        for member in members {
            *member.done.lock() = Some(match &result {
                Ok(()) => Ok(()),
                Err(e) => Err(e.duplicate()),
            });
            member.signal.set(writer_state::DONE);
        }
        result
    }

    /// Whether a write may start now without waiting or switching the
    /// memtable (see [`WriteOptions::no_slowdown`]): the checks of
    /// [`make_room_for_write`](Self::make_room_for_write) that would return
    /// at once, an [`Error::Incomplete`] for any that would not.
    fn check_room_now(&self, st: &State) -> Result<()> {
        if let Some(e) = &st.bg_error {
            return Err(e.duplicate());
        }
        let why = if st.versions.num_level_files(0) >= st.versions.l0_limits().slowdown {
            "level 0 asks writers to slow down"
        } else if !self.memtable_has_room(st) {
            "the memtable is full"
        } else {
            return Ok(());
        };
        Err(Error::Incomplete(format!("{}: {why}", self.dir.display())))
    }

    /// Whether the memtable (and its blob file) can take more writes.
    fn memtable_has_room(&self, st: &State) -> bool {
        st.mem.approximate_memory_usage() <= self.options.write_buffer_size
            && self.blob_bytes.load(Ordering::Relaxed) <= self.options.blob_file_size
    }

    /// Waits (at most `timeout`) for the background thread to finish a
    /// step, and counts the wait as a stall of `cause`.
    fn wait_for_work(
        &self,
        st: &mut MutexGuard<'_, State>,
        cause: StallCause,
        timeout: Option<Duration>,
    ) {
        let start = Instant::now();
        match timeout {
            Some(t) => {
                self.work_done_cv.wait_for(st, t);
            }
            None => self.work_done_cv.wait(st),
        }
        st.stalls.add(cause, start.elapsed());
    }

    /// Makes sure the memtable has room for a write, switching to a new one
    /// (and a new log, and a new blob file) when it is full or its blob file
    /// has reached `blob_file_size`; slows or stops writes when level 0 has
    /// too many files. `force` switches even if there is room.
    pub(crate) fn make_room_for_write(
        &self,
        st: &mut MutexGuard<'_, State>,
        mut force: bool,
    ) -> Result<()> {
        let mut allow_delay = !force;
        let limits = st.versions.l0_limits();
        loop {
            if let Some(e) = &st.bg_error {
                return Err(e.duplicate());
            }
            let l0 = st.versions.num_level_files(0);
            if l0 < limits.slowdown {
                st.throttle.reset();
            }
            if allow_delay && l0 >= limits.slowdown {
                // Slow writers in proportion to their own pace, more as
                // level 0 fills (see `throttle.rs`); a sleep ends early when
                // the background thread finishes a step, which may have
                // emptied level 0.
                allow_delay = false;
                let now = Instant::now();
                let factor = throttle::slowdown_factor(l0, limits);
                if let Some(sleep) = st.throttle.charge(now, factor) {
                    self.bg_cv.notify_one();
                    self.wait_for_work(st, StallCause::Level0Slowdown, Some(sleep));
                    let woke = Instant::now();
                    st.throttle.slept(woke.saturating_duration_since(now), woke);
                }
            } else if !force && self.memtable_has_room(st) {
                return Ok(());
            } else if st.last_allocated != st.versions.last_sequence {
                // Groups still insert into this memtable (concurrent
                // memtable writes): it is replaced once they are published.
                self.wait_for_work(st, StallCause::GroupsInFlight, None);
            } else if st.imm.is_some() {
                // The previous memtable is still being flushed.
                self.wait_for_work(st, StallCause::MemtableFlush, None);
            } else if l0 >= limits.stop {
                self.info_log
                    .log(&format!("too many level-0 files ({l0}); waiting"));
                self.bg_cv.notify_one();
                self.wait_for_work(st, StallCause::Level0Stop, None);
            } else {
                let number = st.versions.new_file_number();
                let file = match self
                    .options
                    .fs
                    .new_log_file(&log_file_name(&self.dir, number))
                {
                    Ok(f) => f,
                    Err(e) => {
                        st.versions.reuse_file_number(number);
                        return Err(e);
                    }
                };
                // The replaced log stays open until it is synced: the
                // writes it holds may not have been.
                let replaced = self.log.lock().replace(log::Writer::new(file));
                *self.prev_log.lock() = replaced;
                // The memtable's blob file goes with it.
                let replaced_blob = self.blob.lock().take();
                *self.prev_blob.lock() = replaced_blob;
                self.blob_bytes.store(0, Ordering::Relaxed);
                st.imm_blob = st.mem_blob.take();
                st.logfile_number = number;
                let full = std::mem::replace(
                    &mut st.mem,
                    Arc::new(crate::db::core::new_memtable(&self.icmp, &self.options)),
                );
                st.imm = Some(full);
                self.has_imm.store(true, Ordering::Release);
                self.install_super_version(st);
                force = false;
                self.maybe_schedule_compaction(st);
            }
        }
    }
}

/// Pops the writers queued behind the leader into `members`: up to a size
/// limit, never a sync write into a non-sync leader's group, and never more
/// than `u32::MAX` updates in all. Returns the group's update count and
/// size in bytes, the leader's `first` batch included.
fn take_group(
    st: &mut State,
    first: &WriteBatch,
    sync: bool,
    members: &mut Vec<Arc<Writer>>,
) -> (u64, usize) {
    let first_size = first.approximate_size();
    // Small leaders do not wait for big groups.
    let max = if first_size <= 128 << 10 {
        first_size + (128 << 10)
    } else {
        MAX_GROUP_BYTES
    };
    let mut size = first_size;
    let mut count = u64::from(first.count());
    while let Some(w) = st.writers.front() {
        if w.sync && !sync {
            break;
        }
        let slot = w.batch.lock();
        let Some(b) = slot.as_ref() else { break };
        let (s, c) = (size + b.approximate_size(), count + u64::from(b.count()));
        if s > max || c > u64::from(u32::MAX) {
            break;
        }
        (size, count) = (s, c);
        drop(slot);
        if let Some(w) = st.writers.pop_front() {
            members.push(w);
        }
    }
    (count, size)
}

/// Makes the leader's batch `record` the group's log record: appends the
/// members' batches (`size` bytes in all, the leader's included); the caller
/// stamps it with the group's first sequence number `first`.
///
/// With concurrent memtable writes, returns the leader's own batch apart
/// (stamped with `first`) for the leader to insert, and leaves each member's
/// batch in its slot, stamped with its own first sequence number, for the
/// member to insert. Otherwise the members' batches are moved into the
/// record, which the leader inserts whole, and `None` is returned.
fn add_members(
    record: &mut WriteBatch,
    members: &[Arc<Writer>],
    first: SequenceNumber,
    size: usize,
    concurrent: bool,
) -> Result<Option<WriteBatch>> {
    if !concurrent {
        for m in members {
            if let Some(b) = m.batch.lock().take() {
                record.append(&b)?;
            }
        }
        return Ok(None);
    }
    let mut own = std::mem::replace(record, WriteBatch::with_capacity(size));
    record.append(&own)?;
    own.set_sequence(first);
    let mut next = first + u64::from(own.count());
    for m in members {
        if let Some(b) = m.batch.lock().as_mut() {
            b.set_sequence(next);
            next += u64::from(b.count());
            record.append(b)?;
        }
    }
    Ok(Some(own))
}

/// Wakes the groups waiting to publish whose turn has come (the group
/// before them is published), or all of them (`all`, after a failure: they
/// fail with the sticky error or wait again).
fn wake_publish_waiters(st: &mut State, all: bool) {
    let published = st.versions.last_sequence;
    st.publish_waiters.retain(|w| {
        let wake = all || w.first.saturating_sub(1) <= published;
        if wake {
            w.signal.set(1);
        }
        !wake
    });
}

/// The outcome its leader left a member.
fn take_outcome(w: &Writer) -> Result<()> {
    w.done.lock().take().unwrap_or_else(|| {
        Err(Error::Background(
            "a write group finished without an outcome".into(),
        ))
    })
}

/// The sticky error a panic inside a write becomes.
fn write_panicked(payload: &(dyn std::any::Any + Send)) -> Error {
    Error::Background(format!("a write panicked: {}", panic_message(payload)))
}

pub(crate) mod throttle;

#[cfg(test)]
mod tests;
