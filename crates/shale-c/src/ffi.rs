//! The plumbing every exported function shares: errors through `char**
//! errptr`, malloc'd copies, slices from C pointers, and the guard that keeps
//! a Rust panic from crossing into C.

use std::any::Any;
use std::os::raw::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

/// A `malloc`'d copy of `bytes` (never NULL unless memory is exhausted, also
/// for zero bytes), to be freed by the caller with `leveldb_free`/`free`.
pub(crate) fn malloc_copy(bytes: &[u8]) -> *mut c_char {
    // SAFETY: malloc with a non-zero size; the result is checked for NULL.
    let p = unsafe { libc::malloc(bytes.len().max(1)) }.cast::<u8>();
    if p.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: `p` points to at least `bytes.len()` writable bytes, freshly
    // allocated, so it cannot overlap `bytes`.
    unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
    p.cast()
}

/// A `malloc`'d NUL-terminated copy of `s` (interior NULs become `?`).
pub(crate) fn malloc_cstring(s: &str) -> *mut c_char {
    let mut bytes: Vec<u8> = s.bytes().map(|b| if b == 0 { b'?' } else { b }).collect();
    bytes.push(0);
    malloc_copy(&bytes)
}

/// Stores `msg` in `*errptr` as LevelDB does: the message there before is
/// freed, the new one is `malloc`'d. A NULL `errptr` drops the message.
pub(crate) fn save_error(errptr: *mut *mut c_char, msg: &str) {
    if errptr.is_null() {
        return;
    }
    // SAFETY: `errptr` is non-NULL and, by c.h's contract, points to a
    // `char*` that is NULL or a malloc'd message this library may free.
    unsafe {
        let old = *errptr;
        if !old.is_null() {
            libc::free(old.cast::<c_void>());
        }
        *errptr = malloc_cstring(msg);
    }
}

/// The bytes `ptr[0..len]`; an empty slice for `len == 0` (then `ptr` may be
/// NULL or dangling) or a NULL `ptr`.
///
/// # Safety
/// When `len > 0` and `ptr` is non-NULL, `ptr` must point to `len` readable
/// bytes that stay unchanged for `'a`.
pub(crate) unsafe fn bytes<'a>(ptr: *const c_char, len: usize) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees `len` readable bytes at `ptr`.
        unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) }
    }
}

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs `f` for a function that reports errors through `errptr`: an `Err`
/// or a panic is saved there (a panic as an `IO error` naming the function)
/// and `fallback` returned.
///
/// Always inlined into the exported function, so that a call from C costs
/// no more than its work: `catch_unwind` costs nothing until a panic, and
/// the error and panic paths are out of line (`report_error`,
/// `report_panic`).
#[inline(always)]
pub(crate) fn with_errptr<R>(
    function: &str,
    errptr: *mut *mut c_char,
    fallback: R,
    f: impl FnOnce() -> Result<R, String>,
) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(r)) => r,
        Ok(Err(msg)) => {
            report_error(errptr, msg);
            fallback
        }
        Err(payload) => {
            report_panic(function, errptr, payload);
            fallback
        }
    }
}

/// `with_errptr`'s error path: the message saved in `*errptr`.
#[cold]
#[inline(never)]
fn report_error(errptr: *mut *mut c_char, msg: String) {
    save_error(errptr, &msg);
}

/// `with_errptr`'s panic path: the panic saved in `*errptr` as an `IO
/// error` naming the function.
#[cold]
#[inline(never)]
fn report_panic(function: &str, errptr: *mut *mut c_char, payload: Box<dyn Any + Send>) {
    let msg = format!(
        "IO error: internal error in {function}: {}",
        panic_message(&*payload)
    );
    save_error(errptr, &msg);
}

/// Runs `f` for a function that cannot report an error: a panic aborts the
/// process with a message on stderr instead of unwinding into C.
///
/// Always inlined, as `with_errptr`; the abort is out of line.
#[inline(always)]
pub(crate) fn or_abort<R>(function: &str, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => abort_on_panic(function, payload),
    }
}

/// `or_abort`'s panic path: a message on stderr, then abort.
#[cold]
#[inline(never)]
fn abort_on_panic(function: &str, payload: Box<dyn Any + Send>) -> ! {
    eprintln!(
        "shale-c: internal error in {function}: {}; aborting",
        panic_message(&*payload)
    );
    std::process::abort()
}
