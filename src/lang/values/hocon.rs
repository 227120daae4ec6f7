//! HOCON text to a Puppet value, as stdlib's `parsehocon` reads it with
//! Ruby's hocon gem (`ConfigFactory.parse_string(text).resolve.root
//! .unwrapped`): the root object with or without braces, `:`/`=`/`+=`
//! separators (none before `{`), dotted and quoted keys, commas or line
//! breaks between fields and items, `#` and `//` comments, quoted,
//! triple-quoted and unquoted strings, numbers (Ruby's `Integer` and
//! `Float` forms; a whole float is an integer), `true`, `false` and
//! `null`, value concatenation (strings joined with their spaces, arrays
//! appended, objects merged), duplicate keys merged (objects) or replaced,
//! and `${path}` / `${?path}` substitutions, self-references included.
//! Not covered, on purpose: `include` (the gem reads files named by
//! `include file(...)`; here it is an error) and substitutions from the
//! environment (a path not in the document is unresolved, never an
//! environment variable of the process).

use crate::lang::values::value::Value;

/// Why a text is not read; `Parse` and `Unresolved` are what the gem
/// raises as `ConfigParseError` (so `parsehocon`'s default applies).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HoconError {
    #[error("String: {line}: {message}")]
    Parse { line: usize, message: String },
    #[error("String: {line}: Could not resolve substitution to a value: {what}")]
    Unresolved { line: usize, what: String },
    #[error("String: {line}: {message}")]
    WrongType { line: usize, message: String },
    #[error("String: {line}: ferry does not read HOCON includes ({what})")]
    Include { line: usize, what: String },
}

impl HoconError {
    /// The gem's `ConfigParseError` (and its subclass for unresolved
    /// substitutions): what `parsehocon` answers with its default.
    pub fn is_parse(&self) -> bool {
        matches!(
            self,
            HoconError::Parse { .. } | HoconError::Unresolved { .. }
        )
    }
}

type Res<T> = Result<T, HoconError>;

/// Parse and resolve `text` into a hash.
pub fn parse(text: &str) -> Res<Value> {
    let tokens = lex(text)?;
    let mut p = Parser { t: tokens, i: 0 };
    let root = p.document()?;
    let mut r = Resolver {
        root: &root,
        stack: Vec::new(),
    };
    Ok(r.node(&root)?.unwrap_or(Value::Hash(Vec::new())))
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// Spaces or tabs between tokens on a line (kept for concatenation).
    Ws(String),
    Newline,
    Comma,
    Colon,
    Equals,
    PlusEquals,
    OpenCurly,
    CloseCurly,
    OpenSquare,
    CloseSquare,
    Quoted(String),
    Unquoted(String),
    /// A number and its text.
    Number(Value, String),
    Bool(bool),
    Null,
    Subst {
        path: Vec<String>,
        optional: bool,
    },
    Eof,
}

/// Characters that end unquoted text (and may not appear in it).
const RESERVED: &str = "$\"{}[]:=,+#`^?!@*&\\";

fn describe(t: &Tok) -> String {
    match t {
        Tok::Eof => "end of file".into(),
        Tok::Newline => "'\\n'".into(),
        Tok::Comma => "','".into(),
        Tok::Colon => "':'".into(),
        Tok::Equals => "'='".into(),
        Tok::PlusEquals => "'+='".into(),
        Tok::OpenCurly => "'{'".into(),
        Tok::CloseCurly => "'}'".into(),
        Tok::OpenSquare => "'['".into(),
        Tok::CloseSquare => "']'".into(),
        Tok::Ws(w) => format!("'{w}'"),
        Tok::Quoted(s) => format!("'\"{s}\"'"),
        Tok::Unquoted(s) | Tok::Number(_, s) => format!("'{s}'"),
        Tok::Bool(b) => format!("'{b}'"),
        Tok::Null => "'null'".into(),
        Tok::Subst { path, optional } => {
            format!(
                "'${{{}{}}}'",
                if *optional { "?" } else { "" },
                path.join(".")
            )
        }
    }
}

