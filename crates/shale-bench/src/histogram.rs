//! db_bench's latency histogram: 154 fixed buckets (1, 2, ..., 10, 12, 14,
//! ..., then the pattern 1.2/1.4/1.6/1.8/2/2.5/3/3.5/4/4.5/5/6/7/8/9/10 times
//! each power of ten up to 9e9, then 1e200), with count, average, standard
//! deviation, min, max and percentiles interpolated linearly inside a bucket.
//!
//! Invariants: `buckets` sums to `num`; `min <= max` once a value was added.

use std::fmt::Write as _;
use std::sync::OnceLock;

/// Number of buckets.
pub const NUM_BUCKETS: usize = 154;

/// The upper (exclusive) limit of each bucket.
pub fn bucket_limits() -> &'static [f64; NUM_BUCKETS] {
    static LIMITS: OnceLock<[f64; NUM_BUCKETS]> = OnceLock::new();
    LIMITS.get_or_init(|| {
        // Steps per decade, in tenths of the decade's base.
        const STEPS: [u64; 16] = [
            12, 14, 16, 18, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90, 100,
        ];
        let mut limits = [0.0; NUM_BUCKETS];
        let mut i = 0;
        for v in 1..=10u64 {
            limits[i] = v as f64;
            i += 1;
        }
        let mut base = 1u64; // the decade's base / 10
        while i < NUM_BUCKETS - 1 {
            for step in STEPS {
                if i == NUM_BUCKETS - 1 {
                    break;
                }
                limits[i] = (step * base) as f64;
                i += 1;
            }
            base *= 10;
        }
        limits[NUM_BUCKETS - 1] = 1e200;
        limits
    })
}

/// A latency histogram (values in microseconds).
#[derive(Clone)]
pub struct Histogram {
    min: f64,
    max: f64,
    num: f64,
    sum: f64,
    sum_squares: f64,
    buckets: [f64; NUM_BUCKETS],
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Histogram {
        Histogram {
            min: bucket_limits()[NUM_BUCKETS - 1],
            max: 0.0,
            num: 0.0,
            sum: 0.0,
            sum_squares: 0.0,
            buckets: [0.0; NUM_BUCKETS],
        }
    }

    /// Forgets every value.
    pub fn clear(&mut self) {
        *self = Histogram::new();
    }

    /// Records one value.
    pub fn add(&mut self, value: f64) {
        let limits = bucket_limits();
        // The first bucket whose limit exceeds the value (the last catches all).
        let b = limits[..NUM_BUCKETS - 1].partition_point(|&limit| limit <= value);
        self.buckets[b] += 1.0;
        if self.min > value {
            self.min = value;
        }
        if self.max < value {
            self.max = value;
        }
        self.num += 1.0;
        self.sum += value;
        self.sum_squares += value * value;
    }

    /// Adds every value recorded in `other`.
    pub fn merge(&mut self, other: &Histogram) {
        if other.min < self.min {
            self.min = other.min;
        }
        if other.max > self.max {
            self.max = other.max;
        }
        self.num += other.num;
        self.sum += other.sum;
        self.sum_squares += other.sum_squares;
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a += *b;
        }
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.num as u64
    }

    /// Smallest value (0 when empty).
    pub fn min(&self) -> f64 {
        if self.num == 0.0 {
            0.0
        } else {
            self.min
        }
    }

    /// Largest value.
    pub fn max(&self) -> f64 {
        self.max
    }

    /// The 50th percentile.
    pub fn median(&self) -> f64 {
        self.percentile(50.0)
    }

    /// The `p`th percentile (0..=100), interpolated inside its bucket and
    /// clamped to the observed min and max.
    pub fn percentile(&self, p: f64) -> f64 {
        let limits = bucket_limits();
        let threshold = self.num * (p / 100.0);
        let mut sum = 0.0;
        for (b, &count) in self.buckets.iter().enumerate() {
            sum += count;
            if sum >= threshold {
                let left = if b == 0 { 0.0 } else { limits[b - 1] };
                let right = limits[b];
                let left_sum = sum - count;
                let pos = if count > 0.0 {
                    (threshold - left_sum) / count
                } else {
                    0.0
                };
                let r = left + (right - left) * pos;
                return r.clamp(self.min.min(self.max), self.max);
            }
        }
        self.max
    }

    /// Mean of the values (0 when empty).
    pub fn average(&self) -> f64 {
        if self.num == 0.0 {
            0.0
        } else {
            self.sum / self.num
        }
    }

    /// Population standard deviation (0 when empty).
    pub fn standard_deviation(&self) -> f64 {
        if self.num == 0.0 {
            return 0.0;
        }
        let variance = (self.sum_squares * self.num - self.sum * self.sum) / (self.num * self.num);
        variance.max(0.0).sqrt()
    }

    /// The text db_bench prints after "Microseconds per op:", with a
    /// percentile line added after the min/median/max line.
    pub fn to_text(&self) -> String {
        let limits = bucket_limits();
        let mut r = String::new();
        let _ = writeln!(
            r,
            "Count: {:.0}  Average: {:.4}  StdDev: {:.2}",
            self.num,
            self.average(),
            self.standard_deviation()
        );
        let _ = writeln!(
            r,
            "Min: {:.4}  Median: {:.4}  Max: {:.4}",
            self.min(),
            self.median(),
            self.max
        );
        let _ = writeln!(
            r,
            "Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}",
            self.percentile(50.0),
            self.percentile(75.0),
            self.percentile(99.0),
            self.percentile(99.9),
            self.percentile(99.99)
        );
        r.push_str("------------------------------------------------------\n");
        let mult = 100.0 / self.num;
        let mut sum = 0.0;
        for (b, &count) in self.buckets.iter().enumerate() {
            if count <= 0.0 {
                continue;
            }
            sum += count;
            let left = if b == 0 { 0.0 } else { limits[b - 1] };
            let _ = write!(
                r,
                "[ {:>7.0}, {:>7.0} ) {:>7.0} {:>7.3}% {:>7.3}% ",
                left,
                limits[b],
                count,
                mult * count,
                mult * sum
            );
            let marks = (20.0 * (count / self.num) + 0.5) as usize;
            r.extend(std::iter::repeat_n('#', marks));
            r.push('\n');
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_limits_match_db_bench_table() {
        let l = bucket_limits();
        assert_eq!(l[0], 1.0);
        assert_eq!(l[9], 10.0);
        assert_eq!(l[10], 12.0);
        assert_eq!(l[25], 100.0);
        assert_eq!(l[26], 120.0);
        assert_eq!(l[41], 1000.0);
        assert_eq!(l[152], 9e9);
        assert_eq!(l[153], 1e200);
        assert!(l.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn values_land_in_the_bucket_whose_limit_exceeds_them() {
        let mut h = Histogram::new();
        h.add(0.5); // [0, 1)
        h.add(1.0); // [1, 2)
        h.add(11.0); // [10, 12)
        assert_eq!(h.buckets[0], 1.0);
        assert_eq!(h.buckets[1], 1.0);
        assert_eq!(h.buckets[10], 1.0);
        h.add(1e300);
        assert_eq!(h.buckets[NUM_BUCKETS - 1], 1.0);
    }
}
