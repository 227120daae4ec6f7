//! Puppet's directory environments: an environment is the directory
//! `<dir>/<name>` of the first `environmentpath` entry that has one, and
//! its `environment.conf` (Puppet's settings-file syntax: `key = value`
//! lines, `#` comments, an optional `[main]` section) may set `modulepath`
//! (default `modules:$basemodulepath`, `:`-separated, `$basemodulepath`
//! and `$environment` interpolated, relative entries under the
//! environment, a `*` glob in an entry's last segment expanded),
//! `manifest` (default `manifests`), `config_version` (a command whose
//! output is the catalog's version) and `environment_timeout`. Other
//! sections and unknown settings are ignored with a warning, as Puppet
//! does. Environment names are Puppet's (`[a-z0-9_]+`), so a name never
//! leaves the environmentpath. Files are read through the compiler's
//! [`Loader`]; running `config_version` is the caller's business.

use std::path::{Path, PathBuf};

use crate::lang::loader::Loader;

/// Puppet's default environment name.
pub const DEFAULT_ENVIRONMENT: &str = "production";

/// Longest environment name taken.
const MAX_NAME: usize = 255;

/// Why an environment cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EnvironmentError {
    #[error("'{0}' is not a valid environment name (lower-case letters, digits and underscores)")]
    BadName(String),
    #[error("there is no environment '{0}' on the environmentpath")]
    NotFound(String),
    /// A line of `environment.conf` that cannot be used.
    #[error("{file}:{line}: {message}")]
    Conf {
        file: String,
        line: usize,
        message: String,
    },
}

/// How long a loaded environment may be reused (Puppet's
/// `environment_timeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeout {
    Seconds(u64),
    Unlimited,
}

impl Timeout {
    /// Puppet's TTL syntax: `0`, `30`, `5m` (`s`, `m`, `h`, `d`, `y`),
    /// `unlimited` or `infinity`.
    pub fn parse(text: &str) -> Option<Timeout> {
        let t = text.trim();
        if t == "unlimited" || t == "infinity" {
            return Some(Timeout::Unlimited);
        }
        let (digits, unit) = match t.char_indices().last() {
            Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c),
            _ => (t, 's'),
        };
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let n: u64 = digits.parse().ok()?;
        let scale = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86400,
            'y' => 365 * 86400,
            _ => return None,
        };
        n.checked_mul(scale).map(Timeout::Seconds)
    }
}

/// An environment found on the environmentpath, its `environment.conf`
/// applied.
#[derive(Debug, Clone)]
pub struct Environment {
    pub name: String,
    pub dir: PathBuf,
    /// The main manifest: a `.pp` file or a directory of them (it need
    /// not exist: then the environment has no main code).
    pub manifest: PathBuf,
    /// The whole modulepath, in order.
    pub modulepath: Vec<PathBuf>,
    /// The `config_version` command, when set.
    pub config_version: Option<String>,
    /// `environment_timeout` from environment.conf, when set.
    pub timeout: Option<Timeout>,
    /// What Puppet would warn about in environment.conf (ignored
    /// sections and settings).
    pub warnings: Vec<String>,
}

/// Checks an environment name as Puppet does (`[a-z0-9_]+`).
pub fn check_name(name: &str) -> Result<(), EnvironmentError> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(EnvironmentError::BadName(name.to_string()))
    }
}

/// The settings environment.conf may hold.
const SETTINGS: [&str; 7] = [
    "modulepath",
    "manifest",
    "config_version",
    "environment_timeout",
    "environment_data_provider",
    "static_catalogs",
    "rich_data",
];

/// One setting as written: its value and line.
struct Setting {
    value: String,
    line: usize,
}

#[derive(Default)]
struct Conf {
    modulepath: Option<Setting>,
    manifest: Option<Setting>,
    config_version: Option<Setting>,
    environment_timeout: Option<Setting>,
    warnings: Vec<String>,
}

