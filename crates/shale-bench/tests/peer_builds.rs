//! How db_bench chooses the peer library it links (build.rs, through
//! `build_peers.rs`): a release build of `scripts/build-peers.sh` under
//! `$SHALE_PEERS_DIR` when there is one, else the system's library; and how
//! its header says which. Runs on fake directories: no release build needs
//! to exist.

#[path = "../build_peers.rs"]
#[allow(dead_code)]
mod peers;

use std::fs;
use std::path::Path;

use shale_bench::engine::EngineKind;
use shale_bench::runner::{assertions_wording, library_line};

/// Lays out what scripts/build-peers.sh leaves for a LevelDB build.
fn fake_build(root: &Path, dir: &str, stamp: Option<&str>, header: bool, lib: bool) {
    let d = root.join(dir);
    fs::create_dir_all(d.join("include/leveldb")).unwrap();
    fs::create_dir_all(d.join("lib")).unwrap();
    if let Some(s) = stamp {
        fs::write(d.join("STAMP"), s).unwrap();
    }
    if header {
        fs::write(d.join("include/leveldb/c.h"), "").unwrap();
    }
    if lib {
        fs::write(d.join("lib/libleveldb.so.1.23.0"), "").unwrap();
        std::os::unix::fs::symlink("libleveldb.so.1.23.0", d.join("lib/libleveldb.so")).unwrap();
    }
}

const STAMP: &str =
    "name=leveldb\nversion=1.23-4\ncompiler=c++ 12.2.0\nflags=-O2 -DNDEBUG\ncmake=-G Ninja\n";

#[test]
fn no_peers_dir_means_the_system_library() {
    assert_eq!(
        peers::select(None, "leveldb", "leveldb/c.h", "leveldb"),
        Ok(None)
    );
}

#[test]
fn a_complete_build_is_selected() {
    let t = tempfile::tempdir().unwrap();
    fake_build(t.path(), "leveldb-1.23-4", Some(STAMP), true, true);
    let b = peers::select(Some(t.path()), "leveldb", "leveldb/c.h", "leveldb")
        .unwrap()
        .unwrap();
    assert_eq!(b.dir, t.path().join("leveldb-1.23-4"));
    assert_eq!(b.lib_dir, t.path().join("leveldb-1.23-4/lib"));
    assert_eq!(b.include_dir, t.path().join("leveldb-1.23-4/include"));
    assert_eq!(b.debian_version, "1.23-4");
    assert_eq!(b.upstream_version(), "1.23");
    assert_eq!(b.flags, "-O2 -DNDEBUG");
    assert_eq!(
        b.description("leveldb"),
        "release build (-O2 -DNDEBUG) of Debian's source package leveldb 1.23-4, by scripts/build-peers.sh"
    );
    // Another library's name does not match it.
    let e = peers::select(Some(t.path()), "rocksdb", "rocksdb/c.h", "rocksdb").unwrap_err();
    assert!(e.contains("no rocksdb-<version> directory"), "{e}");
}

#[test]
fn an_unfinished_or_incomplete_build_is_not_selected() {
    let t = tempfile::tempdir().unwrap();
    fake_build(t.path(), "leveldb-1.23-4", None, true, true);
    let e = peers::select(Some(t.path()), "leveldb", "leveldb/c.h", "leveldb").unwrap_err();
    assert!(e.contains("has no STAMP"), "{e}");

    let t = tempfile::tempdir().unwrap();
    fake_build(t.path(), "leveldb-1.23-4", Some(STAMP), true, false);
    let e = peers::select(Some(t.path()), "leveldb", "leveldb/c.h", "leveldb").unwrap_err();
    assert!(e.contains("has no lib/libleveldb.so"), "{e}");

    let t = tempfile::tempdir().unwrap();
    fake_build(t.path(), "leveldb-1.23-4", Some(STAMP), false, true);
    let e = peers::select(Some(t.path()), "leveldb", "leveldb/c.h", "leveldb").unwrap_err();
    assert!(e.contains("has no include/leveldb/c.h"), "{e}");

    let t = tempfile::tempdir().unwrap();
    fake_build(
        t.path(),
        "leveldb-1.23-4",
        Some("name=rocksdb\nversion=1\n"),
        true,
        true,
    );
    let e = peers::select(Some(t.path()), "leveldb", "leveldb/c.h", "leveldb").unwrap_err();
    assert!(e.contains("does not name leveldb"), "{e}");

    let missing = t.path().join("nothing-here");
    let e = peers::select(Some(&missing), "leveldb", "leveldb/c.h", "leveldb").unwrap_err();
    assert!(e.contains("cannot read"), "{e}");
}

#[test]
fn the_highest_complete_version_wins() {
    let t = tempfile::tempdir().unwrap();
    fake_build(
        t.path(),
        "leveldb-1.22-1",
        Some(&STAMP.replace("1.23-4", "1.22-1")),
        true,
        true,
    );
    fake_build(t.path(), "leveldb-1.23-4", Some(STAMP), true, true);
    fake_build(t.path(), "leveldb-1.24-1", None, true, true); // unfinished
    let b = peers::select(Some(t.path()), "leveldb", "leveldb/c.h", "leveldb")
        .unwrap()
        .unwrap();
    assert_eq!(b.debian_version, "1.23-4");
}

#[test]
fn the_header_names_the_library_and_its_assertions() {
    let release = "release build (-O2 -DNDEBUG) of Debian's source package leveldb 1.23-4, by scripts/build-peers.sh";
    assert_eq!(
        library_line(
            "/x/target/peers/leveldb-1.23-4/lib/libleveldb.so.1.23.0",
            release
        ),
        format!("Library:    /x/target/peers/leveldb-1.23-4/lib/libleveldb.so.1.23.0 ({release})")
    );
    assert_eq!(
        assertions_wording(EngineKind::LevelDb, Some(0), release),
        "off (release build with -DNDEBUG: the library has no assert call sites)"
    );
    let debian = "Debian package libleveldb1d:amd64 1.23-4";
    assert_eq!(
        library_line("/usr/lib/x86_64-linux-gnu/libleveldb.so.1d.23", debian),
        format!("Library:    /usr/lib/x86_64-linux-gnu/libleveldb.so.1d.23 ({debian})")
    );
    assert_eq!(
        assertions_wording(EngineKind::LevelDb, Some(251), debian),
        "on (the installed library has 251 assert call sites: built without -DNDEBUG)"
    );
    assert_eq!(
        assertions_wording(
            EngineKind::Lmdb,
            Some(0),
            "Debian package liblmdb0:amd64 0.9.24-1"
        ),
        "off (the installed library has no assert call sites)"
    );
    assert!(assertions_wording(EngineKind::RocksDb, None, release).starts_with("unknown"));
    assert_eq!(library_line("/lib/libx.so", ""), "Library:    /lib/libx.so");
}
