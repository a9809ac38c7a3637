//! Writers and readers go on while the background thread waits for the
//! MANIFEST to reach the disk: the fdatasync of a version edit runs without
//! the database mutex.

#[macro_use]
mod forward_fs;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use shale::env::{FileSystem, MemFs, WritableFile};
use shale::{Db, Options};

/// A gate that MANIFEST syncs wait at while it is closed.
#[derive(Default)]
struct Gate {
    closed: Mutex<bool>,
    cv: Condvar,
    /// Set once a sync is waiting at the closed gate.
    waiting: AtomicBool,
}

impl Gate {
    fn pass(&self) {
        let mut closed = self.closed.lock().unwrap();
        while *closed {
            self.waiting.store(true, Ordering::SeqCst);
            closed = self.cv.wait(closed).unwrap();
        }
    }

    fn set(&self, closed: bool) {
        *self.closed.lock().unwrap() = closed;
        self.cv.notify_all();
    }
}

/// `MemFs` whose MANIFEST files sync only when the gate lets them.
struct GatedFs {
    inner: MemFs,
    gate: Arc<Gate>,
}

struct GatedFile {
    inner: Box<dyn WritableFile>,
    gate: Arc<Gate>,
}

impl WritableFile for GatedFile {
    fn append(&mut self, data: &[u8]) -> shale::Result<()> {
        self.inner.append(data)
    }
    fn flush(&mut self) -> shale::Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> shale::Result<()> {
        self.gate.pass();
        self.inner.sync()
    }
    fn close(&mut self) -> shale::Result<()> {
        self.inner.close()
    }
}

impl FileSystem for GatedFs {
    fn new_writable_file(&self, path: &Path) -> shale::Result<Box<dyn WritableFile>> {
        let inner = self.inner.new_writable_file(path)?;
        let manifest = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("MANIFEST"));
        Ok(if manifest {
            Box::new(GatedFile {
                inner,
                gate: self.gate.clone(),
            })
        } else {
            inner
        })
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

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// A new database with a 64 KB write buffer on a `GatedFs` (gate open).
fn open_gated() -> (Arc<Gate>, Arc<GatedFs>, Arc<Db>) {
    let gate = Arc::new(Gate::default());
    let fs = Arc::new(GatedFs {
        inner: MemFs::new(),
        gate: gate.clone(),
    });
    let db = Arc::new(
        Db::open(
            "/db",
            Options {
                create_if_missing: true,
                write_buffer_size: 64 << 10,
                fs: fs.clone(),
                ..Default::default()
            },
        )
        .unwrap(),
    );
    (gate, fs, db)
}

#[test]
fn writes_and_reads_go_on_during_a_manifest_sync() {
    let (gate, fs, db) = open_gated();

    // Fill the memtable until it is switched for a fresh one (a new log
    // appears) and its flush is due; the flush's version edit then waits at
    // the closed gate. Writing stops at the switch, so that the fresh
    // memtable has room however slow the flush is.
    gate.set(true);
    let logs = || {
        fs.inner
            .children(Path::new("/db"))
            .unwrap()
            .iter()
            .filter(|n| n.ends_with(".log"))
            .count()
    };
    let first_logs = logs();
    let value = vec![b'v'; 1000];
    let mut n = 0;
    while logs() == first_logs {
        db.put(&key(n), &value).unwrap();
        n += 1;
        assert!(n < 10_000, "the memtable was never switched");
    }
    let mut waited = 0;
    while !gate.waiting.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
        waited += 1;
        assert!(waited < 60_000, "no flush reached the MANIFEST");
    }

    // With the flush parked in its MANIFEST sync, a few more writes (which
    // fit the fresh memtable) and reads must complete.
    let (tx, rx) = mpsc::channel();
    let worker = {
        let db = db.clone();
        std::thread::spawn(move || {
            for i in 0..20 {
                db.put(&key(1_000_000 + i), b"during").unwrap();
            }
            let seen = db.get(&key(1_000_005)).unwrap();
            let old = db.get(&key(0)).unwrap();
            tx.send((seen, old)).unwrap();
        })
    };
    let outcome = rx.recv_timeout(Duration::from_secs(20));
    gate.set(false);
    worker.join().unwrap();
    let (seen, old) = outcome.expect("writers were blocked by the MANIFEST sync");
    assert_eq!(seen.as_deref(), Some(&b"during"[..]));
    assert_eq!(old.as_deref(), Some(&value[..]));

    // Everything is there, before and after a reopen.
    for i in 0..n {
        assert_eq!(db.get(&key(i)).unwrap().as_deref(), Some(&value[..]));
    }
    drop(db);
    let db = Db::open(
        "/db",
        Options {
            fs,
            ..Default::default()
        },
    )
    .unwrap();
    for i in 0..n {
        assert_eq!(
            db.get(&key(i)).unwrap().as_deref(),
            Some(&value[..]),
            "key {i}"
        );
    }
    for i in 0..20 {
        assert_eq!(
            db.get(&key(1_000_000 + i)).unwrap().as_deref(),
            Some(&b"during"[..])
        );
    }
}

/// The `(waits, microseconds)` of one cause in `shale.write-stalls`.
fn stalls(db: &Db, cause: &str) -> (u64, u64) {
    let text = db.property("shale.write-stalls").unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(cause)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("no '{cause}' in {text:?}"));
    let (waits, micros) = line.split_once(" waits, ").unwrap();
    (
        waits.parse().unwrap(),
        micros.strip_suffix(" us").unwrap().parse().unwrap(),
    )
}

#[test]
fn a_writer_waiting_for_a_flush_is_counted_as_a_stall() {
    let (gate, _fs, db) = open_gated();
    assert_eq!(stalls(&db, "memtable flush"), (0, 0));

    // The first value fills the memtable; the second write switches it, and
    // its flush parks at the closed gate.
    gate.set(true);
    let value = vec![b'v'; 100 << 10];
    db.put(b"a", &value).unwrap();
    db.put(b"b", &value).unwrap();
    let mut waited = 0;
    while !gate.waiting.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
        waited += 1;
        assert!(waited < 60_000, "no flush reached the MANIFEST");
    }
    // The fresh memtable is full too: the next write waits for the flush,
    // until the gate opens 50 ms from now.
    let opener = {
        let gate = gate.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            gate.set(false);
        })
    };
    let start = std::time::Instant::now();
    db.put(b"c", b"1").unwrap();
    let took = start.elapsed();
    opener.join().unwrap();

    let (waits, micros) = stalls(&db, "memtable flush");
    assert_eq!(waits, 1);
    // Most of the write's time was that wait.
    assert!(micros >= 20_000, "{micros} us");
    assert!(micros <= took.as_micros() as u64, "{micros} us of {took:?}");
    assert_eq!(stalls(&db, "level-0 stop"), (0, 0));
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"1"[..]));
}
