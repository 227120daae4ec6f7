//! What a running plan keeps between its steps: the inventory (groups can
//! grow with `add_to_group`), one shared [`TargetInfo`] per target so that
//! `set_var` and `add_facts` show through every `Target` value, the
//! futures `background` started, and whether default logging is off.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use crate::inventory::{Inventory, Target as InvTarget};
use crate::lang::values::plan::{Future, PlanObject, Target, TargetInfo, as_object};
use crate::lang::values::value::Value;

/// A target the plan named: its inventory entry and its shared info.
type Known = (InvTarget, Arc<RwLock<TargetInfo>>);

/// The plan's targets and inventory.
pub struct PlanState {
    pub inventory: Mutex<Inventory>,
    /// Every target a plan function named, by name.
    targets: Mutex<HashMap<String, Known>>,
    pub futures: Mutex<Vec<Future>>,
    /// Nesting depth of `without_default_logging` blocks.
    pub quiet: Mutex<usize>,
    next_future: Mutex<u64>,
}

/// Why a target specification names no usable target.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("{0}")]
    Select(#[from] crate::inventory::select::SelectError),
    #[error("a TargetSpec is a String, a Target or an Array of them, got {0}")]
    NotASpec(String),
}

fn info_of(t: &InvTarget) -> TargetInfo {
    let address = t.address().ok();
    let user = t
        .config
        .section("ssh")
        .find(|(k, _)| *k == "user")
        .and_then(|(_, s)| s.value.as_str().map(str::to_string))
        .or_else(|| address.as_ref().and_then(|a| a.user.clone()));
    let transport = t.transport();
    let config = match t.config.redacted_json().get(&transport) {
        Some(serde_json::Value::Object(m)) => m
            .iter()
            .map(|(k, v)| (Value::str(k.clone()), Value::from_json(v)))
            .collect(),
        _ => Vec::new(),
    };
    let hash = |m: &serde_json::Map<String, serde_json::Value>| {
        m.iter()
            .map(|(k, v)| (Value::str(k.clone()), Value::from_json(v)))
            .collect()
    };
    TargetInfo {
        uri: t.uri.clone(),
        host: Some(t.host()),
        port: address.as_ref().and_then(|a| a.port).map(i64::from),
        user,
        transport,
        config,
        vars: hash(&t.vars),
        facts: hash(&t.facts),
        features: t.features.iter().cloned().collect(),
        aliases: t.aliases.clone(),
        groups: t.groups.clone(),
    }
}

impl PlanState {
    pub fn new(inventory: Inventory) -> PlanState {
        PlanState {
            inventory: Mutex::new(inventory),
            targets: Mutex::new(HashMap::new()),
            futures: Mutex::new(Vec::new()),
            quiet: Mutex::new(0),
            next_future: Mutex::new(0),
        }
    }

    /// The `Target` value for an inventory target (registered on first use).
    fn register(&self, t: InvTarget) -> Target {
        let Ok(mut map) = self.targets.lock() else {
            return Target {
                name: t.name.clone(),
                info: Arc::new(RwLock::new(info_of(&t))),
            };
        };
        let name = t.name.clone();
        let info = map
            .entry(name.clone())
            .or_insert_with(|| {
                let info = Arc::new(RwLock::new(info_of(&t)));
                (t, info)
            })
            .1
            .clone();
        Target { name, info }
    }

    /// The targets a TargetSpec names, in order, each once.
    pub fn targets(&self, spec: &Value) -> Result<Vec<Target>, TargetError> {
        let mut out: Vec<Target> = Vec::new();
        self.collect(spec, &mut out, 0)?;
        Ok(out)
    }

    fn collect(
        &self,
        spec: &Value,
        out: &mut Vec<Target>,
        depth: usize,
    ) -> Result<(), TargetError> {
        let push = |t: Target, out: &mut Vec<Target>| {
            if !out.iter().any(|o| o.name == t.name) {
                out.push(t);
            }
        };
        match spec {
            Value::Str(s) => {
                let selected = match self.inventory.lock() {
                    Ok(inv) => inv.select(s)?,
                    Err(_) => Vec::new(),
                };
                for t in selected {
                    let t = self.register(t);
                    push(t, out);
                }
            }
            Value::Array(items) if depth < 32 => {
                for i in items {
                    self.collect(i, out, depth + 1)?;
                }
            }
            Value::Undef => {}
            other => match as_object(other) {
                Some(PlanObject::Target(t)) => push(t.clone(), out),
                _ => return Err(TargetError::NotASpec(other.type_name())),
            },
        }
        Ok(())
    }

    /// The inventory target behind a `Target` value, with the plan's
    /// changes to its vars, facts and features.
    pub fn inventory_target(&self, t: &Target) -> Option<InvTarget> {
        let map = self.targets.lock().ok()?;
        let (inv, info) = map.get(&t.name)?;
        let mut inv = inv.clone();
        if let Ok(info) = info.read() {
            let json = |h: &[(Value, Value)]| {
                h.iter()
                    .map(|(k, v)| (k.to_s(), v.to_json().unwrap_or(serde_json::Value::Null)))
                    .collect()
            };
            inv.vars = json(&info.vars);
            inv.facts = json(&info.facts);
            inv.features = info.features.iter().cloned().collect();
        }
        Some(inv)
    }

    /// Sets transport options (dotted keys: `ssh.user`, `transport`) of a
    /// target for the rest of the plan; its `Target` values see them.
    pub fn set_config(&self, t: &Target, settings: &[(String, serde_json::Value)]) {
        let Ok(mut map) = self.targets.lock() else {
            return;
        };
        let Some((inv, info)) = map.get_mut(&t.name) else {
            return;
        };
        for (k, v) in settings {
            inv.config.set(k, v.clone());
        }
        let fresh = info_of(inv);
        if let Ok(mut i) = info.write() {
            i.uri = fresh.uri;
            i.host = fresh.host;
            i.port = fresh.port;
            i.user = fresh.user;
            i.transport = fresh.transport;
            i.config = fresh.config;
        }
    }

    /// Adds targets to a group of the inventory (made if new).
    pub fn add_to_group(&self, targets: &[Target], group: &str) {
        if let Ok(mut inv) = self.inventory.lock() {
            let members = inv.groups.entry(group.to_string()).or_default();
            for t in targets {
                if !members.contains(&t.name) {
                    members.push(t.name.clone());
                }
                t.update(|i| {
                    if !i.groups.iter().any(|g| g == group) {
                        i.groups.push(group.to_string());
                    }
                });
            }
            // A target first named by URI joins the inventory's targets,
            // so that the group selects it.
            if let Ok(map) = self.targets.lock() {
                for t in targets {
                    if inv.target(&t.name).is_none()
                        && let Some((it, _)) = map.get(&t.name)
                    {
                        inv.targets.push(it.clone());
                    }
                }
            }
        }
    }

    pub fn quiet(&self) -> bool {
        self.quiet.lock().map(|q| *q > 0).unwrap_or(false)
    }

    /// A new future's id.
    pub fn future_id(&self) -> u64 {
        match self.next_future.lock() {
            Ok(mut n) => {
                *n += 1;
                *n
            }
            Err(_) => 0,
        }
    }
}
