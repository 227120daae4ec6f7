//! Debian stdlib's functions that read the compiler's state, with the
//! checks and messages of their Ruby sources: `defined_with_params` (is a
//! resource with these parameters in the catalog so far: declaration order
//! matters, as in Puppet), `stdlib::str2resource` (a `Type[title]` string
//! to the reference of a declared resource), the deprecated `private`
//! (`assert_private` after a warning) and `type3x` (the 3.x type name of a
//! value), and `pry`, which fails as Puppet without the pry gem does:
//! ferry never starts a debugger.

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::title_patterns;
use crate::lang::eval::{Call, Evaluator, ResId, ResKind, ScopeId};
use crate::lang::functions::native_modules::no_method;
use crate::lang::functions::stdlib::{arg_3x, arity, ruby_class};
use crate::lang::functions::{Builder, Family, any, sig, string};
use crate::lang::template::erb::value::{inspect, ruby_eq, to_s};
use crate::lang::values::types::{PType, capitalize};
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Stdlib;
    let rest = |ret| sig(ret).rest("args", any());
    b.add(
        &["defined_with_params"],
        f,
        rest("Boolean"),
        defined_with_params,
    );
    b.add(
        &["stdlib::str2resource"],
        f,
        sig("Any").req("res_string", string()),
        str2resource,
    );
    b.add(&["private"], f, rest("Undef"), private);
    b.add(&["type3x"], f, rest("String"), type3x);
    b.add(&["pry"], f, rest("Undef"), pry);
}

/// Puppet's `Resource.type_and_title` of a `Type[title]` string: the type
/// (no brackets in it) and the title (anything, not empty) between the
/// first `[` and a final `]`; `None` when the string is not of that form.
fn split_reference(s: &str) -> Option<(&str, &str)> {
    let (ty, rest) = s.split_once('[')?;
    let title = rest.strip_suffix(']')?;
    (!ty.is_empty() && !ty.contains(']') && !title.is_empty()).then_some((ty, title))
}

/// The error Puppet gives for a string that names no resource.
fn not_a_reference(s: &str) -> crate::lang::error::LangError {
    plain(format!(
        "No title provided and {} is not a valid resource reference",
        inspect(&Value::str(s))
    ))
}

/// The catalog key Puppet makes of a type name and a title: the type's
/// segments capitalized, and a class's title too.
fn munged(ty: &str, title: &str) -> (String, String) {
    let ty = capitalize(ty);
    if ty == "Class" {
        (ty, capitalize(title))
    } else {
        (ty, title.to_string())
    }
}

/// What a `defined_with_params` reference names: a type and a title (an
/// empty title: every resource of the type).
fn reference_key(ev: &mut Evaluator<'_>, reference: &Value) -> EvalResult<(String, String)> {
    match reference {
        Value::Str(s) => {
            let (ty, title) = split_reference(s).ok_or_else(|| not_a_reference(s))?;
            if ev.resource_kind(&ty.to_lowercase())?.is_some() {
                return Ok(munged(ty, title));
            }
            // A type Puppet does not find is looked up as no type at all:
            // the title alone, which names a class unless it is itself
            // of the `Type[title]` form.
            Ok(match split_reference(title) {
                Some((t, inner)) => munged(t, inner),
                None => munged("class", title),
            })
        }
        Value::Type(PType::Resource(Some(t), title)) => {
            Ok((t.clone(), title.clone().unwrap_or_default()))
        }
        Value::Type(PType::Resource(None, _)) => Err(no_method("include?", &Value::Undef).into()),
        Value::Type(PType::Class(Some(c))) => Ok(munged("class", c)),
        Value::Type(PType::Class(None)) => Err(not_a_reference("class").into()),
        // Puppet hands a 3.x function a regexp as its source text.
        Value::Regex(_) => Err(not_a_reference(&inspect(reference)).into()),
        other => Err(plain(format!(
            "Reference is not understood: '{}'",
            ruby_class(other)
        ))
        .into()),
    }
}

