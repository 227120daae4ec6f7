//! The resource types ferry applies, one file each, as Puppet 7 defines
//! them: what their parameters mean ([`Kind::parse`], which checks values
//! as Puppet's types do), the part of the program that checks and
//! converges one resource ([`Kind::script`]), what a refresh does, and how
//! the facts the program reports become Puppet's event messages
//! ([`Kind::describe`]). A type ferry cannot apply parses to
//! [`Kind::Unsupported`]: that resource fails with a message naming the
//! type, its dependents are skipped, and the rest is applied.

pub mod augeas;
pub mod concat;
pub mod cron;
pub mod edit;
pub mod exec;
pub mod file;
pub mod file_line;
pub mod group;
pub mod host;
pub mod ini_file;
pub mod ini_setting;
pub mod ini_subsetting;
pub mod mode;
pub mod mount;
pub mod notify;
pub mod package;
pub mod parsed;
pub mod ruby_regex;
pub mod service;
pub mod ssh_authorized_key;
pub mod sysctl;
pub mod sysctl_runtime;
pub mod user;

use std::fmt::Write as _;

use serde_json::Value;

use super::catalog::Resource;

/// Whether ferry applies resources of this type.
pub fn applies(r: &Resource) -> bool {
    matches!(
        r.type_key().as_str(),
        "file"
            | "exec"
            | "notify"
            | "user"
            | "group"
            | "package"
            | "service"
            | "concat_file"
            | "concat_fragment"
            | "augeas"
            | "file_line"
            | "ini_setting"
            | "ini_subsetting"
            | "sysctl"
            | "sysctl_runtime"
            | "host"
            | "cron"
            | "ssh_authorized_key"
            | "mount"
    )
}

/// A parameter value Puppet would refuse: the catalog is not applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Parameter {param} failed on {resource}: {message}")]
pub struct ParamError {
    pub resource: String,
    pub param: String,
    pub message: String,
}

/// Where `puppet:///` sources are read from (the environment's modules on
/// the controller, given by the caller: this module does no I/O). Sources
/// that are paths are read on the target, as a Puppet agent reads them.
pub trait Sources {
    /// The bytes of `uri` (`puppet:///modules/M/P`).
    fn read(&self, uri: &str) -> Result<Vec<u8>, SourceError>;
    /// The entries below `uri` when it names a directory, each with
    /// whether it is a directory, relative paths sorted; `None` when it
    /// names a file.
    fn tree(&self, uri: &str) -> Result<Option<Vec<(String, bool)>>, SourceError>;
    /// The environment's name, for messages.
    fn environment(&self) -> &str;
}

/// Why a source could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    #[error("{0} does not exist")]
    NotFound(String),
    #[error(
        "{0}: ferry reads sources from puppet:///modules/ (on the controller), file:/// and absolute paths (on the target) only"
    )]
    Unsupported(String),
    #[error("{uri}: {message}")]
    Io { uri: String, message: String },
}

/// What a resource does when a resource it subscribes to changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refresh {
    /// Nothing (Puppet's types without a refresh method).
    Nothing,
    /// Runs `body` (an exec's command again, a service's restart) when
    /// `guard` holds; when it does not, the events are dropped unlogged.
    Script { guard: Option<String>, body: String },
}

/// The status of an event, as Puppet names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventStatus {
    Success,
    Failure,
    Noop,
}

impl EventStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EventStatus::Success => "success",
            EventStatus::Failure => "failure",
            EventStatus::Noop => "noop",
        }
    }

    pub fn parse(s: &str) -> Option<EventStatus> {
        match s {
            "success" => Some(EventStatus::Success),
            "failure" => Some(EventStatus::Failure),
            "noop" => Some(EventStatus::Noop),
            _ => None,
        }
    }
}

/// An event in Puppet's words: the values and the message.
#[derive(Debug, Clone, PartialEq)]
pub struct EventText {
    pub previous: Value,
    pub desired: Value,
    pub message: String,
    /// The values are secrets: the report shows neither.
    pub redacted: bool,
}

