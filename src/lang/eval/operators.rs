//! Operators of the Puppet language: arithmetic (with numeric-string
//! coercion), comparison, `in`, regex and type matching, logical operators,
//! collection concatenation/deletion, and the `[]` access operator.

use std::cmp::Ordering;

use crate::lang::error::{LangError, Loc};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Evaluator, ScopeId};
use crate::lang::syntax::ast::{BinOp, Expr};
use crate::lang::values::types::{self, PType};
use crate::lang::values::value::str_to_num;
use crate::lang::values::value::{Value, compare, hash_get, key_equal, values_equal};

fn to_num(v: &Value, op: &str, loc: &Loc) -> Result<Value, LangError> {
    match v {
        Value::Int(_) | Value::Float(_) => Ok(v.clone()),
        Value::Str(s) => str_to_num(s).ok_or_else(|| {
            LangError::eval(
                format!("The value '{s}' cannot be converted to Numeric. (operator '{op}')"),
                loc,
            )
        }),
        other => Err(LangError::eval(
            format!(
                "Operator '{op}' is not applicable to {}",
                a_an(&other.type_name())
            ),
            loc,
        )),
    }
}

fn a_an(t: &str) -> String {
    match t.chars().next() {
        Some('A' | 'E' | 'I' | 'O' | 'U') => format!("an {t}"),
        _ => format!("a {t}"),
    }
}

fn arith(op: BinOp, a: &Value, b: &Value, loc: &Loc) -> Result<Value, LangError> {
    let sym = op_text(op);
    let x = to_num(a, sym, loc)?;
    let y = to_num(b, sym, loc)?;
    let overflow = || LangError::eval(format!("integer overflow in operator '{sym}'"), loc);
    match (x, y) {
        (Value::Int(x), Value::Int(y)) => {
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div => {
                    if y == 0 {
                        return Err(LangError::eval("Division by 0", loc));
                    }
                    // Ruby semantics: floor division.
                    x.checked_div(y).map(|q| {
                        if x % y != 0 && ((x < 0) != (y < 0)) {
                            q - 1
                        } else {
                            q
                        }
                    })
                }
                BinOp::Mod => {
                    if y == 0 {
                        return Err(LangError::eval("Division by 0", loc));
                    }
                    // Ruby semantics: the result takes the divisor's sign.
                    x.checked_rem(y).map(|r| {
                        if r != 0 && ((r < 0) != (y < 0)) {
                            r + y
                        } else {
                            r
                        }
                    })
                }
                BinOp::Shl => {
                    if y >= 0 {
                        x.checked_shl(u32::try_from(y).unwrap_or(64))
                    } else {
                        x.checked_shr(u32::try_from(-y).unwrap_or(64))
                    }
                }
                _ => {
                    if y >= 0 {
                        x.checked_shr(u32::try_from(y).unwrap_or(64))
                    } else {
                        x.checked_shl(u32::try_from(-y).unwrap_or(64))
                    }
                }
            };
            r.map(Value::Int).ok_or_else(overflow)
        }
        (x, y) => {
            let f = |v: &Value| match v {
                Value::Int(i) => *i as f64,
                Value::Float(f) => *f,
                _ => 0.0,
            };
            let (x, y) = (f(&x), f(&y));
            Ok(Value::Float(match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => {
                    if y == 0.0 {
                        return Err(LangError::eval("Division by 0", loc));
                    }
                    x / y
                }
                BinOp::Mod => {
                    return Err(LangError::eval(
                        "Operator '%' is not applicable to a Float",
                        loc,
                    ));
                }
                _ => {
                    return Err(LangError::eval(
                        format!("Operator '{sym}' is not applicable to a Float"),
                        loc,
                    ));
                }
            }))
        }
    }
}

