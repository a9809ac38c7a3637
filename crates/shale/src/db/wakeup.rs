//! The background thread's doorbell: anyone may ring it, with or without the
//! database mutex, without blocking on anything but a tiny lock of its own;
//! the background thread sleeps on it while it has no work.
//!
//! Invariant: a ring is sticky. It sets a flag that only the sleeper clears,
//! when it wakes, so a ring that comes after the background thread checked
//! for work but before it fell asleep is never lost. (A plain condition
//! variable would need the notifier to hold the database mutex for that,
//! and that mutex can be held across MANIFEST writes: a reader that makes
//! a compaction due must not wait for I/O.)

use parking_lot::{Condvar, Mutex, MutexGuard};

/// A wake-up signal with memory; see the module documentation.
#[derive(Default)]
pub(crate) struct Doorbell {
    rung: Mutex<bool>,
    cv: Condvar,
}

impl Doorbell {
    /// Wakes the sleeper, or makes its next [`Doorbell::wait`] return at once.
    pub(crate) fn notify_one(&self) {
        *self.rung.lock() = true;
        self.cv.notify_one();
    }

    /// The same as [`Doorbell::notify_one`]: there is one sleeper.
    pub(crate) fn notify_all(&self) {
        self.notify_one();
    }

    /// Releases `guard`'s mutex, sleeps until the bell has been rung since
    /// the last wake-up (returning at once if it already was), clears the
    /// ring and locks the mutex again. The caller re-checks for work.
    pub(crate) fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
        MutexGuard::unlocked(guard, || {
            let mut rung = self.rung.lock();
            while !*rung {
                self.cv.wait(&mut rung);
            }
            *rung = false;
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_ring_before_the_wait_is_not_lost() {
        let bell = Doorbell::default();
        let state = Mutex::new(0u32);
        bell.notify_one();
        let mut guard = state.lock();
        // Returns at once: the ring was remembered.
        bell.wait(&mut guard);
        assert_eq!(*guard, 0);
    }

    #[test]
    fn a_ring_wakes_a_sleeper_without_the_callers_mutex() {
        let bell = Arc::new(Doorbell::default());
        let state = Arc::new(Mutex::new(false));
        let (b, s) = (bell.clone(), state.clone());
        let sleeper = std::thread::spawn(move || {
            let mut guard = s.lock();
            while !*guard {
                b.wait(&mut guard);
            }
        });
        std::thread::sleep(Duration::from_millis(10));
        *state.lock() = true;
        // Rung without holding `state`.
        bell.notify_one();
        sleeper.join().expect("the sleeper wakes up and finishes");
    }
}
