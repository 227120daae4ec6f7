//! cargo-fuzz target `inventory`: see `ferry_fuzz::inventory` (fuzz/src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::inventory(data));
