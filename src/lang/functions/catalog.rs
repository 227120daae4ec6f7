//! Function call dispatch and the catalog/control functions: include,
//! require, contain, realize, tag, tagged, defined, logging, fail, lookup,
//! templates, iteration (each/map/filter/reduce/with/...), create_resources
//! and ensure_resource. Data-manipulating functions are in `functions_data.rs`.

use crate::lang::error::plain;
use crate::lang::error::{LResult, LangError, Loc};
use crate::lang::eval::resources::{collect_refs, set_param, titles};
use crate::lang::eval::{Evaluator, ResKind, ScopeId, in_context};
use crate::lang::syntax::ast::{Lambda, Virtuality};
use crate::lang::values::types::{self, PType, capitalize};
use crate::lang::values::value::Value;

fn need_lambda<'a>(name: &str, l: Option<&'a Lambda>) -> LResult<&'a Lambda> {
    l.ok_or_else(|| plain(format!("'{name}' expects a block")))
}

/// Iterate a value as Puppet does: arrays by element, hashes by [k, v],
/// integers as 0..n, strings by character.
pub(crate) fn iter_items(v: &Value) -> LResult<Vec<(Value, Value)>> {
    Ok(match v {
        Value::Array(a) | Value::Iterator(a) => a
            .iter()
            .enumerate()
            .map(|(i, x)| (Value::Int(i as i64), x.clone()))
            .collect(),
        Value::Hash(h) => h.clone(),
        Value::Int(n) => (0..(*n).clamp(0, 1_000_000))
            .map(|i| (Value::Int(i), Value::Int(i)))
            .collect(),
        Value::Type(PType::Integer(lo, hi))
            if *lo > i64::MIN && *hi < i64::MAX && hi.saturating_sub(*lo) <= 1_000_000 =>
        {
            (*lo..=*hi)
                .enumerate()
                .map(|(i, x)| (Value::Int(i as i64), Value::Int(x)))
                .collect()
        }
        Value::Str(s) => s
            .chars()
            .enumerate()
            .map(|(i, c)| (Value::Int(i as i64), Value::Str(c.to_string())))
            .collect(),
        other => {
            return Err(plain(format!(
                "expects an Iterable value, got {}",
                other.type_name()
            )));
        }
    })
}

impl<'l> Evaluator<'l> {
    /// Lambda arguments for element (k, v): one param gets v (or [k, v] for
    /// hashes), two params get k and v.
    fn lambda_args(l: &Lambda, k: &Value, v: &Value, is_hash: bool) -> Vec<Value> {
        if l.params.len() >= 2 {
            vec![k.clone(), v.clone()]
        } else if is_hash {
            vec![Value::Array(vec![k.clone(), v.clone()])]
        } else {
            vec![v.clone()]
        }
    }

    pub fn call_function(
        &mut self,
        name: &str,
        args: Vec<Value>,
        lambda: Option<&Lambda>,
        sc: ScopeId,
        loc: &Loc,
    ) -> LResult<Value> {
        self.enter(loc)?;
        let r = self.dispatch(name, args, lambda, sc, loc);
        self.leave();
        r.map_err(|e| in_context(e, "Function Call", loc))
    }

