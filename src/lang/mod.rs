//! The Puppet language (Puppet 4+ syntax and semantics): lexer, parser, AST,
//! runtime values and data types, the evaluator that builds a catalog, the
//! built-in functions, hiera 5 lookup and templates. Everything reads files
//! only through [`loader::Loader`].

pub mod ast;
pub mod builtin_types;
pub mod erb_collections;
pub mod erb_eval;
pub mod erb_lex;
pub mod erb_methods;
pub mod erb_parse;
pub mod erb_value;
pub mod error;
pub mod eval;
mod eval_call;
mod eval_class;
pub mod eval_finish;
pub mod eval_ops;
pub mod eval_res;
pub mod functions;
pub mod functions_conv;
pub mod functions_data;
mod functions_iter;
pub mod functions_native;
mod hiera;
pub mod lexer;
pub mod loader;
pub mod parser;
mod parser_forms;
mod puppet_regex;
pub mod rich;
pub mod semver;
pub mod template;
pub mod time;
pub mod types;
mod types_fmt;
pub mod value;
