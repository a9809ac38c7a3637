//! The semantics of the test file system `FaultFs` (tests/common/fault_fs.rs)
//! and of the history prefix check (tests/common/history.rs) that the crash
//! and fault tests rely on.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::fault_fs::{os_error, Cut, Fault, FaultFs, Image, Op, EIO, ENOSPC};
use common::history::{check_prefix, consistent_prefixes, model_after, Contents, Update};
use shale::env::{read_file, FileSystem, WritableFile};
use shale::{Db, Options, WriteOptions};

fn dir() -> PathBuf {
    PathBuf::from("/db")
}

fn path(name: &str) -> PathBuf {
    dir().join(name)
}

/// A file system with the directory `/db`.
fn fs() -> FaultFs {
    let fs = FaultFs::new();
    fs.create_dir_all(&dir()).unwrap();
    fs
}

fn write(fs: &FaultFs, name: &str, data: &[u8], sync: bool) -> Box<dyn WritableFile> {
    let mut f = fs.new_writable_file(&path(name)).unwrap();
    f.append(data).unwrap();
    if sync {
        f.sync().unwrap();
    }
    f
}

fn file<'a>(image: &'a Image, name: &str) -> Option<&'a [u8]> {
    image.files.get(&path(name)).map(|v| v.as_slice())
}

#[test]
fn a_file_is_durable_up_to_its_last_sync() {
    let fs = fs();
    let mut f = write(&fs, "a", b"abc", true);
    fs.sync_dir(&dir()).unwrap();
    f.append(b"def").unwrap();
    f.flush().unwrap();
    assert_eq!(
        read_file(&fs, &path("a")).unwrap(),
        b"abcdef",
        "readers see everything"
    );
    let image = fs.power_cut(Cut::DropUnsynced, 0);
    assert_eq!(file(&image, "a"), Some(&b"abc"[..]));
    // A booted image is durable as a whole.
    let booted = FaultFs::from_image(&image);
    assert_eq!(booted.power_cut(Cut::DropUnsynced, 0), image);
}

#[test]
fn a_synced_file_without_a_synced_directory_entry_is_lost() {
    let fs = fs();
    write(&fs, "old", b"x", true);
    fs.sync_dir(&dir()).unwrap();
    write(&fs, "new", b"synced data", true);
    let image = fs.power_cut(Cut::DropUnsynced, 0);
    assert_eq!(file(&image, "old"), Some(&b"x"[..]));
    assert_eq!(file(&image, "new"), None);
    // A file whose entry is synced but whose data is not comes back empty.
    let fs = self::fs();
    write(&fs, "empty", b"unsynced", false);
    fs.sync_dir(&dir()).unwrap();
    assert_eq!(
        file(&fs.power_cut(Cut::DropUnsynced, 0), "empty"),
        Some(&b""[..])
    );
}

#[test]
fn renames_and_removals_are_undone_without_a_directory_sync() {
    let fs = fs();
    write(&fs, "CURRENT", b"one", true);
    write(&fs, "doomed", b"d", true);
    fs.sync_dir(&dir()).unwrap();
    write(&fs, "tmp", b"two", true);
    fs.rename(&path("tmp"), &path("CURRENT")).unwrap();
    fs.remove_file(&path("doomed")).unwrap();
    assert_eq!(read_file(&fs, &path("CURRENT")).unwrap(), b"two");
    assert!(!fs.exists(&path("doomed")));
    let before = fs.power_cut(Cut::DropUnsynced, 0);
    assert_eq!(file(&before, "CURRENT"), Some(&b"one"[..]));
    assert_eq!(file(&before, "tmp"), None);
    assert_eq!(file(&before, "doomed"), Some(&b"d"[..]));

    let fs = FaultFs::from_image(&before);
    write(&fs, "tmp", b"two", true);
    fs.rename(&path("tmp"), &path("CURRENT")).unwrap();
    fs.remove_file(&path("doomed")).unwrap();
    fs.sync_dir(&dir()).unwrap();
    let after = fs.power_cut(Cut::DropUnsynced, 0);
    let names: Vec<&Path> = after.files.keys().map(|p| p.as_path()).collect();
    assert_eq!(names, [path("CURRENT")]);
    assert_eq!(file(&after, "CURRENT"), Some(&b"two"[..]));
}

