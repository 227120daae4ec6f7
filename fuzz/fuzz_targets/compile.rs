//! Fuzz the whole compiler on inline code (no modules, no facts): any input
//! must yield a catalog or a compile error, never a panic or a hang.
#![no_main]

use ferry::catalog::{CompileRequest, ManifestSource, compile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        let req = CompileRequest {
            manifest: ManifestSource::Code(src.to_string()),
            modulepath: Vec::new(),
            facts: serde_json::Map::new(),
            node: "fuzz".into(),
            environment: None,
        };
        let _ = compile(&req);
    }
});
