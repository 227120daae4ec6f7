//! Control functions: `fail`, the logging functions (`notice`, `warning`,
//! ...), `next`, `break` and `return`, `assert_type`, `assert_private`,
//! `call` (a function by name) and `import` (discontinued: always an
//! error).

use crate::lang::error::plain;
use crate::lang::eval::control::{EvalResult, Unwind};
use crate::lang::eval::{Call, Evaluator, ResKind};
use crate::lang::functions::{Block, Builder, Family, any, sig};
use crate::lang::values::rich::Rich;
use crate::lang::values::types::{self, PType};
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Control;
    b.add(
        &[
            "notice", "info", "warning", "err", "debug", "alert", "crit", "emerg",
        ],
        f,
        sig("Undef").rest("values", any()),
        log,
    );
    b.add(&["fail"], f, sig("Undef").rest("message", any()), fail);
    b.add(
        &["next", "break", "return"],
        f,
        sig("Undef").opt("value", any()),
        control,
    );
    b.add(
        &["assert_type"],
        f,
        sig("Any")
            .req("type", any())
            .opt("value", any())
            .block(Block::Optional),
        assert_type,
    );
    b.add(
        &["call"],
        f,
        sig("Any")
            .req("function_name", any())
            .rest("arguments", any())
            .block(Block::Optional),
        call,
    );
    b.add(
        &["assert_private"],
        f,
        sig("Undef").opt("message", any()),
        assert_private,
    );
}

fn words(args: &[Value]) -> String {
    args.iter().map(|v| v.to_s()).collect::<Vec<_>>().join(" ")
}

fn log(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    ev.messages.push(format!("{}: {}", c.name, words(&c.args)));
    Ok(Value::Undef)
}

fn fail(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    Err(plain(words(&c.args)).into())
}

/// `next`, `break` and `return` unwind to the enclosing lambda, iteration
/// or function with their value.
fn control(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let loc = c.loc.clone();
    Err(match c.name {
        "next" => Unwind::Next {
            value: c.arg(0),
            loc,
        },
        "break" => Unwind::Break { loc },
        _ => Unwind::Return {
            value: c.arg(0),
            loc,
        },
    })
}

fn assert_type(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Value::Type(t) = c.arg(0) else {
        return Err(plain("assert_type expects a Type as first argument").into());
    };
    let v = c.arg(1);
    if types::is_instance(&t, &v) {
        Ok(v)
    } else if let Some(l) = c.lambda {
        // The lambda gets the expected type and the value's inferred type.
        let actual = Value::Type(types::infer::infer_type(&v));
        ev.call_lambda(l, vec![Value::Type(t.clone()), actual], c.scope)
    } else {
        Err(plain(format!("assert_type(): {}", types::mismatch(&t, &v))).into())
    }
}

/// Puppet's `call(name, args...)`: the function named by a string, with
/// the remaining arguments and the block (how a function whose name is a
/// reserved word, such as stdlib's `private`, can be called), or a
/// Deferred value resolved now.
fn call(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if let Some(Value::Rich(r)) = c.args.first()
        && matches!(r.as_ref(), Rich::Deferred { .. })
        && c.args.len() == 1
        && c.lambda.is_none()
    {
        let d = c.arg(0);
        return resolve_deferred(ev, &d, c.scope, c.loc);
    }
    let Some(Value::Str(name)) = c.args.first() else {
        let got = types::mismatch(&PType::String(0, i64::MAX), &c.arg(0));
        return Err(plain(format!(
            "The function 'call' was called with arguments it does not accept. It expects one of:\n  \
             (String function_name, Any arguments*, Callable block?)\n    \
             rejected: parameter 'function_name' {got}\n  \
             (Object[{{name => 'Deferred', attributes => {{'name' => Pattern[/\\A[$]?[a-z][a-z0-9_]*(?:::[a-z][a-z0-9_]*)*\\z/], 'arguments' => {{type => Optional[Array], value => undef}}}}}}] deferred)\n    \
             rejected: parameter 'deferred' {}",
            got.replace("a String value", "a Deferred value")
        ))
        .into());
    };
    let lname = name.trim_start_matches("::").to_lowercase();
    if lname.contains("::") {
        ev.autoload_function(&lname);
    }
    if !ev.functions.contains_key(&lname)
        && crate::lang::functions::registry().get(&lname).is_none()
    {
        return Err(plain(format!("Unknown function '{name}'")).into());
    }
    let args = c.args.get(1..).unwrap_or_default().to_vec();
    ev.call_function(name, args, c.lambda, c.scope, c.loc)
}

