//! ferry's Puppet CA: the certificate authority stock Puppet agents
//! bootstrap with (their CSR round trip through `/puppet-ca/v1`), kept in
//! a directory laid out as Puppet Server's `cadir`, so existing Puppet CA
//! material works as it is: `ca_crt.pem` (the CA certificate, or a bundle
//! whose first certificate signs), `ca_key.pem`, `ca_crl.pem`, `serial`
//! (the next serial, hex), `inventory.txt` (one line per certificate
//! signed), `signed/<certname>.pem` and `requests/<certname>.pem`
//! (pending CSRs). `ferry ca setup` (or `ferry serve` with `ca:`
//! configured, on first start) makes one with a new ECDSA P-256 key.
//!
//! A CSR is checked (`csr`), kept until signed (`ferry ca sign`, or `PUT
//! certificate_status`) or signed at once when the autosign setting
//! approves it (`policy`: a list of globs, an `autosign.conf` file
//! (`autosign_conf`) or a policy executable); one
//! asking for subject alternative names is only signed when the operator
//! allows them, and then they are copied into the certificate. A
//! certificate is revoked by adding its serial to the CRL, which the
//! server reads again when it changes (`net::crls`), so a revoked node's
//! next connection is refused. What the CA holds for a name is reported
//! as Puppet Server's `certificate_status` shows it (`status`). Files are
//! written atomically under one lock (`disk`); the CA key is `0600` and
//! never printed. Node certificates are valid for `ca.cert-ttl`
//! (Puppet's `ca_ttl`, 5 years by default). Signing is rcgen's; reading certificates, CSRs and CRLs
//! is x509-parser's.

pub mod autosign_conf;
pub mod csr;
pub mod disk;
pub mod policy;
pub mod status;

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertificateRevocationListParams, CustomExtension,
    DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyIdMethod, KeyPair,
    KeyUsagePurpose, RevokedCertParams, SanType, SerialNumber,
};
use x509_parser::time::ASN1Time;

pub use csr::{AltName, Csr, CsrError};
use disk::{KEY_MODE, Lock, PUBLIC_MODE};
pub use policy::Autosign;
pub use status::{Entry, State};

/// What went wrong with the CA.
#[derive(Debug, thiserror::Error)]
pub enum CaError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Material { path: String, message: String },
    #[error("{0}: not a CA directory (no ca_crt.pem and ca_key.pem); `ferry ca setup` makes one")]
    Missing(String),
    #[error(
        "certname '{0}' must be 1 to 255 printable ASCII characters without '/', spaces or upper case"
    )]
    BadName(String),
    #[error("Could not find certificate_request {0}")]
    NoRequest(String),
    #[error("Could not find certificate {0}")]
    NoCertificate(String),
    #[error(
        "{0} already has a signed certificate; ignoring certificate request (`ferry ca clean {0}` removes it)"
    )]
    AlreadySigned(String),
    #[error(
        "{0} already has a pending certificate request with another key; ignoring this one (`ferry ca clean {0}` removes it)"
    )]
    AlreadyRequested(String),
    #[error("{0} certificate requests are pending already; sign or clean some first")]
    TooManyRequests(usize),
    #[error("certificate for {0} is already revoked")]
    AlreadyRevoked(String),
    #[error(transparent)]
    Csr(#[from] CsrError),
    #[error("the time {0} (Unix seconds) cannot be written in a certificate")]
    Time(i64),
    #[error("cannot sign: {0}")]
    Sign(#[from] rcgen::Error),
}

/// Most pending CSRs kept at once: anyone may submit one, so their
/// number (and so the directory's size, at most 64 KiB each) is bounded.
pub const MAX_PENDING: usize = 10_000;
/// Longest certname taken.
pub const MAX_CERTNAME: usize = 255;
/// Default validity of certificates the CA signs (Puppet's `ca_ttl`, 5
/// years).
pub const CERT_TTL_SECS: i64 = 5 * 365 * 86400;
/// Validity of a new CA certificate (Puppet Server's 15 years).
const CA_TTL_SECS: i64 = 15 * 365 * 86400;
/// Certificates are valid from a day back, for clocks that lag (as Puppet).
const BACKDATE_SECS: i64 = 86400;
/// How far ahead a CRL's next update is set.
const CRL_TTL_SECS: i64 = 5 * 365 * 86400;

/// Whether `name` is a certname as Puppet takes it: 1 to
/// [`MAX_CERTNAME`] printable ASCII characters without `/`, spaces or
/// upper case.
pub fn is_puppet_certname(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_CERTNAME
        && name
            .chars()
            .all(|c| c.is_ascii_graphic() && c != '/' && !c.is_ascii_uppercase())
}

/// A certname as Puppet takes it, and not a dot file (it names files in
/// the CA directory).
pub fn check_certname(name: &str) -> Result<(), CaError> {
    if is_puppet_certname(name) && !name.starts_with('.') {
        Ok(())
    } else {
        Err(CaError::BadName(name.escape_default().to_string()))
    }
}

/// What became of a submitted CSR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submitted {
    /// Kept in `requests/` until signed.
    Pending,
    /// Signed at once (autosign).
    Signed,
    /// Autosign approved it, but it asks for subject alternative names:
    /// kept until an operator signs it allowing them.
    HeldForAltNames,
}

