//! Parser for the Ruby subset of ERB templates: statements (with `if`/
//! `unless` modifiers), `if`/`unless`/`case`/`for` blocks, method calls with
//! `do |x| .. end` or `{ |x| .. }` blocks, the usual operators with Ruby's
//! precedence, literals (strings with `#{}`, symbols, `%w()`, regexes,
//! arrays, hashes), instance and local variables. Template text and `<%= %>`
//! output are statements too, so blocks may span tags. Method calls take
//! arguments in parentheses or without them (`x.join ', '`), trailing
//! `k => v` hash arguments, and `do |a, (b, c)| ... end` / `{ |x| ... }`
//! blocks; keyword forms include `next`/`break`, `defined?` and
//! `begin ... end`.

use std::sync::Arc;

use crate::lang::template::erb::lex::{ErbSyntaxError, StrPart, Tok, Token, lex};

/// Maximum nesting of Ruby expressions in a template (chains such as
/// `a + b + c` or `x.f.g` nest one level per link).
pub const MAX_DEPTH: usize = 200;

fn too_deep() -> ErbSyntaxError {
    ErbSyntaxError(format!(
        "template code nested too deeply (the limit is {MAX_DEPTH} levels)"
    ))
}

#[derive(Debug, Clone)]
pub enum RExpr {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Vec<RStr>),
    Sym(String),
    Regex(String),
    Array(Vec<RExpr>),
    Hash(Vec<(RExpr, RExpr)>),
    IVar(String),
    /// `$1`..`$n` (the last match's groups) or `$~`.
    GVar(String),
    Local(String),
    Const(String),
    SelfRef,
    /// Receiver (None: a bare call), name, arguments, block.
    Call(Option<Box<RExpr>>, String, Vec<RExpr>, Option<Box<Block>>),
    Index(Box<RExpr>, Vec<RExpr>),
    Not(Box<RExpr>),
    And(Box<RExpr>, Box<RExpr>),
    Or(Box<RExpr>, Box<RExpr>),
    Bin(&'static str, Box<RExpr>, Box<RExpr>),
    Ternary(Box<RExpr>, Box<RExpr>, Box<RExpr>),
    Assign(Box<RExpr>, Option<&'static str>, Box<RExpr>),
    If(Vec<(RExpr, Vec<RExpr>)>, Vec<RExpr>),
    Case(
        Option<Box<RExpr>>,
        Vec<(Vec<RExpr>, Vec<RExpr>)>,
        Vec<RExpr>,
    ),
    For(Vec<String>, Box<RExpr>, Vec<RExpr>),
    Next(Option<Box<RExpr>>),
    Break(Option<Box<RExpr>>),
    Defined(Box<RExpr>),
    Range(Box<RExpr>, Box<RExpr>, bool),
    /// `begin`/`def` body with `rescue` (and `ensure`) clauses.
    Rescue(Box<Rescue>),
    /// `def name(params) ... end`: a method of the template object.
    Def(Arc<MethodDef>),
    /// `return [value]` out of a `def` method.
    Return(Option<Box<RExpr>>),
    Text(String),
    Out(Box<RExpr>),
    /// The statements that follow start on this template line.
    Line(usize),
}

#[derive(Debug, Clone)]
pub enum RStr {
    Lit(String),
    Code(RExpr),
}

/// A method the template defines (`def bool2str(v) ... end`): its body
/// sees its parameters and instance variables, not the caller's locals.
#[derive(Debug)]
pub struct MethodDef {
    pub name: String,
    pub params: Vec<String>,
    pub body: Vec<RExpr>,
}

/// `body rescue [Class, ...] [=> var] handler ensure always end`: an
/// error raised by `body` runs `handler` (with the message in `var`)
/// whatever its class; `always` runs in every case.
#[derive(Debug, Clone)]
pub struct Rescue {
    pub body: Vec<RExpr>,
    pub var: Option<String>,
    pub handler: Vec<RExpr>,
    pub always: Vec<RExpr>,
}

#[derive(Debug, Clone)]
pub struct Block {
    /// Parameters; a group of several names destructures one argument.
    pub params: Vec<Vec<String>>,
    pub body: Vec<RExpr>,
}

pub struct Parser {
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
    /// Known local variables, innermost scope last.
    locals: Vec<Vec<String>>,
    /// A `&:name` argument of the call being parsed: its block.
    block_pass: Option<String>,
}

type PResult<T> = Result<T, ErbSyntaxError>;

fn describe(t: Option<&Tok>) -> String {
    match t {
        None => "end of template".into(),
        Some(Tok::Op(o)) => format!("'{o}'"),
        Some(Tok::Ident(i)) => format!("'{i}'"),
        Some(Tok::Nl) => "end of line".into(),
        Some(Tok::Text(_)) => "template text".into(),
        Some(Tok::OutEnd) => "'%>'".into(),
        Some(other) => format!("{other:?}"),
    }
}

impl Parser {
    pub fn new(toks: Vec<Token>) -> Parser {
        Parser {
            toks,
            pos: 0,
            depth: 0,
            locals: vec![Vec::new()],
            block_pass: None,
        }
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }
    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.pos + n).map(|t| &t.tok)
    }
    fn space_before(&self) -> bool {
        self.toks.get(self.pos).is_some_and(|t| t.space)
    }
    fn bump(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| t.tok.clone());
        self.pos += 1;
        t
    }
    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }
    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(i)) if i == kw)
    }
    fn eat_op(&mut self, op: &str) -> bool {
        let hit = self.is_op(op);
        if hit {
            self.pos += 1;
        }
        hit
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        let hit = self.is_kw(kw);
        if hit {
            self.pos += 1;
        }
        hit
    }
    fn expect_op(&mut self, op: &str) -> PResult<()> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(ErbSyntaxError(format!(
                "expected '{op}', found {}",
                describe(self.peek())
            )))
        }
    }
    fn expect_kw(&mut self, kw: &str) -> PResult<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(ErbSyntaxError(format!(
                "expected '{kw}', found {}",
                describe(self.peek())
            )))
        }
    }
    fn skip_nl(&mut self) {
        while matches!(self.peek(), Some(Tok::Nl)) {
            self.pos += 1;
        }
    }
    fn is_local(&self, name: &str) -> bool {
        self.locals.iter().any(|s| s.iter().any(|l| l == name))
    }
    fn declare(&mut self, name: &str) {
        if !self.is_local(name)
            && let Some(s) = self.locals.last_mut()
        {
            s.push(name.to_string());
        }
    }

    /// The whole template.
    pub fn program(&mut self) -> PResult<Vec<RExpr>> {
        let body = self.stmts(&[])?;
        if self.peek().is_some() {
            return Err(ErbSyntaxError(format!(
                "unexpected {}",
                describe(self.peek())
            )));
        }
        Ok(body)
    }

    /// Statements up to one of the keywords in `stop` (not consumed) or `}`.
    fn stmts(&mut self, stop: &[&str]) -> PResult<Vec<RExpr>> {
        let mut out = Vec::new();
        let mut last_line = 0;
        loop {
            self.skip_nl();
            let line = self.toks.get(self.pos).map_or(0, |t| t.line);
            if line > 0 && line != last_line && !matches!(self.peek(), Some(Tok::Text(_))) {
                let stops = match self.peek() {
                    Some(Tok::Ident(i)) => stop.contains(&i.as_str()),
                    Some(Tok::Op("}")) => stop.contains(&"}"),
                    _ => false,
                };
                if !stops {
                    out.push(RExpr::Line(line));
                    last_line = line;
                }
            }
            match self.peek() {
                None => return Ok(out),
                Some(Tok::Ident(i)) if stop.contains(&i.as_str()) => return Ok(out),
                Some(Tok::Op("}")) if stop.contains(&"}") => return Ok(out),
                Some(Tok::Text(t)) => {
                    let t = t.clone();
                    self.pos += 1;
                    out.push(RExpr::Text(t));
                }
                Some(Tok::OutStart) => {
                    self.pos += 1;
                    self.skip_nl();
                    let e = self.stmt()?;
                    self.skip_nl();
                    if !matches!(self.bump(), Some(Tok::OutEnd)) {
                        return Err("expected '%>' after output expression".into());
                    }
                    out.push(RExpr::Out(Box::new(e)));
                }
                _ => out.push(self.stmt()?),
            }
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(too_deep());
        }
        Ok(())
    }

    /// One more link of a chain built in a loop (`a + b + c`, `x.f.g`,
    /// `e if c if d`): each wraps the expression so far once more.
    fn link(&self, chain: &mut usize) -> PResult<()> {
        *chain += 1;
        if self.depth + *chain > MAX_DEPTH {
            return Err(too_deep());
        }
        Ok(())
    }

    fn stmt(&mut self) -> PResult<RExpr> {
        self.enter()?;
        let r = self.stmt_inner();
        self.depth -= 1;
        r
    }

    fn stmt_inner(&mut self) -> PResult<RExpr> {
        let mut e = self.expr_stmt()?;
        let mut chain = 0;
        loop {
            if self.is_kw("if") || self.is_kw("unless") {
                self.link(&mut chain)?;
            }
            if self.eat_kw("if") {
                let c = self.expr_stmt()?;
                e = RExpr::If(vec![(c, vec![e])], Vec::new());
            } else if self.eat_kw("unless") {
                let c = self.expr_stmt()?;
                e = RExpr::If(vec![(RExpr::Not(Box::new(c)), vec![e])], Vec::new());
            } else {
                return Ok(e);
            }
        }
    }

    /// `not`, `and`, `or` level.
    fn expr_stmt(&mut self) -> PResult<RExpr> {
        let mut l = self.not_expr()?;
        let mut chain = 0;
        loop {
            if self.is_kw("and") || self.is_kw("or") {
                self.link(&mut chain)?;
            }
            if self.eat_kw("and") {
                let r = self.not_expr()?;
                l = RExpr::And(Box::new(l), Box::new(r));
            } else if self.eat_kw("or") {
                let r = self.not_expr()?;
                l = RExpr::Or(Box::new(l), Box::new(r));
            } else {
                return Ok(l);
            }
        }
    }

    fn not_expr(&mut self) -> PResult<RExpr> {
        if self.eat_kw("not") {
            self.enter()?;
            let e = self.not_expr()?;
            self.depth -= 1;
            return Ok(RExpr::Not(Box::new(e)));
        }
        self.expr()
    }

    /// Assignment and everything tighter.
    pub fn expr(&mut self) -> PResult<RExpr> {
        self.enter()?;
        let r = self.assignment();
        self.depth -= 1;
        r
    }

    fn assignment(&mut self) -> PResult<RExpr> {
        // Multiple assignment is not supported; `a = b` and `a op= b` are.
        if let Some(Tok::Ident(name)) = self.peek()
            && matches!(
                self.peek_at(1),
                Some(Tok::Op("=" | "+=" | "-=" | "||=" | "<<="))
            )
        {
            let name = name.clone();
            self.declare(&name);
        }
        let l = self.ternary()?;
        let op = match self.peek() {
            Some(Tok::Op("=")) => None,
            Some(Tok::Op("+=")) => Some("+"),
            Some(Tok::Op("-=")) => Some("-"),
            Some(Tok::Op("*=")) => Some("*"),
            Some(Tok::Op("<<=")) => Some("<<"),
            Some(Tok::Op("||=")) => Some("||"),
            Some(Tok::Op("&&=")) => Some("&&"),
            _ => return Ok(l),
        };
        if !matches!(l, RExpr::Local(_) | RExpr::IVar(_) | RExpr::Index(..)) {
            return Err("cannot assign to this expression".into());
        }
        self.pos += 1;
        self.skip_nl();
        let r = self.expr()?;
        Ok(RExpr::Assign(Box::new(l), op, Box::new(r)))
    }

    fn ternary(&mut self) -> PResult<RExpr> {
        let c = self.range()?;
        if self.eat_op("?") {
            self.enter()?;
            self.skip_nl();
            let a = self.ternary()?;
            self.skip_nl();
            self.expect_op(":")?;
            self.skip_nl();
            let b = self.ternary()?;
            self.depth -= 1;
            return Ok(RExpr::Ternary(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }

    fn range(&mut self) -> PResult<RExpr> {
        let l = self.oror()?;
        for (op, excl) in [("..", false), ("...", true)] {
            if self.eat_op(op) {
                let r = self.oror()?;
                return Ok(RExpr::Range(Box::new(l), Box::new(r), excl));
            }
        }
        Ok(l)
    }

    fn oror(&mut self) -> PResult<RExpr> {
        let mut l = self.andand()?;
        let mut chain = 0;
        while self.eat_op("||") {
            self.link(&mut chain)?;
            self.skip_nl();
            let r = self.andand()?;
            l = RExpr::Or(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn andand(&mut self) -> PResult<RExpr> {
        let mut l = self.unary_not()?;
        let mut chain = 0;
        while self.eat_op("&&") {
            self.link(&mut chain)?;
            self.skip_nl();
            let r = self.unary_not()?;
            l = RExpr::And(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn unary_not(&mut self) -> PResult<RExpr> {
        self.binary(0)
    }

    /// Binary operators by precedence level (loosest first).
    fn binary(&mut self, level: usize) -> PResult<RExpr> {
        const LEVELS: &[&[&str]] = &[
            &["<=>", "==", "===", "!=", "=~", "!~"],
            &["<", ">", "<=", ">="],
            &["|", "^"],
            &["&"],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let mut l = self.binary(level + 1)?;
        let mut chain = 0;
        loop {
            let Some(Tok::Op(op)) = self.peek() else {
                return Ok(l);
            };
            let Some(op) = ops.iter().find(|o| **o == *op).copied() else {
                return Ok(l);
            };
            self.link(&mut chain)?;
            self.pos += 1;
            self.skip_nl();
            let r = self.binary(level + 1)?;
            l = RExpr::Bin(op, Box::new(l), Box::new(r));
        }
    }

    fn unary(&mut self) -> PResult<RExpr> {
        self.enter()?;
        let r = if self.eat_op("!") {
            self.unary().map(|e| RExpr::Not(Box::new(e)))
        } else if self.eat_op("-") {
            self.unary().map(|e| match e {
                RExpr::Int(i) => RExpr::Int(i.wrapping_neg()),
                RExpr::Float(f) => RExpr::Float(-f),
                other => RExpr::Bin("-", Box::new(RExpr::Int(0)), Box::new(other)),
            })
        } else {
            self.power()
        };
        self.depth -= 1;
        r
    }

    fn power(&mut self) -> PResult<RExpr> {
        let l = self.postfix()?;
        if self.eat_op("**") {
            let r = self.unary()?;
            return Ok(RExpr::Bin("**", Box::new(l), Box::new(r)));
        }
        Ok(l)
    }

    fn postfix(&mut self) -> PResult<RExpr> {
        let mut e = self.primary()?;
        let mut chain = 0;
        loop {
            if self.is_op(".") || self.is_op("&.") || self.is_op("::") || self.is_op("[") {
                self.link(&mut chain)?;
            }
            if self.is_op(".") || self.is_op("&.") {
                self.pos += 1;
                self.skip_nl();
                let name = match self.bump() {
                    Some(Tok::Ident(n) | Tok::Const(n)) => n,
                    other => {
                        return Err(ErbSyntaxError(format!(
                            "expected a method name, found {other:?}"
                        )));
                    }
                };
                e = self.call_rest(Some(e), name)?;
            } else if self.is_op("::") {
                self.pos += 1;
                match self.bump() {
                    Some(Tok::Const(n)) => e = RExpr::Const(n),
                    Some(Tok::Ident(n)) => e = self.call_rest(Some(e), n)?,
                    other => {
                        return Err(ErbSyntaxError(format!(
                            "unexpected {}",
                            describe(other.as_ref())
                        )));
                    }
                }
            } else if self.is_op("[") && !self.space_before() {
                self.pos += 1;
                let args = self.list("]")?;
                e = RExpr::Index(Box::new(e), args);
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> PResult<RExpr> {
        let Some(t) = self.bump() else {
            return Err("unexpected end of template".into());
        };
        Ok(match t {
            Tok::Int(i) => RExpr::Int(i),
            Tok::Float(f) => RExpr::Float(f),
            Tok::Sym(s) => RExpr::Sym(s),
            Tok::Regex(r) => RExpr::Regex(r),
            Tok::Words(w) => RExpr::Array(
                w.into_iter()
                    .map(|s| RExpr::Str(vec![RStr::Lit(s)]))
                    .collect(),
            ),
            Tok::Str(parts) => {
                let mut out = Vec::new();
                for p in parts {
                    out.push(match p {
                        StrPart::Lit(s) => RStr::Lit(s),
                        StrPart::Code(c) => RStr::Code(self.sub_expr(&c)?),
                    });
                }
                RExpr::Str(out)
            }
            Tok::IVar(n) => RExpr::IVar(n),
            Tok::GVar(n) => RExpr::GVar(n),
            Tok::Const(n) => {
                if self.is_op("(") && !self.space_before() {
                    self.call_rest(None, n)?
                } else {
                    RExpr::Const(n)
                }
            }
            Tok::Op("(") => {
                self.skip_nl();
                let e = self.stmt()?;
                self.skip_nl();
                self.expect_op(")")?;
                e
            }
            Tok::Op("[") => RExpr::Array(self.list("]")?),
            Tok::Op("{") => {
                let mut pairs = Vec::new();
                loop {
                    self.skip_nl();
                    if self.eat_op("}") {
                        break;
                    }
                    let k = self.expr()?;
                    self.skip_nl();
                    self.expect_op("=>")?;
                    self.skip_nl();
                    let v = self.expr()?;
                    pairs.push((k, v));
                    self.skip_nl();
                    if !self.eat_op(",") {
                        self.skip_nl();
                        self.expect_op("}")?;
                        break;
                    }
                }
                RExpr::Hash(pairs)
            }
            Tok::Ident(n) => self.ident(n)?,
            other => {
                return Err(ErbSyntaxError(format!(
                    "unexpected {}",
                    describe(Some(&other))
                )));
            }
        })
    }

    fn sub_expr(&mut self, src: &str) -> PResult<RExpr> {
        let mut toks = Vec::new();
        lex(src, &mut toks)?;
        let mut p = Parser {
            toks,
            pos: 0,
            depth: self.depth,
            locals: self.locals.clone(),
            block_pass: None,
        };
        let e = p.stmts(&[])?;
        Ok(match e.len() {
            1 => e.into_iter().next().unwrap_or(RExpr::Nil),
            _ => RExpr::If(vec![(RExpr::Bool(true), e)], Vec::new()),
        })
    }
}

/// Parse template tokens into statements.
pub fn parse_template(toks: Vec<Token>) -> PResult<Vec<RExpr>> {
    Parser::new(toks).program()
}

impl Parser {
    /// Arguments and block after a method name.
    pub(super) fn call_rest(&mut self, recv: Option<RExpr>, name: String) -> PResult<RExpr> {
        let outer_pass = self.block_pass.take();
        let mut args = Vec::new();
        if self.is_op("(") && !self.space_before() {
            self.pos += 1;
            args = self.list(")")?;
        } else if self.command_arg_follows() {
            loop {
                args.push(self.arg()?);
                if !self.eat_op(",") {
                    break;
                }
                self.skip_nl();
            }
        }
        let passed = std::mem::replace(&mut self.block_pass, outer_pass);
        let block = match passed {
            Some(method) => {
                // The `&:name` argument was a placeholder: drop it.
                args.pop();
                let x = "__block_pass_arg".to_string();
                Some(Block {
                    params: vec![vec![x.clone()]],
                    body: vec![RExpr::Call(
                        Some(Box::new(RExpr::Local(x))),
                        method,
                        Vec::new(),
                        None,
                    )],
                })
            }
            None => self.block()?,
        };
        Ok(RExpr::Call(
            recv.map(Box::new),
            name,
            args,
            block.map(Box::new),
        ))
    }

    /// Does a parenthesis-less argument start here (`x.join ', '`)?
    fn command_arg_follows(&self) -> bool {
        if !self.space_before() {
            return false;
        }
        match self.peek() {
            Some(Tok::Str(_) | Tok::Int(_) | Tok::Float(_) | Tok::Sym(_) | Tok::IVar(_)) => true,
            Some(Tok::Words(_) | Tok::Const(_) | Tok::GVar(_)) => true,
            Some(Tok::Regex(_)) => true,
            Some(Tok::Ident(i)) => !matches!(
                i.as_str(),
                "if" | "unless"
                    | "and"
                    | "or"
                    | "do"
                    | "then"
                    | "end"
                    | "else"
                    | "elsif"
                    | "when"
                    | "in"
                    | "rescue"
                    | "ensure"
                    | "while"
                    | "until"
            ),
            Some(Tok::Op("[")) => true,
            _ => false,
        }
    }

    fn arg(&mut self) -> PResult<RExpr> {
        // `&:name`: the block `{ |x| x.name }` (Symbol#to_proc).
        if self.is_op("&")
            && let Some(Tok::Sym(name)) = self.peek_at(1).cloned()
        {
            self.pos += 2;
            self.block_pass = Some(name);
            return Ok(RExpr::Nil);
        }
        if self.eat_op("*") || self.eat_op("&") {
            return self.ternary();
        }
        let e = self.expr()?;
        if self.eat_op("=>") {
            // Trailing `k => v` arguments form one hash.
            self.skip_nl();
            let v = self.expr()?;
            let mut pairs = vec![(e, v)];
            while self.is_op(",") && !matches!(self.peek_at(1), Some(Tok::Op(")"))) {
                self.pos += 1;
                self.skip_nl();
                let k = self.expr()?;
                self.expect_op("=>")?;
                let v = self.expr()?;
                pairs.push((k, v));
            }
            return Ok(RExpr::Hash(pairs));
        }
        Ok(e)
    }

    pub(super) fn list(&mut self, close: &str) -> PResult<Vec<RExpr>> {
        let mut out = Vec::new();
        loop {
            self.skip_nl();
            if self.eat_op(close) {
                return Ok(out);
            }
            out.push(self.arg()?);
            self.skip_nl();
            if !self.eat_op(",") {
                self.skip_nl();
                self.expect_op(close)?;
                return Ok(out);
            }
        }
    }

    fn block(&mut self) -> PResult<Option<Block>> {
        let close = if self.eat_kw("do") {
            "end"
        } else if self.is_op("{") {
            self.pos += 1;
            "}"
        } else {
            return Ok(None);
        };
        self.skip_nl();
        let mut params: Vec<Vec<String>> = Vec::new();
        let mut group: Option<Vec<String>> = None;
        if self.eat_op("||") {
        } else if self.eat_op("|") {
            loop {
                match self.bump() {
                    Some(Tok::Ident(n)) => match group.as_mut() {
                        Some(g) => g.push(n),
                        None => params.push(vec![n]),
                    },
                    Some(Tok::Op("(")) => group = Some(Vec::new()),
                    Some(Tok::Op(")")) => params.extend(group.take()),
                    Some(Tok::Op("," | "*" | "&")) => continue,
                    Some(Tok::Op("|")) => break,
                    other => {
                        return Err(ErbSyntaxError(format!(
                            "bad block parameter {}",
                            describe(other.as_ref())
                        )));
                    }
                }
            }
        }
        self.locals.push(params.iter().flatten().cloned().collect());
        let body = self.stmts(&[close]);
        self.locals.pop();
        let body = body?;
        if close == "end" {
            self.expect_kw("end")?;
        } else {
            self.expect_op("}")?;
        }
        Ok(Some(Block { params, body }))
    }
}

impl Parser {
    pub(super) fn ident(&mut self, n: String) -> PResult<RExpr> {
        Ok(match n.as_str() {
            "nil" => RExpr::Nil,
            "true" => RExpr::Bool(true),
            "false" => RExpr::Bool(false),
            "self" => RExpr::SelfRef,
            "if" | "unless" => {
                let unless = n == "unless";
                let mut arms = Vec::new();
                let c = self.expr_stmt()?;
                self.eat_kw("then");
                let body = self.stmts(&["elsif", "else", "end"])?;
                arms.push((if unless { RExpr::Not(Box::new(c)) } else { c }, body));
                let mut els = Vec::new();
                loop {
                    if self.eat_kw("elsif") {
                        let c = self.expr_stmt()?;
                        self.eat_kw("then");
                        arms.push((c, self.stmts(&["elsif", "else", "end"])?));
                    } else if self.eat_kw("else") {
                        els = self.stmts(&["end"])?;
                    } else {
                        self.expect_kw("end")?;
                        break;
                    }
                }
                RExpr::If(arms, els)
            }
            "case" => {
                let subject = if matches!(self.peek(), Some(Tok::Nl)) {
                    None
                } else {
                    Some(Box::new(self.expr_stmt()?))
                };
                self.skip_nl();
                let mut whens = Vec::new();
                let mut els = Vec::new();
                loop {
                    if self.eat_kw("when") {
                        let mut vals = vec![self.expr()?];
                        while self.eat_op(",") {
                            self.skip_nl();
                            vals.push(self.expr()?);
                        }
                        self.eat_kw("then");
                        whens.push((vals, self.stmts(&["when", "else", "end"])?));
                    } else if self.eat_kw("else") {
                        els = self.stmts(&["end"])?;
                    } else {
                        self.expect_kw("end")?;
                        break;
                    }
                }
                RExpr::Case(subject, whens, els)
            }
            "for" => {
                let mut vars = Vec::new();
                loop {
                    match self.bump() {
                        Some(Tok::Ident(v)) if v != "in" => {
                            self.declare(&v);
                            vars.push(v);
                        }
                        Some(Tok::Op(",")) => {}
                        Some(Tok::Ident(_)) => break,
                        other => {
                            return Err(ErbSyntaxError(format!(
                                "unexpected {}",
                                describe(other.as_ref())
                            )));
                        }
                    }
                }
                let iter = self.expr_stmt()?;
                self.eat_kw("do");
                let body = self.stmts(&["end"])?;
                self.expect_kw("end")?;
                RExpr::For(vars, Box::new(iter), body)
            }
            "next" | "break" => {
                let v = self.exit_value()?;
                if n == "next" {
                    RExpr::Next(v)
                } else {
                    RExpr::Break(v)
                }
            }
            "defined?" => {
                let paren = self.eat_op("(");
                let e = self.expr()?;
                if paren {
                    self.expect_op(")")?;
                }
                RExpr::Defined(Box::new(e))
            }
            "def" => self.method_def()?,
            "return" => RExpr::Return(self.exit_value()?),
            "begin" => {
                let body = self.body_to_end()?;
                RExpr::If(vec![(RExpr::Bool(true), body)], Vec::new())
            }
            "then" | "do" | "end" | "else" | "elsif" | "when" | "and" | "or" | "in" | "rescue"
            | "ensure" => {
                return Err(ErbSyntaxError(format!("unexpected '{n}'")));
            }
            _ if self.is_local(&n) && (self.space_before() || !self.is_op("(")) => RExpr::Local(n),
            _ => self.call_rest(None, n)?,
        })
    }
}

impl Parser {
    /// The value after `next`, `break` or `return`, if one follows.
    fn exit_value(&mut self) -> PResult<Option<Box<RExpr>>> {
        Ok(match self.peek() {
            None | Some(Tok::Nl | Tok::OutEnd | Tok::Op("}")) => None,
            Some(Tok::Ident(i)) if i == "if" || i == "unless" || i == "end" => None,
            _ => Some(Box::new(self.expr()?)),
        })
    }

    /// `def name(a, b) ... end` or `def name a, b ... end` (after `def`).
    fn method_def(&mut self) -> PResult<RExpr> {
        let name = match self.bump() {
            Some(Tok::Ident(n) | Tok::Const(n)) => n,
            other => {
                return Err(ErbSyntaxError(format!(
                    "expected a method name after 'def', found {}",
                    describe(other.as_ref())
                )));
            }
        };
        let mut params = Vec::new();
        let paren = self.is_op("(") && !self.space_before();
        if paren {
            self.pos += 1;
        }
        loop {
            match self.peek() {
                Some(Tok::Ident(p)) => {
                    params.push(p.clone());
                    self.pos += 1;
                }
                Some(Tok::Op(")")) if paren => {
                    self.pos += 1;
                    break;
                }
                _ if !paren => break,
                other => {
                    return Err(ErbSyntaxError(format!(
                        "bad method parameter {}",
                        describe(other)
                    )));
                }
            }
            if !self.eat_op(",") {
                if paren {
                    self.expect_op(")")?;
                }
                break;
            }
        }
        // A method body sees its parameters only, not the template's locals.
        let outer = std::mem::replace(&mut self.locals, vec![params.clone()]);
        let body = self.body_to_end();
        self.locals = outer;
        let body = body?;
        Ok(RExpr::Def(Arc::new(MethodDef { name, params, body })))
    }

    /// The statements of a `begin` or `def` body up to its `end`
    /// (consumed), with its `rescue` and `ensure` clauses.
    fn body_to_end(&mut self) -> PResult<Vec<RExpr>> {
        let body = self.stmts(&["end", "rescue", "ensure"])?;
        if !self.is_kw("rescue") && !self.is_kw("ensure") {
            self.expect_kw("end")?;
            return Ok(body);
        }
        let mut var = None;
        let mut handler = Vec::new();
        if self.eat_kw("rescue") {
            // The exception classes are not told apart: every error is rescued.
            while !matches!(self.peek(), None | Some(Tok::Nl)) && !self.is_kw("then") {
                if self.eat_op("=>") {
                    match self.bump() {
                        Some(Tok::Ident(n)) => {
                            self.declare(&n);
                            var = Some(n);
                        }
                        other => {
                            return Err(ErbSyntaxError(format!(
                                "expected a variable after 'rescue =>', found {}",
                                describe(other.as_ref())
                            )));
                        }
                    }
                } else if !self.eat_op(",") {
                    self.expr()?;
                }
            }
            self.eat_kw("then");
            handler = self.stmts(&["end", "ensure"])?;
        }
        let always = if self.eat_kw("ensure") {
            self.stmts(&["end"])?
        } else {
            Vec::new()
        };
        self.expect_kw("end")?;
        Ok(vec![RExpr::Rescue(Box::new(Rescue {
            body,
            var,
            handler,
            always,
        }))])
    }
}
