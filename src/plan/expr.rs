//! The values a YAML plan computes and the expressions that compute them.
//!
//! Bolt reads a YAML plan's strings by how they are written: a `'single'`
//! or `>`-folded string is text; a `"double"` one is a Puppet
//! double-quoted string (with `${...}` interpolation); a `|` block is
//! Puppet code; a bare string is code when it begins with `$`, text
//! otherwise. ferry parses all of them with its Puppet parser
//! (`lang::syntax`), so code that does not parse is refused when the plan
//! is read, and keeps the reference shapes Bolt's documentation shows —
//! `$step`, `$step.ok`, `$step.first.value['key']`, `$step.targets`,
//! `$step.names`, indexes into data, interpolation of those — as [`Expr`],
//! computed here. Anything else (operators, function calls, lambdas,
//! several statements) is kept as written ([`Code`]) for the
//! Puppet-language engine (`plan::puppet::eval_code`), which the runner
//! calls before the step that holds it, with the plan's variables
//! ([`Vars`]); [`Expr::eval_with`] then takes its value ([`Resolved`]).
//!
//! [`Val`] is what a variable holds: plain data, or Bolt's typed values
//! (`ResultSet`, `Result`, `Target`, `Error`) with their methods.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::Failure;
use crate::lang::syntax::ast::{Expr as Ast, ExprKind};
use crate::lang::syntax::parser;
use crate::run::TargetResult;
use crate::yaml::Origin;

/// A plan's variables: its parameters and its named steps' results.
pub type Vars = BTreeMap<String, Val>;

/// A value a step field or the plan's `return` computes.
#[derive(Clone, Debug)]
pub enum Expr {
    /// Text or other data, as written.
    Lit(Value),
    List(Vec<Expr>),
    Map(Vec<(String, Expr)>),
    /// An interpolated string: the parts' text, joined.
    Concat(Vec<Expr>),
    /// A variable, with methods and indexes applied in order.
    Ref(Ref),
    /// Puppet code beyond the reference shapes, evaluated by the
    /// Puppet-language plan engine (`plan::puppet::eval_code`) before the
    /// step that holds it runs.
    Code(Arc<Code>),
}

/// Code for the Puppet-language engine, with where it is written.
#[derive(Debug)]
pub struct Code {
    /// Puppet source: the code, or a double-quoted string literal.
    pub text: String,
    pub place: Place,
}

/// The values of the [`Code`] parts of some expressions, computed ahead
/// (by the engine) for [`Expr::eval_with`].
#[derive(Default, Debug)]
pub struct Resolved(std::collections::HashMap<usize, Val>);

impl Resolved {
    fn key(code: &Arc<Code>) -> usize {
        Arc::as_ptr(code) as usize
    }

    pub fn insert(&mut self, code: &Arc<Code>, v: Val) {
        self.0.insert(Resolved::key(code), v);
    }

    pub fn contains(&self, code: &Arc<Code>) -> bool {
        self.0.contains_key(&Resolved::key(code))
    }

    fn get(&self, code: &Arc<Code>) -> Option<&Val> {
        self.0.get(&Resolved::key(code))
    }
}

#[derive(Clone, Debug)]
pub struct Ref {
    pub var: String,
    pub path: Vec<Op>,
    /// Where the reference is written.
    pub at: Origin,
}

#[derive(Clone, Debug)]
pub enum Op {
    /// `.name` with no arguments.
    Method(String),
    /// `[key]`.
    Index(Box<Expr>),
}

/// The methods a reference may call (on the values that have them).
pub const METHODS: &[&str] = &[
    "ok",
    "first",
    "value",
    "targets",
    "names",
    "target",
    "name",
    "count",
    "length",
    "size",
    "ok_set",
    "error_set",
    "to_data",
    "empty",
    "status",
    "error",
    "message",
    "msg",
    "kind",
    "details",
    "action",
    "object",
    "keys",
    "values",
];

/// A plan's runtime value.
#[derive(Clone, Debug)]
pub enum Val {
    Data(Value),
    /// A step's results, one per target, in the step's target order.
    ResultSet(Arc<Vec<TargetResult>>),
    Result(Arc<TargetResult>),
    Target(String),
    /// A list holding typed values (`$step.targets`).
    List(Vec<Val>),
    /// An error a step caught (`catch_errors` on a `plan` step).
    Error(Arc<Failure>),
}

