//! Classifying a node against a [`GroupSet`], as PE's classifier does. A
//! node is in a group when it matches the group's rule and the rules of
//! all its ancestors (a pinned node too: pinning is a `name` comparison
//! in the group's rule). Of the groups it is in, only the most specific
//! count: those none of whose descendants it is also in. Each gives its
//! classes, class parameters, variables and config data inherited down
//! its lineage (a descendant's value wins over an ancestor's) and its own
//! environment. Across those groups the values are merged; two groups
//! giving one class parameter (or variable, or config datum) different
//! values, or different environments when no group's environment trumps
//! (or trumping groups disagree), is a classification conflict naming
//! the groups. An `agent-specified` environment leaves the node the
//! environment it asks for.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use super::group::{AGENT_SPECIFIED, Classes, Group, GroupSet};
use super::rule::Subject;

/// The environment classification gives a node.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeEnvironment {
    /// This one (server-specified).
    Specified(String),
    /// The one the node asks for, when the server has it.
    AgentSpecified,
    /// No group (or node terminus) says: the server's `default-environment`.
    Default,
}

impl NodeEnvironment {
    /// As PE's classification shows it.
    pub fn to_json(&self) -> Value {
        match self {
            NodeEnvironment::Specified(name) => json!(name),
            NodeEnvironment::AgentSpecified => json!(AGENT_SPECIFIED),
            NodeEnvironment::Default => Value::Null,
        }
    }
}

/// What a node is given.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// The ids of the groups the node is in, root first.
    pub groups: Vec<String>,
    pub environment: NodeEnvironment,
    pub classes: Classes,
    /// Top-scope variables (PE's `variables`, Puppet's node parameters).
    pub parameters: Map<String, Value>,
    pub config_data: Classes,
}

/// One group's claim in a conflict.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub value: Value,
    /// The most specific group the node is in that gives this value.
    pub from: String,
    /// The group that sets it (`from` or one of its ancestors).
    pub defined_by: String,
}

/// Groups that disagree about a node.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("Classification conflict for node '{node}': {}", describe(self))]
pub struct Conflict {
    pub node: String,
    /// What is contested (`environment`, `class ntp parameter servers`,
    /// `variable tier`) and the claims on it.
    pub items: Vec<(String, Vec<Claim>)>,
}

