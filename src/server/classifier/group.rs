//! Node groups in Puppet Enterprise's classifier format (`GET
//! /classifier-api/v1/groups`): `{id, name, parent, rule, classes: {CLASS:
//! {PARAM: VALUE}}, variables, environment, environment_trumps,
//! config_data, description}`, and [`GroupSet`], a checked tree of them:
//! unique ids, one root (the group that is its own parent, PE's "All
//! Nodes", added when missing), every parent known, no cycles, sibling
//! names unique. Every fault names the field (`rule[1][2]`, `parent`,
//! `classes.ntp.servers`) so the API can answer 400 with it.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::rule::Rule;

/// PE's root group ("All Nodes").
pub const ROOT_ID: &str = "00000000-0000-4000-8000-000000000000";
/// The environment a group without one has (PE's default).
pub const DEFAULT_GROUP_ENVIRONMENT: &str = "production";
/// The environment that lets a group's nodes keep the one they ask for.
pub const AGENT_SPECIFIED: &str = "agent-specified";
/// Longest id, name or description taken.
const MAX_TEXT: usize = 1024;

/// A group (or set of groups) that is not valid; `field` names the part.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}{field}: {message}", group.as_deref().map(|g| format!("group '{g}': ")).unwrap_or_default())]
pub struct GroupError {
    /// The group at fault (its id or name), when checking a whole set.
    pub group: Option<String>,
    /// The field: `rule[1]`, `parent`, `classes.ntp`, ...
    pub field: String,
    pub message: String,
}

