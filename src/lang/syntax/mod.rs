//! Puppet language syntax: the [`lexer`] (tokens with exact line and
//! column, strings, heredocs and interpolation), the [`parser`] and the
//! [`ast`] it builds, and [`render`], the AST as S-expressions. Depends on
//! nothing in `lang` but [`crate::lang::error`].

pub mod ast;
pub mod lexer;
pub mod parser;
pub mod render;

/// Maximum nesting depth of expressions (and of string interpolations)
/// in manifests and templates before the parser gives up. They are parsed
/// on the compiler's own thread, whose stack (64 MiB) holds this depth of
/// the costliest nesting many times over.
pub const MAX_DEPTH: usize = 400;

/// Maximum nesting depth of a data type string (a task's or a plan's
/// parameter type), parsed and evaluated on the caller's thread, whose
/// stack may be as small as a tokio worker's (2 MiB).
pub const MAX_TYPE_DEPTH: usize = 64;
