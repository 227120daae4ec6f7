//! Array and Hash methods of the ERB Ruby subset (iteration with blocks,
//! sorting, searching, conversion) and the binary operators (`+`, `==`,
//! `=~`, `<=>`, `<<`...).

use crate::lang::template::erb::control::{Ctl, R, fail};
use crate::lang::template::erb::eval::Interp;
use crate::lang::template::erb::parse::Block;
use crate::lang::template::erb::value::{class_name, inspect, ruby_cmp, ruby_eq, ruby_sort, to_s};
use crate::lang::values::regex::compile_regex;
use crate::lang::values::value::Value;

fn flatten_into(v: &[Value], out: &mut Vec<Value>, depth: usize) {
    for x in v {
        match x {
            Value::Array(a) if depth < 100 => flatten_into(a, out, depth + 1),
            other => out.push(other.clone()),
        }
    }
}

fn pairs(h: &[(Value, Value)]) -> Vec<Value> {
    h.iter()
        .map(|(k, v)| Value::Array(vec![k.clone(), v.clone()]))
        .collect()
}

fn from_pairs(items: Vec<Value>) -> R {
    let mut h = Vec::new();
    for p in items {
        match p {
            Value::Array(kv) if kv.len() == 2 => {
                let mut it = kv.into_iter();
                h.push((
                    it.next().unwrap_or(Value::Undef),
                    it.next().unwrap_or(Value::Undef),
                ));
            }
            other => {
                return fail(format!(
                    "wrong element type {} (expected array)",
                    class_name(&other)
                ));
            }
        }
    }
    Ok(Value::Hash(h))
}

impl<'a, 'l> Interp<'a, 'l> {
    /// Run `block` over `items`; `Err(Ok(v))` when it executed `break v`.
    fn each_result(&mut self, b: &Block, items: &[Value]) -> R<Result<Vec<Value>, Value>> {
        let mut out = Vec::with_capacity(items.len());
        for it in items {
            match self.yield_block(b, vec![it.clone()]) {
                Ok(v) => out.push(v),
                Err(Ctl::Break(v)) => return Ok(Err(v)),
                Err(e) => return Err(e),
            }
        }
        Ok(Ok(out))
    }

    /// `each_slice`, `zip`: with a block, run it over `items` (nil, or the
    /// value of a `break`); without one, the items.
    fn yield_each_or_list(&mut self, block: Option<&Block>, items: Vec<Value>) -> R {
        let Some(b) = block else {
            return Ok(Value::Array(items));
        };
        Ok(match self.each_result(b, &items)? {
            Err(v) => v,
            Ok(_) => Value::Undef,
        })
    }

