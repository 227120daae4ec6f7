//! OpenSSH `known_hosts` verification for the SSH transport.
//!
//! This module owns reading `known_hosts` files (plain, comma-separated,
//! `[host]:port`, hashed `|1|salt|hash`, wildcard and negated host patterns,
//! `@revoked` and `@cert-authority` markers), deciding whether a server host
//! key or host certificate presented during key exchange is trusted
//! ([`KnownHosts::check`] returning a [`Verdict`]), and recording a newly
//! accepted key ([`learn`], used for `StrictHostKeyChecking accept-new`).
//! Malformed lines are skipped with a warning naming `file:line`; one bad line
//! never invalidates a whole file. The policy decision (reject, prompt, learn)
//! is the caller's; this module only reports what the files say.

mod cert;
mod parse;
#[cfg(test)]
mod tests;

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use russh::keys::PublicKeyOrCertificate;
use russh::keys::ssh_key::public::KeyData;
use russh::keys::ssh_key::{self, Certificate, PublicKey};

use self::cert::check_certificate;
use self::parse::{Entry, Marker, lookup_name, parse_line};

/// Errors from loading `known_hosts` files or recording a new host key.
#[derive(Debug, thiserror::Error)]
pub enum KnownHostsError {
    /// A `known_hosts` file exists but could not be read.
    #[error("cannot read known_hosts file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A `known_hosts` file (or its directory) could not be created or appended to.
    #[error("cannot write known_hosts file {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The host name cannot be written safely as a `known_hosts` host field.
    #[error("refusing to record host {host:?} in known_hosts: {reason}")]
    InvalidHost { host: String, reason: &'static str },
    /// The host key could not be serialised in OpenSSH format.
    #[error("cannot encode host key for known_hosts: {0}")]
    EncodeKey(#[source] ssh_key::Error),
}

/// Outcome of checking a server's host key against the loaded files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The key is listed for this host, or it is a valid host certificate
    /// signed by a `@cert-authority` listed for this host.
    Trusted,
    /// No (non-CA) line names this host: the key is neither trusted nor contradicted.
    Unknown,
    /// The host is known with other key(s); the presented key is not among
    /// them. `file:line` is the entry to show the user (one of the same
    /// algorithm when there is one).
    Mismatch { file: PathBuf, line: usize },
    /// The key (or the CA that signed its certificate) is marked `@revoked`
    /// for this host at `file:line`.
    Revoked { file: PathBuf, line: usize },
}

/// Host keys and CA keys read from one or more `known_hosts` files, each
/// remembered with the file and 1-based line it came from.
#[derive(Debug, Clone, Default)]
pub struct KnownHosts {
    entries: Vec<Entry>,
}

impl KnownHosts {
    /// Read `paths` in order. A file that does not exist contributes no
    /// entries; any other read failure is an error. Malformed lines are
    /// skipped with a warning.
    pub fn load(paths: &[PathBuf]) -> Result<Self, KnownHostsError> {
        let mut known = KnownHosts::default();
        for path in paths {
            match fs::read(path) {
                Ok(bytes) => known.parse_into(path, &bytes),
                Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(KnownHostsError::Read {
                        path: path.clone(),
                        source,
                    });
                }
            }
        }
        Ok(known)
    }

    /// Whether any `@cert-authority` line is known, so that host
    /// certificates are worth asking for.
    pub fn has_cert_authorities(&self) -> bool {
        self.entries
            .iter()
            .any(|e| e.marker == Marker::CertAuthority)
    }