fn describe(c: &Conflict) -> String {
    c.items
        .iter()
        .map(|(what, claims)| {
            let parts: Vec<String> = claims
                .iter()
                .map(|cl| format!("{} from group '{}'", cl.value, cl.from))
                .collect();
            format!("{what} is {}", parts.join(" but "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

impl Conflict {
    /// PE-like details: `{environment: [...], classes: {C: {P: [...]}},
    /// variables: {V: [...]}}`, each claim `{value, from, defined_by}`.
    pub fn details(&self) -> Value {
        let claims = |cl: &[Claim]| {
            Value::Array(
                cl.iter()
                    .map(|c| json!({"value": c.value, "from": c.from, "defined_by": c.defined_by}))
                    .collect(),
            )
        };
        let mut out = json!({});
        for (what, cl) in &self.items {
            let mut words = what.split(' ');
            match (words.next(), words.next(), words.next(), words.next()) {
                (Some("environment"), ..) => out["environment"] = claims(cl),
                (Some("class"), Some(c), Some("parameter"), Some(p)) => {
                    out["classes"][c][p] = claims(cl)
                }
                (Some("config_data"), Some(c), Some("parameter"), Some(p)) => {
                    out["config_data"][c][p] = claims(cl)
                }
                (Some("variable"), Some(v), ..) => out["variables"][v] = claims(cl),
                _ => {}
            }
        }
        out
    }
}

/// A value with where it came from.
#[derive(Clone)]
struct Sourced<'a> {
    value: &'a Value,
    from: &'a Group,
    defined_by: &'a Group,
}

/// Merges one more claim: the same value again is no conflict.
fn claim<'a>(into: &mut Vec<Sourced<'a>>, s: Sourced<'a>) {
    if !into.iter().any(|c| c.value == s.value) {
        into.push(s);
    }
}

type ClassClaims<'a> = BTreeMap<String, BTreeMap<String, Vec<Sourced<'a>>>>;

/// One lineage's classes, a descendant's value winning.
fn inherit<'a>(
    lineage: &[&'a Group],
    pick: impl Fn(&'a Group) -> &'a Classes,
) -> BTreeMap<String, BTreeMap<String, (&'a Value, &'a Group)>> {
    let mut out: BTreeMap<String, BTreeMap<String, (&Value, &Group)>> = BTreeMap::new();
    for g in lineage {
        for (class, params) in pick(g) {
            let entry = out.entry(class.clone()).or_default();
            for (p, v) in params {
                entry.insert(p.clone(), (v, *g));
            }
        }
    }
    out
}

/// Classifies the node `subject` against `set`.
pub fn classify(set: &GroupSet, subject: &Subject<'_>) -> Result<Classification, Conflict> {
    // Which groups the node is in (its rule and every ancestor's).
    let mut memo: HashMap<&str, bool> = HashMap::new();
    for g in set.groups() {
        let lineage = set.lineage(g);
        let mut inside = true;
        for step in &lineage {
            let m = *memo
                .entry(step.id.as_str())
                .or_insert_with(|| step.rule.as_ref().is_some_and(|r| r.matches(subject)));
            if !m {
                inside = false;
                break;
            }
        }
        memo.insert(g.id.as_str(), inside);
    }
    let member = |g: &Group| memo.get(g.id.as_str()).copied().unwrap_or(false);
    let members: Vec<&Group> = set.groups().iter().filter(|g| member(g)).collect();
    // The most specific: members none of whose descendants are members.
    let mut has_member_below: HashMap<&str, bool> = HashMap::new();
    for g in &members {
        for ancestor in set.lineage(g).iter().rev().skip(1) {
            has_member_below.insert(ancestor.id.as_str(), true);
        }
    }
    let leaves: Vec<&Group> = members
        .iter()
        .copied()
        .filter(|g| !has_member_below.contains_key(g.id.as_str()))
        .collect();
    let mut groups: Vec<String> = members.iter().map(|g| g.id.clone()).collect();
    if let Some(pos) = groups.iter().position(|id| *id == set.root().id) {
        let root = groups.remove(pos);
        groups.insert(0, root);
    }

    let mut items: Vec<(String, Vec<Claim>)> = Vec::new();
    let to_claims = |list: &[Sourced<'_>]| -> Vec<Claim> {
        list.iter()
            .map(|s| Claim {
                value: s.value.clone(),
                from: s.from.name.clone(),
                defined_by: s.defined_by.name.clone(),
            })
            .collect()
    };

    // The environment: trumping groups first.
    let trumping: Vec<&Group> = leaves
        .iter()
        .copied()
        .filter(|g| g.environment_trumps)
        .collect();
    let deciding = if trumping.is_empty() {
        &leaves
    } else {
        &trumping
    };
    let env_values: Vec<Value> = deciding.iter().map(|g| json!(g.environment)).collect();
    let mut envs: Vec<Sourced<'_>> = Vec::new();
    for (g, v) in deciding.iter().zip(&env_values) {
        claim(
            &mut envs,
            Sourced {
                value: v,
                from: g,
                defined_by: g,
            },
        );
    }
    let environment = match envs.as_slice() {
        [] => NodeEnvironment::Default,
        [one] => match one.from.environment.as_str() {
            AGENT_SPECIFIED => NodeEnvironment::AgentSpecified,
            name => NodeEnvironment::Specified(name.to_string()),
        },
        many => {
            items.push(("environment".to_string(), to_claims(many)));
            NodeEnvironment::Default
        }
    };

    // Classes, config data and variables: inherited per leaf, merged across.
    let merge_classes = |pick: fn(&Group) -> &Classes,
                         label: &str,
                         items: &mut Vec<(String, Vec<Claim>)>|
     -> Classes {
        let mut all: ClassClaims<'_> = BTreeMap::new();
        for leaf in &leaves {
            let lineage = set.lineage(leaf);
            for (class, params) in inherit(&lineage, pick) {
                let entry = all.entry(class).or_default();
                for (p, (v, by)) in params {
                    claim(
                        entry.entry(p).or_default(),
                        Sourced {
                            value: v,
                            from: leaf,
                            defined_by: by,
                        },
                    );
                }
            }
        }
        let mut out = Classes::new();
        for (class, params) in all {
            let entry = out.entry(class.clone()).or_default();
            for (p, list) in params {
                if list.len() > 1 {
                    items.push((format!("{label} {class} parameter {p}"), to_claims(&list)));
                } else if let Some(one) = list.first() {
                    entry.insert(p, one.value.clone());
                }
            }
        }
        out
    };
    let classes = merge_classes(|g| &g.classes, "class", &mut items);
    let config_data = merge_classes(|g| &g.config_data, "config_data", &mut items);
    let mut variables: BTreeMap<String, Vec<Sourced<'_>>> = BTreeMap::new();
    for leaf in &leaves {
        let mut inherited: BTreeMap<&String, (&Value, &Group)> = BTreeMap::new();
        for g in set.lineage(leaf) {
            for (k, v) in &g.variables {
                inherited.insert(k, (v, g));
            }
        }
        for (k, (v, by)) in inherited {
            claim(
                variables.entry(k.clone()).or_default(),
                Sourced {
                    value: v,
                    from: leaf,
                    defined_by: by,
                },
            );
        }
    }
    let mut parameters = Map::new();
    for (k, list) in variables {
        if list.len() > 1 {
            items.push((format!("variable {k}"), to_claims(&list)));
        } else if let Some(one) = list.first() {
            parameters.insert(k, one.value.clone());
        }
    }
    if !items.is_empty() {
        return Err(Conflict {
            node: subject.name.to_string(),
            items,
        });
    }
    Ok(Classification {
        groups,
        environment,
        classes,
        parameters,
        config_data,
    })
}

#[cfg(test)]
mod tests {
    //! Data-driven: each `tests/classifier/NAME.yaml` holds `groups` (PE's
    //! format), `node` (`name`, `fact`, `trusted`) and either `expect`
    //! (`environment`, `classes`, `parameters`, `groups` by name) or
    //! `conflict` (the contested items and the names of the groups in
    //! the error), or `invalid` (the field a bad group set is refused for).
    use super::*;
    use std::path::Path;

    fn object(v: Option<&Value>) -> Map<String, Value> {
        v.and_then(Value::as_object).cloned().unwrap_or_default()
    }

    fn run_case(path: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        let case: Value = crate::yaml::from_str(&text).map_err(|e| format!("{e:?}"))?;
        let set = GroupSet::from_json(&case["groups"]);
        if let Some(field) = case.get("invalid") {
            return match set {
                Ok(_) => Err("the groups were accepted".into()),
                Err(e) if json!(e.field) == *field => Ok(()),
                Err(e) => Err(format!("refused for {}, not {field}: {e}", e.field)),
            };
        }
        let set = set.map_err(|e| e.to_string())?;
        let node = &case["node"];
        let (facts, trusted) = (object(node.get("fact")), object(node.get("trusted")));
        let subject = Subject {
            name: node["name"].as_str().unwrap_or_default(),
            facts: &facts,
            trusted: &trusted,
        };
        let got = classify(&set, &subject);
        match (case.get("expect"), case.get("conflict"), got) {
            (Some(want), None, Ok(c)) => {
                let names: Vec<String> = c
                    .groups
                    .iter()
                    .filter_map(|id| set.get(id).map(|g| g.name.clone()))
                    .collect();
                let have = json!({
                    "environment": c.environment.to_json(),
                    "classes": c.classes,
                    "parameters": c.parameters,
                    "config_data": c.config_data,
                    "groups": names,
                });
                for key in want
                    .as_object()
                    .map(|m| m.keys().cloned().collect::<Vec<_>>())
                    .unwrap_or_default()
                {
                    if have[&key] != want[&key] {
                        return Err(format!("{key}: got {}, want {}", have[&key], want[&key]));
                    }
                }
                Ok(())
            }
            (None, Some(want), Err(conflict)) => {
                let message = conflict.to_string();
                for word in want["mentions"].as_array().into_iter().flatten() {
                    let word = word.as_str().unwrap_or_default();
                    if !message.contains(word) {
                        return Err(format!("the error does not mention '{word}': {message}"));
                    }
                }
                let items: Vec<Value> = conflict.items.iter().map(|(w, _)| json!(w)).collect();
                if want["items"] != Value::Array(items.clone()) {
                    return Err(format!("contested {items:?}, want {}", want["items"]));
                }
                Ok(())
            }
            (_, _, Ok(c)) => Err(format!("classified, no conflict: {c:?}")),
            (_, _, Err(e)) => Err(format!("conflict: {e}")),
        }
    }

    #[test]
    fn classifier_cases() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/classifier");
        let mut cases: Vec<_> = std::fs::read_dir(&dir)
            .expect("tests/classifier")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        cases.sort();
        assert!(cases.len() >= 8, "the cases are there");
        let failed: Vec<String> = cases
            .iter()
            .filter_map(|p| run_case(p).err().map(|e| format!("{}: {e}", p.display())))
            .collect();
        assert!(failed.is_empty(), "{}", failed.join("\n"));
    }
}
