//! Fuzz target `coding`: see `shale::internals::fuzzing::coding`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::internals::fuzzing::coding(data));
