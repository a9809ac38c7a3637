//! A minimal safe wrapper over the C API of the reference LevelDB library
//! (`leveldb/c.h`, version 1.23), used only by the on-disk compatibility tests.
//!
//! Invariants: every handle created here is owned by exactly one wrapper value
//! and destroyed exactly once, in `Drop`; the database is closed before the
//! options and the filter policy it was opened with are destroyed; buffers the
//! library returns with `malloc` are copied and released with `leveldb_free`.

#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{c_char, c_int, c_uchar, CStr, CString};
use std::path::Path;
use std::ptr;

/// Raw declarations of the `leveldb/c.h` functions (crate `leveldb-ffi`).
pub use leveldb_ffi as ffi;

/// Turns an error string the library allocated into an `Err`, freeing it.
fn take_error(err: *mut c_char) -> Result<(), String> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null `errptr` result is a NUL-terminated string allocated
    // by the library with malloc; we copy it, then free it exactly once.
    let msg = unsafe { CStr::from_ptr(err) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: `err` came from the library's allocator and is not used again.
    unsafe { ffi::leveldb_free(err.cast()) };
    Err(msg)
}

/// How a reference LevelDB database is opened.
#[derive(Debug, Clone, Copy)]
pub struct RefOptions {
    /// Compress table blocks with Snappy.
    pub snappy: bool,
    /// Bits per key of a bloom filter, or `None` for no filter.
    pub bloom_bits_per_key: Option<i32>,
    /// Memtable size before a flush.
    pub write_buffer_size: usize,
    /// Target table file size.
    pub max_file_size: usize,
}

/// An open database of the reference LevelDB library.
pub struct RefDb {
    db: *mut ffi::leveldb_t,
    options: *mut ffi::leveldb_options_t,
    filter: *mut ffi::leveldb_filterpolicy_t,
    read: *mut ffi::leveldb_readoptions_t,
    write: *mut ffi::leveldb_writeoptions_t,
}

impl RefDb {
    /// Opens (creating if missing) the database at `path`.
    pub fn open(path: &Path, opts: RefOptions) -> Result<RefDb, String> {
        let name = CString::new(path.to_string_lossy().as_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: the create functions have no preconditions; the setters get
        // the live handles just created. The filter policy outlives the
        // database: it is destroyed in `Drop` after `leveldb_close`.
        let (options, filter, read, write) = unsafe {
            let options = ffi::leveldb_options_create();
            ffi::leveldb_options_set_create_if_missing(options, 1);
            ffi::leveldb_options_set_compression(
                options,
                if opts.snappy {
                    ffi::SNAPPY_COMPRESSION
                } else {
                    ffi::NO_COMPRESSION
                },
            );
            ffi::leveldb_options_set_write_buffer_size(options, opts.write_buffer_size);
            ffi::leveldb_options_set_max_file_size(options, opts.max_file_size);
            let filter = match opts.bloom_bits_per_key {
                Some(bits) => {
                    let f = ffi::leveldb_filterpolicy_create_bloom(bits as c_int);
                    ffi::leveldb_options_set_filter_policy(options, f);
                    f
                }
                None => ptr::null_mut(),
            };
            let read = ffi::leveldb_readoptions_create();
            ffi::leveldb_readoptions_set_verify_checksums(read, 1 as c_uchar);
            let write = ffi::leveldb_writeoptions_create();
            (options, filter, read, write)
        };
        let mut err = ptr::null_mut();
        // SAFETY: `options` is live and `name` is a NUL-terminated string that
        // outlives the call; `err` is a valid out-pointer.
        let db = unsafe { ffi::leveldb_open(options, name.as_ptr(), &mut err) };
        let out = RefDb {
            db,
            options,
            filter,
            read,
            write,
        };
        take_error(err)?;
        if out.db.is_null() {
            return Err("leveldb_open returned null".into());
        }
        Ok(out)
    }

    /// Stores `value` under `key`.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        let mut err = ptr::null_mut();
        // SAFETY: the handles are live; the slices are valid for their lengths
        // for the duration of the call, and the library copies them.
        unsafe {
            ffi::leveldb_put(
                self.db,
                self.write,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
                &mut err,
            )
        };
        take_error(err)
    }

    /// Removes `key`.
    pub fn delete(&self, key: &[u8]) -> Result<(), String> {
        let mut err = ptr::null_mut();
        // SAFETY: the handles are live; `key` is valid for its length.
        unsafe {
            ffi::leveldb_delete(
                self.db,
                self.write,
                key.as_ptr().cast(),
                key.len(),
                &mut err,
            )
        };
        take_error(err)
    }

