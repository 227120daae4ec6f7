//! stdlib's cryptographic functions, with the checks and messages of
//! their Ruby sources (Debian's stdlib, Puppet 7 on Linux): `pw_hash`
//! (Ruby's `String#crypt`, which is libxcrypt's crypt(3): MD5-crypt `$1$`,
//! SHA-crypt `$5$`/`$6$` with the default 5000 rounds, and bcrypt `$2a$`,
//! `$2b$`, `$2x$`, `$2y$` as crypt_blowfish computes them, including the
//! `$2x$` sign-extension bug and the `$2a$` safety measure; an unusable
//! setting is the failure token `*0`), `str2saltedpbkdf2` (PBKDF2-HMAC-SHA512,
//! 128 bytes) and `validate_x509_rsa_key_pair` (OpenSSL's
//! `X509::Certificate#verify` with the RSA key's public half: the
//! certificate's signature must have been made by the key, which is its own
//! for a self-signed certificate).

use base64ct::{Base64Bcrypt, Base64ShaCrypt, Encoding};
use rsa::RsaPublicKey;

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::stdlib::{arg_3x, arity};
use crate::lang::functions::{Builder, Family, any, sig};
use crate::lang::template::erb::value::inspect;
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Stdlib;
    let rest = |ret| sig(ret).rest("args", any());
    b.add(&["pw_hash"], f, rest("Any"), pw_hash);
    b.add(&["str2saltedpbkdf2"], f, rest("Hash"), str2saltedpbkdf2);
    b.add(
        &["validate_x509_rsa_key_pair"],
        f,
        rest("Any"),
        validate_x509_rsa_key_pair,
    );
}

/// A 3.x argument with a `Sensitive` wrapper taken off, as `pw_hash` and
/// `str2saltedpbkdf2` unwrap theirs.
fn unwrapped(v: &Value) -> Value {
    match arg_3x(v) {
        Value::Sensitive(inner) => *inner,
        other => other,
    }
}

// ---------------------------------------------------------------- pw_hash

/// The hash types `pw_hash` names, with their crypt(3) prefixes.
const HASH_TYPES: &[(&str, &str)] = &[
    ("md5", "1"),
    ("sha-256", "5"),
    ("sha-512", "6"),
    ("bcrypt", "2b"),
    ("bcrypt-a", "2a"),
    ("bcrypt-x", "2x"),
    ("bcrypt-y", "2y"),
];

/// stdlib's salt pattern for the bcrypt types, as its message prints it.
const BCRYPT_SALT_DOC: &str = "(?-mix:^[0-9]{2}\\$[.\\/A-Za-z0-9]{22})";

fn pw_hash(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    arity(&c, "pw_hash", 3)?;
    let args: Vec<Value> = c.args.iter().map(unwrapped).collect();
    let fail = |m: String| plain(format!("pw_hash(): {m}"));
    let Value::Str(password) = &args[0] else {
        return Err(fail("first argument must be a string".into()).into());
    };
    let Value::Str(kind) = &args[1] else {
        return Err(fail("second argument must be a string".into()).into());
    };
    let Some(&(_, prefix)) = HASH_TYPES
        .iter()
        .find(|(name, _)| *name == kind.to_lowercase())
    else {
        return Err(fail(format!("{kind} is not a valid hash type")).into());
    };
    let Value::Str(salt) = &args[2] else {
        return Err(fail("third argument must be a string".into()).into());
    };
    if salt.is_empty() {
        return Err(fail("third argument must not be empty".into()).into());
    }
    let bcrypt = prefix.starts_with('2');
    let salt_ok = if bcrypt {
        salt.split('\n').any(bcrypt_salt_line)
    } else {
        salt.bytes().all(crypt_b64_char)
    };
    if !salt_ok {
        let doc = if bcrypt {
            format!("match {BCRYPT_SALT_DOC}")
        } else {
            "be in the set [a-zA-Z0-9./]".into()
        };
        return Err(fail(format!("characters in salt must {doc}")).into());
    }
    if password.is_empty() {
        return Ok(Value::Undef);
    }
    if password.contains('\0') || salt.contains('\0') {
        return Err(plain("string contains null byte").into());
    }
    Ok(Value::Str(crypt(password.as_bytes(), prefix, salt)))
}

/// A character of crypt(3)'s salt alphabet.
fn crypt_b64_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'/'
}

