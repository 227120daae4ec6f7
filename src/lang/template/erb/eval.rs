//! Evaluator for the Ruby subset of ERB templates. Ruby values are the
//! language's own [`Value`]s (nil is `Undef`, symbols are strings, `:undef`
//! is nil); instance variables and `scope[...]`/`scope.lookupvar` read the
//! calling Puppet scope, `scope.call_function`/`scope.function_x` call
//! Puppet functions. Semantics follow Ruby: case-sensitive `==`, byte-order
//! string sorting, `to_s`/`inspect` forms of arrays and hashes. Methods on
//! values are in `erb_methods.rs`.

use std::collections::HashMap;
use std::sync::Arc;

use crate::lang::error::plain;
use crate::lang::error::{LangError, Loc};
use crate::lang::eval::{Evaluator, ScopeId};
use crate::lang::template::erb::control::{Ctl, R, fail};
use crate::lang::template::erb::parse::{Block, MethodDef, RExpr, RStr};
use crate::lang::template::erb::value::{class_name, inspect, ruby_eq, to_s};
use crate::lang::values::regex::compile_regex;
use crate::lang::values::value::Value;

/// Methods that change their receiver in place.
fn is_mutator(name: &str) -> bool {
    name.ends_with('!')
        || matches!(
            name,
            "<<" | "push"
                | "append"
                | "concat"
                | "unshift"
                | "prepend"
                | "update"
                | "clear"
                | "delete"
                | "shift"
                | "pop"
        )
}

/// `h.delete(k)`, `a.delete(x)`, `a.shift`, `a.pop` on a Hash or Array:
/// the receiver without the element, and the element removed (nil when
/// there was none), as Ruby's methods that change their receiver return.
pub fn removed(old: &Value, name: &str, arg: Option<&Value>) -> R<(Value, Value)> {
    let key = arg.cloned().unwrap_or(Value::Undef);
    Ok(match (old, name) {
        (Value::Hash(h), "delete") => {
            let mut h = h.clone();
            let ret = match h.iter().position(|(k, _)| ruby_eq(k, &key)) {
                Some(i) => h.remove(i).1,
                None => Value::Undef,
            };
            (Value::Hash(h), ret)
        }
        (Value::Array(a), "delete") => {
            let kept: Vec<Value> = a.iter().filter(|x| !ruby_eq(x, &key)).cloned().collect();
            let ret = if kept.len() == a.len() {
                Value::Undef
            } else {
                key
            };
            (Value::Array(kept), ret)
        }
        (Value::Array(a), "shift") => {
            let mut a = a.clone();
            let ret = if a.is_empty() {
                Value::Undef
            } else {
                a.remove(0)
            };
            (Value::Array(a), ret)
        }
        (Value::Array(a), "pop") => {
            let mut a = a.clone();
            let ret = a.pop().unwrap_or(Value::Undef);
            (Value::Array(a), ret)
        }
        (other, _) => return fail(format!("undefined method `{name}' for {}", inspect(other))),
    })
}

/// What a bang method (`gsub!`, `compact!`...) returns, given its
/// receiver before and after: nil when nothing changed, except for the
/// methods that always return their receiver (`map!`, `sort!`...).
fn bang_result(base: &str, old: &Value, new: Value) -> Value {
    let always_self = matches!(base, "map" | "collect" | "sort" | "sort_by" | "shuffle");
    if always_self || !ruby_eq(&new, old) {
        new
    } else {
        Value::Undef
    }
}

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
    /// Locals assigned straight from an instance variable (`a = @list`):
    /// in Ruby both name one object, so changing it in place through the
    /// local changes the Puppet variable (and the parameter it came from).
    shared: HashMap<String, String>,
    /// The groups of the last `=~`/`match` (`$~`, `$1`...); None after a miss.
    pub last_match: Option<Vec<Value>>,
    pub out: String,
    steps: usize,
    /// The template line being run (0: unknown), for error messages.
    pub line: usize,
    /// Methods the template defined with `def`.
    methods: HashMap<String, Arc<MethodDef>>,
    /// Nesting of template-defined method calls (bounded: recursion).
    call_depth: usize,
}

/// Deepest nesting of template-defined method calls.
const MAX_CALL_DEPTH: usize = 100;

