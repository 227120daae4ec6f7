//! Puppet regular expressions (Ruby syntax) compiled with the `regex`
//! crate: Ruby-only escapes (`\A`, `\z`, `\h`...) are translated and the
//! compiled size is bounded. A pattern the `regex` crate cannot compile
//! because it uses look-around or back-references (stdlib's
//! `Stdlib::Compat::Ipv4` is full of `(?!\d)`) is compiled with
//! `fancy-regex` instead, behind [`RubyRegex`]; the fast path stays the
//! `regex` crate. Compiled patterns are cached per thread: type checks
//! match the same aliases over and over.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::lang::values::error::ValueError;

fn translate(pattern: &str) -> String {
    pattern
        .replace("\\A", "^")
        .replace("\\z", "$")
        .replace("\\Z", "$")
        .replace("\\0", "\\x00")
        .replace("\\h", "[0-9a-fA-F]")
}

/// Compile a Puppet regex (Ruby syntax subset) with the `regex` crate.
pub fn compile_regex(pattern: &str) -> Result<regex::Regex, ValueError> {
    regex::RegexBuilder::new(&translate(pattern))
        .size_limit(1 << 20)
        .build()
        .map_err(|e| ValueError(format!("Invalid regular expression /{pattern}/: {e}")))
}

/// A compiled Puppet regex: the `regex` crate's, or `fancy-regex`'s for
/// look-around and back-references.
#[derive(Debug)]
pub enum RubyRegex {
    Plain(regex::Regex),
    Fancy(fancy_regex::Regex),
}

/// Bound of the per-thread cache of compiled patterns.
const CACHE_MAX: usize = 512;

thread_local! {
    static CACHE: RefCell<HashMap<String, Rc<RubyRegex>>> = RefCell::new(HashMap::new());
}

impl RubyRegex {
    /// Compile `pattern` (cached).
    pub fn new(pattern: &str) -> Result<Rc<RubyRegex>, ValueError> {
        if let Some(r) = CACHE.with(|c| c.borrow().get(pattern).cloned()) {
            return Ok(r);
        }
        let compiled = match compile_regex(pattern) {
            Ok(r) => RubyRegex::Plain(r),
            Err(plain_err) => fancy_regex::RegexBuilder::new(&translate(pattern))
                .delegate_size_limit(1 << 20)
                .backtrack_limit(1_000_000)
                .build()
                .map(RubyRegex::Fancy)
                .map_err(|_| plain_err)?,
        };
        let rc = Rc::new(compiled);
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            if c.len() >= CACHE_MAX {
                c.clear();
            }
            c.insert(pattern.to_string(), rc.clone());
        });
        Ok(rc)
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
