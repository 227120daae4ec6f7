//! Puppet's `cron` type (the cron_core module) with its `crontab`
//! provider: entries in a user's crontab, read with `crontab -l -u USER`
//! and written whole with `crontab -u USER -` on the target. A managed
//! entry is a `# Puppet Name: TITLE` line, its `environment` lines, then
//! `MINUTE HOUR MONTHDAY MONTH WEEKDAY COMMAND` (or `@SPECIAL COMMAND`).
//! The step parses the crontab with awk as the provider does (named
//! entries, environment lines collected after a name, unmanaged entries,
//! one of which an unnamed resource adopts when its command and times
//! match), compares `ensure`, `command`, `special`, the five time fields
//! and `environment`, and when something is out of sync writes the
//! crontab back: Puppet's four `# HEADER` lines, every entry re-rendered,
//! other lines kept, a new entry appended ([`super::parsed`]).

use std::fmt::Write as _;

use serde_json::Value;

use super::parsed;
use super::{
    EventStatus, EventText, ParamError, list_param, param_error, present_absent, show, text_param,
};
use crate::apply::catalog::Resource;
use crate::apply::program::q;

/// The time fields in crontab order, with their bounds and names.
const FIELDS: [(&str, u32, u32, &[&str]); 5] = [
    ("minute", 0, 59, &[]),
    ("hour", 0, 23, &[]),
    ("monthday", 1, 31, &[]),
    (
        "month",
        1,
        12,
        &[
            "___placeholder",
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
    ),
    (
        "weekday",
        0,
        7,
        &[
            "sunday",
            "monday",
            "tuesday",
            "wednesday",
            "thursday",
            "friday",
            "saturday",
        ],
    ),
];

/// The properties in the type's order (the order of their events).
const PROPS: [&str; 8] = [
    "command",
    "special",
    "minute",
    "hour",
    "weekday",
    "month",
    "monthday",
    "environment",
];

/// The special schedules.
const SPECIALS: [&str; 8] = [
    "reboot", "yearly", "annually", "monthly", "weekly", "daily", "midnight", "hourly",
];

#[derive(Debug, Clone)]
pub struct Cron {
    pub name: String,
    pub present: bool,
    pub command: Option<String>,
    /// `Some("")`: `special => absent`.
    pub special: Option<String>,
    /// The five time fields in crontab order, as crontab text (`0,30`,
    /// `*` for absent); `None` when not managed.
    pub times: [Option<String>; 5],
    /// `Some(empty)`: `environment => absent`.
    pub environment: Option<Vec<String>>,
    /// The crontab's user (`target`, else `user`); `None`: the user the
    /// program runs as.
    pub user: Option<String>,
}

/// Parses crontab lines (the provider's record types) and renders
/// entries.
const AWK_CRON: &str = r##"
function crec(l,   r, n) {
  r = l; sub(/^[[:space:]]+/, "", r)
  C_s = ""; C_t[1] = C_t[2] = C_t[3] = C_t[4] = C_t[5] = "*"
  if (match(r, /^@[A-Za-z0-9_]+[[:space:]]+[^[:space:]]/)) {
    match(r, /^@[A-Za-z0-9_]+/); C_s = substr(r, 2, RLENGTH - 1); r = substr(r, RLENGTH + 1)
    sub(/^[[:space:]]+/, "", r); C_c = r; return 1
  }
  for (n = 1; n <= 5; n++) {
    if (!match(r, /^[^[:space:]]+/)) return 0
    C_t[n] = substr(r, 1, RLENGTH); r = substr(r, RLENGTH + 1)
    if (!match(r, /^[[:space:]]+/)) return 0
    r = substr(r, RLENGTH + 1)
  }
  if (r == "") return 0
  C_c = r; return 1
}
function fields() {
  if (C_s != "") return "@" C_s " " C_c
  return C_t[1] " " C_t[2] " " C_t[3] " " C_t[4] " " C_t[5] " " C_c
}
function kind(l) {
  if (l ~ /^[[:space:]]*#/) return "comment"
  if (l ~ /^[[:space:]]*$/) return "blank"
  if (l ~ /^[[:space:]]*[A-Za-z0-9_]+[[:space:]]*=/) return "env"
  if (crec(l)) return "entry"
  return "bad"
}
function pname(l,   i) { i = index(l, "Puppet Name: "); return i ? substr(l, i + 13) : "" }
"##;

/// Prints the shell assignments of the entry for the resource `_N`: the
/// last entry named `_N`, else the first unnamed one whose command is
/// `_WC` and whose managed times (`_W1`..`_W5`, `_WS` when `_WSS`) match.
const AWK_LOOKUP: &str = r##"
function joined(sep,   i, s) { s = ""; for (i = 1; i <= ne; i++) s = s (i > 1 ? sep : "") env[i]; return s }
function sorted(   i, j, t, a) {
  for (i = 1; i <= ne; i++) a[i] = env[i]
  for (i = 2; i <= ne; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
  t = ""; for (i = 1; i <= ne; i++) t = t (i > 1 ? "\n" : "") a[i]; return t
}
function take(unnamed,   i) {
  got = "_cf=1 _ck=" k " _cu=" (unnamed ? 1 : "") " _cc=" sq(C_c) " _cs=" sq(C_s)
  for (i = 1; i <= 5; i++) got = got " _c" i "=" sq(C_t[i])
  got = got " _cenv=" sq(e) " _cenvs=" sq(es) " _cenvp=" sq(ep)
}
function matches(   i) {
  if (ENVIRON["_WC"] == "" || C_c != ENVIRON["_WC"]) return 0
  for (i = 1; i <= 5; i++) if (ENVIRON["_W" i] != "" && ENVIRON["_W" i] != C_t[i]) return 0
  if (ENVIRON["_WSS"] != "" && ENVIRON["_WS"] != C_s) return 0
  return 1
}
function line(l,   t, nm) {
  t = kind(l)
  if (t == "comment") { nm = pname(l); if (nm != "") { name = nm; coll = 1; ne = 0 }; return }
  if (t == "blank") return
  if (t == "env") { if (coll) env[++ne] = l; return }
  if (t == "bad") { if (bad == "") bad = l; return }
  k++; e = es = ep = ""
  if (ne) { e = joined("\n"); es = sorted(); ep = joined("\037"); coll = 0; ne = 0 }
  nm = name; name = ""
  if (nm != "") { if (nm == ENVIRON["_N"]) { take(0); named = 1 } }
  else if (!named && !adopted && matches()) { take(1); adopted = 1 }
}
function finish() {
  if (bad != "") { print "_cbad=" sq(bad); exit }
  if (got != "") print got
}
"##;

/// Prints the new crontab: the header (time `_TIME`), every entry
/// re-rendered, the `_K`th entry replaced by `_L` or dropped when `_D` is
/// set (`_L` appended when `_K` is empty), a `TZ=` line moved to the top.
const AWK_REWRITE: &str = r##"
function emit(s,   n, a, i) { if (s == "") { o[++no] = ""; return }; n = split(s, a, "\n"); for (i = 1; i <= n; i++) o[++no] = a[i] }
function line(l,   t, nm, r, i) {
  t = kind(l)
  if (t == "comment") { nm = pname(l); if (nm != "") { name = nm; coll = 1; ne = 0; return }; emit(l); return }
  if (t == "env" && coll) { env[++ne] = l; return }
  if (t != "entry") { emit(l); return }
  k++; r = ""
  if (name != "") r = "# Puppet Name: " name "\n"
  for (i = 1; i <= ne; i++) r = r env[i] "\n"
  if (ne) { coll = 0; ne = 0 }
  name = ""
  if (k == ENVIRON["_K"]) { if (ENVIRON["_D"] == "") emit(ENVIRON["_L"]); return }
  emit(r fields())
}
function finish(   h, n, i, tz) {
  if (ENVIRON["_K"] == "" && ENVIRON["_D"] == "") emit(ENVIRON["_L"])
  if (!no) o[++no] = ""
  h[1] = "# HEADER: This file was autogenerated at " ENVIRON["_TIME"] " by puppet."
  h[2] = "# HEADER: While it can still be managed manually, it is definitely not recommended."
  h[3] = "# HEADER: Note particularly that the comments starting with 'Puppet Name' should"
  h[4] = "# HEADER: not be deleted, as doing so could cause duplicate cron jobs."
  for (i = 1; i <= no; i++) if (o[i] ~ /^TZ=./) { tz = i; break }
  if (tz) print o[tz]
  for (i = 1; i <= 4; i++) print h[i]
  for (i = 1; i <= no; i++) if (i != tz) print o[i]
}
"##;

/// A time field's value as Puppet's cron type munges it: `*`/`absent`
/// is absent (`None`), ranges and steps stay, numbers must be within the
/// bounds, names become their number.
fn munge(
    r: &Resource,
    field: &str,
    lower: u32,
    upper: u32,
    names: &[&str],
    v: &str,
) -> Result<Option<String>, ParamError> {
    if v == "absent" || v == "*" {
        return Ok(None);
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let range = |s: &str| {
        s.split_once('-')
            .is_some_and(|(a, b)| digits(a) && digits(b))
    };
    if v.strip_prefix("*/").is_some_and(digits)
        || range(v)
        || v.split_once('/')
            .is_some_and(|(a, b)| range(a) && digits(b))
    {
        return Ok(Some(v.to_string()));
    }
    if digits(v) {
        if v.parse::<u32>().is_ok_and(|n| n >= lower && n <= upper) {
            return Ok(Some(v.to_string()));
        }
    } else if !names.is_empty() {
        let low = v.to_lowercase();
        let found = if low.chars().count() == 3 {
            names.iter().position(|n| n.get(..3) == Some(low.as_str()))
        } else {
            names.iter().position(|n| *n == low)
        };
        if let Some(i) = found {
            return Ok(Some(i.to_string()));
        }
    }
    Err(param_error(
        r,
        field,
        &format!("{v} is not a valid {field}"),
    ))
}

impl Cron {
    pub fn parse(r: &Resource) -> Result<Cron, ParamError> {
        let name = text_param(r, "name")?.unwrap_or_else(|| r.title.clone());
        if name.contains(['\n', '\r']) {
            return Err(param_error(r, "name", "Cron names cannot include newline"));
        }
        let command = text_param(r, "command")?.map(|c| c.trim().to_string());
        if command.as_deref().is_some_and(|c| c.contains(['\n', '\r'])) {
            return Err(param_error(r, "command", "Commands cannot include newline"));
        }
        let special = match text_param(r, "special")? {
            None => None,
            Some(s) if s == "absent" => Some(String::new()),
            Some(s) if SPECIALS.contains(&s.as_str()) => Some(s),
            Some(s) => {
                return Err(param_error(
                    r,
                    "special",
                    &format!("Invalid special schedule {s:?}"),
                ));
            }
        };
        let mut times: [Option<String>; 5] = Default::default();
        for (slot, (field, lower, upper, names)) in times.iter_mut().zip(FIELDS) {
            if matches!(r.param(field), None | Some(Value::Null)) {
                continue;
            }
            let mut values = Vec::new();
            for v in list_param(r, field)? {
                values.push(munge(r, field, lower, upper, names, &v)?);
            }
            // The first value absent makes the whole field absent.
            *slot = Some(match values.first() {
                None | Some(None) => "*".to_string(),
                Some(Some(_)) => values.into_iter().flatten().collect::<Vec<_>>().join(","),
            });
        }
        if special.as_deref().is_some_and(|s| !s.is_empty()) {
            for ((field, ..), t) in FIELDS.iter().zip(&times) {
                if t.as_deref().is_some_and(|t| t != "*") {
                    return Err(param_error(
                        r,
                        "special",
                        &format!(
                            "{} cannot specify both a special schedule and a value for {field}",
                            r.reference()
                        ),
                    ));
                }
            }
        }
        let environment = match r.param("environment") {
            None | Some(Value::Null) => None,
            Some(_) => {
                let lines = list_param(r, "environment")?;
                for l in &lines {
                    let ok = l.split_once('=').is_some_and(|(k, _)| {
                        let k = k.trim();
                        !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    });
                    if (!ok && l != "absent") || l.contains(['\n', '\r']) {
                        return Err(param_error(
                            r,
                            "environment",
                            &format!("Invalid environment setting {l:?}"),
                        ));
                    }
                }
                Some(if lines.first().map(String::as_str) == Some("absent") {
                    Vec::new()
                } else {
                    lines
                })
            }
        };
        let user = match text_param(r, "target")? {
            Some(t) => Some(t),
            None => text_param(r, "user")?,
        };
        Ok(Cron {
            name,
            present: present_absent(r, "present")? == "present",
            command,
            special,
            times,
            environment,
            user,
        })
    }

    fn env_text(&self, sorted: bool) -> Option<String> {
        self.environment.as_ref().map(|e| {
            let mut e = e.clone();
            if sorted {
                e.sort();
            }
            e.join("\n")
        })
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        let name = q(&self.name);
        let user = match &self.user {
            Some(u) => q(u),
            None => "\"$(id -un)\"".into(),
        };
        let _ = writeln!(
            out,
            "if ! command -v crontab >/dev/null 2>&1; then _fail {n} 'Provider crontab is not functional on this host (no crontab command)'\nelse\n\
             _cuser={user} _cerr= _ct=\n\
             if getent passwd \"$_cuser\" >/dev/null 2>&1; then _ct=$(crontab -l -u \"$_cuser\" 2>&1) || case $_ct in *'no crontab for'*|*'are not allowed to'*) _ct= ;; *) _cerr=$_ct ;; esac; fi\n\
             if [ -n \"$_cerr\" ]; then _fail {n} \"Could not read crontab for $_cuser: $(printf '%s' \"$_cerr\" | tr '\\n' ' ')\"\nelse\n\
             _cf= _ck= _cu= _cc= _cs= _c1='*' _c2='*' _c3='*' _c4='*' _c5='*' _cenv= _cenvs= _cenvp= _cbad= _chg="
        );
        let lookup = parsed::awk_program(&format!("{AWK_CRON}{AWK_LOOKUP}"));
        let mut env: Vec<(&str, String)> = vec![
            ("_N", name.clone()),
            ("_WC", q(self.command.as_deref().unwrap_or(""))),
        ];
        let wanted: Vec<(String, String)> = self
            .times
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("_W{}", i + 1), q(t.as_deref().unwrap_or(""))))
            .collect();
        for (k, v) in &wanted {
            env.push((k.as_str(), v.clone()));
        }
        if let Some(s) = &self.special {
            env.push(("_WSS", "1".into()));
            env.push(("_WS", q(s)));
        }
        let mut vars = String::new();
        for (k, v) in &env {
            let _ = write!(vars, "{k}={v} ");
        }
        let _ = writeln!(
            out,
            "eval \"$(printf '%s\\n' \"$_ct\" | {vars}awk {})\"",
            q(&lookup)
        );
        let _ = writeln!(
            out,
            "if [ -n \"$_cbad\" ]; then _fail {n} \"Could not parse line $(printf '%s' \"$_cbad\" | tr '\\n' ' ')\"\nelse"
        );
        let rewrite = parsed::awk_program(&format!("{AWK_CRON}{AWK_REWRITE}"));
        let write = |delete: bool| {
            format!(
                "_L=\nif [ -z \"$_cu\" ]; then _L=\"# Puppet Name: \"{name}'\n'; fi\n\
                 if [ -n \"$_cenv\" ]; then _L=\"$_L$_cenv\"'\n'; fi\n\
                 if [ -n \"$_cs\" ]; then _L=\"$_L@$_cs $_cc\"; else _L=\"$_L$_c1 $_c2 $_c3 $_c4 $_c5 $_cc\"; fi\n\
                 _out=$( {{ if getent passwd \"$_cuser\" >/dev/null 2>&1; then printf '%s\\n' \"$_ct\" | _TIME=\"$(date '+%Y-%m-%d %H:%M:%S %z')\" _K=\"$_ck\" _D={} _L=\"$_L\" awk {} | crontab -u \"$_cuser\" -; else echo \"Cannot write the $_cuser user's crontab: The user does not exist\"; false; fi; }} 2>&1 ); _rc=$?\n",
                if delete { "1" } else { "''" },
                q(&rewrite)
            )
        };
        let what = "$_o1";
        if !self.present {
            out.push_str("if [ -n \"$_cf\" ]; then _chg=ensure _p_ensure=present; fi\n");
            parsed::sync_changes(out, n, noop, &["ensure"], &write(true), what);
            out.push_str("fi\nfi\nfi\n");
            return;
        }
        out.push_str("if [ -z \"$_cf\" ]; then\n");
        match &self.command {
            Some(c) => {
                let _ = writeln!(out, "_chg=ensure _p_ensure=absent _cc={}", q(c));
                if let Some(s) = &self.special {
                    let _ = writeln!(out, "_cs={}", q(s));
                }
                for (i, t) in self.times.iter().enumerate() {
                    if let Some(t) = t {
                        let _ = writeln!(out, "_c{}={}", i + 1, q(t));
                    }
                }
                if let Some(e) = self.env_text(false) {
                    let _ = writeln!(out, "_cenv={}", q(&e));
                }
                parsed::sync_changes(out, n, noop, &["ensure"], &write(false), what);
            }
            None => {
                let _ = writeln!(out, "_fail {n} 'no command specified, cannot create'");
            }
        }
        out.push_str("else\n");
        let mut props = Vec::new();
        let mut check = |prop: &'static str, current: &str, wanted: &str, set: String| {
            props.push(prop);
            let _ = writeln!(
                out,
                "if [ \"${current}\" != {wanted} ]; then _chg=\"$_chg {prop}\" _p_{prop}=${current}; {set}; fi"
            );
        };
        if let Some(c) = &self.command {
            check("command", "_cc", &q(c), format!("_cc={}", q(c)));
        }
        if let Some(s) = &self.special {
            check("special", "_cs", &q(s), format!("_cs={}", q(s)));
        }
        // Events in the type's order: minute, hour, weekday, month, monthday.
        for i in [0, 1, 4, 3, 2] {
            if let Some(t) = &self.times[i] {
                let var = format!("_c{}", i + 1);
                check(FIELDS[i].0, &var, &q(t), format!("{var}={}", q(t)));
            }
        }
        if let (Some(sorted), Some(e)) = (self.env_text(true), self.env_text(false)) {
            props.push("environment");
            let _ = writeln!(
                out,
                "if [ \"$_cenvs\" != {} ]; then _chg=\"$_chg environment\" _p_environment=$_cenvp; _cenv={}; fi",
                q(&sorted),
                q(&e)
            );
        }
        parsed::sync_changes(out, n, noop, &props, &write(false), what);
        out.push_str("fi\nfi\nfi\nfi\n");
        debug_assert!(props.iter().all(|p| PROPS.contains(p)));
    }

    pub fn describe(
        &self,
        property: &str,
        status: EventStatus,
        previous: &str,
        detail: &str,
    ) -> EventText {
        let as_list = |text: &str, sep: char| -> Value {
            if text.is_empty() || text == "*" {
                Value::String("absent".into())
            } else {
                Value::Array(text.split(sep).map(|s| Value::String(s.into())).collect())
            }
        };
        let plain = |v: &Option<String>| match v.as_deref() {
            None => Value::Null,
            Some("") => Value::String("absent".into()),
            Some(s) => Value::String(s.into()),
        };
        match property {
            "ensure" => parsed::ensure_event(status, previous, self.present, detail),
            "command" => parsed::property_event(
                property,
                status,
                Value::String(previous.into()),
                plain(&self.command),
                detail,
            ),
            "special" => parsed::property_event(
                property,
                status,
                if previous.is_empty() {
                    Value::String("absent".into())
                } else {
                    Value::String(previous.into())
                },
                plain(&self.special),
                detail,
            ),
            // The wanted value shows joined with commas, unquoted.
            "environment" => {
                let prev = as_list(previous, '\u{1f}');
                let wanted = self.environment.clone().unwrap_or_default();
                let should = wanted.join(",");
                let is = show(&prev);
                let message = match status {
                    EventStatus::Noop => format!("current_value {is}, should be {should} (noop)"),
                    EventStatus::Failure => {
                        format!("change from {is} to {should} failed: {}", detail.trim())
                    }
                    EventStatus::Success => parsed::changed(
                        property,
                        prev.as_str() == Some("absent"),
                        false,
                        &is,
                        &should,
                    ),
                };
                EventText {
                    previous: prev,
                    desired: Value::Array(wanted.into_iter().map(Value::String).collect()),
                    message,
                    redacted: false,
                }
            }
            time => {
                let i = FIELDS.iter().position(|f| f.0 == time).unwrap_or(0);
                let wanted = self.times[i].clone().unwrap_or_default();
                parsed::property_event(
                    property,
                    status,
                    as_list(previous, ','),
                    as_list(&wanted, ','),
                    detail,
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resource(params: Value) -> Resource {
        Resource::with_params("Cron", "job", &params)
    }

    #[test]
    fn time_fields_are_munged_as_puppet_does() {
        let c = Cron::parse(&resource(json!({
            "command": " /bin/true ", "minute": ["0", 30], "hour": "*",
            "weekday": ["Mon", "friday"], "month": "*/2", "monthday": "1-5"
        })))
        .expect("parses");
        assert_eq!(c.command.as_deref(), Some("/bin/true"));
        assert_eq!(
            c.times,
            [
                Some("0,30".into()),
                Some("*".into()),
                Some("1-5".into()),
                Some("*/2".into()),
                Some("1,5".into())
            ]
        );
    }

    #[test]
    fn bad_values_are_refused_as_puppet_words_them() {
        let err = |p: Value| {
            Cron::parse(&resource(p))
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(json!({"minute": "60"})),
            "Parameter minute failed on Cron[job]: 60 is not a valid minute"
        );
        assert_eq!(
            err(json!({"weekday": "funday"})),
            "Parameter weekday failed on Cron[job]: funday is not a valid weekday"
        );
        assert!(err(json!({"special": "often"})).contains("Invalid special schedule \"often\""));
        assert!(
            err(json!({"special": "daily", "hour": "1"}))
                .contains("cannot specify both a special schedule and a value for hour")
        );
        assert!(err(json!({"environment": "no equals"})).contains("Invalid environment setting"));
    }

    #[test]
    fn events_show_arrays_and_absent() {
        let c = Cron::parse(&resource(json!({"command": "x", "hour": "2"}))).expect("parses");
        let e = c.describe("hour", EventStatus::Success, "1", "");
        assert_eq!(e.message, "hour changed ['1'] to ['2']");
        let e = c.describe("hour", EventStatus::Noop, "*", "");
        assert_eq!(e.message, "current_value 'absent', should be ['2'] (noop)");
    }

    /// Runs the crontab parser on `text` as the lookup and the rewrite do.
    fn awk(program: &str, text: &str, env: &[(&str, &str)]) -> String {
        parsed::run_awk_on(&format!("{AWK_CRON}{program}"), text, env).0
    }

    const TAB: &str = "# HEADER: old\n# kept\n15  4 * * *   /usr/bin/true  x\n# Puppet Name: a\nB=2\nA=1\n\n0 1 * * * /bin/echo a\nMAILTO=x\n@daily /bin/b\n";

    #[test]
    fn lookup_finds_named_and_adopts_unnamed_entries() {
        let got = awk(AWK_LOOKUP, TAB, &[("_N", "a")]);
        assert!(
            got.starts_with("_cf=1 _ck=2 _cu= _cc='/bin/echo a' _cs='' _c1='0' _c2='1'"),
            "{got}"
        );
        assert!(got.contains("_cenvs='A=1\nB=2'"), "{got}");
        let got = awk(
            AWK_LOOKUP,
            TAB,
            &[("_N", "other"), ("_WC", "/usr/bin/true  x"), ("_W1", "15")],
        );
        assert!(got.starts_with("_cf=1 _ck=1 _cu=1 "), "{got}");
        assert_eq!(awk(AWK_LOOKUP, "oops\n", &[("_N", "a")]), "_cbad='oops'\n");
    }

    #[test]
    fn rewrite_re_renders_entries_and_replaces_one() {
        let got = awk(
            AWK_REWRITE,
            TAB,
            &[
                ("_TIME", "T"),
                ("_K", "2"),
                ("_L", "# Puppet Name: a\n5 * * * * new"),
            ],
        );
        assert_eq!(
            got,
            "# HEADER: This file was autogenerated at T by puppet.\n\
             # HEADER: While it can still be managed manually, it is definitely not recommended.\n\
             # HEADER: Note particularly that the comments starting with 'Puppet Name' should\n\
             # HEADER: not be deleted, as doing so could cause duplicate cron jobs.\n\
             # kept\n15 4 * * * /usr/bin/true  x\n\n# Puppet Name: a\n5 * * * * new\nMAILTO=x\n@daily /bin/b\n"
        );
        let got = awk(
            AWK_REWRITE,
            "",
            &[("_TIME", "T"), ("_L", "TZ=UTC\n* * * * * x")],
        );
        assert!(got.starts_with("TZ=UTC\n# HEADER"), "{got}");
        assert!(got.ends_with("cron jobs.\n* * * * * x\n"), "{got}");
    }
}
