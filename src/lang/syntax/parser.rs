//! The Puppet language parser: a token cursor, statements, the
//! operator-precedence expression parser (Pratt style) and the primary
//! expressions it starts from, which in Puppet include the statement-like
//! forms: literals, calls, resources (with defaults, overrides,
//! virtual/exported), collectors, if/unless/case, and
//! class/define/node/function/type definitions.

use std::sync::Arc;

use crate::lang::error::{LResult, LangError, Loc};
use crate::lang::syntax::ast::{
    AttrOp, AttrOpKind, BinOp, CaseOption, Definition, Expr, ExprKind, FunctionDef, Lambda,
    NodeDef, NodeMatch, Param, RelOp, ResourceBody, UnOp, Virtuality,
};
use crate::lang::syntax::lexer::{Lexer, P, StrPart, Tok, Token, tokenize};
use crate::lang::syntax::{MAX_DEPTH, MAX_TYPE_DEPTH};

const STATEMENT_CALLS: &[&str] = &[
    "include",
    "require",
    "contain",
    "realize",
    "tag",
    "notice",
    "info",
    "warning",
    "err",
    "debug",
    "fail",
    "alert",
    "crit",
    "emerg",
    "hiera_include",
    "break",
    "next",
    "return",
    "import",
];

pub struct Parser {
    pub(crate) toks: Vec<Token>,
    pub(crate) pos: usize,
    pub(crate) file: Arc<str>,
    pub(crate) depth: usize,
    pub(crate) max_depth: usize,
    /// While parsing a condition, `name {` is not a resource expression.
    pub(crate) no_resource: bool,
    pub(crate) end_loc: (u32, u32),
}

/// The manifests parsed so far in this process, by file name, with the
/// text they were parsed from: a run that compiles a catalog per target
/// parses each manifest once. Bounded: past [`PARSED_MAX`] files it starts
/// over.
static PARSED: std::sync::OnceLock<std::sync::Mutex<Parsed>> = std::sync::OnceLock::new();

/// File name → (its text, its statements).
type Parsed = std::collections::HashMap<Arc<str>, (String, Arc<Vec<Expr>>)>;

/// How many files [`parse_cached`] keeps.
const PARSED_MAX: usize = 4096;

/// [`parse`], remembering the result for the same file and text (the text
/// is compared whole, so a file changed on disk is parsed again). The
/// statements are shared, never copied.
pub fn parse_cached(src: &str, file: &Arc<str>) -> LResult<Arc<Vec<Expr>>> {
    let cache = PARSED.get_or_init(Default::default);
    if let Ok(map) = cache.lock()
        && let Some((text, stmts)) = map.get(file)
        && text == src
    {
        return Ok(Arc::clone(stmts));
    }
    let stmts = Arc::new(parse(src, file)?);
    if let Ok(mut map) = cache.lock() {
        if map.len() >= PARSED_MAX {
            map.clear();
        }
        map.insert(Arc::clone(file), (src.to_string(), Arc::clone(&stmts)));
    }
    Ok(stmts)
}

/// Parse a whole manifest.
pub fn parse(src: &str, file: &Arc<str>) -> LResult<Vec<Expr>> {
    let toks = tokenize(src, file)?;
    let mut p = Parser::new(toks, file.clone(), end_of_input(src));
    p.parse_program()
}

/// Where "at end of input" errors point: just after the last character
/// that is not white space (1-based line and column, in characters, as the
/// lexer counts them).
fn end_of_input(src: &str) -> (u32, u32) {
    let content = src.trim_end();
    let line = content.matches('\n').count() + 1;
    let col = content.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(col).unwrap_or(u32::MAX),
    )
}

/// Parse a single expression.
pub fn parse_expression(src: &str, file: &Arc<str>) -> LResult<Expr> {
    parse_one(src, file, MAX_DEPTH)
}

fn parse_one(src: &str, file: &Arc<str>, max_depth: usize) -> LResult<Expr> {
    let toks = Lexer::new(src, file).with_max_depth(max_depth).tokenize()?;
    let mut p = Parser::new(toks, file.clone(), end_of_input(src));
    p.max_depth = max_depth;
    let e = p.parse_expr(0)?;
    if let Some(t) = p.peek_tok() {
        return Err(p.syntax_at(t));
    }
    Ok(e)
}

/// Parse a data type string such as `Optional[Array[String[1]]]`, as
/// Puppet's type parser does: type names with `[...]` arguments, literals
/// (numbers, strings without interpolation, regexes, `default`, `undef`),
/// arrays and hashes of them, and nothing that calls or refers to
/// anything. Nesting is bounded by [`MAX_TYPE_DEPTH`], so evaluating the
/// result cannot run deep either.
pub fn parse_type(src: &str, file: &Arc<str>) -> LResult<Expr> {
    let e = parse_one(src, file, MAX_TYPE_DEPTH)?;
    check_type_expr(&e)?;
    Ok(e)
}

