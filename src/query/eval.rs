//! Evaluating a [`Query`] over stored facts (each node's certname,
//! environment and facts) into PuppetDB's row shapes: an array of objects,
//! one per node (`nodes`, `inventory`), per node and top-level fact
//! (`facts`) or per node and leaf of its facts (`fact_contents`), with the
//! projected keys only when the query projects (`facts.os.family` is then
//! the key, as PuppetDB names it).
//!
//! Comparisons are PuppetDB's, as checked against PuppetDB 7: `=` is typed
//! (numbers by value), `<`..`>=` compare numbers, `~` matches a string or
//! any string element of an array; a condition on a field a row lacks is
//! false (and its negation true). Rows keep the order the
//! nodes were given in unless the query orders them.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::{Map, Value};

use super::model::{Entity, Expr, Field, Op, Query};

/// One node's stored facts.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeFacts {
    pub certname: String,
    pub environment: Option<String>,
    pub facts: Map<String, Value>,
}

/// How many rows `fact_contents` may make (a node with a huge fact tree
/// cannot make a query run away).
pub const MAX_ROWS: usize = 1_000_000;

/// A row being filtered: every field of the entity, and for `nodes` the
/// node's facts (which only conditions see).
struct Row<'a> {
    fields: Map<String, Value>,
    facts: Option<&'a Map<String, Value>>,
}

fn rows<'a>(entity: Entity, nodes: &'a [NodeFacts]) -> Vec<Row<'a>> {
    let env = |n: &NodeFacts| n.environment.clone().map_or(Value::Null, Value::String);
    let mut out = Vec::new();
    for n in nodes {
        let base = |extra: Vec<(&str, Value)>| {
            let mut m = Map::new();
            m.insert("certname".into(), Value::String(n.certname.clone()));
            for (k, v) in extra {
                m.insert(k.into(), v);
            }
            m
        };
        match entity {
            Entity::Nodes => out.push(Row {
                fields: base(vec![
                    ("deactivated", Value::Null),
                    ("expired", Value::Null),
                    ("facts_environment", env(n)),
                    ("facts_timestamp", Value::Null),
                    ("catalog_environment", Value::Null),
                    ("catalog_timestamp", Value::Null),
                    ("report_environment", Value::Null),
                    ("report_timestamp", Value::Null),
                    ("latest_report_status", Value::Null),
                    ("latest_report_hash", Value::Null),
                    ("latest_report_noop", Value::Null),
                    ("latest_report_noop_pending", Value::Null),
                    ("latest_report_corrective_change", Value::Null),
                    ("latest_report_job_id", Value::Null),
                    ("cached_catalog_status", Value::Null),
                ]),
                facts: Some(&n.facts),
            }),
            Entity::Inventory => out.push(Row {
                fields: base(vec![
                    ("timestamp", Value::Null),
                    ("environment", env(n)),
                    ("facts", Value::Object(n.facts.clone())),
                    (
                        "trusted",
                        n.facts.get("trusted").cloned().unwrap_or(Value::Null),
                    ),
                ]),
                facts: None,
            }),
            Entity::Facts => {
                for (name, value) in &n.facts {
                    out.push(Row {
                        fields: base(vec![
                            ("environment", env(n)),
                            ("name", Value::String(name.clone())),
                            ("value", value.clone()),
                        ]),
                        facts: None,
                    })
                }
            }
            Entity::FactContents => {
                let mut stack: Vec<(Vec<Value>, &Value)> = n
                    .facts
                    .iter()
                    .rev()
                    .map(|(k, v)| (vec![Value::String(k.clone())], v))
                    .collect();
                while let Some((path, v)) = stack.pop() {
                    if out.len() >= MAX_ROWS {
                        break;
                    }
                    match v {
                        Value::Object(m) if !m.is_empty() => {
                            for (k, child) in m.iter().rev() {
                                let mut p = path.clone();
                                p.push(Value::String(k.clone()));
                                stack.push((p, child));
                            }
                        }
                        Value::Array(a) if !a.is_empty() => {
                            for (i, child) in a.iter().enumerate().rev() {
                                let mut p = path.clone();
                                p.push(Value::from(i));
                                stack.push((p, child));
                            }
                        }
                        leaf => {
                            let name = path.first().cloned().unwrap_or(Value::Null);
                            out.push(Row {
                                fields: base(vec![
                                    ("environment", env(n)),
                                    ("path", Value::Array(path)),
                                    ("name", name),
                                    ("value", leaf.clone()),
                                ]),
                                facts: None,
                            })
                        }
                    }
                }
            }
        }
    }
    out
}

