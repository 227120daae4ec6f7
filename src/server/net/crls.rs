//! Client certificate verification that follows the CRL files as they
//! change: `ssl-ca-crls` and the Puppet CA's `ca_crl.pem`, which `ferry ca
//! revoke` (another process) rewrites while the server runs. Each
//! handshake compares the files' identity (inode, size, mtime) with what
//! was loaded and, when one changed, builds rustls' WebPKI verifier again
//! with the new CRLs, so a revoked certificate's next connection is
//! refused without a restart. A CRL that cannot be read keeps the
//! previous verifier (and is logged). A resumed TLS session skips
//! rustls' client verification, so the listener checks a resumed
//! session's certificate again ([`ReloadingVerifier::recheck`]): a
//! revoked node cannot resume its way back in.

use std::fmt;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};

/// A CRL file's identity: (inode, size, mtime in ns), `None` when missing.
type Stamp = Option<(u64, u64, i128)>;

fn stamp(path: &PathBuf) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    let mtime = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
    Some((m.ino(), m.len(), mtime))
}

/// Why a verifier cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum CrlError {
    #[error("{0}: no readable CRL in PEM format")]
    Unreadable(String),
    #[error("cannot verify clients with it: {0}")]
    Verifier(String),
}

struct Current {
    stamps: Vec<Stamp>,
    verifier: Arc<dyn ClientCertVerifier>,
}

/// The client certificate verifier of the server.
pub struct ReloadingVerifier {
    roots: Arc<RootCertStore>,
    provider: Arc<CryptoProvider>,
    files: Vec<PathBuf>,
    /// Whether a client may come without a certificate (tokens, the CA's
    /// bootstrap endpoints); the HTTP layer then decides.
    anonymous: bool,
    hints: Vec<DistinguishedName>,
    current: RwLock<Current>,
}

impl fmt::Debug for ReloadingVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReloadingVerifier")
            .field("files", &self.files)
            .field("anonymous", &self.anonymous)
            .finish()
    }
}

impl ReloadingVerifier {
    /// Loads the CRL `files` (every one must be readable now) and builds
    /// the verifier.
    pub fn new(
        roots: Arc<RootCertStore>,
        provider: Arc<CryptoProvider>,
        files: Vec<PathBuf>,
        anonymous: bool,
    ) -> Result<ReloadingVerifier, CrlError> {
        let stamps = files.iter().map(stamp).collect();
        let verifier = build(&roots, &provider, &files, anonymous)?;
        Ok(ReloadingVerifier {
            hints: verifier.root_hint_subjects().to_vec(),
            roots,
            provider,
            files,
            anonymous,
            current: RwLock::new(Current { stamps, verifier }),
        })
    }

    /// Verifies a client chain (end entity first) again, against the
    /// CRLs on disk now: for resumed sessions.
    pub fn recheck(&self, chain: &[CertificateDer<'_>]) -> Result<(), rustls::Error> {
        match chain {
            [] => Ok(()),
            [end_entity, intermediates @ ..] => self
                .verifier()
                .verify_client_cert(end_entity, intermediates, UnixTime::now())
                .map(|_| ()),
        }
    }

    /// The verifier for the CRLs on disk now.
    fn verifier(&self) -> Arc<dyn ClientCertVerifier> {
        let stamps: Vec<Stamp> = self.files.iter().map(stamp).collect();
        {
            let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
            if current.stamps == stamps {
                return Arc::clone(&current.verifier);
            }
        }
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        if current.stamps != stamps {
            match build(&self.roots, &self.provider, &self.files, self.anonymous) {
                Ok(v) => {
                    tracing::info!("CRLs changed: reloaded");
                    current.verifier = v;
                }
                Err(e) => tracing::warn!("CRLs changed but cannot be used, keeping the old: {e}"),
            }
            current.stamps = stamps;
        }
        Arc::clone(&current.verifier)
    }
}

fn build(
    roots: &Arc<RootCertStore>,
    provider: &Arc<CryptoProvider>,
    files: &[PathBuf],
    anonymous: bool,
) -> Result<Arc<dyn ClientCertVerifier>, CrlError> {
    let mut crls: Vec<CertificateRevocationListDer<'static>> = Vec::new();
    for path in files {
        let found = CertificateRevocationListDer::pem_file_iter(path)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|_| CrlError::Unreadable(path.display().to_string()))?;
        if found.is_empty() {
            return Err(CrlError::Unreadable(path.display().to_string()));
        }
        crls.extend(found);
    }
    let mut builder =
        WebPkiClientVerifier::builder_with_provider(Arc::clone(roots), Arc::clone(provider));
    if !crls.is_empty() {
        builder = builder.with_crls(crls);
    }
    if anonymous {
        builder = builder.allow_unauthenticated();
    }
    builder
        .build()
        .map_err(|e| CrlError::Verifier(e.to_string()))
}

impl ClientCertVerifier for ReloadingVerifier {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        !self.anonymous
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &self.hints
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        self.verifier()
            .verify_client_cert(end_entity, intermediates, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier().verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier().verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.verifier().supported_verify_schemes()
    }
}
