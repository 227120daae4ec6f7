//! Bolt's encrypted values, `ENC[PKCS7,<base64>]`: a PKCS#7 (CMS)
//! envelope of the plaintext, its AES-256-CBC key encrypted with an RSA
//! key pair's public half. The same values the pkcs7 plugin Bolt bundles
//! (puppetlabs-pkcs7) and hiera-eyaml make and read, with key files in
//! their formats: the private key as PEM (PKCS#1, as Ruby's OpenSSL writes
//! it, or PKCS#8) and the public half as a self-signed X.509 certificate.
//!
//! Pure: texts in, texts out. Where the key files are and who may read
//! them is the caller's business; the plaintext is never part of an error.

use aes::cipher::{BlockDecryptMut, KeyIvInit, block_padding::Pkcs7};
use base64::Engine as _;
use cms::builder::{
    ContentEncryptionAlgorithm, EnvelopedDataBuilder, KeyEncryptionInfo,
    KeyTransRecipientInfoBuilder,
};
use cms::cert::IssuerAndSerialNumber;
use cms::content_info::ContentInfo;
use cms::enveloped_data::{EnvelopedData, RecipientIdentifier, RecipientInfo};
use der::{Decode, DecodePem, Encode, EncodePem};
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey};
use rsa::{Pkcs1v15Encrypt, RsaPrivateKey, RsaPublicKey};
use x509_cert::Certificate;

/// The key size Bolt's `secret createkeys` uses unless told otherwise.
pub const DEFAULT_KEY_SIZE: usize = 2048;

/// The largest key size accepted (making a larger one takes minutes).
pub const MAX_KEY_SIZE: usize = 16384;

/// Why a value could not be encrypted or decrypted, or keys not made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SecretError {
    /// The text is not `ENC[PKCS7,<base64>]` (Bolt's `pkcs7/parse-error`).
    #[error("could not parse as an encrypted value: it is not ENC[PKCS7,<base64>]")]
    NotEncrypted,
    /// The envelope inside is not one this can open.
    #[error("the encrypted value is not a PKCS#7 envelope ferry can open: {0}")]
    Envelope(String),
    /// A key file's content.
    #[error("the {which} is not usable: {why}")]
    Key { which: &'static str, why: String },
    /// The private key does not open the envelope.
    #[error("the value was not encrypted for this key pair (or it is damaged)")]
    WrongKey,
    #[error("the key size must be between 1024 and {MAX_KEY_SIZE} bits, not {0}")]
    KeySize(usize),
    #[error("the decrypted value is not UTF-8 text")]
    NotText,
}

fn envelope(why: impl std::fmt::Display) -> SecretError {
    SecretError::Envelope(why.to_string())
}

fn key_error(which: &'static str) -> impl Fn(String) -> SecretError {
    move |why| SecretError::Key { which, why }
}

/// A new key pair: the private key (PKCS#1 PEM) and a self-signed
/// certificate for its public half (PEM), valid for 50 years, as Bolt's
/// pkcs7 plugin makes them.
pub fn create_keys(bits: usize) -> Result<(String, String), SecretError> {
    if !(1024..=MAX_KEY_SIZE).contains(&bits) {
        return Err(SecretError::KeySize(bits));
    }
    let which = key_error("new key pair");
    let mut rng = rand_core_06::OsRng;
    let key = RsaPrivateKey::new(&mut rng, bits).map_err(|e| which(e.to_string()))?;
    let private = key
        .to_pkcs1_pem(der::pem::LineEnding::LF)
        .map_err(|e| which(e.to_string()))?
        .to_string();
    let signer = rsa::pkcs1v15::SigningKey::<sha2_010::Sha512>::new(key.clone());
    let public = RsaPublicKey::from(&key);
    let spki = x509_cert::spki::SubjectPublicKeyInfoOwned::from_key(public)
        .map_err(|e| which(e.to_string()))?;
    let validity = x509_cert::time::Validity::from_now(std::time::Duration::from_secs(
        50 * 365 * 24 * 60 * 60,
    ))
    .map_err(|e| which(e.to_string()))?;
    let serial =
        x509_cert::serial_number::SerialNumber::new(&[1]).map_err(|e| which(e.to_string()))?;
    use x509_cert::builder::Builder as _;
    let cert = x509_cert::builder::CertificateBuilder::new(
        x509_cert::builder::Profile::Root,
        serial,
        validity,
        x509_cert::name::Name::default(),
        spki,
        &signer,
    )
    .map_err(|e| which(e.to_string()))?
    .build::<rsa::pkcs1v15::Signature>()
    .map_err(|e| which(e.to_string()))?;
    let cert = cert
        .to_pem(der::pem::LineEnding::LF)
        .map_err(|e| which(e.to_string()))?;
    Ok((private, cert))
}

