//! The server's inventory (`inventory:` in its config): read at start-up
//! and again for each plan job. Its `_plugin` references may be the
//! built-in ones that run nothing (`env_var`, `yaml`, `puppetdb`); a
//! reference to a plugin that runs code (`task`, a module plugin,
//! `prompt`, which asks on a terminal, or `pkcs7`, which reads a project's
//! keys) is refused at start-up, naming the file, line, column and plugin:
//! the server would run it again for every plan job.

use std::path::Path;

use crate::inventory::plugin::{Env, PluginError};
use crate::inventory::{Inventory, InventoryError};

/// The server's plugin environment: process variables, no plugins that
/// run anything.
struct ServeEnv;

impl Env for ServeEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn plugin(
        &self,
        name: &str,
        _params: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<Result<serde_json::Value, PluginError>> {
        Some(Err(PluginError::Invalid {
            plugin: name.to_string(),
            message: "ferry serve does not run plugins that run code or ask (task, prompt, pkcs7 and module plugins) to read its inventory, which it reads again for every plan job; use env_var, yaml or puppetdb references, or resolve the inventory once with `ferry inventory show --detail --format json` and give the server the values".into(),
        }))
    }
}

/// Reads the server's inventory.
pub fn load(path: &Path) -> Result<Inventory, InventoryError> {
    Inventory::load_with(path, &ServeEnv)
}
