//! RocksDB (the installed 7.8 library) through its C API.
//!
//! Configured with LevelDB's sizes, as the protocol asks: write buffer, table
//! file size (`target_file_size_base`), block size, open files, compression
//! (snappy or none) from the flags, a 10 MB level-1 budget with a x10
//! multiplier (LevelDB's level sizes), leveled compaction, block restart
//! interval 16, tables read through memory maps (`allow_mmap_reads`, as
//! LevelDB reads them; `--mmap_read=0` restores RocksDB's pread), an LRU
//! block cache of `--cache_size` bytes (when none is
//! given, 8 MB: LevelDB's default, rather than RocksDB's larger one) and a
//! bloom filter only when `--bloom_bits` is given. Everything else keeps
//! RocksDB's defaults, which are read back and printed.
//!
//! Sessions, iterators and batches are the LevelDB-family code shared with
//! LevelDB (`lsm_capi`); this file names RocksDB's functions and sets its
//! options.
//!
//! Its codecs for db_bench's `crc32c` and snappy lines are RocksDB's own:
//! `rocksdb::crc32c::Extend`, which `librocksdb.so` exports, and libsnappy,
//! which it links for its snappy compression.
//!
//! Invariant: the database is open for the whole life of the value and is
//! closed before the options it was opened with are freed.

use std::os::raw::c_int;
use std::ptr;

use super::lsm_capi::{check, Handles, LsmCApi, LsmTypes};
use super::util::{self, setting};
use crate::engine::{Codecs, Crc32c, Engine, EngineConfig, EngineKind, Result, Session};

/// RocksDB's CRC-32C, exported by `librocksdb.so`.
mod crc {
    use std::os::raw::c_char;

    extern "C" {
        /// `uint32_t rocksdb::crc32c::Extend(uint32_t init_crc, const char*
        /// buf, size_t size)`.
        #[link_name = "_ZN7rocksdb6crc32c6ExtendEjPKcm"]
        fn rocksdb_crc32c_extend(init_crc: u32, data: *const c_char, n: usize) -> u32;
    }

    /// `rocksdb::crc32c::Value(data, n)`, which is `Extend(0, data, n)`.
    pub fn value(data: &[u8]) -> u32 {
        // SAFETY: the function reads `n` bytes from `data`, which are
        // readable, and keeps no pointer.
        unsafe { rocksdb_crc32c_extend(0, data.as_ptr().cast::<c_char>(), data.len()) }
    }
}

/// RocksDB's CRC-32C and libsnappy (or why this build has no libsnappy).
pub fn codecs() -> Codecs {
    let code = match env!("SHALE_BENCH_ROCKSDB_CRC32_INSNS").parse::<usize>() {
        Ok(0) => {
            "the installed library has no SSE4.2 crc32 instruction: its portable table-driven code"
        }
        Ok(_) => "the installed library picks SSE4.2 crc32 code or its portable code at run time",
        Err(_) => "hardware or portable code, unknown (objdump was not available at build time)",
    };
    #[cfg(have_snappy)]
    let snappy = Ok(super::libsnappy::snappy(
        ", which RocksDB's Snappy_Compress / Snappy_Uncompress call",
    ));
    #[cfg(not(have_snappy))]
    let snappy = Err(super::no_libsnappy());
    Codecs {
        crc32c: Ok(Crc32c {
            implementation: format!("rocksdb::crc32c::Value (exported Extend; {code})"),
            value: crc::value,
        }),
        snappy,
    }
}

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
        pub fn rocksdb_options_set_allow_mmap_reads(o: *mut rocksdb_options_t, v: c_uchar);
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

/// The library's types, for the shared LevelDB-family code.
pub(super) struct Types;

impl LsmTypes for Types {
    type Db = ffi::rocksdb_t;
    type ReadOptions = ffi::rocksdb_readoptions_t;
    type WriteOptions = ffi::rocksdb_writeoptions_t;
    type Batch = ffi::rocksdb_writebatch_t;
    type Iter = ffi::rocksdb_iterator_t;
}

/// The library's functions, for the shared LevelDB-family code.
static API: LsmCApi<Types> = LsmCApi {
    close: ffi::rocksdb_close,
    free: ffi::rocksdb_free,
    readoptions_create: ffi::rocksdb_readoptions_create,
    readoptions_destroy: ffi::rocksdb_readoptions_destroy,
    writeoptions_create: ffi::rocksdb_writeoptions_create,
    writeoptions_destroy: ffi::rocksdb_writeoptions_destroy,
    writeoptions_set_sync: ffi::rocksdb_writeoptions_set_sync,
    put: ffi::rocksdb_put,
    delete: ffi::rocksdb_delete,
    write: ffi::rocksdb_write,
    get,
    property_value: ffi::rocksdb_property_value,
    compact_range: ffi::rocksdb_compact_range,
    batch_create: ffi::rocksdb_writebatch_create,
    batch_destroy: ffi::rocksdb_writebatch_destroy,
    batch_clear: ffi::rocksdb_writebatch_clear,
    batch_put: ffi::rocksdb_writebatch_put,
    batch_delete: ffi::rocksdb_writebatch_delete,
    create_iterator: ffi::rocksdb_create_iterator,
    iter_destroy: ffi::rocksdb_iter_destroy,
    iter_valid: ffi::rocksdb_iter_valid,
    iter_seek_to_first: ffi::rocksdb_iter_seek_to_first,
    iter_seek_to_last: ffi::rocksdb_iter_seek_to_last,
    iter_seek: ffi::rocksdb_iter_seek,
    iter_next: ffi::rocksdb_iter_next,
    iter_prev: ffi::rocksdb_iter_prev,
    iter_key: ffi::rocksdb_iter_key,
    iter_value: ffi::rocksdb_iter_value,
    iter_get_error: ffi::rocksdb_iter_get_error,
};