/// Whether one line of a bcrypt salt starts as stdlib's pattern wants:
/// two digits, `$`, 22 salt characters (Ruby's `^` matches at every line).
fn bcrypt_salt_line(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() >= 25
        && b[..2].iter().all(u8::is_ascii_digit)
        && b[2] == b'$'
        && b[3..25].iter().copied().all(crypt_b64_char)
}

/// crypt(3) of `password` with the setting `$prefix$salt`, as libxcrypt
/// computes it; a setting it refuses gives its failure token.
fn crypt(password: &[u8], prefix: &str, salt: &str) -> String {
    const FAILURE: &str = "*0";
    match prefix {
        "1" => md5_crypt(password, salt),
        "5" | "6" => sha_crypt(password, prefix, salt),
        _ => {
            // libxcrypt refuses a setting with spaces, controls, non-ASCII
            // or any of `!*:;\` before it reads the hash.
            let refused = salt
                .bytes()
                .any(|b| b <= b' ' || b >= 0x7f || b"!*:;\\".contains(&b));
            if refused {
                return FAILURE.into();
            }
            // Not refused, the salt is one line: stdlib's pattern matched it.
            let cost = salt[..2].parse::<u32>().unwrap_or(0);
            if !(4..=31).contains(&cost) {
                return FAILURE.into();
            }
            let variant = prefix.as_bytes()[1];
            bcrypt_crypt(password, variant, cost, &salt[3..25])
        }
    }
}

/// MD5-crypt (`$1$`): at most 8 salt characters.
fn md5_crypt(password: &[u8], salt: &str) -> String {
    use md5::{Digest, Md5};
    // The order of the digest bytes in the output (crypt's 24-bit groups).
    const ORDER: [usize; 16] = [12, 6, 0, 13, 7, 1, 14, 8, 2, 15, 9, 3, 5, 10, 4, 11];
    let salt = &salt[..salt.len().min(8)];
    let alternate = Md5::new()
        .chain_update(password)
        .chain_update(salt)
        .chain_update(password)
        .finalize();
    let mut ctx = Md5::new()
        .chain_update(password)
        .chain_update("$1$")
        .chain_update(salt);
    for chunk in password.chunks(16) {
        ctx.update(&alternate[..chunk.len()]);
    }
    let mut n = password.len();
    while n > 0 {
        ctx.update(if n & 1 == 1 {
            &[0u8][..]
        } else {
            &password[..1]
        });
        n >>= 1;
    }
    let mut digest = ctx.finalize();
    for round in 0..1000 {
        let mut ctx = Md5::new();
        if round % 2 == 1 {
            ctx.update(password);
        } else {
            ctx.update(digest);
        }
        if round % 3 != 0 {
            ctx.update(salt);
        }
        if round % 7 != 0 {
            ctx.update(password);
        }
        if round % 2 == 1 {
            ctx.update(digest);
        } else {
            ctx.update(password);
        }
        digest = ctx.finalize();
    }
    let ordered: Vec<u8> = ORDER.iter().map(|&i| digest[i]).collect();
    format!("$1${salt}${}", Base64ShaCrypt::encode_string(&ordered))
}

/// SHA-256-crypt (`$5$`) or SHA-512-crypt (`$6$`) with the default 5000
/// rounds (which the output leaves unnamed): at most 16 salt characters.
fn sha_crypt(password: &[u8], prefix: &str, salt: &str) -> String {
    let salt = &salt[..salt.len().min(16)];
    let params = sha_crypt::Params::RECOMMENDED;
    let (digest, order) = if prefix == "5" {
        let digest = sha_crypt::sha256_crypt(password, salt.as_bytes(), params);
        (digest.to_vec(), sha_crypt_order(10, false, &[30, 31]))
    } else {
        let digest = sha_crypt::sha512_crypt(password, salt.as_bytes(), params);
        (digest.to_vec(), sha_crypt_order(21, true, &[63]))
    };
    let ordered: Vec<u8> = order.iter().map(|&i| digest[i]).collect();
    format!(
        "${prefix}${salt}${}",
        Base64ShaCrypt::encode_string(&ordered)
    )
}

/// The order SHA-crypt's output takes the digest bytes in: 24-bit group
/// `k` holds bytes `k`, `k+n`, `k+2n`, rotated by `k` (left for SHA-512,
/// right for SHA-256), least significant byte first; then the `tail`.
fn sha_crypt_order(n: usize, left: bool, tail: &[usize]) -> Vec<usize> {
    let mut order = Vec::with_capacity(3 * n + tail.len());
    for k in 0..n {
        let mut g = [k, k + n, k + 2 * n];
        if left {
            g.rotate_left(k % 3);
        } else {
            g.rotate_right(k % 3);
        }
        order.extend(g.iter().rev());
    }
    order.extend(tail);
    order
}

