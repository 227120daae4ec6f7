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

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, KeyInit, Mac};
use russh::keys::PublicKeyOrCertificate;
use russh::keys::ssh_key::certificate::CertType;
use russh::keys::ssh_key::public::KeyData;
use russh::keys::ssh_key::{self, Certificate, HashAlg, PublicKey};
use wildmatch::WildMatch;

type HmacSha1 = Hmac<sha1::Sha1>;

/// Length of a SHA-1 HMAC output, the only hash length valid in `|1|` entries.
const SHA1_LEN: usize = 20;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    None,
    CertAuthority,
    Revoked,
}

#[derive(Debug, Clone)]
enum HostPattern {
    /// A (lower-cased) wildcard pattern; `negated` for a leading `!`.
    Wild { pattern: WildMatch, negated: bool },
    /// `|1|salt|hash`: HMAC-SHA1 of the lookup name keyed with the salt.
    Hashed { salt: Vec<u8>, hash: Vec<u8> },
}

#[derive(Debug, Clone)]
struct Entry {
    file: PathBuf,
    line: usize,
    marker: Marker,
    hosts: Vec<HostPattern>,
    key: KeyData,
}

impl Entry {
    /// OpenSSH semantics: a matching negated pattern vetoes the line,
    /// otherwise any matching positive pattern selects it.
    fn matches(&self, name: &str) -> bool {
        let mut hit = false;
        for pattern in &self.hosts {
            match pattern {
                HostPattern::Wild { pattern, negated } => {
                    if pattern.matches(name) {
                        if *negated {
                            return false;
                        }
                        hit = true;
                    }
                }
                HostPattern::Hashed { salt, hash } => {
                    if !hit && hashed_name_matches(salt, hash, name) {
                        hit = true;
                    }
                }
            }
        }
        hit
    }
}

fn hashed_name_matches(salt: &[u8], hash: &[u8], name: &str) -> bool {
    match HmacSha1::new_from_slice(salt) {
        Ok(mut mac) => {
            mac.update(name.as_bytes());
            mac.verify_slice(hash).is_ok()
        }
        Err(_) => false,
    }
}

