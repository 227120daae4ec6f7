//! Ruby regular expressions (the `match` and `after` parameters of
//! module types such as `file_line`) rewritten as POSIX extended regular
//! expressions for the target's `awk`, run in the C locale. Only the
//! answer "does this line match" is kept, so lazy quantifiers become
//! greedy ones and groups lose their captures. The ERE is meant to be
//! matched against a line *with* its newline (as Ruby's `readlines` gives
//! it): `.` excludes the newline, `$` and `\Z` may consume it, `\s` and
//! negated classes match it, exactly as in Ruby. Counted repetitions are
//! expanded (mawk before 2020 has none). What has no ERE equivalent
//! (look-around, back-references, word boundaries, options, possessive
//! quantifiers) is refused with [`RegexError`], never approximated.
//! Bytes are compared as bytes: a non-ASCII character is its UTF-8 bytes
//! in a row, and `.` or a negated class matches one byte of it.

/// Why a Ruby regex cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegexError {
    #[error("ferry cannot translate {what} in the regular expression '{src}' to a POSIX one")]
    Unsupported { what: String, src: String },
    #[error("invalid regular expression '{src}': {why}")]
    Invalid { why: String, src: String },
}

/// The most characters a counted repetition may expand to.
const MAX_EXPANSION: usize = 1000;

/// Translates Ruby regex source to an ERE (see the module text).
pub fn to_ere(src: &str) -> Result<String, RegexError> {
    let mut p = Parser {
        chars: src.chars().collect(),
        pos: 0,
        src,
    };
    let out = p.alternation()?;
    if p.pos < p.chars.len() {
        return Err(p.invalid("unmatched close parenthesis"));
    }
    Ok(if out.is_empty() { "^".into() } else { out })
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    src: &'a str,
}