/// The `(key, value)` pairs a `defined_with_params` call asks for, as
/// Ruby's `params.map { |key, value| ... }` sees them: a hash's pairs, an
/// array's elements (an inner array gives its first two), undef or `''`
/// nothing.
fn wanted_params(params: Option<Value>) -> EvalResult<Vec<(Value, Value)>> {
    Ok(match params {
        None | Some(Value::Bool(false)) => Vec::new(),
        Some(Value::Str(s)) if s.is_empty() => Vec::new(),
        Some(Value::Hash(h)) => h,
        Some(Value::Array(a)) => a
            .into_iter()
            .map(|e| match e {
                Value::Array(pair) => {
                    let mut it = pair.into_iter();
                    (
                        it.next().unwrap_or(Value::Undef),
                        it.next().unwrap_or(Value::Undef),
                    )
                }
                other => (other, Value::Undef),
            })
            .collect(),
        // Ruby's did_you_mean adds its suggestion for every such receiver.
        Some(other) => {
            let e = no_method("map", &other);
            return Err(plain(format!("{}\nDid you mean?  tap", e.message)).into());
        }
    })
}

/// stdlib's `defined_with_params(reference, params)` (3.x): whether a
/// resource declared so far (virtual ones included, the calling
/// definition itself excluded) has every given parameter, compared with
/// Ruby's `==` (an undef value matches an unset parameter).
fn defined_with_params(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let reference = match c.args.first().map(arg_3x) {
        None | Some(Value::Bool(false)) => {
            return Err(plain("Must specify a reference").into());
        }
        Some(r) => r,
    };
    let params = wanted_params(c.args.get(1).map(arg_3x))?;
    Ok(Value::Bool(defined_with(ev, &reference, &params, c.scope)?))
}

