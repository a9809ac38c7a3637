//! SQLite 3 (the installed library), configured as LevelDB's
//! db_bench_sqlite3: one table `test (key blob, value blob, PRIMARY KEY(key))
//! WITHOUT ROWID` in `<db>/sqlite3.db`, page size 1024, a page cache of
//! `--cache_size` bytes (4096 pages = 4 MB by default), WAL journal with
//! `wal_autocheckpoint=4096`, `locking_mode=EXCLUSIVE`, `synchronous=OFF`
//! (`FULL` for synchronous writes), `REPLACE INTO` for puts, batches inside
//! one transaction, and a full WAL checkpoint at the end of each write
//! benchmark (inside its timing, as db_bench_sqlite3 does).
//!
//! All statements run on one connection, guarded by a mutex: SQLite
//! connections are not for concurrent use, and exclusive locking rules out a
//! connection per thread. An iterator holds the lock while it lives.

use std::ffi::c_void;
use std::os::raw::{c_char, c_int};
use std::ptr;
use std::sync::{Mutex, MutexGuard};

use super::util::{self, setting};
use crate::engine::{
    Batch, BatchOp, Engine, EngineConfig, EngineIter, EngineKind, Error, Result, Session,
};

#[allow(non_camel_case_types)]
mod ffi {
    use std::ffi::c_void;
    use std::os::raw::{c_char, c_int};

    #[repr(C)]
    pub struct sqlite3 {
        _private: [u8; 0],
    }
    #[repr(C)]
    pub struct sqlite3_stmt {
        _private: [u8; 0],
    }

    pub const SQLITE_OK: c_int = 0;
    pub const SQLITE_ROW: c_int = 100;
    pub const SQLITE_DONE: c_int = 101;
    pub const SQLITE_OPEN_READWRITE: c_int = 0x0000_0002;
    pub const SQLITE_OPEN_CREATE: c_int = 0x0000_0004;
    pub const SQLITE_OPEN_NOMUTEX: c_int = 0x0000_8000;
    pub const SQLITE_CHECKPOINT_FULL: c_int = 1;

    extern "C" {
        pub fn sqlite3_open_v2(
            filename: *const c_char,
            db: *mut *mut sqlite3,
            flags: c_int,
            vfs: *const c_char,
        ) -> c_int;
        pub fn sqlite3_close(db: *mut sqlite3) -> c_int;
        pub fn sqlite3_exec(
            db: *mut sqlite3,
            sql: *const c_char,
            callback: Option<
                unsafe extern "C" fn(
                    *mut c_void,
                    c_int,
                    *mut *mut c_char,
                    *mut *mut c_char,
                ) -> c_int,
            >,
            arg: *mut c_void,
            errmsg: *mut *mut c_char,
        ) -> c_int;
        pub fn sqlite3_prepare_v2(
            db: *mut sqlite3,
            sql: *const c_char,
            nbyte: c_int,
            stmt: *mut *mut sqlite3_stmt,
            tail: *mut *const c_char,
        ) -> c_int;
        pub fn sqlite3_bind_blob(
            stmt: *mut sqlite3_stmt,
            index: c_int,
            value: *const c_void,
            n: c_int,
            destructor: Option<unsafe extern "C" fn(*mut c_void)>,
        ) -> c_int;
        pub fn sqlite3_step(stmt: *mut sqlite3_stmt) -> c_int;
        pub fn sqlite3_reset(stmt: *mut sqlite3_stmt) -> c_int;
        pub fn sqlite3_finalize(stmt: *mut sqlite3_stmt) -> c_int;
        pub fn sqlite3_column_blob(stmt: *mut sqlite3_stmt, col: c_int) -> *const c_void;
        pub fn sqlite3_column_bytes(stmt: *mut sqlite3_stmt, col: c_int) -> c_int;
        pub fn sqlite3_errmsg(db: *mut sqlite3) -> *const c_char;
        pub fn sqlite3_free(p: *mut c_void);
        pub fn sqlite3_libversion() -> *const c_char;
        pub fn sqlite3_wal_checkpoint_v2(
            db: *mut sqlite3,
            zdb: *const c_char,
            mode: c_int,
            log: *mut c_int,
            ckpt: *mut c_int,
        ) -> c_int;
    }
}

