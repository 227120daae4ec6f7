//! Type inference: the most specific Puppet type of a value, as `type(x)`
//! reports it (`Integer[1, 1]`, `Tuple[...]`, `Struct[{...}]`...).

use crate::lang::values::types::PType;
use crate::lang::values::value::Value;

/// The most specific simple type of a value (for `type()`).
pub fn infer_type(v: &Value) -> PType {
    // Display-only refinements Puppet prints but `PType` does not model are
    // named aliases of the general type.
    let named = |n: String, t: PType| PType::Alias(n, Box::new(t));
    match v {
        Value::Undef => PType::Undef,
        Value::Default => PType::Default,
        Value::Bool(b) => named(format!("Boolean[{b}]"), PType::Boolean),
        Value::Int(i) => PType::Integer(*i, *i),
        Value::Float(f) => PType::Float(*f, *f),
        Value::Str(_) => PType::String(0, i64::MAX),
        Value::Regex(r) => PType::Regexp(Some(r.clone())),
        Value::Array(a) if a.is_empty() => PType::Array(Box::new(PType::Any), 0, 0),
        Value::Array(a) => PType::Tuple(a.iter().map(infer_type).collect()),
        Value::Hash(h) if h.is_empty() => {
            PType::Hash(Box::new(PType::Any), Box::new(PType::Any), 0, 0)
        }
        Value::Hash(h) if h.iter().all(|(k, _)| matches!(k, Value::Str(_))) => PType::Struct(
            h.iter()
                .map(|(k, v)| (k.to_s(), false, infer_type(v)))
                .collect(),
        ),
        Value::Hash(h) => {
            let n = h.len() as i64;
            PType::Hash(
                Box::new(common(h.iter().map(|(k, _)| infer_type(k)).collect())),
                Box::new(common(h.iter().map(|(_, v)| infer_type(v)).collect())),
                n,
                n,
            )
        }
        Value::Type(t) => PType::Type(Some(Box::new(t.clone()))),
        Value::Sensitive(inner) => PType::Sensitive(Box::new(infer_type(inner))),
        Value::Iterator(items) => {
            let elem = match items.len() {
                0 => "Unit".to_string(),
                1 => items
                    .first()
                    .map(|i| infer_type(i).to_string())
                    .unwrap_or_default(),
                _ => PType::Variant(items.iter().map(infer_type).collect()).to_string(),
            };
            named(format!("Iterator[{elem}]"), PType::Iterable)
        }
        Value::Rich(r) => r.infer_type(),
    }
}

/// One type for several inferred types: the type itself when they agree,
/// else their Variant.
fn common(mut ts: Vec<PType>) -> PType {
    ts.dedup();
    if ts.len() == 1 {
        ts.pop().unwrap_or(PType::Any)
    } else {
        PType::Variant(ts)
    }
}
