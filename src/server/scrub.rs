//! Server paths never reach clients. Results and errors are built by the
//! executor and the transports, which name local files freely (a request's
//! known_hosts copy, an upload's scratch path, the server user's
//! `~/.ssh/known_hosts`). Before a result is stored or returned, a [`Scrub`]
//! replaces the paths the server knows to be its own by neutral names:
//! a request's scratch directory (everywhere in the result: its name is
//! random, nothing else can contain it) and the server's cache directory,
//! modulepath, inventory, home and known_hosts files and the file paths in
//! the inventory's target options (in `_error` only, so a command's text
//! and output are left as they were). An apply's manifest (its `object`)
//! and the manifest files its Puppet report names are the server's own
//! code: they are rewritten with the same rules as errors.

use std::path::Path;
use std::sync::Arc;

use super::AppState;
use crate::apply::Report;
use crate::inventory::Target;
use crate::run::{Outcome as RunOutcome, Output, TargetResult};

/// The file name a request's `known-hosts-content` gets in messages.
pub const KNOWN_HOSTS_NAME: &str = "known-hosts-content";
/// The name the server's own known_hosts files get in messages.
pub const SERVER_KNOWN_HOSTS: &str = "the server's known_hosts";

/// Replacements of server paths, longest first.
#[derive(Clone, Debug, Default)]
pub struct Scrub {
    /// Applied to every string of a result.
    everywhere: Arc<Vec<(String, String)>>,
    /// Applied to a result's `_error`.
    errors: Arc<Vec<(String, String)>>,
}

fn text(p: &Path) -> String {
    p.display().to_string()
}

fn sorted(mut rules: Vec<(String, String)>) -> Arc<Vec<(String, String)>> {
    rules.retain(|(from, _)| from.len() > 1 && from.starts_with('/'));
    rules.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    rules.dedup_by(|a, b| a.0 == b.0);
    Arc::new(rules)
}

impl Scrub {
    /// The server's own paths: cache dir, modulepath, inventory, the
    /// server user's home and the known_hosts files a target without
    /// `known-hosts-content` is checked against.
    pub fn for_server(state: &AppState) -> Scrub {
        let home = crate::transport::ssh::options::home();
        let mut rules = vec![
            (text(&state.config.cache_dir), "<cache-dir>".to_string()),
            (text(&home), "~".to_string()),
        ];
        for name in [".ssh/known_hosts", ".ssh/known_hosts2"] {
            rules.push((text(&home.join(name)), SERVER_KNOWN_HOSTS.into()));
        }
        rules.push(("/etc/ssh/ssh_known_hosts".into(), SERVER_KNOWN_HOSTS.into()));
        for dir in &state.config.modulepath {
            rules.push((text(dir), "<modulepath>".into()));
        }
        for dir in &state.config.environmentpath {
            rules.push((text(dir), "<environmentpath>".into()));
        }
        if let Some(inventory) = &state.config.inventory {
            rules.push((text(inventory), "<inventory>".into()));
        }
        Scrub {
            everywhere: Arc::new(Vec::new()),
            errors: sorted(rules),
        }
    }

    /// Adds a request's scratch directory: its known_hosts copies become
    /// [`KNOWN_HOSTS_NAME`], the files under it their relative names.
    pub fn with_scratch(self, dir: &Path) -> Scrub {
        let root = text(dir);
        let mut rules: Vec<(String, String)> = self.everywhere.as_ref().clone();
        rules.push((format!("{root}/upload/"), String::new()));
        rules.push((format!("{root}/upload"), ".".into()));
        rules.push((format!("{root}/modules/"), String::new()));
        rules.push((format!("{root}/"), String::new()));
        rules.push((root.clone(), ".".into()));
        // known_hosts.N, for any N: the longest rules go first.
        rules.push((
            format!("{root}/known_hosts."),
            format!("{KNOWN_HOSTS_NAME}#"),
        ));
        Scrub {
            everywhere: sorted(rules),
            errors: self.errors,
        }
    }

    /// Adds the local files the targets' options name (key files,
    /// known_hosts files), shown by their file name only. Options that
    /// name remote paths (`tmpdir`) are left alone.
    pub fn with_targets(self, targets: &[Target]) -> Scrub {
        let mut rules: Vec<(String, String)> = self.errors.as_ref().clone();
        let local = |key: &str| {
            let key = key.rsplit('.').next().unwrap_or(key);
            matches!(key, "private-key" | "known-hosts-file")
        };
        for t in targets {
            for (_, setting) in t.config.iter().filter(|(k, _)| local(k)) {
                if let Some(path) = setting.value.as_str().filter(|p| p.starts_with('/')) {
                    let name = Path::new(path)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    rules.push((path.to_string(), name));
                }
            }
        }
        Scrub {
            everywhere: self.everywhere,
            errors: sorted(rules),
        }
    }

    /// `s` with every server path replaced.
    pub fn text(&self, s: &str) -> String {
        let once = replace_all(s, &self.everywhere);
        let twice = replace_all(&once, &self.errors);
        tidy_known_hosts(&twice)
    }

