//! A panic in a write or in background work, and a failed log append, stop
//! writes with an error that names the cause (also readable through the
//! `shale.background-error` property) instead of hanging the writers; reads
//! go on.
//!
//! Each test body runs on its own thread under a deadline, so that a hang
//! fails the test instead of blocking it, once with the default write path
//! and once with `concurrent_memtable_writes`. (A panic in a member's
//! insert, and in a group that a later group waits for, are tested in
//! `db/write/tests.rs`, which can hold a leader at its log append.)

#[macro_use]
mod forward_fs;

use std::cmp::Ordering;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use shale::env::{FileSystem, MemFs, WritableFile};
use shale::{BloomFilterPolicy, Comparator, Db, Error, FilterPolicy, Options, WriteOptions};

/// Runs `body` on a thread; fails if it panics or takes longer than the deadline.
fn within_deadline(body: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        body();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the database hung"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the test body panicked"),
    }
}

const POISON: &[u8] = b"boom";

/// Bytewise, but panics when it meets the poison key.
struct PanickyComparator;

impl Comparator for PanickyComparator {
    fn name(&self) -> &str {
        "test.PanickyComparator"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        if a == POISON || b == POISON {
            panic!("the comparator met the poison key");
        }
        a.cmp(b)
    }
}

/// A bloom filter that panics when asked to cover the poison key.
struct PanickyFilter(BloomFilterPolicy);

impl FilterPolicy for PanickyFilter {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        if keys.contains(&POISON) {
            panic!("the filter policy met the poison key");
        }
        self.0.create_filter(keys, dst)
    }
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        self.0.key_may_match(key, filter)
    }
}

fn mem_options(concurrent_memtable_writes: bool) -> Options {
    Options {
        fs: Arc::new(MemFs::new()),
        create_if_missing: true,
        concurrent_memtable_writes,
        ..Default::default()
    }
}

fn background_error(db: &Db) -> String {
    db.property("shale.background-error")
        .expect("the property exists")
}

/// Later writes, single and grouped, fail promptly with an error naming `cause`.
fn writes_fail_naming(db: &Arc<Db>, cause: &str) {
    match db.put(b"later", b"x") {
        Err(Error::Background(msg)) => assert!(msg.contains(cause), "{msg}"),
        other => panic!("a later write gave {other:?}"),
    }
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let db = db.clone();
            std::thread::spawn(move || {
                db.put_with(
                    &WriteOptions {
                        sync: i % 2 == 0,
                        ..Default::default()
                    },
                    b"later",
                    b"x",
                )
                .is_err()
            })
        })
        .collect();
    for t in threads {
        assert!(t.join().unwrap(), "a concurrent later write succeeded");
    }
    assert!(
        background_error(db).contains(cause),
        "{}",
        background_error(db)
    );
}

#[test]
fn a_panic_in_a_write_fails_it_and_later_writes_without_hanging() {
    for concurrent in [false, true] {
        within_deadline(move || {
            let options = Options {
                comparator: Arc::new(PanickyComparator),
                ..mem_options(concurrent)
            };
            let db = Arc::new(Db::open(Path::new("/db"), options).unwrap());
            db.put(b"a", b"1").unwrap();
            db.put(b"c", b"3").unwrap();
            let poisoned =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.put(POISON, b"2")))
                    .expect("the panic reached the caller");
            match poisoned {
                Err(Error::Background(msg)) => assert!(msg.contains("poison"), "{msg}"),
                other => panic!("the poisoned write gave {other:?}"),
            }
            writes_fail_naming(&db, "poison");
            assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
            assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"3"[..]));
        });
    }
}

#[test]
fn a_panic_in_background_work_stops_writes_without_hanging() {
    for concurrent in [false, true] {
        within_deadline(move || {
            let options = Options {
                filter_policy: Some(Arc::new(PanickyFilter(BloomFilterPolicy::new(10)))),
                ..mem_options(concurrent)
            };
            let db = Arc::new(Db::open(Path::new("/db"), options).unwrap());
            db.put(b"a", b"1").unwrap();
            db.put(POISON, b"2").unwrap();
            // The flush builds a table, whose filter covers the poison key.
            match db.compact_range(None, None) {
                Err(Error::Background(msg)) => assert!(msg.contains("poison"), "{msg}"),
                other => panic!("the compaction gave {other:?}"),
            }
            writes_fail_naming(&db, "poison");
            assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
            assert_eq!(db.get(POISON).unwrap().as_deref(), Some(&b"2"[..]));
        });
    }
}

/// `MemFs` whose log files refuse appends once `fail` is set.
struct FailingLogFs {
    inner: MemFs,
    fail: Arc<AtomicBool>,
}

struct FailingLog {
    inner: Box<dyn WritableFile>,
    fail: Arc<AtomicBool>,
}

impl WritableFile for FailingLog {
    fn append(&mut self, data: &[u8]) -> shale::Result<()> {
        if self.fail.load(AtomicOrdering::SeqCst) {
            return Err(Error::Io {
                path: "log".into(),
                source: std::io::Error::other("injected append failure"),
            });
        }
        self.inner.append(data)
    }
    fn flush(&mut self) -> shale::Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> shale::Result<()> {
        self.inner.sync()
    }
    fn close(&mut self) -> shale::Result<()> {
        self.inner.close()
    }
}

impl FileSystem for FailingLogFs {
    fn new_log_file(&self, path: &Path) -> shale::Result<Box<dyn WritableFile>> {
        Ok(Box::new(FailingLog {
            inner: self.inner.new_log_file(path)?,
            fail: self.fail.clone(),
        }))
    }
    forward_fs!(
        new_sequential_file,
        new_random_access_file,
        new_writable_file,
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

#[test]
fn a_failed_log_append_stops_later_writes() {
    for concurrent in [false, true] {
        within_deadline(move || {
            let fail = Arc::new(AtomicBool::new(false));
            let options = Options {
                fs: Arc::new(FailingLogFs {
                    inner: MemFs::new(),
                    fail: fail.clone(),
                }),
                create_if_missing: true,
                concurrent_memtable_writes: concurrent,
                ..Default::default()
            };
            let db = Arc::new(Db::open(Path::new("/db"), options).unwrap());
            db.put(b"a", b"1").unwrap();
            fail.store(true, AtomicOrdering::SeqCst);
            // A write without sync: its failure is sticky all the same.
            assert!(db.put(b"b", b"2").is_err());
            fail.store(false, AtomicOrdering::SeqCst);
            writes_fail_naming(&db, "injected append failure");
            // Not even a switch to a new log (and a flush) lets writes in again.
            assert!(db.compact_range(None, None).is_err());
            assert!(db.put(b"c", b"3").is_err());
            assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
            assert_eq!(db.get(b"b").unwrap(), None);
        });
    }
}
