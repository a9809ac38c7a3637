//! What the LevelDB and RocksDB adapters share: both libraries have the same
//! C API under different prefixes (`leveldb_put` / `rocksdb_put`, ...), so
//! sessions, iterators, write batches, error handling and the handles every
//! open database holds are written once here, over an [`LsmCApi`] table
//! that each adapter fills with its library's functions.
//!
//! Invariants: [`Handles::db`] is either null (not opened yet) or an open
//! database, closed exactly once when the handles are dropped and before the
//! read and write options are destroyed; sessions and iterators borrow the
//! handles, so they end before the database is closed.

use std::ffi::c_void;
use std::os::raw::c_char;
use std::ptr;

use super::util;
use crate::engine::{Batch, BatchOp, EngineIter, Error, Result, Session};

/// The opaque C types of one library.
pub(super) trait LsmTypes: 'static {
    /// `leveldb_t` / `rocksdb_t`.
    type Db;
    /// Read options.
    type ReadOptions;
    /// Write options.
    type WriteOptions;
    /// A write batch.
    type Batch;
    /// An iterator.
    type Iter;
}

type Err = *mut *mut c_char;

/// An adapter's point lookup: copies the value of a key into the vector;
/// `Ok(false)` when absent. (LevelDB returns a malloc'ed copy, RocksDB a
/// pinned slice.)
pub(super) type GetFn<T> = unsafe fn(
    *mut <T as LsmTypes>::Db,
    *const <T as LsmTypes>::ReadOptions,
    &[u8],
    &mut Vec<u8>,
) -> Result<bool>;

/// One library's C functions, all with LevelDB's signatures: each adapter
/// fills this table with its library's functions (`leveldb_put`,
/// `rocksdb_put`, ...). Calling any of them is the library's contract.
pub(super) struct LsmCApi<T: LsmTypes> {
    pub close: unsafe extern "C" fn(*mut T::Db),
    pub free: unsafe extern "C" fn(*mut c_void),
    pub readoptions_create: unsafe extern "C" fn() -> *mut T::ReadOptions,
    pub readoptions_destroy: unsafe extern "C" fn(*mut T::ReadOptions),
    pub writeoptions_create: unsafe extern "C" fn() -> *mut T::WriteOptions,
    pub writeoptions_destroy: unsafe extern "C" fn(*mut T::WriteOptions),
    pub writeoptions_set_sync: unsafe extern "C" fn(*mut T::WriteOptions, u8),
    #[allow(clippy::type_complexity)]
    pub put: unsafe extern "C" fn(
        *mut T::Db,
        *const T::WriteOptions,
        *const c_char,
        usize,
        *const c_char,
        usize,
        Err,
    ),
    pub delete: unsafe extern "C" fn(*mut T::Db, *const T::WriteOptions, *const c_char, usize, Err),
    pub write: unsafe extern "C" fn(*mut T::Db, *const T::WriteOptions, *mut T::Batch, Err),
    pub get: GetFn<T>,
    pub property_value: unsafe extern "C" fn(*mut T::Db, *const c_char) -> *mut c_char,
    pub compact_range: unsafe extern "C" fn(*mut T::Db, *const c_char, usize, *const c_char, usize),
    pub batch_create: unsafe extern "C" fn() -> *mut T::Batch,
    pub batch_destroy: unsafe extern "C" fn(*mut T::Batch),
    pub batch_clear: unsafe extern "C" fn(*mut T::Batch),
    pub batch_put: unsafe extern "C" fn(*mut T::Batch, *const c_char, usize, *const c_char, usize),
    pub batch_delete: unsafe extern "C" fn(*mut T::Batch, *const c_char, usize),
    pub create_iterator: unsafe extern "C" fn(*mut T::Db, *const T::ReadOptions) -> *mut T::Iter,
    pub iter_destroy: unsafe extern "C" fn(*mut T::Iter),
    pub iter_valid: unsafe extern "C" fn(*const T::Iter) -> u8,
    pub iter_seek_to_first: unsafe extern "C" fn(*mut T::Iter),
    pub iter_seek_to_last: unsafe extern "C" fn(*mut T::Iter),
    pub iter_seek: unsafe extern "C" fn(*mut T::Iter, *const c_char, usize),
    pub iter_next: unsafe extern "C" fn(*mut T::Iter),
    pub iter_prev: unsafe extern "C" fn(*mut T::Iter),
    pub iter_key: unsafe extern "C" fn(*const T::Iter, *mut usize) -> *const c_char,
    pub iter_value: unsafe extern "C" fn(*const T::Iter, *mut usize) -> *const c_char,
    pub iter_get_error: unsafe extern "C" fn(*const T::Iter, Err),
}

