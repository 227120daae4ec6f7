//! The built-in functions.

pub mod catalog;
pub mod data;
mod iteration;
pub mod native;
pub mod strings;