#[test]
fn a_directory_sync_covers_only_its_directory() {
    let fs = fs();
    fs.create_dir_all(&dir().join("sub")).unwrap();
    write(&fs, "a", b"a", true);
    write(&fs, "sub/b", b"b", true);
    fs.sync_dir(&dir()).unwrap();
    let image = fs.power_cut(Cut::DropUnsynced, 0);
    assert!(file(&image, "a").is_some());
    assert!(file(&image, "sub/b").is_none());
    assert!(
        image.dirs.contains(&dir().join("sub")),
        "directories are durable"
    );
}

#[test]
fn synchronous_directories_make_directory_changes_durable_at_once() {
    let fs = fs();
    fs.set_synchronous_directories(true);
    write(&fs, "a", b"a", true);
    write(&fs, "b", b"b", false);
    write(&fs, "c", b"c", true);
    fs.rename(&path("c"), &path("d")).unwrap();
    let image = fs.power_cut(Cut::DropUnsynced, 0);
    let names: Vec<&Path> = image.files.keys().map(|p| p.as_path()).collect();
    assert_eq!(names, [path("a"), path("b"), path("d")]);
    assert_eq!(
        file(&image, "b"),
        Some(&b""[..]),
        "file data still needs a sync"
    );
}

#[test]
fn an_unsynced_truncation_is_undone() {
    let fs = fs();
    write(&fs, "LOG", b"long synced text", true);
    fs.sync_dir(&dir()).unwrap();
    write(&fs, "LOG", b"new", false);
    assert_eq!(
        file(&fs.power_cut(Cut::DropUnsynced, 0), "LOG"),
        Some(&b"long synced text"[..])
    );
}

#[test]
fn a_torn_write_keeps_part_of_the_last_append() {
    let mut lengths = std::collections::BTreeSet::new();
    for seed in 0..50 {
        let fs = fs();
        let mut f = write(&fs, "log", b"synced|", true);
        fs.sync_dir(&dir()).unwrap();
        f.append(b"earlier|").unwrap();
        f.append(b"the last append").unwrap();
        let image = fs.power_cut(Cut::TornTail, seed);
        let kept = file(&image, "log").unwrap();
        assert!(b"synced|earlier|the last append".starts_with(kept));
        assert!(
            kept.len() >= b"synced|earlier|".len(),
            "earlier appends are kept"
        );
        assert!(
            kept.len() < b"synced|earlier|the last append".len(),
            "the last is torn"
        );
        lengths.insert(kept.len());
    }
    assert!(
        lengths.len() > 5,
        "the tear is at random points: {lengths:?}"
    );
}

#[test]
fn keep_some_keeps_a_prefix_of_unsynced_changes_in_order() {
    let mut outcomes = std::collections::BTreeSet::new();
    for seed in 0..100 {
        let fs = fs();
        for name in ["a", "b", "c"] {
            write(&fs, name, b"0123456789", false);
        }
        let image = fs.power_cut(Cut::KeepSome, seed);
        let present: Vec<bool> = ["a", "b", "c"]
            .iter()
            .map(|n| file(&image, n).is_some())
            .collect();
        // Directory changes survive in the order they were made.
        assert!(present.windows(2).all(|w| w[0] || !w[1]), "{present:?}");
        for n in ["a", "b", "c"] {
            if let Some(data) = file(&image, n) {
                assert!(b"0123456789".starts_with(data));
                outcomes.insert((n, data.len()));
            }
        }
    }
    assert!(outcomes.len() > 10, "{outcomes:?}");
}

#[test]
fn faults_fire_by_kind_path_and_count_once_or_persistently() {
    let fs = fs();
    fs.inject(Fault::new(EIO).on(Op::Sync).on_path(".log").skip(1));
    let mut table = write(&fs, "1.ldb", b"t", true);
    let mut log = write(&fs, "2.log", b"l", true);
    let err = log.sync().unwrap_err();
    assert_eq!(os_error(&err), Some(EIO));
    assert!(err.to_string().contains("2.log"), "{err}");
    log.sync().unwrap();
    table.sync().unwrap();

    fs.inject(
        Fault::new(ENOSPC)
            .on(Op::Append)
            .except_path(".log")
            .persistent(),
    );
    log.append(b"l").unwrap();
    for _ in 0..3 {
        assert_eq!(os_error(&table.append(b"x").unwrap_err()), Some(ENOSPC));
    }
    fs.clear_faults();
    table.append(b"x").unwrap();

    let injected = fs.injected();
    assert_eq!(injected.len(), 4);
    assert_eq!((injected[0].op, injected[0].errno), (Op::Sync, EIO));
    assert_eq!(injected[0].path, path("2.log"));
    assert!(injected[1..]
        .iter()
        .all(|i| i.op == Op::Append && i.path == path("1.ldb")));
}

