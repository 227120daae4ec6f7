//! Puppet's `host` type (the host_core module) with its `parsed`
//! provider: one line `IP<TAB>NAME[<TAB>ALIASES][<TAB># COMMENT]` per
//! host in a hosts file (`target`, default `/etc/hosts`). The step reads
//! the file on the target with awk as Puppet's parser does, compares
//! `ensure`, `ip`, `host_aliases` and `comment`, and rewrites the whole
//! file (every host line re-rendered with tabs, other lines kept, Puppet's
//! three `# HEADER` lines on top) when something is out of sync
//! ([`super::parsed`]). Only the resource's own target file is searched
//! (Puppet also looks for the name in `/etc/hosts` and moves the line).
//! Aliases emptied with `host_aliases => []` are written as an empty
//! field, which reads back as no aliases; the program remembers (`_hE`)
//! which hosts it emptied so later rewrites in the same run keep the
//! field, as Puppet's in-memory records do.

use std::fmt::Write as _;

use serde_json::Value;

use super::parsed::{self, HEADER};
use super::{
    EventStatus, EventText, ParamError, list_param, param_error, present_absent, text_param,
};
use crate::apply::catalog::Resource;
use crate::apply::program::q;

#[derive(Debug, Clone)]
pub struct Host {
    pub name: String,
    pub present: bool,
    pub ip: Option<String>,
    /// `host_aliases`, when managed (an empty list is managed: no aliases).
    pub aliases: Option<Vec<String>>,
    pub comment: Option<String>,
    pub target: String,
}

/// What the failure of a write says.
const WHAT: &str = "could not write $_pf: $_o1";

