//! Gives `libshale_c.so` its soname, so programs linked with `-lshale_c`
//! record `libshale_c.so` as needed (the libleveldb stand-in gets its own
//! soname when it is linked from the static library; see
//! `scripts/install-c.sh`).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libshale_c.so");
    }
}