#[test]
fn faults_on_every_kind_of_operation() {
    let fs = fs();
    let mut f = write(&fs, "f", b"data", true);
    type Call = Box<dyn FnMut(&FaultFs) -> shale::Result<()>>;
    let mut calls: Vec<(Op, Call)> = vec![
        (
            Op::Create,
            Box::new(|fs| fs.new_writable_file(&path("g")).map(drop)),
        ),
        (
            Op::Open,
            Box::new(|fs| fs.new_random_access_file(&path("f")).map(drop)),
        ),
        (Op::Read, Box::new(|fs| read_file(fs, &path("f")).map(drop))),
        (Op::Append, Box::new(move |_| f.append(b"x"))),
        (Op::Rename, Box::new(|fs| fs.rename(&path("f"), &path("h")))),
        (Op::Remove, Box::new(|fs| fs.remove_file(&path("h")))),
        (Op::List, Box::new(|fs| fs.children(&dir()).map(drop))),
        (Op::Size, Box::new(|fs| fs.file_size(&path("g")).map(drop))),
        (Op::Lock, Box::new(|fs| fs.lock(&path("LOCK")).map(drop))),
        (Op::SyncDir, Box::new(|fs| fs.sync_dir(&dir()))),
        (
            Op::CreateDir,
            Box::new(|fs| fs.create_dir_all(&dir().join("d"))),
        ),
    ];
    for (op, call) in &mut calls {
        fs.inject(Fault::new(ENOSPC).on(*op));
        let err = call(&fs).expect_err(&format!("{op:?} was to fail"));
        assert_eq!(os_error(&err), Some(ENOSPC), "{op:?}: {err}");
        call(&fs).unwrap_or_else(|e| panic!("{op:?} once only: {e}"));
    }
    let mut g = fs.new_writable_file(&path("g")).unwrap();
    for op in [Op::Flush, Op::Sync, Op::Close] {
        fs.inject(Fault::new(EIO).on(op));
        let result = match op {
            Op::Flush => g.flush(),
            Op::Sync => g.sync(),
            _ => g.close(),
        };
        assert_eq!(os_error(&result.unwrap_err()), Some(EIO), "{op:?}");
    }
}

#[test]
fn a_partial_append_writes_half_before_failing() {
    let fs = fs();
    fs.inject(Fault::new(ENOSPC).on(Op::Append).partial());
    let mut f = fs.new_writable_file(&path("f")).unwrap();
    assert!(f.append(b"12345678").is_err());
    assert_eq!(read_file(&fs, &path("f")).unwrap(), b"1234");
}

#[test]
fn captured_images_equal_power_cuts_at_the_same_operation() {
    // The same sequence of operations, imaged before operation 5 without
    // stopping, and cut there.
    let ops = |fs: &FaultFs| -> shale::Result<()> {
        let mut f = fs.new_writable_file(&path("f"))?; // 2
        f.append(b"one")?; // 3
        f.sync()?; // 4
        fs.sync_dir(&dir())?; // 5
        f.append(b"two")?; // 6
        f.sync()
    };
    let captured = fs();
    captured.capture_at([(5, (Cut::DropUnsynced, 0)), (7, (Cut::DropUnsynced, 0))].into());
    ops(&captured).unwrap();
    let images = captured.captured();
    assert_eq!(images.iter().map(|c| c.index).collect::<Vec<_>>(), [5, 7]);
    assert!(
        images[0].trace.ends_with("#5 SyncDir /db"),
        "{}",
        images[0].trace
    );
    let cut = fs();
    cut.cut_at(5);
    assert!(ops(&cut).is_err());
    assert_eq!(images[0].image, cut.power_cut(Cut::DropUnsynced, 0));
    assert!(
        images[0].image.files.is_empty(),
        "the entry was not synced yet"
    );
    assert_eq!(file(&images[1].image, "f"), Some(&b"one"[..]));
}