fn certificate(pem: &str) -> Result<Certificate, SecretError> {
    Certificate::from_pem(pem.trim().as_bytes())
        .map_err(|e| key_error("public key (a PEM certificate)")(e.to_string()))
}

fn private_key(pem: &str) -> Result<RsaPrivateKey, SecretError> {
    RsaPrivateKey::from_pkcs1_pem(pem.trim())
        .or_else(|_| RsaPrivateKey::from_pkcs8_pem(pem.trim()))
        .map_err(|e| key_error("private key (an RSA key in PEM)")(e.to_string()))
}

/// `ENC[PKCS7,...]` of `plaintext` for the certificate `cert_pem`, its
/// base64 in lines of 60 as Ruby's `Base64.encode64` writes it.
pub fn encrypt(cert_pem: &str, plaintext: &str) -> Result<String, SecretError> {
    let cert = certificate(cert_pem)?;
    let which = key_error("public key (a PEM certificate)");
    let spki = cert
        .tbs_certificate
        .subject_public_key_info
        .to_der()
        .map_err(|e| which(e.to_string()))?;
    let public = RsaPublicKey::from_public_key_der(&spki).map_err(|e| which(e.to_string()))?;
    let rid = RecipientIdentifier::IssuerAndSerialNumber(IssuerAndSerialNumber {
        issuer: cert.tbs_certificate.issuer.clone(),
        serial_number: cert.tbs_certificate.serial_number.clone(),
    });
    let mut key_rng = rand_core_06::OsRng;
    let recipient =
        KeyTransRecipientInfoBuilder::new(rid, KeyEncryptionInfo::Rsa(public), &mut key_rng)
            .map_err(envelope)?;
    let mut builder = EnvelopedDataBuilder::new(
        None,
        plaintext.as_bytes(),
        ContentEncryptionAlgorithm::Aes256Cbc,
        None,
    )
    .map_err(envelope)?;
    let mut rng = rand_core_06::OsRng;
    let data = builder
        .add_recipient_info(recipient)
        .map_err(envelope)?
        .build_with_rng(&mut rng)
        .map_err(envelope)?;
    let info = ContentInfo {
        content_type: const_oid::db::rfc5911::ID_ENVELOPED_DATA,
        content: der::Any::encode_from(&data).map_err(envelope)?,
    };
    let raw = info.to_der().map_err(envelope)?;
    let text = base64::engine::general_purpose::STANDARD.encode(raw);
    let lines: Vec<&str> = text
        .as_bytes()
        .chunks(60)
        .map(|c| std::str::from_utf8(c).unwrap_or_default())
        .collect();
    Ok(format!("ENC[PKCS7,{}]", lines.join("\n")))
}

/// The base64 inside `ENC[PKCS7,...]` (white space anywhere in it).
fn encoded(value: &str) -> Result<Vec<u8>, SecretError> {
    let inner = value
        .trim()
        .strip_prefix("ENC[PKCS7,")
        .and_then(|rest| rest.strip_suffix(']'))
        .ok_or(SecretError::NotEncrypted)?;
    let compact: String = inner.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|_| SecretError::NotEncrypted)
}

/// Decrypts AES-CBC content with PKCS#7 padding; a wrong key shows as bad
/// padding (or a key of the wrong length).
fn open_cbc<C>(key: &[u8], iv: &[u8], buf: &mut [u8]) -> Result<Vec<u8>, SecretError>
where
    C: aes::cipher::BlockCipher + aes::cipher::BlockDecryptMut,
    cbc::Decryptor<C>: KeyIvInit + BlockDecryptMut,
{
    Ok(cbc::Decryptor::<C>::new_from_slices(key, iv)
        .map_err(|_| SecretError::WrongKey)?
        .decrypt_padded_mut::<Pkcs7>(buf)
        .map_err(|_| SecretError::WrongKey)?
        .to_vec())
}

