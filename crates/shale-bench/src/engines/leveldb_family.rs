//! An engine driven through LevelDB's C API (`leveldb/c.h`), whichever
//! library implements it: Google's LevelDB (`leveldb`, linked) or Shale's C
//! library (`shale-c`, loaded with dlopen, since both export the same
//! `leveldb_*` symbols and cannot be linked into one binary).
//!
//! Each engine fills a [`LevelDbApi`] table with its library's functions;
//! the opening, the options (as db_bench sets them: write buffer, table file
//! size, block size, open files and compression from the flags, block
//! restart interval 16, an LRU cache of `--cache_size` bytes (none given
//! means the library's own 8 MB cache), a bloom filter of `--bloom_bits`
//! bits per key), and the sessions, iterators and batches (`lsm_capi`) are
//! the same code for both.
//!
//! Invariant: the database is open for the whole life of the value; the
//! options, cache and filter it was opened with are freed only after it is
//! closed.

#![allow(dead_code)] // which parts are used depends on the engines built

use std::os::raw::{c_char, c_int};
use std::ptr;

use super::lsm_capi::{check, Handles, LsmCApi, LsmTypes};
use super::util::{self, setting};
use crate::engine::{Engine, EngineConfig, EngineKind, Result, Session};

/// The opaque C types of `leveldb/c.h`, from the one copy of LevelDB's C
/// declarations (crate `leveldb-ffi`).
pub(super) mod types {
    pub use leveldb_ffi::{
        leveldb_cache_t, leveldb_filterpolicy_t, leveldb_iterator_t, leveldb_options_t,
        leveldb_readoptions_t, leveldb_t, leveldb_writebatch_t, leveldb_writeoptions_t,
    };
}

use types::*;

/// The C types, for the shared LevelDB-family code.
pub(super) struct Types;

impl LsmTypes for Types {
    type Db = leveldb_t;
    type ReadOptions = leveldb_readoptions_t;
    type WriteOptions = leveldb_writeoptions_t;
    type Batch = leveldb_writebatch_t;
    type Iter = leveldb_iterator_t;
}

type Err = *mut *mut c_char;

/// `leveldb_get`'s signature.
pub(super) type RawGetFn = unsafe extern "C" fn(
    *mut leveldb_t,
    *const leveldb_readoptions_t,
    *const c_char,
    usize,
    *mut usize,
    Err,
) -> *mut c_char;

/// One library's implementation of `leveldb/c.h`: the functions the
/// sessions use (`lsm`) and those that open the database. Calling any of
/// them is that library's contract, which is LevelDB's header.
pub(super) struct LevelDbApi {
    pub lsm: LsmCApi<Types>,
    pub open: unsafe extern "C" fn(*const leveldb_options_t, *const c_char, Err) -> *mut leveldb_t,
    pub options_create: unsafe extern "C" fn() -> *mut leveldb_options_t,
    pub options_destroy: unsafe extern "C" fn(*mut leveldb_options_t),
    pub options_set_filter_policy:
        unsafe extern "C" fn(*mut leveldb_options_t, *mut leveldb_filterpolicy_t),
    pub options_set_create_if_missing: unsafe extern "C" fn(*mut leveldb_options_t, u8),
    pub options_set_paranoid_checks: unsafe extern "C" fn(*mut leveldb_options_t, u8),
    pub options_set_write_buffer_size: unsafe extern "C" fn(*mut leveldb_options_t, usize),
    pub options_set_max_open_files: unsafe extern "C" fn(*mut leveldb_options_t, c_int),
    pub options_set_cache: unsafe extern "C" fn(*mut leveldb_options_t, *mut leveldb_cache_t),
    pub options_set_block_size: unsafe extern "C" fn(*mut leveldb_options_t, usize),
    pub options_set_block_restart_interval: unsafe extern "C" fn(*mut leveldb_options_t, c_int),
    pub options_set_max_file_size: unsafe extern "C" fn(*mut leveldb_options_t, usize),
    pub options_set_compression: unsafe extern "C" fn(*mut leveldb_options_t, c_int),
    pub filterpolicy_create_bloom: unsafe extern "C" fn(c_int) -> *mut leveldb_filterpolicy_t,
    pub filterpolicy_destroy: unsafe extern "C" fn(*mut leveldb_filterpolicy_t),
    pub cache_create_lru: unsafe extern "C" fn(usize) -> *mut leveldb_cache_t,
    pub cache_destroy: unsafe extern "C" fn(*mut leveldb_cache_t),
    pub major_version: unsafe extern "C" fn() -> c_int,
    pub minor_version: unsafe extern "C" fn() -> c_int,
}

/// A point lookup through `leveldb_get`, which returns a malloc'ed copy of
/// the value (null when absent), freed with `free` after copying.
///
/// Inlined into each engine's `get`, so that a lookup takes one call before
/// the library's.
///
/// # Safety
/// `get` and `free` are the same library's; `db` and `o` are open.
#[inline(always)]
pub(super) unsafe fn get_copy(
    get: RawGetFn,
    free: unsafe extern "C" fn(*mut std::ffi::c_void),
    db: *mut leveldb_t,
    o: *const leveldb_readoptions_t,
    key: &[u8],
    value: &mut Vec<u8>,
) -> Result<bool> {
    let mut err = ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: the result is `len` bytes (or null), freed after copying.
    unsafe {
        let v = get(db, o, key.as_ptr().cast(), key.len(), &mut len, &mut err);
        check(free, err)?;
        if v.is_null() {
            return Ok(false);
        }
        value.clear();
        value.extend_from_slice(util::slice(v as *const u8, len));
        free(v.cast());
        Ok(true)
    }
}