fn lex(text: &str) -> Res<Vec<(Tok, usize)>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<(Tok, usize)> = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let err = |line: usize, message: String| HoconError::Parse { line, message };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\n' => {
                out.push((Tok::Newline, line));
                line += 1;
                i += 1;
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            c if c != '\n' && c.is_whitespace() || c == '\u{feff}' => {
                let start = i;
                while i < chars.len()
                    && chars[i] != '\n'
                    && (chars[i].is_whitespace() || chars[i] == '\u{feff}')
                {
                    i += 1;
                }
                out.push((Tok::Ws(chars[start..i].iter().collect()), line));
            }
            '+' if next == Some('=') => {
                out.push((Tok::PlusEquals, line));
                i += 2;
            }
            c if punctuation(c).is_some() => {
                out.extend(punctuation(c).map(|t| (t, line)));
                i += 1;
            }
            '"' if chars.get(i + 1) == Some(&'"') && chars.get(i + 2) == Some(&'"') => {
                i += 3;
                let start = i;
                let start_line = line;
                loop {
                    if i >= chars.len() {
                        return Err(err(
                            start_line,
                            "End of input but triple-quoted string was still open".into(),
                        ));
                    }
                    if chars[i..].starts_with(&['"', '"', '"']) {
                        // Extra quotes before the closing three belong to the string.
                        while chars.get(i + 3) == Some(&'"') {
                            i += 1;
                        }
                        break;
                    }
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
                out.push((Tok::Quoted(chars[start..i].iter().collect()), start_line));
                i += 3;
            }
            '"' => {
                i += 1;
                let mut s = String::new();
                loop {
                    let Some(&c) = chars.get(i) else {
                        return Err(err(line, "Expecting a value but got wrong token: '-1' (End of input but string quote was still open)".into()));
                    };
                    i += 1;
                    match c {
                        '"' => break,
                        '\n' => return Err(err(line, "Expecting a value but got wrong token: '\\n' (Newline in quoted string)".into())),
                        '\\' => {
                            let e = chars.get(i).copied();
                            i += 1;
                            match e {
                                Some('"') => s.push('"'),
                                Some('\\') => s.push('\\'),
                                Some('/') => s.push('/'),
                                Some('b') => s.push('\u{8}'),
                                Some('f') => s.push('\u{c}'),
                                Some('n') => s.push('\n'),
                                Some('r') => s.push('\r'),
                                Some('t') => s.push('\t'),
                                Some('u') => {
                                    let hex: String = chars.iter().skip(i).take(4).collect();
                                    let code = (hex.len() == 4)
                                        .then(|| u32::from_str_radix(&hex, 16).ok())
                                        .flatten()
                                        .and_then(char::from_u32);
                                    let Some(ch) = code else {
                                        return Err(err(line, format!("Malformed hex digits after \\u escape in string: '{hex}'")));
                                    };
                                    s.push(ch);
                                    i += 4;
                                }
                                other => {
                                    return Err(err(line, format!(
                                        "backslash followed by '{}', this is not a valid escape sequence (quoted strings use JSON escaping, so use double-backslash \\\\ for literal backslash)",
                                        other.map(String::from).unwrap_or_default()
                                    )));
                                }
                            }
                        }
                        c => s.push(c),
                    }
                }
                out.push((Tok::Quoted(s), line));
            }
            '$' => {
                if next != Some('{') {
                    let after = next
                        .map(String::from)
                        .unwrap_or_else(|| "end of file".into());
                    return Err(err(
                        line,
                        format!(
                            "Expecting a value but got wrong token: '{after}' ('$' not followed by {{, '{after}' not allowed after '$')"
                        ),
                    ));
                }
                i += 2;
                let optional = chars.get(i) == Some(&'?');
                if optional {
                    i += 1;
                }
                let start = i;
                while i < chars.len() && chars[i] != '}' && chars[i] != '\n' {
                    i += 1;
                }
                if chars.get(i) != Some(&'}') {
                    return Err(err(line, "Substitution ${ was not closed with a }".into()));
                }
                let inner: String = chars[start..i].iter().collect();
                i += 1;
                let path = parse_path(inner.trim(), line)?;
                out.push((Tok::Subst { path, optional }, line));
            }
            c if c == '-' || c.is_ascii_digit() => {
                let start = i;
                while i < chars.len() && "0123456789eE+-.".contains(chars[i]) {
                    i += 1;
                }
                let s: String = chars[start..i].iter().collect();
                match number(&s) {
                    Some(v) => out.push((Tok::Number(v, s), line)),
                    None => out.push((Tok::Unquoted(s), line)),
                }
            }
            c if RESERVED.contains(c) => {
                let what = if c == '+' {
                    let after = next
                        .map(String::from)
                        .unwrap_or_else(|| "end of file".into());
                    format!(
                        "Expecting a value but got wrong token: '{after}' ('+' not followed by =, '{after}' not allowed after '+')"
                    )
                } else {
                    format!("Reserved character '{c}' is not allowed outside quotes")
                };
                return Err(err(line, what));
            }
            _ => {
                let start = i;
                while i < chars.len() {
                    let c = chars[i];
                    if c.is_whitespace()
                        || c == '\u{feff}'
                        || RESERVED.contains(c)
                        || (c == '/' && chars.get(i + 1) == Some(&'/'))
                    {
                        break;
                    }
                    i += 1;
                }
                let s: String = chars[start..i].iter().collect();
                out.push((
                    match s.as_str() {
                        "true" => Tok::Bool(true),
                        "false" => Tok::Bool(false),
                        "null" => Tok::Null,
                        _ => Tok::Unquoted(s),
                    },
                    line,
                ));
            }
        }
    }
    out.push((Tok::Eof, line));
    Ok(out)
}