/// Refuses anything but type syntax (recursion bounded by the parse depth).
fn check_type_expr(e: &Expr) -> LResult<()> {
    match &e.kind {
        ExprKind::Undef
        | ExprKind::Default
        | ExprKind::Bool(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Regex(_)
        | ExprKind::Bare(_)
        | ExprKind::TypeRef(_) => Ok(()),
        ExprKind::Unary(UnOp::Neg, x)
            if matches!(x.kind, ExprKind::Int(_) | ExprKind::Float(_)) =>
        {
            Ok(())
        }
        ExprKind::Array(items) => items.iter().try_for_each(check_type_expr),
        ExprKind::Hash(pairs) => pairs
            .iter()
            .try_for_each(|(k, v)| check_type_expr(k).and_then(|()| check_type_expr(v))),
        ExprKind::Access(base, args) => {
            check_type_expr(base)?;
            args.iter().try_for_each(check_type_expr)
        }
        _ => Err(LangError::syntax(
            "A data type may only hold type names, literals, arrays and hashes",
            e.loc.clone(),
        )),
    }
}

impl Parser {
    pub fn new(toks: Vec<Token>, file: Arc<str>, end_loc: (u32, u32)) -> Parser {
        Parser {
            toks,
            pos: 0,
            file,
            depth: 0,
            max_depth: MAX_DEPTH,
            no_resource: false,
            end_loc,
        }
    }

    pub(crate) fn peek_tok(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }
    pub(crate) fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }
    pub(crate) fn peek_n(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.pos + n).map(|t| &t.tok)
    }
    pub(crate) fn is_p(&self, p: P) -> bool {
        matches!(self.peek(), Some(Tok::P(x)) if *x == p)
    }
    pub(crate) fn is_name(&self, n: &str) -> bool {
        matches!(self.peek(), Some(Tok::Name(x)) if x == n)
    }
    pub(crate) fn loc(&self) -> Loc {
        match self.toks.get(self.pos) {
            Some(t) => Loc::new(&self.file, t.line, t.col),
            None => Loc::new(&self.file, self.end_loc.0, self.end_loc.1),
        }
    }
    pub(crate) fn next(&mut self) -> Option<Token> {
        let t = self.toks.get(self.pos).cloned();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    pub(crate) fn syntax_at(&self, t: &Token) -> LangError {
        let text = tok_text(&t.tok);
        LangError::syntax(
            format!("Syntax error at '{text}'"),
            Loc::new(&self.file, t.line, t.col),
        )
    }

    pub(crate) fn unexpected(&self) -> LangError {
        match self.peek_tok() {
            Some(t) => self.syntax_at(t),
            None => LangError::syntax("Syntax error at end of input", self.loc()),
        }
    }

    pub(crate) fn expect_p(&mut self, p: P) -> LResult<()> {
        if self.is_p(p) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    pub(crate) fn eat_p(&mut self, p: P) -> bool {
        if self.is_p(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(crate) fn enter(&mut self) -> LResult<()> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(self.too_deep());
        }
        Ok(())
    }

    /// One more link of a chain built in a loop (`a + b + c`, `$x[1][2]`,
    /// `$x.f.g`): each wraps the expression so far once more, so a chain
    /// nests as deeply as its length.
    fn link(&self, chain: &mut usize) -> LResult<()> {
        *chain += 1;
        if self.depth + *chain > self.max_depth {
            return Err(self.too_deep());
        }
        Ok(())
    }

    fn too_deep(&self) -> LangError {
        LangError::syntax(
            format!(
                "Expression nesting is too deep (the limit is {} levels)",
                self.max_depth
            ),
            self.loc(),
        )
    }

    pub fn parse_program(&mut self) -> LResult<Vec<Expr>> {
        let stmts = self.parse_statements()?;
        if self.peek_tok().is_some() {
            return Err(self.unexpected());
        }
        Ok(stmts)
    }

    /// Statements up to (not including) a `}` or end of input.
    pub(crate) fn parse_statements(&mut self) -> LResult<Vec<Expr>> {
        let mut out = Vec::new();
        loop {
            while self.eat_p(P::Semi) {}
            match self.peek() {
                None | Some(Tok::P(P::RBrace)) => return Ok(out),
                _ => out.push(self.parse_statement()?),
            }
        }
    }

    /// `{ statements }`
    pub(crate) fn parse_block(&mut self) -> LResult<Vec<Expr>> {
        self.expect_p(P::LBrace)?;
        let saved = std::mem::replace(&mut self.no_resource, false);
        let body = self.parse_statements()?;
        self.no_resource = saved;
        self.expect_p(P::RBrace)?;
        Ok(body)
    }

    fn parse_statement(&mut self) -> LResult<Expr> {
        if let Some(Tok::Name(n)) = self.peek()
            && STATEMENT_CALLS.contains(&n.as_str())
            && (self.starts_call_arg(1)
                // `return { 'a' => 1 }`: a hash, as Puppet reads it (no
                // resource type is named `return` or `next`).
                || (matches!(n.as_str(), "return" | "next")
                    && matches!(self.peek_n(1), Some(Tok::P(P::LBrace)))))
        {
            let name = n.clone();
            let loc = self.loc();
            self.pos += 1;
            let mut args = vec![self.parse_expr(0)?];
            while self.eat_p(P::Comma) {
                args.push(self.parse_expr(0)?);
            }
            let call = Expr::new(
                ExprKind::Call {
                    name,
                    args,
                    lambda: None,
                },
                loc,
            );
            return self.parse_infix(call, 0);
        }
        self.parse_expr(0)
    }

    fn starts_call_arg(&self, n: usize) -> bool {
        match self.peek_n(n) {
            Some(Tok::Name(w)) => !matches!(w.as_str(), "and" | "or" | "in"),
            Some(Tok::ClassRef(_))
            | Some(Tok::Var(_))
            | Some(Tok::Int(_))
            | Some(Tok::Float(_))
            | Some(Tok::Str(_))
            | Some(Tok::Interp(_))
            | Some(Tok::P(P::LBrack))
            | Some(Tok::P(P::Minus))
            | Some(Tok::P(P::Not)) => true,
            _ => false,
        }
    }

    pub fn parse_expr(&mut self, min_bp: u8) -> LResult<Expr> {
        self.enter()?;
        let lhs = self.parse_unary()?;
        let r = self.parse_infix(lhs, min_bp);
        self.depth -= 1;
        r
    }

    fn parse_infix(&mut self, mut lhs: Expr, min_bp: u8) -> LResult<Expr> {
        let mut chain = 0;
        while let Some(tok) = self.peek() {
            if matches!(tok, Tok::P(P::Question)) {
                if 9 < min_bp {
                    break;
                }
                self.link(&mut chain)?;
                self.pos += 1;
                lhs = self.parse_selector(lhs)?;
                continue;
            }
            let Some((op, l, r)) = infix_op(tok) else {
                break;
            };
            if l < min_bp {
                break;
            }
            self.link(&mut chain)?;
            let loc = if matches!(op, Infix::Rel(_)) {
                lhs.loc.clone()
            } else {
                self.loc()
            };
            self.pos += 1;
            let rhs = self.parse_expr(r)?;
            lhs = match op {
                Infix::Bin(b) => Expr::new(ExprKind::Binary(b, Box::new(lhs), Box::new(rhs)), loc),
                Infix::Rel(rel) => Expr::new(
                    ExprKind::Relationship(rel, Box::new(lhs), Box::new(rhs)),
                    loc,
                ),
                Infix::Assign => Expr::new(ExprKind::Assign(Box::new(lhs), Box::new(rhs)), loc),
            };
        }
        Ok(lhs)
    }

    fn parse_selector(&mut self, subject: Expr) -> LResult<Expr> {
        let loc = subject.loc.clone();
        self.expect_p(P::LBrace)?;
        let mut options = Vec::new();
        loop {
            if self.eat_p(P::RBrace) {
                break;
            }
            let k = self.parse_expr(10)?;
            self.expect_p(P::FatArrow)?;
            let v = self.parse_expr(0)?;
            options.push((k, v));
            if !self.eat_p(P::Comma) {
                self.expect_p(P::RBrace)?;
                break;
            }
        }
        Ok(Expr::new(
            ExprKind::Selector {
                subject: Box::new(subject),
                options,
            },
            loc,
        ))
    }

    fn parse_unary(&mut self) -> LResult<Expr> {
        let loc = self.loc();
        let op = match self.peek() {
            Some(Tok::P(P::Not)) => Some(UnOp::Not),
            Some(Tok::P(P::Minus)) => Some(UnOp::Neg),
            Some(Tok::P(P::Star)) => Some(UnOp::Splat),
            _ => None,
        };
        if let Some(op) = op {
            self.pos += 1;
            let e = self.parse_expr(25)?;
            if op == UnOp::Neg {
                match e.kind {
                    ExprKind::Int(i) => return Ok(Expr::new(ExprKind::Int(i.wrapping_neg()), loc)),
                    ExprKind::Float(f) => return Ok(Expr::new(ExprKind::Float(-f), loc)),
                    _ => {}
                }
            }
            return Ok(Expr::new(ExprKind::Unary(op, Box::new(e)), loc));
        }
        let prim = self.parse_primary()?;
        self.parse_postfix(prim)
    }

    pub(crate) fn parse_postfix(&mut self, mut e: Expr) -> LResult<Expr> {
        let mut chain = 0;
        loop {
            match self.peek_tok() {
                Some(t) if t.tok == Tok::P(P::LBrack) && !t.space_before => {
                    self.link(&mut chain)?;
                    self.pos += 1;
                    let args = self.parse_list(P::RBrack)?;
                    let loc = e.loc.clone();
                    e = Expr::new(ExprKind::Access(Box::new(e), args), loc);
                }
                Some(t) if t.tok == Tok::P(P::Dot) => {
                    let name = match self.peek_n(1) {
                        Some(Tok::Name(n)) => n.clone(),
                        _ => break,
                    };
                    // Puppet places a method call at its `(`, or at its dot
                    // when it has no parentheses (egrammar.ra's
                    // call_method_expression).
                    let mut at = self.loc();
                    self.link(&mut chain)?;
                    self.pos += 2;
                    let mut args = Vec::new();
                    if matches!(self.peek_tok(), Some(t) if t.tok == Tok::P(P::LParen) && !t.space_before)
                    {
                        at = self.loc();
                        self.pos += 1;
                        args = self.parse_entries(P::RParen, ListForm::MethodArguments)?;
                    }
                    let lambda = self.parse_opt_lambda()?;
                    e = Expr::new(
                        ExprKind::MethodCall {
                            recv: Box::new(e),
                            name,
                            args,
                            lambda,
                        },
                        at,
                    );
                }
                _ => break,
            }
        }
        Ok(e)
    }

    /// Comma separated expressions up to `close` (consumed); trailing comma ok.
    pub(crate) fn parse_list(&mut self, close: P) -> LResult<Vec<Expr>> {
        self.parse_entries(close, ListForm::Arguments)
    }

    /// The entries of one of Puppet's comma separated lists (egrammar's
    /// `arguments`, `access_args`, `collection_entries`) up to `close`
    /// (consumed). Every form takes `key => value` entries without braces
    /// (`f(a, 'k' => v, 'l' => w)`, `[a, 'k' => v]`): consecutive ones make
    /// one hash entry, as Puppet's `Factory.ARGUMENTS` merges them. A pair's
    /// key and value may be the keywords `type` and `function`, an array
    /// literal's entries too; only a method call refuses a trailing comma.
    fn parse_entries(&mut self, close: P, form: ListForm) -> LResult<Vec<Expr>> {
        let saved = std::mem::replace(&mut self.no_resource, false);
        let mut out = Vec::new();
        let mut pairs: Option<(Loc, Vec<(Expr, Expr)>)> = None;
        loop {
            if self.eat_p(close) {
                break;
            }
            let pair_key = matches!(self.peek_n(1), Some(Tok::P(P::FatArrow)));
            let e = match self.keyword_entry(form == ListForm::Array || pair_key) {
                Some(e) => e,
                None => self.parse_expr(0)?,
            };
            if self.eat_p(P::FatArrow) {
                let v = match self.keyword_entry(true) {
                    Some(v) => v,
                    None => self.parse_expr(0)?,
                };
                match &mut pairs {
                    Some((_, entries)) => entries.push((e, v)),
                    None => pairs = Some((e.loc.clone(), vec![(e, v)])),
                }
            } else {
                if let Some((loc, entries)) = pairs.take() {
                    out.push(Expr::new(ExprKind::Hash(entries), loc));
                }
                out.push(e);
            }
            if !self.eat_p(P::Comma) {
                self.expect_p(close)?;
                break;
            }
            if form == ListForm::MethodArguments && self.is_p(close) {
                return Err(self.unexpected());
            }
        }
        if let Some((loc, entries)) = pairs {
            out.push(Expr::new(ExprKind::Hash(entries), loc));
        }
        self.no_resource = saved;
        Ok(out)
    }

    /// The keyword `type` or `function` standing alone as a hash key or
    /// value, or an array entry (egrammar's `collection_entry_keyword`):
    /// the bare word, when `allowed` and the next token ends the entry.
    fn keyword_entry(&mut self, allowed: bool) -> Option<Expr> {
        let Some(Tok::Name(word)) = self.peek() else {
            return None;
        };
        let ends = matches!(
            self.peek_n(1),
            Some(Tok::P(
                P::FatArrow | P::Comma | P::RParen | P::RBrack | P::RBrace
            ))
        );
        if !allowed || !ends || !matches!(word.as_str(), "type" | "function") {
            return None;
        }
        let word = word.clone();
        let loc = self.loc();
        self.pos += 1;
        Some(Expr::new(ExprKind::Bare(word), loc))
    }

    pub(crate) fn parse_opt_lambda(&mut self) -> LResult<Option<Box<Lambda>>> {
        if !self.is_p(P::Pipe) {
            return Ok(None);
        }
        let loc = self.loc();
        self.pos += 1;
        let mut params = Vec::new();
        loop {
            if self.eat_p(P::Pipe) {
                break;
            }
            params.push(self.parse_param()?);
            if !self.eat_p(P::Comma) {
                self.expect_p(P::Pipe)?;
                break;
            }
        }
        let body = self.parse_block()?;
        Ok(Some(Box::new(Lambda { params, body, loc })))
    }

    /// `[Type] [*]$name [= default]`
    pub(crate) fn parse_param(&mut self) -> LResult<Param> {
        let loc = self.loc();
        let ty = if matches!(self.peek(), Some(Tok::ClassRef(_))) {
            let prim = self.parse_primary_typeref()?;
            Some(prim)
        } else {
            None
        };
        let captures_rest = self.eat_p(P::Star);
        let name = match self.next() {
            Some(Token {
                tok: Tok::Var(v), ..
            }) => v,
            Some(t) => return Err(self.syntax_at(&t)),
            None => return Err(self.unexpected()),
        };
        let default = if self.eat_p(P::Assign) {
            Some(self.parse_expr(2)?)
        } else {
            None
        };
        Ok(Param {
            name,
            ty,
            default,
            captures_rest,
            loc,
        })
    }

    /// A type reference with optional access parameters (`Array[String]`).
    pub(crate) fn parse_primary_typeref(&mut self) -> LResult<Expr> {
        let loc = self.loc();
        let Some(Token {
            tok: Tok::ClassRef(n),
            ..
        }) = self.next()
        else {
            return Err(self.unexpected());
        };
        let mut e = Expr::new(ExprKind::TypeRef(n), loc);
        let mut chain = 0;
        while matches!(self.peek_tok(), Some(t) if t.tok == Tok::P(P::LBrack)) {
            self.link(&mut chain)?;
            self.pos += 1;
            let args = self.parse_list(P::RBrack)?;
            let l = e.loc.clone();
            e = Expr::new(ExprKind::Access(Box::new(e), args), l);
        }
        Ok(e)
    }

    /// Turn lexer string parts into an expression.
    pub(crate) fn interp(&mut self, parts: Vec<StrPart>, loc: Loc) -> LResult<Expr> {
        let mut out = Vec::new();
        for part in parts {
            match part {
                StrPart::Lit(s) => out.push(Expr::new(ExprKind::Str(s), loc.clone())),
                StrPart::Var(v, l, c) => {
                    out.push(Expr::new(ExprKind::Var(v), Loc::new(&self.file, l, c)))
                }
                StrPart::Expr(mut toks) => {
                    if toks.is_empty() {
                        continue;
                    }
                    // `${name...}` means the variable `$name`.
                    let follows_ok = matches!(
                        toks.get(1).map(|t| &t.tok),
                        None | Some(Tok::P(P::LBrack)) | Some(Tok::P(P::Dot))
                    );
                    if let Some(first) = toks.first_mut() {
                        if let (Tok::Int(i), true) = (&first.tok, follows_ok) {
                            first.tok = Tok::Var(i.to_string());
                        }
                        if let Tok::Name(n) = &first.tok
                            && follows_ok
                            && !matches!(n.as_str(), "true" | "false" | "undef")
                        {
                            first.tok = Tok::Var(n.trim_start_matches("::").to_string());
                        }
                    }
                    let end = self.end_loc;
                    let mut sub = Parser::new(toks, self.file.clone(), end);
                    sub.depth = self.depth;
                    sub.max_depth = self.max_depth;
                    let e = sub.parse_expr(0)?;
                    if let Some(t) = sub.peek_tok() {
                        return Err(sub.syntax_at(t));
                    }
                    out.push(e);
                }
            }
        }
        Ok(Expr::new(ExprKind::Interp(out), loc))
    }
}

/// Which of Puppet's comma separated lists `parse_entries` reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ListForm {
    /// A function call's, `apply`'s or an access's arguments.
    Arguments,
    /// A method call's arguments (no trailing comma).
    MethodArguments,
    /// An array literal's entries (bare keywords allowed).
    Array,
}

