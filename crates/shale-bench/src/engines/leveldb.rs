//! Google LevelDB (the installed 1.23 library) through its C API.
//!
//! Configured as db_bench configures it: write buffer, table file size,
//! block size, open files and compression from the flags, block restart
//! interval 16, an LRU cache of `--cache_size` bytes (none given means
//! LevelDB's own 8 MB cache), a bloom filter of `--bloom_bits` bits per key
//! (none by default). The C API has no `reuse_logs` switch, so it stays off.
//!
//! Sessions, iterators and batches are the LevelDB-family code shared with
//! RocksDB (`lsm_capi`); this file names LevelDB's functions and sets its
//! options.
//!
//! Its codecs for db_bench's `crc32c` and snappy lines are LevelDB's own:
//! `leveldb::crc32c::Value` (which `libleveldb.so` does not export: the
//! function is linked from `crc32c.cc.o` of the same version's
//! `libleveldb.a`, see `build.rs`) and libsnappy, which `libleveldb.so`
//! links and whose `RawCompress` / `RawUncompress` LevelDB's db_bench times.
//!
//! Invariant: the database is open for the whole life of the value; the
//! options, cache and filter it was opened with are freed only after it is
//! closed.

use std::os::raw::c_int;
use std::ptr;

use super::lsm_capi::{check, Handles, LsmCApi, LsmTypes};
use super::util::{self, setting};
use crate::engine::{Codecs, Engine, EngineConfig, EngineKind, Result, Session};

/// LevelDB's CRC-32C, from `crc32c.cc.o` of `libleveldb.a`.
#[cfg(have_leveldb_crc32c)]
mod crc {
    use std::os::raw::c_char;

    extern "C" {
        /// `uint32_t leveldb::crc32c::Extend(uint32_t init_crc, const char*
        /// data, size_t n)`.
        #[link_name = "_ZN7leveldb6crc32c6ExtendEjPKcm"]
        fn leveldb_crc32c_extend(init_crc: u32, data: *const c_char, n: usize) -> u32;
    }

    /// `leveldb::crc32c::Value(data, n)`, which is `Extend(0, data, n)`.
    pub fn value(data: &[u8]) -> u32 {
        // SAFETY: the function reads `n` bytes from `data`, which are
        // readable; it keeps no pointer (only a lazily set static flag).
        unsafe { leveldb_crc32c_extend(0, data.as_ptr().cast::<c_char>(), data.len()) }
    }
}

/// LevelDB's CRC-32C and libsnappy, or why this build has them not.
pub fn codecs() -> Codecs {
    #[cfg(have_leveldb_crc32c)]
    let crc32c = Ok(crate::engine::Crc32c {
        implementation: format!(
            "leveldb::crc32c::Value (crc32c.cc.o linked from {}: {})",
            env!("SHALE_BENCH_LEVELDB_CRC32C_ARCHIVE"),
            env!("SHALE_BENCH_LEVELDB_CRC32C_CODE")
        ),
        value: crc::value,
    });
    #[cfg(not(have_leveldb_crc32c))]
    let crc32c = Err(format!(
        "LevelDB's crc32c (not exported by libleveldb.so) is not linked from libleveldb.a: {}",
        env!("SHALE_BENCH_LEVELDB_CRC32C_STATUS")
    ));
    #[cfg(have_snappy)]
    let snappy = Ok(super::libsnappy::snappy(
        ", which LevelDB's port::Snappy_Compress / Snappy_Uncompress call",
    ));
    #[cfg(not(have_snappy))]
    let snappy = Err(super::no_libsnappy());
    Codecs { crc32c, snappy }
}

use leveldb_ffi as ffi;

/// The library's types, for the shared LevelDB-family code.
pub(super) struct Types;

impl LsmTypes for Types {
    type Db = ffi::leveldb_t;
    type ReadOptions = ffi::leveldb_readoptions_t;
    type WriteOptions = ffi::leveldb_writeoptions_t;
    type Batch = ffi::leveldb_writebatch_t;
    type Iter = ffi::leveldb_iterator_t;
}

