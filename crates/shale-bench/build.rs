//! Probes the peer storage libraries the benchmark can drive (LevelDB,
//! RocksDB, SQLite, Kyoto Cabinet, WiredTiger, LMDB) and sets one cfg per
//! library found (`have_leveldb`, ...).
//!
//! A library counts as available when its header exists and a tiny C program
//! calling one of its functions links (or, without a C compiler, when the
//! library file exists). A missing library never fails the build: the engine
//! is compiled out and the binary reports the reason at run time through the
//! `SHALE_BENCH_<NAME>_STATUS` environment variable baked in here.
//! `SHALE_BENCH_DISABLE=rocksdb,lmdb` compiles engines out on purpose.
//!
//! db_bench's `crc32c`, `snappycomp` and `snappyuncomp` lines time each
//! engine's own code, so two more things are probed. libsnappy (the
//! compressor LevelDB, RocksDB and WiredTiger's extension call) through its
//! C API `snappy-c.h`: cfg `have_snappy`. And LevelDB's CRC-32C, which
//! `libleveldb.so` does not export: its object `crc32c.cc.o` is copied out of
//! `libleveldb.a` into a static library of its own in `OUT_DIR`
//! (`libshale_bench_leveldb_crc32c.a`) and linked: cfg `have_leveldb_crc32c`.
//! Either missing leaves the matching lines reported as not supported, with
//! the reason baked in here (`SHALE_BENCH_SNAPPY_STATUS`,
//! `SHALE_BENCH_LEVELDB_CRC32C_STATUS`); `SHALE_BENCH_DISABLE=snappy` and
//! `SHALE_BENCH_DISABLE=leveldb_crc32c` leave them out on purpose.
//!
//! LevelDB and RocksDB as Debian ships them keep their assertions (built
//! without `-DNDEBUG`). When `SHALE_PEERS_DIR` names a directory (an
//! absolute path; the Makefile's `build` and `report` targets set it to
//! `target/peers`), a release build found there by `scripts/build-peers.sh`
//! (`<dir>/<name>-<version>/{include,lib,STAMP}`) is linked instead, with an
//! rpath to its `lib/`; without it, or when the directory holds no such
//! build, the system's library is linked (with a warning in the latter
//! case). Either way, `SHALE_BENCH_<NAME>_LIBRARY` records the library file
//! and `SHALE_BENCH_<NAME>_BUILD` where it comes from, for db_bench's header.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "build_peers.rs"]
#[allow(dead_code)]
mod peers;

struct Lib {
    /// cfg and environment-variable stem, e.g. `leveldb`.
    name: &'static str,
    /// pkg-config package, when the library ships a `.pc` file.
    pkg: Option<&'static str>,
    /// Header that must exist, relative to an include directory.
    header: &'static str,
    /// Library to link (`-l<link>`).
    link: &'static str,
    /// A function the test program references.
    symbol: &'static str,
}

const LIBS: &[Lib] = &[
    Lib {
        name: "leveldb",
        pkg: None,
        header: "leveldb/c.h",
        link: "leveldb",
        symbol: "leveldb_open",
    },
    Lib {
        name: "rocksdb",
        pkg: Some("rocksdb"),
        header: "rocksdb/c.h",
        link: "rocksdb",
        symbol: "rocksdb_open",
    },
    Lib {
        name: "sqlite3",
        pkg: Some("sqlite3"),
        header: "sqlite3.h",
        link: "sqlite3",
        symbol: "sqlite3_open_v2",
    },
    Lib {
        name: "kyotocabinet",
        pkg: Some("kyotocabinet"),
        header: "kclangc.h",
        link: "kyotocabinet",
        symbol: "kcdbnew",
    },
    Lib {
        name: "wiredtiger",
        pkg: Some("wiredtiger"),
        header: "wiredtiger.h",
        link: "wiredtiger",
        symbol: "wiredtiger_open",
    },
    Lib {
        name: "lmdb",
        pkg: Some("lmdb"),
        header: "lmdb.h",
        link: "lmdb",
        symbol: "mdb_env_create",
    },
];

