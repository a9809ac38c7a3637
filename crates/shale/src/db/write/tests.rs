//! The write path's hand-offs, made deterministic: a test holds the log's
//! mutex to stop a leader at its log append while other writers queue, and
//! a comparator stops or fails chosen inserts.

use std::cmp::Ordering as KeyOrder;
use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Condvar;

use super::*;
use crate::comparator::Comparator;
use crate::env::MemFs;
use crate::options::Options;

/// Bytewise, with hooks keyed by the keys compared: a key starting with
/// `gate` waits while the gate is shut, a key ending with `boom` panics
/// (after the gate, if both), and the threads that compare two keys
/// starting with `c` with each other are recorded (only an insert of a `c`
/// key meets another: an insert of `b` may pass a `c` key that another
/// thread has just linked).
#[derive(Default)]
struct HookComparator {
    shut: Mutex<bool>,
    opened: Condvar,
    c_threads: Mutex<Vec<String>>,
}

impl HookComparator {
    fn shut_gate(&self) {
        *self.shut.lock() = true;
    }

    fn open_gate(&self) {
        *self.shut.lock() = false;
        self.opened.notify_all();
    }

    fn hooks(&self, key: &[u8]) {
        if key.starts_with(b"gate") {
            let mut shut = self.shut.lock();
            while *shut {
                self.opened.wait(&mut shut);
            }
        }
        if key.ends_with(b"boom") {
            panic!("the comparator met a poison key");
        }
    }

    fn record_c_pair(&self, a: &[u8], b: &[u8]) {
        if a.starts_with(b"c") && b.starts_with(b"c") {
            let name = std::thread::current().name().unwrap_or("?").to_string();
            self.c_threads.lock().push(name);
        }
    }
}

/// The comparator, shared with the test.
struct Hooks(Arc<HookComparator>);

impl Comparator for Hooks {
    fn name(&self) -> &str {
        "test.HookComparator"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> KeyOrder {
        self.0.hooks(a);
        self.0.hooks(b);
        self.0.record_c_pair(a, b);
        a.cmp(b)
    }
}

fn open(concurrent: bool) -> (Arc<Db>, Arc<HookComparator>) {
    let hooks = Arc::new(HookComparator::default());
    let options = Options {
        fs: Arc::new(MemFs::new()),
        write_buffer_size: 64 << 10,
        create_if_missing: true,
        comparator: Arc::new(Hooks(hooks.clone())),
        concurrent_memtable_writes: concurrent,
        ..Default::default()
    };
    let db = Arc::new(Db::open(Path::new("/db"), options).unwrap());
    // Something to compare the test's keys with.
    db.put(b"m", b"0").unwrap();
    (db, hooks)
}

/// Polls `cond` until it holds; fails after ten seconds.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Runs `body` on a thread; fails if it panics or hangs.
fn within_deadline(body: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        body();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the database hung"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the test body panicked"),
    }
}

/// Writes `keys` (value `v`) as one batch on a thread named `name`.
fn spawn_write(db: &Arc<Db>, name: &str, keys: &[&[u8]]) -> JoinHandle<Result<()>> {
    let db = db.clone();
    let mut batch = WriteBatch::new();
    for k in keys {
        batch.put(k, b"v").unwrap();
    }
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || db.write(&WriteOptions::default(), &batch))
        .unwrap()
}

fn queued(db: &Db) -> usize {
    db.inner.state.lock().writers.len()
}

/// Holds the log while `A` (writing `a_key`, a gate key: its insert stops
/// at the gate) takes sequence numbers and `B` (writing `b`) queues behind
/// it, then lets the log go and returns once `B` has logged and inserted
/// its group and waits for `A` to publish. Returns both writes' handles.
fn b_waiting_for_a_at_the_gate(
    db: &Arc<Db>,
    a_key: &[u8],
) -> (JoinHandle<Result<()>>, JoinHandle<Result<()>>) {
    let log = db.inner.log.lock();
    let a = spawn_write(db, "A", &[a_key]);
    wait_for("A to take sequence numbers", || {
        db.inner.state.lock().last_allocated == 2
    });
    let b = spawn_write(db, "B", &[b"b"]);
    wait_for("B to queue", || queued(db) == 1);
    drop(log);
    wait_for("B to wait for A", || {
        db.inner.state.lock().publish_waiters.len() == 1
    });
    (a, b)
}

