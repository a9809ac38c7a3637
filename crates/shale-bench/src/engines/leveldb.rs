//! Google LevelDB (the installed 1.23 library) through its C API.
//!
//! Configured as db_bench configures it: write buffer, table file size,
//! block size, open files and compression from the flags, block restart
//! interval 16, an LRU cache of `--cache_size` bytes (none given means
//! LevelDB's own 8 MB cache), a bloom filter of `--bloom_bits` bits per key
//! (none by default). The C API has no `reuse_logs` switch, so it stays off.
//!
//! Invariant: `db` is open for the whole life of the value; the options,
//! cache and filter it was opened with are freed only after it is closed.

use std::os::raw::{c_char, c_int};
use std::ptr;

use super::util::{self, setting};
use crate::engine::{
    Batch, BatchOp, Engine, EngineConfig, EngineIter, EngineKind, Error, Result, Session,
};

#[allow(non_camel_case_types)]
mod ffi {
    use std::os::raw::{c_char, c_int};

    macro_rules! opaque {
        ($($name:ident),*) => {$(
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
            }
        )*};
    }
    opaque!(
        leveldb_t,
        leveldb_options_t,
        leveldb_readoptions_t,
        leveldb_writeoptions_t,
        leveldb_writebatch_t,
        leveldb_iterator_t,
        leveldb_cache_t,
        leveldb_filterpolicy_t
    );

    extern "C" {
        pub fn leveldb_open(
            options: *const leveldb_options_t,
            name: *const c_char,
            errptr: *mut *mut c_char,
        ) -> *mut leveldb_t;
        pub fn leveldb_close(db: *mut leveldb_t);
        pub fn leveldb_put(
            db: *mut leveldb_t,
            options: *const leveldb_writeoptions_t,
            key: *const c_char,
            keylen: usize,
            val: *const c_char,
            vallen: usize,
            errptr: *mut *mut c_char,
        );
        pub fn leveldb_delete(
            db: *mut leveldb_t,
            options: *const leveldb_writeoptions_t,
            key: *const c_char,
            keylen: usize,
            errptr: *mut *mut c_char,
        );
        pub fn leveldb_write(
            db: *mut leveldb_t,
            options: *const leveldb_writeoptions_t,
            batch: *mut leveldb_writebatch_t,
            errptr: *mut *mut c_char,
        );
        pub fn leveldb_get(
            db: *mut leveldb_t,
            options: *const leveldb_readoptions_t,
            key: *const c_char,
            keylen: usize,
            vallen: *mut usize,
            errptr: *mut *mut c_char,
        ) -> *mut c_char;
        pub fn leveldb_create_iterator(
            db: *mut leveldb_t,
            options: *const leveldb_readoptions_t,
        ) -> *mut leveldb_iterator_t;
        pub fn leveldb_property_value(db: *mut leveldb_t, propname: *const c_char) -> *mut c_char;
        pub fn leveldb_compact_range(
            db: *mut leveldb_t,
            start_key: *const c_char,
            start_key_len: usize,
            limit_key: *const c_char,
            limit_key_len: usize,
        );

        pub fn leveldb_iter_destroy(it: *mut leveldb_iterator_t);
        pub fn leveldb_iter_valid(it: *const leveldb_iterator_t) -> u8;
        pub fn leveldb_iter_seek_to_first(it: *mut leveldb_iterator_t);
        pub fn leveldb_iter_seek_to_last(it: *mut leveldb_iterator_t);
        pub fn leveldb_iter_seek(it: *mut leveldb_iterator_t, k: *const c_char, klen: usize);
        pub fn leveldb_iter_next(it: *mut leveldb_iterator_t);
        pub fn leveldb_iter_prev(it: *mut leveldb_iterator_t);
        pub fn leveldb_iter_key(it: *const leveldb_iterator_t, klen: *mut usize) -> *const c_char;
        pub fn leveldb_iter_value(it: *const leveldb_iterator_t, vlen: *mut usize)
            -> *const c_char;
        pub fn leveldb_iter_get_error(it: *const leveldb_iterator_t, errptr: *mut *mut c_char);

        pub fn leveldb_writebatch_create() -> *mut leveldb_writebatch_t;
        pub fn leveldb_writebatch_destroy(b: *mut leveldb_writebatch_t);
        pub fn leveldb_writebatch_clear(b: *mut leveldb_writebatch_t);
        pub fn leveldb_writebatch_put(
            b: *mut leveldb_writebatch_t,
            key: *const c_char,
            klen: usize,
            val: *const c_char,
            vlen: usize,
        );
        pub fn leveldb_writebatch_delete(
            b: *mut leveldb_writebatch_t,
            key: *const c_char,
            klen: usize,
        );

        pub fn leveldb_options_create() -> *mut leveldb_options_t;
        pub fn leveldb_options_destroy(o: *mut leveldb_options_t);
        pub fn leveldb_options_set_filter_policy(
            o: *mut leveldb_options_t,
            p: *mut leveldb_filterpolicy_t,
        );
        pub fn leveldb_options_set_create_if_missing(o: *mut leveldb_options_t, v: u8);
        pub fn leveldb_options_set_paranoid_checks(o: *mut leveldb_options_t, v: u8);
        pub fn leveldb_options_set_write_buffer_size(o: *mut leveldb_options_t, v: usize);
        pub fn leveldb_options_set_max_open_files(o: *mut leveldb_options_t, v: c_int);
        pub fn leveldb_options_set_cache(o: *mut leveldb_options_t, c: *mut leveldb_cache_t);
        pub fn leveldb_options_set_block_size(o: *mut leveldb_options_t, v: usize);
        pub fn leveldb_options_set_block_restart_interval(o: *mut leveldb_options_t, v: c_int);
        pub fn leveldb_options_set_max_file_size(o: *mut leveldb_options_t, v: usize);
        pub fn leveldb_options_set_compression(o: *mut leveldb_options_t, v: c_int);

        pub fn leveldb_filterpolicy_create_bloom(
            bits_per_key: c_int,
        ) -> *mut leveldb_filterpolicy_t;
        pub fn leveldb_filterpolicy_destroy(p: *mut leveldb_filterpolicy_t);

        pub fn leveldb_readoptions_create() -> *mut leveldb_readoptions_t;
        pub fn leveldb_readoptions_destroy(o: *mut leveldb_readoptions_t);
        pub fn leveldb_writeoptions_create() -> *mut leveldb_writeoptions_t;
        pub fn leveldb_writeoptions_destroy(o: *mut leveldb_writeoptions_t);
        pub fn leveldb_writeoptions_set_sync(o: *mut leveldb_writeoptions_t, v: u8);

        pub fn leveldb_cache_create_lru(capacity: usize) -> *mut leveldb_cache_t;
        pub fn leveldb_cache_destroy(c: *mut leveldb_cache_t);

        pub fn leveldb_free(ptr: *mut std::ffi::c_void);
        pub fn leveldb_major_version() -> c_int;
        pub fn leveldb_minor_version() -> c_int;
    }
}