impl GroupError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> GroupError {
        GroupError {
            group: None,
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Class name → its parameters.
pub type Classes = BTreeMap<String, Map<String, Value>>;

/// One node group.
#[derive(Debug, Clone)]
pub struct Group {
    pub id: String,
    pub name: String,
    pub parent: String,
    /// `None`: the group matches no node by rule.
    pub rule: Option<Rule>,
    /// The rule as written.
    pub rule_json: Value,
    pub classes: Classes,
    pub variables: Map<String, Value>,
    /// An environment name, or [`AGENT_SPECIFIED`].
    pub environment: String,
    pub environment_trumps: bool,
    pub config_data: Classes,
    pub description: Option<String>,
}

pub fn is_class_name(name: &str) -> bool {
    let name = name.strip_prefix("::").unwrap_or(name);
    !name.is_empty()
        && name.split("::").all(|seg| {
            let mut chars = seg.chars();
            chars.next().is_some_and(|c| c.is_ascii_lowercase())
                && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
}

/// A Puppet parameter name: `[a-z_][a-z0-9_]*`.
pub fn is_param_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A top-scope variable name: `[a-z_][a-zA-Z0-9_]*`.
pub fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An id as it may appear in a URL: `[A-Za-z0-9][A-Za-z0-9._-]*` (PE's
/// UUIDs are such ids).
pub fn check_id(id: &str, field: &str) -> Result<(), GroupError> {
    let ok = id.len() <= 64
        && id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(GroupError::new(
            field,
            "must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        ))
    }
}

/// An environment a group may name: a Puppet environment name, or
/// `agent-specified`.
pub fn check_environment(name: &str, field: &str) -> Result<(), GroupError> {
    if name == AGENT_SPECIFIED {
        return Ok(());
    }
    crate::catalog::environment::check_name(name)
        .map_err(|e| GroupError::new(field, format!("{e} (or '{AGENT_SPECIFIED}')")))
}

fn classes(value: Option<&Value>, field: &str) -> Result<Classes, GroupError> {
    let mut out = Classes::new();
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(out);
    };
    let Some(map) = value.as_object() else {
        return Err(GroupError::new(
            field,
            "must be an object: {CLASS: {PARAMETER: VALUE}}",
        ));
    };
    for (class, params) in map {
        let at = format!("{field}.{class}");
        if !is_class_name(class) {
            return Err(GroupError::new(&at, "is not a Puppet class name"));
        }
        let params = match params {
            Value::Null => Map::new(),
            Value::Object(p) => p.clone(),
            _ => {
                return Err(GroupError::new(
                    &at,
                    "must be an object of parameters ({} for none)",
                ));
            }
        };
        if let Some(bad) = params.keys().find(|p| !is_param_name(p)) {
            return Err(GroupError::new(
                format!("{at}.{bad}"),
                "is not a Puppet parameter name",
            ));
        }
        out.insert(class.trim_start_matches("::").to_string(), params);
    }
    Ok(out)
}

fn text(doc: &Map<String, Value>, key: &str, required: bool) -> Result<Option<String>, GroupError> {
    match doc.get(key) {
        None | Some(Value::Null) if required => Err(GroupError::new(key, "is required")),
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.len() > MAX_TEXT => Err(GroupError::new(
            key,
            format!("is longer than {MAX_TEXT} bytes"),
        )),
        Some(Value::String(s)) if s.contains('\0') => {
            Err(GroupError::new(key, "must not contain a NUL byte"))
        }
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(GroupError::new(key, "must be a string")),
    }
}

impl Group {
    /// A group from its JSON; `id` is used when the document has none (it
    /// must agree when it has one).
    pub fn from_json(value: &Value, id: Option<&str>) -> Result<Group, GroupError> {
        let Some(doc) = value.as_object() else {
            return Err(GroupError::new("", "a group is a JSON object"));
        };
        const KEYS: [&str; 13] = [
            "id",
            "name",
            "parent",
            "rule",
            "classes",
            "variables",
            "environment",
            "environment_trumps",
            "config_data",
            "description",
            // PE answers with these; taken and ignored.
            "serial_number",
            "last_edited",
            "deleted",
        ];
        if let Some(k) = doc.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(GroupError::new(
                k.as_str(),
                "is not a node group key (id, name, parent, rule, classes, variables, environment, environment_trumps, config_data, description)",
            ));
        }
        let id = match (text(doc, "id", false)?, id) {
            (Some(given), Some(path)) if given != path => {
                return Err(GroupError::new(
                    "id",
                    format!("is '{given}', not the '{path}' the URL names"),
                ));
            }
            (Some(given), _) => given,
            (None, Some(path)) => path.to_string(),
            (None, None) => return Err(GroupError::new("id", "is required")),
        };
        check_id(&id, "id")?;
        let name = text(doc, "name", true)?.unwrap_or_default();
        if name.trim().is_empty() {
            return Err(GroupError::new("name", "must not be empty"));
        }
        let parent = text(doc, "parent", false)?.unwrap_or_else(|| ROOT_ID.to_string());
        check_id(&parent, "parent")?;
        let rule_json = doc.get("rule").cloned().unwrap_or(Value::Null);
        let rule = match &rule_json {
            Value::Null => None,
            v => Some(Rule::parse(v, "rule").map_err(|e| GroupError::new(e.at, e.message))?),
        };
        let environment = text(doc, "environment", false)?
            .unwrap_or_else(|| DEFAULT_GROUP_ENVIRONMENT.to_string());
        check_environment(&environment, "environment")?;
        let environment_trumps = match doc.get("environment_trumps") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(GroupError::new(
                    "environment_trumps",
                    "must be true or false",
                ));
            }
        };
        let variables = match doc.get("variables") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(v)) => v.clone(),
            Some(_) => {
                return Err(GroupError::new(
                    "variables",
                    "must be an object: {NAME: VALUE}",
                ));
            }
        };
        if let Some(bad) = variables.keys().find(|v| !is_variable_name(v)) {
            return Err(GroupError::new(
                format!("variables.{bad}"),
                "is not a Puppet variable name",
            ));
        }
        Ok(Group {
            id,
            name,
            parent,
            rule,
            rule_json,
            classes: classes(doc.get("classes"), "classes")?,
            variables,
            environment,
            environment_trumps,
            config_data: classes(doc.get("config_data"), "config_data")?,
            description: text(doc, "description", false)?,
        })
    }

