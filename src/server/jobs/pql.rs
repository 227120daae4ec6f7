//! A subset of PuppetDB's query language (PQL) for job scopes, evaluated
//! against the server's inventory instead of a PuppetDB: `nodes[certname]
//! { facts.os.family = "Debian" and certname ~ "^web" }` (or `inventory[...]`,
//! or the braces' contents alone). Fields are `certname` (the target name)
//! and `facts.<path>` (the inventory's facts); operators `=`, `!=`, `~`,
//! `!~`, `<`, `<=`, `>`, `>=`; `and`, `or`, `not` and parentheses.
//!
//! A query comes from the network, so its size is bounded before anything
//! else ([`MAX_QUERY_BYTES`]), and so is its nesting ([`MAX_NESTING`]:
//! parentheses, brackets, braces and `not` count alike). `and` and `or`
//! chains are kept flat, so evaluating or dropping a query never recurses
//! deeper than its nesting.

use serde_json::Value;

use crate::inventory::Target;

/// The longest query accepted, in bytes.
pub const MAX_QUERY_BYTES: usize = 64 * 1024;

/// How deeply parentheses, brackets, braces and `not` may nest, together.
pub const MAX_NESTING: usize = 64;

/// Why a query was refused. Positions count characters from 1.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PqlError {
    #[error("the query is {len} bytes long; the limit is {max} bytes")]
    TooLong { len: usize, max: usize },
    #[error(
        "the query nests deeper than {max} levels (parentheses, brackets, braces and 'not' count alike) at character {at}"
    )]
    TooDeep { max: usize, at: usize },
    #[error("{msg} at character {at}")]
    Syntax { msg: String, at: usize },
}

impl From<PqlError> for String {
    fn from(e: PqlError) -> String {
        e.to_string()
    }
}

fn syntax(msg: impl Into<String>, at: usize) -> PqlError {
    PqlError::Syntax {
        msg: msg.into(),
        at,
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Num(f64),
    Op(&'static str),
    Open(char),
    Close(char),
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Word(w) => format!("'{w}'"),
            Tok::Str(s) => format!("the string \"{s}\""),
            Tok::Num(n) => format!("the number {n}"),
            Tok::Op(op) => format!("'{op}'"),
            Tok::Open(c) | Tok::Close(c) => format!("'{c}'"),
        }
    }
}

/// A token and the position (in characters, from 1) where it starts.
type Located = (Tok, usize);

#[derive(Debug)]
enum Expr {
    /// All of them (a flat chain: `a and b and c`).
    And(Vec<Expr>),
    /// Any of them.
    Or(Vec<Expr>),
    Not(Box<Expr>),
    Cmp(Vec<String>, Op, Value),
}

