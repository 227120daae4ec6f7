//! Functions that build the catalog: `include`, `require`, `contain`,
//! `hiera_include`, `realize`, `tag`, `tagged`, `defined`, stdlib's
//! `getparam`, `create_resources`, `ensure_resource(s)` and
//! `ensure_packages`.

use crate::lang::error::{Loc, plain};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::resources::{push_tag, set_param, titles};
use crate::lang::eval::{Call, Evaluator, ResKind, ScopeId};
use crate::lang::functions::stdlib::arg_3x;
use crate::lang::functions::stdlib_catalog::defined_with;
use crate::lang::functions::{Block, Builder, Family, any, sig};
use crate::lang::syntax::ast::Virtuality;
use crate::lang::values::types::{PType, capitalize};
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Catalog;
    let classes = sig("Array[Type[Class]]").rest("names", any());
    b.add(&["include", "require", "contain"], f, classes, include);
    b.add(
        &["hiera_include"],
        f,
        sig("Array[Type[Class]]")
            .req("key", any())
            .opt("default", any())
            .block(Block::Optional),
        hiera_include,
    );
    b.add(&["realize"], f, sig("Undef").rest("refs", any()), realize);
    b.add(&["tag"], f, sig("Undef").rest("tags", any()), tag);
    b.add(&["tagged"], f, sig("Boolean").rest("tags", any()), tagged);
    b.add(
        &["defined"],
        f,
        sig("Boolean")
            .req("vals", defined_arg())
            .rest("vals", defined_arg()),
        defined,
    );
    b.add(&["getparam"], f, sig("Any").rest("args", any()), getparam);
    b.add(
        &["create_resources"],
        f,
        sig("Undef")
            .req("type", any())
            .req("resources", any())
            .opt("defaults", any()),
        create_resources,
    );
    b.add(
        &["ensure_resource", "ensure_resources"],
        f,
        sig("Undef")
            .req("type", any())
            .req("titles", any())
            .opt("params", any()),
        ensure,
    );
    b.add(
        &["ensure_packages", "stdlib::ensure_packages"],
        f,
        sig("Undef").req("packages", ensure_packages_arg()).opt(
            "default_attributes",
            PType::Hash(Box::new(any()), Box::new(any()), 0, i64::MAX),
        ),
        ensure,
    );
}

fn class_ref(n: &str) -> Value {
    Value::Type(PType::Class(Some(
        n.trim_start_matches("::").to_lowercase(),
    )))
}

/// `include`, `require` and `contain`: declare classes; `contain` adds a
/// containment edge, `require` a `require` on the caller's container.
fn include(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let (sc, loc) = (c.scope, c.loc);
    let mut refs = Vec::new();
    for a in &c.args {
        for n in titles(a) {
            let idx = ev.declare_class(&n, None, sc, loc)?;
            if c.name == "contain" {
                let container = ev.container_of(sc);
                if !ev.edges.contains(&(container, idx)) {
                    ev.edges.push((container, idx));
                }
            }
            if c.name == "require" {
                let container = ev.container_of(sc);
                if let Some(r) = ev.resources.get_mut(container) {
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
                    cur.push(class_ref(&n));
                    set_param(&mut r.params, "require".into(), Value::Array(cur));
                }
            }
            refs.push(class_ref(&n));
        }
    }
    Ok(Value::Array(refs))
}

fn hiera_include(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let found = ev.fn_lookup("hiera_array", &c.args, None, c.scope)?;
    let mut refs = Vec::new();
    for n in titles(&found) {
        ev.declare_class(&n, None, c.scope, c.loc)?;
        refs.push(class_ref(&n));
    }
    Ok(Value::Array(refs))
}

fn realize(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    ev.realize(&c.args)?;
    Ok(Value::Undef)
}

fn tag(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let container = ev.container_of(c.scope);
    if let Some(r) = ev.resources.get_mut(container) {
        for a in &c.args {
            for t in titles(a) {
                push_tag(&mut r.tags, &t);
            }
        }
    }
    Ok(Value::Undef)
}