/// A value with every Deferred in it called, as Puppet's
/// `DeferredResolver` does: its arguments first, a `$name` as `dig` into
/// that variable.
fn resolve_deferred(
    ev: &mut Evaluator<'_>,
    v: &Value,
    sc: crate::lang::eval::ScopeId,
    loc: &crate::lang::error::Loc,
) -> EvalResult<Value> {
    match v {
        Value::Rich(r) => {
            let Rich::Deferred { name, args } = r.as_ref() else {
                return Ok(v.clone());
            };
            let mut resolved = args
                .iter()
                .map(|a| resolve_deferred(ev, a, sc, loc))
                .collect::<EvalResult<Vec<_>>>()?;
            let function = match name.strip_prefix('$') {
                Some(var) => {
                    resolved.insert(0, ev.lookup_var(var, sc).unwrap_or(Value::Undef));
                    "dig"
                }
                None => name.as_str(),
            };
            ev.call_function(function, resolved, None, sc, loc)
        }
        Value::Array(a) => Ok(Value::Array(
            a.iter()
                .map(|x| resolve_deferred(ev, x, sc, loc))
                .collect::<EvalResult<_>>()?,
        )),
        Value::Hash(h) => Ok(Value::Hash(
            h.iter()
                .map(|(k, x)| Ok((k.clone(), resolve_deferred(ev, x, sc, loc)?)))
                .collect::<EvalResult<_>>()?,
        )),
        Value::Sensitive(inner) => Ok(Value::Sensitive(Box::new(resolve_deferred(
            ev, inner, sc, loc,
        )?))),
        other => Ok(other.clone()),
    }
}

/// stdlib's `assert_private([message])`: the calling class or defined
/// type may only be declared from its own module (`$module_name` must equal
/// `$caller_module_name`).
pub(crate) fn assert_private(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let module = ev.lookup_var("module_name", c.scope);
    let caller = ev.lookup_var("caller_module_name", c.scope);
    let same = match (&module, &caller) {
        (Some(m), Some(cm)) => m.to_s() == cm.to_s(),
        (None, None) => true,
        _ => false,
    };
    if same {
        return Ok(Value::Undef);
    }
    // A 3.x function: undef arrives as `''`, which is a message.
    if let Some(Value::Str(m)) = c.args.first().map(crate::lang::functions::stdlib::arg_3x) {
        return Err(plain(m).into());
    }
    // The definition whose scope holds `$caller_module_name`.
    let mut cur = Some(c.scope);
    let mut found = None;
    let mut guard = 0;
    while let Some(id) = cur {
        let Some(s) = ev.scopes.get(id) else { break };
        if s.vars.contains_key("caller_module_name") {
            found = ev.resources.get(s.container);
            break;
        }
        cur = s.parent.filter(|p| *p != id);
        guard += 1;
        if guard > 10_000 {
            break;
        }
    }
    let message = match found {
        Some(r) if r.kind == ResKind::Class => {
            format!("Class {} is private", r.title.to_lowercase())
        }
        Some(r) => format!("Definition {} is private", r.type_name.to_lowercase()),
        None => "Class  is private".to_string(),
    };
    Err(plain(message).into())
}

/// `import`, discontinued since Puppet 4: any call (the parser turns the
/// statement `import 'x'` into one) fails with Puppet's message.
pub fn register_import(b: &mut Builder) {
    b.add(
        &["import"],
        Family::Control,
        sig("Undef").rest("args", any()),
        import,
    );
}

fn import(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    Err(crate::lang::error::LangError::eval(
        "Use of 'import' has been discontinued in favor of a manifest directory. See http://links.puppet.com/puppet-import-deprecation",
        c.loc,
    )
    .into())
}
