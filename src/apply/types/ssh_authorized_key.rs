//! Puppet's `ssh_authorized_key` type (the sshkeys_core module) with its
//! `parsed` provider: one line `[OPTIONS ]TYPE KEY NAME` per key in an
//! authorized_keys file (`target`, default `~USER/.ssh/authorized_keys`,
//! the home read from the target's passwd database). The step parses the
//! file with awk as the provider does (options split as its scanner does,
//! keys without a name kept and written back with an empty name), compares
//! `ensure`, `type`, `key` and `options` (which default to none), and when
//! something is out of sync rewrites the whole file with Puppet's header
//! ([`super::parsed`]). A missing `~/.ssh` is made with mode 0700, the
//! file is left with mode 0600, and what Puppet creates belongs to the
//! user and their primary group. Puppet writes as the user
//! (`drop_privileges`); ferry writes as the user it runs as and sets the
//! owner, so a directory only root may write to does not fail here.

use std::fmt::Write as _;

use serde_json::Value;

use super::parsed::{self, HEADER};
use super::{
    EventStatus, EventText, ParamError, bool_param, list_param, param_error, present_absent,
    text_param,
};
use crate::apply::catalog::Resource;
use crate::apply::program::q;

/// The key types the type accepts, and its aliases.
const TYPES: [&str; 14] = [
    "ssh-dss",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "ssh-ed25519",
    "sk-ecdsa-sha2-nistp256@openssh.com",
    "sk-ssh-ed25519@openssh.com",
    "ssh-rsa-cert-v01@openssh.com",
    "ssh-ed25519-cert-v01@openssh.com",
    "ssh-dss-cert-v01@openssh.com",
    "ecdsa-sha2-nistp256-cert-v01@openssh.com",
    "ecdsa-sha2-nistp384-cert-v01@openssh.com",
    "ecdsa-sha2-nistp521-cert-v01@openssh.com",
];
const ALIASES: [(&str, &str); 5] = [
    ("dsa", "ssh-dss"),
    ("ed25519", "ssh-ed25519"),
    ("rsa", "ssh-rsa"),
    ("ecdsa-sk", "sk-ecdsa-sha2-nistp256@openssh.com"),
    ("ed25519-sk", "sk-ssh-ed25519@openssh.com"),
];

#[derive(Debug, Clone)]
pub struct SshAuthorizedKey {
    pub name: String,
    pub present: bool,
    pub key_type: Option<String>,
    pub key: Option<String>,
    pub user: Option<String>,
    pub target: Option<String>,
    /// Empty: no options (the default).
    pub options: Vec<String>,
    pub drop_privileges: bool,
}