/// A resource of a type ferry applies, with its parameters read.
#[derive(Debug, Clone)]
pub enum Kind {
    File(Box<file::File>),
    Exec(Box<exec::Exec>),
    Notify(notify::Notify),
    User(Box<user::User>),
    Group(group::Group),
    Package(Box<package::Package>),
    Service(Box<service::Service>),
    /// concat_file, concat_fragment and the file a concat_file generates
    /// (made by [`concat::expand`], not by [`Kind::parse`]).
    Concat(concat::Concat),
    Augeas(Box<augeas::Augeas>),
    FileLine(Box<file_line::FileLine>),
    IniSetting(Box<ini_setting::IniSetting>),
    IniSubsetting(Box<ini_subsetting::IniSubsetting>),
    Sysctl(Box<sysctl::Sysctl>),
    SysctlRuntime(Box<sysctl_runtime::SysctlRuntime>),
    Host(Box<host::Host>),
    Cron(Box<cron::Cron>),
    SshAuthorizedKey(Box<ssh_authorized_key::SshAuthorizedKey>),
    Mount(Box<mount::Mount>),
    /// A type ferry cannot apply: the resource fails with this message.
    Unsupported(String),
}

impl Kind {
    /// Reads a resource's parameters; `sources` resolves file sources.
    pub fn parse(r: &Resource, sources: &dyn Sources) -> Result<Kind, ParamError> {
        Ok(match r.type_key().as_str() {
            "file" => Kind::File(Box::new(file::File::parse(r, sources)?)),
            "exec" => Kind::Exec(Box::new(exec::Exec::parse(r)?)),
            "notify" => Kind::Notify(notify::Notify::parse(r)),
            "user" => Kind::User(Box::new(user::User::parse(r)?)),
            "group" => Kind::Group(group::Group::parse(r)?),
            "package" => Kind::Package(Box::new(package::Package::parse(r)?)),
            "service" => Kind::Service(Box::new(service::Service::parse(r)?)),
            "concat_fragment" => Kind::Concat(concat::Concat::parse_fragment(r)?),
            // Read with its fragments by concat::expand; here only when
            // the catalog was not expanded.
            "concat_file" => Kind::Concat(concat::Concat::File { error: None }),
            "augeas" => Kind::Augeas(Box::new(augeas::Augeas::parse(r)?)),
            "file_line" => Kind::FileLine(Box::new(file_line::FileLine::parse(r)?)),
            "ini_setting" => Kind::IniSetting(Box::new(ini_setting::IniSetting::parse(r)?)),
            "ini_subsetting" => {
                Kind::IniSubsetting(Box::new(ini_subsetting::IniSubsetting::parse(r)?))
            }
            "sysctl" => Kind::Sysctl(Box::new(sysctl::Sysctl::parse(r)?)),
            "sysctl_runtime" => {
                Kind::SysctlRuntime(Box::new(sysctl_runtime::SysctlRuntime::parse(r)?))
            }
            "host" => Kind::Host(Box::new(host::Host::parse(r)?)),
            "cron" => Kind::Cron(Box::new(cron::Cron::parse(r)?)),
            "ssh_authorized_key" => {
                Kind::SshAuthorizedKey(Box::new(ssh_authorized_key::SshAuthorizedKey::parse(r)?))
            }
            "mount" => Kind::Mount(Box::new(mount::Mount::parse(r)?)),
            other => Kind::Unsupported(format!(
                "ferry cannot apply resources of type '{other}' yet ({} was not applied)",
                r.reference()
            )),
        })
    }