enum Infix {
    Bin(BinOp),
    Rel(RelOp),
    Assign,
}

/// (operator, left binding power, right binding power)
fn infix_op(tok: &Tok) -> Option<(Infix, u8, u8)> {
    use Infix::*;
    let r = match tok {
        Tok::P(P::Assign) => (Assign, 1, 1),
        Tok::P(P::InEdge) => (Rel(RelOp::Before), 3, 4),
        Tok::P(P::InEdgeSub) => (Rel(RelOp::Notify), 3, 4),
        Tok::P(P::OutEdge) => (Rel(RelOp::Require), 3, 4),
        Tok::P(P::OutEdgeSub) => (Rel(RelOp::Subscribe), 3, 4),
        Tok::Name(n) if n == "or" => (Bin(BinOp::Or), 5, 6),
        Tok::Name(n) if n == "and" => (Bin(BinOp::And), 7, 8),
        Tok::P(P::Lt) => (Bin(BinOp::Lt), 11, 12),
        Tok::P(P::Gt) => (Bin(BinOp::Gt), 11, 12),
        Tok::P(P::Le) => (Bin(BinOp::Le), 11, 12),
        Tok::P(P::Ge) => (Bin(BinOp::Ge), 11, 12),
        Tok::P(P::EqEq) => (Bin(BinOp::Eq), 13, 14),
        Tok::P(P::NotEq) => (Bin(BinOp::Ne), 13, 14),
        Tok::P(P::Shl) => (Bin(BinOp::Shl), 15, 16),
        Tok::P(P::Shr) => (Bin(BinOp::Shr), 15, 16),
        Tok::P(P::Plus) => (Bin(BinOp::Add), 17, 18),
        Tok::P(P::Minus) => (Bin(BinOp::Sub), 17, 18),
        Tok::P(P::Star) => (Bin(BinOp::Mul), 19, 20),
        Tok::P(P::Slash) => (Bin(BinOp::Div), 19, 20),
        Tok::P(P::Percent) => (Bin(BinOp::Mod), 19, 20),
        Tok::P(P::Match) => (Bin(BinOp::Match), 21, 22),
        Tok::P(P::NoMatch) => (Bin(BinOp::NoMatch), 21, 22),
        Tok::Name(n) if n == "in" => (Bin(BinOp::In), 23, 24),
        _ => return None,
    };
    Some(r)
}

