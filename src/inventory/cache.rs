//! Bolt's plugin cache: a reference with `_cache: {ttl: SECONDS}` (or
//! any cacheable reference, when the project sets `plugin-cache: {ttl}`)
//! keeps its resolved value in the project's `.plugin_cache.json` for
//! `ttl` seconds, so that a slow plugin (a task, a PuppetDB query) runs
//! once across runs. The file is Bolt's: an object of entries keyed by
//! the reference's id (Bolt's: the SHA-256 bubble-babble of the
//! reference's sorted `[key, value]` pairs as Ruby prints them, `_cache`
//! left out, first 21 characters), each `{result, mtime, ttl}` with
//! `mtime` as Ruby prints a time. Expired entries are dropped whenever
//! the file is read. This module is pure: the caller reads and writes the
//! file (through [`super::plugin::Env`]).

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::node::{Node, Value as NodeValue, key_text};

/// The plugins whose values ferry never writes to the cache: they hold
/// secrets (an environment variable, an answer typed at a prompt, a
/// decrypted value).
pub const NEVER_CACHED: &[&str] = &["env_var", "prompt", "pkcs7"];

/// Why a cache setting or the cache file is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    #[error("_cache must be a Hash, received {0}")]
    NotAHash(String),
    #[error("_cache must set 'ttl' key.")]
    NoTtl,
    #[error("'ttl' key under '_cache' must be a minimum of 0.")]
    BadTtl,
    #[error("the plugin cache is not a JSON object of entries ({0}); delete it to start afresh")]
    File(String),
}

/// The ttl a reference's `_cache` value sets (`None` when it has none).
pub fn ttl_of(cache: Option<&Node>) -> Result<Option<u64>, CacheError> {
    let Some(v) = cache else {
        return Ok(None);
    };
    let NodeValue::Map(entries) = &v.value else {
        return Err(CacheError::NotAHash(ruby_inspect(v)));
    };
    match entries.iter().find(|(k, _)| k.as_str() == Some("ttl")) {
        None => Err(CacheError::NoTtl),
        Some((_, t)) => match t.value {
            NodeValue::Int(n) => u64::try_from(n).map(Some).map_err(|_| CacheError::BadTtl),
            _ => Err(CacheError::BadTtl),
        },
    }
}

/// Bolt's id of a reference (its entries but `_cache`, in document
/// order, which Ruby's `inspect` keeps for nested hashes).
pub fn id(reference: &[(Node, Node)]) -> String {
    let mut pairs: Vec<(String, &Node, &Node)> = reference
        .iter()
        .map(|(k, v)| (key_text(k), k, v))
        .filter(|(k, _, _)| k != "_cache")
        .collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let items: Vec<String> = pairs
        .iter()
        .map(|(_, k, v)| format!("[{}, {}]", ruby_inspect(k), ruby_inspect(v)))
        .collect();
    let text = format!("[{}]", items.join(", "));
    let digest = Sha256::digest(text.as_bytes());
    bubblebabble(&digest).chars().take(21).collect()
}

/// The Bubble Babble encoding (as Ruby's `Digest.bubblebabble`).
fn bubblebabble(data: &[u8]) -> String {
    const V: &[u8] = b"aeiouy";
    const C: &[u8] = b"bcdfghklmnprstvzx";
    let mut out = String::from("x");
    let mut seed: usize = 1;
    let rounds = data.len() / 2 + 1;
    for i in 0..rounds {
        let last = i + 1 == rounds;
        if !last || data.len() % 2 == 1 {
            let b1 = data[2 * i] as usize;
            out.push(V[(((b1 >> 6) & 3) + seed) % 6] as char);
            out.push(C[(b1 >> 2) & 15] as char);
            out.push(V[((b1 & 3) + seed / 6) % 6] as char);
            if !last {
                let b2 = data[2 * i + 1] as usize;
                out.push(C[(b2 >> 4) & 15] as char);
                out.push('-');
                out.push(C[b2 & 15] as char);
                seed = (seed * 5 + b1 * 7 + b2) % 36;
            }
        } else {
            out.push(V[seed % 6] as char);
            out.push('x');
            out.push(V[seed / 6] as char);
        }
    }
    out.push('x');
    out
}

/// A value as Ruby's `inspect` prints the same data.
fn ruby_inspect(v: &Node) -> String {
    match &v.value {
        NodeValue::Null => "nil".into(),
        NodeValue::Bool(b) => b.to_string(),
        NodeValue::Int(i) => i.to_string(),
        NodeValue::Float(f) => ruby_float(*f),
        NodeValue::Str(s) => ruby_str(s),
        NodeValue::Seq(a) => format!(
            "[{}]",
            a.iter().map(ruby_inspect).collect::<Vec<_>>().join(", ")
        ),
        NodeValue::Map(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}=>{}", ruby_inspect(k), ruby_inspect(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn ruby_float(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        f.to_string()
    }
}