fn tagged(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let container = ev.container_of(c.scope);
    let tags = ev
        .resources
        .get(container)
        .map(|r| r.tags.clone())
        .unwrap_or_default();
    Ok(Value::Bool(
        c.args
            .iter()
            .flat_map(titles)
            .all(|t| tags.contains(&t.to_lowercase())),
    ))
}

/// `defined`: a variable (`'$x'`), a class, resource type or function
/// name, or a resource or class reference.
/// What stdlib's `ensure_packages` accepts: `Variant[String[1],
/// Array[String[1]], Hash[String[1], Any]]`.
fn ensure_packages_arg() -> PType {
    let name = || PType::String(1, i64::MAX);
    PType::Variant(vec![
        name(),
        PType::Array(Box::new(name()), 0, i64::MAX),
        PType::Hash(Box::new(name()), Box::new(any()), 0, i64::MAX),
    ])
}

/// What `defined` accepts: `Variant[String, Type[CatalogEntry],
/// Type[Type[CatalogEntry]]]`.
fn defined_arg() -> PType {
    let entry = || PType::Type(Some(Box::new(PType::CatalogEntry)));
    PType::Variant(vec![
        PType::String(0, i64::MAX),
        entry(),
        PType::Type(Some(Box::new(entry()))),
    ])
}