/// What the database was opened with, freed after it is closed.
struct Owned {
    api: &'static LevelDbApi,
    options: *mut leveldb_options_t,
    cache: *mut leveldb_cache_t,
    filter: *mut leveldb_filterpolicy_t,
}

impl Drop for Owned {
    fn drop(&mut self) {
        let api = self.api;
        // SAFETY: each pointer was created by the library (or is null) and
        // is freed once; the database using them is closed by then.
        unsafe {
            (api.options_destroy)(self.options);
            if !self.cache.is_null() {
                (api.cache_destroy)(self.cache);
            }
            if !self.filter.is_null() {
                (api.filterpolicy_destroy)(self.filter);
            }
        }
    }
}

/// A database open through a library implementing LevelDB's C API.
pub struct LevelDbFamily {
    // Field order matters: `h` (which closes the database) drops before
    // `owned` (the options, cache and filter the database uses).
    h: Handles<Types>,
    owned: Owned,
    kind: EngineKind,
    settings: Vec<(String, String)>,
}

// SAFETY: a database of LevelDB's C API is safe for concurrent use by
// multiple threads (LevelDB's and Shale's both); the options objects are
// only read after `open` returns.
unsafe impl Send for LevelDbFamily {}
// SAFETY: as above.
unsafe impl Sync for LevelDbFamily {}

impl LevelDbFamily {
    /// Opens (or creates) the database in `cfg.path` through `api`, as
    /// engine `kind`; `library_settings` come first in the settings.
    pub(super) fn open(
        api: &'static LevelDbApi,
        kind: EngineKind,
        library_settings: Vec<(String, String)>,
        cfg: &EngineConfig,
    ) -> Result<LevelDbFamily> {
        let path = util::path_cstring(&cfg.path)?;
        let mut settings = library_settings;
        settings.extend([
            setting("create_if_missing", cfg.create),
            setting("write_buffer_size", util::bytes(cfg.write_buffer_size)),
            setting("max_file_size", util::bytes(cfg.max_file_size)),
            setting("block_size", cfg.block_size),
            setting("block_restart_interval", 16),
            setting("max_open_files", cfg.open_files),
            setting("compression", cfg.compression.name()),
            setting("paranoid_checks", false),
            setting("reuse_logs", "false (not settable through LevelDB's C API)"),
            setting("write_options.sync", "per benchmark (fillsync only)"),
        ]);
        // SAFETY: plain constructor and setter calls on objects created here,
        // owned by `engine` from the start, which frees them.
        unsafe {
            let options = (api.options_create)();
            let mut engine = LevelDbFamily {
                h: Handles::new(&api.lsm),
                owned: Owned {
                    api,
                    options,
                    cache: ptr::null_mut(),
                    filter: ptr::null_mut(),
                },
                kind,
                settings,
            };
            (api.options_set_create_if_missing)(options, u8::from(cfg.create));
            (api.options_set_paranoid_checks)(options, 0);
            (api.options_set_write_buffer_size)(options, cfg.write_buffer_size as usize);
            (api.options_set_max_file_size)(options, cfg.max_file_size as usize);
            (api.options_set_block_size)(options, cfg.block_size as usize);
            (api.options_set_block_restart_interval)(options, 16);
            (api.options_set_max_open_files)(options, cfg.open_files as c_int);
            (api.options_set_compression)(options, cfg.compression.leveldb_type());
            match cfg.cache_size {
                Some(n) => {
                    engine.owned.cache = (api.cache_create_lru)(n as usize);
                    (api.options_set_cache)(options, engine.owned.cache);
                    engine
                        .settings
                        .push(setting("block_cache", format!("LRU {}", util::bytes(n))));
                }
                None => engine
                    .settings
                    .push(setting("block_cache", "the library's default (8 MB LRU)")),
            }
            match cfg.bloom_bits {
                Some(bits) => {
                    engine.owned.filter = (api.filterpolicy_create_bloom)(bits as c_int);
                    (api.options_set_filter_policy)(options, engine.owned.filter);
                    engine.settings.push(setting(
                        "filter_policy",
                        format!("bloom, {bits} bits per key"),
                    ));
                }
                None => engine.settings.push(setting("filter_policy", "none")),
            }
            let mut err = ptr::null_mut();
            let db = (api.open)(options, path.as_ptr(), &mut err);
            engine.h.opened(db, err, "leveldb_open")?;
            Ok(engine)
        }
    }
}

impl Engine for LevelDbFamily {
    fn kind(&self) -> EngineKind {
        self.kind
    }

    fn version(&self) -> String {
        let api = self.owned.api;
        // SAFETY: version getters have no preconditions.
        let (major, minor) = unsafe { ((api.major_version)(), (api.minor_version)()) };
        match self.kind {
            EngineKind::ShaleC => format!(
                "{} (C API of LevelDB {major}.{minor})",
                self.h.property("shale.version").unwrap_or_default()
            ),
            _ => format!("{major}.{minor}"),
        }
    }

    fn settings(&self) -> Vec<(String, String)> {
        self.settings.clone()
    }

    fn session(&self) -> Result<Box<dyn Session + '_>> {
        Ok(self.h.session())
    }

    fn compact(&self) -> Result<()> {
        self.h.compact();
        Ok(())
    }

    fn property(&self, name: &str) -> Option<String> {
        self.h.property(name)
    }
}
