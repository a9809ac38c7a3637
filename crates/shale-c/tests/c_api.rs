//! Drives the C side of shale-c: compiles the C programs of `tests/c` with
//! the system C compiler and runs them against Shale's library, its
//! libleveldb stand-in and Debian's LevelDB 1.23 (`libleveldb-dev`, which
//! `scripts/setup.sh` installs, as it installs `cc` and clang).
//!
//! - `c_suite_on_shale`: `tests/c/api_test.c` (every function of the API,
//!   error paths, callbacks, threads) linked with `-lshale_c`.
//! - `c_suite_on_leveldb`: the same source linked with `-lleveldb`, to show
//!   it expects LevelDB's behaviour; then that binary, unchanged, on the
//!   stand-in through `LD_LIBRARY_PATH`.
//! - `c_suite_under_address_sanitizer`: the suite with `-fsanitize=address`
//!   (LeakSanitizer on): no leak, no invalid access; and a control program
//!   that leaks a value, which must be reported.
//! - `leveldb_binary_runs_on_the_standin`: a program built against
//!   LevelDB writes through the stand-in, LevelDB reads the result, and the
//!   other way round.
//! - `header_matches_the_library`: `shale/c.h` compiles (C and C++),
//!   declares exactly the symbols `libshale_c.so` exports, agrees with
//!   LevelDB's header on every signature, and the stand-in exports exactly
//!   LevelDB's symbols.
//! - `readme_example_builds_with_pkg_config`: the README's example, built
//!   from an install made by `scripts/install-c.sh` through `shale.pc`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The crate's directory.
fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The cargo target directory holding `libshale_c.so` and `libshale_c.a`,
/// built with the crate for these tests: `target/<profile>/deps` (where
/// `cargo test` leaves them), or `target/<profile>` (where `cargo build`
/// copies them).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/c_api-<hash>
    let deps = exe.parent().expect("deps directory");
    let candidates = [Some(deps), deps.parent()];
    let found = candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("libshale_c.so").exists() && d.join("libshale_c.a").exists())
        .unwrap_or_else(|| panic!("no libshale_c.so and libshale_c.a in {}", deps.display()))
        .to_path_buf();
    found
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

