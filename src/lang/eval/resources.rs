//! Catalog-building expressions: resource declarations (titles arrays,
//! `default:` bodies, splat), resource defaults and overrides, collectors,
//! relationships and `realize`; plus resource creation with duplicate
//! detection, automatic tags and containment.

use crate::lang::error::{LangError, Loc, plain};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{
    Collect, Evaluator, ParamOp, ParamOps, RelEnd, Res, ResId, ResKind, ScopeId,
};
use crate::lang::syntax::ast::{
    AttrOp, AttrOpKind, Expr, ExprKind, RelOp, ResourceBody, Virtuality,
};
use crate::lang::values::types::{PType, capitalize};
use crate::lang::values::value::Value;

/// Upper bound on catalog size (guards against runaway recursive defines).
pub const MAX_RESOURCES: usize = 100_000;
/// Maximum total size of all resources' parameter values (see
/// `value::deep_size`), so that many resources sharing one big value cannot
/// exhaust memory.
pub const MAX_CATALOG_WEIGHT: usize = 20_000_000;

fn valid_tag(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphanumeric() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '-'))
}

/// Add `t` (lower-cased) and its `::` segments to `tags`, skipping invalid ones.
pub fn push_tag(tags: &mut Vec<String>, t: &str) {
    let t = t.to_lowercase();
    if !valid_tag(&t) {
        return;
    }
    let mut add = |s: &str| {
        if !s.is_empty() && !tags.iter().any(|x| x == s) {
            tags.push(s.to_string());
        }
    };
    add(&t);
    if t.contains("::") {
        for seg in t.split("::") {
            add(seg);
        }
    }
}

/// String form of a resource reference value, e.g. `File[/x]`.
pub fn ref_key(v: &Value) -> Option<(String, String)> {
    match v {
        Value::Type(PType::Resource(Some(t), Some(title))) => Some((t.clone(), title.clone())),
        Value::Type(PType::Class(Some(c))) => Some(("Class".into(), capitalize(c))),
        Value::Str(s) => {
            let (t, rest) = s.split_once('[')?;
            let title = rest.strip_suffix(']')?;
            Some((capitalize(t), title.to_string()))
        }
        _ => None,
    }
}

/// Flatten a value into resource references.
pub fn collect_refs(v: &Value, out: &mut Vec<(String, String)>) -> Result<(), LangError> {
    match v {
        Value::Array(items) => {
            for i in items {
                collect_refs(i, out)?;
            }
            Ok(())
        }
        Value::Undef => Ok(()),
        other => match ref_key(other) {
            Some(k) => {
                out.push(k);
                Ok(())
            }
            None => Err(plain(format!(
                "'{}' is not a resource reference",
                other.to_s()
            ))),
        },
    }
}

impl<'l> Evaluator<'l> {
    pub fn container_of(&self, sc: ScopeId) -> ResId {
        self.scopes.get(sc).map_or(self.main_index, |s| s.container)
    }

