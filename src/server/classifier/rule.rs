//! The rule grammar of Puppet Enterprise's node classifier: a rule is a
//! boolean (`["and", R, ...]`, `["or", R, ...]`, `["not", R]`) of
//! comparisons `[OP, FIELD, VALUE]`, where OP is `=`, `~` (a regular
//! expression), `<`, `>`, `<=` or `>=` (numbers), FIELD is `"name"` (the
//! certname), `["fact", PATH...]` or `["trusted", PATH...]` (a path into
//! structured facts; array elements by index), and VALUE a string (a
//! number or boolean is taken as its text). A node pinned to a group is a
//! `["=", "name", NODE]` comparison in the group's `or`, as PE writes it.
//! Parsing names the place of a fault (`rule[1][2]`); matching never fails:
//! a missing fact, a value that is not a scalar or not a number for `<`
//! simply does not match.

use regex::Regex;
use serde_json::{Map, Value};

/// Deepest nesting of booleans taken.
const MAX_DEPTH: usize = 32;
/// Largest compiled regular expression (bytes), so a rule cannot make the
/// server build a huge automaton.
const MAX_REGEX: usize = 1 << 20;

/// Why a rule is not one.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{at}: {message}")]
pub struct RuleError {
    /// Where in the rule: `rule`, `rule[1]`, `rule[1][2]`.
    pub at: String,
    pub message: String,
}

/// A comparison operator.
#[derive(Debug, Clone)]
pub enum Op {
    Eq,
    Matches(Regex),
    Lt,
    Gt,
    Le,
    Ge,
}

/// What a comparison looks at.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    /// The node's certname.
    Name,
    Fact(Vec<String>),
    Trusted(Vec<String>),
}

/// A parsed rule.
#[derive(Debug, Clone)]
pub enum Rule {
    And(Vec<Rule>),
    Or(Vec<Rule>),
    Not(Box<Rule>),
    Compare { op: Op, field: Field, value: String },
}

/// The node a rule is matched against.
pub struct Subject<'a> {
    pub name: &'a str,
    pub facts: &'a Map<String, Value>,
    pub trusted: &'a Map<String, Value>,
}

impl Rule {
    /// Parses a rule (the JSON of a group's `rule`); `at` names it in errors.
    pub fn parse(value: &Value, at: &str) -> Result<Rule, RuleError> {
        parse(value, at, 0)
    }

    /// Whether the node matches.
    pub fn matches(&self, node: &Subject<'_>) -> bool {
        match self {
            Rule::And(rules) => rules.iter().all(|r| r.matches(node)),
            Rule::Or(rules) => rules.iter().any(|r| r.matches(node)),
            Rule::Not(rule) => !rule.matches(node),
            Rule::Compare { op, field, value } => {
                let Some(have) = lookup(field, node) else {
                    return false;
                };
                match op {
                    Op::Eq => have == *value,
                    Op::Matches(re) => re.is_match(&have),
                    Op::Lt | Op::Gt | Op::Le | Op::Ge => {
                        let (Ok(a), Ok(b)) =
                            (have.trim().parse::<f64>(), value.trim().parse::<f64>())
                        else {
                            return false;
                        };
                        match op {
                            Op::Lt => a < b,
                            Op::Gt => a > b,
                            Op::Le => a <= b,
                            _ => a >= b,
                        }
                    }
                }
            }
        }
    }
}

fn fail(at: &str, message: impl Into<String>) -> RuleError {
    RuleError {
        at: at.to_string(),
        message: message.into(),
    }
}

fn parse(value: &Value, at: &str, depth: usize) -> Result<Rule, RuleError> {
    if depth > MAX_DEPTH {
        return Err(fail(at, format!("nests deeper than {MAX_DEPTH} levels")));
    }
    let Some(items) = value.as_array() else {
        return Err(fail(
            at,
            "must be an array: [\"and\"|\"or\"|\"not\", ...] or [OP, FIELD, VALUE]",
        ));
    };
    let Some(head) = items.first().and_then(Value::as_str) else {
        return Err(fail(
            at,
            "must start with an operator: and, or, not, =, ~, <, >, <=, >=",
        ));
    };
    let children = |items: &[Value]| -> Result<Vec<Rule>, RuleError> {
        items
            .iter()
            .enumerate()
            .map(|(i, v)| parse(v, &format!("{at}[{}]", i + 1), depth + 1))
            .collect()
    };
    match head {
        "and" | "or" => {
            if items.len() < 2 {
                return Err(fail(at, format!("'{head}' needs at least one rule")));
            }
            let rules = children(&items[1..])?;
            Ok(if head == "and" {
                Rule::And(rules)
            } else {
                Rule::Or(rules)
            })
        }
        "not" => {
            if items.len() != 2 {
                return Err(fail(at, "'not' takes exactly one rule"));
            }
            let mut rules = children(&items[1..])?;
            Ok(Rule::Not(Box::new(rules.remove(0))))
        }
        "=" | "~" | "<" | ">" | "<=" | ">=" => {
            if items.len() != 3 {
                return Err(fail(at, format!("'{head}' takes a field and a value")));
            }
            let field = parse_field(&items[1], &format!("{at}[1]"))?;
            let value = match &items[2] {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => {
                    return Err(fail(
                        &format!("{at}[2]"),
                        "must be a string (or a number or boolean)",
                    ));
                }
            };
            let op = match head {
                "=" => Op::Eq,
                "~" => Op::Matches(
                    regex::RegexBuilder::new(&value)
                        .size_limit(MAX_REGEX)
                        .build()
                        .map_err(|e| {
                            fail(
                                &format!("{at}[2]"),
                                format!("is not a regular expression: {e}"),
                            )
                        })?,
                ),
                "<" => Op::Lt,
                ">" => Op::Gt,
                "<=" => Op::Le,
                _ => Op::Ge,
            };
            if matches!(op, Op::Lt | Op::Gt | Op::Le | Op::Ge)
                && value.trim().parse::<f64>().is_err()
            {
                return Err(fail(
                    &format!("{at}[2]"),
                    format!("'{head}' compares numbers: '{value}' is not one"),
                ));
            }
            Ok(Rule::Compare { op, field, value })
        }
        other => Err(fail(
            at,
            format!("unknown operator '{other}' (and, or, not, =, ~, <, >, <=, >=)"),
        )),
    }
}

