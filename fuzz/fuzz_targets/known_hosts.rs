//! cargo-fuzz target `known_hosts`: see `ferry_fuzz::known_hosts` (fuzz/src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::known_hosts(data));