impl<'l> Evaluator<'l> {
    pub fn eval_binary(
        &mut self,
        op: BinOp,
        l: &Expr,
        r: &Expr,
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<Value> {
        match op {
            BinOp::And => {
                let a = self.eval(l, sc)?;
                if !a.truthy() {
                    return Ok(Value::Bool(false));
                }
                return Ok(Value::Bool(self.eval(r, sc)?.truthy()));
            }
            BinOp::Or => {
                let a = self.eval(l, sc)?;
                if a.truthy() {
                    return Ok(Value::Bool(true));
                }
                return Ok(Value::Bool(self.eval(r, sc)?.truthy()));
            }
            _ => {}
        }
        let a = self.eval(l, sc)?;
        let b = self.eval(r, sc)?;
        let arithmetic = matches!(
            op,
            BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::Div
                | BinOp::Mod
                | BinOp::Shl
                | BinOp::Shr
        );
        if arithmetic && (matches!(a, Value::Rich(_)) || matches!(b, Value::Rich(_))) {
            return crate::lang::values::time::arith(op_text(op), &a, &b)
                .map_err(|e| LangError::from(e).at(loc).into());
        }
        if arithmetic && !matches!(a, Value::Array(_) | Value::Hash(_)) {
            for (v, e) in [(&a, l), (&b, r)] {
                if let Value::Str(s) = v
                    && str_to_num(s).is_none()
                {
                    return Err(LangError::eval(
                        format!("The value '{s}' cannot be converted to Numeric."),
                        &e.loc,
                    )
                    .into());
                }
            }
        }
        if matches!(op, BinOp::Div | BinOp::Mod) && matches!(b, Value::Int(0)) {
            return Err(LangError::eval("Division by 0", &r.loc).into());
        }
        Ok(match op {
            BinOp::Eq => Value::Bool(values_equal(&a, &b)),
            BinOp::Ne => Value::Bool(!values_equal(&a, &b)),
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => {
                let Some(ord) = compare(&a, &b) else {
                    let cause = match &a {
                        Value::Str(_) => {
                            ". Caused by 'A String is not comparable to a non String'."
                        }
                        Value::Int(_) | Value::Float(_) => {
                            ". Caused by 'A Numeric is not comparable to non Numeric'."
                        }
                        Value::Undef | Value::Bool(_) | Value::Array(_) | Value::Hash(_) => {
                            ". Caused by 'Only Strings, Numbers, Timespans, Timestamps, and Versions are comparable'."
                        }
                        _ => "",
                    };
                    // Puppet labels the operands: undef is an "Undef Value".
                    let label = |v: &Value| match v {
                        Value::Undef => "Undef Value".to_string(),
                        other => other.type_name().to_string(),
                    };
                    return Err(LangError::eval(
                        format!(
                            "Comparison of: {} {} {}, is not possible{cause}",
                            label(&a),
                            op_text(op),
                            label(&b)
                        ),
                        loc,
                    )
                    .into());
                };
                Value::Bool(match op {
                    BinOp::Lt => ord == Ordering::Less,
                    BinOp::Gt => ord == Ordering::Greater,
                    BinOp::Le => ord != Ordering::Greater,
                    _ => ord != Ordering::Less,
                })
            }
            BinOp::Match | BinOp::NoMatch => {
                let m = match (&a, &b) {
                    (Value::Str(s), Value::Regex(re)) => self.regex_match(re, s, sc, loc)?,
                    (Value::Str(s), Value::Str(re)) => self.regex_match(re, s, sc, loc)?,
                    (_, Value::Type(t)) => types::is_instance(t, &a),
                    (_, Value::Rich(r)) => crate::lang::values::rich::range_match(&a, r),
                    (_, Value::Regex(_)) | (_, Value::Str(_)) => false,
                    _ => {
                        return Err(LangError::eval(
                            format!(
                                "Left operand of '=~' must be a String, got {}",
                                a.type_name()
                            ),
                            loc,
                        )
                        .into());
                    }
                };
                Value::Bool(if op == BinOp::Match { m } else { !m })
            }
            BinOp::In => Value::Bool(self.eval_in(&a, &b, sc, loc)?),
            BinOp::Add => match (a, b) {
                (Value::Array(mut x), Value::Array(y)) => {
                    x.extend(y);
                    Value::Array(x)
                }
                (Value::Array(mut x), Value::Hash(h)) => {
                    x.extend(h.into_iter().map(|(k, v)| Value::Array(vec![k, v])));
                    Value::Array(x)
                }
                (Value::Array(mut x), y) => {
                    x.push(y);
                    Value::Array(x)
                }
                (Value::Hash(mut x), Value::Hash(y)) => {
                    for (k, v) in y {
                        crate::lang::values::value::hash_set(&mut x, k, v);
                    }
                    Value::Hash(x)
                }
                (Value::Hash(mut x), Value::Array(y)) => {
                    // Ruby's `Hash[[[k, v], ...]]` for an array of arrays,
                    // `Hash[k, v, ...]` for a flat one.
                    let pairs = hash_from_array(y, loc)?;
                    for (k, v) in pairs {
                        crate::lang::values::value::hash_set(&mut x, k, v);
                    }
                    Value::Hash(x)
                }
                (Value::Hash(_), _) => {
                    return Err(LangError::eval(
                        "Error while evaluating a '+' expression, Can only append Array or Hash to a Hash",
                        loc,
                    )
                    .into());
                }
                (x, y) => arith(op, &x, &y, loc)?,
            },
            BinOp::Sub => match (a, b) {
                (Value::Array(x), Value::Array(y)) => Value::Array(
                    x.into_iter()
                        .filter(|v| !y.iter().any(|w| values_equal(v, w)))
                        .collect(),
                ),
                (Value::Array(x), y) => {
                    Value::Array(x.into_iter().filter(|v| !values_equal(v, &y)).collect())
                }
                (Value::Hash(x), Value::Array(y)) => Value::Hash(
                    x.into_iter()
                        .filter(|(k, _)| !y.iter().any(|w| key_equal(k, w)))
                        .collect(),
                ),
                (Value::Hash(x), Value::Hash(y)) => Value::Hash(
                    x.into_iter()
                        .filter(|(k, _)| hash_get(&y, k).is_none())
                        .collect(),
                ),
                (Value::Hash(x), y) => {
                    Value::Hash(x.into_iter().filter(|(k, _)| !key_equal(k, &y)).collect())
                }
                (x, y) => arith(op, &x, &y, loc)?,
            },
            BinOp::Shl => match (a, b) {
                (Value::Array(mut x), y) => {
                    x.push(y);
                    Value::Array(x)
                }
                (x, y) => arith(op, &x, &y, loc)?,
            },
            _ => arith(op, &a, &b, loc)?,
        })
    }

    fn eval_in(&mut self, a: &Value, b: &Value, sc: ScopeId, loc: &Loc) -> EvalResult<bool> {
        Ok(match b {
            Value::Rich(r) => crate::lang::values::rich::range_match(a, r),
            Value::Str(hay) => match a {
                Value::Str(n) => hay.to_lowercase().contains(&n.to_lowercase()),
                Value::Regex(r) => self.regex_match(r, hay, sc, loc)?,
                _ => false,
            },
            Value::Array(items) => {
                for x in items {
                    let hit = match a {
                        Value::Regex(r) => match x {
                            Value::Str(s) => self.regex_match(r, s, sc, loc)?,
                            _ => false,
                        },
                        Value::Type(t) => types::is_instance(t, x),
                        _ => values_equal(a, x),
                    };
                    if hit {
                        return Ok(true);
                    }
                }
                false
            }
            Value::Hash(h) => {
                for (k, _) in h {
                    let hit = match a {
                        Value::Regex(r) => match k {
                            Value::Str(s) => self.regex_match(r, s, sc, loc)?,
                            _ => false,
                        },
                        _ => values_equal(a, k),
                    };
                    if hit {
                        return Ok(true);
                    }
                }
                false
            }
            _ => false,
        })
    }

    /// `target[keys]`
    pub fn access(&mut self, target: Value, keys: &[Value], loc: &Loc) -> EvalResult<Value> {
        if let Some(o) = crate::lang::values::plan::as_object(&target) {
            return o
                .access(keys)
                .map_err(|e| LangError::from(e).at(loc).into());
        }
        match target {
            Value::Type(t) => {
                types::access_type(&t, keys).map_err(|e| LangError::from(e).at(loc).into())
            }
            Value::Array(items) => {
                let len = items.len() as i64;
                match keys {
                    [Value::Int(i)] => {
                        let idx = if *i < 0 { len + i } else { *i };
                        Ok(usize::try_from(idx)
                            .ok()
                            .and_then(|i| items.get(i).cloned())
                            .unwrap_or(Value::Undef))
                    }
                    [Value::Int(start), count] => {
                        let (s, n) = slice_bounds(len, *start, count);
                        Ok(Value::Array(items.into_iter().skip(s).take(n).collect()))
                    }
                    _ => Err(LangError::eval(
                        format!(
                            "Array[] expects an Integer index, got {}",
                            keys.first().map_or("nothing".into(), |k| k.type_name())
                        ),
                        loc,
                    )
                    .into()),
                }
            }
            Value::Hash(h) => {
                if keys.len() == 1 {
                    let k = keys.first().unwrap_or(&Value::Undef);
                    return Ok(hash_get(&h, k).cloned().unwrap_or(Value::Undef));
                }
                Ok(Value::Array(
                    keys.iter()
                        .filter_map(|k| hash_get(&h, k).cloned())
                        .collect(),
                ))
            }
            Value::Str(s) => {
                let chars: Vec<char> = s.chars().collect();
                let len = chars.len() as i64;
                match keys {
                    [Value::Int(i)] => {
                        let idx = if *i < 0 { len + i } else { *i };
                        Ok(usize::try_from(idx)
                            .ok()
                            .and_then(|i| chars.get(i))
                            .map_or(Value::Undef, |c| Value::Str(c.to_string())))
                    }
                    [Value::Int(start), count] => {
                        let (s, n) = slice_bounds(len, *start, count);
                        Ok(Value::Str(chars.into_iter().skip(s).take(n).collect()))
                    }
                    _ => Err(LangError::eval("String[] expects an Integer index", loc).into()),
                }
            }
            Value::Undef => Err(LangError::eval(
                "Operator '[]' is not applicable to an Undef Value.",
                loc,
            )
            .into()),
            other => Err(LangError::eval(
                format!(
                    "Operator '[]' is not applicable to {}.",
                    a_an(&other.type_name())
                ),
                loc,
            )
            .into()),
        }
    }
}

fn slice_bounds(len: i64, start: i64, count: &Value) -> (usize, usize) {
    let s = if start < 0 {
        (len + start).max(0)
    } else {
        start.min(len)
    };
    let n = match count {
        Value::Int(c) if *c < 0 => (len + c + 1 - s).max(0),
        Value::Int(c) => *c,
        _ => len - s,
    };
    (
        usize::try_from(s).unwrap_or(0),
        usize::try_from(n.max(0)).unwrap_or(0),
    )
}

fn op_text(op: BinOp) -> &'static str {
    match op {
        BinOp::Lt => "<",
        BinOp::Gt => ">",
        BinOp::Le => "<=",
        BinOp::Ge => ">=",
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Mod => "%",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
        _ => "?",
    }
}

