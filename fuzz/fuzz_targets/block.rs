//! Fuzz target `block`: see `shale::internals::fuzzing::block`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::internals::fuzzing::block(data));
