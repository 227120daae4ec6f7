//! Lexer for the Puppet language: turns source text into tokens with exact
//! line/column, including double-quoted string interpolation (nested token
//! streams), heredocs `@(TAG)` with trim/escape flags, and context-sensitive
//! regex literals.

use std::sync::Arc;

use crate::lang::error::{LResult, LangError, Loc};

/// Punctuation and operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum P {
    LParen,
    RParen,
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Colon,
    Dot,
    Assign,
    EqEq,
    NotEq,
    Match,
    NoMatch,
    Lt,
    Gt,
    Le,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Shl,
    Shr,
    InEdge,
    InEdgeSub,
    OutEdge,
    OutEdgeSub,
    FatArrow,
    PlusArrow,
    Question,
    Pipe,
    LCollect,
    RCollect,
    LLCollect,
    RRCollect,
    At,
    AtAt,
    Not,
}

/// A piece of an interpolated string.
#[derive(Debug, Clone, PartialEq)]
pub enum StrPart {
    Lit(String),
    /// `$name` short form.
    Var(String, u32, u32),
    /// `${ ... }` with the tokens inside the braces.
    Expr(Vec<Token>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Name(String),
    ClassRef(String),
    Var(String),
    Int(i64),
    Float(f64),
    Str(String),
    Interp(Vec<StrPart>),
    Regex(String),
    P(P),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
    /// Whitespace (or comment) preceded this token.
    pub space_before: bool,
}

const KEYWORDS_ALLOWING_REGEX: &[&str] = &[
    "node", "if", "elsif", "unless", "and", "or", "in", "case", "when",
];

pub struct Lexer<'a> {
    chars: Vec<char>,
    pos: usize,
    line_starts: Vec<usize>,
    file: &'a Arc<str>,
    line_base: u32,
    heredoc_resume: Option<usize>,
    /// Open `${` interpolations around the current position, and how many
    /// may nest (lexing them recurses).
    depth: usize,
    max_depth: usize,
}

