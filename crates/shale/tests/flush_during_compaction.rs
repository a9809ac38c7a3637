//! A memtable flushed while a compaction runs keeps out of the way of that
//! compaction's outputs.
//!
//! The compaction job flushes a waiting memtable between two of its entries.
//! A manual compaction takes every file of its range at its level, with the
//! gaps between them, and its output covers those gaps; a flushed table
//! whose keys fall into a gap overlaps none of the current files, so the
//! flush could place it at the compaction's output level, where the output,
//! installed afterwards, would overlap it. Reads in that level then look in
//! one file of the two and miss the flushed keys.
//!
//! The test builds that layout, parks the compaction as it creates its
//! output table, makes a memtable of keys from the gap wait for a flush,
//! and lets the compaction go on: every key must read back, before and
//! after a reopen.

#[macro_use]
mod forward_fs;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use shale::env::{FileSystem, MemFs, WritableFile};
use shale::{Db, Options};

/// Parks the first table file created after `arm` until `open`.
#[derive(Default)]
struct TableGate {
    /// (armed, closed)
    state: Mutex<(bool, bool)>,
    cv: Condvar,
    /// Set once a table creation is parked at the gate.
    parked: AtomicBool,
}

impl TableGate {
    fn arm(&self) {
        *self.state.lock().unwrap() = (true, true);
    }

    fn open(&self) {
        self.state.lock().unwrap().1 = false;
        self.cv.notify_all();
    }

    fn pass(&self) {
        let mut st = self.state.lock().unwrap();
        if !st.0 {
            return;
        }
        // Only the first creation after `arm` is parked.
        st.0 = false;
        while st.1 {
            self.parked.store(true, Ordering::SeqCst);
            st = self.cv.wait(st).unwrap();
        }
    }

    fn wait_parked(&self) {
        let start = Instant::now();
        while !self.parked.load(Ordering::SeqCst) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the compaction never created its output table"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

struct GatedFs {
    inner: MemFs,
    gate: Arc<TableGate>,
}

impl FileSystem for GatedFs {
    fn new_writable_file(&self, path: &Path) -> shale::Result<Box<dyn WritableFile>> {
        if path.extension().is_some_and(|e| e == "ldb") {
            self.gate.pass();
        }
        self.inner.new_writable_file(path)
    }
    forward_fs!(
        new_sequential_file,
        new_random_access_file,
        new_appendable_file,
        exists,
        children,
        remove_file,
        create_dir_all,
        remove_dir,
        file_size,
        rename,
        lock,
        sync_dir
    );
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn put_keys(db: &Db, model: &mut Model, prefix: &str, count: u32, value: &[u8]) {
    for i in 0..count {
        let key = format!("{prefix}{i:03}").into_bytes();
        db.put(&key, value).unwrap();
        model.insert(key, value.to_vec());
    }
}

/// Flushes the memtable: a manual compaction of a range no file covers
/// flushes first and then finds nothing to compact.
fn flush(db: &Db) {
    db.compact_range(Some(b"0"), Some(b"0")).unwrap();
}

fn files_at(db: &Db, level: usize) -> usize {
    db.property(&format!("leveldb.num-files-at-level{level}"))
        .unwrap()
        .parse()
        .unwrap()
}

fn assert_reads(db: &Db, model: &Model, when: &str) {
    for (k, v) in model {
        let got = db.get(k).unwrap();
        assert!(
            got.as_deref() == Some(&v[..]),
            "{when}: key {} reads {:?}, written: {} bytes",
            String::from_utf8_lossy(k),
            got.map(|g| format!("{} bytes", g.len())),
            v.len()
        );
    }
    let scanned: Model = db
        .iter()
        .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect::<shale::Result<_>>()
        .unwrap();
    assert!(scanned == *model, "{when}: a scan differs from the writes");
}

#[test]
fn a_table_flushed_into_a_gap_of_a_manual_compaction_stays_readable() {
    let gate = Arc::new(TableGate::default());
    let fs = Arc::new(GatedFs {
        inner: MemFs::new(),
        gate: gate.clone(),
    });
    let options = Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        fs: fs.clone(),
        ..Default::default()
    };
    let db = Arc::new(Db::open("/db", options.clone()).unwrap());
    let mut model = Model::new();
    let small = vec![b's'; 50];

    // Level 2: [a000, d000] and [w000, z099]. A flush that overlaps nothing
    // goes down to level 2.
    put_keys(&db, &mut model, "a", 100, &small);
    put_keys(&db, &mut model, "d", 1, &small);
    flush(&db);
    put_keys(&db, &mut model, "w", 1, &small);
    put_keys(&db, &mut model, "z", 100, &small);
    flush(&db);
    // Level 1: [b000, c000] and [x000, x099], each over a level-2 table,
    // with a gap between them (and below it, in level 2) around "m".
    put_keys(&db, &mut model, "b", 100, &small);
    put_keys(&db, &mut model, "c", 1, &small);
    flush(&db);
    put_keys(&db, &mut model, "x", 100, &small);
    flush(&db);
    assert_eq!(
        (files_at(&db, 0), files_at(&db, 1), files_at(&db, 2)),
        (0, 2, 2),
        "the layout the test needs"
    );

    // Compact level 1 into level 2: one output spanning a000..z099, parked
    // as its table file is created. (The memtable is empty, so the manual
    // compaction's own flush makes no table that the gate would park.)
    gate.arm();
    let compaction = {
        let db = db.clone();
        std::thread::spawn(move || db.compact_range(None, None))
    };
    gate.wait_parked();

    // Keys from the gap fill the memtable until it is switched (a new log
    // appears) and waits for its flush, which the compaction makes before
    // its next entry.
    let logs = || {
        fs.inner
            .children(Path::new("/db"))
            .unwrap()
            .iter()
            .filter(|n| n.ends_with(".log"))
            .count()
    };
    let first_logs = logs();
    let big = vec![b'm'; 1000];
    let mut n = 0u32;
    while logs() == first_logs {
        let key = format!("m{n:03}").into_bytes();
        db.put(&key, &big).unwrap();
        model.insert(key, big.clone());
        n += 1;
        assert!(n < 1000, "the memtable was never switched");
    }
    gate.open();
    compaction.join().unwrap().unwrap();
    // The compaction flushed the waiting memtable before its next entry,
    // into one table above its output: the scenario took place.
    assert_eq!(
        (files_at(&db, 0) + files_at(&db, 1), files_at(&db, 2)),
        (1, 1),
        "the flushed table above level 2, the compaction's one output in it"
    );

    assert_reads(&db, &model, "after the compaction");
    // The flushed keys are in a table now, not only in the memtable.
    flush(&db);
    assert_reads(&db, &model, "after another flush");
    drop(db);
    let db = Db::open("/db", options).unwrap();
    assert_reads(&db, &model, "after a reopen");
}
