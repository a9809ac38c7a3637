//! Keys, values and batches from empty to large, updates over the size
//! limits, and files whose length fields claim gigabytes.
//!
//! * Sizes: keys of 0 bytes to 1 MiB and values of 0 bytes to 64 MiB are
//!   stored, read back, scanned both ways, survive a reopen (log replay)
//!   and a full compaction.
//! * Limits: a key longer than `MAX_KEY_LEN` or a value longer than
//!   `MAX_VALUE_LEN` (4 GiB; the test's buffers are zero pages the kernel
//!   maps lazily, so they cost no memory) is refused with
//!   `Error::InvalidArgument` by `WriteBatch::put` and `Db::put`; the
//!   database keeps working and reopens with its data.
//! * Length claims: a log record holding a batch whose count and key length
//!   claim ~4 GiB, a table whose index handle and block restart count
//!   claim ~4 GiB, and a MANIFEST record whose string length claims ~4 GiB
//!   each give `Error::Corruption` naming the file (or, for the log with
//!   `paranoid_checks` off, skip the record and keep the rest), without
//!   allocating what they claim: `length_claims_within_an_address_space_limit`
//!   reruns those checks in a child process whose address space is limited
//!   to its size at start plus 1 GiB.

mod support;

use std::path::Path;

use shale::{CompressionType, Db, Error, Options, ReadOptions, WriteBatch};
use support::{
    append_log_record, block_contents, contents, contents_reverse, files_named, footer, masked_crc,
    put_varint, TableLayout,
};

/// The longest key a batch takes (a 32-bit length holding the key and its
/// 8-byte sequence trailer), as `WriteBatch::put` documents.
const MAX_KEY_LEN: usize = u32::MAX as usize - 8;
/// The longest value a batch takes (a 32-bit length).
const MAX_VALUE_LEN: usize = u32::MAX as usize;

fn options() -> Options {
    Options {
        create_if_missing: true,
        compression: CompressionType::None,
        ..Default::default()
    }
}

/// A key or value of `len` bytes, distinct for each `(len, seed)`.
fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| seed.wrapping_add((i % 251) as u8))
        .collect()
}

/// Checks every entry of `model` by get and by scans in both directions.
fn check(db: &Db, model: &std::collections::BTreeMap<Vec<u8>, Vec<u8>>, when: &str) {
    for (k, v) in model {
        let got = db.get(k).unwrap();
        assert!(
            got.as_deref() == Some(v.as_slice()),
            "{when}: key of {} bytes: got {:?} bytes, expected {}",
            k.len(),
            got.map(|g| g.len()),
            v.len()
        );
    }
    let expected: Vec<(Vec<u8>, Vec<u8>)> =
        model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let forward = contents(db, &ReadOptions::default()).unwrap();
    assert!(forward == expected, "{when}: forward scan differs");
    let mut backward = contents_reverse(db, &ReadOptions::default()).unwrap();
    backward.reverse();
    assert!(backward == expected, "{when}: backward scan differs");
}

#[test]
fn keys_and_values_from_empty_to_large() {
    let dir = support::scratch_dir();
    let sizes = [0usize, 1, 127, 128, 16 << 10, 1 << 20];
    let mut model = std::collections::BTreeMap::new();
    // Every key size with a small and a large value; every value size with
    // a small key; and one 64 MiB value.
    for (i, &k) in sizes.iter().enumerate() {
        model.insert(bytes(k, 1), bytes(100 + i, 2));
        model.insert(bytes(k, 3), bytes(1 << 20, 4 + i as u8));
        model.insert(bytes(k + 1, 5 + i as u8), bytes(sizes[i], 6));
    }
    model.insert(b"huge".to_vec(), bytes(64 << 20, 7));
    {
        let db = Db::open(dir.path(), options()).unwrap();
        for (k, v) in &model {
            db.put(k, v).unwrap();
        }
        check(&db, &model, "after writing");
    }
    let db = Db::open(dir.path(), options()).unwrap();
    check(&db, &model, "after reopening");
    db.compact_range(None, None).unwrap();
    check(&db, &model, "after compaction");
    // Overwrite the huge value with an empty one, then delete the empty key.
    db.put(b"huge", b"").unwrap();
    model.insert(b"huge".to_vec(), Vec::new());
    db.delete(b"").unwrap();
    model.remove(&b""[..]);
    db.compact_range(None, None).unwrap();
    check(&db, &model, "after overwriting and compacting");
}

