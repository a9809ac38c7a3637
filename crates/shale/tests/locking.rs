//! The `LOCK` file keeps every other opener out of an open database: a
//! second `Db::open` from another process, a program that locks the file
//! the way LevelDB does (an `fcntl` write lock on the whole file), and a
//! second open from this process under another spelling of the directory.
//! The lock belongs to the process that opened the database: a child it
//! forks does not inherit it (so closing and reopening works while children
//! run), and nothing else the process does with the directory releases it.
//!
//! The cross-process checks run this test binary again as a child process,
//! told what to try through environment variables; its exit status is the
//! answer.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;

use shale::{Db, Options};

const CHILD_DIR: &str = "SHALE_LOCK_CHILD_DIR";
const CHILD_MODE: &str = "SHALE_LOCK_CHILD_MODE";

/// Exit statuses of the child.
const REFUSED: i32 = 10;
const GRANTED: i32 = 11;
const UNCLEAR: i32 = 12;

fn options() -> Options {
    Options {
        create_if_missing: true,
        ..Default::default()
    }
}

/// Tries to take an `fcntl` write lock on the whole of `path`, as LevelDB
/// does: true if granted.
fn fcntl_lock_granted(path: &Path) -> bool {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .expect("open LOCK");
    // SAFETY: `flock` is a plain C struct; all-zero bytes are a valid value.
    let mut request: libc::flock = unsafe { std::mem::zeroed() };
    request.l_type = libc::F_WRLCK as libc::c_short;
    request.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: the descriptor is open and `request` outlives the call.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &request) == 0 }
}

/// The child's side: tries what `mode` says on the database in `dir` and
/// exits with the outcome.
fn child(dir: &Path, mode: &str) -> ! {
    let code = match mode {
        "open" => match Db::open(dir, options()) {
            Ok(_) => GRANTED,
            Err(e) if e.to_string().contains("LOCK") => REFUSED,
            Err(e) => {
                eprintln!("child open failed without naming LOCK: {e}");
                UNCLEAR
            }
        },
        "fcntl" => {
            if fcntl_lock_granted(&dir.join("LOCK")) {
                GRANTED
            } else {
                REFUSED
            }
        }
        "fork-relock" => fork_relock(dir),
        other => panic!("unknown child mode {other}"),
    };
    std::process::exit(code);
}

/// Runs test `name` of this binary as a child that tries `mode` on `dir`.
fn run_child(name: &str, dir: &Path, mode: &str) -> i32 {
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR, dir)
        .env(CHILD_MODE, mode)
        .status()
        .unwrap();
    status.code().expect("the child exited")
}

fn child_request() -> Option<(PathBuf, String)> {
    let dir = std::env::var_os(CHILD_DIR)?;
    let mode = std::env::var(CHILD_MODE).ok()?;
    Some((PathBuf::from(dir), mode))
}

/// In a child started by [`run_child`], does what it was asked and exits;
/// in the test process itself, returns.
fn serve_child_request() {
    if let Some((dir, mode)) = child_request() {
        child(&dir, &mode);
    }
}

/// A new database in a temporary directory (kept while the guard lives).
fn open_fresh() -> (tempfile::TempDir, PathBuf, Db) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = Db::open(&dir, options()).unwrap();
    (tmp, dir, db)
}

#[test]
fn another_process_cannot_open_a_locked_database() {
    const NAME: &str = "another_process_cannot_open_a_locked_database";
    serve_child_request();
    let (_tmp, dir, db) = open_fresh();
    db.put(b"k", b"v").unwrap();
    assert_eq!(run_child(NAME, &dir, "open"), REFUSED, "second Shale open");
    drop(db);
    assert_eq!(run_child(NAME, &dir, "open"), GRANTED, "open after close");
}

#[test]
fn the_lock_is_the_one_leveldb_takes() {
    const NAME: &str = "the_lock_is_the_one_leveldb_takes";
    serve_child_request();
    let (_tmp, dir, db) = open_fresh();
    assert_eq!(
        run_child(NAME, &dir, "fcntl"),
        REFUSED,
        "an fcntl write lock on LOCK was granted while the database is open"
    );
    drop(db);
    assert_eq!(run_child(NAME, &dir, "fcntl"), GRANTED, "after close");

    // A LevelDB-style holder keeps Shale out, too.
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.join("LOCK"))
        .unwrap();
    // The parent holds the fcntl lock now; the child must be refused.
    // SAFETY: as in `fcntl_lock_granted`.
    let mut request: libc::flock = unsafe { std::mem::zeroed() };
    request.l_type = libc::F_WRLCK as libc::c_short;
    request.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: the descriptor is open and `request` outlives the call.
    assert_eq!(
        unsafe { libc::fcntl(lock.as_raw_fd(), libc::F_SETLK, &request) },
        0
    );
    assert_eq!(run_child(NAME, &dir, "open"), REFUSED, "open under fcntl");
    drop(lock);
    assert_eq!(run_child(NAME, &dir, "open"), GRANTED, "open after unlock");
}

