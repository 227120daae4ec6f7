//! Native ports of module functions written in Ruby that reach files on
//! the compiling machine: neutron's `convert_cert_to_string` (a PEM file's
//! base64 lines joined) and openssl's `cert_date_valid` (the seconds a
//! certificate file stays valid, or false). The Ruby original of the
//! latter runs `openssl x509` through a shell with the path on its
//! command line; ferry reads the certificate itself (the first PEM
//! `CERTIFICATE` block, or DER, as `openssl x509` takes either) with the
//! same results. augeas_core's `augeas` (content changed through a
//! lens) drives `/usr/bin/augtool`. archive's `go_md5`,
//! `archive::artifactory_checksum` and `archive::artifactory_latest_url`
//! fetch over HTTP(S) as archive's helper does (redirects, basic
//! authentication, its error text), with hyper and bounded timeouts;
//! redis's `redisget` asks Redis over a TCP connection (RESP: `AUTH`,
//! `SELECT`, `GET`). Each gives its Ruby original's results and messages.

use std::io::Write;
use std::time::Duration;

use crate::lang::error::{LangError, plain};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::native_modules::{Ordered, no_method};
use crate::lang::functions::native_openstack::ruby_index;
use crate::lang::functions::stdlib::arg_3x;
use crate::lang::functions::stdlib_validate::{AUGTOOL, Ran, run_bounded};
use crate::lang::functions::{Builder, Family, any, sig, string};
use crate::lang::template::erb::value::{class_name, inspect, to_s};
use crate::lang::values::types::PType;
use crate::lang::values::value::Value;
use rustls::pki_types::pem::PemObject;

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
    b.add(&["go_md5"], f, sig("String").rest("args", any()), go_md5);
    b.add(
        &["archive::artifactory_checksum"],
        f,
        sig("String").req("url", http_url()).opt(
            "checksum_type",
            PType::Enum(vec!["sha1".into(), "sha256".into(), "md5".into()]),
        ),
        artifactory_checksum,
    );
    b.add(
        &["archive::artifactory_latest_url"],
        f,
        sig("Hash")
            .req("url", PType::Variant(vec![http_url(), https_url()]))
            .req(
                "maven_data",
                PType::Hash(Box::new(any()), Box::new(any()), 0, i64::MAX),
            ),
        artifactory_latest_url,
    );
    b.add(&["redisget"], f, sig("Any").rest("args", any()), redisget);
    b.add(
        &["augeas"],
        f,
        sig("String")
            .req("content", string())
            .req("lens", string())
            .req("changes", PType::Array(Box::new(string()), 0, i64::MAX)),
        augeas,
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

/// How long one augtool run may take.
const AUGTOOL_LIMIT: Duration = Duration::from_secs(30);

/// augeas_core's `augeas(content, lens, changes)`: the content parsed with
/// the lens, the changes (augtool commands, relative to the parsed tree)
/// applied, and the tree written back with the lens. augtool does the
/// work on a copy of the content in a private temporary directory (0700,
/// the file 0600, removed afterwards) that is also its filesystem root,
/// so changes reach no other file; the content is never on a command line.
fn augeas(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let content = to_s(&c.arg(0));
    let lens = to_s(&c.arg(1));
    let changes: Vec<String> = match c.arg(2) {
        Value::Array(a) => a.iter().map(to_s).collect(),
        _ => Vec::new(),
    };
    let fail = |m: String| -> EvalResult<Value> { Err(plain(format!("augeas(): {m}")).into()) };
    let io = |e: std::io::Error| plain(format!("augeas(): {AUGTOOL}: {e}"));
    let dir = tempfile::Builder::new()
        .prefix("ferry-augeas")
        .tempdir()
        .map_err(io)?;
    let input = dir.path().join("input");
    write_private(&input, content.as_bytes()).map_err(io)?;
    // A lens name is a module and a name; anything else is no lens (and
    // could not be passed to augtool safely).
    let lens_ok = !lens.is_empty()
        && lens
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b));
    let load = if lens_ok {
        format!("set /augeas/load/ferry/lens {lens}\nset /augeas/load/ferry/incl /input\nload\n")
    } else {
        String::new()
    };
    // The changes run where Ruby's run: in the parsed tree, moved to /store.
    let changes = format!("set /augeas/context /store\n{}\n", changes.join("\n"));
    let apply = format!("mv /files/input /store\n{changes}");
    // First the parse and the changes: their errors, in Ruby's order.
    let check = format!(
        "{load}get /augeas/files/input/error/message\nget /augeas/load/ferry/error\n{apply}"
    );
    let (ok, out) = run_augtool(dir.path(), &check).map_err(io)?;
    let value_of = |out: &str, path: &str| {
        let mut found = None;
        for line in out.lines() {
            if let Some(v) = line.strip_prefix(path).and_then(|r| r.strip_prefix(" = ")) {
                found = Some(v.to_string());
            } else if line == format!("{path} (o)") || line == format!("{path} (none)") {
                found = None;
            }
        }
        found
    };
    if let Some(msg) = value_of(&out, "/augeas/files/input/error/message") {
        return fail(format!("Failed to parse string with lens {lens}: {msg}"));
    }
    let lens_missing = !lens_ok
        || out
            .lines()
            .any(|l| l.starts_with("/augeas/load/ferry/error = "));
    if lens_missing {
        // Ruby runs the changes on an empty tree, then fails to write it
        // with the lens (the message it reads is the parse's: none).
        let (ok, _) = run_augtool(dir.path(), &changes).map_err(io)?;
        if !ok {
            return fail("Failed to apply change to tree".into());
        }
        return fail(format!("Failed to apply changes with lens {lens}: "));
    }
    if !ok {
        return fail("Failed to apply change to tree".into());
    }
    let save = format!(
        "{load}{apply}mv /store /files/input\nsave\nget /augeas/files/input/error\nget /augeas/files/input/error/message\n"
    );
    let (_, out) = run_augtool(dir.path(), &save).map_err(io)?;
    if value_of(&out, "/augeas/files/input/error").is_some() {
        // The message (lines of the tree and the lens) ends the output.
        let key = "\n/augeas/files/input/error/message = ";
        let msg = out.find(key).map_or("", |i| &out[i + key.len()..]);
        let msg = msg.strip_suffix('\n').unwrap_or(msg);
        return fail(format!("Failed to apply changes with lens {lens}: {msg}"));
    }
    let bytes = std::fs::read(&input).map_err(io)?;
    Ok(Value::Str(String::from_utf8_lossy(&bytes).into_owned()))
}

