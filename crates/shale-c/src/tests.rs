//! `leveldb_get`'s per-thread buffer: every value comes back as its own
//! `malloc`'d copy whatever the calls before it read, a large value's buffer
//! is not kept, and a `leveldb_get` made from a callback of another one (the
//! buffer then in use) reads its own value.

use std::path::Path;
use std::sync::atomic::{AtomicPtr, Ordering as AtomicOrdering};
use std::sync::Mutex;

use super::*;

/// Opens (creating) a database in `dir`, with `cmp` as its comparator
/// (NULL: bytewise).
fn open(dir: &Path, cmp: *mut leveldb_comparator_t) -> *mut leveldb_t {
    let name = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
    let mut err = ptr::null_mut();
    // SAFETY: live options, a NUL-terminated name, a writable errptr.
    unsafe {
        let options = leveldb_options_create();
        leveldb_options_set_create_if_missing(options, 1);
        if !cmp.is_null() {
            leveldb_options_set_comparator(options, cmp);
        }
        let db = leveldb_open(options, name.as_ptr(), &mut err);
        leveldb_options_destroy(options);
        assert!(err.is_null(), "{}", CStr::from_ptr(err).to_string_lossy());
        assert!(!db.is_null());
        db
    }
}

/// `leveldb_put` that must succeed.
fn put(db: *mut leveldb_t, key: &[u8], value: &[u8]) {
    let mut err = ptr::null_mut();
    // SAFETY: a live database; key and value are readable for the call.
    unsafe {
        let w = leveldb_writeoptions_create();
        leveldb_put(
            db,
            w,
            key.as_ptr().cast(),
            key.len(),
            value.as_ptr().cast(),
            value.len(),
            &mut err,
        );
        leveldb_writeoptions_destroy(w);
    }
    assert!(err.is_null());
}

/// `leveldb_get`, its copy checked (never NULL for a value, even an empty
/// one), read and freed.
fn get(db: *mut leveldb_t, key: &[u8]) -> Option<Vec<u8>> {
    let mut err = ptr::null_mut();
    let mut len = usize::MAX;
    // SAFETY: a live database; the result is `len` malloc'd bytes or NULL,
    // freed once.
    unsafe {
        let r = leveldb_readoptions_create();
        let v = leveldb_get(db, r, key.as_ptr().cast(), key.len(), &mut len, &mut err);
        leveldb_readoptions_destroy(r);
        assert!(err.is_null(), "{}", CStr::from_ptr(err).to_string_lossy());
        if v.is_null() {
            assert_eq!(len, 0);
            return None;
        }
        let value = std::slice::from_raw_parts(v.cast::<u8>(), len).to_vec();
        leveldb_free(v.cast());
        Some(value)
    }
}

/// The capacity of this thread's buffer.
fn kept_capacity() -> usize {
    GET_BUFFER.with(|b| {
        let buffer = b.take();
        let capacity = buffer.capacity();
        b.set(buffer);
        capacity
    })
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

#[test]
fn each_value_is_its_own_copy_and_large_buffers_are_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), ptr::null_mut());
    let big = pattern(1 << 20, 1);
    let small = pattern(100, 2);
    put(db, b"big", &big);
    put(db, b"small", &small);
    put(db, b"empty", b"");

    assert_eq!(get(db, b"big").as_deref(), Some(&big[..]));
    assert!(kept_capacity() <= GET_BUFFER_KEPT, "a 1 MiB buffer is kept");
    assert_eq!(get(db, b"small").as_deref(), Some(&small[..]));
    assert!(kept_capacity() >= small.len(), "a small buffer is reused");
    // Shorter values after longer ones: nothing of the earlier value shows.
    assert_eq!(get(db, b"empty").as_deref(), Some(&b""[..]));
    assert_eq!(get(db, b"missing"), None);
    assert_eq!(get(db, b"small").as_deref(), Some(&small[..]));
    assert_eq!(get(db, b"big").as_deref(), Some(&big[..]));
    // SAFETY: opened above, closed once.
    unsafe { leveldb_close(db) };
}

#[test]
fn threads_read_their_own_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), ptr::null_mut());
    let values: Vec<Vec<u8>> = (0..4).map(|t| pattern(50 + 3000 * t, t as u8)).collect();
    for (t, v) in values.iter().enumerate() {
        put(db, format!("k{t}").as_bytes(), v);
    }
    let handle = db as usize;
    std::thread::scope(|s| {
        for (t, v) in values.iter().enumerate() {
            s.spawn(move || {
                let db = handle as *mut leveldb_t;
                for _ in 0..200 {
                    assert_eq!(get(db, format!("k{t}").as_bytes()).as_ref(), Some(v));
                }
            });
        }
    });
    // SAFETY: opened above, closed once, after the threads.
    unsafe { leveldb_close(db) };
}

/// The comparator's state: a database to read from inside the next
/// comparison (taken by it), and what that read returned.
struct Nested {
    db: AtomicPtr<leveldb_t>,
    read: Mutex<Option<Option<Vec<u8>>>>,
}

/// Bytewise order; the first comparison after `Nested::db` is set reads
/// `inner` from that database.
unsafe extern "C" fn compare_and_read(
    state: *mut c_void,
    a: *const c_char,
    alen: usize,
    b: *const c_char,
    blen: usize,
) -> c_int {
    // SAFETY: the state is the test's `Nested`, alive while the database is
    // open; the keys hold their lengths.
    let (nested, a, b) = unsafe { (&*state.cast::<Nested>(), bytes(a, alen), bytes(b, blen)) };
    let db = nested.db.swap(ptr::null_mut(), AtomicOrdering::SeqCst);
    if !db.is_null() {
        *nested.read.lock().unwrap() = Some(get(db, b"inner"));
    }
    a.cmp(b) as c_int
}

unsafe extern "C" fn nested_name(_: *mut c_void) -> *const c_char {
    c"shale-c.test.nested".as_ptr()
}

#[test]
fn a_get_from_a_comparator_of_a_get_reads_its_own_value() {
    let dir = tempfile::tempdir().unwrap();
    let inner_value = pattern(300, 3);
    let outer_value = pattern(200, 4);
    let inner = open(&dir.path().join("inner"), ptr::null_mut());
    put(inner, b"inner", &inner_value);

    let nested = Box::new(Nested {
        db: AtomicPtr::new(ptr::null_mut()),
        read: Mutex::new(None),
    });
    let state = (&*nested as *const Nested).cast_mut().cast::<c_void>();
    let cmp = leveldb_comparator_create(state, None, Some(compare_and_read), Some(nested_name));
    let outer = open(&dir.path().join("outer"), cmp);
    put(outer, b"a", b"other");
    put(outer, b"outer", &outer_value);

    // Fill this thread's buffer first, so the outer read takes a used one.
    assert_eq!(get(inner, b"inner").as_deref(), Some(&inner_value[..]));
    nested.db.store(inner, AtomicOrdering::SeqCst);
    assert_eq!(get(outer, b"outer").as_deref(), Some(&outer_value[..]));
    assert_eq!(
        nested.read.lock().unwrap().take(),
        Some(Some(inner_value.clone())),
        "the comparator ran during the outer read and read the inner value"
    );
    assert_eq!(get(outer, b"outer").as_deref(), Some(&outer_value[..]));
    // SAFETY: each handle is live and freed once; the comparator's state
    // outlives the database.
    unsafe {
        leveldb_close(outer);
        leveldb_comparator_destroy(cmp);
        leveldb_close(inner);
    }
    drop(nested);
}