/// Turns an error out-parameter into a `Result`, freeing the message.
///
/// # Safety
/// `err` must be null or a message allocated by the library `free` belongs
/// to.
#[inline]
pub(super) unsafe fn check(
    free: unsafe extern "C" fn(*mut c_void),
    err: *mut c_char,
) -> Result<()> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: as the caller guarantees.
    Err(unsafe { take_error(free, err) })
}

/// `check`'s error path: the message, freed.
///
/// # Safety
/// As for [`check`], and `err` is not null.
#[cold]
#[inline(never)]
unsafe fn take_error(free: unsafe extern "C" fn(*mut c_void), err: *mut c_char) -> Error {
    // SAFETY: the library's error messages are NUL-terminated and malloc'ed.
    let msg = unsafe { util::string_from(err) };
    // SAFETY: allocated by the library, freed once.
    unsafe { free(err.cast()) };
    Error::new(msg)
}

/// An open database with the read options and the two write options
/// (asynchronous, synchronous) every operation uses.
pub(super) struct Handles<T: LsmTypes> {
    api: &'static LsmCApi<T>,
    /// The database; null until the adapter's open call succeeds.
    pub db: *mut T::Db,
    read: *mut T::ReadOptions,
    write_async: *mut T::WriteOptions,
    write_sync: *mut T::WriteOptions,
}

impl<T: LsmTypes> Handles<T> {
    /// Read and write options made by `api`'s library, and no database yet.
    pub fn new(api: &'static LsmCApi<T>) -> Handles<T> {
        // SAFETY: plain constructors; the objects are owned by the handles.
        unsafe {
            let write_sync = (api.writeoptions_create)();
            (api.writeoptions_set_sync)(write_sync, 1);
            Handles {
                api,
                db: ptr::null_mut(),
                read: (api.readoptions_create)(),
                write_async: (api.writeoptions_create)(),
                write_sync,
            }
        }
    }

    /// Turns an error out-parameter of this library into a `Result`.
    ///
    /// # Safety
    /// `err` must be null or a message allocated by this library.
    pub unsafe fn check(&self, err: *mut c_char) -> Result<()> {
        // SAFETY: guaranteed by the caller.
        unsafe { check(self.api.free, err) }
    }

    /// Takes the result of the adapter's open call.
    ///
    /// # Safety
    /// `err` must be the error out-parameter of the call that returned `db`.
    pub unsafe fn opened(&mut self, db: *mut T::Db, err: *mut c_char, what: &str) -> Result<()> {
        // SAFETY: guaranteed by the caller.
        unsafe { self.check(err)? };
        if db.is_null() {
            return Err(Error::new(format!("{what} returned no database")));
        }
        self.db = db;
        Ok(())
    }

    /// A session for one benchmark thread.
    pub fn session(&self) -> Box<dyn Session + '_> {
        // SAFETY: creates a batch owned by the session.
        let batch = unsafe { (self.api.batch_create)() };
        Box::new(LsmSession { h: self, batch })
    }

    /// Compacts the whole key range.
    pub fn compact(&self) {
        // SAFETY: the database is open; null bounds mean the whole range.
        unsafe { (self.api.compact_range)(self.db, ptr::null(), 0, ptr::null(), 0) }
    }

    /// A property's value, if the library knows it.
    pub fn property(&self, name: &str) -> Option<String> {
        let name = util::cstring(name).ok()?;
        // SAFETY: the database is open; the result is malloc'ed or null.
        unsafe {
            let v = (self.api.property_value)(self.db, name.as_ptr());
            if v.is_null() {
                return None;
            }
            let s = util::string_from(v);
            (self.api.free)(v.cast());
            Some(s)
        }
    }

    fn write_options(&self, sync: bool) -> *const T::WriteOptions {
        if sync {
            self.write_sync
        } else {
            self.write_async
        }
    }
}

impl<T: LsmTypes> Drop for Handles<T> {
    fn drop(&mut self) {
        let api = self.api;
        // SAFETY: each pointer was created by the library and is freed once,
        // the database first.
        unsafe {
            if !self.db.is_null() {
                (api.close)(self.db);
            }
            (api.readoptions_destroy)(self.read);
            (api.writeoptions_destroy)(self.write_async);
            (api.writeoptions_destroy)(self.write_sync);
        }
    }
}

struct LsmSession<'a, T: LsmTypes> {
    h: &'a Handles<T>,
    batch: *mut T::Batch,
}

impl<T: LsmTypes> Drop for LsmSession<'_, T> {
    fn drop(&mut self) {
        // SAFETY: the batch was created by this session.
        unsafe { (self.h.api.batch_destroy)(self.batch) };
    }
}

