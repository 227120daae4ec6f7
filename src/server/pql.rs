//! A subset of PuppetDB's query language (PQL) for job scopes, evaluated
//! against the server's inventory instead of a PuppetDB: `nodes[certname]
//! { facts.os.family = "Debian" and certname ~ "^web" }` (or `inventory[...]`,
//! or the braces' contents alone). Fields are `certname` (the target name)
//! and `facts.<path>` (the inventory's facts); operators `=`, `!=`, `~`,
//! `!~`, `<`, `<=`, `>`, `>=`; `and`, `or`, `not` and parentheses.

use serde_json::Value;

use crate::inventory::Target;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Num(f64),
    Op(&'static str),
    Open(char),
    Close(char),
}

#[derive(Debug)]
enum Expr {
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Cmp(Vec<String>, &'static str, Value),
}

fn lex(q: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = q.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | '\r' => i += 1,
            '[' | '{' | '(' => {
                out.push(Tok::Open(c));
                i += 1
            }
            ']' | '}' | ')' => {
                out.push(Tok::Close(c));
                i += 1
            }
            '"' | '\'' => {
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err("an unclosed string".into()),
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
                out.push(Tok::Str(s));
                i += 1;
            }
            '=' | '~' | '<' | '>' | '!' => {
                let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
                let op = ["!=", "!~", "<=", ">=", "=", "~", "<", ">"]
                    .into_iter()
                    .find(|op| two.starts_with(op))
                    .ok_or_else(|| format!("unexpected '{c}'"))?;
                out.push(Tok::Op(op));
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
                out.push(Tok::Num(
                    text.parse().map_err(|_| format!("bad number '{text}'"))?,
                ));
            }
            c if c.is_alphanumeric() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
                {
                    i += 1;
                }
                out.push(Tok::Word(chars[start..i].iter().collect()));
            }
            other => return Err(format!("unexpected '{other}'")),
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }
    fn word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x == w)
    }
    fn or(&mut self) -> Result<Expr, String> {
        let mut left = self.and()?;
        while self.word("or") {
            self.at += 1;
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }
    fn and(&mut self) -> Result<Expr, String> {
        let mut left = self.not()?;
        while self.word("and") {
            self.at += 1;
            left = Expr::And(Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }
    fn not(&mut self) -> Result<Expr, String> {
        if self.word("not") {
            self.at += 1;
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        if self.peek() == Some(&Tok::Open('(')) {
            self.at += 1;
            let e = self.or()?;
            return match self.next() {
                Some(Tok::Close(')')) => Ok(e),
                _ => Err("a missing ')'".into()),
            };
        }
        let field = match self.next() {
            Some(Tok::Word(w)) if w == "certname" || w.starts_with("facts.") => w,
            other => {
                return Err(format!(
                    "expected certname or facts.<name>, found {other:?}"
                ));
            }
        };
        let op = match self.next() {
            Some(Tok::Op(op)) => op,
            other => {
                return Err(format!(
                    "expected an operator after {field}, found {other:?}"
                ));
            }
        };
        let value = match self.next() {
            Some(Tok::Str(s)) => Value::String(s),
            Some(Tok::Num(n)) => serde_json::Number::from_f64(n)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            Some(Tok::Word(w)) if w == "true" || w == "false" => Value::Bool(w == "true"),
            other => {
                return Err(format!(
                    "expected a value after {field} {op}, found {other:?}"
                ));
            }
        };
        Ok(Expr::Cmp(
            field.split('.').map(str::to_string).collect(),
            op,
            value,
        ))
    }
}

/// A parsed query, ready to test targets.
pub struct Query(Expr);

impl Query {
    pub fn parse(q: &str) -> Result<Query, String> {
        let mut toks = lex(q)?;
        // `nodes[certname] { ... }` / `inventory[certname] { ... }`: keep the braces' contents.
        if matches!(toks.first(), Some(Tok::Word(w)) if w == "nodes" || w == "inventory") {
            let open = toks
                .iter()
                .position(|t| *t == Tok::Open('{'))
                .ok_or("expected '{'")?;
            if toks.last() != Some(&Tok::Close('}')) {
                return Err("expected '}' at the end".into());
            }
            toks = toks[open + 1..toks.len() - 1].to_vec();
        }
        let mut p = Parser { toks, at: 0 };
        let e = p.or()?;
        if p.at != p.toks.len() {
            return Err(format!("unexpected {:?}", p.peek()));
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

fn eval(e: &Expr, t: &Target) -> bool {
    match e {
        Expr::And(a, b) => eval(a, t) && eval(b, t),
        Expr::Or(a, b) => eval(a, t) || eval(b, t),
        Expr::Not(a) => !eval(a, t),
        Expr::Cmp(path, op, want) => {
            let Some(have) = field(path, t) else {
                return false;
            };
            let text = |v: &Value| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            match *op {
                "=" => text(&have) == text(want),
                "!=" => text(&have) != text(want),
                "~" | "!~" => {
                    let hit =
                        regex::Regex::new(&text(want)).is_ok_and(|r| r.is_match(&text(&have)));
                    hit == (*op == "~")
                }
                _ => match (have.as_f64(), want.as_f64()) {
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
        ] {
            assert!(Query::parse(q).is_err(), "{q}");
        }
    }
}
