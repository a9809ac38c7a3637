//! libsnappy through its C API (`snappy-c.h`), the compressor LevelDB and
//! RocksDB link (`libleveldb.so` and `librocksdb.so` both load
//! `libsnappy.so.1`) and WiredTiger's snappy extension calls. Built only when
//! `build.rs` found the library (cfg `have_snappy`).
//!
//! `snappy_compress` and `snappy_uncompress` wrap `snappy::RawCompress` and
//! `snappy::RawUncompress`, the functions LevelDB's db_bench times (through
//! `port::Snappy_Compress` / `Snappy_Uncompress`); the wrappers add a length
//! check each. The compressor here does what LevelDB's
//! `port::Snappy_Compress` does with its `std::string`: grow the output to
//! the largest encoding, compress, shrink it to the encoded length.

use std::os::raw::{c_char, c_int};

use crate::engine::{Snappy, SnappyCompressor};

mod ffi {
    use std::os::raw::{c_char, c_int};

    /// `snappy_status`: `SNAPPY_OK`.
    pub const SNAPPY_OK: c_int = 0;

    extern "C" {
        pub fn snappy_compress(
            input: *const c_char,
            input_length: usize,
            compressed: *mut c_char,
            compressed_length: *mut usize,
        ) -> c_int;
        pub fn snappy_uncompress(
            compressed: *const c_char,
            compressed_length: usize,
            uncompressed: *mut c_char,
            uncompressed_length: *mut usize,
        ) -> c_int;
        pub fn snappy_max_compressed_length(source_length: usize) -> usize;
    }
}

/// The library's version, from pkg-config at build time.
pub const VERSION: &str = env!("SHALE_BENCH_SNAPPY_PKG_VERSION");

/// libsnappy as the snappy codec of an engine that links it; `how` says how
/// the engine reaches it, for the settings.
pub fn snappy(how: &str) -> Snappy {
    Snappy {
        implementation: format!(
            "libsnappy {VERSION} (snappy_compress / snappy_uncompress, wrapping snappy::RawCompress / RawUncompress{how})"
        ),
        compressor: || Box::new(LibSnappy),
        uncompress,
    }
}

/// libsnappy's compressor (it keeps no state between calls).
struct LibSnappy;

impl SnappyCompressor for LibSnappy {
    fn compress(&mut self, input: &[u8], output: &mut Vec<u8>) -> Option<usize> {
        // SAFETY: a pure function of its argument.
        let max = unsafe { ffi::snappy_max_compressed_length(input.len()) };
        output.resize(max, 0);
        let mut n = output.len();
        // SAFETY: `input` is readable for its length and `output` writable
        // for `n` bytes, which libsnappy checks is enough for any encoding
        // of `input`; it writes the encoded length to `n`.
        let rc = unsafe {
            ffi::snappy_compress(
                input.as_ptr().cast::<c_char>(),
                input.len(),
                output.as_mut_ptr().cast::<c_char>(),
                &mut n,
            )
        };
        if rc != ffi::SNAPPY_OK || n > output.len() {
            return None;
        }
        output.truncate(n);
        Some(n)
    }
}

fn uncompress(input: &[u8], output: &mut [u8]) -> bool {
    let mut n = output.len();
    // SAFETY: `input` is readable and `output` writable for their lengths;
    // libsnappy reads the encoded length first and fails, writing nothing,
    // if it exceeds `n` or the input is malformed.
    let rc: c_int = unsafe {
        ffi::snappy_uncompress(
            input.as_ptr().cast::<c_char>(),
            input.len(),
            output.as_mut_ptr().cast::<c_char>(),
            &mut n,
        )
    };
    rc == ffi::SNAPPY_OK && n == output.len()
}
