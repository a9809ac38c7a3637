//! Fuzz target `version_edit`: see `shale::fuzzing::version_edit`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::fuzzing::version_edit(data));
