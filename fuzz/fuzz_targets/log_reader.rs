//! Fuzz target `log_reader`: see `shale::fuzzing::log_reader`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::fuzzing::log_reader(data));