    /// Methods shared by arrays and hashes (hashes iterate `[k, v]` pairs).
    fn enum_method(
        &mut self,
        items: Vec<Value>,
        name: &str,
        block: Option<&Block>,
    ) -> R<Option<Value>> {
        const NAMES: &[&str] = &[
            "map",
            "collect",
            "flat_map",
            "collect_concat",
            "select",
            "filter",
            "reject",
            "find",
            "detect",
            "any?",
            "all?",
            "none?",
            "count",
            "sort_by",
            "min_by",
            "max_by",
            "group_by",
            "partition",
        ];
        let Some(b) = block.filter(|_| NAMES.contains(&name)) else {
            return Ok(None);
        };
        let results = match self.each_result(b, &items)? {
            Ok(r) => r,
            Err(broke) => return Ok(Some(broke)),
        };
        let pick = |want: bool| -> Vec<Value> {
            items
                .iter()
                .zip(&results)
                .filter(|(_, r)| r.truthy() == want)
                .map(|(i, _)| i.clone())
                .collect()
        };
        Ok(Some(match name {
            "map" | "collect" | "flat_map" | "collect_concat" => {
                if name.starts_with("flat") || name.ends_with("concat") {
                    let mut out = Vec::new();
                    flatten_into(&results, &mut out, 99);
                    Value::Array(out)
                } else {
                    Value::Array(results)
                }
            }
            "select" | "filter" => Value::Array(pick(true)),
            "reject" => Value::Array(pick(false)),
            "find" | "detect" => items
                .iter()
                .zip(&results)
                .find(|(_, r)| r.truthy())
                .map_or(Value::Undef, |(i, _)| i.clone()),
            "any?" => Value::Bool(results.iter().any(Value::truthy)),
            "all?" => Value::Bool(results.iter().all(Value::truthy)),
            "none?" => Value::Bool(!results.iter().any(Value::truthy)),
            "count" => Value::Int(results.iter().filter(|r| r.truthy()).count() as i64),
            "sort_by" | "min_by" | "max_by" => {
                let mut keyed: Vec<(Value, Value)> = results.into_iter().zip(items).collect();
                let mut bad = false;
                keyed.sort_by(|a, b| {
                    ruby_cmp(&a.0, &b.0).unwrap_or_else(|| {
                        bad = true;
                        std::cmp::Ordering::Equal
                    })
                });
                if bad {
                    return fail("comparison failed in sort_by");
                }
                let sorted: Vec<Value> = keyed.into_iter().map(|(_, v)| v).collect();
                match name {
                    "min_by" => sorted.first().cloned().unwrap_or(Value::Undef),
                    "max_by" => sorted.last().cloned().unwrap_or(Value::Undef),
                    _ => Value::Array(sorted),
                }
            }
            "group_by" | "partition" => {
                if name == "partition" {
                    Value::Array(vec![Value::Array(pick(true)), Value::Array(pick(false))])
                } else {
                    let mut h: Vec<(Value, Value)> = Vec::new();
                    for (i, k) in items.into_iter().zip(results) {
                        match h.iter_mut().find(|(x, _)| ruby_eq(x, &k)) {
                            Some((_, Value::Array(a))) => a.push(i),
                            _ => h.push((k, Value::Array(vec![i]))),
                        }
                    }
                    Value::Hash(h)
                }
            }
            _ => return Ok(None),
        }))
    }

