//! Evaluator for the Ruby subset of ERB templates. Ruby values are the
//! language's own [`Value`]s (nil is `Undef`, symbols are strings, `:undef`
//! is nil); instance variables and `scope[...]`/`scope.lookupvar` read the
//! calling Puppet scope, `scope.call_function`/`scope.function_x` call
//! Puppet functions. Semantics follow Ruby: case-sensitive `==`, byte-order
//! string sorting, `to_s`/`inspect` forms of arrays and hashes. Methods on
//! values are in `erb_methods.rs`.

use std::collections::HashMap;

use crate::lang::error::plain;
use crate::lang::error::{LangError, Loc};
use crate::lang::eval::{Evaluator, ScopeId};
use crate::lang::template::erb::control::{Ctl, R, fail};
use crate::lang::template::erb::parse::{Block, RExpr, RStr};
use crate::lang::template::erb::value::{class_name, inspect, ruby_eq, to_s};
use crate::lang::values::regex::compile_regex;
use crate::lang::values::value::Value;

/// Evaluation steps allowed for one template (bounds loops over ranges).
const MAX_STEPS: usize = 5_000_000;
/// Largest template output, in bytes.
pub const MAX_OUTPUT: usize = 64 << 20;

pub struct Interp<'a, 'l> {
    pub ev: &'a mut Evaluator<'l>,
    pub sc: ScopeId,
    pub loc: Loc,
    frames: Vec<HashMap<String, Value>>,
    ivars: HashMap<String, Value>,
    /// The groups of the last `=~`/`match` (`$~`, `$1`...); None after a miss.
    pub last_match: Option<Vec<Value>>,
    pub out: String,
    steps: usize,
}

impl<'a, 'l> Interp<'a, 'l> {
    pub fn new(ev: &'a mut Evaluator<'l>, sc: ScopeId, loc: Loc) -> Self {
        Interp {
            ev,
            sc,
            loc,
            frames: vec![HashMap::new()],
            ivars: HashMap::new(),
            last_match: None,
            out: String::new(),
            steps: 0,
        }
    }

    /// Record a match's groups for `$~` and `$1`..`$n` (Ruby sets them on
    /// every `=~`, `!~` and `match`, to nil when nothing matched).
    pub fn set_last_match(&mut self, re: &regex::Regex, subject: &str) {
        self.last_match = re.captures(subject).map(|c| {
            c.iter()
                .map(|g| g.map_or(Value::Undef, |m| Value::str(m.as_str())))
                .collect()
        });
    }

    /// `scope.setvar(name, value)`: a variable of the calling Puppet scope,
    /// seen by `scope['name']` and templates rendered from here on; this
    /// template's `@name` keeps the value it had when rendering began
    /// (Puppet copies the variables into instance variables then).
    pub fn set_scope_var(&mut self, name: &str, v: Value) {
        let name = name.trim_start_matches("::").to_string();
        if !self.ivars.contains_key(&name) {
            let before = self.ev.lookup_var(&name, self.sc).unwrap_or(Value::Undef);
            self.ivars.insert(name.clone(), before);
        }
        if let Some(s) = self.ev.scopes.get_mut(self.sc) {
            s.vars.insert(name, v);
        }
    }

    pub fn run(&mut self, body: &[RExpr]) -> Result<(), LangError> {
        match self.block_body(body) {
            Ok(_) => Ok(()),
            Err(Ctl::Err(e)) => Err(e),
            Err(Ctl::Next(_) | Ctl::Break(_)) => {
                Err(plain("Invalid next/break outside of a block"))
            }
        }
    }

    pub fn block_body(&mut self, body: &[RExpr]) -> R {
        let mut last = Value::Undef;
        for e in body {
            last = self.eval(e)?;
        }
        Ok(last)
    }

    /// Call a block with Ruby's argument binding (a single array argument
    /// spreads over several parameters).
    pub fn yield_block(&mut self, b: &Block, mut args: Vec<Value>) -> R {
        if args.len() == 1
            && b.params.len() > 1
            && let Some(Value::Array(a)) = args.first()
        {
            args = a.clone();
        }
        let mut frame = HashMap::new();
        for (i, group) in b.params.iter().enumerate() {
            let arg = args.get(i).cloned().unwrap_or(Value::Undef);
            if let [one] = group.as_slice() {
                frame.insert(one.clone(), arg);
            } else {
                let parts = match arg {
                    Value::Array(a) => a,
                    other => vec![other],
                };
                for (j, n) in group.iter().enumerate() {
                    frame.insert(n.clone(), parts.get(j).cloned().unwrap_or(Value::Undef));
                }
            }
        }
        self.frames.push(frame);
        let r = self.block_body(&b.body);
        self.frames.pop();
        match r {
            Err(Ctl::Next(v)) => Ok(v),
            other => other,
        }
    }

