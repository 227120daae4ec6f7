//! A certificate signing request as an agent submits it (PEM, `CERTIFICATE
//! REQUEST`), checked before it is kept or signed: it parses, its subject
//! has a CN, its signature verifies with its own public key (so whoever
//! sent it holds the key), and it asks for no extension the CA will not
//! put in a certificate. Puppet's own extension arcs (`pp_*`: registered,
//! private and authorisation extensions under 1.3.6.1.4.1.34380.1) are
//! copied into the certificate; subject alternative names (DNS names and
//! IP addresses, as an agent's `dns_alt_names` asks for them) are kept
//! with the request, and signing refuses them unless the operator allows
//! them (`ferry ca sign --allow-dns-alt-names`, Puppet's behaviour): a
//! node's certificate names the node only by default. A single SAN that
//! is the certname itself needs no allowing (Puppet Server's rule). Any
//! other extension, or another kind of alternative name, is refused
//! naming it.

use sha2::{Digest, Sha256};
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::cri_attributes::ParsedCriAttribute;
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::FromDer;

/// Why a CSR is refused.
#[derive(Debug, thiserror::Error)]
pub enum CsrError {
    #[error("the body is not a PEM certificate request (-----BEGIN CERTIFICATE REQUEST-----)")]
    NotPem,
    #[error("the certificate request does not parse: {0}")]
    Malformed(String),
    #[error("the certificate request's subject has no CN")]
    NoCommonName,
    #[error("Instance name \"{cn}\" does not match requested key \"{key}\"")]
    NameMismatch { cn: String, key: String },
    #[error(
        "CSR contains a public key that does not correspond to the signing key (its signature does not verify)"
    )]
    BadSignature,
    #[error(
        "CSR '{name}' contains subject alternative names ({names}), which are disallowed. To allow them, sign with `ferry ca sign --allow-dns-alt-names {name}`"
    )]
    SubjectAltNames { name: String, names: String },
    #[error(
        "CSR '{name}' asks for an alternative name of a kind the CA does not sign ({kind}): only DNS names and IP addresses"
    )]
    AltNameKind { name: String, kind: String },
    #[error("CSR '{name}' asks for extensions that are not permitted: {oids}")]
    Extensions { name: String, oids: String },
}

/// Puppet's extension arc (ppRegCertExt .1.1, ppPrivCertExt .1.2,
/// ppAuthCertExt .1.3 below it).
const PUPPET_ARC: [u64; 8] = [1, 3, 6, 1, 4, 1, 34380, 1];
/// subjectAltName.
const SAN: [u64; 4] = [2, 5, 29, 17];

/// A subject alternative name a CSR asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AltName {
    Dns(String),
    Ip(std::net::IpAddr),
}

impl std::fmt::Display for AltName {
    /// As Puppet shows one: `DNS:puppet.example.com`, `IP:192.0.2.1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AltName::Dns(d) => write!(f, "DNS:{d}"),
            AltName::Ip(ip) => write!(f, "IP:{ip}"),
        }
    }
}

/// An extension copied from the CSR into the certificate.
#[derive(Clone, Debug)]
pub struct Extension {
    pub oid: Vec<u64>,
    pub critical: bool,
    pub value: Vec<u8>,
}

/// A checked CSR.
#[derive(Clone, Debug)]
pub struct Csr {
    /// Its CN: the certname it asks for.
    pub name: String,
    /// The request, DER.
    pub der: Vec<u8>,
    /// The subject's public key (SubjectPublicKeyInfo, DER).
    pub spki: Vec<u8>,
    /// Puppet's extensions it asks for.
    pub extensions: Vec<Extension>,
    /// The subject alternative names it asks for.
    pub alt_names: Vec<AltName>,
}

impl Csr {
    /// Parses and checks a PEM CSR.
    pub fn from_pem(pem: &[u8]) -> Result<Csr, CsrError> {
        let (_, block) = x509_parser::pem::parse_x509_pem(pem).map_err(|_| CsrError::NotPem)?;
        if !matches!(
            block.label.as_str(),
            "CERTIFICATE REQUEST" | "NEW CERTIFICATE REQUEST"
        ) {
            return Err(CsrError::NotPem);
        }
        Csr::from_der(&block.contents)
    }

