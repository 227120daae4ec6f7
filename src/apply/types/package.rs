//! Puppet's `package` type: ensure (present/installed, absent, purged,
//! latest, a version) with the apt and dpkg providers (Debian), dnf, yum
//! and rpm, and apk; without a `provider` the program picks the one the
//! target has. The current state is what Puppet reads: an installed
//! version, `absent` (removed, configuration left), or `purged` (never
//! installed). `latest` compares with the candidate version (apt only).

use std::fmt::Write as _;

use serde_json::Value;

use super::{
    EventStatus, EventText, ParamError, generic_event, name_param, param_error, text_param,
};
use crate::apply::catalog::Resource;
use crate::apply::program::q;

/// What `ensure` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Want {
    Present,
    Absent,
    Purged,
    Latest,
    Version(String),
}

#[derive(Debug, Clone)]
pub struct Package {
    pub name: String,
    pub want: Want,
    pub provider: Option<String>,
    pub source: Option<String>,
}

const PROVIDERS: [&str; 7] = ["apt", "aptitude", "dpkg", "dnf", "yum", "rpm", "apk"];

impl Package {
    pub fn parse(r: &Resource) -> Result<Package, ParamError> {
        let want = match text_param(r, "ensure")?.as_deref() {
            None | Some("present") | Some("installed") => Want::Present,
            Some("absent") => Want::Absent,
            Some("purged") => Want::Purged,
            Some("latest") => Want::Latest,
            Some(v) if !v.is_empty() && !v.contains(['\n', '\0', ' ']) => Want::Version(v.into()),
            Some(v) => return Err(param_error(r, "ensure", &format!("Invalid value {v:?}"))),
        };
        let provider = text_param(r, "provider")?;
        if let Some(p) = &provider
            && !PROVIDERS.contains(&p.as_str())
        {
            return Err(param_error(
                r,
                "provider",
                &format!(
                    "ferry applies packages with {} (not '{p}')",
                    PROVIDERS.join(", ")
                ),
            ));
        }
        Ok(Package {
            name: name_param(r, "name")?,
            want,
            provider,
            source: text_param(r, "source")?,
        })
    }

