//! RocksDB (the installed 7.8 library) through its C API.
//!
//! Configured with LevelDB's sizes, as the protocol asks: write buffer, table
//! file size (`target_file_size_base`), block size, open files, compression
//! (snappy or none) from the flags, a 10 MB level-1 budget with a x10
//! multiplier (LevelDB's level sizes), leveled compaction, block restart
//! interval 16, an LRU block cache of `--cache_size` bytes (when none is
//! given, 8 MB: LevelDB's default, rather than RocksDB's larger one) and a
//! bloom filter only when `--bloom_bits` is given. Everything else keeps
//! RocksDB's defaults, which are read back and printed.
//!
//! Invariant: `db` is open for the whole life of the value and is closed
//! before the options it was opened with are freed.

use std::os::raw::{c_char, c_int};
use std::ptr;

use super::util::{self, setting};
use crate::engine::{
    Batch, BatchOp, Engine, EngineConfig, EngineIter, EngineKind, Error, Result, Session,
};

#[allow(non_camel_case_types)]
mod ffi {
    use std::os::raw::{c_char, c_int, c_uchar};

    macro_rules! opaque {
        ($($name:ident),*) => {$(
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
            }
        )*};
    }
    opaque!(
        rocksdb_t,
        rocksdb_options_t,
        rocksdb_block_based_table_options_t,
        rocksdb_readoptions_t,
        rocksdb_writeoptions_t,
        rocksdb_writebatch_t,
        rocksdb_iterator_t,
        rocksdb_cache_t,
        rocksdb_filterpolicy_t,
        rocksdb_pinnableslice_t
    );

    extern "C" {
        pub fn rocksdb_open(
            options: *const rocksdb_options_t,
            name: *const c_char,
            errptr: *mut *mut c_char,
        ) -> *mut rocksdb_t;
        pub fn rocksdb_close(db: *mut rocksdb_t);
        pub fn rocksdb_put(
            db: *mut rocksdb_t,
            options: *const rocksdb_writeoptions_t,
            key: *const c_char,
            keylen: usize,
            val: *const c_char,
            vallen: usize,
            errptr: *mut *mut c_char,
        );
        pub fn rocksdb_get_pinned(
            db: *mut rocksdb_t,
            options: *const rocksdb_readoptions_t,
            key: *const c_char,
            keylen: usize,
            errptr: *mut *mut c_char,
        ) -> *mut rocksdb_pinnableslice_t;
        pub fn rocksdb_pinnableslice_value(
            t: *const rocksdb_pinnableslice_t,
            vlen: *mut usize,
        ) -> *const c_char;
        pub fn rocksdb_pinnableslice_destroy(v: *mut rocksdb_pinnableslice_t);
        pub fn rocksdb_delete(
            db: *mut rocksdb_t,
            options: *const rocksdb_writeoptions_t,
            key: *const c_char,
            keylen: usize,
            errptr: *mut *mut c_char,
        );
        pub fn rocksdb_write(
            db: *mut rocksdb_t,
            options: *const rocksdb_writeoptions_t,
            batch: *mut rocksdb_writebatch_t,
            errptr: *mut *mut c_char,
        );
        pub fn rocksdb_create_iterator(
            db: *mut rocksdb_t,
            options: *const rocksdb_readoptions_t,
        ) -> *mut rocksdb_iterator_t;
        pub fn rocksdb_property_value(db: *mut rocksdb_t, propname: *const c_char) -> *mut c_char;
        pub fn rocksdb_compact_range(
            db: *mut rocksdb_t,
            start_key: *const c_char,
            start_key_len: usize,
            limit_key: *const c_char,
            limit_key_len: usize,
        );

        pub fn rocksdb_iter_destroy(it: *mut rocksdb_iterator_t);
        pub fn rocksdb_iter_valid(it: *const rocksdb_iterator_t) -> c_uchar;
        pub fn rocksdb_iter_seek_to_first(it: *mut rocksdb_iterator_t);
        pub fn rocksdb_iter_seek_to_last(it: *mut rocksdb_iterator_t);
        pub fn rocksdb_iter_seek(it: *mut rocksdb_iterator_t, k: *const c_char, klen: usize);
        pub fn rocksdb_iter_next(it: *mut rocksdb_iterator_t);
        pub fn rocksdb_iter_prev(it: *mut rocksdb_iterator_t);
        pub fn rocksdb_iter_key(it: *const rocksdb_iterator_t, klen: *mut usize) -> *const c_char;
        pub fn rocksdb_iter_value(it: *const rocksdb_iterator_t, vlen: *mut usize)
            -> *const c_char;
        pub fn rocksdb_iter_get_error(it: *const rocksdb_iterator_t, errptr: *mut *mut c_char);

        pub fn rocksdb_writebatch_create() -> *mut rocksdb_writebatch_t;
        pub fn rocksdb_writebatch_destroy(b: *mut rocksdb_writebatch_t);
        pub fn rocksdb_writebatch_clear(b: *mut rocksdb_writebatch_t);
        pub fn rocksdb_writebatch_put(
            b: *mut rocksdb_writebatch_t,
            key: *const c_char,
            klen: usize,
            val: *const c_char,
            vlen: usize,
        );
        pub fn rocksdb_writebatch_delete(
            b: *mut rocksdb_writebatch_t,
            key: *const c_char,
            klen: usize,
        );

        pub fn rocksdb_options_create() -> *mut rocksdb_options_t;
        pub fn rocksdb_options_destroy(o: *mut rocksdb_options_t);
        pub fn rocksdb_options_set_create_if_missing(o: *mut rocksdb_options_t, v: c_uchar);
        pub fn rocksdb_options_set_write_buffer_size(o: *mut rocksdb_options_t, v: usize);
        pub fn rocksdb_options_set_max_open_files(o: *mut rocksdb_options_t, v: c_int);
        pub fn rocksdb_options_set_target_file_size_base(o: *mut rocksdb_options_t, v: u64);
        pub fn rocksdb_options_set_max_bytes_for_level_base(o: *mut rocksdb_options_t, v: u64);
        pub fn rocksdb_options_set_max_bytes_for_level_multiplier(
            o: *mut rocksdb_options_t,
            v: f64,
        );
        pub fn rocksdb_options_set_compression(o: *mut rocksdb_options_t, v: c_int);
        pub fn rocksdb_options_set_compaction_style(o: *mut rocksdb_options_t, v: c_int);
        pub fn rocksdb_options_set_block_based_table_factory(
            o: *mut rocksdb_options_t,
            t: *mut rocksdb_block_based_table_options_t,
        );
        pub fn rocksdb_options_get_level0_file_num_compaction_trigger(
            o: *mut rocksdb_options_t,
        ) -> c_int;
        pub fn rocksdb_options_get_level0_slowdown_writes_trigger(
            o: *mut rocksdb_options_t,
        ) -> c_int;
        pub fn rocksdb_options_get_level0_stop_writes_trigger(o: *mut rocksdb_options_t) -> c_int;
        pub fn rocksdb_options_get_max_background_jobs(o: *mut rocksdb_options_t) -> c_int;
        pub fn rocksdb_options_get_max_write_buffer_number(o: *mut rocksdb_options_t) -> c_int;
        pub fn rocksdb_options_get_num_levels(o: *mut rocksdb_options_t) -> c_int;
        pub fn rocksdb_options_get_level_compaction_dynamic_level_bytes(
            o: *mut rocksdb_options_t,
        ) -> c_uchar;

        pub fn rocksdb_block_based_options_create() -> *mut rocksdb_block_based_table_options_t;
        pub fn rocksdb_block_based_options_destroy(t: *mut rocksdb_block_based_table_options_t);
        pub fn rocksdb_block_based_options_set_block_size(
            t: *mut rocksdb_block_based_table_options_t,
            v: usize,
        );
        pub fn rocksdb_block_based_options_set_block_restart_interval(
            t: *mut rocksdb_block_based_table_options_t,
            v: c_int,
        );
        pub fn rocksdb_block_based_options_set_block_cache(
            t: *mut rocksdb_block_based_table_options_t,
            c: *mut rocksdb_cache_t,
        );
        pub fn rocksdb_block_based_options_set_filter_policy(
            t: *mut rocksdb_block_based_table_options_t,
            p: *mut rocksdb_filterpolicy_t,
        );

        pub fn rocksdb_cache_create_lru(capacity: usize) -> *mut rocksdb_cache_t;
        pub fn rocksdb_cache_destroy(c: *mut rocksdb_cache_t);
        pub fn rocksdb_filterpolicy_create_bloom(bits_per_key: f64) -> *mut rocksdb_filterpolicy_t;

        pub fn rocksdb_readoptions_create() -> *mut rocksdb_readoptions_t;
        pub fn rocksdb_readoptions_destroy(o: *mut rocksdb_readoptions_t);
        pub fn rocksdb_writeoptions_create() -> *mut rocksdb_writeoptions_t;
        pub fn rocksdb_writeoptions_destroy(o: *mut rocksdb_writeoptions_t);
        pub fn rocksdb_writeoptions_set_sync(o: *mut rocksdb_writeoptions_t, v: c_uchar);

        pub fn rocksdb_free(ptr: *mut std::ffi::c_void);
    }
}

