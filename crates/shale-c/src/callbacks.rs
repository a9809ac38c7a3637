//! Comparators and filter policies given as C callbacks.
//!
//! Each wraps the caller's `state` and function pointers; the `destructor`
//! runs exactly once, when the last user lets go: the C handle (freed by
//! `leveldb_comparator_destroy` / `leveldb_filterpolicy_destroy`), options
//! holding it, and open databases all share one reference-counted value.

use std::cmp::Ordering;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::OnceLock;

use shale::{Comparator, FilterPolicy};

use crate::ffi::bytes;

pub(crate) type Destructor = Option<unsafe extern "C" fn(*mut c_void)>;
pub(crate) type NameFn = Option<unsafe extern "C" fn(*mut c_void) -> *const c_char>;
pub(crate) type CompareFn =
    Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize) -> c_int>;
pub(crate) type CreateFilterFn = Option<
    unsafe extern "C" fn(
        *mut c_void,
        *const *const c_char,
        *const usize,
        c_int,
        *mut usize,
    ) -> *mut c_char,
>;
pub(crate) type KeyMayMatchFn =
    Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize) -> u8>;

/// The name a callback returns, read once (a database stores it in its
/// MANIFEST and compares it at every open, so it must not change). A NULL
/// callback or result reads as an empty name; bytes that are not UTF-8 are
/// replaced.
fn read_name(name: NameFn, state: *mut c_void) -> String {
    let Some(name) = name else {
        return String::new();
    };
    // SAFETY: the callback was supplied for this state by the C caller, who
    // guarantees it may be called from any thread until the destructor runs.
    let p = unsafe { name(state) };
    if p.is_null() {
        return String::new();
    }
    // SAFETY: a non-NULL name is a NUL-terminated string (c.h's contract).
    let c = unsafe { CStr::from_ptr(p) };
    c.to_string_lossy().into_owned()
}

/// A comparator whose order is a C function.
pub(crate) struct CComparator {
    state: *mut c_void,
    destructor: Destructor,
    compare: CompareFn,
    name_fn: NameFn,
    name: OnceLock<String>,
}

// SAFETY: c.h's callers promise what LevelDB requires of a comparator: its
// functions may be called concurrently from any thread (LevelDB calls them
// from its background compaction thread and every reader). `state` is only
// handed back to those functions and to the destructor, once.
unsafe impl Send for CComparator {}
// SAFETY: as for `Send`: the callbacks are thread-safe by contract.
unsafe impl Sync for CComparator {}

impl CComparator {
    pub(crate) fn new(
        state: *mut c_void,
        destructor: Destructor,
        compare: CompareFn,
        name: NameFn,
    ) -> CComparator {
        CComparator {
            state,
            destructor,
            compare,
            name_fn: name,
            name: OnceLock::new(),
        }
    }
}

impl Comparator for CComparator {
    fn name(&self) -> &str {
        self.name
            .get_or_init(|| read_name(self.name_fn, self.state))
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let Some(compare) = self.compare else {
            // No function was given: bytewise order keeps the engine sound.
            return a.cmp(b);
        };
        // SAFETY: the callback reads `a.len()` bytes at `a` and `b.len()` at
        // `b`, both live slices; it is thread-safe by contract.
        let r = unsafe {
            compare(
                self.state,
                a.as_ptr().cast(),
                a.len(),
                b.as_ptr().cast(),
                b.len(),
            )
        };
        r.cmp(&0)
    }
}

impl Drop for CComparator {
    fn drop(&mut self) {
        if let Some(d) = self.destructor {
            // SAFETY: the last reference is going away, so this is the one
            // call of the destructor for this state.
            unsafe { d(self.state) };
        }
    }
}

/// A filter policy whose filters a C function builds and probes.
pub(crate) struct CFilterPolicy {
    state: *mut c_void,
    destructor: Destructor,
    create_filter: CreateFilterFn,
    key_may_match: KeyMayMatchFn,
    name_fn: NameFn,
    name: OnceLock<String>,
}

// SAFETY: as for `CComparator`: LevelDB calls filter policies from its
// background thread and from readers, so c.h's callers supply thread-safe
// callbacks; `state` goes only back to them.
unsafe impl Send for CFilterPolicy {}
// SAFETY: as for `Send`.
unsafe impl Sync for CFilterPolicy {}

impl CFilterPolicy {
    pub(crate) fn new(
        state: *mut c_void,
        destructor: Destructor,
        create_filter: CreateFilterFn,
        key_may_match: KeyMayMatchFn,
        name: NameFn,
    ) -> CFilterPolicy {
        CFilterPolicy {
            state,
            destructor,
            create_filter,
            key_may_match,
            name_fn: name,
            name: OnceLock::new(),
        }
    }
}

impl FilterPolicy for CFilterPolicy {
    fn name(&self) -> &str {
        self.name
            .get_or_init(|| read_name(self.name_fn, self.state))
    }

    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        let Some(create) = self.create_filter else {
            return;
        };
        let ptrs: Vec<*const c_char> = keys.iter().map(|k| k.as_ptr().cast()).collect();
        let lens: Vec<usize> = keys.iter().map(|k| k.len()).collect();
        let n = c_int::try_from(keys.len()).unwrap_or(c_int::MAX);
        let mut len = 0usize;
        // SAFETY: `ptrs`/`lens` hold `n` live keys; the callback writes the
        // filter's length to `len` and returns a malloc'd buffer (or NULL).
        let filter = unsafe { create(self.state, ptrs.as_ptr(), lens.as_ptr(), n, &mut len) };
        if filter.is_null() {
            return;
        }
        // SAFETY: the returned buffer holds `len` bytes (the callback's
        // contract); it is copied out before being freed.
        dst.extend_from_slice(unsafe { bytes(filter, len) });
        // SAFETY: the buffer was malloc'd by the callback and is freed once.
        unsafe { libc::free(filter.cast()) };
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        let Some(may_match) = self.key_may_match else {
            return true;
        };
        // SAFETY: both slices are live for the call; the callback is
        // thread-safe by contract.
        let r = unsafe {
            may_match(
                self.state,
                key.as_ptr().cast(),
                key.len(),
                filter.as_ptr().cast(),
                filter.len(),
            )
        };
        r != 0
    }
}

impl Drop for CFilterPolicy {
    fn drop(&mut self) {
        if let Some(d) = self.destructor {
            // SAFETY: the last reference is going away: the one call of the
            // destructor for this state.
            unsafe { d(self.state) };
        }
    }
}
