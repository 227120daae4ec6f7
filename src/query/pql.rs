//! PuppetDB's query language (PQL) as text, read into a [`Query`]:
//! `inventory[certname, facts.os.family] { facts.os.family = "Debian" and
//! certname ~ "^web" order by certname desc limit 10 }`. Entities `nodes`,
//! `inventory`, `facts` and `fact_contents`; a projection in brackets;
//! conditions with `=`, `!=`, `~`, `!~`, `<`, `<=`, `>`, `>=`, `in [..]`,
//! `in entity[field] { .. }` (a subquery), `is null` and `is not null`;
//! `and`, `or`, `!` (PuppetDB's negation; ferry also reads `not`) and
//! parentheses; `order by`, `limit`, `offset`. A
//! filter alone (the braces' contents without an entity) is a `nodes` query,
//! as job scopes write it.
//!
//! A query comes from the network, so its size is bounded before anything
//! else ([`MAX_QUERY_BYTES`]), and so is its nesting ([`MAX_NESTING`]:
//! parentheses, brackets, braces, subqueries and `not` count alike). `and`
//! and `or` chains are kept flat, so evaluating or dropping a query never
//! recurses deeper than its nesting. Errors name the character (from 1)
//! where the problem is.

use serde_json::Value;

use super::model::{Entity, Expr, Field, Op, Query};

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
    /// A query in PuppetDB's AST form that ferry cannot read; `at` is
    /// where in the JSON (`query[2][1]`).
    #[error("{msg} at {at}")]
    Ast { msg: String, at: String },
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
    Comma,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Word(w) => format!("'{w}'"),
            Tok::Str(s) => format!("the string \"{s}\""),
            Tok::Num(n) => format!("the number {n}"),
            Tok::Op(op) => format!("'{op}'"),
            Tok::Open(c) | Tok::Close(c) => format!("'{c}'"),
            Tok::Comma => "','".into(),
        }
    }
}

/// A token and the position (in characters, from 1) where it starts.
type Located = (Tok, usize);

/// Words that are not field names.
const KEYWORDS: &[&str] = &[
    "and", "or", "not", "in", "is", "null", "order", "by", "limit", "offset", "asc", "desc",
    "true", "false",
];

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
            ',' => {
                out.push((Tok::Comma, at));
                i += 1
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
                let op = ["!=", "!~", "<=", ">=", "=", "~", "<", ">", "!"]
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

/// The fields each entity has, for the check that names the known ones.
pub(super) fn known_fields(entity: Entity) -> &'static [&'static str] {
    match entity {
        Entity::Nodes => &[
            "certname",
            "deactivated",
            "expired",
            "facts_environment",
            "facts_timestamp",
            "catalog_environment",
            "catalog_timestamp",
            "report_environment",
            "report_timestamp",
            "latest_report_status",
            "latest_report_hash",
            "latest_report_noop",
            "latest_report_noop_pending",
            "latest_report_corrective_change",
            "latest_report_job_id",
            "cached_catalog_status",
            "facts",
        ],
        Entity::Inventory => &["certname", "timestamp", "environment", "facts", "trusted"],
        Entity::Facts => &["certname", "environment", "name", "value"],
        Entity::FactContents => &["certname", "environment", "path", "name", "value"],
    }
}

/// Whether `field` is one of `entity`'s (a path below `facts` or
/// `trusted` for the entities that hold them; `facts.x` on `nodes` is
/// ferry's shorthand for the node's facts, kept for job scopes).
pub(super) fn check_field(entity: Entity, field: &Field) -> Result<(), String> {
    let known = known_fields(entity);
    let head = field.0.first().map(String::as_str).unwrap_or("");
    let nests = matches!(head, "facts" | "trusted");
    if known.contains(&head) && (field.0.len() == 1 || nests) {
        return Ok(());
    }
    // PuppetDB's wording; `facts` on nodes is ferry's extension, not listed.
    let listed: Vec<String> = known
        .iter()
        .filter(|k| !(entity == Entity::Nodes && **k == "facts"))
        .map(|k| format!("'{k}'"))
        .collect();
    let list = match listed.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{}, and {last}", rest.join(", ")),
        _ => listed.join(""),
    };
    Err(format!(
        "'{}' is not a queryable object for {}. Known queryable objects are {list}",
        field.text(),
        entity.name(),
    ))
}

