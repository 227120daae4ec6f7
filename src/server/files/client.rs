//! The file server (`file-server-uri`, ACE's puppetserver): where it is,
//! and the HTTPS client that fetches files from it (hyper-util's pooled
//! client over hyper-rustls), presenting the server's own certificate and
//! checking the peer against `ssl-ca-cert` only (no system roots). A fetch
//! has `request-timeout` from connecting to the last byte of the answer.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::server::config::{ConfigError, ServerConfig};

/// Why a file could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("the file server did not answer in time")]
    Timeout,
    #[error("bad request: {0}")]
    Request(String),
    #[error("cannot reach the file server: {0}")]
    Send(String),
    #[error("the file server answered {0}")]
    Status(u16),
    #[error("cannot read the answer: {0}")]
    Body(String),
    #[error("the file is larger than {} MiB", MAX_FILE_BYTES >> 20)]
    TooLarge,
}

/// The largest file taken from the file server: an answer is held in
/// memory until its sha256 is checked, so its size is bounded like every
/// other input the server reads.
pub const MAX_FILE_BYTES: usize = 256 << 20;

/// The file server: where it is and how to talk to it (the server's own
/// certificate, the peer checked against `ssl-ca-cert`).
pub struct FileServer {
    /// `https://host:port` (brackets around an IPv6 address).
    origin: String,
    base_path: String,
    client: Client<HttpsConnector<HttpConnector>, Empty<Bytes>>,
    timeout: Duration,
}

/// Why a `file-server-uri` is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    #[error("must be an https:// URL")]
    NotHttps,
    #[error("has an unclosed [")]
    UnclosedBracket,
    #[error("must be https://HOST[:PORT][/PATH]")]
    Malformed,
    #[error("has a bad port")]
    BadPort,
}

/// Splits `https://host[:port][/base]`.
pub fn parse_uri(uri: &str) -> Result<(String, u16, String), UriError> {
    let rest = uri.strip_prefix("https://").ok_or(UriError::NotHttps)?;
    let (authority, base) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or(UriError::UnclosedBracket)?;
        (h, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host.contains(['@', '?', '#']) || base.contains(['?', '#']) {
        return Err(UriError::Malformed);
    }
    let port = match port {
        Some(p) => p.parse::<u16>().map_err(|_| UriError::BadPort)?,
        None => 443,
    };
    Ok((host.to_string(), port, base.to_string()))
}

impl FileServer {
    /// From the configuration, if it names a file server.
    pub fn from_config(cfg: &ServerConfig) -> Result<Option<FileServer>, ConfigError> {
        let Some(uri) = &cfg.file_server_uri else {
            return Ok(None);
        };
        let (host, port, base_path) =
            parse_uri(uri).map_err(|e| cfg.error("file-server-uri", e.to_string()))?;
        let bad = |key: &'static str, what: &str| cfg.error(key, format!("no readable {what}"));
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cfg.ssl_cert)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|_| bad("ssl-cert", "certificate"))?;
        let key = PrivateKeyDer::from_pem_file(&cfg.ssl_key)
            .map_err(|_| bad("ssl-key", "private key"))?;
        let mut roots = RootCertStore::empty();
        for ca in CertificateDer::pem_file_iter(&cfg.ssl_ca_cert)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|_| bad("ssl-ca-cert", "certificate"))?
        {
            roots
                .add(ca)
                .map_err(|e| cfg.error("ssl-ca-cert", format!("not a usable CA: {e}")))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| cfg.error("ssl-cert", e.to_string()))?
            .with_root_certificates(roots)
            .with_client_auth_cert(certs, key)
            .map_err(|e| cfg.error("ssl-key", format!("does not fit ssl-cert: {e}")))?;
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .enable_http1()
            .build();
        let client = Client::builder(hyper_util::rt::TokioExecutor::new()).build(https);
        let origin = if host.contains(':') {
            format!("https://[{host}]:{port}")
        } else {
            format!("https://{host}:{port}")
        };
        Ok(Some(FileServer {
            origin,
            base_path,
            client,
            timeout: cfg.request_timeout,
        }))
    }

    /// `GET {file-server-uri}{path}?{params}`: the body of a 200 answer.
    pub async fn get(
        &self,
        path: &str,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<u8>, FetchError> {
        match tokio::time::timeout(self.timeout, self.get_inner(path, params)).await {
            Ok(r) => r,
            Err(_) => Err(FetchError::Timeout),
        }
    }

    async fn get_inner(
        &self,
        path: &str,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<u8>, FetchError> {
        let mut target = format!("{}{}{}", self.origin, self.base_path, path);
        if !params.is_empty() {
            let query: Vec<String> = params
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    format!("{}={}", encode(k), encode(&v))
                })
                .collect();
            target = format!("{target}?{}", query.join("&"));
        }
        let request = hyper::Request::get(target)
            .header(hyper::header::ACCEPT, "application/octet-stream")
            .header(hyper::header::USER_AGENT, "ferry")
            .body(Empty::<Bytes>::new())
            .map_err(|e| FetchError::Request(e.to_string()))?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| FetchError::Send(error_chain(&e)))?;
        if response.status() != hyper::StatusCode::OK {
            return Err(FetchError::Status(response.status().as_u16()));
        }
        let too_large = response
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
            .is_some_and(|n| n > MAX_FILE_BYTES as u64);
        if too_large {
            return Err(FetchError::TooLarge);
        }
        let body = http_body_util::Limited::new(response.into_body(), MAX_FILE_BYTES)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    FetchError::TooLarge
                } else {
                    FetchError::Body(e.to_string())
                }
            })?;
        Ok(body.to_bytes().to_vec())
    }
}

/// An error and its causes, `: `-separated (the client's own message is
/// only "client error (Connect)").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Percent-encodes a query component.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_and_answers() {
        assert_eq!(
            parse_uri("https://puppet:8140").expect("uri"),
            ("puppet".into(), 8140, String::new())
        );
        assert_eq!(
            parse_uri("https://[::1]/base/").expect("uri"),
            ("::1".into(), 443, "/base".into())
        );
        assert!(parse_uri("http://puppet").is_err());
    }
}