    fn set_local(&mut self, name: &str, v: Value) {
        for f in self.frames.iter_mut().rev() {
            if let Some(slot) = f.get_mut(name) {
                *slot = v;
                return;
            }
        }
        if let Some(f) = self.frames.last_mut() {
            f.insert(name.to_string(), v);
        }
    }

    fn local(&self, name: &str) -> Value {
        self.frames
            .iter()
            .rev()
            .find_map(|f| f.get(name).cloned())
            .unwrap_or(Value::Undef)
    }

    pub fn ivar(&self, name: &str) -> Value {
        if let Some(v) = self.ivars.get(name) {
            return v.clone();
        }
        self.ev.lookup_var(name, self.sc).unwrap_or(Value::Undef)
    }

    pub fn tick(&mut self) -> R<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return fail("template evaluation took too many steps");
        }
        Ok(())
    }

    pub fn eval(&mut self, e: &RExpr) -> R {
        self.tick()?;
        let v = self.eval_inner(e)?;
        if matches!(
            e,
            RExpr::Bin(..) | RExpr::Call(..) | RExpr::Array(_) | RExpr::Str(_) | RExpr::Assign(..)
        ) && let Some(excess) = crate::lang::values::value::excess(&v)
        {
            return fail(match excess {
                crate::lang::values::value::Excess::Size => "template value too large".to_string(),
                crate::lang::values::value::Excess::Depth => format!(
                    "template value nested too deeply (more than {} levels)",
                    crate::lang::values::value::MAX_VALUE_DEPTH
                ),
            });
        }
        Ok(v)
    }

    fn eval_inner(&mut self, e: &RExpr) -> R {
        Ok(match e {
            RExpr::Nil => Value::Undef,
            RExpr::Bool(b) => Value::Bool(*b),
            RExpr::Int(i) => Value::Int(*i),
            RExpr::Float(f) => Value::Float(*f),
            RExpr::Sym(s) if s == "undef" => Value::Undef,
            RExpr::Sym(s) => Value::Str(s.clone()),
            RExpr::Regex(r) => Value::Regex(r.clone()),
            RExpr::Str(parts) => {
                let mut s = String::new();
                for p in parts {
                    match p {
                        RStr::Lit(l) => s.push_str(l),
                        RStr::Code(c) => {
                            let v = self.eval(c)?;
                            s.push_str(&to_s(&v));
                        }
                    }
                }
                Value::Str(s)
            }
            RExpr::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.eval(i)?);
                }
                Value::Array(out)
            }
            RExpr::Hash(pairs) => {
                let mut h: Vec<(Value, Value)> = Vec::new();
                for (k, v) in pairs {
                    let k = self.eval(k)?;
                    let v = self.eval(v)?;
                    match h.iter_mut().find(|(x, _)| ruby_eq(x, &k)) {
                        Some(slot) => slot.1 = v,
                        None => h.push((k, v)),
                    }
                }
                Value::Hash(h)
            }
            RExpr::IVar(n) => self.ivar(n),
            RExpr::GVar(n) => match (&self.last_match, n.parse::<usize>()) {
                (None, _) => Value::Undef,
                (Some(groups), Ok(i)) => groups.get(i).cloned().unwrap_or(Value::Undef),
                (Some(groups), Err(_)) => Value::Array(groups.clone()),
            },
            RExpr::Local(n) => self.local(n),
            RExpr::Const(n) => Value::Str(format!("\u{0}class:{n}")),
            RExpr::SelfRef => Value::Str("\u{0}scope".into()),
            RExpr::Call(recv, name, args, block) => {
                let recv = match recv {
                    Some(r) => Some(self.eval(r)?),
                    None => None,
                };
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a)?);
                }
                match recv {
                    Some(r) => self.call_method(r, name, vals, block.as_deref())?,
                    None => self.call_bare(name, vals, block.as_deref())?,
                }
            }
            RExpr::Index(target, keys) => {
                let t = self.eval(target)?;
                let mut ks = Vec::new();
                for k in keys {
                    ks.push(self.eval(k)?);
                }
                self.call_method(t, "[]", ks, None)?
            }
            RExpr::Not(x) => Value::Bool(!self.eval(x)?.truthy()),
            RExpr::And(l, r) => {
                let l = self.eval(l)?;
                if l.truthy() { self.eval(r)? } else { l }
            }
            RExpr::Or(l, r) => {
                let l = self.eval(l)?;
                if l.truthy() { l } else { self.eval(r)? }
            }
            RExpr::Bin(op, l, r) => {
                let l = self.eval(l)?;
                let r = self.eval(r)?;
                self.binop(op, l, r)?
            }
            RExpr::Ternary(c, a, b) => {
                if self.eval(c)?.truthy() {
                    self.eval(a)?
                } else {
                    self.eval(b)?
                }
            }
            RExpr::Assign(target, op, rhs) => self.assign(target, *op, rhs)?,
            RExpr::If(arms, els) => {
                for (c, body) in arms {
                    if self.eval(c)?.truthy() {
                        return self.block_body(body);
                    }
                }
                self.block_body(els)?
            }
            RExpr::Case(subject, whens, els) => {
                let v = match subject {
                    Some(s) => Some(self.eval(s)?),
                    None => None,
                };
                for (vals, body) in whens {
                    for w in vals {
                        let w = self.eval(w)?;
                        let hit = match &v {
                            Some(v) => self.case_eq(&w, v)?,
                            None => w.truthy(),
                        };
                        if hit {
                            return self.block_body(body);
                        }
                    }
                }
                self.block_body(els)?
            }
            RExpr::For(vars, iter, body) => {
                let it = self.eval(iter)?;
                let b = Block {
                    params: vars.iter().map(|v| vec![v.clone()]).collect(),
                    body: body.clone(),
                };
                for item in self.iter_values(&it)? {
                    // `for` shares the enclosing scope.
                    let vals = match (&item, vars.len()) {
                        (Value::Array(a), n) if n > 1 => a.clone(),
                        _ => vec![item],
                    };
                    for (i, n) in vars.iter().enumerate() {
                        self.set_local(n, vals.get(i).cloned().unwrap_or(Value::Undef));
                    }
                    match self.block_body(&b.body) {
                        Ok(_) | Err(Ctl::Next(_)) => {}
                        Err(Ctl::Break(v)) => return Ok(v),
                        Err(e) => return Err(e),
                    }
                }
                it
            }
            RExpr::Next(v) => {
                let v = match v {
                    Some(v) => self.eval(v)?,
                    None => Value::Undef,
                };
                return Err(Ctl::Next(v));
            }
            RExpr::Break(v) => {
                let v = match v {
                    Some(v) => self.eval(v)?,
                    None => Value::Undef,
                };
                return Err(Ctl::Break(v));
            }
            RExpr::Defined(x) => match &**x {
                RExpr::IVar(n) => {
                    if self.ivars.contains_key(n) || self.ev.lookup_var(n, self.sc).is_some() {
                        Value::str("instance-variable")
                    } else {
                        Value::Undef
                    }
                }
                RExpr::Local(_) => Value::str("local-variable"),
                _ => Value::str("expression"),
            },
            RExpr::Range(a, b, excl) => {
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                match (a, b) {
                    (Value::Int(a), Value::Int(b)) => {
                        let end = if *excl { b.saturating_sub(1) } else { b };
                        if end.saturating_sub(a) > 1_000_000 {
                            return fail("range too large");
                        }
                        Value::Array((a..=end).map(Value::Int).collect())
                    }
                    _ => return fail("only integer ranges are supported"),
                }
            }
            RExpr::Text(t) => {
                self.emit(t)?;
                Value::Undef
            }
            RExpr::Out(x) => {
                let v = self.eval(x)?;
                self.emit(&to_s(&v))?;
                Value::Undef
            }
        })
    }

    fn emit(&mut self, s: &str) -> R<()> {
        if self.out.len() + s.len() > MAX_OUTPUT {
            return fail("template output too large");
        }
        self.out.push_str(s);
        Ok(())
    }

    fn assign(&mut self, target: &RExpr, op: Option<&'static str>, rhs: &RExpr) -> R {
        let current = |me: &mut Self| -> R {
            match target {
                RExpr::Local(n) => Ok(me.local(n)),
                RExpr::IVar(n) => Ok(me.ivar(n)),
                other => me.eval(other),
            }
        };
        let v = match op {
            None => self.eval(rhs)?,
            Some("||") => {
                let cur = current(self)?;
                if cur.truthy() { cur } else { self.eval(rhs)? }
            }
            Some("&&") => {
                let cur = current(self)?;
                if cur.truthy() { self.eval(rhs)? } else { cur }
            }
            Some(op) => {
                let cur = current(self)?;
                let r = self.eval(rhs)?;
                self.binop(op, cur, r)?
            }
        };
        match target {
            RExpr::Local(n) => self.set_local(n, v.clone()),
            RExpr::IVar(n) => {
                self.ivars.insert(n.clone(), v.clone());
            }
            RExpr::Index(t, keys) => {
                // `scope.lookupvar('x')[k] = v` changes the hash the scope
                // holds (Ruby shares it): written back to the variable.
                let scope_var = match &**t {
                    RExpr::Local(_) | RExpr::IVar(_) => None,
                    RExpr::Call(Some(recv), name, args, None)
                        if matches!(name.as_str(), "lookupvar" | "[]") && args.len() == 1 =>
                    {
                        let recv = self.eval(recv)?;
                        if !crate::lang::template::erb::methods::is_scope(&recv) {
                            return fail("unsupported assignment target");
                        }
                        let name = args.first().map(|a| self.eval(a)).transpose()?;
                        Some(to_s(&name.unwrap_or(Value::Undef)))
                    }
                    _ => return fail("unsupported assignment target"),
                };
                let Some(k) = keys.first() else {
                    return fail("index assignment needs a key");
                };
                let k = self.eval(k)?;
                let mut container = self.eval(t)?;
                match &mut container {
                    Value::Hash(h) => match h.iter_mut().find(|(x, _)| ruby_eq(x, &k)) {
                        Some(slot) => slot.1 = v.clone(),
                        None => h.push((k, v.clone())),
                    },
                    Value::Array(a) => {
                        let Value::Int(i) = k else {
                            return fail("array index must be an Integer");
                        };
                        let Ok(i) = usize::try_from(i) else {
                            return fail("negative array index in assignment");
                        };
                        if i > 1_000_000 {
                            return fail("array index too large");
                        }
                        if a.len() <= i {
                            a.resize(i + 1, Value::Undef);
                        }
                        if let Some(slot) = a.get_mut(i) {
                            *slot = v.clone();
                        }
                    }
                    _ => return fail("index assignment on a value that is not a Hash or Array"),
                }
                match (&**t, scope_var) {
                    (_, Some(name)) => self.set_scope_var(&name, container),
                    (RExpr::Local(n), None) => self.set_local(n, container),
                    (RExpr::IVar(n), None) => {
                        self.ivars.insert(n.clone(), container);
                    }
                    _ => {}
                }
            }
            _ => return fail("unsupported assignment target"),
        }
        Ok(v)
    }

    /// Ruby `===` as used by `case/when`.
    fn case_eq(&mut self, pattern: &Value, v: &Value) -> R<bool> {
        Ok(match pattern {
            Value::Regex(r) => match v {
                Value::Str(s) => compile_regex(r).map_err(LangError::from)?.is_match(s),
                _ => false,
            },
            Value::Str(c) if c.starts_with("\u{0}class:") => self.is_a(v, c),
            _ => ruby_eq(pattern, v),
        })
    }

    /// `v.is_a?(Class)` for a class marker value.
    pub fn is_a(&self, v: &Value, class: &str) -> bool {
        let name = class.trim_start_matches("\u{0}class:");
        let own = class_name(v);
        name == own
            || name == "Object"
            || name == "BasicObject"
            || (name == "Numeric" && matches!(v, Value::Int(_) | Value::Float(_)))
            || (name == "Fixnum" && matches!(v, Value::Int(_)))
            || (name == "Enumerable" && matches!(v, Value::Array(_) | Value::Hash(_)))
    }

    /// Elements a block iterates over (hash entries are `[k, v]` pairs).
    pub fn iter_values(&self, v: &Value) -> R<Vec<Value>> {
        Ok(match v {
            Value::Array(a) => a.clone(),
            Value::Hash(h) => h
                .iter()
                .map(|(k, v)| Value::Array(vec![k.clone(), v.clone()]))
                .collect(),
            other => return fail(format!("undefined method 'each' for {}", inspect(other))),
        })
    }
}
