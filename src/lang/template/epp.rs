//! EPP templates: the segments become a Puppet program whose text chunks
//! are `__tpl_text(...)` calls ([`emit`]), run in a fresh scope holding
//! the template's declared parameters.

use std::sync::Arc;

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Evaluator, ScopeId};
use crate::lang::parsed::Parsed;
use crate::lang::syntax::ast::Expr;
use crate::lang::template::segments::{Flavor, Pos, Seg, segments};
use crate::lang::values::value::{Value, hash_get_str};

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The generated program, written so that each piece of template code
/// stays at its template line and column where it can (errors then point
/// into the template as Puppet's do).
struct Program {
    text: String,
    line: usize,
    col: usize,
}

impl Program {
    fn push(&mut self, s: &str) {
        for c in s.chars() {
            if c == '\n' {
                self.line += 1;
                self.col = 1;
            } else {
                self.col += 1;
            }
        }
        self.text.push_str(s);
    }

    /// Move to `pos` (less `lead` columns for text written before the
    /// code), when it is not behind.
    fn goto(&mut self, pos: Pos, lead: usize) {
        while self.line < pos.line {
            self.push("\n");
        }
        if self.line == pos.line {
            while self.col + lead < pos.col {
                self.push(" ");
            }
        } else {
            self.push(" ");
        }
    }
}

/// Templates' parameter declarations and bodies parsed so far in this
/// process, by template name (see [`crate::lang::parsed`]).
static DECLS: Parsed<Vec<Expr>> = Parsed::new();
static BODIES: Parsed<Vec<Expr>> = Parsed::new();

/// Translate EPP segments to a Puppet program and its parameter list.
fn to_program(segs: Vec<Seg>) -> Result<(String, Option<String>), String> {
    let mut prog = Program {
        text: String::new(),
        line: 1,
        col: 1,
    };
    let mut params = None;
    for (i, seg) in segs.into_iter().enumerate() {
        match seg {
            Seg::Text(t) if t.is_empty() => {}
            Seg::Text(t) => prog.push(&format!("__tpl_text({}) ", quote(&t))),
            Seg::Expr(e, pos) => {
                let lead = e.len() - e.trim_start().len();
                prog.goto(pos, "__tpl_text((".len().saturating_sub(lead));
                prog.push(&format!("__tpl_text(({})) ", e.trim_end()));
            }
            Seg::Code(c, pos) => {
                let t = c.trim();
                if i <= 1 && t.starts_with('|') && t.ends_with('|') && params.is_none() {
                    params = Some(t.to_string());
                    continue;
                }
                prog.goto(pos, 0);
                prog.push(&c);
                // A line break only where a comment must end.
                prog.push(if c.contains('#') { "\n" } else { " " });
            }
        }
    }
    Ok((prog.text, params))
}

fn run_program(ev: &mut Evaluator<'_>, prog: &str, what: &str, sc: ScopeId) -> EvalResult<String> {
    let file: Arc<str> = Arc::from(what);
    let stmts = BODIES
        .get_or_parse(what, prog, || {
            crate::lang::syntax::parser::parse(prog, &file)
        })
        .map_err(|e| plain(format!("Failed to parse template {what}: {}", e.message)))?;
    ev.render_stack.push(String::new());
    let r = ev.eval_block(&stmts, sc);
    let out = ev.render_stack.pop().unwrap_or_default();
    r.map(|_| out)
}

/// Render EPP text with parameters from `params` (a hash).
pub fn render_epp(
    ev: &mut Evaluator<'_>,
    src: &str,
    params: Value,
    sc: ScopeId,
    what: &str,
) -> EvalResult<String> {
    let segs = segments(src, Flavor::Epp).map_err(|m| plain(format!("{what}: {m}")))?;
    let (prog, decl) = to_program(segs).map_err(|m| plain(format!("{what}: {m}")))?;
    let container = ev.container_of(sc);
    let local = ev.new_scope(Some(ScopeId::TOP), Some(sc), container);
    let given = match params {
        Value::Hash(h) => h,
        _ => Vec::new(),
    };
    if let Some(decl) = decl {
        let file: Arc<str> = Arc::from(what);
        let fake = format!("with() {decl} {{ }}");
        let stmts = DECLS.get_or_parse(what, &fake, || {
            crate::lang::syntax::parser::parse(&fake, &file)
        })?;
        let lambda_params = match stmts.first().map(|e| &e.kind) {
            Some(crate::lang::syntax::ast::ExprKind::Call {
                lambda: Some(l), ..
            }) => l.params.clone(),
            _ => Vec::new(),
        };
        for p in &lambda_params {
            let v = match hash_get_str(&given, &p.name) {
                Some(v) => v.clone(),
                None => match &p.default {
                    Some(d) => ev.eval(d, local)?,
                    None => {
                        return Err(plain(format!(
                            "{what}: expects a value for parameter '{}'",
                            p.name
                        ))
                        .into());
                    }
                },
            };
            if let Some(t) = &p.ty
                && let Value::Type(t) = ev.eval(t, local)?
                && !crate::lang::values::types::is_instance(&t, &v)
            {
                return Err(plain(format!(
                    "{what}: parameter '{}' {}",
                    p.name,
                    crate::lang::values::types::mismatch(&t, &v)
                ))
                .into());
            }
            if let Some(s) = ev.scopes.get_mut(local) {
                s.vars.insert(p.name.clone(), v);
            }
        }
    } else if let Some(s) = ev.scopes.get_mut(local) {
        for (k, v) in given {
            s.vars.insert(k.to_s(), v);
        }
    }
    run_program(ev, &prog, what, local)
}

/// Append template output (the `__tpl_text` pseudo-function).
pub fn emit(ev: &mut Evaluator<'_>, args: &[Value]) -> EvalResult<Value> {
    let Some(buf) = ev.render_stack.last_mut() else {
        return Err(plain("Unknown function: '__tpl_text'").into());
    };
    for a in args {
        buf.push_str(&a.to_s());
    }
    Ok(Value::Undef)
}