    /// Parses and checks a DER CSR.
    pub fn from_der(der: &[u8]) -> Result<Csr, CsrError> {
        let (rest, req) = X509CertificationRequest::from_der(der)
            .map_err(|e| CsrError::Malformed(e.to_string()))?;
        if !rest.is_empty() {
            return Err(CsrError::Malformed(
                "trailing bytes after the request".into(),
            ));
        }
        let info = &req.certification_request_info;
        let name = info
            .subject
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .ok_or(CsrError::NoCommonName)?
            .to_string();
        req.verify_signature().map_err(|_| CsrError::BadSignature)?;
        let mut extensions = Vec::new();
        let mut refused = Vec::new();
        let mut alt_names = Vec::new();
        for attr in info.iter_attributes() {
            let ParsedCriAttribute::ExtensionRequest(request) = attr.parsed_attribute() else {
                continue;
            };
            for ext in &request.extensions {
                let oid: Vec<u64> = ext.oid.iter().map(|i| i.collect()).unwrap_or_default();
                if oid.starts_with(&PUPPET_ARC) && oid.len() > PUPPET_ARC.len() {
                    extensions.push(Extension {
                        oid,
                        critical: ext.critical,
                        value: ext.value.to_vec(),
                    });
                } else if oid == SAN {
                    let ParsedExtension::SubjectAlternativeName(san) = ext.parsed_extension()
                    else {
                        return Err(CsrError::Malformed(
                            "its subjectAltName extension does not parse".into(),
                        ));
                    };
                    for general in &san.general_names {
                        alt_names.push(alt_name(general).ok_or_else(|| CsrError::AltNameKind {
                            name: name.clone(),
                            kind: general.to_string(),
                        })?);
                    }
                } else {
                    refused.push(ext.oid.to_id_string());
                }
            }
        }
        if !refused.is_empty() {
            return Err(CsrError::Extensions {
                name,
                oids: refused.join(", "),
            });
        }
        Ok(Csr {
            name,
            der: der.to_vec(),
            spki: info.subject_pki.raw.to_vec(),
            extensions,
            alt_names,
        })
    }

    /// The alternative names signing must be allowed for: all of them,
    /// unless the only one is the certname itself (Puppet Server takes
    /// that one without asking).
    pub fn extra_alt_names(&self) -> Vec<&AltName> {
        match self.alt_names.as_slice() {
            [AltName::Dns(d)] if *d == self.name => Vec::new(),
            all => all.iter().collect(),
        }
    }

