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
