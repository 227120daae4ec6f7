//! Deeply nested input must end in a clear error, never in a stack
//! overflow (which aborts the whole process, a server and its running jobs
//! with it). Every parser that input reaches outside the compiler's own big
//! stack is run here on a thread with 2 MiB of stack, the size of a test
//! thread and of a tokio worker: the Puppet language parser (as used for
//! task parameter types), ERB templates, task parameter types and values,
//! and task output.

use serde_json::Value;

/// The stack of a tokio worker thread and of a test thread.
const SMALL_STACK: usize = 2 * 1024 * 1024;

/// Runs `f` on a thread with a 2 MiB stack. A stack overflow aborts the
/// test binary, which is how these tests fail.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no panic")
}

const N: usize = 100_000;

/// Hostile Puppet code: each nests one construct `N` deep.
fn deep_puppet() -> Vec<(&'static str, String)> {
    vec![
        ("parens", format!("{}1{}", "(".repeat(N), ")".repeat(N))),
        ("open parens", "(".repeat(N)),
        ("arrays", format!("{}1{}", "[".repeat(N), "]".repeat(N))),
        (
            "hashes",
            format!("{}1{}", "{a => ".repeat(N), "}".repeat(N)),
        ),
        ("not", format!("{}true", "!".repeat(N))),
        ("minus", format!("{}1", "-".repeat(N))),
        ("splat", format!("{}[1]", "*".repeat(N))),
        ("interpolation", "\"${".repeat(N)),
        (
            "closed interpolation",
            format!("{}x{}", "\"${".repeat(N), "}\"".repeat(N)),
        ),
        (
            "heredoc interpolation",
            format!(
                "$x = @(\"E\")\n${{{}x{}}}\nE\n",
                "\"${".repeat(N),
                "}\"".repeat(N)
            ),
        ),
        ("binary chain", format!("$x = 1{}", " + 1".repeat(N))),
        ("and chain", format!("$x = true{}", " and true".repeat(N))),
        (
            "relationship chain",
            format!("Notify[a]{}", " -> Notify[a]".repeat(N)),
        ),
        ("method chain", format!("$x = [1]{}", ".flatten".repeat(N))),
        ("access chain", format!("$x = [1]{}", "[0]".repeat(N))),
        (
            "type access chain",
            format!("$x = Array{}", "[Integer]".repeat(N)),
        ),
        ("access", format!("$x{}", "[1".repeat(N))),
        (
            "types",
            format!("{}Integer{}", "Array[".repeat(N), "]".repeat(N)),
        ),
        ("if", format!("{}{}", "if true { ".repeat(N), "}".repeat(N))),
        ("selector", format!("{}1", "$x ? { 1 => ".repeat(N))),
        ("lambda", format!("{}1", "$x.map |$y| { ".repeat(N))),
        ("calls", format!("{}1{}", "f(".repeat(N), ")".repeat(N))),
        ("assignment", format!("{}1", "$a = ".repeat(N))),
        ("binary right", format!("1{}", " + (1".repeat(N))),
    ]
}

