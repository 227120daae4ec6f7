//! The inventory document as typed definitions: the top level and its nested
//! groups, each with config, facts, vars, features and target entries. Only
//! the shape is checked here (known keys, right types, a `name` on every
//! group); merging and cross-checks are [`super::resolve`]'s.

use super::node::{Node, Value, key_text};
use super::{InventoryError, Origin, Setting};

type Json = serde_json::Map<String, serde_json::Value>;

/// The config sections ferry accepts: the transports Bolt names, and
/// ferry's `network` (device CLIs).
pub const SECTIONS: &[&str] = &[
    "ssh", "local", "winrm", "remote", "docker", "pcp", "podman", "lxd", "jail", "choria",
    "network",
];

/// A group, or the top level of the file (named `all`).
#[derive(Clone, Debug)]
pub struct GroupDef {
    pub name: String,
    pub origin: Origin,
    pub config: Vec<(String, Setting)>,
    pub facts: Json,
    pub vars: Json,
    pub features: Vec<String>,
    /// Bolt's `plugin_hooks`: kept and shown, not used by ferry.
    pub plugin_hooks: Json,
    pub targets: Vec<Member>,
    pub groups: Vec<GroupDef>,
}

impl GroupDef {
    pub fn top(origin: Origin) -> GroupDef {
        GroupDef {
            name: "all".into(),
            origin,
            config: Vec::new(),
            facts: Json::new(),
            vars: Json::new(),
            features: Vec::new(),
            plugin_hooks: Json::new(),
            targets: Vec::new(),
            groups: Vec::new(),
        }
    }
}

/// An entry of a `targets` list.
#[derive(Clone, Debug)]
pub enum Member {
    /// A string: the name of a target defined elsewhere, of a group, or a URI.
    Name { name: String, origin: Origin },
    /// A mapping that defines (part of) a target.
    Def(TargetDef),
}

#[derive(Clone, Debug)]
pub struct TargetDef {
    pub name: String,
    pub uri: Option<String>,
    pub aliases: Vec<(String, Origin)>,
    pub config: Vec<(String, Setting)>,
    pub facts: Json,
    pub vars: Json,
    pub features: Vec<String>,
    pub plugin_hooks: Json,
    pub origin: Origin,
}

/// Characters Bolt does not allow in target names, aliases and group
/// names: they separate names in a `--targets` list.
pub fn illegal_char(name: &str) -> Option<char> {
    name.chars().find(|c| c.is_whitespace() || *c == ',')
}

struct Ctx;

impl Ctx {
    fn at(&self, node: &Node) -> Origin {
        node.origin.clone()
    }

    fn err(&self, node: &Node, message: impl Into<String>) -> InventoryError {
        InventoryError::at(self.at(node), message)
    }