/// Source-like text of a token for error messages.
pub(crate) fn tok_text(t: &Tok) -> String {
    match t {
        Tok::Name(n) | Tok::ClassRef(n) => n.clone(),
        Tok::Var(v) => format!("${v}"),
        Tok::Int(i) => i.to_string(),
        Tok::Float(f) => f.to_string(),
        Tok::Str(_) | Tok::Interp(_) => "\"".to_string(),
        Tok::Regex(r) => format!("/{r}/"),
        Tok::P(p) => punct_text(*p).to_string(),
    }
}

fn punct_text(p: P) -> &'static str {
    match p {
        P::LParen => "(",
        P::RParen => ")",
        P::LBrack => "[",
        P::RBrack => "]",
        P::LBrace => "{",
        P::RBrace => "}",
        P::Comma => ",",
        P::Semi => ";",
        P::Colon => ":",
        P::Dot => ".",
        P::Assign => "=",
        P::EqEq => "==",
        P::NotEq => "!=",
        P::Match => "=~",
        P::NoMatch => "!~",
        P::Lt => "<",
        P::Gt => ">",
        P::Le => "<=",
        P::Ge => ">=",
        P::Plus => "+",
        P::Minus => "-",
        P::Star => "*",
        P::Slash => "/",
        P::Percent => "%",
        P::Shl => "<<",
        P::Shr => ">>",
        P::InEdge => "->",
        P::InEdgeSub => "~>",
        P::OutEdge => "<-",
        P::OutEdgeSub => "<~",
        P::FatArrow => "=>",
        P::PlusArrow => "+>",
        P::Question => "?",
        P::Pipe => "|",
        P::LCollect => "<|",
        P::RCollect => "|>",
        P::LLCollect => "<<|",
        P::RRCollect => "|>>",
        P::At => "@",
        P::AtAt => "@@",
        P::Not => "!",
    }
}

