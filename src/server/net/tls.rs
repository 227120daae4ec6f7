//! TLS for the service (rustls on the `ring` provider): the server's
//! certificate and key, the CA that client certificates must chain to, its
//! CRLs, and the names a verified client certificate carries (its subject
//! CN and DNS SANs) for the allowlist.

use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::server::config::{ConfigError, ServerConfig};
use crate::server::net::crls::{CrlError, ReloadingVerifier};

fn read_pem_error(cfg: &ServerConfig, key: &'static str, path: &Path, what: &str) -> ConfigError {
    cfg.error(
        key,
        format!("{}: no readable {what} in PEM format", path.display()),
    )
}

/// Builds the rustls configuration. Client certificates are required and
/// verified against `ssl-ca-cert` (and its CRLs, followed as they change);
/// with a tokens file, a client may instead come without one and present
/// a bearer token, and with a Puppet CA, come without one for the CA's
/// bootstrap endpoints.
/// The verifier is returned too, for resumed sessions (`crls`).
pub fn server_config(
    cfg: &ServerConfig,
) -> Result<(Arc<rustls::ServerConfig>, Arc<ReloadingVerifier>), ConfigError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cfg.ssl_cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|_| read_pem_error(cfg, "ssl-cert", &cfg.ssl_cert, "certificate"))?;
    if certs.is_empty() {
        return Err(read_pem_error(
            cfg,
            "ssl-cert",
            &cfg.ssl_cert,
            "certificate",
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&cfg.ssl_key)
        .map_err(|_| read_pem_error(cfg, "ssl-key", &cfg.ssl_key, "private key"))?;
    let mut roots = RootCertStore::empty();
    let cas: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cfg.ssl_ca_cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|_| read_pem_error(cfg, "ssl-ca-cert", &cfg.ssl_ca_cert, "certificate"))?;
    for ca in cas {
        roots
            .add(ca)
            .map_err(|e| cfg.error("ssl-ca-cert", format!("not a usable CA certificate: {e}")))?;
    }
    if roots.is_empty() {
        return Err(read_pem_error(
            cfg,
            "ssl-ca-cert",
            &cfg.ssl_ca_cert,
            "certificate",
        ));
    }
    // The CRLs are read again whenever they change (`crls`): the
    // configured ones and the Puppet CA's, which `ferry ca revoke` rewrites.
    let mut crl_files = Vec::new();
    if let Some(path) = &cfg.ssl_ca_crls {
        crl_files.push(path.clone());
    }
    if let Some(ca) = &cfg.ca {
        crl_files.push(ca.dir.join("ca_crl.pem"));
    }
    // Clients without a certificate get through the handshake when they
    // can authenticate otherwise (a token) or need none (the CA's
    // bootstrap endpoints); the HTTP layer refuses them everything else.
    let anonymous = cfg.tokens_file.is_some() || cfg.ca.is_some();
    let verifier =
        ReloadingVerifier::new(Arc::new(roots), Arc::clone(&provider), crl_files, anonymous)
            .map_err(|e| match e {
                CrlError::Unreadable(path) => match &cfg.ssl_ca_crls {
                    Some(p) if p.display().to_string() == path => {
                        read_pem_error(cfg, "ssl-ca-crls", p, "CRL")
                    }
                    _ => cfg.error("ca", format!("{path}: no readable CRL in PEM format")),
                },
                CrlError::Verifier(e) => {
                    cfg.error("ssl-ca-cert", format!("cannot verify clients with it: {e}"))
                }
            })?;
    let verifier = Arc::new(verifier);
    let client_verifier: Arc<dyn rustls::server::danger::ClientCertVerifier> = verifier.clone();
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| cfg.error("ssl-cert", e.to_string()))?
        .with_client_cert_verifier(client_verifier)
        .with_single_cert(certs, key)
        .map_err(|e| cfg.error("ssl-key", format!("does not fit ssl-cert: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((Arc::new(config), verifier))
}

/// A client certificate's subject CN: a Puppet node's certname.
pub fn certificate_cn(cert: &CertificateDer<'_>) -> Option<String> {
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref()).ok()?;
    parsed
        .subject()
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok().map(str::to_string))
}

/// The names of a client certificate: its subject CN(s), then its DNS SANs.
pub fn certificate_names(cert: &CertificateDer<'_>) -> Vec<String> {
    let Ok((_, parsed)) = x509_parser::parse_x509_certificate(cert.as_ref()) else {
        return Vec::new();
    };
    let mut names: Vec<String> = parsed
        .subject()
        .iter_common_name()
        .filter_map(|cn| cn.as_str().ok().map(str::to_string))
        .collect();
    if let Ok(Some(san)) = parsed.subject_alternative_name() {
        for name in &san.value.general_names {
            if let x509_parser::extensions::GeneralName::DNSName(dns) = name {
                names.push((*dns).to_string());
            }
        }
    }
    names
}