    pub fn array_method(
        &mut self,
        a: Vec<Value>,
        name: &str,
        args: Vec<Value>,
        block: Option<&Block>,
    ) -> R {
        let a0 = args.first().cloned().unwrap_or(Value::Undef);
        if let Some(v) = self.enum_method(a.clone(), name, block)? {
            return Ok(v);
        }
        Ok(match name {
            // Without a block these return an Enumerator; the chains templates
            // use (`a.map.each_with_index { |e, i| }`,
            // `a.each_with_index.map { |e, i| }`) behave as on these arrays.
            "map" | "collect" | "each" if block.is_none() => Value::Array(a),
            "each_with_index" if block.is_none() => Value::Array(
                a.into_iter()
                    .enumerate()
                    .map(|(i, x)| Value::Array(vec![x, Value::Int(i as i64)]))
                    .collect(),
            ),
            "each" | "each_with_index" | "each_index" => {
                if let Some(b) = block {
                    for (i, x) in a.iter().enumerate() {
                        let args = match name {
                            "each" => vec![x.clone()],
                            "each_index" => vec![Value::Int(i as i64)],
                            _ => vec![x.clone(), Value::Int(i as i64)],
                        };
                        match self.yield_block(b, args) {
                            Ok(_) => {}
                            Err(Ctl::Break(v)) => return Ok(v),
                            Err(e) => return Err(e),
                        }
                    }
                }
                Value::Array(a)
            }
            "each_slice" => {
                let n = match a0 {
                    Value::Int(n) if n > 0 => n as usize,
                    _ => return fail("invalid slice size"),
                };
                let chunks: Vec<Value> = a.chunks(n).map(|c| Value::Array(c.to_vec())).collect();
                self.yield_each_or_list(block, chunks)?
            }
            "length" | "size" | "count" => Value::Int(a.len() as i64),
            "empty?" => Value::Bool(a.is_empty()),
            "any?" => Value::Bool(a.iter().any(Value::truthy)),
            "all?" => Value::Bool(a.iter().all(Value::truthy)),
            "first" => match a0 {
                Value::Int(n) => Value::Array(a.into_iter().take(n.max(0) as usize).collect()),
                _ => a.first().cloned().unwrap_or(Value::Undef),
            },
            "last" => a.last().cloned().unwrap_or(Value::Undef),
            "join" => {
                let sep = to_s(&a0);
                let mut flat = Vec::new();
                flatten_into(&a, &mut flat, 0);
                Value::Str(flat.iter().map(to_s).collect::<Vec<_>>().join(&sep))
            }
            "flatten" => {
                let mut out = Vec::new();
                flatten_into(&a, &mut out, 0);
                Value::Array(out)
            }
            "compact" => Value::Array(a.into_iter().filter(|v| !v.is_undef()).collect()),
            "uniq" => {
                let mut out: Vec<Value> = Vec::new();
                for x in a {
                    if !out.iter().any(|y| ruby_eq(y, &x)) {
                        out.push(x);
                    }
                }
                Value::Array(out)
            }
            "sort" => {
                let mut s = a;
                ruby_sort(&mut s)?;
                Value::Array(s)
            }
            "reverse" => Value::Array(a.into_iter().rev().collect()),
            "min" | "max" => {
                let mut s = a;
                ruby_sort(&mut s)?;
                let v = if name == "min" { s.first() } else { s.last() };
                v.cloned().unwrap_or(Value::Undef)
            }
            "include?" | "member?" => Value::Bool(a.iter().any(|x| ruby_eq(x, &a0))),
            "index" | "find_index" => a
                .iter()
                .position(|x| ruby_eq(x, &a0))
                .map_or(Value::Undef, |i| Value::Int(i as i64)),
            "to_a" | "entries" | "to_ary" => Value::Array(a),
            "to_h" => from_pairs(a)?,
            "zip" => {
                let mut others = Vec::with_capacity(args.len());
                for o in &args {
                    others.push(match o {
                        Value::Array(x) => x.clone(),
                        Value::Hash(_) => self.iter_values(o)?,
                        other => {
                            return fail(format!(
                                "wrong argument type {} (must respond to :each)",
                                class_name(other)
                            ));
                        }
                    });
                }
                let rows: Vec<Value> = a
                    .into_iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let mut row = vec![x];
                        row.extend(
                            others
                                .iter()
                                .map(|o| o.get(i).cloned().unwrap_or(Value::Undef)),
                        );
                        Value::Array(row)
                    })
                    .collect();
                self.yield_each_or_list(block, rows)?
            }
            "push" | "<<" | "append" => {
                let mut a = a;
                a.extend(args);
                Value::Array(a)
            }
            "+" | "concat" | "-" | "&" | "|" => return self.binop_owned(name, Value::Array(a), a0),
            "[]" | "slice" | "at" | "fetch" | "dig" => match (&a0, args.get(1)) {
                (Value::Int(i), None) => {
                    let n = a.len() as i64;
                    let i = if *i < 0 { n + i } else { *i };
                    let v = usize::try_from(i).ok().and_then(|i| a.get(i).cloned());
                    match v {
                        Some(v) if name == "dig" && args.len() > 1 => {
                            self.call_method(v, "dig", args.into_iter().skip(1).collect(), None)?
                        }
                        Some(v) => v,
                        None if name == "fetch" && args.len() > 1 => {
                            args.get(1).cloned().unwrap_or(Value::Undef)
                        }
                        None => Value::Undef,
                    }
                }
                (Value::Int(start), Some(Value::Int(len))) => {
                    let n = a.len() as i64;
                    let s = if *start < 0 { n + start } else { *start };
                    if s < 0 || s > n || *len < 0 {
                        Value::Undef
                    } else {
                        Value::Array(a.into_iter().skip(s as usize).take(*len as usize).collect())
                    }
                }
                _ => {
                    return fail(format!(
                        "no implicit conversion of {} into Integer",
                        class_name(&a0)
                    ));
                }
            },
            _ => {
                return fail(format!(
                    "undefined method `{name}' for {}:Array",
                    inspect(&Value::Array(a))
                ));
            }
        })
    }

    pub fn hash_method(
        &mut self,
        h: Vec<(Value, Value)>,
        name: &str,
        args: Vec<Value>,
        block: Option<&Block>,
    ) -> R {
        let a0 = args.first().cloned().unwrap_or(Value::Undef);
        let get = |k: &Value| {
            h.iter()
                .find(|(x, _)| ruby_eq(x, k))
                .map(|(_, v)| v.clone())
        };
        if matches!(name, "select" | "filter" | "reject")
            && let Some(b) = block
        {
            let items = pairs(&h);
            let results = match self.each_result(b, &items)? {
                Ok(r) => r,
                Err(v) => return Ok(v),
            };
            let keep = name != "reject";
            let kept = h
                .iter()
                .zip(results)
                .filter(|(_, r)| r.truthy() == keep)
                .map(|(kv, _)| kv.clone())
                .collect();
            return Ok(Value::Hash(kept));
        }
        if let Some(v) = self.enum_method(pairs(&h), name, block)? {
            return Ok(v);
        }
        Ok(match name {
            "each" | "each_pair" | "each_with_index" => {
                if let Some(b) = block {
                    for (i, p) in pairs(&h).into_iter().enumerate() {
                        let args = if name == "each_with_index" {
                            vec![p, Value::Int(i as i64)]
                        } else {
                            vec![p]
                        };
                        match self.yield_block(b, args) {
                            Ok(_) => {}
                            Err(Ctl::Break(v)) => return Ok(v),
                            Err(e) => return Err(e),
                        }
                    }
                }
                Value::Hash(h)
            }
            "[]" => get(&a0).unwrap_or(Value::Undef),
            "fetch" => match (get(&a0), args.get(1)) {
                (Some(v), _) => v,
                (None, Some(d)) => d.clone(),
                (None, None) => return fail(format!("key not found: {}", inspect(&a0))),
            },
            "dig" => match get(&a0) {
                Some(v) if args.len() > 1 => {
                    self.call_method(v, "dig", args.into_iter().skip(1).collect(), None)?
                }
                Some(v) => v,
                None => Value::Undef,
            },
            "key?" | "has_key?" | "include?" | "member?" => Value::Bool(get(&a0).is_some()),
            "value?" | "has_value?" => Value::Bool(h.iter().any(|(_, v)| ruby_eq(v, &a0))),
            "keys" => Value::Array(h.into_iter().map(|(k, _)| k).collect()),
            "values" => Value::Array(h.into_iter().map(|(_, v)| v).collect()),
            "length" | "size" | "count" => Value::Int(h.len() as i64),
            "empty?" => Value::Bool(h.is_empty()),
            "any?" => Value::Bool(!h.is_empty()),
            "to_a" | "entries" => Value::Array(pairs(&h)),
            "to_h" | "to_hash" => Value::Hash(h),
            "sort" => {
                let mut p = pairs(&h);
                ruby_sort(&mut p)?;
                Value::Array(p)
            }
            "first" => pairs(&h).into_iter().next().unwrap_or(Value::Undef),
            "merge" => {
                let mut out = h;
                if let Value::Hash(other) = a0 {
                    for (k, v) in other {
                        match out.iter_mut().find(|(x, _)| ruby_eq(x, &k)) {
                            Some(slot) => slot.1 = v,
                            None => out.push((k, v)),
                        }
                    }
                }
                Value::Hash(out)
            }
            "invert" => Value::Hash(h.into_iter().map(|(k, v)| (v, k)).collect()),
            _ => {
                return fail(format!(
                    "undefined method `{name}' for {}:Hash",
                    inspect(&Value::Hash(h))
                ));
            }
        })
    }

    pub fn binop(&mut self, op: &str, l: Value, r: Value) -> R {
        self.binop_owned(op, l, r)
    }

    fn binop_owned(&mut self, op: &str, l: Value, r: Value) -> R {
        use Value::{Array, Float, Int, Str};
        let num = |x: &Value| match x {
            Int(i) => Some(*i as f64),
            Float(f) => Some(*f),
            _ => None,
        };
        Ok(match (op, &l, &r) {
            ("==", _, _) => Value::Bool(ruby_eq(&l, &r)),
            ("!=", _, _) => Value::Bool(!ruby_eq(&l, &r)),
            ("===", _, _) => Value::Bool(ruby_eq(&l, &r)),
            ("=~" | "!~", Str(s), Value::Regex(p)) | ("=~" | "!~", Value::Regex(p), Str(s)) => {
                let re = compile_regex(p).map_err(|e| Ctl::Err(e.into()))?;
                let hit = re.find(s);
                self.set_last_match(&re, s);
                if op == "!~" {
                    Value::Bool(hit.is_none())
                } else {
                    hit.map_or(Value::Undef, |m| {
                        Value::Int(s.get(..m.start()).unwrap_or("").chars().count() as i64)
                    })
                }
            }
            ("=~", _, _) => Value::Undef,
            ("!~", _, _) => Value::Bool(true),
            ("<=>", _, _) => ruby_cmp(&l, &r).map_or(Value::Undef, |o| Value::Int(o as i64)),
            ("<" | ">" | "<=" | ">=", _, _) => {
                let Some(o) = ruby_cmp(&l, &r) else {
                    return fail(format!(
                        "comparison of {} with {} failed",
                        class_name(&l),
                        class_name(&r)
                    ));
                };
                Value::Bool(match op {
                    "<" => o.is_lt(),
                    ">" => o.is_gt(),
                    "<=" => o.is_le(),
                    _ => o.is_ge(),
                })
            }
            ("+", Array(a), Array(b)) | ("concat", Array(a), Array(b)) => {
                Array(a.iter().chain(b).cloned().collect())
            }
            ("-", Array(a), Array(b)) => Array(
                a.iter()
                    .filter(|x| !b.iter().any(|y| ruby_eq(x, y)))
                    .cloned()
                    .collect(),
            ),
            ("&", Array(a), Array(b)) => Array(
                a.iter()
                    .filter(|x| b.iter().any(|y| ruby_eq(x, y)))
                    .cloned()
                    .collect(),
            ),
            ("|", Array(a), Array(b)) => {
                let mut out: Vec<Value> = Vec::new();
                for x in a.iter().chain(b) {
                    if !out.iter().any(|y| ruby_eq(y, x)) {
                        out.push(x.clone());
                    }
                }
                Array(out)
            }
            ("<<", Array(a), _) => {
                let mut a = a.clone();
                a.push(r);
                Array(a)
            }
            ("+" | "<<" | "*" | "%", Str(s), _) => {
                return self.call_method(Value::Str(s.clone()), op, vec![r], None);
            }
            ("+" | "-" | "*" | "/" | "%" | "**", Int(a), Int(b)) => {
                let v = match op {
                    "+" => a.checked_add(*b),
                    "-" => a.checked_sub(*b),
                    "*" => a.checked_mul(*b),
                    "/" if *b == 0 => return fail("divided by 0"),
                    "/" => a.checked_div(*b).map(|q| {
                        if a.checked_rem(*b).unwrap_or(0) != 0 && ((*a < 0) != (*b < 0)) {
                            q - 1
                        } else {
                            q
                        }
                    }),
                    "%" if *b == 0 => return fail("divided by 0"),
                    "%" => a.checked_rem(*b).map(|m| {
                        if m != 0 && ((m < 0) != (*b < 0)) {
                            m + b
                        } else {
                            m
                        }
                    }),
                    _ => u32::try_from(*b).ok().and_then(|e| a.checked_pow(e)),
                };
                match v {
                    Some(v) => Int(v),
                    None => return fail("integer overflow in template arithmetic"),
                }
            }
            ("+" | "-" | "*" | "/" | "%" | "**", _, _)
                if num(&l).is_some() && num(&r).is_some() =>
            {
                let (a, b) = (num(&l).unwrap_or(0.0), num(&r).unwrap_or(0.0));
                Float(match op {
                    "+" => a + b,
                    "-" => a - b,
                    "*" => a * b,
                    "/" => a / b,
                    "%" => a.rem_euclid(b),
                    _ => a.powf(b),
                })
            }
            _ => {
                return fail(format!(
                    "undefined method `{op}' for {}:{}",
                    inspect(&l),
                    class_name(&l)
                ));
            }
        })
    }
}