/// The token of a one-character separator or bracket.
fn punctuation(c: char) -> Option<Tok> {
    Some(match c {
        ',' => Tok::Comma,
        ':' => Tok::Colon,
        '=' => Tok::Equals,
        '{' => Tok::OpenCurly,
        '}' => Tok::CloseCurly,
        '[' => Tok::OpenSquare,
        ']' => Tok::CloseSquare,
        _ => return None,
    })
}

/// A number token's value as Ruby's `Integer()` or `Float()` reads it
/// (a leading zero is octal; a whole float is an integer); `None` when
/// it is not one, and the text is then unquoted text.
fn number(s: &str) -> Option<Value> {
    if s.contains(['.', 'e', 'E']) {
        let body = s.strip_prefix('-').unwrap_or(s);
        let (mantissa, exp) = match body.find(['e', 'E']) {
            Some(k) => (&body[..k], Some(&body[k + 1..])),
            None => (body, None),
        };
        let (int, frac) = mantissa
            .split_once('.')
            .map_or((mantissa, None), |(a, b)| (a, Some(b)));
        let digits = |d: &str| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit());
        let exp_ok = exp.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
        if !digits(int) || !frac.is_none_or(digits) || !exp_ok {
            return None;
        }
        let f: f64 = s.parse().ok()?;
        if f.fract() == 0.0 && f.abs() < 9.2e18 {
            return Some(Value::Int(f as i64));
        }
        return Some(Value::Float(f));
    }
    let (neg, body) = s.strip_prefix('-').map_or((false, s), |b| (true, b));
    if body.is_empty() || !body.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let n = if body.len() > 1 && body.starts_with('0') {
        i64::from_str_radix(&body[1..], 8)
    } else {
        body.parse::<i64>()
    };
    match n {
        Ok(n) => Some(Value::Int(if neg { -n } else { n })),
        // Past 64 bits Ruby has a bignum; ferry keeps the float.
        Err(_) if body.chars().all(|c| c.is_ascii_digit()) && !body.starts_with('0') => {
            s.parse().ok().map(Value::Float)
        }
        Err(_) => None,
    }
}

