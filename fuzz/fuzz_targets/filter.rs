//! Fuzz target `filter`: see `shale::fuzzing::filter`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::fuzzing::filter(data));
