//! Methods and operators of the ERB Ruby subset: `scope` access and
//! Puppet function calls, Kernel conversions (`Array(x)`...), and the
//! common String, Array, Hash and number methods templates use. Unknown
//! methods fail with Ruby's `undefined method` message.

use crate::lang::template::erb::control::{Ctl, R, fail};
use crate::lang::template::erb::eval::Interp;
use crate::lang::template::erb::parse::Block;
use crate::lang::template::erb::value::{class_name, inspect, ruby_cmp, ruby_eq, to_s};
use crate::lang::values::regex::compile_regex;
use crate::lang::values::value::Value;

const SCOPE: &str = "\u{0}scope";

pub fn is_scope(v: &Value) -> bool {
    matches!(v, Value::Str(s) if s == SCOPE)
}

fn str_arg(args: &[Value], i: usize) -> String {
    args.get(i).map(to_s).unwrap_or_default()
}

fn int_of(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::Float(f) => *f as i64,
        Value::Str(s) => {
            let t = s.trim_start();
            let end = t
                .char_indices()
                .find(|(i, c)| !(c.is_ascii_digit() || (*i == 0 && (*c == '-' || *c == '+'))))
                .map_or(t.len(), |(i, _)| i);
            t.get(..end).and_then(|n| n.parse().ok()).unwrap_or(0)
        }
        _ => 0,
    }
}

impl<'a, 'l> Interp<'a, 'l> {
    /// A call without receiver: Kernel functions and `scope`.
    pub fn call_bare(&mut self, name: &str, args: Vec<Value>, block: Option<&Block>) -> R {
        if let Some(m) = self.defined_method(name) {
            return self.call_defined(&m, args);
        }
        let a0 = args.first().cloned().unwrap_or(Value::Undef);
        Ok(match name {
            "scope" => Value::str(SCOPE),
            "Array" => match a0 {
                Value::Undef => Value::Array(Vec::new()),
                Value::Array(_) => a0,
                Value::Hash(_) => Value::Array(self.iter_values(&a0)?),
                other => Value::Array(vec![other]),
            },
            "String" => Value::Str(to_s(&a0)),
            "Integer" => match &a0 {
                Value::Str(s) => match crate::lang::values::value::str_to_num(s.trim()) {
                    Some(Value::Int(i)) => Value::Int(i),
                    _ => return fail(format!("invalid value for Integer(): {}", inspect(&a0))),
                },
                other => Value::Int(int_of(other)),
            },
            "Float" => match &a0 {
                Value::Int(i) => Value::Float(*i as f64),
                Value::Float(_) => a0,
                Value::Str(s) => match s.trim().parse::<f64>() {
                    Ok(f) => Value::Float(f),
                    Err(_) => return fail(format!("invalid value for Float(): {}", inspect(&a0))),
                },
                _ => return fail("can't convert to Float"),
            },
            "raise" | "fail" => return fail(to_s(&a0)),
            "puts" | "print" | "p" | "require" => Value::Undef,
            "lambda" | "proc" | "loop" | "binding" | "eval" | "instance_eval" | "send" => {
                return fail(format!("Unsupported ERB construct: '{name}'"));
            }
            _ if block.is_none() && args.is_empty() => {
                return fail(format!(
                    "undefined local variable or method `{name}' for template"
                ));
            }
            _ => return fail(format!("undefined method `{name}' for template")),
        })
    }

    /// Call a Puppet function from the template.
    fn puppet_function(&mut self, name: &str, args: Vec<Value>) -> R {
        let loc = self.loc.clone();
        let sc = self.sc;
        self.ev
            .call_function(name, args, None, sc, &loc)
            .map_err(|u| Ctl::Err(u.into_error()))
    }

