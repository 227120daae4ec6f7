//! Pinning nodes to a group, as PE's classifier does it (`POST
//! /v1/groups/:id/pin` and `/unpin`): a pinned node is a `["=", "name",
//! NODE]` comparison in the group's rule's top-level `or`. Pinning to a
//! group without a rule makes the rule `["or", PIN...]`; to a rule whose
//! top level is not an `or`, `["or", RULE, PIN...]`; a node already
//! pinned is not added twice. Unpinning removes the node's comparisons
//! from the top-level `or` (a pin inside a deeper rule was not made by
//! pinning and stays); an `or` left empty leaves the group without a
//! rule, one left with only the original rule becomes that rule again.
//! Pure functions on the rule's JSON; the group is checked again after.

use serde_json::{Value, json};

fn pin_of(node: &str) -> Value {
    json!(["=", "name", node])
}

fn is_pin_of(v: &Value, nodes: &[String]) -> bool {
    nodes.contains(&pinned_name(v))
}

/// `rule` with `nodes` pinned.
pub fn pin(rule: &Value, nodes: &[String]) -> Value {
    let mut items = match rule {
        Value::Null => vec![json!("or")],
        Value::Array(a) if a.first().is_some_and(|op| op == "or") => a.clone(),
        other => vec![json!("or"), other.clone()],
    };
    for node in nodes {
        let p = pin_of(node);
        if !items.iter().skip(1).any(|i| *i == p) {
            items.push(p);
        }
    }
    Value::Array(items)
}

/// `rule` with `nodes` no longer pinned.
pub fn unpin(rule: &Value, nodes: &[String]) -> Value {
    let Some(items) = rule
        .as_array()
        .filter(|a| a.first().is_some_and(|op| op == "or"))
    else {
        return rule.clone();
    };
    let kept: Vec<Value> = items
        .iter()
        .skip(1)
        .filter(|i| !is_pin_of(i, nodes))
        .cloned()
        .collect();
    if kept.len() == items.len() - 1 {
        return rule.clone();
    }
    match kept.as_slice() {
        [] => Value::Null,
        [only] if pinned_name(only).is_empty() => only.clone(),
        _ => {
            let mut out = vec![json!("or")];
            out.extend(kept);
            Value::Array(out)
        }
    }
}

/// The node a pin comparison names (empty for anything else).
fn pinned_name(v: &Value) -> String {
    match v.as_array().map(Vec::as_slice) {
        Some([op, field, Value::String(n)]) if op == "=" && field == "name" => n.clone(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn pins_join_the_top_level_or_and_leave_it_again() {
        let facts = json!(["and", ["=", ["fact", "os", "family"], "Debian"]]);
        let pinned = pin(&facts, &names(&["a.test", "b.test"]));
        assert_eq!(
            pinned,
            json!([
                "or",
                facts,
                ["=", "name", "a.test"],
                ["=", "name", "b.test"]
            ])
        );
        assert_eq!(pin(&pinned, &names(&["a.test"])), pinned, "not twice");
        let one = unpin(&pinned, &names(&["a.test"]));
        assert_eq!(one, json!(["or", facts, ["=", "name", "b.test"]]));
        assert_eq!(unpin(&one, &names(&["b.test"])), facts, "the rule again");
        let bare = pin(&Value::Null, &names(&["a.test"]));
        assert_eq!(bare, json!(["or", ["=", "name", "a.test"]]));
        assert_eq!(unpin(&bare, &names(&["a.test"])), Value::Null);
        let or = json!(["or", ["~", "name", "^web"]]);
        assert_eq!(
            pin(&or, &names(&["x"])),
            json!(["or", ["~", "name", "^web"], ["=", "name", "x"]])
        );
        // A comparison deeper in the rule is not a pin.
        let deep = json!(["and", ["=", "name", "a.test"]]);
        assert_eq!(unpin(&deep, &names(&["a.test"])), deep);
    }
}