    /// Create a resource; returns its index. Errors on duplicates.
    #[allow(clippy::too_many_arguments)]
    pub fn create_resource(
        &mut self,
        type_name: &str,
        title: &str,
        params: Vec<(String, Value)>,
        loc: Option<Loc>,
        kind: ResKind,
        virt: Virtuality,
        container: Option<ResId>,
        scope: ScopeId,
    ) -> EvalResult<ResId> {
        if self.resources.len() >= MAX_RESOURCES {
            return Err(plain(format!(
                "The catalog exceeds the maximum of {MAX_RESOURCES} resources"
            ))
            .into());
        }
        let key = (type_name.to_string(), title.to_string());
        if let Some(&prev) = self.index.get(&key) {
            let at = self
                .resources
                .get(prev)
                .and_then(|r| r.loc.as_ref())
                .map(|l| format!(" at (file: {}, line: {})", l.file, l.line))
                .unwrap_or_default();
            let here = loc
                .as_ref()
                .map(|l| format!(" (file: {}, line: {})", l.file, l.line))
                .unwrap_or_default();
            return Err(plain(format!(
                "Duplicate declaration: {type_name}[{title}] is already declared{at}; cannot redeclare{here}"
            )).into());
        }
        for (_, v) in &params {
            let room = MAX_CATALOG_WEIGHT.saturating_sub(self.catalog_weight);
            let w = crate::lang::values::value::deep_size(v, room);
            if w > room {
                return Err(plain(format!(
                    "The catalog's parameter values exceed the maximum size ({MAX_CATALOG_WEIGHT})"
                ))
                .into());
            }
            self.catalog_weight += w;
        }
        let mut tags = Vec::new();
        if let Some((_, t)) = params.iter().find(|(n, _)| n == "tag") {
            let list = match t {
                Value::Array(a) => a.iter().map(|v| v.to_s()).collect(),
                other => vec![other.to_s()],
            };
            for x in list {
                push_tag(&mut tags, &x);
            }
        }
        push_tag(&mut tags, type_name);
        if !(title == "main" && matches!(kind, ResKind::Stage | ResKind::Class)) {
            push_tag(&mut tags, title);
        }
        let tag_src =
            container.or_else(|| (type_name == "Stage").then(|| self.container_of(scope)));
        if let Some(c) = tag_src
            && let Some(cr) = self.resources.get(c).filter(|r| r.kind != ResKind::Stage)
        {
            for t in cr.tags.clone() {
                if !tags.contains(&t) {
                    tags.push(t);
                }
            }
        }
        let idx = self.resources.push_and_get_key(Res {
            type_name: type_name.to_string(),
            title: title.to_string(),
            params,
            loc,
            kind,
            virtual_: virt != Virtuality::Real,
            exported: virt == Virtuality::Exported,
            container,
            tags,
            scope,
            evaluated: false,
            meta_lines: Vec::new(),
        });
        self.index.insert(key, idx);
        if let Some(c) = container {
            self.edges.push((c, idx));
        }
        // Puppet gives a resource the defaults visible when it is created
        // (Puppet::Parser::Resource#initialize): defaults declared later in
        // the scope do not apply (apache::mod::worker's File defaults after
        // its `include apache`).
        if matches!(kind, ResKind::Builtin | ResKind::Define) {
            self.apply_defaults(idx);
        }
        Ok(idx)
    }

    /// Evaluate attribute operations into (name, operation).
    pub fn eval_ops(&mut self, ops: &[AttrOp], sc: ScopeId) -> EvalResult<ParamOps> {
        let mut out: ParamOps = Vec::new();
        for op in ops {
            let v = self.eval(&op.value, sc)?;
            match op.kind {
                AttrOpKind::Splat => match v {
                    Value::Hash(h) => {
                        for (k, val) in h {
                            set_param(&mut out, k.to_s(), ParamOp::Set(val));
                        }
                    }
                    Value::Undef => {}
                    other => {
                        return Err(LangError::eval(
                            format!("'* =>' expects a Hash, got {}", other.type_name()),
                            &op.loc,
                        )
                        .into());
                    }
                },
                AttrOpKind::Set | AttrOpKind::Append => {
                    if matches!(v, Value::Iterator(_)) {
                        return Err(LangError::eval(
                            "Error while evaluating a '=>' expression, Use of an Iterator is not supported here",
                            &op.loc,
                        ).into());
                    }
                    if out.iter().any(|(n, _)| n == &op.name) {
                        return Err(LangError::eval(
                            format!("The attribute '{}' has already been set", op.name),
                            &op.loc,
                        )
                        .into());
                    }
                    let op_value = if op.kind == AttrOpKind::Append {
                        ParamOp::Append(v)
                    } else {
                        ParamOp::Set(v)
                    };
                    out.push((op.name.clone(), op_value));
                }
            }
        }
        Ok(out)
    }

