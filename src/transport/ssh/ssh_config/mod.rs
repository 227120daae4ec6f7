//! OpenSSH client configuration (`~/.ssh/config`) resolution for the SSH transport.
//!
//! This module owns turning an OpenSSH client config file plus a target host
//! name into the handful of settings ferry honours ([`HostConfig`]): host
//! name, user, port, identity files, `ProxyJump` hops, user known-hosts files,
//! `StrictHostKeyChecking` and `ConnectTimeout`. Parsing, `Host` pattern
//! matching (wildcards, negation, multiple patterns), `Include` and
//! first-obtained-value-wins are delegated to the `ssh2-config` crate; this
//! module adds what that crate lacks: `Match all` / `Match host` blocks,
//! the options it parses but does not interpret (`UserKnownHostsFile`,
//! `StrictHostKeyChecking`), `%` token expansion, and error positions
//! (`file:line`). Whether to read the config at all is the caller's choice.

mod parse;
#[cfg(test)]
mod tests;
mod tokens;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ssh2_config::SshParserError;

use self::parse::{locate_option, locate_parse_error, parse, rewrite_match_lines};
use self::tokens::{Tokens, expand_hostname, expand_tilde};

/// How to treat a server host key that is not (yet) in `known_hosts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrictHostKeyChecking {
    /// Only connect to hosts whose key is already known (`yes`; also `ask`,
    /// since ferry never prompts).
    Yes,
    /// Record keys of unknown hosts, refuse changed keys (`accept-new`).
    AcceptNew,
    /// Accept any key (`no` / `off`).
    No,
}

/// The settings resolved for one host. `None` / empty means "not set in the
/// config": the caller applies its own defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostConfig {
    /// `HostName`, with `%h` / `%%` expanded.
    pub hostname: Option<String>,
    /// `User`.
    pub user: Option<String>,
    /// `Port`.
    pub port: Option<u16>,
    /// All `IdentityFile`s of all matching blocks, in order, `~` and tokens expanded.
    pub identity_files: Vec<PathBuf>,
    /// `ProxyJump` hops in order (`[user@]host[:port]` or `ssh://` URIs, as
    /// written); empty when unset or `none`.
    pub proxy_jump: Vec<String>,
    /// `UserKnownHostsFile`s, `~` and tokens expanded; empty when unset or
    /// `none` (the two are not distinguished: callers use their defaults).
    pub user_known_hosts_files: Vec<PathBuf>,
    /// `StrictHostKeyChecking`.
    pub strict_host_key_checking: Option<StrictHostKeyChecking>,
    /// `ConnectTimeout` (`0` is treated as unset, as OpenSSH does).
    pub connect_timeout: Option<Duration>,
}

/// Errors from reading or interpreting an OpenSSH client config.
#[derive(Debug, thiserror::Error)]
pub enum SshConfigError {
    /// The file exists but could not be read.
    #[error("cannot read ssh config {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The config (or a file it includes) has a syntax or value error.
    /// `line` is the line of `path` at which parsing failed (for errors in an
    /// included file, the line of its `Include`), when it could be found.
    #[error("invalid ssh config {}{}: {source}", path.display(), line_suffix(*line))]
    Parse {
        path: PathBuf,
        line: Option<usize>,
        #[source]
        source: SshParserError,
    },
    /// An option this module interprets has a value it does not accept.
    #[error("invalid ssh config {}{}: {option} {value:?}: {reason}", path.display(), line_suffix(*line))]
    InvalidValue {
        path: PathBuf,
        line: Option<usize>,
        option: &'static str,
        value: String,
        reason: String,
    },
    /// A `Match` line inside an `Include`d file preceded options applying to
    /// this host; the parser cannot scope them, so rather than apply them
    /// wrongly the config is refused.
    #[error(
        "ssh config {} includes a file with a `Match` block that affects host {host:?}; Match is only supported in the main config file",
        path.display()
    )]
    MatchInInclude { path: PathBuf, host: String },
}

fn line_suffix(line: Option<usize>) -> String {
    line.map(|l| format!(":{l}")).unwrap_or_default()
}

/// Facts about the local side used for `~` and `%` expansion.
#[derive(Debug, Clone, Default)]
struct LocalEnv {
    home: Option<PathBuf>,
    user: Option<String>,
}

impl LocalEnv {
    fn from_process() -> Self {
        LocalEnv {
            home: std::env::home_dir(),
            user: std::env::var("USER")
                .or_else(|_| std::env::var("LOGNAME"))
                .ok(),
        }
    }
}

