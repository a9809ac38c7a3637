//! Every acknowledged write, synchronous or not, survives the crash of the
//! process that made it: the test runs itself as a child process that
//! writes and then aborts without closing anything, and reopens the database.

use std::path::Path;
use std::process::Command;

use shale::{Db, Options, WriteBatch, WriteOptions};

const CHILD_ENV: &str = "SHALE_CRASH_CHILD_DIR";
const KEYS: u32 = 30_000;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i}-")
        .repeat(1 + (i % 7) as usize)
        .into_bytes()
}

fn options() -> Options {
    Options {
        create_if_missing: true,
        // Small, so that the child switches memtables and logs many times.
        write_buffer_size: 256 << 10,
        ..Default::default()
    }
}

/// The child: writes every key (mostly single asynchronous puts, some
/// batches, a few synchronous writes, deletions of every tenth key), then
/// dies on the spot.
fn child(dir: &Path) -> ! {
    let db = Db::open(dir, options()).expect("child open");
    let mut i = 0;
    while i < KEYS {
        if i % 1000 == 500 {
            let mut batch = WriteBatch::new();
            for j in i..i + 100 {
                batch.put(&key(j), &value(j)).unwrap();
            }
            db.write(&WriteOptions::default(), &batch).unwrap();
            i += 100;
        } else {
            let sync = i % 5000 == 0;
            db.put_with(
                &WriteOptions {
                    sync,
                    ..Default::default()
                },
                &key(i),
                &value(i),
            )
            .unwrap();
            i += 1;
        }
    }
    for i in (0..KEYS).step_by(10) {
        db.delete(&key(i)).unwrap();
    }
    std::process::abort();
}

#[test]
fn acknowledged_writes_survive_a_process_crash() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        child(Path::new(&dir));
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "acknowledged_writes_survive_a_process_crash",
            "--nocapture",
        ])
        .env(CHILD_ENV, &dir)
        .status()
        .unwrap();
    assert!(!status.success(), "the child was meant to abort");

    for round in 0..2 {
        let db = Db::open(&dir, options()).unwrap();
        for i in 0..KEYS {
            let expected = (i % 10 != 0).then(|| value(i));
            assert_eq!(
                db.get(&key(i)).unwrap(),
                expected,
                "key {i}, reopen {round}"
            );
        }
        let mut it = db.cursor(&Default::default());
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        it.status().unwrap();
        assert_eq!(n, KEYS - KEYS / 10);
    }
}
