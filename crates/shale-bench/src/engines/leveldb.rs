//! Google LevelDB (the installed 1.23 library) through its C API.
//!
//! Configured as db_bench configures it: write buffer, table file size,
//! block size, open files and compression from the flags, block restart
//! interval 16, an LRU cache of `--cache_size` bytes (none given means
//! LevelDB's own 8 MB cache), a bloom filter of `--bloom_bits` bits per key
//! (none by default). The C API has no `reuse_logs` switch, so it stays off.
//!
//! Opening, options, sessions, iterators and batches are the code shared
//! with Shale's C library (`leveldb_family`) and, for sessions, with RocksDB
//! (`lsm_capi`); this file names LevelDB's functions.
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

use super::leveldb_family::{get_copy, LevelDbApi, LevelDbFamily};
use super::lsm_capi::LsmCApi;
use crate::engine::{Codecs, EngineConfig, EngineKind, Error, Result};
use crate::flags::Codec;

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

/// LevelDB's functions, for the shared LevelDB-family code.
static API: LevelDbApi = LevelDbApi {
    lsm: LsmCApi {
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
    },
    open: ffi::leveldb_open,
    options_create: ffi::leveldb_options_create,
    options_destroy: ffi::leveldb_options_destroy,
    options_set_filter_policy: ffi::leveldb_options_set_filter_policy,
    options_set_create_if_missing: ffi::leveldb_options_set_create_if_missing,
    options_set_paranoid_checks: ffi::leveldb_options_set_paranoid_checks,
    options_set_write_buffer_size: ffi::leveldb_options_set_write_buffer_size,
    options_set_max_open_files: ffi::leveldb_options_set_max_open_files,
    options_set_cache: ffi::leveldb_options_set_cache,
    options_set_block_size: ffi::leveldb_options_set_block_size,
    options_set_block_restart_interval: ffi::leveldb_options_set_block_restart_interval,
    options_set_max_file_size: ffi::leveldb_options_set_max_file_size,
    options_set_compression: ffi::leveldb_options_set_compression,
    filterpolicy_create_bloom: ffi::leveldb_filterpolicy_create_bloom,
    filterpolicy_destroy: ffi::leveldb_filterpolicy_destroy,
    cache_create_lru: ffi::leveldb_cache_create_lru,
    cache_destroy: ffi::leveldb_cache_destroy,
    major_version: ffi::leveldb_major_version,
    minor_version: ffi::leveldb_minor_version,
};

/// `leveldb_get`, copying the value out.
///
/// # Safety
/// `db` and `o` must be open.
unsafe fn get(
    db: *mut ffi::leveldb_t,
    o: *const ffi::leveldb_readoptions_t,
    key: &[u8],
    value: &mut Vec<u8>,
) -> Result<bool> {
    // SAFETY: LevelDB's own get and free; the caller keeps `db` and `o` open.
    unsafe { get_copy(ffi::leveldb_get, ffi::leveldb_free, db, o, key, value) }
}

/// An open LevelDB database.
pub type LevelDb = LevelDbFamily;

/// Opens (or creates) a LevelDB database in `cfg.path`.
pub fn open(cfg: &EngineConfig) -> Result<LevelDb> {
    if matches!(cfg.compression, Codec::Zstd | Codec::Lz4) {
        return Err(Error::new(format!(
            "--compression_type={}: LevelDB 1.23 has no {} compression (none or snappy only)",
            cfg.compression.name(),
            cfg.compression.name()
        )));
    }
    LevelDbFamily::open(&API, EngineKind::LevelDb, Vec::new(), cfg)
}