const LEVEL_COMPACTION: c_int = 0;
const ROCKSDB_LEVEL1_BYTES: u64 = 10 << 20;
/// LevelDB's block cache when none is given.
const DEFAULT_CACHE: u64 = 8 << 20;

/// Turns a RocksDB error out-parameter into a `Result`, freeing the message.
///
/// # Safety
/// `err` must be null or a message allocated by RocksDB.
unsafe fn check(err: *mut c_char) -> Result<()> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: RocksDB error messages are NUL-terminated and malloc'ed.
    let msg = unsafe { util::string_from(err) };
    // SAFETY: allocated by RocksDB, freed once.
    unsafe { ffi::rocksdb_free(err.cast()) };
    Err(Error::new(msg))
}

/// An open RocksDB database.
pub struct RocksDb {
    db: *mut ffi::rocksdb_t,
    options: *mut ffi::rocksdb_options_t,
    read_options: *mut ffi::rocksdb_readoptions_t,
    write_async: *mut ffi::rocksdb_writeoptions_t,
    write_sync: *mut ffi::rocksdb_writeoptions_t,
    settings: Vec<(String, String)>,
}

// SAFETY: a RocksDB `DB` is safe for concurrent use; the options objects are
// only read after `open` returns.
unsafe impl Send for RocksDb {}
// SAFETY: as above.
unsafe impl Sync for RocksDb {}

