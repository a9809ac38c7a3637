//! The write throttle: how writers slow down while level 0 is between its
//! slowdown and stop counts (see [`L0Limits`]).
//!
//! LevelDB delays each write by 1 ms once level 0 reaches its slowdown
//! count. For small writes that is not a slowdown but a near stop (a
//! writer that takes a microsecond per write falls to a thousand writes a
//! second), concentrated in the moments a compaction runs late: a burst of
//! writes then takes several times as long as the one before it.
//!
//! Here a writer is slowed in proportion to its own pace instead. Between
//! the two counts it is charged, for the time it spent writing since its
//! last charge, `factor - 1` times that time as a debt, and it sleeps the
//! debt off in pieces of at least [`QUANTUM`]. The factor doubles every
//! quarter of the way from the slowdown count (2: half speed) towards the
//! stop count (32 just before it), so the deeper level 0 gets, the more of
//! the second core compaction gets, and writes slow gradually rather than
//! stop.
//!
//! Invariants:
//! - No debt outside the slowdown zone: [`WriteThrottle::reset`] is called
//!   whenever a writer finds level 0 under the slowdown count.
//! - Time a writer spends away from writing (its application's other work,
//!   a sleep of its own) is not charged: at most [`MAX_CHARGED_GAP`] counts
//!   between two charges, and a sleep restarts the clock.
//! - No sleep is longer than [`MAX_SLEEP`], so a compaction that empties
//!   level 0 (which wakes sleeping writers) is noticed soon.

use std::time::{Duration, Instant};

use crate::version::version::L0Limits;

/// Debt below this is carried to the next write rather than slept.
pub(crate) const QUANTUM: Duration = Duration::from_millis(1);
/// The longest gap between two charges counted as time spent writing.
pub(crate) const MAX_CHARGED_GAP: Duration = Duration::from_millis(1);
/// The longest single sleep.
pub(crate) const MAX_SLEEP: Duration = Duration::from_millis(10);

/// A writer's pace divided by the pace it is slowed to, with `l0` files at
/// level 0 (at least the slowdown count): 2 at the slowdown count, doubling
/// every quarter of the way to the stop count.
pub(crate) fn slowdown_factor(l0: usize, limits: L0Limits) -> f64 {
    let span = limits.stop.saturating_sub(limits.slowdown).max(1) as f64;
    let depth = l0.saturating_sub(limits.slowdown) as f64;
    2f64.powf(1.0 + 4.0 * (depth / span).min(1.0))
}

/// The debt of the writers while level 0 is in the slowdown zone.
#[derive(Debug, Default)]
pub(crate) struct WriteThrottle {
    /// When writers were last charged (or woke from a sleep).
    last: Option<Instant>,
    /// Time still to be slept.
    debt: Duration,
}

impl WriteThrottle {
    /// Level 0 is under the slowdown count: no debt.
    pub(crate) fn reset(&mut self) {
        self.last = None;
        self.debt = Duration::ZERO;
    }

    /// Charges the writers for the time since the last charge at `factor`,
    /// and returns how long to sleep now, if the debt has reached
    /// [`QUANTUM`].
    pub(crate) fn charge(&mut self, now: Instant, factor: f64) -> Option<Duration> {
        if let Some(last) = self.last {
            let writing = now.saturating_duration_since(last).min(MAX_CHARGED_GAP);
            let extra = writing.mul_f64((factor - 1.0).clamp(0.0, 1024.0));
            self.debt = self.debt.saturating_add(extra);
        }
        self.last = Some(now);
        (self.debt >= QUANTUM).then(|| self.debt.min(MAX_SLEEP))
    }

    /// The writer slept `slept` (perhaps less than asked: a compaction
    /// step woke it) and resumes at `now`.
    pub(crate) fn slept(&mut self, slept: Duration, now: Instant) {
        self.debt = self.debt.saturating_sub(slept);
        self.last = Some(now);
    }

