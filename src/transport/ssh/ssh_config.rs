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

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ssh2_config::{ParseRule, SshConfig, SshParserError};

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
                reason,
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
            .map_err(|reason| invalid("IdentityFile", raw.to_string(), reason))?;
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
                    .map_err(|reason| invalid("UserKnownHostsFile", value.clone(), reason))?;
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

fn parse(text: &str, env: &LocalEnv) -> Result<SshConfig, SshParserError> {
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
fn locate_parse_error(text: &str, env: &LocalEnv) -> Option<usize> {
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
fn locate_option(text: &str, option: &str, value: &str) -> Option<usize> {
    text.lines().enumerate().find_map(|(index, line)| {
        let (keyword, rest) = split_keyword(line)?;
        (keyword.eq_ignore_ascii_case(option) && rest.contains(value)).then_some(index + 1)
    })
}

/// `ssh2-config` does not know `Match`. Rewrite, line for line (so line
/// numbers stay valid), `Match all` to `Host *` and a lone `Match host` /
/// `Match originalhost` criterion to the equivalent `Host` line; any other
/// `Match` becomes a block that matches nothing, with a warning.
fn rewrite_match_lines(text: &str, file: &Path) -> String {
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

fn parse_strict(value: &str) -> Option<StrictHostKeyChecking> {
    let value = value.to_ascii_lowercase();
    match value.as_str() {
        "yes" | "true" | "ask" => Some(StrictHostKeyChecking::Yes),
        "no" | "false" | "off" => Some(StrictHostKeyChecking::No),
        "accept-new" => Some(StrictHostKeyChecking::AcceptNew),
        _ => None,
    }
}

/// Expand a leading `~` or `~/` against `home` (left alone when unknown).
fn expand_tilde(value: &str, home: Option<&Path>) -> String {
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
fn expand_hostname(value: &str, host: &str) -> Result<String, String> {
    let mut table = HashMap::new();
    table.insert('h', Some(host.to_string()));
    expand_tokens(value, &table)
}

struct Tokens<'a> {
    original_host: &'a str,
    hostname: &'a str,
    port: u16,
    remote_user: Option<&'a str>,
    local_user: Option<&'a str>,
    home: Option<&'a Path>,
}

impl Tokens<'_> {
    /// Expand `%%`, `%d`, `%h`, `%n`, `%p`, `%r`, `%u` in a path option.
    fn expand(&self, value: &str) -> Result<String, String> {
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

fn expand_tokens(value: &str, table: &HashMap<char, Option<String>>) -> Result<String, String> {
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
                Some(None) => return Err(format!("%{token} has no value here")),
                None => return Err(format!("unsupported token %{token}")),
            },
            None => return Err("trailing %".to_string()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    fn env() -> LocalEnv {
        LocalEnv {
            home: Some(PathBuf::from("/home/alice")),
            user: Some("alice".to_string()),
        }
    }

    fn write(dir: &TempDir, text: &str) -> PathBuf {
        let path = dir.path().join("config");
        fs::write(&path, text).unwrap();
        path
    }

    fn resolve_text(text: &str, host: &str) -> Result<HostConfig, SshConfigError> {
        let dir = TempDir::new().unwrap();
        let path = write(&dir, text);
        resolve_with(&path, host, &env())
    }

    const CONFIG: &str = "\
# global options before any Host apply to everything, first wins
ConnectTimeout 7

Host web1 web2
    HostName %h.internal.example.com
    User deploy
    Port 2201
    IdentityFile ~/.ssh/web_%r_%p
    IdentityFile /keys/%n-%h

Host *.example.com !legacy.example.com
    User ops
    ProxyJump bastion.example.com
    StrictHostKeyChecking accept-new

Host db
    HostName=10.0.0.5
    ProxyJump admin@jump1:2222,jump2
    UserKnownHostsFile ~/.ssh/known_hosts.db /etc/ssh/known_%h
    StrictHostKeyChecking no

Host nojump
    ProxyJump none
    UserKnownHostsFile none
    StrictHostKeyChecking ask

Host web1
    User ignored-second-value
    IdentityFile ~/.ssh/extra

Host *
    User fallback
    Port 22
    ConnectTimeout 30
    IdentityFile ~/.ssh/id_ed25519
";

    #[test]
    fn resolves_hosts_from_one_config() {
        let home = |p: &str| PathBuf::from(format!("/home/alice/{p}"));
        let cases: Vec<(&str, HostConfig)> = vec![
            (
                "web1",
                HostConfig {
                    hostname: Some("web1.internal.example.com".into()),
                    user: Some("deploy".into()),
                    port: Some(2201),
                    identity_files: vec![
                        home(".ssh/web_deploy_2201"),
                        PathBuf::from("/keys/web1-web1.internal.example.com"),
                        home(".ssh/extra"),
                        home(".ssh/id_ed25519"),
                    ],
                    connect_timeout: Some(Duration::from_secs(7)),
                    ..Default::default()
                },
            ),
            (
                "WEB2",
                HostConfig {
                    hostname: Some("web2.internal.example.com".into()),
                    user: Some("deploy".into()),
                    port: Some(2201),
                    identity_files: vec![
                        home(".ssh/web_deploy_2201"),
                        PathBuf::from("/keys/web2-web2.internal.example.com"),
                        home(".ssh/id_ed25519"),
                    ],
                    connect_timeout: Some(Duration::from_secs(7)),
                    ..Default::default()
                },
            ),
            (
                "app.example.com",
                HostConfig {
                    user: Some("ops".into()),
                    port: Some(22),
                    identity_files: vec![home(".ssh/id_ed25519")],
                    proxy_jump: vec!["bastion.example.com".into()],
                    strict_host_key_checking: Some(StrictHostKeyChecking::AcceptNew),
                    connect_timeout: Some(Duration::from_secs(7)),
                    ..Default::default()
                },
            ),
            (
                // negated pattern excludes it from the *.example.com block
                "legacy.example.com",
                HostConfig {
                    user: Some("fallback".into()),
                    port: Some(22),
                    identity_files: vec![home(".ssh/id_ed25519")],
                    connect_timeout: Some(Duration::from_secs(7)),
                    ..Default::default()
                },
            ),
            (
                "db",
                HostConfig {
                    hostname: Some("10.0.0.5".into()),
                    user: Some("fallback".into()),
                    port: Some(22),
                    identity_files: vec![home(".ssh/id_ed25519")],
                    proxy_jump: vec!["admin@jump1:2222".into(), "jump2".into()],
                    user_known_hosts_files: vec![
                        home(".ssh/known_hosts.db"),
                        PathBuf::from("/etc/ssh/known_10.0.0.5"),
                    ],
                    strict_host_key_checking: Some(StrictHostKeyChecking::No),
                    connect_timeout: Some(Duration::from_secs(7)),
                },
            ),
            (
                "nojump",
                HostConfig {
                    user: Some("fallback".into()),
                    port: Some(22),
                    identity_files: vec![home(".ssh/id_ed25519")],
                    strict_host_key_checking: Some(StrictHostKeyChecking::Yes),
                    connect_timeout: Some(Duration::from_secs(7)),
                    ..Default::default()
                },
            ),
        ];
        let dir = TempDir::new().unwrap();
        let path = write(&dir, CONFIG);
        for (host, want) in cases {
            assert_eq!(resolve_with(&path, host, &env()).unwrap(), want, "{host}");
        }
    }

    #[test]
    fn first_obtained_value_wins_across_blocks() {
        let text = "\
Host *.corp
    Port 1000
    StrictHostKeyChecking no
    UserKnownHostsFile /first
Host a.corp
    Port 2000
    User a
    StrictHostKeyChecking yes
    UserKnownHostsFile /second
    ProxyJump j1
Host *
    ProxyJump j2
    User z
";
        let got = resolve_text(text, "a.corp").unwrap();
        assert_eq!(got.port, Some(1000));
        assert_eq!(got.user.as_deref(), Some("a"));
        assert_eq!(
            got.strict_host_key_checking,
            Some(StrictHostKeyChecking::No)
        );
        assert_eq!(got.user_known_hosts_files, vec![PathBuf::from("/first")]);
        assert_eq!(got.proxy_jump, vec!["j1".to_string()]);
    }

    #[test]
    fn strict_host_key_checking_values() {
        let cases = [
            ("yes", StrictHostKeyChecking::Yes),
            ("YES", StrictHostKeyChecking::Yes),
            ("true", StrictHostKeyChecking::Yes),
            ("ask", StrictHostKeyChecking::Yes),
            ("no", StrictHostKeyChecking::No),
            ("false", StrictHostKeyChecking::No),
            ("off", StrictHostKeyChecking::No),
            ("accept-new", StrictHostKeyChecking::AcceptNew),
        ];
        for (value, want) in cases {
            let got = resolve_text(&format!("StrictHostKeyChecking {value}\n"), "h").unwrap();
            assert_eq!(got.strict_host_key_checking, Some(want), "{value}");
        }
        let err = resolve_text("Host h\n  StrictHostKeyChecking maybe\n", "h").unwrap_err();
        match err {
            SshConfigError::InvalidValue { line, option, .. } => {
                assert_eq!((line, option), (Some(2), "StrictHostKeyChecking"));
            }
            other => panic!("unexpected {other}"),
        }
        assert_eq!(
            resolve_text("", "h").unwrap().strict_host_key_checking,
            None
        );
    }

    #[test]
    fn connect_timeout() {
        let got = resolve_text("Host h\n ConnectTimeout 12\n", "h").unwrap();
        assert_eq!(got.connect_timeout, Some(Duration::from_secs(12)));
        let got = resolve_text("ConnectTimeout 0\n", "h").unwrap();
        assert_eq!(got.connect_timeout, None);
    }

    #[test]
    fn syntax_errors_name_file_and_line() {
        let cases = [
            ("Host a\n  Port 22\n  Port notaport\n", 3),
            ("User x\nHost b\n\n  ConnectTimeout soon\n", 4),
            ("Host c\n  HostName \"unterminated\n", 2),
            ("Host\n", 1),
        ];
        for (text, want_line) in cases {
            let dir = TempDir::new().unwrap();
            let path = write(&dir, text);
            let err = resolve_with(&path, "a", &env()).unwrap_err();
            match &err {
                SshConfigError::Parse { path: p, line, .. } => {
                    assert_eq!((p, *line), (&path, Some(want_line)), "{text:?}");
                }
                other => panic!("unexpected {other} for {text:?}"),
            }
            let message = err.to_string();
            assert!(
                message.contains(&format!("config:{want_line}")),
                "{message}"
            );
        }
    }

    #[test]
    fn missing_file_is_default_and_unknown_options_are_tolerated() {
        let dir = TempDir::new().unwrap();
        let missing = dir.path().join("nope");
        assert_eq!(
            resolve_with(&missing, "x", &env()).unwrap(),
            HostConfig::default()
        );
        let got = resolve_text("UseKeychain yes\nSomeFutureOption 1\nUser u\n", "x").unwrap();
        assert_eq!(got.user.as_deref(), Some("u"));
        // a directory is not readable as a config file
        let err = resolve_with(dir.path(), "x", &env()).unwrap_err();
        assert!(matches!(err, SshConfigError::Read { .. }), "{err}");
    }

    #[test]
    fn match_blocks() {
        let text = "\
Match host web*,!web9
    User matched
Match exec \"true\"
    User never
Match all
    Port 2022
";
        assert_eq!(
            resolve_text(text, "web1").unwrap().user.as_deref(),
            Some("matched")
        );
        let other = resolve_text(text, "web9").unwrap();
        assert_eq!(other.user, None);
        assert_eq!(other.port, Some(2022));
    }

    #[test]
    fn includes_resolve_and_match_inside_include_is_refused() {
        let dir = TempDir::new().unwrap();
        let inc = dir.path().join("inc.conf");
        fs::write(&inc, "Host inc\n  User included\n").unwrap();
        let path = write(
            &dir,
            &format!("Include {}\nHost *\n  User main\n", inc.display()),
        );
        let got = resolve_with(&path, "inc", &env()).unwrap();
        assert_eq!(got.user.as_deref(), Some("included"));

        fs::write(&inc, "Host inc\n  Port 1\nMatch exec x\n  User wrong\n").unwrap();
        let err = resolve_with(&path, "inc", &env()).unwrap_err();
        assert!(
            matches!(err, SshConfigError::MatchInInclude { .. }),
            "{err}"
        );
        // hosts the swallowed block does not apply to are unaffected
        assert_eq!(
            resolve_with(&path, "other", &env())
                .unwrap()
                .user
                .as_deref(),
            Some("main")
        );
    }

    #[test]
    fn token_expansion() {
        let cases = [
            ("%d/k", Ok("/home/alice/k")),
            (
                "/k/%u/%r@%h:%p/%n/100%%",
                Ok("/k/alice/bob@real:2200/alias/100%"),
            ),
            ("/k/%C", Err("unsupported token %C")),
            ("/k/%", Err("trailing %")),
        ];
        let tokens = Tokens {
            original_host: "alias",
            hostname: "real",
            port: 2200,
            remote_user: Some("bob"),
            local_user: Some("alice"),
            home: Some(Path::new("/home/alice")),
        };
        for (input, want) in cases {
            let got = tokens.expand(input);
            let want = want.map(str::to_string).map_err(str::to_string);
            assert_eq!(got, want, "{input}");
        }
        let err = resolve_text("IdentityFile /k/%C\n", "h").unwrap_err();
        assert!(
            matches!(err, SshConfigError::InvalidValue { line: Some(1), .. }),
            "{err}"
        );
    }
}