#[test]
fn the_cut_fails_operation_k_and_every_later_one() {
    let fs = fs();
    let start = fs.op_count();
    fs.cut_at(start + 3);
    let mut f = fs.new_writable_file(&path("f")).unwrap(); // start + 1
    f.append(b"a").unwrap(); // start + 2
    assert!(!fs.is_cut());
    assert!(f.sync().is_err()); // start + 3
    assert!(fs.is_cut());
    assert!(f.append(b"b").is_err());
    assert!(fs.children(&dir()).is_err());
    assert_eq!(fs.op_count(), start + 5);
    assert!(fs
        .recent_ops()
        .contains(&format!("#{} Sync /db/f", start + 3)));
    let counts = fs.op_counts();
    assert_eq!(
        (counts[&Op::Create], counts[&Op::Append], counts[&Op::Sync]),
        (1, 2, 1)
    );
}

#[test]
fn locks_are_exclusive_and_released_on_drop() {
    let fs = fs();
    let lock = fs.lock(&path("LOCK")).unwrap();
    assert!(fs.lock(&path("LOCK")).is_err());
    drop(lock);
    fs.lock(&path("LOCK")).unwrap();
    let err = fs.lock(Path::new("/missing/LOCK")).err().unwrap();
    assert!(
        matches!(&err, shale::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    );
}

#[test]
fn a_database_runs_on_it_and_keeps_synced_writes_across_a_power_cut() {
    let fs = fs();
    let options = |fs: FaultFs| Options {
        create_if_missing: true,
        fs: Arc::new(fs),
        ..Default::default()
    };
    let db = Db::open(dir(), options(fs.clone())).unwrap();
    db.put_with(
        &WriteOptions {
            sync: true,
            ..Default::default()
        },
        b"synced",
        b"1",
    )
    .unwrap();
    db.put(b"unsynced", b"2").unwrap();
    let image = fs.power_cut(Cut::DropUnsynced, 0);
    drop(db);
    let db = Db::open(dir(), options(FaultFs::from_image(&image))).unwrap();
    assert_eq!(db.get(b"synced").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"unsynced").unwrap(), None);
}

fn put(k: &str, v: &str) -> Update {
    Update {
        key: k.as_bytes().to_vec(),
        value: Some(v.as_bytes().to_vec()),
    }
}

fn del(k: &str) -> Update {
    Update {
        key: k.as_bytes().to_vec(),
        value: None,
    }
}

#[test]
fn the_prefix_check_finds_every_consistent_prefix_and_nothing_else() {
    let writes = vec![
        vec![put("a", "1")],
        vec![put("b", "1"), put("c", "1")],
        vec![del("a")],
        vec![put("a", "1")],
    ];
    let none = Contents::new();
    let at = |p: usize| model_after(&none, &writes[..p]);
    assert_eq!(consistent_prefixes(&none, &writes, &at(0)).0, [0]);
    assert_eq!(consistent_prefixes(&none, &writes, &at(2)).0, [2, 4]);
    assert_eq!(check_prefix(&none, &writes, 3, &at(2)), Ok(4));
    assert_eq!(check_prefix(&none, &writes, 3, &at(3)), Ok(3));
    assert!(
        check_prefix(&none, &writes, 4, &at(3)).is_err(),
        "a required write is missing"
    );
    let err = check_prefix(&none, &writes, 4, &at(3)).unwrap_err();
    assert!(
        err.contains("holds the first 3 of the 4 writes, but the first 4 must be"),
        "{err}"
    );
    // Half a batch is no prefix.
    let half: Contents = [
        (b"a".to_vec(), b"1".to_vec()),
        (b"b".to_vec(), b"1".to_vec()),
    ]
    .into();
    let err = check_prefix(&none, &writes, 0, &half).unwrap_err();
    assert!(
        err.contains("c: expected \"1\" (1 bytes), found nothing"),
        "{err}"
    );
    // Nor is a later write without an earlier one.
    let later: Contents = [
        (b"a".to_vec(), b"1".to_vec()),
        (b"z".to_vec(), b"9".to_vec()),
    ]
    .into();
    assert!(check_prefix(&none, &writes, 0, &later).is_err());
    // A base the writes start from.
    let base: Contents = [(b"c".to_vec(), b"0".to_vec())].into();
    assert_eq!(consistent_prefixes(&base, &writes[2..], &base).0, [0, 1]);
}