#[test]
fn a_second_open_under_another_spelling_of_the_directory_fails() {
    const NAME: &str = "a_second_open_under_another_spelling_of_the_directory_fails";
    serve_child_request();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir_all(&dir).unwrap();
    // The first open names the directory through `..`, before LOCK exists.
    let roundabout = dir.join("..").join("db");
    let db = Db::open(&roundabout, options()).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    for spelling in [dir.clone(), roundabout.clone(), link] {
        match Db::open(&spelling, options()) {
            Ok(_) => panic!("{} opened twice", spelling.display()),
            Err(e) => assert!(e.to_string().contains("LOCK"), "{e}"),
        }
    }
    // The refused opens did not release the lock the first one holds.
    assert_eq!(run_child(NAME, &dir, "open"), REFUSED);
    assert_eq!(run_child(NAME, &dir, "fcntl"), REFUSED);
    drop(db);
    Db::open(&dir, options()).unwrap();
}

/// A child forked from this (multi-threaded) process that does nothing but
/// sleep: between `fork` and `exec` a child holds copies of every descriptor
/// of its parent, and a child that never execs holds them for its lifetime.
/// Dropping this kills and reaps the child.
struct Forked(libc::pid_t);

impl Forked {
    fn sleeper() -> Forked {
        // Built before the fork: the child makes only async-signal-safe
        // calls (`nanosleep`, `_exit`) on memory it already has.
        let nap = libc::timespec {
            tv_sec: 120,
            tv_nsec: 0,
        };
        // SAFETY: the child calls only async-signal-safe functions and
        // never returns into Rust code; the parent gets a valid pid or -1.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: `nap` is a valid timespec; `_exit` ends the child
            // without running the parent's destructors or exit handlers.
            unsafe {
                libc::nanosleep(&nap, std::ptr::null_mut());
                libc::_exit(0);
            }
        }
        assert!(pid > 0, "fork: {}", std::io::Error::last_os_error());
        Forked(pid)
    }

    fn alive(&self) -> bool {
        let mut status = 0;
        // SAFETY: `status` is a valid place for the child's status.
        unsafe { libc::waitpid(self.0, &mut status, libc::WNOHANG) == 0 }
    }
}

impl Drop for Forked {
    fn drop(&mut self) {
        let mut status = 0;
        // SAFETY: the pid is our own child, not yet reaped (`alive` reaps
        // only a child that has exited, and then `kill` fails harmlessly).
        unsafe {
            libc::kill(self.0, libc::SIGKILL);
            libc::waitpid(self.0, &mut status, 0);
        }
    }
}

#[test]
fn a_forked_child_does_not_keep_the_lock() {
    const NAME: &str = "a_forked_child_does_not_keep_the_lock";
    serve_child_request();
    let (_tmp, dir, db) = open_fresh();
    db.put(b"k", b"v").unwrap();
    let forked = Forked::sleeper();
    drop(db);
    // The child still holds a copy of every descriptor the database had.
    let db = Db::open(&dir, options()).expect("reopen while a forked child lives");
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    assert!(forked.alive(), "the forked child ended too soon");
    // The reopened database holds the lock against other processes.
    assert_eq!(run_child(NAME, &dir, "open"), REFUSED, "Shale open");
    assert_eq!(run_child(NAME, &dir, "fcntl"), REFUSED, "fcntl lock");
    assert!(forked.alive(), "the forked child ended too soon");
    // The child holds no lock of its own once the database is closed.
    drop(db);
    assert_eq!(run_child(NAME, &dir, "fcntl"), GRANTED, "after close");
    assert_eq!(run_child(NAME, &dir, "open"), GRANTED, "after close");
    assert!(forked.alive(), "the forked child ended too soon");
}

