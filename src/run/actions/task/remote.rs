//! A remote task (Bolt's `remote: true` metadata) for a network device: it
//! runs on the device's proxy — ferry's own host through the local
//! transport, or the inventory target the device's `run-on` names — as the
//! task's remote instance (only `remote` implementations suit), with
//! `_target` holding the device's connection settings
//! ([`NetworkOptions::target_hash`]). Those reach the task as its other
//! parameters do (stdin or environment, never a command line), and their
//! secrets are masked in whatever it prints. The result is the device's,
//! as in Bolt. A proxy is a plain target: a device cannot be one.
//!
//! [`NetworkOptions::target_hash`]: crate::transport::network::options::NetworkOptions::target_hash

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::inventory::{Inventory, Target};
use crate::run::events::Sink;
use crate::run::result::Outcome;
use crate::task::Prepared;
use crate::transport::network::Network;
use crate::transport::{self, Overrides, TransportError};

/// The proxy a device without `run-on` uses: ferry's own host.
pub const LOCALHOST: &str = "localhost";

/// The name of the proxy `target` names with `network.run-on`, if it is a
/// device at all (`localhost` when it names none).
fn run_on(target: &Target) -> Option<String> {
    if target.transport() != "network" {
        return None;
    }
    let named = target
        .config
        .section("network")
        .find(|(k, _)| *k == "run-on")
        .and_then(|(_, s)| s.value.as_str().map(str::to_string))
        .filter(|s| !s.is_empty());
    Some(named.unwrap_or_else(|| LOCALHOST.to_string()))
}

/// The proxies the device targets among `targets` run remote tasks on, by
/// the name their `run-on` gives, looked up in `inventory`: each must be
/// exactly one target, and not a device itself (Bolt's
/// `bolt/invalid-remote-target`).
pub fn proxies(
    inventory: &Inventory,
    targets: &[Target],
) -> Result<BTreeMap<String, Target>, TransportError> {
    let mut out = BTreeMap::new();
    for target in targets {
        let Some(name) = run_on(target) else { continue };
        if out.contains_key(&name) {
            continue;
        }
        let found = inventory.select(&name).map_err(|e| {
            TransportError::Config(format!("{}: network.run-on '{name}': {e}", target.name))
        })?;
        let proxy = match found.as_slice() {
            [one] => one.clone(),
            _ => {
                return Err(TransportError::Config(format!(
                    "{}: network.run-on '{name}' names {} targets; it must name one",
                    target.name,
                    found.len()
                )));
            }
        };
        check_proxy(target, &proxy)?;
        out.insert(name, proxy);
    }
    Ok(out)
}

fn check_proxy(target: &Target, proxy: &Target) -> Result<(), TransportError> {
    if proxy.transport() == "network" {
        return Err(TransportError::Config(format!(
            "{}: {} is not a valid run-on target for {} since it is a network device too",
            target.name, proxy.name, target.name
        )));
    }
    Ok(())
}

/// Runs `prepared` for the device `dev` (the target `target`) on its proxy.
pub async fn run(
    target: &Target,
    dev: &Network,
    prepared: &Arc<Prepared>,
    sink: &dyn Sink,
    max_output: usize,
) -> Result<Outcome, TransportError> {
    let opts = dev.options();
    let name = opts.run_on.as_deref().unwrap_or(LOCALHOST);
    let proxy = match prepared.proxies.get(name) {
        Some(p) => p.clone(),
        None if name == LOCALHOST => Inventory::empty()
            .select(LOCALHOST)
            .ok()
            .and_then(|mut v| v.pop())
            .ok_or_else(|| TransportError::Config("localhost is not a target".into()))?,
        None => {
            return Err(TransportError::Config(format!(
                "{}: its run-on target '{name}' is not known here (run-on names a target of the inventory the run started with)",
                target.name
            )));
        }
    };
    check_proxy(target, &proxy)?;
    let (hash, secrets) = opts.target_hash(target);
    let mut remote = (**prepared).clone();
    remote.remote = true;
    remote
        .params
        .insert("_target".to_string(), Value::Object(hash));
    remote.secrets.extend(secrets);
    let mut t = transport::for_target(&proxy, &Overrides::default())?;
    t.connect().await?;
    // The proxy's connection and features; the device's name on events
    // and the result.
    let as_device = Target {
        name: target.name.clone(),
        ..proxy
    };
    let outcome = super::run(&as_device, t.as_ref(), &Arc::new(remote), sink, max_output).await;
    t.close().await;
    outcome
}