/// Turns a LevelDB error out-parameter into a `Result`, freeing the message.
///
/// # Safety
/// `err` must be null or a message allocated by LevelDB.
unsafe fn check(err: *mut c_char) -> Result<()> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: LevelDB error messages are NUL-terminated and malloc'ed.
    let msg = unsafe { util::string_from(err) };
    // SAFETY: the message was allocated by LevelDB and is freed once.
    unsafe { ffi::leveldb_free(err.cast()) };
    Err(Error::new(msg))
}

/// An open LevelDB database.
pub struct LevelDb {
    db: *mut ffi::leveldb_t,
    options: *mut ffi::leveldb_options_t,
    cache: *mut ffi::leveldb_cache_t,
    filter: *mut ffi::leveldb_filterpolicy_t,
    read_options: *mut ffi::leveldb_readoptions_t,
    write_async: *mut ffi::leveldb_writeoptions_t,
    write_sync: *mut ffi::leveldb_writeoptions_t,
    settings: Vec<(String, String)>,
}

// SAFETY: a LevelDB `DB` is safe for concurrent use by multiple threads; the
// options objects are only read after `open` returns.
unsafe impl Send for LevelDb {}
// SAFETY: as above.
unsafe impl Sync for LevelDb {}

impl LevelDb {
    /// Opens (or creates) the database in `cfg.path`.
    pub fn open(cfg: &EngineConfig) -> Result<LevelDb> {
        let path = util::path_cstring(&cfg.path)?;
        let mut settings = vec![
            setting("create_if_missing", cfg.create),
            setting("write_buffer_size", util::bytes(cfg.write_buffer_size)),
            setting("max_file_size", util::bytes(cfg.max_file_size)),
            setting("block_size", cfg.block_size),
            setting("block_restart_interval", 16),
            setting("max_open_files", cfg.open_files),
            setting(
                "compression",
                if cfg.compression { "snappy" } else { "none" },
            ),
            setting("paranoid_checks", false),
            setting("reuse_logs", "false (not settable through LevelDB's C API)"),
            setting("write_options.sync", "per benchmark (fillsync only)"),
        ];
        // SAFETY: plain constructor and setter calls on objects created here;
        // each pointer is checked or owned by `engine` below, which frees them.
        unsafe {
            let options = ffi::leveldb_options_create();
            let mut engine = LevelDb {
                db: ptr::null_mut(),
                options,
                cache: ptr::null_mut(),
                filter: ptr::null_mut(),
                read_options: ffi::leveldb_readoptions_create(),
                write_async: ffi::leveldb_writeoptions_create(),
                write_sync: ffi::leveldb_writeoptions_create(),
                settings: Vec::new(),
            };
            ffi::leveldb_writeoptions_set_sync(engine.write_sync, 1);
            ffi::leveldb_options_set_create_if_missing(options, u8::from(cfg.create));
            ffi::leveldb_options_set_paranoid_checks(options, 0);
            ffi::leveldb_options_set_write_buffer_size(options, cfg.write_buffer_size as usize);
            ffi::leveldb_options_set_max_file_size(options, cfg.max_file_size as usize);
            ffi::leveldb_options_set_block_size(options, cfg.block_size as usize);
            ffi::leveldb_options_set_block_restart_interval(options, 16);
            ffi::leveldb_options_set_max_open_files(options, cfg.open_files as c_int);
            ffi::leveldb_options_set_compression(options, c_int::from(cfg.compression));
            match cfg.cache_size {
                Some(n) => {
                    engine.cache = ffi::leveldb_cache_create_lru(n as usize);
                    ffi::leveldb_options_set_cache(options, engine.cache);
                    settings.push(setting("block_cache", format!("LRU {}", util::bytes(n))));
                }
                None => settings.push(setting("block_cache", "LevelDB default (8 MB LRU)")),
            }
            match cfg.bloom_bits {
                Some(bits) => {
                    engine.filter = ffi::leveldb_filterpolicy_create_bloom(bits as c_int);
                    ffi::leveldb_options_set_filter_policy(options, engine.filter);
                    settings.push(setting(
                        "filter_policy",
                        format!("bloom, {bits} bits per key"),
                    ));
                }
                None => settings.push(setting("filter_policy", "none")),
            }
            let mut err = ptr::null_mut();
            engine.db = ffi::leveldb_open(options, path.as_ptr(), &mut err);
            check(err)?;
            if engine.db.is_null() {
                return Err(Error::new("leveldb_open returned no database"));
            }
            engine.settings = settings;
            Ok(engine)
        }
    }
}

