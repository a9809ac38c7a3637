//! Small helpers shared by the C-library adapters: C strings for paths and
//! messages, and readable settings values.

#![allow(dead_code)] // which helpers are used depends on the engines built

use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::path::Path;

use crate::engine::{Error, Result};

/// `path` as a NUL-terminated C string.
pub fn path_cstring(path: &Path) -> Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::new(format!("path {} contains a NUL byte", path.display())))
}

/// `s` as a C string (for configuration strings built by this tool, which
/// never contain NUL bytes; a NUL is reported as an error anyway).
pub fn cstring(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::new(format!("string {s:?} contains a NUL byte")))
}

/// Copies a C string owned by the library into a `String`.
///
/// # Safety
/// `ptr` must be null or point to a NUL-terminated string valid for the call.
pub unsafe fn string_from(ptr: *const c_char) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: the caller guarantees a valid NUL-terminated string.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

/// A byte count with its size in MB, e.g. `4194304 (4.0 MB)`.
pub fn bytes(n: u64) -> String {
    format!("{n} ({:.1} MB)", n as f64 / 1_048_576.0)
}

/// A (name, value) settings pair.
pub fn setting(name: &str, value: impl ToString) -> (String, String) {
    (name.to_string(), value.to_string())
}

/// Builds a slice from a pointer and length returned by a C library, treating
/// a null pointer as empty.
///
/// # Safety
/// Unless null, `ptr` must point to `len` readable bytes that stay valid and
/// unmodified for the lifetime `'a` chosen by the caller.
#[inline]
pub unsafe fn slice<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}