/// The name OpenSSH looks up: `host` for port 22, `[host]:port` otherwise,
/// lower-cased (host names are matched case-insensitively).
fn lookup_name(host: &str, port: u16) -> String {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
        .to_ascii_lowercase();
    if port == 22 {
        host
    } else {
        format!("[{host}]:{port}")
    }
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

    /// Number of usable lines loaded (host keys, CA keys and revocations).
    /// Whether any `@cert-authority` line is known, so that host
    /// certificates are worth asking for.
    pub fn has_cert_authorities(&self) -> bool {
        self.entries
            .iter()
            .any(|e| e.marker == Marker::CertAuthority)
    }

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

/// Validate a host certificate against the `@cert-authority` lines that
/// match the host. `host` is the bare host name (what principals name),
/// `name` the lookup name used for messages.
fn check_certificate(
    cert: &Certificate,
    host: &str,
    name: &str,
    matching: &[&Entry],
    now: u64,
) -> Result<(), String> {
    let ca = matching
        .iter()
        .find(|e| e.marker == Marker::CertAuthority && e.key == *cert.signature_key())
        .ok_or_else(|| format!("no @cert-authority line for {name} lists its signing CA"))?;
    if cert.cert_type() != CertType::Host {
        return Err("it is a user certificate, not a host certificate".to_string());
    }
    let fingerprint = ca.key.fingerprint(HashAlg::Sha256);
    if cert.validate_at(now, [&fingerprint]).is_err() {
        return Err(format!(
            "signature invalid or outside its validity window (valid after {}, before {}, now {now})",
            cert.valid_after(),
            cert.valid_before()
        ));
    }
    let principals = cert.valid_principals();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if !principals.is_empty() && !principals.iter().any(|p| p.eq_ignore_ascii_case(host)) {
        return Err(format!(
            "principals {principals:?} do not include {host:?} (CA at {}:{})",
            ca.file.display(),
            ca.line
        ));
    }
    Ok(())
}

type ParsedLine = (Marker, Vec<HostPattern>, KeyData);

/// Parse one line; `Ok(None)` for blank lines and comments.
fn parse_line(text: &str) -> Result<Option<ParsedLine>, String> {
    let mut fields = text.split([' ', '\t']).filter(|f| !f.is_empty());
    let Some(mut first) = fields.next() else {
        return Ok(None);
    };
    if first.starts_with('#') {
        return Ok(None);
    }
    let mut marker = Marker::None;
    if first.starts_with('@') {
        marker = match first {
            "@cert-authority" => Marker::CertAuthority,
            "@revoked" => Marker::Revoked,
            other => return Err(format!("unknown marker {other:?}")),
        };
        first = fields.next().ok_or("missing host patterns after marker")?;
    }
    let hosts = parse_hosts(first)?;
    let key_type = fields.next().ok_or("missing key type")?;
    let key_b64 = fields.next().ok_or("missing key data")?;
    let key = PublicKey::from_openssh(&format!("{key_type} {key_b64}"))
        .map_err(|err| format!("invalid {key_type} key: {err}"))?;
    let key = key.key_data().clone();
    if matches!(key, KeyData::Certificate(_)) {
        return Err("certificates are not valid known_hosts keys".to_string());
    }
    Ok(Some((marker, hosts, key)))
}

fn parse_hosts(field: &str) -> Result<Vec<HostPattern>, String> {
    field
        .split(',')
        .map(|item| {
            if item.is_empty() {
                return Err("empty host pattern".to_string());
            }
            if let Some(rest) = item.strip_prefix('|') {
                return parse_hashed(rest);
            }
            let (pattern, negated) = match item.strip_prefix('!') {
                Some(p) => (p, true),
                None => (item, false),
            };
            if pattern.is_empty() {
                return Err("empty negated host pattern".to_string());
            }
            Ok(HostPattern::Wild {
                pattern: WildMatch::new(&pattern.to_ascii_lowercase()),
                negated,
            })
        })
        .collect()
}

/// Parse the part of `|1|salt|hash` after the leading `|`.
fn parse_hashed(rest: &str) -> Result<HostPattern, String> {
    let mut parts = rest.split('|');
    if parts.next() != Some("1") {
        return Err("unsupported hashed host format (expected |1|salt|hash)".to_string());
    }
    let (Some(salt), Some(hash), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err("hashed host is not |1|salt|hash".to_string());
    };
    let salt = BASE64
        .decode(salt)
        .map_err(|err| format!("hashed host salt is not base64: {err}"))?;
    let hash = BASE64
        .decode(hash)
        .map_err(|err| format!("hashed host hash is not base64: {err}"))?;
    if salt.is_empty() || hash.len() != SHA1_LEN {
        return Err("hashed host has an empty salt or a hash that is not 20 bytes".to_string());
    }
    Ok(HostPattern::Hashed { salt, hash })
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use tempfile::TempDir;

    /// Make an ed25519 key pair with ssh-keygen in `dir`; returns the private key path.
    fn keygen(dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        let status = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        path
    }

    fn pub_line(private: &Path) -> String {
        fs::read_to_string(private.with_extension("pub"))
            .unwrap()
            .trim()
            .to_string()
    }

    /// "ssh-ed25519 AAAA..." without the comment.
    fn key_text(private: &Path) -> String {
        let line = pub_line(private);
        let mut parts = line.split(' ');
        format!("{} {}", parts.next().unwrap(), parts.next().unwrap())
    }

    fn public(private: &Path) -> PublicKey {
        PublicKey::from_openssh(&pub_line(private)).unwrap()
    }

    fn plain(private: &Path) -> PublicKeyOrCertificate {
        public(private).into()
    }

    /// Sign `private`.pub as a host certificate with `ca`; returns the cert.
    fn host_cert(
        ca: &Path,
        private: &Path,
        principals: Option<&str>,
        validity: &str,
    ) -> Certificate {
        let mut cmd = Command::new("ssh-keygen");
        cmd.args(["-q", "-s"])
            .arg(ca)
            .args(["-I", "test-host", "-h", "-V", validity]);
        if let Some(p) = principals {
            cmd.args(["-n", p]);
        }
        let status = cmd.arg(private.with_extension("pub")).status().unwrap();
        assert!(status.success());
        let mut cert_path = private.as_os_str().to_owned();
        cert_path.push("-cert.pub");
        Certificate::read_file(Path::new(&cert_path)).unwrap()
    }

    fn known_from(dir: &Path, text: &str) -> (KnownHosts, PathBuf) {
        let path = dir.join("known_hosts");
        fs::write(&path, text).unwrap();
        (KnownHosts::load(std::slice::from_ref(&path)).unwrap(), path)
    }

    fn hash_line_ourselves(name: &str, salt: &[u8]) -> String {
        let mut mac = HmacSha1::new_from_slice(salt).unwrap();
        mac.update(name.as_bytes());
        let hash = mac.finalize().into_bytes();
        format!("|1|{}|{}", BASE64.encode(salt), BASE64.encode(hash))
    }

    struct Keys {
        dir: TempDir,
        a: PathBuf,
        b: PathBuf,
        ca: PathBuf,
        other_ca: PathBuf,
    }

    fn keys() -> Keys {
        let dir = TempDir::new().unwrap();
        let a = keygen(dir.path(), "host_a");
        let b = keygen(dir.path(), "host_b");
        let ca = keygen(dir.path(), "ca");
        let other_ca = keygen(dir.path(), "other_ca");
        Keys {
            dir,
            a,
            b,
            ca,
            other_ca,
        }
    }

    fn mismatch(path: &Path, line: usize) -> Verdict {
        Verdict::Mismatch {
            file: path.to_path_buf(),
            line,
        }
    }

    fn revoked(path: &Path, line: usize) -> Verdict {
        Verdict::Revoked {
            file: path.to_path_buf(),
            line,
        }
    }

    #[test]
    fn plain_keys_patterns_and_ports() {
        let k = keys();
        let ka = key_text(&k.a);
        let text = format!(
            "# comment line\n\
             \n\
             alpha.example.com,10.0.0.1 {ka} some comment\n\
             [beta.example.com]:2222 {ka}\n\
             *.wild.example.com,!bad.wild.example.com {ka}\n\
             node?.example.com {ka}\n\
             [gamma.example.com]:22 {ka}\n\
             [*.ports.example.com]:* {ka}\n\
             UPPER.example.com {ka}\n"
        );
        let (known, _) = known_from(k.dir.path(), &text);
        let a = plain(&k.a);
        let cases: &[(&str, u16, Verdict)] = &[
            ("alpha.example.com", 22, Verdict::Trusted),
            ("10.0.0.1", 22, Verdict::Trusted),
            ("ALPHA.example.COM", 22, Verdict::Trusted),
            ("alpha.example.com", 2222, Verdict::Unknown),
            ("beta.example.com", 2222, Verdict::Trusted),
            ("beta.example.com", 22, Verdict::Unknown),
            ("beta.example.com", 2200, Verdict::Unknown),
            ("x.wild.example.com", 22, Verdict::Trusted),
            ("bad.wild.example.com", 22, Verdict::Unknown),
            ("wild.example.com", 22, Verdict::Unknown),
            // `*.wild...` is matched against "[x.wild.example.com]:2022", as OpenSSH does.
            ("x.wild.example.com", 2022, Verdict::Unknown),
            ("node1.example.com", 22, Verdict::Trusted),
            ("node12.example.com", 22, Verdict::Unknown),
            // port 22 is looked up without brackets
            ("gamma.example.com", 22, Verdict::Unknown),
            ("a.ports.example.com", 8022, Verdict::Trusted),
            ("upper.example.com", 22, Verdict::Trusted),
            ("nowhere.example.com", 22, Verdict::Unknown),
        ];
        for (host, port, want) in cases {
            assert_eq!(&known.check(host, *port, &a), want, "{host}:{port}");
        }
    }

    #[test]
    fn mismatch_and_unknown() {
        let k = keys();
        let ka = key_text(&k.a);
        let kb = key_text(&k.b);
        let text = format!("alpha {ka}\nbeta {kb}\nbeta {ka}\n[gamma]:2222 {kb}\n");
        let (known, path) = known_from(k.dir.path(), &text);
        let a = plain(&k.a);
        let b = plain(&k.b);
        assert_eq!(known.check("alpha", 22, &a), Verdict::Trusted);
        assert_eq!(known.check("alpha", 22, &b), mismatch(&path, 1));
        // any listed key matching is enough
        assert_eq!(known.check("beta", 22, &a), Verdict::Trusted);
        assert_eq!(known.check("beta", 22, &b), Verdict::Trusted);
        assert_eq!(known.check("gamma", 2222, &a), mismatch(&path, 4));
        assert_eq!(known.check("gamma", 22, &a), Verdict::Unknown);
        assert_eq!(known.check("delta", 22, &a), Verdict::Unknown);
    }

    #[test]
    fn mismatch_prefers_a_line_of_the_same_algorithm() {
        let k = keys();
        let ka = key_text(&k.a);
        let rsa = keygen_rsa(k.dir.path());
        let text = format!("host {}\nhost {ka}\n", key_text(&rsa));
        let (known, path) = known_from(k.dir.path(), &text);
        assert_eq!(known.check("host", 22, &plain(&k.b)), mismatch(&path, 2));
    }

    fn keygen_rsa(dir: &Path) -> PathBuf {
        let path = dir.join("rsa_key");
        let status = Command::new("ssh-keygen")
            .args(["-q", "-t", "rsa", "-b", "2048", "-N", "", "-f"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        path
    }

    #[test]
    fn hashed_entries_match_ssh_keygen_both_ways() {
        let k = keys();
        let ka = key_text(&k.a);
        let path = k.dir.path().join("known_hosts");

        // ssh-keygen -H hashes plain lines; we must match what it wrote.
        fs::write(
            &path,
            format!("hashed.example.com {ka}\n[hashed.example.com]:2222 {ka}\n"),
        )
        .unwrap();
        let status = Command::new("ssh-keygen")
            .args(["-q", "-H", "-f"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(status.status.success());
        let hashed = fs::read_to_string(&path).unwrap();
        assert!(hashed.lines().all(|l| l.starts_with("|1|")), "{hashed}");
        let known = KnownHosts::load(std::slice::from_ref(&path)).unwrap();
        let a = plain(&k.a);
        assert_eq!(known.check("hashed.example.com", 22, &a), Verdict::Trusted);
        assert_eq!(
            known.check("hashed.example.com", 2222, &a),
            Verdict::Trusted
        );
        assert_eq!(
            known.check("hashed.example.com", 2200, &a),
            Verdict::Unknown
        );
        assert_eq!(known.check("other.example.com", 22, &a), Verdict::Unknown);
        assert_eq!(
            known.check("hashed.example.com", 22, &plain(&k.b)),
            mismatch(&path, 1)
        );

        // Lines we hash ourselves must be found by ssh-keygen -F, and by us.
        let ours = k.dir.path().join("ours");
        let salt = [7u8; 20];
        fs::write(
            &ours,
            format!(
                "{} {ka}\n{} {ka}\n",
                hash_line_ourselves("mine.example.com", &salt),
                hash_line_ourselves("[mine.example.com]:2222", &salt)
            ),
        )
        .unwrap();
        for query in ["mine.example.com", "[mine.example.com]:2222"] {
            let out = Command::new("ssh-keygen")
                .args(["-F", query, "-f"])
                .arg(&ours)
                .output()
                .unwrap();
            assert!(out.status.success(), "ssh-keygen -F {query} found nothing");
        }
        let known = KnownHosts::load(&[ours]).unwrap();
        assert_eq!(known.check("mine.example.com", 22, &a), Verdict::Trusted);
        assert_eq!(known.check("mine.example.com", 2222, &a), Verdict::Trusted);
    }

    #[test]
    fn revoked_takes_precedence() {
        let k = keys();
        let ka = key_text(&k.a);
        let text = format!(
            "alpha {ka}\n@revoked * {ka}\n@revoked beta {}\n",
            key_text(&k.b)
        );
        let (known, path) = known_from(k.dir.path(), &text);
        assert_eq!(known.check("alpha", 22, &plain(&k.a)), revoked(&path, 2));
        assert_eq!(known.check("other", 2222, &plain(&k.a)), revoked(&path, 2));
        // @revoked lines only apply to the hosts they name
        assert_eq!(known.check("beta", 22, &plain(&k.b)), revoked(&path, 3));
        assert_eq!(known.check("alpha", 22, &plain(&k.b)), mismatch(&path, 1));
    }

    #[test]
    fn cert_authority() {
        let k = keys();
        let ca = key_text(&k.ca);
        let valid = host_cert(&k.ca, &k.a, Some("web.example.com,alias"), "-5m:+1h");
        let no_principals = host_cert(&k.ca, &k.b, None, "-5m:+1h");
        let text = format!(
            "@cert-authority *.example.com,alias {ca}\n\
             @cert-authority [*.example.com]:2222 {ca}\n\
             @cert-authority other.org {}\n",
            key_text(&k.other_ca)
        );
        let (known, _) = known_from(k.dir.path(), &text);
        let cert = PublicKeyOrCertificate::Certificate(valid.clone());
        let cases: &[(&str, u16, Verdict)] = &[
            ("web.example.com", 22, Verdict::Trusted),
            ("web.example.com", 2222, Verdict::Trusted),
            ("alias", 22, Verdict::Trusted),
            // CA listed, principal wrong: falls back to the plain key, which is unknown
            ("db.example.com", 22, Verdict::Unknown),
            // CA not listed for this port / host
            ("web.example.com", 2200, Verdict::Unknown),
            ("web.other.org", 22, Verdict::Unknown),
        ];
        for (host, port, want) in cases {
            assert_eq!(&known.check(host, *port, &cert), want, "{host}:{port}");
        }
        // Empty principal list: accepted for any host under the CA (OpenSSH behaviour).
        let any = PublicKeyOrCertificate::Certificate(no_principals);
        assert_eq!(known.check("db.example.com", 22, &any), Verdict::Trusted);

        // The plain key inside a certificate is still checked as a plain key.
        let (known_plain, path) = known_from(
            k.dir.path(),
            &format!("db.example.com {}\n", key_text(&k.b)),
        );
        assert_eq!(
            known_plain.check("db.example.com", 22, &cert),
            mismatch(&path, 1)
        );
        assert_eq!(
            known_plain.check(
                "db.example.com",
                22,
                &PublicKeyOrCertificate::Certificate(host_cert(
                    &k.ca,
                    &k.b,
                    Some("nope"),
                    "-5m:+1h"
                ))
            ),
            Verdict::Trusted
        );
    }

    #[test]
    fn cert_authority_validity_window_and_type() {
        let k = keys();
        let ca = key_text(&k.ca);
        let (known, path) = known_from(
            k.dir.path(),
            &format!(
                "@cert-authority *.example.com {ca}\nweb.example.com {}\n",
                key_text(&k.b)
            ),
        );
        let expired = host_cert(&k.ca, &k.a, Some("web.example.com"), "20000101:20010101");
        let future = host_cert(&k.ca, &k.a, Some("web.example.com"), "+1d:+2d");
        for cert in [expired.clone(), future] {
            let cert = PublicKeyOrCertificate::Certificate(cert);
            // Rejected certificate: judged by its plain key, which is not b's.
            assert_eq!(
                known.check("web.example.com", 22, &cert),
                mismatch(&path, 2)
            );
            assert_eq!(known.check("api.example.com", 22, &cert), Verdict::Unknown);
        }
        // The same expired certificate checked at a time inside its window is trusted.
        let inside = 978_000_000; // 2000-12-28
        assert_eq!(
            known.check_at(
                "web.example.com",
                22,
                &PublicKeyOrCertificate::Certificate(expired),
                inside
            ),
            Verdict::Trusted
        );

        // A user certificate is never a host certificate.
        let status = Command::new("ssh-keygen")
            .args(["-q", "-s"])
            .arg(&k.ca)
            .args(["-I", "user", "-n", "api.example.com", "-V", "-5m:+1h"])
            .arg(k.other_ca.with_extension("pub"))
            .status()
            .unwrap();
        assert!(status.success());
        let mut cert_path = k.other_ca.as_os_str().to_owned();
        cert_path.push("-cert.pub");
        let user = Certificate::read_file(Path::new(&cert_path)).unwrap();
        assert_eq!(
            known.check(
                "api.example.com",
                22,
                &PublicKeyOrCertificate::Certificate(user)
            ),
            Verdict::Unknown
        );
    }

    #[test]
    fn revoked_ca_rejects_its_certificates() {
        let k = keys();
        let ca = key_text(&k.ca);
        let cert = host_cert(&k.ca, &k.a, Some("web.example.com"), "-5m:+1h");
        let (known, path) = known_from(
            k.dir.path(),
            &format!("@cert-authority *.example.com {ca}\n@revoked * {ca}\n"),
        );
        assert_eq!(
            known.check(
                "web.example.com",
                22,
                &PublicKeyOrCertificate::Certificate(cert)
            ),
            revoked(&path, 2)
        );
    }

    #[test]
    fn malformed_lines_are_skipped() {
        let k = keys();
        let ka = key_text(&k.a);
        let cases = [
            "justahost".to_string(),
            "host ssh-ed25519".to_string(),
            "host ssh-ed25519 !!!notbase64!!!".to_string(),
            "host ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIA==".to_string(),
            format!("@bogus host {ka}"),
            format!("@revoked {ka}"),
            format!("|1|bad|hash {ka}"),
            format!("|2|abc|def {ka}"),
            format!("host,,other {ka}"),
            format!("! {ka}"),
            format!(
                "|1|{}|{} {ka}",
                BASE64.encode([1u8; 20]),
                BASE64.encode([2u8; 5])
            ),
        ];
        let mut text = String::new();
        for bad in &cases {
            text.push_str(bad);
            text.push('\n');
        }
        text.push_str(&format!("good {ka}\r\n"));
        let path = k.dir.path().join("known_hosts");
        let mut bytes = text.into_bytes();
        bytes.extend_from_slice(b"\xff\xfe not utf8\n");
        fs::write(&path, bytes).unwrap();
        let known = KnownHosts::load(std::slice::from_ref(&path)).unwrap();
        assert_eq!(known.len(), 1, "only the good line survives");
        assert_eq!(known.check("good", 22, &plain(&k.a)), Verdict::Trusted);
        assert_eq!(known.check("host", 22, &plain(&k.a)), Verdict::Unknown);
    }

    #[test]
    fn missing_file_is_empty_unreadable_is_error_and_files_combine() {
        let k = keys();
        let missing = k.dir.path().join("does-not-exist");
        assert!(
            KnownHosts::load(std::slice::from_ref(&missing))
                .unwrap()
                .is_empty()
        );
        // A directory cannot be read as a file.
        let err = KnownHosts::load(&[k.dir.path().to_path_buf()]).unwrap_err();
        assert!(matches!(err, KnownHostsError::Read { .. }), "{err}");

        let first = k.dir.path().join("first");
        let second = k.dir.path().join("second");
        fs::write(&first, format!("one {}\n", key_text(&k.a))).unwrap();
        fs::write(&second, format!("\ntwo {}\n", key_text(&k.b))).unwrap();
        let known = KnownHosts::load(&[first, missing, second.clone()]).unwrap();
        assert_eq!(known.check("one", 22, &plain(&k.a)), Verdict::Trusted);
        assert_eq!(known.check("two", 22, &plain(&k.a)), mismatch(&second, 2));
    }

    #[test]
    fn learn_appends_then_trusts() {
        let k = keys();
        let path = k.dir.path().join("new/dir/known_hosts");
        learn(&path, "fresh.example.com", 22, &public(&k.a)).unwrap();
        learn(&path, "fresh.example.com", 2222, &public(&k.b)).unwrap();
        learn(&path, "::1", 2222, &public(&k.a)).unwrap();

        let text = fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], format!("fresh.example.com {}", key_text(&k.a)));
        assert_eq!(
            lines[1],
            format!("[fresh.example.com]:2222 {}", key_text(&k.b))
        );
        assert_eq!(lines[2], format!("[::1]:2222 {}", key_text(&k.a)));

        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }

        let known = KnownHosts::load(std::slice::from_ref(&path)).unwrap();
        assert_eq!(
            known.check("fresh.example.com", 22, &plain(&k.a)),
            Verdict::Trusted
        );
        assert_eq!(
            known.check("fresh.example.com", 2222, &plain(&k.b)),
            Verdict::Trusted
        );
        assert_eq!(known.check("::1", 2222, &plain(&k.a)), Verdict::Trusted);
        assert_eq!(
            known.check("fresh.example.com", 22, &plain(&k.b)),
            mismatch(&path, 1)
        );

        // ssh-keygen agrees with what we wrote.
        let out = Command::new("ssh-keygen")
            .args(["-F", "[fresh.example.com]:2222", "-f"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success());
    }

    #[test]
    fn learn_adds_missing_newline_and_rejects_odd_hosts() {
        let k = keys();
        let path = k.dir.path().join("known_hosts");
        fs::write(&path, format!("old {}", key_text(&k.b))).unwrap();
        learn(&path, "new", 22, &public(&k.a)).unwrap();
        let known = KnownHosts::load(std::slice::from_ref(&path)).unwrap();
        assert_eq!(known.check("old", 22, &plain(&k.b)), Verdict::Trusted);
        assert_eq!(known.check("new", 22, &plain(&k.a)), Verdict::Trusted);

        for bad in [
            "", "a b", "a,b", "*", "h?", "!h", "|1|x", "@revoked", "#x", "a\nb", "[h]",
        ] {
            let err = learn(&path, bad, 22, &public(&k.a)).unwrap_err();
            assert!(
                matches!(err, KnownHostsError::InvalidHost { .. }),
                "{bad:?}"
            );
        }
    }
}