    fn dispatch(
        &mut self,
        name: &str,
        args: Vec<Value>,
        lambda: Option<&Lambda>,
        sc: ScopeId,
        loc: &Loc,
    ) -> LResult<Value> {
        let lname = name.trim_start_matches("::").to_lowercase();
        if let Some(f) = self.functions.get(&lname).cloned() {
            return self.call_user_function(&f, args, loc);
        }
        if lname.contains("::") && !lname.starts_with("stdlib::") {
            self.autoload_function(&lname);
            if let Some(f) = self.functions.get(&lname).cloned() {
                return self.call_user_function(&f, args, loc);
            }
        }
        let a0 = args.first().cloned().unwrap_or(Value::Undef);
        match lname.as_str() {
            "__tpl_text" => crate::lang::template::epp::emit(self, &args),
            "include" | "require" | "contain" => {
                let mut refs = Vec::new();
                for a in &args {
                    for n in titles(a) {
                        let idx = self.declare_class(&n, None, sc, loc)?;
                        if lname == "contain" {
                            let c = self.container_of(sc);
                            if !self.edges.contains(&(c, idx)) {
                                self.edges.push((c, idx));
                            }
                        }
                        if lname == "require" {
                            let c = self.container_of(sc);
                            if let Some(r) = self.resources.get_mut(c) {
                                let cls = Value::Type(PType::Class(Some(
                                    n.trim_start_matches("::").to_lowercase(),
                                )));
                                let mut cur = match r
                                    .params
                                    .iter()
                                    .find(|(k, _)| k == "require")
                                    .map(|(_, v)| v.clone())
                                {
                                    Some(Value::Array(a)) => a,
                                    Some(Value::Undef) | None => Vec::new(),
                                    Some(o) => vec![o],
                                };
                                cur.push(cls);
                                set_param(&mut r.params, "require".into(), Value::Array(cur));
                            }
                        }
                        refs.push(Value::Type(PType::Class(Some(
                            n.trim_start_matches("::").to_lowercase(),
                        ))));
                    }
                }
                Ok(Value::Array(refs))
            }
            "hiera_include" => {
                let found = self.fn_lookup("hiera_array", &args, None, sc)?;
                let mut refs = Vec::new();
                for n in titles(&found) {
                    self.declare_class(&n, None, sc, loc)?;
                    refs.push(Value::Type(PType::Class(Some(
                        n.trim_start_matches("::").to_lowercase(),
                    ))));
                }
                Ok(Value::Array(refs))
            }
            "realize" => {
                self.realize(&args)?;
                Ok(Value::Undef)
            }
            "tag" => {
                let c = self.container_of(sc);
                if let Some(r) = self.resources.get_mut(c) {
                    for a in &args {
                        for t in titles(a) {
                            crate::lang::eval::resources::push_tag(&mut r.tags, &t);
                        }
                    }
                }
                Ok(Value::Undef)
            }
            "tagged" => {
                let c = self.container_of(sc);
                let tags = self
                    .resources
                    .get(c)
                    .map(|r| r.tags.clone())
                    .unwrap_or_default();
                Ok(Value::Bool(
                    args.iter()
                        .flat_map(titles)
                        .all(|t| tags.contains(&t.to_lowercase())),
                ))
            }
            "defined" => {
                for a in &args {
                    let hit = match a {
                        Value::Str(s) if s.starts_with('$') => {
                            let n = s.trim_start_matches('$');
                            self.lookup_var(n, sc).is_some()
                        }
                        Value::Str(s) => {
                            let l = s.trim_start_matches("::").to_lowercase();
                            self.find_class(&l)?.is_some()
                                || self.resource_kind(&l).is_some()
                                || self.functions.contains_key(&l)
                        }
                        Value::Type(PType::Resource(Some(t), Some(title))) => self
                            .index
                            .get(&(t.clone(), title.clone()))
                            .is_some_and(|i| self.resources.get(*i).is_some_and(|r| !r.virtual_)),
                        Value::Type(PType::Class(Some(c))) => self
                            .index
                            .contains_key(&("Class".to_string(), capitalize(c))),
                        Value::Type(PType::Resource(Some(t), None)) => {
                            self.resource_kind(&t.to_lowercase()).is_some()
                        }
                        _ => false,
                    };
                    if hit {
                        return Ok(Value::Bool(true));
                    }
                }
                Ok(Value::Bool(false))
            }
            "notice" | "info" | "warning" | "err" | "debug" | "alert" | "crit" | "emerg" => {
                let msg: Vec<String> = args.iter().map(|v| v.to_s()).collect();
                self.messages.push(format!("{lname}: {}", msg.join(" ")));
                Ok(Value::Undef)
            }
            "fail" => {
                let msg: Vec<String> = args.iter().map(|v| v.to_s()).collect();
                Err(plain(msg.join(" ")))
            }
            "next" | "break" | "return" => {
                self.control_value = a0;
                let kind = match lname.as_str() {
                    "next" => crate::lang::error::ErrorKind::Next,
                    "break" => crate::lang::error::ErrorKind::Break,
                    _ => crate::lang::error::ErrorKind::Return,
                };
                Err(LangError {
                    kind,
                    message: format!("{lname}() is not allowed here"),
                    loc: Some(loc.clone()),
                })
            }
            "lookup" | "hiera" | "hiera_array" | "hiera_hash" => {
                self.fn_lookup(&lname, &args, lambda, sc)
            }
            "template" => {
                let mut out = String::new();
                for a in &args {
                    out.push_str(&crate::lang::template::render_erb_file(
                        self,
                        &a.to_s(),
                        sc,
                        loc,
                    )?);
                }
                Ok(Value::Str(out))
            }
            "inline_template" => {
                let mut out = String::new();
                for a in &args {
                    out.push_str(&crate::lang::template::erb::render_erb(
                        self,
                        &a.to_s(),
                        sc,
                        "inline_template",
                    )?);
                }
                Ok(Value::Str(out))
            }
            "epp" => {
                let path = a0.to_s();
                let params = args.get(1).cloned().unwrap_or(Value::Hash(Vec::new()));
                crate::lang::template::render_epp_file(self, &path, params, sc, loc)
            }
            "inline_epp" => {
                let params = args.get(1).cloned().unwrap_or(Value::Hash(Vec::new()));
                crate::lang::template::epp::render_epp(self, &a0.to_s(), params, sc, "inline_epp")
                    .map(Value::Str)
            }
            "each" | "map" | "filter" | "reject" | "any" | "all" | "find" => {
                let l = need_lambda(&lname, lambda)?;
                let is_hash = matches!(a0, Value::Hash(_));
                let items = iter_items(&a0)?;
                let mut out_arr = Vec::new();
                let mut out_hash = Vec::new();
                for (k, v) in items {
                    let Some(r) = self.lambda_step(l, Self::lambda_args(l, &k, &v, is_hash), sc)?
                    else {
                        break;
                    };
                    match lname.as_str() {
                        "map" => out_arr.push(r),
                        "filter" | "reject" if r.truthy() == (lname == "filter") => {
                            if is_hash {
                                out_hash.push((k, v));
                            } else {
                                out_arr.push(v);
                            }
                        }
                        "any" if r.truthy() => return Ok(Value::Bool(true)),
                        "all" if !r.truthy() => return Ok(Value::Bool(false)),
                        "find" if r.truthy() => {
                            return Ok(if is_hash { Value::Array(vec![k, v]) } else { v });
                        }
                        _ => {}
                    }
                }
                Ok(match lname.as_str() {
                    "each" => a0,
                    "any" => Value::Bool(false),
                    "all" => Value::Bool(true),
                    "find" => Value::Undef,
                    "filter" | "reject" if is_hash => Value::Hash(out_hash),
                    _ => Value::Array(out_arr),
                })
            }
            "reduce" => {
                let l = need_lambda(&lname, lambda)?;
                let is_hash = matches!(a0, Value::Hash(_));
                let items = iter_items(&a0)?;
                let mut it = items
                    .into_iter()
                    .map(|(k, v)| if is_hash { Value::Array(vec![k, v]) } else { v });
                let mut acc = match args.get(1) {
                    Some(init) => init.clone(),
                    None => it.next().unwrap_or(Value::Undef),
                };
                for v in it {
                    match self.lambda_step(l, vec![acc.clone(), v], sc)? {
                        Some(next) => acc = next,
                        None => break,
                    }
                }
                Ok(acc)
            }
            "with" => {
                let l = need_lambda(&lname, lambda)?;
                self.call_lambda(l, args, sc)
            }
            "then" => {
                let l = need_lambda(&lname, lambda)?;
                if a0.is_undef() {
                    Ok(Value::Undef)
                } else {
                    self.call_lambda(l, vec![a0], sc)
                }
            }
            "lest" => {
                let l = need_lambda(&lname, lambda)?;
                if a0.is_undef() {
                    self.call_lambda(l, vec![], sc)
                } else {
                    Ok(a0)
                }
            }
            "each_with_index" | "slice" => {
                let l = need_lambda(&lname, lambda)?;
                let n = match args.get(1) {
                    Some(Value::Int(n)) if *n > 0 => *n as usize,
                    _ => 1,
                };
                let items: Vec<Value> = iter_items(&a0)?.into_iter().map(|(_, v)| v).collect();
                for chunk in items.chunks(n) {
                    let arg = if n == 1 {
                        chunk.first().cloned().unwrap_or(Value::Undef)
                    } else {
                        Value::Array(chunk.to_vec())
                    };
                    if self.lambda_step(l, vec![arg], sc)?.is_none() {
                        break;
                    }
                }
                Ok(Value::Undef)
            }
            "assert_type" => {
                let Value::Type(t) = &a0 else {
                    return Err(plain("assert_type expects a Type as first argument"));
                };
                let v = args.get(1).cloned().unwrap_or(Value::Undef);
                if types::is_instance(t, &v) {
                    Ok(v)
                } else if let Some(l) = lambda {
                    self.call_lambda(l, vec![Value::Type(t.clone()), v], sc)
                } else {
                    Err(plain(format!("assert_type(): {}", types::mismatch(t, &v))))
                }
            }
            "create_resources" => {
                let tname = a0.to_s().to_lowercase();
                let Some(Value::Hash(h)) = args.get(1) else {
                    return Err(plain("create_resources(): second argument must be a Hash"));
                };
                let defaults = match args.get(2) {
                    Some(Value::Hash(d)) => d.clone(),
                    _ => Vec::new(),
                };
                for (title, params) in h {
                    let mut ps: Vec<(String, Value)> = defaults
                        .iter()
                        .map(|(k, v)| (k.to_s(), v.clone()))
                        .collect();
                    if let Value::Hash(p) = params {
                        for (k, v) in p {
                            set_param(&mut ps, k.to_s(), v.clone());
                        }
                    }
                    self.declare_simple(&tname, &title.to_s(), ps, sc, loc, false)?;
                }
                Ok(Value::Undef)
            }
            "ensure_resource"
            | "ensure_resources"
            | "ensure_packages"
            | "stdlib::ensure_packages" => self.fn_ensure(&lname, &args, sc, loc),
            "getvar" => {
                let path = a0.to_s();
                let mut segs = path.trim_start_matches('$').split('.');
                let mut cur = self
                    .lookup_var(segs.next().unwrap_or(""), sc)
                    .unwrap_or(Value::Undef);
                for seg in segs {
                    cur = match cur {
                        Value::Hash(h) => crate::lang::values::value::hash_get_str(&h, seg)
                            .cloned()
                            .unwrap_or(Value::Undef),
                        Value::Array(a) => seg
                            .parse::<usize>()
                            .ok()
                            .and_then(|i| a.get(i).cloned())
                            .unwrap_or(Value::Undef),
                        _ => Value::Undef,
                    };
                }
                Ok(if cur.is_undef() {
                    args.get(1).cloned().unwrap_or(Value::Undef)
                } else {
                    cur
                })
            }
            "fact" => {
                let mut cur = self.facts.clone();
                for seg in a0.to_s().split('.') {
                    cur = match cur {
                        Value::Hash(h) => crate::lang::values::value::hash_get_str(&h, seg)
                            .cloned()
                            .unwrap_or(Value::Undef),
                        Value::Array(a) => seg
                            .parse::<usize>()
                            .ok()
                            .and_then(|i| a.get(i).cloned())
                            .unwrap_or(Value::Undef),
                        _ => Value::Undef,
                    };
                }
                Ok(cur)
            }
            "type" => Ok(Value::Type(PType::Resource(Some(a0.type_name()), None)))
                .map(|_| Value::Type(crate::lang::values::types::infer::infer_type(&a0))),
            "reverse_each" | "step" => self.fn_iterator(&lname, args, lambda, sc),
            _ => match crate::lang::functions::native::call_native(&lname, &args)? {
                Some(v) => Ok(v),
                None => self.dispatch_data(name, &lname, &args, lambda, sc, loc),
            },
        }
    }

