//! cargo-fuzz target `task_metadata`: see `ferry_fuzz::task_metadata` (fuzz/src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::task_metadata(data));