/// Where a string came from in the plan file, to turn positions inside
/// its code into file positions.
#[derive(Clone, Debug)]
pub struct Place {
    /// The scalar's own position.
    pub at: Origin,
    /// For a `|` block: the column its lines start at (the scalar's
    /// position is its first line of code).
    pub block_indent: Option<u64>,
    /// Characters before the code on the scalar's first line (a quote).
    pub lead: u64,
}

impl Place {
    /// A position inside the string's code, as a position in the file.
    pub fn map(&self, line: u32, col: u32) -> Origin {
        let (line, col) = (u64::from(line.max(1)), u64::from(col.max(1)));
        let mut at = self.at.clone();
        match self.block_indent {
            Some(indent) => {
                at.line += line - 1;
                at.column = indent + col - 1;
            }
            None if line == 1 => at.column += self.lead + col - 1,
            None => {
                at.line += line - 1;
                at.column = col;
            }
        }
        at
    }
}

/// Why a string could not become an [`Expr`].
#[derive(Debug)]
pub struct ExprError {
    pub at: Origin,
    pub msg: String,
    /// The code parsed, but needs the Puppet-language engine.
    pub needs_engine: bool,
    /// The innermost mapping key the string is the value of, if any.
    pub key: Option<String>,
    /// What needs the engine (`the call .map`), when that is the reason.
    pub what: Option<String>,
}

/// Why an expression could not be computed.
#[derive(Debug)]
pub struct EvalError {
    pub at: Origin,
    pub msg: String,
}

fn file_name(place: &Place) -> Arc<str> {
    Arc::from(place.at.file.display().to_string())
}

fn syntax(place: &Place, e: crate::lang::error::LangError) -> ExprError {
    let at = e
        .loc
        .as_ref()
        .map(|l| place.map(l.line, l.col))
        .unwrap_or_else(|| place.at.clone());
    ExprError {
        at,
        msg: e.message,
        needs_engine: false,
        key: None,
        what: None,
    }
}

/// Puppet code (a `|` block, or a bare string that begins with `$`).
pub fn code(text: &str, place: &Place) -> Result<Expr, ExprError> {
    let file = file_name(place);
    let stmts = parser::parse(text, &file).map_err(|e| syntax(place, e))?;
    let fast = match stmts.as_slice() {
        [one] => compile(one, place),
        [] => Ok(Expr::Lit(Value::Null)),
        [_, second, ..] => Err(engine(place, second, "code of several statements")),
    };
    or_engine(fast, text.to_string(), place)
}

/// A Puppet double-quoted string's text (without its quotes).
pub fn interpolated(text: &str, place: &Place) -> Result<Expr, ExprError> {
    let file = file_name(place);
    let quoted = quote(text);
    let e = parser::parse_expression(&quoted, &file).map_err(|e| syntax(place, e))?;
    or_engine(compile(&e, place), quoted, place)
}

/// The reference shapes are computed here; any other code that parsed
/// goes to the Puppet-language engine as it is written.
fn or_engine(
    fast: Result<Expr, ExprError>,
    text: String,
    place: &Place,
) -> Result<Expr, ExprError> {
    match fast {
        Err(e) if e.needs_engine => Ok(Expr::Code(Arc::new(Code {
            text,
            place: place.clone(),
        }))),
        other => other,
    }
}

/// Checks that a text parses as a double-quoted string, as Bolt checks
/// bare strings that it then uses as text.
pub fn check_interpolated(text: &str, place: &Place) -> Result<(), ExprError> {
    let file = file_name(place);
    parser::parse_expression(&quote(text), &file)
        .map(|_| ())
        .map_err(|e| syntax(place, e))
}

/// `text` as a Puppet double-quoted string literal: backslashes, quotes
/// and control characters escaped, `$` left for interpolation.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn engine(place: &Place, e: &Ast, what: &str) -> ExprError {
    ExprError {
        at: place.map(e.loc.line, e.loc.col),
        msg: format!(
            "{what} needs the Puppet-language plan engine (YAML plans evaluate $name, \
             $name.method, $name[key], literals and \"${{...}}\" interpolation of those)"
        ),
        needs_engine: true,
        key: None,
        what: Some(what.to_string()),
    }
}

