//! Fuzz the Puppet lexer and parser: any input must yield an AST or a
//! syntax error, never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        let file: std::sync::Arc<str> = std::sync::Arc::from("fuzz.pp");
        let _ = ferry::lang::parser::parse(src, &file);
    }
});
