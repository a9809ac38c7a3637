//! Fuzz target `db`: see `shale::internals::fuzzing::db`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::internals::fuzzing::db(data));
