//! Puppet's `exec` type, posix and shell providers: the checks
//! (`refreshonly`, `creates`, `unless`, `onlyif`, in Puppet's order, the
//! first that says no stops the run), then the command in a subshell with
//! its `cwd`, `path`, `environment`, `umask` and `user`, its output
//! captured (never mixed with the program's own lines) and logged as
//! `logoutput` says, its exit status checked against `returns`, and
//! `timeout` (through coreutils' `timeout` where the target has it).
//! A refresh runs `refresh`, or the command again, if the checks pass.

use std::fmt::Write as _;

use serde_json::Value;

use super::{EventStatus, EventText, ParamError, Refresh, list_param, param_error, text_param};
use crate::apply::catalog::Resource;
use crate::apply::program::q;

/// When a command's output is logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogOutput {
    Always,
    OnFailure,
    Never,
}

#[derive(Debug, Clone)]
pub struct Exec {
    pub command: String,
    pub sensitive: bool,
    pub creates: Vec<String>,
    pub onlyif: Vec<String>,
    pub unless: Vec<String>,
    pub refreshonly: bool,
    pub refresh: Option<String>,
    pub path: Vec<String>,
    pub environment: Vec<(String, String)>,
    pub cwd: Option<String>,
    pub user: Option<String>,
    pub group: Option<String>,
    pub returns: Vec<i64>,
    /// Seconds; 0 for none.
    pub timeout: u64,
    pub logoutput: LogOutput,
    pub umask: Option<String>,
    pub shell: bool,
    pub tries: u32,
    pub try_sleep: u64,
}

