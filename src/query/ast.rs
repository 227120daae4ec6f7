//! PuppetDB's AST query form, read into a [`Query`]: JSON arrays such as
//! `["from", "inventory", ["extract", ["certname"], ["=",
//! "facts.os.family", "Debian"]], ["order_by", [["certname", "desc"]]],
//! ["limit", 10]]`. Operators `=`, `!=` (ferry's), `<`, `<=`, `>`, `>=`,
//! `~`, `!~` (ferry's), `null?`, `in` (with `["array", [...]]` or a
//! subquery), `and`, `or`, `not`. Errors name where in the JSON the
//! problem is (`query[2][1]`); nesting is bounded as for PQL text.

use serde_json::Value;

use super::model::{Entity, Expr, Field, Op, Query};
use super::pql::{MAX_NESTING, MAX_QUERY_BYTES, PqlError, check_field};

fn err(msg: impl Into<String>, at: &str) -> PqlError {
    PqlError::Ast {
        msg: msg.into(),
        at: at.to_string(),
    }
}

fn depth_ok(v: &Value) -> Result<(), PqlError> {
    // Iterative, so a deep document cannot overflow the stack here.
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        if d > MAX_NESTING {
            return Err(PqlError::TooDeep {
                max: MAX_NESTING,
                at: 0,
            });
        }
        if let Value::Array(a) = v {
            stack.extend(a.iter().map(|x| (x, d + 1)));
        }
    }
    Ok(())
}

impl Query {
    /// Reads a query in PuppetDB's AST form (`["from", entity, ...]`).
    pub fn from_ast(v: &Value) -> Result<Query, PqlError> {
        depth_ok(v)?;
        let len = v.to_string().len();
        if len > MAX_QUERY_BYTES {
            return Err(PqlError::TooLong {
                len,
                max: MAX_QUERY_BYTES,
            });
        }
        from(v, "query")
    }
}

fn items<'v>(v: &'v Value, at: &str) -> Result<(&'v str, &'v [Value]), PqlError> {
    match v {
        Value::Array(a) => match a.split_first() {
            Some((Value::String(op), rest)) => Ok((op.as_str(), rest)),
            _ => Err(err("expected an operator (a string) first", at)),
        },
        _ => Err(err(format!("expected an array, found {v}"), at)),
    }
}

fn from(v: &Value, at: &str) -> Result<Query, PqlError> {
    let (op, rest) = items(v, at)?;
    if op != "from" {
        return Err(err(
            format!("a query must start with \"from\", found \"{op}\""),
            at,
        ));
    }
    let entity = match rest.first() {
        Some(Value::String(name)) => Entity::from_name(name).ok_or_else(|| {
            let why = if Entity::puppetdb_only(name) {
                "is answered only by a PuppetDB"
            } else {
                "is not an entity"
            };
            err(format!("'{name}' {why}"), &format!("{at}[1]"))
        })?,
        _ => return Err(err("expected the entity's name", &format!("{at}[1]"))),
    };
    let mut q = Query::filter(entity, None);
    for (i, clause) in rest.iter().enumerate().skip(1) {
        let here = format!("{at}[{}]", i + 1);
        let (op, args) = items(clause, &here)?;
        match op {
            "extract" => {
                let fields = match args.first() {
                    Some(Value::String(f)) => vec![f.as_str()],
                    Some(Value::Array(fs)) => fs
                        .iter()
                        .map(|f| {
                            f.as_str().ok_or_else(|| {
                                err("projected fields must be strings", &format!("{here}[1]"))
                            })
                        })
                        .collect::<Result<_, _>>()?,
                    _ => return Err(err("expected the fields to extract", &here)),
                };
                for f in fields {
                    let f = Field::parse(f);
                    check_field(entity, &f).map_err(|m| err(m, &format!("{here}[1]")))?;
                    q.fields.push(f);
                }
                if let Some(filter) = args.get(1) {
                    q.filter = Some(expr(entity, filter, &format!("{here}[2]"))?);
                }
            }
            "order_by" => {
                let Some(Value::Array(list)) = args.first() else {
                    return Err(err("order_by needs a list of fields", &here));
                };
                for (j, item) in list.iter().enumerate() {
                    let at = format!("{here}[1][{j}]");
                    let (name, desc) = match item {
                        Value::String(f) => (f.as_str(), false),
                        Value::Array(pair) => match pair.as_slice() {
                            [Value::String(f), Value::String(dir)] if dir == "asc" => {
                                (f.as_str(), false)
                            }
                            [Value::String(f), Value::String(dir)] if dir == "desc" => {
                                (f.as_str(), true)
                            }
                            _ => return Err(err("expected [field, \"asc\" or \"desc\"]", &at)),
                        },
                        _ => return Err(err("expected a field", &at)),
                    };
                    let f = Field::parse(name);
                    check_field(entity, &f).map_err(|m| err(m, &at))?;
                    q.order.push((f, desc));
                }
            }
            "limit" | "offset" => {
                let n = args
                    .first()
                    .and_then(Value::as_u64)
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| err(format!("{op} needs a whole number"), &here))?;
                if op == "limit" {
                    q.limit = Some(n);
                } else {
                    q.offset = Some(n);
                }
            }
            _ => {
                if q.filter.is_some() {
                    return Err(err("a second filter", &here));
                }
                q.filter = Some(expr(entity, clause, &here)?);
            }
        }
    }
    Ok(q)
}