    /// Appends the script that checks and converges the resource as step
    /// `n`, changing nothing with `noop`.
    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        match self {
            Kind::File(f) => f.script(out, n, noop),
            Kind::Exec(e) => e.script(out, n, noop),
            Kind::Notify(_) => notify::script(out, n, noop),
            Kind::User(u) => u.script(out, n, noop),
            Kind::Group(g) => g.script(out, n, noop),
            Kind::Package(p) => p.script(out, n, noop),
            Kind::Service(sv) => sv.script(out, n, noop),
            Kind::Concat(c) => c.script(out, n, noop),
            Kind::Augeas(a) => a.script(out, n, noop),
            Kind::FileLine(f) => f.script(out, n, noop),
            Kind::IniSetting(i) => i.script(out, n, noop),
            Kind::IniSubsetting(i) => i.script(out, n, noop),
            Kind::Sysctl(s) => s.script(out, n, noop),
            Kind::SysctlRuntime(s) => s.script(out, n, noop),
            Kind::Host(h) => h.script(out, n, noop),
            Kind::Cron(c) => c.script(out, n, noop),
            Kind::SshAuthorizedKey(k) => k.script(out, n, noop),
            Kind::Mount(m) => m.script(out, n, noop),
            Kind::Unsupported(_) => {
                out.push_str(&format!("_fail {n} unsupported\n"));
            }
        }
    }

    /// What the resource does when refreshed.
    pub fn refresh(&self, n: usize) -> Refresh {
        match self {
            Kind::Exec(e) => e.refresh(n),
            Kind::Service(sv) => sv.refresh(n),
            Kind::Mount(m) => m.refresh(n),
            _ => Refresh::Nothing,
        }
    }

    /// Puppet's message and values for an event the program reported:
    /// `property` changed from `previous` (as the target reported it),
    /// with `detail` for a failure.
    pub fn describe(
        &self,
        property: &str,
        status: EventStatus,
        previous: &str,
        detail: &str,
    ) -> EventText {
        match self {
            Kind::File(f) => f.describe(property, status, previous, detail),
            Kind::Exec(e) => e.describe(property, status, previous, detail),
            Kind::Notify(n) => n.describe(status),
            Kind::User(u) => u.describe(property, status, previous, detail),
            Kind::Group(g) => g.describe(property, status, previous, detail),
            Kind::Package(p) => p.describe(status, previous, detail),
            Kind::Service(sv) => sv.describe(property, status, previous, detail),
            Kind::Concat(c) => c.describe(property, status, previous, detail),
            Kind::Augeas(a) => a.describe(status, previous, detail),
            Kind::FileLine(f) => f.describe(property, status, previous, detail),
            Kind::IniSetting(i) => i.describe(property, status, previous, detail),
            Kind::IniSubsetting(i) => i.describe(property, status, previous, detail),
            Kind::Sysctl(s) => s.describe(property, status, previous, detail),
            Kind::SysctlRuntime(s) => s.describe(property, status, previous, detail),
            Kind::Host(h) => h.describe(property, status, previous, detail),
            Kind::Cron(c) => c.describe(property, status, previous, detail),
            Kind::SshAuthorizedKey(k) => k.describe(property, status, previous, detail),
            Kind::Mount(m) => m.describe(property, status, previous, detail),
            Kind::Unsupported(_) => EventText {
                previous: Value::String(previous.into()),
                desired: Value::Null,
                message: detail.into(),
                redacted: false,
            },
        }
    }

    /// The message for a resource failure the program reported with
    /// `_fail` (not an event): Puppet logs these as "Could not evaluate".
    pub fn failure(&self, code: &str) -> String {
        match self {
            Kind::Unsupported(m) => m.clone(),
            Kind::File(f) => f.failure(code),
            Kind::Exec(e) => e.failure(code),
            Kind::Concat(c) => c.failure(code),
            Kind::Augeas(a) => a.failure(code),
            _ => code.to_string(),
        }
    }

    /// The provider Puppet would name in the report.
    pub fn provider(&self) -> Option<&'static str> {
        match self {
            Kind::File(_) => Some("posix"),
            Kind::Exec(e) => Some(e.provider()),
            Kind::User(_) => Some("useradd"),
            Kind::Group(_) => Some("groupadd"),
            Kind::Package(p) => Some(p.provider()),
            Kind::Service(sv) => Some(sv.provider()),
            Kind::Concat(c) => c.provider(),
            Kind::Augeas(_) => Some("augeas"),
            Kind::FileLine(_) | Kind::IniSetting(_) | Kind::IniSubsetting(_) => Some("ruby"),
            Kind::Sysctl(_) => Some("parsed"),
            Kind::SysctlRuntime(_) => Some("sysctl_runtime"),
            Kind::Host(_) => Some("parsed"),
            Kind::Cron(_) => Some("crontab"),
            Kind::SshAuthorizedKey(_) | Kind::Mount(_) => Some("parsed"),
            Kind::Notify(_) | Kind::Unsupported(_) => None,
        }
    }

    /// The event's name, from the property and the wanted value (file's
    /// ensure values declare theirs: `file_created`, `directory_created`,
    /// `link_created`, `file_removed`; other types' ensure gives
    /// `TYPE_created` and `TYPE_removed`).
    pub fn event_name(&self, type_key: &str, property: &str, desired: &Value) -> String {
        match (self, property) {
            (Kind::Exec(_), "returns") => "executed_command".into(),
            (Kind::Package(p), "ensure") => p.event_name().into(),
            (Kind::Mount(m), "ensure") => m.event_name(desired).into(),
            (Kind::Service(sv), _) => sv.event_name(property).into(),
            (Kind::File(_) | Kind::Concat(_), "ensure") => match desired.as_str().unwrap_or("file")
            {
                "absent" => "file_removed".into(),
                "present" | "[redacted]" => "file_created".into(),
                d => format!("{d}_created"),
            },
            (_, "ensure") => match desired.as_str() {
                Some("absent") => format!("{type_key}_removed"),
                _ => format!("{type_key}_created"),
            },
            (_, p) => format!("{p}_changed"),
        }
    }

    /// The text of a refresh that failed with `status`; `detail` is what
    /// the program reported.
    pub fn refresh_failure(&self, status: &str, detail: &str) -> String {
        match self {
            Kind::Exec(e) => e.failure_text(status),
            _ => detail.to_string(),
        }
    }
}

