//! Fuzz target `block`: see `shale::fuzzing::block`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::fuzzing::block(data));