/// The library's functions, for the shared LevelDB-family code.
static API: LsmCApi<Types> = LsmCApi {
    close: ffi::leveldb_close,
    free: ffi::leveldb_free,
    readoptions_create: ffi::leveldb_readoptions_create,
    readoptions_destroy: ffi::leveldb_readoptions_destroy,
    writeoptions_create: ffi::leveldb_writeoptions_create,
    writeoptions_destroy: ffi::leveldb_writeoptions_destroy,
    writeoptions_set_sync: ffi::leveldb_writeoptions_set_sync,
    put: ffi::leveldb_put,
    delete: ffi::leveldb_delete,
    write: ffi::leveldb_write,
    get,
    property_value: ffi::leveldb_property_value,
    compact_range: ffi::leveldb_compact_range,
    batch_create: ffi::leveldb_writebatch_create,
    batch_destroy: ffi::leveldb_writebatch_destroy,
    batch_clear: ffi::leveldb_writebatch_clear,
    batch_put: ffi::leveldb_writebatch_put,
    batch_delete: ffi::leveldb_writebatch_delete,
    create_iterator: ffi::leveldb_create_iterator,
    iter_destroy: ffi::leveldb_iter_destroy,
    iter_valid: ffi::leveldb_iter_valid,
    iter_seek_to_first: ffi::leveldb_iter_seek_to_first,
    iter_seek_to_last: ffi::leveldb_iter_seek_to_last,
    iter_seek: ffi::leveldb_iter_seek,
    iter_next: ffi::leveldb_iter_next,
    iter_prev: ffi::leveldb_iter_prev,
    iter_key: ffi::leveldb_iter_key,
    iter_value: ffi::leveldb_iter_value,
    iter_get_error: ffi::leveldb_iter_get_error,
};

/// `leveldb_get` returns a malloc'ed copy of the value (null when absent).
///
/// # Safety
/// `db` and `o` must be open.
unsafe fn get(
    db: *mut ffi::leveldb_t,
    o: *const ffi::leveldb_readoptions_t,
    key: &[u8],
    value: &mut Vec<u8>,
) -> Result<bool> {
    let mut err = ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: the result is `len` bytes (or null), freed after copying.
    unsafe {
        let v = ffi::leveldb_get(db, o, key.as_ptr().cast(), key.len(), &mut len, &mut err);
        check(ffi::leveldb_free, err)?;
        if v.is_null() {
            return Ok(false);
        }
        value.clear();
        value.extend_from_slice(util::slice(v as *const u8, len));
        ffi::leveldb_free(v.cast());
        Ok(true)
    }
}

/// What the database was opened with, freed after it is closed.
struct Owned {
    options: *mut ffi::leveldb_options_t,
    cache: *mut ffi::leveldb_cache_t,
    filter: *mut ffi::leveldb_filterpolicy_t,
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: each pointer was created by LevelDB (or is null) and is
        // freed once; the database using them is closed by then.
        unsafe {
            ffi::leveldb_options_destroy(self.options);
            if !self.cache.is_null() {
                ffi::leveldb_cache_destroy(self.cache);
            }
            if !self.filter.is_null() {
                ffi::leveldb_filterpolicy_destroy(self.filter);
            }
        }
    }
}

/// An open LevelDB database.
pub struct LevelDb {
    // Field order matters: `h` (which closes the database) drops before
    // `owned` (the options, cache and filter the database uses).
    h: Handles<Types>,
    owned: Owned,
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
        let settings = vec![
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
        // SAFETY: plain constructor and setter calls on objects created here,
        // owned by `engine` from the start, which frees them.
        unsafe {
            let options = ffi::leveldb_options_create();
            let mut engine = LevelDb {
                h: Handles::new(&API),
                owned: Owned {
                    options,
                    cache: ptr::null_mut(),
                    filter: ptr::null_mut(),
                },
                settings,
            };
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
                    engine.owned.cache = ffi::leveldb_cache_create_lru(n as usize);
                    ffi::leveldb_options_set_cache(options, engine.owned.cache);
                    engine
                        .settings
                        .push(setting("block_cache", format!("LRU {}", util::bytes(n))));
                }
                None => engine
                    .settings
                    .push(setting("block_cache", "LevelDB default (8 MB LRU)")),
            }
            match cfg.bloom_bits {
                Some(bits) => {
                    engine.owned.filter = ffi::leveldb_filterpolicy_create_bloom(bits as c_int);
                    ffi::leveldb_options_set_filter_policy(options, engine.owned.filter);
                    engine.settings.push(setting(
                        "filter_policy",
                        format!("bloom, {bits} bits per key"),
                    ));
                }
                None => engine.settings.push(setting("filter_policy", "none")),
            }
            let mut err = ptr::null_mut();
            let db = ffi::leveldb_open(options, path.as_ptr(), &mut err);
            engine.h.opened(db, err, "leveldb_open")?;
            Ok(engine)
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