/// The parsed code as an [`Expr`], when it is one of the shapes this
/// module evaluates.
fn compile(e: &Ast, place: &Place) -> Result<Expr, ExprError> {
    Ok(match &e.kind {
        ExprKind::Undef => Expr::Lit(Value::Null),
        ExprKind::Bool(b) => Expr::Lit(json!(b)),
        ExprKind::Int(i) => Expr::Lit(json!(i)),
        ExprKind::Float(f) => Expr::Lit(json!(f)),
        ExprKind::Str(s) | ExprKind::Bare(s) => Expr::Lit(json!(s)),
        ExprKind::Interp(parts) => Expr::Concat(
            parts
                .iter()
                .map(|p| compile(p, place))
                .collect::<Result<_, _>>()?,
        ),
        ExprKind::Array(items) => Expr::List(
            items
                .iter()
                .map(|i| compile(i, place))
                .collect::<Result<_, _>>()?,
        ),
        ExprKind::Hash(pairs) => {
            let mut out = Vec::with_capacity(pairs.len());
            for (k, v) in pairs {
                let key = match &k.kind {
                    ExprKind::Str(s) | ExprKind::Bare(s) => s.clone(),
                    _ => return Err(engine(place, k, "a hash key that is not a string")),
                };
                out.push((key, compile(v, place)?));
            }
            Expr::Map(out)
        }
        ExprKind::Var(name) => Expr::Ref(Ref {
            var: name.trim_start_matches("::").to_string(),
            path: Vec::new(),
            at: place.map(e.loc.line, e.loc.col),
        }),
        ExprKind::MethodCall {
            recv,
            name,
            args,
            lambda,
        } => {
            if !args.is_empty() || lambda.is_some() || !METHODS.contains(&name.as_str()) {
                return Err(engine(place, e, &format!("the call .{name}")));
            }
            let mut r = reference(recv, place, e)?;
            r.path.push(Op::Method(name.clone()));
            Expr::Ref(r)
        }
        ExprKind::Access(recv, keys) => {
            let [key] = keys.as_slice() else {
                return Err(engine(place, e, "an index with several keys"));
            };
            let key = compile(key, place)?;
            let mut r = reference(recv, place, e)?;
            r.path.push(Op::Index(Box::new(key)));
            Expr::Ref(r)
        }
        ExprKind::Call { name, .. } => {
            return Err(engine(place, e, &format!("the function call {name}()")));
        }
        _ => return Err(engine(place, e, "this expression")),
    })
}

fn reference(recv: &Ast, place: &Place, whole: &Ast) -> Result<Ref, ExprError> {
    match compile(recv, place)? {
        Expr::Ref(r) => Ok(r),
        _ => Err(engine(place, whole, "a method or index on a literal")),
    }
}