fn defined(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    for a in &c.args {
        let hit = match a {
            Value::Str(s) if s.starts_with('$') => {
                let n = s.trim_start_matches('$');
                ev.lookup_var(n, c.scope).is_some()
            }
            Value::Str(s) => {
                let l = s.trim_start_matches("::").to_lowercase();
                ev.find_class(&l)?.is_some()
                    || ev.resource_kind(&l)?.is_some()
                    || ev.functions.contains_key(&l)
            }
            Value::Type(PType::Resource(Some(t), Some(title))) => ev
                .index
                .get(&(t.clone(), title.clone()))
                .is_some_and(|i| ev.resources.get(*i).is_some_and(|r| !r.virtual_)),
            Value::Type(PType::Class(Some(cl))) => ev
                .index
                .contains_key(&("Class".to_string(), capitalize(cl))),
            Value::Type(PType::Resource(Some(t), None)) => {
                ev.resource_kind(&t.to_lowercase())?.is_some()
            }
            _ => false,
        };
        if hit {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

/// stdlib's `getparam(reference, name)` (3.x): the parameter's value in
/// the resource the reference (or its string form `Type[title]`) names,
/// virtual ones included; `''` when there is no such resource or value.
/// Arguments arrive as a 3.x function gets them: undef is `''`.
fn getparam(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let reference = match c.args.first().map(arg_3x) {
        None | Some(Value::Bool(false)) => {
            return Err(plain("Must specify a reference").into());
        }
        Some(r) => r,
    };
    let Some(Value::Str(param)) = c.args.get(1).map(arg_3x) else {
        return Err(plain("Must specify name of a parameter").into());
    };
    if param.is_empty() {
        return Ok(Value::str(""));
    }
    let Some((ty, title)) = crate::lang::eval::resources::ref_key(&reference) else {
        return Err(plain(format!(
            "No title provided and {} is not a valid resource reference",
            crate::lang::template::erb::value::inspect(&Value::Str(reference.to_s()))
        ))
        .into());
    };
    let title = if ty == "Class" {
        capitalize(title.trim_start_matches("::"))
    } else {
        title
    };
    let found = ev
        .index
        .get(&(ty, title))
        .and_then(|&i| ev.resources.get(i))
        .and_then(|r| {
            if param == "title" {
                return Some(Value::Str(r.title.clone()));
            }
            r.params
                .iter()
                .find(|(k, _)| *k == param)
                .map(|(_, v)| v.clone())
        });
    Ok(match found {
        None | Some(Value::Undef) => Value::str(""),
        Some(v) => v,
    })
}

fn create_resources(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let tname = c.arg(0).to_s().to_lowercase();
    let Some(Value::Hash(h)) = c.args.get(1) else {
        return Err(plain("create_resources(): second argument must be a hash").into());
    };
    let defaults = match c.args.get(2) {
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
        declare_simple(ev, &tname, title, ps, c.scope, c.loc, false)?;
    }
    Ok(Value::Undef)
}

/// Declare a resource from a function (create_resources, ensure_resource).
///
/// These functions take titles that are not strings (an Integer port); as
/// in Puppet, such a title is not a tag of the resource (nor of what a
/// defined type contains) and becomes its `name` attribute.
fn declare_simple(
    ev: &mut Evaluator<'_>,
    tname: &str,
    title_value: &Value,
    params: Vec<(String, Value)>,
    sc: ScopeId,
    loc: &Loc,
    virt: bool,
) -> EvalResult<()> {
    let title_string = title_value.to_s();
    let title = title_string.as_str();
    let lower = tname.trim_start_matches("::").to_lowercase();
    if lower == "class" {
        ev.declare_class(title, Some(params), sc, loc)?;
        return Ok(());
    }
    let Some(kind) = ev.resource_kind(&lower)? else {
        return Err(plain(format!("Unknown resource type: '{lower}'")).into());
    };
    let container = ev.container_of(sc);
    let v = if virt {
        Virtuality::Virtual
    } else {
        Virtuality::Real
    };
    let idx = ev.create_resource(
        &capitalize(&lower),
        title,
        params,
        Some(loc.clone()),
        kind,
        v,
        Some(container),
        sc,
    )?;
    if !matches!(title_value, Value::Str(_))
        && let Some(r) = ev.resources.get_mut(idx)
    {
        let tag = title.to_lowercase();
        r.tags.retain(|t| *t != tag);
        if !r.params.iter().any(|(k, _)| k == "name") {
            r.params.push(("name".to_string(), Value::str(title)));
        }
    }
    if kind == ResKind::Define && !virt {
        ev.pending_defines.push(idx);
    }
    Ok(())
}

/// `ensure_resource`, `ensure_resources`, `ensure_packages`: declare
/// unless an identical resource exists.
fn ensure(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let (name, args, sc, loc) = (c.name, &c.args, c.scope, c.loc);
    type Todo = (String, Value, Vec<(String, Value)>);
    fn title_values(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Array(items) => items.iter().for_each(|i| title_values(i, out)),
            Value::Undef => {}
            other => out.push(other.clone()),
        }
    }
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
            let mut ts = Vec::new();
            title_values(args.get(1).unwrap_or(&Value::Undef), &mut ts);
            for title in ts {
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
                    todo.push((t.clone(), title.clone(), ps));
                }
            }
        }
        _ => {
            // stdlib: the default attributes' `ensure => present` becomes
            // `installed` (a package's own attributes are kept as given).
            let mut defaults = hash_params(args.get(1));
            for (k, v) in defaults.iter_mut() {
                if k == "ensure" && matches!(v, Value::Str(s) if s == "present") {
                    *v = Value::str("installed");
                }
            }
            match args.first() {
                Some(Value::Hash(h)) => {
                    for (title, p) in h {
                        let mut ps = vec![("ensure".to_string(), Value::str("installed"))];
                        for (k, v) in defaults.iter().cloned().chain(hash_params(Some(p))) {
                            set_param(&mut ps, k, v);
                        }
                        todo.push(("package".into(), title.clone(), ps));
                    }
                }
                Some(v) => {
                    for title in titles(v) {
                        let mut ps = vec![("ensure".to_string(), Value::str("installed"))];
                        for (k, v) in defaults.iter().cloned() {
                            set_param(&mut ps, k, v);
                        }
                        todo.push(("package".into(), Value::Str(title), ps));
                    }
                }
                None => {}
            }
        }
    }
    // stdlib: unless `defined_with_params("type[title]", params)`,
    // `create_resources` (whose duplicate declaration is the error).
    for (t, title, ps) in todo {
        let reference = Value::Str(format!("{t}[{}]", title.to_s()));
        let wanted: Vec<(Value, Value)> = ps
            .iter()
            .map(|(k, v)| (Value::Str(k.clone()), v.clone()))
            .collect();
        if defined_with(ev, &reference, &wanted, sc)? {
            continue;
        }
        declare_simple(ev, &t, &title, ps, sc, loc, false)?;
    }
    Ok(Value::Undef)
}