    /// The group as PE's API shows it.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "name": self.name,
            "parent": self.parent,
            "rule": self.rule_json,
            "classes": self.classes,
            "variables": self.variables,
            "environment": self.environment,
            "environment_trumps": self.environment_trumps,
            "config_data": self.config_data,
            "description": self.description,
        })
    }

    /// PE's "All Nodes": every node, in `production`.
    pub fn root() -> Group {
        let rule_json = json!(["and", ["~", "name", ".*"]]);
        Group {
            id: ROOT_ID.to_string(),
            name: "All Nodes".to_string(),
            parent: ROOT_ID.to_string(),
            rule: Rule::parse(&rule_json, "rule").ok(),
            rule_json,
            classes: Classes::new(),
            variables: Map::new(),
            environment: DEFAULT_GROUP_ENVIRONMENT.to_string(),
            environment_trumps: false,
            config_data: Classes::new(),
            description: Some("Every node".to_string()),
        }
    }

    pub fn is_root(&self) -> bool {
        self.parent == self.id
    }
}

/// A checked tree of groups.
#[derive(Debug, Clone)]
pub struct GroupSet {
    groups: Vec<Group>,
    by_id: HashMap<String, usize>,
    root: usize,
}

impl GroupSet {
    /// Checks the groups as a tree: unique ids, one root (PE's "All
    /// Nodes" added when none is given), known parents, no cycles,
    /// unique names among siblings.
    pub fn new(mut groups: Vec<Group>) -> Result<GroupSet, GroupError> {
        let in_group = |g: &Group, field: &str, message: String| GroupError {
            group: Some(g.name.clone()),
            field: field.to_string(),
            message,
        };
        let roots: Vec<usize> = (0..groups.len()).filter(|&i| groups[i].is_root()).collect();
        let root = match roots.as_slice() {
            [] => {
                groups.insert(0, Group::root());
                0
            }
            [one] => *one,
            [_, second, ..] => {
                return Err(in_group(
                    &groups[*second],
                    "parent",
                    "only one group (the root) may be its own parent".into(),
                ));
            }
        };
        let mut by_id = HashMap::new();
        for (i, g) in groups.iter().enumerate() {
            if by_id.insert(g.id.clone(), i).is_some() {
                return Err(in_group(g, "id", format!("'{}' is used twice", g.id)));
            }
        }
        let mut names = HashSet::new();
        for g in &groups {
            if !by_id.contains_key(&g.parent) {
                return Err(in_group(
                    g,
                    "parent",
                    format!("no group has the id '{}'", g.parent),
                ));
            }
            if !g.is_root() && !names.insert((g.parent.clone(), g.name.clone())) {
                return Err(in_group(
                    g,
                    "name",
                    format!("another group under the same parent is named '{}'", g.name),
                ));
            }
        }
        // Every chain of parents must reach the root.
        for g in &groups {
            let mut seen = HashSet::new();
            let mut at = g;
            while !at.is_root() {
                if !seen.insert(at.id.as_str()) {
                    return Err(in_group(
                        g,
                        "parent",
                        format!(
                            "makes a cycle of groups ({}) that never reaches the root",
                            seen.iter().copied().collect::<Vec<_>>().join(", ")
                        ),
                    ));
                }
                at = &groups[by_id[&at.parent]];
            }
        }
        Ok(GroupSet {
            groups,
            by_id,
            root,
        })
    }