/// The awk functions that parse and render host lines (Puppet's
/// `hosts_pattern` and `to_line`).
const AWK_HOST: &str = r##"
function rec(l,   r, i) {
  if (l ~ /^#/ || l ~ /^[[:space:]]*$/) return 0
  if (l !~ /^[0-9a-f:][^[:space:]]+[[:space:]]+[^#[:space:]+][^[:space:]]+/) return 0
  match(l, /^[^[:space:]]+/); H_ip = substr(l, 1, RLENGTH); r = substr(l, RLENGTH + 1)
  sub(/^[[:space:]]+/, "", r)
  match(r, /^[^[:space:]]+/); H_name = substr(r, 1, RLENGTH); r = substr(r, RLENGTH + 1)
  sub(/^[[:space:]]+/, "", r)
  i = index(r, "#")
  if (i) { H_al = substr(r, 1, i - 1); sub(/[[:space:]]+$/, "", H_al); H_co = substr(r, i + 1); sub(/^[[:space:]]+/, "", H_co) }
  else { H_al = r; H_co = "" }
  gsub(/[[:space:]]+/, " ", H_al)
  H_als = (H_al != "")
  # Emptied in this run (Puppet keeps its records in memory): written
  # back with the empty field.
  if (!H_als && index("\n" ENVIRON["_E"] "\n", "\n" ENVIRON["_PF"] "|" H_name "\n")) H_als = 1
  return 1
}
function render(ip, name, al, als, co,   s) {
  s = ip "\t" name
  if (als) s = s "\t" al
  if (co != "") s = s "\t# " co
  return s
}
"##;

/// Prints the shell assignments of the line for host `_N`: the last one
/// when several have the name (Puppet matches every line to its resource
/// in turn, so the last wins), with its rank among them in `_hk`.
const AWK_LOOKUP: &str = r##"
function line(l,   a, n, i, j) {
  if (!rec(l) || H_name != ENVIRON["_N"]) return
  found++; n = split(H_al, a, " "); j = ""
  for (i = 1; i <= n; i++) j = j (i > 1 ? " " : "") a[i]
  got = "_hf=1 _hk=" found " _hip=" sq(H_ip) " _hal=" sq(H_al) " _hals=" (H_als ? 1 : "") " _haln=" sq(j) " _hco=" sq(H_co)
}
function finish() { if (found) print got }
"##;

/// Prints the file with the `_K`th line for host `_N` replaced by the
/// line of `_IP`, `_AL` (when `_ALS`), `_CO`, or removed when `_D` is
/// set; appended when there is none (`_K` empty).
const AWK_REWRITE: &str = r##"
function mine() { return render(ENVIRON["_IP"], ENVIRON["_N"], ENVIRON["_AL"], ENVIRON["_ALS"] != "", ENVIRON["_CO"]) }
function out(s) { print s; printed++ }
function line(l) {
  if (!rec(l)) { out(l); return }
  if (H_name == ENVIRON["_N"] && ++seen == ENVIRON["_K"]) { if (ENVIRON["_D"] == "") out(mine()); return }
  out(render(H_ip, H_name, H_al, H_als, H_co))
}
function finish() { if (ENVIRON["_K"] == "" && ENVIRON["_D"] == "") out(mine()); if (!printed) print "" }
"##;

impl Host {
    pub fn parse(r: &Resource) -> Result<Host, ParamError> {
        let name = text_param(r, "name")?.unwrap_or_else(|| r.title.clone());
        let valid_part = |p: &str| {
            let word = |c: char| c.is_alphanumeric() || c == '_';
            !p.is_empty()
                && p.chars().next().is_some_and(word)
                && p.chars().last().is_some_and(word)
                && p.chars().all(|c| word(c) || c == '-')
        };
        if name.contains(['\n', '\r']) {
            return Err(param_error(r, "name", "Hostname cannot include newline"));
        }
        if !name.split('.').all(valid_part) {
            return Err(param_error(r, "name", "Invalid host name"));
        }
        let ip = text_param(r, "ip")?;
        if let Some(ip) = &ip
            && !valid_ip(ip)
        {
            return Err(param_error(r, "ip", &format!("Invalid IP address {ip:?}")));
        }
        let aliases = match r.param("host_aliases") {
            None | Some(Value::Null) => None,
            Some(_) => {
                let list = list_param(r, "host_aliases")?;
                for a in &list {
                    if a.chars().any(char::is_whitespace) {
                        return Err(param_error(
                            r,
                            "host_aliases",
                            "Host aliases cannot include whitespace",
                        ));
                    }
                    if a.is_empty() {
                        return Err(param_error(
                            r,
                            "host_aliases",
                            "Host aliases cannot be an empty string. Use an empty array to delete all host_aliases ",
                        ));
                    }
                }
                Some(list)
            }
        };
        let comment = text_param(r, "comment")?;
        if comment.as_deref().is_some_and(|c| c.contains(['\n', '\r'])) {
            return Err(param_error(r, "comment", "Comment cannot include newline"));
        }
        Ok(Host {
            name,
            present: present_absent(r, "present")? == "present",
            ip,
            aliases,
            comment,
            target: text_param(r, "target")?.unwrap_or_else(|| "/etc/hosts".into()),
        })
    }

    fn aliases_text(&self) -> Option<String> {
        self.aliases.as_ref().map(|a| a.join(" "))
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        let name = q(&self.name);
        out.push_str(&parsed::set_target(&self.target));
        let lookup = parsed::awk_program(&format!("{AWK_HOST}{AWK_LOOKUP}"));
        let _ = writeln!(
            out,
            "_hf= _hk= _hip= _hal= _hals= _haln= _hco= _chg=\neval \"$({})\"",
            parsed::awk_on_target(
                &lookup,
                &[
                    ("_N", name.clone()),
                    ("_E", "\"${_hE:-}\"".into()),
                    ("_PF", "\"$_pf\"".into())
                ]
            )
        );
        let rewrite = parsed::awk_program(&format!("{AWK_HOST}{AWK_REWRITE}"));
        let write = |delete: bool| {
            let d = if delete { "1" } else { "''" };
            let awk = parsed::awk_on_target(
                &rewrite,
                &[
                    ("_N", name.clone()),
                    ("_K", "\"$_hk\"".into()),
                    ("_D", d.into()),
                    ("_IP", "\"$_hip\"".into()),
                    ("_AL", "\"$_hal\"".into()),
                    ("_ALS", "\"$_hals\"".into()),
                    ("_CO", "\"$_hco\"".into()),
                    ("_E", "\"${_hE:-}\"".into()),
                    ("_PF", "\"$_pf\"".into()),
                ],
            );
            // Hosts whose aliases this run emptied: Puppet's records stay
            // in memory for the run, so later writes keep the empty
            // field, which the parser would read back as no aliases.
            let keep = if delete {
                String::new()
            } else {
                format!(
                    "if [ -n \"$_hals\" ] && [ -z \"$_hal\" ]; then _hE=\"$_hE\n$_pf|\"{name}; fi; "
                )
            };
            format!(
                "{}if [ $_rc = 0 ]; then _hE=$(printf '%s\\n' \"${{_hE:-}}\" | grep -vxF -e \"$_pf|\"{name}); {keep}fi\n",
                parsed::write_file(&format!("{HEADER}; {awk}"), "600", None)
            )
        };
        if !self.present {
            out.push_str("if [ -n \"$_hf\" ]; then _chg=ensure _p_ensure=present; fi\n");
            parsed::sync_changes(out, n, noop, &["ensure"], &write(true), WHAT);
            return;
        }
        out.push_str("if [ -z \"$_hf\" ]; then\n_chg=ensure _p_ensure=absent\n");
        match &self.ip {
            Some(ip) => {
                let _ = writeln!(out, "_hip={}", q(ip));
                if let Some(a) = self.aliases_text() {
                    let _ = writeln!(out, "_hal={} _hals=1", q(&a));
                }
                let _ = writeln!(out, "_hco={}", q(self.comment.as_deref().unwrap_or("")));
                parsed::sync_changes(out, n, noop, &["ensure"], &write(false), WHAT);
            }
            None if noop => parsed::events(out, n, &["ensure"], "noop"),
            None => {
                parsed::events(out, n, &["ensure"], "success");
                let _ = writeln!(out, "_fail {n} 'ip is a required attribute for hosts'");
            }
        }
        out.push_str("else\n");
        let mut props = Vec::new();
        if let Some(ip) = &self.ip {
            props.push("ip");
            let _ = writeln!(
                out,
                "if [ \"$_hip\" != {0} ]; then _chg=\"$_chg ip\" _p_ip=$_hip _hip={0}; fi",
                q(ip)
            );
        }
        if let Some(a) = self.aliases_text() {
            props.push("host_aliases");
            let _ = writeln!(
                out,
                "if [ \"$_haln\" != {0} ]; then _chg=\"$_chg host_aliases\" _p_host_aliases=$_haln _hal={0} _hals=1; fi",
                q(&a)
            );
        }
        if let Some(c) = &self.comment {
            props.push("comment");
            let _ = writeln!(
                out,
                "if [ \"$_hco\" != {0} ]; then _chg=\"$_chg comment\" _p_comment=$_hco _hco={0}; fi",
                q(c)
            );
        }
        parsed::sync_changes(out, n, noop, &props, &write(false), WHAT);
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
            "ip" => parsed::text_event(property, status, previous, &self.ip, detail),
            "comment" => parsed::text_event(property, status, previous, &self.comment, detail),
            // An ordered list: the current value is an array shown joined
            // with spaces, unquoted; the wanted one is the joined string.
            _ => {
                let wanted = self.aliases_text().unwrap_or_default();
                let (prev_value, is) = if previous.is_empty() {
                    (Value::String("absent".into()), "'absent'".to_string())
                } else {
                    (
                        Value::Array(
                            previous
                                .split(' ')
                                .map(|s| Value::String(s.into()))
                                .collect(),
                        ),
                        previous.to_string(),
                    )
                };
                let should = super::display(&wanted);
                let message = match status {
                    EventStatus::Noop => format!("current_value {is}, should be {should} (noop)"),
                    EventStatus::Failure => {
                        format!("change from {is} to {should} failed: {}", detail.trim())
                    }
                    EventStatus::Success => {
                        parsed::changed(property, previous.is_empty(), false, &is, &should)
                    }
                };
                EventText {
                    previous: prev_value,
                    desired: Value::String(wanted),
                    message,
                    redacted: false,
                }
            }
        }
    }
}

/// An IPv4 address (four numbers up to 255) or an IPv6 one (with an
/// optional `%zone`), as the host type's validation accepts.
fn valid_ip(ip: &str) -> bool {
    let v4 = {
        let parts: Vec<&str> = ip.split('.').collect();
        parts.len() == 4
            && parts.iter().all(|p| {
                !p.is_empty()
                    && p.len() <= 3
                    && p.bytes().all(|b| b.is_ascii_digit())
                    && p.parse::<u16>().is_ok_and(|v| v <= 255)
            })
    };
    let v6 = {
        let t = ip.trim();
        let addr = t.split_once('%').map(|(a, _)| a).unwrap_or(t);
        addr.parse::<std::net::Ipv6Addr>().is_ok()
    };
    (v4 || v6) && !ip.contains(['\n', '\r'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resource(params: Value) -> Resource {
        Resource::with_params("Host", "web1.example.com", &params)
    }

    #[test]
    fn bad_values_are_refused_as_puppet_words_them() {
        let err = |p: Value| {
            Host::parse(&resource(p))
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(json!({"ip": "10.0.0.256"})),
            "Parameter ip failed on Host[web1.example.com]: Invalid IP address \"10.0.0.256\""
        );
        assert!(err(json!({"host_aliases": ["a b"]})).contains("cannot include whitespace"));
        assert!(err(json!({"comment": "a\nb"})).contains("Comment cannot include newline"));
        assert!(err(json!({"name": "bad_.-x"})).contains("Invalid host name"));
        assert!(Host::parse(&resource(json!({"ip": "fe80::1%eth0"}))).is_ok());
    }

    /// Runs the host script for `h` on a hosts file holding `before`.
    fn apply(h: &Host, before: Option<&str>) -> (String, String) {
        let dir =
            std::env::temp_dir().join(format!("ferry-host-{}-{}", std::process::id(), h.name));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("hosts");
        if let Some(b) = before {
            std::fs::write(&file, b).expect("write");
        }
        let h = Host {
            target: file.display().to_string(),
            ..h.clone()
        };
        let mut script = String::from("_ev() { echo \"ev $*\"; }\n_fail() { echo \"fail $*\"; }\n");
        h.script(&mut script, 0, false);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&script)
            .output()
            .expect("sh runs");
        let after = std::fs::read_to_string(&file).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        let body: String = after
            .lines()
            .filter(|l| !l.starts_with("# HEADER"))
            .map(|l| format!("{l}\n"))
            .collect();
        (String::from_utf8_lossy(&out.stdout).into_owned(), body)
    }

    fn host(name: &str) -> Host {
        Host {
            name: name.into(),
            present: true,
            ip: Some("10.0.0.5".into()),
            aliases: None,
            comment: None,
            target: String::new(),
        }
    }

    #[test]
    fn lines_are_parsed_and_re_rendered_as_puppet_does() {
        let before = "# HEADER: old\n127.0.0.1 localhost\n# note\n\n10.0.0.1 web1.example.com  web1   www # front end\n10.0.0.2 db   a  b  \nnot a host line\n\n\n";
        let h = Host {
            aliases: Some(vec!["web1".into(), "w3".into()]),
            comment: Some("back end".into()),
            ..host("web1.example.com")
        };
        let (events, after) = apply(&h, Some(before));
        assert_eq!(
            events,
            "ev 0 ip success 10.0.0.1\nev 0 host_aliases success web1 www\nev 0 comment success front end\n"
        );
        assert_eq!(
            after,
            "127.0.0.1\tlocalhost\n# note\n\n10.0.0.5\tweb1.example.com\tweb1 w3\t# back end\n10.0.0.2\tdb\ta b \nnot a host line\n"
        );
        // In sync now: nothing happens.
        let (events, _) = apply(&h, Some(&after));
        assert_eq!(events, "");
    }

    #[test]
    fn new_and_removed_hosts() {
        let (events, after) = apply(&host("new.example.com"), None);
        assert_eq!(events, "ev 0 ensure success absent\n");
        assert_eq!(after, "10.0.0.5\tnew.example.com\n");
        let gone = Host {
            present: false,
            ..host("old")
        };
        let (events, after) = apply(&gone, Some("10.0.0.9 old o\n"));
        assert_eq!(events, "ev 0 ensure success present\n");
        assert_eq!(after, "\n");
        // Of two lines with the name, the last is the resource's.
        let (events, after) = apply(&gone, Some("10.0.0.8 old\n10.0.0.9 old o\n"));
        assert_eq!(events, "ev 0 ensure success present\n");
        assert_eq!(after, "10.0.0.8\told\n");
    }
}