impl Drop for LevelDb {
    fn drop(&mut self) {
        // SAFETY: each pointer was created by LevelDB and is freed once, the
        // database first (it uses the options, cache and filter).
        unsafe {
            if !self.db.is_null() {
                ffi::leveldb_close(self.db);
            }
            ffi::leveldb_options_destroy(self.options);
            if !self.cache.is_null() {
                ffi::leveldb_cache_destroy(self.cache);
            }
            if !self.filter.is_null() {
                ffi::leveldb_filterpolicy_destroy(self.filter);
            }
            ffi::leveldb_readoptions_destroy(self.read_options);
            ffi::leveldb_writeoptions_destroy(self.write_async);
            ffi::leveldb_writeoptions_destroy(self.write_sync);
        }
    }
}

impl Engine for LevelDb {
    fn kind(&self) -> EngineKind {
        EngineKind::LevelDb
    }

    fn version(&self) -> String {
        // SAFETY: version getters have no preconditions.
        unsafe {
            format!(
                "{}.{}",
                ffi::leveldb_major_version(),
                ffi::leveldb_minor_version()
            )
        }
    }

    fn settings(&self) -> Vec<(String, String)> {
        self.settings.clone()
    }

    fn session(&self) -> Result<Box<dyn Session + '_>> {
        // SAFETY: creates a batch owned by the session.
        let batch = unsafe { ffi::leveldb_writebatch_create() };
        Ok(Box::new(LevelDbSession { db: self, batch }))
    }

    fn compact(&self) -> Result<()> {
        // SAFETY: null bounds mean the whole key range.
        unsafe { ffi::leveldb_compact_range(self.db, ptr::null(), 0, ptr::null(), 0) };
        Ok(())
    }

    fn property(&self, name: &str) -> Option<String> {
        let name = util::cstring(name).ok()?;
        // SAFETY: the database is open; the result is malloc'ed or null.
        unsafe {
            let v = ffi::leveldb_property_value(self.db, name.as_ptr());
            if v.is_null() {
                return None;
            }
            let s = util::string_from(v);
            ffi::leveldb_free(v.cast());
            Some(s)
        }
    }
}

struct LevelDbSession<'a> {
    db: &'a LevelDb,
    batch: *mut ffi::leveldb_writebatch_t,
}

impl Drop for LevelDbSession<'_> {
    fn drop(&mut self) {
        // SAFETY: the batch was created by this session.
        unsafe { ffi::leveldb_writebatch_destroy(self.batch) };
    }
}

impl LevelDbSession<'_> {
    fn write_options(&self, sync: bool) -> *const ffi::leveldb_writeoptions_t {
        if sync {
            self.db.write_sync
        } else {
            self.db.write_async
        }
    }
}

