//! The resource types built into Puppet 7 and their parameters, used to
//! reject unknown attributes the way Puppet does when it finishes a catalog,
//! and the namevar and attributes of a module's Ruby resource type (read
//! from its source).

use crate::lang::error::{ErrorKind, LangError};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Evaluator, ResKind};

/// Parameters every resource accepts (Puppet's metaparameters).
pub const METAPARAMS: &[&str] = &[
    "alias",
    "audit",
    "before",
    "loglevel",
    "noop",
    "notify",
    "require",
    "schedule",
    "stage",
    "subscribe",
    "tag",
];

/// (type, parameters) for Puppet 7's core types, from `puppet describe`.
const TYPES: &[(&str, &[&str])] = &[
    (
        "exec",
        &[
            "command",
            "creates",
            "cwd",
            "environment",
            "group",
            "logoutput",
            "onlyif",
            "path",
            "refresh",
            "refreshonly",
            "returns",
            "timeout",
            "tries",
            "try_sleep",
            "umask",
            "unless",
            "user",
        ],
    ),
    (
        "file",
        &[
            "backup",
            "checksum",
            "checksum_value",
            "content",
            "ctime",
            "ensure",
            "force",
            "group",
            "ignore",
            "links",
            "max_files",
            "mode",
            "mtime",
            "owner",
            "path",
            "purge",
            "recurse",
            "recurselimit",
            "replace",
            "selinux_ignore_defaults",
            "selrange",
            "selrole",
            "seltype",
            "seluser",
            "show_diff",
            "source",
            "source_permissions",
            "sourceselect",
            "staging_location",
            "target",
            "type",
            "validate_cmd",
            "validate_replacement",
        ],
    ),
    ("filebucket", &["name", "path", "port", "server"]),
    (
        "group",
        &[
            "allowdupe",
            "attribute_membership",
            "attributes",
            "auth_membership",
            "ensure",
            "forcelocal",
            "gid",
            "ia_load_module",
            "members",
            "name",
            "system",
        ],
    ),
    ("notify", &["message", "name", "withpath"]),
    (
        "package",
        &[
            "adminfile",
            "allow_virtual",
            "allowcdrom",
            "category",
            "command",
            "configfiles",
            "description",
            "enable_only",
            "ensure",
            "flavor",
            "install_only",
            "install_options",
            "instance",
            "mark",
            "name",
            "package_settings",
            "platform",
            "reinstall_on_refresh",
            "responsefile",
            "root",
            "source",
            "status",
            "uninstall_options",
            "vendor",
        ],
    ),
    (
        "resources",
        &["name", "purge", "unless_system_user", "unless_uid"],
    ),
    (
        "schedule",
        &[
            "name",
            "period",
            "periodmatch",
            "range",
            "repeat",
            "weekday",
        ],
    ),
    (
        "service",
        &[
            "binary",
            "control",
            "enable",
            "ensure",
            "flags",
            "hasrestart",
            "hasstatus",
            "logonaccount",
            "logonpassword",
            "manifest",
            "name",
            "path",
            "pattern",
            "restart",
            "start",
            "status",
            "stop",
            "timeout",
        ],
    ),
    ("stage", &["name"]),
    (
        "tidy",
        &[
            "age",
            "backup",
            "matches",
            "max_files",
            "path",
            "recurse",
            "rmdirs",
            "size",
            "type",
        ],
    ),
    (
        "user",
        &[
            "allowdupe",
            "attribute_membership",
            "attributes",
            "auth_membership",
            "auths",
            "comment",
            "ensure",
            "expiry",
            "forcelocal",
            "gid",
            "groups",
            "home",
            "ia_load_module",
            "iterations",
            "key_membership",
            "keys",
            "loginclass",
            "managehome",
            "membership",
            "name",
            "password",
            "password_max_age",
            "password_min_age",
            "password_warn_days",
            "profile_membership",
            "profiles",
            "project",
            "purge_ssh_keys",
            "role_membership",
            "roles",
            "salt",
            "shell",
            "system",
            "uid",
        ],
    ),
    ("whit", &["name"]),
    ("component", &["name"]),
];

/// Types whose resources may name a provider.
const WITH_PROVIDER: &[&str] = &["exec", "file", "group", "package", "service", "user"];

/// Names of the built-in resource types.
pub fn is_builtin(name: &str) -> bool {
    TYPES.iter().any(|(t, _)| *t == name)
}

fn accepts(type_name: &str, param: &str) -> bool {
    let Some((_, params)) = TYPES.iter().find(|(t, _)| *t == type_name) else {
        return true;
    };
    params.contains(&param)
        || METAPARAMS.contains(&param)
        || (param == "provider" && WITH_PROVIDER.contains(&type_name))
}