/// Runs `cmd`, failing the test with its output if it does not succeed.
fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{cmd:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The C compiler's flags shared by every program.
const CFLAGS: &[&str] = &[
    "-std=c99",
    "-D_DEFAULT_SOURCE",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-g",
    "-O1",
];

/// Compiles `tests/c/<source>` into `out`, linked with Shale's library.
fn build_on_shale(compiler: &str, source: &str, out: &Path, extra: &[&str]) {
    let lib = lib_dir();
    let mut cmd = Command::new(compiler);
    cmd.args(CFLAGS)
        .arg("-DUSE_SHALE_HEADER")
        .arg(format!("-I{}", crate_dir().join("include").display()))
        .args(extra)
        .arg("-o")
        .arg(out)
        .arg(crate_dir().join("tests/c").join(source))
        .arg(format!("-L{}", lib.display()))
        .arg("-lshale_c")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lpthread");
    run(&mut cmd);
}

/// Compiles `tests/c/<source>` into `out`, linked with Debian's LevelDB.
fn build_on_leveldb(source: &str, out: &Path) {
    assert!(
        Path::new("/usr/include/leveldb/c.h").exists(),
        "LevelDB's header is missing: run scripts/setup.sh (libleveldb-dev)"
    );
    let mut cmd = Command::new(cc());
    cmd.args(CFLAGS)
        .arg("-o")
        .arg(out)
        .arg(crate_dir().join("tests/c").join(source))
        .arg("-lleveldb")
        .arg("-lpthread");
    run(&mut cmd);
}

/// Installs the C library under `prefix` with `scripts/install-c.sh`, from
/// the libraries built for these tests.
fn install(prefix: &Path) {
    let script = crate_dir().join("../../scripts/install-c.sh");
    run(Command::new("bash")
        .arg(script)
        .arg("--prefix")
        .arg(prefix)
        .arg("--from")
        .arg(lib_dir()));
}

/// Runs the C suite binary `exe` on a fresh directory and returns stdout.
fn run_suite(exe: &Path, env: &[(&str, &Path)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(exe);
    cmd.arg(dir.path());
    for (k, v) in env {
        cmd.env(k, v);
    }
    stdout(&run(&mut cmd))
}

#[test]
fn c_suite_on_shale() {
    let work = tempfile::tempdir().unwrap();
    let exe = work.path().join("api_test");
    build_on_shale(&cc(), "api_test.c", &exe, &[]);
    let out = run_suite(&exe, &[]);
    assert!(out.contains("checks passed on Shale"), "{out}");
}

/// Shale's compression extensions: zstd and lz4 by level, read back after
/// a reopen; LevelDB's own numbers still select none and snappy.
#[test]
fn compression_extensions() {
    let work = tempfile::tempdir().unwrap();
    let exe = work.path().join("compression");
    build_on_shale(&cc(), "compression.c", &exe, &[]);
    let dir = tempfile::tempdir().unwrap();
    let out = stdout(&run(Command::new(&exe).arg(dir.path())));
    assert!(out.contains("compression checks passed"), "{out}");
    // The data blocks' type bytes of each database's tables, by level.
    let types = |name: &str| -> BTreeSet<(u32, u8)> {
        let mut out = BTreeSet::new();
        for t in shale::inspect::live_tables(&dir.path().join(name)).unwrap() {
            let table = shale::inspect::TableFile::open(&t.path).unwrap();
            for i in 0..table.index.len() {
                out.insert((t.level, table.data_block(i).unwrap().compression));
            }
        }
        out
    };
    assert_eq!(types("zstd"), BTreeSet::from([(2, 2)]));
    assert_eq!(types("lz4"), BTreeSet::from([(2, 4)]));
    assert_eq!(types("per-level"), BTreeSet::from([(2, 2)]));
    assert_eq!(types("bottommost"), BTreeSet::from([(2, 1)]));
    assert_eq!(types("none"), BTreeSet::from([(2, 0)]));
}

#[test]
fn c_suite_on_leveldb() {
    let work = tempfile::tempdir().unwrap();
    let exe = work.path().join("api_test_leveldb");
    build_on_leveldb("api_test.c", &exe);
    let out = run_suite(&exe, &[]);
    assert!(out.contains("checks passed on LevelDB"), "{out}");

    // The same binary, not rebuilt, on Shale's stand-in.
    let prefix = work.path().join("prefix");
    install(&prefix);
    let standin = prefix.join("lib/shale-leveldb");
    let out = run_suite(&exe, &[("LD_LIBRARY_PATH", &standin)]);
    assert!(out.contains("checks passed on Shale"), "{out}");
}

#[test]
fn c_suite_under_address_sanitizer() {
    let work = tempfile::tempdir().unwrap();
    let sanitize = ["-fsanitize=address", "-fno-omit-frame-pointer"];
    let exe = work.path().join("api_test_asan");
    build_on_shale("clang", "api_test.c", &exe, &sanitize);
    let dir = tempfile::tempdir().unwrap();
    let out = run(Command::new(&exe)
        .arg(dir.path())
        .env("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1")
        .env("LSAN_OPTIONS", "report_objects=1"));
    assert!(stdout(&out).contains("checks passed on Shale"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("ERROR: AddressSanitizer"), "{stderr}");
    assert!(!stderr.contains("ERROR: LeakSanitizer"), "{stderr}");

    // Control: a value from leveldb_get that is never freed is reported, so
    // a clean run above means something.
    let leak = work.path().join("leak");
    build_on_shale("clang", "leak.c", &leak, &sanitize);
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(&leak)
        .arg(dir.path())
        .env("ASAN_OPTIONS", "detect_leaks=1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the leak was not reported: {stderr}");
    assert!(stderr.contains("ERROR: LeakSanitizer"), "{stderr}");
}

#[test]
fn leveldb_binary_runs_on_the_standin() {
    let work = tempfile::tempdir().unwrap();
    let exe = work.path().join("dropin");
    build_on_leveldb("dropin.c", &exe);
    let prefix = work.path().join("prefix");
    install(&prefix);
    let standin = prefix.join("lib/shale-leveldb");

    // The loader resolves the program's libleveldb to the stand-in.
    let ldd = stdout(&run(Command::new("ldd")
        .arg(&exe)
        .env("LD_LIBRARY_PATH", &standin)));
    let line = ldd
        .lines()
        .find(|l| l.contains("libleveldb"))
        .unwrap_or_else(|| panic!("no libleveldb in ldd's output:\n{ldd}"));
    assert!(
        line.contains(&*standin.to_string_lossy()),
        "libleveldb is not the stand-in: {line}"
    );

    // Shale writes through the program; LevelDB reads what it wrote.
    let db = work.path().join("db");
    let n = "5000";
    let out = stdout(&run(Command::new(&exe)
        .args(["write"])
        .arg(&db)
        .arg(n)
        .env("LD_LIBRARY_PATH", &standin)));
    assert!(out.contains("engine: shale"), "{out}");
    assert!(out.contains("version: 1.23"), "{out}");
    assert!(out.contains("ok"), "{out}");
    let out = stdout(&run(Command::new(&exe).args(["check"]).arg(&db).arg(n)));
    assert!(out.contains("engine: leveldb"), "{out}");
    assert!(out.contains("keys: 4500"), "{out}");

    // And the other way: LevelDB writes, Shale reads.
    let db2 = work.path().join("db2");
    let out = stdout(&run(Command::new(&exe).args(["write"]).arg(&db2).arg(n)));
    assert!(out.contains("engine: leveldb"), "{out}");
    let out = stdout(&run(Command::new(&exe)
        .args(["check"])
        .arg(&db2)
        .arg(n)
        .env("LD_LIBRARY_PATH", &standin)));
    assert!(out.contains("engine: shale"), "{out}");
    assert!(out.contains("keys: 4500"), "{out}");
}

/// The functions a header declares (`<EXPORT macro> ... name(` lines).
fn declared_functions(header: &str, export_macro: &str) -> BTreeSet<String> {
    header
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(export_macro))
        .filter_map(|rest| rest.split('(').next())
        .filter_map(|decl| {
            decl.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .find(|s| !s.is_empty())
                .map(str::to_string)
        })
        .collect()
}

/// The functions a shared library exports (`nm -D --defined-only`).
fn exported_functions(lib: &Path) -> BTreeSet<String> {
    let out = stdout(&run(Command::new("nm")
        .arg("-D")
        .arg("--defined-only")
        .arg(lib)));
    out.lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let (_addr, kind, name) = (parts.next()?, parts.next()?, parts.next()?);
            (kind == "T").then(|| name.to_string())
        })
        .collect()
}