/// Resolve the settings for `host` (the name given by the user, i.e. what
/// `Host` patterns match) from the OpenSSH client config at `path`.
/// A missing file yields `HostConfig::default()`.
pub fn resolve(path: &Path, host: &str) -> Result<HostConfig, SshConfigError> {
    resolve_with(path, host, &LocalEnv::from_process())
}

fn resolve_with(path: &Path, host: &str, env: &LocalEnv) -> Result<HostConfig, SshConfigError> {
    let text = match fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(HostConfig::default()),
        Err(source) => {
            return Err(SshConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let text = rewrite_match_lines(&text, path);
    let config = parse(&text, env).map_err(|source| SshConfigError::Parse {
        path: path.to_path_buf(),
        line: locate_parse_error(&text, env),
        source,
    })?;

    // OpenSSH matches host names case-insensitively.
    let host = host.to_ascii_lowercase();
    let params = config.query(&host);
    // Unknown keywords are recorded as written, so compare case-insensitively.
    if params
        .ignored_fields
        .keys()
        .any(|k| k.eq_ignore_ascii_case("match"))
    {
        return Err(SshConfigError::MatchInInclude {
            path: path.to_path_buf(),
            host,
        });
    }
    for option in ["proxycommand", "hostkeyalias"] {
        if let Some(value) = params.unsupported_fields.get(option) {
            tracing::warn!(
                "{}: {option} {:?} applies to {host} but is not supported by ferry; ignoring it",
                path.display(),
                value.join(" ")
            );
        }
    }

    let invalid = |option: &'static str, value: String, reason: String| {
        let line = locate_option(&text, option, &value);
        SshConfigError::InvalidValue {
            path: path.to_path_buf(),
            line,
            option,
            value,
            reason,
        }
    };

    let hostname = params
        .host_name
        .as_deref()
        .map(|name| expand_hostname(name, &host))
        .transpose()
        .map_err(|reason| {
            invalid(
                "HostName",
                params.host_name.clone().unwrap_or_default(),
                reason.to_string(),
            )
        })?;
    let tokens = Tokens {
        original_host: &host,
        hostname: hostname.as_deref().unwrap_or(&host),
        port: params.port.unwrap_or(22),
        remote_user: params.user.as_deref().or(env.user.as_deref()),
        local_user: env.user.as_deref(),
        home: env.home.as_deref(),
    };

    let mut identity_files = Vec::new();
    for file in params.identity_file.iter().flatten() {
        let raw = file.to_string_lossy();
        let expanded = tokens
            .expand(&raw)
            .map_err(|reason| invalid("IdentityFile", raw.to_string(), reason.to_string()))?;
        identity_files.push(PathBuf::from(expanded));
    }

    let proxy_jump = match &params.proxy_jump {
        Some(hops) if !(hops.len() == 1 && hops[0].trim().eq_ignore_ascii_case("none")) => hops
            .iter()
            .map(|hop| hop.trim().to_string())
            .filter(|hop| !hop.is_empty())
            .collect(),
        _ => Vec::new(),
    };

    let user_known_hosts_files = match params.unsupported_fields.get("userknownhostsfile") {
        None => Vec::new(),
        Some(values) if values.len() == 1 && values[0].eq_ignore_ascii_case("none") => Vec::new(),
        Some(values) => {
            let mut files = Vec::new();
            for value in values {
                let expanded = tokens
                    .expand(&expand_tilde(value, env.home.as_deref()))
                    .map_err(|reason| {
                        invalid("UserKnownHostsFile", value.clone(), reason.to_string())
                    })?;
                files.push(PathBuf::from(expanded));
            }
            files
        }
    };

    let strict_host_key_checking = params
        .unsupported_fields
        .get("stricthostkeychecking")
        .map(|values| {
            let value = values.first().map(String::as_str).unwrap_or_default();
            parse_strict(value).ok_or_else(|| {
                invalid(
                    "StrictHostKeyChecking",
                    value.to_string(),
                    "expected yes, no, ask, accept-new or off".to_string(),
                )
            })
        })
        .transpose()?;

    Ok(HostConfig {
        hostname,
        user: params.user.clone(),
        port: params.port,
        identity_files,
        proxy_jump,
        user_known_hosts_files,
        strict_host_key_checking,
        connect_timeout: params.connect_timeout.filter(|d| !d.is_zero()),
    })
}

fn parse_strict(value: &str) -> Option<StrictHostKeyChecking> {
    let value = value.to_ascii_lowercase();
    match value.as_str() {
        "yes" | "true" | "ask" => Some(StrictHostKeyChecking::Yes),
        "no" | "false" | "off" => Some(StrictHostKeyChecking::No),
        "accept-new" => Some(StrictHostKeyChecking::AcceptNew),
        _ => None,
    }
}