/// What ferry reads of a module's Ruby resource type
/// (`lib/puppet/type/NAME.rb`).
#[derive(Debug, Clone, PartialEq)]
pub struct RubyType {
    pub namevar: String,
    /// Its parameters and properties (`newparam(:x)`, `newproperty(:x)`,
    /// `ensure` for `ensurable`), or `None` when the source makes some
    /// without a literal name (in a loop, through a helper): then every
    /// attribute is accepted.
    pub attributes: Option<Vec<String>>,
}

impl RubyType {
    pub fn read(src: &str) -> RubyType {
        RubyType {
            namevar: ruby_type_namevar(src),
            attributes: ruby_type_attributes(src),
        }
    }

    /// Does Puppet's `validattr?` accept `param`? `provider` is always
    /// accepted (Puppet adds it once the type has a provider).
    fn accepts(&self, param: &str) -> bool {
        self.attributes.as_ref().is_none_or(|a| {
            a.iter().any(|x| x == param)
                || METAPARAMS.contains(&param)
                || matches!(param, "name" | "provider")
        })
    }
}

/// The literal names of a Ruby type's `newparam`/`newproperty` calls;
/// `None` when one of them has no literal name, or there are none.
fn ruby_type_attributes(src: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for kw in ["newparam", "newproperty"] {
        for (pos, _) in src.match_indices(kw) {
            let rest = src.get(pos + kw.len()..).unwrap_or("");
            if rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let rest = rest.trim_start_matches(['(', ' ']);
            let sym = rest.strip_prefix(':')?;
            let name: String = sym
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() {
                return None;
            }
            out.push(name);
        }
    }
    if out.is_empty() {
        return None;
    }
    if src.contains("ensurable") {
        out.push("ensure".into());
    }
    Some(out)
}

impl<'l> Evaluator<'l> {
    /// Reject attributes that built-in types and modules' Ruby types do not
    /// have.
    pub fn validate_builtin_params(&self) -> EvalResult<()> {
        for r in self.resources.iter().filter(|r| !r.virtual_ && !r.exported) {
            if r.kind != ResKind::Builtin && r.kind != ResKind::Stage {
                continue;
            }
            let lower = r.type_name.to_lowercase();
            let module_type = self.type_cache.get(&lower).and_then(Option::as_ref);
            let ok = |p: &str| match module_type {
                Some(t) => t.accepts(p),
                None => accepts(&lower, p),
            };
            if let Some((p, _)) = r.params.iter().find(|(p, _)| !ok(p)) {
                let at = r
                    .loc
                    .as_ref()
                    .map(|l| format!(" (file: {}, line: {})", l.file, l.line))
                    .unwrap_or_default();
                return Err((LangError {
                    kind: ErrorKind::Load,
                    message: format!(
                        "no parameter named '{p}'{at} on {}[{}]{at}",
                        r.type_name, r.title
                    ),
                    loc: None,
                })
                .into());
            }
        }
        Ok(())
    }
}

/// The namevar a Ruby resource type declares (`newparam(:x, namevar: true)`,
/// `:namevar => true`, or `isnamevar` in the parameter's block); `name`
/// when none is marked.
fn ruby_type_namevar(src: &str) -> String {
    let starts: Vec<(usize, &str)> = src
        .match_indices("newparam(")
        .chain(src.match_indices("newproperty("))
        .collect();
    let mut starts = starts;
    starts.sort();
    for (i, (pos, kw)) in starts.iter().enumerate() {
        let rest = src.get(pos + kw.len()..).unwrap_or("");
        let Some(sym) = rest.trim_start().strip_prefix(':') else {
            continue;
        };
        let name: String = sym
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let end = starts.get(i + 1).map_or(src.len(), |(p, _)| *p);
        let body = src.get(*pos..end).unwrap_or("");
        let header = body.lines().next().unwrap_or("");
        let marked = header.contains("namevar: true")
            || header.contains(":namevar => true")
            || body.contains("isnamevar");
        if *kw == "newparam(" && marked && !name.is_empty() {
            return name;
        }
    }
    "name".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ruby_type_has_the_attributes_it_names() {
        let t = RubyType::read(
            "Puppet::Type.newtype(:knob) do\n  ensurable\n  newparam(:key, namevar: true)\n  newproperty :val do\n  end\nend\n",
        );
        assert_eq!(t.namevar, "key");
        assert!(t.accepts("val") && t.accepts("ensure") && t.accepts("require"));
        assert!(t.accepts("name") && t.accepts("provider"));
        assert!(!t.accepts("value"));
    }

    #[test]
    fn a_ruby_type_making_attributes_in_a_loop_accepts_any() {
        let t = RubyType::read("[:a, :b].each do |p|\n  newparam(p)\nend\n");
        assert_eq!(t.attributes, None);
        assert!(t.accepts("anything"));
        assert!(RubyType::read("create_parameters\n").accepts("anything"));
    }
}
