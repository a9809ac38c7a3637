//! The write path: writers queue up, the one at the front becomes the leader,
//! takes the batches queued behind it into one group, writes the group to the
//! log with a single append (and a single fdatasync when any member asked for
//! sync), inserts it into the memtable, publishes the new sequence number and
//! wakes the members.
//!
//! Invariants: only the leader touches the log; sequence numbers are assigned
//! under the state mutex and published (`visible_sequence`) only after the
//! memtable holds every entry up to them.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::batch::{check_update, WriteBatch};
use crate::db::core::{insert_into, panic_message, Db, DbInner, State, Writer};
use crate::error::{Error, Result};
use crate::filename::log_file_name;
use crate::keys::MAX_SEQUENCE_NUMBER;
use crate::log;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::version::version::{L0_SLOWDOWN_WRITES_TRIGGER, L0_STOP_WRITES_TRIGGER};

/// Upper bound of a write group's size in bytes.
const MAX_GROUP_BYTES: usize = 1 << 20;

impl Db {
    /// Sets `key` to `value`. A key longer than
    /// [`MAX_KEY_LEN`](crate::batch::MAX_KEY_LEN), a value longer than
    /// [`MAX_VALUE_LEN`](crate::batch::MAX_VALUE_LEN), or a pair
    /// too long together for one memtable entry
    /// ([`MAX_ENTRY_LEN`](crate::batch::MAX_ENTRY_LEN)) is refused with
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
    /// db.put_with(&shale::WriteOptions { sync: true }, b"balance", b"100")?;
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
    /// db.delete_with(&shale::WriteOptions { sync: true }, b"k")?;
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
    /// db.write(&shale::WriteOptions { sync: true }, &batch)?;
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
            st.writing = true;
            return self.lead(st, batch, opts.sync);
        }
        let w = Arc::new(Writer {
            batch: Mutex::new(Some(batch)),
            sync: opts.sync,
            done: Mutex::new(None),
            cv: Condvar::new(),
        });
        st.writers.push_back(w.clone());
        loop {
            if let Some(r) = w.done.lock().take() {
                return r;
            }
            if !st.writing && st.writers.front().is_some_and(|f| Arc::ptr_eq(f, &w)) {
                st.writers.pop_front();
                st.writing = true;
                let batch = w.batch.lock().take().unwrap_or_default();
                return self.lead(st, batch, w.sync);
            }
            w.cv.wait(&mut st);
        }
    }

    /// Runs one write group as its leader: makes room, takes the writes
    /// queued behind (see [`take_group`]), logs and applies them without the
    /// state mutex, then publishes the sequence and wakes the members and the
    /// next leader. The caller has set `st.writing`.
    ///
    /// A panic while leading (from a user comparator inserting into the
    /// memtable, say) fails the group instead of unwinding through it: the
    /// write path is released and every member is woken with the error.
    /// The group may be partly in the log and the memtable, under sequence
    /// numbers never published, so the error is also made sticky: later
    /// writes fail, reads go on.
    fn lead<'a>(&'a self, st: MutexGuard<'a, State>, batch: WriteBatch, sync: bool) -> Result<()> {
        let mut members = Vec::new();
        let led = panic::catch_unwind(AssertUnwindSafe(|| {
            self.lead_group(st, batch, sync, &mut members)
        }));
        match led {
            Ok((st, result)) => self.finish_group(st, members, result),
            Err(payload) => {
                let e =
                    Error::Background(format!("a write panicked: {}", panic_message(&*payload)));
                let mut st = self.state.lock();
                st.bg_error.get_or_insert_with(|| e.duplicate());
                self.finish_group(st, members, Err(e))
            }
        }
    }

    /// The body of [`lead`](Self::lead): returns the state lock and the
    /// group's outcome; the writers taken into the group are in `members`.
    fn lead_group<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        batch: WriteBatch,
        sync: bool,
        members: &mut Vec<Arc<Writer>>,
    ) -> (MutexGuard<'a, State>, Result<()>) {
        let mut result = self.make_room_for_write(&mut st, false);
        if result.is_ok() {
            let mut group = batch;
            take_group(&mut st, &mut group, sync, members);
            let last = st.versions.last_sequence;
            let count = u64::from(group.count());
            if last
                .checked_add(count)
                .is_none_or(|end| end > MAX_SEQUENCE_NUMBER)
            {
                // Only a database recovered from files that claim the last
                // sequence numbers gets here; its writes are refused, as a
                // wrapped sequence number would reorder history.
                result = Err(Error::InvalidArgument(format!(
                    "{}: sequence numbers exhausted (last used {last}, {count} more asked)",
                    self.dir.display()
                )));
                return (st, result);
            }
            group.set_sequence(last + 1);
            let mem = st.mem.clone();
            // Stable while this leader owns the write path: only a leader
            // switches logs.
            let log_number = st.logfile_number;
            drop(st);
            result = self.write_group(&group, sync, log_number, &mem);
            st = self.state.lock();
            match &result {
                Ok(()) => {
                    st.versions.last_sequence = last + count;
                    self.visible_sequence.store(last + count, Ordering::Release);
                }
                Err(e) => {
                    // A failed append or sync leaves the log in an unknown
                    // state (a torn record, data the kernel may have
                    // dropped) and the group maybe partly in the memtable:
                    // later writes must fail too, naming this cause.
                    st.bg_error.get_or_insert_with(|| {
                        Error::Background(format!("writing log #{log_number} failed: {e}"))
                    });
                }
            }
        }
        (st, result)
    }

    /// Ends a leader's turn: hands `result` to the members of its group,
    /// frees the write path and wakes the next leader.
    fn finish_group(
        &self,
        mut st: MutexGuard<'_, State>,
        members: Vec<Arc<Writer>>,
        result: Result<()>,
    ) -> Result<()> {
        for member in members {
            *member.done.lock() = Some(match &result {
                Ok(()) => Ok(()),
                Err(e) => Err(e.duplicate()),
            });
            member.cv.notify_one();
        }
        st.writing = false;
        if let Some(next) = st.writers.front() {
            next.cv.notify_one();
        }
        // A forced memtable switch may be waiting for the write path.
        self.work_done_cv.notify_all();
        result
    }

    fn write_group(
        &self,
        group: &WriteBatch,
        sync: bool,
        log_number: u64,
        mem: &Arc<MemTable>,
    ) -> Result<()> {
        if sync {
            // A synchronous write is durable only once the log's directory
            // entry is; after the first write to a new log this is a check
            // of a counter.
            self.sync_dir_for_log(log_number)?;
            self.sync_prev_log()?;
        }
        {
            let mut log = self.log.lock();
            let log = log
                .as_mut()
                .ok_or_else(|| Error::Background("no log file".into()))?;
            log.add_record(group.contents())?;
            if sync {
                log.sync()?;
            }
        }
        insert_into(mem, group)
    }

    /// Makes sure the memtable has room for a write, switching to a new one
    /// (and a new log) when it is full; slows or stops writes when level 0 has
    /// too many files. `force` switches even if there is room.
    pub(crate) fn make_room_for_write(
        &self,
        st: &mut MutexGuard<'_, State>,
        mut force: bool,
    ) -> Result<()> {
        let mut allow_delay = !force;
        loop {
            if let Some(e) = &st.bg_error {
                return Err(e.duplicate());
            }
            let l0 = st.versions.num_level_files(0);
            if allow_delay && l0 >= L0_SLOWDOWN_WRITES_TRIGGER {
                // Spread the delay over many writes instead of stopping one
                // for seconds: wait up to 1 ms (LevelDB's delay), but no
                // longer than until the background thread finishes a step,
                // which may have emptied level 0.
                self.bg_cv.notify_one();
                self.work_done_cv.wait_for(st, Duration::from_millis(1));
                allow_delay = false;
            } else if !force && st.mem.approximate_memory_usage() <= self.options.write_buffer_size
            {
                return Ok(());
            } else if st.imm.is_some() {
                // The previous memtable is still being flushed.
                self.work_done_cv.wait(st);
            } else if l0 >= L0_STOP_WRITES_TRIGGER {
                self.info_log
                    .log(&format!("too many level-0 files ({l0}); waiting"));
                self.bg_cv.notify_one();
                self.work_done_cv.wait(st);
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

/// Moves the batches queued behind the leader into its `group` (up to a
/// size limit, and never a sync write into a non-sync leader's group),
/// popping their writers into `members`.
fn take_group(st: &mut State, group: &mut WriteBatch, sync: bool, members: &mut Vec<Arc<Writer>>) {
    let first_size = group.approximate_size();
    // Small leaders do not wait for big groups.
    let max = if first_size <= 128 << 10 {
        first_size + (128 << 10)
    } else {
        MAX_GROUP_BYTES
    };
    let mut size = first_size;
    while let Some(w) = st.writers.front() {
        if w.sync && !sync {
            break;
        }
        let mut slot = w.batch.lock();
        let Some(b) = slot.as_ref() else { break };
        size += b.approximate_size();
        if size > max || group.append(b).is_err() {
            break;
        }
        slot.take();
        drop(slot);
        if let Some(w) = st.writers.pop_front() {
            members.push(w);
        }
    }
}