    pub fn provider(&self) -> &'static str {
        match self.provider.as_deref() {
            Some("dpkg") => "dpkg",
            Some("dnf") => "dnf",
            Some("yum") => "yum",
            Some("rpm") => "rpm",
            Some("apk") => "apk",
            _ => "apt",
        }
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        let name = q(&self.name);
        let provider = match self.provider.as_deref() {
            Some("aptitude") => "apt".to_string(),
            Some(p) => p.to_string(),
            None => String::new(),
        };
        // The provider, and the current state: a version, absent or purged.
        let _ = writeln!(
            out,
            "_pp={provider}\n\
             if [ -z \"$_pp\" ]; then if command -v dpkg-query >/dev/null 2>&1; then _pp=apt; elif command -v apk >/dev/null 2>&1; then _pp=apk; elif command -v dnf >/dev/null 2>&1; then _pp=dnf; elif command -v yum >/dev/null 2>&1; then _pp=yum; else _pp=rpm; fi; fi\n\
             case $_pp in\n\
             apt|dpkg) _s=$(dpkg-query -W -f='${{Status}}\\t${{Version}}' {name} 2>/dev/null) || _s=\n\
               case $_s in *' installed'*) _cur=${{_s#*\t}} ;; *' config-files'*) _cur=absent ;; *) _cur=purged ;; esac ;;\n\
             apk) if apk info -e {name} >/dev/null 2>&1; then _cur=$(apk info -v {name} 2>/dev/null | head -n1); _cur=${{_cur#{bare}-}}; else _cur=absent; fi ;;\n\
             *) _cur=$(rpm -q --qf '%{{VERSION}}-%{{RELEASE}}' {name} 2>/dev/null) || _cur=absent ;;\n\
             esac",
            bare = self.name.replace(['\'', '"', '\\', '$', '`'], "")
        );
        let installed = "[ \"$_cur\" != absent ] && [ \"$_cur\" != purged ]";
        let (test, action) = match &self.want {
            Want::Present => (format!("! {{ {installed}; }}"), "install"),
            Want::Absent => (installed.to_string(), "remove"),
            Want::Purged => ("[ \"$_cur\" != purged ]".to_string(), "purge"),
            Want::Version(v) => (format!("[ \"$_cur\" != {} ]", q(v)), "install"),
            Want::Latest => {
                let _ = writeln!(
                    out,
                    "_new=\nif [ \"$_pp\" = apt ]; then _new=$(apt-cache policy {name} 2>/dev/null | sed -n 's/^ *Candidate: //p'); fi\n\
                     [ \"$_new\" = '(none)' ] && _new="
                );
                (
                    format!(
                        "if [ -n \"$_new\" ]; then [ \"$_cur\" != \"$_new\" ]; else ! {{ {installed}; }}; fi"
                    ),
                    "install",
                )
            }
        };
        let _ = writeln!(out, "if {test}; then");
        if noop {
            let _ = writeln!(out, "_ev {n} ensure noop \"$_cur\"");
        } else {
            let versioned = |sep: &str| match &self.want {
                Want::Version(v) => q(&format!("{}{sep}{v}", self.name)),
                _ => name.clone(),
            };
            let source = self
                .source
                .as_deref()
                .map(q)
                .unwrap_or_else(|| name.clone());
            let apt = "env DEBIAN_FRONTEND=noninteractive apt-get -q -y -o DPkg::Options::=--force-confold";
            let cmd = match action {
                "install" => format!(
                    "case $_pp in apt) _x {apt} install {} ;; dpkg) _x dpkg -i {source} ;; apk) _x apk add {} ;; dnf|yum) _x \"$_pp\" -y install {} ;; *) _x rpm -i {source} ;; esac",
                    // apt installs a local package file given as `source`.
                    match &self.source {
                        Some(src) => q(src),
                        None => versioned("="),
                    },
                    versioned("="),
                    versioned("-"),
                ),
                "remove" => format!(
                    "case $_pp in apt) _x {apt} remove {name} ;; dpkg) _x dpkg -r {name} ;; apk) _x apk del {name} ;; dnf|yum) _x \"$_pp\" -y remove {name} ;; *) _x rpm -e {name} ;; esac"
                ),
                _ => format!(
                    "case $_pp in apt) _x {apt} purge {name} ;; dpkg) _x dpkg -P {name} ;; apk) _x apk del --purge {name} ;; dnf|yum) _x \"$_pp\" -y remove {name} ;; *) _x rpm -e {name} ;; esac"
                ),
            };
            let new_field = if matches!(self.want, Want::Latest) {
                " \"$_new\""
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "{cmd}\nif [ $_rc = 0 ]; then _ev {n} ensure success \"$_cur\"{new_field}; else _ev {n} ensure failure \"$_cur\" \"$_out\"; fi"
            );
        }
        out.push_str("fi\n");
    }

    fn desired(&self) -> String {
        match &self.want {
            Want::Present => "present".into(),
            Want::Absent => "absent".into(),
            Want::Purged => "purged".into(),
            Want::Latest => "latest".into(),
            Want::Version(v) => v.clone(),
        }
    }

    pub fn describe(&self, status: EventStatus, previous: &str, detail: &str) -> EventText {
        let mut text = generic_event(
            "ensure",
            status,
            Value::String(previous.into()),
            Value::String(self.desired()),
            detail,
        );
        if status == EventStatus::Success
            && !matches!(previous, "absent" | "purged")
            && matches!(self.want, Want::Latest | Want::Version(_))
        {
            let new = if matches!(self.want, Want::Latest) {
                detail.to_string()
            } else {
                self.desired()
            };
            text.message = format!("ensure changed '{previous}' to '{new}'");
        }
        text
    }

    /// Puppet's event names come from the wanted value.
    pub fn event_name(&self) -> &'static str {
        match self.want {
            Want::Present => "package_installed",
            Want::Absent => "package_removed",
            Want::Purged => "package_purged",
            Want::Latest | Want::Version(_) => "package_changed",
        }
    }
}