const PAGE_SIZE: u64 = 1024;
const DEFAULT_CACHE_PAGES: u64 = 4096;

/// The statements prepared once per connection.
#[derive(Clone, Copy)]
enum Q {
    Put,
    Get,
    Delete,
    Begin,
    Commit,
    First,
    Last,
    From,
    After,
    Before,
}

const QUERIES: [(Q, &str); 10] = [
    (Q::Put, "REPLACE INTO test (key, value) VALUES (?, ?)"),
    (Q::Get, "SELECT * FROM test WHERE key = ?"),
    (Q::Delete, "DELETE FROM test WHERE key = ?"),
    (Q::Begin, "BEGIN TRANSACTION;"),
    (Q::Commit, "END TRANSACTION;"),
    (Q::First, "SELECT key, value FROM test ORDER BY key ASC"),
    (Q::Last, "SELECT key, value FROM test ORDER BY key DESC"),
    (
        Q::From,
        "SELECT key, value FROM test WHERE key >= ? ORDER BY key ASC",
    ),
    (
        Q::After,
        "SELECT key, value FROM test WHERE key > ? ORDER BY key ASC",
    ),
    (
        Q::Before,
        "SELECT key, value FROM test WHERE key < ? ORDER BY key DESC",
    ),
];

struct Conn {
    db: *mut ffi::sqlite3,
    stmts: Vec<*mut ffi::sqlite3_stmt>,
    synchronous_full: bool,
}

// SAFETY: the connection is opened in multi-thread mode and only used while
// the engine's mutex is held, i.e. by one thread at a time.
unsafe impl Send for Conn {}

impl Drop for Conn {
    fn drop(&mut self) {
        // SAFETY: statements are finalized before the connection closes.
        unsafe {
            for &s in &self.stmts {
                ffi::sqlite3_finalize(s);
            }
            if !self.db.is_null() {
                ffi::sqlite3_close(self.db);
            }
        }
    }
}

impl Conn {
    fn error(&self, what: &str, rc: c_int) -> Error {
        // SAFETY: the connection is open; the message is owned by SQLite.
        let msg = unsafe { util::string_from(ffi::sqlite3_errmsg(self.db)) };
        Error::new(format!("sqlite3 {what} failed ({rc}): {msg}"))
    }

    fn exec(&self, sql: &str) -> Result<()> {
        let c = util::cstring(sql)?;
        let mut err: *mut c_char = ptr::null_mut();
        // SAFETY: the connection is open; the error message is freed below.
        let rc = unsafe { ffi::sqlite3_exec(self.db, c.as_ptr(), None, ptr::null_mut(), &mut err) };
        if rc != ffi::SQLITE_OK {
            // SAFETY: `err` is null or a message allocated by SQLite.
            let msg = unsafe { util::string_from(err) };
            // SAFETY: allocated by SQLite (sqlite3_free accepts null).
            unsafe { ffi::sqlite3_free(err.cast()) };
            return Err(Error::new(format!("sqlite3 `{sql}` failed ({rc}): {msg}")));
        }
        Ok(())
    }

    fn stmt(&self, q: Q) -> *mut ffi::sqlite3_stmt {
        self.stmts[q as usize]
    }

    /// Binds `bytes` as blob parameter `index` without copying.
    ///
    /// The caller must step (and reset) the statement before `bytes` is freed.
    fn bind(&self, stmt: *mut ffi::sqlite3_stmt, index: c_int, bytes: &[u8]) -> Result<()> {
        let len = c_int::try_from(bytes.len()).map_err(|_| Error::new("blob too large"))?;
        // SAFETY: a null destructor is SQLITE_STATIC: SQLite reads the bytes
        // during step only, and every caller steps before `bytes` is dropped.
        let rc = unsafe {
            ffi::sqlite3_bind_blob(stmt, index, bytes.as_ptr().cast::<c_void>(), len, None)
        };
        if rc != ffi::SQLITE_OK {
            return Err(self.error("bind", rc));
        }
        Ok(())
    }

