//! What the CA tells about a name, as Puppet Server's `certificate_status`
//! endpoint and `puppetserver ca list` do: its state (`requested`,
//! `signed`, `revoked`), the SHA-1/256/512 fingerprints of the request or
//! certificate DER, the alternative names (`DNS:`, `IP:`), Puppet's
//! authorisation extensions (the ppAuthCertExt arc, by short name where
//! Puppet has one), and for a certificate its serial and validity. Read
//! leniently: a file that does not parse is reported, not fatal to a list.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::cri_attributes::ParsedCriAttribute;
use x509_parser::extensions::{ParsedExtension, X509Extension};
use x509_parser::prelude::FromDer;

use super::csr::{AltName, alt_name};

/// ppAuthCertExt: Puppet's authorisation extensions.
const AUTH_ARC: [u64; 9] = [1, 3, 6, 1, 4, 1, 34380, 1, 3];
/// The short names Puppet gives the authorisation extensions it knows.
const AUTH_NAMES: [(u64, &str); 2] = [(1, "pp_authorization"), (13, "pp_auth_role")];

/// A certificate's or request's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Requested,
    Signed,
    Revoked,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Requested => "requested",
            State::Signed => "signed",
            State::Revoked => "revoked",
        }
    }

    pub fn parse(s: &str) -> Option<State> {
        [State::Requested, State::Signed, State::Revoked]
            .into_iter()
            .find(|st| st.as_str() == s)
    }
}

/// A signed certificate's serial and validity.
#[derive(Debug, Clone)]
pub struct Issued {
    /// Raw big-endian serial, leading zeros stripped.
    pub serial: Vec<u8>,
    /// Unix seconds.
    pub not_before: i64,
    pub not_after: i64,
}

/// One name's request or certificate.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    pub state: State,
    /// SHA-256 of the DER (`AB:CD:...`), Puppet's default fingerprint.
    pub fingerprint: String,
    pub sha1: String,
    pub sha512: String,
    pub alt_names: Vec<AltName>,
    pub authorization_extensions: BTreeMap<String, String>,
    /// For a certificate.
    pub issued: Option<Issued>,
}