impl<T: LsmTypes> Session for LsmSession<'_, T> {
    fn put(&mut self, key: &[u8], value: &[u8], sync: bool) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: key and value outlive the call; the library copies them.
        unsafe {
            (self.h.api.put)(
                self.h.db,
                self.h.write_options(sync),
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
                &mut err,
            );
            self.h.check(err)
        }
    }

    fn get(&mut self, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        // SAFETY: the database and read options are open.
        unsafe { (self.h.api.get)(self.h.db, self.h.read, key, value) }
    }

    fn delete(&mut self, key: &[u8], sync: bool) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: the key outlives the call.
        unsafe {
            (self.h.api.delete)(
                self.h.db,
                self.h.write_options(sync),
                key.as_ptr().cast(),
                key.len(),
                &mut err,
            );
            self.h.check(err)
        }
    }

    fn write(&mut self, batch: &Batch, sync: bool) -> Result<()> {
        let mut err = ptr::null_mut();
        let api = self.h.api;
        // SAFETY: the batch belongs to this session; the library copies the
        // bytes.
        unsafe {
            (api.batch_clear)(self.batch);
            for op in batch.iter() {
                match op {
                    BatchOp::Put(k, v) => (api.batch_put)(
                        self.batch,
                        k.as_ptr().cast(),
                        k.len(),
                        v.as_ptr().cast(),
                        v.len(),
                    ),
                    BatchOp::Delete(k) => {
                        (api.batch_delete)(self.batch, k.as_ptr().cast(), k.len())
                    }
                }
            }
            (api.write)(self.h.db, self.h.write_options(sync), self.batch, &mut err);
            self.h.check(err)
        }
    }

    fn iter(&mut self) -> Result<Box<dyn EngineIter + '_>> {
        // SAFETY: the iterator is destroyed before the database (it borrows
        // the handles).
        let it = unsafe { (self.h.api.create_iterator)(self.h.db, self.h.read) };
        if it.is_null() {
            return Err(Error::new("create_iterator returned no iterator"));
        }
        Ok(Box::new(LsmIter {
            it,
            api: self.h.api,
            h: self.h,
            valid: false,
        }))
    }
}

/// An iterator of the library. `valid` is the library's `iter_valid` as of
/// the last move: only a move (a seek, `next`, `prev`) changes it, so it is
/// asked once per move, as LevelDB's db_bench asks `Valid()` once per entry,
/// and not again before each `key`, `value` and move.
struct LsmIter<'a, T: LsmTypes> {
    it: *mut T::Iter,
    /// `h.api`, one load nearer.
    api: &'static LsmCApi<T>,
    h: &'a Handles<T>,
    valid: bool,
}

impl<T: LsmTypes> LsmIter<'_, T> {
    /// Asks the library whether the iterator is on an entry, after a move.
    fn moved(&mut self) {
        // SAFETY: a live iterator.
        self.valid = unsafe { (self.api.iter_valid)(self.it) != 0 };
    }
}

impl<T: LsmTypes> Drop for LsmIter<'_, T> {
    fn drop(&mut self) {
        // SAFETY: created by `create_iterator`, destroyed once.
        unsafe { (self.api.iter_destroy)(self.it) };
    }
}

impl<T: LsmTypes> EngineIter for LsmIter<'_, T> {
    fn seek_to_first(&mut self) {
        // SAFETY: a live iterator.
        unsafe { (self.api.iter_seek_to_first)(self.it) };
        self.moved();
    }
    fn seek_to_last(&mut self) {
        // SAFETY: a live iterator.
        unsafe { (self.api.iter_seek_to_last)(self.it) };
        self.moved();
    }
    fn seek(&mut self, key: &[u8]) {
        // SAFETY: a live iterator; the key is copied.
        unsafe { (self.api.iter_seek)(self.it, key.as_ptr().cast(), key.len()) };
        self.moved();
    }
    fn next(&mut self) {
        if self.valid {
            // SAFETY: live and positioned.
            unsafe { (self.api.iter_next)(self.it) };
            self.moved();
        }
    }
    fn prev(&mut self) {
        if self.valid {
            // SAFETY: live and positioned.
            unsafe { (self.api.iter_prev)(self.it) };
            self.moved();
        }
    }
    fn valid(&self) -> bool {
        self.valid
    }
    fn key(&self) -> &[u8] {
        if !self.valid {
            return &[];
        }
        let mut len = 0;
        // SAFETY: positioned; the key stays valid until the iterator moves,
        // which needs `&mut self`.
        unsafe { util::slice((self.api.iter_key)(self.it, &mut len).cast(), len) }
    }
    fn value(&self) -> &[u8] {
        if !self.valid {
            return &[];
        }
        let mut len = 0;
        // SAFETY: as for `key`.
        unsafe { util::slice((self.api.iter_value)(self.it, &mut len).cast(), len) }
    }
    fn status(&self) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: a live iterator; the error is freed by `check`.
        unsafe {
            (self.api.iter_get_error)(self.it, &mut err);
            self.h.check(err)
        }
    }
}
