//! The network transport's options, under `network:` in a target's config,
//! checked before anything connects (positions in errors, as the SSH
//! transport's). The SSH side of them (host, port, user, credentials, host
//! key checking, jump hosts, timeouts) becomes an [`SshOptions`], so that a
//! device is reached by exactly the SSH transport's connect, auth and
//! known_hosts code.

use std::time::Duration;

use regex::Regex;
use serde_json::{Map, Value};

use super::cli::Platform;
use crate::inventory::Target;
use crate::transport::command::Sensitive;
use crate::transport::options::Options;
use crate::transport::ssh::options::{
    SshOptions, expand_home, host_key_check, private_key, proxyjump,
};
use crate::transport::{Overrides, TransportError};

/// How long one CLI command may take when `command-timeout` is not set.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Clone, Debug)]
pub struct NetworkOptions {
    /// Reaching the device: everything the SSH transport needs.
    pub ssh: SshOptions,
    pub platform: Platform,
    /// Sent after `enable` when the device asks for it; never shown.
    pub enable_password: Option<Sensitive<String>>,
    /// A regex that replaces the platform's prompt recognition.
    pub prompt: Option<Regex>,
    /// How long each command may take before the device is given up on.
    pub command_timeout: Duration,
    /// The inventory target a remote task for this device runs on (Bolt's
    /// `run-on`); `None` is ferry's own host.
    pub run_on: Option<String>,
}

impl NetworkOptions {
    pub fn read(target: &Target, overrides: &Overrides) -> Result<NetworkOptions, TransportError> {
        let address = target
            .address()
            .map_err(|e| TransportError::Config(format!("{}: {e}", target.name)))?;
        let mut o = Options::new(target, "network");
        let config_host = o.string("host")?;
        let host = match (&target.uri, config_host) {
            (None, Some(h)) => h,
            _ => address.host.clone(),
        };
        let port = match (o.raw("port"), o.number("port")?) {
            (Some(s), Some(p)) => Some(
                u16::try_from(p)
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or_else(|| o.wrong("port", s, "a port number (1-65535)"))?,
            ),
            _ => None,
        };
        let platform = match (o.raw("platform"), o.string("platform")?) {
            (Some(s), Some(name)) => name.parse::<Platform>().map_err(|e| {
                TransportError::Config(format!("{}: network.platform: {e}", s.origin))
            })?,
            _ => Platform::Generic,
        };
        let prompt = match (o.raw("prompt"), o.string("prompt")?) {
            (Some(s), Some(re)) => Some(Regex::new(&re).map_err(|e| {
                TransportError::Config(format!(
                    "{}: network.prompt is not a valid regex: {e}",
                    s.origin
                ))
            })?),
            _ => None,
        };
        let command_timeout = overrides
            .command_timeout
            .or(o.seconds("command-timeout")?)
            .unwrap_or(DEFAULT_COMMAND_TIMEOUT);
        let ssh = SshOptions {
            user: address.user.clone().or(o.string("user")?),
            port: address.port.or(port),
            password: o.secret("password")?,
            private_key: private_key(&mut o)?,
            key_passphrase: o.secret("private-key-passphrase")?,
            host_key_check: host_key_check(&mut o)?,
            known_hosts_file: o.string("known-hosts-file")?.map(|p| expand_home(&p)),
            connect_timeout: overrides.connect_timeout.or(o.seconds("connect-timeout")?),
            command_timeout: Some(command_timeout),
            proxyjump: proxyjump(&mut o)?,
            run_as: None,
            tmpdir: None,
            cache_dir: None,
            tty: true,
            load_config: o.bool("load-config")?.unwrap_or(true),
            identities: overrides.identities,
            host,
        };
        let opts = NetworkOptions {
            ssh,
            platform,
            enable_password: o.secret("enable-password")?,
            prompt,
            command_timeout,
            run_on: o.string("run-on")?.filter(|r| !r.is_empty()),
        };
        o.finish(&[])?;
        Ok(opts)
    }

    /// The device's connection settings as a remote task gets them in
    /// `_target` (Bolt's `Target#to_h`): every key under `network:` as
    /// written, then `name`, `uri`, `protocol`, `host`, `port`, `user` and
    /// `password` as resolved; with the secret strings in it (passwords,
    /// passphrase, inline key), for the task's output to be masked with.
    pub fn target_hash(&self, target: &Target) -> (Map<String, Value>, Vec<String>) {
        let mut hash: Map<String, Value> = target
            .config
            .section("network")
            .map(|(k, s)| (k.to_string(), s.value.clone()))
            .collect();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                hash.insert(k.to_string(), v);
            }
        };
        put("name", Some(Value::String(target.name.clone())));
        put("uri", target.uri.clone().map(Value::String));
        put("protocol", Some(Value::String("network".into())));
        put("host", Some(Value::String(self.ssh.host.clone())));
        put("port", self.ssh.port.map(Value::from));
        put("user", self.ssh.user.clone().map(Value::String));
        put(
            "password",
            self.ssh
                .password
                .as_ref()
                .map(|p| Value::String(p.expose().clone())),
        );
        let mut secrets: Vec<String> = [
            self.ssh.password.as_ref(),
            self.enable_password.as_ref(),
            self.ssh.key_passphrase.as_ref(),
        ]
        .into_iter()
        .flatten()
        .map(|s| s.expose().clone())
        .collect();
        if let Some(Value::Object(key)) = hash.get("private-key")
            && let Some(Value::String(data)) = key.get("key-data")
        {
            secrets.push(data.clone());
        }
        secrets.retain(|s| !s.is_empty());
        (hash, secrets)
    }
}
