//! Native ports of module functions written in Ruby that reach files on
//! the compiling machine: neutron's `convert_cert_to_string` (a PEM file's
//! base64 lines joined) and openssl's `cert_date_valid` (the seconds a
//! certificate file stays valid, or false). The Ruby original of the
//! latter runs `openssl x509` through a shell with the path on its
//! command line; ferry reads the certificate itself (the first PEM
//! `CERTIFICATE` block, or DER, as `openssl x509` takes either) with the
//! same results. Each gives its Ruby original's results and messages.

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::stdlib::arg_3x;
use crate::lang::functions::{Builder, Family, any, sig, string};
use crate::lang::template::erb::value::to_s;
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Native;
    b.add(
        &["convert_cert_to_string"],
        f,
        sig("String").req("cert_file", string()),
        convert_cert_to_string,
    );
    b.add(
        &["cert_date_valid"],
        f,
        sig("Variant[Integer, Boolean]").rest("args", any()),
        cert_date_valid,
    );
}

/// neutron's `convert_cert_to_string(path)`: the file's lines without the
/// `-----` ones, each stripped, joined.
fn convert_cert_to_string(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let path = to_s(&c.arg(0));
    if !std::path::Path::new(&path).is_file() {
        return Err(plain(format!("Certificate file not found: {path}")).into());
    }
    let bytes = std::fs::read(&path).map_err(|e| plain(format!("{path}: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(Value::Str(
        text.split_inclusive('\n')
            .filter(|l| !l.contains("-----"))
            .map(|l| l.trim_matches(|ch: char| ch.is_ascii_whitespace() || ch == '\0'))
            .collect(),
    ))
}

/// A certificate's validity (not before, not after) in seconds since the
/// epoch: the first PEM `CERTIFICATE` block of the bytes, or the bytes as
/// DER.
fn cert_dates(bytes: &[u8]) -> Option<(i64, i64)> {
    let der = x509_parser::pem::Pem::iter_from_buffer(bytes)
        .map_while(Result::ok)
        .find(|p| p.label == "CERTIFICATE" || p.label == "X509 CERTIFICATE")
        .map(|p| p.contents);
    let der = der.as_deref().unwrap_or(bytes);
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let v = cert.validity();
    Some((v.not_before.timestamp(), v.not_after.timestamp()))
}

/// openssl's `cert_date_valid(path)`: the whole seconds until the
/// certificate expires; false when it has expired, is not valid yet, or
/// ends before it begins.
fn cert_date_valid(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let path = to_s(&arg_3x(&c.arg(0)));
    let dates = std::fs::read(&path).ok().and_then(|b| cert_dates(&b));
    let Some((begin, end)) = dates else {
        return Err(plain("No date found in certificate").into());
    };
    let now = chrono::Utc::now();
    let (now_s, frac) = (now.timestamp(), now.timestamp_subsec_nanos() > 0);
    // Ruby compares with the fraction of a second: `now > end`.
    let expired = now_s > end || (now_s == end && frac);
    if expired || now_s < begin || end <= begin {
        return Ok(Value::Bool(false));
    }
    // (end - now).to_i truncates the fraction of a second.
    let left = end - now_s - i64::from(frac);
    Ok(Value::Int(left))
}