/// A substitution's path: keys split at dots outside double quotes.
fn parse_path(s: &str, line: usize) -> Res<Vec<String>> {
    let mut keys = vec![String::new()];
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '.' => keys.push(String::new()),
            '"' => {
                for q in chars.by_ref() {
                    if q == '"' {
                        break;
                    }
                    push_last(&mut keys, &q.to_string());
                }
            }
            c => {
                push_last(&mut keys, &c.to_string());
            }
        }
    }
    if s.is_empty() || keys.iter().any(|k| k.is_empty()) {
        return Err(HoconError::Parse {
            line,
            message: format!("Invalid path in substitution: '{s}'"),
        });
    }
    Ok(keys)
}

/// Append to the last key of a dotted path.
fn push_last(keys: &mut [String], text: &str) {
    if let Some(k) = keys.last_mut() {
        k.push_str(text);
    }
}

/// A parsed, not yet resolved value.
#[derive(Debug, Clone)]
enum Node {
    /// A simple value and its text (numbers keep theirs for strings).
    Scalar(Value, String),
    Obj(Vec<(String, Node)>),
    Arr(Vec<Node>),
    /// Pieces written next to each other, spaces between them kept.
    Concat(Vec<Node>, usize),
    Space(String),
    Subst(Vec<String>, bool, usize),
    /// A value over an earlier one of the same key: objects merge.
    Over(Box<Node>, Box<Node>),
}