    fn scope_method(&mut self, name: &str, args: Vec<Value>) -> R {
        let a0 = args.first().cloned().unwrap_or(Value::Undef);
        Ok(match name {
            "[]" | "lookupvar" => {
                let n = to_s(&a0);
                self.ev.lookup_var(&n, self.sc).unwrap_or(Value::Undef)
            }
            "to_hash" => self.scope_hash(),
            "exist?" | "include?" => Value::Bool(self.ev.lookup_var(&to_s(&a0), self.sc).is_some()),
            "setvar" => {
                let v = args.get(1).cloned().unwrap_or(Value::Undef);
                self.set_scope_var(&to_s(&a0), v.clone());
                v
            }
            "call_function" => {
                let fargs = match args.get(1) {
                    Some(Value::Array(a)) => a.clone(),
                    Some(other) => vec![other.clone()],
                    None => Vec::new(),
                };
                self.puppet_function(&to_s(&a0), fargs)?
            }
            _ if name.starts_with("function_") => {
                let fargs = match a0 {
                    Value::Array(a) => a,
                    Value::Undef => Vec::new(),
                    other => vec![other],
                };
                self.puppet_function(name.trim_start_matches("function_"), fargs)?
            }
            _ => return fail(format!("undefined method `{name}' for scope")),
        })
    }

    /// `Class.name(args)`: constructors and the class methods templates use
    /// (`Regexp.escape`, `JSON.parse`).
    fn class_method(&mut self, class: &str, name: &str, args: &[Value]) -> R {
        let a0 = args.first().cloned().unwrap_or(Value::Undef);
        Ok(match (class, name) {
            (_, "name" | "to_s") => Value::str(class),
            ("Hash", "new") => Value::Hash(Vec::new()),
            ("Array", "new") => Value::Array(Vec::new()),
            ("Regexp", "escape" | "quote") => match &a0 {
                Value::Str(text) => Value::Str(regexp_escape(text)),
                other => {
                    return fail(format!(
                        "no implicit conversion of {} into String",
                        class_name(other)
                    ));
                }
            },
            ("JSON", "parse") => {
                let text = match &a0 {
                    Value::Str(t) => t,
                    other => {
                        return fail(format!(
                            "no implicit conversion of {} into String",
                            class_name(other)
                        ));
                    }
                };
                match serde_json::from_str::<serde_json::Value>(text) {
                    Ok(j) => Value::from_json(&j),
                    Err(_) => return fail(format!("unexpected token at '{text}'")),
                }
            }
            _ => return fail(format!("undefined method `{name}' for {class}:Class")),
        })
    }

    /// `recv.name(args) { block }`.
    pub fn call_method(
        &mut self,
        recv: Value,
        name: &str,
        args: Vec<Value>,
        block: Option<&Block>,
    ) -> R {
        self.tick()?;
        if is_scope(&recv) {
            return self.scope_method(name, args);
        }
        let a0 = args.first().cloned().unwrap_or(Value::Undef);
        // Methods every object has.
        match name {
            "nil?" => return Ok(Value::Bool(recv.is_undef())),
            "to_s" => return Ok(Value::Str(to_s(&recv))),
            "to_yaml" => {
                return Ok(Value::Str(crate::lang::template::erb::yaml::to_yaml(
                    &recv,
                )?));
            }
            "inspect" => return Ok(Value::Str(inspect(&recv))),
            "is_a?" | "kind_of?" | "instance_of?" => {
                return Ok(Value::Bool(self.is_a(&recv, &to_s(&a0))));
            }
            "class" => return Ok(Value::Str(format!("\u{0}class:{}", class_name(&recv)))),
            "==" | "eql?" | "equal?" => return Ok(Value::Bool(ruby_eq(&recv, &a0))),
            "!=" => return Ok(Value::Bool(!ruby_eq(&recv, &a0))),
            "respond_to?" => return Ok(Value::Bool(false)),
            "frozen?" => return Ok(Value::Bool(true)),
            "dup" | "clone" | "freeze" | "to_sym" | "itself" => return Ok(recv),
            _ => {}
        }
        match &recv {
            Value::Str(s) if s.starts_with("\u{0}class:") => {
                self.class_method(s.trim_start_matches("\u{0}class:"), name, &args)
            }
            Value::Str(s) => self.string_method(s, name, &args, block),
            Value::Regex(_) if matches!(name, "match" | "match?" | "=~") => {
                let subject = to_s(&a0);
                if a0.is_undef() {
                    return Ok(if name == "match?" {
                        Value::Bool(false)
                    } else {
                        Value::Undef
                    });
                }
                self.string_method(&subject, name, std::slice::from_ref(&recv), None)
            }
            Value::Array(_) | Value::Hash(_) if matches!(name, "delete" | "shift" | "pop") => {
                // On a temporary: the element removed (the receiver is gone).
                Ok(crate::lang::template::erb::eval::removed(&recv, name, args.first())?.1)
            }
            Value::Array(a) => self.array_method(a.clone(), name, args, block),
            Value::Hash(h) => self.hash_method(h.clone(), name, args, block),
            Value::Int(n) if name == "times" => {
                let items = (0..(*n).clamp(0, 1_000_000)).map(Value::Int).collect();
                self.array_method(items, "each", args, block)
            }
            Value::Int(_) | Value::Float(_) => self.number_method(&recv, name, &args),
            Value::Undef => match name {
                "to_a" => Ok(Value::Array(Vec::new())),
                "to_i" => Ok(Value::Int(0)),
                "to_f" => Ok(Value::Float(0.0)),
                "&" => Ok(Value::Bool(false)),
                _ => fail(format!("undefined method `{name}' for nil:NilClass")),
            },
            Value::Bool(b) => match name {
                "&" => Ok(Value::Bool(*b && a0.truthy())),
                "|" => Ok(Value::Bool(*b || a0.truthy())),
                "!" => Ok(Value::Bool(!b)),
                _ => fail(format!(
                    "undefined method `{name}' for {b}:{}",
                    class_name(&recv)
                )),
            },
            other => fail(format!(
                "undefined method `{name}' for {}",
                class_name(other)
            )),
        }
    }

