//! cargo-fuzz target `parse`: see `ferry_fuzz::parse` (fuzz/src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::parse(data));