impl Parser {
    pub(crate) fn parse_primary(&mut self) -> LResult<Expr> {
        let loc = self.loc();
        let Some(tok) = self.next() else {
            return Err(self.unexpected());
        };
        let kind = match tok.tok {
            Tok::Int(i) => ExprKind::Int(i),
            Tok::Float(f) => ExprKind::Float(f),
            Tok::Str(s) => ExprKind::Str(s),
            Tok::Interp(parts) => return self.interp(parts, loc),
            Tok::Regex(r) => ExprKind::Regex(r),
            Tok::Var(v) => ExprKind::Var(v),
            Tok::P(P::LBrack) => ExprKind::Array(self.parse_entries(P::RBrack, ListForm::Array)?),
            Tok::P(P::LBrace) => ExprKind::Hash(self.parse_hash_body()?),
            Tok::P(P::LParen) => {
                let saved = std::mem::replace(&mut self.no_resource, false);
                let e = self.parse_expr(0)?;
                self.no_resource = saved;
                self.expect_p(P::RParen)?;
                return Ok(e);
            }
            Tok::P(P::At) | Tok::P(P::AtAt) => {
                let virt = if tok.tok == Tok::P(P::At) {
                    Virtuality::Virtual
                } else {
                    Virtuality::Exported
                };
                let type_name = match self.next() {
                    Some(Token {
                        tok: Tok::Name(n), ..
                    }) => n,
                    Some(t) => return Err(self.syntax_at(&t)),
                    None => return Err(self.unexpected()),
                };
                return self.parse_resource(virt, type_name, loc);
            }
            Tok::ClassRef(name) => return self.parse_typeref_form(name, loc),
            Tok::Name(name) => return self.parse_name_form(name, loc),
            _ => return Err(self.syntax_at(&tok)),
        };
        Ok(Expr::new(kind, loc))
    }