    /// Groups from a JSON array (a groups file, PE's `GET /v1/groups`).
    pub fn from_json(value: &Value) -> Result<GroupSet, GroupError> {
        let Some(list) = value.as_array() else {
            return Err(GroupError::new("", "must be a JSON array of node groups"));
        };
        let mut groups = Vec::with_capacity(list.len());
        for (i, v) in list.iter().enumerate() {
            let g = Group::from_json(v, None).map_err(|mut e| {
                e.group = Some(
                    v.get("name")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("#{}", i + 1)),
                );
                e
            })?;
            groups.push(g);
        }
        GroupSet::new(groups)
    }

    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    pub fn get(&self, id: &str) -> Option<&Group> {
        self.by_id.get(id).map(|&i| &self.groups[i])
    }

    pub fn root(&self) -> &Group {
        &self.groups[self.root]
    }

    /// The group's parent (the root is its own).
    pub fn parent(&self, g: &Group) -> &Group {
        self.get(&g.parent).unwrap_or(self.root())
    }

    /// The chain from the root down to `g`.
    pub fn lineage<'a>(&'a self, g: &'a Group) -> Vec<&'a Group> {
        let mut chain = vec![g];
        let mut at = g;
        while !at.is_root() {
            at = self.parent(at);
            chain.push(at);
        }
        chain.reverse();
        chain
    }

    /// The whole set as a JSON array.
    pub fn to_json(&self) -> Value {
        Value::Array(self.groups.iter().map(Group::to_json).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(v: Value) -> Result<Group, GroupError> {
        Group::from_json(&v, None)
    }

    #[test]
    fn bad_groups_name_the_field() {
        for (doc, field) in [
            (
                json!({"id": "a", "name": "A", "rule": ["=", "name"]}),
                "rule",
            ),
            (
                json!({"id": "a", "name": "A", "rule": ["and", ["=", "name", "x"], ["~", "name", "["]]}),
                "rule[2][2]",
            ),
            (
                json!({"id": "a", "name": "A", "environment": "../etc"}),
                "environment",
            ),
            (
                json!({"id": "a", "name": "A", "environment": "Prod"}),
                "environment",
            ),
            (
                json!({"id": "a", "name": "A", "classes": {"Bad-Class": {}}}),
                "classes.Bad-Class",
            ),
            (
                json!({"id": "a", "name": "A", "classes": {"ntp": {"Servers": 1}}}),
                "classes.ntp.Servers",
            ),
            (
                json!({"id": "a", "name": "A", "classes": {"ntp": []}}),
                "classes.ntp",
            ),
            (
                json!({"id": "a", "name": "A", "variables": {"9x": 1}}),
                "variables.9x",
            ),
            (
                json!({"id": "a", "name": "A", "environment_trumps": "yes"}),
                "environment_trumps",
            ),
            (json!({"id": "a/b", "name": "A"}), "id"),
            (json!({"id": "a", "name": ""}), "name"),
            (json!({"id": "a"}), "name"),
            (json!({"id": "a", "name": "A", "colour": "red"}), "colour"),
        ] {
            let e = group(doc.clone()).expect_err("invalid");
            assert_eq!(e.field, field, "{doc}: {e}");
        }
        let ok = group(json!({"id": "a", "name": "A", "environment": "agent-specified"}))
            .expect("agent-specified is an environment a group may name");
        assert_eq!(ok.parent, ROOT_ID);
    }

    #[test]
    fn a_set_is_a_tree() {
        let g = |id: &str, parent: &str| json!({"id": id, "name": id, "parent": parent});
        let set = GroupSet::from_json(&json!([g("a", ROOT_ID), g("b", "a")])).expect("tree");
        assert_eq!(set.groups().len(), 3, "the root is added");
        let b = set.get("b").expect("b");
        let names: Vec<&str> = set.lineage(b).iter().map(|g| g.id.as_str()).collect();
        assert_eq!(names, vec![ROOT_ID, "a", "b"]);
        for (groups, field) in [
            (json!([g("a", "nope")]), "parent"),
            (json!([g("a", "b"), g("b", "a")]), "parent"),
            (json!([g("a", ROOT_ID), g("a", ROOT_ID)]), "id"),
            (
                json!([{"id": "x", "name": "same"}, {"id": "y", "name": "same"}]),
                "name",
            ),
            (json!([g("r1", "r1"), g("r2", "r2")]), "parent"),
        ] {
            let e = GroupSet::from_json(&groups).expect_err("invalid");
            assert_eq!(e.field, field, "{groups}: {e}");
            assert!(e.group.is_some(), "{e}");
        }
    }
}
