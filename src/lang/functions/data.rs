//! Data functions: strings (split, join, regsubst, sprintf, case, strip...),
//! collections (keys, values, merge, flatten, unique, sort, member, dig...),
//! numbers and comparisons (versioncmp, min, max, abs), type conversion
//! (`String(x)`, `Integer(x)`) and common stdlib helpers.

use crate::lang::error::LResult;
use crate::lang::error::plain;
use crate::lang::eval::{Evaluator, ScopeId};
use crate::lang::functions::strings::{sprintf, versioncmp};
use crate::lang::syntax::ast::Lambda;
use crate::lang::values::convert::new_value;
use crate::lang::values::regex::compile_regex;
use crate::lang::values::types::PType;
use crate::lang::values::value::str_to_num;
use crate::lang::values::value::{Value, compare, hash_get, hash_set, values_equal};

fn s(v: Option<&Value>) -> String {
    v.map(|v| v.to_s()).unwrap_or_default()
}

fn map_str(v: &Value, f: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::Str(x) => Value::Str(f(x)),
        Value::Array(a) => Value::Array(a.iter().map(|x| map_str(x, f)).collect()),
        other => other.clone(),
    }
}

fn flatten(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| flatten(x, out)),
        other => out.push(other.clone()),
    }
}

/// Data functions; `Ok(None)` when `name` is not one of them.
pub fn call_data_function(
    name: &str,
    args: &[Value],
    lambda: Option<&Lambda>,
    ev: &mut Evaluator<'_>,
    sc: ScopeId,
) -> LResult<Option<Value>> {
    let a0 = args.first().cloned().unwrap_or(Value::Undef);
    let a1 = args.get(1);
    // Argument types Puppet's own signatures enforce.
    let string_params: &[&str] = match name {
        "versioncmp" => &["a", "b"],
        "split" => &["str"],
        _ => &[],
    };
    for (i, p) in string_params.iter().enumerate() {
        let v = args.get(i).unwrap_or(&Value::Undef);
        if !matches!(v, Value::Str(_)) {
            return Err(plain(format!(
                "'{name}' parameter '{p}' expects a String value, got {}",
                v.type_name()
            )));
        }
    }
    let v = match name {
        "assert_private" => Value::Undef,
        "unwrap" => match a0 {
            Value::Sensitive(inner) => *inner,
            other => other,
        },
        "delete_at" => match (&a0, a1) {
            (Value::Array(a), Some(Value::Int(i))) => {
                let idx = if *i < 0 { a.len() as i64 + i } else { *i };
                match usize::try_from(idx).ok().filter(|i| *i < a.len()) {
                    Some(i) => {
                        let mut a = a.clone();
                        a.remove(i);
                        Value::Array(a)
                    }
                    None => return Err(plain("delete_at(): index out of bounds")),
                }
            }
            _ => return Err(plain("delete_at(): expects an Array and an Integer")),
        },
        "split" => {
            let st = a0.to_s();
            let pat = match a1 {
                Some(Value::Regex(r)) => r.clone(),
                Some(v) => regex::escape(&v.to_s()),
                None => " ".into(),
            };
            let re = compile_regex(&pat).map_err(plain)?;
            let mut parts: Vec<Value> = if pat.is_empty() {
                st.chars().map(|c| Value::Str(c.to_string())).collect()
            } else {
                re.split(&st).map(|p| Value::Str(p.to_string())).collect()
            };
            while matches!(parts.last(), Some(Value::Str(x)) if x.is_empty()) {
                parts.pop();
            }
            Value::Array(parts)
        }
        "join" => match &a0 {
            Value::Array(a) => {
                Value::Str(a.iter().map(|v| v.to_s()).collect::<Vec<_>>().join(&s(a1)))
            }
            other => Value::Str(other.to_s()),
        },
        "size" | "length" | "count" if lambda.is_none() => match &a0 {
            Value::Array(a) => Value::Int(a.len() as i64),
            Value::Hash(h) => Value::Int(h.len() as i64),
            Value::Str(x) => Value::Int(x.chars().count() as i64),
            other => {
                return Err(plain(format!(
                    "size(): expects a Collection or String, got {}",
                    other.type_name()
                )));
            }
        },
        "count" => {
            let mut n = 0;
            if let (Some(l), Value::Array(a)) = (lambda, &a0) {
                for x in a {
                    if ev.call_lambda(l, vec![x.clone()], sc)?.truthy() {
                        n += 1;
                    }
                }
            }
            Value::Int(n)
        }
        "keys" => match a0 {
            Value::Hash(h) => Value::Array(h.into_iter().map(|(k, _)| k).collect()),
            _ => Value::Array(vec![]),
        },
        "values" => match a0 {
            Value::Hash(h) => Value::Array(h.into_iter().map(|(_, v)| v).collect()),
            _ => Value::Array(vec![]),
        },
        "merge" => {
            let mut out = Vec::new();
            for a in args {
                match a {
                    Value::Hash(h) => h
                        .iter()
                        .for_each(|(k, v)| hash_set(&mut out, k.clone(), v.clone())),
                    Value::Undef => {}
                    Value::Str(x) if x.is_empty() => {}
                    other => {
                        return Err(plain(format!(
                            "merge(): expects Hash arguments, got {}",
                            other.type_name()
                        )));
                    }
                }
            }
            Value::Hash(out)
        }
        "deep_merge" => {
            fn dm(a: &mut Vec<(Value, Value)>, b: &[(Value, Value)]) {
                for (k, v) in b {
                    match (a.iter_mut().find(|(x, _)| x == k), v) {
                        (Some((_, Value::Hash(inner))), Value::Hash(bh)) => dm(inner, bh),
                        _ => hash_set(a, k.clone(), v.clone()),
                    }
                }
            }
            let mut out = Vec::new();
            for a in args {
                if let Value::Hash(h) = a {
                    dm(&mut out, h);
                }
            }
            Value::Hash(out)
        }
        "versioncmp" => Value::Int(versioncmp(&a0.to_s(), &s(a1))),
        "flatten" => {
            let mut out = Vec::new();
            for a in args {
                flatten(a, &mut out);
            }
            Value::Array(out)
        }
        "unique" => match a0 {
            Value::Array(a) => {
                let mut out: Vec<Value> = Vec::new();
                for x in a {
                    if !out
                        .iter()
                        .any(|y| values_equal(y, &x) && x.type_name() == y.type_name())
                    {
                        out.push(x);
                    }
                }
                Value::Array(out)
            }
            Value::Str(x) => {
                let mut seen = String::new();
                for c in x.chars() {
                    if !seen.contains(c) {
                        seen.push(c);
                    }
                }
                Value::Str(seen)
            }
            other => other,
        },
        "sort" => match a0 {
            Value::Array(mut a) => {
                a.sort_by(|x, y| match (x, y) {
                    (Value::Str(p), Value::Str(q)) => p.cmp(q),
                    _ => compare(x, y).unwrap_or(std::cmp::Ordering::Equal),
                });
                Value::Array(a)
            }
            Value::Hash(mut h) => {
                // Ruby's Hash#sort (used by ERB templates): pairs by key.
                h.sort_by_key(|(k, _)| k.to_s());
                Value::Array(
                    h.into_iter()
                        .map(|(k, v)| Value::Array(vec![k, v]))
                        .collect(),
                )
            }
            other => other,
        },
        "reverse" => match a0 {
            Value::Array(mut a) => {
                a.reverse();
                Value::Array(a)
            }
            Value::Str(x) => Value::Str(x.chars().rev().collect()),
            other => other,
        },
        "concat" => {
            let mut out = Vec::new();
            for a in args {
                match a {
                    Value::Array(x) => out.extend(x.iter().cloned()),
                    other => out.push(other.clone()),
                }
            }
            Value::Array(out)
        }
        "upcase" => map_str(&a0, &|x| x.to_uppercase()),
        "downcase" => map_str(&a0, &|x| x.to_lowercase()),
        "capitalize" => map_str(&a0, &|x| {
            let mut c = x.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + &c.as_str().to_lowercase())
                .unwrap_or_default()
        }),
        "strip" => map_str(&a0, &|x| x.trim().to_string()),
        "lstrip" => map_str(&a0, &|x| x.trim_start().to_string()),
        "rstrip" => map_str(&a0, &|x| x.trim_end().to_string()),
        "chomp" => map_str(&a0, &|x| {
            x.strip_suffix("\r\n")
                .or_else(|| x.strip_suffix('\n'))
                .unwrap_or(x)
                .to_string()
        }),
        "chop" => map_str(&a0, &|x| {
            let mut c: Vec<char> = x.chars().collect();
            c.pop();
            c.into_iter().collect()
        }),
        "empty" => Value::Bool(match &a0 {
            Value::Array(a) => a.is_empty(),
            Value::Hash(h) => h.is_empty(),
            Value::Str(x) => x.is_empty(),
            Value::Undef => true,
            _ => false,
        }),
        "has_key" => match &a0 {
            Value::Hash(h) => Value::Bool(hash_get(h, a1.unwrap_or(&Value::Undef)).is_some()),
            _ => return Err(plain("has_key(): expects the first argument to be a hash")),
        },
        "member" => match &a0 {
            Value::Array(a) => Value::Bool(match a1 {
                Some(Value::Array(want)) => want.iter().all(|w| a.contains(w)),
                Some(w) => a.contains(w),
                None => false,
            }),
            _ => Value::Bool(false),
        },
        "pick" | "pick_default" => {
            let found = args.iter().find(|v| {
                !matches!(v, Value::Undef) && !matches!(v, Value::Str(x) if x.is_empty())
            });
            match found {
                Some(v) => v.clone(),
                None if name == "pick_default" => args.last().cloned().unwrap_or(Value::Undef),
                None => return Err(plain("pick(): must receive at least one non empty value")),
            }
        }
        "delete" => match a0 {
            Value::Array(a) => Value::Array(a.into_iter().filter(|x| Some(x) != a1).collect()),
            Value::Hash(h) => Value::Hash(h.into_iter().filter(|(k, _)| Some(k) != a1).collect()),
            Value::Str(x) => Value::Str(x.replace(&s(a1), "")),
            other => other,
        },
        "delete_undef_values" => match a0 {
            Value::Array(a) => Value::Array(a.into_iter().filter(|x| !x.is_undef()).collect()),
            Value::Hash(h) => Value::Hash(h.into_iter().filter(|(_, v)| !v.is_undef()).collect()),
            other => other,
        },
        "range" => {
            let (a, b) = match (&a0, a1) {
                (Value::Int(a), Some(Value::Int(b))) => (*a, *b),
                (x, Some(y)) => (x.to_s().parse().unwrap_or(0), y.to_s().parse().unwrap_or(0)),
                _ => (0, -1),
            };
            if b.saturating_sub(a) > 100_000 {
                return Err(plain("range(): range too large"));
            }
            Value::Array((a..=b).map(Value::Int).collect())
        }
        "sprintf" => Value::Str(sprintf(&a0.to_s(), args.get(1..).unwrap_or(&[]))),
        "regsubst" => {
            let pat = match a1 {
                Some(Value::Regex(r)) => r.clone(),
                Some(v) => v.to_s(),
                None => String::new(),
            };
            let repl = s(args.get(2)).replace("\\0", "${0}");
            let repl = (1..10).fold(repl, |r, i| {
                r.replace(&format!("\\{i}"), &format!("${{{i}}}"))
            });
            let flags = s(args.get(3));
            let pat = if flags.contains('I') {
                format!("(?i){pat}")
            } else {
                pat
            };
            let re = compile_regex(&pat).map_err(plain)?;
            let global = flags.contains('G');
            map_str(&a0, &|x| {
                if global {
                    re.replace_all(x, repl.as_str()).into_owned()
                } else {
                    re.replace(x, repl.as_str()).into_owned()
                }
            })
        }
        "match" => {
            let pat = match a1 {
                Some(Value::Regex(r)) => r.clone(),
                Some(v) => v.to_s(),
                None => String::new(),
            };
            let re = compile_regex(&pat).map_err(plain)?;
            match re.captures(&a0.to_s()) {
                Some(c) => Value::Array(
                    c.iter()
                        .map(|m| m.map_or(Value::Undef, |m| Value::str(m.as_str())))
                        .collect(),
                ),
                None => Value::Undef,
            }
        }
        "abs" => match a0 {
            Value::Int(i) => Value::Int(i.wrapping_abs()),
            Value::Float(f) => Value::Float(f.abs()),
            other => other,
        },
        "min" | "max" => {
            let mut best: Option<Value> = None;
            for a in args {
                best = Some(match best {
                    None => a.clone(),
                    Some(b) => {
                        let ord = compare(a, &b).unwrap_or(std::cmp::Ordering::Equal);
                        let take = if name == "min" {
                            ord.is_lt()
                        } else {
                            ord.is_gt()
                        };
                        if take { a.clone() } else { b }
                    }
                });
            }
            best.unwrap_or(Value::Undef)
        }
        "dig" => {
            let mut cur = a0;
            for k in args.get(1..).unwrap_or(&[]) {
                cur = match (&cur, k) {
                    (Value::Hash(h), k) => hash_get(h, k).cloned().unwrap_or(Value::Undef),
                    (Value::Array(a), Value::Int(i)) => usize::try_from(*i)
                        .ok()
                        .and_then(|i| a.get(i).cloned())
                        .unwrap_or(Value::Undef),
                    _ => Value::Undef,
                };
            }
            cur
        }
        "to_json" | "to_json_pretty" => {
            let j = a0.to_json().unwrap_or(serde_json::Value::Null);
            let out = if name == "to_json" {
                serde_json::to_string(&j)
            } else {
                serde_json::to_string_pretty(&j)
            };
            Value::Str(out.map_err(|e| plain(e.to_string()))?)
        }
        "parsejson" => match serde_json::from_str::<serde_json::Value>(&a0.to_s()) {
            Ok(j) => Value::from_json(&j),
            Err(e) => return Err(plain(format!("parsejson(): {e}"))),
        },
        "bool2str" => Value::Str(match a0 {
            Value::Bool(true) => {
                if s(a1).is_empty() {
                    "true".to_string()
                } else {
                    s(a1)
                }
            }
            _ => {
                if s(args.get(2)).is_empty() {
                    "false".to_string()
                } else {
                    s(args.get(2))
                }
            }
        }),
        "str2bool" => Value::Bool(matches!(
            a0.to_s().to_lowercase().as_str(),
            "true" | "yes" | "y" | "1" | "on"
        )),
        "any2array" => match a0 {
            Value::Array(_) => a0,
            Value::Undef => Value::Array(vec![]),
            Value::Hash(h) => Value::Array(h.into_iter().flat_map(|(k, v)| [k, v]).collect()),
            other => Value::Array(vec![other]),
        },
        "is_string" => Value::Bool(matches!(a0, Value::Str(_))),
        "is_array" => Value::Bool(matches!(a0, Value::Array(_))),
        "is_hash" => Value::Bool(matches!(a0, Value::Hash(_))),
        "is_bool" => Value::Bool(matches!(a0, Value::Bool(_))),
        "is_integer" => Value::Bool(
            matches!(a0, Value::Int(_)) || matches!(&a0, Value::Str(x) if x.parse::<i64>().is_ok()),
        ),
        "is_numeric" => Value::Bool(
            matches!(a0, Value::Int(_) | Value::Float(_))
                || matches!(&a0, Value::Str(x) if str_to_num(x).is_some()),
        ),
        "prefix" | "suffix" => {
            let p = s(a1);
            let f = |x: &Value| {
                Value::Str(if name == "prefix" {
                    format!("{p}{}", x.to_s())
                } else {
                    format!("{}{p}", x.to_s())
                })
            };
            match a0 {
                Value::Array(a) => Value::Array(a.iter().map(f).collect()),
                Value::Hash(h) => Value::Hash(h.iter().map(|(k, v)| (f(k), v.clone())).collect()),
                other => other,
            }
        }
        "basename" => Value::Str(a0.to_s().rsplit('/').next().unwrap_or_default().to_string()),
        "dirname" => {
            let p = a0.to_s();
            Value::Str(match p.trim_end_matches('/').rsplit_once('/') {
                Some(("", _)) => "/".into(),
                Some((d, _)) => d.to_string(),
                None => ".".into(),
            })
        }
        "sha256" => {
            use sha2::Digest;
            let d = sha2::Sha256::digest(a0.to_s().as_bytes());
            Value::Str(d.iter().map(|b| format!("{b:02x}")).collect())
        }
        "zip" => match (&a0, a1) {
            (Value::Array(a), Some(Value::Array(b))) => Value::Array(
                a.iter()
                    .zip(b)
                    .map(|(x, y)| Value::Array(vec![x.clone(), y.clone()]))
                    .collect(),
            ),
            _ => Value::Array(vec![]),
        },
        "hash" => new_value(
            &PType::Hash(Box::new(PType::Any), Box::new(PType::Any), 0, i64::MAX),
            args,
        )?,
        "values_at" => match (&a0, a1) {
            (Value::Array(a), Some(Value::Array(ix))) => Value::Array(
                ix.iter()
                    .filter_map(|i| match i {
                        Value::Int(i) => usize::try_from(*i).ok().and_then(|i| a.get(i).cloned()),
                        _ => None,
                    })
                    .collect(),
            ),
            (Value::Array(a), Some(Value::Int(i))) => usize::try_from(*i)
                .ok()
                .and_then(|i| a.get(i).cloned())
                .unwrap_or(Value::Undef),
            _ => Value::Undef,
        },
        "lstrip_all" => a0,
        _ => return Ok(None),
    };
    Ok(Some(v))
}
