//! Links the system LevelDB library (Debian's `libleveldb-dev`) whose C API
//! the compatibility tests drive.

fn main() {
    println!("cargo:rustc-link-lib=leveldb");
    println!("cargo:rerun-if-changed=build.rs");
}