#[test]
fn opens_and_tools_in_the_same_process_leave_the_lock_held() {
    const NAME: &str = "opens_and_tools_in_the_same_process_leave_the_lock_held";
    serve_child_request();
    let (_tmp, dir, db) = open_fresh();
    db.put(b"k", b"v").unwrap();

    // A read-only open takes no lock and must not release this one.
    let reader = Db::open_read_only(&dir, options()).unwrap();
    assert_eq!(reader.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    drop(reader);
    // Refused: a second open, a repair, a destroy.
    let refused = [
        ("open", Db::open(&dir, options()).map(drop)),
        ("repair", shale::repair(&dir, &options()).map(drop)),
        ("destroy", shale::destroy(&dir, &options())),
    ];
    for (what, result) in refused {
        match result {
            Ok(()) => panic!("{what} went ahead while the database is open"),
            Err(e) => assert!(e.to_string().contains("LOCK"), "{what}: {e}"),
        }
    }
    assert_eq!(run_child(NAME, &dir, "fcntl"), REFUSED, "fcntl lock");
    assert_eq!(run_child(NAME, &dir, "open"), REFUSED, "Shale open");
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    drop(db);
    assert_eq!(run_child(NAME, &dir, "open"), GRANTED, "after close");
}

/// A one-way signal between two processes: a pipe carrying one byte.
struct Signal([libc::c_int; 2]);

impl Signal {
    fn new() -> Signal {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors `pipe` writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        Signal(fds)
    }

    fn send(&self) {
        let byte = 1u8;
        // SAFETY: an open pipe end and one readable byte.
        assert_eq!(
            unsafe { libc::write(self.0[1], (&raw const byte).cast(), 1) },
            1
        );
    }

    fn wait(&self) {
        let mut byte = 0u8;
        // SAFETY: an open pipe end and one writable byte.
        assert_eq!(
            unsafe { libc::read(self.0[0], (&raw mut byte).cast(), 1) },
            1
        );
    }
}

/// Whether `result` is a lock refused because another process holds it.
fn refused_by_another_process<T>(result: &shale::Result<T>) -> bool {
    matches!(result, Err(e) if e.to_string().contains("another process"))
}

/// The child's side of `a_child_forked_under_a_lock_can_lock_once_the_parent_lets_go`.
/// This process locks `dir/LOCK` and forks. The forked process tries to
/// lock it while this one holds it (refused), and again once this one has
/// let go (granted); then it drops its inherited copy of this process's
/// lock, which must not release its own: this process is refused after
/// that. The answer is GRANTED if all went so.
///
/// This runs in a child process of its own, so that no other test's thread
/// holds a lock of the engine at the fork; the forked process calls into
/// the engine (no exec), as a forked worker process would.
fn fork_relock(dir: &Path) -> i32 {
    use shale::env::{FileSystem, PosixFs};
    let fs = PosixFs::new();
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("LOCK");
    let held = fs.lock(&path).unwrap();
    let tried = Signal::new();
    let released = Signal::new();
    let copy_dropped = Signal::new();
    let checked = Signal::new();
    // SAFETY: see the function comment; the forked process ends in `_exit`.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let before = fs.lock(&path);
        let refused_before = refused_by_another_process(&before);
        if !refused_before {
            eprintln!("while the parent holds the lock: {:?}", before.map(drop));
        }
        tried.send();
        released.wait();
        let after = fs.lock(&path);
        if let Err(e) = &after {
            eprintln!("after the parent let go: {e}");
        }
        drop(held);
        copy_dropped.send();
        checked.wait();
        let code = match (refused_before, after.is_ok()) {
            (true, true) => GRANTED,
            (true, false) => REFUSED,
            (false, _) => UNCLEAR,
        };
        // SAFETY: ends the forked process at once (its lock with it),
        // without unwinding into the test harness it copied.
        unsafe { libc::_exit(code) }
    }
    assert!(pid > 0, "fork: {}", std::io::Error::last_os_error());
    tried.wait();
    drop(held);
    released.send();
    copy_dropped.wait();
    let again = fs.lock(&path);
    let still_held = refused_by_another_process(&again);
    if !still_held {
        eprintln!(
            "the forked process dropped its copy of the parent's lock: {:?}",
            again.map(drop)
        );
    }
    checked.send();
    let mut status = 0;
    // SAFETY: `status` is a valid place for the child's status.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    match (libc::WIFEXITED(status), still_held) {
        (true, true) => libc::WEXITSTATUS(status),
        _ => UNCLEAR,
    }
}

#[test]
fn a_child_forked_under_a_lock_can_lock_once_the_parent_lets_go() {
    const NAME: &str = "a_child_forked_under_a_lock_can_lock_once_the_parent_lets_go";
    serve_child_request();
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(
        run_child(NAME, &tmp.path().join("db"), "fork-relock"),
        GRANTED
    );
}
