//! Native ports of module functions written in Ruby that reach files on
//! the compiling machine: neutron's `convert_cert_to_string` (a PEM file's
//! base64 lines joined) and openssl's `cert_date_valid` (the seconds a
//! certificate file stays valid, or false). The Ruby original of the
//! latter runs `openssl x509` through a shell with the path on its
//! command line; ferry reads the certificate itself (the first PEM
//! `CERTIFICATE` block, or DER, as `openssl x509` takes either) with the
//! same results. augeas_core's `augeas` (content changed through a
//! lens) drives `/usr/bin/augtool`. Each gives its Ruby original's results and messages.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::stdlib::arg_3x;
use crate::lang::functions::{Builder, Family, any, sig, string};
use crate::lang::template::erb::value::to_s;
use crate::lang::values::types::PType;
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

/// The program augeas_core's `augeas` is run with.
const AUGTOOL: &str = "/usr/bin/augtool";
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
/// root, no lens or file loaded beforehand: whether every command
/// succeeded, and what it printed. Killed after [`AUGTOOL_LIMIT`].
fn run_augtool(root: &std::path::Path, script: &str) -> std::io::Result<(bool, String)> {
    let mut child = Command::new(AUGTOOL)
        .arg("--noautoload")
        .arg("--noload")
        .arg("--root")
        .arg(root)
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdin = child.stdin.take();
    let script = script.to_string();
    let writer = std::thread::spawn(move || {
        if let Some(mut w) = stdin {
            // augtool stops reading when it fails; that is no error here.
            let _ = w.write_all(script.as_bytes());
        }
    });
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(mut r) = stdout {
            let _ = r.read_to_end(&mut out);
        }
        out
    });
    let deadline = Instant::now() + AUGTOOL_LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {} seconds", AUGTOOL_LIMIT.as_secs()),
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    Ok((status.success(), String::from_utf8_lossy(&out).into_owned()))
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
