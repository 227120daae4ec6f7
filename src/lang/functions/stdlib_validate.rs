//! The last of stdlib's legacy validators and `glob`, with the checks and
//! messages of their Ruby sources (Debian's stdlib, Puppet 7):
//! `validate_numeric` (the 3.x body behind its 4.x deprecation shim),
//! `glob` (Ruby's `Dir.glob` on the compiling machine, see
//! [`super::ruby_glob`]), `validate_cmd` (the content in a private temp
//! file, the checker run as Puppet's `Execution.execute` runs a string:
//! through `/bin/sh -c` only when it has shell characters, `LANG=C`, no
//! `HOME`/`USER`/`LOGNAME`, output and errors together) and
//! `validate_augeas` (the content in a private temp file, checked by
//! `augtool` fed its commands on standard input, where Puppet loads
//! ruby-augeas). Both checkers run on the compiling machine, as Puppet
//! runs them on the server; one that runs longer than [`CHECK_LIMIT`] is
//! killed with its process group and fails the call, where Puppet would
//! wait forever. The temp files are named as Ruby's `Tempfile` names
//! them (`validate_cmd<date>-<pid>-<random>`), mode 0600, and removed
//! whatever happens.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::ruby_glob;
use crate::lang::functions::stdlib::{Bounded, arg_3x, arity, ruby_class, validate_bounded};
use crate::lang::functions::stdlib_a::ruby_float;
use crate::lang::functions::{Builder, Family, any, sig};
use crate::lang::template::erb::value::{inspect, to_s};
use crate::lang::values::value::Value;

/// Longest a `validate_cmd` checker or `augtool` may run before it is
/// killed and the call fails.
pub const CHECK_LIMIT: Duration = Duration::from_secs(60);

/// Most bytes of a checker's output kept for the message.
const OUTPUT_KEEP: usize = 1 << 20;

/// Where `validate_augeas` expects Augeas's command-line tool.
pub(super) const AUGTOOL: &str = "/usr/bin/augtool";

pub fn register(b: &mut Builder) {
    let f = Family::Stdlib;
    let rest = |ret| sig(ret).rest("args", any());
    b.add(&["validate_numeric"], f, rest("Any"), validate_numeric);
    b.add(&["glob"], f, rest("Array"), glob);
    b.add(&["validate_cmd"], f, rest("Any"), validate_cmd);
    b.add(&["validate_augeas"], f, rest("Any"), validate_augeas);
}

/// stdlib's `validate_numeric(value[, max[, min]])`: every number (or
/// string Ruby's `Float()` reads) within the bounds. Its messages print
/// the value converted to a Float (the whole array for an array) and the
/// bounds as Floats, as the Ruby does.
fn validate_numeric(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    validate_bounded(
        &c,
        &Bounded {
            name: "validate_numeric",
            noun: "a Numeric",
            parse: |v| ruby_float(&to_s(v)),
            show: |f| to_s(&Value::Float(f)),
            value: Value::Float,
        },
    )
}

/// stdlib's `glob(pattern or [patterns])`: Ruby's `Dir.glob` of each
/// pattern in turn, on the compiling machine.
fn glob(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    arity(&c, "glob", 1)?;
    let patterns = match arg_3x(&c.arg(0)) {
        Value::Str(s) => vec![s],
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::Str(s) => Ok(s.clone()),
                other => Err(plain(format!(
                    "no implicit conversion of {} into String",
                    implicit_name(other)
                ))),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(plain("glob(): Requires either array or string to work").into()),
    };
    let mut found = Vec::new();
    for p in &patterns {
        let paths = ruby_glob::glob(p).map_err(|e| plain(format!("glob(): {e}")))?;
        found.extend(paths.into_iter().map(Value::Str));
    }
    Ok(Value::Array(found))
}

/// How Ruby's "no implicit conversion of X" names a value.
fn implicit_name(v: &Value) -> &'static str {
    match v {
        Value::Undef => "nil",
        Value::Bool(true) => "true",
        Value::Bool(false) => "false",
        other => ruby_class(other),
    }
}