/// Puppet's message for a change that was not made because of noop.
pub fn noop_message(previous: &str, desired: &str) -> String {
    format!(
        "current_value {}, should be {} (noop)",
        display(previous),
        display(desired)
    )
}

/// A string as Puppet's messages show values: single-quoted (`'` as
/// `\'`), or double-quoted with escapes when it holds a control character.
pub fn display(s: &str) -> String {
    if s.chars().any(|c| (c as u32) < 0x20) {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '"' => out.push_str("\\\""),
                '$' => out.push_str("\\$"),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02X}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    } else {
        format!("'{}'", s.replace('\'', "\\'"))
    }
}

/// A parameter as a string (numbers are taken as their text).
pub fn text_param(r: &Resource, name: &str) -> Result<Option<String>, ParamError> {
    match r.param(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            if s.contains('\0') {
                return Err(param_error(r, name, "the value holds a NUL byte"));
            }
            Ok(Some(s.clone()))
        }
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(Value::Bool(b)) => Ok(Some(b.to_string())),
        Some(other) => Err(param_error(
            r,
            name,
            &format!("expected a string, got {other}"),
        )),
    }
}

/// A parameter that may be one string or a list of them.
pub fn list_param(r: &Resource, name: &str) -> Result<Vec<String>, ParamError> {
    match r.param(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) if !s.contains('\0') => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                other => Err(param_error(
                    r,
                    name,
                    &format!("expected strings, got {other}"),
                )),
            })
            .collect(),
        Some(_) => Ok(text_param(r, name)?.into_iter().collect()),
    }
}

/// A Puppet boolean parameter (`true`, `false`, and the strings Puppet's
/// boolean parameters take: yes/no, "true"/"false").
pub fn bool_param(r: &Resource, name: &str, default: bool) -> Result<bool, ParamError> {
    match r.param(name) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) => match s.as_str() {
            "true" | "yes" => Ok(true),
            "false" | "no" => Ok(false),
            _ => Err(param_error(
                r,
                name,
                &format!("Invalid value \"{s}\". Valid values are true, false, yes, no."),
            )),
        },
        Some(other) => Err(param_error(
            r,
            name,
            &format!("Invalid value {other}. Valid values are true, false, yes, no."),
        )),
    }
}

pub fn param_error(r: &Resource, param: &str, message: &str) -> ParamError {
    ParamError {
        resource: r.reference(),
        param: param.into(),
        message: message.into(),
    }
}

/// Shell text for one property that is out of sync when `test` holds:
/// a noop event, or `cmd` (which leaves `_rc` and `_out`) and a success
/// or failure event reporting `prev` as the previous value.
pub fn change(
    out: &mut String,
    n: usize,
    noop: bool,
    prop: &str,
    test: &str,
    prev: &str,
    cmd: &str,
) {
    let _ = writeln!(out, "if {test}; then");
    if noop {
        let _ = writeln!(out, "_ev {n} {prop} noop \"{prev}\"");
    } else {
        let _ = writeln!(
            out,
            "{cmd}; if [ $_rc = 0 ]; then _ev {n} {prop} success \"{prev}\"; else _ev {n} {prop} failure \"{prev}\" \"$_out\"; fi"
        );
    }
    out.push_str("fi\n");
}