/// libsnappy, probed like the engines' libraries.
const SNAPPY: Lib = Lib {
    name: "snappy",
    pkg: Some("snappy"),
    header: "snappy-c.h",
    link: "snappy",
    symbol: "snappy_compress",
};

/// The object of `libleveldb.a` that holds LevelDB's CRC-32C code, and the
/// function in it (`uint32_t leveldb::crc32c::Extend(uint32_t, const char*,
/// size_t)`).
const LEVELDB_CRC32C_OBJECT: &str = "crc32c.cc.o";
const LEVELDB_CRC32C_SYMBOL: &str = "_ZN7leveldb6crc32c6ExtendEjPKcm";
/// A symbol of Google's crc32c library (`crc32c::Extend`): LevelDB built
/// with that library references it and then uses SSE4.2 where it can.
const CRC32C_LIBRARY_SYMBOL: &str = "_ZN6crc32c6Extend";

const DEFAULT_INCLUDE_DIRS: &[&str] = &["/usr/include", "/usr/local/include"];
const DEFAULT_LIB_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
];

struct Found {
    include_dirs: Vec<PathBuf>,
    link_dirs: Vec<PathBuf>,
    version: Option<String>,
    libdir: Option<PathBuf>,
    /// The release build of `scripts/build-peers.sh` this is, if it is one.
    release: Option<peers::PeerBuild>,
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SHALE_BENCH_DISABLE");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rerun-if-env-changed=AR");
    println!("cargo:rerun-if-env-changed={}", peers::PEERS_DIR_VAR);
    let peers_dir: Option<PathBuf> = env::var_os(peers::PEERS_DIR_VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let disabled: Vec<String> = env::var("SHALE_BENCH_DISABLE")
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rustc-check-cfg=cfg(have_leveldb_crc32c)");

    for lib in LIBS {
        println!("cargo:rustc-check-cfg=cfg(have_{})", lib.name);
        let upper = lib.name.to_ascii_uppercase();
        let status = if disabled.iter().any(|d| d == lib.name) {
            Err("disabled at build time by SHALE_BENCH_DISABLE".to_string())
        } else {
            match release_build(lib, peers_dir.as_deref()) {
                Some(build) => probe_release_build(lib, build, &out_dir),
                None => probe(lib, &out_dir),
            }
        };
        match status {
            Ok(found) => {
                for dir in &found.link_dirs {
                    println!("cargo:rustc-link-search=native={}", dir.display());
                }
                println!("cargo:rustc-link-lib=dylib={}", lib.link);
                if let Some(build) = &found.release {
                    // Found at run time ahead of the system's copy (same soname).
                    println!(
                        "cargo:rustc-link-arg=-Wl,-rpath,{}",
                        build.lib_dir.display()
                    );
                    println!("cargo:rerun-if-changed={}", build.stamp().display());
                }
                let file = library_file(lib, &found);
                println!(
                    "cargo:rustc-env=SHALE_BENCH_{upper}_LIBRARY={}",
                    file.as_ref()
                        .map(|f| f.display().to_string())
                        .unwrap_or_default()
                );
                println!(
                    "cargo:rustc-env=SHALE_BENCH_{upper}_BUILD={}",
                    build_description(lib, &found, file.as_deref())
                );
                println!("cargo:rustc-cfg=have_{}", lib.name);
                println!("cargo:rustc-env=SHALE_BENCH_{upper}_STATUS=available");
                println!(
                    "cargo:rustc-env=SHALE_BENCH_{upper}_PKG_VERSION={}",
                    found.version.clone().unwrap_or_default()
                );
                for dir in &found.include_dirs {
                    let header = dir.join(lib.header);
                    if header.exists() {
                        println!("cargo:rerun-if-changed={}", header.display());
                    }
                }
                if lib.name == "wiredtiger" {
                    emit_wiredtiger_snappy(&found);
                }
                if lib.name == "leveldb" {
                    if disabled.iter().any(|d| d == "leveldb_crc32c") {
                        leveldb_crc32c_missing("disabled at build time by SHALE_BENCH_DISABLE");
                    } else {
                        emit_leveldb_crc32c(lib, &found, &out_dir);
                    }
                }
                let counts = file.and_then(|f| disassembly_counts(&f));
                let asserts = counts.map(|c| c.assert_calls.to_string());
                let crc32 = counts.map(|c| c.crc32_instructions.to_string());
                println!(
                    "cargo:rustc-env=SHALE_BENCH_{upper}_ASSERT_SITES={}",
                    asserts.unwrap_or_default()
                );
                println!(
                    "cargo:rustc-env=SHALE_BENCH_{upper}_CRC32_INSNS={}",
                    crc32.unwrap_or_default()
                );
            }
            Err(reason) => {
                println!(
                    "cargo:warning=shale-bench: {} engine not built: {reason}",
                    lib.name
                );
                println!("cargo:rustc-env=SHALE_BENCH_{upper}_STATUS={reason}");
                println!("cargo:rustc-env=SHALE_BENCH_{upper}_PKG_VERSION=");
                println!("cargo:rustc-env=SHALE_BENCH_{upper}_LIBRARY=");
                println!("cargo:rustc-env=SHALE_BENCH_{upper}_BUILD=");
                if lib.name == "wiredtiger" {
                    println!("cargo:rustc-env=SHALE_BENCH_WIREDTIGER_SNAPPY=");
                }
                if lib.name == "leveldb" {
                    leveldb_crc32c_missing(&format!("the leveldb engine is not built: {reason}"));
                }
                println!("cargo:rustc-env=SHALE_BENCH_{upper}_ASSERT_SITES=");
                println!("cargo:rustc-env=SHALE_BENCH_{upper}_CRC32_INSNS=");
            }
        }
    }
    emit_snappy(&disabled, &out_dir);
}

