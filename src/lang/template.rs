//! Templates. EPP is compiled to an equivalent Puppet program (text chunks
//! become output calls) and evaluated in a fresh scope with the declared
//! parameters. ERB is run by a small interpreter for the Ruby subset
//! templates use (`erb_lex`, `erb_parse`, `erb_eval`, `erb_methods`,
//! `erb_collections`); anything beyond it is reported as an error.

use std::sync::Arc;

use crate::lang::error::{LResult, LangError, Loc};
use crate::lang::eval::{Evaluator, ScopeId, plain};
use crate::lang::loader;
use crate::lang::value::{Value, hash_get_str};

pub enum Seg {
    Text(String),
    Code(String),
    Expr(String),
}

/// Split `<% %>` template text into segments, honoring `<%-`/`-%>` trimming.
pub fn segments(src: &str) -> Result<Vec<Seg>, String> {
    let mut out = Vec::new();
    let mut rest = src;
    let mut trim_next_nl = false;
    while !rest.is_empty() {
        let Some(i) = rest.find("<%") else {
            let mut t = rest.to_string();
            if trim_next_nl {
                t = t.strip_prefix('\n').map(str::to_string).unwrap_or(t);
            }
            out.push(Seg::Text(t));
            break;
        };
        let mut text = rest.get(..i).unwrap_or("").to_string();
        if trim_next_nl {
            text = text.strip_prefix('\n').map(str::to_string).unwrap_or(text);
        }
        let after = rest.get(i + 2..).unwrap_or("");
        if let Some(lit) = after.strip_prefix('%') {
            text.push_str("<%");
            out.push(Seg::Text(text));
            rest = lit;
            trim_next_nl = false;
            continue;
        }
        let (kind, body_start) = match after.chars().next() {
            Some('=') => ('=', 1),
            Some('#') => ('#', 1),
            Some('-') => ('-', 1),
            _ => (' ', 0),
        };
        if kind == '-' {
            // strip whitespace before the tag on its line
            let trimmed = text.trim_end_matches([' ', '\t']);
            if trimmed.is_empty() || trimmed.ends_with('\n') {
                text = trimmed.to_string();
            }
        }
        out.push(Seg::Text(text));
        let body_all = after.get(body_start..).unwrap_or("");
        let Some(end) = body_all.find("%>") else {
            return Err("Unbalanced '<%' in template".into());
        };
        let mut body = body_all.get(..end).unwrap_or("");
        trim_next_nl = false;
        if let Some(b) = body.strip_suffix('-') {
            body = b;
            trim_next_nl = true;
        }
        rest = body_all.get(end + 2..).unwrap_or("");
        match kind {
            '=' => out.push(Seg::Expr(body.to_string())),
            '#' => {}
            _ => out.push(Seg::Code(body.to_string())),
        }
    }
    Ok(out)
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Translate EPP segments to a Puppet program and its parameter list.
fn to_program(segs: Vec<Seg>) -> Result<(String, Option<String>), String> {
    let mut prog = String::new();
    let mut params = None;
    for (i, seg) in segs.into_iter().enumerate() {
        match seg {
            Seg::Text(t) if t.is_empty() => {}
            Seg::Text(t) => prog.push_str(&format!("__tpl_text({})\n", quote(&t))),
            Seg::Expr(e) => {
                prog.push_str(&format!("__tpl_text(({}))\n", e.trim()));
            }
            Seg::Code(c) => {
                let t = c.trim();
                if i <= 1 && t.starts_with('|') && t.ends_with('|') && params.is_none() {
                    params = Some(t.to_string());
                    continue;
                }
                prog.push_str(&c);
                prog.push('\n');
            }
        }
    }
    Ok((prog, params))
}

fn run_program(ev: &mut Evaluator<'_>, prog: &str, what: &str, sc: ScopeId) -> LResult<String> {
    let file: Arc<str> = Arc::from(what);
    let stmts = crate::lang::parser::parse(prog, &file)
        .map_err(|e| plain(format!("Failed to parse template {what}: {}", e.message)))?;
    ev.render_stack.push(String::new());
    let r = ev.eval_block(&stmts, sc);
    let out = ev.render_stack.pop().unwrap_or_default();
    r.map(|_| out)
}

/// Render ERB text with the Ruby-subset interpreter (`erb_*` modules);
/// instance variables resolve from the calling scope.
pub fn render_erb(ev: &mut Evaluator<'_>, src: &str, sc: ScopeId, what: &str) -> LResult<String> {
    let segs = segments(src).map_err(|m| plain(format!("{what}: {m}")))?;
    let toks = crate::lang::erb_lex::lex_template(&segs)
        .map_err(|m| plain(format!("Failed to parse template {what}: {m}")))?;
    let prog = crate::lang::erb_parse::parse_template(toks)
        .map_err(|m| plain(format!("Failed to parse template {what}: {m}")))?;
    let loc = Loc {
        file: Arc::from(what),
        line: 0,
        col: 0,
    };
    let mut interp = crate::lang::erb_eval::Interp::new(ev, sc, loc);
    interp.run(&prog).map_err(|e| match e.kind {
        crate::lang::error::ErrorKind::Evaluation if e.loc.is_none() => {
            plain(format!("Failed to evaluate template {what}: {}", e.message))
        }
        _ => e,
    })?;
    Ok(std::mem::take(&mut interp.out))
}

/// Render EPP text with parameters from `params` (a hash).
pub fn render_epp(
    ev: &mut Evaluator<'_>,
    src: &str,
    params: Value,
    sc: ScopeId,
    what: &str,
) -> LResult<String> {
    let segs = segments(src).map_err(|m| plain(format!("{what}: {m}")))?;
    let (prog, decl) = to_program(segs).map_err(|m| plain(format!("{what}: {m}")))?;
    let container = ev.container_of(sc);
    let local = ev.new_scope(Some(0), Some(sc), container);
    let given = match params {
        Value::Hash(h) => h,
        _ => Vec::new(),
    };
    if let Some(decl) = decl {
        let file: Arc<str> = Arc::from(what);
        let fake = format!("with() {decl} {{ }}");
        let stmts = crate::lang::parser::parse(&fake, &file)?;
        let lambda_params = match stmts.first().map(|e| &e.kind) {
            Some(crate::lang::ast::ExprKind::Call {
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
                        )));
                    }
                },
            };
            if let Some(t) = &p.ty
                && let Value::Type(t) = ev.eval(t, local)?
                && !crate::lang::types::is_instance(&t, &v)
            {
                return Err(plain(format!(
                    "{what}: parameter '{}' {}",
                    p.name,
                    crate::lang::types::mismatch(&t, &v)
                )));
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

impl<'l> Evaluator<'l> {
    fn template_path(&self, reference: &str, loc: &Loc) -> LResult<std::path::PathBuf> {
        let p = std::path::Path::new(reference);
        if p.is_absolute() && self.loader.is_file(p) {
            return Ok(p.to_path_buf());
        }
        loader::module_file(self.loader, &self.modulepath, "templates", reference)
            .ok_or_else(|| LangError::eval(format!("Could not find template '{reference}'"), loc))
    }

    pub fn render_template_file(
        &mut self,
        reference: &str,
        sc: ScopeId,
        loc: &Loc,
    ) -> LResult<String> {
        let path = self.template_path(reference, loc)?;
        let src = self.loader.read(&path).map_err(|e| {
            LangError::eval(format!("Could not read template '{reference}': {e}"), loc)
        })?;
        render_erb(self, &src, sc, &path.display().to_string())
    }

    pub fn render_epp_file(
        &mut self,
        reference: &str,
        params: Value,
        sc: ScopeId,
        loc: &Loc,
    ) -> LResult<Value> {
        let path = self.template_path(reference, loc)?;
        let src = self.loader.read(&path).map_err(|e| {
            LangError::eval(format!("Could not read template '{reference}': {e}"), loc)
        })?;
        Ok(Value::Str(render_epp(
            self,
            &src,
            params,
            sc,
            &path.display().to_string(),
        )?))
    }

    /// Append template output (the `__tpl_text` pseudo-function).
    pub fn template_emit(&mut self, args: &[Value]) -> LResult<Value> {
        let Some(buf) = self.render_stack.last_mut() else {
            return Err(plain("Unknown function: '__tpl_text'"));
        };
        for a in args {
            buf.push_str(&a.to_s());
        }
        Ok(Value::Undef)
    }
}
