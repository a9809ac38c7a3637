//! Hand-offs between the threads of the write path: a state word one thread
//! waits on while others advance it ([`Signal`]: a queued writer waiting to
//! lead, to insert its batch or to learn its group's outcome), and a count
//! of unfinished tasks one thread waits to reach zero ([`Latch`]: a leader
//! waiting for the members of its group to insert their batches).
//!
//! Waiting spins briefly, then yields the processor for a short while, then
//! parks the thread (`std::thread::park`). A hand-off inside a write group
//! usually comes within a microsecond or two (the time of a log append or
//! a memtable insert); a park and its wake-up take a system call each and
//! a trip through the scheduler, several times longer, so a waiter that
//! parks at once would make every hand-off cost that much.
//!
//! Invariants: each `Signal` and `Latch` is waited on only by the thread
//! that created it (its owner). A change is a release store or
//! read-modify-write followed by an unpark of the owner; the owner reads
//! with acquire loads, so whatever the changer wrote before the change is
//! visible to the owner once it sees the change. An unpark that comes
//! before the owner parks leaves a token that makes the park return at
//! once, so no wake-up is lost; a spurious return from `park` (the token of
//! an unrelated unpark) only makes the owner check again.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// Checks of the condition with a spin-loop hint between them, before
/// yielding. (A few hundred cycles on current processors.)
#[cfg(not(miri))]
const SPINS: u32 = 100;
#[cfg(miri)]
const SPINS: u32 = 2;

/// How long a waiter yields the processor between checks before it parks.
#[cfg(not(miri))]
const YIELD_FOR: Duration = Duration::from_micros(20);
#[cfg(miri)]
const YIELD_FOR: Duration = Duration::ZERO;

/// How long a synchronous writer yields before it parks
/// ([`Signal::wait_while_sync`]): long enough to cover a group's
/// `fdatasync` on a fast disk (about 100 µs here), so that the members of
/// a synchronous group see its outcome within a yield rather than a
/// wake-up from `park` (about 30 µs on this machine) and are back with
/// their next writes in time to share the next group's sync
/// (`DbInner::gather_sync_group`). RocksDB's writers yield up to 100 µs
/// too (`write_thread_max_yield_usec`). Other writers keep the short
/// window: with more writers than cores, their longer yields would take
/// time from the background thread.
#[cfg(not(miri))]
const SYNC_YIELD_FOR: Duration = Duration::from_micros(100);
#[cfg(miri)]
const SYNC_YIELD_FOR: Duration = Duration::ZERO;

/// Returns once `ready()` is true: spins, then yields, then parks between
/// checks (see the module documentation). The caller must be the owner of
/// whatever wakes it.
fn wait_until(yield_for: Duration, mut ready: impl FnMut() -> bool) {
    for _ in 0..SPINS {
        if ready() {
            return;
        }
        std::hint::spin_loop();
    }
    let start = Instant::now();
    while start.elapsed() < yield_for {
        if ready() {
            return;
        }
        thread::yield_now();
    }
    while !ready() {
        thread::park();
    }
}

/// A small state word its owner waits on and other threads set.
pub(crate) struct Signal {
    state: AtomicU8,
    owner: Thread,
}

impl Signal {
    /// A signal in `state`, owned by the calling thread.
    pub(crate) fn new(state: u8) -> Signal {
        Signal {
            state: AtomicU8::new(state),
            owner: thread::current(),
        }
    }

    /// Sets the state and wakes the owner. Everything the caller wrote
    /// before is visible to the owner once it sees the new state.
    pub(crate) fn set(&self, state: u8) {
        self.state.store(state, Ordering::Release);
        self.owner.unpark();
    }

    /// Changes the state from `from` to `to` if it is still `from`, without
    /// waking anyone (the owner changing its own state); true if it did.
    pub(crate) fn reset(&self, from: u8, to: u8) -> bool {
        self.state
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Waits (the owner only) until the state is no longer `state`, and
    /// returns the new one.
    pub(crate) fn wait_while(&self, state: u8) -> u8 {
        self.wait_while_for(YIELD_FOR, state)
    }

    /// [`wait_while`](Self::wait_while) for a synchronous writer, which
    /// yields for longer before it parks (see [`SYNC_YIELD_FOR`]).
    pub(crate) fn wait_while_sync(&self, state: u8) -> u8 {
        self.wait_while_for(SYNC_YIELD_FOR, state)
    }

    fn wait_while_for(&self, yield_for: Duration, state: u8) -> u8 {
        debug_assert_eq!(thread::current().id(), self.owner.id());
        let mut now = state;
        wait_until(yield_for, || {
            now = self.state.load(Ordering::Acquire);
            now != state
        });
        now
    }
}

/// A count of unfinished tasks; its owner waits for it to reach zero.
pub(crate) struct Latch {
    remaining: AtomicUsize,
    owner: Thread,
}

impl Latch {
    /// A latch of `tasks` tasks, owned by the calling thread.
    pub(crate) fn new(tasks: usize) -> Latch {
        Latch {
            remaining: AtomicUsize::new(tasks),
            owner: thread::current(),
        }
    }

    /// Marks one task finished; the last one wakes the owner. Everything the
    /// task wrote before is visible to the owner once [`Latch::wait`]
    /// returns.
    pub(crate) fn count_down(&self) {
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.owner.unpark();
        }
    }

