//! Bolt's connection flags (`--user`, `--password`, `--private-key`,
//! `--[no-]host-key-check`, `--run-as`, `--sudo-password`, `--tmpdir`,
//! `--connect-timeout`, `--[no-]tty`, and ferry's `--port`), turned into
//! settings that [`ferry::inventory::Inventory::set_command_line`] lays under
//! the inventory's config: as in Bolt, the inventory's values win over them
//! and a URI's user and port over both. Passwords never reach a log: they
//! are held in [`Secret`], whose Debug form is redacted, and `--password`
//! or `--sudo-password` without a value asks on the terminal.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Value, json};

/// A command-line value as Bolt reads `--targets` and a command:
/// `@FILE` is the file's text, `-` standard input, anything else itself.
pub fn arg_input(text: &str) -> Result<String, String> {
    if let Some(path) = text.strip_prefix('@') {
        return std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"));
    }
    if text == "-" {
        let mut input = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        return Ok(input);
    }
    Ok(text.to_string())
}

/// A value that must not be printed: Debug shows a marker.
#[derive(Clone)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(ferry::inventory::REDACTED)
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Secret(s.to_string()))
    }
}

/// Connection settings for the selected targets, under the inventory's.
#[derive(Args, Debug, Clone, Default)]
pub struct ConnArgs {
    /// User to log in as (under the inventory's `user`; a URI's user wins).
    #[arg(short = 'u', long, value_name = "USER", help_heading = "Connection")]
    pub user: Option<String>,
    /// Password to log in with; given without a value, asked for on the
    /// terminal. A value on the command line is visible to other users of
    /// this machine: prefer the prompt or the env_var plugin.
    #[arg(
        short = 'p',
        long,
        value_name = "PASSWORD",
        num_args = 0..=1,
        help_heading = "Connection"
    )]
    pub password: Option<Option<Secret>>,
    /// Ask for the password on the terminal.
    #[arg(long, conflicts_with = "password", help_heading = "Connection")]
    pub password_prompt: bool,
    /// Private key file to log in with.
    #[arg(long, value_name = "KEY", help_heading = "Connection")]
    pub private_key: Option<PathBuf>,
    /// Check host keys against known_hosts (ferry's default).
    #[arg(
        long,
        overrides_with = "no_host_key_check",
        help_heading = "Connection"
    )]
    pub host_key_check: bool,
    /// Do not check host keys.
    #[arg(long, overrides_with = "host_key_check", help_heading = "Connection")]
    pub no_host_key_check: bool,
    /// SSH port (ferry's own flag; a URI's port wins).
    #[arg(long, value_name = "PORT", help_heading = "Connection")]
    pub port: Option<u16>,
    /// Password for sudo when running as another user; given without a
    /// value, asked for on the terminal.
    #[arg(
        long,
        value_name = "PASSWORD",
        num_args = 0..=1,
        help_heading = "Connection"
    )]
    pub sudo_password: Option<Option<Secret>>,
    /// Ask for the sudo password on the terminal.
    #[arg(long, conflicts_with = "sudo_password", help_heading = "Connection")]
    pub sudo_password_prompt: bool,
    /// Directory on the target for uploaded scripts and task files.
    #[arg(long, value_name = "DIR", help_heading = "Connection")]
    pub tmpdir: Option<String>,
    /// The transport of targets whose URI and inventory name none
    /// (ssh, local); `localhost` stays local.
    #[arg(long, value_name = "TRANSPORT", help_heading = "Connection")]
    pub transport: Option<String>,
    /// Request a pseudo-terminal for commands.
    #[arg(long, overrides_with = "no_tty", help_heading = "Connection")]
    pub tty: bool,
    /// Do not request a pseudo-terminal.
    #[arg(long, overrides_with = "tty", help_heading = "Connection")]
    pub no_tty: bool,
}

