//! The Puppet language (Puppet 4+ syntax and semantics), in layers that
//! only depend downwards:
//!
//! - [`syntax`]: lexer, parser and AST;
//! - [`values`]: runtime values, data types (with inference and
//!   formatting), SemVer, Timespan/Timestamp, rich data, regexes;
//! - [`eval`]: the evaluator that builds a catalog (scopes, expressions,
//!   operators, calls, resources, classes, collectors);
//! - [`template`] (EPP and the ERB interpreter) and [`hiera`] (hiera 5
//!   lookup), which use the evaluator;
//! - [`functions`]: the built-in functions, a registry the evaluator calls
//!   through the [`eval::Library`] trait.
//!
//! [`error`] and [`loader`] are shared by all layers; everything reads files
//! only through [`loader::Loader`]. [`parsed`] keeps what templates and hiera
//! data parse to, for the process.

pub mod error;
pub mod eval;
pub mod functions;
pub mod hiera;
pub mod loader;
pub mod modulepath;
pub mod parsed;
pub mod syntax;
pub mod template;
pub mod values;
