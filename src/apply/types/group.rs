//! Puppet's `group` type with the groupadd provider: ensure (present,
//! absent), gid and system, checked against the target's group database
//! (`getent group`) and changed with groupadd, groupmod and groupdel.

use std::fmt::Write as _;

use serde_json::Value;

use super::{
    EventStatus, EventText, ParamError, change, generic_event, id_param, name_param, present_absent,
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
            change(
                out,
                n,
                noop,
                "ensure",
                "[ -n \"$_g\" ]",
                "present",
                &format!("_x groupdel {name}"),
            );
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
        change(
            out,
            n,
            noop,
            "ensure",
            ":",
            "absent",
            &format!("_x {add} {name}"),
        );
        out.push_str("else :\n");
        if let Some(g) = &self.gid {
            let dupe = if self.allowdupe { " -o" } else { "" };
            change(
                out,
                n,
                noop,
                "gid",
                &format!("[ \"$_gid\" != {g} ]"),
                "$_gid",
                &format!("_x groupmod -g {g}{dupe} {name}"),
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
