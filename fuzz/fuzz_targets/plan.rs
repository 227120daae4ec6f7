//! cargo-fuzz target `plan`: see `ferry_fuzz::plan` (fuzz/src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::plan(data));
