//! Node classification, as Puppet Enterprise's node classifier and
//! Puppet's node indirection do it: node groups in PE's format (`group`:
//! the groups and their tree; `rule`: the rule grammar), classifying a
//! node against them (`classify`: inheritance down the tree, the most
//! specific groups, environment trumping, conflicts naming the groups),
//! pinning nodes to a group through its rule (`pin`), the groups file
//! and its atomic changes (`store`), the node termini
//! `plain`, `classifier` and `exec` behind one small trait (`terminus`),
//! and a classification as the Puppet code a compile starts and ends with
//! (`code`). Pure but for `store` (the groups file) and the `exec`
//! terminus (a program); the HTTP side is `server::api::classifier` and
//! the Puppet agent endpoints in `server::api::puppet`.

pub mod classify;
pub mod code;
pub mod group;
pub mod pin;
pub mod rule;
pub mod store;
pub mod terminus;

pub use classify::{Classification, Conflict, NodeEnvironment};
pub use group::{Group, GroupError, GroupSet};
pub use store::GroupStore;
pub use terminus::{NodeError, NodeRequest, NodeTerminus};