impl RocksDb {
    /// Opens (or creates) the database in `cfg.path`.
    pub fn open(cfg: &EngineConfig) -> Result<RocksDb> {
        let path = util::path_cstring(&cfg.path)?;
        let cache_bytes = cfg.cache_size.unwrap_or(DEFAULT_CACHE);
        let mut settings = vec![
            setting("create_if_missing", cfg.create),
            setting("write_buffer_size", util::bytes(cfg.write_buffer_size)),
            setting("target_file_size_base", util::bytes(cfg.max_file_size)),
            setting(
                "max_bytes_for_level_base",
                util::bytes(ROCKSDB_LEVEL1_BYTES),
            ),
            setting("max_bytes_for_level_multiplier", 10),
            setting("compaction_style", "level"),
            setting("block_size", cfg.block_size),
            setting("block_restart_interval", 16),
            setting("max_open_files", cfg.open_files),
            setting(
                "compression",
                if cfg.compression { "snappy" } else { "none" },
            ),
            setting(
                "block_cache",
                match cfg.cache_size {
                    Some(n) => format!("LRU {}", util::bytes(n)),
                    None => format!(
                        "LRU {} (LevelDB's default size)",
                        util::bytes(DEFAULT_CACHE)
                    ),
                },
            ),
            setting(
                "filter_policy",
                match cfg.bloom_bits {
                    Some(b) => format!("bloom, {b} bits per key"),
                    None => "none".to_string(),
                },
            ),
            setting("wal", "on (sync per benchmark: fillsync only)"),
        ];
        // SAFETY: constructor and setter calls on objects created here; the
        // table options, cache and filter are copied (shared_ptr) into the
        // options, so our handles are released right after.
        unsafe {
            let options = ffi::rocksdb_options_create();
            let mut engine = RocksDb {
                db: ptr::null_mut(),
                options,
                read_options: ffi::rocksdb_readoptions_create(),
                write_async: ffi::rocksdb_writeoptions_create(),
                write_sync: ffi::rocksdb_writeoptions_create(),
                settings: Vec::new(),
            };
            ffi::rocksdb_writeoptions_set_sync(engine.write_sync, 1);
            ffi::rocksdb_options_set_create_if_missing(options, u8::from(cfg.create));
            ffi::rocksdb_options_set_write_buffer_size(options, cfg.write_buffer_size as usize);
            ffi::rocksdb_options_set_target_file_size_base(options, cfg.max_file_size);
            ffi::rocksdb_options_set_max_bytes_for_level_base(options, ROCKSDB_LEVEL1_BYTES);
            ffi::rocksdb_options_set_max_bytes_for_level_multiplier(options, 10.0);
            ffi::rocksdb_options_set_compaction_style(options, LEVEL_COMPACTION);
            ffi::rocksdb_options_set_max_open_files(options, cfg.open_files as c_int);
            ffi::rocksdb_options_set_compression(options, c_int::from(cfg.compression));

            let table = ffi::rocksdb_block_based_options_create();
            ffi::rocksdb_block_based_options_set_block_size(table, cfg.block_size as usize);
            ffi::rocksdb_block_based_options_set_block_restart_interval(table, 16);
            let cache = ffi::rocksdb_cache_create_lru(cache_bytes as usize);
            ffi::rocksdb_block_based_options_set_block_cache(table, cache);
            if let Some(bits) = cfg.bloom_bits {
                // The table options take ownership of the policy.
                let policy = ffi::rocksdb_filterpolicy_create_bloom(f64::from(bits));
                ffi::rocksdb_block_based_options_set_filter_policy(table, policy);
            }
            ffi::rocksdb_options_set_block_based_table_factory(options, table);
            ffi::rocksdb_cache_destroy(cache);
            ffi::rocksdb_block_based_options_destroy(table);

            settings.extend([
                setting(
                    "level0_file_num_compaction_trigger (RocksDB default)",
                    ffi::rocksdb_options_get_level0_file_num_compaction_trigger(options),
                ),
                setting(
                    "level0_slowdown_writes_trigger (RocksDB default)",
                    ffi::rocksdb_options_get_level0_slowdown_writes_trigger(options),
                ),
                setting(
                    "level0_stop_writes_trigger (RocksDB default)",
                    ffi::rocksdb_options_get_level0_stop_writes_trigger(options),
                ),
                setting(
                    "max_background_jobs (RocksDB default)",
                    ffi::rocksdb_options_get_max_background_jobs(options),
                ),
                setting(
                    "max_write_buffer_number (RocksDB default)",
                    ffi::rocksdb_options_get_max_write_buffer_number(options),
                ),
                setting(
                    "num_levels (RocksDB default)",
                    ffi::rocksdb_options_get_num_levels(options),
                ),
                setting(
                    "level_compaction_dynamic_level_bytes (RocksDB default)",
                    ffi::rocksdb_options_get_level_compaction_dynamic_level_bytes(options) != 0,
                ),
            ]);
            if cfg.reuse_logs {
                settings.push(setting("reuse_logs", "ignored (no RocksDB equivalent)"));
            }

            let mut err = ptr::null_mut();
            engine.db = ffi::rocksdb_open(options, path.as_ptr(), &mut err);
            check(err)?;
            if engine.db.is_null() {
                return Err(Error::new("rocksdb_open returned no database"));
            }
            engine.settings = settings;
            Ok(engine)
        }
    }
}

