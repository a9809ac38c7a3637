//! LevelDB 1.23's C API (`leveldb/c.h`, all 68 functions, same names,
//! signatures and semantics) implemented over Shale, plus what Shale adds
//! (`shale_version`, the `shale.*` properties). The declarations are in
//! `include/shale/c.h`.
//!
//! Conventions, as in LevelDB's header:
//! - Errors: `char** errptr` is the last argument of every call that can
//!   fail. On failure the message already there is freed and replaced by a
//!   `malloc`'d one, written as LevelDB's status strings (`IO error: ...`,
//!   `Corruption: ...`, `Invalid argument: ...`) with Shale's detail (file,
//!   offset); on success it is left alone. Free it with `leveldb_free`.
//! - Every value returned as `char*` is `malloc`'d; free it with
//!   `leveldb_free`.
//! - Bools are `uint8_t`, non-zero meaning true.
//!
//! A thread that has called `leveldb_get` keeps the buffer values are read
//! into before their `malloc`'d copy is made, for its next call (one
//! allocation per lookup, the copy); a buffer over 64 KiB is freed after
//! the call.
//!
//! Beyond the header's contract (which says every pointer is non-NULL),
//! NULL handles are tolerated: a call on a NULL handle does nothing, or
//! reports `Invalid argument` through `errptr`. A Rust panic never unwinds
//! into C: it becomes an error through `errptr`, or, where no error can be
//! returned, aborts the process with a message.
//!
//! Options Shale has no use for are accepted and ignored:
//! `leveldb_options_set_env` (Shale always uses the POSIX file system, which
//! is what LevelDB's default environment is) and
//! `leveldb_options_set_info_log` (Shale writes its LOG file itself; the C
//! API has no way to create a logger, so the only value a caller can give
//! is NULL, which in LevelDB means the same).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]
// The exported functions are `unsafe extern "C"`: their safety contract is
// the one `include/shale/c.h` (and LevelDB's `c.h`) states for C callers.
#![allow(clippy::missing_safety_doc)]
#![allow(non_camel_case_types)]

