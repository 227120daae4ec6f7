//! cargo-fuzz target `task_output`: see `ferry_fuzz::task_output` (fuzz/src/lib.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::task_output(data));