/// The plaintext of `value` (`ENC[PKCS7,...]`), opened with the private
/// key; the certificate picks the recipient when the envelope has several.
pub fn decrypt(private_pem: &str, cert_pem: &str, value: &str) -> Result<String, SecretError> {
    let raw = encoded(value)?;
    let key = private_key(private_pem)?;
    let cert = certificate(cert_pem)?;
    let info = ContentInfo::from_der(&raw).map_err(envelope)?;
    if info.content_type != const_oid::db::rfc5911::ID_ENVELOPED_DATA {
        return Err(envelope(format!(
            "its content type is {}, not enveloped data",
            info.content_type
        )));
    }
    let data: EnvelopedData = info.content.decode_as().map_err(envelope)?;
    let mine = |rid: &RecipientIdentifier| match rid {
        RecipientIdentifier::IssuerAndSerialNumber(i) => {
            i.issuer == cert.tbs_certificate.issuer
                && i.serial_number == cert.tbs_certificate.serial_number
        }
        RecipientIdentifier::SubjectKeyIdentifier(_) => false,
    };
    let recipients: Vec<_> = data
        .recip_infos
        .0
        .iter()
        .filter_map(|r| match r {
            RecipientInfo::Ktri(k) => Some(k),
            _ => None,
        })
        .collect();
    // The recipient for this certificate first; then any (OpenSSL, too,
    // tries each when none matches).
    let ordered = recipients
        .iter()
        .filter(|k| mine(&k.rid))
        .chain(recipients.iter().filter(|k| !mine(&k.rid)));
    let mut content_key = None;
    for k in ordered {
        if let Ok(ck) = key.decrypt(Pkcs1v15Encrypt, k.enc_key.as_bytes()) {
            content_key = Some(ck);
            break;
        }
    }
    let content_key = content_key.ok_or(SecretError::WrongKey)?;
    let eci = &data.encrypted_content;
    let iv: der::asn1::OctetString = eci
        .content_enc_alg
        .parameters
        .as_ref()
        .ok_or_else(|| envelope("its cipher has no IV"))?
        .decode_as()
        .map_err(envelope)?;
    let mut buf = eci
        .encrypted_content
        .as_ref()
        .ok_or_else(|| envelope("it holds no content"))?
        .as_bytes()
        .to_vec();
    let oid = eci.content_enc_alg.oid;
    let plain = if oid == const_oid::db::rfc5911::ID_AES_256_CBC {
        open_cbc::<aes::Aes256>(&content_key, iv.as_bytes(), &mut buf)?
    } else if oid == const_oid::db::rfc5911::ID_AES_192_CBC {
        open_cbc::<aes::Aes192>(&content_key, iv.as_bytes(), &mut buf)?
    } else if oid == const_oid::db::rfc5911::ID_AES_128_CBC {
        open_cbc::<aes::Aes128>(&content_key, iv.as_bytes(), &mut buf)?
    } else {
        return Err(envelope(format!(
            "its cipher {oid} is not AES-CBC (Bolt encrypts with AES-256-CBC)"
        )));
    };
    String::from_utf8(plain).map_err(|_| SecretError::NotText)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_fail_clearly() {
        let (private, cert) = create_keys(1024).unwrap();
        assert!(private.starts_with("-----BEGIN RSA PRIVATE KEY-----"));
        assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"));
        let enc = encrypt(&cert, "pässword 4711").unwrap();
        assert!(enc.starts_with("ENC[PKCS7,") && enc.ends_with(']'), "{enc}");
        assert!(enc.lines().all(|l| l.len() <= 70));
        assert_eq!(decrypt(&private, &cert, &enc).unwrap(), "pässword 4711");
        // White space in the value is ignored, as Bolt's pattern allows.
        let spaced = enc.replace('\n', "\n    ");
        assert_eq!(decrypt(&private, &cert, &spaced).unwrap(), "pässword 4711");
        // Another key pair cannot open it, and says so without the value.
        let (other, other_cert) = create_keys(1024).unwrap();
        let err = decrypt(&other, &other_cert, &enc).unwrap_err();
        assert_eq!(err, SecretError::WrongKey);
        assert_eq!(
            decrypt(&private, &cert, "ENC[GPG,abc]").unwrap_err(),
            SecretError::NotEncrypted
        );
        assert_eq!(
            decrypt(&private, &cert, "ENC[PKCS7,!!!]").unwrap_err(),
            SecretError::NotEncrypted
        );
        assert!(matches!(
            decrypt(&private, &cert, "ENC[PKCS7,AAAA]").unwrap_err(),
            SecretError::Envelope(_)
        ));
        assert!(matches!(
            decrypt("not a key", &cert, &enc).unwrap_err(),
            SecretError::Key { .. }
        ));
        assert_eq!(create_keys(512).unwrap_err(), SecretError::KeySize(512));
    }
}
