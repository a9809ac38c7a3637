//! Shale through its C API (`libshale_c.so`, crate `shale-c`), to measure
//! what the C boundary costs against the `shale` engine (the same engine
//! called from Rust) and to run exactly the code the `leveldb` engine runs
//! (`leveldb_family`) on Shale.
//!
//! The library exports the same `leveldb_*` symbols as LevelDB, which this
//! binary links, so it is not linked but loaded at run time with
//! `dlopen(RTLD_NOW | RTLD_LOCAL)` (its symbols stay out of the global
//! scope) and its functions looked up with `dlsym` into a `LevelDbApi`
//! table. It is found at `$SHALE_C_LIB` if set, else next to the running
//! executable (`target/<profile>/libshale_c.so`, where `cargo build -p
//! shale-c` or `make build` put it, also from `target/<profile>/deps`).
//! Not found, the engine is reported as not available, with the reason.

use std::ffi::{c_void, CString};
use std::mem;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use super::leveldb_family::types::{leveldb_readoptions_t, leveldb_t};
use super::leveldb_family::{get_copy, LevelDbApi, LevelDbFamily, RawGetFn};
use super::lsm_capi::LsmCApi;
use super::util::setting;
use crate::engine::{EngineConfig, EngineKind, Error, Result};

/// The loaded library.
struct Loaded {
    path: String,
    api: LevelDbApi,
    get: RawGetFn,
}

static LOADED: OnceLock<std::result::Result<Loaded, String>> = OnceLock::new();

/// Where the library may be, in order.
fn candidates() -> Vec<PathBuf> {
    if let Some(p) = std::env::var_os("SHALE_C_LIB").filter(|p| !p.is_empty()) {
        return vec![PathBuf::from(p)];
    }
    let Ok(exe) = std::env::current_exe() else {
        return Vec::new();
    };
    // `cargo build` puts the library in target/<profile>; `cargo test`
    // leaves it in target/<profile>/deps.
    exe.ancestors()
        .skip(1)
        .take(2)
        .flat_map(|d| {
            [
                d.join("libshale_c.so"),
                d.join("deps").join("libshale_c.so"),
            ]
        })
        .collect()
}

/// The library's path, or why there is none.
pub fn find() -> std::result::Result<PathBuf, String> {
    let paths = candidates();
    paths.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        let looked: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        format!(
            "libshale_c.so not found (looked at {}): build it with `cargo build --release -p shale-c`, or set SHALE_C_LIB to its path",
            if looked.is_empty() {
                "nothing".to_string()
            } else {
                looked.join(", ")
            }
        )
    })
}

/// Looks up `name` in the library `handle` as a function of type `F`.
///
/// # Safety
/// `handle` is a live dlopen handle, and the symbol `name`, if present, is a
/// function of type `F` (a function pointer type).
unsafe fn symbol<F: Copy>(handle: *mut c_void, name: &str) -> std::result::Result<F, String> {
    assert_eq!(mem::size_of::<F>(), mem::size_of::<*mut c_void>());
    let c = CString::new(name).map_err(|e| e.to_string())?;
    // SAFETY: a live handle and a NUL-terminated name.
    let p = unsafe { libc::dlsym(handle, c.as_ptr()) };
    if p.is_null() {
        return Err(format!("the library has no {name}"));
    }
    // SAFETY: `F` is a function pointer type of the same size as the
    // symbol's address, and the caller guarantees the function's type.
    Ok(unsafe { mem::transmute_copy::<*mut c_void, F>(&p) })
}