    fn entries<'n>(
        &self,
        node: &'n Node,
        what: &str,
    ) -> Result<&'n [(Node, Node)], InventoryError> {
        match &node.value {
            Value::Map(entries) => Ok(entries),
            _ => Err(self.err(
                node,
                format!("{what} must be a mapping, found {}", node.kind()),
            )),
        }
    }

    fn string(&self, node: &Node, what: &str) -> Result<String, InventoryError> {
        match &node.value {
            Value::Str(s) => Ok(s.clone()),
            _ => Err(self.err(
                node,
                format!("{what} must be a string, found {}", node.kind()),
            )),
        }
    }

    fn strings(&self, node: &Node, what: &str) -> Result<Vec<(String, Origin)>, InventoryError> {
        match &node.value {
            Value::Str(s) => Ok(vec![(s.clone(), self.at(node))]),
            Value::Seq(items) => items
                .iter()
                .map(|i| Ok((self.string(i, what)?, self.at(i))))
                .collect(),
            Value::Null => Ok(Vec::new()),
            _ => Err(self.err(
                node,
                format!(
                    "{what} must be a string or a list of strings, found {}",
                    node.kind()
                ),
            )),
        }
    }

    fn json_map(&self, node: &Node, what: &str) -> Result<Json, InventoryError> {
        if matches!(node.value, Value::Null) {
            return Ok(Json::new());
        }
        self.entries(node, what)?;
        match node.to_json() {
            serde_json::Value::Object(map) => Ok(map),
            _ => Ok(Json::new()),
        }
    }

    fn config(&self, node: &Node) -> Result<Vec<(String, Setting)>, InventoryError> {
        let mut out = Vec::new();
        if matches!(node.value, Value::Null) {
            return Ok(out);
        }
        for (key, value) in self.entries(node, "config")? {
            let name = key_text(key);
            if name == "transport" {
                let transport = self.string(value, "config.transport")?;
                out.push((
                    name,
                    self.setting(value, serde_json::Value::String(transport)),
                ));
            } else if SECTIONS.contains(&name.as_str()) {
                if matches!(value.value, Value::Null) {
                    continue;
                }
                for (k, v) in self.entries(value, &format!("config.{name}"))? {
                    out.push((
                        format!("{name}.{}", key_text(k)),
                        self.setting(v, v.to_json()),
                    ));
                }
            } else {
                return Err(self.err(
                    key,
                    format!(
                        "unknown config key '{name}' (expected transport or one of: {})",
                        SECTIONS.join(", ")
                    ),
                ));
            }
        }
        Ok(out)
    }

    fn setting(&self, node: &Node, value: serde_json::Value) -> Setting {
        Setting {
            value,
            origin: self.at(node),
        }
    }

    fn group(&self, node: &Node, top: bool) -> Result<GroupDef, InventoryError> {
        let what = if top { "the inventory" } else { "a group" };
        let mut group = GroupDef::top(self.at(node));
        let mut named = false;
        for (key, value) in self.entries(node, what)? {
            match key_text(key).as_str() {
                "version" if top => match value.value {
                    Value::Int(2) => {}
                    _ => return Err(self.err(value, "only inventory version 2 is supported")),
                },
                "name" if !top => {
                    group.name = self.string(value, "group name")?;
                    group.origin = self.at(value);
                    named = true;
                }
                // Bolt names the top level `all` whatever it says.
                "name" => {
                    if value.as_str() != Some("all") {
                        tracing::warn!(
                            "{}: the top level of an inventory cannot be named; it is 'all'",
                            self.at(value)
                        );
                    }
                }
                "config" => group.config = self.config(value)?,
                "facts" => group.facts = self.json_map(value, "facts")?,
                "vars" => group.vars = self.json_map(value, "vars")?,
                "features" => group.features = names(self.strings(value, "features")?),
                "plugin_hooks" => group.plugin_hooks = self.json_map(value, "plugin_hooks")?,
                "groups" => group.groups = self.list(value, "groups", |n| self.group(n, false))?,
                "targets" => group.targets = self.list(value, "targets", |n| self.member(n))?,
                other => {
                    let allowed = if top {
                        "version, config, facts, vars, features, plugin_hooks, groups, targets"
                    } else {
                        "name, config, facts, vars, features, plugin_hooks, groups, targets"
                    };
                    return Err(self.err(
                        key,
                        format!("unknown key '{other}' in {what} (expected {allowed})"),
                    ));
                }
            }
        }
        if !top && !named {
            return Err(self.err(node, "a group needs a name"));
        }
        Ok(group)
    }

    /// A `targets` or `groups` list. Lists inside it are flattened into it,
    /// as Bolt does: a plugin may give a list where one entry stood.
    fn list<T>(
        &self,
        node: &Node,
        what: &str,
        each: impl Fn(&Node) -> Result<T, InventoryError>,
    ) -> Result<Vec<T>, InventoryError> {
        match &node.value {
            Value::Seq(_) => {
                let mut out = Vec::new();
                let mut stack = vec![node];
                let mut items: Vec<&Node> = Vec::new();
                while let Some(n) = stack.pop() {
                    match &n.value {
                        Value::Seq(inner) => stack.extend(inner.iter().rev()),
                        _ => items.push(n),
                    }
                }
                for item in items {
                    out.push(each(item)?);
                }
                Ok(out)
            }
            Value::Null => Ok(Vec::new()),
            _ => Err(self.err(
                node,
                format!("{what} must be a list, found {}", node.kind()),
            )),
        }
    }

    fn member(&self, node: &Node) -> Result<Member, InventoryError> {
        if let Value::Str(name) = &node.value {
            check_name(name, "target name", &node.origin)?;
            return Ok(Member::Name {
                name: name.clone(),
                origin: self.at(node),
            });
        }
        let mut def = TargetDef {
            name: String::new(),
            uri: None,
            aliases: Vec::new(),
            config: Vec::new(),
            facts: Json::new(),
            vars: Json::new(),
            features: Vec::new(),
            plugin_hooks: Json::new(),
            origin: self.at(node),
        };
        let entries = match &node.value {
            Value::Map(entries) => entries,
            _ => {
                return Err(self.err(
                    node,
                    format!(
                        "a target must be a string or a mapping, found {}",
                        node.kind()
                    ),
                ));
            }
        };
        for (key, value) in entries {
            match key_text(key).as_str() {
                "name" => def.name = self.string(value, "target name")?,
                "uri" => def.uri = Some(self.string(value, "target uri")?),
                "alias" => def.aliases = self.strings(value, "alias")?,
                "config" => def.config = self.config(value)?,
                "facts" => def.facts = self.json_map(value, "facts")?,
                "vars" => def.vars = self.json_map(value, "vars")?,
                "features" => def.features = names(self.strings(value, "features")?),
                "plugin_hooks" => def.plugin_hooks = self.json_map(value, "plugin_hooks")?,
                other => {
                    return Err(self.err(
                        key,
                        format!("unknown key '{other}' in a target (expected name, uri, alias, config, facts, vars, features, plugin_hooks)"),
                    ));
                }
            }
        }
        if def.name.is_empty() {
            match &def.uri {
                Some(uri) if !uri.is_empty() => def.name = uri.clone(),
                _ => return Err(self.err(node, "a target needs a name or a uri")),
            }
        }
        check_name(&def.name, "target name", &def.origin)?;
        for (alias, origin) in &def.aliases {
            check_name(alias, "alias", origin)?;
        }
        Ok(Member::Def(def))
    }
}

/// Refuses a target name or alias Bolt refuses: empty, not ASCII, or
/// holding a character that separates names in `--targets`.
fn check_name(name: &str, what: &str, origin: &Origin) -> Result<(), InventoryError> {
    if name.is_empty() {
        return Err(InventoryError::at(
            origin.clone(),
            format!("a {what} cannot be empty"),
        ));
    }
    if !name.is_ascii() {
        return Err(InventoryError::at(
            origin.clone(),
            format!("{what} '{name}' must be ASCII characters"),
        ));
    }
    if let Some(c) = illegal_char(name) {
        return Err(InventoryError::at(
            origin.clone(),
            format!("illegal character {c:?} in {what} '{name}'"),
        ));
    }
    Ok(())
}

fn names(list: Vec<(String, Origin)>) -> Vec<String> {
    list.into_iter().map(|(s, _)| s).collect()
}

/// Reads the whole (plugin-resolved) document.
pub fn document(node: &Node) -> Result<GroupDef, InventoryError> {
    let ctx = Ctx;
    if matches!(node.value, Value::Null) {
        return Ok(GroupDef::top(ctx.at(node)));
    }
    ctx.group(node, true)
}
