//! Runtime values of the Puppet language and their data types: [`value`]
//! (the `Value` enum, equality, comparison, size bounds), [`types`]
//! (`PType`: parsing from type expressions, instance checks, inference and
//! Puppet's formatting and mismatch messages), [`convert`] (`Type.new`),
//! [`plan`] (Bolt's plan data types), [`semver`], [`time`] (Timespan/Timestamp), [`strftime`] (their formats), [`rich`] (Deferred and the
//! other rich-data values), [`regex`] and [`error`] (`ValueError`, their
//! typed error). Depends only on
//! [`crate::lang::error`]: nothing here evaluates code.

pub mod convert;
pub mod error;
pub mod hocon;
pub mod plan;
pub mod regex;
pub mod rich;
pub mod semver;
pub mod strftime;
pub mod time;
pub mod types;
pub mod value;