impl Session for LevelDbSession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8], sync: bool) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: key and value outlive the call; LevelDB copies them.
        unsafe {
            ffi::leveldb_put(
                self.db.db,
                self.write_options(sync),
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
                &mut err,
            );
            check(err)
        }
    }

    fn get(&mut self, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        let mut err = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: the result is a malloc'ed copy of `len` bytes (or null when
        // the key is absent), freed after copying.
        unsafe {
            let v = ffi::leveldb_get(
                self.db.db,
                self.db.read_options,
                key.as_ptr().cast(),
                key.len(),
                &mut len,
                &mut err,
            );
            check(err)?;
            if v.is_null() {
                return Ok(false);
            }
            value.clear();
            value.extend_from_slice(util::slice(v as *const u8, len));
            ffi::leveldb_free(v.cast());
            Ok(true)
        }
    }

    fn delete(&mut self, key: &[u8], sync: bool) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: the key outlives the call.
        unsafe {
            ffi::leveldb_delete(
                self.db.db,
                self.write_options(sync),
                key.as_ptr().cast(),
                key.len(),
                &mut err,
            );
            check(err)
        }
    }

    fn write(&mut self, batch: &Batch, sync: bool) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: the batch belongs to this session; LevelDB copies the bytes.
        unsafe {
            ffi::leveldb_writebatch_clear(self.batch);
            for op in batch.iter() {
                match op {
                    BatchOp::Put(k, v) => ffi::leveldb_writebatch_put(
                        self.batch,
                        k.as_ptr().cast(),
                        k.len(),
                        v.as_ptr().cast(),
                        v.len(),
                    ),
                    BatchOp::Delete(k) => {
                        ffi::leveldb_writebatch_delete(self.batch, k.as_ptr().cast(), k.len())
                    }
                }
            }
            ffi::leveldb_write(self.db.db, self.write_options(sync), self.batch, &mut err);
            check(err)
        }
    }

    fn iter(&mut self) -> Result<Box<dyn EngineIter + '_>> {
        // SAFETY: the iterator is destroyed before the database (it borrows it).
        let it = unsafe { ffi::leveldb_create_iterator(self.db.db, self.db.read_options) };
        if it.is_null() {
            return Err(Error::new("leveldb_create_iterator failed"));
        }
        Ok(Box::new(LevelDbIter { it, _db: self.db }))
    }
}

struct LevelDbIter<'a> {
    it: *mut ffi::leveldb_iterator_t,
    _db: &'a LevelDb,
}

impl Drop for LevelDbIter<'_> {
    fn drop(&mut self) {
        // SAFETY: created by `leveldb_create_iterator`, destroyed once.
        unsafe { ffi::leveldb_iter_destroy(self.it) };
    }
}

impl EngineIter for LevelDbIter<'_> {
    fn seek_to_first(&mut self) {
        // SAFETY: valid iterator.
        unsafe { ffi::leveldb_iter_seek_to_first(self.it) }
    }
    fn seek_to_last(&mut self) {
        // SAFETY: valid iterator.
        unsafe { ffi::leveldb_iter_seek_to_last(self.it) }
    }
    fn seek(&mut self, key: &[u8]) {
        // SAFETY: valid iterator; the key is copied.
        unsafe { ffi::leveldb_iter_seek(self.it, key.as_ptr().cast(), key.len()) }
    }
    fn next(&mut self) {
        if self.valid() {
            // SAFETY: valid and positioned.
            unsafe { ffi::leveldb_iter_next(self.it) }
        }
    }
    fn prev(&mut self) {
        if self.valid() {
            // SAFETY: valid and positioned.
            unsafe { ffi::leveldb_iter_prev(self.it) }
        }
    }
    fn valid(&self) -> bool {
        // SAFETY: valid iterator.
        unsafe { ffi::leveldb_iter_valid(self.it) != 0 }
    }
    fn key(&self) -> &[u8] {
        if !self.valid() {
            return &[];
        }
        let mut len = 0;
        // SAFETY: positioned; the key stays valid until the iterator moves,
        // which needs `&mut self`.
        unsafe { util::slice(ffi::leveldb_iter_key(self.it, &mut len).cast(), len) }
    }
    fn value(&self) -> &[u8] {
        if !self.valid() {
            return &[];
        }
        let mut len = 0;
        // SAFETY: as for `key`.
        unsafe { util::slice(ffi::leveldb_iter_value(self.it, &mut len).cast(), len) }
    }
    fn status(&self) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: valid iterator; the error is freed by `check`.
        unsafe {
            ffi::leveldb_iter_get_error(self.it, &mut err);
            check(err)
        }
    }
}