    /// Steps a statement that returns no rows to completion and resets it.
    fn run(&self, q: Q) -> Result<()> {
        let s = self.stmt(q);
        // SAFETY: prepared statement of this connection.
        let rc = unsafe { ffi::sqlite3_step(s) };
        // SAFETY: as above.
        unsafe { ffi::sqlite3_reset(s) };
        if rc != ffi::SQLITE_DONE {
            return Err(self.error("step", rc));
        }
        Ok(())
    }

    fn set_sync(&mut self, sync: bool) -> Result<()> {
        if sync != self.synchronous_full {
            self.exec(if sync {
                "PRAGMA synchronous = FULL"
            } else {
                "PRAGMA synchronous = OFF"
            })?;
            self.synchronous_full = sync;
        }
        Ok(())
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let s = self.stmt(Q::Put);
        self.bind(s, 1, key)?;
        self.bind(s, 2, value)?;
        self.run(Q::Put)
    }

    fn delete(&self, key: &[u8]) -> Result<()> {
        self.bind(self.stmt(Q::Delete), 1, key)?;
        self.run(Q::Delete)
    }
}

/// An open SQLite database.
pub struct Sqlite {
    conn: Mutex<Conn>,
    settings: Vec<(String, String)>,
}

impl Sqlite {
    /// Opens (or creates) `<cfg.path>/sqlite3.db`.
    pub fn open(cfg: &EngineConfig) -> Result<Sqlite> {
        let file = util::path_cstring(&cfg.path.join("sqlite3.db"))?;
        let mut flags = ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_NOMUTEX;
        if cfg.create {
            flags |= ffi::SQLITE_OPEN_CREATE;
        }
        let mut conn = Conn {
            db: ptr::null_mut(),
            stmts: Vec::new(),
            synchronous_full: false,
        };
        // SAFETY: opens a connection owned by `conn` (closed by its Drop even
        // when opening fails, as SQLite requires).
        let rc = unsafe { ffi::sqlite3_open_v2(file.as_ptr(), &mut conn.db, flags, ptr::null()) };
        if rc != ffi::SQLITE_OK {
            return Err(conn.error("open", rc));
        }
        let cache_pages = cfg
            .cache_size
            .map_or(DEFAULT_CACHE_PAGES, |bytes| (bytes / PAGE_SIZE).max(1));
        conn.exec(&format!("PRAGMA cache_size = {cache_pages}"))?;
        conn.exec(&format!("PRAGMA page_size = {PAGE_SIZE}"))?;
        conn.exec("PRAGMA journal_mode = WAL")?;
        conn.exec("PRAGMA wal_autocheckpoint = 4096")?;
        conn.exec("PRAGMA locking_mode = EXCLUSIVE")?;
        conn.exec("PRAGMA synchronous = OFF")?;
        conn.exec("CREATE TABLE IF NOT EXISTS test (key blob, value blob, PRIMARY KEY(key)) WITHOUT ROWID")?;
        for (i, (q, sql)) in QUERIES.iter().enumerate() {
            debug_assert_eq!(*q as usize, i);
            let c = util::cstring(sql)?;
            let mut stmt = ptr::null_mut();
            // SAFETY: the connection is open; the statement is finalized by Drop.
            let rc = unsafe {
                ffi::sqlite3_prepare_v2(conn.db, c.as_ptr(), -1, &mut stmt, ptr::null_mut())
            };
            if rc != ffi::SQLITE_OK {
                return Err(conn.error("prepare", rc));
            }
            conn.stmts.push(stmt);
        }
        let settings = vec![
            setting("file", cfg.path.join("sqlite3.db").display()),
            setting("page_size", PAGE_SIZE),
            setting(
                "cache_size",
                format!(
                    "{cache_pages} pages ({})",
                    util::bytes(cache_pages * PAGE_SIZE)
                ),
            ),
            setting("journal_mode", "WAL"),
            setting("wal_autocheckpoint", "4096 pages"),
            setting("locking_mode", "EXCLUSIVE"),
            setting("synchronous", "OFF (FULL for synchronous writes)"),
            setting(
                "table",
                "test (key blob, value blob, PRIMARY KEY(key)) WITHOUT ROWID",
            ),
            setting("put", "REPLACE INTO, one implicit transaction per put"),
            setting("batches", "BEGIN ... END TRANSACTION around each batch"),
            setting("after each write benchmark", "wal_checkpoint(FULL), timed"),
            setting("compression", "none (SQLite has none)"),
            setting("threads", "one connection, serialized by a mutex"),
        ];
        Ok(Sqlite {
            conn: Mutex::new(conn),
            settings,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Conn> {
        // A panic while holding the lock leaves the connection usable.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Engine for Sqlite {
    fn kind(&self) -> EngineKind {
        EngineKind::Sqlite3
    }

    fn version(&self) -> String {
        // SAFETY: returns a static string.
        unsafe { util::string_from(ffi::sqlite3_libversion()) }
    }

    fn settings(&self) -> Vec<(String, String)> {
        self.settings.clone()
    }

    fn session(&self) -> Result<Box<dyn Session + '_>> {
        Ok(Box::new(SqliteSession { db: self }))
    }

    fn compact(&self) -> Result<()> {
        let conn = self.lock();
        conn.exec("VACUUM")
    }

    fn property(&self, _name: &str) -> Option<String> {
        None
    }
}

struct SqliteSession<'a> {
    db: &'a Sqlite,
}

impl Session for SqliteSession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8], sync: bool) -> Result<()> {
        let mut conn = self.db.lock();
        conn.set_sync(sync)?;
        conn.put(key, value)
    }

    fn get(&mut self, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        let conn = self.db.lock();
        let s = conn.stmt(Q::Get);
        conn.bind(s, 1, key)?;
        let mut found = false;
        loop {
            // SAFETY: prepared statement of the locked connection.
            let rc = unsafe { ffi::sqlite3_step(s) };
            if rc == ffi::SQLITE_ROW {
                // SAFETY: a row is available; the blob pointer is read before
                // its length and copied before the next step.
                unsafe {
                    let p = ffi::sqlite3_column_blob(s, 1);
                    let n = ffi::sqlite3_column_bytes(s, 1).max(0) as usize;
                    value.clear();
                    value.extend_from_slice(util::slice(p.cast(), n));
                }
                found = true;
            } else {
                // SAFETY: as above.
                unsafe { ffi::sqlite3_reset(s) };
                if rc != ffi::SQLITE_DONE {
                    return Err(conn.error("step", rc));
                }
                return Ok(found);
            }
        }
    }

    fn delete(&mut self, key: &[u8], sync: bool) -> Result<()> {
        let mut conn = self.db.lock();
        conn.set_sync(sync)?;
        conn.delete(key)
    }

    fn write(&mut self, batch: &Batch, sync: bool) -> Result<()> {
        let mut conn = self.db.lock();
        conn.set_sync(sync)?;
        conn.run(Q::Begin)?;
        let mut result = Ok(());
        for op in batch.iter() {
            result = match op {
                BatchOp::Put(k, v) => conn.put(k, v),
                BatchOp::Delete(k) => conn.delete(k),
            };
            if result.is_err() {
                break;
            }
        }
        let end = conn.run(Q::Commit);
        result.and(end)
    }

    fn iter(&mut self) -> Result<Box<dyn EngineIter + '_>> {
        Ok(Box::new(SqliteIter {
            conn: self.db.lock(),
            active: None,
            valid: false,
            forward: true,
            status: Ok(()),
            saved_key: Vec::new(),
        }))
    }

    fn finish_writes(&mut self) -> Result<()> {
        let conn = self.db.lock();
        // SAFETY: the connection is open; null means the main database.
        let rc = unsafe {
            ffi::sqlite3_wal_checkpoint_v2(
                conn.db,
                ptr::null(),
                ffi::SQLITE_CHECKPOINT_FULL,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(conn.error("wal_checkpoint", rc));
        }
        Ok(())
    }
}