/// bcrypt as crypt_blowfish computes it: `variant` `x` keeps the old sign
/// extension bug, `a` its safety measure against that bug's collisions.
/// `salt` is the 22 salt characters; the output re-encodes the 128 bits
/// they carry.
fn bcrypt_crypt(password: &[u8], variant: u8, cost: u32, salt: &str) -> String {
    let salt = bcrypt_salt(salt);
    let hash = bcrypt_raw(password, variant, cost, &salt);
    format!(
        "$2{}${cost:02}${}{}",
        variant as char,
        Base64Bcrypt::encode_string(&salt),
        Base64Bcrypt::encode_string(&hash[..23])
    )
}

/// The 16 salt bytes of 22 bcrypt-base64 characters (the last one's low
/// four bits carry nothing).
fn bcrypt_salt(chars: &str) -> [u8; 16] {
    const ALPHABET: &[u8] = b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut bits: u128 = 0;
    for (i, ch) in chars.bytes().take(22).enumerate() {
        let v = ALPHABET.iter().position(|&a| a == ch).unwrap_or(0) as u128;
        bits |= if i < 21 { v << (122 - 6 * i) } else { v >> 4 };
    }
    bits.to_be_bytes()
}

/// The 24 raw bytes of bcrypt (eksblowfish over "OrpheanBeholderScryDoubt").
fn bcrypt_raw(password: &[u8], variant: u8, cost: u32, salt: &[u8; 16]) -> [u8; 24] {
    use blowfish::Blowfish;
    let (expanded, initial) = bcrypt_key(password, variant);
    let mut state = Blowfish::bc_init_state();
    state.salted_expand_key(salt, &initial);
    for _ in 0..(1u64 << cost) {
        state.bc_expand_key(&expanded);
        state.bc_expand_key(salt);
    }
    let mut words = [0u32; 6];
    for (w, chunk) in words.iter_mut().zip(b"OrpheanBeholderScryDoubt".chunks(4)) {
        *w = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    for pair in words.chunks_mut(2) {
        let mut lr = [pair[0], pair[1]];
        for _ in 0..64 {
            lr = state.bc_encrypt(lr);
        }
        pair.copy_from_slice(&lr);
    }
    let mut out = [0u8; 24];
    for (o, w) in out.chunks_mut(4).zip(words) {
        o.copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// bcrypt's 18 key words from the password and its NUL, repeated, as bytes:
/// the key for the cost loop, and the one for the first expansion (the
/// same but for `$2a$`'s safety flip of bit 16).
fn bcrypt_key(password: &[u8], variant: u8) -> ([u8; 72], [u8; 72]) {
    let bug = variant == b'x';
    let mut stream = password.iter().copied().chain([0]).cycle();
    let (mut sign, mut diff) = (0u32, 0u32);
    let mut words = [0u32; 18];
    for w in &mut words {
        let (mut correct, mut buggy) = (0u32, 0u32);
        for j in 0..4 {
            let b = stream.next().unwrap_or(0);
            correct = (correct << 8) | u32::from(b);
            buggy = (buggy << 8) | (b as i8 as i32 as u32);
            if j > 0 {
                sign |= buggy & 0x80;
            }
        }
        diff |= correct ^ buggy;
        *w = if bug { buggy } else { correct };
    }
    diff |= diff >> 16;
    diff &= 0xffff;
    diff += 0xffff;
    let safety = if variant == b'a' { 0x10000 } else { 0 };
    let flip = (sign << 9) & !diff & safety;
    let mut expanded = [0u8; 72];
    for (o, w) in expanded.chunks_mut(4).zip(words) {
        o.copy_from_slice(&w.to_be_bytes());
    }
    let mut initial = expanded;
    initial[..4].copy_from_slice(&(words[0] ^ flip).to_be_bytes());
    (expanded, initial)
}

// ------------------------------------------------------- str2saltedpbkdf2

fn str2saltedpbkdf2(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    let fail = |m: &str| plain(format!("str2saltedpbkdf2(): {m}"));
    if n != 3 {
        return Err(fail(&format!("wrong number of arguments ({n} for 3)")).into());
    }
    let args: Vec<Value> = c.args.iter().map(unwrapped).collect();
    let Value::Str(password) = &args[0] else {
        return Err(fail("first argument must be a string").into());
    };
    let Value::Str(salt) = &args[1] else {
        return Err(fail("second argument must be a string").into());
    };
    if salt.len() < 8 {
        return Err(fail("second argument must be at least 8 bytes long").into());
    }
    let Value::Int(iterations) = args[2] else {
        return Err(fail("third argument must be an integer").into());
    };
    if !(40_001..70_000).contains(&iterations) {
        return Err(fail("third argument must be between 40,000 and 70,000").into());
    }
    let mut key = [0u8; 128];
    // The range check above keeps the count well inside u32.
    let rounds = u32::try_from(iterations).unwrap_or(40_001);
    pbkdf2::pbkdf2_hmac::<sha2::Sha512>(password.as_bytes(), salt.as_bytes(), rounds, &mut key);
    Ok(Value::Hash(vec![
        (Value::str("password_hex"), Value::Str(hex::encode(key))),
        (Value::str("salt_hex"), Value::Str(hex::encode(salt))),
        (Value::str("iterations"), Value::Int(iterations)),
    ]))
}

// --------------------------------------------- validate_x509_rsa_key_pair

fn validate_x509_rsa_key_pair(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if n != 2 {
        return Err(plain(format!(
            "validate_x509_rsa_key_pair(): wrong number of arguments ({n}; must be 2)"
        ))
        .into());
    }
    let args: Vec<Value> = c.args.iter().map(arg_3x).collect();
    for a in &args {
        if !matches!(a, Value::Str(_)) {
            return Err(plain(format!("{} is not a string.", not_string(a))).into());
        }
    }
    let (cert, key) = (args[0].to_s(), args[1].to_s());
    let cert = pem_certificate(&cert).map_err(|e| {
        plain(format!(
            "Not a valid x509 certificate: PEM_read_bio_X509: {e}"
        ))
    })?;
    let key = rsa_public_key(&key).map_err(|e| plain(format!("Not a valid RSA key: {e}")))?;
    if certificate_signed_by(&cert, &key)? {
        Ok(Value::Undef)
    } else {
        Err(plain("Certificate signature does not match supplied key").into())
    }
}

/// How stdlib's `arg.inspect` shows a non-string argument.
/// (a `Sensitive` without the object address Ruby adds).
fn not_string(v: &Value) -> String {
    match v {
        Value::Sensitive(_) => "#<Puppet::Pops::Types::PSensitiveType::Sensitive>".into(),
        other => inspect(other),
    }
}

/// One PEM block: its label and base64 body, or why OpenSSL stops.
struct PemBlock {
    label: String,
    body: Result<Vec<u8>, &'static str>,
}

/// The PEM blocks of `text` in order, as OpenSSL's PEM reader finds them
/// (lines before a BEGIN line skipped; a block without its END line is
/// "bad end line").
fn pem_blocks(text: &str) -> Vec<PemBlock> {
    use base64::Engine;
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(label) = line
            .trim_end()
            .strip_prefix("-----BEGIN ")
            .and_then(|l| l.strip_suffix("-----"))
        else {
            continue;
        };
        let end = format!("-----END {label}-----");
        let mut body = String::new();
        let mut ended = false;
        for line in lines.by_ref() {
            let line = line.trim_end();
            if line == end {
                ended = true;
                break;
            }
            if line.starts_with("-----") {
                break;
            }
            body.push_str(line.trim());
        }
        let body = if !ended {
            Err("bad end line")
        } else {
            base64::engine::general_purpose::STANDARD
                .decode(&body)
                .map_err(|_| "bad base64 decode")
        };
        blocks.push(PemBlock {
            label: label.to_string(),
            body,
        });
    }
    blocks
}

/// The DER of the first certificate block (`CERTIFICATE` or
/// `X509 CERTIFICATE`), checked to parse, or OpenSSL's reason.
fn pem_certificate(text: &str) -> Result<Vec<u8>, &'static str> {
    use x509_parser::prelude::FromDer;
    let block = pem_blocks(text)
        .into_iter()
        .find(|b| b.label == "CERTIFICATE" || b.label == "X509 CERTIFICATE")
        .ok_or("no start line")?;
    let der = block.body?;
    match x509_parser::certificate::X509Certificate::from_der(&der) {
        Ok(_) => Ok(der),
        Err(_) => Err("ASN1 lib"),
    }
}

/// OpenSSL's names for the key types `OpenSSL::PKey::RSA.new` refuses.
const OTHER_KEY_TYPES: &[(&str, &str)] = &[
    ("1.2.840.10045.2.1", "id-ecPublicKey"),
    ("1.3.101.112", "ED25519"),
    ("1.3.101.113", "ED448"),
    ("1.3.101.110", "X25519"),
    ("1.3.101.111", "X448"),
    ("1.2.840.10040.4.1", "dsaEncryption"),
    ("1.2.840.113549.1.3.1", "dhKeyAgreement"),
    ("1.2.840.113549.1.1.10", "RSASSA-PSS"),
];

/// The public half of the first key in `text`, as `OpenSSL::PKey::RSA.new`
/// reads it (PKCS#8 or PKCS#1, private or public, whatever the label says),
/// or its message.
fn rsa_public_key(text: &str) -> Result<RsaPublicKey, String> {
    for block in pem_blocks(text) {
        let Ok(der) = block.body else { continue };
        match key_of(&der) {
            Some(Ok(key)) => return Ok(key),
            Some(Err(kind)) => return Err(format!("incorrect pkey type: {kind}")),
            None => {}
        }
    }
    Err("Neither PUB key nor PRIV key: unsupported".into())
}

/// A DER key: RSA's public half, another type's name, or not a key.
fn key_of(der: &[u8]) -> Option<Result<RsaPublicKey, &'static str>> {
    use rsa::pkcs1::{DecodeRsaPrivateKey, DecodeRsaPublicKey};
    use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey, PrivateKeyInfo, spki};
    if let Ok(k) = rsa::RsaPrivateKey::from_pkcs8_der(der) {
        return Some(Ok(k.to_public_key()));
    }
    if let Ok(k) = rsa::RsaPrivateKey::from_pkcs1_der(der) {
        return Some(Ok(k.to_public_key()));
    }
    if let Ok(k) = RsaPublicKey::from_public_key_der(der) {
        return Some(Ok(k));
    }
    if let Ok(k) = RsaPublicKey::from_pkcs1_der(der) {
        return Some(Ok(k));
    }
    let oid = PrivateKeyInfo::try_from(der)
        .map(|k| k.algorithm.oid)
        .or_else(|_| spki::SubjectPublicKeyInfoRef::try_from(der).map(|k| k.algorithm.oid));
    if let Ok(oid) = oid {
        let oid = oid.to_string();
        return OTHER_KEY_TYPES
            .iter()
            .find(|(o, _)| *o == oid)
            .map(|&(_, name)| Err(name));
    }
    sec1_ec_key(der).then_some(Err("id-ecPublicKey"))
}