/// A private temp file holding `content`, named as Ruby's `Tempfile`
/// names one; removed when dropped.
fn temp_with(prefix: &str, content: &str) -> Result<tempfile::NamedTempFile, std::io::Error> {
    let date = chrono::Local::now().format("%Y%m%d");
    let mut file = tempfile::Builder::new()
        .prefix(&format!("{prefix}{date}-{}-", std::process::id()))
        .rand_bytes(6)
        .tempfile()?;
    file.write_all(content.as_bytes())?;
    file.flush()?;
    Ok(file)
}

/// The caller's message at argument `i` (Ruby's `args[i] || default`: a
/// 3.x function gets undef as `''`, which counts), else `default`.
fn message_arg(c: &Call<'_>, i: usize, default: impl FnOnce() -> String) -> String {
    match c.args.get(i).map(arg_3x) {
        Some(m) if !matches!(m, Value::Bool(false)) => to_s(&m),
        _ => default(),
    }
}

/// stdlib's `validate_cmd(content, checker[, message])`.
fn validate_cmd(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if !(2..=3).contains(&n) {
        return Err(plain(format!(
            "validate_cmd(): wrong number of arguments ({n}; must be 2 or 3)"
        ))
        .into());
    }
    let checker = arg_3x(&c.arg(1));
    let mut msg = message_arg(&c, 2, || {
        format!(
            "validate_cmd(): failed to validate content with command {}",
            inspect(&checker)
        )
    });
    let file = temp_with("validate_cmd", &to_s(&arg_3x(&c.arg(0))))
        .map_err(|e| plain(format!("{msg}\n{} {e}", io_class(&e))))?;
    let path = file.path().to_string_lossy().into_owned();
    let Value::Str(checker) = checker else {
        msg.push_str(&format!(
            "\nTypeError no implicit conversion of {} into String",
            implicit_name(&checker)
        ));
        return Err(plain(msg).into());
    };
    let command = with_path(&checker, &path);
    let ran = run_bounded(&argv(&command), None, true, CHECK_LIMIT);
    drop(file);
    let detail = match ran {
        Ran::Exited(Some(0), _) => return Ok(Value::Undef),
        Ran::Exited(code, output) => format!(
            "Execution of '{command}' returned {}: {}",
            code.map(|c| c.to_string()).unwrap_or_default(),
            output.trim_matches(|ch: char| ch.is_ascii_whitespace() || ch == '\0')
        ),
        Ran::TimedOut => format!(
            "Execution of '{command}' did not finish within {} seconds and was killed",
            CHECK_LIMIT.as_secs()
        ),
    };
    Err(plain(format!("{msg}\n{detail}")).into())
}

/// Ruby's class name of an I/O error, as validate_cmd prints it.
fn io_class(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) => "Errno::ENOENT".into(),
        Some(libc::EACCES) => "Errno::EACCES".into(),
        Some(libc::ENOSPC) => "Errno::ENOSPC".into(),
        _ => "IOError".into(),
    }
}

/// The checker with the file's path for each `%` when one stands alone
/// (after a blank, before a blank or the end), else the path appended.
fn with_path(checker: &str, path: &str) -> String {
    let b = checker.as_bytes();
    let alone = b.iter().enumerate().any(|(i, &ch)| {
        ch == b'%'
            && i > 0
            && b[i - 1].is_ascii_whitespace()
            && b.get(i + 1).is_none_or(|n| n.is_ascii_whitespace())
    });
    if alone {
        checker.replace('%', path)
    } else {
        format!("{checker} {path}")
    }
}

