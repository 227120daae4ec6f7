//! Puppet's `group` type with the groupadd provider: ensure (present,
//! absent), gid and system, checked against the target's group database
//! (`getent group`) and changed with groupadd, groupmod and groupdel.

use std::fmt::Write as _;

use serde_json::Value;

use super::{
    EventStatus, EventText, ParamError, generic_event, id_param, name_param, present_absent,
};
use crate::apply::catalog::Resource;
use crate::apply::program::q;

#[derive(Debug, Clone)]
pub struct Group {
    pub name: String,
    pub present: bool,
    pub gid: Option<String>,
    pub system: bool,
    pub allowdupe: bool,
}

impl Group {
    pub fn parse(r: &Resource) -> Result<Group, ParamError> {
        Ok(Group {
            name: name_param(r, "name")?,
            present: present_absent(r, "present")? == "present",
            gid: id_param(r, "gid")?,
            system: super::bool_param(r, "system", false)?,
            allowdupe: super::bool_param(r, "allowdupe", false)?,
        })
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        let name = q(&self.name);
        let _ = writeln!(
            out,
            "_g=$(getent group {name}) || _g=\n_gid=${{_g#*:*:}}; _gid=${{_gid%%:*}}"
        );
        if !self.present {
            let _ = writeln!(out, "if [ -n \"$_g\" ]; then");
            if noop {
                let _ = writeln!(out, "_ev {n} ensure noop present");
            } else {
                let _ = writeln!(
                    out,
                    "_x groupdel {name}; if [ $_rc = 0 ]; then _ev {n} ensure success present; else _ev {n} ensure failure present \"$_out\"; fi"
                );
            }
            out.push_str("fi\n");
            return;
        }
        let mut add = String::from("groupadd");
        if let Some(g) = &self.gid {
            let _ = write!(add, " -g {g}");
            if self.allowdupe {
                add.push_str(" -o");
            }
        }
        if self.system {
            add.push_str(" -r");
        }
        let _ = writeln!(out, "if [ -z \"$_g\" ]; then");
        if noop {
            let _ = writeln!(out, "_ev {n} ensure noop absent");
        } else {
            let _ = writeln!(
                out,
                "_x {add} {name}; if [ $_rc = 0 ]; then _ev {n} ensure success absent; else _ev {n} ensure failure absent \"$_out\"; fi"
            );
        }
        out.push_str("else :\n");
        if let Some(g) = &self.gid {
            let _ = writeln!(out, "if [ \"$_gid\" != {g} ]; then");
            if noop {
                let _ = writeln!(out, "_ev {n} gid noop \"$_gid\"");
            } else {
                let dupe = if self.allowdupe { " -o" } else { "" };
                let _ = writeln!(
                    out,
                    "_x groupmod -g {g}{dupe} {name}; if [ $_rc = 0 ]; then _ev {n} gid success \"$_gid\"; else _ev {n} gid failure \"$_gid\" \"$_out\"; fi"
                );
            }
            out.push_str("fi\n");
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
        match property {
            "ensure" => generic_event(
                "ensure",
                status,
                Value::String(previous.into()),
                Value::String(if self.present { "present" } else { "absent" }.into()),
                detail,
            ),
            _ => generic_event(
                property,
                status,
                number(previous),
                self.gid.as_deref().map(number).unwrap_or(Value::Null),
                detail,
            ),
        }
    }
}

/// A number when the text is one (uids and gids show bare in messages).
pub fn number(s: &str) -> Value {
    s.parse::<u64>()
        .map(Value::from)
        .unwrap_or_else(|_| Value::String(s.into()))
}
