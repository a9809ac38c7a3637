//! Fuzz target `log_reader`: see `shale::internals::fuzzing::log_reader`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::internals::fuzzing::log_reader(data));