/// The program and arguments Ruby's `exec` makes of a command string:
/// `/bin/sh -c` when it has a shell character or starts with a shell
/// keyword, builtin or variable assignment; else its blank-separated
/// words.
fn argv(command: &str) -> Vec<String> {
    const META: &str = "*?{}[]<>()~&|\\$;'`\"\n#";
    const SHELL_WORDS: &[&str] = &[
        "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in", "then", "until",
        "while", "!", ".", ":", "break", "continue", "eval", "exec", "exit", "export", "readonly",
        "return", "set", "shift", "times", "trap", "unset",
    ];
    let words: Vec<&str> = command.split_ascii_whitespace().collect();
    let first = words.first().copied().unwrap_or("");
    if command.chars().any(|ch| META.contains(ch))
        || SHELL_WORDS.contains(&first)
        || first.contains('=')
    {
        return vec!["/bin/sh".into(), "-c".into(), command.into()];
    }
    words.into_iter().map(String::from).collect()
}

/// How a bounded run ended.
pub(super) enum Ran {
    /// The exit code (none when a signal ended it) and the output kept.
    Exited(Option<i32>, String),
    TimedOut,
}

/// Runs `argv` with `stdin` (or nothing) on its input, in a process
/// group of its own and Puppet's environment (`LANG=C`, no locale or user
/// variables), for at most `limit`: its standard output is collected
/// (with its errors when `combine`, else they are dropped). A program
/// that cannot start gives Puppet's "Could not execute posix command"
/// output and code 1.
pub(super) fn run_bounded(
    argv: &[String],
    stdin: Option<Vec<u8>>,
    combine: bool,
    limit: Duration,
) -> Ran {
    const LOCALE: &[&str] = &[
        "LANG",
        "LC_ALL",
        "LC_MESSAGES",
        "LANGUAGE",
        "LC_COLLATE",
        "LC_CTYPE",
        "LC_MONETARY",
        "LC_NUMERIC",
        "LC_TIME",
        "HOME",
        "USER",
        "LOGNAME",
    ];
    let Some((program, args)) = argv.split_first() else {
        return Ran::Exited(Some(1), String::new());
    };
    let not_started = |e: std::io::Error| {
        let text = e.to_string();
        let text = text.split(" (os error").next().unwrap_or(&text).to_string();
        Ran::Exited(
            Some(1),
            format!("Error: Could not execute posix command: {text} - {program}"),
        )
    };
    let (mut reader, writer) = match std::io::pipe() {
        Ok(p) => p,
        Err(e) => return not_started(e),
    };
    let spawned = {
        let mut cmd = Command::new(program);
        cmd.args(args).process_group(0);
        for var in LOCALE {
            cmd.env_remove(var);
        }
        cmd.env("LANG", "C").env("LC_ALL", "C");
        cmd.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let err = if combine {
            match writer.try_clone() {
                Ok(w) => Stdio::from(w),
                Err(e) => return not_started(e),
            }
        } else {
            Stdio::null()
        };
        cmd.stdout(writer).stderr(err).spawn()
        // `cmd`, holding our copies of the pipe's write end, drops here.
    };
    let mut child = match spawned {
        Ok(ch) => ch,
        Err(e) => return not_started(e),
    };
    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), stdin) {
        // A program that exits without reading gets EPIPE: ignored.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let kept = Arc::new(Mutex::new(Vec::new()));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    {
        let kept = Arc::clone(&kept);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            while let Ok(got) = reader.read(&mut chunk) {
                if got == 0 {
                    break;
                }
                if let Ok(mut k) = kept.lock()
                    && k.len() < OUTPUT_KEEP
                {
                    let room = OUTPUT_KEEP - k.len();
                    k.extend_from_slice(&chunk[..got.min(room)]);
                }
            }
            let _ = done_tx.send(());
        });
    }
    let started = Instant::now();
    let kill_group = |pid: u32| {
        if let Ok(pid) = libc::pid_t::try_from(pid) {
            // SAFETY: killpg only sends a signal to the group the child leads.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= limit => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    let Some(status) = status else {
        kill_group(child.id());
        let _ = child.kill();
        let _ = child.wait();
        return Ran::TimedOut;
    };
    // A background process may still hold the output open: wait for it
    // no longer than the limit, as Puppet reads only what is there.
    let left = limit.saturating_sub(started.elapsed());
    let _ = done_rx.recv_timeout(left.max(Duration::from_millis(50)));
    let output = kept
        .lock()
        .map(|k| String::from_utf8_lossy(&k).into_owned())
        .unwrap_or_default();
    Ran::Exited(status.code(), output)
}