    /// Data functions, then `Type(x)`-style conversions.
    fn dispatch_data(
        &mut self,
        name: &str,
        lname: &str,
        args: &[Value],
        lambda: Option<&Lambda>,
        sc: ScopeId,
        loc: &Loc,
    ) -> LResult<Value> {
        match crate::lang::functions::data::call_data_function(lname, args, lambda, self, sc)? {
            Some(v) => Ok(v),
            None => {
                if let Some(t) = types::builtin_type(name.trim_start_matches("::"))
                    .or_else(|| types::builtin_type(&capitalize(lname)))
                    && name.starts_with(|c: char| c.is_ascii_uppercase())
                {
                    return crate::lang::values::convert::new_value(&t, args);
                }
                Err(LangError::eval(format!("Unknown function: '{name}'."), loc))
            }
        }
    }

    /// Declare a resource from a function (create_resources, ensure_resource).
    pub fn declare_simple(
        &mut self,
        tname: &str,
        title: &str,
        params: Vec<(String, Value)>,
        sc: ScopeId,
        loc: &Loc,
        virt: bool,
    ) -> LResult<()> {
        let lower = tname.trim_start_matches("::").to_lowercase();
        if lower == "class" {
            self.declare_class(title, Some(params), sc, loc)?;
            return Ok(());
        }
        let Some(kind) = self.resource_kind(&lower) else {
            return Err(plain(format!("Unknown resource type: '{lower}'")));
        };
        let container = self.container_of(sc);
        let v = if virt {
            Virtuality::Virtual
        } else {
            Virtuality::Real
        };
        let idx = self.create_resource(
            &capitalize(&lower),
            title,
            params,
            Some(loc.clone()),
            kind,
            v,
            Some(container),
            sc,
        )?;
        if kind == ResKind::Define && !virt {
            self.pending_defines.push(idx);
        }
        Ok(())
    }