mod callbacks;
mod ffi;
mod status;
#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::ffi::{CStr, OsStr};
use std::os::raw::{c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::ptr;
use std::sync::Arc;

use shale::{
    BatchOp, BloomFilterPolicy, Cache, Comparator, CompressionType, Cursor, Db, FilterPolicy,
    Options, ReadOptions, Snapshot, WriteBatch, WriteOptions,
};

use callbacks::{
    CComparator, CFilterPolicy, CompareFn, CreateFilterFn, Destructor, KeyMayMatchFn, NameFn,
};
use ffi::{bytes, malloc_copy, malloc_cstring, or_abort, with_errptr};
use status::status_string;

/// The LevelDB release whose C API this library implements, returned by
/// `leveldb_major_version`/`leveldb_minor_version` so that programs checking
/// for LevelDB 1.23 accept it.
pub const LEVELDB_MAJOR: c_int = 1;
/// See [`LEVELDB_MAJOR`].
pub const LEVELDB_MINOR: c_int = 23;

/// The property (answered by this library) that tells a program it runs on
/// Shale: its value is Shale's version. LevelDB returns NULL for it.
pub const SHALE_VERSION_PROPERTY: &str = "shale.version";

// ---------------------------------------------------------------------------
// Handles.

/// An open database.
pub struct leveldb_t {
    db: Db,
}

/// A block cache (`leveldb_cache_create_lru`).
pub struct leveldb_cache_t {
    cache: Arc<Cache>,
}

/// A comparator given as C callbacks.
pub struct leveldb_comparator_t {
    comparator: Arc<CComparator>,
}

/// The default environment: Shale always uses the POSIX file system.
pub struct leveldb_env_t {
    _default: (),
}

/// A filter policy: C callbacks or the built-in bloom filter.
pub struct leveldb_filterpolicy_t {
    policy: Arc<dyn FilterPolicy>,
}

/// A cursor over a database.
pub struct leveldb_iterator_t {
    cursor: Cursor,
}

/// LevelDB's logger type: the C API cannot create one; only NULL is ever
/// passed, and it is ignored.
pub struct leveldb_logger_t {
    _private: (),
}

/// Options for open, destroy and repair.
pub struct leveldb_options_t {
    options: Options,
}

/// Options for reads; the snapshot is borrowed from the caller, who keeps it
/// alive while the options are used (as with LevelDB).
pub struct leveldb_readoptions_t {
    verify_checksums: bool,
    fill_cache: bool,
    snapshot: *const leveldb_snapshot_t,
}

/// A snapshot of a database.
pub struct leveldb_snapshot_t {
    snapshot: Snapshot,
}

/// A write batch. An update the batch refuses (a key or value over Shale's
/// 4 GiB limits) cannot be reported by `leveldb_writebatch_put`, which
/// returns nothing: it is remembered and reported by `leveldb_write`.
pub struct leveldb_writebatch_t {
    batch: WriteBatch,
    error: Option<String>,
}

/// Options for writes.
pub struct leveldb_writeoptions_t {
    sync: bool,
}

/// Declared by c.h, never created by its functions.
pub struct leveldb_filelock_t {
    _private: (),
}
/// Declared by c.h, never created by its functions.
pub struct leveldb_randomfile_t {
    _private: (),
}
/// Declared by c.h, never created by its functions.
pub struct leveldb_seqfile_t {
    _private: (),
}
/// Declared by c.h, never created by its functions.
pub struct leveldb_writablefile_t {
    _private: (),
}

// ---------------------------------------------------------------------------
// Helpers.

/// Moves `value` to the heap and hands its pointer to C.
fn into_handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Frees a handle made by `into_handle` (NULL is ignored).
///
/// # Safety
/// `p` is NULL or a pointer from `into_handle::<T>` not freed before.
unsafe fn free_handle<T>(p: *mut T) {
    if !p.is_null() {
        // SAFETY: by the caller's contract `p` came from `Box::into_raw` and
        // is freed once.
        drop(unsafe { Box::from_raw(p) });
    }
}

/// A path from a NUL-terminated C string (any bytes but NUL).
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn path_from(name: *const c_char) -> Result<PathBuf, String> {
    if name.is_null() {
        return Err("Invalid argument: database name is NULL".to_string());
    }
    // SAFETY: `name` is non-NULL and NUL-terminated by the caller's contract.
    let c = unsafe { CStr::from_ptr(name) };
    Ok(PathBuf::from(OsStr::from_bytes(c.to_bytes())))
}

/// The Shale options of `options` (the defaults for NULL).
///
/// # Safety
/// `options` is NULL or a live `leveldb_options_t`.
unsafe fn options_from(options: *const leveldb_options_t) -> Options {
    // SAFETY: NULL or a live handle, by the caller's contract.
    match unsafe { options.as_ref() } {
        Some(o) => o.options.clone(),
        None => Options::default(),
    }
}

/// Shale read options from a C read-options handle (the defaults for NULL).
///
/// # Safety
/// `options` is NULL or a live `leveldb_readoptions_t` whose snapshot, if
/// set, is alive for `'a`.
unsafe fn read_options_from<'a>(options: *const leveldb_readoptions_t) -> ReadOptions<'a> {
    // SAFETY: NULL or a live handle, by the caller's contract.
    let Some(o) = (unsafe { options.as_ref() }) else {
        return ReadOptions::default();
    };
    // SAFETY: the snapshot set in the options is NULL or a live snapshot
    // (not yet released), by the caller's contract.
    let snapshot = unsafe { o.snapshot.as_ref() }.map(|s| &s.snapshot);
    ReadOptions {
        verify_checksums: o.verify_checksums,
        fill_cache: o.fill_cache,
        snapshot,
    }
}

/// Shale write options from a C handle (the defaults for NULL).
///
/// # Safety
/// `options` is NULL or a live `leveldb_writeoptions_t`.
unsafe fn write_options_from(options: *const leveldb_writeoptions_t) -> WriteOptions {
    // SAFETY: NULL or a live handle, by the caller's contract.
    let sync = unsafe { options.as_ref() }.is_some_and(|o| o.sync);
    WriteOptions {
        sync,
        ..Default::default()
    }
}

/// The database of a handle, or the error for a NULL one.
///
/// # Safety
/// `db` is NULL or a live `leveldb_t`, alive for `'a`.
unsafe fn db_ref<'a>(db: *const leveldb_t) -> Result<&'a Db, String> {
    // SAFETY: NULL or a live handle, by the caller's contract.
    unsafe { db.as_ref() }
        .map(|d| &d.db)
        .ok_or_else(|| "Invalid argument: database handle is NULL".to_string())
}

// ---------------------------------------------------------------------------
// DB operations.

#[no_mangle]
pub unsafe extern "C" fn leveldb_open(
    options: *const leveldb_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut leveldb_t {
    with_errptr("leveldb_open", errptr, ptr::null_mut(), || {
        // SAFETY: `name` is NULL or NUL-terminated (c.h's contract).
        let path = unsafe { path_from(name) }?;
        // SAFETY: `options` is NULL or a live handle (c.h's contract).
        let options = unsafe { options_from(options) };
        let db = Db::open(&path, options).map_err(|e| status_string(&e))?;
        Ok(into_handle(leveldb_t { db }))
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_close(db: *mut leveldb_t) {
    // SAFETY: `db` is NULL or a handle from `leveldb_open`, closed once.
    or_abort("leveldb_close", || unsafe { free_handle(db) })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_put(
    db: *mut leveldb_t,
    options: *const leveldb_writeoptions_t,
    key: *const c_char,
    keylen: usize,
    val: *const c_char,
    vallen: usize,
    errptr: *mut *mut c_char,
) {
    with_errptr("leveldb_put", errptr, (), || {
        // SAFETY: handles are NULL or live; `key`/`val` hold `keylen`/
        // `vallen` readable bytes (c.h's contract).
        let (db, opts, key, val) = unsafe {
            (
                db_ref(db)?,
                write_options_from(options),
                bytes(key, keylen),
                bytes(val, vallen),
            )
        };
        db.put_with(&opts, key, val).map_err(|e| status_string(&e))
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_delete(
    db: *mut leveldb_t,
    options: *const leveldb_writeoptions_t,
    key: *const c_char,
    keylen: usize,
    errptr: *mut *mut c_char,
) {
    with_errptr("leveldb_delete", errptr, (), || {
        // SAFETY: handles are NULL or live; `key` holds `keylen` bytes.
        let (db, opts, key) =
            unsafe { (db_ref(db)?, write_options_from(options), bytes(key, keylen)) };
        db.delete_with(&opts, key).map_err(|e| status_string(&e))
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_write(
    db: *mut leveldb_t,
    options: *const leveldb_writeoptions_t,
    batch: *mut leveldb_writebatch_t,
    errptr: *mut *mut c_char,
) {
    with_errptr("leveldb_write", errptr, (), || {
        // SAFETY: handles are NULL or live (c.h's contract).
        let (db, opts, batch) =
            unsafe { (db_ref(db)?, write_options_from(options), batch.as_ref()) };
        let batch = batch.ok_or("Invalid argument: write batch is NULL")?;
        if let Some(e) = &batch.error {
            return Err(e.clone());
        }
        db.write(&opts, &batch.batch).map_err(|e| status_string(&e))
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_get(
    db: *mut leveldb_t,
    options: *const leveldb_readoptions_t,
    key: *const c_char,
    keylen: usize,
    vallen: *mut usize,
    errptr: *mut *mut c_char,
) -> *mut c_char {
    let set_len = |n: usize| {
        // SAFETY: `vallen` is NULL or points to a writable size_t.
        if let Some(v) = unsafe { vallen.as_mut() } {
            *v = n;
        }
    };
    set_len(0);
    with_errptr("leveldb_get", errptr, ptr::null_mut(), || {
        // SAFETY: handles are NULL or live, the snapshot in the options is
        // alive; `key` holds `keylen` bytes (c.h's contract).
        let (db, opts, key) =
            unsafe { (db_ref(db)?, read_options_from(options), bytes(key, keylen)) };
        let copy = |value: &mut Vec<u8>| {
            if !db
                .get_into_with(&opts, key, value)
                .map_err(|e| status_string(&e))?
            {
                return Ok(ptr::null_mut());
            }
            let p = malloc_copy(value);
            if p.is_null() {
                return Err("IO error: out of memory copying the value".to_string());
            }
            set_len(value.len());
            Ok(p)
        };
        with_get_buffer(copy)
    })
}

thread_local! {
    /// The buffer `leveldb_get` reads a value into before copying it into
    /// the `malloc`'d one it returns: kept from one call to the next, so
    /// that a lookup allocates only the copy the C API hands out.
    static GET_BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The most a thread's `GET_BUFFER` keeps between calls; a larger value's
/// buffer is freed after the call.
const GET_BUFFER_KEPT: usize = 64 << 10;

/// Runs `f` on this thread's `GET_BUFFER`, taken out for the call: a
/// `leveldb_get` made meanwhile (from a comparator or filter callback) or
/// while the thread exits gets an empty one.
fn with_get_buffer<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    let mut buffer = GET_BUFFER.try_with(Cell::take).unwrap_or_default();
    let result = f(&mut buffer);
    if buffer.capacity() <= GET_BUFFER_KEPT {
        // Fails only while the thread exits; the buffer is then freed here.
        let _ = GET_BUFFER.try_with(|b| b.set(buffer));
    }
    result
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_create_iterator(
    db: *mut leveldb_t,
    options: *const leveldb_readoptions_t,
) -> *mut leveldb_iterator_t {
    or_abort("leveldb_create_iterator", || {
        // SAFETY: handles are NULL or live, the snapshot in the options is
        // alive (c.h's contract).
        let (db, opts) = unsafe { (db_ref(db), read_options_from(options)) };
        match db {
            Ok(db) => into_handle(leveldb_iterator_t {
                cursor: db.cursor(&opts),
            }),
            Err(_) => ptr::null_mut(),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_create_snapshot(db: *mut leveldb_t) -> *const leveldb_snapshot_t {
    or_abort("leveldb_create_snapshot", || {
        // SAFETY: `db` is NULL or live (c.h's contract).
        match unsafe { db_ref(db) } {
            Ok(db) => into_handle(leveldb_snapshot_t {
                snapshot: db.snapshot(),
            })
            .cast_const(),
            Err(_) => ptr::null(),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_release_snapshot(
    _db: *mut leveldb_t,
    snapshot: *const leveldb_snapshot_t,
) {
    // SAFETY: `snapshot` is NULL or a handle from `leveldb_create_snapshot`,
    // released once (c.h's contract).
    or_abort("leveldb_release_snapshot", || unsafe {
        free_handle(snapshot.cast_mut())
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_property_value(
    db: *mut leveldb_t,
    propname: *const c_char,
) -> *mut c_char {
    or_abort("leveldb_property_value", || {
        if propname.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: a non-NULL property name is NUL-terminated (c.h).
        let name = unsafe { CStr::from_ptr(propname) };
        let Ok(name) = name.to_str() else {
            return ptr::null_mut();
        };
        if name == SHALE_VERSION_PROPERTY {
            return malloc_cstring(env!("CARGO_PKG_VERSION"));
        }
        // SAFETY: `db` is NULL or live (c.h's contract).
        match unsafe { db_ref(db) }.ok().and_then(|db| db.property(name)) {
            Some(value) => malloc_cstring(&value),
            None => ptr::null_mut(),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_approximate_sizes(
    db: *mut leveldb_t,
    num_ranges: c_int,
    range_start_key: *const *const c_char,
    range_start_key_len: *const usize,
    range_limit_key: *const *const c_char,
    range_limit_key_len: *const usize,
    sizes: *mut u64,
) {
    or_abort("leveldb_approximate_sizes", || {
        let n = usize::try_from(num_ranges).unwrap_or(0);
        if n == 0 || sizes.is_null() {
            return;
        }
        // SAFETY: `sizes` has room for `num_ranges` values (c.h's contract).
        let out = unsafe { std::slice::from_raw_parts_mut(sizes, n) };
        out.fill(0);
        if range_start_key.is_null()
            || range_start_key_len.is_null()
            || range_limit_key.is_null()
            || range_limit_key_len.is_null()
        {
            return;
        }
        // SAFETY: `db` is NULL or live (c.h's contract).
        let Ok(db) = (unsafe { db_ref(db) }) else {
            return;
        };
        let ranges: Vec<(&[u8], &[u8])> = (0..n)
            .map(|i| {
                // SAFETY: each of the four arrays has `num_ranges` entries,
                // and entry `i` of the key arrays points to as many bytes as
                // entry `i` of the length arrays says (c.h's contract).
                unsafe {
                    (
                        bytes(*range_start_key.add(i), *range_start_key_len.add(i)),
                        bytes(*range_limit_key.add(i), *range_limit_key_len.add(i)),
                    )
                }
            })
            .collect();
        for (slot, size) in out.iter_mut().zip(db.approximate_sizes(&ranges)) {
            *slot = size;
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_compact_range(
    db: *mut leveldb_t,
    start_key: *const c_char,
    start_key_len: usize,
    limit_key: *const c_char,
    limit_key_len: usize,
) {
    or_abort("leveldb_compact_range", || {
        // SAFETY: `db` is NULL or live; a non-NULL key holds its length in
        // bytes (c.h's contract; NULL means "unbounded", as in LevelDB).
        let (db, start, limit) = unsafe {
            (
                db_ref(db),
                (!start_key.is_null()).then(|| bytes(start_key, start_key_len)),
                (!limit_key.is_null()).then(|| bytes(limit_key, limit_key_len)),
            )
        };
        if let Ok(db) = db {
            // LevelDB's CompactRange returns nothing: a failed compaction
            // shows as the database's background error.
            let _ = db.compact_range(start, limit);
        }
    })
}

// ---------------------------------------------------------------------------
// Management operations.

#[no_mangle]
pub unsafe extern "C" fn leveldb_destroy_db(
    options: *const leveldb_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) {
    with_errptr("leveldb_destroy_db", errptr, (), || {
        // SAFETY: `name` is NULL or NUL-terminated, `options` NULL or live.
        let (path, options) = unsafe { (path_from(name)?, options_from(options)) };
        shale::destroy(&path, &options).map_err(|e| status_string(&e))
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_repair_db(
    options: *const leveldb_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) {
    with_errptr("leveldb_repair_db", errptr, (), || {
        // SAFETY: `name` is NULL or NUL-terminated, `options` NULL or live.
        let (path, options) = unsafe { (path_from(name)?, options_from(options)) };
        // LevelDB's repair reports nothing; the report is not kept.
        shale::repair(&path, &options)
            .map(drop)
            .map_err(|e| status_string(&e))
    })
}

// ---------------------------------------------------------------------------
// Iterator.

/// Runs `f` on the cursor of a non-NULL iterator handle.
///
/// # Safety
/// `iter` is NULL or a live iterator not used by another thread meanwhile.
unsafe fn with_cursor(function: &str, iter: *mut leveldb_iterator_t, f: impl FnOnce(&mut Cursor)) {
    or_abort(function, || {
        // SAFETY: NULL or a live iterator used by one thread at a time.
        if let Some(it) = unsafe { iter.as_mut() } {
            f(&mut it.cursor);
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_destroy(iter: *mut leveldb_iterator_t) {
    // SAFETY: NULL or a handle from `leveldb_create_iterator`, freed once.
    or_abort("leveldb_iter_destroy", || unsafe { free_handle(iter) })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_valid(iter: *const leveldb_iterator_t) -> u8 {
    or_abort("leveldb_iter_valid", || {
        // SAFETY: NULL or a live iterator.
        u8::from(unsafe { iter.as_ref() }.is_some_and(|it| it.cursor.valid()))
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_seek_to_first(iter: *mut leveldb_iterator_t) {
    // SAFETY: NULL or a live iterator (c.h's contract).
    unsafe { with_cursor("leveldb_iter_seek_to_first", iter, |c| c.seek_to_first()) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_seek_to_last(iter: *mut leveldb_iterator_t) {
    // SAFETY: NULL or a live iterator (c.h's contract).
    unsafe { with_cursor("leveldb_iter_seek_to_last", iter, |c| c.seek_to_last()) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_seek(
    iter: *mut leveldb_iterator_t,
    k: *const c_char,
    klen: usize,
) {
    // SAFETY: `k` holds `klen` bytes, read during the call only.
    let key = unsafe { bytes(k, klen) };
    // SAFETY: NULL or a live iterator (c.h's contract).
    unsafe { with_cursor("leveldb_iter_seek", iter, |c| c.seek(key)) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_next(iter: *mut leveldb_iterator_t) {
    // SAFETY: NULL or a live iterator (c.h's contract). `Cursor::next` does
    // nothing on a cursor that is not valid.
    unsafe { with_cursor("leveldb_iter_next", iter, Cursor::next) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_prev(iter: *mut leveldb_iterator_t) {
    // SAFETY: NULL or a live iterator (c.h's contract). `Cursor::prev` does
    // nothing on a cursor that is not valid.
    unsafe { with_cursor("leveldb_iter_prev", iter, Cursor::prev) }
}

/// The pointer and length of the key or value at the iterator (NULL and 0
/// when the iterator is NULL or not valid).
///
/// # Safety
/// `iter` is NULL or a live iterator; `len` is NULL or writable.
unsafe fn iter_slice(
    function: &str,
    iter: *const leveldb_iterator_t,
    len: *mut usize,
    pick: impl FnOnce(&Cursor) -> &[u8],
) -> *const c_char {
    or_abort(function, || {
        // SAFETY: NULL or a live iterator.
        let slice = match unsafe { iter.as_ref() } {
            Some(it) if it.cursor.valid() => Some(pick(&it.cursor)),
            _ => None,
        };
        // SAFETY: `len` is NULL or points to a writable size_t.
        if let Some(l) = unsafe { len.as_mut() } {
            *l = slice.map_or(0, <[u8]>::len);
        }
        // The slice lives in the cursor until it moves or is destroyed.
        slice.map_or(ptr::null(), |s| s.as_ptr().cast())
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_key(
    iter: *const leveldb_iterator_t,
    klen: *mut usize,
) -> *const c_char {
    // SAFETY: `iter` NULL or live, `klen` writable (c.h's contract).
    unsafe { iter_slice("leveldb_iter_key", iter, klen, Cursor::key) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_value(
    iter: *const leveldb_iterator_t,
    vlen: *mut usize,
) -> *const c_char {
    // SAFETY: `iter` NULL or live, `vlen` writable (c.h's contract).
    unsafe { iter_slice("leveldb_iter_value", iter, vlen, Cursor::value) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_get_error(
    iter: *const leveldb_iterator_t,
    errptr: *mut *mut c_char,
) {
    with_errptr("leveldb_iter_get_error", errptr, (), || {
        // SAFETY: NULL or a live iterator.
        match unsafe { iter.as_ref() } {
            Some(it) => it.cursor.status().map_err(|e| status_string(&e)),
            None => Ok(()),
        }
    })
}

// ---------------------------------------------------------------------------
// Write batch.

#[no_mangle]
pub extern "C" fn leveldb_writebatch_create() -> *mut leveldb_writebatch_t {
    or_abort("leveldb_writebatch_create", || {
        into_handle(leveldb_writebatch_t {
            batch: WriteBatch::new(),
            error: None,
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_writebatch_destroy(b: *mut leveldb_writebatch_t) {
    // SAFETY: NULL or a handle from `leveldb_writebatch_create`, freed once.
    or_abort("leveldb_writebatch_destroy", || unsafe { free_handle(b) })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_writebatch_clear(b: *mut leveldb_writebatch_t) {
    or_abort("leveldb_writebatch_clear", || {
        // SAFETY: NULL or a live batch used by one thread at a time.
        if let Some(b) = unsafe { b.as_mut() } {
            b.batch.clear();
            b.error = None;
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_writebatch_put(
    b: *mut leveldb_writebatch_t,
    key: *const c_char,
    klen: usize,
    val: *const c_char,
    vlen: usize,
) {
    or_abort("leveldb_writebatch_put", || {
        // SAFETY: NULL or a live batch; `key`/`val` hold `klen`/`vlen` bytes.
        let (b, key, val) = unsafe { (b.as_mut(), bytes(key, klen), bytes(val, vlen)) };
        if let Some(b) = b {
            if let Err(e) = b.batch.put(key, val) {
                b.error.get_or_insert_with(|| status_string(&e));
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_writebatch_delete(
    b: *mut leveldb_writebatch_t,
    key: *const c_char,
    klen: usize,
) {
    or_abort("leveldb_writebatch_delete", || {
        // SAFETY: NULL or a live batch; `key` holds `klen` bytes.
        let (b, key) = unsafe { (b.as_mut(), bytes(key, klen)) };
        if let Some(b) = b {
            if let Err(e) = b.batch.delete(key) {
                b.error.get_or_insert_with(|| status_string(&e));
            }
        }
    })
}

type PutFn = Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize)>;
type DeletedFn = Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize)>;

#[no_mangle]
pub unsafe extern "C" fn leveldb_writebatch_iterate(
    b: *const leveldb_writebatch_t,
    state: *mut c_void,
    put: PutFn,
    deleted: DeletedFn,
) {
    or_abort("leveldb_writebatch_iterate", || {
        // SAFETY: NULL or a live batch, not changed during the iteration.
        let Some(b) = (unsafe { b.as_ref() }) else {
            return;
        };
        for op in b.batch.iter() {
            match op {
                BatchOp::Put { key, value } => {
                    if let Some(put) = put {
                        // SAFETY: the callback gets the caller's state and
                        // slices alive for the call.
                        unsafe {
                            put(
                                state,
                                key.as_ptr().cast(),
                                key.len(),
                                value.as_ptr().cast(),
                                value.len(),
                            )
                        };
                    }
                }
                BatchOp::Delete { key } => {
                    if let Some(deleted) = deleted {
                        // SAFETY: as for `put`.
                        unsafe { deleted(state, key.as_ptr().cast(), key.len()) };
                    }
                }
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_writebatch_append(
    destination: *mut leveldb_writebatch_t,
    source: *const leveldb_writebatch_t,
) {
    or_abort("leveldb_writebatch_append", || {
        if destination.is_null() || source.is_null() {
            return;
        }
        // SAFETY: both are live batches. When they are the same batch, a copy
        // is taken first so that no shared and exclusive borrow overlap.
        let (other, other_error) = unsafe {
            let s = &*source;
            (s.batch.clone(), s.error.clone())
        };
        // SAFETY: `destination` is a live batch used by this thread alone;
        // no other borrow of it is held now.
        let dst = unsafe { &mut *destination };
        if let Err(e) = dst.batch.append(&other) {
            dst.error.get_or_insert_with(|| status_string(&e));
        }
        if let Some(e) = other_error {
            dst.error.get_or_insert(e);
        }
    })
}

// ---------------------------------------------------------------------------
// Options.

/// Runs `f` on the options of a non-NULL handle.
///
/// # Safety
/// `o` is NULL or live options used by one thread at a time.
unsafe fn set_option(function: &str, o: *mut leveldb_options_t, f: impl FnOnce(&mut Options)) {
    or_abort(function, || {
        // SAFETY: NULL or live options used by one thread at a time.
        if let Some(o) = unsafe { o.as_mut() } {
            f(&mut o.options);
        }
    })
}

#[no_mangle]
pub extern "C" fn leveldb_options_create() -> *mut leveldb_options_t {
    or_abort("leveldb_options_create", || {
        into_handle(leveldb_options_t {
            options: Options::default(),
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_destroy(o: *mut leveldb_options_t) {
    // SAFETY: NULL or a handle from `leveldb_options_create`, freed once.
    or_abort("leveldb_options_destroy", || unsafe { free_handle(o) })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_comparator(
    o: *mut leveldb_options_t,
    cmp: *mut leveldb_comparator_t,
) {
    // SAFETY: `cmp` is NULL or a live comparator handle.
    let comparator: Arc<dyn Comparator> = match unsafe { cmp.as_ref() } {
        Some(c) => c.comparator.clone(),
        None => Arc::new(shale::BytewiseComparator),
    };
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("leveldb_options_set_comparator", o, |o| {
            o.comparator = comparator
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_filter_policy(
    o: *mut leveldb_options_t,
    policy: *mut leveldb_filterpolicy_t,
) {
    // SAFETY: `policy` is NULL (no filter) or a live filter policy handle.
    let policy = unsafe { policy.as_ref() }.map(|p| p.policy.clone());
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("leveldb_options_set_filter_policy", o, |o| {
            o.filter_policy = policy
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_create_if_missing(o: *mut leveldb_options_t, v: u8) {
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("leveldb_options_set_create_if_missing", o, |o| {
            o.create_if_missing = v != 0
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_error_if_exists(o: *mut leveldb_options_t, v: u8) {
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("leveldb_options_set_error_if_exists", o, |o| {
            o.error_if_exists = v != 0
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_paranoid_checks(o: *mut leveldb_options_t, v: u8) {
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("leveldb_options_set_paranoid_checks", o, |o| {
            o.paranoid_checks = v != 0
        })
    }
}

/// Accepted and ignored: Shale always uses the POSIX file system, which is
/// what LevelDB's default environment (the only one the C API can make) is.
#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_env(
    _o: *mut leveldb_options_t,
    _env: *mut leveldb_env_t,
) {
}

/// Accepted and ignored: Shale writes its own LOG file in the database
/// directory; the C API cannot create a logger, so only NULL can be given.
#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_info_log(
    _o: *mut leveldb_options_t,
    _log: *mut leveldb_logger_t,
) {
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_write_buffer_size(
    o: *mut leveldb_options_t,
    s: usize,
) {
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("leveldb_options_set_write_buffer_size", o, |o| {
            o.write_buffer_size = s
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_max_open_files(o: *mut leveldb_options_t, n: c_int) {
    // Negative counts are clamped up to the minimum at open, as LevelDB does.
    let n = usize::try_from(n).unwrap_or(0);
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("leveldb_options_set_max_open_files", o, |o| {
            o.max_open_files = n
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_cache(
    o: *mut leveldb_options_t,
    cache: *mut leveldb_cache_t,
) {
    // SAFETY: `cache` is NULL (the default cache) or a live cache handle.
    let cache = unsafe { cache.as_ref() }.map(|c| c.cache.clone());
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe { set_option("leveldb_options_set_cache", o, |o| o.block_cache = cache) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_block_size(o: *mut leveldb_options_t, s: usize) {
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe { set_option("leveldb_options_set_block_size", o, |o| o.block_size = s) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_block_restart_interval(
    o: *mut leveldb_options_t,
    n: c_int,
) {
    // Zero or negative intervals become 1 at open.
    let n = usize::try_from(n).unwrap_or(0);
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("leveldb_options_set_block_restart_interval", o, |o| {
            o.block_restart_interval = n
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_max_file_size(o: *mut leveldb_options_t, s: usize) {
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("leveldb_options_set_max_file_size", o, |o| {
            o.max_file_size = s
        })
    }
}

/// A compression type number of the C API: LevelDB's 0 (none) and 1
/// (snappy), and Shale's 2 (zstd) and 4 (lz4), the block type numbers.
/// Every other value means no compression, as it always has here.
fn compression_from_c(t: c_int) -> CompressionType {
    u8::try_from(t)
        .ok()
        .and_then(|b| CompressionType::ALL.into_iter().find(|c| *c as u8 == b))
        .unwrap_or(CompressionType::None)
}

/// `leveldb_snappy_compression` (1) selects snappy, Shale's
/// `shale_zstd_compression` (2) zstd and `shale_lz4_compression` (4) lz4;
/// every other value, `leveldb_no_compression` (0) included, stores blocks
/// uncompressed.
#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_compression(o: *mut leveldb_options_t, t: c_int) {
    let compression = compression_from_c(t);
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("leveldb_options_set_compression", o, |o| {
            o.compression = compression
        })
    }
}

// ---------------------------------------------------------------------------
// Comparator.

#[no_mangle]
pub extern "C" fn leveldb_comparator_create(
    state: *mut c_void,
    destructor: Destructor,
    compare: CompareFn,
    name: NameFn,
) -> *mut leveldb_comparator_t {
    or_abort("leveldb_comparator_create", || {
        into_handle(leveldb_comparator_t {
            comparator: Arc::new(CComparator::new(state, destructor, compare, name)),
        })
    })
}

/// Drops the handle's reference: the destructor runs now if no options or
/// open database hold the comparator any more, else when the last of them
/// lets go (LevelDB requires the comparator to outlive those users).
#[no_mangle]
pub unsafe extern "C" fn leveldb_comparator_destroy(cmp: *mut leveldb_comparator_t) {
    // SAFETY: NULL or a handle from `leveldb_comparator_create`, freed once.
    or_abort("leveldb_comparator_destroy", || unsafe { free_handle(cmp) })
}

// ---------------------------------------------------------------------------
// Filter policy.

#[no_mangle]
pub extern "C" fn leveldb_filterpolicy_create(
    state: *mut c_void,
    destructor: Destructor,
    create_filter: CreateFilterFn,
    key_may_match: KeyMayMatchFn,
    name: NameFn,
) -> *mut leveldb_filterpolicy_t {
    or_abort("leveldb_filterpolicy_create", || {
        into_handle(leveldb_filterpolicy_t {
            policy: Arc::new(CFilterPolicy::new(
                state,
                destructor,
                create_filter,
                key_may_match,
                name,
            )),
        })
    })
}

/// Drops the handle's reference; see `leveldb_comparator_destroy`.
#[no_mangle]
pub unsafe extern "C" fn leveldb_filterpolicy_destroy(policy: *mut leveldb_filterpolicy_t) {
    // SAFETY: NULL or a handle from a `leveldb_filterpolicy_create*`
    // function, freed once.
    or_abort("leveldb_filterpolicy_destroy", || unsafe {
        free_handle(policy)
    })
}

/// LevelDB's built-in bloom filter (`leveldb.BuiltinBloomFilter2`), with
/// filters bit-identical to LevelDB's. Negative sizes count as 0.
#[no_mangle]
pub extern "C" fn leveldb_filterpolicy_create_bloom(
    bits_per_key: c_int,
) -> *mut leveldb_filterpolicy_t {
    or_abort("leveldb_filterpolicy_create_bloom", || {
        let bits = usize::try_from(bits_per_key).unwrap_or(0);
        into_handle(leveldb_filterpolicy_t {
            policy: Arc::new(BloomFilterPolicy::new(bits)),
        })
    })
}

// ---------------------------------------------------------------------------
// Read options.

#[no_mangle]
pub extern "C" fn leveldb_readoptions_create() -> *mut leveldb_readoptions_t {
    or_abort("leveldb_readoptions_create", || {
        let d = ReadOptions::default();
        into_handle(leveldb_readoptions_t {
            verify_checksums: d.verify_checksums,
            fill_cache: d.fill_cache,
            snapshot: ptr::null(),
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_readoptions_destroy(o: *mut leveldb_readoptions_t) {
    // SAFETY: NULL or a handle from `leveldb_readoptions_create`, freed once.
    or_abort("leveldb_readoptions_destroy", || unsafe { free_handle(o) })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_readoptions_set_verify_checksums(
    o: *mut leveldb_readoptions_t,
    v: u8,
) {
    // SAFETY: NULL or live read options used by one thread at a time.
    if let Some(o) = unsafe { o.as_mut() } {
        o.verify_checksums = v != 0;
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_readoptions_set_fill_cache(o: *mut leveldb_readoptions_t, v: u8) {
    // SAFETY: NULL or live read options used by one thread at a time.
    if let Some(o) = unsafe { o.as_mut() } {
        o.fill_cache = v != 0;
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_readoptions_set_snapshot(
    o: *mut leveldb_readoptions_t,
    snap: *const leveldb_snapshot_t,
) {
    // SAFETY: NULL or live read options used by one thread at a time; the
    // snapshot pointer is only stored (NULL means "latest state").
    if let Some(o) = unsafe { o.as_mut() } {
        o.snapshot = snap;
    }
}

// ---------------------------------------------------------------------------
// Write options.

#[no_mangle]
pub extern "C" fn leveldb_writeoptions_create() -> *mut leveldb_writeoptions_t {
    or_abort("leveldb_writeoptions_create", || {
        into_handle(leveldb_writeoptions_t { sync: false })
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_writeoptions_destroy(o: *mut leveldb_writeoptions_t) {
    // SAFETY: NULL or a handle from `leveldb_writeoptions_create`, freed once.
    or_abort("leveldb_writeoptions_destroy", || unsafe { free_handle(o) })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_writeoptions_set_sync(o: *mut leveldb_writeoptions_t, v: u8) {
    // SAFETY: NULL or live write options used by one thread at a time.
    if let Some(o) = unsafe { o.as_mut() } {
        o.sync = v != 0;
    }
}

// ---------------------------------------------------------------------------
// Cache.

#[no_mangle]
pub extern "C" fn leveldb_cache_create_lru(capacity: usize) -> *mut leveldb_cache_t {
    or_abort("leveldb_cache_create_lru", || {
        into_handle(leveldb_cache_t {
            cache: Cache::new(capacity),
        })
    })
}

/// Drops the handle's reference; databases opened with the cache keep it
/// until they close.
#[no_mangle]
pub unsafe extern "C" fn leveldb_cache_destroy(cache: *mut leveldb_cache_t) {
    // SAFETY: NULL or a handle from `leveldb_cache_create_lru`, freed once.
    or_abort("leveldb_cache_destroy", || unsafe { free_handle(cache) })
}

// ---------------------------------------------------------------------------
// Env.

#[no_mangle]
pub extern "C" fn leveldb_create_default_env() -> *mut leveldb_env_t {
    or_abort("leveldb_create_default_env", || {
        into_handle(leveldb_env_t { _default: () })
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_env_destroy(env: *mut leveldb_env_t) {
    // SAFETY: NULL or a handle from `leveldb_create_default_env`, freed once.
    or_abort("leveldb_env_destroy", || unsafe { free_handle(env) })
}

/// A directory for tests, as LevelDB's default environment picks it:
/// `$TEST_TMPDIR` when set and not empty, else `/tmp/leveldbtest-<euid>`;
/// created if missing. `malloc`'d; NULL for a NULL env.
#[no_mangle]
pub unsafe extern "C" fn leveldb_env_get_test_directory(env: *mut leveldb_env_t) -> *mut c_char {
    or_abort("leveldb_env_get_test_directory", || {
        if env.is_null() {
            return ptr::null_mut();
        }
        let dir = match std::env::var_os("TEST_TMPDIR") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => {
                // SAFETY: geteuid has no preconditions and cannot fail.
                let euid = unsafe { libc::geteuid() };
                PathBuf::from(format!("/tmp/leveldbtest-{euid}"))
            }
        };
        // Like LevelDB, an existing directory or a failure here is ignored.
        let _ = std::fs::create_dir_all(&dir);
        let mut bytes = dir.as_os_str().as_bytes().to_vec();
        bytes.push(0);
        malloc_copy(&bytes)
    })
}

// ---------------------------------------------------------------------------
// Utility.

#[no_mangle]
pub unsafe extern "C" fn leveldb_free(ptr: *mut c_void) {
    // SAFETY: `ptr` is NULL or was malloc'd and returned by this library
    // (c.h's contract); free(NULL) does nothing.
    unsafe { libc::free(ptr) }
}

/// 1: this library implements LevelDB 1.23's C API (see
/// `leveldb_minor_version`), so that programs checking for it accept Shale.
#[no_mangle]
pub extern "C" fn leveldb_major_version() -> c_int {
    LEVELDB_MAJOR
}

/// 23: see `leveldb_major_version`. Shale's own version is `shale_version()`
/// and the `shale.version` property.
#[no_mangle]
pub extern "C" fn leveldb_minor_version() -> c_int {
    LEVELDB_MINOR
}

// ---------------------------------------------------------------------------
// Shale's additions.

/// Shale's version, a static NUL-terminated string (do not free it).
#[no_mangle]
pub extern "C" fn shale_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// `Options::zstd_compression_level`.
#[no_mangle]
pub unsafe extern "C" fn shale_options_set_zstd_compression_level(
    o: *mut leveldb_options_t,
    level: c_int,
) {
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("shale_options_set_zstd_compression_level", o, |o| {
            o.zstd_compression_level = level
        })
    }
}

/// `Options::compression_per_level` from `n` type numbers at `types`
/// (NULL when `n` is 0); numbers as `leveldb_options_set_compression` reads
/// them.
#[no_mangle]
pub unsafe extern "C" fn shale_options_set_compression_per_level(
    o: *mut leveldb_options_t,
    types: *const c_int,
    n: usize,
) {
    let per_level: Vec<CompressionType> = if n == 0 || types.is_null() {
        Vec::new()
    } else {
        // SAFETY: c.h's contract: `types` points to `n` ints, read here
        // before the call returns.
        unsafe { std::slice::from_raw_parts(types, n) }
            .iter()
            .map(|&t| compression_from_c(t))
            .collect()
    };
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("shale_options_set_compression_per_level", o, |o| {
            o.compression_per_level = per_level
        })
    }
}

/// `Options::bottommost_compression`: a type number as
/// `leveldb_options_set_compression` reads it, or a negative value for
/// none (no override).
#[no_mangle]
pub unsafe extern "C" fn shale_options_set_bottommost_compression(
    o: *mut leveldb_options_t,
    t: c_int,
) {
    let bottommost = (t >= 0).then(|| compression_from_c(t));
    // SAFETY: `o` is NULL or live options (c.h's contract).
    unsafe {
        set_option("shale_options_set_bottommost_compression", o, |o| {
            o.bottommost_compression = bottommost
        })
    }
}
