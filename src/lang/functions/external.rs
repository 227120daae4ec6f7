//! Puppet's `generate`: a command run on the compiling machine whose
//! output becomes a value, as Puppet runs it on the server. The checks and
//! messages are Puppet 7's (lib/puppet/parser/functions/generate.rb): the
//! command must be a fully qualified path of alphanumerics, separators,
//! dashes, dots and pluses, without `..`; it runs without a shell in its
//! own directory, in the C locale, and its standard output and error,
//! together, are the result. A non-zero exit is an error with the output.

use std::io::Read;
use std::process::{Command, Stdio};

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Builder, Family, any, sig};
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    b.add(
        &["generate"],
        Family::External,
        sig("String").req("command", any()).rest("args", any()),
        generate,
    );
}

fn generate(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let args: Vec<String> = c.args.iter().map(|a| a.to_s()).collect();
    let cmd = args.first().cloned().unwrap_or_default();
    if !cmd.starts_with('/') {
        return Err(plain("Generators must be fully qualified").into());
    }
    if !cmd
        .chars()
        .all(|ch| ch.is_alphanumeric() || matches!(ch, '-' | '/' | '_' | '.' | '+'))
    {
        return Err(plain(
            "Generators can only contain alphanumerics, file separators, and dashes",
        )
        .into());
    }
    if cmd.contains("..") {
        return Err(plain("Can not use generators with '..' in them.").into());
    }
    let dir = std::path::Path::new(&cmd)
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_else(|| "/".into());
    match run(&cmd, args.get(1..).unwrap_or(&[]), &dir) {
        Ok((0, out)) => Ok(Value::Str(out)),
        Ok((code, out)) => Err(plain(format!(
            "Failed to execute generator {cmd}: Execution of '{}' returned {code}: {}",
            args.join(" "),
            out.trim()
        ))
        .into()),
        Err(e) => Err(plain(format!("Failed to execute generator {cmd}: {e}")).into()),
    }
}

/// Run `cmd args` in `dir`, its stdout and stderr into one pipe; the exit
/// code (or 128 + signal) and the output.
fn run(cmd: &str, args: &[String], dir: &std::path::Path) -> std::io::Result<(i32, String)> {
    let (mut reader, writer) = std::io::pipe()?;
    let mut child = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .env("LANG", "C")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .spawn()?;
    let mut out = Vec::new();
    reader.read_to_end(&mut out)?;
    let status = child.wait()?;
    let code = status.code().unwrap_or_else(|| {
        use std::os::unix::process::ExitStatusExt;
        128 + status.signal().unwrap_or(0)
    });
    Ok((code, String::from_utf8_lossy(&out).into_owned()))
}