impl Drop for RocksDb {
    fn drop(&mut self) {
        // SAFETY: each pointer was created by RocksDB and is freed once,
        // the database first.
        unsafe {
            if !self.db.is_null() {
                ffi::rocksdb_close(self.db);
            }
            ffi::rocksdb_options_destroy(self.options);
            ffi::rocksdb_readoptions_destroy(self.read_options);
            ffi::rocksdb_writeoptions_destroy(self.write_async);
            ffi::rocksdb_writeoptions_destroy(self.write_sync);
        }
    }
}

impl Engine for RocksDb {
    fn kind(&self) -> EngineKind {
        EngineKind::RocksDb
    }

    fn version(&self) -> String {
        // The C API has no version call; this is the version of the library
        // the binary was linked against, from pkg-config at build time.
        env!("SHALE_BENCH_ROCKSDB_PKG_VERSION").to_string()
    }

    fn settings(&self) -> Vec<(String, String)> {
        self.settings.clone()
    }

    fn session(&self) -> Result<Box<dyn Session + '_>> {
        // SAFETY: creates a batch owned by the session.
        let batch = unsafe { ffi::rocksdb_writebatch_create() };
        Ok(Box::new(RocksDbSession { db: self, batch }))
    }

    fn compact(&self) -> Result<()> {
        // SAFETY: null bounds mean the whole key range.
        unsafe { ffi::rocksdb_compact_range(self.db, ptr::null(), 0, ptr::null(), 0) };
        Ok(())
    }

    fn property(&self, name: &str) -> Option<String> {
        let name = name
            .strip_prefix("leveldb.")
            .map_or(name.to_string(), |rest| format!("rocksdb.{rest}"));
        let name = util::cstring(&name).ok()?;
        // SAFETY: the database is open; the result is malloc'ed or null.
        unsafe {
            let v = ffi::rocksdb_property_value(self.db, name.as_ptr());
            if v.is_null() {
                return None;
            }
            let s = util::string_from(v);
            ffi::rocksdb_free(v.cast());
            Some(s)
        }
    }
}

struct RocksDbSession<'a> {
    db: &'a RocksDb,
    batch: *mut ffi::rocksdb_writebatch_t,
}

impl Drop for RocksDbSession<'_> {
    fn drop(&mut self) {
        // SAFETY: the batch was created by this session.
        unsafe { ffi::rocksdb_writebatch_destroy(self.batch) };
    }
}