mod strings;

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl<'a> Lexer<'a> {
    pub fn new(src: &str, file: &'a Arc<str>) -> Lexer<'a> {
        Self::with_base(src, file, 0)
    }

    fn with_base(src: &str, file: &'a Arc<str>, line_base: u32) -> Lexer<'a> {
        let chars: Vec<char> = src.chars().collect();
        let mut line_starts = vec![0];
        for (i, c) in chars.iter().enumerate() {
            if *c == '\n' {
                line_starts.push(i + 1);
            }
        }
        Lexer {
            chars,
            pos: 0,
            line_starts,
            file,
            line_base,
            heredoc_resume: None,
            depth: 0,
            max_depth: crate::lang::syntax::MAX_DEPTH,
        }
    }

    /// At most `max_depth` interpolations may nest (the default is the
    /// parser's [`crate::lang::syntax::MAX_DEPTH`]).
    pub fn with_max_depth(mut self, max_depth: usize) -> Lexer<'a> {
        self.max_depth = max_depth;
        self
    }

    fn line_col(&self, pos: usize) -> (u32, u32) {
        let idx = match self.line_starts.binary_search(&pos) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts.get(idx).copied().unwrap_or(0);
        (
            idx as u32 + 1 + self.line_base,
            (pos.saturating_sub(start)) as u32 + 1,
        )
    }

    fn loc(&self, pos: usize) -> Loc {
        let (l, c) = self.line_col(pos);
        Loc::new(self.file, l, c)
    }

    fn err<T>(&self, msg: impl Into<String>, pos: usize) -> LResult<T> {
        Err(LangError::syntax(msg, self.loc(pos)))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }
    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    /// Consume a newline at `self.pos`, jumping over heredoc bodies.
    fn newline(&mut self) {
        self.pos += 1;
        if let Some(p) = self.heredoc_resume.take() {
            self.pos = p.max(self.pos);
        }
    }

    /// Skip whitespace and comments; returns whether anything was skipped.
    fn skip_ws(&mut self) -> LResult<bool> {
        let start = self.pos;
        loop {
            match self.peek() {
                Some('\n') => self.newline(),
                Some(c) if c.is_whitespace() => self.pos += 1,
                Some('#') => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                Some('/') if self.peek_at(1) == Some('*') => {
                    let open = self.pos;
                    self.pos += 2;
                    loop {
                        match self.peek() {
                            None => return self.err("Unclosed comment", open),
                            Some('*') if self.peek_at(1) == Some('/') => {
                                self.pos += 2;
                                break;
                            }
                            Some('\n') => self.newline(),
                            Some(_) => self.pos += 1,
                        }
                    }
                }
                _ => break,
            }
        }
        Ok(self.pos != start)
    }

    /// Tokenize the whole input.
    pub fn tokenize(mut self) -> LResult<Vec<Token>> {
        let mut out = Vec::new();
        self.lex_tokens(&mut out, false)?;
        Ok(out)
    }

    fn regex_allowed(prev: Option<&Token>) -> bool {
        match prev.map(|t| &t.tok) {
            None => true,
            Some(Tok::Name(n)) => KEYWORDS_ALLOWING_REGEX.contains(&n.as_str()),
            Some(Tok::P(p)) => !matches!(p, P::RParen | P::RBrack),
            Some(_) => false,
        }
    }

    /// Lex tokens into `out`. With `until_brace`, stop after the `}` that closes
    /// an interpolation (not included).
    fn lex_tokens(&mut self, out: &mut Vec<Token>, until_brace: bool) -> LResult<()> {
        let mut depth = 0usize;
        let first = out.len();
        loop {
            let space = self.skip_ws()?;
            let start = self.pos;
            let Some(c) = self.peek() else {
                if until_brace {
                    return self.err("Unclosed interpolation '${'", start);
                }
                return Ok(());
            };
            let (line, col) = self.line_col(start);
            let prev = if out.len() > first { out.last() } else { None };
            let tok = match c {
                '$' => {
                    self.pos += 1;
                    let name = self.scan_var_name();
                    if name.is_empty() {
                        return self.err("Illegal variable name '$'", start);
                    }
                    Tok::Var(name)
                }
                '\'' => Tok::Str(self.scan_single()?),
                '"' => self.scan_double()?,
                '@' if self.peek_at(1) == Some('(') => self.scan_heredoc()?,
                '/' if Self::regex_allowed(prev) && self.regex_ahead() => self.scan_regex()?,
                c if c.is_ascii_digit() => self.scan_number()?,
                c if c.is_ascii_lowercase() || c == '_' => Tok::Name(self.scan_bare_word()),
                c if c.is_ascii_uppercase() => Tok::ClassRef(self.scan_word()),
                ':' if self.peek_at(1) == Some(':')
                    && self.peek_at(2).is_some_and(|c| c.is_ascii_alphabetic()) =>
                {
                    self.pos += 2;
                    let w = self.scan_word();
                    if w.starts_with(|c: char| c.is_ascii_uppercase()) {
                        Tok::ClassRef(w)
                    } else {
                        Tok::Name(format!("::{w}"))
                    }
                }
                _ => {
                    let p = self.scan_punct()?;
                    if until_brace {
                        match p {
                            P::LBrace => depth += 1,
                            P::RBrace if depth == 0 => return Ok(()),
                            P::RBrace => depth -= 1,
                            _ => {}
                        }
                    }
                    Tok::P(p)
                }
            };
            out.push(Token {
                tok,
                line,
                col,
                space_before: space,
            });
        }
    }

    fn scan_var_name(&mut self) -> String {
        let mut s = String::new();
        loop {
            if self.peek() == Some(':')
                && self.peek_at(1) == Some(':')
                && self.peek_at(2).is_some_and(is_name_char)
            {
                s.push_str("::");
                self.pos += 2;
                continue;
            }
            match self.peek() {
                Some(c) if is_name_char(c) => {
                    s.push(c);
                    self.pos += 1;
                }
                _ => break,
            }
        }
        s
    }

    /// A bare word: as Puppet's lexer has it, a name may hold `-` between
    /// word characters (`puppet7-nightly`, as in puppetlabs-puppet_agent's
    /// task metadata `Enum[puppet7, puppet7-nightly]`); `a-` and `a->` do
    /// not take the `-`.
    fn scan_bare_word(&mut self) -> String {
        let mut s = self.scan_word();
        while self.peek() == Some('-') {
            let mut ahead = 1;
            while self.peek_at(ahead) == Some('-') {
                ahead += 1;
            }
            if !self.peek_at(ahead).is_some_and(is_name_char) {
                break;
            }
            for _ in 0..ahead {
                s.push('-');
            }
            self.pos += ahead;
            s.push_str(&self.scan_word());
        }
        s
    }

    fn scan_word(&mut self) -> String {
        let mut s = String::new();
        loop {
            match self.peek() {
                Some(c) if is_name_char(c) => {
                    s.push(c);
                    self.pos += 1;
                }
                Some(':')
                    if self.peek_at(1) == Some(':')
                        && self
                            .peek_at(2)
                            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    s.push_str("::");
                    self.pos += 2;
                }
                _ => break,
            }
        }
        s
    }

    fn scan_number(&mut self) -> LResult<Tok> {
        let start = self.pos;
        let mut s = String::new();
        while let Some(c) = self.peek() {
            let exponent_sign = (c == '-' || c == '+')
                && (s.ends_with('e') || s.ends_with('E'))
                && !s.starts_with("0x");
            if is_name_char(c)
                || c == '.' && self.peek_at(1).is_some_and(|d| d.is_ascii_digit())
                || exponent_sign
            {
                s.push(c);
                self.pos += 1;
            } else {
                break;
            }
        }
        let bad = || format!("Illegal number '{s}'");
        if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            return match i64::from_str_radix(hex, 16) {
                Ok(v) => Ok(Tok::Int(v)),
                Err(_) => self.err(bad(), start),
            };
        }
        if s.contains(['.', 'e', 'E']) {
            return match s.parse::<f64>() {
                Ok(v) if s.chars().all(|c| c.is_ascii_digit() || ".eE+-".contains(c)) => {
                    Ok(Tok::Float(v))
                }
                _ => self.err(bad(), start),
            };
        }
        if s.len() > 1 && s.starts_with('0') {
            return match i64::from_str_radix(&s[1..], 8) {
                Ok(v) => Ok(Tok::Int(v)),
                Err(_) => self.err(bad(), start),
            };
        }
        match s.parse::<i64>() {
            Ok(v) => Ok(Tok::Int(v)),
            Err(_) => self.err(bad(), start),
        }
    }

    fn regex_ahead(&self) -> bool {
        let mut i = self.pos + 1;
        while let Some(c) = self.chars.get(i) {
            match c {
                '\n' => return false,
                '\\' => i += 2,
                '/' => return true,
                _ => i += 1,
            }
        }
        false
    }

    fn scan_regex(&mut self) -> LResult<Tok> {
        self.pos += 1;
        let mut s = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '/' => break,
                // The source keeps its escapes, `\/` too, as Puppet's
                // Regexp does (a Pattern prints them back).
                '\\' => {
                    s.push('\\');
                    if let Some(n) = self.peek() {
                        s.push(n);
                    }
                    self.pos += 1;
                }
                c => s.push(c),
            }
        }
        Ok(Tok::Regex(s))
    }

    fn scan_punct(&mut self) -> LResult<P> {
        let start = self.pos;
        let c = self.peek().unwrap_or(' ');
        let c1 = self.peek_at(1);
        let c2 = self.peek_at(2);
        let (p, n) = match (c, c1, c2) {
            ('<', Some('<'), Some('|')) => (P::LLCollect, 3),
            ('|', Some('>'), Some('>')) => (P::RRCollect, 3),
            ('<', Some('|'), _) => (P::LCollect, 2),
            ('|', Some('>'), _) => (P::RCollect, 2),
            ('-', Some('>'), _) => (P::InEdge, 2),
            ('~', Some('>'), _) => (P::InEdgeSub, 2),
            ('<', Some('-'), _) => (P::OutEdge, 2),
            ('<', Some('~'), _) => (P::OutEdgeSub, 2),
            ('=', Some('>'), _) => (P::FatArrow, 2),
            ('+', Some('>'), _) => (P::PlusArrow, 2),
            ('=', Some('='), _) => (P::EqEq, 2),
            ('!', Some('='), _) => (P::NotEq, 2),
            ('=', Some('~'), _) => (P::Match, 2),
            ('!', Some('~'), _) => (P::NoMatch, 2),
            ('<', Some('='), _) => (P::Le, 2),
            ('>', Some('='), _) => (P::Ge, 2),
            ('<', Some('<'), _) => (P::Shl, 2),
            ('>', Some('>'), _) => (P::Shr, 2),
            ('@', Some('@'), _) => (P::AtAt, 2),
            ('(', _, _) => (P::LParen, 1),
            (')', _, _) => (P::RParen, 1),
            ('[', _, _) => (P::LBrack, 1),
            (']', _, _) => (P::RBrack, 1),
            ('{', _, _) => (P::LBrace, 1),
            ('}', _, _) => (P::RBrace, 1),
            (',', _, _) => (P::Comma, 1),
            (';', _, _) => (P::Semi, 1),
            (':', _, _) => (P::Colon, 1),
            ('.', _, _) => (P::Dot, 1),
            ('=', _, _) => (P::Assign, 1),
            ('<', _, _) => (P::Lt, 1),
            ('>', _, _) => (P::Gt, 1),
            ('+', _, _) => (P::Plus, 1),
            ('-', _, _) => (P::Minus, 1),
            ('*', _, _) => (P::Star, 1),
            ('/', _, _) => (P::Slash, 1),
            ('%', _, _) => (P::Percent, 1),
            ('?', _, _) => (P::Question, 1),
            ('|', _, _) => (P::Pipe, 1),
            ('@', _, _) => (P::At, 1),
            ('!', _, _) => (P::Not, 1),
            _ => return self.err(format!("Syntax error at '{c}'"), start),
        };
        self.pos += n;
        Ok(p)
    }
}

fn parts_to_tok(mut parts: Vec<StrPart>) -> Tok {
    if parts.len() == 1
        && let Some(StrPart::Lit(s)) = parts.first_mut()
    {
        return Tok::Str(std::mem::take(s));
    }
    Tok::Interp(parts)
}

/// Tokenize `src`, attributing locations to `file`.
pub fn tokenize(src: &str, file: &Arc<str>) -> LResult<Vec<Token>> {
    Lexer::new(src, file).tokenize()
}
