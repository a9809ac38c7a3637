//! LMDB (the installed library): a memory-mapped copy-on-write B+ tree in
//! `<db>/data.mdb`.
//!
//! Configured with a map of `--lmdb_map_size` bytes (64 GB by default),
//! `MDB_NOSYNC` for asynchronous benchmarks (commits reach the OS but are
//! not flushed) and without it when opened for synchronous writes, and
//! `MDB_NOTLS` so read transactions are owned by sessions rather than
//! threads. Each put or delete is its own write transaction; a batch is one
//! write transaction. Reads reuse a reset read transaction per session
//! (`mdb_txn_renew`), as LMDB recommends. LMDB has no compression, no cache
//! setting (it reads through the OS page cache) and nothing to compact.

use std::ffi::c_void;
use std::os::raw::{c_int, c_uint};
use std::ptr;

use super::util::{self, setting};
use crate::engine::{
    Batch, BatchOp, Engine, EngineConfig, EngineIter, EngineKind, Error, Feature, Result, Session,
};

#[allow(non_camel_case_types)]
mod ffi {
    use std::ffi::c_void;
    use std::os::raw::{c_char, c_int, c_uint};

    #[repr(C)]
    pub struct MDB_env {
        _private: [u8; 0],
    }
    #[repr(C)]
    pub struct MDB_txn {
        _private: [u8; 0],
    }
    #[repr(C)]
    pub struct MDB_cursor {
        _private: [u8; 0],
    }
    pub type MDB_dbi = c_uint;

    #[repr(C)]
    pub struct MDB_val {
        pub mv_size: usize,
        pub mv_data: *mut c_void,
    }

    #[repr(C)]
    #[derive(Default)]
    pub struct MDB_stat {
        pub ms_psize: c_uint,
        pub ms_depth: c_uint,
        pub ms_branch_pages: usize,
        pub ms_leaf_pages: usize,
        pub ms_overflow_pages: usize,
        pub ms_entries: usize,
    }

    pub const MDB_NOSYNC: c_uint = 0x10000;
    pub const MDB_RDONLY: c_uint = 0x20000;
    pub const MDB_NOTLS: c_uint = 0x200000;
    pub const MDB_CREATE: c_uint = 0x40000;
    pub const MDB_NOTFOUND: c_int = -30798;

    pub const MDB_FIRST: c_int = 0;
    pub const MDB_LAST: c_int = 6;
    pub const MDB_NEXT: c_int = 8;
    pub const MDB_PREV: c_int = 12;
    pub const MDB_SET_RANGE: c_int = 17;

    extern "C" {
        pub fn mdb_env_create(env: *mut *mut MDB_env) -> c_int;
        pub fn mdb_env_set_mapsize(env: *mut MDB_env, size: usize) -> c_int;
        pub fn mdb_env_set_maxreaders(env: *mut MDB_env, readers: c_uint) -> c_int;
        pub fn mdb_env_open(
            env: *mut MDB_env,
            path: *const c_char,
            flags: c_uint,
            mode: u32,
        ) -> c_int;
        pub fn mdb_env_close(env: *mut MDB_env);
        pub fn mdb_env_sync(env: *mut MDB_env, force: c_int) -> c_int;
        pub fn mdb_env_stat(env: *mut MDB_env, stat: *mut MDB_stat) -> c_int;
        pub fn mdb_txn_begin(
            env: *mut MDB_env,
            parent: *mut MDB_txn,
            flags: c_uint,
            txn: *mut *mut MDB_txn,
        ) -> c_int;
        pub fn mdb_txn_commit(txn: *mut MDB_txn) -> c_int;
        pub fn mdb_txn_abort(txn: *mut MDB_txn);
        pub fn mdb_txn_reset(txn: *mut MDB_txn);
        pub fn mdb_txn_renew(txn: *mut MDB_txn) -> c_int;
        pub fn mdb_dbi_open(
            txn: *mut MDB_txn,
            name: *const c_char,
            flags: c_uint,
            dbi: *mut MDB_dbi,
        ) -> c_int;
        pub fn mdb_get(
            txn: *mut MDB_txn,
            dbi: MDB_dbi,
            key: *mut MDB_val,
            data: *mut MDB_val,
        ) -> c_int;
        pub fn mdb_put(
            txn: *mut MDB_txn,
            dbi: MDB_dbi,
            key: *mut MDB_val,
            data: *mut MDB_val,
            flags: c_uint,
        ) -> c_int;
        pub fn mdb_del(
            txn: *mut MDB_txn,
            dbi: MDB_dbi,
            key: *mut MDB_val,
            data: *mut MDB_val,
        ) -> c_int;
        pub fn mdb_cursor_open(
            txn: *mut MDB_txn,
            dbi: MDB_dbi,
            cursor: *mut *mut MDB_cursor,
        ) -> c_int;
        pub fn mdb_cursor_renew(txn: *mut MDB_txn, cursor: *mut MDB_cursor) -> c_int;
        pub fn mdb_cursor_close(cursor: *mut MDB_cursor);
        pub fn mdb_cursor_get(
            cursor: *mut MDB_cursor,
            key: *mut MDB_val,
            data: *mut MDB_val,
            op: c_int,
        ) -> c_int;
        pub fn mdb_strerror(err: c_int) -> *mut c_char;
        pub fn mdb_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int) -> *mut c_char;
    }
}

