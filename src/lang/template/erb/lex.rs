//! Lexer for the Ruby subset used in ERB templates. A template becomes one
//! token stream: text between tags is a `Text` token, `<%= %>` code is
//! wrapped in `OutStart`/`OutEnd`, and every tag ends with a newline token,
//! so `if`/`each do` blocks may span tags. Double-quoted strings keep their
//! `#{...}` parts as source, parsed later by `erb_parse`.

/// Template code that does not lex or parse; the message names the
/// construct ("unterminated string", "expected 'end', found ...").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ErbSyntaxError(pub String);

impl From<String> for ErbSyntaxError {
    fn from(message: String) -> ErbSyntaxError {
        ErbSyntaxError(message)
    }
}

impl From<&str> for ErbSyntaxError {
    fn from(message: &str) -> ErbSyntaxError {
        ErbSyntaxError(message.to_string())
    }
}

/// One piece of a double-quoted string.
#[derive(Debug, Clone, PartialEq)]
pub enum StrPart {
    Lit(String),
    Code(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Int(i64),
    Float(f64),
    Str(Vec<StrPart>),
    Sym(String),
    Regex(String),
    Words(Vec<String>),
    /// Identifier or keyword (may end in `?` or `!`).
    Ident(String),
    Const(String),
    IVar(String),
    /// A regex match global: `$~`, `$1`..`$9`.
    GVar(String),
    Op(&'static str),
    Nl,
    Text(String),
    OutStart,
    OutEnd,
}

/// A token and whether whitespace preceded it.
#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub space: bool,
    /// The template line it is on (0: not from a template, e.g. `#{}` code).
    pub line: usize,
}

const OPS: &[&str] = &[
    "**=", "||=", "&&=", "<=>", "===", "...", "<<=", "**", "==", "!=", "=~", "!~", "<=", ">=",
    "&&", "||", "<<", ">>", "+=", "-=", "*=", "/=", "=>", "->", "::", "&.", "..", "+", "-", "*",
    "/", "%", "<", ">", "=", "!", "?", ":", ".", ",", "(", ")", "[", "]", "{", "}", "|", "&", ";",
    "^", "~",
];

const KEYWORDS: &[&str] = &[
    "if", "elsif", "else", "end", "unless", "do", "then", "and", "or", "not", "for", "in", "while",
    "until", "case", "when", "return", "next", "break", "begin", "rescue", "ensure",
];

/// Does this token end a value (so a following `/` divides)?
fn ends_value(t: Option<&Token>) -> bool {
    match t.map(|t| &t.tok) {
        Some(Tok::Int(_) | Tok::Float(_) | Tok::Str(_) | Tok::Sym(_) | Tok::Regex(_)) => true,
        Some(Tok::Words(_) | Tok::Const(_) | Tok::IVar(_) | Tok::GVar(_)) => true,
        Some(Tok::Ident(i)) => !KEYWORDS.contains(&i.as_str()),
        Some(Tok::Op(o)) => matches!(*o, ")" | "]" | "}"),
        _ => false,
    }
}

fn closing(c: char) -> char {
    match c {
        '(' => ')',
        '[' => ']',
        '{' => '}',
        '<' => '>',
        other => other,
    }
}

/// Lex one code fragment, appending to `out`.
pub fn lex(src: &str, out: &mut Vec<Token>) -> Result<(), ErbSyntaxError> {
    lex_at(src, 0, out)
}

/// Lex one code fragment that starts on template line `first_line` (0:
/// not from a template), appending to `out`.
pub fn lex_at(src: &str, first_line: usize, out: &mut Vec<Token>) -> Result<(), ErbSyntaxError> {
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut space = true;
    // The line of `chars[counted]`, counted as tokens are made.
    let (mut counted, mut line) = (0usize, first_line);
    let mut line_of = |start: usize| {
        if first_line > 0 {
            line += chars
                .get(counted..start)
                .map_or(0, |s| s.iter().filter(|c| **c == '\n').count());
            counted = start;
        }
        line
    };
    let at = |i: usize| chars.get(i).copied();
    while let Some(c) = at(i) {
        if c == ' ' || c == '\t' || c == '\r' {
            space = true;
            i += 1;
            continue;
        }
        if c == '\\' && at(i + 1) == Some('\n') {
            i += 2;
            space = true;
            continue;
        }
        if c == '#' {
            while at(i).is_some_and(|c| c != '\n') {
                i += 1;
            }
            continue;
        }
        let start = i;
        let tok_line = line_of(start);
        let tok = if c == '\n' || c == ';' {
            i += 1;
            Tok::Nl
        } else if c.is_ascii_digit() {
            while at(i).is_some_and(|c| c.is_ascii_digit() || c == '_') {
                i += 1;
            }
            let mut float = false;
            if at(i) == Some('.') && at(i + 1).is_some_and(|c| c.is_ascii_digit()) {
                float = true;
                i += 1;
                while at(i).is_some_and(|c| c.is_ascii_digit() || c == '_') {
                    i += 1;
                }
            }
            if matches!(at(i), Some('e' | 'E'))
                && (at(i + 1).is_some_and(|c| c.is_ascii_digit())
                    || (matches!(at(i + 1), Some('+' | '-'))
                        && at(i + 2).is_some_and(|c| c.is_ascii_digit())))
            {
                float = true;
                i += 2;
                while at(i).is_some_and(|c| c.is_ascii_digit()) {
                    i += 1;
                }
            }
            let text: String = chars
                .get(start..i)
                .unwrap_or_default()
                .iter()
                .filter(|c| **c != '_')
                .collect();
            if float {
                Tok::Float(text.parse().map_err(|_| format!("bad number {text}"))?)
            } else {
                Tok::Int(text.parse().map_err(|_| format!("bad number {text}"))?)
            }
        } else if c == '$' && at(i + 1).is_some_and(|c| c.is_ascii_digit() || c == '~') {
            i += 1;
            let name_start = i;
            if at(i) == Some('~') {
                i += 1;
            } else {
                while at(i).is_some_and(|c| c.is_ascii_digit()) {
                    i += 1;
                }
            }
            Tok::GVar(
                chars
                    .get(name_start..i)
                    .unwrap_or_default()
                    .iter()
                    .collect(),
            )
        } else if c == '@' || c.is_alphabetic() || c == '_' {
            let sigil = c == '@';
            if sigil {
                i += 1;
                if at(i) == Some('@') {
                    i += 1;
                }
            }
            let name_start = i;
            while at(i).is_some_and(|c| c.is_alphanumeric() || c == '_') {
                i += 1;
            }
            if !sigil && matches!(at(i), Some('?' | '!')) && at(i + 1) != Some('=') {
                i += 1;
            }
            let name: String = chars
                .get(name_start..i)
                .unwrap_or_default()
                .iter()
                .collect();
            if sigil {
                if name.is_empty() {
                    return Err("unexpected '@'".into());
                }
                Tok::IVar(name)
            } else if at(i) == Some(':') && at(i + 1) != Some(':') && !name.ends_with('?') {
                // `key: value` hash shorthand becomes a symbol key and `=>`.
                if out
                    .last()
                    .is_some_and(|t| matches!(t.tok, Tok::Op("{") | Tok::Op(",") | Tok::Op("(")))
                {
                    i += 1;
                    out.push(Token {
                        tok: Tok::Sym(name),
                        space,
                        line: tok_line,
                    });
                    space = true;
                    Tok::Op("=>")
                } else if name.starts_with(|c: char| c.is_uppercase()) {
                    Tok::Const(name)
                } else {
                    Tok::Ident(name)
                }
            } else if name.starts_with(|c: char| c.is_uppercase()) {
                Tok::Const(name)
            } else {
                Tok::Ident(name)
            }
        } else if c == '\'' {
            i += 1;
            let mut s = String::new();
            loop {
                match at(i) {
                    None => return Err("unterminated string".into()),
                    Some('\'') => break,
                    Some('\\') if matches!(at(i + 1), Some('\'' | '\\')) => {
                        s.push(at(i + 1).unwrap_or('\\'));
                        i += 2;
                    }
                    Some(ch) => {
                        s.push(ch);
                        i += 1;
                    }
                }
            }
            i += 1;
            Tok::Str(vec![StrPart::Lit(s)])
        } else if c == '"' || c == '`' {
            i += 1;
            let (parts, next) = dquote(&chars, i, c, None)?;
            i = next;
            Tok::Str(parts)
        } else if c == ':' && at(i + 1).is_some_and(|c| c.is_alphabetic() || c == '_') {
            i += 1;
            let s = i;
            while at(i).is_some_and(|c| c.is_alphanumeric() || c == '_') {
                i += 1;
            }
            if matches!(at(i), Some('?' | '!')) {
                i += 1;
            }
            Tok::Sym(chars.get(s..i).unwrap_or_default().iter().collect())
        } else if c == ':' && matches!(at(i + 1), Some('"' | '\'')) {
            let q = at(i + 1).unwrap_or('"');
            let (parts, next) = dquote(&chars, i + 2, q, None)?;
            i = next;
            let lit = parts
                .iter()
                .map(|p| match p {
                    StrPart::Lit(s) | StrPart::Code(s) => s.as_str(),
                })
                .collect();
            Tok::Sym(lit)
        } else if c == '%'
            && at(i + 1) == Some('r')
            && at(i + 2).is_some_and(|c| "([{<|!/".contains(c))
        {
            // `%r{...}flags`: a regexp whose delimiters need no escaping.
            let open = at(i + 2).unwrap_or('{');
            let (body, next) = percent_regex(&chars, i + 3, open)?;
            i = next;
            Tok::Regex(regex_flags(&chars, &mut i, body))
        } else if c == '%'
            && matches!(at(i + 1), Some('w' | 'W' | 'q' | 'Q' | 'i'))
            && at(i + 2).is_some_and(|c| "([{<|!/".contains(c))
        {
            let kind = at(i + 1).unwrap_or('w');
            let open = at(i + 2).unwrap_or('(');
            let (parts, next) = dquote(&chars, i + 3, closing(open), Some(open))?;
            i = next;
            let text: String = parts
                .iter()
                .map(|p| match p {
                    StrPart::Lit(s) => s.clone(),
                    StrPart::Code(s) => format!("#{{{s}}}"),
                })
                .collect();
            match kind {
                'q' | 'Q' => Tok::Str(parts),
                _ => Tok::Words(text.split_whitespace().map(str::to_string).collect()),
            }
        } else if c == '%'
            && !ends_value(out.last())
            && at(i + 1).is_some_and(|c| "([{<|!".contains(c))
        {
            // `%(...)`: a double-quoted string (Ruby's %Q without the Q).
            let open = at(i + 1).unwrap_or('(');
            let (parts, next) = dquote(&chars, i + 2, closing(open), Some(open))?;
            i = next;
            Tok::Str(parts)
        } else if c == '/' && !(ends_value(out.last()) && (!space || at(i + 1) == Some(' '))) {
            i += 1;
            let mut s = String::new();
            loop {
                match at(i) {
                    None => return Err("unterminated regexp".into()),
                    Some('/') => break,
                    Some('\\') => {
                        if at(i + 1) != Some('/') {
                            s.push('\\');
                        }
                        s.push(at(i + 1).unwrap_or('\\'));
                        i += 2;
                    }
                    Some(ch) => {
                        s.push(ch);
                        i += 1;
                    }
                }
            }
            i += 1;
            Tok::Regex(regex_flags(&chars, &mut i, s))
        } else {
            let rest: String = chars.iter().skip(i).take(3).collect();
            let Some(op) = OPS.iter().find(|o| rest.starts_with(**o)) else {
                return Err(ErbSyntaxError(format!("unexpected character '{c}'")));
            };
            i += op.chars().count();
            Tok::Op(op)
        };
        out.push(Token {
            tok,
            space,
            line: tok_line,
        });
        space = matches!(out.last().map(|t| &t.tok), Some(Tok::Nl));
    }
    Ok(())
}

/// The flags after a regexp literal (from `*i`, moved past them) applied
/// to `body`: Ruby's `m` is the `s` flag of the `regex` crate, `o` means
/// nothing here.
fn regex_flags(chars: &[char], i: &mut usize, body: String) -> String {
    let mut flags = String::new();
    while let Some(&f) = chars.get(*i).filter(|c| matches!(c, 'i' | 'm' | 'x' | 'o')) {
        if f != 'o' {
            flags.push(if f == 'm' { 's' } else { f });
        }
        *i += 1;
    }
    if flags.is_empty() {
        body
    } else {
        format!("(?{flags}){body}")
    }
}

/// The body of a `%r` regexp from `i` (after its opening delimiter
/// `open`) up to the matching closing one, and the index after it. Nested
/// bracket pairs are part of the body; an escaped delimiter that is not
/// a regexp metacharacter loses its backslash, other escapes are the
/// regexp's own.
fn percent_regex(
    chars: &[char],
    mut i: usize,
    open: char,
) -> Result<(String, usize), ErbSyntaxError> {
    let close = closing(open);
    let mut depth = 0;
    let mut body = String::new();
    loop {
        let Some(&c) = chars.get(i) else {
            return Err("unterminated regexp".into());
        };
        if c == '\\' {
            let n = chars.get(i + 1).copied().unwrap_or('\\');
            // Ruby keeps the backslash of an escaped delimiter that is a
            // regexp metacharacter (`%r{\{}` is `\{`), drops the others'.
            if (n != open && n != close) || "(){}[]|".contains(n) {
                body.push('\\');
            }
            body.push(n);
            i += 2;
            continue;
        }
        if c == close && depth == 0 {
            return Ok((body, i + 1));
        }
        if c == open && open != close {
            depth += 1;
        } else if c == close {
            depth -= 1;
        }
        body.push(c);
        i += 1;
    }
}

/// Read a double-quoted string body from `i` up to `close` (nesting `open`),
/// returning its parts and the index after the closing delimiter.
fn dquote(
    chars: &[char],
    mut i: usize,
    close: char,
    open: Option<char>,
) -> Result<(Vec<StrPart>, usize), ErbSyntaxError> {
    let mut parts = Vec::new();
    let mut lit = String::new();
    let mut depth = 0;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err("unterminated string".into());
        };
        if Some(c) == open && open != Some(close) {
            depth += 1;
        } else if c == close {
            if depth == 0 {
                break;
            }
            depth -= 1;
        }
        if c == '\\' {
            let n = chars.get(i + 1).copied().unwrap_or('\\');
            lit.push(match n {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                's' => ' ',
                '0' => '\0',
                'e' => '\x1b',
                other => other,
            });
            i += 2;
            continue;
        }
        if c == '#' && chars.get(i + 1) == Some(&'{') {
            let mut j = i + 2;
            let mut nest = 0;
            let mut code = String::new();
            loop {
                match chars.get(j) {
                    None => return Err("unterminated interpolation".into()),
                    Some('{') => nest += 1,
                    Some('}') if nest == 0 => break,
                    Some('}') => nest -= 1,
                    _ => {}
                }
                code.push(chars.get(j).copied().unwrap_or(' '));
                j += 1;
            }
            if !lit.is_empty() {
                parts.push(StrPart::Lit(std::mem::take(&mut lit)));
            }
            parts.push(StrPart::Code(code));
            i = j + 1;
            continue;
        }
        lit.push(c);
        i += 1;
    }
    if !lit.is_empty() || parts.is_empty() {
        parts.push(StrPart::Lit(lit));
    }
    Ok((parts, i + 1))
}

