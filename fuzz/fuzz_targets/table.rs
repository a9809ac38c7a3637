//! Fuzz target `table`: see `shale::internals::fuzzing::table`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::internals::fuzzing::table(data));
