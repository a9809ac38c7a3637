//! Fuzz target `blob_record`: see `shale::internals::fuzzing::blob_record`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::internals::fuzzing::blob_record(data));