/// Reads environment.conf's text (`file` names it in errors).
fn parse_conf(text: &str, file: &str) -> Result<Conf, EnvironmentError> {
    let mut conf = Conf::default();
    let mut section = "main".to_string();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(name) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            section = name.trim().to_string();
            if section != "main" {
                conf.warnings.push(format!(
                    "{file}:{line}: environment.conf may not have sections; [{section}] is ignored"
                ));
            }
            continue;
        }
        let Some((key, value)) = l.split_once('=') else {
            return Err(EnvironmentError::Conf {
                file: file.to_string(),
                line,
                message: format!("could not match line '{l}' (expected 'setting = value')"),
            });
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(EnvironmentError::Conf {
                file: file.to_string(),
                line,
                message: format!("'{key}' is not a setting name"),
            });
        }
        if section != "main" {
            continue;
        }
        let setting = Some(Setting {
            value: value.trim().to_string(),
            line,
        });
        match key {
            "modulepath" => conf.modulepath = setting,
            "manifest" => conf.manifest = setting,
            "config_version" => conf.config_version = setting,
            "environment_timeout" => conf.environment_timeout = setting,
            k if SETTINGS.contains(&k) => {}
            k => conf.warnings.push(format!(
                "{file}:{line}: unknown setting '{k}' in environment.conf is ignored (known: {})",
                SETTINGS.join(", ")
            )),
        }
    }
    Ok(conf)
}

/// Finds `name` on `environmentpath` and applies its environment.conf,
/// with `basemodulepath` standing for `$basemodulepath`.
pub fn load(
    loader: &dyn Loader,
    environmentpath: &[PathBuf],
    name: &str,
    basemodulepath: &[PathBuf],
) -> Result<Environment, EnvironmentError> {
    check_name(name)?;
    let dir = environmentpath
        .iter()
        .map(|root| root.join(name))
        .find(|dir| loader.is_dir(dir))
        .ok_or_else(|| EnvironmentError::NotFound(name.to_string()))?;
    let conf_path = dir.join("environment.conf");
    let file = conf_path.display().to_string();
    let conf = if loader.is_file(&conf_path) {
        let text = loader
            .read(&conf_path)
            .map_err(|e| EnvironmentError::Conf {
                file: file.clone(),
                line: 0,
                message: format!("cannot read: {e}"),
            })?;
        parse_conf(&text, &file)?
    } else {
        Conf::default()
    };
    let bad = |line: usize, message: String| EnvironmentError::Conf {
        file: file.clone(),
        line,
        message,
    };
    let interpolate = |s: &Setting| -> Result<String, EnvironmentError> {
        let mut out = String::new();
        let mut rest = s.value.as_str();
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let (var, tail) = match after.strip_prefix('{') {
                Some(braced) => match braced.split_once('}') {
                    Some((v, t)) => (v, t),
                    None => return Err(bad(s.line, "unclosed '${'".into())),
                },
                None => {
                    let end = after
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(after.len());
                    (&after[..end], &after[end..])
                }
            };
            match var {
                "environment" => out.push_str(name),
                // Kept for the modulepath's own expansion below.
                "basemodulepath" => out.push_str("$basemodulepath"),
                other => {
                    return Err(bad(
                        s.line,
                        format!(
                            "'${other}' cannot be used here (only $basemodulepath and $environment)"
                        ),
                    ));
                }
            }
            rest = tail;
        }
        out.push_str(rest);
        Ok(out)
    };
    let under_env = |p: &str| {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            dir.join(p)
        }
    };
    let modulepath = match &conf.modulepath {
        None => {
            let mut path = vec![dir.join("modules")];
            path.extend(basemodulepath.iter().cloned());
            path
        }
        Some(s) => {
            let value = interpolate(s)?;
            let mut path = Vec::new();
            for entry in value.split(':').filter(|e| !e.is_empty()) {
                if entry == "$basemodulepath" {
                    path.extend(basemodulepath.iter().cloned());
                } else if entry.contains("$basemodulepath") {
                    return Err(bad(
                        s.line,
                        "$basemodulepath must be a modulepath entry of its own".into(),
                    ));
                } else {
                    path.extend(expand_glob(loader, &under_env(entry)));
                }
            }
            path
        }
    };
    let manifest = match &conf.manifest {
        None => dir.join("manifests"),
        Some(s) => under_env(&interpolate(s)?),
    };
    let config_version = match &conf.config_version {
        None => None,
        Some(s) if s.value.is_empty() => None,
        Some(s) => Some(under_env(&interpolate(s)?).display().to_string()),
    };
    let timeout = match &conf.environment_timeout {
        None => None,
        Some(s) => Some(Timeout::parse(&s.value).ok_or_else(|| {
            bad(
                s.line,
                format!(
                    "environment_timeout '{}' is not a number of seconds, a duration such as 5m, or unlimited",
                    s.value
                ),
            )
        })?),
    };
    let mut modulepath_unique: Vec<PathBuf> = Vec::with_capacity(modulepath.len());
    for p in modulepath {
        if !modulepath_unique.contains(&p) {
            modulepath_unique.push(p);
        }
    }
    Ok(Environment {
        name: name.to_string(),
        dir,
        manifest,
        modulepath: modulepath_unique,
        config_version,
        timeout,
        warnings: conf.warnings,
    })
}

