//! Puppet's `mount` type (the mount_core module) with its `parsed`
//! provider on Linux: one line `DEVICE<TAB>NAME<TAB>FSTYPE<TAB>OPTIONS<TAB>
//! DUMP<TAB>PASS` per file system in a fstab (`target`, default
//! `/etc/fstab`), and the mount table (`mount`'s output) for what is
//! mounted. The current `ensure` is `unmounted` (in the fstab), `mounted`
//! (in it and mounted), `ghost` (mounted, not in it) or `absent`; the step
//! converges to `defined` (`present`), `unmounted`, `mounted` or `absent`
//! as the type does: the fstab rewritten whole with Puppet's header
//! ([`super::parsed`]), `mount NAME` and `umount NAME` run (so, as with
//! Puppet, mounting needs the entry in `/etc/fstab`). `device`, `fstype`,
//! `options`, `pass` and `dump` (both default 0) are compared when
//! `ensure` is in sync; changes made together with `ensure` have no event
//! of their own. A mount refreshes itself after its own events (Puppet's
//! `self_refresh`; not one being removed): "Triggered 'refresh'", remounting it when it is
//! mounted (`mount -o remount`, or `umount` and `mount` with `remounts =>
//! false`).

use std::fmt::Write as _;

use serde_json::Value;

use super::parsed::{self, HEADER};
use super::{
    EventStatus, EventText, ParamError, Refresh, bool_param, display, generic_event, param_error,
    text_param,
};
use crate::apply::catalog::Resource;
use crate::apply::program::q;

#[derive(Debug, Clone)]
pub struct Mount {
    pub name: String,
    /// `defined`, `unmounted`, `mounted` or `absent`; `None`: not managed.
    pub ensure: Option<String>,
    pub device: Option<String>,
    pub fstype: Option<String>,
    pub options: Option<String>,
    /// As the catalog gives them (a number or a string), default 0.
    pub dump: Value,
    pub pass: Value,
    pub target: String,
    pub remounts: bool,
}