#[test]
fn header_matches_the_library() {
    let header_path = crate_dir().join("include/shale/c.h");
    let header = std::fs::read_to_string(&header_path).unwrap();
    let declared = declared_functions(&header, "SHALE_EXPORT ");
    let exported = exported_functions(&lib_dir().join("libshale_c.so"));
    assert_eq!(
        declared, exported,
        "shale/c.h and libshale_c.so disagree (left: declared, right: exported)"
    );

    let leveldb_header = std::fs::read_to_string("/usr/include/leveldb/c.h")
        .expect("LevelDB's header (libleveldb-dev, installed by scripts/setup.sh)");
    let leveldb = declared_functions(&leveldb_header, "LEVELDB_EXPORT ");
    assert_eq!(leveldb.len(), 68, "{leveldb:?}");
    let extra: BTreeSet<String> = declared.difference(&leveldb).cloned().collect();
    let missing: BTreeSet<String> = leveldb.difference(&declared).cloned().collect();
    assert!(
        missing.is_empty(),
        "LevelDB functions not declared: {missing:?}"
    );
    assert_eq!(
        extra,
        BTreeSet::from(
            [
                "shale_version",
                "shale_options_set_zstd_compression_level",
                "shale_options_set_compression_per_level",
                "shale_options_set_bottommost_compression",
            ]
            .map(String::from)
        )
    );

    let work = tempfile::tempdir().unwrap();
    let include = format!("-I{}", crate_dir().join("include").display());
    // The header compiles alone, as C and as C++.
    let tu = work.path().join("alone.c");
    std::fs::write(
        &tu,
        "#include <shale/c.h>\nint main(void) { return leveldb_major_version() != 1; }\n",
    )
    .unwrap();
    run(Command::new(cc())
        .args([
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-c",
            "-o",
        ])
        .arg(work.path().join("alone.o"))
        .arg(&include)
        .arg(&tu));
    run(Command::new("c++")
        .args(["-x", "c++", "-Wall", "-Wextra", "-Werror", "-c", "-o"])
        .arg(work.path().join("alone_cpp.o"))
        .arg(&include)
        .arg(&tu));

    // Each declaration agrees with LevelDB's: the compiler sees both and
    // rejects any conflicting type. (Shale's copy is read with LevelDB's
    // include guard undefined and its compression enum, declared once
    // already, left out.)
    let copy_dir = work.path().join("copy/shale");
    std::fs::create_dir_all(&copy_dir).unwrap();
    let without_enum = header.replace(
        "enum { leveldb_no_compression = 0, leveldb_snappy_compression = 1 };",
        "",
    );
    assert_ne!(without_enum, header, "the compression enum was not found");
    std::fs::write(copy_dir.join("c.h"), without_enum).unwrap();
    let both = work.path().join("both.c");
    std::fs::write(
        &both,
        "#include <leveldb/c.h>\n#undef STORAGE_LEVELDB_INCLUDE_C_H_\n#include <shale/c.h>\n\
         int main(void) { return leveldb_snappy_compression != 1; }\n",
    )
    .unwrap();
    run(Command::new(cc())
        .args(["-std=c11", "-Wall", "-Werror", "-c", "-o"])
        .arg(work.path().join("both.o"))
        .arg(format!("-I{}", work.path().join("copy").display()))
        .arg(&both));

    // The stand-in exports exactly LevelDB's functions.
    let prefix = work.path().join("prefix");
    install(&prefix);
    let standin = exported_functions(&prefix.join("lib/shale-leveldb/libleveldb.so.1"));
    assert_eq!(standin, leveldb);
    let real = exported_functions(Path::new("/usr/lib/x86_64-linux-gnu/libleveldb.so.1d"));
    let real_c: BTreeSet<String> = real
        .into_iter()
        .filter(|s| s.starts_with("leveldb_"))
        .collect();
    if !real_c.is_empty() {
        assert_eq!(standin, real_c);
    }
    let soname = stdout(&run(Command::new("objdump")
        .arg("-p")
        .arg(prefix.join("lib/shale-leveldb/libleveldb.so.1"))));
    assert!(
        soname.contains("SONAME               libleveldb.so.1"),
        "{soname}"
    );
}

