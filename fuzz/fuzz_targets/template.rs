//! Fuzz the template engines: the input is rendered both as an ERB template
//! (ferry's Ruby-subset interpreter) and as an EPP template, with a few
//! variables of every kind in scope. Any input must render or fail with an
//! error, never panic or hang.
#![no_main]

use ferry::catalog::{CompileRequest, ManifestSource, compile};
use libfuzzer_sys::fuzz_target;

const VARS: &str = "$s = 'str' $n = 7 $f = 2.5 $a = ['b', 'a', 1, [2]] \
    $h = {'k' => 'v', 'n' => {'x' => true}} $u = undef $t = true\n";

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        let quoted = src.replace('\\', "\\\\").replace('\'', "\\'");
        for f in ["inline_template", "inline_epp"] {
            let req = CompileRequest {
                manifest: ManifestSource::Code(format!("{VARS}$r = {f}('{quoted}')")),
                modulepath: Vec::new(),
                facts: serde_json::Map::new(),
                node: "fuzz".into(),
                environment: None,
            };
            let _ = compile(&req);
        }
    }
});