/// The release build of `lib` under `$SHALE_PEERS_DIR`, if that is set and
/// holds one; a warning says why not when it is set but holds none.
fn release_build(lib: &Lib, peers_dir: Option<&Path>) -> Option<peers::PeerBuild> {
    if !peers::RELEASE_BUILT.contains(&lib.name) {
        return None;
    }
    match peers::select(peers_dir, lib.name, lib.header, lib.link) {
        Ok(build) => build,
        Err(why) => {
            if let Some(dir) = peers_dir {
                // A build appearing there later is picked up.
                println!("cargo:rerun-if-changed={}", dir.display());
            }
            println!(
                "cargo:warning=shale-bench: {} is set but {why}: linking the system's lib{} (built with assertions on in Debian)",
                peers::PEERS_DIR_VAR,
                lib.link
            );
            None
        }
    }
}

/// Checks that a release build links, like `probe` does a system library.
fn probe_release_build(
    lib: &Lib,
    build: peers::PeerBuild,
    out_dir: &Path,
) -> Result<Found, String> {
    let mut include_dirs = vec![build.include_dir.clone()];
    include_dirs.extend(DEFAULT_INCLUDE_DIRS.iter().map(PathBuf::from));
    let found = Found {
        include_dirs,
        link_dirs: vec![build.lib_dir.clone()],
        version: Some(build.upstream_version().to_string()),
        libdir: Some(build.lib_dir.clone()),
        release: Some(build),
    };
    match test_link(lib, &found, out_dir) {
        LinkResult::Linked | LinkResult::NoCompiler => Ok(found),
        LinkResult::Failed(msg) => Err(format!(
            "test link against the release build in {} failed: {msg}",
            found
                .release
                .as_ref()
                .map(|b| b.dir.display().to_string())
                .unwrap_or_default()
        )),
    }
}

