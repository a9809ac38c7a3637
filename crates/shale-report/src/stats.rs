//! Summaries of repeated runs: the median with its min–max range (the
//! protocol's default), the WiredTiger write-up's trimmed mean (drop the
//! minimum and the maximum, average the rest), and Shale's speed ratio to a
//! peer.
//!
//! Invariants: summaries are only made from finite values; an empty input
//! gives `None`, never a NaN.

/// How a study combines its runs into one figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregation {
    /// Median of all runs, shown with min–max.
    Median,
    /// Drop one minimum and one maximum, mean of the rest (the WiredTiger
    /// comparison's rule for five runs); with fewer than three runs, the mean.
    TrimmedMean,
}

impl Aggregation {
    /// How the rule is described in the report.
    pub fn describe(self) -> &'static str {
        match self {
            Aggregation::Median => "median of the runs, with min–max",
            Aggregation::TrimmedMean => {
                "minimum and maximum run dropped, mean of the rest (min–max of all runs shown)"
            }
        }
    }
}

/// One figure from several runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// The headline value (median or trimmed mean).
    pub center: f64,
    /// Smallest run.
    pub min: f64,
    /// Largest run.
    pub max: f64,
    /// Number of runs that contributed.
    pub n: usize,
}

fn finite_sorted(values: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Median of the finite values (mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let v = finite_sorted(values);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// Mean after dropping one minimum and one maximum; the plain mean for fewer
/// than three values.
pub fn trimmed_mean(values: &[f64]) -> Option<f64> {
    let v = finite_sorted(values);
    let kept: &[f64] = if v.len() >= 3 { &v[1..v.len() - 1] } else { &v };
    if kept.is_empty() {
        None
    } else {
        Some(kept.iter().sum::<f64>() / kept.len() as f64)
    }
}

/// Summarises runs with the given rule.
pub fn summarize(values: &[f64], rule: Aggregation) -> Option<Summary> {
    let v = finite_sorted(values);
    let (&min, &max) = (v.first()?, v.last()?);
    let center = match rule {
        Aggregation::Median => median(&v)?,
        Aggregation::TrimmedMean => trimmed_mean(&v)?,
    };
    Some(Summary {
        center,
        min,
        max,
        n: v.len(),
    })
}

/// Shale's ops/s over a peer's: above 1 means Shale is faster. `None` when
/// either figure is missing or the peer's is zero.
pub fn ratio(shale: Option<f64>, peer: Option<f64>) -> Option<f64> {
    match (shale, peer) {
        (Some(s), Some(p)) if p > 0.0 && s.is_finite() && p.is_finite() => Some(s / p),
        _ => None,
    }
}

/// Index of the run whose value is the (lower) median, for picking one run to
/// draw over time. `None` for no values.
pub fn median_index(values: &[(usize, f64)]) -> Option<usize> {
    let mut v: Vec<(usize, f64)> = values
        .iter()
        .copied()
        .filter(|(_, x)| x.is_finite())
        .collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1));
    let n = v.len();
    if n == 0 {
        None
    } else {
        Some(v[(n - 1) / 2].0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
    }

    #[test]
    fn median_summary_keeps_min_and_max() {
        let s = summarize(&[120.0, 100.0, 300.0], Aggregation::Median).unwrap();
        assert_eq!(
            s,
            Summary {
                center: 120.0,
                min: 100.0,
                max: 300.0,
                n: 3
            }
        );
        assert_eq!(summarize(&[], Aggregation::Median), None);
    }

    #[test]
    fn wiredtiger_rule_drops_min_and_max_of_five() {
        // 1 and 100 are dropped; (10 + 20 + 30) / 3 = 20.
        let s = summarize(&[30.0, 1.0, 100.0, 10.0, 20.0], Aggregation::TrimmedMean).unwrap();
        assert_eq!(s.center, 20.0);
        assert_eq!((s.min, s.max, s.n), (1.0, 100.0, 5));
        // Only one of duplicated extremes is dropped.
        assert_eq!(trimmed_mean(&[5.0, 5.0, 5.0, 8.0, 2.0]), Some(5.0));
        assert_eq!(trimmed_mean(&[2.0, 4.0]), Some(3.0));
        assert_eq!(trimmed_mean(&[2.0, 4.0, 9.0]), Some(4.0));
        assert_eq!(trimmed_mean(&[]), None);
    }

    #[test]
    fn ratio_is_shale_over_peer() {
        assert_eq!(ratio(Some(200.0), Some(100.0)), Some(2.0));
        assert_eq!(ratio(Some(50.0), Some(100.0)), Some(0.5));
        assert_eq!(ratio(None, Some(100.0)), None);
        assert_eq!(ratio(Some(1.0), None), None);
        assert_eq!(ratio(Some(1.0), Some(0.0)), None);
    }

    #[test]
    fn median_index_picks_the_middle_run() {
        assert_eq!(median_index(&[(0, 5.0), (1, 1.0), (2, 3.0)]), Some(2));
        assert_eq!(median_index(&[(0, 5.0), (1, 1.0)]), Some(1));
        assert_eq!(median_index(&[]), None);
    }
}
