//! Reading `known_hosts` lines: markers, comma-separated host patterns
//! (wildcards, negation, `[host]:port`), hashed `|1|salt|hash` hosts and the
//! key field, plus the lookup name a host and port are matched as. Nothing
//! here decides trust; [`super::KnownHosts::check`] does.

use std::path::PathBuf;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, KeyInit, Mac};
use russh::keys::ssh_key::PublicKey;
use russh::keys::ssh_key::public::KeyData;
use wildmatch::WildMatch;

pub(super) type HmacSha1 = Hmac<sha1::Sha1>;

/// Length of a SHA-1 HMAC output, the only hash length valid in `|1|` entries.
const SHA1_LEN: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Marker {
    None,
    CertAuthority,
    Revoked,
}

#[derive(Debug, Clone)]
pub(super) enum HostPattern {
    /// A (lower-cased) wildcard pattern; `negated` for a leading `!`.
    Wild { pattern: WildMatch, negated: bool },
    /// `|1|salt|hash`: HMAC-SHA1 of the lookup name keyed with the salt.
    Hashed { salt: Vec<u8>, hash: Vec<u8> },
}

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) file: PathBuf,
    pub(super) line: usize,
    pub(super) marker: Marker,
    pub(super) hosts: Vec<HostPattern>,
    pub(super) key: KeyData,
}

impl Entry {
    /// OpenSSH semantics: a matching negated pattern vetoes the line,
    /// otherwise any matching positive pattern selects it.
    pub(super) fn matches(&self, name: &str) -> bool {
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
pub(super) fn lookup_name(host: &str, port: u16) -> String {
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

pub(super) type ParsedLine = (Marker, Vec<HostPattern>, KeyData);

/// Why a known_hosts line is skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(super) struct LineError(String);

impl From<String> for LineError {
    fn from(message: String) -> LineError {
        LineError(message)
    }
}

impl From<&str> for LineError {
    fn from(message: &str) -> LineError {
        LineError(message.to_string())
    }
}

/// Parse one line; `Ok(None)` for blank lines and comments.
pub(super) fn parse_line(text: &str) -> Result<Option<ParsedLine>, LineError> {
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
            other => return Err(LineError(format!("unknown marker {other:?}"))),
        };
        first = fields.next().ok_or("missing host patterns after marker")?;
    }
    let hosts = parse_hosts(first)?;
    let key_type = fields.next().ok_or("missing key type")?;
    let key_b64 = fields.next().ok_or("missing key data")?;
    let key = PublicKey::from_openssh(&format!("{key_type} {key_b64}"))
        .map_err(|err| LineError(format!("invalid {key_type} key: {err}")))?;
    let key = key.key_data().clone();
    if matches!(key, KeyData::Certificate(_)) {
        return Err("certificates are not valid known_hosts keys".into());
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
