//! Helpers shared by the integration tests.
//!
//! Every integration test binary includes this module with `mod common;`.
//! Each binary uses only part of it, so dead-code warnings are silenced here
//! once instead of in every test file.

#![allow(dead_code)]

pub mod ferry;
pub mod procs;
pub mod sshd;