struct Parser {
    toks: Vec<Located>,
    at: usize,
    /// Where the query ends (for errors at its end).
    end: usize,
    /// Open parentheses, subqueries and `not`s around the current position.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|(t, _)| t)
    }
    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.at + n).map(|(t, _)| t)
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
    fn expected(&self, what: &str) -> PqlError {
        syntax(
            format!("expected {what}, found {}", self.found()),
            self.pos(),
        )
    }
    fn expect(&mut self, tok: Tok, what: &str) -> Result<(), PqlError> {
        if self.peek() != Some(&tok) {
            return Err(self.expected(what));
        }
        self.at += 1;
        Ok(())
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

    /// Whether the tokens here start `entity[` or `entity {`.
    fn at_entity(&self) -> Option<Entity> {
        let Some(Tok::Word(w)) = self.peek() else {
            return None;
        };
        let e = Entity::from_name(w)?;
        matches!(self.peek_at(1), Some(Tok::Open('[' | '{')) | None).then_some(e)
    }

    /// `entity [fields] { filter paging }`.
    fn query(&mut self) -> Result<Query, PqlError> {
        let at = self.pos();
        let entity = match self.next() {
            Some(Tok::Word(w)) => match Entity::from_name(&w) {
                Some(e) => e,
                None if Entity::puppetdb_only(&w) => {
                    return Err(syntax(
                        format!(
                            "the entity '{w}' is answered only by a PuppetDB (configure one: puppetdb in bolt-project.yaml); ferry's stored facts answer nodes, inventory, facts and fact_contents"
                        ),
                        at,
                    ));
                }
                None => {
                    return Err(syntax(
                        format!(
                            "'{w}' is not an entity (expected nodes, inventory, facts or fact_contents)"
                        ),
                        at,
                    ));
                }
            },
            _ => {
                self.at -= 1;
                return Err(self.expected("an entity"));
            }
        };
        let mut q = Query::filter(entity, None);
        if self.peek() == Some(&Tok::Open('[')) {
            self.at += 1;
            loop {
                let at = self.pos();
                let f = match self.next() {
                    Some(Tok::Word(w)) if !KEYWORDS.contains(&w.as_str()) => Field::parse(&w),
                    _ => {
                        self.at -= 1;
                        return Err(self.expected("a field"));
                    }
                };
                check_field(entity, &f).map_err(|m| syntax(m, at))?;
                q.fields.push(f);
                match self.next() {
                    Some(Tok::Comma) => continue,
                    Some(Tok::Close(']')) => break,
                    _ => {
                        self.at -= 1;
                        return Err(self.expected("',' or ']'"));
                    }
                }
            }
        }
        if self.peek() != Some(&Tok::Open('{')) {
            return Ok(q);
        }
        self.at += 1;
        if !self.paging_word() && self.peek() != Some(&Tok::Close('}')) {
            q.filter = Some(self.or(entity)?);
        }
        self.paging(&mut q)?;
        self.expect(Tok::Close('}'), "'}'")?;
        Ok(q)
    }

    fn paging_word(&self) -> bool {
        self.word("order") || self.word("limit") || self.word("offset")
    }

    fn paging(&mut self, q: &mut Query) -> Result<(), PqlError> {
        while self.paging_word() {
            let Some(Tok::Word(w)) = self.next() else {
                break;
            };
            match w.as_str() {
                "order" => {
                    if !self.word("by") {
                        return Err(self.expected("'by'"));
                    }
                    self.at += 1;
                    loop {
                        let at = self.pos();
                        let f = match self.next() {
                            Some(Tok::Word(w)) if !KEYWORDS.contains(&w.as_str()) => {
                                Field::parse(&w)
                            }
                            _ => {
                                self.at -= 1;
                                return Err(self.expected("a field to order by"));
                            }
                        };
                        check_field(q.entity, &f).map_err(|m| syntax(m, at))?;
                        let desc = if self.word("desc") {
                            self.at += 1;
                            true
                        } else {
                            if self.word("asc") {
                                self.at += 1;
                            }
                            false
                        };
                        q.order.push((f, desc));
                        if self.peek() != Some(&Tok::Comma) {
                            break;
                        }
                        self.at += 1;
                    }
                }
                _ => {
                    let at = self.pos();
                    let n = match self.next() {
                        Some(Tok::Num(n)) if n >= 0.0 && n.fract() == 0.0 => n as usize,
                        _ => {
                            return Err(syntax(
                                format!("{w} needs a whole number that is not negative"),
                                at,
                            ));
                        }
                    };
                    if w == "limit" {
                        q.limit = Some(n);
                    } else {
                        q.offset = Some(n);
                    }
                }
            }
        }
        Ok(())
    }

    fn or(&mut self, e: Entity) -> Result<Expr, PqlError> {
        let mut all = vec![self.and(e)?];
        while self.word("or") {
            self.at += 1;
            all.push(self.and(e)?);
        }
        Ok(match all.len() {
            1 => all.remove(0),
            _ => Expr::Or(all),
        })
    }

    fn and(&mut self, e: Entity) -> Result<Expr, PqlError> {
        let mut all = vec![self.not(e)?];
        while self.word("and") {
            self.at += 1;
            all.push(self.not(e)?);
        }
        Ok(match all.len() {
            1 => all.remove(0),
            _ => Expr::And(all),
        })
    }

    fn not(&mut self, entity: Entity) -> Result<Expr, PqlError> {
        if self.word("not") || self.peek() == Some(&Tok::Op("!")) {
            self.enter()?;
            self.at += 1;
            let e = Expr::Not(Box::new(self.not(entity)?));
            self.depth -= 1;
            return Ok(e);
        }
        if self.peek() == Some(&Tok::Open('(')) {
            self.enter()?;
            self.at += 1;
            let e = self.or(entity)?;
            self.expect(Tok::Close(')'), "')'")?;
            self.depth -= 1;
            return Ok(e);
        }
        self.condition(entity)
    }

    fn condition(&mut self, entity: Entity) -> Result<Expr, PqlError> {
        let at = self.pos();
        let field = match self.next() {
            Some(Tok::Word(w)) if !KEYWORDS.contains(&w.as_str()) => Field::parse(&w),
            _ => {
                self.at -= 1;
                return Err(self.expected("a field (certname, facts.<name>, ...)"));
            }
        };
        check_field(entity, &field).map_err(|m| syntax(m, at))?;
        let name = field.text();
        if self.word("is") {
            self.at += 1;
            let not = self.word("not");
            if not {
                self.at += 1;
            }
            if !self.word("null") {
                return Err(self.expected("'null'"));
            }
            self.at += 1;
            return Ok(Expr::Null(field, !not));
        }
        if self.word("in") {
            self.at += 1;
            if self.peek() == Some(&Tok::Open('[')) {
                self.at += 1;
                let mut values = Vec::new();
                while self.peek() != Some(&Tok::Close(']')) {
                    values.push(self.value(&format!("{name} in ["))?);
                    match self.peek() {
                        Some(Tok::Comma) => self.at += 1,
                        Some(Tok::Close(']')) => {}
                        _ => return Err(self.expected("',' or ']'")),
                    }
                }
                self.at += 1;
                return Ok(Expr::In(field, values));
            }
            if self.at_entity().is_some() {
                self.enter()?;
                let at = self.pos();
                let sub = self.query()?;
                self.depth -= 1;
                if sub.fields.len() != 1 {
                    return Err(syntax(
                        "a subquery after 'in' must project exactly one field",
                        at,
                    ));
                }
                return Ok(Expr::InQuery(field, Box::new(sub)));
            }
            return Err(self.expected("'[' or a subquery after 'in'"));
        }
        let at = self.pos();
        let op = match self.next() {
            Some(Tok::Op(op)) => op,
            _ => {
                self.at -= 1;
                return Err(syntax(
                    format!("expected an operator after {name}, found {}", self.found()),
                    at,
                ));
            }
        };
        let at = self.pos();
        let value = self.value(&format!("{name} {op}"))?;
        let regex = || {
            let text = match &value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            regex::Regex::new(&text)
                .map_err(|e| syntax(format!("invalid regular expression: {e}"), at))
        };
        let op = match op {
            "=" => Op::Eq,
            "!=" => Op::Ne,
            "~" => Op::Match(regex()?),
            "!~" => Op::NoMatch(regex()?),
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            _ => Op::Ge,
        };
        Ok(Expr::Cmp(field, op, value))
    }

    fn value(&mut self, after: &str) -> Result<Value, PqlError> {
        let at = self.pos();
        Ok(match self.next() {
            Some(Tok::Str(s)) => Value::String(s),
            Some(Tok::Num(n)) => number(n),
            Some(Tok::Word(w)) if w == "true" || w == "false" => Value::Bool(w == "true"),
            Some(Tok::Word(w)) if w == "null" => Value::Null,
            _ => {
                self.at -= 1;
                return Err(syntax(
                    format!("expected a value after {after}, found {}", self.found()),
                    at,
                ));
            }
        })
    }
}

