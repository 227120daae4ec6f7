//! Host certificate checks: whether a certificate presented by the server
//! is a currently valid host certificate, signed by a CA that a matching
//! `@cert-authority` line lists, for the host being connected to.

use russh::keys::ssh_key::certificate::CertType;
use russh::keys::ssh_key::{Certificate, HashAlg};

use super::parse::{Entry, Marker};

/// Why a host certificate is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum CertError {
    #[error("no @cert-authority line for {0} lists its signing CA")]
    UnknownCa(String),
    #[error("it is a user certificate, not a host certificate")]
    NotHost,
    #[error(
        "signature invalid or outside its validity window (valid after {after}, before {before}, now {now})"
    )]
    Invalid { after: u64, before: u64, now: u64 },
    #[error("principals {principals:?} do not include {host:?} (CA at {file}:{line})")]
    Principal {
        principals: Vec<String>,
        host: String,
        file: String,
        line: usize,
    },
}

/// Validate a host certificate against the `@cert-authority` lines that
/// match the host. `host` is the bare host name (what principals name),
/// `name` the lookup name used for messages.
pub(super) fn check_certificate(
    cert: &Certificate,
    host: &str,
    name: &str,
    matching: &[&Entry],
    now: u64,
) -> Result<(), CertError> {
    let ca = matching
        .iter()
        .find(|e| e.marker == Marker::CertAuthority && e.key == *cert.signature_key())
        .ok_or_else(|| CertError::UnknownCa(name.to_string()))?;
    if cert.cert_type() != CertType::Host {
        return Err(CertError::NotHost);
    }
    let fingerprint = ca.key.fingerprint(HashAlg::Sha256);
    if cert.validate_at(now, [&fingerprint]).is_err() {
        return Err(CertError::Invalid {
            after: cert.valid_after(),
            before: cert.valid_before(),
            now,
        });
    }
    let principals = cert.valid_principals();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if !principals.is_empty() && !principals.iter().any(|p| p.eq_ignore_ascii_case(host)) {
        return Err(CertError::Principal {
            principals: principals.to_vec(),
            host: host.to_string(),
            file: ca.file.display().to_string(),
            line: ca.line,
        });
    }
    Ok(())
}
