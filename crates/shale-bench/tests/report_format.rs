//! db_bench's output: the result line and the latency histogram.

use shale_bench::histogram::Histogram;
use shale_bench::stats::{format_line, parse_line};

#[test]
fn result_line_matches_db_bench_exactly() {
    assert_eq!(
        format_line("fillseq", 1.765, Some(62.7), ""),
        "fillseq      :       1.765 micros/op;   62.7 MB/s"
    );
    assert_eq!(
        format_line("fillsync", 6148.125, Some(0.018), "(1000 ops)"),
        "fillsync     :    6148.125 micros/op;    0.0 MB/s (1000 ops)"
    );
    assert_eq!(
        format_line("readrandom", 4.5, None, "(632 of 1000 found)"),
        "readrandom   :       4.500 micros/op; (632 of 1000 found)"
    );
    assert_eq!(
        format_line("snappycomp", 2.75, Some(1420.0), "(output: 55.1%)"),
        "snappycomp   :       2.750 micros/op; 1420.0 MB/s (output: 55.1%)"
    );
}

#[test]
fn result_lines_parse_back() {
    let p = parse_line(&format_line("readrandom", 4.5, None, "(632 of 1000 found)")).unwrap();
    assert_eq!(p.name, "readrandom");
    assert_eq!(p.micros_per_op, 4.5);
    assert_eq!(p.mb_per_sec, None);
    assert_eq!(p.message, "(632 of 1000 found)");
}

/// The values 1..=100, once each. Worked by hand from the bucket limits
/// (1, 2, ..., 10, 12, ..., 20, 25, ..., 50, 60, ..., 100, 120, ...):
/// * P50: 49 values lie below 50; bucket [50, 60) holds 10, so the 50th
///   value is 1/10 into it: 50 + 10 * 0.1 = 51.
/// * P75: 69 below 70; [70, 80) holds 10: 70 + 10 * 0.6 = 76.
/// * P99: 89 below 90; [90, 100) holds 10: 90 + 10 * 1.0 = 100.
/// * P99.9: the value 100 alone in [100, 120): 100 + 20 * 0.9 = 118,
///   clamped to the maximum 100.
#[test]
fn percentiles_interpolate_inside_buckets() {
    let mut h = Histogram::new();
    for v in 1..=100 {
        h.add(f64::from(v));
    }
    assert_eq!(h.count(), 100);
    assert_eq!(h.median(), 51.0);
    assert_eq!(h.percentile(75.0), 76.0);
    assert_eq!(h.percentile(99.0), 100.0);
    assert_eq!(h.percentile(99.9), 100.0);
    assert_eq!(h.min(), 1.0);
    assert_eq!(h.max(), 100.0);
    assert_eq!(h.average(), 50.5);
    // Population standard deviation of 1..=n is sqrt((n^2 - 1) / 12).
    assert!((h.standard_deviation() - (9999.0f64 / 12.0).sqrt()).abs() < 1e-9);

    let text = h.to_text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Count: 100  Average: 50.5000  StdDev: 28.87");
    assert_eq!(lines[1], "Min: 1.0000  Median: 51.0000  Max: 100.0000");
    assert_eq!(
        lines[2],
        "Percentiles: P50: 51.00 P75: 76.00 P99: 100.00 P99.9: 100.00 P99.99: 100.00"
    );
    assert_eq!(
        lines[3],
        "------------------------------------------------------"
    );
    assert_eq!(lines[4], "[       1,       2 )       1   1.000%   1.000% ");
    // [50, 60) holds 10% of the values: two hash marks.
    assert!(text.contains("[      50,      60 )      10  10.000%  59.000% ##\n"));
}

#[test]
fn merged_histograms_count_both() {
    let mut a = Histogram::new();
    let mut b = Histogram::new();
    a.add(3.0);
    b.add(300.0);
    b.add(5000.0);
    a.merge(&b);
    assert_eq!(a.count(), 3);
    assert_eq!(a.min(), 3.0);
    assert_eq!(a.max(), 5000.0);
    assert_eq!(a.median(), 300.0 + (350.0 - 300.0) * 0.5);
}

#[test]
fn empty_histogram_reports_zeros() {
    let h = Histogram::new();
    assert_eq!(h.count(), 0);
    assert_eq!(h.average(), 0.0);
    assert_eq!(h.standard_deviation(), 0.0);
    assert_eq!(h.min(), 0.0);
}