fn load() -> std::result::Result<Loaded, String> {
    let path = find()?;
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: dlopen of a path; loading runs the library's initialisers,
    // which for a Rust cdylib are the standard library's.
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        // SAFETY: dlerror returns NULL or a message valid until the next
        // dl* call on this thread.
        let why = unsafe { super::util::string_from(libc::dlerror()) };
        return Err(format!("dlopen {}: {why}", path.display()));
    }
    // The handle is never closed: the table below points into the library.
    // SAFETY: every name is a function of libshale_c with the type of the
    // field it fills, LevelDB 1.23's `c.h` signatures (shale/c.h).
    unsafe {
        let api = LevelDbApi {
            lsm: LsmCApi {
                close: symbol(handle, "leveldb_close")?,
                free: symbol(handle, "leveldb_free")?,
                readoptions_create: symbol(handle, "leveldb_readoptions_create")?,
                readoptions_destroy: symbol(handle, "leveldb_readoptions_destroy")?,
                writeoptions_create: symbol(handle, "leveldb_writeoptions_create")?,
                writeoptions_destroy: symbol(handle, "leveldb_writeoptions_destroy")?,
                writeoptions_set_sync: symbol(handle, "leveldb_writeoptions_set_sync")?,
                put: symbol(handle, "leveldb_put")?,
                delete: symbol(handle, "leveldb_delete")?,
                write: symbol(handle, "leveldb_write")?,
                get,
                property_value: symbol(handle, "leveldb_property_value")?,
                compact_range: symbol(handle, "leveldb_compact_range")?,
                batch_create: symbol(handle, "leveldb_writebatch_create")?,
                batch_destroy: symbol(handle, "leveldb_writebatch_destroy")?,
                batch_clear: symbol(handle, "leveldb_writebatch_clear")?,
                batch_put: symbol(handle, "leveldb_writebatch_put")?,
                batch_delete: symbol(handle, "leveldb_writebatch_delete")?,
                create_iterator: symbol(handle, "leveldb_create_iterator")?,
                iter_destroy: symbol(handle, "leveldb_iter_destroy")?,
                iter_valid: symbol(handle, "leveldb_iter_valid")?,
                iter_seek_to_first: symbol(handle, "leveldb_iter_seek_to_first")?,
                iter_seek_to_last: symbol(handle, "leveldb_iter_seek_to_last")?,
                iter_seek: symbol(handle, "leveldb_iter_seek")?,
                iter_next: symbol(handle, "leveldb_iter_next")?,
                iter_prev: symbol(handle, "leveldb_iter_prev")?,
                iter_key: symbol(handle, "leveldb_iter_key")?,
                iter_value: symbol(handle, "leveldb_iter_value")?,
                iter_get_error: symbol(handle, "leveldb_iter_get_error")?,
            },
            open: symbol(handle, "leveldb_open")?,
            options_create: symbol(handle, "leveldb_options_create")?,
            options_destroy: symbol(handle, "leveldb_options_destroy")?,
            options_set_filter_policy: symbol(handle, "leveldb_options_set_filter_policy")?,
            options_set_create_if_missing: symbol(handle, "leveldb_options_set_create_if_missing")?,
            options_set_paranoid_checks: symbol(handle, "leveldb_options_set_paranoid_checks")?,
            options_set_write_buffer_size: symbol(handle, "leveldb_options_set_write_buffer_size")?,
            options_set_max_open_files: symbol(handle, "leveldb_options_set_max_open_files")?,
            options_set_cache: symbol(handle, "leveldb_options_set_cache")?,
            options_set_block_size: symbol(handle, "leveldb_options_set_block_size")?,
            options_set_block_restart_interval: symbol(
                handle,
                "leveldb_options_set_block_restart_interval",
            )?,
            options_set_max_file_size: symbol(handle, "leveldb_options_set_max_file_size")?,
            options_set_compression: symbol(handle, "leveldb_options_set_compression")?,
            filterpolicy_create_bloom: symbol(handle, "leveldb_filterpolicy_create_bloom")?,
            filterpolicy_destroy: symbol(handle, "leveldb_filterpolicy_destroy")?,
            cache_create_lru: symbol(handle, "leveldb_cache_create_lru")?,
            cache_destroy: symbol(handle, "leveldb_cache_destroy")?,
            major_version: symbol(handle, "leveldb_major_version")?,
            minor_version: symbol(handle, "leveldb_minor_version")?,
        };
        Ok(Loaded {
            path: path.display().to_string(),
            get: symbol(handle, "leveldb_get")?,
            api,
        })
    }
}

/// The loaded library (loaded on first use), or why it cannot be.
fn loaded() -> std::result::Result<&'static Loaded, String> {
    LOADED.get_or_init(load).as_ref().map_err(Clone::clone)
}

/// `leveldb_get` of the loaded library, copying the value out.
///
/// # Safety
/// `db` and `o` were made by the loaded library and are open.
unsafe fn get(
    db: *mut leveldb_t,
    o: *const leveldb_readoptions_t,
    key: &[u8],
    value: &mut Vec<u8>,
) -> Result<bool> {
    // `db` was opened through the library, so it is loaded: no `loaded()`
    // (and its error's copy) on the path of every lookup.
    let Some(Ok(lib)) = LOADED.get() else {
        return Err(not_loaded());
    };
    // SAFETY: the library's own get and free; the caller keeps `db` and `o`
    // open.
    unsafe { get_copy(lib.get, lib.api.lsm.free, db, o, key, value) }
}

/// `get`'s error for a library that is not loaded (it cannot happen: the
/// database was opened through it).
#[cold]
fn not_loaded() -> Error {
    Error::new(
        loaded()
            .err()
            .unwrap_or_else(|| "libshale_c.so is not loaded".to_string()),
    )
}

/// `Ok` if the library can be found, else the reason.
pub fn availability() -> std::result::Result<(), String> {
    find().map(|_| ())
}

/// The library file and its build, for db_bench's `Library:` line.
pub fn library() -> Option<(&'static str, &'static str)> {
    let path = find().ok()?.display().to_string();
    let build = if path.contains("/release/") {
        "Shale's C library, release build, loaded with dlopen"
    } else if path.contains("/debug/") {
        "Shale's C library, debug build, loaded with dlopen"
    } else {
        "Shale's C library, loaded with dlopen"
    };
    Some((Box::leak(path.into_boxed_str()), build))
}

/// Opens (or creates) the database in `cfg.path` through Shale's C API.
pub fn open(cfg: &EngineConfig) -> Result<LevelDbFamily> {
    let lib = loaded().map_err(Error::new)?;
    let settings = vec![setting(
        "library",
        format!("{} (LevelDB's C API, loaded with dlopen)", lib.path),
    )];
    LevelDbFamily::open(&lib.api, EngineKind::ShaleC, settings, cfg)
}