/// Whether `der` is SEC1's `ECPrivateKey` (version 1, then the key octets).
fn sec1_ec_key(der: &[u8]) -> bool {
    use der::{Decode, Reader, SliceReader, asn1::OctetStringRef};
    let Ok(mut r) = SliceReader::new(der) else {
        return false;
    };
    r.sequence(|seq| {
        let version = u8::decode(seq)?;
        let _key = OctetStringRef::decode(seq)?;
        seq.read_slice(seq.remaining_len())?;
        Ok(version == 1)
    })
    .unwrap_or(false)
}

/// OpenSSL's `X509_verify`: whether the certificate's signature verifies
/// with `key`. A signature that is not RSA's is OpenSSL's "wrong public key
/// type" error.
fn certificate_signed_by(der: &[u8], key: &RsaPublicKey) -> EvalResult<bool> {
    use x509_parser::prelude::FromDer;
    use x509_parser::signature_algorithm::SignatureAlgorithm;
    let Ok((_, cert)) = x509_parser::certificate::X509Certificate::from_der(der) else {
        return Ok(false);
    };
    let tbs = cert.tbs_certificate.as_ref();
    let signature = cert.signature_value.data.as_ref();
    let algorithm = SignatureAlgorithm::try_from(&cert.signature_algorithm);
    Ok(match algorithm {
        Ok(SignatureAlgorithm::RSA) => {
            let oid = cert.signature_algorithm.algorithm.to_id_string();
            pkcs1_verify(key, &oid, tbs, signature)
        }
        Ok(SignatureAlgorithm::RSASSA_PSS(params)) => {
            let hash = params.hash_algorithm_oid().to_id_string();
            let salt = params.salt_length() as usize;
            pss_verify(key, &hash, salt, tbs, signature)
        }
        _ => return Err(plain("wrong public key type").into()),
    })
}