    /// Is `name` (lower case) a known resource type? Returns its kind.
    /// Loading a defined type can fail (see `autoload`).
    pub fn resource_kind(&mut self, name: &str) -> EvalResult<Option<ResKind>> {
        if crate::lang::eval::core_types::is_builtin(name) {
            return Ok(Some(ResKind::Builtin));
        }
        if self.find_define(name)?.is_some() {
            return Ok(Some(ResKind::Define));
        }
        if self.module_type_exists(name) || self.builtin_device_type(name).is_some() {
            return Ok(Some(ResKind::Builtin));
        }
        Ok(None)
    }

    pub fn eval_resource(
        &mut self,
        virt: Virtuality,
        type_name: &str,
        bodies: &[ResourceBody],
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<Value> {
        let lower = type_name.trim_start_matches("::").to_lowercase();
        let mut defaults: ParamOps = Vec::new();
        for b in bodies {
            if matches!(b.title.kind, ExprKind::Default) {
                defaults = self.eval_ops(&b.ops, sc)?;
            }
        }
        let mut refs = Vec::new();
        if lower == "class" {
            for b in bodies
                .iter()
                .filter(|b| !matches!(b.title.kind, ExprKind::Default))
            {
                let t = self.eval(&b.title, sc)?;
                let mut params: Vec<(String, Value)> = defaults
                    .iter()
                    .map(|(n, op)| (n.clone(), op.value().clone()))
                    .collect();
                for (n, op) in self.eval_ops(&b.ops, sc)? {
                    set_param(&mut params, n, op.into_value());
                }
                let lines = meta_lines(&b.ops);
                for name in titles(&t) {
                    self.declare_class(&name, Some(params.clone()), sc, loc)?;
                    let key = (
                        "Class".to_string(),
                        capitalize(name.trim_start_matches("::")),
                    );
                    if let Some(r) = self
                        .index
                        .get(&key)
                        .and_then(|&i| self.resources.get_mut(i))
                    {
                        r.meta_lines = lines.clone();
                    }
                    refs.push(Value::Type(PType::Class(Some(
                        name.trim_start_matches("::").to_lowercase(),
                    ))));
                }
            }
            return Ok(Value::Array(refs));
        }
        let Some(kind) = self.resource_kind(&lower)? else {
            return Err(plain(format!("Unknown resource type: '{lower}'")).into());
        };
        let cap = capitalize(&lower);
        for b in bodies
            .iter()
            .filter(|b| !matches!(b.title.kind, ExprKind::Default))
        {
            // Puppet checks a body's titles before it evaluates its attributes.
            let t = self.eval(&b.title, sc)?;
            check_title_types(&t).map_err(|m| LangError::eval(m, &b.title.loc))?;
            // `[title].flatten` with an undef in it; an empty array declares
            // nothing (gitolite's `package { $packages: }` with `[]`).
            if has_undef_title(&t) {
                return Err(LangError::eval(
                    "Missing title. The title expression resulted in undef",
                    &b.title.loc,
                )
                .into());
            }
            let ts = titles(&t);
            let ops = self.eval_ops(&b.ops, sc)?;
            let mut params: Vec<(String, Value)> = Vec::new();
            for (n, op) in defaults.iter().cloned().chain(ops) {
                set_param(&mut params, n, op.into_value());
            }
            let last = ts.len().saturating_sub(1);
            for (i, title) in ts.into_iter().enumerate() {
                // The last title takes the parameters; the others a copy.
                let params = if i == last {
                    std::mem::take(&mut params)
                } else {
                    params.clone()
                };
                if kind == ResKind::Builtin
                    && let Some(device) = self.builtin_device_type(&lower)
                {
                    for (name, value) in &params {
                        let at = b
                            .ops
                            .iter()
                            .find(|o| o.name == *name)
                            .map_or(loc, |o| &o.loc);
                        let at = Some(at);
                        self.check_device_param(device, &cap, &title, name, value, at)?;
                    }
                }
                let container = if lower == "stage" {
                    None
                } else {
                    Some(self.container_of(sc))
                };
                let idx = self.create_resource(
                    &cap,
                    &title,
                    params,
                    Some(loc.clone()),
                    kind,
                    virt,
                    container,
                    sc,
                )?;
                if let Some(r) = self.resources.get_mut(idx) {
                    r.meta_lines = meta_lines(&b.ops);
                }
                if kind == ResKind::Define && virt == Virtuality::Real {
                    self.pending_defines.push(idx);
                }
                refs.push(Value::Type(PType::Resource(Some(cap.clone()), Some(title))));
            }
        }
        Ok(Value::Array(refs))
    }

    pub fn eval_defaults(
        &mut self,
        type_name: &str,
        ops: &[AttrOp],
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<Value> {
        // The type reference is evaluated first: an unknown type fails here.
        self.resolve_type_name(type_name, loc)?;
        let cap = capitalize(type_name);
        let vals = self.eval_ops(ops, sc)?;
        if let Some(s) = self.scopes.get_mut(sc) {
            for (n, op) in vals {
                s.defaults.push((cap.clone(), n, op.into_value()));
            }
        }
        Ok(Value::Undef)
    }

    pub fn eval_override(
        &mut self,
        target: &Expr,
        ops: &[AttrOp],
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<Value> {
        let t = self.eval(target, sc)?;
        let mut refs = Vec::new();
        collect_refs(&t, &mut refs).map_err(|e| e.at(loc))?;
        let vals = self.eval_ops(ops, sc)?;
        // A defined type's instance not yet evaluated takes the override
        // now, so its body sees it (Puppet merges an override into an
        // existing resource at once; haproxy's Concat[...] { validate_cmd }).
        let mut later = Vec::new();
        for key in refs {
            let pending = self.index.get(&key).copied().filter(|&i| {
                self.resources
                    .get(i)
                    .is_some_and(|r| r.kind == ResKind::Define && !r.evaluated)
            });
            match pending.and_then(|i| self.resources.get_mut(i)) {
                Some(r) => Self::apply_param_ops(r, &vals),
                None => later.push(key),
            }
        }
        if !later.is_empty() {
            self.overrides.push((later, vals, loc.clone()));
        }
        Ok(Value::Undef)
    }

    pub fn apply_param_ops(res: &mut Res, ops: &[(String, ParamOp)]) {
        for (n, op) in ops {
            // Setting `tag` tags the resource too (collectors see it).
            if n == "tag" {
                let vals = match op.value() {
                    Value::Array(a) => a.clone(),
                    other => vec![other.clone()],
                };
                for v in vals {
                    let t = v.to_s().to_lowercase();
                    if !t.is_empty() && !res.tags.contains(&t) {
                        res.tags.push(t);
                    }
                }
            }
            if let ParamOp::Append(v) = op {
                let cur = res
                    .params
                    .iter()
                    .find(|(k, _)| k == n)
                    .map(|(_, v)| v.clone());
                let merged = match (cur, v.clone()) {
                    (None, v) | (Some(Value::Undef), v) => v,
                    (Some(Value::Array(mut a)), Value::Array(b)) => {
                        a.extend(b);
                        Value::Array(a)
                    }
                    (Some(Value::Array(mut a)), b) => {
                        a.push(b);
                        Value::Array(a)
                    }
                    (Some(x), Value::Array(b)) => {
                        let mut a = vec![x];
                        a.extend(b);
                        Value::Array(a)
                    }
                    (Some(x), b) => Value::Array(vec![x, b]),
                };
                set_param(&mut res.params, n.clone(), merged);
            } else {
                set_param(&mut res.params, n.clone(), op.value().clone());
            }
        }
    }

    pub fn eval_collector(
        &mut self,
        type_name: &str,
        exported: bool,
        query: Option<&Expr>,
        overrides: &[AttrOp],
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<Value> {
        let lower = type_name.to_lowercase();
        if lower != "class" && self.resource_kind(&lower)?.is_none() {
            return Err(
                LangError::eval(format!("Resource type {type_name} doesn't exist"), loc).into(),
            );
        }
        let ovs = self.eval_ops(overrides, sc)?;
        self.collectors.push(Collect {
            type_name: capitalize(&lower),
            exported,
            query: query.cloned(),
            overrides: ovs,
            scope: sc,
            matched: Default::default(),
        });
        Ok(Value::Undef)
    }

    /// Does resource `idx` satisfy collector query `q`?
    pub fn query_match(&mut self, q: &Expr, idx: ResId, sc: ScopeId) -> EvalResult<bool> {
        use crate::lang::syntax::ast::BinOp;
        match &q.kind {
            ExprKind::Binary(BinOp::And, a, b) => {
                Ok(self.query_match(a, idx, sc)? && self.query_match(b, idx, sc)?)
            }
            ExprKind::Binary(BinOp::Or, a, b) => {
                Ok(self.query_match(a, idx, sc)? || self.query_match(b, idx, sc)?)
            }
            ExprKind::Binary(op @ (BinOp::Eq | BinOp::Ne), a, b) => {
                let attr = match &a.kind {
                    ExprKind::Bare(n) | ExprKind::Str(n) => n.clone(),
                    _ => {
                        return Err(LangError::eval(
                            "Collector query attribute must be a name",
                            &a.loc,
                        )
                        .into());
                    }
                };
                let want = self.eval(b, sc)?;
                let Some(res) = self.resources.get(idx) else {
                    return Ok(false);
                };
                let hit = if attr == "title" {
                    crate::lang::values::value::values_equal(&Value::Str(res.title.clone()), &want)
                } else if attr == "tag" {
                    let w = want.to_s().to_lowercase();
                    res.tags.contains(&w)
                } else {
                    match res.params.iter().find(|(n, _)| *n == attr).map(|(_, v)| v) {
                        Some(Value::Array(items)) => items
                            .iter()
                            .any(|x| crate::lang::values::value::values_equal(x, &want)),
                        Some(v) => crate::lang::values::value::values_equal(v, &want),
                        None => false,
                    }
                };
                Ok(if *op == BinOp::Eq { hit } else { !hit })
            }
            _ => Err(LangError::eval("Unsupported collector query expression", &q.loc).into()),
        }
    }

    fn rel_end(&mut self, e: &Expr, sc: ScopeId) -> EvalResult<RelEnd> {
        match &e.kind {
            ExprKind::Collector { .. } => {
                self.eval(e, sc)?;
                Ok(RelEnd::Collector(
                    self.collectors.len().saturating_sub(1),
                    None,
                ))
            }
            ExprKind::Relationship(op, l, r) => self.relate(*op, l, r, sc, &e.loc),
            _ => {
                let v = self.eval(e, sc)?;
                let mut refs = Vec::new();
                collect_refs(&v, &mut refs).map_err(|err| err.at(&e.loc))?;
                Ok(RelEnd::Refs(refs))
            }
        }
    }

    fn relate(
        &mut self,
        op: RelOp,
        l: &Expr,
        r: &Expr,
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<RelEnd> {
        let left = self.rel_end(l, sc)?;
        let right = self.rel_end(r, sc)?;
        // The chain continues from the right operand; from the left one when
        // the right is empty, or (lazily) when it is a collector that
        // collects nothing.
        let ret = match &right {
            RelEnd::Refs(refs) if refs.is_empty() => left.clone(),
            RelEnd::Collector(ci, _) => RelEnd::Collector(*ci, Some(Box::new(left.clone()))),
            RelEnd::Refs(_) => right.clone(),
        };
        match op {
            RelOp::Before => self
                .relationships
                .push((left, right, "before", loc.clone())),
            RelOp::Notify => self
                .relationships
                .push((left, right, "notify", loc.clone())),
            RelOp::Require => self
                .relationships
                .push((right, left, "before", loc.clone())),
            RelOp::Subscribe => self
                .relationships
                .push((right, left, "notify", loc.clone())),
        }
        Ok(ret)
    }

    pub fn eval_relationship(
        &mut self,
        op: RelOp,
        l: &Expr,
        r: &Expr,
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<Value> {
        Ok(match self.relate(op, l, r, sc, loc)? {
            RelEnd::Refs(refs) => Value::Array(
                refs.into_iter()
                    .map(|(t, title)| Value::Type(PType::Resource(Some(t), Some(title))))
                    .collect(),
            ),
            RelEnd::Collector(..) => Value::Undef,
        })
    }

    /// `realize(File['/x'], ...)`: recorded now, applied when finishing.
    pub fn realize(&mut self, args: &[Value]) -> EvalResult<()> {
        for a in args {
            collect_refs(a, &mut self.pending_realize)?;
        }
        Ok(())
    }

    /// Apply recorded `realize` calls; returns whether there were any.
    pub fn apply_realize(&mut self) -> EvalResult<bool> {
        let refs = std::mem::take(&mut self.pending_realize);
        let progress = !refs.is_empty();
        for (t, title) in refs {
            match self.index.get(&(t.clone(), title.clone())) {
                Some(&i) => {
                    if let Some(r) = self.resources.get_mut(i)
                        && !r.exported
                    {
                        r.virtual_ = false;
                    }
                }
                None => {
                    return Err(LangError::load(format!(
                        "Failed to realize virtual resources {t}[{title}]"
                    ))
                    .into());
                }
            }
        }
        Ok(progress)
    }
}

/// The lines of the relationship metaparameters a resource body sets.
fn meta_lines(ops: &[crate::lang::syntax::ast::AttrOp]) -> Vec<(String, u32)> {
    ops.iter()
        .filter(|o| {
            matches!(
                o.name.as_str(),
                "before" | "require" | "notify" | "subscribe"
            )
        })
        .map(|o| (o.name.clone(), o.loc.line))
        .collect()
}

/// Set `name` in an ordered list of named entries (parameters or
/// attribute operations), replacing an earlier entry of that name in place.
pub fn set_param<T>(out: &mut Vec<(String, T)>, name: String, v: T) {
    if let Some(slot) = out.iter_mut().find(|(k, _)| *k == name) {
        slot.1 = v;
    } else {
        out.push((name, v));
    }
}

/// Puppet accepts only strings (possibly in nested arrays) as titles.
fn check_title_types(v: &Value) -> Result<(), String> {
    fn flat<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
        match v {
            Value::Array(items) => items.iter().for_each(|i| flat(i, out)),
            other => out.push(other),
        }
    }
    let mut items = Vec::new();
    flat(v, &mut items);
    for (i, item) in items.iter().enumerate() {
        if !matches!(item, Value::Str(_) | Value::Undef) {
            return Err(format!(
                "Illegal title type at index {i}. Expected String, got {}",
                item.type_name()
            ));
        }
    }
    Ok(())
}

/// Titles from a title value (string or nested arrays).
/// Does a title value (flattened) hold undef?
fn has_undef_title(v: &Value) -> bool {
    match v {
        Value::Undef => true,
        Value::Array(items) => items.iter().any(has_undef_title),
        _ => false,
    }
}

pub fn titles(v: &Value) -> Vec<String> {
    match v {
        Value::Array(items) => items.iter().flat_map(titles).collect(),
        Value::Undef => Vec::new(),
        Value::Type(PType::Class(Some(c))) => vec![c.clone()],
        other => vec![other.to_s()],
    }
}