/// Stops a leader (thread `A`, writing `a_keys`) at its log append, queues
/// `B` (writing `b_keys`) then `C` (writing `c_keys`) behind it, and lets
/// the log go: `B` leads the next group, with `C` as its member. Returns
/// the three writes' handles.
fn group_behind_a_stopped_leader(
    db: &Arc<Db>,
    a_keys: &[&[u8]],
    b_keys: &[&[u8]],
    c_keys: &[&[u8]],
) -> [JoinHandle<Result<()>>; 3] {
    let log = db.inner.log.lock();
    let a = spawn_write(db, "A", a_keys);
    wait_for("A to take sequence numbers", || {
        db.inner.state.lock().last_allocated > 1
    });
    let b = spawn_write(db, "B", b_keys);
    wait_for("B to queue", || queued(db) == 1);
    let c = spawn_write(db, "C", c_keys);
    wait_for("C to queue", || queued(db) == 2);
    drop(log);
    [a, b, c]
}

#[test]
fn who_inserts_a_members_batch() {
    for concurrent in [false, true] {
        let (db, hooks) = open(concurrent);
        let writes = group_behind_a_stopped_leader(&db, &[b"a"], &[b"b"], &[b"c1", b"c2"]);
        for w in writes {
            w.join().unwrap().unwrap();
        }
        let threads = hooks.c_threads.lock().clone();
        assert!(!threads.is_empty());
        // Off, the group's leader inserts the member's batch; on, the
        // member does.
        let inserter = if concurrent { "C" } else { "B" };
        assert!(
            threads.iter().all(|t| t == inserter),
            "concurrent {concurrent}: keys c* compared on {threads:?}"
        );
        for k in [&b"a"[..], b"b", b"c1", b"c2"] {
            assert_eq!(db.get(k).unwrap().as_deref(), Some(&b"v"[..]));
        }
        assert_eq!(db.inner.visible_sequence.load(Ordering::Acquire), 5);
    }
}

#[test]
fn a_group_is_logged_while_the_one_before_inserts_and_published_after_it() {
    within_deadline(|| {
        let (db, hooks) = open(true);
        hooks.shut_gate();
        // A's insert stops at the gate, after A's group is in the log and
        // the write path is handed on (B is queued by then); B logs and
        // inserts its group while A is still inserting, then waits for A
        // to publish.
        let (a, b) = b_waiting_for_a_at_the_gate(&db, b"gate-a");
        assert_eq!(db.inner.state.lock().last_allocated, 3);
        assert_eq!(db.inner.visible_sequence.load(Ordering::Acquire), 1);
        assert_eq!(db.get(b"b").unwrap(), None, "B is visible before A");
        assert!(
            !b.is_finished(),
            "B returned before A's group was published"
        );
        hooks.open_gate();
        a.join().unwrap().unwrap();
        b.join().unwrap().unwrap();
        assert_eq!(db.inner.visible_sequence.load(Ordering::Acquire), 3);
        assert_eq!(db.get(b"gate-a").unwrap().as_deref(), Some(&b"v"[..]));
        assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"v"[..]));
    });
}

/// The error a later write gets once the sticky error is set.
fn later_write_error(db: &Db) -> String {
    match db.put(b"later", b"x") {
        Err(Error::Background(msg)) => msg,
        other => panic!("a later write gave {other:?}"),
    }
}

#[test]
fn a_panic_in_a_members_insert_fails_its_group_and_later_writes() {
    for concurrent in [false, true] {
        within_deadline(move || {
            let (db, _hooks) = open(concurrent);
            let [a, b, c] = group_behind_a_stopped_leader(&db, &[b"a"], &[b"b"], &[b"c", b"boom"]);
            a.join().unwrap().unwrap();
            for (name, w) in [("B", b), ("C", c)] {
                match w.join().unwrap() {
                    Err(Error::Background(msg)) => assert!(msg.contains("poison"), "{msg}"),
                    other => panic!("concurrent {concurrent}: {name} gave {other:?}"),
                }
            }
            assert!(later_write_error(&db).contains("poison"));
            // A's group was published, B's never was.
            assert_eq!(db.inner.visible_sequence.load(Ordering::Acquire), 2);
            assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"v"[..]));
            assert_eq!(db.get(b"b").unwrap(), None);
        });
    }
}

#[test]
fn the_group_after_a_failed_one_fails_instead_of_waiting_for_it() {
    within_deadline(|| {
        let (db, hooks) = open(true);
        hooks.shut_gate();
        let (a, b) = b_waiting_for_a_at_the_gate(&db, b"gate-boom");
        // A's insert panics now.
        hooks.open_gate();
        for (name, w) in [("A", a), ("B", b)] {
            match w.join().unwrap() {
                Err(Error::Background(msg)) => assert!(msg.contains("poison"), "{msg}"),
                other => panic!("{name} gave {other:?}"),
            }
        }
        assert!(later_write_error(&db).contains("poison"));
        assert_eq!(db.inner.visible_sequence.load(Ordering::Acquire), 1);
        assert_eq!(db.get(b"b").unwrap(), None);
        assert!(db.inner.state.lock().publish_waiters.is_empty());
    });
}