/// A field's value in a row; `None` when the row lacks it.
fn lookup<'r>(row: &'r Row<'_>, f: &Field) -> Option<&'r Value> {
    let (head, tail) = f.0.split_first()?;
    let mut v = match (head.as_str(), row.facts) {
        ("facts", Some(facts)) => {
            let (name, rest) = tail.split_first()?;
            let mut v = facts.get(name)?;
            for p in rest {
                v = step(v, p)?;
            }
            return Some(v);
        }
        _ => row.fields.get(head)?,
    };
    for p in tail {
        v = step(v, p)?;
    }
    Some(v)
}

fn step<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    match v {
        Value::Object(m) => m.get(key),
        Value::Array(a) => a.get(key.parse::<usize>().ok()?),
        _ => None,
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// PuppetDB's `=`: typed (the string "4" is not the number 4), numbers
/// by value.
fn equal(have: &Value, want: &Value) -> bool {
    match (have.as_f64(), want.as_f64()) {
        (Some(h), Some(w)) => h == w,
        _ => have == want,
    }
}

/// PuppetDB's `~`: a string, or any element of an array, matches.
fn matches(r: &regex::Regex, have: &Value) -> bool {
    match have {
        Value::String(s) => r.is_match(s),
        Value::Array(a) => a.iter().any(|v| v.as_str().is_some_and(|s| r.is_match(s))),
        Value::Number(_) | Value::Bool(_) => r.is_match(&text(have)),
        _ => false,
    }
}

/// The values of each subquery of a filter (by the subquery's address),
/// computed once per query rather than once per row, so nested subqueries
/// cost their depth times the rows, not the rows to the power of it.
type Subqueries = HashMap<usize, Vec<Value>>;

fn subqueries(e: &Expr, nodes: &[NodeFacts], out: &mut Subqueries) {
    match e {
        Expr::And(all) | Expr::Or(all) => all.iter().for_each(|e| subqueries(e, nodes, out)),
        Expr::Not(a) => subqueries(a, nodes, out),
        Expr::InQuery(_, sub) => {
            let values = match sub.fields.first() {
                Some(field) => select(sub, nodes)
                    .iter()
                    .filter_map(|r| lookup(r, field).cloned())
                    .collect(),
                None => Vec::new(),
            };
            out.insert(std::ptr::from_ref::<Query>(sub) as usize, values);
        }
        Expr::Cmp(..) | Expr::In(..) | Expr::Null(..) => {}
    }
}

/// Whether a row passes a filter.
fn test(e: &Expr, row: &Row<'_>, subs: &Subqueries) -> bool {
    match e {
        Expr::And(all) => all.iter().all(|e| test(e, row, subs)),
        Expr::Or(any) => any.iter().any(|e| test(e, row, subs)),
        Expr::Not(a) => {
            // PuppetDB: `is null` and `is not null` on a fact path a node
            // lacks are false, and so are their negations.
            if let Expr::Null(f, _) = a.as_ref()
                && f.0.len() > 1
                && lookup(row, f).is_none()
            {
                return false;
            }
            !test(a, row, subs)
        }
        Expr::Null(f, is_null) => match lookup(row, f) {
            None if f.0.len() > 1 => false,
            None => *is_null,
            Some(v) => v.is_null() == *is_null,
        },
        Expr::In(f, values) => lookup(row, f).is_some_and(|h| values.iter().any(|w| equal(h, w))),
        Expr::InQuery(f, sub) => {
            let Some(have) = lookup(row, f) else {
                return false;
            };
            subs.get(&(std::ptr::from_ref::<Query>(sub) as usize))
                .is_some_and(|values| values.iter().any(|w| equal(have, w)))
        }
        Expr::Cmp(f, op, want) => {
            let Some(have) = lookup(row, f) else {
                return false;
            };
            match op {
                Op::Eq => equal(have, want),
                Op::Ne => !equal(have, want),
                Op::Match(r) => matches(r, have),
                Op::NoMatch(r) => !matches(r, have),
                Op::Lt | Op::Le | Op::Gt | Op::Ge => match (have.as_f64(), want.as_f64()) {
                    (Some(h), Some(w)) => match op {
                        Op::Lt => h < w,
                        Op::Le => h <= w,
                        Op::Gt => h > w,
                        _ => h >= w,
                    },
                    _ => false,
                },
            }
        }
    }
}

/// PuppetDB's order for `order by`: numbers, then strings, then
/// everything else by its text; a missing value or null last.
fn order(a: Option<&Value>, b: Option<&Value>) -> Ordering {
    let a = a.filter(|v| !v.is_null());
    let b = b.filter(|v| !v.is_null());
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(a), Some(b)) => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => text(a).cmp(&text(b)),
        },
    }
}

