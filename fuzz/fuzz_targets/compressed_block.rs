//! Fuzz target `compressed_block`: see `shale::internals::fuzzing::compressed_block`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::internals::fuzzing::compressed_block(data));
