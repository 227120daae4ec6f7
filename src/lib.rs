//! ferry: an agentless executor that reaches hosts over SSH (and locally),
//! with nothing installed on them. See docs/ARCHITECTURE.md for the map.
//! The command line is not part of the library: it is the `ferry` binary
//! (src/main.rs and src/cli/).

pub mod apply;
pub mod catalog;
pub mod inventory;
pub mod lang;
pub mod output;
pub mod plan;
pub mod project;
pub mod query;
pub mod run;
pub mod secret;
pub mod server;
pub mod store;
pub mod task;
pub mod terminal;
pub mod transport;
pub mod yaml;
