//! Puppet's `user` type with the useradd provider: ensure, home, uid,
//! gid, comment, shell, password and groups (membership minimum or
//! inclusive), managehome and system, checked against the target's
//! passwd, shadow and group databases (`getent`) and changed with
//! useradd, usermod and userdel. The password hash goes to `chpasswd -e`
//! on its stdin from the `printf` builtin, never on a command line.

use std::fmt::Write as _;

use serde_json::Value;

use super::group::number;
use super::{
    EventStatus, EventText, ParamError, bool_param, change, generic_event, list_param, name_param,
    present_absent, redacted_event, text_param,
};
use crate::apply::catalog::Resource;
use crate::apply::program::q;

#[derive(Debug, Clone)]
pub struct User {
    pub name: String,
    pub present: bool,
    pub uid: Option<String>,
    pub gid: Option<String>,
    pub home: Option<String>,
    pub shell: Option<String>,
    pub comment: Option<String>,
    pub password: Option<String>,
    pub groups: Vec<String>,
    /// `membership => inclusive`: exactly these groups.
    pub inclusive: bool,
    pub managehome: bool,
    pub system: bool,
    pub allowdupe: bool,
}

impl User {
    pub fn parse(r: &Resource) -> Result<User, ParamError> {
        let groups = list_param(r, "groups")?
            .iter()
            .flat_map(|g| {
                g.split(',')
                    .map(|s| s.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .filter(|g| !g.is_empty())
            .collect();
        Ok(User {
            name: name_param(r, "name")?,
            present: present_absent(r, "present")? == "present",
            uid: super::id_param(r, "uid")?,
            gid: text_param(r, "gid")?,
            home: text_param(r, "home")?,
            shell: text_param(r, "shell")?,
            comment: text_param(r, "comment")?,
            password: text_param(r, "password")?,
            groups,
            inclusive: text_param(r, "membership")?.as_deref() == Some("inclusive"),
            managehome: bool_param(r, "managehome", false)?,
            system: bool_param(r, "system", false)?,
            allowdupe: bool_param(r, "allowdupe", false)?,
        })
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        let name = q(&self.name);
        let _ = writeln!(
            out,
            "_u=$(getent passwd {name}) || _u=\n\
             if [ -n \"$_u\" ]; then _ifs=$IFS; IFS=:; set -- $_u; IFS=$_ifs; _uuid=$3 _ugid=$4 _ucomment=$5 _uhome=$6 _ushell=$7; fi"
        );
        if !self.present {
            let _ = writeln!(out, "if [ -n \"$_u\" ]; then");
            if noop {
                let _ = writeln!(out, "_ev {n} ensure noop present");
            } else {
                let r = if self.managehome { " -r" } else { "" };
                let _ = writeln!(
                    out,
                    "_x userdel{r} {name}; if [ $_rc = 0 ]; then _ev {n} ensure success present; else _ev {n} ensure failure present \"$_out\"; fi"
                );
            }
            out.push_str("fi\n");
            return;
        }
        // The wanted primary group as a number.
        if let Some(g) = &self.gid {
            let _ = writeln!(
                out,
                "_wg=$(getent group {}) || _wg=; _wg=${{_wg#*:*:}}; _wg=${{_wg%%:*}}",
                q(g)
            );
        }
        let set_password = self
            .password
            .as_ref()
            .map(|p| format!("printf '%s:%s\\n' {name} {} | chpasswd -e 2>&1", q(p)));
        let _ = writeln!(out, "if [ -z \"$_u\" ]; then");
        if noop {
            let _ = writeln!(out, "_ev {n} ensure noop absent");
        } else {
            let mut add = String::from("_x useradd");
            for (flag, v) in [
                ("-u", &self.uid),
                ("-g", &self.gid),
                ("-d", &self.home),
                ("-s", &self.shell),
                ("-c", &self.comment),
            ] {
                if let Some(v) = v {
                    let _ = write!(add, " {flag} {}", q(v));
                }
            }
            if !self.groups.is_empty() {
                let _ = write!(add, " -G {}", q(&self.groups.join(",")));
            }
            if self.managehome {
                add.push_str(" -m");
            }
            if self.system {
                add.push_str(" -r");
            }
            if self.allowdupe {
                add.push_str(" -o");
            }
            let _ = write!(add, " {name}");
            let password = match &set_password {
                Some(p) => format!("; if [ $_rc = 0 ]; then _out=$({p}); _rc=$?; fi"),
                None => String::new(),
            };
            let _ = writeln!(
                out,
                "{add}{password}; if [ $_rc = 0 ]; then _ev {n} ensure success absent; else _ev {n} ensure failure absent \"$_out\"; fi"
            );
        }
        out.push_str("else :\n");
        if let Some(h) = &self.home {
            change(
                out,
                n,
                noop,
                "home",
                &format!("[ \"$_uhome\" != {} ]", q(h)),
                "$_uhome",
                &format!("_x usermod -d {} {name}", q(h)),
            );
        }
        if let Some(u) = &self.uid {
            let o = if self.allowdupe { " -o" } else { "" };
            change(
                out,
                n,
                noop,
                "uid",
                &format!("[ \"$_uuid\" != {u} ]"),
                "$_uuid",
                &format!("_x usermod -u {u}{o} {name}"),
            );
        }
        if self.gid.is_some() {
            change(
                out,
                n,
                noop,
                "gid",
                "[ \"$_ugid\" != \"$_wg\" ]",
                "$_ugid",
                &format!("_x usermod -g \"$_wg\" {name}"),
            );
        }
        if let Some(c) = &self.comment {
            change(
                out,
                n,
                noop,
                "comment",
                &format!("[ \"$_ucomment\" != {} ]", q(c)),
                "$_ucomment",
                &format!("_x usermod -c {} {name}", q(c)),
            );
        }
        if let Some(sh) = &self.shell {
            change(
                out,
                n,
                noop,
                "shell",
                &format!("[ \"$_ushell\" != {} ]", q(sh)),
                "$_ushell",
                &format!("_x usermod -s {} {name}", q(sh)),
            );
        }
        if let (Some(p), Some(set)) = (&self.password, &set_password) {
            let _ = writeln!(
                out,
                "_sp=$(getent shadow {name}) || _sp=; _sp=${{_sp#*:}}; _sp=${{_sp%%:*}}"
            );
            change(
                out,
                n,
                noop,
                "password",
                &format!("[ \"$_sp\" != {} ]", q(p)),
                "",
                &format!("_out=$({set}); _rc=$?"),
            );
        }
        if !self.groups.is_empty() {
            // The groups the user is a member of (not the primary one).
            let _ = writeln!(
                out,
                "_cg=$(getent group | while IFS=: read -r _gn _gx _gi _gm; do case \",$_gm,\" in *,{name},*) printf '%s\\n' \"$_gn\" ;; esac; done | sort | paste -sd, -)"
            );
            let wanted: Vec<String> = self.groups.iter().map(|g| q(g)).collect();
            let want = if self.inclusive {
                format!(
                    "_wgs=$(printf '%s\\n' {} | sort -u | paste -sd, -)",
                    wanted.join(" ")
                )
            } else {
                format!(
                    "_wgs=$({{ printf '%s\\n' {}; [ -z \"$_cg\" ] || printf '%s\\n' \"$_cg\" | tr , '\\n'; }} | sort -u | paste -sd, -)",
                    wanted.join(" ")
                )
            };
            let _ = writeln!(out, "{want}");
            change(
                out,
                n,
                noop,
                "groups",
                "[ \"$_cg\" != \"$_wgs\" ]",
                "$_cg\" \"$_wgs",
                &format!("_x usermod -G \"$_wgs\" {name}"),
            );
        }
        out.push_str("fi\n");
    }

    pub fn describe(
        &self,
        property: &str,
        status: EventStatus,
        previous: &str,
        detail: &str,
    ) -> EventText {
        let text = |v: &Option<String>| v.clone().map(Value::String).unwrap_or(Value::Null);
        match property {
            "password" => redacted_event(status, detail),
            "ensure" => generic_event(
                property,
                status,
                Value::String(previous.into()),
                Value::String(if self.present { "present" } else { "absent" }.into()),
                detail,
            ),
            "uid" => generic_event(
                property,
                status,
                number(previous),
                text(&self.uid).as_str().map(number).unwrap_or(Value::Null),
                detail,
            ),
            "gid" => generic_event(
                property,
                status,
                number(previous),
                text(&self.gid).as_str().map(number).unwrap_or(Value::Null),
                detail,
            ),
            "groups" => {
                let wanted = detail.split('\t').next().unwrap_or_default().to_string();
                let message = match status {
                    EventStatus::Noop => {
                        format!("current_value {previous}, should be '{wanted}' (noop)")
                    }
                    EventStatus::Failure => format!(
                        "change from {previous} to '{wanted}' failed: {}",
                        detail.trim()
                    ),
                    EventStatus::Success => {
                        let list: Vec<String> =
                            wanted.split(',').map(|g| format!("'{g}'")).collect();
                        format!("groups changed {previous} to [{}]", list.join(", "))
                    }
                };
                EventText {
                    previous: Value::String(previous.into()),
                    desired: Value::String(wanted),
                    message,
                    redacted: false,
                }
            }
            "home" => generic_event(
                property,
                status,
                Value::String(previous.into()),
                text(&self.home),
                detail,
            ),
            "shell" => generic_event(
                property,
                status,
                Value::String(previous.into()),
                text(&self.shell),
                detail,
            ),
            _ => generic_event(
                property,
                status,
                Value::String(previous.into()),
                text(&self.comment),
                detail,
            ),
        }
    }
}