/// A value as Puppet's messages show it: strings quoted ([`display`]),
/// numbers and booleans bare, arrays as `['a', 'b']`.
pub fn show(v: &Value) -> String {
    match v {
        Value::String(s) => display(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The event of a property with Puppet's generic messages: `created` and
/// `removed` for ensure, `P changed IS to SHOULD` for the others, and
/// the noop and failure forms.
pub fn generic_event(
    property: &str,
    status: EventStatus,
    previous: Value,
    desired: Value,
    detail: &str,
) -> EventText {
    let (is, should) = (show(&previous), show(&desired));
    let message = match status {
        EventStatus::Noop => format!("current_value {is}, should be {should} (noop)"),
        EventStatus::Failure => format!("change from {is} to {should} failed: {}", detail.trim()),
        EventStatus::Success => match property {
            "ensure" if matches!(previous.as_str(), Some("absent" | "purged")) => "created".into(),
            "ensure" if desired.as_str() == Some("absent") => "removed".into(),
            "ensure" if desired.as_str() == Some("purged") => "purged".into(),
            p => format!("{p} changed {is} to {should}"),
        },
    };
    EventText {
        previous,
        desired,
        message,
        redacted: false,
    }
}

/// The event of a secret property: nothing of either value shows.
pub fn redacted_event(status: EventStatus, detail: &str) -> EventText {
    let message = match status {
        EventStatus::Noop => "current_value [redacted], should be [redacted] (noop)".to_string(),
        EventStatus::Failure => format!(
            "change from [redacted] to [redacted] failed: {}",
            detail.trim()
        ),
        EventStatus::Success => "changed [redacted] to [redacted]".to_string(),
    };
    EventText {
        previous: Value::String("[redacted]".into()),
        desired: Value::String("[redacted]".into()),
        message,
        redacted: true,
    }
}

/// The `path` parameter (the title when it is unset and `title_default`;
/// else it is required), refused unless fully qualified, as Puppet's file
/// types word it.
pub fn path_param(r: &Resource, title_default: bool) -> Result<String, ParamError> {
    let path = match text_param(r, "path")? {
        Some(p) => p,
        None if title_default => r.title.clone(),
        None => return Err(param_error(r, "path", "path is a required attribute")),
    };
    if !path.starts_with('/') {
        return Err(param_error(
            r,
            "path",
            &format!("File paths must be fully qualified, not '{path}'"),
        ));
    }
    Ok(path)
}

/// `ensure` for types whose ensure is present or absent.
pub fn present_absent(r: &Resource, default: &str) -> Result<String, ParamError> {
    match text_param(r, "ensure")?.as_deref() {
        None => Ok(default.into()),
        Some("present") | Some("true") => Ok("present".into()),
        Some("absent") | Some("false") => Ok("absent".into()),
        Some(other) => Err(param_error(
            r,
            "ensure",
            &format!("Invalid value \"{other}\". Valid values are present, absent."),
        )),
    }
}

/// A parameter that must be a whole number, as text.
pub fn id_param(r: &Resource, name: &str) -> Result<Option<String>, ParamError> {
    match text_param(r, name)? {
        Some(v) if v.bytes().all(|b| b.is_ascii_digit()) && !v.is_empty() => Ok(Some(v)),
        Some(v) => Err(param_error(
            r,
            name,
            &format!("Invalid {name} {v:?}: a whole number"),
        )),
        None => Ok(None),
    }
}

/// A name the target's tools take as one argument: no NUL, no newline,
/// not starting with `-`.
pub fn name_param(r: &Resource, name: &str) -> Result<String, ParamError> {
    let v = text_param(r, name)?.unwrap_or_else(|| r.title.clone());
    let allowed = |c: char| c.is_ascii_alphanumeric() || "._@+-".contains(c);
    if v.is_empty() || v.starts_with('-') || !v.chars().all(allowed) {
        return Err(param_error(r, name, &format!("Invalid name {v:?}")));
    }
    Ok(v)
}
