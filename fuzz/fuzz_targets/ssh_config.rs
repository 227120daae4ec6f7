//! cargo-fuzz target `ssh_config`: see `ferry_fuzz::ssh_config` (fuzz/src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::ssh_config(data));
