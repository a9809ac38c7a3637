//! A failed directory sync after CURRENT is renamed to name a new MANIFEST
//! must not leave CURRENT naming a deleted file: the open fails, and the
//! next open succeeds, without repair, with every synchronous write.
//!
//! A file system wrapper around `MemFs` fails the one directory sync that
//! follows a rename of CURRENT, when armed.

#[macro_use]
mod forward_fs;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use shale::env::{FileSystem, MemFs};
use shale::{Db, Options, WriteOptions};

struct FailingFs {
    inner: MemFs,
    /// Fail the directory sync after the next rename of CURRENT.
    armed: AtomicBool,
    /// CURRENT was renamed while armed: the next directory sync fails.
    fail_next_sync_dir: AtomicBool,
}

impl FileSystem for FailingFs {
    fn rename(&self, from: &Path, to: &Path) -> shale::Result<()> {
        self.inner.rename(from, to)?;
        if to.ends_with("CURRENT") && self.armed.swap(false, Ordering::SeqCst) {
            self.fail_next_sync_dir.store(true, Ordering::SeqCst);
        }
        Ok(())
    }
    fn sync_dir(&self, dir: &Path) -> shale::Result<()> {
        if self.fail_next_sync_dir.swap(false, Ordering::SeqCst) {
            return Err(shale::Error::Io {
                path: dir.to_path_buf(),
                source: std::io::Error::other("injected directory sync failure"),
            });
        }
        self.inner.sync_dir(dir)
    }
    forward_fs!(
        new_sequential_file,
        new_random_access_file,
        new_writable_file,
        new_log_file,
        new_appendable_file,
        exists,
        children,
        remove_file,
        create_dir_all,
        remove_dir,
        file_size,
        lock
    );
}

fn setup() -> (Arc<FailingFs>, Options) {
    let fs = Arc::new(FailingFs {
        inner: MemFs::new(),
        armed: AtomicBool::new(false),
        fail_next_sync_dir: AtomicBool::new(false),
    });
    let options = Options {
        fs: fs.clone(),
        create_if_missing: true,
        ..Default::default()
    };
    (fs, options)
}

fn expect_open_failure(dir: &Path, options: &Options) {
    match Db::open(dir, options.clone()) {
        Ok(_) => panic!("the open succeeded despite the failed directory sync"),
        Err(e) => assert!(e.to_string().contains("injected"), "{e}"),
    }
}

#[test]
fn a_failed_sync_after_current_names_a_new_manifest_keeps_the_manifest() {
    let (fs, options) = setup();
    let dir = Path::new("/db");
    let sync = WriteOptions {
        sync: true,
        ..Default::default()
    };
    {
        let db = Db::open(dir, options.clone()).unwrap();
        for i in 0..100u32 {
            db.put_with(&sync, format!("k{i}").as_bytes(), b"first")
                .unwrap();
        }
    }
    // The reopen starts a new MANIFEST and points CURRENT at it.
    fs.armed.store(true, Ordering::SeqCst);
    expect_open_failure(dir, &options);
    assert!(!fs.armed.load(Ordering::SeqCst), "CURRENT was not renamed");

    let db = Db::open(dir, options.clone()).unwrap();
    for i in 0..100u32 {
        assert_eq!(
            db.get(format!("k{i}").as_bytes()).unwrap().as_deref(),
            Some(&b"first"[..]),
            "k{i}"
        );
    }
    db.put_with(&sync, b"after", b"1").unwrap();
    drop(db);
    let db = Db::open(dir, options).unwrap();
    assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"k99").unwrap().as_deref(), Some(&b"first"[..]));
}

#[test]
fn a_failed_sync_after_current_is_first_written_keeps_the_database() {
    let (fs, options) = setup();
    let dir = Path::new("/db");
    fs.armed.store(true, Ordering::SeqCst);
    expect_open_failure(dir, &options);
    let db = Db::open(dir, options).unwrap();
    db.put_with(
        &WriteOptions {
            sync: true,
            ..Default::default()
        },
        b"k",
        b"v",
    )
    .unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}