/// A number as JSON: whole numbers as integers, so they compare and print
/// as PuppetDB's do.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

impl Query {
    /// Reads PQL text: a whole query, or a filter alone (over `nodes`).
    pub fn parse(q: &str) -> Result<Query, PqlError> {
        if q.len() > MAX_QUERY_BYTES {
            return Err(PqlError::TooLong {
                len: q.len(),
                max: MAX_QUERY_BYTES,
            });
        }
        let end = q.chars().count() + 1;
        let toks = lex(q)?;
        let mut p = Parser {
            toks,
            at: 0,
            end,
            depth: 0,
        };
        let query = if p.at_entity().is_some() {
            p.query()?
        } else {
            Query::filter(Entity::Nodes, Some(p.or(Entity::Nodes)?))
        };
        if p.at != p.toks.len() {
            return Err(syntax(format!("unexpected {}", p.found()), p.pos()));
        }
        Ok(query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::NodeFacts;

    fn inventory() -> Vec<NodeFacts> {
        let node = |name: &str, facts: serde_json::Value| NodeFacts {
            certname: name.into(),
            environment: None,
            facts: facts.as_object().cloned().unwrap(),
        };
        vec![
            node(
                "web1",
                serde_json::json!({"os": {"family": "Debian"}, "cpus": 4}),
            ),
            node(
                "web2",
                serde_json::json!({"os": {"family": "RedHat"}, "cpus": 2}),
            ),
            node(
                "db1",
                serde_json::json!({"os": {"family": "Debian"}, "cpus": 8}),
            ),
        ]
    }

    fn names(q: &str) -> Vec<String> {
        let query = Query::parse(q).unwrap();
        inventory()
            .iter()
            .filter(|t| query.selects(&t.certname, &t.facts))
            .map(|t| t.certname.clone())
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
        let err = Query::parse("certname = 'a' and ( oops = 1")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "'oops' is not a queryable object for nodes. Known queryable objects are 'certname', 'deactivated',"
            ) && err.ends_with(", and 'cached_catalog_status' at character 22"),
            "{err}"
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
