//! cargo-fuzz target `api_body`: see `ferry_fuzz::api_body` (fuzz/src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::api_body(data));