struct Parser {
    t: Vec<(Tok, usize)>,
    i: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.t.get(self.i).map_or(&Tok::Eof, |t| &t.0)
    }

    fn line(&self) -> usize {
        self.t.get(self.i).or(self.t.last()).map_or(1, |t| t.1)
    }

    fn bump(&mut self) -> Tok {
        let t = self.peek().clone();
        self.i += 1;
        t
    }

    fn err<T>(&self, message: String) -> Res<T> {
        Err(HoconError::Parse {
            line: self.line(),
            message,
        })
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Tok::Ws(_)) {
            self.i += 1;
        }
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Tok::Ws(_) | Tok::Newline) {
            self.i += 1;
        }
    }

    fn document(&mut self) -> Res<Node> {
        self.skip_space();
        let root = match self.peek() {
            Tok::OpenCurly => {
                self.i += 1;
                self.object(true, &[])?
            }
            Tok::OpenSquare => {
                return Err(HoconError::WrongType {
                    line: self.line(),
                    message: " has type LIST rather than object at file root".into(),
                });
            }
            _ => return self.object(false, &[]),
        };
        self.skip_space();
        if *self.peek() != Tok::Eof {
            let t = describe(self.peek());
            return self.err(format!(
                "Document has trailing tokens after first object or array: {t}"
            ));
        }
        Ok(root)
    }

    /// An object's fields up to its `}` (or the end, for a root without
    /// braces); `at` is the object's path from the root.
    fn object(&mut self, braces: bool, at: &[String]) -> Res<Node> {
        let mut fields: Vec<(String, Node)> = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                Tok::CloseCurly if braces => {
                    self.i += 1;
                    break;
                }
                Tok::Eof if !braces => break,
                Tok::Eof => return self.err("End of file but expected '}'".into()),
                Tok::Unquoted(w) if w == "include" => {
                    let line = self.line();
                    self.i += 1;
                    self.skip_ws();
                    let what = describe(self.peek());
                    return Err(HoconError::Include {
                        line,
                        what: format!("include {what}"),
                    });
                }
                _ => {}
            }
            let path = self.key()?;
            self.skip_ws();
            let append = match self.bump() {
                Tok::Colon | Tok::Equals => false,
                Tok::PlusEquals => true,
                Tok::OpenCurly => {
                    self.i -= 1;
                    false
                }
                other => {
                    let key = path.join(".");
                    return self.err(format!(
                        "Key '{key}' may not be followed by token: {}",
                        describe(&other)
                    ));
                }
            };
            self.skip_space();
            let full: Vec<String> = [at, &path[..]].concat();
            let mut value = self.value(&full)?;
            value = self_ref(value, &full, earlier(&fields, &path));
            if append {
                let line = self.line();
                let prev = match earlier(&fields, &path) {
                    Some(v) => v.clone(),
                    None => Node::Concat(Vec::new(), line),
                };
                value = Node::Concat(vec![prev, Node::Arr(vec![value])], line);
            }
            // `a.b.c = v` is `a { b { c = v } }`.
            for k in path[1..].iter().rev() {
                value = Node::Obj(vec![(k.clone(), value)]);
            }
            set(&mut fields, &path[0], value);
            self.skip_ws();
            match self.peek() {
                Tok::Comma => {
                    self.i += 1;
                    self.skip_space();
                    if *self.peek() == Tok::Comma {
                        return self
                            .err("expecting a close brace or a field name here, got ','".into());
                    }
                }
                Tok::Newline => {}
                Tok::CloseCurly if braces => {}
                Tok::Eof if !braces => {}
                other => {
                    let t = describe(other);
                    return self.err(format!(
                        "Expecting close brace }} or a comma, got {t} (if you intended {t} to be part of a key or string value, try enclosing the key or value in double quotes"
                    ));
                }
            }
        }
        Ok(Node::Obj(fields))
    }

    /// A field's key: quoted and unquoted pieces up to the separator,
    /// split at the dots of its unquoted pieces.
    fn key(&mut self) -> Res<Vec<String>> {
        let mut keys = vec![String::new()];
        let mut any = false;
        loop {
            match self.peek().clone() {
                Tok::Quoted(s) => push_last(&mut keys, &s),
                Tok::Unquoted(s) | Tok::Number(_, s) => {
                    let mut parts = s.split('.');
                    if let (Some(first), Some(k)) = (parts.next(), keys.last_mut()) {
                        k.push_str(first);
                    }
                    keys.extend(parts.map(String::from));
                }
                Tok::Bool(b) => push_last(&mut keys, &b.to_string()),
                Tok::Null => push_last(&mut keys, "null"),
                Tok::Ws(w) if any => {
                    // Spaces inside a key belong to it; before the
                    // separator they do not.
                    let mut rest = self.t[self.i..].iter().map(|t| &t.0);
                    let more = rest.find(|t| !matches!(t, Tok::Ws(_))).is_some_and(|t| {
                        matches!(
                            t,
                            Tok::Quoted(_)
                                | Tok::Unquoted(_)
                                | Tok::Number(..)
                                | Tok::Bool(_)
                                | Tok::Null
                        )
                    });
                    if !more {
                        break;
                    }
                    push_last(&mut keys, &w);
                }
                other => {
                    if !any {
                        let t = describe(&other);
                        return self.err(match other {
                            Tok::Comma => {
                                "expecting a close brace or a field name here, got ','".into()
                            }
                            _ => format!("Expecting close brace }} or a field name here, got {t}"),
                        });
                    }
                    break;
                }
            }
            any = true;
            self.i += 1;
        }
        if keys.iter().any(|k| k.is_empty()) && keys.len() > 1 {
            return self.err(format!(
                "Invalid key '{}': a dotted key has an empty part",
                keys.join(".")
            ));
        }
        Ok(keys)
    }

    /// A value: one or more pieces written next to each other, up to a
    /// comma, line break or closing bracket.
    fn value(&mut self, at: &[String]) -> Res<Node> {
        let line = self.line();
        let mut pieces = Vec::new();
        loop {
            let piece = match self.peek().clone() {
                Tok::Ws(w) => Node::Space(w),
                Tok::Quoted(s) => Node::Scalar(Value::Str(s.clone()), s),
                Tok::Unquoted(s) => Node::Scalar(Value::Str(s.clone()), s),
                Tok::Number(v, s) => Node::Scalar(v, s),
                Tok::Bool(b) => Node::Scalar(Value::Bool(b), b.to_string()),
                Tok::Null => Node::Scalar(Value::Undef, "null".into()),
                Tok::Subst { path, optional } => Node::Subst(path, optional, self.line()),
                Tok::OpenCurly => {
                    self.i += 1;
                    pieces.push(self.object(true, at)?);
                    continue;
                }
                Tok::OpenSquare => {
                    self.i += 1;
                    pieces.push(self.array(at)?);
                    continue;
                }
                _ => break,
            };
            pieces.push(piece);
            self.i += 1;
        }
        while matches!(pieces.last(), Some(Node::Space(_))) {
            pieces.pop();
        }
        if pieces.is_empty() {
            let t = describe(self.peek());
            let hint = if matches!(self.peek(), Tok::Eof) {
                String::new()
            } else {
                format!(
                    " (if you intended {t} to be part of a key or string value, try enclosing the key or value in double quotes"
                )
            };
            return self.err(format!("Expecting a value but got wrong token: {t}{hint}"));
        }
        Ok(if pieces.len() == 1 {
            pieces.pop().unwrap_or(Node::Obj(Vec::new()))
        } else {
            Node::Concat(pieces, line)
        })
    }

    fn array(&mut self, at: &[String]) -> Res<Node> {
        let mut items = Vec::new();
        loop {
            self.skip_space();
            if *self.peek() == Tok::CloseSquare {
                self.i += 1;
                break;
            }
            items.push(self.value(at)?);
            self.skip_ws();
            match self.peek() {
                Tok::Comma => {
                    self.i += 1;
                    self.skip_space();
                    if matches!(self.peek(), Tok::Comma | Tok::Eof) {
                        let t = describe(self.peek());
                        return self.err(format!(
                            "List should have had new element after a comma, instead had token: {t} (if you want the comma or {} to be part of a string value, then double-quote it)",
                            t.trim_matches('\'')
                        ));
                    }
                }
                Tok::Newline | Tok::CloseSquare => {}
                other => {
                    let t = describe(other);
                    return self.err(format!("List should have ] or a new element after each element, instead had token: {t}"));
                }
            }
        }
        Ok(Node::Arr(items))
    }
}