impl Expr {
    /// Every variable the expression refers to, with where.
    pub fn refs<'a>(&'a self, out: &mut Vec<&'a Ref>) {
        match self {
            Expr::Lit(_) => {}
            Expr::List(items) | Expr::Concat(items) => items.iter().for_each(|i| i.refs(out)),
            Expr::Map(pairs) => pairs.iter().for_each(|(_, v)| v.refs(out)),
            Expr::Ref(r) => {
                out.push(r);
                for op in &r.path {
                    if let Op::Index(k) = op {
                        k.refs(out);
                    }
                }
            }
            // The engine reports the variables code names when it runs.
            Expr::Code(_) => {}
        }
    }

    /// Every part of the expression that is code for the engine.
    pub fn codes(&self, out: &mut Vec<Arc<Code>>) {
        match self {
            Expr::Lit(_) => {}
            Expr::List(items) | Expr::Concat(items) => items.iter().for_each(|i| i.codes(out)),
            Expr::Map(pairs) => pairs.iter().for_each(|(_, v)| v.codes(out)),
            Expr::Ref(r) => {
                for op in &r.path {
                    if let Op::Index(k) = op {
                        k.codes(out);
                    }
                }
            }
            Expr::Code(c) => out.push(Arc::clone(c)),
        }
    }

    /// The literal text, when the expression is one.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Expr::Lit(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    /// Computes the value with the plan's variables (an expression with
    /// code in it needs [`Expr::eval_with`]).
    pub fn eval(&self, vars: &Vars) -> Result<Val, EvalError> {
        self.eval_with(vars, &Resolved::default())
    }

    /// Computes the value with the plan's variables and the values of its
    /// code, computed ahead.
    pub fn eval_with(&self, vars: &Vars, resolved: &Resolved) -> Result<Val, EvalError> {
        let eval = |e: &Expr| e.eval_with(vars, resolved);
        Ok(match self {
            Expr::Code(c) => resolved.get(c).cloned().ok_or_else(|| EvalError {
                at: c.place.at.clone(),
                msg: "internal error: code evaluated before the engine ran it".into(),
            })?,
            Expr::Lit(v) => Val::Data(v.clone()),
            Expr::List(items) => Val::Data(Value::Array(
                items
                    .iter()
                    .map(|i| eval(i).map(|v| v.to_json()))
                    .collect::<Result<_, _>>()?,
            )),
            Expr::Map(pairs) => Val::Data(Value::Object(
                pairs
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), eval(v)?.to_json())))
                    .collect::<Result<_, EvalError>>()?,
            )),
            Expr::Concat(parts) => {
                let mut out = String::new();
                for p in parts {
                    out.push_str(&eval(p)?.to_text());
                }
                Val::Data(Value::String(out))
            }
            Expr::Ref(r) => {
                let mut v = vars.get(&r.var).cloned().ok_or_else(|| EvalError {
                    at: r.at.clone(),
                    msg: format!("Unknown variable: '{}'.", r.var),
                })?;
                for op in &r.path {
                    v = match op {
                        Op::Method(m) => method(v, m),
                        Op::Index(k) => index(v, eval(k)?),
                    }
                    .map_err(|msg| EvalError {
                        at: r.at.clone(),
                        msg,
                    })?;
                }
                v
            }
        })
    }
}

fn result_value(r: &TargetResult) -> Value {
    r.value()
}