/// A path whose last segment holds `*`, `?` or `[`: the matching
/// directories, sorted (as Puppet's `Dir.glob`); any other path as is.
fn expand_glob(loader: &dyn Loader, path: &Path) -> Vec<PathBuf> {
    let Some(last) = path.file_name().and_then(|n| n.to_str()) else {
        return vec![path.to_path_buf()];
    };
    if !last.contains(['*', '?', '[']) {
        return vec![path.to_path_buf()];
    }
    let Some(parent) = path.parent() else {
        return Vec::new();
    };
    let pattern = wildmatch::WildMatch::new(last);
    loader
        .list(parent)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with('.') && pattern.matches(n))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::loader::FsLoader;

    fn env_with(conf: &str) -> (tempfile::TempDir, Result<Environment, EnvironmentError>) {
        let root = tempfile::tempdir().expect("dir");
        let dir = root.path().join("dev");
        std::fs::create_dir_all(dir.join("site/a")).expect("mkdir");
        std::fs::create_dir_all(dir.join("site/b")).expect("mkdir");
        std::fs::write(dir.join("environment.conf"), conf).expect("write");
        let base = [PathBuf::from("/srv/base1"), PathBuf::from("/srv/base2")];
        let env = load(&FsLoader, &[root.path().to_path_buf()], "dev", &base);
        (root, env)
    }

    #[test]
    fn defaults_without_environment_conf() {
        let root = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(root.path().join("production")).expect("mkdir");
        let env = load(
            &FsLoader,
            &[root.path().to_path_buf()],
            "production",
            &[PathBuf::from("/srv/base")],
        )
        .expect("env");
        let dir = root.path().join("production");
        assert_eq!(env.manifest, dir.join("manifests"));
        assert_eq!(
            env.modulepath,
            vec![dir.join("modules"), PathBuf::from("/srv/base")]
        );
        assert!(env.config_version.is_none() && env.timeout.is_none());
    }

    #[test]
    fn environment_conf_settings_as_puppet_reads_them() {
        let (root, env) = env_with(
            "# comment\nmodulepath = site/*:$basemodulepath:/opt/$environment/mods\nmanifest=site.pp\nconfig_version = bin/version\nenvironment_timeout = 5m\nfoo = bar\n[agent]\nmodulepath = ignored\n",
        );
        let env = env.expect("env");
        let dir = root.path().join("dev");
        assert_eq!(
            env.modulepath,
            vec![
                dir.join("site/a"),
                dir.join("site/b"),
                PathBuf::from("/srv/base1"),
                PathBuf::from("/srv/base2"),
                PathBuf::from("/opt/dev/mods"),
            ]
        );
        assert_eq!(env.manifest, dir.join("site.pp"));
        assert_eq!(
            env.config_version.as_deref(),
            Some(dir.join("bin/version").to_str().expect("utf8"))
        );
        assert_eq!(env.timeout, Some(Timeout::Seconds(300)));
        assert_eq!(env.warnings.len(), 2, "{:?}", env.warnings);
    }

    #[test]
    fn bad_lines_name_the_file_and_line() {
        let (_root, env) = env_with("modulepath = $codedir/modules\n");
        let e = env.expect_err("unknown variable").to_string();
        assert!(e.ends_with("environment.conf:1: '$codedir' cannot be used here (only $basemodulepath and $environment)"), "{e}");
        let (_root, env) = env_with("\njust words\n");
        assert!(
            env.expect_err("bad line")
                .to_string()
                .contains(":2: could not match line")
        );
        let (_root, env) = env_with("environment_timeout = soon\n");
        assert!(
            env.expect_err("bad ttl")
                .to_string()
                .contains(":1: environment_timeout 'soon'")
        );
    }

    #[test]
    fn names_never_leave_the_environmentpath() {
        for bad in ["", "..", "../etc", "a/b", "Dev", "a-b", "x y", "/etc"] {
            assert!(
                matches!(check_name(bad), Err(EnvironmentError::BadName(_))),
                "{bad:?}"
            );
        }
        assert!(check_name("dev_2").is_ok());
    }

    #[test]
    fn timeouts_in_puppets_syntax() {
        assert_eq!(Timeout::parse("0"), Some(Timeout::Seconds(0)));
        assert_eq!(Timeout::parse("3h"), Some(Timeout::Seconds(10800)));
        assert_eq!(Timeout::parse("unlimited"), Some(Timeout::Unlimited));
        assert_eq!(Timeout::parse("-1"), None);
        assert_eq!(Timeout::parse("5x"), None);
    }
}