/// Write a new file only its owner may read.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)
}

/// Run augtool with `script` on its stdin and `root` as its filesystem
/// root, no lens or file loaded beforehand, through stdlib_validate's
/// bounded runner (its own process group, killed after
/// [`AUGTOOL_LIMIT`]): whether every command succeeded, and what it
/// printed.
fn run_augtool(root: &std::path::Path, script: &str) -> std::io::Result<(bool, String)> {
    let argv = [
        AUGTOOL.to_string(),
        "--noautoload".into(),
        "--noload".into(),
        "--root".into(),
        root.to_string_lossy().into_owned(),
    ];
    match run_bounded(
        &argv,
        Some(script.as_bytes().to_vec()),
        false,
        AUGTOOL_LIMIT,
    ) {
        Ran::Exited(code, out) => Ok((code == Some(0), out)),
        Ran::TimedOut => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer within {} seconds", AUGTOOL_LIMIT.as_secs()),
        )),
    }
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

/// How long an HTTP exchange or a Redis query may take, and how much an
/// HTTP answer may hold.
const NET_LIMIT: Duration = Duration::from_secs(30);
const MAX_BODY: usize = 16 << 20;
/// Redirects archive's HTTP helper follows.
const FOLLOW_LIMIT: usize = 5;
/// The CA bundle HTTPS answers are checked against (Ruby's default).
const CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// The stdlib aliases archive's functions take URLs as.
pub(crate) fn http_url() -> PType {
    PType::Alias(
        "Stdlib::HTTPUrl".into(),
        Box::new(PType::Pattern(vec![r"(?i:\Ahttps?:\/\/.*\z)".into()])),
    )
}