/// Parses fstab lines (split on whitespace, extra fields rolled into
/// the last, `\040` for spaces) and renders them joined with tabs.
const AWK_FSTAB: &str = r##"
function unesc(s) { gsub(/\\040/, " ", s); return s }
function esc(s) { gsub(/ /, "\\040", s); return s }
function rec(l,   n, f, i, r) {
  if (l ~ /^[[:space:]]*#/ || l ~ /^[[:space:]]*$/) return 0
  r = l; n = 0
  if (r ~ /^[[:space:]]/) { f[++n] = ""; sub(/^[[:space:]]+/, "", r) }
  while (match(r, /[^[:space:]]+/)) { f[++n] = substr(r, RSTART, RLENGTH); r = substr(r, RSTART + RLENGTH) }
  if (n < 2) return 0
  for (i = n + 1; i <= 6; i++) f[i] = ""
  for (i = 7; i <= n; i++) f[6] = f[6] "\t" f[i]
  M_d = unesc(f[1]); M_n = unesc(f[2]); M_t = f[3]; M_o = f[4]; M_du = f[5]; M_p = f[6]
  while (M_n ~ /.\/$/) sub(/\/$/, "", M_n)
  return 1
}
function render(d, nm, t, o, du, p) {
  if (d == "") { err = "Field 'device' is required"; return "" }
  if (t == "") { err = "Mount[" nm "]: Field 'fstype' is required"; return "" }
  if (o == "") o = "defaults"
  return esc(d) "\t" esc(nm) "\t" t "\t" o "\t" du "\t" p
}
"##;

/// Prints the shell assignments of the last line for mount point `_N`,
/// with its rank among those lines in `_mk`.
const AWK_LOOKUP: &str = r##"
function line(l) {
  if (!rec(l) || M_n != ENVIRON["_N"]) return
  found++
  got = "_mf=1 _mk=" found " _md=" sq(M_d) " _mt=" sq(M_t) " _mo=" sq(M_o) " _mdu=" sq(M_du) " _mp=" sq(M_p)
}
function finish() { if (found) print got }
"##;

/// Prints the fstab with the `_K`th line for `_N` replaced by the line of
/// `_D`, `_T`, `_O`, `_DU`, `_P`, or removed when `_X` is set; appended
/// when there is none (`_K` empty). A line that cannot be written (no
/// device or file system type) fails the whole write, as in Puppet.
const AWK_REWRITE: &str = r##"
function mine() { return render(ENVIRON["_D"], ENVIRON["_N"], ENVIRON["_T"], ENVIRON["_O"], ENVIRON["_DU"], ENVIRON["_P"]) }
function out(s) { o[++no] = s }
function line(l) {
  if (!rec(l)) { out(l); return }
  if (M_n == ENVIRON["_N"] && ++seen == ENVIRON["_K"]) { if (ENVIRON["_X"] == "") out(mine()); return }
  out(render(M_d, M_n, M_t, M_o, M_du, M_p))
}
function finish(   i) {
  if (ENVIRON["_K"] == "" && ENVIRON["_X"] == "") out(mine())
  if (err != "") { print err > "/dev/stderr"; exit 1 }
  if (!no) o[++no] = ""
  for (i = 1; i <= no; i++) print o[i]
}
"##;

/// Tells whether `_N` is mounted: `1` when `mount` lists it.
const AWK_MOUNTED: &str = r##"{ if (match($0, / on .* type /) && substr($0, RSTART + 4, RLENGTH - 10) == ENVIRON["_N"]) { print 1; exit } }"##;

impl Mount {
    pub fn parse(r: &Resource) -> Result<Mount, ParamError> {
        let mut name = text_param(r, "name")?.unwrap_or_else(|| r.title.clone());
        while name.len() > 1 && name.ends_with('/') {
            name.pop();
        }
        if name.contains(['\n', '\t']) {
            return Err(param_error(
                r,
                "name",
                "name must not contain newlines or tabs",
            ));
        }
        let ensure = match text_param(r, "ensure")?.as_deref() {
            None => None,
            Some("defined" | "present") => Some("defined".to_string()),
            Some(e @ ("unmounted" | "mounted" | "absent")) => Some(e.to_string()),
            Some(other) => {
                return Err(param_error(
                    r,
                    "ensure",
                    &format!(
                        "Invalid value \"{other}\". Valid values are defined, unmounted, absent, mounted."
                    ),
                ));
            }
        };
        let no_space = |param: &str| -> Result<Option<String>, ParamError> {
            match text_param(r, param)? {
                Some(v) if v.chars().any(char::is_whitespace) => Err(param_error(
                    r,
                    param,
                    &format!("{param} must not contain whitespace: {v}"),
                )),
                Some(v) if v.is_empty() => Err(param_error(
                    r,
                    param,
                    &format!("{param} must not be an empty string"),
                )),
                v => Ok(v),
            }
        };
        let device = text_param(r, "device")?;
        if device.as_deref().is_some_and(|d| d.contains(['\n', '\t'])) {
            return Err(param_error(
                r,
                "device",
                "device must not contain newlines or tabs",
            ));
        }
        let fstype = no_space("fstype")?;
        let options = no_space("options")?;
        let number = |param: &str| -> Result<Value, ParamError> {
            match r.param(param) {
                None | Some(Value::Null) => Ok(Value::from(0)),
                Some(v @ (Value::Number(_) | Value::String(_))) => {
                    let text = text_param(r, param)?.unwrap_or_default();
                    if text.chars().any(char::is_whitespace) {
                        return Err(param_error(
                            r,
                            param,
                            &format!("{param} must not contain whitespace: {text}"),
                        ));
                    }
                    Ok(v.clone())
                }
                Some(other) => Err(param_error(r, param, &format!("Invalid value {other}"))),
            }
        };
        let dump = number("dump")?;
        let dump_text = value_text(&dump);
        if !dump_text.contains(['0', '1']) {
            return Err(param_error(
                r,
                "dump",
                &format!("Invalid value {dump_text:?}. Valid values match /(0|1)/."),
            ));
        }
        let pass = number("pass")?;
        Ok(Mount {
            name,
            ensure,
            device,
            fstype,
            options,
            dump,
            pass,
            target: text_param(r, "target")?.unwrap_or_else(|| "/etc/fstab".into()),
            remounts: bool_param(r, "remounts", true)?,
        })
    }

    /// The shell that remounts the file system when `_mnow` says it is
    /// mounted; a failure is reported as a failed refresh.
    fn remount(&self, n: usize) -> String {
        if self.fstype.as_deref() == Some("swap") {
            return String::new();
        }
        let name = q(&self.name);
        let cmd = if self.remounts {
            "_x \"$_mcmd\" -o remount \"$_N\"; _cmd=\"$_mcmd -o remount $_N\"".to_string()
        } else {
            "_x \"$_ucmd\" \"$_N\"; _cmd=\"$_ucmd $_N\"; if [ $_rc = 0 ]; then _x \"$_mcmd\" \"$_N\"; _cmd=\"$_mcmd $_N\"; fi".to_string()
        };
        format!(
            "case $_mnow in mounted|ghost) _N={name}; {cmd}\nif [ $_rc != 0 ]; then _e {n} refresh-failed \"$_rc\" \"Execution of '$_cmd' returned $_rc: $(printf '%s' \"$_out\" | tr '\\n' ' ')\"; _F=\"$_F {n}\"; fi ;; esac\n"
        )
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        let name = q(&self.name);
        let _ = writeln!(
            out,
            "_mfail= _mself= _chg= _N={name}\n\
             _mcmd=$(command -v mount) || _mcmd=; _ucmd=$(command -v umount) || _ucmd=\n\
             if [ -z \"$_mcmd\" ] || [ -z \"$_ucmd\" ]; then _fail {n} 'Provider parsed is not functional on this host (no mount or umount command)'\nelse"
        );
        out.push_str(&parsed::set_target(&self.target));
        let lookup = parsed::awk_program(&format!("{AWK_FSTAB}{AWK_LOOKUP}"));
        let _ = writeln!(
            out,
            "_mf= _mk= _md= _mt= _mo= _mdu= _mp=\neval \"$({})\"\n\
             _mm=$(\"$_mcmd\" 2>/dev/null | _N={name} awk {})\n\
             if [ -n \"$_mf\" ]; then _mis=unmounted; [ -z \"$_mm\" ] || _mis=mounted; else _mis=absent; [ -z \"$_mm\" ] || _mis=ghost; fi\n\
             _mnow=$_mis",
            parsed::awk_on_target(&lookup, &[("_N", name.clone())]),
            q(AWK_MOUNTED)
        );
        let rewrite = parsed::awk_program(&format!("{AWK_FSTAB}{AWK_REWRITE}"));
        let write = |delete: bool| {
            let awk = parsed::awk_on_target(
                &rewrite,
                &[
                    ("_N", name.clone()),
                    ("_K", "\"$_mk\"".into()),
                    ("_X", if delete { "1" } else { "''" }.into()),
                    ("_D", "\"$_md\"".into()),
                    ("_T", "\"$_mt\"".into()),
                    ("_O", "\"$_mo\"".into()),
                    ("_DU", "\"$_mdu\"".into()),
                    ("_P", "\"$_mp\"".into()),
                ],
            );
            // The awk program runs first: a line it cannot write fails
            // the write before the header is printed.
            parsed::write_file(
                &format!("_new=$({awk}) && {{ {HEADER}; printf '%s\\n' \"$_new\"; }}"),
                "600",
                None,
            )
        };
        // Out-of-sync properties: shell that records them in `_chg` and
        // sets their new values.
        let mut props: Vec<&str> = Vec::new();
        let mut checks = String::new();
        let mut check = |prop: &'static str, var: &str, wanted: String| {
            props.push(prop);
            let _ = writeln!(
                checks,
                "if [ \"${var}\" != {wanted} ]; then _chg=\"$_chg {prop}\" _p_{prop}=${var} {var}={wanted}; fi"
            );
        };
        if let Some(d) = &self.device {
            check("device", "_md", q(d));
        }
        if let Some(t) = &self.fstype {
            check("fstype", "_mt", q(t));
        }
        if let Some(o) = &self.options {
            check("options", "_mo", q(o));
        }
        check("pass", "_mp", q(&value_text(&self.pass)));
        check("dump", "_mdu", q(&value_text(&self.dump)));
        // The new line's values, from the resource (for a new line).
        let mut create = String::from("_mk= _md= _mt= _mo= ");
        for (var, v) in [
            ("_md", &self.device),
            ("_mt", &self.fstype),
            ("_mo", &self.options),
        ] {
            if let Some(v) = v {
                let _ = write!(create, "{var}={} ", q(v));
            }
        }
        let _ = writeln!(
            create,
            "_mdu={} _mp={}",
            q(&value_text(&self.dump)),
            q(&value_text(&self.pass))
        );
        let what = "$_o1";
        // The ensure change: `steps` run in order, each leaving `_rc`
        // and `_out`; a failure in the first `in_sync` of them is the
        // event's failure, later ones (Puppet's flush) fail the resource
        // after a successful event.
        let change = |out: &mut String, to: &str, steps: &[(&str, bool)]| {
            out.push_str("_p_ensure=$_mis\n");
            if noop {
                let _ = writeln!(out, "_ev {n} ensure noop \"$_mis\"");
                return;
            }
            out.push_str("_rc=0 _out= _late=\n");
            for (s, late) in steps {
                let mark = if *late { "_late=1; " } else { "" };
                let _ = writeln!(out, "if [ $_rc = 0 ]; then {mark}{s}\nfi");
            }
            let _ = writeln!(
                out,
                "_o1=$(printf '%s' \"$_out\" | tr '\\n' ' ')\n\
                 if [ $_rc = 0 ] || [ -n \"$_late\" ]; then _ev {n} ensure success \"$_mis\"; _mnow={to}; else _ev {n} ensure failure \"$_mis\" \"$_o1\"; _mfail=1; fi\n\
                 if [ $_rc != 0 ] && [ -n \"$_late\" ]; then _fail {n} \"$_o1\"; _mfail=1; fi"
            );
        };
        let run = |cmd: &str| {
            format!(
                "_x \"${cmd}\" \"$_N\"; if [ $_rc != 0 ]; then _out=\"Execution of '${cmd} $_N' returned $_rc: $_out\"; fi"
            )
        };
        let mount = run("_mcmd");
        let umount = run("_ucmd");
        let write_new = write(false);
        let write_gone = write(true);
        let sync_others = format!("{checks}if [ -n \"$_chg\" ]; then {write_new}fi");
        match self.ensure.as_deref() {
            Some("defined") => {
                out.push_str("case $_mis in mounted|unmounted)\n");
                out.push_str(&checks);
                parsed::sync_changes(out, n, noop, &props, &write_new, what);
                out.push_str(";;\n*)\n");
                out.push_str(&create);
                change(out, "defined", &[(&write_new, true)]);
                out.push_str(";;\nesac\n");
            }
            Some("unmounted") => {
                out.push_str("case $_mis in unmounted)\n");
                out.push_str(&checks);
                parsed::sync_changes(out, n, noop, &props, &write_new, what);
                out.push_str(";;\nabsent)\n");
                out.push_str(&create);
                change(out, "unmounted", &[(&write_new, true)]);
                out.push_str(";;\nghost)\n");
                out.push_str(&create);
                change(out, "unmounted", &[(&write_new, false), (&umount, false)]);
                out.push_str(";;\nmounted)\n");
                change(out, "unmounted", &[(&umount, false), (&sync_others, false)]);
                out.push_str(";;\nesac\n");
            }
            Some("mounted") => {
                out.push_str("case $_mis in mounted)\n");
                out.push_str(&checks);
                parsed::sync_changes(out, n, noop, &props, &write_new, what);
                out.push_str(";;\nunmounted)\n");
                change(out, "mounted", &[(&sync_others, false), (&mount, true)]);
                out.push_str(";;\nabsent)\n");
                out.push_str(&create);
                change(out, "mounted", &[(&write_new, true), (&mount, true)]);
                out.push_str(";;\nghost)\n");
                out.push_str(&create);
                change(out, "mounted", &[(&write_new, true)]);
                out.push_str(";;\nesac\n");
            }
            Some(_) => {
                out.push_str("case $_mis in unmounted)\n");
                change(out, "absent", &[(&write_gone, true)]);
                out.push_str(";;\nmounted)\n");
                change(out, "absent", &[(&umount, false), (&write_gone, true)]);
                out.push_str(";;\nghost)\n");
                change(out, "absent", &[(&umount, false)]);
                out.push_str(";;\nesac\n");
            }
            None => {
                out.push_str("if [ -n \"$_mf\" ]; then\n");
                out.push_str(&checks);
                parsed::sync_changes(out, n, noop, &props, &write_new, what);
                out.push_str("fi\n");
            }
        }
        // Puppet's self refresh: the resource's own events trigger it,
        // unless it is being removed.
        if self.ensure.as_deref() == Some("absent") {
            out.push_str("fi\n");
            return;
        }
        out.push_str("if [ -z \"$_mfail\" ]; then\n");
        if noop {
            let _ = writeln!(
                out,
                "if [ $_o -gt 0 ]; then _e {n} refresh-noop $_o; _o=$((_o + 1)); fi"
            );
        } else {
            let _ = write!(
                out,
                "if [ $_c -gt 0 ]; then _e {n} refresh $_c; _mself=1\n{}_c=$((_c + 1))\nfi\n",
                self.remount(n)
            );
        }
        out.push_str("fi\nfi\n");
    }

    /// A refresh from other resources remounts the file system when it is
    /// mounted (not again when its own events already refreshed it).
    pub fn refresh(&self, n: usize) -> Refresh {
        Refresh::Script {
            guard: Some("[ -z \"$_mself\" ]".into()),
            body: self.remount(n),
        }
    }

    pub fn event_name(&self, desired: &Value) -> &'static str {
        match desired.as_str() {
            Some("mounted") => "mount_mounted",
            Some("absent") => "mount_deleted",
            _ => "mount_changed",
        }
    }

    pub fn describe(
        &self,
        property: &str,
        status: EventStatus,
        previous: &str,
        detail: &str,
    ) -> EventText {
        let text = |v: &Option<String>| v.clone().map(Value::String).unwrap_or(Value::Null);
        let prev = if previous.is_empty() {
            Value::String("absent".into())
        } else {
            Value::String(previous.into())
        };
        match property {
            "ensure" => {
                let should = self.ensure.clone().unwrap_or_default();
                let message = match status {
                    EventStatus::Success if previous == "absent" => {
                        format!("defined 'ensure' as {}", display(&should))
                    }
                    EventStatus::Success if should == "absent" => {
                        format!("undefined 'ensure' from {}", display(previous))
                    }
                    EventStatus::Success => format!(
                        "ensure changed {} to {}",
                        display(previous),
                        display(&should)
                    ),
                    _ => {
                        generic_event(
                            property,
                            status,
                            prev.clone(),
                            Value::String(should.clone()),
                            detail,
                        )
                        .message
                    }
                };
                EventText {
                    previous: prev,
                    desired: Value::String(should),
                    message,
                    redacted: false,
                }
            }
            "device" => parsed::property_event(property, status, prev, text(&self.device), detail),
            "fstype" => parsed::property_event(property, status, prev, text(&self.fstype), detail),
            "options" => {
                parsed::property_event(property, status, prev, text(&self.options), detail)
            }
            "pass" => parsed::property_event(property, status, prev, self.pass.clone(), detail),
            _ => parsed::property_event(property, status, prev, self.dump.clone(), detail),
        }
    }
}