/// What one parsed piece is, for the quantifier after it.
enum Piece {
    /// Can take a quantifier as it is (a byte, a bracket, a group).
    Atom(String),
    /// An anchor: no quantifier.
    Anchor(String),
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }

    fn unsupported(&self, what: &str) -> RegexError {
        RegexError::Unsupported {
            what: what.into(),
            src: self.src.into(),
        }
    }

    fn invalid(&self, why: &str) -> RegexError {
        RegexError::Invalid {
            why: why.into(),
            src: self.src.into(),
        }
    }

    /// branch ('|' branch)*; an empty branch makes the whole optional.
    fn alternation(&mut self) -> Result<String, RegexError> {
        let mut branches = vec![self.sequence()?];
        while self.peek() == Some('|') {
            self.pos += 1;
            branches.push(self.sequence()?);
        }
        let empty = branches.iter().any(String::is_empty);
        let kept: Vec<String> = branches.into_iter().filter(|b| !b.is_empty()).collect();
        Ok(match (kept.len(), empty) {
            (0, _) => String::new(),
            (1, false) => kept.join(""),
            (_, false) => kept.join("|"),
            (_, true) => format!("({})?", kept.join("|")),
        })
    }

    fn sequence(&mut self) -> Result<String, RegexError> {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let piece = self.piece()?;
            let Some(piece) = piece else { continue };
            match piece {
                Piece::Anchor(a) => {
                    if matches!(self.peek(), Some('*' | '+' | '?'))
                        || (self.peek() == Some('{') && self.interval_ahead().is_some())
                    {
                        return Err(self.unsupported("a quantifier on an anchor"));
                    }
                    out.push_str(&a);
                }
                Piece::Atom(a) => out.push_str(&self.quantified(a)?),
            }
        }
        Ok(out)
    }

    /// `{n}`, `{n,}`, `{,m}`, `{n,m}` at the current position, with its
    /// length in characters.
    fn interval_ahead(&self) -> Option<(usize, Option<usize>, usize)> {
        let rest: String = self.chars[self.pos..].iter().take(24).collect();
        let body = rest.strip_prefix('{')?;
        let end = body.find('}')?;
        let inner = &body[..end];
        let num = |s: &str| -> Option<Option<usize>> {
            if s.is_empty() {
                Some(None)
            } else if s.bytes().all(|b| b.is_ascii_digit()) {
                s.parse().ok().map(Some)
            } else {
                None
            }
        };
        let (lo, hi) = match inner.split_once(',') {
            None => {
                let n = num(inner)??;
                (n, Some(n))
            }
            Some((a, b)) => {
                let (lo, hi) = (num(a)?, num(b)?);
                if lo.is_none() && hi.is_none() {
                    return None;
                }
                (lo.unwrap_or(0), hi)
            }
        };
        Some((lo, hi, inner.chars().count() + 2))
    }

    fn quantified(&mut self, atom: String) -> Result<String, RegexError> {
        let empty = atom.is_empty();
        let out = self.quantify(atom)?;
        Ok(if empty { String::new() } else { out })
    }

    fn quantify(&mut self, atom: String) -> Result<String, RegexError> {
        let mut out = match self.peek() {
            Some(q @ ('*' | '+' | '?')) => {
                self.pos += 1;
                format!("{atom}{q}")
            }
            Some('{') => match self.interval_ahead() {
                Some((lo, hi, len)) => {
                    self.pos += len;
                    if hi.is_some_and(|h| h < lo) {
                        return Err(self.invalid("upper bound smaller than lower bound"));
                    }
                    let count = hi.unwrap_or(lo + 1).max(lo);
                    if count.saturating_mul(atom.len()) > MAX_EXPANSION {
                        return Err(self.unsupported("a repetition this large"));
                    }
                    let mut s = atom.repeat(lo);
                    match hi {
                        None => {
                            s.push_str(&atom);
                            s.push('*');
                        }
                        Some(h) => {
                            for _ in lo..h {
                                s.push_str(&atom);
                                s.push('?');
                            }
                        }
                    }
                    if s.is_empty() {
                        // `x{0}` matches the empty string.
                        return Ok(String::new());
                    }
                    return self.after_quantifier(format!("({s})"));
                }
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        out = self.after_quantifier(out)?;
        if matches!(self.peek(), Some('*' | '+' | '?' | '{')) {
            if self.peek() == Some('{') && self.interval_ahead().is_none() {
                return Ok(out);
            }
            return Err(self.unsupported("a quantifier after a quantifier"));
        }
        Ok(out)
    }

    /// A lazy marker (`?`) is dropped; a possessive one (`+`) refused.
    fn after_quantifier(&mut self, out: String) -> Result<String, RegexError> {
        match self.peek() {
            Some('?') => {
                self.pos += 1;
                Ok(out)
            }
            Some('+') => Err(self.unsupported("a possessive quantifier")),
            _ => Ok(out),
        }
    }

    /// One atom or anchor; `None` for what matches nothing (a comment).
    fn piece(&mut self) -> Result<Option<Piece>, RegexError> {
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        self.pos += 1;
        Ok(Some(match c {
            '(' => return self.group(),
            '[' => Piece::Atom(self.bracket()?),
            '.' => Piece::Atom("[^\n]".into()),
            '^' => Piece::Anchor("^".into()),
            '$' => {
                self.end_anchor_ok()?;
                Piece::Anchor("(\n)?$".into())
            }
            '*' | '+' | '?' => {
                return Err(self.invalid("target of repeat operator is not specified"));
            }
            // Not a repetition (that follows an atom and is read there).
            '{' => Piece::Atom("\\{".into()),
            '\\' => return self.escape(),
            c => Piece::Atom(literal(c)),
        }))
    }

    /// `$` and `\Z` only at the end of a branch: what follows them could
    /// only be the newline, which the ERE cannot look past.
    fn end_anchor_ok(&self) -> Result<(), RegexError> {
        match self.peek() {
            None | Some('|') | Some(')') | Some('$') => Ok(()),
            Some('\\') if matches!(self.peek_at(1), Some('z' | 'Z')) => Ok(()),
            _ => Err(self.unsupported("'$' followed by more of the pattern")),
        }
    }

    fn group(&mut self) -> Result<Option<Piece>, RegexError> {
        if self.peek() == Some('?') {
            let kind = self.peek_at(1);
            match kind {
                Some(':') => self.pos += 2,
                Some('<') if !matches!(self.peek_at(2), Some('=' | '!')) => {
                    // A named group: `(?<name>...)`.
                    while let Some(c) = self.peek() {
                        self.pos += 1;
                        if c == '>' {
                            break;
                        }
                    }
                }
                Some('#') => {
                    while let Some(c) = self.peek() {
                        self.pos += 1;
                        if c == ')' {
                            return Ok(None);
                        }
                    }
                    return Err(self.invalid("end pattern in group"));
                }
                Some('=' | '!') => return Err(self.unsupported("a look-ahead")),
                Some('<') => return Err(self.unsupported("a look-behind")),
                Some('>') => return Err(self.unsupported("an atomic group")),
                _ => return Err(self.unsupported("an option group such as (?i)")),
            }
        }
        let inner = self.alternation()?;
        if self.peek() != Some(')') {
            return Err(self.invalid("end pattern with unmatched parenthesis"));
        }
        self.pos += 1;
        // An empty group matches the empty string (`()` is no ERE).
        Ok(Some(Piece::Atom(if inner.is_empty() {
            String::new()
        } else {
            format!("({inner})")
        })))
    }

    fn escape(&mut self) -> Result<Option<Piece>, RegexError> {
        let Some(c) = self.peek() else {
            return Err(self.invalid("too short escape sequence"));
        };
        self.pos += 1;
        if let Some(set) = class_escape(c) {
            return Ok(Some(Piece::Atom(render_set(&set))));
        }
        Ok(Some(match c {
            'A' => Piece::Anchor("^".into()),
            'z' => Piece::Anchor("$".into()),
            'Z' => {
                self.end_anchor_ok()?;
                Piece::Anchor("(\n)?$".into())
            }
            'b' | 'B' => return Err(self.unsupported("a word boundary (\\b, \\B)")),
            'G' | 'K' | 'R' | 'X' => {
                return Err(self.unsupported(&format!("the escape \\{c}")));
            }
            '1'..='9' | 'k' | 'g' => return Err(self.unsupported("a back-reference")),
            'p' | 'P' => return Err(self.unsupported("a Unicode property (\\p)")),
            _ => {
                let ch = self.escaped_char(c)?;
                Piece::Atom(literal(ch))
            }
        }))
    }

    /// The character an escape outside the class escapes stands for.
    fn escaped_char(&mut self, c: char) -> Result<char, RegexError> {
        Ok(match c {
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            'f' => '\x0c',
            'v' => '\x0b',
            'a' => '\x07',
            'e' => '\x1b',
            '0' => return Err(self.unsupported("a NUL character")),
            'x' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 {
                    match self.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            self.pos += 1;
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    return Err(self.invalid("invalid hex escape"));
                }
                if v == 0 {
                    return Err(self.unsupported("a NUL character"));
                }
                if v >= 0x80 {
                    return Err(self.unsupported("a \\x escape above 7F"));
                }
                char::from_u32(v).ok_or_else(|| self.invalid("invalid hex escape"))?
            }
            'u' => {
                let digits: String = if self.peek() == Some('{') {
                    self.pos += 1;
                    let mut d = String::new();
                    while let Some(x) = self.peek() {
                        self.pos += 1;
                        if x == '}' {
                            break;
                        }
                        d.push(x);
                    }
                    d
                } else {
                    let d: String = self.chars[self.pos..].iter().take(4).collect();
                    self.pos += d.chars().count();
                    d
                };
                let v = u32::from_str_radix(digits.trim(), 16)
                    .map_err(|_| self.invalid("invalid Unicode escape"))?;
                if v == 0 {
                    return Err(self.unsupported("a NUL character"));
                }
                char::from_u32(v).ok_or_else(|| self.invalid("invalid Unicode escape"))?
            }
            'c' | 'C' | 'M' => return Err(self.unsupported(&format!("the escape \\{c}"))),
            c if c.is_ascii_alphanumeric() => {
                return Err(self.unsupported(&format!("the escape \\{c}")));
            }
            c => c,
        })
    }

    /// A bracket expression, the `[` already read: a set of ASCII bytes.
    fn bracket(&mut self) -> Result<String, RegexError> {
        let negated = self.peek() == Some('^');
        if negated {
            self.pos += 1;
        }
        let mut set = [false; 128];
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.invalid("premature end of char-class"));
            };
            self.pos += 1;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = match c {
                '[' if self.peek() == Some(':') => {
                    let rest: String = self.chars[self.pos..].iter().collect();
                    let Some(end) = rest.find(":]") else {
                        return Err(self.invalid("premature end of char-class"));
                    };
                    let name = &rest[1..end];
                    let Some(class) = posix_class(name) else {
                        return Err(self.unsupported(&format!("the class [:{name}:]")));
                    };
                    self.pos += end + 2;
                    merge(&mut set, &class);
                    continue;
                }
                '[' => return Err(self.unsupported("a nested character class")),
                '&' if self.peek() == Some('&') => {
                    return Err(self.unsupported("a class intersection (&&)"));
                }
                '\\' => {
                    let Some(e) = self.peek() else {
                        return Err(self.invalid("premature end of char-class"));
                    };
                    self.pos += 1;
                    if let Some(class) = class_escape(e) {
                        if e.is_ascii_uppercase() {
                            return Err(
                                self.unsupported(&format!("\\{e} inside a character class"))
                            );
                        }
                        merge(&mut set, &class.1);
                        continue;
                    }
                    if e == 'b' {
                        '\x08'
                    } else {
                        self.escaped_char(e)?
                    }
                }
                c => c,
            };
            // A range `lo-hi` (a `-` last or before `]` is literal).
            let hi = if self.peek() == Some('-') && !matches!(self.peek_at(1), Some(']') | None) {
                self.pos += 1;
                let Some(h) = self.peek() else {
                    return Err(self.invalid("premature end of char-class"));
                };
                self.pos += 1;
                if h == '\\' {
                    let Some(e) = self.peek() else {
                        return Err(self.invalid("premature end of char-class"));
                    };
                    self.pos += 1;
                    self.escaped_char(e)?
                } else if h == '[' {
                    return Err(self.unsupported("a nested character class"));
                } else {
                    h
                }
            } else {
                lo
            };
            if !lo.is_ascii() || !hi.is_ascii() {
                return Err(self.unsupported("a non-ASCII character in a character class"));
            }
            if hi < lo {
                return Err(self.invalid("empty range in char class"));
            }
            for slot in &mut set[lo as usize..=hi as usize] {
                *slot = true;
            }
        }
        set[0] = false;
        if !set.iter().any(|&b| b) {
            return Err(self.invalid("empty char-class"));
        }
        Ok(render_set(&(negated, set)))
    }
}

