//! Puppet's `service` type: ensure (running, stopped), enable (true,
//! false, mask), the `status`, `start`, `stop` and `restart` commands,
//! hasstatus and hasrestart, with the systemd, debian (sysv init with
//! update-rc.d), openrc, init and base providers; without a `provider`
//! the program picks what the target runs. Starting a service also sets
//! `enable` without an event of its own, as Puppet does. A refresh
//! restarts a running service; a service this run started drops its
//! refresh ("Unscheduling refresh").

use std::fmt::Write as _;

use serde_json::Value;

use super::{
    EventStatus, EventText, ParamError, Refresh, generic_event, name_param, param_error, text_param,
};
use crate::apply::catalog::Resource;
use crate::apply::program::q;

#[derive(Debug, Clone)]
pub struct Service {
    pub name: String,
    /// `Some(true)` running, `Some(false)` stopped, `None` unmanaged.
    pub running: Option<bool>,
    /// `true`, `false` or `mask`.
    pub enable: Option<String>,
    pub provider: Option<String>,
    pub status: Option<String>,
    pub start: Option<String>,
    pub stop: Option<String>,
    pub restart: Option<String>,
    pub hasstatus: bool,
    pub hasrestart: bool,
    pub pattern: String,
}

const PROVIDERS: [&str; 5] = ["systemd", "debian", "openrc", "init", "base"];

impl Service {
    pub fn parse(r: &Resource) -> Result<Service, ParamError> {
        let running = match text_param(r, "ensure")?.as_deref() {
            None => None,
            Some("running") | Some("true") => Some(true),
            Some("stopped") | Some("false") => Some(false),
            Some(v) => {
                return Err(param_error(
                    r,
                    "ensure",
                    &format!("Invalid value \"{v}\". Valid values are stopped, running."),
                ));
            }
        };
        let enable = match text_param(r, "enable")?.as_deref() {
            None => None,
            Some(v @ ("true" | "false" | "mask")) => Some(v.to_string()),
            Some("manual") | Some("delayed") => None,
            Some(v) => {
                return Err(param_error(
                    r,
                    "enable",
                    &format!(
                        "Invalid value \"{v}\". Valid values are true, false, manual, mask, delayed."
                    ),
                ));
            }
        };
        let provider = text_param(r, "provider")?;
        if let Some(p) = &provider
            && !PROVIDERS.contains(&p.as_str())
        {
            return Err(param_error(
                r,
                "provider",
                &format!(
                    "ferry manages services with {} (not '{p}')",
                    PROVIDERS.join(", ")
                ),
            ));
        }
        let name = name_param(r, "name")?;
        Ok(Service {
            pattern: text_param(r, "pattern")?.unwrap_or_else(|| name.clone()),
            name,
            running,
            enable,
            provider,
            status: text_param(r, "status")?,
            start: text_param(r, "start")?,
            stop: text_param(r, "stop")?,
            restart: text_param(r, "restart")?,
            hasstatus: super::bool_param(r, "hasstatus", true)?,
            hasrestart: super::bool_param(r, "hasrestart", false)?,
        })
    }