/// Set `key` in an object being parsed: a later value replaces an
/// earlier one in its place, an object merges over an earlier object.
fn set(fields: &mut Vec<(String, Node)>, key: &str, value: Node) {
    match fields.iter_mut().find(|(k, _)| k == key) {
        Some((_, old)) => *old = over(value, old.clone()),
        None => fields.push((key.to_string(), value)),
    }
}

/// The value already set at `path` in an object being parsed.
fn earlier<'a>(fields: &'a [(String, Node)], path: &[String]) -> Option<&'a Node> {
    let (first, rest) = path.split_first()?;
    let node = fields.iter().find(|(k, _)| k == first).map(|(_, v)| v)?;
    match (rest.is_empty(), node) {
        (true, n) => Some(n),
        (false, Node::Obj(inner)) => earlier(inner, rest),
        _ => None,
    }
}

/// A field's reference to its own path (`a = ${a} [x]`) reads the
/// earlier value; an optional one with no earlier value is nothing.
fn self_ref(n: Node, own: &[String], prev: Option<&Node>) -> Node {
    match n {
        Node::Subst(p, optional, line) if p == own => match prev {
            Some(v) => v.clone(),
            None if optional => Node::Concat(Vec::new(), line),
            None => Node::Subst(p, optional, line),
        },
        Node::Concat(pieces, line) => Node::Concat(
            pieces.into_iter().map(|p| self_ref(p, own, prev)).collect(),
            line,
        ),
        other => other,
    }
}

/// Whether a node may turn out to be an object once resolved.
fn maybe_object(n: &Node) -> bool {
    matches!(
        n,
        Node::Obj(_) | Node::Concat(..) | Node::Subst(..) | Node::Over(..)
    )
}

/// `new` over `old`: two objects merge (the new one's keys first, then
/// the old one's); a value that may be an object or nothing waits for
/// resolution; anything else replaces.
fn over(new: Node, old: Node) -> Node {
    match (new, old) {
        (Node::Obj(n), Node::Obj(o)) => Node::Obj(merge_fields(n, o)),
        (n @ Node::Obj(_), o) if !maybe_object(&o) => n,
        (n, o) if maybe_object(&n) => Node::Over(Box::new(n), Box::new(o)),
        (n, _) => n,
    }
}

