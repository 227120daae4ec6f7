//! Bolt's PuppetDB plan functions: `puppetdb_query(query)` (PQL text or
//! PuppetDB's AST, the rows as an Array) and `puppetdb_fact(certnames)`
//! (a Hash of certname to facts, `{}` for a node PuppetDB does not know).
//! Both ask the PuppetDB the project configures, else evaluate over the
//! stored facts: those the plan's context stores (a server's plan job:
//! what agents and deploy runs sent), then the facts of every inventory
//! target not among them; every failure is Bolt's
//! `bolt/puppetdb-error`. The optional `instance` argument names one of
//! the project's `puppetdb-instances`, which is then asked (an instance
//! the project does not configure is Bolt's error).

use super::FactsUnreadable;
use super::functions::{raise, want_args};
use super::library::PlanLibrary;
use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::values::plan::ErrorValue;
use crate::lang::values::value::Value;
use crate::query::{NodeFacts, QueryError};

/// The plan's stored facts: the context's, then each inventory target's
/// that the context has none for. Why the context's cannot be read is
/// left in `unreadable`.
fn stored(lib: &PlanLibrary, unreadable: &mut Option<FactsUnreadable>) -> Vec<NodeFacts> {
    let mut out = match lib.stored_facts.as_ref().map(|source| source()) {
        Some(Ok(facts)) => facts,
        Some(Err(e)) => {
            *unreadable = Some(e);
            return Vec::new();
        }
        None => Vec::new(),
    };
    let Ok(inv) = lib.state.inventory.lock() else {
        return out;
    };
    for t in &inv.targets {
        if !out.iter().any(|n| n.certname == t.name) {
            out.push(NodeFacts {
                certname: t.name.clone(),
                environment: None,
                facts: t.facts.clone(),
            });
        }
    }
    out
}

/// The rows of `answer`, or Bolt's error for the query or for stored
/// facts that could not be read.
fn answered<T>(
    c: &Call<'_>,
    answer: Result<T, QueryError>,
    unreadable: Option<FactsUnreadable>,
) -> EvalResult<T> {
    if let Some(e) = unreadable {
        return Err(raise(
            c,
            ErrorValue::new(e.to_string(), "bolt/puppetdb-error"),
        ));
    }
    answer.map_err(|e| failed(c, e))
}

fn failed(c: &Call<'_>, e: QueryError) -> crate::lang::eval::control::Unwind {
    raise(c, ErrorValue::new(e.to_string(), "bolt/puppetdb-error"))
}

/// The optional `instance` argument (argument 1): a named PuppetDB of
/// the project's `puppetdb-instances`.
fn instance(c: &Call<'_>) -> EvalResult<Option<String>> {
    match c.args.get(1) {
        None | Some(Value::Undef) => Ok(None),
        Some(Value::Str(s)) => Ok(Some(s.clone())),
        Some(other) => Err(plain(format!(
            "'{}' parameter 'instance' expects a String value, got {}",
            c.name,
            other.type_name()
        ))
        .into()),
    }
}

pub(super) fn puppetdb_query(
    lib: &PlanLibrary,
    _: &mut Evaluator<'_>,
    c: Call<'_>,
) -> EvalResult<Value> {
    want_args(&c, 1, 2)?;
    let instance = instance(&c)?;
    let query = match c.arg(0) {
        Value::Str(s) => serde_json::Value::String(s),
        v @ Value::Array(_) => crate::lang::values::plan::to_json(&v),
        other => {
            return Err(plain(format!(
                "'puppetdb_query' parameter 'query' expects a value of type String or Array, got {}",
                other.type_name()
            ))
            .into());
        }
    };
    let mut unreadable = None;
    let answer = crate::query::run_on(instance.as_deref(), &query, || stored(lib, &mut unreadable));
    let rows = answered(&c, answer, unreadable)?;
    Ok(Value::from_json(&serde_json::Value::Array(rows)))
}

pub(super) fn puppetdb_fact(
    lib: &PlanLibrary,
    _: &mut Evaluator<'_>,
    c: Call<'_>,
) -> EvalResult<Value> {
    want_args(&c, 1, 2)?;
    let instance = instance(&c)?;
    let certnames: Vec<String> = match c.arg(0) {
        Value::Array(a) if a.iter().all(|v| matches!(v, Value::Str(_))) => {
            a.iter().map(Value::to_s).collect()
        }
        other => {
            return Err(plain(format!(
                "'puppetdb_fact' parameter 'certnames' expects an Array[String] value, got {}",
                other.type_name()
            ))
            .into());
        }
    };
    let mut unreadable = None;
    let answer = crate::query::facts(instance.as_deref(), &certnames, || {
        stored(lib, &mut unreadable)
    });
    let facts = answered(&c, answer, unreadable)?;
    Ok(Value::from_json(&serde_json::Value::Object(facts)))
}
