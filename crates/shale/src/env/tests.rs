use std::path::Path;

use super::*;

fn exercise(fs: &dyn FileSystem, dir: &Path) {
    fs.create_dir_all(dir).unwrap();
    let a = dir.join("a");
    let b = dir.join("b");
    let mut w = fs.new_writable_file(&a).unwrap();
    w.append(b"hello ").unwrap();
    w.append(&vec![b'x'; 100_000]).unwrap();
    w.append(b"world").unwrap();
    w.sync().unwrap();
    w.close().unwrap();
    assert!(w.append(b"late").is_err(), "append after close fails");
    assert_eq!(fs.file_size(&a).unwrap(), 100_011);

    let r = fs.new_random_access_file(&a).unwrap();
    let mut buf = [0u8; 5];
    assert_eq!(r.read_at(100_006, &mut buf).unwrap(), 5);
    assert_eq!(&buf, b"world");
    assert_eq!(
        r.read_at(100_009, &mut buf).unwrap(),
        2,
        "short read at the end"
    );

    let mut s = fs.new_sequential_file(&a).unwrap();
    let mut head = [0u8; 6];
    assert_eq!(s.read(&mut head).unwrap(), 6);
    assert_eq!(&head, b"hello ");
    s.skip(100_000).unwrap();
    assert_eq!(s.read(&mut buf).unwrap(), 5);
    assert_eq!(s.read(&mut buf).unwrap(), 0);

    let mut ap = fs.new_appendable_file(&a).unwrap();
    ap.append(b"!").unwrap();
    ap.close().unwrap();
    assert_eq!(fs.file_size(&a).unwrap(), 100_012);

    fs.rename(&a, &b).unwrap();
    assert!(!fs.exists(&a));
    assert!(fs.exists(&b));
    let mut names = fs.children(dir).unwrap();
    names.sort();
    assert_eq!(names, vec!["b".to_string()]);
    assert_eq!(read_file(fs, &b).unwrap().len(), 100_012);

    let lock_path = dir.join("LOCK");
    let held = fs.lock(&lock_path).unwrap();
    assert!(fs.lock(&lock_path).is_err(), "second lock fails while held");
    drop(held);
    let again = fs.lock(&lock_path).unwrap();
    drop(again);

    fs.remove_file(&b).unwrap();
    fs.remove_file(&lock_path).unwrap();
    assert!(fs.remove_file(&b).is_err());
    fs.sync_dir(dir).unwrap();
    fs.remove_dir(dir).unwrap();
}

#[test]
fn posix_fs_behaves() {
    let tmp = tempfile::tempdir().unwrap();
    exercise(&PosixFs::new(), &tmp.path().join("db"));
}

#[test]
fn mem_fs_behaves() {
    exercise(&MemFs::new(), Path::new("/mem/db"));
}

/// Posix random-access files are mapped while the budget lasts: the mapping
/// holds the file's bytes, reads through it match, an empty file maps to an
/// empty slice, and a file stays readable after it is unlinked.
#[test]
#[cfg_attr(miri, ignore)]
fn posix_random_access_files_are_mapped() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = PosixFs::new();
    let path = tmp.path().join("t");
    let data: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut w = fs.new_writable_file(&path).unwrap();
    w.append(&data).unwrap();
    w.close().unwrap();

    let r = fs.new_random_access_file(&path).unwrap();
    assert_eq!(r.mapped(), Some(&data[..]));
    let mut buf = vec![0u8; 1000];
    assert_eq!(
        r.read_at(49_500, &mut buf).unwrap(),
        500,
        "short at the end"
    );
    assert_eq!(&buf[..500], &data[49_500..]);
    assert_eq!(r.read_at(60_000, &mut buf).unwrap(), 0, "past the end");

    fs.remove_file(&path).unwrap();
    assert_eq!(r.mapped().map(|m| m[12_345]), Some(data[12_345]));

    let empty = tmp.path().join("e");
    fs.new_writable_file(&empty).unwrap().close().unwrap();
    let r = fs.new_random_access_file(&empty).unwrap();
    assert_eq!(r.read_at(0, &mut buf).unwrap(), 0);
    assert!(r.mapped().is_none_or(|m| m.is_empty()));
}

/// Beyond the mapping budget files are read with pread, and they read the same.
#[test]
#[cfg_attr(miri, ignore)]
fn posix_falls_back_to_pread_beyond_the_mapping_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = PosixFs::new();
    let path = tmp.path().join("t");
    let mut w = fs.new_writable_file(&path).unwrap();
    w.append(b"0123456789").unwrap();
    w.close().unwrap();
    let mut open = Vec::new();
    let mut unmapped = None;
    for _ in 0..=posix::MAX_MAPPED_FILES {
        let r = fs.new_random_access_file(&path).unwrap();
        if r.mapped().is_none() {
            unmapped = Some(r);
            break;
        }
        open.push(r);
    }
    let r = unmapped.expect("the budget runs out");
    let mut buf = [0u8; 4];
    assert_eq!(r.read_at(8, &mut buf).unwrap(), 2);
    assert_eq!(&buf[..2], b"89");
    drop(open);
    assert!(
        fs.new_random_access_file(&path).unwrap().mapped().is_some(),
        "slots come back"
    );
}