    pub fn provider(&self) -> &'static str {
        match self.provider.as_deref() {
            Some("debian") => "debian",
            Some("openrc") => "openrc",
            Some("init") => "init",
            Some("base") => "base",
            _ => "systemd",
        }
    }

    /// Sets `_sp` (the provider) and `_run` (1 when running).
    fn status_script(&self) -> String {
        let name = q(&self.name);
        let mut s = format!(
            "_sp={}\nif [ -z \"$_sp\" ]; then if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then _sp=systemd; \
             elif command -v rc-service >/dev/null 2>&1; then _sp=openrc; elif [ -x /etc/init.d/{bare} ]; then \
             if command -v update-rc.d >/dev/null 2>&1; then _sp=debian; else _sp=init; fi; else _sp=base; fi; fi\n",
            self.provider.as_deref().unwrap_or(""),
            bare = q(&self.name).trim_matches('\'')
        );
        match &self.status {
            Some(cmd) => {
                let _ = writeln!(s, "_xs {}", q(cmd));
            }
            None => {
                let pattern = q(&self.pattern);
                let _ = writeln!(
                    s,
                    "case $_sp in\n\
                     systemd) _x systemctl is-active --quiet -- {name} ;;\n\
                     openrc) _x rc-service {name} status ;;\n\
                     debian|init) if {has}; then _x /etc/init.d/{bare} status; else _rc=1; ps -eo args 2>/dev/null | grep -F -- {pattern} | grep -qv grep && _rc=0; fi ;;\n\
                     *) _rc=1; ps -eo args 2>/dev/null | grep -F -- {pattern} | grep -v 'grep -F' | grep -q . && _rc=0 ;;\n\
                     esac",
                    has = if self.hasstatus { "true" } else { "false" },
                    bare = q(&self.name).trim_matches('\'')
                );
            }
        }
        s.push_str("if [ $_rc = 0 ]; then _run=1; else _run=0; fi\n");
        s
    }

    /// Shell text running `action` (start, stop, restart) as the provider
    /// does, leaving `_rc`, `_out` and `_cmd` (what ran, for messages).
    fn action(&self, action: &str) -> String {
        let name = q(&self.name);
        let bare = q(&self.name).trim_matches('\'').to_string();
        let given = match action {
            "start" => &self.start,
            "stop" => &self.stop,
            _ => &self.restart,
        };
        if let Some(cmd) = given {
            return format!("_cmd={c}; _xs {c}", c = q(cmd));
        }
        // Without a restart command, a service whose start or stop is
        // given (or whose provider cannot restart) is stopped, then
        // started, as Puppet does.
        if action == "restart" && (self.start.is_some() || self.stop.is_some()) {
            return format!(
                "{}; if [ $_rc = 0 ]; then {}; fi",
                self.action("stop"),
                self.action("start")
            );
        }
        let restart_init = if self.hasrestart {
            format!("_cmd=\"/etc/init.d/{bare} restart\"; _x /etc/init.d/{bare} restart")
        } else {
            format!(
                "_cmd=\"/etc/init.d/{bare} stop\"; _x /etc/init.d/{bare} stop; _cmd=\"/etc/init.d/{bare} start\"; _x /etc/init.d/{bare} start"
            )
        };
        let init = if action == "restart" {
            restart_init
        } else {
            format!("_cmd=\"/etc/init.d/{bare} {action}\"; _x /etc/init.d/{bare} {action}")
        };
        let base = match action {
            "stop" => format!(
                "_cmd=\"pkill -f {bare}\"; _x pkill -f -- {}",
                q(&self.pattern)
            ),
            "restart" => {
                let start = self.start.as_deref().map(q).unwrap_or_else(|| name.clone());
                format!(
                    "_x pkill -f -- {}; _cmd={start}; _xs {start}",
                    q(&self.pattern)
                )
            }
            _ => format!(
                "_cmd={name}; _rc=1; _out='Services must specify a start command or a binary'"
            ),
        };
        format!(
            "case $_sp in\n\
             systemd) _cmd=\"systemctl {action} -- {bare}\"; _x systemctl {action} -- {name} ;;\n\
             openrc) _cmd=\"rc-service {bare} {action}\"; _x rc-service {name} {action} ;;\n\
             debian|init) {init} ;;\n\
             *) {base} ;;\n\
             esac"
        )
    }

    /// Sets `_en` to true, false or mask.
    fn enabled_script(&self) -> String {
        let name = q(&self.name);
        let bare = q(&self.name).trim_matches('\'').to_string();
        format!(
            "case $_sp in\n\
             systemd) _en=false; if systemctl is-enabled --quiet -- {name} 2>/dev/null; then _en=true; elif [ \"$(systemctl is-enabled -- {name} 2>/dev/null)\" = masked ]; then _en=mask; fi ;;\n\
             openrc) _en=false; rc-update show default 2>/dev/null | grep -qw -- {name} && _en=true ;;\n\
             *) _en=false; for _f in /etc/rc2.d/S??{bare} /etc/rc3.d/S??{bare} /etc/rc4.d/S??{bare} /etc/rc5.d/S??{bare}; do [ -e \"$_f\" ] && _en=true; done ;;\n\
             esac"
        )
    }

    fn set_enable(&self, want: &str) -> String {
        let name = q(&self.name);
        let (systemd, sysv, openrc) = match want {
            "true" => (
                "unmask",
                "update-rc.d {n} defaults >/dev/null 2>&1; update-rc.d {n} enable",
                "rc-update add {n} default",
            ),
            "mask" => (
                "mask",
                "update-rc.d {n} disable",
                "rc-update del {n} default",
            ),
            _ => (
                "disable",
                "update-rc.d {n} disable",
                "rc-update del {n} default",
            ),
        };
        let systemd = if want == "true" {
            format!("systemctl unmask -- {name} >/dev/null 2>&1; _x systemctl enable -- {name}")
        } else {
            format!("_x systemctl {systemd} -- {name}")
        };
        format!(
            "case $_sp in systemd) {systemd} ;; openrc) _x sh -c {} ;; *) _x sh -c {} ;; esac",
            q(&openrc.replace("{n}", &name)),
            q(&sysv.replace("{n}", &name))
        )
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        let title = format!("Service[{}]", self.name);
        out.push_str("_started=0\n");
        out.push_str(&self.status_script());
        if let Some(want) = self.running {
            let (cond, action, prev, verb) = if want {
                ("[ $_run = 0 ]", "start", "stopped", "start")
            } else {
                ("[ $_run = 1 ]", "stop", "running", "stop")
            };
            let _ = writeln!(out, "if {cond}; then");
            // A service started or stopped in this run (or that would be,
            // in noop) drops its pending refresh.
            if noop {
                let _ = writeln!(out, "_ev {n} ensure noop {prev}; _started=1");
            } else {
                let enable = match &self.enable {
                    Some(e) => format!(
                        "{}\nif [ \"$_en\" != {e} ]; then {}; fi\n",
                        self.enabled_script(),
                        self.set_enable(e)
                    ),
                    None => String::new(),
                };
                let _ = writeln!(
                    out,
                    "{}\nif [ $_rc = 0 ]; then {enable}_ev {n} ensure success {prev}; _started=1\n\
                     else _ev {n} ensure failure {prev} \"Could not {verb} {title}: Execution of '$_cmd' returned $_rc: $_out\"; fi",
                    self.action(action),
                    title = q(&title).trim_matches('\'')
                );
            }
            out.push_str("fi\n");
        }
        // When ensure changed (or would have), enable went with it.
        if let Some(e) = &self.enable {
            out.push_str("if [ \"$_started\" != 1 ]; then\n");
            out.push_str(&self.enabled_script());
            out.push('\n');
            let _ = writeln!(out, "if [ \"$_en\" != {e} ]; then");
            if noop {
                let _ = writeln!(out, "_ev {n} enable noop \"$_en\"");
            } else {
                let _ = writeln!(
                    out,
                    "{}; if [ $_rc = 0 ]; then _ev {n} enable success \"$_en\"; else _ev {n} enable failure \"$_en\" \"$_out\"; fi",
                    self.set_enable(e)
                );
            }
            out.push_str("fi\nfi\n");
        }
    }

    pub fn refresh(&self, n: usize) -> Refresh {
        let title = q(&format!("Service[{}]", self.name));
        let body = format!(
            "{}if [ $_run = 1 ]; then {}\nif [ $_rc != 0 ]; then _e {n} refresh-failed \"$_rc\" \"Could not restart \"{title}\": Execution of '$_cmd' returned $_rc: $_out\"; _F=\"$_F {n}\"; fi; fi\n",
            self.status_script(),
            self.action("restart"),
        );
        Refresh::Script {
            // A service this run started or stopped does not restart.
            guard: Some("[ \"$_started\" != 1 ]".into()),
            body,
        }
    }

    pub fn describe(
        &self,
        property: &str,
        status: EventStatus,
        previous: &str,
        detail: &str,
    ) -> EventText {
        let desired = match property {
            "ensure" => match self.running {
                Some(true) => "running",
                _ => "stopped",
            },
            _ => self.enable.as_deref().unwrap_or("true"),
        };
        let mut text = generic_event(
            property,
            status,
            Value::String(previous.into()),
            Value::String(desired.into()),
            detail,
        );
        if property == "ensure" && status == EventStatus::Success {
            text.message = format!("ensure changed '{previous}' to '{desired}'");
        }
        text
    }

    pub fn event_name(&self, property: &str) -> &'static str {
        match (property, self.running, self.enable.as_deref()) {
            ("ensure", Some(true), _) => "service_started",
            ("ensure", _, _) => "service_stopped",
            (_, _, Some("true")) => "service_enabled",
            _ => "service_disabled",
        }
    }
}
