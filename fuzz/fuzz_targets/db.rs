//! Fuzz target `db`: see `shale::fuzzing::db`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::fuzzing::db(data));