    /// Reads the value of `key`, `None` if absent.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let mut err = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: the handles are live; `key` is valid for its length; `len`
        // and `err` are valid out-pointers.
        let p = unsafe {
            ffi::leveldb_get(
                self.db,
                self.read,
                key.as_ptr().cast(),
                key.len(),
                &mut len,
                &mut err,
            )
        };
        take_error(err)?;
        if p.is_null() {
            return Ok(None);
        }
        // SAFETY: a non-null result is a malloc'ed buffer of `len` bytes that
        // we own; copy it, then free it exactly once.
        let v = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }.to_vec();
        // SAFETY: `p` came from the library's allocator and is not used again.
        unsafe { ffi::leveldb_free(p.cast()) };
        Ok(Some(v))
    }

    /// The value of a `leveldb.*` property, `None` if unknown.
    pub fn property(&self, name: &str) -> Option<String> {
        let name = CString::new(name).ok()?;
        // SAFETY: the handle is live and `name` is NUL-terminated.
        let p = unsafe { ffi::leveldb_property_value(self.db, name.as_ptr()) };
        if p.is_null() {
            return None;
        }
        // SAFETY: a non-null result is a malloc'ed NUL-terminated string we own.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        // SAFETY: `p` came from the library's allocator and is not used again.
        unsafe { ffi::leveldb_free(p.cast()) };
        Some(s)
    }

    /// Compacts the whole key range.
    pub fn compact_all(&self) {
        // SAFETY: the handle is live; null bounds mean "unbounded".
        unsafe { ffi::leveldb_compact_range(self.db, ptr::null(), 0, ptr::null(), 0) };
    }

    /// A new iterator over the database (checksums verified).
    pub fn iter(&self) -> RefIter<'_> {
        // SAFETY: the handles are live; the iterator borrows `self`, so it is
        // destroyed before the database is closed.
        let it = unsafe { ffi::leveldb_create_iterator(self.db, self.read) };
        RefIter { it, _db: self }
    }
}

impl Drop for RefDb {
    fn drop(&mut self) {
        // SAFETY: each handle is owned by `self` and destroyed exactly once.
        // The database closes first (it waits for background compactions),
        // then the options and the filter policy it referenced.
        unsafe {
            if !self.db.is_null() {
                ffi::leveldb_close(self.db);
            }
            ffi::leveldb_readoptions_destroy(self.read);
            ffi::leveldb_writeoptions_destroy(self.write);
            ffi::leveldb_options_destroy(self.options);
            if !self.filter.is_null() {
                ffi::leveldb_filterpolicy_destroy(self.filter);
            }
        }
    }
}

/// An iterator over a [`RefDb`].
pub struct RefIter<'a> {
    it: *mut ffi::leveldb_iterator_t,
    _db: &'a RefDb,
}

impl RefIter<'_> {
    /// Whether the iterator is positioned at an entry.
    pub fn valid(&self) -> bool {
        // SAFETY: the iterator handle is live.
        unsafe { ffi::leveldb_iter_valid(self.it) != 0 }
    }
    /// Positions at the first entry.
    pub fn seek_to_first(&mut self) {
        // SAFETY: the iterator handle is live.
        unsafe { ffi::leveldb_iter_seek_to_first(self.it) }
    }
    /// Positions at the last entry.
    pub fn seek_to_last(&mut self) {
        // SAFETY: the iterator handle is live.
        unsafe { ffi::leveldb_iter_seek_to_last(self.it) }
    }
    /// Moves to the next entry; requires `valid()`.
    pub fn next(&mut self) {
        assert!(self.valid(), "next on an invalid iterator");
        // SAFETY: the handle is live and positioned (checked above), as the C++
        // API requires.
        unsafe { ffi::leveldb_iter_next(self.it) }
    }
    /// Moves to the previous entry; requires `valid()`.
    pub fn prev(&mut self) {
        assert!(self.valid(), "prev on an invalid iterator");
        // SAFETY: the handle is live and positioned (checked above).
        unsafe { ffi::leveldb_iter_prev(self.it) }
    }
    /// The current key; requires `valid()`.
    pub fn key(&self) -> &[u8] {
        assert!(self.valid(), "key on an invalid iterator");
        let mut len = 0usize;
        // SAFETY: the handle is live and positioned; the returned pointer is
        // valid for `len` bytes until the iterator moves, which needs `&mut self`.
        unsafe {
            let p = ffi::leveldb_iter_key(self.it, &mut len);
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        }
    }
    /// The current value; requires `valid()`.
    pub fn value(&self) -> &[u8] {
        assert!(self.valid(), "value on an invalid iterator");
        let mut len = 0usize;
        // SAFETY: as for `key`.
        unsafe {
            let p = ffi::leveldb_iter_value(self.it, &mut len);
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        }
    }
    /// The first error the iterator met, if any.
    pub fn status(&self) -> Result<(), String> {
        let mut err = ptr::null_mut();
        // SAFETY: the handle is live; `err` is a valid out-pointer.
        unsafe { ffi::leveldb_iter_get_error(self.it, &mut err) };
        take_error(err)
    }
}

impl Drop for RefIter<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle is owned by `self` and destroyed exactly once,
        // while the database it came from is still open (borrowed).
        unsafe { ffi::leveldb_iter_destroy(self.it) }
    }
}