/// Whether a resource that `reference` names (as `defined_with_params`
/// takes it) is in the catalog so far with every `(name, value)` of
/// `params`; the container of scope `sc` (the calling definition) does not
/// count. `ensure_resource` asks this before it declares.
pub(crate) fn defined_with(
    ev: &mut Evaluator<'_>,
    reference: &Value,
    params: &[(Value, Value)],
    sc: ScopeId,
) -> EvalResult<bool> {
    let (ty, title) = reference_key(ev, reference)?;
    let candidates: Vec<ResId> = if title.is_empty() {
        ev.resources
            .iter_enumerated()
            .filter(|(_, r)| r.type_name == ty)
            .map(|(i, _)| i)
            .collect()
    } else {
        find_resource(ev, &ty, &title).into_iter().collect()
    };
    let caller = ev.container_of(sc);
    for idx in candidates {
        if idx == caller {
            continue;
        }
        let Some(res) = ev.resources.get(idx) else {
            continue;
        };
        let mut all = true;
        for (key, value) in params {
            let Value::Str(key) = key else {
                return Err(no_method("intern", key).into());
            };
            let have = if key == "title" {
                Some(Value::Str(res.title.clone()))
            } else {
                res.params
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.clone())
                    .filter(|v| !v.is_undef())
            };
            let matched = match have {
                None => value.is_undef(),
                Some(v) => ruby_eq(&v, value),
            };
            all &= matched;
        }
        if all {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The resource Puppet's `catalog.resource(type, title)` finds: the one
/// of that title, else one the title names by an `alias` or, for a
/// built-in type other than `exec` and `tidy`, by its uniqueness key (the
/// namevar, or what the type's title patterns take from the title:
/// `File['/tmp/x/']` is the file whose path is `/tmp/x`).
fn find_resource(ev: &Evaluator<'_>, ty: &str, title: &str) -> Option<ResId> {
    if let Some(&idx) = ev.index.get(&(ty.to_string(), title.to_string())) {
        return Some(idx);
    }
    let lower = ty.to_lowercase();
    let namevar = ev.namevar(ty);
    let key = |title: &str, params: &[(String, Value)]| -> Vec<String> {
        let given = |k: &str| {
            params
                .iter()
                .find(|(p, v)| p == k && !v.is_undef())
                .map(|(_, v)| v.to_s())
        };
        let from_title = title_patterns::title_params(&lower, title);
        if from_title.is_empty() {
            return vec![given(&namevar).unwrap_or_else(|| title.to_string())];
        }
        from_title
            .into_iter()
            .map(|(k, v)| given(&k).unwrap_or(v))
            .collect()
    };
    let wanted = key(title, &[]);
    let isomorphic = !matches!(lower.as_str(), "exec" | "tidy");
    ev.resources
        .iter_enumerated()
        .find(|(_, r)| {
            if r.type_name != ty {
                return false;
            }
            let aliased = r.params.iter().any(|(k, v)| {
                k == "alias"
                    && match v {
                        Value::Array(a) => a.iter().any(|x| x.to_s() == title),
                        other => other.to_s() == title,
                    }
            });
            aliased
                || (isomorphic && r.kind == ResKind::Builtin && key(&r.title, &r.params) == wanted)
        })
        .map(|(i, _)| i)
}

/// `stdlib::str2resource('Type[title]')`: that resource, which must be
/// declared already (virtual ones count), as its `Type[title]` string
/// (what ferry's relationships and metaparameters accept as a reference).
fn str2resource(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let s = c.str_arg(0);
    let (ty, title) = split_reference(&s).ok_or_else(|| not_a_reference(&s))?;
    let (ty, title) = munged(ty, title);
    let Some(found) = find_resource(ev, &ty, &title).and_then(|i| ev.resources.get(i)) else {
        return Err(plain(format!(
            "stdlib::str2resource(): could not find {ty}[{title}], this is parse order dependent and values should not be quoted"
        ))
        .into());
    };
    // Puppet returns the catalog's resource object, which interpolates as
    // its own `Type[title]` and is no `Type` (`=~ Notify` is false).
    Ok(Value::Str(format!("{}[{}]", found.type_name, found.title)))
}

/// stdlib's deprecated `private([message])` (3.x): a warning, then
/// `assert_private` with the first argument (undef arrives as `''`, which
/// is the message then).
fn private(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    ev.messages.push(
        "warning: private() DEPRECATED: This function will cease to function on Puppet 4; please use assert_private() before upgrading to puppet 4 for backwards-compatibility, or migrate to the new parser's typing system.".to_string(),
    );
    let args = c.args.first().map(arg_3x).into_iter().collect();
    crate::lang::functions::control::assert_private(ev, Call { args, ..c })
}

/// stdlib's deprecated `type3x(value)` (3.x): `string`, `integer`,
/// `float`, `boolean`, `array` or `hash`; a string that reads back as the
/// same Integer or Float (Ruby's `to_i.to_s`, `to_f.to_s`) is that
/// number's type. Puppet passes undef as `''` and a regexp as its source.
fn type3x(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    arity(&c, "type3x", 1)?;
    let name = match arg_3x(&c.arg(0)) {
        Value::Str(s) if ruby_int_form(&s) => "integer",
        Value::Str(s) if ruby_float_form(&s) => "float",
        Value::Str(_) | Value::Regex(_) | Value::Rich(_) => "string",
        Value::Int(_) => "integer",
        Value::Float(_) => "float",
        Value::Bool(_) => "boolean",
        Value::Array(_) => "array",
        Value::Hash(_) => "hash",
        _ => return Err(plain("type3x(): Unknown type").into()),
    };
    Ok(Value::str(name))
}

/// Whether `s.to_i.to_s == s` in Ruby: an optional minus, then digits
/// without a leading zero (`-0` is not).
fn ruby_int_form(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" && digits.len() == s.len() || !digits.starts_with('0'))
}

/// Whether `s.to_f.to_s == s` in Ruby: the string is a Float as Ruby
/// writes it (`1.5`, `100.0`, `1.0e+16`).
fn ruby_float_form(s: &str) -> bool {
    if s.is_empty() || !s.bytes().all(|b| b"0123456789.-+e".contains(&b)) {
        return false;
    }
    s.parse::<f64>().is_ok_and(|f| to_s(&Value::Float(f)) == s)
}

/// stdlib's `pry()`: a debugging session in Puppet, which needs the pry
/// gem (Debian's Puppet has none); ferry has no debugger and fails the
/// same way.
fn pry(_: &mut Evaluator<'_>, _: Call<'_>) -> EvalResult<Value> {
    Err(plain("pry(): Requires the 'pry' rubygem to use, but it was not found").into())
}