    fn parse_hash_body(&mut self) -> LResult<Vec<(Expr, Expr)>> {
        let saved = std::mem::replace(&mut self.no_resource, false);
        let mut out = Vec::new();
        loop {
            if self.eat_p(P::RBrace) {
                break;
            }
            let k = match self.keyword_entry(true) {
                Some(k) => k,
                None => self.parse_expr(0)?,
            };
            self.expect_p(P::FatArrow)?;
            let v = match self.keyword_entry(true) {
                Some(v) => v,
                None => self.parse_expr(0)?,
            };
            out.push((k, v));
            if !self.eat_p(P::Comma) {
                self.expect_p(P::RBrace)?;
                break;
            }
        }
        self.no_resource = saved;
        Ok(out)
    }

    /// Does a `{` at the cursor open an attribute-operation body?
    fn brace_opens_attrs(&self) -> bool {
        if !self.is_p(P::LBrace) {
            return false;
        }
        matches!(
            (self.peek_n(1), self.peek_n(2)),
            (Some(Tok::Name(_)), Some(Tok::P(P::FatArrow)))
                | (Some(Tok::Name(_)), Some(Tok::P(P::PlusArrow)))
                | (Some(Tok::P(P::Star)), Some(Tok::P(P::FatArrow)))
        )
    }

    fn parse_typeref_form(&mut self, name: String, loc: Loc) -> LResult<Expr> {
        if matches!(self.peek_tok(), Some(t) if t.tok == Tok::P(P::LParen) && !t.space_before) {
            self.pos += 1;
            let args = self.parse_list(P::RParen)?;
            let call = Expr::new(
                ExprKind::Call {
                    name,
                    args,
                    lambda: None,
                },
                loc,
            );
            return self.parse_postfix(call);
        }
        let base = Expr::new(ExprKind::TypeRef(name.clone()), loc.clone());
        let e = self.parse_postfix(base)?;
        if self.is_p(P::LCollect) || self.is_p(P::LLCollect) {
            let exported = self.is_p(P::LLCollect);
            self.pos += 1;
            let close = if exported { P::RRCollect } else { P::RCollect };
            let query = if self.is_p(close) {
                None
            } else {
                Some(Box::new(self.parse_expr(0)?))
            };
            self.expect_p(close)?;
            let overrides = if self.is_p(P::LBrace) {
                self.pos += 1;
                let ops = self.parse_attr_ops()?;
                self.expect_p(P::RBrace)?;
                ops
            } else {
                Vec::new()
            };
            return Ok(Expr::new(
                ExprKind::Collector {
                    type_name: name,
                    exported,
                    query,
                    overrides,
                },
                loc,
            ));
        }
        if self.brace_opens_attrs()
            || (self.is_p(P::LBrace)
                && self.peek_n(1) == Some(&Tok::P(P::RBrace))
                && !self.no_resource)
        {
            self.pos += 1;
            let ops = self.parse_attr_ops()?;
            self.expect_p(P::RBrace)?;
            let kind = if matches!(e.kind, ExprKind::TypeRef(_)) {
                ExprKind::ResourceDefaults {
                    type_name: name,
                    ops,
                }
            } else {
                ExprKind::ResourceOverride {
                    target: Box::new(e),
                    ops,
                }
            };
            return Ok(Expr::new(kind, loc));
        }
        Ok(e)
    }

