//! cargo-fuzz target `template`: see `ferry_fuzz::template` (fuzz/src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::template(data));