pub(crate) fn https_url() -> PType {
    PType::Alias(
        "Stdlib::HTTPSUrl".into(),
        Box::new(PType::Pattern(vec![r"(?i:\Ahttps:\/\/.*\z)".into()])),
    )
}

/// archive's `PuppetX::Bodeco::Util.content(url)`: the body of a GET,
/// redirects followed (at most five), basic authentication when given;
/// another status fails with archive's message.
fn http_content(url: &str, auth: Option<(&str, &str)>) -> Result<String, LangError> {
    let mut url = url.to_string();
    let mut left = FOLLOW_LIMIT;
    loop {
        let (status, location, body) = http_get(&url, auth)?;
        if (200..300).contains(&status) {
            return Ok(body);
        }
        if (300..400).contains(&status) {
            if left == 0 {
                return Err(plain(format!("Redirect limit exceeded, last url: {url}")));
            }
            left -= 1;
            let location = location.unwrap_or_default();
            url = if location.contains("://") {
                location
            } else {
                format!("{url}{location}")
            };
            continue;
        }
        return Err(plain(format!(
            "HTTP Error Code {status}\nURL: {url}\nContent:\n{body}"
        )));
    }
}

/// The TLS client configuration of the HTTP functions: the system CA
/// bundle, read once for the process.
fn tls_config() -> Result<rustls::ClientConfig, LangError> {
    static CONFIG: std::sync::OnceLock<Result<rustls::ClientConfig, String>> =
        std::sync::OnceLock::new();
    let built = CONFIG.get_or_init(|| {
        let mut roots = rustls::RootCertStore::empty();
        if let Ok(certs) = rustls::pki_types::CertificateDer::pem_file_iter(CA_BUNDLE) {
            for cert in certs.flatten() {
                let _ = roots.add(cert);
            }
        }
        Ok(
            rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth(),
        )
    });
    built.clone().map_err(plain)
}

/// One GET: the status, the Location header and the body. Runs on a
/// thread of its own with its own runtime (the compiler is synchronous
/// and may itself run inside a runtime), bounded by [`NET_LIMIT`].
fn http_get(
    url: &str,
    auth: Option<(&str, &str)>,
) -> Result<(u16, Option<String>, String), LangError> {
    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| plain(format!("bad URI(is not URI?): {url:?} ({e})")))?;
    let mut request = hyper::Request::get(uri.clone());
    if let Some((user, pass)) = auth {
        use base64::Engine;
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
        request = request.header("Authorization", format!("Basic {token}"));
    }
    let request = request
        .body(http_body_util::Empty::<hyper::body::Bytes>::new())
        .map_err(|e| plain(format!("{url}: {e}")))?;
    let tls = tls_config()?;
    let target = url.to_string();
    let exchange = move || -> Result<(u16, Option<String>, String), String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async move {
            let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
            http.set_connect_timeout(Some(NET_LIMIT));
            http.enforce_http(false);
            let connector = hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(tls)
                .https_or_http()
                .enable_http1()
                .wrap_connector(http);
            let client =
                hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                    .build(connector);
            let work = async {
                let response = client.request(request).await.map_err(|e| {
                    let mut msg = e.to_string();
                    let mut src = std::error::Error::source(&e);
                    while let Some(s) = src {
                        msg = format!("{msg}: {s}");
                        src = s.source();
                    }
                    msg
                })?;
                let status = response.status().as_u16();
                let location = response
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                let body = http_body_util::BodyExt::collect(http_body_util::Limited::new(
                    response.into_body(),
                    MAX_BODY,
                ))
                .await
                .map_err(|e| e.to_string())?;
                let body = String::from_utf8_lossy(&body.to_bytes()).into_owned();
                Ok::<_, String>((status, location, body))
            };
            tokio::time::timeout(NET_LIMIT, work)
                .await
                .map_err(|_| format!("no answer within {} seconds", NET_LIMIT.as_secs()))?
        })
    };
    std::thread::spawn(exchange)
        .join()
        .map_err(|_| plain(format!("{target}: the request failed")))?
        .map_err(|e| plain(format!("{target}: {e}")))
}