fn compile_code(code: &str) -> Result<(), String> {
    let req = ferry::catalog::CompileRequest {
        manifest: ferry::catalog::ManifestSource::Code(code.to_string()),
        modulepath: Default::default(),
        facts: serde_json::Map::new(),
        node: "n".into(),
        environment: None,
    };
    ferry::catalog::compile(&req)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Manifests and templates are parsed and evaluated only on the compiler's
/// own thread (64 MiB of stack); nested without end, each stops at a limit.
#[test]
fn puppet_code_nested_without_end_is_an_error() {
    for (what, code) in deep_puppet() {
        let err = compile_code(&code).expect_err(what);
        assert!(
            err.contains("too deep") || err.contains("Syntax error"),
            "{what}: {err:.200}"
        );
        assert!(!err.contains("panicked"), "{what}: {err:.200}");
    }
}

#[test]
fn nesting_limit_errors_name_the_limit_and_place() {
    let code = format!("$x = 1\n$y = {}1{}", "(".repeat(N), ")".repeat(N));
    let err = compile_code(&code).expect_err("too deep");
    assert!(
        err.contains("Expression nesting is too deep (the limit is 400 levels)")
            && err.contains("line: 2"),
        "{err:.300}"
    );
    let code = format!("$y = {}x{}", "\"${".repeat(N), "}\"".repeat(N));
    let err = compile_code(&code).expect_err("too deep");
    assert!(
        err.contains("Interpolation nesting is too deep (the limit is 400 levels)"),
        "{err:.300}"
    );
}

/// As deep as the limit allows still works: real code is far shallower.
#[test]
fn nesting_within_the_limit_compiles() {
    let d = 150;
    for code in [
        format!("$x = {}1{}", "(".repeat(d), ")".repeat(d)),
        format!("$x = {}1{}", "[".repeat(d), "]".repeat(d)),
        format!("$x = {}1{}", "{a => ".repeat(d), "}".repeat(d)),
        format!("{}notice(1){}", "if true { ".repeat(d), "}".repeat(d)),
    ] {
        compile_code(&code).unwrap_or_else(|e| panic!("{:.40}: {e:.300}", code));
    }
}

#[test]
fn erb_nested_without_end_is_an_error() {
    let bodies = [
        format!("{}1{}", "(".repeat(N), ")".repeat(N)),
        format!("{}1", "[".repeat(N)),
        format!("{}1", "{a => ".repeat(N)),
        format!("{}x", "!".repeat(N)),
        format!("{}x", "-".repeat(N)),
        format!("{}x", "not ".repeat(N)),
        "\"#{".repeat(N),
        format!("{}1{}", "\"#{".repeat(300), "}\"".repeat(300)),
        format!("{}1", "x ? ".repeat(N)),
        format!("{}1", "a = ".repeat(N)),
        format!("{}1", "x.y { ".repeat(N)),
        format!("1{}", " + 1".repeat(N)),
        format!("1{}", " && 1".repeat(N)),
        format!("1{}", " || 1".repeat(N)),
        format!("x{}", ".y".repeat(N)),
        format!("x{}", "[0]".repeat(N)),
        format!("x{}", " and x".repeat(N)),
    ];
    for body in bodies {
        let what = body.chars().take(12).collect::<String>();
        let code = format!("$x = inline_template('<%= {body} %>')");
        let err = compile_code(&code).expect_err(&what);
        assert!(!err.contains("panicked"), "{what}: {err:.200}");
    }
    for code in [
        format!("$x = inline_template('{}')", "<% if true %>".repeat(N)),
        format!("$x = inline_template('<% 1{} %>')", " if true".repeat(N)),
    ] {
        let err = compile_code(&code).expect_err("too deep");
        assert!(!err.contains("panicked"), "{err:.200}");
    }
    let err = compile_code(&format!(
        "$x = inline_template('<%= {}1 %>')",
        "[".repeat(N)
    ))
    .expect_err("too deep");
    assert!(
        err.contains("template code nested too deeply (the limit is 200 levels)"),
        "{err:.300}"
    );
}

/// Type strings (task metadata, plan parameters: from a request's task
/// metadata too) are parsed and evaluated on the caller's thread.
#[test]
fn parameter_types_bound_depth_on_a_small_stack() {
    let deep = 10_000;
    let types = [
        format!("{}Integer{}", "Array[".repeat(deep), "]".repeat(deep)),
        "Array[".repeat(deep),
        format!("{}Integer{}", "Optional[".repeat(deep), "]".repeat(deep)),
        format!("Struct[{{{}}}]", "a => Struct[{".repeat(deep)),
        format!("{}Integer{}", "Variant[".repeat(deep), "]".repeat(deep)),
        format!("Enum[{}a{}]", "[".repeat(deep), "]".repeat(deep)),
        format!("Pattern[{}]", "\"${".repeat(deep)),
        format!("Integer[{}1]", "-".repeat(deep)),
    ];
    for ty in types {
        let what = ty.chars().take(16).collect::<String>();
        let err = on_small_stack(move || {
            ferry::task::params::check_type(&ty, &Value::from(1))
                .err()
                .map(|e| e.to_string())
        });
        let err = err.unwrap_or_else(|| panic!("{what}: deep type accepted"));
        assert!(err.contains("invalid type"), "{what}: {err:.300}");
    }
    let err = on_small_stack(|| {
        let ty = format!("{}Integer{}", "Array[".repeat(100), "]".repeat(100));
        ferry::task::params::check_type(&ty, &Value::from(1))
            .err()
            .map(|e| e.to_string())
    });
    assert!(
        err.is_some_and(|e| e.contains("nesting is too deep (the limit is 64 levels)")),
        "the limit is named"
    );
}

/// A type string is type syntax only: nothing in it runs (a template, a
/// lambda), so nothing reaches the compiler's deeper limits on a small stack.
#[test]
fn parameter_types_are_type_syntax_only() {
    let deep = 5_000;
    for ty in [
        format!("inline_template('<%= {}1 %>')", "[".repeat(deep)),
        format!("inline_epp('<%= {}1 %>')", "[".repeat(deep)),
        "[1].map |$x| { $x }".to_string(),
        "$x".to_string(),
        "Array[String] + Array[String]".to_string(),
        "Pattern[\"${1}\"]".to_string(),
    ] {
        let what = ty.chars().take(20).collect::<String>();
        let err = on_small_stack(move || {
            ferry::task::params::check_type(&ty, &Value::from(1))
                .err()
                .map(|e| e.to_string())
        });
        let err = err.unwrap_or_else(|| panic!("{what}: accepted"));
        assert!(err.contains("invalid type"), "{what}: {err:.300}");
    }
    // Everything Bolt's metadata uses still parses.
    for (ty, value) in [
        ("Optional[String[1]]", Value::from("x")),
        ("Enum[present, 'absent']", Value::from("present")),
        ("Integer[-1, default]", Value::from(3)),
        ("Pattern[/^a+$/, 'b']", Value::from("aa")),
        (
            "Hash[String, Array[Integer]]",
            serde_json::json!({"a": [1]}),
        ),
        (
            "Struct[{name => String, Optional[port] => Integer[1, 65535]}]",
            serde_json::json!({"name": "x", "port": 22}),
        ),
        (
            "Variant[Boolean, Tuple[Float, Undef]]",
            serde_json::json!([1.5, null]),
        ),
        ("Stdlib::Absolutepath", Value::from("/etc")),
    ] {
        assert_eq!(ferry::task::params::check_type(ty, &value), Ok(()), "{ty}");
    }
}

/// Types and values as deep as the limits allow still check (and drop)
/// on a small stack.
#[test]
fn deep_types_within_the_limits_check_on_a_small_stack() {
    let depth = 60;
    let ty = format!("{}Integer{}", "Array[".repeat(depth), "]".repeat(depth));
    let value: Value =
        serde_json::from_str(&format!("{}1{}", "[".repeat(depth), "]".repeat(depth)))
            .expect("within serde_json's limit");
    let wrong: Value =
        serde_json::from_str(&format!("{}\"x\"{}", "[".repeat(depth), "]".repeat(depth)))
            .expect("within serde_json's limit");
    let (ok, bad) = on_small_stack(move || {
        (
            ferry::task::params::check_type(&ty, &value),
            ferry::task::params::check_type(&ty, &wrong),
        )
    });
    assert_eq!(ok, Ok(()));
    assert!(bad.is_err());
}

#[test]
fn json_input_stays_within_serde_jsons_recursion_limit() {
    // The limit (128) is what bounds every recursive walk over parsed
    // JSON values in ferry; nothing may turn it off.
    let deep = format!("{}1{}", "[".repeat(N), "]".repeat(N));
    assert!(serde_json::from_str::<Value>(&deep).is_err());
    assert!(serde_json::from_slice::<Value>(deep.as_bytes()).is_err());
    let params = format!("{{\"a\": {deep}}}");
    let err = on_small_stack(move || ferry::task::params::parse_params_option(&params).err());
    assert!(err.is_some(), "deep --params accepted");
    let words = vec![format!("a={deep}")];
    let parsed = on_small_stack(move || ferry::task::params::parse_assignments(&words));
    // Not JSON within the limit: kept as the string it is.
    assert!(matches!(&parsed.expect("parses")["a"], Value::String(_)));
}

#[test]
fn deep_task_output_is_text_not_a_crash() {
    // What a hostile target prints is input too.
    let deep = format!("{{\"a\": {}1{}}}", "[".repeat(N), "]".repeat(N));
    let (status, value) = on_small_stack(move || {
        ferry::run::actions::task::output::result(0, &deep, "", &["secret".to_string()])
    });
    assert_eq!(status, ferry::run::result::Status::Success);
    assert!(value["_output"].is_string(), "{:.80}", value.to_string());
    // As deep as the parser allows: a value, redacted, serialized, dropped.
    let depth = 120;
    let near = format!(
        "{{\"a\": {}\"secret\"{}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let text = on_small_stack(move || {
        let (_, value) =
            ferry::run::actions::task::output::result(0, &near, "", &["secret".to_string()]);
        value.to_string()
    });
    assert!(text.contains("[redacted]") && !text.contains("secret"));
}