/// A character outside brackets, escaped for an ERE.
fn literal(c: char) -> String {
    if "\\.[](){}*+?|^$".contains(c) {
        format!("\\{c}")
    } else if c.is_ascii() {
        c.to_string()
    } else {
        // Several bytes: grouped, so a quantifier takes all of them.
        format!("({c})")
    }
}

type Set = (bool, [bool; 128]);

fn merge(into: &mut [bool; 128], from: &[bool; 128]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a |= *b;
    }
}

fn set_of(pred: impl Fn(u8) -> bool) -> [bool; 128] {
    let mut s = [false; 128];
    for (b, slot) in s.iter_mut().enumerate().skip(1) {
        *slot = pred(b as u8);
    }
    s
}

/// `\d \w \s \h` and their negations, as Ruby defines them (ASCII).
fn class_escape(c: char) -> Option<Set> {
    let base = match c.to_ascii_lowercase() {
        'd' => set_of(|b| b.is_ascii_digit()),
        'w' => set_of(|b| b.is_ascii_alphanumeric() || b == b'_'),
        's' => set_of(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')),
        'h' => set_of(|b| b.is_ascii_hexdigit()),
        _ => return None,
    };
    Some((c.is_ascii_uppercase(), base))
}

fn posix_class(name: &str) -> Option<[bool; 128]> {
    Some(match name {
        "alpha" => set_of(|b| b.is_ascii_alphabetic()),
        "digit" => set_of(|b| b.is_ascii_digit()),
        "alnum" => set_of(|b| b.is_ascii_alphanumeric()),
        "upper" => set_of(|b| b.is_ascii_uppercase()),
        "lower" => set_of(|b| b.is_ascii_lowercase()),
        "space" => set_of(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')),
        "blank" => set_of(|b| b == b' ' || b == b'\t'),
        "punct" => set_of(|b| b.is_ascii_punctuation()),
        "xdigit" => set_of(|b| b.is_ascii_hexdigit()),
        "cntrl" => set_of(|b| b.is_ascii_control()),
        "print" => set_of(|b| (0x20..0x7f).contains(&b)),
        "graph" => set_of(|b| b.is_ascii_graphic()),
        "word" => set_of(|b| b.is_ascii_alphanumeric() || b == b'_'),
        _ => return None,
    })
}

/// A set of bytes as an ERE bracket expression that every awk reads the
/// same way: `]` first, `-` last, `^` not first, `\` doubled (awk takes
/// escapes inside brackets), runs of letters and digits as ranges.
fn render_set(set: &Set) -> String {
    let (negated, bytes) = set;
    let has = |b: u8| bytes[b as usize];
    if !negated
        && (1u8..128)
            .filter(|&b| has(b))
            .all(|b| b == b'^' || b == b'-')
    {
        // Only `^` and `-`: no bracket can start with `^` unnegated.
        return match (has(b'^'), has(b'-')) {
            (true, true) => "[-^]".into(),
            (true, false) => "\\^".into(),
            _ => "-".into(),
        };
    }
    let mut out = String::from("[");
    if *negated {
        out.push('^');
    }
    if has(b']') {
        out.push(']');
    }
    let mut body = String::new();
    let mut i = 1u8;
    while i < 128 {
        if !has(i) || matches!(i, b']' | b'-' | b'^') {
            i += 1;
            continue;
        }
        let mut j = i;
        let alnum = |b: u8| b.is_ascii_alphanumeric();
        if alnum(i) {
            while j + 1 < 128
                && has(j + 1)
                && alnum(j + 1)
                && (j + 1).is_ascii_digit() == i.is_ascii_digit()
                && (j + 1).is_ascii_uppercase() == i.is_ascii_uppercase()
            {
                j += 1;
            }
        }
        if j > i + 1 {
            body.push(i as char);
            body.push('-');
            body.push(j as char);
        } else {
            for b in i..=j {
                if b == b'\\' {
                    body.push_str("\\\\");
                } else {
                    body.push(b as char);
                }
            }
        }
        i = j + 1;
    }
    out.push_str(&body);
    if has(b'^') {
        out.push('^');
    }
    if has(b'-') {
        out.push('-');
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The awks on this machine: its `awk`, and BusyBox's when there is
    /// one (the awk of small targets).
    fn awks() -> Vec<Vec<&'static str>> {
        let mut v = vec![vec!["awk"]];
        if std::process::Command::new("busybox")
            .arg("awk")
            .arg("BEGIN{}")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            v.push(vec!["busybox", "awk"]);
        }
        v
    }

    /// Whether `re` (Ruby) matches `subject`, asked of `awk`.
    fn awk_matches(awk: &[&str], re: &str, subject: &str) -> bool {
        let ere = to_ere(re).unwrap_or_else(|e| panic!("{re}: {e}"));
        let out = std::process::Command::new(awk[0])
            .args(&awk[1..])
            .env("LC_ALL", "C")
            .env("RE", &ere)
            .env("S", subject)
            .arg("BEGIN { print (ENVIRON[\"S\"] ~ ENVIRON[\"RE\"]) ? \"yes\" : \"no\" }")
            .output()
            .expect("awk runs");
        String::from_utf8_lossy(&out.stdout).trim() == "yes"
    }

    #[test]
    fn matches_as_ruby_does() {
        // (ruby regex, subject, what Ruby's Regexp#match says)
        let cases: &[(&str, &str, bool)] = &[
            ("^bar\\s*=", "bar = x\n", true),
            ("^bar\\s*=", "xbar = x\n", false),
            ("^\\[section\\]$", "[section]\n", true),
            ("^\\[section\\]$", "[section]", true),
            ("^\\[section\\]$", "[section] \n", false),
            ("^old_a\\d?=", "old_a1=1\n", true),
            ("^old_a\\d?=", "old_ab=1\n", false),
            ("^#?\\s*opt=(off|maybe)$", "# opt=maybe\n", true),
            ("^#?\\s*opt=(off|maybe)$", "opt=on\n", false),
            ("^[[:alpha:]]+ (one|two)", "block one\n", true),
            ("^after\\.first=", "afterXfirst=\n", false),
            ("c\\s$", "abc\n", true),
            ("c[^x]", "abc\n", true),
            ("c.", "abc\n", false),
            ("^$", "abc\n", false),
            ("^$", "\n", true),
            ("a{3}", "baaab\n", true),
            ("^a{2,3}$", "aaaa\n", false),
            ("^a{2,}$", "aaaa\n", true),
            ("^(ab){2}$", "abab\n", true),
            ("x{", "x{\n", true),
            ("^.*?=", "k=v\n", true),
            ("(?:foo|bar)baz", "barbaz\n", true),
            ("[\\w.-]+@", "a.b-c@d\n", true),
            ("[]x]", "]\n", true),
            ("[a\\]]", "]\n", true),
            ("a\\\\b", "a\\b\n", true),
            ("[\\\\]", "\\\n", true),
            ("[^\\s]", " \n", false),
            ("a|", "zzz\n", true),
            ("\\Aab\\z", "ab", true),
            ("\\Aab\\z", "ab\n", false),
            ("ab\\Z", "ab\n", true),
            ("\\$HOME", "x $HOME y\n", true),
            ("100%", "100%\n", true),
            ("^\\t", "\tx\n", true),
            ("é+$", "ééé\n", true),
            ("[-a]", "-\n", true),
            ("[a^]", "^\n", true),
            ("[\\^]", "^\n", true),
            ("(?<k>\\w+)=", "key=1\n", true),
            ("a(?#comment)b", "ab\n", true),
        ];
        for awk in awks() {
            for (re, s, want) in cases {
                assert_eq!(awk_matches(&awk, re, s), *want, "{awk:?}: {re:?} on {s:?}");
            }
        }
    }

    #[test]
    fn refuses_what_has_no_ere() {
        for re in [
            "(?=x)",
            "(?!x)",
            "(?<=x)",
            "(?<!x)",
            "(?>x)",
            "(?i)x",
            "\\bword\\b",
            "(a)\\1",
            "a*+",
            "\\p{Alpha}",
            "[[a]]",
            "[a&&b]",
            "a$b",
            "\\x00",
            "[é]",
            "[\\S]",
        ] {
            assert!(to_ere(re).is_err(), "{re} should be refused");
        }
        for re in ["(", "a)", "[a", "*a", "\\"] {
            assert!(
                matches!(to_ere(re), Err(RegexError::Invalid { .. })),
                "{re} should be invalid"
            );
        }
    }
}