/// A comparison; regular expressions are compiled once, when parsed.
#[derive(Debug)]
enum Op {
    Eq,
    Ne,
    Match(regex::Regex),
    NoMatch(regex::Regex),
    Num(&'static str),
}

fn lex(q: &str) -> Result<Vec<Located>, PqlError> {
    let mut out = Vec::new();
    let chars: Vec<char> = q.chars().collect();
    let mut i = 0;
    let mut open = 0usize;
    while i < chars.len() {
        let c = chars[i];
        let at = i + 1;
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                i += 1;
                continue;
            }
            '[' | '{' | '(' => {
                open += 1;
                if open > MAX_NESTING {
                    return Err(PqlError::TooDeep {
                        max: MAX_NESTING,
                        at,
                    });
                }
                out.push((Tok::Open(c), at));
                i += 1
            }
            ']' | '}' | ')' => {
                open = open.saturating_sub(1);
                out.push((Tok::Close(c), at));
                i += 1
            }
            '"' | '\'' => {
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(syntax("an unclosed string", at)),
                        Some(&ch) if ch == c => break,
                        Some('\\') => {
                            s.extend(chars.get(i + 1));
                            i += 2;
                            continue;
                        }
                        Some(&ch) => s.push(ch),
                    }
                    i += 1;
                }
                out.push((Tok::Str(s), at));
                i += 1;
            }
            '=' | '~' | '<' | '>' | '!' => {
                let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
                let op = ["!=", "!~", "<=", ">=", "=", "~", "<", ">"]
                    .into_iter()
                    .find(|op| two.starts_with(op))
                    .ok_or_else(|| syntax(format!("unexpected '{c}'"), at))?;
                out.push((Tok::Op(op), at));
                i += op.len();
            }
            c if c.is_ascii_digit() || c == '-' => {
                let start = i;
                i += 1;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_digit() || *c == '.')
                {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                let n = text
                    .parse()
                    .map_err(|_| syntax(format!("bad number '{text}'"), at))?;
                out.push((Tok::Num(n), at));
            }
            c if c.is_alphanumeric() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
                {
                    i += 1;
                }
                out.push((Tok::Word(chars[start..i].iter().collect()), at));
            }
            other => return Err(syntax(format!("unexpected '{other}'"), at)),
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Located>,
    at: usize,
    /// Where the query ends (for errors at its end).
    end: usize,
    /// Open parentheses and `not`s around the current position.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|(t, _)| t)
    }
    /// The position of the current token (the end when there is none).
    fn pos(&self) -> usize {
        self.toks.get(self.at).map_or(self.end, |(_, p)| *p)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.peek().cloned();
        self.at += 1;
        t
    }
    fn word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x == w)
    }
    /// "found X" for errors: the current token, or the end.
    fn found(&self) -> String {
        self.peek()
            .map_or_else(|| "the end of the query".into(), Tok::describe)
    }
    fn enter(&mut self) -> Result<(), PqlError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(PqlError::TooDeep {
                max: MAX_NESTING,
                at: self.pos(),
            });
        }
        Ok(())
    }
    fn or(&mut self) -> Result<Expr, PqlError> {
        let mut all = vec![self.and()?];
        while self.word("or") {
            self.at += 1;
            all.push(self.and()?);
        }
        Ok(match all.len() {
            1 => all.remove(0),
            _ => Expr::Or(all),
        })
    }
    fn and(&mut self) -> Result<Expr, PqlError> {
        let mut all = vec![self.not()?];
        while self.word("and") {
            self.at += 1;
            all.push(self.not()?);
        }
        Ok(match all.len() {
            1 => all.remove(0),
            _ => Expr::And(all),
        })
    }
    fn not(&mut self) -> Result<Expr, PqlError> {
        if self.word("not") {
            self.enter()?;
            self.at += 1;
            let e = Expr::Not(Box::new(self.not()?));
            self.depth -= 1;
            return Ok(e);
        }
        if self.peek() == Some(&Tok::Open('(')) {
            self.enter()?;
            self.at += 1;
            let e = self.or()?;
            if self.peek() != Some(&Tok::Close(')')) {
                return Err(syntax(
                    format!("expected ')', found {}", self.found()),
                    self.pos(),
                ));
            }
            self.at += 1;
            self.depth -= 1;
            return Ok(e);
        }
        let at = self.pos();
        let field = match self.next() {
            Some(Tok::Word(w)) if w == "certname" || w.starts_with("facts.") => w,
            _ => {
                self.at -= 1;
                return Err(syntax(
                    format!("expected certname or facts.<name>, found {}", self.found()),
                    at,
                ));
            }
        };
        let at = self.pos();
        let op = match self.next() {
            Some(Tok::Op(op)) => op,
            _ => {
                self.at -= 1;
                return Err(syntax(
                    format!("expected an operator after {field}, found {}", self.found()),
                    at,
                ));
            }
        };
        let at = self.pos();
        let value = match self.next() {
            Some(Tok::Str(s)) => Value::String(s),
            Some(Tok::Num(n)) => serde_json::Number::from_f64(n)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            Some(Tok::Word(w)) if w == "true" || w == "false" => Value::Bool(w == "true"),
            _ => {
                self.at -= 1;
                return Err(syntax(
                    format!(
                        "expected a value after {field} {op}, found {}",
                        self.found()
                    ),
                    at,
                ));
            }
        };
        let regex = || {
            regex::Regex::new(&text(&value))
                .map_err(|e| syntax(format!("invalid regular expression: {e}"), at))
        };
        let op = match op {
            "=" => Op::Eq,
            "!=" => Op::Ne,
            "~" => Op::Match(regex()?),
            "!~" => Op::NoMatch(regex()?),
            other => Op::Num(other),
        };
        Ok(Expr::Cmp(
            field.split('.').map(str::to_string).collect(),
            op,
            value,
        ))
    }
}

