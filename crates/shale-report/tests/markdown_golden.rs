//! Markdown rendering of a small, known result set, compared with golden text;
//! and the ratio columns.

use shale_report::markdown::render_table;
use shale_report::stats::Summary;
use shale_report::tables::{Cell, Resources, Row, Table};

fn sum(center: f64, min: f64, max: f64, n: usize) -> Summary {
    Summary {
        center,
        min,
        max,
        n,
    }
}

fn value(center: f64, min: f64, max: f64, n: usize) -> Cell {
    Cell::Value {
        ops: sum(center, min, max, n),
        planned: 3,
        stopped: vec![],
    }
}

const LONG_FAILURE: &str = "failed: unreadable db_bench output, line 9: `x` is not a micros/op figure: \"readrandom : x micros/op;\"";

fn known_table() -> Table {
    let res = |wa: Option<f64>, size: f64, rss_kb: f64| {
        Some(Resources {
            write_amp: wa.map(|w| sum(w, w, w, 3)),
            db_size: Some(sum(size, size, size, 3)),
            peak_rss_kb: Some(sum(rss_kb, rss_kb, rss_kb, 3)),
        })
    };
    Table {
        id: "baseline".into(),
        title: "1. Baseline performance".into(),
        note: "Known figures.".into(),
        engines: vec!["shale", "leveldb", "kyoto-treedb"],
        rows: vec![
            Row {
                label: "Sequential writes (fillseq)".into(),
                cells: vec![
                    value(1_000_000.0, 900_000.0, 1_100_000.0, 3),
                    value(500_000.0, 500_000.0, 500_000.0, 1),
                    Cell::NotAvailable("Kyoto TreeDB has no batch writes".into()),
                ],
                resources: vec![
                    res(Some(2.5), 64.0 * 1048576.0, 40960.0),
                    res(Some(3.0), 70.0 * 1048576.0, 51200.0),
                    None,
                ],
            },
            Row {
                label: "Random reads (readrandom)".into(),
                cells: vec![
                    value(250_000.0, 250_000.0, 250_000.0, 3),
                    Cell::NotAvailable(LONG_FAILURE.into()),
                    value(125_000.0, 120_000.0, 130_000.0, 3),
                ],
                resources: vec![
                    res(None, 64.0 * 1048576.0, 40960.0),
                    None,
                    res(None, 100.0 * 1048576.0, 10240.0),
                ],
            },
        ],
        over_time: vec![],
    }
}

const GOLDEN: &str = r#"## 1. Baseline performance

Known figures.

| workload (ops/s) | shale | leveldb | kyoto-treedb | shale/leveldb | shale/kyoto-treedb |
|---|--:|--:|--:|--:|--:|
| Sequential writes (fillseq) | 1,000,000 (900,000–1,100,000) | 500,000 [1 of 3 runs] | n/a: Kyoto TreeDB has no batch writes | 2.00 | n/a |
| Random reads (readrandom) | 250,000 | n/a: failed [note 1] | 125,000 (120,000–130,000) | n/a | 2.00 |

Notes:

1. failed: unreadable db_bench output, line 9: `x` is not a micros/op figure: "readrandom : x micros/op;"

Write amplification (device bytes written ÷ user bytes written; — for reads) · space on disk after the benchmark · peak RSS of the db_bench process:

| workload | shale | leveldb | kyoto-treedb |
|---|--:|--:|--:|
| Sequential writes (fillseq) | 2.50× · 64.0 MiB · 40.0 MiB | 3.00× · 70.0 MiB · 50.0 MiB | n/a |
| Random reads (readrandom) | — · 64.0 MiB · 40.0 MiB | n/a | — · 100.0 MiB · 10.0 MiB |
"#;

#[test]
fn table_matches_golden_text() {
    let got = render_table(&known_table());
    if got != GOLDEN {
        panic!("rendered table differs from the golden text:\n--- got\n{got}\n--- want\n{GOLDEN}");
    }
}

#[test]
fn ratio_columns_are_shale_over_each_peer() {
    let t = known_table();
    let r0 = t.rows[0].ratios(&t.engines);
    assert_eq!(r0, vec![("leveldb", Some(2.0)), ("kyoto-treedb", None)]);
    let r1 = t.rows[1].ratios(&t.engines);
    assert_eq!(r1, vec![("leveldb", None), ("kyoto-treedb", Some(2.0))]);
    // Without shale in the table there are no ratio columns.
    let peers_only = vec!["leveldb", "kyoto-treedb"];
    let row = Row {
        cells: t.rows[0].cells[1..].to_vec(),
        resources: vec![None, None],
        label: "x".into(),
    };
    assert!(row.ratios(&peers_only).is_empty());
}