/// Helper used by functions: is `t` a resource reference type?
pub fn is_ref(v: &Value) -> bool {
    matches!(
        v,
        Value::Type(PType::Resource(Some(_), Some(_))) | Value::Type(PType::Class(Some(_)))
    )
}

/// The pairs `Hash + Array` merges, as Ruby's `Hash[]` reads the array:
/// an array of arrays is a list of `[key, value]` pairs (a missing value is
/// undef), any other array alternates keys and values.
fn hash_from_array(y: Vec<Value>, loc: &Loc) -> Result<Vec<(Value, Value)>, LangError> {
    let fail =
        |m: String| LangError::eval(format!("Error while evaluating a '+' expression, {m}"), loc);
    let pairs: Vec<&Vec<Value>> = y
        .iter()
        .filter_map(|v| match v {
            Value::Array(p) => Some(p),
            _ => None,
        })
        .collect();
    if !y.is_empty() && pairs.len() == y.len() {
        return pairs
            .into_iter()
            .map(|p| match p.as_slice() {
                [k] => Ok((k.clone(), Value::Undef)),
                [k, v] => Ok((k.clone(), v.clone())),
                _ => Err(fail(format!(
                    "invalid number of elements ({} for 1..2)",
                    p.len()
                ))),
            })
            .collect();
    }
    if !y.len().is_multiple_of(2) {
        return Err(fail("odd number of arguments for Hash".to_string()));
    }
    let mut it = y.into_iter();
    let mut out = Vec::new();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        out.push((k, v));
    }
    Ok(out)
}