#[test]
fn batches_near_and_over_the_limits() {
    let dir = support::scratch_dir();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = std::collections::BTreeMap::new();

    // Many tiny updates in one batch, and one batch of large ones.
    let mut many = WriteBatch::new();
    for i in 0..20_000u32 {
        let k = format!("t{i:06}").into_bytes();
        many.put(&k, &i.to_le_bytes()).unwrap();
        model.insert(k, i.to_le_bytes().to_vec());
    }
    db.write(&Default::default(), &many).unwrap();
    let mut large = WriteBatch::new();
    for (k, v) in [
        (bytes(1 << 20, 9), bytes(8 << 20, 10)),
        (b"L".to_vec(), bytes(16 << 20, 11)),
    ] {
        large.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.write(&Default::default(), &large).unwrap();

    // Over the limits: refused before anything is written. The buffers are
    // zero pages mapped on first touch, so they cost address space only.
    let too_long = vec![0u8; MAX_VALUE_LEN + 1];
    let mut b = WriteBatch::new();
    b.put(b"ok", b"1").unwrap();
    let before = b.approximate_size();
    let refused = |r: shale::Result<()>, what: &str| match r {
        Err(Error::InvalidArgument(_)) => {}
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    };
    refused(b.put(b"k", &too_long), "batch put of a 4 GiB + 1 value");
    refused(
        b.put(&too_long[..MAX_KEY_LEN + 1], b"v"),
        "batch put of an over-long key",
    );
    refused(
        b.delete(&too_long[..MAX_KEY_LEN + 1]),
        "batch delete of an over-long key",
    );
    assert_eq!(
        b.approximate_size(),
        before,
        "a refused update changed the batch"
    );
    assert_eq!(b.count(), 1);
    refused(db.put(b"k", &too_long), "Db::put of a 4 GiB + 1 value");
    refused(
        db.put(&too_long[..MAX_KEY_LEN + 1], b""),
        "Db::put of an over-long key",
    );
    refused(
        db.delete(&too_long[..MAX_KEY_LEN + 1]),
        "Db::delete of an over-long key",
    );
    drop(too_long);

    // The database still works, and reopens with everything.
    db.write(&Default::default(), &b).unwrap();
    model.insert(b"ok".to_vec(), b"1".to_vec());
    check(&db, &model, "after refused updates");
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    check(&db, &model, "after reopening");
}

// ---------------------------------------------------------------------------
// Length fields on disk that claim gigabytes.

/// A write batch record (sequence, count, then one put) in the log
/// payload format, with the key length and count as given.
fn batch_record(
    sequence: u64,
    count: u32,
    key_len_claim: u64,
    key: &[u8],
    value: &[u8],
) -> Vec<u8> {
    let mut r = Vec::new();
    r.extend_from_slice(&sequence.to_le_bytes());
    r.extend_from_slice(&count.to_le_bytes());
    r.push(1); // a put
    put_varint(&mut r, key_len_claim);
    r.extend_from_slice(key);
    put_varint(&mut r, value.len() as u64);
    r.extend_from_slice(value);
    r
}

fn expect_corruption_in(r: shale::Result<impl std::fmt::Debug>, file: &str, what: &str) {
    match r {
        Err(Error::Corruption { file: f, .. }) if f.ends_with(file) => {}
        other => panic!("{what}: expected a corruption of {file}, got {other:?}"),
    }
}

/// A log whose second record claims ~4 GiB (a key length of 0xffff_fff0
/// and a count of u32::MAX): skipped with `paranoid_checks` off (the
/// records around it are kept), refused with them on.
fn log_record_claiming_gigabytes(dir: &Path) {
    drop(Db::open(dir, options()).unwrap());
    let log = files_named(dir, ".log").pop().expect("a log");
    let mut data = Vec::new();
    append_log_record(&mut data, &batch_record(1, 1, 1, b"a", b"first"));
    append_log_record(
        &mut data,
        &batch_record(2, u32::MAX, 0xffff_fff0, b"b", b"claims"),
    );
    append_log_record(&mut data, &batch_record(3, 1, 1, b"c", b"third"));
    std::fs::write(dir.join(&log), &data).unwrap();
    let saved = std::fs::read(dir.join(&log)).unwrap();

    let paranoid = Options {
        paranoid_checks: true,
        ..options()
    };
    expect_corruption_in(
        Db::open(dir, paranoid).map(|_| ()),
        &log,
        "paranoid open of the log",
    );
    std::fs::write(dir.join(&log), &saved).unwrap();
    let db = Db::open(dir, options()).unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"first"[..]));
    assert_eq!(db.get(b"b").unwrap(), None);
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"third"[..]));
}