    /// A result as a client may see it.
    pub fn result(&self, r: &mut TargetResult) {
        r.object = tidy_known_hosts(&replace_all(&r.object, &self.everywhere));
        r.outcome.rewrite_texts(&mut |s, in_error| {
            let mut new = tidy_known_hosts(&replace_all(s, &self.everywhere));
            if in_error {
                new = self.text(&new);
            }
            if new != *s {
                *s = new;
            }
        });
        if let RunOutcome::Ok(Output::Apply(report)) | RunOutcome::Failed(Output::Apply(report)) =
            &mut r.outcome
        {
            self.report(report);
        }
        if r.action == "apply" {
            r.object = self.text(&r.object);
        }
    }

    /// The manifest files a Puppet report names (resources and logs).
    fn report(&self, report: &mut Report) {
        let files = report
            .resource_statuses
            .0
            .iter_mut()
            .map(|s| &mut s.file)
            .chain(report.logs.iter_mut().map(|l| &mut l.file));
        for file in files.flatten() {
            let new = self.text(file);
            if new != *file {
                *file = new;
            }
        }
    }
}

/// `known-hosts-content#0:3` (a request's known_hosts copy `known_hosts.0`,
/// line 3) reads `known-hosts-content:3`.
fn tidy_known_hosts(s: &str) -> String {
    let marker = format!("{KNOWN_HOSTS_NAME}#");
    if !s.contains(&marker) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(&marker) {
        out.push_str(&rest[..i]);
        out.push_str(KNOWN_HOSTS_NAME);
        rest = rest[i + marker.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Characters that continue a path component: a match followed by one of
/// them is a longer name, not the path.
fn continues(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '-' | '_')
}

/// Replaces every whole-path occurrence of each rule's `from`: one not
/// preceded by a path character, and (unless `from` ends in `/` or `.`)
/// not followed by one.
fn replace_all(s: &str, rules: &[(String, String)]) -> String {
    let mut out = s.to_string();
    for (from, to) in rules {
        if !out.contains(from.as_str()) {
            continue;
        }
        let open_ended = from.ends_with(['/', '.']);
        let mut result = String::with_capacity(out.len());
        let (mut last, mut search) = (0, 0);
        while let Some(off) = out[search..].find(from.as_str()) {
            let i = search + off;
            let end = i + from.len();
            let before = out[..i].chars().next_back();
            let after = out[end..].chars().next();
            let inside = before.is_some_and(|c| continues(c) || c == '/')
                || (!open_ended && after.is_some_and(continues));
            result.push_str(&out[last..i]);
            result.push_str(if inside { from } else { to });
            last = end;
            search = end;
        }
        result.push_str(&out[last..]);
        out = result;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrub(scratch: &str) -> Scrub {
        let server = Scrub {
            everywhere: Arc::new(Vec::new()),
            errors: sorted(vec![
                ("/var/cache/ferry".into(), "<cache-dir>".into()),
                ("/root".into(), "~".into()),
                ("/root/.ssh/known_hosts".into(), SERVER_KNOWN_HOSTS.into()),
            ]),
        };
        server.with_scratch(Path::new(scratch))
    }

    #[test]
    fn scratch_paths_become_neutral_names() {
        let s = scrub("/var/cache/ferry/requests/req-AbC1");
        assert_eq!(
            s.text("host key for [h]:22 does not match the known key (/var/cache/ferry/requests/req-AbC1/known_hosts.0:1)"),
            "host key for [h]:22 does not match the known key (known-hosts-content:1)"
        );
        assert_eq!(
            s.text("Uploaded '/var/cache/ferry/requests/req-AbC1/upload/a/b.txt' to 'h:/tmp'"),
            "Uploaded 'a/b.txt' to 'h:/tmp'"
        );
        assert_eq!(
            s.text("/var/cache/ferry/requests/req-AbC1/run.sh"),
            "run.sh"
        );
        assert_eq!(s.text("/var/cache/ferry/tasks/x"), "<cache-dir>/tasks/x");
    }

    #[test]
    fn server_files_are_named_not_shown() {
        let s = scrub("/tmp/req-1");
        assert_eq!(
            s.text("host key for h is unknown (not in /root/.ssh/known_hosts)"),
            "host key for h is unknown (not in the server's known_hosts)"
        );
        assert_eq!(s.text("/root/.ssh/id_rsa"), "~/.ssh/id_rsa");
        // Only whole paths: /rootfs and /x/root are other paths.
        assert_eq!(s.text("/rootfs/a /x/root/b"), "/rootfs/a /x/root/b");
    }

    #[test]
    fn remote_output_keeps_server_like_paths() {
        let s = scrub("/tmp/req-1");
        let mut r = TargetResult {
            target: "h".into(),
            action: "command".into(),
            object: "cat /root/x".into(),
            outcome: crate::run::Outcome::Failed(crate::run::Output::Task(serde_json::json!({
                "stdout": "/root/x /tmp/req-1/known_hosts.0",
                "_error": {"msg": "see /root/.ssh/known_hosts:2"},
            }))),
        };
        s.result(&mut r);
        assert_eq!(r.value()["stdout"], "/root/x known-hosts-content");
        assert_eq!(r.value()["_error"]["msg"], "see the server's known_hosts:2");
        assert_eq!(r.object, "cat /root/x");
    }
}
