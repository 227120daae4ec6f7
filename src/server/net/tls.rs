//! TLS for the service (rustls on the `ring` provider): the server's
//! certificate and key, the CA that client certificates must chain to, its
//! CRLs, and the names a verified client certificate carries (its subject
//! CN and DNS SANs) for the allowlist.

use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;

use crate::server::config::{ConfigError, ServerConfig};

fn read_pem_error(cfg: &ServerConfig, key: &'static str, path: &Path, what: &str) -> ConfigError {
    cfg.error(
        key,
        format!("{}: no readable {what} in PEM format", path.display()),
    )
}

/// Builds the rustls configuration. Client certificates are required and
/// verified against `ssl-ca-cert` (and its CRLs); with a tokens file, a
/// client may instead come without one and present a bearer token.
pub fn server_config(cfg: &ServerConfig) -> Result<Arc<rustls::ServerConfig>, ConfigError> {
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
    let mut verifier =
        WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider));
    if let Some(path) = &cfg.ssl_ca_crls {
        let crls: Vec<CertificateRevocationListDer<'static>> =
            CertificateRevocationListDer::pem_file_iter(path)
                .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                .map_err(|_| read_pem_error(cfg, "ssl-ca-crls", path, "CRL"))?;
        verifier = verifier.with_crls(crls);
    }
    if cfg.tokens_file.is_some() {
        verifier = verifier.allow_unauthenticated();
    }
    let verifier = verifier
        .build()
        .map_err(|e| cfg.error("ssl-ca-cert", format!("cannot verify clients with it: {e}")))?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| cfg.error("ssl-cert", e.to_string()))?
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)
        .map_err(|e| cfg.error("ssl-key", format!("does not fit ssl-cert: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
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