    /// Number of usable lines loaded (host keys, CA keys and revocations).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no usable line was loaded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn parse_into(&mut self, file: &Path, bytes: &[u8]) {
        for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
            let line_no = index + 1;
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            let Ok(text) = std::str::from_utf8(raw) else {
                tracing::warn!(
                    "{}:{}: skipping known_hosts line: not valid UTF-8",
                    file.display(),
                    line_no
                );
                continue;
            };
            match parse_line(text) {
                Ok(None) => {}
                Ok(Some((marker, hosts, key))) => self.entries.push(Entry {
                    file: file.to_path_buf(),
                    line: line_no,
                    marker,
                    hosts,
                    key,
                }),
                Err(reason) => tracing::warn!(
                    "{}:{}: skipping malformed known_hosts line: {}",
                    file.display(),
                    line_no,
                    reason
                ),
            }
        }
    }

    /// Decide whether `key`, presented by the server at `host`:`port` during
    /// key exchange, is trusted. `host` is the name the user connected to
    /// (after `HostName` resolution), not an IP the name resolved to.
    ///
    /// Order of evaluation (following OpenSSH):
    /// 1. the key, a certificate's certified key, or a certificate's CA key
    ///    listed `@revoked` for the host → [`Verdict::Revoked`];
    /// 2. a host certificate signed by a CA listed `@cert-authority` for the
    ///    host, currently valid, whose principals are empty or include `host`
    ///    → [`Verdict::Trusted`]; a certificate failing this is logged and then
    ///    judged as its plain certified key;
    /// 3. the plain key listed for the host → [`Verdict::Trusted`];
    /// 4. the host listed with other keys → [`Verdict::Mismatch`];
    /// 5. otherwise → [`Verdict::Unknown`] (`@cert-authority` lines alone do
    ///    not make a host "known" for plain keys, as in OpenSSH).
    pub fn check(&self, host: &str, port: u16, key: &PublicKeyOrCertificate) -> Verdict {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        self.check_at(host, port, key, now)
    }

    fn check_at(&self, host: &str, port: u16, key: &PublicKeyOrCertificate, now: u64) -> Verdict {
        let name = lookup_name(host, port);
        let matching: Vec<&Entry> = self.entries.iter().filter(|e| e.matches(&name)).collect();

        let (plain, cert): (&KeyData, Option<&Certificate>) = match key {
            PublicKeyOrCertificate::PublicKey { key, .. } => (key.key_data(), None),
            PublicKeyOrCertificate::Certificate(cert) => (cert.public_key(), Some(cert)),
        };

        for entry in matching.iter().filter(|e| e.marker == Marker::Revoked) {
            let ca_revoked = cert.is_some_and(|c| c.signature_key() == &entry.key);
            if entry.key == *plain || ca_revoked {
                return Verdict::Revoked {
                    file: entry.file.clone(),
                    line: entry.line,
                };
            }
        }

        if let Some(cert) = cert {
            match check_certificate(cert, host, &name, &matching, now) {
                Ok(()) => return Verdict::Trusted,
                Err(reason) => tracing::warn!(
                    "host certificate for {name} not accepted ({reason}); checking its key as a plain host key"
                ),
            }
        }

        let mut first_other: Option<&Entry> = None;
        let mut same_algorithm: Option<&Entry> = None;
        for entry in matching.iter().filter(|e| e.marker == Marker::None) {
            if entry.key == *plain {
                return Verdict::Trusted;
            }
            first_other.get_or_insert(entry);
            if same_algorithm.is_none() && entry.key.algorithm() == plain.algorithm() {
                same_algorithm = Some(entry);
            }
        }
        match same_algorithm.or(first_other) {
            Some(entry) => Verdict::Mismatch {
                file: entry.file.clone(),
                line: entry.line,
            },
            None => Verdict::Unknown,
        }
    }
}

/// Append `host`:`port` with `key` to the `known_hosts` file at `path`
/// (for `accept-new`). The parent directory is created with mode 0700 and
/// the file with mode 0600 when missing. The line is written in plain (not
/// hashed) form, `[host]:port` for ports other than 22, with one `write` on
/// a file opened `O_APPEND`, so concurrent learners never interleave lines.
pub fn learn(path: &Path, host: &str, port: u16, key: &PublicKey) -> Result<(), KnownHostsError> {
    validate_learn_host(host)?;
    let write_err = |source| KnownHostsError::Write {
        path: path.to_path_buf(),
        source,
    };
    let key_text = PublicKey::new(key.key_data().clone(), "")
        .to_openssh()
        .map_err(KnownHostsError::EncodeKey)?;
    let mut line = format!("{} {}\n", lookup_name(host, port), key_text.trim_end());

    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(parent).map_err(write_err)?;
    }

    let mut options = OpenOptions::new();
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(write_err)?;

    // Never glue our line onto a last line that lacks its newline.
    let len = file.metadata().map_err(write_err)?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::End(-1)).map_err(write_err)?;
        file.read_exact(&mut last).map_err(write_err)?;
        if last[0] != b'\n' {
            line.insert(0, '\n');
        }
    }
    file.write_all(line.as_bytes()).map_err(write_err)?;
    file.sync_data().map_err(write_err)
}

/// Reject names that would change the meaning of a `known_hosts` line.
fn validate_learn_host(host: &str) -> Result<(), KnownHostsError> {
    let reason = if host.is_empty() {
        Some("empty host name")
    } else if host
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || ",*?![]".contains(c))
    {
        Some("contains whitespace, control characters or one of , * ? ! [ ]")
    } else if host.starts_with(['#', '|', '@']) {
        Some("starts with #, | or @")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(KnownHostsError::InvalidHost {
            host: host.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}