/// Where the library comes from, for db_bench's header: the release build,
/// or the Debian package that installed the file, when dpkg knows it.
fn build_description(lib: &Lib, found: &Found, file: Option<&Path>) -> String {
    if let Some(build) = &found.release {
        return build.description(lib.name);
    }
    let package = file.and_then(|f| {
        let out = Command::new("dpkg-query").arg("-S").arg(f).output().ok()?;
        if !out.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let pkg = text.lines().next()?.split(':').next()?.trim().to_string();
        let out = Command::new("dpkg-query")
            .args(["-W", "-f=${Version}"])
            .arg(&pkg)
            .output()
            .ok()?;
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Some(format!("{pkg} {version}").trim().to_string())
    });
    match package {
        Some(p) => format!("Debian package {p}"),
        None => "installed library".to_string(),
    }
}

/// Probes libsnappy and links it when found (cfg `have_snappy`).
fn emit_snappy(disabled: &[String], out_dir: &Path) {
    println!("cargo:rustc-check-cfg=cfg(have_snappy)");
    let status = if disabled.iter().any(|d| d == SNAPPY.name) {
        Err("disabled at build time by SHALE_BENCH_DISABLE".to_string())
    } else {
        probe(&SNAPPY, out_dir)
    };
    match status {
        Ok(found) => {
            for dir in &found.link_dirs {
                println!("cargo:rustc-link-search=native={}", dir.display());
            }
            println!("cargo:rustc-link-lib=dylib={}", SNAPPY.link);
            println!("cargo:rustc-cfg=have_snappy");
            println!("cargo:rustc-env=SHALE_BENCH_SNAPPY_STATUS=available");
            println!(
                "cargo:rustc-env=SHALE_BENCH_SNAPPY_PKG_VERSION={}",
                found.version.unwrap_or_default()
            );
        }
        Err(reason) => {
            println!(
                "cargo:warning=shale-bench: libsnappy not linked ({reason}): the peers' snappycomp and snappyuncomp lines will say `not supported`"
            );
            println!("cargo:rustc-env=SHALE_BENCH_SNAPPY_STATUS=libsnappy: {reason}");
            println!("cargo:rustc-env=SHALE_BENCH_SNAPPY_PKG_VERSION=");
        }
    }
}

/// Copies LevelDB's CRC-32C object out of `libleveldb.a` into a static
/// library of its own and links it (cfg `have_leveldb_crc32c`); when that is
/// not possible the reason is recorded instead.
fn emit_leveldb_crc32c(lib: &Lib, found: &Found, out_dir: &Path) {
    match extract_leveldb_crc32c(lib, found, out_dir) {
        Ok((archive, uses_crc32c_library)) => {
            println!("cargo:rustc-link-search=native={}", out_dir.display());
            println!("cargo:rustc-link-lib=static=shale_bench_leveldb_crc32c");
            // The object's function-local static needs `__cxa_guard_*`.
            println!("cargo:rustc-link-lib=dylib=stdc++");
            if uses_crc32c_library {
                println!("cargo:rustc-link-lib=dylib=crc32c");
            }
            println!("cargo:rustc-cfg=have_leveldb_crc32c");
            println!("cargo:rustc-env=SHALE_BENCH_LEVELDB_CRC32C_STATUS=available");
            println!(
                "cargo:rustc-env=SHALE_BENCH_LEVELDB_CRC32C_ARCHIVE={}",
                archive.display()
            );
            println!(
                "cargo:rustc-env=SHALE_BENCH_LEVELDB_CRC32C_CODE={}",
                if uses_crc32c_library {
                    "Google's crc32c library (SSE4.2 where the CPU has it)"
                } else {
                    "its portable table-driven code (LevelDB was built without the crc32c library)"
                }
            );
        }
        Err(reason) => {
            println!("cargo:warning=shale-bench: LevelDB's crc32c not linked: {reason}");
            leveldb_crc32c_missing(&reason);
        }
    }
}

fn leveldb_crc32c_missing(reason: &str) {
    println!("cargo:rustc-env=SHALE_BENCH_LEVELDB_CRC32C_STATUS={reason}");
    println!("cargo:rustc-env=SHALE_BENCH_LEVELDB_CRC32C_ARCHIVE=");
    println!("cargo:rustc-env=SHALE_BENCH_LEVELDB_CRC32C_CODE=");
}