/// The rows a query selects, filtered, ordered and paged.
fn select<'a>(q: &Query, nodes: &'a [NodeFacts]) -> Vec<Row<'a>> {
    let mut subs = Subqueries::new();
    if let Some(f) = &q.filter {
        subqueries(f, nodes, &mut subs);
    }
    let mut out: Vec<Row<'a>> = rows(q.entity, nodes)
        .into_iter()
        .filter(|r| q.filter.as_ref().is_none_or(|f| test(f, r, &subs)))
        .collect();
    if !q.order.is_empty() {
        out.sort_by(|a, b| {
            q.order
                .iter()
                .map(|(f, desc)| {
                    let o = order(lookup(a, f), lookup(b, f));
                    if *desc { o.reverse() } else { o }
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
    }
    let skip = q.offset.unwrap_or(0);
    let take = q.limit.filter(|n| *n > 0).unwrap_or(usize::MAX);
    out.into_iter().skip(skip).take(take).collect()
}

impl Query {
    /// The query's answer over `nodes`, in PuppetDB's row shapes.
    pub fn evaluate(&self, nodes: &[NodeFacts]) -> Vec<Value> {
        select(self, nodes)
            .into_iter()
            .map(|row| {
                if self.fields.is_empty() {
                    return Value::Object(row.fields);
                }
                let m: Map<String, Value> = self
                    .fields
                    .iter()
                    .map(|f| (f.text(), lookup(&row, f).cloned().unwrap_or(Value::Null)))
                    .collect();
                Value::Object(m)
            })
            .collect()
    }

    /// Whether a node named `certname` with `facts` gives any row (job
    /// scopes over the server's inventory).
    pub fn selects(&self, certname: &str, facts: &Map<String, Value>) -> bool {
        let node = [NodeFacts {
            certname: certname.to_string(),
            environment: None,
            facts: facts.clone(),
        }];
        !select(self, &node).is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_subqueries_cost_their_depth_not_a_power_of_it() {
        let nodes: Vec<NodeFacts> = (0..200)
            .map(|i| NodeFacts {
                certname: format!("n{i}"),
                environment: None,
                facts: serde_json::json!({"i": i})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            })
            .collect();
        let depth = 30;
        let mut q = "nodes[certname] { certname ~ 'n1' }".to_string();
        for _ in 0..depth {
            q = format!("nodes[certname] {{ certname in {q} }}");
        }
        let started = std::time::Instant::now();
        let rows = Query::parse(&q).unwrap().evaluate(&nodes);
        assert_eq!(rows.len(), 111);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