#[test]
fn a_memtable_switch_waits_for_the_groups_in_flight() {
    within_deadline(|| {
        let (db, hooks) = open(true);
        hooks.shut_gate();
        let log = db.inner.log.lock();
        // A's value alone fills the write buffer (64 KB, the smallest):
        // it is in the memtable's arena before A's insert stops at the gate.
        let big = vec![b'x'; 100 << 10];
        let d = db.clone();
        let value = big.clone();
        let a = std::thread::Builder::new()
            .name("A".into())
            .spawn(move || d.put(b"gate-a", &value))
            .unwrap();
        wait_for("A to take sequence numbers", || {
            db.inner.state.lock().last_allocated == 2
        });
        // A leader hands the write path on before inserting only when a
        // writer is queued; the count says one is, so that A's value is in
        // the arena before B asks for room, whatever the scheduling.
        db.inner.queued_writers.store(1, Ordering::Relaxed);
        drop(log);
        wait_for("A to hand the path on and stop at the gate", || {
            let st = db.inner.state.lock();
            !st.writing && st.mem.approximate_memory_usage() > 64 << 10
        });
        db.inner.queued_writers.store(0, Ordering::Relaxed);
        let b = spawn_write(&db, "B", &[b"b"]);
        // B leads and finds the memtable full, but A still inserts into it:
        // B waits before switching, and before taking sequence numbers.
        wait_for("B to lead", || db.inner.state.lock().writing);
        std::thread::sleep(Duration::from_millis(20));
        {
            let st = db.inner.state.lock();
            assert!(st.imm.is_none(), "the memtable was switched under A");
            assert_eq!(st.last_allocated, 2);
            assert!(st.writing);
        }
        hooks.open_gate();
        a.join().unwrap().unwrap();
        b.join().unwrap().unwrap();
        assert_eq!(db.inner.visible_sequence.load(Ordering::Acquire), 3);
        assert_eq!(db.get(b"gate-a").unwrap(), Some(big));
        assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"v"[..]));
    });
}

fn no_slowdown() -> WriteOptions {
    WriteOptions {
        no_slowdown: true,
        ..Default::default()
    }
}

#[test]
fn a_write_that_must_not_wait_fails_instead_of_queueing() {
    within_deadline(|| {
        let (db, _hooks) = open(false);
        // A leads and stops at its log append: the write path is taken.
        let log = db.inner.log.lock();
        let a = spawn_write(&db, "A", &[b"a"]);
        wait_for("A to take sequence numbers", || {
            db.inner.state.lock().last_allocated == 2
        });
        match db.put_with(&no_slowdown(), b"quick", b"1") {
            Err(Error::Incomplete(why)) => assert!(why.contains("another write"), "{why}"),
            other => panic!("expected Incomplete, got {other:?}"),
        }
        assert_eq!(queued(&db), 0, "the refused write queued");
        drop(log);
        a.join().unwrap().unwrap();
        assert_eq!(db.inner.state.lock().last_allocated, 2);
        assert_eq!(db.get(b"quick").unwrap(), None);
        // With the path free, the same write goes through.
        db.put_with(&no_slowdown(), b"quick", b"1").unwrap();
        assert_eq!(db.get(b"quick").unwrap().as_deref(), Some(&b"1"[..]));
    });
}

#[test]
fn a_write_that_must_not_wait_fails_instead_of_switching_a_full_memtable() {
    within_deadline(|| {
        let (db, _hooks) = open(false);
        // One value larger than the write buffer (64 KB) fills the memtable.
        db.put_with(&no_slowdown(), b"big", &vec![b'x'; 100 << 10])
            .unwrap();
        let before = db.inner.state.lock().last_allocated;
        match db.put_with(&no_slowdown(), b"next", b"1") {
            Err(Error::Incomplete(why)) => assert!(why.contains("memtable is full"), "{why}"),
            other => panic!("expected Incomplete, got {other:?}"),
        }
        {
            let st = db.inner.state.lock();
            assert_eq!(
                st.last_allocated, before,
                "the refused write took a sequence number"
            );
            assert!(st.imm.is_none(), "the refused write switched the memtable");
            assert!(!st.writing);
        }
        assert_eq!(db.get(b"next").unwrap(), None);
        // A write that may wait switches the memtable; then there is room.
        db.put(b"next", b"1").unwrap();
        db.put_with(&no_slowdown(), b"after", b"2").unwrap();
        assert_eq!(db.get(b"next").unwrap().as_deref(), Some(&b"1"[..]));
        assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"2"[..]));
    });
}
