//! The SSH transport's options, under the names Bolt uses, read from a
//! target's config and checked before anything connects.

use std::path::PathBuf;
use std::time::Duration;

use super::super::command::{RunAs, Sensitive};
use super::super::options::Options;
use super::super::{Identities, Overrides, TransportError};
use crate::inventory::Target;

/// How host keys are checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostKeyCheck {
    /// Unknown or mismatched keys fail the target (the default).
    Strict,
    /// Unknown keys are learned into the known_hosts file; mismatches fail.
    AcceptNew,
    /// No check at all; only when the user asks for it.
    Off,
}

/// Where a private key comes from.
#[derive(Clone, Debug)]
pub enum KeySource {
    Path(PathBuf),
    /// The key itself (`private-key: {key-data: ...}`).
    Data(Sensitive<String>),
}

#[derive(Clone, Debug)]
pub struct SshOptions {
    /// The host name as given (used for ssh_config and known_hosts).
    pub host: String,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub password: Option<Sensitive<String>>,
    pub private_key: Option<KeySource>,
    pub key_passphrase: Option<Sensitive<String>>,
    /// `None` when not set in the inventory (ssh_config may then decide).
    pub host_key_check: Option<HostKeyCheck>,
    pub known_hosts_file: Option<PathBuf>,
    pub connect_timeout: Option<Duration>,
    pub command_timeout: Option<Duration>,
    pub proxyjump: Option<Vec<String>>,
    pub run_as: Option<RunAs>,
    pub tmpdir: Option<String>,
    pub cache_dir: Option<String>,
    pub tty: bool,
    pub load_config: bool,
    /// Whether the agent and default identity files may be tried.
    pub identities: Identities,
}

/// Bolt's SSH options that ferry accepts and does not use.
const BOLT_ONLY: &[&str] = &[
    "batch-mode",
    "cleanup",
    "copy-command",
    "disconnect-timeout",
    "encryption-algorithms",
    "extensions",
    "host-key-algorithms",
    "interpreters",
    "kex-algorithms",
    "login-shell",
    "mac-algorithms",
    "native-ssh",
    "script-dir",
    "ssh-command",
];

/// The environment variable that may hold a private key's passphrase.
pub const PASSPHRASE_ENV: &str = "FERRY_SSH_KEY_PASSPHRASE";

impl SshOptions {
    pub fn read(target: &Target, overrides: &Overrides) -> Result<SshOptions, TransportError> {
        let address = target
            .address()
            .map_err(|e| TransportError::Config(format!("{}: {e}", target.name)))?;
        let mut o = Options::new(target, "ssh");
        // A URI's host wins over `host` (Bolt's precedence), which serves
        // targets named without a URI.
        let config_host = o.string("host")?;
        let host = match (&target.uri, config_host) {
            (None, Some(h)) => h,
            _ => address.host.clone(),
        };
        let port = match o.number("port")? {
            Some(p) => Some(u16::try_from(p).map_err(|_| {
                TransportError::Config(format!("{}: ssh.port {p} is out of range", target.name))
            })?),
            None => None,
        };
        let private_key = private_key(&mut o)?;
        let host_key_check = host_key_check(&mut o)?;
        let proxyjump = proxyjump(&mut o)?;
        let opts = SshOptions {
            user: address.user.clone().or(o.string("user")?),
            port: address.port.or(port),
            password: o.secret("password")?,
            private_key,
            key_passphrase: o
                .secret("private-key-passphrase")?
                .or_else(|| std::env::var(PASSPHRASE_ENV).ok().map(Sensitive::new)),
            host_key_check,
            known_hosts_file: o.string("known-hosts-file")?.map(|p| expand_home(&p)),
            connect_timeout: overrides.connect_timeout.or(o.seconds("connect-timeout")?),
            command_timeout: overrides.command_timeout.or(o.seconds("command-timeout")?),
            proxyjump,
            run_as: o.run_as(overrides.run_as.as_deref())?,
            tmpdir: o.path("tmpdir")?,
            cache_dir: o.path("cache-dir")?,
            tty: o.bool("tty")?.unwrap_or(false),
            load_config: o.bool("load-config")?.unwrap_or(true),
            identities: overrides.identities,
            host,
        };
        o.finish(BOLT_ONLY)?;
        Ok(opts)
    }
}

/// `private-key`: a path, or `{key-data: ...}` holding the key itself.
pub fn private_key(o: &mut Options<'_>) -> Result<Option<KeySource>, TransportError> {
    let Some(s) = o.raw("private-key") else {
        return Ok(None);
    };
    let expected = "a path or {key-data: ...}";
    Ok(Some(match &s.value {
        serde_json::Value::String(p) => KeySource::Path(expand_home(p)),
        serde_json::Value::Object(m) => match m.get("key-data").and_then(|v| v.as_str()) {
            Some(data) => KeySource::Data(Sensitive::new(data.to_string())),
            None => return Err(o.wrong("private-key", s, expected)),
        },
        _ => return Err(o.wrong("private-key", s, expected)),
    }))
}

/// `host-key-check`: true, false or accept-new (`None` when not set, so
/// that ssh_config may decide).
pub fn host_key_check(o: &mut Options<'_>) -> Result<Option<HostKeyCheck>, TransportError> {
    let Some(s) = o.raw("host-key-check") else {
        return Ok(None);
    };
    Ok(Some(match &s.value {
        serde_json::Value::Bool(true) => HostKeyCheck::Strict,
        serde_json::Value::Bool(false) => HostKeyCheck::Off,
        serde_json::Value::String(v) if v == "accept-new" => HostKeyCheck::AcceptNew,
        serde_json::Value::String(v) if matches!(v.as_str(), "yes" | "on") => HostKeyCheck::Strict,
        serde_json::Value::String(v) if matches!(v.as_str(), "no" | "off") => HostKeyCheck::Off,
        _ => return Err(o.wrong("host-key-check", s, "true, false or accept-new")),
    }))
}

/// `proxyjump`: jump hosts, comma-separated, the first reached first.
pub fn proxyjump(o: &mut Options<'_>) -> Result<Option<Vec<String>>, TransportError> {
    Ok(o.string("proxyjump")?.map(|chain| {
        chain
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(str::to_string)
            .collect()
    }))
}

/// `~/x` becomes `$HOME/x`.
pub fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The user's home directory, or `/` when HOME is not set.
pub fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}