    fn fn_ensure(&mut self, name: &str, args: &[Value], sc: ScopeId, loc: &Loc) -> LResult<Value> {
        type Todo = (String, String, Vec<(String, Value)>);
        let mut todo: Vec<Todo> = Vec::new();
        let hash_params = |v: Option<&Value>| -> Vec<(String, Value)> {
            match v {
                Some(Value::Hash(h)) => h.iter().map(|(k, v)| (k.to_s(), v.clone())).collect(),
                _ => Vec::new(),
            }
        };
        match name {
            "ensure_resource" => {
                let t = args.first().map(|v| v.to_s()).unwrap_or_default();
                for title in titles(args.get(1).unwrap_or(&Value::Undef)) {
                    todo.push((t.clone(), title, hash_params(args.get(2))));
                }
            }
            "ensure_resources" => {
                let t = args.first().map(|v| v.to_s()).unwrap_or_default();
                if let Some(Value::Hash(h)) = args.get(1) {
                    for (title, p) in h {
                        let mut ps = hash_params(args.get(2));
                        for (k, v) in hash_params(Some(p)) {
                            set_param(&mut ps, k, v);
                        }
                        todo.push((t.clone(), title.to_s(), ps));
                    }
                }
            }
            _ => {
                let defaults = hash_params(args.get(1));
                match args.first() {
                    Some(Value::Hash(h)) => {
                        for (title, p) in h {
                            let mut ps = vec![("ensure".to_string(), Value::str("installed"))];
                            for (k, v) in defaults.iter().cloned().chain(hash_params(Some(p))) {
                                set_param(&mut ps, k, v);
                            }
                            todo.push(("package".into(), title.to_s(), ps));
                        }
                    }
                    Some(v) => {
                        for title in titles(v) {
                            let mut ps = vec![("ensure".to_string(), Value::str("installed"))];
                            for (k, v) in defaults.iter().cloned() {
                                set_param(&mut ps, k, v);
                            }
                            todo.push(("package".into(), title, ps));
                        }
                    }
                    None => {}
                }
            }
        }
        for (t, title, ps) in todo {
            let key = (capitalize(&t.to_lowercase()), title.clone());
            if let Some(&idx) = self.index.get(&key) {
                let same = self.resources.get(idx).is_some_and(|r| {
                    ps.iter()
                        .all(|(k, v)| r.params.iter().any(|(rk, rv)| rk == k && rv == v))
                });
                if !same {
                    return Err(plain(format!(
                        "Duplicate declaration: {}[{}] is already declared; cannot redeclare",
                        key.0, key.1
                    )));
                }
                continue;
            }
            self.declare_simple(&t, &title, ps, sc, loc, false)?;
        }
        Ok(Value::Undef)
    }

    /// Resource references named in `v` must exist (used by `require`-like calls).
    pub fn refs_of(&self, v: &Value) -> LResult<Vec<(String, String)>> {
        let mut refs = Vec::new();
        collect_refs(v, &mut refs).map_err(plain)?;
        Ok(refs)
    }
}