/// Keyed pairs merged as HOCON merges objects: the new pairs first (a
/// key in both combined by `both`), then the old pairs the new lacks.
fn merge<K: PartialEq, V>(
    new: Vec<(K, V)>,
    mut old: Vec<(K, V)>,
    both: fn(V, V) -> V,
) -> Vec<(K, V)> {
    let mut out = Vec::new();
    for (k, v) in new {
        match old.iter().position(|(ok, _)| *ok == k) {
            Some(pos) => {
                let (_, ov) = old.remove(pos);
                out.push((k, both(v, ov)));
            }
            None => out.push((k, v)),
        }
    }
    out.extend(old);
    out
}

fn merge_fields(new: Vec<(String, Node)>, old: Vec<(String, Node)>) -> Vec<(String, Node)> {
    merge(new, old, over)
}

struct Resolver<'a> {
    root: &'a Node,
    /// The substitutions being resolved, to find cycles.
    stack: Vec<Vec<String>>,
}

impl Resolver<'_> {
    /// A node's value; `None` for an optional substitution that found
    /// nothing (the field is then left out).
    fn node(&mut self, n: &Node) -> Res<Option<Value>> {
        Ok(match n {
            Node::Scalar(v, _) => Some(v.clone()),
            Node::Space(s) => Some(Value::Str(s.clone())),
            Node::Obj(fields) => {
                let mut out = Vec::new();
                for (k, v) in fields {
                    if let Some(v) = self.node(v)? {
                        out.push((Value::Str(k.clone()), v));
                    }
                }
                Some(Value::Hash(out))
            }
            Node::Arr(items) => {
                let mut out = Vec::new();
                for i in items {
                    if let Some(v) = self.node(i)? {
                        out.push(v);
                    }
                }
                Some(Value::Array(out))
            }
            Node::Subst(path, optional, line) => self.subst(path, *optional, *line)?,
            Node::Over(new, old) => match self.node(new)? {
                Some(Value::Hash(n)) => match self.node(old)? {
                    Some(Value::Hash(o)) => Some(Value::Hash(merge_values(n, o))),
                    _ => Some(Value::Hash(n)),
                },
                None => self.node(old)?,
                other => other,
            },
            Node::Concat(pieces, line) => self.concat(pieces, *line)?,
        })
    }

    fn subst(&mut self, path: &[String], optional: bool, line: usize) -> Res<Option<Value>> {
        let shown = format!("${{{}{}}}", if optional { "?" } else { "" }, path.join("."));
        if self.stack.iter().any(|p| p == path) {
            let mut cycle: Vec<String> = self
                .stack
                .iter()
                .map(|p| format!("${{{}}}", p.join(".")))
                .collect();
            cycle.push(format!("${{{}}}", path.join(".")));
            return Err(HoconError::Unresolved {
                line,
                what: format!(
                    "{shown} was part of a cycle of substitutions involving {}",
                    cycle.join(", ")
                ),
            });
        }
        self.stack.push(path.to_vec());
        let found = self.lookup(path);
        self.stack.pop();
        match found? {
            Some(v) => Ok(Some(v)),
            None if optional => Ok(None),
            None => Err(HoconError::Unresolved { line, what: shown }),
        }
    }

    /// The value at `path` from the root, resolving only what lies on
    /// the way.
    fn lookup(&mut self, path: &[String]) -> Res<Option<Value>> {
        let mut cur: Node = self.root.clone();
        for (n, key) in path.iter().enumerate() {
            let next = match &cur {
                Node::Obj(fields) => fields
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.clone()),
                _ => {
                    let Some(Value::Hash(h)) = self.node(&cur)? else {
                        return Ok(None);
                    };
                    let Some(v) = h
                        .into_iter()
                        .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
                        .map(|(_, v)| v)
                    else {
                        return Ok(None);
                    };
                    return Ok(walk(v, &path[n + 1..]));
                }
            };
            match next {
                Some(v) => cur = v,
                None => return Ok(None),
            }
        }
        self.node(&cur)
    }

    fn concat(&mut self, pieces: &[Node], line: usize) -> Res<Option<Value>> {
        let mut vals: Vec<(Value, Option<String>)> = Vec::new();
        for p in pieces {
            let text = match p {
                Node::Scalar(_, t) => Some(t.clone()),
                Node::Space(s) => Some(s.clone()),
                _ => None,
            };
            if let Some(v) = self.node(p)? {
                vals.push((v, text));
            }
        }
        let solid: Vec<&Value> = vals
            .iter()
            .filter(|(v, t)| !(t.is_some() && matches!(v, Value::Str(s) if s.trim().is_empty())))
            .map(|(v, _)| v)
            .collect();
        if solid.is_empty() {
            return Ok(if vals.is_empty() {
                None
            } else {
                Some(Value::Str(join_text(&vals)))
            });
        }
        if solid.iter().all(|v| matches!(v, Value::Array(_))) {
            let mut out = Vec::new();
            for v in solid {
                if let Value::Array(a) = v {
                    out.extend(a.iter().cloned());
                }
            }
            return Ok(Some(Value::Array(out)));
        }
        if solid.iter().all(|v| matches!(v, Value::Hash(_))) {
            let mut acc: Vec<(Value, Value)> = Vec::new();
            for v in solid {
                if let Value::Hash(h) = v {
                    acc = merge_values(h.clone(), acc);
                }
            }
            return Ok(Some(Value::Hash(acc)));
        }
        if solid
            .iter()
            .any(|v| matches!(v, Value::Array(_) | Value::Hash(_)))
        {
            return Err(HoconError::WrongType {
                line,
                message: "Cannot concatenate object or list with a non-object-or-list".into(),
            });
        }
        Ok(Some(Value::Str(join_text(&vals))))
    }
}

