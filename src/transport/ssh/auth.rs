//! SSH authentication, in the order OpenSSH tries it: the configured private
//! key (or, when none is configured, the agent's keys and the default
//! identity files), then the password, then keyboard-interactive answered
//! with the password. Secrets are never part of an error message.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use russh::client::{AuthResult, Handle, KeyboardInteractiveAuthResponse};
use russh::keys::{PrivateKey, PrivateKeyWithHashAlg};
use sha2::{Digest, Sha256};

use super::connect::{Client, Endpoint};
use super::options::KeySource;
use crate::transport::command::Sensitive;
use crate::transport::{ConnectIssue, TransportError};

#[derive(Clone, Debug, Default)]
pub struct Auth {
    pub password: Option<Sensitive<String>>,
    pub key: Option<KeySource>,
    pub passphrase: Option<Sensitive<String>>,
    /// Keys to try when no key is configured (ssh_config, then defaults).
    pub identity_files: Vec<PathBuf>,
    pub use_agent: bool,
}

fn auth_error(ep: &Endpoint, message: String) -> TransportError {
    TransportError::connect(
        ConnectIssue::Auth,
        format!("authentication failed for {ep}: {message}"),
    )
}

/// Loads a key once per process: decrypting a key (bcrypt) costs far more
/// than a whole connection, and every target of a run uses the same keys.
fn load(
    source: &KeySource,
    passphrase: Option<&Sensitive<String>>,
) -> Result<Arc<PrivateKey>, String> {
    type Cache = Mutex<HashMap<(String, bool), Arc<PrivateKey>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let id = match source {
        KeySource::Path(p) => format!("path:{}", p.display()),
        KeySource::Data(d) => format!(
            "data:{}",
            hex::encode(Sha256::digest(d.expose().as_bytes()))
        ),
    };
    let key = (id, passphrase.is_some());
    let cache = CACHE.get_or_init(Default::default);
    if let Some(k) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(k);
    }
    let loaded = Arc::new(load_uncached(source, passphrase)?);
    if let Ok(mut c) = cache.lock() {
        c.insert(key, Arc::clone(&loaded));
    }
    Ok(loaded)
}

fn load_uncached(
    source: &KeySource,
    passphrase: Option<&Sensitive<String>>,
) -> Result<PrivateKey, String> {
    let pass = passphrase.map(|p| p.expose().as_str());
    let (what, result) = match source {
        KeySource::Path(path) => (
            path.display().to_string(),
            russh::keys::load_secret_key(path, pass),
        ),
        KeySource::Data(data) => (
            "private-key key-data".to_string(),
            russh::keys::decode_secret_key(data.expose(), pass),
        ),
    };
    result.map_err(|e| match e {
        russh::keys::Error::KeyIsEncrypted => format!(
            "{what} is encrypted: set ssh.private-key-passphrase or {}",
            super::options::PASSPHRASE_ENV
        ),
        other => format!("cannot load {what}: {other}"),
    })
}

fn ok(result: AuthResult) -> bool {
    matches!(result, AuthResult::Success)
}

pub async fn authenticate(
    handle: &mut Handle<Client>,
    ep: &Endpoint,
    auth: &Auth,
) -> Result<(), TransportError> {
    let lost = |e: russh::Error| {
        TransportError::connect(
            ConnectIssue::Connect,
            format!("connection to {ep} lost during authentication: {e}"),
        )
    };
    let mut tried: Vec<String> = Vec::new();
    let rsa_hash = handle
        .best_supported_rsa_hash()
        .await
        .map_err(lost)?
        .flatten();

    if let Some(source) = &auth.key {
        let key = load(source, auth.passphrase.as_ref()).map_err(|m| auth_error(ep, m))?;
        if try_key(handle, ep, key, rsa_hash).await.map_err(lost)? {
            return Ok(());
        }
        tried.push("the configured private key".into());
    } else {
        if auth.use_agent && std::env::var_os("SSH_AUTH_SOCK").is_some() {
            if agent(handle, ep, rsa_hash).await {
                return Ok(());
            }
            tried.push("ssh-agent keys".into());
        }
        for path in &auth.identity_files {
            if !path.exists() {
                continue;
            }
            let Ok(key) = load(&KeySource::Path(path.clone()), auth.passphrase.as_ref()) else {
                tracing::debug!("skipping identity file {} (cannot load it)", path.display());
                continue;
            };
            if try_key(handle, ep, key, rsa_hash).await.map_err(lost)? {
                return Ok(());
            }
            tried.push(path.display().to_string());
        }
    }

    if let Some(password) = &auth.password {
        if ok(handle
            .authenticate_password(ep.user.clone(), password.expose().clone())
            .await
            .map_err(lost)?)
        {
            return Ok(());
        }
        tried.push("password".into());
        if keyboard_interactive(handle, ep, password)
            .await
            .map_err(lost)?
        {
            return Ok(());
        }
        tried.push("keyboard-interactive".into());
    }
    let tried = if tried.is_empty() {
        "no credentials were available".to_string()
    } else {
        format!("tried {}", tried.join(", "))
    };
    Err(auth_error(ep, tried))
}

/// Offers one private key; whether the server accepted it.
async fn try_key(
    handle: &mut Handle<Client>,
    ep: &Endpoint,
    key: Arc<PrivateKey>,
    rsa_hash: Option<russh::keys::HashAlg>,
) -> Result<bool, russh::Error> {
    let key = PrivateKeyWithHashAlg::new(key, rsa_hash);
    Ok(ok(handle
        .authenticate_publickey(ep.user.clone(), key)
        .await?))
}

async fn agent(
    handle: &mut Handle<Client>,
    ep: &Endpoint,
    rsa_hash: Option<russh::keys::HashAlg>,
) -> bool {
    let Ok(mut agent) = russh::keys::agent::client::AgentClient::connect_env().await else {
        tracing::debug!("SSH_AUTH_SOCK is set but the agent cannot be reached");
        return false;
    };
    let Ok(identities) = agent.request_identities().await else {
        return false;
    };
    for identity in identities {
        let russh::keys::agent::AgentIdentity::PublicKey { key, .. } = identity else {
            continue;
        };
        let hash = if matches!(key.algorithm(), russh::keys::Algorithm::Rsa { .. }) {
            rsa_hash
        } else {
            None
        };
        match handle
            .authenticate_publickey_with(ep.user.clone(), key, hash, &mut agent)
            .await
        {
            Ok(AuthResult::Success) => return true,
            Ok(_) => continue,
            Err(e) => tracing::debug!("the agent could not sign: {e}"),
        }
    }
    false
}

/// Answers password prompts with the password; other prompts get nothing.
async fn keyboard_interactive(
    handle: &mut Handle<Client>,
    ep: &Endpoint,
    password: &Sensitive<String>,
) -> Result<bool, russh::Error> {
    let mut reply = handle
        .authenticate_keyboard_interactive_start(ep.user.clone(), None)
        .await?;
    for _ in 0..5 {
        match reply {
            KeyboardInteractiveAuthResponse::Success => return Ok(true),
            KeyboardInteractiveAuthResponse::Failure { .. } => return Ok(false),
            KeyboardInteractiveAuthResponse::InfoRequest { prompts, .. } => {
                let answers = prompts
                    .iter()
                    .map(|p| {
                        if p.prompt.to_lowercase().contains("password") {
                            password.expose().clone()
                        } else {
                            String::new()
                        }
                    })
                    .collect();
                reply = handle
                    .authenticate_keyboard_interactive_respond(answers)
                    .await?;
            }
        }
    }
    Ok(false)
}