    fn parse_name_form(&mut self, name: String, loc: Loc) -> LResult<Expr> {
        let kind = match name.as_str() {
            "true" => ExprKind::Bool(true),
            "false" => ExprKind::Bool(false),
            "undef" => ExprKind::Undef,
            "default" => ExprKind::Default,
            "if" => return self.parse_if(loc, false),
            "unless" => return self.parse_if(loc, true),
            "case" => return self.parse_case(loc),
            "class" if matches!(self.peek(), Some(Tok::Name(_))) => {
                return self.parse_definition(loc, true);
            }
            "define" => return self.parse_definition(loc, false),
            "plan" if matches!(self.peek(), Some(Tok::Name(_))) => return self.parse_plan(loc),
            "apply"
                if matches!(self.peek_tok(), Some(t) if t.tok == Tok::P(P::LParen))
                    && self.apply_block_follows() =>
            {
                return self.parse_apply(loc);
            }
            "node" => return self.parse_node(loc),
            "function" if matches!(self.peek(), Some(Tok::Name(_))) => {
                return self.parse_function(loc);
            }
            // Outside a definition, a call (`type($x)`) and the entries
            // `keyword_entry` takes, the keywords are no values.
            "function" => return Err(self.unexpected()),
            "type" if !self.is_p(P::LParen) && !matches!(self.peek(), Some(Tok::ClassRef(_))) => {
                return Err(self.unexpected());
            }
            "type" if matches!(self.peek(), Some(Tok::ClassRef(_))) => {
                let Some(Token {
                    tok: Tok::ClassRef(alias),
                    ..
                }) = self.next()
                else {
                    return Err(self.unexpected());
                };
                self.expect_p(P::Assign)?;
                let ty = self.parse_expr(2)?;
                return Ok(Expr::new(ExprKind::TypeAlias(alias, Box::new(ty)), loc));
            }
            _ => {
                if self.is_p(P::LParen) {
                    // Puppet's validator: its reserved words name no
                    // function (stdlib's `private` is reached by `call`).
                    if matches!(name.as_str(), "private" | "attr") {
                        return Err(LangError {
                            kind: crate::lang::error::ErrorKind::Bare,
                            message: format!(
                                "Illegal expression. A Reserved Word '{name}' is unacceptable as function name in a Function Call"
                            ),
                            loc: Some(loc),
                        });
                    }
                    self.pos += 1;
                    let args = self.parse_list(P::RParen)?;
                    let lambda = self.parse_opt_lambda()?;
                    return Ok(Expr::new(ExprKind::Call { name, args, lambda }, loc));
                }
                if self.is_p(P::LBrace) && !self.no_resource {
                    return self.parse_resource(Virtuality::Real, name, loc);
                }
                ExprKind::Bare(name)
            }
        };
        Ok(Expr::new(kind, loc))
    }

    fn parse_resource(&mut self, virt: Virtuality, type_name: String, loc: Loc) -> LResult<Expr> {
        self.expect_p(P::LBrace)?;
        let saved = std::mem::replace(&mut self.no_resource, false);
        let mut bodies = Vec::new();
        loop {
            if self.is_p(P::RBrace) {
                break;
            }
            let title = self.parse_expr(0)?;
            self.expect_p(P::Colon)?;
            let ops = self.parse_attr_ops()?;
            bodies.push(ResourceBody { title, ops });
            if !self.eat_p(P::Semi) {
                break;
            }
        }
        self.no_resource = saved;
        self.expect_p(P::RBrace)?;
        Ok(Expr::new(
            ExprKind::Resource {
                virt,
                type_name,
                bodies,
            },
            loc,
        ))
    }

    /// Attribute operations up to `}` or `;` (not consumed).
    pub(crate) fn parse_attr_ops(&mut self) -> LResult<Vec<AttrOp>> {
        let mut ops = Vec::new();
        loop {
            if self.is_p(P::RBrace) || self.is_p(P::Semi) {
                break;
            }
            let loc = self.loc();
            let name = match self.next() {
                Some(Token {
                    tok: Tok::Name(n), ..
                }) => n,
                Some(Token {
                    tok: Tok::P(P::Star),
                    ..
                }) => "*".to_string(),
                Some(t) => return Err(self.syntax_at(&t)),
                None => return Err(self.unexpected()),
            };
            let kind = if name == "*" {
                self.expect_p(P::FatArrow)?;
                AttrOpKind::Splat
            } else if self.eat_p(P::FatArrow) {
                AttrOpKind::Set
            } else if self.eat_p(P::PlusArrow) {
                AttrOpKind::Append
            } else {
                return Err(self.unexpected());
            };
            let value = self.parse_expr(2)?;
            ops.push(AttrOp {
                name,
                kind,
                value,
                loc,
            });
            if !self.eat_p(P::Comma) {
                break;
            }
        }
        Ok(ops)
    }

    fn parse_cond(&mut self) -> LResult<Expr> {
        let saved = std::mem::replace(&mut self.no_resource, true);
        let c = self.parse_expr(0);
        self.no_resource = saved;
        c
    }

    fn parse_if(&mut self, loc: Loc, unless: bool) -> LResult<Expr> {
        let cond = Box::new(self.parse_cond()?);
        let then = self.parse_block()?;
        let els = if self.is_name("elsif") && !unless {
            let l = self.loc();
            self.pos += 1;
            Some(vec![self.parse_if(l, false)?])
        } else if self.is_name("else") {
            self.pos += 1;
            Some(self.parse_block()?)
        } else {
            None
        };
        let kind = if unless {
            ExprKind::Unless { cond, then, els }
        } else {
            ExprKind::If { cond, then, els }
        };
        Ok(Expr::new(kind, loc))
    }

    fn parse_case(&mut self, loc: Loc) -> LResult<Expr> {
        let subject = Box::new(self.parse_cond()?);
        self.expect_p(P::LBrace)?;
        let mut options = Vec::new();
        while !self.eat_p(P::RBrace) {
            let mut values = vec![self.parse_cond()?];
            while self.eat_p(P::Comma) {
                if self.is_p(P::Colon) {
                    break;
                }
                values.push(self.parse_cond()?);
            }
            self.expect_p(P::Colon)?;
            let body = self.parse_block()?;
            options.push(CaseOption { values, body });
        }
        Ok(Expr::new(ExprKind::Case { subject, options }, loc))
    }