/// Puppet's "requires the augeas feature" check, for `augtool` at
/// `program`: an error naming the function and the missing program.
fn require_augtool(program: &Path) -> Result<(), crate::lang::error::LangError> {
    if program.is_file() {
        return Ok(());
    }
    Err(plain(format!(
        "validate_augeas(): this function needs {} (Debian package augeas-tools), which is not installed",
        program.display()
    )))
}

/// stdlib's `validate_augeas(content, lens[, [paths][, message]])`.
fn validate_augeas(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    require_augtool(Path::new(AUGTOOL))?;
    let n = c.args.len();
    if !(2..=4).contains(&n) {
        return Err(plain(format!(
            "validate_augeas(): wrong number of arguments ({n}; must be 2, 3, or 4)"
        ))
        .into());
    }
    let lens = arg_3x(&c.arg(1));
    let mut msg = message_arg(&c, 3, || {
        format!(
            "validate_augeas(): Failed to validate content against {}",
            inspect(&lens)
        )
    });
    // Ruby calls `each` on the paths after the parse: not an array is an
    // error only then.
    let tests: Result<Vec<String>, String> = match c.args.get(2).map(arg_3x) {
        None | Some(Value::Bool(false)) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.iter().map(to_s).collect()),
        Some(other) => Err(format!(
            "undefined method `each' for {}:{}",
            inspect(&other),
            ruby_class(&other)
        )),
    };
    let file = temp_with("validate_augeas", &to_s(&arg_3x(&c.arg(0)))).map_err(|e| {
        plain(format!(
            "validate_augeas(): could not write a temp file: {e}"
        ))
    })?;
    let path = file.path().to_string_lossy().into_owned();
    if !path
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || "/_.-".contains(ch))
    {
        return Err(plain(format!(
            "validate_augeas(): the temp directory's path {path:?} is not one Augeas can name"
        ))
        .into());
    }
    let quote = |s: &str| {
        let mut q = String::from("\"");
        for ch in s.chars() {
            match ch {
                '"' => q.push_str("\\\""),
                '\\' => q.push_str("\\\\"),
                '\n' => q.push_str("\\n"),
                '\r' => q.push_str("\\r"),
                '\t' => q.push_str("\\t"),
                ch => q.push(ch),
            }
        }
        q.push('"');
        q
    };
    let mut script = format!(
        "set /augeas/load/Validate_augeas/lens {}\n\
         set /augeas/load/Validate_augeas/incl {path}\n\
         load\n\
         match /augeas/files{path}//error\n\
         get /augeas/files{path}//error/message\n\
         defvar file /files{path}\n",
        quote(&to_s(&lens))
    );
    for t in tests.iter().flatten() {
        script.push_str(&format!("match {}\n", quote(t)));
    }
    let argv: Vec<String> = [AUGTOOL, "--noautoload", "--echo"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let ran = run_bounded(&argv, Some(script.into_bytes()), false, CHECK_LIMIT);
    drop(file);
    let output = match ran {
        Ran::Exited(_, out) => out,
        Ran::TimedOut => {
            return Err(plain(format!(
                "validate_augeas(): {AUGTOOL} did not finish within {} seconds and was killed",
                CHECK_LIMIT.as_secs()
            ))
            .into());
        }
    };
    // Each command's output follows its echo; a command that failed
    // printed nothing (its error went to standard error).
    let mut sections: Vec<Vec<&str>> = Vec::new();
    for line in output.lines() {
        if line.starts_with("augtool> ") {
            sections.push(Vec::new());
        } else if let Some(s) = sections.last_mut() {
            s.push(line);
        }
    }
    let matched = |k: usize| -> Option<bool> {
        let s = sections.get(k)?;
        let first = s.first()?;
        Some(first.trim() != "(no matches)")
    };
    let Some(parse_failed) = matched(3) else {
        return Err(plain(format!(
            "validate_augeas(): {AUGTOOL} did not run the checks: {}",
            output.lines().last().unwrap_or("no output")
        ))
        .into());
    };
    if parse_failed {
        let prefix = format!("/augeas/files{path}//error/message = ");
        let error = sections
            .get(4)
            .and_then(|s| s.first())
            .and_then(|l| l.strip_prefix(&prefix))
            .unwrap_or("");
        msg.push_str(&format!(" with error: {error}"));
        return Err(plain(msg).into());
    }
    let tests = tests.map_err(plain)?;
    // The restrictions' outputs follow the six fixed commands.
    for (k, t) in (6..).zip(tests.iter()) {
        msg.push_str(&format!(" testing path {t}"));
        match matched(k) {
            Some(false) => {}
            Some(true) => return Err(plain(msg).into()),
            None => {
                return Err(plain(format!(
                    "unknown error - Matching path expression '{t}' failed"
                ))
                .into());
            }
        }
    }
    Ok(Value::Undef)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_replaces_a_lone_percent_or_is_appended() {
        assert_eq!(with_path("visudo -c -f", "/t"), "visudo -c -f /t");
        assert_eq!(with_path("haproxy -f % -c", "/t"), "haproxy -f /t -c");
        assert_eq!(with_path("check %", "/t"), "check /t");
        assert_eq!(with_path("printf %s", "/t"), "printf %s /t");
        assert_eq!(with_path("a %s %", "/t"), "a /ts /t");
    }

    #[test]
    fn temp_files_are_private_named_as_ruby_names_them_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let file = temp_with("validate_cmd", "secret").expect("temp file");
        let path = file.path().to_path_buf();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let re = regex::Regex::new(r"^validate_cmd\d{8}-\d+-[0-9A-Za-z]{6}$").expect("re");
        assert!(re.is_match(name), "{name}");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "secret");
        drop(file);
        assert!(!path.exists());
    }

    #[test]
    fn a_missing_augtool_is_named() {
        assert!(require_augtool(Path::new(AUGTOOL)).is_ok());
        let e = require_augtool(Path::new("/nonexistent/augtool")).expect_err("missing");
        assert_eq!(
            e.to_string(),
            "Evaluation Error: validate_augeas(): this function needs /nonexistent/augtool (Debian package augeas-tools), which is not installed"
        );
    }

    #[test]
    fn a_shell_only_for_shell_characters() {
        assert_eq!(argv("grep -q  x /t"), ["grep", "-q", "x", "/t"]);
        assert_eq!(argv("cat /t | wc"), ["/bin/sh", "-c", "cat /t | wc"]);
        assert_eq!(argv("A=1 env"), ["/bin/sh", "-c", "A=1 env"]);
        assert_eq!(argv("exit 3"), ["/bin/sh", "-c", "exit 3"]);
    }

    #[test]
    fn a_hung_checker_is_killed_with_its_children() {
        let argv: Vec<String> = ["/bin/sh", "-c", "sleep 30 & sleep 30"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let ran = run_bounded(&argv, None, true, Duration::from_millis(300));
        assert!(matches!(ran, Ran::TimedOut));
    }

    #[test]
    fn output_and_errors_together_and_a_missing_program() {
        let argv: Vec<String> = [
            "/bin/sh",
            "-c",
            "echo out; echo err >&2; echo $LANG; exit 4",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let Ran::Exited(code, out) = run_bounded(&argv, None, true, CHECK_LIMIT) else {
            panic!("timed out");
        };
        assert_eq!((code, out.as_str()), (Some(4), "out\nerr\nC\n"));
        let Ran::Exited(code, out) =
            run_bounded(&["/nonexistent/x".to_string()], None, true, CHECK_LIMIT)
        else {
            panic!("timed out");
        };
        assert_eq!(code, Some(1));
        assert_eq!(
            out,
            "Error: Could not execute posix command: No such file or directory - /nonexistent/x"
        );
    }
}
