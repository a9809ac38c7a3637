//! Fuzz target `write_batch`: see `shale::internals::fuzzing::write_batch`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::internals::fuzzing::write_batch(data));
