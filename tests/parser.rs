//! Data-driven parser cases: `tests/parser/NAME.pp` is parsed and its AST
//! rendering (`ferry::lang::syntax::render`, one statement per line with
//! its line:column) or its error (`error LINE:COLUMN: message`) must equal
//! `tests/parser/NAME.out`. Each case is its own test, selectable by name
//! (`cargo test --test parser heredoc`). `FERRY_BLESS=1` writes the `.out`
//! files from the current parser instead of comparing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ferry::lang::syntax::{parser, render};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/parser")
}

fn rendering(name: &str) -> String {
    let path = dir().join(format!("{name}.pp"));
    let src = std::fs::read_to_string(&path).expect("the case's .pp file");
    let file: Arc<str> = Arc::from(format!("{name}.pp"));
    match parser::parse(&src, &file) {
        Ok(stmts) => render::render(&stmts),
        Err(e) => match &e.loc {
            Some(l) => format!("error {}:{}: {}\n", l.line, l.col, e.message),
            None => format!("error: {}\n", e.message),
        },
    }
}

fn check(name: &str) {
    let got = rendering(name);
    let out = dir().join(format!("{name}.out"));
    if std::env::var_os("FERRY_BLESS").is_some() {
        std::fs::write(&out, &got).expect("write the .out file");
        return;
    }
    let want = std::fs::read_to_string(&out).expect("the case's .out file");
    assert_eq!(got, want, "parser case {name}");
}

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name));
            }
        )*

        /// Every `.pp` file in tests/parser is listed above (and only those).
        #[test]
        fn every_case_is_listed() {
            let listed = [$(stringify!($name)),*];
            let mut files: Vec<String> = std::fs::read_dir(dir())
                .expect("tests/parser")
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".pp")).map(str::to_string))
                .collect();
            files.sort();
            let mut listed: Vec<&str> = listed.to_vec();
            listed.sort();
            assert_eq!(files, listed);
        }
    };
}

cases!(
    access_and_destructuring,
    apply_block,
    arithmetic_precedence,
    case_statement,
    class_definition,
    defaults_overrides_collectors,
    define_definition,
    error_keyword_argument,
    error_method_call_trailing_comma,
    error_missing_operand,
    error_missing_value,
    error_unclosed_array,
    error_unclosed_brace,
    error_unclosed_if,
    error_unterminated_heredoc,
    error_unbraced_hash_in_statement_call,
    error_unbraced_hash_nested,
    error_unterminated_string,
    function_definition,
    heredoc,
    lambdas_and_method_calls,
    literals,
    logic_and_comparison,
    node_definition,
    plan_definition,
    relationships,
    resource_basic,
    resource_default_body,
    selector,
    splat_and_statement_calls,
    strings_and_interpolation,
    type_alias,
    unbraced_hash_arguments,
    unless_elsif,
    virtual_exported,
);
