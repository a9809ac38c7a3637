//! Fuzz target `coding`: see `shale::fuzzing::coding`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::fuzzing::coding(data));
