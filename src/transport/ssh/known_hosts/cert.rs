//! Host certificate checks: whether a certificate presented by the server
//! is a currently valid host certificate, signed by a CA that a matching
//! `@cert-authority` line lists, for the host being connected to.

use russh::keys::ssh_key::certificate::CertType;
use russh::keys::ssh_key::{Certificate, HashAlg};

use super::parse::{Entry, Marker};

/// Validate a host certificate against the `@cert-authority` lines that
/// match the host. `host` is the bare host name (what principals name),
/// `name` the lookup name used for messages.
pub(super) fn check_certificate(
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