impl Exec {
    pub fn parse(r: &Resource) -> Result<Exec, ParamError> {
        let command = text_param(r, "command")?.unwrap_or_else(|| r.title.clone());
        let provider = text_param(r, "provider")?;
        let shell = provider.as_deref() == Some("shell");
        let path: Vec<String> = list_param(r, "path")?
            .iter()
            .flat_map(|p| p.split(':').map(String::from).collect::<Vec<_>>())
            .filter(|p| !p.is_empty())
            .collect();
        if !shell && path.is_empty() && !command.starts_with('/') {
            return Err(param_error(
                r,
                "command",
                &format!(
                    "'{command}' is not qualified and no path was specified. Please qualify the command or specify a path."
                ),
            ));
        }
        let mut environment = Vec::new();
        for e in list_param(r, "environment")? {
            match e.split_once('=') {
                Some((k, v))
                    if !k.is_empty()
                        && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
                {
                    environment.push((k.to_string(), v.to_string()))
                }
                _ => {
                    return Err(param_error(
                        r,
                        "environment",
                        &format!("Invalid environment setting '{e}'"),
                    ));
                }
            }
        }
        let returns = match r.param("returns") {
            None | Some(Value::Null) => vec![0],
            Some(_) => list_param(r, "returns")?
                .iter()
                .map(|s| {
                    s.parse::<i64>()
                        .map_err(|_| param_error(r, "returns", &format!("Invalid value '{s}'")))
                })
                .collect::<Result<_, _>>()?,
        };
        let number = |name: &str, default: u64| -> Result<u64, ParamError> {
            match text_param(r, name)? {
                None => Ok(default),
                Some(s) => s
                    .parse::<f64>()
                    .ok()
                    .filter(|f| *f >= 0.0)
                    .map(|f| f.ceil() as u64)
                    .ok_or_else(|| param_error(r, name, &format!("The {name} must be a number."))),
            }
        };
        let logoutput = match r.param("logoutput") {
            None | Some(Value::Null) => LogOutput::OnFailure,
            Some(Value::Bool(true)) => LogOutput::Always,
            Some(Value::Bool(false)) => LogOutput::Never,
            Some(Value::String(s)) => match s.as_str() {
                "true" => LogOutput::Always,
                "false" => LogOutput::Never,
                "on_failure" => LogOutput::OnFailure,
                other => {
                    return Err(param_error(
                        r,
                        "logoutput",
                        &format!(
                            "Invalid value \"{other}\". Valid values are true, false, on_failure."
                        ),
                    ));
                }
            },
            Some(other) => {
                return Err(param_error(
                    r,
                    "logoutput",
                    &format!("Invalid value {other}"),
                ));
            }
        };
        let refreshonly = match text_param(r, "refreshonly")?.as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                return Err(param_error(
                    r,
                    "refreshonly",
                    &format!("Invalid value \"{other}\". Valid values are true, false."),
                ));
            }
        };
        let umask = text_param(r, "umask")?;
        if let Some(u) = &umask
            && !(u.len() <= 4 && !u.is_empty() && u.bytes().all(|b| (b'0'..=b'7').contains(&b)))
        {
            return Err(param_error(
                r,
                "umask",
                &format!("The umask specification is invalid: {u:?}"),
            ));
        }
        let cwd = text_param(r, "cwd")?;
        if let Some(c) = &cwd
            && !c.starts_with('/')
        {
            return Err(param_error(
                r,
                "cwd",
                &format!("cwd must be a fully qualified path, not '{c}'"),
            ));
        }
        Ok(Exec {
            sensitive: r.is_sensitive("command"),
            command,
            creates: list_param(r, "creates")?,
            onlyif: list_param(r, "onlyif")?,
            unless: list_param(r, "unless")?,
            refreshonly,
            refresh: text_param(r, "refresh")?,
            path,
            environment,
            cwd,
            user: text_param(r, "user")?,
            group: text_param(r, "group")?,
            returns,
            timeout: number("timeout", 300)?,
            logoutput,
            umask,
            shell,
            tries: number("tries", 1)?.max(1) as u32,
            try_sleep: number("try_sleep", 0)?,
        })
    }

    pub fn provider(&self) -> &'static str {
        if self.shell { "shell" } else { "posix" }
    }

    /// Shell text that runs `cmd` as this exec runs commands, leaving its
    /// output in `_out` and its status in `_rc`.
    fn run(&self, cmd: &str) -> String {
        let mut setup = String::new();
        if let Some(c) = &self.cwd {
            let _ = write!(setup, "cd {} || exit 1; ", q(c));
        }
        if !self.path.is_empty() {
            let _ = write!(setup, "PATH={}; export PATH; ", q(&self.path.join(":")));
        }
        for (k, v) in &self.environment {
            let _ = write!(setup, "{k}={}; export {k}; ", q(v));
        }
        if let Some(u) = &self.umask {
            let _ = write!(setup, "umask {u}; ");
        }
        let body = if self.timeout > 0 {
            format!(
                "if command -v timeout >/dev/null 2>&1; then exec timeout {} /bin/sh -c {}; else eval {}; fi",
                self.timeout,
                q(cmd),
                q(cmd)
            )
        } else {
            format!("eval {}", q(cmd))
        };
        let inner = format!("{setup}{body}");
        match (&self.user, &self.group) {
            (None, None) => format!("_out=$( ( {inner} ) </dev/null 2>&1 ); _rc=$?\n"),
            (user, group) => {
                // The program runs as root here: su gives the command the
                // user's identity (and group, with -g) without a login.
                let mut words = String::from("su");
                if let Some(g) = group {
                    let _ = write!(words, " -g {}", q(g));
                }
                let _ = write!(
                    words,
                    " -s /bin/sh {} -c {}",
                    q(user.as_deref().unwrap_or("root")),
                    q(&inner)
                );
                format!("_out=$( {words} </dev/null 2>&1 ); _rc=$?\n")
            }
        }
    }

    /// The checks, leaving `_run=1` when the command should run.
    fn checks(&self) -> String {
        let mut s = String::from("_run=1\n");
        // Every path `creates` names must exist for the command not to run.
        if !self.creates.is_empty() {
            let tests: Vec<String> = self
                .creates
                .iter()
                .map(|c| format!("[ -e {} ]", q(c)))
                .collect();
            let _ = writeln!(s, "{} && _run=0", tests.join(" && "));
        }
        for u in &self.unless {
            let _ = writeln!(
                s,
                "if [ $_run = 1 ]; then {}[ $_rc = 0 ] && _run=0; fi",
                self.run(u)
            );
        }
        for o in &self.onlyif {
            let _ = writeln!(
                s,
                "if [ $_run = 1 ]; then {}[ $_rc = 0 ] || _run=0; fi",
                self.run(o)
            );
        }
        s
    }

    /// Runs `cmd` with tries, reporting the `returns` event.
    fn execute(&self, out: &mut String, n: usize, cmd: &str, event: bool) {
        let ok: Vec<String> = self
            .returns
            .iter()
            .map(|r| format!("[ $_rc = {r} ]"))
            .collect();
        // coreutils' timeout exits 124 when it ended the command.
        let timed_out = if self.timeout > 0 {
            "[ $_rc = 124 ] && command -v timeout >/dev/null 2>&1 && _rc=timeout\n"
        } else {
            ""
        };
        let _ = write!(
            out,
            "_try=0\nwhile :; do\n{}{timed_out}_try=$((_try + 1))\n",
            self.run(cmd)
        );
        let _ = writeln!(
            out,
            "if {} || [ $_try -ge {} ]; then break; fi\nsleep {}\ndone",
            ok.join(" || "),
            self.tries,
            self.try_sleep
        );
        let log_ok = self.logoutput == LogOutput::Always;
        let log_fail = self.logoutput != LogOutput::Never;
        let _ = writeln!(
            out,
            "if {}; then {}{}\nelse {}{}; fi",
            ok.join(" || "),
            if log_ok {
                format!("[ -n \"$_out\" ] && _out {n} \"$_out\"; ")
            } else {
                String::new()
            },
            if event {
                format!("_ev {n} returns success notrun")
            } else {
                ":".into()
            },
            if log_fail {
                format!("[ -n \"$_out\" ] && _out {n} \"$_out\"; ")
            } else {
                String::new()
            },
            if event {
                format!("_ev {n} returns failure notrun \"$_rc\"")
            } else {
                format!("_e {n} refresh-failed \"$_rc\" \"$_out\"; _F=\"$_F {n}\"")
            },
        );
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        if self.refreshonly {
            return;
        }
        out.push_str(&self.checks());
        out.push_str("if [ $_run = 1 ]; then\n");
        if noop {
            let _ = writeln!(out, "_ev {n} returns noop notrun");
        } else {
            self.execute(out, n, &self.command.clone(), true);
        }
        out.push_str("fi\n");
    }

    pub fn refresh(&self, n: usize) -> Refresh {
        let mut s = self.checks();
        s.push_str("if [ $_run = 1 ]; then\n");
        let cmd = self.refresh.clone().unwrap_or_else(|| self.command.clone());
        // The refresh reports no event of its own: Puppet logs it.
        self.execute(&mut s, n, &cmd, false);
        s.push_str("fi\n");
        Refresh::Script {
            guard: None,
            body: s,
        }
    }

    pub fn describe(
        &self,
        property: &str,
        status: EventStatus,
        previous: &str,
        detail: &str,
    ) -> EventText {
        let desired: Vec<Value> = self
            .returns
            .iter()
            .map(|r| Value::String(r.to_string()))
            .collect();
        // Ruby's inspect of the list of strings: ['0', '2'].
        let shown = format!(
            "[{}]",
            self.returns
                .iter()
                .map(|r| format!("'{r}'"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let message = match (property, status) {
            (_, EventStatus::Success) => "executed successfully".to_string(),
            (_, EventStatus::Noop) => {
                format!("current_value '{previous}', should be {shown} (noop)")
            }
            (_, EventStatus::Failure) => format!(
                "change from '{previous}' to {shown} failed: {}",
                self.failure_text(detail)
            ),
        };
        EventText {
            previous: Value::String(previous.into()),
            desired: Value::Array(desired),
            message,
            redacted: false,
        }
    }

    pub fn failure(&self, code: &str) -> String {
        code.to_string()
    }

    /// Puppet's words for an exit status `returns` does not allow.
    pub fn failure_text(&self, status: &str) -> String {
        if status == "timeout" {
            return "Command exceeded timeout".into();
        }
        let cmd = if self.sensitive {
            "[command redacted]".to_string()
        } else {
            format!("'{}'", self.command)
        };
        let allowed: Vec<String> = self.returns.iter().map(|r| r.to_string()).collect();
        format!(
            "{cmd} returned {status} instead of one of [{}]",
            allowed.join(",")
        )
    }
}
