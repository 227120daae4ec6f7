//! Puppet regular expressions (Ruby syntax) compiled with the `regex`
//! crate: Ruby-only escapes (`\A`, `\z`, `\h`...) are translated and the
//! compiled size is bounded.

use crate::lang::values::error::ValueError;

/// Compile a Puppet regex (Ruby syntax subset) with the `regex` crate.
pub fn compile_regex(pattern: &str) -> Result<regex::Regex, ValueError> {
    let translated = pattern
        .replace("\\A", "^")
        .replace("\\z", "$")
        .replace("\\Z", "$")
        .replace("\\0", "\\x00")
        .replace("\\h", "[0-9a-fA-F]");
    regex::RegexBuilder::new(&translated)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| ValueError(format!("Invalid regular expression /{pattern}/: {e}")))
}