    fn string_method(&mut self, s: &str, name: &str, args: &[Value], block: Option<&Block>) -> R {
        let a0 = args.first().cloned().unwrap_or(Value::Undef);
        let regex_of = |v: &Value| -> R<regex::Regex> {
            let pat = match v {
                Value::Regex(r) => r.clone(),
                other => regex::escape(&to_s(other)),
            };
            compile_regex(&pat).map_err(|e| Ctl::Err(e.into()))
        };
        Ok(match name {
            "length" | "size" => Value::Int(s.chars().count() as i64),
            "empty?" => Value::Bool(s.is_empty()),
            "upcase" => Value::Str(s.to_uppercase()),
            "chars" => Value::Array(s.chars().map(|c| Value::Str(c.to_string())).collect()),
            "downcase" => Value::Str(s.to_lowercase()),
            "capitalize" => {
                let mut c = s.chars();
                Value::Str(match c.next() {
                    Some(f) => f.to_uppercase().collect::<String>() + &c.as_str().to_lowercase(),
                    None => String::new(),
                })
            }
            "strip" => Value::str(s.trim()),
            "lstrip" => Value::str(s.trim_start()),
            "rstrip" => Value::str(s.trim_end()),
            "chomp" => Value::str(
                s.strip_suffix("\r\n")
                    .or_else(|| s.strip_suffix('\n'))
                    .or_else(|| s.strip_suffix('\r'))
                    .unwrap_or(s),
            ),
            "to_i" => Value::Int(int_of(&Value::str(s))),
            "to_f" => Value::Float(s.trim().parse().unwrap_or(0.0)),
            "to_str" => Value::str(s),
            "include?" => Value::Bool(s.contains(&to_s(&a0))),
            "start_with?" => Value::Bool(args.iter().any(|a| s.starts_with(&to_s(a)))),
            "end_with?" => Value::Bool(args.iter().any(|a| s.ends_with(&to_s(a)))),
            "split" => {
                let parts: Vec<Value> = match &a0 {
                    Value::Undef => s.split_whitespace().map(Value::str).collect(),
                    Value::Str(sep) if sep == " " => s.split_whitespace().map(Value::str).collect(),
                    Value::Regex(_) => regex_of(&a0)?.split(s).map(Value::str).collect(),
                    other => s.split(to_s(other).as_str()).map(Value::str).collect(),
                };
                let mut parts = parts;
                while parts
                    .last()
                    .is_some_and(|p| matches!(p, Value::Str(x) if x.is_empty()))
                {
                    parts.pop();
                }
                Value::Array(parts)
            }
            "gsub" | "sub" if args.len() == 1 && block.is_some() => {
                // Each match replaced by the block's value (the match in `$~`).
                let re = regex_of(&a0)?;
                let Some(b) = block else {
                    return Ok(Value::str(s));
                };
                let mut out = String::new();
                let mut last = 0;
                for m in re.find_iter(s) {
                    out.push_str(s.get(last..m.start()).unwrap_or_default());
                    self.set_last_match(&re, m.as_str());
                    let v = self.yield_block(b, vec![Value::str(m.as_str())])?;
                    out.push_str(&to_s(&v));
                    last = m.end();
                    if name == "sub" {
                        break;
                    }
                }
                out.push_str(s.get(last..).unwrap_or_default());
                Value::Str(out)
            }
            "gsub" | "sub" => {
                let re = regex_of(&a0)?;
                let rep = str_arg(args, 1)
                    .replace("\\\\", "\u{1}")
                    .replace("\\0", "${0}");
                let rep = (1..10).fold(rep, |r, i| {
                    r.replace(&format!("\\{i}"), &format!("${{{i}}}"))
                });
                let rep = rep.replace('\u{1}', "\\");
                Value::Str(if name == "gsub" {
                    re.replace_all(s, rep.as_str()).into_owned()
                } else {
                    re.replace(s, rep.as_str()).into_owned()
                })
            }
            "=~" | "match" | "match?" => {
                let re = regex_of(&a0)?;
                if name != "match?" {
                    self.set_last_match(&re, s);
                }
                match re.find(s) {
                    Some(m) if name == "=~" => {
                        Value::Int(s.get(..m.start()).unwrap_or("").chars().count() as i64)
                    }
                    Some(m) if name == "match" => Value::str(m.as_str()),
                    Some(_) => Value::Bool(true),
                    None if name == "match?" => Value::Bool(false),
                    None => Value::Undef,
                }
            }
            "+" => match &a0 {
                Value::Str(b) => Value::Str(format!("{s}{b}")),
                other => {
                    return fail(format!(
                        "no implicit conversion of {} into String",
                        class_name(other)
                    ));
                }
            },
            "*" => {
                let n = usize::try_from(int_of(&a0)).unwrap_or(0);
                if s.len().saturating_mul(n) > crate::lang::template::erb::eval::MAX_OUTPUT {
                    return fail("string too large");
                }
                Value::Str(s.repeat(n))
            }
            "%" => {
                let fargs = match a0 {
                    Value::Array(a) => a,
                    other => vec![other],
                };
                let mut all = vec![Value::str(s)];
                all.extend(fargs);
                self.puppet_function("sprintf", all)?
            }
            "<<" | "concat" => Value::Str(format!("{s}{}", to_s(&a0))),
            "[]" => match &a0 {
                Value::Int(i) => {
                    let n = s.chars().count() as i64;
                    let i = if *i < 0 { n + i } else { *i };
                    usize::try_from(i)
                        .ok()
                        .and_then(|i| s.chars().nth(i))
                        .map_or(Value::Undef, |c| Value::Str(c.to_string()))
                }
                Value::Regex(_) => regex_of(&a0)?
                    .find(s)
                    .map_or(Value::Undef, |m| Value::str(m.as_str())),
                other => {
                    let t = to_s(other);
                    if s.contains(&t) {
                        Value::Str(t)
                    } else {
                        Value::Undef
                    }
                }
            },
            "tr" => {
                let from: Vec<char> = str_arg(args, 0).chars().collect();
                let to: Vec<char> = str_arg(args, 1).chars().collect();
                Value::Str(
                    s.chars()
                        .map(|c| match from.iter().position(|f| *f == c) {
                            Some(i) => to.get(i).or(to.last()).copied().unwrap_or(c),
                            None => c,
                        })
                        .collect(),
                )
            }
            "delete" => {
                // A character set: `a-z` ranges, `^` negates.
                let spec: Vec<char> = str_arg(args, 0).chars().collect();
                let (neg, spec) = match spec.split_first() {
                    Some(('^', rest)) if !rest.is_empty() => (true, rest),
                    _ => (false, spec.as_slice()),
                };
                let mut ranges = Vec::new();
                let mut i = 0;
                while let Some(&c) = spec.get(i) {
                    match (spec.get(i + 1), spec.get(i + 2)) {
                        (Some('-'), Some(&hi)) => {
                            ranges.push((c, hi));
                            i += 3;
                        }
                        _ => {
                            ranges.push((c, c));
                            i += 1;
                        }
                    }
                }
                let hit = |c: char| ranges.iter().any(|(lo, hi)| *lo <= c && c <= *hi) != neg;
                Value::Str(s.chars().filter(|c| !hit(*c)).collect())
            }
            "ljust" | "rjust" | "center" => {
                let w = usize::try_from(int_of(&a0)).unwrap_or(0).min(1 << 20);
                let n = s.chars().count();
                let pad = " ".repeat(w.saturating_sub(n));
                Value::Str(match name {
                    "ljust" => format!("{s}{pad}"),
                    "rjust" => format!("{pad}{s}"),
                    _ => {
                        let (l, r) = pad.split_at(pad.len() / 2);
                        format!("{l}{s}{r}")
                    }
                })
            }
            "each_line" | "lines" => {
                let lines: Vec<Value> = s.split_inclusive('\n').map(Value::str).collect();
                match block {
                    Some(b) => {
                        for l in lines {
                            if let Err(Ctl::Break(v)) = self.yield_block(b, vec![l]) {
                                return Ok(v);
                            }
                        }
                        Value::str(s)
                    }
                    None => Value::Array(lines),
                }
            }
            "<=>" => ruby_cmp(&Value::str(s), &a0).map_or(Value::Undef, |o| Value::Int(o as i64)),
            _ => {
                return fail(format!(
                    "undefined method `{name}' for {}:String",
                    inspect(&Value::str(s))
                ));
            }
        })
    }