/// Simple values joined as text: numbers as written, null as `null`.
fn join_text(vals: &[(Value, Option<String>)]) -> String {
    vals.iter()
        .map(|(v, t)| match (v, t) {
            (Value::Str(s), _) => s.clone(),
            (_, Some(t)) => t.clone(),
            (Value::Undef, None) => "null".into(),
            (Value::Float(f), None) => f.to_string(),
            (other, None) => other.to_s(),
        })
        .collect()
}

fn walk(v: Value, rest: &[String]) -> Option<Value> {
    let mut cur = v;
    for key in rest {
        let Value::Hash(h) = cur else {
            return None;
        };
        cur = h
            .into_iter()
            .find(|(k, _)| matches!(k, Value::Str(s) if s == key))?
            .1;
    }
    Some(cur)
}

fn merge_values(new: Vec<(Value, Value)>, old: Vec<(Value, Value)>) -> Vec<(Value, Value)> {
    merge(new, old, |n, o| match (n, o) {
        (Value::Hash(n), Value::Hash(o)) => Value::Hash(merge_values(n, o)),
        (n, _) => n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> String {
        match parse(s) {
            Ok(v) => v.to_inspect(true),
            Err(e) => format!("!! {e}"),
        }
    }

    #[test]
    fn reads_hocon() {
        assert_eq!(p("a = 1"), "{'a' => 1}");
        assert_eq!(
            p("a { x = 1 }, a { y = 2 }, a.z = 3"),
            "{'a' => {'z' => 3, 'y' => 2, 'x' => 1}}"
        );
        assert_eq!(p("a = [1], a += 2"), "{'a' => [1, 2]}");
        assert_eq!(
            p("a = 1, b = ${a} ${a}, c = ${?nope}"),
            "{'a' => 1, 'b' => '1 1'}"
        );
        assert_eq!(
            p("a = 010, b = 08, d = 1e3, e = 0.5"),
            "{'a' => 8, 'b' => '08', 'd' => 1000, 'e' => 0.5}"
        );
    }

    #[test]
    fn refuses_includes_and_the_environment() {
        assert!(p("include file(\"/etc/hostname\")").contains("does not read HOCON includes"));
        assert!(p("a = ${HOME}").contains("Could not resolve substitution to a value: ${HOME}"));
        assert!(p("a = ${a}").contains("cycle"));
        assert!(
            !HoconError::WrongType {
                line: 1,
                message: String::new()
            }
            .is_parse()
        );
    }
}