fn failure_of(r: &TargetResult) -> Option<Failure> {
    let e = r.outcome.error()?;
    let v = result_value(r);
    let details = v
        .get("_error")
        .and_then(|e| e.get("details"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    Some(Failure {
        kind: e.kind.to_string(),
        msg: e.msg.into_owned(),
        details,
        result_set: None,
    })
}

fn count(n: usize) -> Val {
    Val::Data(json!(n))
}

/// `v.name` (no arguments).
fn method(v: Val, name: &str) -> Result<Val, String> {
    let none = |v: &Val| format!("{} has no method '{name}'", v.type_name());
    Ok(match (&v, name) {
        (Val::ResultSet(rs), "ok") => Val::Data(json!(rs.iter().all(TargetResult::ok))),
        (Val::ResultSet(rs), "first") => rs
            .first()
            .map(|r| Val::Result(Arc::new(r.clone())))
            .unwrap_or(Val::Data(Value::Null)),
        (Val::ResultSet(rs), "targets") => {
            Val::List(rs.iter().map(|r| Val::Target(r.target.clone())).collect())
        }
        (Val::ResultSet(rs), "names") => {
            Val::Data(Value::Array(rs.iter().map(|r| json!(r.target)).collect()))
        }
        (Val::ResultSet(rs), "count" | "length" | "size") => count(rs.len()),
        (Val::ResultSet(rs), "empty") => Val::Data(json!(rs.is_empty())),
        (Val::ResultSet(rs), "ok_set" | "error_set") => {
            let want_ok = name == "ok_set";
            Val::ResultSet(Arc::new(
                rs.iter().filter(|r| r.ok() == want_ok).cloned().collect(),
            ))
        }
        (Val::ResultSet(_) | Val::Result(_) | Val::Error(_), "to_data") => Val::Data(v.to_json()),
        (Val::Result(r), "value") => Val::Data(result_value(r)),
        (Val::Result(r), "ok") => Val::Data(json!(r.ok())),
        (Val::Result(r), "target") => Val::Target(r.target.clone()),
        (Val::Result(r), "status") => Val::Data(json!(if r.ok() { "success" } else { "failure" })),
        (Val::Result(r), "action") => Val::Data(json!(r.action)),
        (Val::Result(r), "object") => Val::Data(json!(r.object)),
        (Val::Result(r), "message") => {
            Val::Data(result_value(r).get("_output").cloned().unwrap_or_default())
        }
        (Val::Result(r), "error") => failure_of(r)
            .map(|f| Val::Error(Arc::new(f)))
            .unwrap_or(Val::Data(Value::Null)),
        (Val::Target(n), "name") => Val::Data(json!(n)),
        (Val::Error(e), "msg" | "message") => Val::Data(json!(e.msg)),
        (Val::Error(e), "kind") => Val::Data(json!(e.kind)),
        (Val::Error(e), "details") => Val::Data(e.to_json()["details"].clone()),
        (Val::List(items), "count" | "length" | "size") => count(items.len()),
        (Val::Data(Value::Array(a)), "count" | "length" | "size") => count(a.len()),
        (Val::Data(Value::Object(m)), "count" | "length" | "size") => count(m.len()),
        (Val::Data(Value::String(s)), "length" | "size") => count(s.chars().count()),
        (Val::Data(Value::Object(m)), "keys") => {
            Val::Data(Value::Array(m.keys().map(|k| json!(k)).collect()))
        }
        (Val::Data(Value::Object(m)), "values") => {
            Val::Data(Value::Array(m.values().cloned().collect()))
        }
        _ => return Err(none(&v)),
    })
}

/// An index as Puppet counts it: negative from the end.
fn position(len: usize, key: &Value) -> Option<usize> {
    let i = key.as_i64()?;
    let len = i64::try_from(len).ok()?;
    let i = if i < 0 { len + i } else { i };
    (0..len)
        .contains(&i)
        .then(|| usize::try_from(i).ok())
        .flatten()
}

/// `v[key]`.
fn index(v: Val, key: Val) -> Result<Val, String> {
    let key = key.to_json();
    let bad = |v: &Val| {
        format!(
            "Operator '[]' is not applicable to {} with the key {key}",
            v.type_name()
        )
    };
    Ok(match (&v, &key) {
        (Val::Data(Value::Array(a)), Value::Number(_)) => Val::Data(
            position(a.len(), &key)
                .and_then(|i| a.get(i).cloned())
                .unwrap_or_default(),
        ),
        (Val::Data(Value::Object(m)), Value::String(k)) => {
            Val::Data(m.get(k).cloned().unwrap_or_default())
        }
        (Val::Data(Value::String(s)), Value::Number(_)) => {
            let chars: Vec<char> = s.chars().collect();
            Val::Data(
                position(chars.len(), &key)
                    .map(|i| json!(chars[i].to_string()))
                    .unwrap_or_default(),
            )
        }
        (Val::ResultSet(rs), Value::Number(_)) => position(rs.len(), &key)
            .map(|i| Val::Result(Arc::new(rs[i].clone())))
            .unwrap_or(Val::Data(Value::Null)),
        (Val::List(items), Value::Number(_)) => position(items.len(), &key)
            .map(|i| items[i].clone())
            .unwrap_or(Val::Data(Value::Null)),
        (Val::Result(r), Value::String(k)) => {
            Val::Data(result_value(r).get(k).cloned().unwrap_or_default())
        }
        _ => return Err(bad(&v)),
    })
}

impl Val {
    /// Puppet's name for the value's type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Val::Data(Value::Null) => "an Undef Value",
            Val::Data(Value::Bool(_)) => "a Boolean",
            Val::Data(Value::Number(n)) if n.is_f64() => "a Float",
            Val::Data(Value::Number(_)) => "an Integer",
            Val::Data(Value::String(_)) => "a String",
            Val::Data(Value::Array(_)) | Val::List(_) => "an Array",
            Val::Data(Value::Object(_)) => "a Hash",
            Val::ResultSet(_) => "a ResultSet",
            Val::Result(_) => "a Result",
            Val::Target(_) => "a Target",
            Val::Error(_) => "an Error",
        }
    }

    /// The value as JSON, as Bolt writes a plan's result: a ResultSet as
    /// its list of results, a Target as its name.
    pub fn to_json(&self) -> Value {
        match self {
            Val::Data(v) => v.clone(),
            Val::ResultSet(rs) => serde_json::to_value(rs.as_ref()).unwrap_or_default(),
            Val::Result(r) => serde_json::to_value(r.as_ref()).unwrap_or_default(),
            Val::Target(name) => json!(name),
            Val::List(items) => Value::Array(items.iter().map(Val::to_json).collect()),
            Val::Error(e) => e.to_json(),
        }
    }

    /// The value's text inside an interpolated string: a string as it is,
    /// data as Puppet writes it, a ResultSet or Result as JSON.
    pub fn to_text(&self) -> String {
        match self {
            Val::Data(Value::String(s)) => s.clone(),
            Val::Data(v) => crate::lang::values::value::Value::from_json(v).to_s(),
            Val::Target(name) => name.clone(),
            other => other.to_json().to_string(),
        }
    }

    /// The value as a `message` step prints it (Bolt's
    /// `Format.stringify`): lists, hashes and results as pretty JSON,
    /// anything else as text.
    pub fn message(&self) -> String {
        match self {
            Val::Data(Value::String(s)) => s.clone(),
            Val::Data(Value::Null) => String::new(),
            Val::Data(v @ (Value::Bool(_) | Value::Number(_))) => v.to_string(),
            Val::Target(name) => name.clone(),
            other => serde_json::to_string_pretty(&other.to_json()).unwrap_or_default(),
        }
    }

    /// The target names a TargetSpec value names (a string may hold
    /// several, comma-separated, and globs or group names).
    pub fn target_words(&self, out: &mut Vec<String>) -> Result<(), String> {
        match self {
            Val::Data(Value::String(s)) => out.push(s.clone()),
            Val::Data(Value::Array(items)) => {
                for i in items {
                    Val::Data(i.clone()).target_words(out)?;
                }
            }
            // An earlier step's results name their targets (a ferry
            // leniency: Bolt wants `$step.targets`).
            Val::Data(Value::Object(o)) if o.get("target").is_some_and(Value::is_string) => {
                out.extend(o.get("target").and_then(Value::as_str).map(str::to_string));
            }
            Val::Target(name) => out.push(name.clone()),
            Val::List(items) => {
                for i in items {
                    i.target_words(out)?;
                }
            }
            Val::ResultSet(rs) => out.extend(rs.iter().map(|r| r.target.clone())),
            Val::Result(r) => out.push(r.target.clone()),
            other => {
                return Err(format!(
                    "expects a TargetSpec (a target name, a Target or a list of them), got {}",
                    other.type_name()
                ));
            }
        }
        Ok(())
    }

    /// The value as a Boolean, for keys such as `catch_errors`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Val::Data(Value::Bool(b)) => Some(*b),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::result::{CommandOutput, Outcome, Output};
    use std::path::PathBuf;

    fn place() -> Place {
        Place {
            at: Origin::new(&Arc::new(PathBuf::from("p.yaml")), 3, 10),
            block_indent: None,
            lead: 0,
        }
    }

    fn result(target: &str, exit: i32, stdout: &str) -> TargetResult {
        let out = Output::Command(CommandOutput {
            exit_code: exit,
            stdout: stdout.into(),
            stderr: String::new(),
            merged_output: stdout.into(),
            truncated: Default::default(),
        });
        TargetResult {
            target: target.into(),
            action: "command".into(),
            object: "x".into(),
            outcome: if exit == 0 {
                Outcome::Ok(out)
            } else {
                Outcome::Failed(out)
            },
        }
    }

    fn vars() -> Vars {
        let rs = Arc::new(vec![result("a", 0, "one\n"), result("b", 3, "two\n")]);
        Vars::from([
            ("step".to_string(), Val::ResultSet(rs)),
            ("n".to_string(), Val::Data(json!(3))),
            (
                "h".to_string(),
                Val::Data(json!({"k": ["x", "y"], "m": {"a": 1}})),
            ),
        ])
    }

    fn run(code_text: &str) -> Value {
        code(code_text, &place())
            .unwrap_or_else(|e| panic!("{code_text}: {}", e.msg))
            .eval(&vars())
            .unwrap_or_else(|e| panic!("{code_text}: {}", e.msg))
            .to_json()
    }

    #[test]
    fn reference_shapes_from_bolts_docs() {
        assert_eq!(run("$step.ok"), json!(false));
        assert_eq!(run("$step.first.value['stdout']"), json!("one\n"));
        assert_eq!(run("$step.first.value[stdout]"), json!("one\n"));
        assert_eq!(run("$step.first['exit_code']"), json!(0));
        assert_eq!(run("$step.names"), json!(["a", "b"]));
        assert_eq!(run("$step.targets"), json!(["a", "b"]));
        assert_eq!(run("$step.error_set.names"), json!(["b"]));
        assert_eq!(run("$step[1].target.name"), json!("b"));
        assert_eq!(run("$step[-1].status"), json!("failure"));
        assert_eq!(run("$step.count"), json!(2));
        assert_eq!(run("$h['k'][1]"), json!("y"));
        assert_eq!(run("$h['nope']"), Value::Null);
        assert_eq!(run("[$n, $h['m']['a']]"), json!([3, 1]));
        assert_eq!(run("$step.first")["value"]["stdout"], json!("one\n"));
        let e = code("$step.first.value", &place()).unwrap();
        assert!(matches!(e.eval(&vars()).unwrap(), Val::Data(_)));
    }

    #[test]
    fn interpolation_and_text() {
        let e = interpolated("n=${n} first=${step.first.value['stdout']}!", &place()).unwrap();
        assert_eq!(
            e.eval(&vars()).unwrap().to_json(),
            json!("n=3 first=one\n!")
        );
        let e = interpolated("$n and ${h['k']} \"q\" \\", &place()).unwrap();
        assert_eq!(
            e.eval(&vars()).unwrap().to_json(),
            json!("3 and [x, y] \"q\" \\")
        );
        // Interpolating a ResultSet writes it as JSON.
        let e = interpolated("${step}", &place()).unwrap();
        let text = e.eval(&vars()).unwrap().to_json();
        assert!(text.as_str().unwrap().starts_with("[{"), "{text}");
        assert!(
            text.as_str().unwrap().contains("\"target\":\"a\""),
            "{text}"
        );
    }

    #[test]
    fn other_code_goes_to_the_engine_as_written() {
        for text in [
            "$n * 2",
            "$step.map |$r| { $r.value }",
            "$n.foo",
            "notice($n)",
            "$a = 1\n$a",
        ] {
            match code(text, &place()) {
                Ok(Expr::Code(c)) => assert_eq!(c.text, text),
                other => panic!("{text}: {other:?}"),
            }
        }
        match interpolated("n=${n * 2}", &place()) {
            Ok(Expr::Code(c)) => assert_eq!(c.text, "\"n=${n * 2}\""),
            other => panic!("{other:?}"),
        }
        // A list with code in it goes to the engine whole.
        let e = code("[$n, $n + 1]", &place()).unwrap();
        let mut codes = Vec::new();
        e.codes(&mut codes);
        assert_eq!(codes.len(), 1);
        // Not computed ahead: an internal error, not a wrong value.
        assert!(e.eval(&vars()).is_err());
        let mut resolved = Resolved::default();
        resolved.insert(&codes[0], Val::Data(json!(4)));
        assert_eq!(e.eval_with(&vars(), &resolved).unwrap().to_json(), json!(4));
        let err = code("$x = ", &place()).unwrap_err();
        assert!(!err.needs_engine, "{}", err.msg);
        let err = check_interpolated("echo ${x", &place()).unwrap_err();
        assert!(!err.needs_engine, "{}", err.msg);
        assert!(check_interpolated("echo $HOME 5+3 \\n", &place()).is_ok());
    }

    #[test]
    fn bad_references_fail_when_evaluated() {
        let e = code("$nope", &place()).unwrap();
        assert_eq!(
            e.eval(&vars()).unwrap_err().msg,
            "Unknown variable: 'nope'."
        );
        let e = code("$n.value", &place()).unwrap();
        assert_eq!(
            e.eval(&vars()).unwrap_err().msg,
            "an Integer has no method 'value'"
        );
        let e = code("$h['m']['a']['b']", &place()).unwrap();
        assert!(e.eval(&vars()).unwrap_err().msg.contains("'[]'"));
    }
}