    fn number_method(&mut self, n: &Value, name: &str, args: &[Value]) -> R {
        let a0 = args.first().cloned().unwrap_or(Value::Undef);
        Ok(match name {
            "to_i" | "to_int" | "floor" if matches!(n, Value::Float(f) if f.is_finite()) => {
                let Value::Float(f) = n else {
                    return Ok(n.clone());
                };
                Value::Int(f.floor() as i64)
            }
            "to_i" | "to_int" | "floor" | "ceil" | "round" => match n {
                Value::Float(f) if name == "ceil" => Value::Int(f.ceil() as i64),
                Value::Float(f) if name == "round" => Value::Int(f.round() as i64),
                other => other.clone(),
            },
            "to_f" => match n {
                Value::Int(i) => Value::Float(*i as f64),
                other => other.clone(),
            },
            "abs" => match n {
                Value::Int(i) => Value::Int(i.wrapping_abs()),
                Value::Float(f) => Value::Float(f.abs()),
                other => other.clone(),
            },
            "zero?" => {
                Value::Bool(matches!(n, Value::Int(0)) || matches!(n, Value::Float(f) if *f == 0.0))
            }
            "even?" => Value::Bool(matches!(n, Value::Int(i) if i % 2 == 0)),
            "odd?" => Value::Bool(matches!(n, Value::Int(i) if i % 2 != 0)),
            "+" | "-" | "*" | "/" | "%" | "**" | "<" | ">" | "<=" | ">=" | "<=>" => {
                return self.binop(name, n.clone(), a0);
            }
            _ => {
                return fail(format!(
                    "undefined method `{name}' for {}:{}",
                    to_s(n),
                    class_name(n)
                ));
            }
        })
    }
}

/// Ruby's `Regexp.escape`: the regexp metacharacters and space behind a
/// backslash, tab, newline, carriage return, form feed and vertical tab as
/// their letter escapes.
pub(crate) fn regexp_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x0c' => out.push_str("\\f"),
            '\x0b' => out.push_str("\\v"),
            ' ' | '#' | '$' | '(' | ')' | '*' | '+' | '-' | '.' | '?' | '[' | '\\' | ']' | '^'
            | '{' | '|' | '}' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}