impl ConnArgs {
    /// The settings these flags give, with `run_as` and `connect_timeout`
    /// (older flags of [`super::RunArgs`]); asks for passwords on the
    /// terminal where a flag has no value.
    pub fn settings(
        &self,
        run_as: Option<&str>,
        connect_timeout: Option<u64>,
    ) -> Result<Vec<(String, Value)>> {
        let mut out: Vec<(String, Value)> = Vec::new();
        if let Some(t) = &self.transport {
            out.push(("transport".into(), json!(t)));
        }
        let mut both = |key: &str, value: Value| {
            out.push((format!("ssh.{key}"), value.clone()));
            out.push((format!("local.{key}"), value));
        };
        if let Some(user) = run_as {
            both("run-as", json!(user));
        }
        if let Some(dir) = &self.tmpdir {
            both("tmpdir", json!(dir));
        }
        let sudo = secret(
            self.sudo_password.as_ref(),
            self.sudo_password_prompt,
            "sudo password",
            "--sudo-password",
        )?;
        if let Some(p) = sudo {
            both("sudo-password", json!(p.0));
        }
        let mut ssh = |key: &str, value: Value| out.push((format!("ssh.{key}"), value));
        if let Some(user) = &self.user {
            ssh("user", json!(user));
        }
        if let Some(p) = secret(
            self.password.as_ref(),
            self.password_prompt,
            "password",
            "--password",
        )? {
            ssh("password", json!(p.0));
        }
        if let Some(key) = &self.private_key {
            // Bolt takes the path from the working directory.
            let key = std::path::absolute(key)
                .with_context(|| format!("--private-key {}", key.display()))?;
            ssh("private-key", json!(key.display().to_string()));
        }
        if self.host_key_check {
            ssh("host-key-check", json!(true));
        }
        if self.no_host_key_check {
            ssh("host-key-check", json!(false));
        }
        if let Some(port) = self.port {
            ssh("port", json!(port));
        }
        if let Some(t) = connect_timeout {
            ssh("connect-timeout", json!(t));
        }
        if self.tty {
            ssh("tty", json!(true));
        }
        if self.no_tty {
            ssh("tty", json!(false));
        }
        Ok(out)
    }
}

/// A password flag's value: the one given, or one asked for on the terminal
/// when the flag has no value or its `-prompt` form is given.
fn secret(
    given: Option<&Option<Secret>>,
    prompt: bool,
    what: &str,
    flag: &str,
) -> Result<Option<Secret>> {
    match (given, prompt) {
        (Some(Some(value)), _) => Ok(Some(value.clone())),
        (Some(None), _) | (None, true) => ask(what, flag).map(Some),
        (None, false) => Ok(None),
    }
}

/// Reads a line from standard input with echo off, when it is a terminal
/// (as Bolt's prompts do); the question goes to standard error.
fn ask(what: &str, flag: &str) -> Result<Secret> {
    if !ferry::terminal::is_terminal() {
        bail!(
            "{flag} without a value asks for the {what} on the terminal, and standard input is not one; \
             set it in the inventory (the env_var plugin keeps it out of the file) or give {flag} VALUE"
        );
    }
    let line = ferry::terminal::ask(&format!("Please enter your {what}: "), true)
        .context("reading from the terminal")?;
    Ok(Secret(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_settings_and_secrets_stay_out_of_debug() {
        let args = ConnArgs {
            user: Some("me".into()),
            password: Some(Some(Secret("pw-4711".into()))),
            no_host_key_check: true,
            port: Some(2222),
            tmpdir: Some("/var/tmp".into()),
            ..ConnArgs::default()
        };
        assert!(!format!("{args:?}").contains("pw-4711"));
        let got = args.settings(Some("root"), Some(5)).unwrap();
        let keys: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "ssh.run-as",
                "local.run-as",
                "ssh.tmpdir",
                "local.tmpdir",
                "ssh.user",
                "ssh.password",
                "ssh.host-key-check",
                "ssh.port",
                "ssh.connect-timeout"
            ]
        );
        assert!(got.contains(&("ssh.host-key-check".into(), json!(false))));
    }
}
