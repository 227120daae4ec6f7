//! cargo-fuzz target `pql`: see `ferry_fuzz::pql` (fuzz/src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::pql(data));
