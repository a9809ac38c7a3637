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

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

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
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SHALE_BENCH_DISABLE");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=CC");
    let disabled: Vec<String> = env::var("SHALE_BENCH_DISABLE")
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    for lib in LIBS {
        println!("cargo:rustc-check-cfg=cfg(have_{})", lib.name);
        let upper = lib.name.to_ascii_uppercase();
        let status = if disabled.iter().any(|d| d == lib.name) {
            Err("disabled at build time by SHALE_BENCH_DISABLE".to_string())
        } else {
            probe(lib, &out_dir)
        };
        match status {
            Ok(found) => {
                for dir in &found.link_dirs {
                    println!("cargo:rustc-link-search=native={}", dir.display());
                }
                println!("cargo:rustc-link-lib=dylib={}", lib.link);
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
                let asserts = library_file(lib, &found)
                    .and_then(|f| assert_call_sites(&f))
                    .map(|n| n.to_string())
                    .unwrap_or_default();
                println!("cargo:rustc-env=SHALE_BENCH_{upper}_ASSERT_SITES={asserts}");
            }
            Err(reason) => {
                println!(
                    "cargo:warning=shale-bench: {} engine not built: {reason}",
                    lib.name
                );
                println!("cargo:rustc-env=SHALE_BENCH_{upper}_STATUS={reason}");
                println!("cargo:rustc-env=SHALE_BENCH_{upper}_PKG_VERSION=");
                if lib.name == "wiredtiger" {
                    println!("cargo:rustc-env=SHALE_BENCH_WIREDTIGER_SNAPPY=");
                }
                println!("cargo:rustc-env=SHALE_BENCH_{upper}_ASSERT_SITES=");
            }
        }
    }
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

/// How many calls to `__assert_fail` the library's code contains: a library
/// built without `-DNDEBUG` keeps its assertions (and, for RocksDB, its debug
/// sync points), which slows it down; the benchmark prints a warning then.
/// `None` when `objdump` is not available.
fn assert_call_sites(file: &Path) -> Option<usize> {
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
    Some(
        text.lines()
            .filter(|l| l.contains("call") && l.contains("<__assert_fail@plt>"))
            .count(),
    )
}

fn probe(lib: &Lib, out_dir: &Path) -> Result<Found, String> {
    let mut found = Found {
        include_dirs: DEFAULT_INCLUDE_DIRS.iter().map(PathBuf::from).collect(),
        link_dirs: Vec::new(),
        version: None,
        libdir: None,
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