/// A string as Ruby's `String#inspect` prints it.
fn ruby_str(s: &str) -> String {
    let mut out = String::from("\"");
    let mut chars = s.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            '#' if matches!(chars.peek(), Some('{' | '$' | '@')) => out.push_str("\\#"),
            '\u{7f}' => out.push_str("\\x7F"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The cache file's entries.
#[derive(Debug, Default)]
pub struct Cache {
    entries: Map<String, Value>,
}

impl Cache {
    /// The cache from the file's text (`None`: no file yet).
    pub fn parse(text: Option<&str>) -> Result<Cache, CacheError> {
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            return Ok(Cache::default());
        };
        match serde_json::from_str(text) {
            Ok(Value::Object(entries)) => Ok(Cache { entries }),
            Ok(_) => Err(CacheError::File("not an object".into())),
            Err(e) => Err(CacheError::File(e.to_string())),
        }
    }

    /// Drops the entries older than their ttl; true when any was.
    pub fn expire(&mut self, now: chrono::DateTime<chrono::FixedOffset>) -> bool {
        let before = self.entries.len();
        self.entries.retain(|_, e| {
            let ttl = e.get("ttl").and_then(Value::as_u64);
            let mtime = e.get("mtime").and_then(Value::as_str).and_then(parse_time);
            match (ttl, mtime) {
                (Some(ttl), Some(t)) => {
                    let age = now.signed_duration_since(t).num_milliseconds();
                    age < (ttl as i64).saturating_mul(1000)
                }
                _ => false,
            }
        });
        self.entries.len() != before
    }

    /// The kept value of reference `id`.
    pub fn get(&self, id: &str) -> Option<&Value> {
        self.entries.get(id).and_then(|e| e.get("result"))
    }

    pub fn insert(
        &mut self,
        id: String,
        result: Value,
        now: chrono::DateTime<chrono::FixedOffset>,
        ttl: u64,
    ) {
        let mut e = Map::new();
        e.insert("result".into(), result);
        e.insert(
            "mtime".into(),
            Value::String(now.format("%Y-%m-%d %H:%M:%S %z").to_string()),
        );
        e.insert("ttl".into(), Value::from(ttl));
        self.entries.insert(id, Value::Object(e));
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn to_text(&self) -> String {
        Value::Object(self.entries.clone()).to_string()
    }
}

/// A time as Ruby prints one (`2026-11-24 19:43:13 +0000`), or RFC 3339.
fn parse_time(s: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S %z")
        .or_else(|_| chrono::DateTime::parse_from_rfc3339(s))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(yaml: &str) -> Node {
        let file = std::sync::Arc::new(std::path::PathBuf::from("t.yaml"));
        Node::from_yaml(crate::yaml::parse(yaml).unwrap(), &file, 0).unwrap()
    }

    #[test]
    fn ids_are_bolts() {
        // Ruby: Digest::SHA2.bubblebabble({...}.sort.to_s)[0..20]
        let r = node(
            "{_plugin: task, task: x, parameters: {b: 1, a: [true, null, 1.5, \"q\\\"1\\n\"]}, _cache: {ttl: 5}}",
        );
        let NodeValue::Map(entries) = &r.value else {
            panic!("{r:?}")
        };
        assert_eq!(id(entries), "xiver-calyc-mybyr-hon");
    }

    #[test]
    fn ttl_checks_are_bolts() {
        assert_eq!(ttl_of(None), Ok(None));
        assert_eq!(ttl_of(Some(&node("{ttl: 3}"))), Ok(Some(3)));
        assert_eq!(ttl_of(Some(&node("{}"))), Err(CacheError::NoTtl));
        assert_eq!(ttl_of(Some(&node("{ttl: -1}"))), Err(CacheError::BadTtl));
        assert_eq!(
            ttl_of(Some(&node("5"))).unwrap_err().to_string(),
            "_cache must be a Hash, received 5"
        );
    }

    #[test]
    fn entries_expire_after_their_ttl() {
        let t0 = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap();
        let mut c = Cache::default();
        c.insert("a".into(), json!(1), t0, 10);
        c.insert("b".into(), json!(2), t0, 100);
        let mut c = Cache::parse(Some(&c.to_text())).unwrap();
        assert!(!c.expire(t0 + chrono::Duration::seconds(9)));
        assert_eq!(c.get("a"), Some(&json!(1)));
        assert!(c.expire(t0 + chrono::Duration::seconds(10)));
        assert_eq!(c.get("a"), None);
        assert_eq!(c.get("b"), Some(&json!(2)));
        assert!(Cache::parse(Some("[]")).is_err());
    }
}