/// A posix log file reserves space ahead of the data (zeros), shows every
/// append to readers at once, and is trimmed to its data on close, across
/// chunk boundaries and appends bigger than a chunk.
#[test]
#[cfg_attr(miri, ignore)]
fn posix_log_files_reserve_ahead_and_trim_on_close() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = PosixFs::new();
    let path = tmp.path().join("000001.log");
    let mut w = fs.new_log_file(&path).unwrap();
    let mut data = Vec::new();
    let mut piece = 1usize;
    while data.len() < 3 * posix::LOG_CHUNK {
        let chunk: Vec<u8> = (0..piece).map(|i| (i * 31 + data.len()) as u8).collect();
        w.append(&chunk).unwrap();
        w.flush().unwrap();
        data.extend_from_slice(&chunk);
        piece = (piece * 7 + 13) % 200_000;
    }
    let big = vec![0xabu8; posix::LOG_CHUNK + 12_345];
    w.append(&big).unwrap();
    data.extend_from_slice(&big);
    assert!(fs.file_size(&path).unwrap() >= data.len() as u64);
    let seen = read_file(&fs, &path).unwrap();
    assert_eq!(
        &seen[..data.len()],
        &data[..],
        "appends are visible before close"
    );
    assert!(
        seen[data.len()..].iter().all(|&b| b == 0),
        "the reserve is zeros"
    );
    w.sync().unwrap();
    w.close().unwrap();
    assert_eq!(
        read_file(&fs, &path).unwrap(),
        data,
        "close trims the reserve"
    );
}

/// A log whose writer died without closing it (a crashed process) ends in
/// zeros, and the log reader returns every record and reports nothing.
#[test]
#[cfg_attr(miri, ignore)]
fn a_crashed_posix_log_reads_back_whole() {
    use std::sync::{Arc, Mutex};

    let tmp = tempfile::tempdir().unwrap();
    let fs = PosixFs::new();
    let path = tmp.path().join("000007.log");
    let records: Vec<Vec<u8>> = (0..3000u32)
        .map(|i| vec![(i % 251) as u8; (i as usize * 37) % 900 + 1])
        .collect();
    let mut w = crate::log::Writer::new(fs.new_log_file(&path).unwrap());
    for r in &records {
        w.add_record(r).unwrap();
    }
    let written = w.file_len();
    // The process "dies": nothing is closed or trimmed.
    std::mem::forget(w);
    assert!(
        fs.file_size(&path).unwrap() > written,
        "a zero tail remains"
    );

    let dropped = Arc::new(Mutex::new(0u64));
    let counter = dropped.clone();
    let reporter: crate::log::reader::Reporter =
        Box::new(move |bytes: u64, _: &crate::Error| *counter.lock().unwrap() += bytes);
    let mut reader = crate::log::reader::Reader::new(
        fs.new_sequential_file(&path).unwrap(),
        path.clone(),
        Some(reporter),
        true,
        0,
    );
    let mut scratch = Vec::new();
    let mut got = Vec::new();
    while let Some(r) = reader.read_record(&mut scratch).unwrap() {
        got.push(r.to_vec());
    }
    assert_eq!(got, records);
    assert_eq!(
        *dropped.lock().unwrap(),
        0,
        "padding is not reported as damage"
    );
}

/// Appends of every size, small ones buffered and large ones written
/// straight through with what is buffered before them, land in order.
#[test]
#[cfg_attr(miri, ignore)]
fn posix_writes_mixed_small_and_large_appends_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = PosixFs::new();
    let path = tmp.path().join("mixed");
    let mut w = fs.new_writable_file(&path).unwrap();
    let mut expected = Vec::new();
    let sizes = [
        5,
        posix::DIRECT_APPEND_MIN,
        5,
        50_000,
        3,
        60_000,
        70_000,
        1,
        posix::DIRECT_APPEND_MIN - 1,
        200_000,
        40_000,
        40_000,
    ];
    for (i, &n) in sizes.iter().enumerate() {
        let chunk: Vec<u8> = (0..n).map(|j| (i * 31 + j % 251) as u8).collect();
        w.append(&chunk).unwrap();
        expected.extend_from_slice(&chunk);
    }
    w.close().unwrap();
    assert_eq!(read_file(&fs, &path).unwrap(), expected);
}

/// A posix blob file keeps its size at the data while it reserves space
/// ahead (write-back started on the write-back thread, appends visible at
/// once after a flush), and close releases the reserve: the file holds no
/// more blocks than its data needs.
#[test]
#[cfg_attr(miri, ignore)]
fn posix_blob_files_reserve_ahead_without_growing_and_release_on_close() {
    use std::os::unix::fs::MetadataExt;

    let tmp = tempfile::tempdir().unwrap();
    let fs = PosixFs::new();
    let path = tmp.path().join("000009.blob");
    let mut w = fs.new_blob_file(&path).unwrap();
    let mut data = Vec::new();
    // Past a few write-back intervals, in appends of every kind.
    let mut i = 0usize;
    while data.len() < 3 << 20 {
        let n = [7, 100_000, posix::DIRECT_APPEND_MIN, 33, 250_000][i % 5];
        let chunk: Vec<u8> = (0..n).map(|j| (i * 7 + j % 253) as u8).collect();
        w.append(&chunk).unwrap();
        data.extend_from_slice(&chunk);
        i += 1;
    }
    w.flush().unwrap();
    assert_eq!(
        fs.file_size(&path).unwrap(),
        data.len() as u64,
        "the reserve does not change the size"
    );
    assert_eq!(
        read_file(&fs, &path).unwrap(),
        data,
        "flushed appends are visible"
    );
    w.sync().unwrap();
    w.close().unwrap();
    assert_eq!(read_file(&fs, &path).unwrap(), data);
    let allocated = std::fs::metadata(&path).unwrap().blocks() * 512;
    let needed = (data.len() as u64).div_ceil(1 << 16) << 16;
    assert!(
        allocated <= needed,
        "{allocated} bytes allocated for {} bytes of data: the reserve was not released",
        data.len()
    );
}
