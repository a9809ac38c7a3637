//! Updates too large for the memtable are refused before anything is
//! written: a key and a value of 2 GiB each (4 GiB together, each within
//! its own limit) through `Db::put` and `WriteBatch::put`.
//!
//! The keys and values are slices of one anonymous mapping that is never
//! touched, so the test reserves address space but no memory. (It relies
//! on the size checks coming before any copy: if they did not, the copies
//! would take gigabytes.)

use std::path::Path;
use std::sync::Arc;

use shale::env::MemFs;
use shale::{Db, Error, Options, WriteBatch};

/// An untouched, read-only anonymous mapping of `len` bytes (reads as zeros).
struct Untouched {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Untouched {
    fn new(len: usize) -> Option<Untouched> {
        // SAFETY: an anonymous mapping with no address hint has no
        // preconditions; failure is reported as MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then_some(Untouched { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping is `len` readable bytes, live while `self` is.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for Untouched {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, once.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

fn expect_too_long_together(r: shale::Result<()>) {
    match r {
        Err(Error::InvalidArgument(msg)) => assert!(msg.contains("too long together"), "{msg}"),
        other => panic!("a 4 GiB update gave {other:?}"),
    }
}

#[test]
fn a_key_and_value_of_4_gib_together_are_refused_before_the_log() {
    let half = 1usize << 31;
    let Some(map) = Untouched::new(half) else {
        eprintln!("no address space for a 2 GiB mapping; skipped");
        return;
    };
    let big = map.bytes();
    let options = Options {
        fs: Arc::new(MemFs::new()),
        create_if_missing: true,
        ..Default::default()
    };
    let dir = Path::new("/db");
    let db = Db::open(dir, options.clone()).unwrap();
    db.put(b"before", b"1").unwrap();
    expect_too_long_together(db.put(big, big));

    let mut batch = WriteBatch::new();
    batch.put(b"small", b"2").unwrap();
    expect_too_long_together(batch.put(big, big));
    assert_eq!(
        batch.count(),
        1,
        "the refused update left the batch unchanged"
    );
    db.write(&Default::default(), &batch).unwrap();
    db.put(b"after", b"3").unwrap();
    drop(db);

    // Nothing oversized reached the log: the database reopens with the rest.
    let db = Db::open(dir, options).unwrap();
    for (k, v) in [
        (&b"before"[..], &b"1"[..]),
        (b"small", b"2"),
        (b"after", b"3"),
    ] {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v));
    }
}