/// PKCS#1 v1.5 verification for the RSA signature algorithms OpenSSL
/// knows (the DigestInfo prefixes of RFC 8017, section 9.2).
fn pkcs1_verify(key: &RsaPublicKey, oid: &str, tbs: &[u8], signature: &[u8]) -> bool {
    use sha2_010::Digest;
    const SHA2_PREFIX: [u8; 15] = [
        0x30, 0x00, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x00,
    ];
    let sha2 = |id: u8, len: u8| {
        let mut p = SHA2_PREFIX.to_vec();
        p[1] = 0x11 + len;
        p[14] = id;
        p.extend([0x05, 0x00, 0x04, len]);
        p
    };
    let (prefix, hashed): (Vec<u8>, Vec<u8>) = match oid {
        "1.2.840.113549.1.1.4" => (
            vec![
                0x30, 0x20, 0x30, 0x0c, 0x06, 0x08, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x05,
                0x05, 0x00, 0x04, 0x10,
            ],
            md5::Md5::digest(tbs).to_vec(),
        ),
        "1.2.840.113549.1.1.5" => (
            vec![
                0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04,
                0x14,
            ],
            <sha1::Sha1 as sha1::Digest>::digest(tbs).to_vec(),
        ),
        "1.2.840.113549.1.1.14" => (sha2(4, 28), sha2_010::Sha224::digest(tbs).to_vec()),
        "1.2.840.113549.1.1.11" => (sha2(1, 32), sha2_010::Sha256::digest(tbs).to_vec()),
        "1.2.840.113549.1.1.12" => (sha2(2, 48), sha2_010::Sha384::digest(tbs).to_vec()),
        "1.2.840.113549.1.1.13" => (sha2(3, 64), sha2_010::Sha512::digest(tbs).to_vec()),
        _ => return false,
    };
    let scheme = rsa::Pkcs1v15Sign {
        hash_len: Some(hashed.len()),
        prefix: prefix.into(),
    };
    key.verify(scheme, &hashed, signature).is_ok()
}