/// A table whose footer's index handle claims a 4 GiB block, and one whose
/// data block (checksum recomputed) claims 4 Gi restart points.
fn table_claiming_gigabytes(dir: &Path) {
    {
        let db = Db::open(dir, options()).unwrap();
        for i in 0..200u32 {
            db.put(format!("k{i:04}").as_bytes(), &[b'v'; 50]).unwrap();
        }
        db.compact_range(None, None).unwrap();
    }
    let table = files_named(dir, ".ldb").pop().expect("a table");
    let path = dir.join(&table);
    let pristine = std::fs::read(&path).unwrap();
    let t = TableLayout::decode(&pristine);
    let read_all = |what: &str| {
        let r = Db::open(dir, options()).and_then(|db| {
            let verify = ReadOptions {
                verify_checksums: true,
                ..Default::default()
            };
            db.get_with(&verify, b"k0000")?;
            contents(&db, &verify).map(|_| ())
        });
        expect_corruption_in(r, &table, what);
    };

    // The index handle, re-encoded with a size of ~4 GiB.
    let mut data = pristine.clone();
    let f = footer(&data);
    let mut handles = Vec::new();
    f.metaindex.encode(&mut handles);
    support::Handle {
        offset: f.index.offset,
        size: 0xffff_fff0,
    }
    .encode(&mut handles);
    let at = data.len() - support::FOOTER_LEN;
    data[at..at + 40].fill(0);
    data[at..at + handles.len()].copy_from_slice(&handles);
    std::fs::write(&path, &data).unwrap();
    read_all("an index handle claiming 4 GiB");

    // The first data block's restart count set to u32::MAX, checksum fixed.
    let mut data = pristine.clone();
    let h = t.data[0].0;
    assert_eq!(data[(h.offset + h.size) as usize], 0, "uncompressed block");
    let (start, end) = (h.offset as usize, (h.offset + h.size) as usize);
    data[end - 4..end].copy_from_slice(&u32::MAX.to_le_bytes());
    let crc = masked_crc(&[&data[start..end], &[0]]);
    data[end + 1..end + 5].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(block_contents(&data, h).len(), h.size as usize);
    std::fs::write(&path, &data).unwrap();
    read_all("a data block claiming 4 Gi restart points");
}

/// A MANIFEST whose only record's comparator name claims ~4 GiB.
fn manifest_claiming_gigabytes(dir: &Path) {
    drop(Db::open(dir, options()).unwrap());
    let name = "MANIFEST-000100";
    let mut edit = Vec::new();
    put_varint(&mut edit, 1); // the comparator tag
    put_varint(&mut edit, 0xffff_fff0);
    edit.extend_from_slice(b"leveldb.BytewiseComparator");
    let mut data = Vec::new();
    append_log_record(&mut data, &edit);
    std::fs::write(dir.join(name), &data).unwrap();
    std::fs::write(dir.join("CURRENT"), format!("{name}\n")).unwrap();
    expect_corruption_in(
        Db::open(dir, options()).map(|_| ()),
        name,
        "a MANIFEST string claiming 4 GiB",
    );
}

#[test]
fn length_claims_of_gigabytes_on_disk() {
    if std::env::var_os("SHALE_LIMIT_ADDRESS_SPACE").is_some() {
        limit_address_space(1 << 30);
    }
    for (name, case) in [
        ("log", log_record_claiming_gigabytes as fn(&Path)),
        ("table", table_claiming_gigabytes),
        ("manifest", manifest_claiming_gigabytes),
    ] {
        let dir = support::scratch_dir();
        support::run_guarded(name, std::time::Duration::from_secs(300), || {
            case(dir.path())
        });
    }
}

/// Limits this process's address space to its current size plus `extra`
/// bytes: an allocation of what a length field claims then fails (and
/// aborts the process) instead of succeeding lazily.
fn limit_address_space(extra: u64) {
    let limit = support::virtual_size() + extra;
    let rl = libc::rlimit {
        rlim_cur: limit as libc::rlim_t,
        rlim_max: limit as libc::rlim_t,
    };
    // SAFETY: setrlimit reads the struct passed by reference.
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_AS, &rl) };
    assert_eq!(rc, 0, "setrlimit(RLIMIT_AS) failed");
}

#[test]
fn length_claims_within_an_address_space_limit() {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "length_claims_of_gigabytes_on_disk",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SHALE_LIMIT_ADDRESS_SPACE", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the length-claim cases failed with the address space limited to its size + 1 GiB \
         ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "the child ran no test: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}