/// A CA directory.
pub struct Ca {
    dir: PathBuf,
    /// How long the certificates it signs are valid, in seconds.
    cert_ttl: i64,
}

impl Ca {
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The same CA signing certificates valid for `secs` seconds (from
    /// now; they are also backdated a day, as Puppet's are).
    pub fn with_cert_ttl(mut self, secs: i64) -> Ca {
        self.cert_ttl = secs;
        self
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn request_path(&self, certname: &str) -> PathBuf {
        self.dir.join("requests").join(format!("{certname}.pem"))
    }

    fn signed_path(&self, certname: &str) -> PathBuf {
        self.dir.join("signed").join(format!("{certname}.pem"))
    }

    /// Whether `dir` holds a CA (its certificate and key).
    pub fn exists(dir: &Path) -> bool {
        dir.join("ca_crt.pem").is_file() && dir.join("ca_key.pem").is_file()
    }

    /// Opens an existing CA directory (ferry's or Puppet Server's),
    /// checking that its key and certificate load.
    pub fn open(dir: &Path) -> Result<Ca, CaError> {
        if !Ca::exists(dir) {
            return Err(CaError::Missing(dir.display().to_string()));
        }
        let ca = Ca {
            dir: dir.to_path_buf(),
            cert_ttl: CERT_TTL_SECS,
        };
        ca.issuer()?;
        for sub in ["signed", "requests"] {
            disk::make_dir(&ca.path(sub))?;
        }
        if !ca.path("ca_crl.pem").is_file() {
            let _lock = Lock::take(dir)?;
            ca.write_crl(&[], 1)?;
        }
        Ok(ca)
    }

    /// Opens the CA in `dir`, making a new one there first when it has
    /// none (`name` is the CA certificate's CN). `true` when it was made.
    pub fn setup(dir: &Path, name: &str) -> Result<(Ca, bool), CaError> {
        disk::make_dir(dir)?;
        let lock = Lock::take(dir)?;
        if Ca::exists(dir) {
            drop(lock);
            return Ok((Ca::open(dir)?, false));
        }
        let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let now = ASN1Time::now().timestamp();
        params.not_before = time_at(now - BACKDATE_SECS)?.to_datetime();
        params.not_after = time_at(now + CA_TTL_SECS)?.to_datetime();
        params.serial_number = Some(SerialNumber::from(1u64));
        let cert = params.self_signed(&key)?;
        let ca = Ca {
            dir: dir.to_path_buf(),
            cert_ttl: CERT_TTL_SECS,
        };
        for sub in ["signed", "requests"] {
            disk::make_dir(&ca.path(sub))?;
        }
        // The key first, 0600 from its creation; the certificate last, as
        // it marks the directory as a CA.
        disk::write_atomic(
            &ca.path("ca_key.pem"),
            key.serialize_pem().as_bytes(),
            KEY_MODE,
        )?;
        disk::write_atomic(&ca.path("serial"), b"0002\n", PUBLIC_MODE)?;
        disk::write_atomic(&ca.path("inventory.txt"), b"", PUBLIC_MODE)?;
        disk::write_atomic(&ca.path("ca_crt.pem"), cert.pem().as_bytes(), PUBLIC_MODE)?;
        ca.write_crl(&[], 1)?;
        Ok((ca, true))
    }

    /// The CA's certificate(s), PEM, as agents download them.
    pub fn ca_certificate(&self) -> Result<Vec<u8>, CaError> {
        let path = self.path("ca_crt.pem");
        std::fs::read(&path).map_err(disk::io(&path))
    }

    /// The CRL, PEM.
    pub fn crl(&self) -> Result<Vec<u8>, CaError> {
        let path = self.path("ca_crl.pem");
        std::fs::read(&path).map_err(disk::io(&path))
    }

    /// When the CRL last changed.
    pub fn crl_modified(&self) -> Option<std::time::SystemTime> {
        std::fs::metadata(self.path("ca_crl.pem"))
            .and_then(|m| m.modified())
            .ok()
    }

    /// A pending request, PEM.
    pub fn request(&self, certname: &str) -> Result<Option<Vec<u8>>, CaError> {
        check_certname(certname)?;
        disk::read_optional(&self.request_path(certname))
    }

    /// A signed certificate, PEM.
    pub fn certificate(&self, certname: &str) -> Result<Option<Vec<u8>>, CaError> {
        check_certname(certname)?;
        disk::read_optional(&self.signed_path(certname))
    }

    /// The signing key and the CA certificate's names.
    fn issuer(&self) -> Result<Issuer<'static, KeyPair>, CaError> {
        let key_path = self.path("ca_key.pem");
        let key_pem = std::fs::read_to_string(&key_path).map_err(disk::io(&key_path))?;
        let key = load_key(&key_pem).map_err(|message| CaError::Material {
            path: key_path.display().to_string(),
            message,
        })?;
        let crt_path = self.path("ca_crt.pem");
        let crt = std::fs::read(&crt_path).map_err(disk::io(&crt_path))?;
        let bad = |message: String| CaError::Material {
            path: crt_path.display().to_string(),
            message,
        };
        let (_, block) =
            x509_parser::pem::parse_x509_pem(&crt).map_err(|_| bad("no PEM certificate".into()))?;
        let der = rustls::pki_types::CertificateDer::from(block.contents);
        Issuer::from_ca_cert_der(&der, key)
            .map_err(|e| bad(format!("not a usable CA certificate: {e}")))
    }

    /// Takes a CSR submitted for `certname`: checked, refused when the
    /// name already has a certificate (or a pending request with another
    /// key), then kept, or signed at once when `autosign` approves it (a
    /// policy executable runs before the CA's lock is taken) and it asks
    /// for no subject alternative names.
    pub fn submit(
        &self,
        certname: &str,
        pem: &[u8],
        autosign: &Autosign,
    ) -> Result<Submitted, CaError> {
        check_certname(certname)?;
        let csr = Csr::from_pem(pem)?;
        if csr.name != certname {
            return Err(CsrError::NameMismatch {
                cn: csr.name,
                key: certname.to_string(),
            }
            .into());
        }
        if self.signed_path(certname).exists() {
            return Err(CaError::AlreadySigned(certname.to_string()));
        }
        let approved = autosign.approves(certname, csr.pem().as_bytes());
        let held = approved && csr.check_alt_names(false).is_err();
        let _lock = Lock::take(&self.dir)?;
        if self.signed_path(certname).exists() {
            return Err(CaError::AlreadySigned(certname.to_string()));
        }
        if let Some(old) = disk::read_optional(&self.request_path(certname))?
            && Csr::from_pem(&old).is_ok_and(|o| o.spki != csr.spki)
        {
            return Err(CaError::AlreadyRequested(certname.to_string()));
        }
        if approved && !held {
            self.sign_locked(&csr, &[])?;
            disk::remove(&self.request_path(certname))?;
            return Ok(Submitted::Signed);
        }
        if !self.request_path(certname).exists()
            && pem_names(&self.path("requests"))?.len() >= MAX_PENDING
        {
            return Err(CaError::TooManyRequests(MAX_PENDING));
        }
        disk::write_atomic(
            &self.request_path(certname),
            csr.pem().as_bytes(),
            PUBLIC_MODE,
        )?;
        Ok(if held {
            Submitted::HeldForAltNames
        } else {
            Submitted::Pending
        })
    }

    /// Signs `certname`'s pending request; returns the certificate, PEM.
    /// A request asking for subject alternative names is refused unless
    /// `allow_alt_names`; with it, they are copied into the certificate.
    pub fn sign(&self, certname: &str, allow_alt_names: bool) -> Result<String, CaError> {
        check_certname(certname)?;
        let _lock = Lock::take(&self.dir)?;
        let pem = disk::read_optional(&self.request_path(certname))?
            .ok_or_else(|| CaError::NoRequest(certname.to_string()))?;
        let csr = Csr::from_pem(&pem)?;
        if csr.name != certname {
            return Err(CsrError::NameMismatch {
                cn: csr.name,
                key: certname.to_string(),
            }
            .into());
        }
        if self.signed_path(certname).exists() {
            return Err(CaError::AlreadySigned(certname.to_string()));
        }
        csr.check_alt_names(allow_alt_names)?;
        let cert = self.sign_locked(&csr, &[])?;
        disk::remove(&self.request_path(certname))?;
        Ok(cert)
    }

    /// Makes a key and a certificate for `names[0]` (with every name as a
    /// SAN: DNS names and IP addresses) without a CSR: the server's own.
    /// Returns (certificate PEM, key PEM).
    pub fn issue(&self, names: &[String]) -> Result<(String, String), CaError> {
        let first = names.first().cloned().unwrap_or_default();
        check_certname(&first)?;
        let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
        let csr = Csr {
            name: first,
            der: Vec::new(),
            spki: rcgen::PublicKeyData::subject_public_key_info(&key),
            extensions: Vec::new(),
            alt_names: Vec::new(),
        };
        let _lock = Lock::take(&self.dir)?;
        let cert = self.sign_locked(&csr, names)?;
        Ok((cert, key.serialize_pem()))
    }

    /// Signs with the next serial and records the certificate in
    /// `signed/` and `inventory.txt`: the CSR's alternative names (the
    /// caller allowed them) and `sans` (names or addresses) are its SANs.
    /// The caller holds the lock.
    fn sign_locked(&self, csr: &Csr, sans: &[String]) -> Result<String, CaError> {
        let issuer = self.issuer()?;
        let spki = rcgen::SubjectPublicKeyInfo::from_der(&csr.spki)?;
        let serial = self.next_serial()?;
        let now = ASN1Time::now().timestamp();
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, csr.name.as_str());
        params.serial_number = Some(SerialNumber::from(serial));
        params.not_before = time_at(now - BACKDATE_SECS)?.to_datetime();
        params.not_after = time_at(now + self.cert_ttl)?.to_datetime();
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        params.use_authority_key_identifier_extension = true;
        let mut names: Vec<AltName> = sans
            .iter()
            .map(|name| match name.parse() {
                Ok(ip) => AltName::Ip(ip),
                Err(_) => AltName::Dns(name.clone()),
            })
            .collect();
        for n in &csr.alt_names {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        for name in names {
            params.subject_alt_names.push(match name {
                AltName::Ip(ip) => SanType::IpAddress(ip),
                AltName::Dns(d) => SanType::DnsName(d.as_str().try_into()?),
            });
        }
        params.custom_extensions = csr
            .extensions
            .iter()
            .map(|e| {
                let mut ext = CustomExtension::from_oid_content(&e.oid, e.value.clone());
                ext.set_criticality(e.critical);
                ext
            })
            .collect();
        let cert = params.signed_by(&spki, &issuer)?;
        let pem = cert.pem();
        disk::write_atomic(&self.signed_path(&csr.name), pem.as_bytes(), PUBLIC_MODE)?;
        self.set_serial(serial + 1)?;
        let line = format!(
            "0x{serial:04x} {} {} /CN={}\n",
            status::puppet_time(now - BACKDATE_SECS),
            status::puppet_time(now + CERT_TTL_SECS),
            csr.name
        );
        let inventory = self.path("inventory.txt");
        let mut text = disk::read_optional(&inventory)?.unwrap_or_default();
        text.extend_from_slice(line.as_bytes());
        disk::write_atomic(&inventory, &text, PUBLIC_MODE)?;
        Ok(pem)
    }

    fn next_serial(&self) -> Result<u64, CaError> {
        let path = self.path("serial");
        let text = disk::read_optional(&path)?.unwrap_or_else(|| b"0002".to_vec());
        let text = String::from_utf8_lossy(&text);
        u64::from_str_radix(text.trim(), 16).map_err(|_| CaError::Material {
            path: path.display().to_string(),
            message: format!("'{}' is not a hex serial number", text.trim()),
        })
    }

    fn set_serial(&self, next: u64) -> Result<(), CaError> {
        disk::write_atomic(
            &self.path("serial"),
            format!("{next:04X}\n").as_bytes(),
            PUBLIC_MODE,
        )
    }

    /// The serials the CRL lists (raw big-endian bytes) with their
    /// revocation times (Unix seconds), and its number.
    fn revoked(&self) -> Result<(Vec<Revocation>, u64), CaError> {
        let path = self.path("ca_crl.pem");
        let Some(pem) = disk::read_optional(&path)? else {
            return Ok((Vec::new(), 0));
        };
        let bad = |message: String| CaError::Material {
            path: path.display().to_string(),
            message,
        };
        let (_, block) =
            x509_parser::pem::parse_x509_pem(&pem).map_err(|_| bad("no PEM CRL".into()))?;
        let (_, crl) = x509_parser::parse_x509_crl(&block.contents)
            .map_err(|e| bad(format!("not a CRL: {e}")))?;
        let number = crl
            .crl_number()
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(0);
        let list = crl
            .iter_revoked_certificates()
            .map(|r| (r.raw_serial().to_vec(), r.revocation_date.timestamp()))
            .collect();
        Ok((list, number))
    }

    /// Writes a new CRL listing `revoked`. The caller holds the lock.
    fn write_crl(&self, revoked: &[Revocation], number: u64) -> Result<(), CaError> {
        let issuer = self.issuer()?;
        let now = ASN1Time::now().timestamp();
        let mut revoked_certs = Vec::new();
        for (serial, at) in revoked {
            revoked_certs.push(RevokedCertParams {
                serial_number: SerialNumber::from_slice(serial),
                revocation_time: time_at(*at)?.to_datetime(),
                reason_code: None,
                invalidity_date: None,
            });
        }
        let params = CertificateRevocationListParams {
            this_update: time_at(now - 1)?.to_datetime(),
            next_update: time_at(now + CRL_TTL_SECS)?.to_datetime(),
            crl_number: SerialNumber::from(number),
            issuing_distribution_point: None,
            revoked_certs,
            key_identifier_method: KeyIdMethod::Sha256,
        };
        let crl = params.signed_by(&issuer)?;
        disk::write_atomic(&self.path("ca_crl.pem"), crl.pem()?.as_bytes(), PUBLIC_MODE)
    }

    /// The serial of `certname`'s signed certificate (raw bytes).
    fn serial_of(&self, certname: &str) -> Result<Option<Vec<u8>>, CaError> {
        let path = self.signed_path(certname);
        let Some(pem) = disk::read_optional(&path)? else {
            return Ok(None);
        };
        let (_, block) = x509_parser::pem::parse_x509_pem(&pem).map_err(|_| CaError::Material {
            path: path.display().to_string(),
            message: "no PEM certificate".into(),
        })?;
        let (_, cert) = x509_parser::parse_x509_certificate(&block.contents).map_err(|e| {
            CaError::Material {
                path: path.display().to_string(),
                message: e.to_string(),
            }
        })?;
        Ok(Some(cert.raw_serial().to_vec()))
    }

    /// Revokes `certname`'s certificate: its serial goes on the CRL.
    pub fn revoke(&self, certname: &str) -> Result<(), CaError> {
        check_certname(certname)?;
        let _lock = Lock::take(&self.dir)?;
        let serial = self
            .serial_of(certname)?
            .ok_or_else(|| CaError::NoCertificate(certname.to_string()))?;
        let (mut revoked, number) = self.revoked()?;
        if revoked.iter().any(|(s, _)| strip(s) == strip(&serial)) {
            return Err(CaError::AlreadyRevoked(certname.to_string()));
        }
        revoked.push((serial, ASN1Time::now().timestamp()));
        self.write_crl(&revoked, number + 1)
    }

    /// Removes everything the CA keeps for `certname` (revoking its
    /// certificate first when it has one not yet revoked), so it may ask
    /// again. `false` when there was nothing.
    pub fn clean(&self, certname: &str) -> Result<bool, CaError> {
        match self.revoke(certname) {
            Ok(()) | Err(CaError::AlreadyRevoked(_) | CaError::NoCertificate(_)) => {}
            Err(e) => return Err(e),
        }
        let _lock = Lock::take(&self.dir)?;
        let a = disk::remove(&self.signed_path(certname))?;
        let b = disk::remove(&self.request_path(certname))?;
        Ok(a || b)
    }

    /// Removes `certname`'s certificate and pending request without
    /// revoking anything (Puppet Server's `DELETE certificate_status`);
    /// `false` when there was neither.
    pub fn delete(&self, certname: &str) -> Result<bool, CaError> {
        check_certname(certname)?;
        let _lock = Lock::take(&self.dir)?;
        let a = disk::remove(&self.signed_path(certname))?;
        let b = disk::remove(&self.request_path(certname))?;
        Ok(a || b)
    }

    /// What the CA holds for `certname`: its certificate (signed or
    /// revoked) when it has one, else its pending request.
    pub fn status(&self, certname: &str) -> Result<Option<Entry>, CaError> {
        check_certname(certname)?;
        let (revoked, _) = self.revoked()?;
        if let Some(pem) = self.certificate(certname)? {
            return Ok(self.certificate_entry(certname, &pem, &revoked));
        }
        Ok(self
            .request(certname)?
            .and_then(|pem| request_entry(certname, &pem)))
    }

    fn certificate_entry(&self, name: &str, pem: &[u8], revoked: &[Revocation]) -> Option<Entry> {
        let (_, block) = x509_parser::pem::parse_x509_pem(pem).ok()?;
        Entry::of_certificate(name.to_string(), &block.contents, |serial| {
            revoked.iter().any(|(s, _)| strip(s) == serial)
        })
    }

    /// Pending requests, and with `all` signed and revoked certificates,
    /// by name. Files that do not parse are left out (and logged).
    pub fn list(&self, all: bool) -> Result<Vec<Entry>, CaError> {
        let mut out = Vec::new();
        for name in pem_names(&self.path("requests"))? {
            let Some(pem) = self.request(&name)? else {
                continue;
            };
            match request_entry(&name, &pem) {
                Some(e) => out.push(e),
                None => tracing::warn!("requests/{name}.pem: not a certificate request"),
            }
        }
        if all {
            let (revoked, _) = self.revoked()?;
            for name in pem_names(&self.path("signed"))? {
                let Some(pem) = self.certificate(&name)? else {
                    continue;
                };
                match self.certificate_entry(&name, &pem, &revoked) {
                    Some(e) => out.push(e),
                    None => tracing::warn!("signed/{name}.pem: not a certificate"),
                }
            }
        }
        out.sort_by(|a, b| {
            a.name
                .cmp(&b.name)
                .then(a.state.as_str().cmp(b.state.as_str()))
        });
        Ok(out)
    }
}

/// A request file's entry.
fn request_entry(name: &str, pem: &[u8]) -> Option<Entry> {
    let (_, block) = x509_parser::pem::parse_x509_pem(pem).ok()?;
    Entry::of_request(name.to_string(), &block.contents)
}

/// Makes the configured CA when its directory has none (`ferry serve`'s
/// first start), and the server's certificate and key, signed by it for
/// `server-names`, when neither `ssl_cert` nor `ssl_key` exists yet.
pub fn bootstrap(
    settings: &crate::server::config::CaSettings,
    ssl_cert: &Path,
    ssl_key: &Path,
) -> Result<Ca, CaError> {
    let first = settings.server_names.first().cloned().unwrap_or_default();
    let (ca, made) = Ca::setup(&settings.dir, &format!("ferry CA: {first}"))?;
    let ca = ca.with_cert_ttl(settings.cert_ttl);
    if made {
        tracing::info!(dir = %settings.dir.display(), "made a new Puppet CA");
    }
    if !ssl_cert.exists() && !ssl_key.exists() {
        let (cert, key) = ca.issue(&settings.server_names)?;
        for file in [ssl_cert, ssl_key] {
            if let Some(parent) = file.parent() {
                disk::make_dir(parent)?;
            }
        }
        disk::write_atomic(ssl_key, key.as_bytes(), KEY_MODE)?;
        disk::write_atomic(ssl_cert, cert.as_bytes(), PUBLIC_MODE)?;
        tracing::info!(
            names = %settings.server_names.join(", "),
            "made the server's certificate, signed by the CA"
        );
    }
    Ok(ca)
}

/// A CRL entry: a serial (raw big-endian bytes) and when it was revoked
/// (Unix seconds).
type Revocation = (Vec<u8>, i64);

/// A serial without its leading zero bytes, for comparing.
pub(crate) fn strip(serial: &[u8]) -> &[u8] {
    let start = serial.iter().position(|b| *b != 0).unwrap_or(serial.len());
    &serial[start..]
}

/// The certnames of the `*.pem` files in `dir`.
fn pem_names(dir: &Path) -> Result<Vec<String>, CaError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(disk::io(dir)(e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(disk::io(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(certname) = name.strip_suffix(".pem")
            && check_certname(certname).is_ok()
        {
            names.push(certname.to_string());
        }
    }
    Ok(names)
}

/// A moment (Unix seconds); `.to_datetime()` is what rcgen takes.
fn time_at(secs: i64) -> Result<ASN1Time, CaError> {
    ASN1Time::from_timestamp(secs).map_err(|_| CaError::Time(secs))
}

/// Loads the CA's private key: PKCS#8 (`PRIVATE KEY`, as ferry writes it)
/// or PKCS#1 RSA (`RSA PRIVATE KEY`, as Puppet Server writes it), which
/// is wrapped into PKCS#8 for the signer.
fn load_key(pem: &str) -> Result<KeyPair, String> {
    let (_, block) = x509_parser::pem::parse_x509_pem(pem.as_bytes())
        .map_err(|_| "no PEM private key".to_string())?;
    match block.label.as_str() {
        "PRIVATE KEY" => KeyPair::from_pem(pem).map_err(|e| format!("unusable key: {e}")),
        "RSA PRIVATE KEY" => {
            let pkcs8 = rsa_pkcs1_to_pkcs8(&block.contents);
            let der = rustls::pki_types::PrivatePkcs8KeyDer::from(pkcs8);
            KeyPair::from_pkcs8_der_and_sign_algo(&der, &rcgen::PKCS_RSA_SHA256)
                .map_err(|e| format!("unusable RSA key: {e}"))
        }
        other => Err(format!(
            "a '{other}' key is not taken: convert it to PKCS#8 (openssl pkcs8 -topk8 -nocrypt)"
        )),
    }
}

/// PKCS#8 PrivateKeyInfo around a PKCS#1 RSAPrivateKey: version 0, the
/// rsaEncryption algorithm (with NULL parameters), the key as an OCTET
/// STRING.
fn rsa_pkcs1_to_pkcs8(pkcs1: &[u8]) -> Vec<u8> {
    const VERSION_AND_ALG: [u8; 18] = [
        0x02, 0x01, 0x00, // INTEGER 0
        0x30, 0x0d, // SEQUENCE
        0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, // rsaEncryption
        0x05, 0x00, // NULL
    ];
    let mut body = VERSION_AND_ALG.to_vec();
    body.push(0x04);
    body.extend(der_len(pkcs1.len()));
    body.extend_from_slice(pkcs1);
    let mut out = vec![0x30];
    out.extend(der_len(body.len()));
    out.extend(body);
    out
}

/// A DER length.
fn der_len(n: usize) -> Vec<u8> {
    if n < 0x80 {
        return vec![n as u8];
    }
    let bytes: Vec<u8> = n
        .to_be_bytes()
        .into_iter()
        .skip_while(|b| *b == 0)
        .collect();
    let mut out = vec![0x80 | bytes.len() as u8];
    out.extend(bytes);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn csr_pem(cn: &str) -> String {
        let key = KeyPair::generate().expect("key");
        let mut p = CertificateParams::default();
        p.distinguished_name = DistinguishedName::new();
        p.distinguished_name.push(DnType::CommonName, cn);
        p.serialize_request(&key).expect("csr").pem().expect("pem")
    }

    #[test]
    fn a_new_ca_signs_autosigns_revokes_and_cleans() {
        let dir = tempfile::tempdir().expect("dir");
        let cadir = dir.path().join("ca");
        let (ca, made) = Ca::setup(&cadir, "ferry CA: test").expect("setup");
        assert!(made);
        assert!(!Ca::setup(&cadir, "again").expect("reopen").1, "kept");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(cadir.join("ca_key.pem"))
            .expect("key")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);

        let never = Autosign::Never;
        assert_eq!(
            ca.submit("a.test", csr_pem("a.test").as_bytes(), &never)
                .expect("submit"),
            Submitted::Pending
        );
        assert!(ca.certificate("a.test").expect("read").is_none());
        let globs = Autosign::Matching(vec!["*.auto".into()]);
        assert_eq!(
            ca.submit("b.auto", csr_pem("b.auto").as_bytes(), &globs)
                .expect("submit"),
            Submitted::Signed
        );
        ca.sign("a.test", false).expect("sign");
        assert!(matches!(
            ca.sign("a.test", false),
            Err(CaError::NoRequest(_))
        ));
        assert!(matches!(
            ca.submit("a.test", csr_pem("a.test").as_bytes(), &never),
            Err(CaError::AlreadySigned(_))
        ));
        // b.auto got serial 2, a.test 3; the serial file says 4 next.
        let entries = ca.list(true).expect("list");
        let serials: Vec<_> = entries.iter().filter_map(Entry::serial_hex).collect();
        assert_eq!(
            serials,
            ["03", "02"],
            "by name: a.test then b.auto: {entries:?}"
        );
        assert_eq!(
            std::fs::read_to_string(cadir.join("serial"))
                .expect("serial")
                .trim(),
            "0004"
        );

        ca.revoke("a.test").expect("revoke");
        assert!(matches!(
            ca.revoke("a.test"),
            Err(CaError::AlreadyRevoked(_))
        ));
        let states: Vec<_> = ca
            .list(true)
            .expect("list")
            .into_iter()
            .map(|e| (e.name, e.state))
            .collect();
        assert_eq!(
            states,
            [
                ("a.test".to_string(), State::Revoked),
                ("b.auto".to_string(), State::Signed)
            ]
        );
        let (revoked, number) = ca.revoked().expect("crl");
        assert_eq!((revoked.len(), number), (1, 2));
        assert!(ca.clean("b.auto").expect("clean"));
        assert_eq!(ca.revoked().expect("crl").0.len(), 2, "clean revokes");
        assert!(
            ca.list(true)
                .expect("list")
                .iter()
                .all(|e| e.name != "b.auto")
        );
    }

    #[test]
    fn names_that_would_leave_the_directory_are_refused() {
        for bad in ["", "../x", "a/b", ".lock", "Upper", "sp ace", "tab\t"] {
            assert!(check_certname(bad).is_err(), "{bad:?}");
        }
        check_certname("node-1.example.com").expect("fine");
        let dir = tempfile::tempdir().expect("dir");
        let (ca, _) = Ca::setup(dir.path(), "t").expect("setup");
        assert!(matches!(
            ca.submit("../x", b"", &Autosign::Always),
            Err(CaError::BadName(_))
        ));
        assert!(matches!(ca.sign(".lock", false), Err(CaError::BadName(_))));
    }

    #[test]
    fn the_server_certificate_has_its_names() {
        let dir = tempfile::tempdir().expect("dir");
        let (ca, _) = Ca::setup(dir.path(), "t").expect("setup");
        let names = vec!["puppet.test".to_string(), "127.0.0.1".to_string()];
        let (cert, key) = ca.issue(&names).expect("issue");
        assert!(key.starts_with("-----BEGIN PRIVATE KEY-----"));
        let (_, block) = x509_parser::pem::parse_x509_pem(cert.as_bytes()).expect("pem");
        let (_, parsed) = x509_parser::parse_x509_certificate(&block.contents).expect("cert");
        let san = parsed
            .subject_alternative_name()
            .expect("ext")
            .expect("san");
        assert_eq!(san.value.general_names.len(), 2);
        assert!(ca.certificate("puppet.test").expect("read").is_some());
    }

    #[test]
    fn pending_requests_are_bounded() {
        let dir = tempfile::tempdir().expect("dir");
        let (ca, _) = Ca::setup(dir.path(), "t").expect("setup");
        for i in 0..MAX_PENDING {
            std::fs::write(dir.path().join(format!("requests/n{i}.pem")), "").expect("write");
        }
        let csr = csr_pem("new.test");
        assert!(matches!(
            ca.submit("new.test", csr.as_bytes(), &Autosign::Never),
            Err(CaError::TooManyRequests(_))
        ));
        // A name already waiting, or one autosigned, is still taken.
        ca.submit("n7", csr_pem("n7").as_bytes(), &Autosign::Never)
            .expect("replaces its own");
        ca.submit("new.test", csr.as_bytes(), &Autosign::Always)
            .expect("autosigned");
    }

    #[test]
    fn alternative_names_wait_for_the_operator_and_reach_the_certificate() {
        let dir = tempfile::tempdir().expect("dir");
        let (ca, _) = Ca::setup(dir.path(), "t").expect("setup");
        let key = KeyPair::generate().expect("key");
        let mut p = CertificateParams::default();
        p.distinguished_name = DistinguishedName::new();
        p.distinguished_name.push(DnType::CommonName, "alt.test");
        p.subject_alt_names = vec![
            SanType::DnsName("alt.test".try_into().expect("dns")),
            SanType::DnsName("puppet.test".try_into().expect("dns")),
            SanType::IpAddress("192.0.2.7".parse().expect("ip")),
        ];
        let pem = p.serialize_request(&key).expect("csr").pem().expect("pem");
        assert_eq!(
            ca.submit("alt.test", pem.as_bytes(), &Autosign::Always)
                .expect("submit"),
            Submitted::HeldForAltNames
        );
        let pending = ca.status("alt.test").expect("status").expect("pending");
        assert_eq!(pending.state, State::Requested);
        assert_eq!(
            pending.to_json()["subject_alt_names"],
            json!(["DNS:alt.test", "DNS:puppet.test", "IP:192.0.2.7"])
        );
        let e = ca.sign("alt.test", false).expect_err("not allowed");
        assert!(
            e.to_string()
                .contains("(DNS:alt.test, DNS:puppet.test, IP:192.0.2.7)"),
            "{e}"
        );
        ca.sign("alt.test", true).expect("allowed");
        let signed = ca.status("alt.test").expect("status").expect("signed");
        let j = signed.to_json();
        assert_eq!(j["state"], "signed");
        assert_eq!(
            j["dns_alt_names"],
            json!(["DNS:alt.test", "DNS:puppet.test"])
        );
        assert_eq!(j["subject_alt_names"].as_array().map(Vec::len), Some(3));
        assert_eq!(j["serial_number"], 2);
        assert!(j["not_after"].as_str().is_some_and(|t| t.ends_with("UTC")));
        assert!(ca.delete("alt.test").expect("delete"));
        assert!(ca.status("alt.test").expect("status").is_none());
        assert!(!ca.delete("alt.test").expect("nothing left"));
    }

    #[test]
    fn a_pkcs1_length_is_der() {
        assert_eq!(der_len(5), [5]);
        assert_eq!(der_len(200), [0x81, 200]);
        assert_eq!(der_len(1190), [0x82, 0x04, 0xa6]);
    }
}