impl RocksDbSession<'_> {
    fn write_options(&self, sync: bool) -> *const ffi::rocksdb_writeoptions_t {
        if sync {
            self.db.write_sync
        } else {
            self.db.write_async
        }
    }
}

impl Session for RocksDbSession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8], sync: bool) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: key and value outlive the call; RocksDB copies them.
        unsafe {
            ffi::rocksdb_put(
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
        // SAFETY: the pinned slice (null when absent) is read, then destroyed.
        unsafe {
            let pinned = ffi::rocksdb_get_pinned(
                self.db.db,
                self.db.read_options,
                key.as_ptr().cast(),
                key.len(),
                &mut err,
            );
            check(err)?;
            if pinned.is_null() {
                return Ok(false);
            }
            let mut len = 0;
            let v = ffi::rocksdb_pinnableslice_value(pinned, &mut len);
            value.clear();
            value.extend_from_slice(util::slice(v.cast(), len));
            ffi::rocksdb_pinnableslice_destroy(pinned);
            Ok(true)
        }
    }

    fn delete(&mut self, key: &[u8], sync: bool) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: the key outlives the call.
        unsafe {
            ffi::rocksdb_delete(
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
        // SAFETY: the batch belongs to this session; RocksDB copies the bytes.
        unsafe {
            ffi::rocksdb_writebatch_clear(self.batch);
            for op in batch.iter() {
                match op {
                    BatchOp::Put(k, v) => ffi::rocksdb_writebatch_put(
                        self.batch,
                        k.as_ptr().cast(),
                        k.len(),
                        v.as_ptr().cast(),
                        v.len(),
                    ),
                    BatchOp::Delete(k) => {
                        ffi::rocksdb_writebatch_delete(self.batch, k.as_ptr().cast(), k.len())
                    }
                }
            }
            ffi::rocksdb_write(self.db.db, self.write_options(sync), self.batch, &mut err);
            check(err)
        }
    }

    fn iter(&mut self) -> Result<Box<dyn EngineIter + '_>> {
        // SAFETY: the iterator is destroyed before the database (it borrows it).
        let it = unsafe { ffi::rocksdb_create_iterator(self.db.db, self.db.read_options) };
        if it.is_null() {
            return Err(Error::new("rocksdb_create_iterator failed"));
        }
        Ok(Box::new(RocksDbIter { it, _db: self.db }))
    }
}

struct RocksDbIter<'a> {
    it: *mut ffi::rocksdb_iterator_t,
    _db: &'a RocksDb,
}

impl Drop for RocksDbIter<'_> {
    fn drop(&mut self) {
        // SAFETY: created by `rocksdb_create_iterator`, destroyed once.
        unsafe { ffi::rocksdb_iter_destroy(self.it) };
    }
}

impl EngineIter for RocksDbIter<'_> {
    fn seek_to_first(&mut self) {
        // SAFETY: valid iterator.
        unsafe { ffi::rocksdb_iter_seek_to_first(self.it) }
    }
    fn seek_to_last(&mut self) {
        // SAFETY: valid iterator.
        unsafe { ffi::rocksdb_iter_seek_to_last(self.it) }
    }
    fn seek(&mut self, key: &[u8]) {
        // SAFETY: valid iterator; the key is copied.
        unsafe { ffi::rocksdb_iter_seek(self.it, key.as_ptr().cast(), key.len()) }
    }
    fn next(&mut self) {
        if self.valid() {
            // SAFETY: valid and positioned.
            unsafe { ffi::rocksdb_iter_next(self.it) }
        }
    }
    fn prev(&mut self) {
        if self.valid() {
            // SAFETY: valid and positioned.
            unsafe { ffi::rocksdb_iter_prev(self.it) }
        }
    }
    fn valid(&self) -> bool {
        // SAFETY: valid iterator.
        unsafe { ffi::rocksdb_iter_valid(self.it) != 0 }
    }
    fn key(&self) -> &[u8] {
        if !self.valid() {
            return &[];
        }
        let mut len = 0;
        // SAFETY: positioned; the key stays valid until the iterator moves.
        unsafe { util::slice(ffi::rocksdb_iter_key(self.it, &mut len).cast(), len) }
    }
    fn value(&self) -> &[u8] {
        if !self.valid() {
            return &[];
        }
        let mut len = 0;
        // SAFETY: as for `key`.
        unsafe { util::slice(ffi::rocksdb_iter_value(self.it, &mut len).cast(), len) }
    }
    fn status(&self) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: valid iterator; the error is freed by `check`.
        unsafe {
            ffi::rocksdb_iter_get_error(self.it, &mut err);
            check(err)
        }
    }
}