/// Ruby's `JSON.parse` of an answer, keys in order.
fn parse_json(text: &str) -> Result<Value, LangError> {
    serde_json::from_str::<Ordered>(text)
        .map(|o| o.0)
        .map_err(|e| plain(format!("unexpected token in JSON: {e}")))
}

/// The first match of `re` (Ruby's syntax, `\b` word boundaries) in `s`.
fn first_match(re: &str, s: &str) -> Option<String> {
    regex::Regex::new(re)
        .ok()
        .and_then(|r| r.find(s).map(|m| m.as_str().to_string()))
}

/// archive's `go_md5(username, password, file, url)`: the md5 of `file`
/// in a GoCD checksum listing (`FILE=MD5` lines).
fn go_md5(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.len() != 4 {
        let list: Vec<Value> = c.args.iter().map(arg_3x).collect();
        return Err(plain(format!(
            "Invalid go md5 info url {}",
            inspect(&Value::Array(list))
        ))
        .into());
    }
    let user = to_s(&arg_3x(&c.arg(0)));
    let pass = to_s(&arg_3x(&c.arg(1)));
    let file = to_s(&arg_3x(&c.arg(2)));
    let url = to_s(&arg_3x(&c.arg(3)));
    let response = http_content(&url, Some((&user, &pass)))?;
    let pattern = regex::Regex::new(&format!("{file}="))
        .map_err(|e| plain(format!("go_md5: {file}= is no regular expression: {e}")))?;
    let Some(line) = response.split('\n').find(|l| pattern.is_match(l)) else {
        return Err(no_method("match", &Value::Undef).into());
    };
    match first_match(r"\b[0-9a-f]{5,40}\b", line) {
        Some(md5) => Ok(Value::Str(md5)),
        // Ruby fails on `response.body` while writing its message.
        None => Err(no_method("body", &Value::Str(response)).into()),
    }
}

/// `archive::artifactory_checksum(url[, type])`: the artifact's checksum
/// (sha1 unless told) from Artifactory's storage API.
fn artifactory_checksum(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let url = to_s(&c.arg(0)).replacen("/artifactory/", "/artifactory/api/storage/", 1);
    let kind = match c.arg(1) {
        Value::Undef => "sha1".to_string(),
        v => to_s(&v),
    };
    let response = http_content(&url, None)?;
    let content = parse_json(&response)?;
    let checksum = match ruby_index(&content, "checksums")? {
        Value::Undef | Value::Bool(false) => Value::Undef,
        sums => ruby_index(&sums, &kind)?,
    };
    match &checksum {
        Value::Str(s) if first_match(r"\b[0-9a-f]{5,64}\b", s).is_some() => Ok(checksum),
        // Ruby fails on `response.body` while writing its message.
        _ => Err(no_method("body", &Value::Str(response)).into()),
    }
}