/// Tokens of a whole template: text, output and code tags.
pub fn lex_template(
    segs: &[crate::lang::template::segments::Seg],
) -> Result<Vec<Token>, ErbSyntaxError> {
    use crate::lang::template::segments::Seg;
    let mut out = Vec::new();
    for seg in segs {
        let tok = |tok, line| Token {
            tok,
            space: true,
            line,
        };
        match seg {
            Seg::Text(t) if t.is_empty() => {}
            Seg::Text(t) => out.push(tok(Tok::Text(t.clone()), 0)),
            Seg::Expr(e, pos) => {
                out.push(tok(Tok::OutStart, pos.line));
                lex_at(e, pos.line, &mut out)?;
                out.push(tok(Tok::OutEnd, 0));
                out.push(tok(Tok::Nl, 0));
            }
            Seg::Code(c, pos) => {
                lex_at(c, pos.line, &mut out)?;
                out.push(tok(Tok::Nl, 0));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        let mut out = Vec::new();
        lex(s, &mut out).expect("lexes");
        out.into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn regex_and_division() {
        assert_eq!(toks("a / b").get(1), Some(&Tok::Op("/")));
        assert_eq!(
            toks("x =~ /^[|\\/]/i").get(2),
            Some(&Tok::Regex("(?i)^[|/]".into()))
        );
        assert_eq!(toks("@x.empty?").get(2), Some(&Tok::Ident("empty?".into())));
        assert_eq!(
            toks("%w(a b)"),
            vec![Tok::Words(vec!["a".into(), "b".into()])]
        );
        assert_eq!(toks("{a: 1}").get(1), Some(&Tok::Sym("a".into())));
    }
}
