//! Reading the config text: the `ssh2-config` parse call, the line-for-line
//! rewrite of `Match` blocks that crate does not know, and finding the
//! `file:line` of a parse error or of an option with a bad value.

use std::path::Path;

use ssh2_config::{ParseRule, SshConfig, SshParserError};

use super::LocalEnv;

pub(super) fn parse(text: &str, env: &LocalEnv) -> Result<SshConfig, SshParserError> {
    let mut config = SshConfig::default();
    if let Some(home) = &env.home {
        config = config.home_dir(home);
    }
    // Unknown options (newer OpenSSH keywords, macOS-only ones) must not make
    // the whole config unusable; unsupported ones are kept so we can read the
    // few we interpret ourselves.
    config.parse(
        &mut text.as_bytes(),
        ParseRule::ALLOW_UNKNOWN_FIELDS | ParseRule::ALLOW_UNSUPPORTED_FIELDS,
    )
}

/// Find the line at which parsing starts failing: parsing stops at the first
/// bad line, so "the first `n` lines fail" is monotonic in `n`.
pub(super) fn locate_parse_error(text: &str, env: &LocalEnv) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let fails = |n: usize| parse(&lines[..n].join("\n"), env).is_err();
    if !fails(lines.len()) {
        return None;
    }
    let (mut ok, mut bad) = (0, lines.len());
    while bad - ok > 1 {
        let mid = ok + (bad - ok) / 2;
        if fails(mid) {
            bad = mid;
        } else {
            ok = mid;
        }
    }
    Some(bad)
}

/// Split a config line into its keyword and the rest (`Key value`, `Key=value`).
fn split_keyword(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_start();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let end = line
        .find(|c: char| c.is_whitespace() || c == '=')
        .unwrap_or(line.len());
    let (keyword, rest) = line.split_at(end);
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('=').unwrap_or(rest).trim();
    Some((keyword, rest))
}

/// Best-effort line number (1-based) of `option value` in the main file.
pub(super) fn locate_option(text: &str, option: &str, value: &str) -> Option<usize> {
    text.lines().enumerate().find_map(|(index, line)| {
        let (keyword, rest) = split_keyword(line)?;
        (keyword.eq_ignore_ascii_case(option) && rest.contains(value)).then_some(index + 1)
    })
}

/// `ssh2-config` does not know `Match`. Rewrite, line for line (so line
/// numbers stay valid), `Match all` to `Host *` and a lone `Match host` /
/// `Match originalhost` criterion to the equivalent `Host` line; any other
/// `Match` becomes a block that matches nothing, with a warning.
pub(super) fn rewrite_match_lines(text: &str, file: &Path) -> String {
    let mut out = String::with_capacity(text.len());
    for (index, line) in text.lines().enumerate() {
        match split_keyword(line) {
            Some((keyword, rest)) if keyword.eq_ignore_ascii_case("match") => {
                let criteria = rest.split('#').next().unwrap_or_default();
                let words: Vec<&str> = criteria.split_whitespace().collect();
                match words.as_slice() {
                    [all] if all.eq_ignore_ascii_case("all") => out.push_str("Host *"),
                    [kind, list]
                        if kind.eq_ignore_ascii_case("host")
                            || kind.eq_ignore_ascii_case("originalhost") =>
                    {
                        out.push_str("Host");
                        for pattern in list.trim_matches('"').split(',') {
                            if !pattern.is_empty() {
                                out.push(' ');
                                out.push_str(pattern);
                            }
                        }
                    }
                    _ => {
                        tracing::warn!(
                            "{}:{}: `Match {}` is not supported (only `all`, `host` and `originalhost`); ignoring this block",
                            file.display(),
                            index + 1,
                            criteria.trim()
                        );
                        out.push_str("Host !*");
                    }
                }
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}
