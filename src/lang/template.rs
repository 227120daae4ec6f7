//! Templates. EPP is compiled to an equivalent Puppet program (text chunks
//! become output calls) and evaluated in a fresh scope with the declared
//! parameters. ERB supports a common Ruby subset (`<%= @var %>`, if/elsif/
//! else/unless/end, `.each do |x|`, `scope[...]`) by translation to Puppet;
//! anything else is reported as an unsupported construct.

use std::sync::Arc;

use crate::lang::error::{LResult, LangError, Loc};
use crate::lang::eval::{Evaluator, ScopeId, plain};
use crate::lang::loader;
use crate::lang::value::{Value, hash_get_str};

enum Seg {
    Text(String),
    Code(String),
    Expr(String),
}

/// Split `<% %>` template text into segments, honoring `<%-`/`-%>` trimming.
fn segments(src: &str) -> Result<Vec<Seg>, String> {
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

/// Prefix Ruby block-local identifiers with `$` (outside string literals).
fn mark_locals(src: &str, locals: &[String]) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let mut quote: Option<char> = None;
    while let Some(&c) = chars.get(i) {
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' {
                if let Some(&n) = chars.get(i + 1) {
                    out.push(n);
                    i += 1;
                }
            } else if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == '\'' || c == '"' {
            quote = Some(c);
            out.push(c);
            i += 1;
            continue;
        }
        if c.is_ascii_lowercase() || c == '_' {
            let prev = if i == 0 {
                None
            } else {
                chars.get(i - 1).copied()
            };
            let mut j = i;
            while chars
                .get(j)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                j += 1;
            }
            let word: String = chars
                .get(i..j)
                .map(|s| s.iter().collect())
                .unwrap_or_default();
            let attached = prev.is_some_and(|p| {
                p.is_ascii_alphanumeric() || matches!(p, '_' | '@' | '$' | '.' | ':')
            });
            if !attached && locals.contains(&word) {
                out.push('$');
            }
            out.push_str(&word);
            i = j;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Translate a Ruby expression fragment used in ERB to Puppet.
fn ruby_expr(src: &str, locals: &[String]) -> String {
    let mut s = mark_locals(src.trim(), locals);
    let re_scope = regex::Regex::new(r#"scope\[['"](?:::)?([a-z0-9_:]+)['"]\]"#).ok();
    let re_lookup = regex::Regex::new(r#"scope\.lookupvar\(['"](?:::)?([a-z0-9_:]+)['"]\)"#).ok();
    let re_fn =
        regex::Regex::new(r#"scope\.call_function\(['"]([a-z0-9_:]+)['"],\s*\[(.*?)\]\)"#).ok();
    let re_ivar = regex::Regex::new(r"@([a-z_][a-zA-Z0-9_]*)").ok();
    let re_interp = regex::Regex::new(r"#\{").ok();
    let re_sfn = regex::Regex::new(r"scope\.function_([a-z0-9_]+)\(\[(.*?)\]\)").ok();
    let re_rmatch = regex::Regex::new(r"(/[^/]*/)\.match\(([^)]*)\)").ok();
    for (re, rep) in [
        (&re_scope, "$$$1"),
        (&re_lookup, "$$$1"),
        (&re_fn, "$1($2)"),
        (&re_ivar, "$$$1"),
        (&re_interp, "$${"),
        (&re_sfn, "$1($2)"),
        (&re_rmatch, "($2 =~ $1)"),
    ] {
        if let Some(re) = re {
            s = re.replace_all(&s, rep).into_owned();
        }
    }
    s = s.replace("&&", " and ").replace("||", " or ");
    s = s
        .replace(".nil?", " == undef")
        .replace(".empty?", ".empty")
        .replace(".to_s", "");
    s = s.replace(".include?(", ".member(").replace("nil", "undef");
    s = s
        .replace(":undef", "undef")
        .replace(".has_key?(", ".has_key(");
    if let Ok(re) = regex::Regex::new(r"\.is_a\?\(([A-Z][A-Za-z]*)\)") {
        s = re.replace_all(&s, " =~ $1").into_owned();
    }
    s
}

fn ruby_code(src: &str, locals: &mut Vec<String>) -> Result<String, String> {
    let code = src.trim();
    let re_each = regex::Regex::new(
        r"^(.*)\.(each|each_pair|map|collect|each_with_index)\s+do\s*\|([^|]*)\|$",
    )
    .map_err(|e| e.to_string())?;
    let re_for = regex::Regex::new(r"^for\s+([a-z_]+)\s+in\s+(.*)$").map_err(|e| e.to_string())?;
    Ok(if code.is_empty() {
        String::new()
    } else if code == "next" {
        "next()".into()
    } else if code == "end" || code == "}" {
        "}".into()
    } else if code == "else" {
        "} else {".into()
    } else if let Some(c) = code.strip_prefix("elsif ") {
        format!("}} elsif {} {{", ruby_expr(c, locals))
    } else if let Some(c) = code.strip_prefix("if ") {
        format!("if {} {{", ruby_expr(c, locals))
    } else if let Some(c) = code.strip_prefix("unless ") {
        format!("unless {} {{", ruby_expr(c, locals))
    } else if let Some(c) = re_each.captures(code) {
        let recv = ruby_expr(c.get(1).map_or("", |m| m.as_str()), locals);
        let names: Vec<String> = c
            .get(3)
            .map_or("", |m| m.as_str())
            .split(',')
            .map(|p| {
                p.trim()
                    .trim_start_matches('(')
                    .trim_end_matches(')')
                    .to_string()
            })
            .collect();
        locals.extend(names.iter().cloned());
        if names.len() >= 2 {
            // Ruby destructures pairs (hash entries or nested arrays).
            let binds: Vec<String> = names
                .iter()
                .enumerate()
                .map(|(i, n)| format!("${n} = $__erb_e[{i}]"))
                .collect();
            format!("__erb_pairs({recv}).each |$__erb_e| {{ {}", binds.join(" "))
        } else {
            format!("{recv}.each |${}| {{", names.join(""))
        }
    } else if let Some(c) = re_for.captures(code) {
        let var = c.get(1).map_or("x", |m| m.as_str()).to_string();
        let recv = ruby_expr(c.get(2).map_or("", |m| m.as_str()), locals);
        locals.push(var.clone());
        format!("{recv}.each |${var}| {{")
    } else if let Some((var, val)) = code
        .split_once('=')
        .filter(|(v, rest)| !v.contains(['(', '!', '<', '>', '=']) && !rest.starts_with('='))
    {
        {
            let name = var.trim().trim_start_matches('@').to_string();
            let value = ruby_expr(val, locals);
            locals.push(name.clone());
            format!("${name} = {value}")
        }
    } else {
        return Err(format!("Unsupported ERB construct: '{code}'"));
    })
}

fn to_program(segs: Vec<Seg>, erb: bool) -> Result<(String, Option<String>), String> {
    let mut prog = String::new();
    let mut params = None;
    let mut locals: Vec<String> = Vec::new();
    for (i, seg) in segs.into_iter().enumerate() {
        match seg {
            Seg::Text(t) if t.is_empty() => {}
            Seg::Text(t) => prog.push_str(&format!("__tpl_text({})\n", quote(&t))),
            Seg::Expr(e) => {
                let e = if erb { ruby_expr(&e, &locals) } else { e };
                prog.push_str(&format!("__tpl_text(({}))\n", e.trim()));
            }
            Seg::Code(c) => {
                let t = c.trim();
                if !erb && i <= 1 && t.starts_with('|') && t.ends_with('|') && params.is_none() {
                    params = Some(t.to_string());
                    continue;
                }
                let code = if erb { ruby_code(&c, &mut locals)? } else { c };
                prog.push_str(&code);
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

/// Render ERB text; variables resolve from the calling scope.
pub fn render_erb(ev: &mut Evaluator<'_>, src: &str, sc: ScopeId, what: &str) -> LResult<String> {
    let segs = segments(src).map_err(|m| plain(format!("{what}: {m}")))?;
    let (prog, _) = to_program(segs, true).map_err(|m| plain(format!("{what}: {m}")))?;
    let container = ev.container_of(sc);
    let local = ev.new_scope(Some(sc), Some(sc), container);
    run_program(ev, &prog, what, local)
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
    let (prog, decl) = to_program(segs, false).map_err(|m| plain(format!("{what}: {m}")))?;
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

    /// Ruby-style pairs for ERB blocks with two or more parameters.
    pub fn erb_pairs(v: &Value) -> Value {
        match v {
            Value::Hash(h) => Value::Array(
                h.iter()
                    .map(|(k, v)| Value::Array(vec![k.clone(), v.clone()]))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(
                a.iter()
                    .map(|x| match x {
                        Value::Array(_) => x.clone(),
                        other => Value::Array(vec![other.clone()]),
                    })
                    .collect(),
            ),
            other => Value::Array(vec![Value::Array(vec![other.clone()])]),
        }
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