fn err(what: &str, rc: c_int) -> Error {
    // SAFETY: mdb_strerror returns a static or thread-local message.
    let msg = unsafe { util::string_from(ffi::mdb_strerror(rc)) };
    Error::new(format!("lmdb {what}: {msg} ({rc})"))
}

fn check(what: &str, rc: c_int) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(err(what, rc))
    }
}

fn val(bytes: &[u8]) -> ffi::MDB_val {
    ffi::MDB_val {
        mv_size: bytes.len(),
        mv_data: bytes.as_ptr() as *mut c_void,
    }
}

fn empty_val() -> ffi::MDB_val {
    ffi::MDB_val {
        mv_size: 0,
        mv_data: ptr::null_mut(),
    }
}

/// An open LMDB environment with its main database.
pub struct Lmdb {
    env: *mut ffi::MDB_env,
    dbi: ffi::MDB_dbi,
    nosync: bool,
    settings: Vec<(String, String)>,
}

// SAFETY: an LMDB environment may be used from many threads; write
// transactions are serialized by LMDB, and read transactions (MDB_NOTLS) are
// owned by sessions, which are not shared.
unsafe impl Send for Lmdb {}
// SAFETY: as above.
unsafe impl Sync for Lmdb {}

impl Lmdb {
    /// Opens (or creates) the environment in the directory `cfg.path`.
    pub fn open(cfg: &EngineConfig) -> Result<Lmdb> {
        let path = util::path_cstring(&cfg.path)?;
        let nosync = !cfg.sync_writes;
        let mut flags = ffi::MDB_NOTLS;
        if nosync {
            flags |= ffi::MDB_NOSYNC;
        }
        let max_readers = (cfg.threads * 2 + 8).max(126);
        let mut env = ptr::null_mut();
        // SAFETY: creates an environment owned by `engine` below.
        check("env_create", unsafe { ffi::mdb_env_create(&mut env) })?;
        let mut engine = Lmdb {
            env,
            dbi: 0,
            nosync,
            settings: Vec::new(),
        };
        // SAFETY: configuring and opening the fresh environment.
        unsafe {
            check(
                "set_mapsize",
                ffi::mdb_env_set_mapsize(env, cfg.lmdb_map_size as usize),
            )?;
            check(
                "set_maxreaders",
                ffi::mdb_env_set_maxreaders(env, max_readers as c_uint),
            )?;
            check(
                "env_open",
                ffi::mdb_env_open(env, path.as_ptr(), flags, 0o644),
            )?;
            let mut txn = ptr::null_mut();
            check(
                "txn_begin",
                ffi::mdb_txn_begin(env, ptr::null_mut(), 0, &mut txn),
            )?;
            let open_flags = if cfg.create { ffi::MDB_CREATE } else { 0 };
            let rc = ffi::mdb_dbi_open(txn, ptr::null(), open_flags, &mut engine.dbi);
            if rc != 0 {
                ffi::mdb_txn_abort(txn);
                return Err(err("dbi_open", rc));
            }
            check("txn_commit", ffi::mdb_txn_commit(txn))?;
        }
        engine.settings = vec![
            setting("map_size", util::bytes(cfg.lmdb_map_size)),
            setting(
                "env flags",
                if nosync {
                    "MDB_NOTLS | MDB_NOSYNC"
                } else {
                    "MDB_NOTLS (synchronous commits)"
                },
            ),
            setting("max_readers", max_readers),
            setting(
                "writes",
                "one write transaction per put/delete, one per batch",
            ),
            setting(
                "reads",
                "a renewed read-only transaction per get / iterator",
            ),
            setting("cache", "OS page cache (LMDB has no cache setting)"),
            setting("compression", "none (LMDB has none)"),
            setting("compact", "not applicable"),
        ];
        Ok(engine)
    }
}

impl Drop for Lmdb {
    fn drop(&mut self) {
        // SAFETY: all sessions (and their transactions) ended before the
        // engine is dropped, since they borrow it.
        unsafe { ffi::mdb_env_close(self.env) };
    }
}

impl Engine for Lmdb {
    fn kind(&self) -> EngineKind {
        EngineKind::Lmdb
    }

