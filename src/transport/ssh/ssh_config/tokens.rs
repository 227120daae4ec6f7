//! `~` and `%` token expansion in option values: `%h` / `%%` for
//! `HostName`, and `%%`, `%d`, `%h`, `%n`, `%p`, `%r`, `%u` for path options.

use std::collections::HashMap;
use std::path::Path;

/// Why a `%` token cannot be expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum TokenError {
    #[error("%{0} has no value here")]
    NoValue(char),
    #[error("unsupported token %{0}")]
    Unsupported(char),
    #[error("trailing %")]
    Trailing,
}

/// Expand a leading `~` or `~/` against `home` (left alone when unknown).
pub(super) fn expand_tilde(value: &str, home: Option<&Path>) -> String {
    match (value.strip_prefix('~'), home) {
        (Some(""), Some(home)) => home.to_string_lossy().into_owned(),
        (Some(rest), Some(home)) if rest.starts_with('/') => home
            .join(rest.trim_start_matches('/'))
            .to_string_lossy()
            .into_owned(),
        _ => value.to_string(),
    }
}

/// `HostName` accepts only `%h` and `%%`.
pub(super) fn expand_hostname(value: &str, host: &str) -> Result<String, TokenError> {
    let mut table = HashMap::new();
    table.insert('h', Some(host.to_string()));
    expand_tokens(value, &table)
}

pub(super) struct Tokens<'a> {
    pub(super) original_host: &'a str,
    pub(super) hostname: &'a str,
    pub(super) port: u16,
    pub(super) remote_user: Option<&'a str>,
    pub(super) local_user: Option<&'a str>,
    pub(super) home: Option<&'a Path>,
}

impl Tokens<'_> {
    /// Expand `%%`, `%d`, `%h`, `%n`, `%p`, `%r`, `%u` in a path option.
    pub(super) fn expand(&self, value: &str) -> Result<String, TokenError> {
        let mut table = HashMap::new();
        table.insert('d', self.home.map(|h| h.to_string_lossy().into_owned()));
        table.insert('h', Some(self.hostname.to_string()));
        table.insert('n', Some(self.original_host.to_string()));
        table.insert('p', Some(self.port.to_string()));
        table.insert('r', self.remote_user.map(str::to_string));
        table.insert('u', self.local_user.map(str::to_string));
        expand_tokens(value, &table)
    }
}

fn expand_tokens(value: &str, table: &HashMap<char, Option<String>>) -> Result<String, TokenError> {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some(token) => match table.get(&token) {
                Some(Some(replacement)) => out.push_str(replacement),
                Some(None) => return Err(TokenError::NoValue(token)),
                None => return Err(TokenError::Unsupported(token)),
            },
            None => return Err(TokenError::Trailing),
        }
    }
    Ok(out)
}