    /// Refused unless `allow`: the CSR asks for alternative names.
    pub fn check_alt_names(&self, allow: bool) -> Result<(), CsrError> {
        let extra = self.extra_alt_names();
        if allow || extra.is_empty() {
            return Ok(());
        }
        Err(CsrError::SubjectAltNames {
            name: self.name.clone(),
            names: extra
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// The CSR as PEM.
    pub fn pem(&self) -> String {
        pem_block("CERTIFICATE REQUEST", &self.der)
    }

    /// `SHA256` fingerprint of the request, as Puppet prints one
    /// (`AB:CD:...`).
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.der)
    }
}

/// A DNS name or an IP address (4 or 16 bytes); `None` for other kinds.
pub fn alt_name(general: &GeneralName<'_>) -> Option<AltName> {
    match general {
        GeneralName::DNSName(d) => Some(AltName::Dns(d.to_string())),
        GeneralName::IPAddress(bytes) => match bytes.len() {
            4 => <[u8; 4]>::try_from(*bytes)
                .ok()
                .map(|b| AltName::Ip(std::net::IpAddr::from(b))),
            16 => <[u8; 16]>::try_from(*bytes)
                .ok()
                .map(|b| AltName::Ip(std::net::IpAddr::from(b))),
            _ => None,
        },
        _ => None,
    }
}

/// Colon-separated upper-case SHA-256 of `der`.
pub fn fingerprint(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A PEM block of `der` with `label`, 64 characters a line.
pub fn pem_block(label: &str, der: &[u8]) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(cn: &str, params: impl FnOnce(&mut rcgen::CertificateParams)) -> String {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut p = rcgen::CertificateParams::default();
        p.distinguished_name = rcgen::DistinguishedName::new();
        p.distinguished_name.push(rcgen::DnType::CommonName, cn);
        params(&mut p);
        p.serialize_request(&key).expect("csr").pem().expect("pem")
    }

    #[test]
    fn a_plain_request_is_taken_with_its_name() {
        let csr = Csr::from_pem(request("node1.test", |_| {}).as_bytes()).expect("csr");
        assert_eq!(csr.name, "node1.test");
        assert!(csr.extensions.is_empty());
        assert_eq!(csr.fingerprint().len(), 32 * 3 - 1);
        assert!(Csr::from_pem(csr.pem().as_bytes()).is_ok());
    }

    #[test]
    fn garbage_sans_and_foreign_extensions_are_refused() {
        assert!(matches!(Csr::from_pem(b"hello"), Err(CsrError::NotPem)));
        let cert = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        assert!(matches!(
            Csr::from_pem(cert.as_bytes()),
            Err(CsrError::NotPem)
        ));
        let bad = "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n";
        assert!(matches!(
            Csr::from_pem(bad.as_bytes()),
            Err(CsrError::Malformed(_))
        ));
        let with_san = request("n.test", |p| {
            p.subject_alt_names = vec![rcgen::SanType::DnsName(
                "evil.test".try_into().expect("dns"),
            )];
        });
        let csr = Csr::from_pem(with_san.as_bytes()).expect("kept with its names");
        assert_eq!(csr.alt_names, [AltName::Dns("evil.test".into())]);
        let e = csr.check_alt_names(false).expect_err("not allowed");
        assert!(e.to_string().contains("DNS:evil.test"), "{e}");
        assert!(
            e.to_string().contains("--allow-dns-alt-names n.test"),
            "{e}"
        );
        csr.check_alt_names(true).expect("allowed");
        let own = request("n.test", |p| {
            p.subject_alt_names = vec![rcgen::SanType::DnsName("n.test".try_into().expect("dns"))];
        });
        let csr = Csr::from_pem(own.as_bytes()).expect("csr");
        csr.check_alt_names(false)
            .expect("its own name alone needs no allowing");
        let email = request("n.test", |p| {
            p.subject_alt_names = vec![rcgen::SanType::Rfc822Name(
                "a@b.test".try_into().expect("email"),
            )];
        });
        let e = Csr::from_pem(email.as_bytes()).expect_err("an e-mail SAN");
        assert!(matches!(e, CsrError::AltNameKind { .. }), "{e}");
        let pp = request("n.test", |p| {
            p.custom_extensions = vec![rcgen::CustomExtension::from_oid_content(
                &[1, 3, 6, 1, 4, 1, 34380, 1, 1, 1],
                vec![0x0c, 0x02, b'i', b'd'],
            )];
        });
        let csr = Csr::from_pem(pp.as_bytes()).expect("pp extension taken");
        assert_eq!(csr.extensions.len(), 1);
        let other = request("n.test", |p| {
            p.custom_extensions = vec![rcgen::CustomExtension::from_oid_content(
                &[1, 2, 3, 4],
                vec![0x05, 0x00],
            )];
        });
        let e = Csr::from_pem(other.as_bytes()).expect_err("foreign");
        assert!(e.to_string().contains("1.2.3.4"), "{e}");
    }

    #[test]
    fn a_request_whose_signature_does_not_verify_is_refused() {
        let pem = request("n.test", |_| {});
        let (_, block) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).expect("pem");
        let mut der = block.contents;
        // Flip a bit of the signature (the request's last byte).
        if let Some(last) = der.last_mut() {
            *last ^= 1;
        }
        assert!(matches!(Csr::from_der(&der), Err(CsrError::BadSignature)));
    }
}
