//! Template functions: `template` and `inline_template` (ERB), `epp` and
//! `inline_epp`, and `__tpl_text`, the output call compiled EPP makes.

use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Builder, Family, any, sig};
use crate::lang::template::{epp, erb, render_epp_file, render_erb_file};
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Templates;
    b.add(
        &["template"],
        f,
        sig("String").rest("paths", any()),
        template,
    );
    b.add(
        &["inline_template"],
        f,
        sig("String").rest("sources", any()),
        inline_template,
    );
    let epp_sig = |what| sig("String").req(what, any()).opt("parameters", any());
    b.add(&["epp"], f, epp_sig("path"), epp_file);
    b.add(&["inline_epp"], f, epp_sig("source"), inline_epp);
    b.add(&["__tpl_text"], f, sig("Undef").rest("text", any()), emit);
}

fn template(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let mut out = String::new();
    for a in &c.args {
        out.push_str(&render_erb_file(ev, &a.to_s(), c.scope, c.loc)?);
    }
    Ok(Value::Str(out))
}

fn inline_template(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let mut out = String::new();
    for a in &c.args {
        out.push_str(&erb::render_erb(
            ev,
            &a.to_s(),
            c.scope,
            erb::ErbSource::Inline,
        )?);
    }
    Ok(Value::Str(out))
}

fn params(c: &Call<'_>) -> Value {
    c.args.get(1).cloned().unwrap_or(Value::Hash(Vec::new()))
}

fn epp_file(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    render_epp_file(ev, &c.str_arg(0), params(&c), c.scope, c.loc)
}

fn inline_epp(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    epp::render_epp(ev, &c.str_arg(0), params(&c), c.scope, "inline_epp").map(Value::Str)
}

fn emit(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    epp::emit(ev, &c.args)
}
