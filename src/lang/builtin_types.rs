//! The resource types built into Puppet 7 and their parameters, used to
//! reject unknown attributes the way Puppet does when it finishes a catalog.

use crate::lang::error::{ErrorKind, LResult, LangError};
use crate::lang::eval::{Evaluator, ResKind};
use crate::lang::eval_res::METAPARAMS;

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

impl<'l> Evaluator<'l> {
    /// Reject attributes that built-in types do not have.
    pub fn validate_builtin_params(&self) -> LResult<()> {
        for r in self.resources.iter().filter(|r| !r.virtual_ && !r.exported) {
            if r.kind != ResKind::Builtin && r.kind != ResKind::Stage {
                continue;
            }
            let lower = r.type_name.to_lowercase();
            if let Some((p, _)) = r.params.iter().find(|(p, _)| !accepts(&lower, p)) {
                let at = r
                    .loc
                    .as_ref()
                    .map(|l| format!(" (file: {}, line: {})", l.file, l.line))
                    .unwrap_or_default();
                return Err(LangError {
                    kind: ErrorKind::Load,
                    message: format!(
                        "no parameter named '{p}'{at} on {}[{}]{at}",
                        r.type_name, r.title
                    ),
                    loc: None,
                });
            }
        }
        Ok(())
    }
}
