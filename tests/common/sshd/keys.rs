//! SSH key types and key generation with `ssh-keygen`, and the client key
//! pairs ([`ClientKeys`]) generated once per test process and authorized on
//! every fixture daemon.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::thread;

use super::KEY_PASSPHRASE;
use super::process::{exit_registry, install_exit_hook};
use super::util::{fail, run, temp_dir};

/// Type of an SSH key, for host keys and client keys alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyType {
    Ed25519,
    Ecdsa,
    Rsa,
}

impl KeyType {
    /// Every key type, ed25519 first.
    pub const ALL: [KeyType; 3] = [KeyType::Ed25519, KeyType::Ecdsa, KeyType::Rsa];

    /// The name `ssh-keygen -t` takes, also used in file names.
    pub fn name(self) -> &'static str {
        match self {
            KeyType::Ed25519 => "ed25519",
            KeyType::Ecdsa => "ecdsa",
            KeyType::Rsa => "rsa",
        }
    }
}

/// Client key pairs shared by every fixture of the test process.
#[derive(Debug)]
pub struct ClientKeys {
    dir: PathBuf,
    public: HashMap<KeyType, String>,
    encrypted_public: String,
}

impl ClientKeys {
    /// Directory holding the keys.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Unencrypted private key of the given type (OpenSSH format).
    pub fn path(&self, kind: KeyType) -> PathBuf {
        self.dir.join(format!("id_{}", kind.name()))
    }

    /// Public key of the given type, as `"<algorithm> <base64>"`.
    pub fn public_key(&self, kind: KeyType) -> &str {
        &self.public[&kind]
    }

    /// Private ed25519 key encrypted with [`KEY_PASSPHRASE`].
    pub fn encrypted_path(&self) -> PathBuf {
        self.dir.join("id_ed25519_encrypted")
    }

    /// Public half of [`ClientKeys::encrypted_path`].
    pub fn encrypted_public_key(&self) -> &str {
        &self.encrypted_public
    }

    /// Passphrase of [`ClientKeys::encrypted_path`].
    pub fn passphrase(&self) -> &'static str {
        KEY_PASSPHRASE
    }

    /// `authorized_keys` content listing every client key.
    pub(super) fn authorized_keys(&self) -> String {
        let mut content = String::new();
        for kind in KeyType::ALL {
            let _ = writeln!(
                content,
                "{} ferry-test-{}",
                self.public_key(kind),
                kind.name()
            );
        }
        let _ = writeln!(content, "{} ferry-test-encrypted", self.encrypted_public);
        content
    }
}

/// The process-wide client keys, generated on first use.
pub fn client_keys() -> &'static ClientKeys {
    static KEYS: OnceLock<ClientKeys> = OnceLock::new();
    KEYS.get_or_init(|| {
        install_exit_hook();
        let dir = temp_dir("keys").keep();
        exit_registry().dirs.push(dir.clone());
        // RSA generation dominates; run ssh-keygen concurrently.
        let (public, encrypted_public) = thread::scope(|scope| {
            let encrypted = scope.spawn(|| {
                generate_key(
                    KeyType::Ed25519,
                    &dir.join("id_ed25519_encrypted"),
                    KEY_PASSPHRASE,
                    "ferry-test-client-encrypted",
                )
            });
            let public: HashMap<KeyType, String> = generate_keys(&KeyType::ALL, |kind| {
                (dir.join(format!("id_{}", kind.name())), "ferry-test-client")
            })
            .into_iter()
            .map(|(kind, _, public)| (kind, public))
            .collect();
            (
                public,
                encrypted.join().expect("ssh-keygen thread panicked"),
            )
        });
        ClientKeys {
            dir,
            public,
            encrypted_public,
        }
    })
}

/// Generates unencrypted key pairs of several types concurrently; `place`
/// gives each one's private key path and comment.
pub(super) fn generate_keys(
    kinds: &[KeyType],
    place: impl Fn(KeyType) -> (PathBuf, &'static str) + Sync,
) -> Vec<(KeyType, PathBuf, String)> {
    thread::scope(|scope| {
        let jobs: Vec<_> = kinds
            .iter()
            .map(|&kind| {
                let place = &place;
                scope.spawn(move || {
                    let (path, comment) = place(kind);
                    let public = generate_key(kind, &path, "", comment);
                    (kind, path, public)
                })
            })
            .collect();
        jobs.into_iter()
            .map(|job| job.join().expect("ssh-keygen thread panicked"))
            .collect()
    })
}

/// Generates a key pair with ssh-keygen; returns `"<algorithm> <base64>"`.
pub(super) fn generate_key(kind: KeyType, path: &Path, passphrase: &str, comment: &str) -> String {
    if let Err(e) = run(Command::new("ssh-keygen")
        .args([
            "-q",
            "-t",
            kind.name(),
            "-N",
            passphrase,
            "-C",
            comment,
            "-f",
        ])
        .arg(path))
    {
        fail(e);
    }
    let public_path = PathBuf::from(format!("{}.pub", path.display()));
    let public = fs::read_to_string(&public_path)
        .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", public_path.display())));
    public
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}