/// Extracts `crc32c.cc.o` from `libleveldb.a` and packs it alone into
/// `OUT_DIR/libshale_bench_leveldb_crc32c.a`. Returns the source archive and
/// whether the object calls Google's crc32c library.
fn extract_leveldb_crc32c(
    lib: &Lib,
    found: &Found,
    out_dir: &Path,
) -> Result<(PathBuf, bool), String> {
    let name = format!("lib{}.a", lib.link);
    let mut dirs: Vec<PathBuf> = Vec::new();
    // Next to the shared library the engine links, first.
    if let Some(so) = library_file(lib, found) {
        dirs.extend(so.parent().map(Path::to_path_buf));
    }
    dirs.extend(found.link_dirs.iter().cloned());
    dirs.extend(DEFAULT_LIB_DIRS.iter().map(PathBuf::from));
    let archive = dirs
        .iter()
        .map(|d| d.join(&name))
        .find(|p| p.exists())
        .ok_or_else(|| format!("{name} not found (the static library holds crc32c.cc.o)"))?;
    println!("cargo:rerun-if-changed={}", archive.display());

    let work = out_dir.join("leveldb_crc32c");
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let ar = env::var("AR").unwrap_or_else(|_| "ar".to_string());
    let run = |cmd: &mut Command, what: &str| -> Result<(), String> {
        match cmd.output() {
            Err(e) => Err(format!("cannot run {ar} ({what}): {e}")),
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(format!(
                "{ar} failed ({what}): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )),
        }
    };
    run(
        Command::new(&ar)
            .current_dir(&work)
            .arg("x")
            .arg(&archive)
            .arg(LEVELDB_CRC32C_OBJECT),
        &format!(
            "extracting {LEVELDB_CRC32C_OBJECT} from {}",
            archive.display()
        ),
    )?;
    let object = work.join(LEVELDB_CRC32C_OBJECT);
    let bytes = fs::read(&object)
        .map_err(|_| format!("{} has no {LEVELDB_CRC32C_OBJECT}", archive.display()))?;
    if !contains(&bytes, LEVELDB_CRC32C_SYMBOL.as_bytes()) {
        return Err(format!(
            "{LEVELDB_CRC32C_OBJECT} of {} does not define {LEVELDB_CRC32C_SYMBOL}",
            archive.display()
        ));
    }
    let uses_crc32c_library = contains(&bytes, CRC32C_LIBRARY_SYMBOL.as_bytes());
    let packed = out_dir.join("libshale_bench_leveldb_crc32c.a");
    let _ = fs::remove_file(&packed);
    run(
        Command::new(&ar).arg("crs").arg(&packed).arg(&object),
        "packing the object into a static library",
    )?;
    Ok((archive, uses_crc32c_library))
}

/// True if `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// Records where WiredTiger's snappy compressor extension lives, if the
/// installed build ships it (an empty value means "not available").
fn emit_wiredtiger_snappy(found: &Found) {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = &found.libdir {
        dirs.push(d.clone());
    }
    dirs.extend(found.link_dirs.iter().cloned());
    dirs.extend(DEFAULT_LIB_DIRS.iter().map(PathBuf::from));
    let ext = dirs
        .iter()
        .map(|d| d.join("libwiredtiger_snappy.so"))
        .find(|p| p.exists());
    println!(
        "cargo:rustc-env=SHALE_BENCH_WIREDTIGER_SNAPPY={}",
        ext.map(|p| p.display().to_string()).unwrap_or_default()
    );
}

/// The shared library file the binary will load, if it can be found.
fn library_file(lib: &Lib, found: &Found) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = found.libdir.iter().cloned().collect();
    dirs.extend(found.link_dirs.iter().cloned());
    dirs.extend(DEFAULT_LIB_DIRS.iter().map(PathBuf::from));
    let file = format!("lib{}.so", lib.link);
    dirs.iter()
        .map(|d| d.join(&file))
        .find(|p| p.exists())
        .and_then(|p| fs::canonicalize(p).ok())
}

/// What the disassembly of a library shows.
#[derive(Clone, Copy)]
struct Counts {
    /// Calls to `__assert_fail`: a library built without `-DNDEBUG` keeps
    /// its assertions (and, for RocksDB, its debug sync points), which slows
    /// it down; the benchmark prints a warning then.
    assert_calls: usize,
    /// SSE4.2 `crc32` instructions: none means the library's CRC-32C is
    /// table-driven code (said in the `crc32c` line's setting).
    crc32_instructions: usize,
}

/// Counts from the library's disassembly; `None` when `objdump` is not
/// available.
fn disassembly_counts(file: &Path) -> Option<Counts> {
    println!("cargo:rerun-if-changed={}", file.display());
    let out = Command::new("objdump")
        .arg("-d")
        .arg("--no-show-raw-insn")
        .arg(file)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut counts = Counts {
        assert_calls: 0,
        crc32_instructions: 0,
    };
    for line in text.lines() {
        if line.contains("call") && line.contains("<__assert_fail@plt>") {
            counts.assert_calls += 1;
        }
        // Instruction lines read `<address>:\t<mnemonic> <operands>`.
        let mnemonic = line.split('\t').nth(1).unwrap_or("");
        if mnemonic.starts_with("crc32") {
            counts.crc32_instructions += 1;
        }
    }
    Some(counts)
}

fn probe(lib: &Lib, out_dir: &Path) -> Result<Found, String> {
    let mut found = Found {
        include_dirs: DEFAULT_INCLUDE_DIRS.iter().map(PathBuf::from).collect(),
        link_dirs: Vec::new(),
        version: None,
        libdir: None,
        release: None,
    };
    if let Some(pkg) = lib.pkg {
        if let Ok(info) = pkg_config::Config::new()
            .cargo_metadata(false)
            .env_metadata(false)
            .probe(pkg)
        {
            found
                .include_dirs
                .splice(0..0, info.include_paths.iter().cloned());
            found.link_dirs = info.link_paths.clone();
            found.version = Some(info.version.clone());
            found.libdir = pkg_config::get_variable(pkg, "libdir")
                .ok()
                .filter(|s| !s.is_empty())
                .map(PathBuf::from);
        }
    }
    if !found
        .include_dirs
        .iter()
        .any(|d| d.join(lib.header).exists())
    {
        return Err(format!("header <{}> not found", lib.header));
    }
    match test_link(lib, &found, out_dir) {
        LinkResult::Linked => Ok(found),
        LinkResult::Failed(msg) => Err(format!("test link against -l{} failed: {msg}", lib.link)),
        LinkResult::NoCompiler => {
            let mut dirs = found.link_dirs.clone();
            dirs.extend(DEFAULT_LIB_DIRS.iter().map(PathBuf::from));
            let file = format!("lib{}.so", lib.link);
            if dirs.iter().any(|d| d.join(&file).exists()) {
                Ok(found)
            } else {
                Err(format!("{file} not found"))
            }
        }
    }
}

enum LinkResult {
    Linked,
    Failed(String),
    NoCompiler,
}

fn test_link(lib: &Lib, found: &Found, out_dir: &Path) -> LinkResult {
    let src = out_dir.join(format!("probe_{}.c", lib.name));
    let exe = out_dir.join(format!("probe_{}", lib.name));
    let program = format!(
        "extern void {sym}(void);\nint main(void) {{ void (*volatile f)(void) = {sym}; return f == 0; }}\n",
        sym = lib.symbol
    );
    if fs::write(&src, program).is_err() {
        return LinkResult::NoCompiler;
    }
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut cmd = Command::new(cc);
    cmd.arg(&src).arg("-o").arg(&exe);
    for dir in &found.link_dirs {
        cmd.arg(format!("-L{}", dir.display()));
    }
    cmd.arg(format!("-l{}", lib.link));
    match cmd.output() {
        Err(_) => LinkResult::NoCompiler,
        Ok(out) if out.status.success() => LinkResult::Linked,
        Ok(out) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let first = stderr
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("linker error")
                .to_string();
            LinkResult::Failed(first)
        }
    }
}