    fn parse_params(&mut self) -> LResult<Vec<Param>> {
        let mut params = Vec::new();
        if !self.eat_p(P::LParen) {
            return Ok(params);
        }
        loop {
            if self.eat_p(P::RParen) {
                break;
            }
            params.push(self.parse_param()?);
            if !self.eat_p(P::Comma) {
                self.expect_p(P::RParen)?;
                break;
            }
        }
        Ok(params)
    }

    fn parse_definition(&mut self, loc: Loc, is_class: bool) -> LResult<Expr> {
        let name = self.definition_name()?;
        let params = self.parse_params()?;
        let parent = if is_class && self.is_name("inherits") {
            self.pos += 1;
            match self.next() {
                Some(Token {
                    tok: Tok::Name(n), ..
                }) => Some(n.trim_start_matches("::").to_string()),
                Some(t) => return Err(self.syntax_at(&t)),
                None => return Err(self.unexpected()),
            }
        } else {
            None
        };
        let body = self.parse_block()?;
        let def = Arc::new(Definition {
            name,
            params,
            parent,
            body,
            loc: loc.clone(),
        });
        let kind = if is_class {
            ExprKind::ClassDef(def)
        } else {
            ExprKind::DefineDef(def)
        };
        Ok(Expr::new(kind, loc))
    }

    /// The name a class, define, plan or function definition gives itself, without a
    /// leading `::`.
    fn definition_name(&mut self) -> LResult<String> {
        match self.next() {
            Some(Token {
                tok: Tok::Name(n), ..
            }) => Ok(n.trim_start_matches("::").to_string()),
            Some(t) => Err(self.syntax_at(&t)),
            None => Err(self.unexpected()),
        }
    }

    /// `plan NAME (params) { statements }`, as Puppet parses it with
    /// tasks enabled: a definition without a parent or a return type.
    fn parse_plan(&mut self, loc: Loc) -> LResult<Expr> {
        let name = self.definition_name()?;
        let params = self.parse_params()?;
        let body = self.parse_block()?;
        Ok(Expr::new(
            ExprKind::PlanDef(Arc::new(Definition {
                name,
                params,
                parent: None,
                body,
                loc: loc.clone(),
            })),
            loc,
        ))
    }

    /// Whether the `(` at the cursor closes with a `)` followed by `{`:
    /// `apply(...) { ... }` rather than a call of a function `apply`.
    fn apply_block_follows(&self) -> bool {
        let mut depth = 0usize;
        for (i, t) in self.toks.iter().enumerate().skip(self.pos) {
            match t.tok {
                Tok::P(P::LParen) => depth += 1,
                Tok::P(P::RParen) => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return matches!(
                            self.toks.get(i + 1).map(|t| &t.tok),
                            Some(Tok::P(P::LBrace))
                        );
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// `apply(args) { statements }` (the cursor is on the `(`).
    fn parse_apply(&mut self, loc: Loc) -> LResult<Expr> {
        self.expect_p(P::LParen)?;
        let args = self.parse_list(P::RParen)?;
        let body = self.parse_block()?;
        Ok(Expr::new(
            ExprKind::Apply {
                args,
                body: Arc::new(body),
            },
            loc,
        ))
    }

    fn parse_node(&mut self, loc: Loc) -> LResult<Expr> {
        let mut matches = Vec::new();
        loop {
            let m = match self.next() {
                Some(Token {
                    tok: Tok::Str(s), ..
                }) => NodeMatch::Name(s),
                Some(Token {
                    tok: Tok::Regex(r), ..
                }) => NodeMatch::Regex(r),
                Some(Token {
                    tok: Tok::Name(n), ..
                }) if n == "default" => NodeMatch::Default,
                Some(Token {
                    tok: Tok::Name(n), ..
                }) => {
                    let mut s = n;
                    while self.is_p(P::Dot) {
                        match self.peek_n(1) {
                            Some(Tok::Name(x)) => {
                                s.push('.');
                                s.push_str(x);
                                self.pos += 2;
                            }
                            Some(Tok::Int(i)) => {
                                s.push('.');
                                s.push_str(&i.to_string());
                                self.pos += 2;
                            }
                            _ => break,
                        }
                    }
                    NodeMatch::Name(s)
                }
                Some(t) => return Err(self.syntax_at(&t)),
                None => return Err(self.unexpected()),
            };
            matches.push(m);
            if !self.eat_p(P::Comma) {
                break;
            }
            if self.is_p(P::LBrace) {
                break;
            }
        }
        let body = self.parse_block()?;
        Ok(Expr::new(
            ExprKind::NodeDef(Arc::new(NodeDef {
                matches,
                body,
                loc: loc.clone(),
            })),
            loc,
        ))
    }

    fn parse_function(&mut self, loc: Loc) -> LResult<Expr> {
        let name = self.definition_name()?;
        let params = self.parse_params()?;
        let return_type = if self.eat_p(P::Shr) {
            Some(self.parse_primary_typeref()?)
        } else {
            None
        };
        let body = self.parse_block()?;
        Ok(Expr::new(
            ExprKind::FunctionDef(Arc::new(FunctionDef {
                name,
                params,
                return_type,
                body,
                loc: loc.clone(),
            })),
            loc,
        ))
    }
}