/// `rocksdb_get_pinned` returns a pinned slice of the value (null when
/// absent), copied out and released.
///
/// # Safety
/// `db` and `o` must be open.
unsafe fn get(
    db: *mut ffi::rocksdb_t,
    o: *const ffi::rocksdb_readoptions_t,
    key: &[u8],
    value: &mut Vec<u8>,
) -> Result<bool> {
    let mut err = ptr::null_mut();
    // SAFETY: the pinned slice (null when absent) is read, then destroyed.
    unsafe {
        let pinned = ffi::rocksdb_get_pinned(db, o, key.as_ptr().cast(), key.len(), &mut err);
        check(ffi::rocksdb_free, err)?;
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

/// The options the database was opened with, freed after it is closed.
struct Owned(*mut ffi::rocksdb_options_t);

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: created by RocksDB, freed once, after the database closed.
        unsafe { ffi::rocksdb_options_destroy(self.0) }
    }
}

/// An open RocksDB database.
pub struct RocksDb {
    // Field order matters: `h` (which closes the database) drops before
    // `options`.
    h: Handles<Types>,
    _options: Owned,
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
            setting("compression", cfg.compression.name()),
            setting(
                "allow_mmap_reads",
                if cfg.mmap_read {
                    "true (tables read through memory maps, as LevelDB reads them; --mmap_read=0: RocksDB's default pread)"
                } else {
                    "false (RocksDB's default: pread into the block cache)"
                },
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
                h: Handles::new(&API),
                _options: Owned(options),
                settings: Vec::new(),
            };
            ffi::rocksdb_options_set_create_if_missing(options, u8::from(cfg.create));
            ffi::rocksdb_options_set_write_buffer_size(options, cfg.write_buffer_size as usize);
            ffi::rocksdb_options_set_target_file_size_base(options, cfg.max_file_size);
            ffi::rocksdb_options_set_max_bytes_for_level_base(options, ROCKSDB_LEVEL1_BYTES);
            ffi::rocksdb_options_set_max_bytes_for_level_multiplier(options, 10.0);
            ffi::rocksdb_options_set_compaction_style(options, LEVEL_COMPACTION);
            ffi::rocksdb_options_set_max_open_files(options, cfg.open_files as c_int);
            ffi::rocksdb_options_set_compression(options, cfg.compression.rocksdb_type());
            ffi::rocksdb_options_set_allow_mmap_reads(options, u8::from(cfg.mmap_read));

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

            // RocksDB's own defaults for what the flags do not set.
            type Getter = unsafe extern "C" fn(*mut ffi::rocksdb_options_t) -> c_int;
            let defaults: [(&str, Getter); 6] = [
                (
                    "level0_file_num_compaction_trigger",
                    ffi::rocksdb_options_get_level0_file_num_compaction_trigger,
                ),
                (
                    "level0_slowdown_writes_trigger",
                    ffi::rocksdb_options_get_level0_slowdown_writes_trigger,
                ),
                (
                    "level0_stop_writes_trigger",
                    ffi::rocksdb_options_get_level0_stop_writes_trigger,
                ),
                (
                    "max_background_jobs",
                    ffi::rocksdb_options_get_max_background_jobs,
                ),
                (
                    "max_write_buffer_number",
                    ffi::rocksdb_options_get_max_write_buffer_number,
                ),
                ("num_levels", ffi::rocksdb_options_get_num_levels),
            ];
            for (name, get) in defaults {
                settings.push(setting(&format!("{name} (RocksDB default)"), get(options)));
            }
            settings.push(setting(
                "level_compaction_dynamic_level_bytes (RocksDB default)",
                ffi::rocksdb_options_get_level_compaction_dynamic_level_bytes(options) != 0,
            ));
            if cfg.reuse_logs {
                settings.push(setting("reuse_logs", "ignored (no RocksDB equivalent)"));
            }

            let mut err = ptr::null_mut();
            let db = ffi::rocksdb_open(options, path.as_ptr(), &mut err);
            engine.h.opened(db, err, "rocksdb_open")?;
            engine.settings = settings;
            Ok(engine)
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
        Ok(self.h.session())
    }

    fn compact(&self) -> Result<()> {
        self.h.compact();
        Ok(())
    }

    fn property(&self, name: &str) -> Option<String> {
        let name = name
            .strip_prefix("leveldb.")
            .map_or(name.to_string(), |rest| format!("rocksdb.{rest}"));
        self.h.property(&name)
    }
}
