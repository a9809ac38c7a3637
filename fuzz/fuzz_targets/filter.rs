//! Fuzz target `filter`: see `shale::internals::fuzzing::filter`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::internals::fuzzing::filter(data));
