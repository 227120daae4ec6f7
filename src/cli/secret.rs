//! `ferry secret createkeys|encrypt|decrypt`, Bolt's `bolt secret`: with
//! the pkcs7 plugin (the default, built in: [`ferry::secret`]) the key pair
//! is the project's `keys/private_key.pkcs7.pem` and
//! `keys/public_key.pkcs7.pem`, or where `plugins.pkcs7` puts them; with
//! `--plugin NAME` a module plugin's `secret_*` hook runs on localhost.
//! A value to encrypt may come from standard input (`-`) or, with no
//! value on a terminal, be asked for with echo off, so that it need not
//! stand on a command line.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use serde_json::{Map, Value};

use super::ModuleArgs;
use super::plugins::{Pkcs7Keys, PluginHost};

#[derive(Subcommand, Debug)]
pub enum SecretAction {
    /// Make a key pair for encrypting values (refuses to replace one without --force).
    Createkeys {
        /// Replace an existing key pair.
        #[arg(long)]
        force: bool,
        /// The secret plugin.
        #[arg(long, default_value = "pkcs7")]
        plugin: String,
        #[command(flatten)]
        modules: ModuleArgs,
    },
    /// Encrypt a value: VALUE, `-` for standard input, or asked on the terminal.
    Encrypt {
        value: Option<String>,
        #[arg(long, default_value = "pkcs7")]
        plugin: String,
        #[command(flatten)]
        modules: ModuleArgs,
    },
    /// Decrypt an ENC[PKCS7,...] value (`-`: from standard input).
    Decrypt {
        value: Option<String>,
        #[arg(long, default_value = "pkcs7")]
        plugin: String,
        #[command(flatten)]
        modules: ModuleArgs,
    },
}

/// VALUE, or standard input for `-`, or the terminal (echo off).
fn value_of(value: Option<String>, what: &str) -> Result<String> {
    match value.as_deref() {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the value from standard input")?;
            Ok(text.trim_end_matches(['\n', '\r']).to_string())
        }
        Some(v) => Ok(v.to_string()),
        None if ferry::terminal::is_terminal() => {
            Ok(ferry::terminal::ask(&format!("Value to {what}: "), true)?)
        }
        None => {
            bail!("Must specify a value to {what} (VALUE, or - to read it from standard input)")
        }
    }
}

fn run_hook(
    host: &PluginHost,
    plugin: &str,
    hook: &str,
    params: Map<String, Value>,
) -> Result<Value> {
    match host.module_hook(plugin, hook, &params) {
        Some(r) => Ok(r?),
        None => bail!(
            "unknown secret plugin '{plugin}' (pkcs7 is built in; another is a module with a bolt_plugin.json on the modulepath)"
        ),
    }
}

fn print(value: &Value) {
    match value {
        Value::String(s) => println!("{s}"),
        other => println!(
            "{}",
            serde_json::to_string_pretty(other).unwrap_or_default()
        ),
    }
}

/// Encrypts or decrypts `text`: with the built-in pkcs7 (`native`), or a
/// module plugin's `hook` given the text as `param`.
fn crypt(
    text: String,
    plugin: &str,
    modules: &ModuleArgs,
    (hook, param): (&str, &str),
    native: fn(&Pkcs7Keys, &str) -> Result<String, ferry::inventory::plugin::PluginError>,
) -> Result<()> {
    let host = PluginHost::for_run(Some(modules))?;
    if plugin == "pkcs7" {
        print(&Value::String(native(
            &host.pkcs7_keys(&Map::new())?,
            &text,
        )?));
    } else {
        let mut params = Map::new();
        params.insert(param.into(), Value::String(text));
        print(&run_hook(&host, plugin, hook, params)?);
    }
    Ok(())
}

pub fn execute(action: SecretAction) -> Result<ExitCode> {
    match action {
        SecretAction::Createkeys {
            force,
            plugin,
            modules,
        } => {
            let host = PluginHost::for_run(Some(&modules))?;
            if plugin != "pkcs7" {
                let mut params = Map::new();
                params.insert("force".into(), Value::Bool(force));
                print(&run_hook(&host, &plugin, "secret_createkeys", params)?);
                return Ok(ExitCode::SUCCESS);
            }
            let keys = host.pkcs7_keys(&Map::new())?;
            if !force && (keys.public_key.exists() || keys.private_key.exists()) {
                bail!(
                    "Found existing key pair {} and {}. Existing key pairs can be overwritten with --force.",
                    keys.public_key.display(),
                    keys.private_key.display()
                );
            }
            let (private, public) = ferry::secret::create_keys(keys.keysize)?;
            write_key(&keys.private_key, &private, 0o600)?;
            write_key(&keys.public_key, &public, 0o644)?;
            print(&Value::Array(vec![
                Value::String(keys.public_key.display().to_string()),
                Value::String(keys.private_key.display().to_string()),
            ]));
        }
        SecretAction::Encrypt {
            value,
            plugin,
            modules,
        } => crypt(
            value_of(value, "encrypt")?,
            &plugin,
            &modules,
            ("secret_encrypt", "plaintext_value"),
            Pkcs7Keys::encrypt,
        )?,
        SecretAction::Decrypt {
            value,
            plugin,
            modules,
        } => crypt(
            value_of(value, "decrypt")?,
            &plugin,
            &modules,
            ("secret_decrypt", "encrypted_value"),
            Pkcs7Keys::decrypt,
        )?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a key file whole (a temporary file renamed into place), with
/// `mode` from the start, making its directory when missing.
fn write_key(path: &Path, text: &str, mode: u32) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("writing a key in {}", dir.display()))?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