/// Parses key lines (the provider's keyline regex, greedy options) and
/// renders them.
const AWK_KEYS: &str = r##"
BEGIN { split("ssh-dss ssh-ed25519 ssh-rsa ecdsa-sha2-nistp256 ecdsa-sha2-nistp384 ecdsa-sha2-nistp521 ecdsa-sk ed25519-sk sk-ecdsa-sha2-nistp256@openssh.com sk-ssh-ed25519@openssh.com ssh-rsa-cert-v01@openssh.com ssh-ed25519-cert-v01@openssh.com ssh-dss-cert-v01@openssh.com ecdsa-sha2-nistp256-cert-v01@openssh.com ecdsa-sha2-nistp384-cert-v01@openssh.com ecdsa-sha2-nistp521-cert-v01@openssh.com", _ty, " "); for (_i in _ty) KT[_ty[_i]] = 1 }
function popts(s,   n, t, p, j) {
  n = 0; K_oc = ""; K_ou = ""
  while (s != "") {
    sub(/^[ \t]*/, "", s); if (s == "") break
    t = ""
    if (match(s, /^[-a-zA-Z0-9_]+="/)) {
      for (p = RLENGTH + 2; p <= length(s); p++) if (substr(s, p, 1) == "\"" && substr(s, p - 1, 1) != "\\") { t = substr(s, 1, p); break }
    }
    if (t == "" && match(s, /^[-a-zA-Z0-9_]+/)) t = substr(s, 1, RLENGTH)
    if (t == "") break
    n++; K_oc = K_oc (n > 1 ? "," : "") t; K_ou = K_ou (n > 1 ? "\037" : "") t
    s = substr(s, length(t) + 1); sub(/^[ \t]*,[ \t]*/, "", s)
  }
}
function rec(l,   w, st, en, n, r, i, best, rest) {
  if (l ~ /^[[:space:]]*#/ || l ~ /^[[:space:]]*$/) return 0
  # the words and where they start and end
  n = 0; r = l; i = 0
  while (match(r, /[^[:space:]]+/)) { n++; w[n] = substr(r, RSTART, RLENGTH); st[n] = i + RSTART; en[n] = i + RSTART + RLENGTH - 1; i += RSTART + RLENGTH - 1; r = substr(r, RSTART + RLENGTH) }
  best = 0
  for (i = n - 1; i >= 1; i--) if (w[i] in KT) { best = i; break }
  if (!best) return 0
  K_t = w[best]; rest = substr(l, en[best] + 1); sub(/^[[:space:]]+/, "", rest)
  match(rest, /^[^ ]+/); K_k = substr(rest, 1, RLENGTH); rest = substr(rest, RLENGTH + 1)
  sub(/^[[:space:]]+/, "", rest); K_n = rest
  if (best > 1) popts(substr(l, 1, st[best] - 1)); else { K_oc = ""; K_ou = "" }
  return 1
}
function render(oc, t, k, nm,   s) { s = oc " " t " " k " " nm; sub(/^[[:space:]]+/, "", s); return s }
"##;

/// Prints the shell assignments of the last key named `_N`, with its rank
/// among the keys of that name in `_kk`.
const AWK_LOOKUP: &str = r##"
function line(l) {
  if (!rec(l) || K_n == "" || K_n != ENVIRON["_N"]) return
  found++
  got = "_kf=1 _kk=" found " _kt=" sq(K_t) " _kkey=" sq(K_k) " _ko=" sq(K_ou)
}
function finish() { if (found) print got }
"##;

/// Prints the file with the `_K`th key named `_N` replaced by `_O` (the
/// options joined with commas), `_T`, `_KEY`, or removed when `_D` is set;
/// appended when there is none (`_K` empty).
const AWK_REWRITE: &str = r##"
function mine() { return render(ENVIRON["_O"], ENVIRON["_T"], ENVIRON["_KEY"], ENVIRON["_N"]) }
function out(s) { print s; printed++ }
function line(l) {
  if (!rec(l)) { out(l); return }
  if (K_n != "" && K_n == ENVIRON["_N"] && ++seen == ENVIRON["_K"]) { if (ENVIRON["_D"] == "") out(mine()); return }
  out(render(K_oc, K_t, K_k, K_n))
}
function finish() { if (ENVIRON["_K"] == "" && ENVIRON["_D"] == "") out(mine()); if (!printed) print "" }
"##;

impl SshAuthorizedKey {
    pub fn parse(r: &Resource) -> Result<SshAuthorizedKey, ParamError> {
        let name = text_param(r, "name")?.unwrap_or_else(|| r.title.clone());
        if name.contains(['\n', '\r']) {
            return Err(param_error(r, "name", "Names cannot include newline"));
        }
        let key_type = match text_param(r, "type")? {
            None => None,
            Some(t) => {
                let t = ALIASES
                    .iter()
                    .find(|(a, _)| *a == t)
                    .map(|(_, v)| v.to_string())
                    .unwrap_or(t);
                if !TYPES.contains(&t.as_str()) {
                    return Err(param_error(
                        r,
                        "type",
                        &format!(
                            "Invalid value {t:?}. Valid values are {}. Valid values match .",
                            TYPES.join(", ")
                        ),
                    ));
                }
                Some(t)
            }
        };
        let key = text_param(r, "key")?;
        if let Some(k) = &key
            && k.chars().any(char::is_whitespace)
        {
            return Err(param_error(
                r,
                "key",
                &format!("Key must not contain whitespace: {k}"),
            ));
        }
        let mut options = list_param(r, "options")?;
        if options.first().map(String::as_str) == Some("absent") {
            options.clear();
        }
        for o in &options {
            if !valid_option(o) {
                return Err(param_error(
                    r,
                    "options",
                    &format!(
                        "Option {o} is not valid. A single option must either be of the form 'option' or 'option=\"value\"'. Multiple options must be provided as an array"
                    ),
                ));
            }
        }
        let user = text_param(r, "user")?;
        let target = text_param(r, "target")?.filter(|t| t != "absent");
        if user.is_none() && target.is_none() {
            return Err(param_error(
                r,
                "user",
                "Attribute 'user' or 'target' is mandatory",
            ));
        }
        if user.as_deref().is_some_and(|u| u.contains(['\n', ':'])) {
            return Err(param_error(r, "user", "Invalid user name"));
        }
        Ok(SshAuthorizedKey {
            name,
            present: present_absent(r, "present")? == "present",
            key_type,
            key,
            user,
            target,
            options,
            drop_privileges: bool_param(r, "drop_privileges", true)?,
        })
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        let name = q(&self.name);
        // The user's entry: home for the default target, uid and gid for
        // what Puppet creates.
        out.push_str("_ku= _kuid= _kgid= _khome=\n");
        if let Some(u) = &self.user {
            let _ = writeln!(
                out,
                "_ku=$(getent passwd {}) || _ku=\nif [ -n \"$_ku\" ]; then _ifs=$IFS; IFS=:; set -- $_ku; IFS=$_ifs; _kuid=$3 _kgid=$4 _khome=$6; fi",
                q(u)
            );
        }
        match &self.target {
            Some(t) => out.push_str(&parsed::set_target(t)),
            None => out.push_str(
                "if [ -n \"$_khome\" ]; then _pf=\"$_khome/.ssh/authorized_keys\"; if [ -h \"$_pf\" ]; then _pf=$(readlink -f -- \"$_pf\") || _pf=\"$_khome/.ssh/authorized_keys\"; fi; else _pf=; fi\n",
            ),
        }
        let lookup = parsed::awk_program(&format!("{AWK_KEYS}{AWK_LOOKUP}"));
        let _ = writeln!(
            out,
            "_kf= _kk= _kt= _kkey= _ko= _chg=\nif [ -n \"$_pf\" ]; then eval \"$({})\"; fi",
            parsed::awk_on_target(&lookup, &[("_N", name.clone())])
        );
        let rewrite = parsed::awk_program(&format!("{AWK_KEYS}{AWK_REWRITE}"));
        let write = |delete: bool| {
            let awk = parsed::awk_on_target(
                &rewrite,
                &[
                    ("_N", name.clone()),
                    ("_K", "\"$_kk\"".into()),
                    ("_D", if delete { "1" } else { "''" }.into()),
                    ("_O", "\"$_koc\"".into()),
                    ("_T", "\"$_kt\"".into()),
                    ("_KEY", "\"$_kkey\"".into()),
                ],
            );
            let body = parsed::write_file(
                &format!("{HEADER}; {awk}"),
                "600",
                Some("\"$_kuid:$_kgid\""),
            );
            let own = if self.drop_privileges {
                ""
            } else {
                " && chown \"$_kuid:$_kgid\" -- \"$_pf\""
            };
            let no_user = match &self.user {
                None => "Cannot write SSH authorized keys without user".to_string(),
                Some(u) => format!("User '{}' does not exist", u.replace('\'', "'\\''")),
            };
            format!(
                "if [ -z \"$_kuid\" ]; then _rc=1 _out='{no_user}'\n\
                 else _d=$(dirname -- \"$_pf\"); _rc=0\n\
                 if [ ! -d \"$_d\" ]; then _out=$(mkdir -m 700 -- \"$_d\" 2>&1 && chown \"$_kuid:$_kgid\" -- \"$_d\" 2>&1); _rc=$?; fi\n\
                 if [ $_rc = 0 ]; then {body}if [ $_rc = 0 ]; then _out=$(chmod 600 -- \"$_pf\"{own} 2>&1); _rc=$?; fi; fi\n\
                 fi\n"
            )
        };
        let what = "$_o1";
        if !self.present {
            out.push_str("if [ -n \"$_kf\" ]; then _chg=ensure _p_ensure=present; fi\n");
            parsed::sync_changes(out, n, noop, &["ensure"], &write(true), what);
            return;
        }
        let opts_u = self.options.join("\u{1f}");
        let opts_c = self.options.join(",");
        out.push_str("if [ -z \"$_kf\" ]; then\n_chg=ensure _p_ensure=absent\n");
        let _ = writeln!(
            out,
            "_kt={} _kkey={} _koc={}",
            q(self.key_type.as_deref().unwrap_or("")),
            q(self.key.as_deref().unwrap_or("")),
            q(&opts_c)
        );
        parsed::sync_changes(out, n, noop, &["ensure"], &write(false), what);
        out.push_str("else\n");
        // Unchanged properties keep the line's values.
        out.push_str("_koc=$(printf '%s' \"$_ko\" | tr '\\037' ,)\n");
        let mut props = Vec::new();
        if let Some(t) = &self.key_type {
            props.push("type");
            let _ = writeln!(
                out,
                "if [ \"$_kt\" != {0} ]; then _chg=\"$_chg type\" _p_type=$_kt _kt={0}; fi",
                q(t)
            );
        }
        if let Some(k) = &self.key {
            props.push("key");
            let _ = writeln!(
                out,
                "if [ \"$_kkey\" != {0} ]; then _chg=\"$_chg key\" _p_key=$_kkey _kkey={0}; fi",
                q(k)
            );
        }
        props.push("options");
        let _ = writeln!(
            out,
            "if [ \"$_ko\" != {} ]; then _chg=\"$_chg options\" _p_options=$_ko _koc={}; fi",
            q(&opts_u),
            q(&opts_c)
        );
        parsed::sync_changes(out, n, noop, &props, &write(false), what);
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
            "ensure" => parsed::ensure_event(status, previous, self.present, detail),
            "type" => parsed::text_event(property, status, previous, &self.key_type, detail),
            "key" => parsed::text_event(property, status, previous, &self.key, detail),
            // Lists, `['absent']` when there are none.
            _ => {
                let list = |items: Vec<String>| {
                    let items = if items.is_empty() {
                        vec!["absent".to_string()]
                    } else {
                        items
                    };
                    Value::Array(items.into_iter().map(Value::String).collect())
                };
                let prev = list(if previous.is_empty() {
                    Vec::new()
                } else {
                    previous.split('\u{1f}').map(String::from).collect()
                });
                parsed::property_event(property, status, prev, list(self.options.clone()), detail)
            }
        }
    }
}

/// An option as the type accepts it: `word` or `word="value"`.
fn valid_option(o: &str) -> bool {
    let word = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    match o.split_once('=') {
        None => word(o),
        Some((k, v)) => word(k) && v.len() >= 2 && v.starts_with('"') && v.ends_with('"'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resource(params: Value) -> Resource {
        Resource::with_params("Ssh_authorized_key", "k@h", &params)
    }

    #[test]
    fn parameters_are_checked_as_puppet_does() {
        let k = SshAuthorizedKey::parse(&resource(
            json!({"user": "u", "type": "rsa", "key": "AAA", "options": "no-pty"}),
        ))
        .expect("parses");
        assert_eq!(k.key_type.as_deref(), Some("ssh-rsa"));
        assert_eq!(k.options, vec!["no-pty"]);
        let err = |p: Value| {
            SshAuthorizedKey::parse(&resource(p))
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(json!({"type": "rsa"})),
            "Parameter user failed on Ssh_authorized_key[k@h]: Attribute 'user' or 'target' is mandatory"
        );
        assert!(
            err(json!({"user": "u", "key": "A B"}))
                .contains("Key must not contain whitespace: A B")
        );
        assert!(err(json!({"user": "u", "type": "rsa1"})).contains("Invalid value \"rsa1\""));
        assert!(err(json!({"user": "u", "options": "a,b"})).contains("Option a,b is not valid"));
    }

    fn awk(program: &str, text: &str, env: &[(&str, &str)]) -> String {
        parsed::run_awk_on(&format!("{AWK_KEYS}{program}"), text, env).0
    }

    const KEYS: &str =
        "# c\nssh-ed25519 AAAU\nfrom=\"a,b\", no-pty  ssh-rsa  AAAB bob@desk\nssh-rsa AAAX  x y \n";

    #[test]
    fn keys_are_parsed_and_re_rendered_as_puppet_does() {
        assert_eq!(
            awk(AWK_LOOKUP, KEYS, &[("_N", "bob@desk")]),
            "_kf=1 _kk=1 _kt='ssh-rsa' _kkey='AAAB' _ko='from=\"a,b\"\x1fno-pty'\n"
        );
        assert!(!awk(AWK_LOOKUP, KEYS, &[("_N", "x y ")]).is_empty());
        assert_eq!(
            awk(
                AWK_REWRITE,
                KEYS,
                &[("_N", "new"), ("_T", "ssh-dss"), ("_KEY", "K"), ("_O", "")]
            ),
            "# c\nssh-ed25519 AAAU \nfrom=\"a,b\",no-pty ssh-rsa AAAB bob@desk\nssh-rsa AAAX x y \nssh-dss K new\n"
        );
        assert_eq!(
            awk(
                AWK_REWRITE,
                KEYS,
                &[("_N", "bob@desk"), ("_K", "1"), ("_D", "1")]
            ),
            "# c\nssh-ed25519 AAAU \nssh-rsa AAAX x y \n"
        );
    }

    #[test]
    fn options_events_show_lists() {
        let k = SshAuthorizedKey::parse(&resource(
            json!({"user": "u", "options": ["no-pty", "command=\"/bin/date\""]}),
        ))
        .expect("parses");
        let e = k.describe("options", EventStatus::Success, "", "");
        assert_eq!(
            e.message,
            "options changed ['absent'] to ['no-pty', 'command=\"/bin/date\"']"
        );
    }
}