/// Colon-separated upper-case hex.
fn colons(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A time as Puppet Server's CA writes one (`2026-01-02T03:04:05UTC`).
pub fn puppet_time(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SUTC").to_string())
        .unwrap_or_default()
}

impl Entry {
    fn new(name: String, state: State, der: &[u8], extensions: &[X509Extension<'_>]) -> Entry {
        let mut alt_names = Vec::new();
        let mut authorization_extensions = BTreeMap::new();
        for ext in extensions {
            if let ParsedExtension::SubjectAlternativeName(san) = ext.parsed_extension() {
                alt_names.extend(san.general_names.iter().filter_map(alt_name));
                continue;
            }
            let oid: Vec<u64> = ext.oid.iter().map(|i| i.collect()).unwrap_or_default();
            if oid.len() == AUTH_ARC.len() + 1 && oid.starts_with(&AUTH_ARC) {
                let last = oid[AUTH_ARC.len()];
                let key = AUTH_NAMES
                    .iter()
                    .find(|(n, _)| *n == last)
                    .map(|(_, s)| s.to_string())
                    .unwrap_or_else(|| ext.oid.to_id_string());
                authorization_extensions.insert(key, text_value(ext.value));
            }
        }
        Entry {
            name,
            state,
            fingerprint: colons(&Sha256::digest(der)),
            sha1: colons(&Sha1::digest(der)),
            sha512: colons(&Sha512::digest(der)),
            alt_names,
            authorization_extensions,
            issued: None,
        }
    }

    /// A pending request's entry; `None` when its DER does not parse.
    pub fn of_request(name: String, der: &[u8]) -> Option<Entry> {
        let (_, req) = X509CertificationRequest::from_der(der).ok()?;
        let mut extensions = Vec::new();
        for attr in req.certification_request_info.iter_attributes() {
            if let ParsedCriAttribute::ExtensionRequest(r) = attr.parsed_attribute() {
                extensions.extend(r.extensions.iter().cloned());
            }
        }
        Some(Entry::new(name, State::Requested, der, &extensions))
    }

    /// A certificate's entry (`revoked` says whether the CRL lists its
    /// serial); `None` when its DER does not parse.
    pub fn of_certificate(
        name: String,
        der: &[u8],
        revoked: impl Fn(&[u8]) -> bool,
    ) -> Option<Entry> {
        let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
        let serial = super::strip(cert.raw_serial()).to_vec();
        let state = if revoked(&serial) {
            State::Revoked
        } else {
            State::Signed
        };
        let mut entry = Entry::new(name, state, der, cert.extensions());
        entry.issued = Some(Issued {
            serial,
            not_before: cert.validity().not_before.timestamp(),
            not_after: cert.validity().not_after.timestamp(),
        });
        Some(entry)
    }

    /// DNS names only, `DNS:` first, as Puppet's `dns_alt_names`.
    pub fn dns_alt_names(&self) -> Vec<String> {
        self.alt_names
            .iter()
            .filter(|n| matches!(n, AltName::Dns(_)))
            .map(ToString::to_string)
            .collect()
    }

    /// The serial in hex (upper case), when signed.
    pub fn serial_hex(&self) -> Option<String> {
        self.issued.as_ref().map(|i| hex::encode_upper(&i.serial))
    }

    /// Puppet Server's `certificate_status` JSON.
    pub fn to_json(&self) -> Value {
        let mut out = json!({
            "name": self.name,
            "state": self.state.as_str(),
            "fingerprint": self.fingerprint,
            "fingerprints": {
                "SHA1": self.sha1,
                "SHA256": self.fingerprint,
                "SHA512": self.sha512,
                "default": self.fingerprint,
            },
            "dns_alt_names": self.dns_alt_names(),
            "subject_alt_names": self.alt_names.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "authorization_extensions": self.authorization_extensions,
        });
        if let Some(i) = &self.issued {
            // A JSON integer when it fits one (Puppet Server's is a
            // BigInteger); the hex digits otherwise.
            let serial = if i.serial.len() <= 8 {
                json!(i.serial.iter().fold(0u64, |n, b| (n << 8) | u64::from(*b)))
            } else {
                json!(hex::encode_upper(&i.serial))
            };
            out["serial_number"] = serial;
            out["not_before"] = json!(puppet_time(i.not_before));
            out["not_after"] = json!(puppet_time(i.not_after));
        }
        out
    }
}

/// An extension's value as text: a DER string's contents, or hex.
fn text_value(der: &[u8]) -> String {
    // UTF8String (12), PrintableString (19), IA5String (22) with a short
    // or long-form length.
    if let [tag, rest @ ..] = der
        && matches!(tag, 12 | 19 | 22)
        && let Some(body) = der_body(rest)
        && let Ok(s) = std::str::from_utf8(body)
    {
        return s.to_string();
    }
    hex::encode(der)
}

/// The contents after a DER length, when the length is exact.
fn der_body(rest: &[u8]) -> Option<&[u8]> {
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |l, b| (l << 8) | usize::from(*b));
        (len, &rest[n..])
    };
    (rest.len() == len).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_values_and_times() {
        assert_eq!(text_value(&[12, 2, b'o', b'k']), "ok");
        assert_eq!(text_value(&[4, 1, 0xff]), "0401ff");
        let long: Vec<u8> = [vec![12, 0x81, 200], vec![b'a'; 200]].concat();
        assert_eq!(text_value(&long).len(), 200);
        assert_eq!(puppet_time(0), "1970-01-01T00:00:00UTC");
        assert_eq!(State::parse("revoked"), Some(State::Revoked));
        assert_eq!(State::parse("bogus"), None);
    }
}