/// A parsed query, ready to test targets.
#[derive(Debug)]
pub struct Query(Expr);

impl Query {
    pub fn parse(q: &str) -> Result<Query, PqlError> {
        if q.len() > MAX_QUERY_BYTES {
            return Err(PqlError::TooLong {
                len: q.len(),
                max: MAX_QUERY_BYTES,
            });
        }
        let end = q.chars().count() + 1;
        let mut toks = lex(q)?;
        // `nodes[certname] { ... }` / `inventory[certname] { ... }`: keep the braces' contents.
        if matches!(toks.first(), Some((Tok::Word(w), _)) if w == "nodes" || w == "inventory") {
            let open = toks
                .iter()
                .position(|(t, _)| *t == Tok::Open('{'))
                .ok_or_else(|| syntax("expected '{'", end))?;
            if toks.last().map(|(t, _)| t) != Some(&Tok::Close('}')) {
                return Err(syntax("expected '}' at the end", end));
            }
            toks = toks[open + 1..toks.len() - 1].to_vec();
        }
        let mut p = Parser {
            toks,
            at: 0,
            end,
            depth: 0,
        };
        let e = p.or()?;
        if p.at != p.toks.len() {
            return Err(syntax(format!("unexpected {}", p.found()), p.pos()));
        }
        Ok(Query(e))
    }

    pub fn matches(&self, t: &Target) -> bool {
        eval(&self.0, t)
    }
}