fn parse_field(value: &Value, at: &str) -> Result<Field, RuleError> {
    match value {
        Value::String(s) if s == "name" => Ok(Field::Name),
        Value::Array(parts) => {
            let words: Option<Vec<String>> = parts
                .iter()
                .map(|p| match p {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect();
            let Some(words) = words else {
                return Err(fail(at, "a path's parts must be strings"));
            };
            match words.split_first() {
                Some((kind, path)) if !path.is_empty() && kind == "fact" => {
                    Ok(Field::Fact(path.to_vec()))
                }
                Some((kind, path)) if !path.is_empty() && kind == "trusted" => {
                    Ok(Field::Trusted(path.to_vec()))
                }
                _ => Err(fail(
                    at,
                    "must be \"name\", [\"fact\", NAME, ...] or [\"trusted\", NAME, ...]",
                )),
            }
        }
        _ => Err(fail(
            at,
            "must be \"name\", [\"fact\", NAME, ...] or [\"trusted\", NAME, ...]",
        )),
    }
}

/// The field's value as text, when it is a scalar.
fn lookup(field: &Field, node: &Subject<'_>) -> Option<String> {
    let (root, path) = match field {
        Field::Name => return Some(node.name.to_string()),
        Field::Fact(path) => (node.facts, path),
        Field::Trusted(path) => (node.trusted, path),
    };
    let (first, rest) = path.split_first()?;
    let mut at = root.get(first)?;
    for part in rest {
        at = match at {
            Value::Object(map) => map.get(part)?,
            Value::Array(list) => list.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    match at {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(rule: Value, facts: Value) -> bool {
        let rule = Rule::parse(&rule, "rule").expect("parses");
        let facts = facts.as_object().cloned().unwrap_or_default();
        let trusted = json!({"certname": "web1.example.com", "extensions": {"pp_role": "web"}});
        let trusted = trusted.as_object().cloned().unwrap_or_default();
        rule.matches(&Subject {
            name: "web1.example.com",
            facts: &facts,
            trusted: &trusted,
        })
    }

    #[test]
    fn comparisons_and_paths() {
        let facts = json!({"os": {"family": "Debian", "release": {"major": "12"}},
                           "processors": {"count": 4}, "virtual": false,
                           "ips": ["10.0.0.1", "10.0.0.2"]});
        assert!(check(
            json!(["=", ["fact", "os", "family"], "Debian"]),
            facts.clone()
        ));
        assert!(!check(
            json!(["=", ["fact", "os", "family"], "RedHat"]),
            facts.clone()
        ));
        assert!(check(json!(["~", "name", "^web\\d+\\."]), facts.clone()));
        assert!(check(
            json!([">=", ["fact", "os", "release", "major"], "11"]),
            facts.clone()
        ));
        assert!(check(
            json!(["<", ["fact", "processors", "count"], 8]),
            facts.clone()
        ));
        assert!(check(
            json!(["=", ["fact", "virtual"], "false"]),
            facts.clone()
        ));
        assert!(check(
            json!(["=", ["fact", "ips", "1"], "10.0.0.2"]),
            facts.clone()
        ));
        // A structured value, or a missing fact, matches nothing.
        assert!(!check(json!(["=", ["fact", "os"], "x"]), facts.clone()));
        assert!(!check(json!(["~", ["fact", "nope"], ".*"]), facts.clone()));
        assert!(check(
            json!(["not", ["~", ["fact", "nope"], ".*"]]),
            facts.clone()
        ));
        assert!(check(
            json!(["=", ["trusted", "extensions", "pp_role"], "web"]),
            facts.clone()
        ));
        assert!(check(
            json!([
                "or",
                ["=", "name", "other"],
                ["=", "name", "web1.example.com"]
            ]),
            facts.clone()
        ));
        assert!(!check(
            json!([
                "and",
                ["=", "name", "web1.example.com"],
                ["=", ["fact", "os", "family"], "RedHat"]
            ]),
            facts
        ));
    }

    #[test]
    fn malformed_rules_name_the_place() {
        for (rule, at) in [
            (json!("name"), "rule"),
            (json!([]), "rule"),
            (json!(["and"]), "rule"),
            (json!(["xor", ["=", "name", "a"]]), "rule"),
            (json!(["and", ["=", "name"]]), "rule[1]"),
            (
                json!(["or", ["=", "name", "a"], ["=", ["facts", "x"], "a"]]),
                "rule[2][1]",
            ),
            (json!(["~", "name", "("]), "rule[2]"),
            (json!(["<", ["fact", "x"], "ten"]), "rule[2]"),
            (
                json!(["not", ["=", "name", "a"], ["=", "name", "b"]]),
                "rule",
            ),
            (json!(["=", ["fact"], "a"]), "rule[1]"),
            (json!(["=", "name", {"a": 1}]), "rule[2]"),
        ] {
            let e = Rule::parse(&rule, "rule").expect_err("malformed");
            assert_eq!(e.at, at, "{rule}: {e}");
        }
    }
}