#[test]
fn readme_example_builds_with_pkg_config() {
    let work = tempfile::tempdir().unwrap();
    let prefix = work.path().join("prefix");
    install(&prefix);
    let pc_dir = prefix.join("lib/pkgconfig");
    let flags = stdout(&run(Command::new("pkg-config")
        .args(["--cflags", "--libs", "shale"])
        .env("PKG_CONFIG_PATH", &pc_dir)));
    let example = work.path().join("example.c");
    std::fs::write(&example, readme_example()).unwrap();
    let exe = work.path().join("example");
    let mut cmd = Command::new(cc());
    cmd.args(["-std=c99", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&example)
        .args(flags.split_whitespace())
        .arg(format!("-Wl,-rpath,{}", prefix.join("lib").display()));
    run(&mut cmd);
    let db = work.path().join("exampledb");
    let out = stdout(&run(Command::new(&exe).arg(&db)));
    assert!(out.contains("hello = world"), "{out}");
    assert!(out.contains("running on shale 0.1.0"), "{out}");
}

/// The C example in README.md's "Using Shale from C" section.
fn readme_example() -> String {
    let readme = std::fs::read_to_string(crate_dir().join("../../README.md")).unwrap();
    let section = readme
        .split("## Using Shale from C")
        .nth(1)
        .expect("README.md has a section \"Using Shale from C\"");
    let start = section.find("```c\n").expect("a ```c block") + 5;
    let end = section[start..].find("```").expect("the end of the block") + start;
    section[start..end].to_string()
}

/// The suite under Valgrind (memcheck), which also sees the Rust side's
/// memory accesses. About a minute on a debug build, so not run by default:
/// `cargo test -p shale-c --test c_api -- --ignored`.
#[test]
#[ignore]
fn c_suite_under_valgrind() {
    let work = tempfile::tempdir().unwrap();
    let exe = work.path().join("api_test_valgrind");
    build_on_shale(&cc(), "api_test.c", &exe, &[]);
    let dir = tempfile::tempdir().unwrap();
    let out = run(Command::new("valgrind")
        .args([
            "--error-exitcode=3",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
        ])
        .arg(&exe)
        .arg(dir.path()));
    assert!(stdout(&out).contains("checks passed on Shale"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ERROR SUMMARY: 0 errors"), "{stderr}");
}