fn field(path: &[String], t: &Target) -> Option<Value> {
    match path.split_first() {
        Some((first, [])) if first == "certname" => Some(Value::String(t.name.clone())),
        Some((first, rest)) if first == "facts" => {
            let (head, tail) = rest.split_first()?;
            let mut v = t.facts.get(head)?;
            for p in tail {
                v = v.get(p)?;
            }
            Some(v.clone())
        }
        _ => None,
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn eval(e: &Expr, t: &Target) -> bool {
    match e {
        Expr::And(all) => all.iter().all(|e| eval(e, t)),
        Expr::Or(any) => any.iter().any(|e| eval(e, t)),
        Expr::Not(a) => !eval(a, t),
        Expr::Cmp(path, op, want) => {
            let Some(have) = field(path, t) else {
                return false;
            };
            match op {
                Op::Eq => text(&have) == text(want),
                Op::Ne => text(&have) != text(want),
                Op::Match(r) => r.is_match(&text(&have)),
                Op::NoMatch(r) => !r.is_match(&text(&have)),
                Op::Num(op) => match (have.as_f64(), want.as_f64()) {
                    (Some(h), Some(w)) => match *op {
                        "<" => h < w,
                        "<=" => h <= w,
                        ">" => h > w,
                        _ => h >= w,
                    },
                    _ => false,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::Inventory;
    use std::path::Path;

    fn inventory() -> Inventory {
        let yaml = "targets:\n  - name: web1\n    facts: {os: {family: Debian}, cpus: 4}\n  - name: web2\n    facts: {os: {family: RedHat}, cpus: 2}\n  - name: db1\n    facts: {os: {family: Debian}, cpus: 8}\n";
        Inventory::from_str(yaml, Path::new("inv.yaml")).unwrap()
    }

    fn names(q: &str) -> Vec<String> {
        let query = Query::parse(q).unwrap();
        inventory()
            .targets
            .iter()
            .filter(|t| query.matches(t))
            .map(|t| t.name.clone())
            .collect()
    }

    /// Runs `f` on a thread with the stack of a tokio worker (2 MiB).
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn pql_subset_over_inventory_facts() {
        assert_eq!(
            names(r#"nodes[certname] { facts.os.family = "Debian" }"#),
            ["web1", "db1"]
        );
        assert_eq!(
            names(r#"inventory[certname] { certname ~ "^web" and facts.cpus >= 4 }"#),
            ["web1"]
        );
        assert_eq!(
            names(r#"not facts.os.family = "Debian" or certname = "db1""#),
            ["web2", "db1"]
        );
        assert_eq!(
            names(r#"(certname = "web1" or certname = "web2") and facts.cpus < 3"#),
            ["web2"]
        );
        assert_eq!(
            names(r#"certname !~ "^web" or not not certname = "web2""#),
            ["web2", "db1"]
        );
        assert_eq!(names(r#"facts.missing = "x""#), Vec::<String>::new());
    }

    #[test]
    fn bad_queries_are_errors() {
        for q in [
            "nodes[certname] { facts.os = }",
            "certname",
            "facts.x = 'open",
            "nodes[certname] facts.x = 1",
            "certname = 1 extra",
            "certname ~ '('",
        ] {
            assert!(Query::parse(q).is_err(), "{q}");
        }
    }

    #[test]
    fn errors_name_the_position() {
        let err = Query::parse("certname = 'a' and facts.x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected an operator after facts.x, found the end of the query at character 27"
        );
        let err = Query::parse("certname = 'a' and ( oops").unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected certname or facts.<name>, found 'oops' at character 22"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_naming_the_limit() {
        let deep = [
            ("(".repeat(5_000), "5,000 parentheses"),
            ("not ".repeat(10_000) + "certname = 'a'", "10,000 nots"),
            ("(not ".repeat(5_000), "parentheses and nots"),
            ("[".repeat(5_000), "brackets"),
            (format!("nodes[certname] {}", "{".repeat(5_000)), "braces"),
        ];
        for (q, what) in deep {
            let err = on_small_stack(move || Query::parse(&q).map(|_| ()));
            let err = err.expect_err(what);
            assert!(
                matches!(
                    err,
                    PqlError::TooDeep {
                        max: MAX_NESTING,
                        ..
                    }
                ),
                "{what}: {err}"
            );
            assert!(err.to_string().contains("deeper than 64 levels"), "{err}");
        }
        let err = Query::parse(&"(".repeat(100)).unwrap_err();
        assert_eq!(
            err,
            PqlError::TooDeep {
                max: MAX_NESTING,
                at: 65
            }
        );
    }

    #[test]
    fn nesting_up_to_the_limit_works() {
        let n = MAX_NESTING;
        let q = format!("{}certname = 'web1'{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(names(&q), ["web1"]);
        let q = format!("{}certname = 'web1'", "not ".repeat(n));
        assert_eq!(names(&q), ["web1"]);
        let q = format!("{}certname = 'web1'", "not ".repeat(n - 1));
        assert_eq!(names(&q), ["web2", "db1"]);
        let q = format!("{}certname = 'web1'", "not ".repeat(n + 1));
        assert!(matches!(Query::parse(&q), Err(PqlError::TooDeep { .. })));
    }

    #[test]
    fn long_queries_are_refused_and_long_chains_stay_flat() {
        let huge = vec!["certname = 'a'"; 100_000].join(" and ");
        let err = Query::parse(&huge).unwrap_err();
        assert!(
            matches!(
                err,
                PqlError::TooLong {
                    max: MAX_QUERY_BYTES,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("65536 bytes"), "{err}");
        // Chains as long as the size allows parse, evaluate and drop
        // without recursion on a small stack.
        for sep in [" and ", " or "] {
            let mut terms = vec!["certname ~ 'web'"; 3_000];
            terms.push("certname = 'web2'");
            let q = terms.join(sep);
            assert!(q.len() <= MAX_QUERY_BYTES);
            let matched = on_small_stack(move || names(&q));
            let want: &[&str] = if sep == " and " {
                &["web2"]
            } else {
                &["web1", "web2"]
            };
            assert_eq!(matched, want);
        }
    }
}