/// RSASSA-PSS verification with the SHA-2 hashes (MGF1 with the same hash).
fn pss_verify(key: &RsaPublicKey, hash: &str, salt: usize, tbs: &[u8], signature: &[u8]) -> bool {
    use sha2_010::{Digest, Sha256, Sha384, Sha512};
    let (scheme, hashed) = match hash {
        "2.16.840.1.101.3.4.2.1" => (
            rsa::Pss::new_with_salt::<Sha256>(salt),
            Sha256::digest(tbs).to_vec(),
        ),
        "2.16.840.1.101.3.4.2.2" => (
            rsa::Pss::new_with_salt::<Sha384>(salt),
            Sha384::digest(tbs).to_vec(),
        ),
        "2.16.840.1.101.3.4.2.3" => (
            rsa::Pss::new_with_salt::<Sha512>(salt),
            Sha512::digest(tbs).to_vec(),
        ),
        _ => return false,
    };
    key.verify(scheme, &hashed, signature).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bcrypt on bytes a Puppet string cannot hold, recorded from Ruby's
    /// `String#crypt`: `$2x$`'s sign-extension bug, and `$2a$`'s safety
    /// measure for a password whose buggy key would collide (72 × 0xff).
    #[test]
    fn bcrypt_non_utf8_passwords() {
        let bug: &[u8] = &[0xff, 0xa3, b'3', b'4', b'5'];
        let collide: &[u8] = &[0xff; 72];
        let cases: [(&[u8], u8, &str, &str); 4] = [
            (
                bug,
                b'x',
                "abcdefghijklmnopqrstuv",
                "uu9f4sA9SRA0scUKcRyC5kce8dao2.GKe",
            ),
            (
                bug,
                b'a',
                "abcdefghijklmnopqrstuv",
                "uuUIzecIiCguM2sPh1F7L9IS3zOtmg5Im",
            ),
            (
                collide,
                b'a',
                "abcdefghijklmnopqrstuu",
                "uuFqHjb/rDLNN/ZBWitRnJrogHVUGKnN.",
            ),
            (
                collide,
                b'b',
                "abcdefghijklmnopqrstuu",
                "uuJjey955Nv64O8Kva4YV/3hJowaKUXkS",
            ),
        ];
        for (pw, variant, salt, tail) in cases {
            let want = format!("$2{}$04$abcdefghijklmnopqrst{tail}", variant as char);
            assert_eq!(bcrypt_crypt(pw, variant, 4, salt), want);
        }
    }
}
