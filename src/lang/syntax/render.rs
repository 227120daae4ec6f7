//! A compact, stable rendering of the AST as S-expressions, one top-level
//! statement per line prefixed with its `line:column`; what the parser's
//! data-driven tests (`tests/parser/`) compare against.

use std::fmt::Write as _;

use crate::lang::syntax::ast::{
    AttrOp, AttrOpKind, CaseOption, Expr, ExprKind, Lambda, NodeMatch, Param, ResourceBody,
};

/// Render parsed statements, one per line.
pub fn render(stmts: &[Expr]) -> String {
    let mut out = String::new();
    for s in stmts {
        let _ = writeln!(out, "{}:{} {}", s.loc.line, s.loc.col, expr(s));
    }
    out
}

fn list(items: &[Expr]) -> String {
    items.iter().map(expr).collect::<Vec<_>>().join(" ")
}

fn block(name: &str, body: &[Expr]) -> String {
    if body.is_empty() {
        format!("({name})")
    } else {
        format!("({name} {})", list(body))
    }
}

fn params(ps: &[Param]) -> String {
    let one = |p: &Param| {
        let mut s = String::new();
        if let Some(t) = &p.ty {
            s.push_str(&expr(t));
            s.push(' ');
        }
        if p.captures_rest {
            s.push('*');
        }
        s.push('$');
        s.push_str(&p.name);
        if let Some(d) = &p.default {
            s.push_str(" = ");
            s.push_str(&expr(d));
        }
        s
    };
    format!("[{}]", ps.iter().map(one).collect::<Vec<_>>().join(", "))
}

fn lambda(l: &Option<Box<Lambda>>) -> String {
    match l {
        Some(l) => format!(" (lambda {} {})", params(&l.params), block("body", &l.body)),
        None => String::new(),
    }
}

fn ops(ops: &[AttrOp]) -> String {
    ops.iter()
        .map(|o| {
            let arrow = match o.kind {
                AttrOpKind::Set => "=>",
                AttrOpKind::Append => "+>",
                AttrOpKind::Splat => "*=>",
            };
            format!("({} {arrow} {})", o.name, expr(&o.value))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn bodies(bs: &[ResourceBody]) -> String {
    bs.iter()
        .map(|b| format!("({} {})", expr(&b.title), ops(&b.ops)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn options(os: &[CaseOption]) -> String {
    os.iter()
        .map(|o| format!("(when [{}] {})", list(&o.values), block("do", &o.body)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One expression as an S-expression.
pub fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Undef => "undef".into(),
        ExprKind::Default => "default".into(),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Int(i) => i.to_string(),
        ExprKind::Float(f) => format!("{f:?}"),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Interp(parts) => format!("(interp {})", list(parts)),
        ExprKind::Regex(r) => format!("/{r}/"),
        ExprKind::Bare(w) => w.clone(),
        ExprKind::TypeRef(t) => t.clone(),
        ExprKind::Var(v) => format!("${v}"),
        ExprKind::Array(items) => format!("[{}]", list(items)),
        ExprKind::Hash(pairs) => format!(
            "{{{}}}",
            pairs
                .iter()
                .map(|(k, v)| format!("{} => {}", expr(k), expr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ExprKind::Unary(op, x) => format!("({} {})", word(op), expr(x)),
        ExprKind::Binary(op, a, b) => format!("({} {} {})", word(op), expr(a), expr(b)),
        ExprKind::Assign(a, b) => format!("(= {} {})", expr(a), expr(b)),
        ExprKind::Access(x, keys) => format!("(access {} {})", expr(x), list(keys)),
        ExprKind::Call {
            name,
            args,
            lambda: l,
        } => {
            format!("(call {name} [{}]{})", list(args), lambda(l))
        }
        ExprKind::MethodCall {
            recv,
            name,
            args,
            lambda: l,
        } => format!("(.{name} {} [{}]{})", expr(recv), list(args), lambda(l)),
        ExprKind::If { cond, then, els } | ExprKind::Unless { cond, then, els } => {
            let word = if matches!(e.kind, ExprKind::If { .. }) {
                "if"
            } else {
                "unless"
            };
            let els = match els {
                Some(b) => format!(" {}", block("else", b)),
                None => String::new(),
            };
            format!("({word} {} {}{els})", expr(cond), block("then", then))
        }
        ExprKind::Case {
            subject,
            options: o,
        } => format!("(case {} {})", expr(subject), options(o)),
        ExprKind::Selector {
            subject,
            options: o,
        } => format!(
            "(? {} {})",
            expr(subject),
            o.iter()
                .map(|(k, v)| format!("({} => {})", expr(k), expr(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        ExprKind::Relationship(op, a, b) => format!("({} {} {})", word(op), expr(a), expr(b)),
        ExprKind::Resource {
            virt,
            type_name,
            bodies: bs,
        } => format!("(resource {} {type_name} {})", word(virt), bodies(bs)),
        ExprKind::ResourceDefaults { type_name, ops: o } => {
            format!("(defaults {type_name} {})", ops(o))
        }
        ExprKind::ResourceOverride { target, ops: o } => {
            format!("(override {} {})", expr(target), ops(o))
        }
        ExprKind::Collector {
            type_name,
            exported,
            query,
            overrides,
        } => {
            let mut parts = vec![
                "collect".to_string(),
                type_name.clone(),
                query.as_ref().map_or("all".to_string(), |q| expr(q)),
            ];
            if *exported {
                parts.insert(1, "exported".into());
            }
            if !overrides.is_empty() {
                parts.push(ops(overrides));
            }
            format!("({})", parts.join(" "))
        }
        ExprKind::Block(body) => block("block", body),
        ExprKind::ClassDef(d) | ExprKind::DefineDef(d) => format!(
            "({} {} {}{} {})",
            if matches!(e.kind, ExprKind::ClassDef(_)) {
                "class"
            } else {
                "define"
            },
            d.name,
            params(&d.params),
            d.parent
                .as_ref()
                .map_or(String::new(), |p| format!(" inherits {p}")),
            block("body", &d.body)
        ),
        ExprKind::NodeDef(n) => format!(
            "(node [{}] {})",
            n.matches
                .iter()
                .map(|m| match m {
                    NodeMatch::Name(s) => format!("{s:?}"),
                    NodeMatch::Regex(r) => format!("/{r}/"),
                    NodeMatch::Default => "default".into(),
                })
                .collect::<Vec<_>>()
                .join(" "),
            block("body", &n.body)
        ),
        ExprKind::FunctionDef(f) => format!(
            "(function {} {}{} {})",
            f.name,
            params(&f.params),
            f.return_type
                .as_ref()
                .map_or(String::new(), |t| format!(" >> {}", expr(t))),
            block("body", &f.body)
        ),
        ExprKind::TypeAlias(name, t) => format!("(type {name} {})", expr(t)),
        ExprKind::PlanDef(d) => format!(
            "(plan {} {} {})",
            d.name,
            params(&d.params),
            block("body", &d.body)
        ),
        ExprKind::Apply { args, body } => format!(
            "(apply [{}] {})",
            args.iter().map(expr).collect::<Vec<_>>().join(" "),
            block("body", body)
        ),
    }
}

/// An operator's or keyword's name in lower case (`Add` -> `add`).
fn word(op: impl std::fmt::Debug) -> String {
    format!("{op:?}").to_lowercase()
}