    fn version(&self) -> String {
        let (mut a, mut b, mut c) = (0, 0, 0);
        // SAFETY: writes three ints; returns a static string (unused).
        unsafe { ffi::mdb_version(&mut a, &mut b, &mut c) };
        format!("{a}.{b}.{c}")
    }

    fn settings(&self) -> Vec<(String, String)> {
        self.settings.clone()
    }

    fn session(&self) -> Result<Box<dyn Session + '_>> {
        Ok(Box::new(LmdbSession {
            db: self,
            rtxn: ptr::null_mut(),
            cursor: ptr::null_mut(),
        }))
    }

    fn compact(&self) -> Result<()> {
        Err(Error::new("LMDB has no compaction"))
    }

    fn property(&self, _name: &str) -> Option<String> {
        let mut st = ffi::MDB_stat::default();
        // SAFETY: fills `st` for the open environment.
        if unsafe { ffi::mdb_env_stat(self.env, &mut st) } != 0 {
            return None;
        }
        Some(format!(
            "page size {}, depth {}, branch pages {}, leaf pages {}, overflow pages {}, entries {}",
            st.ms_psize,
            st.ms_depth,
            st.ms_branch_pages,
            st.ms_leaf_pages,
            st.ms_overflow_pages,
            st.ms_entries
        ))
    }

    fn unsupported(&self, feature: Feature) -> Option<&'static str> {
        match feature {
            Feature::Batch => None,
            Feature::Compact => Some("LMDB has no compaction"),
        }
    }
}

struct LmdbSession<'a> {
    db: &'a Lmdb,
    /// A read-only transaction in the reset state between uses (or null).
    rtxn: *mut ffi::MDB_txn,
    /// A cursor for `rtxn`, renewed with it (or null).
    cursor: *mut ffi::MDB_cursor,
}

impl Drop for LmdbSession<'_> {
    fn drop(&mut self) {
        // SAFETY: the cursor and transaction belong to this session; the
        // cursor of a read-only transaction must be closed explicitly.
        unsafe {
            if !self.cursor.is_null() {
                ffi::mdb_cursor_close(self.cursor);
            }
            if !self.rtxn.is_null() {
                ffi::mdb_txn_abort(self.rtxn);
            }
        }
    }
}

impl LmdbSession<'_> {
    /// Activates the session's read transaction (left active; the caller
    /// resets it).
    fn begin_read(&mut self) -> Result<()> {
        // SAFETY: `rtxn` is null or a reset read-only transaction of this env.
        unsafe {
            if self.rtxn.is_null() {
                check(
                    "txn_begin(read)",
                    ffi::mdb_txn_begin(
                        self.db.env,
                        ptr::null_mut(),
                        ffi::MDB_RDONLY,
                        &mut self.rtxn,
                    ),
                )
            } else {
                check("txn_renew", ffi::mdb_txn_renew(self.rtxn))
            }
        }
    }

    fn end_read(&mut self) {
        // SAFETY: an active read-only transaction of this session.
        unsafe { ffi::mdb_txn_reset(self.rtxn) };
    }

    /// Runs `f` in a write transaction and commits it (aborts on error).
    fn write_txn(
        &mut self,
        sync: bool,
        f: impl FnOnce(*mut ffi::MDB_txn) -> Result<()>,
    ) -> Result<()> {
        let mut txn = ptr::null_mut();
        // SAFETY: begins a write transaction (LMDB serializes writers).
        check("txn_begin", unsafe {
            ffi::mdb_txn_begin(self.db.env, ptr::null_mut(), 0, &mut txn)
        })?;
        if let Err(e) = f(txn) {
            // SAFETY: the transaction is active and ended once.
            unsafe { ffi::mdb_txn_abort(txn) };
            return Err(e);
        }
        // SAFETY: the transaction is active; commit ends it.
        check("txn_commit", unsafe { ffi::mdb_txn_commit(txn) })?;
        if sync && self.db.nosync {
            // Opened for asynchronous work: flush this commit explicitly.
            // SAFETY: the environment is open.
            check("env_sync", unsafe { ffi::mdb_env_sync(self.db.env, 1) })?;
        }
        Ok(())
    }
}

fn put_in(txn: *mut ffi::MDB_txn, dbi: ffi::MDB_dbi, key: &[u8], value: &[u8]) -> Result<()> {
    let mut k = val(key);
    let mut v = val(value);
    // SAFETY: an active write transaction; LMDB copies key and value.
    check("put", unsafe { ffi::mdb_put(txn, dbi, &mut k, &mut v, 0) })
}

fn del_in(txn: *mut ffi::MDB_txn, dbi: ffi::MDB_dbi, key: &[u8]) -> Result<()> {
    let mut k = val(key);
    // SAFETY: an active write transaction; a null data pointer deletes the key.
    let rc = unsafe { ffi::mdb_del(txn, dbi, &mut k, ptr::null_mut()) };
    if rc == ffi::MDB_NOTFOUND {
        return Ok(());
    }
    check("del", rc)
}