fn field(entity: Entity, v: Option<&Value>, at: &str) -> Result<Field, PqlError> {
    let Some(Value::String(name)) = v else {
        return Err(err("expected a field name", at));
    };
    let f = Field::parse(name);
    check_field(entity, &f).map_err(|m| err(m, at))?;
    Ok(f)
}

fn expr(entity: Entity, v: &Value, at: &str) -> Result<Expr, PqlError> {
    let (op, args) = items(v, at)?;
    let arg = |i: usize| format!("{at}[{}]", i + 1);
    match op {
        "and" | "or" => {
            let all = args
                .iter()
                .enumerate()
                .map(|(i, a)| expr(entity, a, &arg(i)))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(if op == "and" {
                Expr::And(all)
            } else {
                Expr::Or(all)
            })
        }
        "not" => match args {
            [a] => Ok(Expr::Not(Box::new(expr(entity, a, &arg(0))?))),
            _ => Err(err("not takes one query", at)),
        },
        "null?" => {
            let f = field(entity, args.first(), &arg(0))?;
            match args.get(1) {
                Some(Value::Bool(b)) => Ok(Expr::Null(f, *b)),
                _ => Err(err("null? needs true or false", &arg(1))),
            }
        }
        "in" => {
            let f = field(entity, args.first(), &arg(0))?;
            match args.get(1) {
                Some(Value::Array(a)) if a.first() == Some(&Value::from("array")) => {
                    match a.get(1) {
                        Some(Value::Array(values)) => Ok(Expr::In(f, values.clone())),
                        _ => Err(err("[\"array\", ...] needs a list", &arg(1))),
                    }
                }
                Some(sub @ Value::Array(_)) => {
                    let sub = from(sub, &arg(1))?;
                    if sub.fields.len() != 1 {
                        return Err(err(
                            "a subquery after 'in' must extract exactly one field",
                            &arg(1),
                        ));
                    }
                    Ok(Expr::InQuery(f, Box::new(sub)))
                }
                _ => Err(err("in needs [\"array\", [...]] or a subquery", &arg(1))),
            }
        }
        "=" | "!=" | "<" | "<=" | ">" | ">=" | "~" | "!~" => {
            let f = field(entity, args.first(), &arg(0))?;
            let value = args
                .get(1)
                .cloned()
                .ok_or_else(|| err(format!("{op} needs a value"), at))?;
            let regex = || {
                let text = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_string);
                regex::Regex::new(&text)
                    .map_err(|e| err(format!("invalid regular expression: {e}"), &arg(1)))
            };
            let op = match op {
                "=" => Op::Eq,
                "!=" => Op::Ne,
                "~" => Op::Match(regex()?),
                "!~" => Op::NoMatch(regex()?),
                "<" => Op::Lt,
                "<=" => Op::Le,
                ">" => Op::Gt,
                _ => Op::Ge,
            };
            Ok(Expr::Cmp(f, op, value))
        }
        other => Err(err(
            format!("'{other}' is not an operator ferry evaluates"),
            at,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err_of(v: Value) -> String {
        match Query::from_ast(&v) {
            Err(e) => e.to_string(),
            Ok(q) => panic!("accepted {v}: {q:?}"),
        }
    }

    #[test]
    fn errors_say_where_in_the_json() {
        assert_eq!(
            err_of(json!(["from", "reports", ["=", "certname", "a"]])),
            "'reports' is answered only by a PuppetDB at query[1]"
        );
        assert_eq!(
            err_of(json!(["=", "certname", "a"])),
            "a query must start with \"from\", found \"=\" at query"
        );
        assert_eq!(
            err_of(json!(["from", "nodes", ["and", ["=", "certname"]]])),
            "= needs a value at query[2][1]"
        );
        assert!(
            err_of(json!(["from", "nodes", ["limit", -1]])).contains("limit needs a whole number")
        );
    }

    #[test]
    fn deep_documents_are_refused_without_recursing() {
        let mut v = json!(["=", "certname", "a"]);
        for _ in 0..1_000 {
            v = json!(["not", v]);
        }
        let v = json!(["from", "nodes", v]);
        assert!(matches!(
            Query::from_ast(&v),
            Err(PqlError::TooDeep {
                max: MAX_NESTING,
                ..
            })
        ));
    }
}
