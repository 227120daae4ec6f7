//! Puppet regular expressions (Ruby syntax) compiled with the `regex`
//! crate: Ruby-only escapes (`\A`, `\z`, `\h`...) are translated and the
//! compiled size is bounded. A pattern the `regex` crate cannot compile
//! because it uses look-around or back-references (stdlib's
//! `Stdlib::Compat::Ipv4` is full of `(?!\d)`) is compiled with
//! `fancy-regex` instead, behind [`RubyRegex`]; the fast path stays the
//! `regex` crate. Compiled patterns are cached for the process: type
//! checks match the same aliases over and over, and a server compiles
//! every catalog on a fresh compiler thread (building a regex's automaton
//! costs far more than matching with it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::lang::values::error::ValueError;

fn translate(pattern: &str) -> String {
    pattern
        .replace("\\A", "^")
        .replace("\\z", "$")
        .replace("\\Z", "$")
        .replace("\\0", "\\x00")
        .replace("\\h", "[0-9a-fA-F]")
}

/// Bound of each cache of compiled patterns (past it, the cache starts over).
const CACHE_MAX: usize = 4096;

/// A process-wide cache of compiled patterns, by pattern text.
struct Cache<T>(OnceLock<Mutex<HashMap<String, T>>>);

impl<T: Clone> Cache<T> {
    const fn new() -> Cache<T> {
        Cache(OnceLock::new())
    }

    fn get_or(
        &self,
        pattern: &str,
        make: impl FnOnce() -> Result<T, ValueError>,
    ) -> Result<T, ValueError> {
        let map = self.0.get_or_init(Default::default);
        if let Some(found) = map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(pattern)
        {
            return Ok(found.clone());
        }
        let made = make()?;
        let mut map = map.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= CACHE_MAX {
            map.clear();
        }
        map.insert(pattern.to_string(), made.clone());
        Ok(made)
    }
}

static PLAIN: Cache<regex::Regex> = Cache::new();
static RUBY: Cache<Arc<RubyRegex>> = Cache::new();

/// Compile a Puppet regex (Ruby syntax subset) with the `regex` crate
/// (cached: a clone shares the compiled automaton).
pub fn compile_regex(pattern: &str) -> Result<regex::Regex, ValueError> {
    PLAIN.get_or(pattern, || {
        regex::RegexBuilder::new(&translate(pattern))
            .size_limit(1 << 20)
            .build()
            .map_err(|e| ValueError(format!("Invalid regular expression /{pattern}/: {e}")))
    })
}

/// A compiled Puppet regex: the `regex` crate's, or `fancy-regex`'s for
/// look-around and back-references.
#[derive(Debug)]
pub enum RubyRegex {
    Plain(regex::Regex),
    Fancy(fancy_regex::Regex),
}

impl RubyRegex {
    /// Compile `pattern` (cached).
    pub fn new(pattern: &str) -> Result<Arc<RubyRegex>, ValueError> {
        RUBY.get_or(pattern, || {
            let compiled = match compile_regex(pattern) {
                Ok(r) => RubyRegex::Plain(r),
                Err(plain_err) => fancy_regex::RegexBuilder::new(&translate(pattern))
                    .delegate_size_limit(1 << 20)
                    .backtrack_limit(1_000_000)
                    .build()
                    .map(RubyRegex::Fancy)
                    .map_err(|_| plain_err)?,
            };
            Ok(Arc::new(compiled))
        })
    }

    /// Does the pattern match somewhere in `s`? (A look-around pattern that
    /// exceeds its backtracking limit does not match.)
    pub fn is_match(&self, s: &str) -> bool {
        match self {
            RubyRegex::Plain(r) => r.is_match(s),
            RubyRegex::Fancy(r) => r.is_match(s).unwrap_or(false),
        }
    }

    /// The groups of the first match (`$0`, `$1`...), None when no match.
    pub fn captures(&self, s: &str) -> Option<Vec<Option<String>>> {
        match self {
            RubyRegex::Plain(r) => r.captures(s).map(|c| {
                c.iter()
                    .map(|m| m.map(|m| m.as_str().to_string()))
                    .collect()
            }),
            RubyRegex::Fancy(r) => r.captures(s).ok().flatten().map(|c| {
                c.iter()
                    .map(|m| m.map(|m| m.as_str().to_string()))
                    .collect()
            }),
        }
    }
}
