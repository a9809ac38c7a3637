//! Finding the release builds of peer libraries that `scripts/build-peers.sh`
//! leaves under a directory (`$SHALE_PEERS_DIR`): one `<name>-<version>/`
//! directory per library, with `include/`, `lib/` and a `STAMP` file that
//! records what was built and how (`name=`, `version=`, `flags=` lines).
//!
//! Used by `build.rs` (which links such a build in place of the system's
//! library) and by the tests (`tests/peer_builds.rs`), so it depends on
//! nothing but the standard library and prints nothing.

use std::fs;
use std::path::{Path, PathBuf};

/// The environment variable naming the directory of release builds.
pub const PEERS_DIR_VAR: &str = "SHALE_PEERS_DIR";

/// One release build of a peer library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerBuild {
    /// `<peers dir>/<name>-<version>`.
    pub dir: PathBuf,
    /// Its `include/` directory.
    pub include_dir: PathBuf,
    /// Its `lib/` directory (the rpath of the binaries that link it).
    pub lib_dir: PathBuf,
    /// The Debian version of the source package it was built from (`1.23-4`).
    pub debian_version: String,
    /// The compiler flags it was built with (`-O2 -DNDEBUG`).
    pub flags: String,
}

impl PeerBuild {
    /// The upstream version (`1.23` of `1.23-4`).
    pub fn upstream_version(&self) -> &str {
        match self.debian_version.rsplit_once('-') {
            Some((up, _)) => up,
            None => &self.debian_version,
        }
    }

    /// The `STAMP` file (a change to it means a rebuild).
    pub fn stamp(&self) -> PathBuf {
        self.dir.join("STAMP")
    }

    /// How db_bench's header describes this build.
    pub fn description(&self, name: &str) -> String {
        format!(
            "release build ({}) of Debian's source package {name} {}, by scripts/build-peers.sh",
            self.flags, self.debian_version
        )
    }
}

/// `value` of the `key=value` line of a stamp.
fn stamp_field<'a>(stamp: &'a str, key: &str) -> Option<&'a str> {
    stamp.lines().find_map(|l| {
        l.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix('='))
            .map(str::trim)
    })
}

/// The release build of library `name` (header `header` relative to the
/// include directory, shared library `lib<link>.so`) under `peers_dir`, or
/// why there is none. When several versions are there, the highest
/// directory name wins.
pub fn find_release_build(
    peers_dir: &Path,
    name: &str,
    header: &str,
    link: &str,
) -> Result<PeerBuild, String> {
    let entries =
        fs::read_dir(peers_dir).map_err(|e| format!("cannot read {}: {e}", peers_dir.display()))?;
    let prefix = format!("{name}-");
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut why = format!(
        "no {name}-<version> directory in {} (scripts/build-peers.sh makes it)",
        peers_dir.display()
    );
    for dir in dirs.into_iter().rev() {
        let stamp = match fs::read_to_string(dir.join("STAMP")) {
            Ok(s) => s,
            Err(_) => {
                why = format!("{} has no STAMP (an unfinished build)", dir.display());
                continue;
            }
        };
        if stamp_field(&stamp, "name") != Some(name) {
            why = format!("{}/STAMP does not name {name}", dir.display());
            continue;
        }
        let include_dir = dir.join("include");
        let lib_dir = dir.join("lib");
        if !include_dir.join(header).exists() {
            why = format!("{} has no include/{header}", dir.display());
            continue;
        }
        if !lib_dir.join(format!("lib{link}.so")).exists() {
            why = format!("{} has no lib/lib{link}.so", dir.display());
            continue;
        }
        let debian_version = stamp_field(&stamp, "version").unwrap_or("").to_string();
        if debian_version.is_empty() {
            why = format!("{}/STAMP has no version", dir.display());
            continue;
        }
        return Ok(PeerBuild {
            include_dir,
            lib_dir,
            debian_version,
            flags: stamp_field(&stamp, "flags").unwrap_or("").to_string(),
            dir,
        });
    }
    Err(why)
}

/// Where db_bench takes library `name` from, given `$SHALE_PEERS_DIR`
/// (`peers_dir`): `Ok(Some(build))` for a release build, `Ok(None)` when no
/// directory is named (the system's library, silently), `Err(why)` when a
/// directory is named but holds no usable build of `name` (the system's
/// library, with a warning).
pub fn select(
    peers_dir: Option<&Path>,
    name: &str,
    header: &str,
    link: &str,
) -> Result<Option<PeerBuild>, String> {
    match peers_dir {
        None => Ok(None),
        Some(dir) => find_release_build(dir, name, header, link).map(Some),
    }
}

/// The libraries `scripts/build-peers.sh` builds.
pub const RELEASE_BUILT: &[&str] = &["leveldb", "rocksdb"];