impl<'a, 'l> Interp<'a, 'l> {
    pub fn new(ev: &'a mut Evaluator<'l>, sc: ScopeId, loc: Loc) -> Self {
        Interp {
            ev,
            sc,
            loc,
            frames: vec![HashMap::new()],
            ivars: HashMap::new(),
            shared: HashMap::new(),
            last_match: None,
            out: String::new(),
            steps: 0,
            line: 0,
            methods: HashMap::new(),
            call_depth: 0,
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

    /// A method that changes its receiver (`a << x`, `a.push(x)`,
    /// `h.merge!(o)`, `a.compact!`...) called on a variable: Ruby changes
    /// the object the variable holds, so the new value is stored back.
    /// Bang methods return nil when nothing changed, as Ruby's do.
    fn mutate(&mut self, target: &RExpr, name: &str, args: Vec<Value>, block: Option<&Block>) -> R {
        let old = match target {
            RExpr::Local(n) => self.local(n),
            RExpr::IVar(n) => self.ivar(n),
            other => self.eval(other)?,
        };
        let keeps_string = matches!(name, "delete" | "shift" | "pop");
        if !matches!(old, Value::Array(_) | Value::Hash(_) | Value::Str(_))
            || (keeps_string && matches!(old, Value::Str(_)))
        {
            // `String#delete` makes a new string; others are not mutators here.
            let base = name.trim_end_matches('!');
            return self.call_method(old, base, args, block);
        }
        let (new, ret) = match name {
            "<<" | "push" | "append" | "concat" => {
                let new = match (&old, name) {
                    (Value::Str(_), _) | (_, "<<" | "push" | "append") => {
                        self.call_method(old.clone(), name, args, block)?
                    }
                    _ => self.binop(
                        "+",
                        old.clone(),
                        args.into_iter().next().unwrap_or(Value::Undef),
                    )?,
                };
                (new.clone(), new)
            }
            "unshift" | "prepend" => {
                let new = match &old {
                    Value::Array(a) => {
                        Value::Array(args.into_iter().chain(a.iter().cloned()).collect())
                    }
                    Value::Str(s) => {
                        Value::Str(format!("{}{s}", args.iter().map(to_s).collect::<String>()))
                    }
                    _ => old.clone(),
                };
                (new.clone(), new)
            }
            "merge!" | "update" => {
                let new = self.call_method(old.clone(), "merge", args, block)?;
                (new.clone(), new)
            }
            "delete" | "shift" | "pop" => removed(&old, name, args.first())?,
            "clear" => {
                let new = match &old {
                    Value::Array(_) => Value::Array(Vec::new()),
                    Value::Hash(_) => Value::Hash(Vec::new()),
                    _ => Value::Str(String::new()),
                };
                (new.clone(), new)
            }
            _ => {
                let base = name.trim_end_matches('!');
                let new = self.call_method(old.clone(), base, args, block)?;
                let ret = bang_result(base, &old, new.clone());
                (new, ret)
            }
        };
        let origin = match target {
            RExpr::Local(n) => {
                self.set_local(n, new.clone());
                self.shared.get(n).cloned()
            }
            RExpr::IVar(n) => Some(n.clone()),
            _ => None,
        };
        if let Some(iv) = origin {
            self.ivars.insert(iv.clone(), new.clone());
            self.write_through(&iv, &old, new);
        }
        Ok(ret)
    }

    /// A Puppet variable's object changed in place: the scope that holds
    /// it (and the parameter of the define or class it was bound from, the
    /// same object in Puppet) gets the new value. Identity is approximated
    /// by name and equal value.
    fn write_through(&mut self, name: &str, old: &Value, new: Value) {
        let mut cur = Some(self.sc);
        let mut guard = 0;
        while let Some(id) = cur {
            let Some(s) = self.ev.scopes.get_mut(id) else {
                break;
            };
            if let Some(slot) = s.vars.get_mut(name) {
                if ruby_eq(slot, old) {
                    *slot = new.clone();
                    let res = s.container;
                    if let Some(r) = self.ev.resources.get_mut(res)
                        && let Some(p) = r.params.iter_mut().find(|(k, _)| k == name)
                        && ruby_eq(&p.1, old)
                    {
                        p.1 = new;
                    }
                }
                return;
            }
            cur = s.parent.filter(|p| *p != id);
            guard += 1;
            if guard > 10_000 {
                return;
            }
        }
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
            Err(Ctl::Return(_)) => Err(plain("Invalid return outside of a method")),
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

    /// The template-defined method `name`, if there is one.
    pub fn defined_method(&self, name: &str) -> Option<Arc<MethodDef>> {
        self.methods.get(name).cloned()
    }

    /// Call a template-defined method: a fresh local scope holding its
    /// parameters; `return` ends it with a value.
    pub fn call_defined(&mut self, m: &MethodDef, args: Vec<Value>) -> R {
        if args.len() != m.params.len() {
            return fail(format!(
                "wrong number of arguments (given {}, expected {})",
                args.len(),
                m.params.len()
            ));
        }
        if self.call_depth >= MAX_CALL_DEPTH {
            return fail("stack level too deep");
        }
        let frame: HashMap<String, Value> = m.params.iter().cloned().zip(args).collect();
        let frames = std::mem::replace(&mut self.frames, vec![frame]);
        let shared = std::mem::take(&mut self.shared);
        let line = self.line;
        self.call_depth += 1;
        let r = self.block_body(&m.body);
        self.call_depth -= 1;
        self.frames = frames;
        self.shared = shared;
        if r.is_ok() || matches!(r, Err(Ctl::Return(_))) {
            // An error keeps the method's line, as Ruby's backtrace does.
            self.line = line;
        }
        match r {
            Err(Ctl::Return(v)) => Ok(v),
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

    /// `scope.to_hash`: every variable the calling scope sees, from the
    /// top scope down to its own (an inner one hiding an outer one of the
    /// same name), without the undef ones, as Puppet's `Scope#to_hash`
    /// gives them; keys sorted (Puppet's order is the order of assignment,
    /// which the scopes do not keep).
    pub fn scope_hash(&self) -> Value {
        let mut chain = Vec::new();
        let mut cur = Some(self.sc);
        while let Some(id) = cur {
            if chain.len() > 10_000 || chain.contains(&id) {
                break;
            }
            chain.push(id);
            cur = self.ev.scopes.get(id).and_then(|s| s.parent);
        }
        let mut vars: std::collections::BTreeMap<&str, &Value> = Default::default();
        for id in chain.into_iter().rev() {
            let Some(s) = self.ev.scopes.get(id) else {
                continue;
            };
            for (k, v) in &s.vars {
                if v.is_undef() {
                    vars.remove(k.as_str());
                } else {
                    vars.insert(k, v);
                }
            }
        }
        Value::Hash(
            vars.into_iter()
                .map(|(k, v)| (Value::str(k), v.clone()))
                .collect(),
        )
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
            RExpr::Call(Some(target), name, args, block)
                if is_mutator(name) && matches!(**target, RExpr::Local(_) | RExpr::IVar(_)) =>
            {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a)?);
                }
                self.mutate(target, name, vals, block.as_deref())?
            }
            RExpr::Call(Some(recv), name, args, block) if name.ends_with('!') => {
                // A bang method on a temporary: the changed copy, or nil
                // when nothing changed (`x.gsub(a, b).gsub!(c, d)`).
                let recv = self.eval(recv)?;
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a)?);
                }
                let base = name.trim_end_matches('!');
                let new = self.call_method(recv.clone(), base, vals, block.as_deref())?;
                bang_result(base, &recv, new)
            }
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
            RExpr::Bin("<<", l, r) if matches!(**l, RExpr::Local(_) | RExpr::IVar(_)) => {
                let r = self.eval(r)?;
                self.mutate(l, "<<", vec![r], None)?
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
                    // Puppet sets an instance variable for every variable in
                    // scope except the undef ones (scope.to_hash).
                    if self.ivars.contains_key(n)
                        || self
                            .ev
                            .lookup_var(n, self.sc)
                            .is_some_and(|v| !v.is_undef())
                    {
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
            RExpr::Line(n) => {
                self.line = *n;
                Value::Undef
            }
            RExpr::Rescue(r) => {
                let result = match self.block_body(&r.body) {
                    Err(Ctl::Err(e)) => {
                        if let Some(var) = &r.var {
                            self.set_local(var, Value::Str(e.message.clone()));
                        }
                        self.block_body(&r.handler)
                    }
                    other => other,
                };
                self.block_body(&r.always)?;
                result?
            }
            RExpr::Def(m) => {
                self.methods.insert(m.name.clone(), m.clone());
                Value::Str(m.name.clone())
            }
            RExpr::Return(v) => {
                let v = match v {
                    Some(v) => self.eval(v)?,
                    None => Value::Undef,
                };
                return Err(Ctl::Return(v));
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
            RExpr::Local(n) => {
                match (op, rhs) {
                    (None, RExpr::IVar(iv)) => self.shared.insert(n.clone(), iv.clone()),
                    _ => self.shared.remove(n),
                };
                self.set_local(n, v.clone())
            }
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
            other => return fail(format!("undefined method `each' for {}", inspect(other))),
        })
    }
}
