//! `sysctl_runtime` from the duritong sysctl module: a kernel parameter's
//! running value, read with `sysctl -n NAME` (the text `sysctl -a` shows
//! after `NAME = `) and set with `sysctl NAME=VAL`. A name the kernel does
//! not have fails the resource with the module's message. The one event
//! is `val` (`val changed '4096' to '8192'`).

use std::fmt::Write as _;

use serde_json::Value;

use super::sysctl::{key_name, val_param};
use super::{EventStatus, EventText, ParamError, generic_event};
use crate::apply::catalog::Resource;
use crate::apply::program::q;

#[derive(Debug, Clone)]
pub struct SysctlRuntime {
    pub name: String,
    pub val: Option<String>,
}

impl SysctlRuntime {
    pub fn parse(r: &Resource) -> Result<SysctlRuntime, ParamError> {
        Ok(SysctlRuntime {
            name: key_name(r)?,
            val: val_param(r)?,
        })
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        let name = q(&self.name);
        let missing = q(&format!(
            "sysctl parameter {} wasn't found on this system",
            self.name
        ));
        let _ = writeln!(
            out,
            "if ! _sc=$(command -v sysctl); then _fail {n} 'Could not find a suitable provider for sysctl_runtime'\n\
             elif ! _cur=$(LC_ALL=C sysctl -n {name} 2>/dev/null); then _fail {n} {missing}\nelse"
        );
        match &self.val {
            Some(v) => {
                let want = q(v);
                let setting = q(&format!("{}={v}", self.name));
                let _ = writeln!(out, "if [ \"$_cur\" != {want} ]; then");
                if noop {
                    let _ = writeln!(out, "_ev {n} val noop \"$_cur\"");
                } else {
                    let _ = writeln!(
                        out,
                        "_x \"$_sc\" {setting}; if [ $_rc = 0 ]; then _ev {n} val success \"$_cur\"; \
                         else _ev {n} val failure \"$_cur\" \"Execution of '$_sc \"{setting}\"' returned $_rc: $_out\"; fi"
                    );
                }
                out.push_str("fi\n");
            }
            None => out.push_str(":\n"),
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
        generic_event(
            property,
            status,
            Value::String(previous.into()),
            self.val.clone().map(Value::String).unwrap_or(Value::Null),
            detail,
        )
    }
}
