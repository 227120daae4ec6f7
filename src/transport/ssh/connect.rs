//! Opening an authenticated SSH session: TCP (or a channel through the jump
//! hosts before it), key exchange, host key verification, authentication.
//! Every hop of a ProxyJump chain is verified and authenticated like the
//! target itself.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use russh::client::{self, Handle};
use russh::keys::PublicKeyOrCertificate;

use super::auth::{self, Auth};
use super::known_hosts::{self, KnownHosts, Verdict};
use super::options::HostKeyCheck;
use super::tcp;
use crate::transport::{ConnectIssue, TransportError};

/// One machine to reach: a jump host or the target.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub user: String,
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}:{}", self.user, self.host, self.port)
    }
}

/// How host keys are checked for every hop.
#[derive(Clone)]
pub struct HostKeys {
    pub check: HostKeyCheck,
    pub known: Arc<KnownHosts>,
    /// Where accept-new writes learned keys.
    pub learn_file: PathBuf,
}

/// Everything needed to open a session, resolved from options and ssh_config.
#[derive(Clone)]
pub struct Plan {
    pub jumps: Vec<Endpoint>,
    pub target: Endpoint,
    pub auth: Auth,
    pub host_keys: HostKeys,
    pub timeout: Duration,
}

/// An open session; the jump hosts' sessions live as long as it does.
pub struct Session {
    pub handle: Handle<Client>,
    _hops: Vec<Handle<Client>>,
}

/// russh's event handler: checks the host key against known_hosts.
pub struct Client {
    host: String,
    port: u16,
    keys: HostKeys,
    failure: Arc<Mutex<Option<String>>>,
}

impl client::Handler for Client {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let label = if self.port == 22 {
            self.host.clone()
        } else {
            format!("[{}]:{}", self.host, self.port)
        };
        let refuse = |why: String| {
            if let Ok(mut f) = self.failure.lock() {
                *f = Some(why);
            }
            Ok(false)
        };
        if self.keys.check == HostKeyCheck::Off {
            return Ok(true);
        }
        match self.keys.known.check(&self.host, self.port, key) {
            Verdict::Trusted => Ok(true),
            Verdict::Revoked { file, line } => refuse(format!(
                "host key for {label} is marked @revoked ({}:{line})",
                file.display()
            )),
            Verdict::Mismatch { file, line } => refuse(format!(
                "host key for {label} does not match the known key ({}:{line}); it may have been replaced, or someone may be intercepting the connection",
                file.display()
            )),
            Verdict::Unknown => match (self.keys.check, key) {
                (HostKeyCheck::AcceptNew, PublicKeyOrCertificate::PublicKey { key, .. }) => {
                    match known_hosts::learn(&self.keys.learn_file, &self.host, self.port, key) {
                        Ok(()) => {
                            tracing::info!(
                                "learned the host key of {label} into {}",
                                self.keys.learn_file.display()
                            );
                            Ok(true)
                        }
                        Err(e) => refuse(format!("cannot record the host key of {label}: {e}")),
                    }
                }
                _ => refuse(format!(
                    "host key for {label} is unknown (not in {}); add it with ssh-keyscan, or set host-key-check: accept-new",
                    self.keys.learn_file.display()
                )),
            },
        }
    }
}

fn client_config(certificates: bool) -> client::Config {
    use russh::kex;
    let kex = vec![
        kex::CURVE25519,
        kex::CURVE25519_PRE_RFC_8731,
        kex::MLKEM768X25519_SHA256,
        kex::DH_GEX_SHA256,
        kex::DH_G16_SHA512,
        kex::DH_G14_SHA256,
        kex::EXTENSION_SUPPORT_AS_CLIENT,
        kex::EXTENSION_OPENSSH_STRICT_KEX_AS_CLIENT,
    ];
    let mut preferred = russh::Preferred {
        kex: Cow::Owned(kex),
        ..Default::default()
    };
    if aes_in_hardware() {
        // AES-GCM with AES-NI costs a fraction of ChaCha20-Poly1305 per byte.
        use russh::cipher;
        preferred.cipher = Cow::Owned(vec![
            cipher::AES_256_GCM,
            cipher::CHACHA20_POLY1305,
            cipher::AES_256_CTR,
            cipher::AES_128_CTR,
        ]);
    }
    if certificates {
        preferred.host_key_certificates = preferred.key.clone();
    }
    client::Config {
        preferred,
        keepalive_interval: Some(Duration::from_secs(15)),
        keepalive_max: 3,
        nodelay: true,
        ..Default::default()
    }
}

fn aes_in_hardware() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("aes")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("aes")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// Opens the session the plan describes, hop by hop, within its timeout.
pub async fn open(plan: &Plan) -> Result<Session, TransportError> {
    let target = plan.target.clone();
    tokio::time::timeout(plan.timeout, open_chain(plan))
        .await
        .map_err(|_| {
            TransportError::connect(
                ConnectIssue::Connect,
                format!(
                    "timed out after {}s connecting to {target}",
                    plan.timeout.as_secs()
                ),
            )
        })?
}

async fn open_chain(plan: &Plan) -> Result<Session, TransportError> {
    let config = Arc::new(client_config(plan.host_keys.known.has_cert_authorities()));
    let mut hops: Vec<Handle<Client>> = Vec::new();
    for ep in plan.jumps.iter().chain(std::iter::once(&plan.target)) {
        let failure = Arc::new(Mutex::new(None));
        let handler = Client {
            host: ep.host.clone(),
            port: ep.port,
            keys: plan.host_keys.clone(),
            failure: Arc::clone(&failure),
        };
        let connected = match hops.last() {
            None => {
                let stream = tcp::connect(&ep.host, ep.port, plan.timeout)
                    .await
                    .map_err(|e| {
                        TransportError::connect(
                            ConnectIssue::Connect,
                            format!("cannot connect to {}:{}: {e}", ep.host, ep.port),
                        )
                    })?;
                client::connect_stream(Arc::clone(&config), stream, handler).await
            }
            Some(jump) => {
                let channel = jump
                    .channel_open_direct_tcpip(ep.host.clone(), u32::from(ep.port), "127.0.0.1", 0)
                    .await
                    .map_err(|e| {
                        TransportError::connect(
                            ConnectIssue::Connect,
                            format!("the jump host cannot reach {}:{}: {e}", ep.host, ep.port),
                        )
                    })?;
                client::connect_stream(Arc::clone(&config), channel.into_stream(), handler).await
            }
        };
        let mut handle = connected.map_err(|e| {
            let refused = failure.lock().ok().and_then(|mut f| f.take());
            match refused {
                Some(why) => TransportError::connect(ConnectIssue::HostKey, why),
                None => TransportError::connect(
                    ConnectIssue::Connect,
                    format!("SSH handshake with {}:{} failed: {e}", ep.host, ep.port),
                ),
            }
        })?;
        auth::authenticate(&mut handle, ep, &plan.auth).await?;
        hops.push(handle);
    }
    let handle = hops
        .pop()
        .ok_or_else(|| TransportError::connect(ConnectIssue::Connect, "no host to connect to"))?;
    Ok(Session {
        handle,
        _hops: hops,
    })
}
