//! Fuzz target `version_edit`: see `shale::internals::fuzzing::version_edit`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shale::internals::fuzzing::version_edit(data));