/// A number or string parameter as the text the fstab holds.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resource(params: Value) -> Resource {
        Resource::with_params("Mount", "/mnt/x/", &params)
    }

    #[test]
    fn parameters_are_checked_as_puppet_does() {
        let m = Mount::parse(&resource(json!({"ensure": "present", "dump": 1}))).expect("parses");
        assert_eq!(m.name, "/mnt/x");
        assert_eq!(m.ensure.as_deref(), Some("defined"));
        assert_eq!(m.pass, json!(0));
        let err = |p: Value| {
            Mount::parse(&resource(p))
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(json!({"options": "a b"})),
            "Parameter options failed on Mount[/mnt/x/]: options must not contain whitespace: a b"
        );
        assert!(err(json!({"fstype": ""})).contains("fstype must not be an empty string"));
        assert!(err(json!({"dump": 2})).contains("Valid values match /(0|1)/"));
        assert!(err(json!({"ensure": "up"})).contains("Invalid value \"up\""));
    }

    #[test]
    fn ensure_messages_are_puppets() {
        let m = Mount::parse(&resource(json!({"ensure": "mounted"}))).expect("parses");
        let e = m.describe("ensure", EventStatus::Success, "absent", "");
        assert_eq!(e.message, "defined 'ensure' as 'mounted'");
        let e = m.describe("ensure", EventStatus::Success, "unmounted", "");
        assert_eq!(e.message, "ensure changed 'unmounted' to 'mounted'");
        assert_eq!(m.event_name(&json!("mounted")), "mount_mounted");
        let gone = Mount::parse(&resource(json!({"ensure": "absent"}))).expect("parses");
        let e = gone.describe("ensure", EventStatus::Success, "unmounted", "");
        assert_eq!(e.message, "undefined 'ensure' from 'unmounted'");
        let e = m.describe("dump", EventStatus::Success, "1", "");
        assert_eq!(e.message, "dump changed '1' to 0");
    }

    fn awk(program: &str, text: &str, env: &[(&str, &str)]) -> (String, bool) {
        parsed::run_awk_on(&format!("{AWK_FSTAB}{program}"), text, env)
    }

    const FSTAB: &str = "# c\nproc /proc proc defaults 0 0\n/dev/a\\040b /mnt/x/ ext4 ro\nshort\n";

    #[test]
    fn fstab_lines_are_parsed_and_re_rendered_as_puppet_does() {
        let (got, _) = awk(AWK_LOOKUP, FSTAB, &[("_N", "/mnt/x")]);
        assert_eq!(
            got,
            "_mf=1 _mk=1 _md='/dev/a b' _mt='ext4' _mo='ro' _mdu='' _mp=''\n"
        );
        let (got, ok) = awk(
            AWK_REWRITE,
            FSTAB,
            &[
                ("_N", "/new"),
                ("_D", "tmpfs"),
                ("_T", "tmpfs"),
                ("_DU", "0"),
                ("_P", "0"),
            ],
        );
        assert!(ok);
        assert_eq!(
            got,
            "# c\nproc\t/proc\tproc\tdefaults\t0\t0\n/dev/a\\040b\t/mnt/x\text4\tro\t\t\nshort\ntmpfs\t/new\ttmpfs\tdefaults\t0\t0\n"
        );
        let (_, ok) = awk(AWK_REWRITE, FSTAB, &[("_N", "/new"), ("_D", "tmpfs")]);
        assert!(!ok, "a line without a file system type cannot be written");
    }
}
