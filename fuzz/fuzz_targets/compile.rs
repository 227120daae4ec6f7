//! cargo-fuzz target `compile`: see `ferry_fuzz::compile` (fuzz/src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::compile(data));