impl Session for LmdbSession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8], sync: bool) -> Result<()> {
        let dbi = self.db.dbi;
        self.write_txn(sync, |txn| put_in(txn, dbi, key, value))
    }

    fn get(&mut self, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        self.begin_read()?;
        let mut k = val(key);
        let mut v = empty_val();
        // SAFETY: an active read transaction; the data pointer is valid until
        // the transaction is reset, after the copy.
        let rc = unsafe { ffi::mdb_get(self.rtxn, self.db.dbi, &mut k, &mut v) };
        let found = match rc {
            0 => {
                value.clear();
                // SAFETY: as above.
                value.extend_from_slice(unsafe { util::slice(v.mv_data as *const u8, v.mv_size) });
                Ok(true)
            }
            ffi::MDB_NOTFOUND => Ok(false),
            rc => Err(err("get", rc)),
        };
        self.end_read();
        found
    }

    fn delete(&mut self, key: &[u8], sync: bool) -> Result<()> {
        let dbi = self.db.dbi;
        self.write_txn(sync, |txn| del_in(txn, dbi, key))
    }

    fn write(&mut self, batch: &Batch, sync: bool) -> Result<()> {
        let dbi = self.db.dbi;
        self.write_txn(sync, |txn| {
            for op in batch.iter() {
                match op {
                    BatchOp::Put(k, v) => put_in(txn, dbi, k, v)?,
                    BatchOp::Delete(k) => del_in(txn, dbi, k)?,
                }
            }
            Ok(())
        })
    }

    fn iter(&mut self) -> Result<Box<dyn EngineIter + '_>> {
        self.begin_read()?;
        // SAFETY: the read transaction is active; the cursor is opened once
        // per session and renewed with the transaction afterwards.
        let rc = unsafe {
            if self.cursor.is_null() {
                ffi::mdb_cursor_open(self.rtxn, self.db.dbi, &mut self.cursor)
            } else {
                ffi::mdb_cursor_renew(self.rtxn, self.cursor)
            }
        };
        if rc != 0 {
            self.end_read();
            return Err(err("cursor_open", rc));
        }
        Ok(Box::new(LmdbIter {
            cursor: self.cursor,
            key: empty_val(),
            value: empty_val(),
            valid: false,
            status: Ok(()),
            session: self,
        }))
    }
}

struct LmdbIter<'s, 'a> {
    session: &'s mut LmdbSession<'a>,
    cursor: *mut ffi::MDB_cursor,
    key: ffi::MDB_val,
    value: ffi::MDB_val,
    valid: bool,
    status: Result<()>,
}

impl LmdbIter<'_, '_> {
    fn op(&mut self, op: c_int) {
        // SAFETY: the cursor belongs to the session's active read
        // transaction; key/value then point into the map until it is reset.
        let rc = unsafe { ffi::mdb_cursor_get(self.cursor, &mut self.key, &mut self.value, op) };
        match rc {
            0 => self.valid = true,
            ffi::MDB_NOTFOUND => self.valid = false,
            rc => {
                self.valid = false;
                self.status = Err(err("cursor_get", rc));
            }
        }
    }
}

impl Drop for LmdbIter<'_, '_> {
    fn drop(&mut self) {
        self.session.end_read();
    }
}

impl EngineIter for LmdbIter<'_, '_> {
    fn seek_to_first(&mut self) {
        self.op(ffi::MDB_FIRST);
    }
    fn seek_to_last(&mut self) {
        self.op(ffi::MDB_LAST);
    }
    fn seek(&mut self, key: &[u8]) {
        // MDB_SET_RANGE reads the search key and overwrites `self.key` with
        // the found one.
        self.key = val(key);
        self.op(ffi::MDB_SET_RANGE);
    }
    fn next(&mut self) {
        if self.valid {
            self.op(ffi::MDB_NEXT);
        }
    }
    fn prev(&mut self) {
        if self.valid {
            self.op(ffi::MDB_PREV);
        }
    }
    fn valid(&self) -> bool {
        self.valid
    }
    fn key(&self) -> &[u8] {
        if !self.valid {
            return &[];
        }
        // SAFETY: points into the map while the read transaction is active
        // (until this iterator is dropped) and unchanged until the next move.
        unsafe { util::slice(self.key.mv_data as *const u8, self.key.mv_size) }
    }
    fn value(&self) -> &[u8] {
        if !self.valid {
            return &[];
        }
        // SAFETY: as for `key`.
        unsafe { util::slice(self.value.mv_data as *const u8, self.value.mv_size) }
    }
    fn status(&self) -> Result<()> {
        self.status.clone()
    }
}