/// Runs one of the ordered SELECTs; the row under the cursor is the current
/// entry. Changing direction restarts from the current key.
struct SqliteIter<'a> {
    conn: MutexGuard<'a, Conn>,
    active: Option<Q>,
    valid: bool,
    forward: bool,
    status: Result<()>,
    saved_key: Vec<u8>,
}

impl SqliteIter<'_> {
    fn reset_active(&mut self) {
        if let Some(q) = self.active.take() {
            // SAFETY: prepared statement of the locked connection.
            unsafe { ffi::sqlite3_reset(self.conn.stmt(q)) };
        }
        self.valid = false;
    }

    /// Starts query `q` (binding `key` if given) and steps to its first row.
    fn start(&mut self, q: Q, key: Option<&[u8]>, forward: bool) {
        self.reset_active();
        self.forward = forward;
        let s = self.conn.stmt(q);
        if let Some(k) = key {
            // Keep the bound bytes alive while the statement runs.
            self.saved_key.clear();
            self.saved_key.extend_from_slice(k);
            if let Err(e) = self.conn.bind(s, 1, &self.saved_key) {
                self.status = Err(e);
                return;
            }
        }
        self.active = Some(q);
        self.step();
    }

    fn step(&mut self) {
        let Some(q) = self.active else {
            self.valid = false;
            return;
        };
        // SAFETY: prepared statement of the locked connection; the bound key
        // lives in `saved_key`, untouched until the statement is reset.
        let rc = unsafe { ffi::sqlite3_step(self.conn.stmt(q)) };
        match rc {
            ffi::SQLITE_ROW => self.valid = true,
            ffi::SQLITE_DONE => self.valid = false,
            _ => {
                self.valid = false;
                self.status = Err(self.conn.error("step", rc));
            }
        }
    }

    fn column(&self, col: c_int) -> &[u8] {
        let Some(q) = self.active.filter(|_| self.valid) else {
            return &[];
        };
        let s = self.conn.stmt(q);
        // SAFETY: a row is available; the pointer stays valid until the next
        // step or reset, which need `&mut self`.
        unsafe {
            let p = ffi::sqlite3_column_blob(s, col);
            let n = ffi::sqlite3_column_bytes(s, col).max(0) as usize;
            util::slice(p.cast(), n)
        }
    }
}

impl Drop for SqliteIter<'_> {
    fn drop(&mut self) {
        self.reset_active();
    }
}

impl EngineIter for SqliteIter<'_> {
    fn seek_to_first(&mut self) {
        self.start(Q::First, None, true);
    }
    fn seek_to_last(&mut self) {
        self.start(Q::Last, None, false);
    }
    fn seek(&mut self, key: &[u8]) {
        self.start(Q::From, Some(key), true);
    }
    fn next(&mut self) {
        if !self.valid {
            return;
        }
        if self.forward {
            self.step();
        } else {
            let k = self.key().to_vec();
            self.start(Q::After, Some(&k), true);
        }
    }
    fn prev(&mut self) {
        if !self.valid {
            return;
        }
        if !self.forward {
            self.step();
        } else {
            let k = self.key().to_vec();
            self.start(Q::Before, Some(&k), false);
        }
    }
    fn valid(&self) -> bool {
        self.valid
    }
    fn key(&self) -> &[u8] {
        self.column(0)
    }
    fn value(&self) -> &[u8] {
        self.column(1)
    }
    fn status(&self) -> Result<()> {
        self.status.clone()
    }
}
