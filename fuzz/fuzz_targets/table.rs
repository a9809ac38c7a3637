//! Fuzz target `table`: see `shale::fuzzing::table`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::fuzzing::table(data));