    /// The debt still to be slept.
    #[cfg(test)]
    pub(crate) fn debt(&self) -> Duration {
        self.debt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counts of a 1 MB write buffer: 16, 32, 48.
    const LIMITS: L0Limits = L0Limits {
        compaction: 16,
        slowdown: 32,
        stop: 48,
    };

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn the_factor_starts_at_half_speed_and_doubles_each_quarter_to_the_stop() {
        assert_eq!(L0Limits::for_write_buffer(1 << 20), LIMITS);
        assert_eq!(slowdown_factor(32, LIMITS), 2.0);
        assert_eq!(slowdown_factor(36, LIMITS), 4.0);
        assert_eq!(slowdown_factor(40, LIMITS), 8.0);
        assert_eq!(slowdown_factor(44, LIMITS), 16.0);
        assert_eq!(slowdown_factor(48, LIMITS), 32.0);
        assert_eq!(slowdown_factor(100, LIMITS), 32.0);
        // LevelDB's counts (a 4 MB write buffer): one file per quarter.
        let leveldb = L0Limits::for_write_buffer(4 << 20);
        assert_eq!(slowdown_factor(8, leveldb), 2.0);
        assert_eq!(slowdown_factor(11, leveldb), 16.0);
        // Degenerate limits do not divide by zero.
        let flat = L0Limits {
            compaction: 1,
            slowdown: 2,
            stop: 2,
        };
        assert!(slowdown_factor(2, flat).is_finite());
    }

    #[test]
    fn a_writer_at_half_speed_sleeps_as_long_as_it_wrote() {
        let mut t = WriteThrottle::default();
        let start = Instant::now();
        assert_eq!(
            t.charge(start, 2.0),
            None,
            "the first charge starts the clock"
        );
        // 900 writes of 1 µs: 900 µs of debt, under the quantum.
        let mut now = start;
        for _ in 0..900 {
            now += us(1);
            assert_eq!(t.charge(now, 2.0), None);
        }
        assert_eq!(t.debt(), us(900));
        // 100 more: 1 ms of debt, slept at once.
        for _ in 0..99 {
            now += us(1);
            assert_eq!(t.charge(now, 2.0), None);
        }
        now += us(1);
        assert_eq!(t.charge(now, 2.0), Some(us(1000)));
        t.slept(us(1000), now + us(1000));
        assert_eq!(t.debt(), Duration::ZERO);
    }

    #[test]
    fn deeper_level_0_charges_more_per_write() {
        let mut t = WriteThrottle::default();
        let start = Instant::now();
        t.charge(start, 16.0);
        // 100 µs of writing at factor 16: 1.5 ms of debt.
        assert_eq!(t.charge(start + us(100), 16.0), Some(us(1500)));
    }

    #[test]
    fn time_away_from_writing_is_not_charged() {
        let mut t = WriteThrottle::default();
        let start = Instant::now();
        t.charge(start, 2.0);
        // The application did other work for a second: 1 ms counts.
        assert_eq!(
            t.charge(start + Duration::from_secs(1), 2.0),
            Some(MAX_CHARGED_GAP)
        );
        // A sleep restarts the clock: the next write is charged from there.
        let woke = start + Duration::from_secs(2);
        t.slept(MAX_CHARGED_GAP, woke);
        assert_eq!(t.charge(woke + us(10), 2.0), None);
        assert_eq!(t.debt(), us(10));
    }

    #[test]
    fn a_sleep_cut_short_leaves_the_rest_of_the_debt() {
        let mut t = WriteThrottle::default();
        let start = Instant::now();
        t.charge(start, 32.0);
        // 1 ms at factor 32: 31 ms of debt, slept at most 10 ms at a time.
        let now = start + Duration::from_millis(1);
        assert_eq!(t.charge(now, 32.0), Some(MAX_SLEEP));
        t.slept(us(4000), now + us(4000));
        assert_eq!(t.debt(), us(27_000));
        // Level 0 fell under the slowdown count: the debt is forgiven.
        t.reset();
        assert_eq!(t.debt(), Duration::ZERO);
        assert_eq!(t.charge(now + us(5000), 32.0), None);
    }
}