    /// Waits (the owner only) until every task has finished.
    pub(crate) fn wait(&self) {
        debug_assert_eq!(thread::current().id(), self.owner.id());
        wait_until(YIELD_FOR, || self.remaining.load(Ordering::Acquire) == 0);
    }
}

#[cfg(test)]
mod tests {
    //! Small enough to run under Miri (scripts/miri.sh), which checks the
    //! hand-offs for data races.

    use std::cell::UnsafeCell;
    use std::sync::Arc;

    use super::*;

    /// A value written by one thread and read by another with no lock:
    /// only the hand-off under test orders the two, so Miri reports a data
    /// race if it does not.
    struct Unsynchronized(UnsafeCell<u64>);

    // SAFETY: test only; every access is ordered by the hand-off under test
    // (which is what Miri checks).
    unsafe impl Sync for Unsynchronized {}

    impl Unsynchronized {
        fn write(&self, v: u64) {
            // SAFETY: see the `Sync` impl.
            unsafe { *self.0.get() = v }
        }
        fn read(&self) -> u64 {
            // SAFETY: see the `Sync` impl.
            unsafe { *self.0.get() }
        }
    }

    #[test]
    fn a_set_wakes_the_owner_and_publishes_what_came_before() {
        for _ in 0..3 {
            let signal = Arc::new(Signal::new(0));
            let data = Arc::new(Unsynchronized(UnsafeCell::new(0)));
            let (s, d) = (signal.clone(), data.clone());
            let setter = thread::spawn(move || {
                d.write(42);
                s.set(1);
            });
            assert_eq!(signal.wait_while(0), 1);
            assert_eq!(data.read(), 42);
            setter.join().unwrap();
        }
    }

    #[test]
    fn a_state_seen_without_parking_publishes_what_came_before() {
        // The owner looks only after the setter is done (learnt through a
        // relaxed flag, which orders nothing), so it sees the new state at
        // its first check and never parks: the state's own release and
        // acquire are all that order the data.
        let signal = Arc::new(Signal::new(0));
        let data = Arc::new(Unsynchronized(UnsafeCell::new(0)));
        let finished = Arc::new(AtomicU8::new(0));
        let (s, d, f) = (signal.clone(), data.clone(), finished.clone());
        let setter = thread::spawn(move || {
            d.write(7);
            s.set(1);
            f.store(1, Ordering::Relaxed);
        });
        while finished.load(Ordering::Relaxed) == 0 {
            thread::yield_now();
        }
        assert_eq!(signal.wait_while(0), 1);
        assert_eq!(data.read(), 7);
        setter.join().unwrap();
    }

    #[test]
    fn a_latch_seen_without_parking_publishes_what_came_before() {
        let latch = Arc::new(Latch::new(1));
        let data = Arc::new(Unsynchronized(UnsafeCell::new(0)));
        let finished = Arc::new(AtomicU8::new(0));
        let (l, d, f) = (latch.clone(), data.clone(), finished.clone());
        let worker = thread::spawn(move || {
            d.write(9);
            l.count_down();
            f.store(1, Ordering::Relaxed);
        });
        while finished.load(Ordering::Relaxed) == 0 {
            thread::yield_now();
        }
        latch.wait();
        assert_eq!(data.read(), 9);
        worker.join().unwrap();
    }

    #[test]
    fn states_advance_in_turn_between_two_threads() {
        // The owner waits through 0 -> 1 -> 2 -> 3, each set by the other
        // thread only after the owner acknowledged the previous one.
        let signal = Arc::new(Signal::new(0));
        let ack = Arc::new(AtomicU8::new(0));
        let (s, a) = (signal.clone(), ack.clone());
        let setter = thread::spawn(move || {
            for next in 1..=3u8 {
                while a.load(Ordering::Acquire) != next - 1 {
                    thread::yield_now();
                }
                s.set(next);
            }
        });
        for expected in 1..=3u8 {
            assert_eq!(signal.wait_while(expected - 1), expected);
            ack.store(expected, Ordering::Release);
        }
        setter.join().unwrap();
    }

    #[test]
    fn a_reset_changes_only_the_expected_state() {
        let signal = Signal::new(1);
        assert!(signal.reset(1, 0));
        assert!(!signal.reset(1, 2));
        signal.set(3);
        assert_eq!(signal.wait_while(0), 3);
    }

    #[test]
    fn a_latch_returns_once_every_task_finished() {
        const TASKS: usize = 3;
        let latch = Arc::new(Latch::new(TASKS));
        let cells: Arc<Vec<Unsynchronized>> = Arc::new(
            (0..TASKS)
                .map(|_| Unsynchronized(UnsafeCell::new(0)))
                .collect(),
        );
        let workers: Vec<_> = (0..TASKS)
            .map(|i| {
                let (l, c) = (latch.clone(), cells.clone());
                thread::spawn(move || {
                    c[i].write(i as u64 + 1);
                    l.count_down();
                })
            })
            .collect();
        latch.wait();
        for (i, c) in cells.iter().enumerate() {
            assert_eq!(c.read(), i as u64 + 1);
        }
        for w in workers {
            w.join().unwrap();
        }
    }

    #[test]
    fn a_latch_of_no_tasks_does_not_wait() {
        Latch::new(0).wait();
    }
}
