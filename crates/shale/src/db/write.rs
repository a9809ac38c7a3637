//! The write path: writers queue up, the one at the front becomes the leader,
//! takes the batches queued behind it into one group, writes the group to the
//! log with a single append (and a single fdatasync when any member asked for
//! sync), inserts it into the memtable, publishes the new sequence number and
//! wakes the members.
//!
//! Invariants: only the leader touches the log; sequence numbers are assigned
//! under the state mutex and published (`visible_sequence`) only after the
//! memtable holds every entry up to them.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::batch::WriteBatch;
use crate::db::core::{insert_into, DbInner, State};
use crate::error::{Error, Result};
use crate::log;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::version::filename::log_file_name;
use crate::version::version::{L0_SLOWDOWN_WRITES_TRIGGER, L0_STOP_WRITES_TRIGGER};

/// Upper bound of a write group's size in bytes.
const MAX_GROUP_BYTES: usize = 1 << 20;

/// A queued write.
pub(crate) struct Writer {
    batch: Mutex<Option<WriteBatch>>,
    sync: bool,
    done: Mutex<Option<Result<()>>>,
    cv: Condvar,
}

impl DbInner {
    /// Writes `batch` (an empty batch only waits for earlier writes and room).
    pub(crate) fn write_batch(&self, opts: &WriteOptions, batch: WriteBatch) -> Result<()> {
        let w = Arc::new(Writer {
            batch: Mutex::new(Some(batch)),
            sync: opts.sync,
            done: Mutex::new(None),
            cv: Condvar::new(),
        });
        let mut st = self.state.lock();
        st.writers.push_back(w.clone());
        loop {
            if let Some(r) = w.done.lock().take() {
                return r;
            }
            if st.writers.front().is_some_and(|f| Arc::ptr_eq(f, &w)) {
                break;
            }
            w.cv.wait(&mut st);
        }

        // This writer leads.
        let mut result = self.make_room_for_write(&mut st, false);
        let mut group_len = 1;
        if result.is_ok() {
            let (mut group, n, sync) = build_group(&st);
            group_len = n;
            let last = st.versions.last_sequence;
            let count = group.count() as u64;
            group.set_sequence(last + 1);
            let mem = st.mem.clone();
            drop(st);
            result = self.write_group(&group, sync, &mem);
            st = self.state.lock();
            if result.is_ok() {
                st.versions.last_sequence = last + count;
                self.visible_sequence.store(last + count, Ordering::Release);
            } else if sync {
                // A failed sync leaves the log in an unknown state: stop writes.
                if let Err(e) = &result {
                    st.bg_error.get_or_insert_with(|| e.duplicate());
                }
            }
        }

        for _ in 0..group_len {
            let Some(member) = st.writers.pop_front() else {
                break;
            };
            if !Arc::ptr_eq(&member, &w) {
                *member.done.lock() = Some(match &result {
                    Ok(()) => Ok(()),
                    Err(e) => Err(e.duplicate()),
                });
                member.cv.notify_one();
            }
        }
        if let Some(next) = st.writers.front() {
            next.cv.notify_one();
        }
        result
    }

    fn write_group(&self, group: &WriteBatch, sync: bool, mem: &Arc<MemTable>) -> Result<()> {
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
                // Spread the delay over many writes instead of stopping one for seconds.
                MutexGuard::unlocked(st, || std::thread::sleep(Duration::from_millis(1)));
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
                    .new_writable_file(&log_file_name(&self.dir, number))
                {
                    Ok(f) => f,
                    Err(e) => {
                        st.versions.reuse_file_number(number);
                        return Err(e);
                    }
                };
                {
                    let mut log = self.log.lock();
                    *log = Some(log::Writer::new(file));
                }
                st.logfile_number = number;
                let full =
                    std::mem::replace(&mut st.mem, Arc::new(MemTable::new(self.icmp.clone())));
                st.imm = Some(full);
                self.has_imm.store(true, Ordering::Release);
                self.install_super_version(st);
                force = false;
                self.maybe_schedule_compaction(st);
            }
        }
    }
}

/// Takes the leader's batch and those queued behind it (up to a size limit,
/// and never a sync write into a non-sync leader's group).
fn build_group(st: &State) -> (WriteBatch, usize, bool) {
    let mut iter = st.writers.iter();
    let Some(leader) = iter.next() else {
        return (WriteBatch::new(), 0, false);
    };
    let mut group = leader.batch.lock().take().unwrap_or_default();
    let sync = leader.sync;
    let first_size = group.approximate_size();
    // Small leaders do not wait for big groups.
    let max = if first_size <= 128 << 10 {
        first_size + (128 << 10)
    } else {
        MAX_GROUP_BYTES
    };
    let mut n = 1;
    let mut size = first_size;
    for w in iter {
        if w.sync && !sync {
            break;
        }
        let mut slot = w.batch.lock();
        let Some(b) = slot.as_ref() else { break };
        size += b.approximate_size();
        if size > max {
            break;
        }
        if group.append(b).is_err() {
            break;
        }
        slot.take();
        n += 1;
    }
    (group, n, sync)
}