/// `archive::artifactory_latest_url(url, maven_data)`: the download URL
/// and sha1 of the newest snapshot build of an artifact.
fn artifactory_latest_url(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let url = to_s(&c.arg(0)).replacen("/artifactory/", "/artifactory/api/storage/", 1);
    let folder = match url.rfind('/') {
        Some(i) => url[..i].to_string(),
        None => return Err(no_method("start_with?", &Value::Undef).into()),
    };
    let data = c.arg(1);
    let part = |k: &str| ruby_index(&data, k).map(|v| to_s(&v));
    let re_part = |k: &str| part(k).map(|s| s.to_string());
    let classifier = ruby_index(&data, "classifier")?;
    let mut pattern = format!(
        r"^/{}-{}-(SNAPSHOT|(?:(?:[0-9]{{8}}.[0-9]{{6}})-(?:[0-9]+)))",
        re_part("module")?,
        re_part("base_rev")?
    );
    if !matches!(classifier, Value::Undef | Value::Bool(false)) {
        pattern.push_str(&format!("-{}", to_s(&classifier)));
    }
    pattern.push_str(&format!(r"\.{}$", re_part("ext")?));
    let re = regex::Regex::new(&pattern)
        .map_err(|e| plain(format!("archive::artifactory_latest_url: {e}")))?;
    let content = parse_json(&http_content(&folder, None)?)?;
    let children = match ruby_index(&content, "children")? {
        Value::Array(a) => a,
        other => return Err(no_method("select", &other).into()),
    };
    let mut uris = Vec::new();
    for child in &children {
        let uri = to_s(&ruby_index(child, "uri")?);
        let folder = ruby_index(child, "folder")?;
        if re.is_match(&uri) && matches!(folder, Value::Undef | Value::Bool(false)) {
            uris.push(uri);
        }
    }
    uris.sort();
    let Some(latest) = uris.pop() else {
        return Err(plain("Couldn't find any Artifactory artifacts").into());
    };
    let base = to_s(&ruby_index(&content, "uri")?);
    let info = parse_json(&http_content(&format!("{base}{latest}"), None)?)?;
    let sha1 = match ruby_index(&info, "checksums")? {
        Value::Undef | Value::Bool(false) => Value::Undef,
        sums => ruby_index(&sums, "sha1")?,
    };
    Ok(Value::Hash(vec![
        (Value::str("url"), ruby_index(&info, "downloadUri")?),
        (Value::str("sha1"), sha1),
    ]))
}

/// Where a `redis://[:PASSWORD@]HOST[:PORT][/DB]` URL points.
struct RedisUrl {
    host: String,
    port: u16,
    password: Option<String>,
    db: Option<String>,
}

fn redis_url(url: &str) -> Option<RedisUrl> {
    let rest = url.strip_prefix("redis://")?;
    let (auth, rest) = match rest.rsplit_once('@') {
        Some((a, r)) => (Some(a), r),
        None => (None, rest),
    };
    let (hostport, db) = match rest.split_once('/') {
        Some((h, d)) => (h, Some(d).filter(|d| !d.is_empty()).map(str::to_string)),
        None => (rest, None),
    };
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => (h, p.parse().ok()?),
        _ => (hostport, 6379),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let host = if host.is_empty() { "127.0.0.1" } else { host };
    let password = auth
        .map(|a| a.split_once(':').map_or(a, |(_, p)| p))
        .filter(|p| !p.is_empty())
        .map(|p| {
            percent_encoding::percent_decode_str(p)
                .decode_utf8_lossy()
                .into_owned()
        });
    Some(RedisUrl {
        host: host.to_string(),
        port,
        password,
        db,
    })
}

/// One RESP command, its arguments as bulk strings.
fn resp_command(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Read one RESP reply: a bulk string (None for nil), or a status; an
/// error reply is an Err with its text.
fn resp_reply(r: &mut impl std::io::BufRead) -> std::io::Result<Result<Option<String>, String>> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let line = line.trim_end_matches(['\r', '\n']);
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not a Redis reply");
    match line.split_at_checked(1) {
        Some(("+", s)) => Ok(Ok(Some(s.to_string()))),
        Some(("-", e)) => Ok(Err(e.to_string())),
        Some((":", n)) => Ok(Ok(Some(n.to_string()))),
        Some(("$", n)) => {
            let n: i64 = n.parse().map_err(|_| bad())?;
            if n < 0 {
                return Ok(Ok(None));
            }
            let n = usize::try_from(n).map_err(|_| bad())?;
            if n > MAX_BODY {
                return Err(bad());
            }
            let mut buf = vec![0; n + 2];
            r.read_exact(&mut buf)?;
            buf.truncate(n);
            Ok(Ok(Some(String::from_utf8_lossy(&buf).into_owned())))
        }
        _ => Err(bad()),
    }
}