/// Values and types nested by a loop at run time, not by the text, stop
/// at the value depth limit, promptly.
#[test]
fn values_nested_at_run_time_are_bounded() {
    let codes = [
        "$x = range(1, 100000).reduce([]) |$m, $i| { [$m] } notice(1)",
        "$x = range(1, 100000).reduce({}) |$m, $i| { {a => $m} } notice($x)",
        "$x = range(1, 100000).reduce(Integer) |$m, $i| { Array[$m] } notice(1)",
        "$x = range(1, 100000).reduce(Integer) |$m, $i| { Optional[$m] } notice($x)",
        "$x = range(1, 100000).reduce(1) |$m, $i| { Sensitive($m) } notice(1)",
        "$x = range(1, 100000).reduce(1) |$m, $i| { Deferred('f', [$m]) } notice(1)",
        "$x = range(1, 100000).reduce([]) |$m, $i| { [$m] } notify { 'x': message => $x }",
        "$x = inline_template('<% a = [] %><% 100000.times { a = [a] } %><%= a.size %>')",
        "$x = inline_template('<% a = {} %><% 100000.times { a = {1 => a} } %><%= a.size %>')",
    ];
    for code in codes {
        let started = std::time::Instant::now();
        let err = compile_code(code).expect_err(code);
        assert!(
            err.contains("nested too deeply (more than 256 levels)"),
            "{code}: {err:.300}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{code}: {:?}",
            started.elapsed()
        );
    }
    // Just within the limit: built, compared, printed into the catalog.
    let code = "$x = range(1, 250).reduce([]) |$m, $i| { [$m] } \
                notify { 'x': message => $x == $x }";
    compile_code(code).expect("within the limit");
}