/// Redis's `GET key` at `url`: Ok(value or None); Err(connection failure
/// as redis-rb words it) or a reply error.
fn redis_get(url: &str, key: &str) -> Result<Result<Option<String>, String>, String> {
    let Some(u) = redis_url(url) else {
        return Err(format!("invalid url: {url}"));
    };
    let addr = format!("{}:{}", u.host, u.port);
    let refused = |e: &std::io::Error| {
        let kind = match e.kind() {
            std::io::ErrorKind::ConnectionRefused => "Errno::ECONNREFUSED",
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => "Redis::TimeoutError",
            _ => "SocketError",
        };
        format!("Error connecting to Redis on {addr} ({kind})")
    };
    let sock = std::net::ToSocketAddrs::to_socket_addrs(&(u.host.as_str(), u.port))
        .map_err(|e| refused(&e))?
        .next()
        .ok_or_else(|| format!("Error connecting to Redis on {addr} (SocketError)"))?;
    let stream = std::net::TcpStream::connect_timeout(&sock, NET_LIMIT).map_err(|e| refused(&e))?;
    let setup = stream
        .set_read_timeout(Some(NET_LIMIT))
        .and_then(|()| stream.set_write_timeout(Some(NET_LIMIT)))
        .and_then(|()| stream.try_clone());
    let mut writer = setup.map_err(|e| refused(&e))?;
    let mut reader = std::io::BufReader::new(stream);
    let mut ask = |args: &[&str]| -> Result<Result<Option<String>, String>, String> {
        writer
            .write_all(&resp_command(args))
            .and_then(|()| resp_reply(&mut reader))
            .map_err(|e| refused(&e))
    };
    if let Some(p) = &u.password
        && let Err(e) = ask(&["AUTH", p])?
    {
        return Ok(Err(e));
    }
    if let Some(db) = &u.db
        && let Err(e) = ask(&["SELECT", db])?
    {
        return Ok(Err(e));
    }
    ask(&["GET", key])
}

/// redis's `redisget(key, url[, default])`: the key's value in the Redis
/// at `url`; the default when the key is missing or (with a default)
/// Redis cannot be reached.
fn redisget(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if n != 2 && n != 3 {
        return Err(plain(format!(
            "redisget(): Wrong number of arguments given ({n} for 2 or 3)"
        ))
        .into());
    }
    let wrong = |v: &Value, which: &str| -> EvalResult<Value> {
        Err(plain(format!(
            "redisget(): Wrong argument type given ({} for String) for {which}",
            class_name(v)
        ))
        .into())
    };
    let default = if n == 3 {
        match arg_3x(&c.arg(2)) {
            s @ Value::Str(_) => Some(s),
            other => return wrong(&other, "arg3 (default)"),
        }
    } else {
        None
    };
    let key = match arg_3x(&c.arg(0)) {
        Value::Str(s) => s,
        other => return wrong(&other, "arg1 (key)"),
    };
    let url = match arg_3x(&c.arg(1)) {
        Value::Str(s) => s,
        other => return wrong(&other, "arg2 (url)"),
    };
    match redis_get(&url, &key) {
        Ok(Ok(Some(v))) => Ok(Value::Str(v)),
        Ok(Ok(None)) => Ok(default.unwrap_or(Value::Undef)),
        Ok(Err(reply)) => Err(plain(reply).into()),
        Err(e) => match default {
            Some(d) => Ok(d),
            None => Err(plain(format!("connection to redis server failed - {e}")).into()),
        },
    }
}
