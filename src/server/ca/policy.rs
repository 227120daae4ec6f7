//! Which CSRs are signed as soon as they come (`ca.autosign`): none (the
//! default), all (test labs), those whose certname matches a glob, those
//! an `autosign.conf` file lists (`super::autosign_conf`), or those an
//! autosign policy executable approves — Puppet's policy-based
//! autosigning: the program gets the certname as its only argument and
//! the CSR (PEM) on its standard input, never on a command line, and exit
//! status 0 means sign; anything else (another status, a signal, not
//! finishing within `ca.autosign-timeout`, not starting) means the CSR
//! waits for `ferry ca sign`. Its failures are logged with the certname
//! and the exit status; neither the CSR nor what the policy printed is
//! (a CSR may carry a challenge password the policy checks, and a policy
//! may echo it), only how many bytes it wrote to standard error.

use std::path::PathBuf;
use std::time::Duration;

use crate::server::program;

/// Default time an autosign policy executable may take.
pub const DEFAULT_POLICY_TIMEOUT: Duration = Duration::from_secs(30);
/// Most bytes of a policy's standard output read (it is only logged).
const MAX_POLICY_OUTPUT: u64 = 64 * 1024;

/// `ca.autosign`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Autosign {
    /// Every one waits for `ferry ca sign` (the default).
    #[default]
    Never,
    /// Every one (`autosign: true`: for test labs only).
    Always,
    /// Those whose certname matches one of these globs (`*`, `?`).
    Matching(Vec<String>),
    /// Those this `autosign.conf` lists (read for each CSR).
    Listed(PathBuf),
    /// Those this executable approves (exit 0).
    Policy { program: PathBuf, timeout: Duration },
}

impl Autosign {
    /// Whether `certname`'s CSR (`pem`) is signed at once. A policy
    /// executable runs here: call it off the async threads.
    pub fn approves(&self, certname: &str, pem: &[u8]) -> bool {
        match self {
            Autosign::Never => false,
            Autosign::Always => true,
            Autosign::Matching(globs) => globs
                .iter()
                .any(|g| wildmatch::WildMatch::new(g).matches(certname)),
            Autosign::Listed(path) => super::autosign_conf::lists(path, certname),
            Autosign::Policy { program, timeout } => run_policy(program, *timeout, certname, pem),
        }
    }
}

/// Runs the policy executable; `true` when it exits 0.
fn run_policy(program: &std::path::Path, timeout: Duration, certname: &str, pem: &[u8]) -> bool {
    let name = certname.escape_default().to_string();
    let shown = program.display();
    let done = match program::run(
        program,
        &[certname],
        Some(pem.to_vec()),
        MAX_POLICY_OUTPUT,
        timeout,
    ) {
        Ok(done) => done,
        Err(e) => {
            tracing::warn!(certname = %name, "autosign policy {shown} {e}: the request waits for `ferry ca sign`");
            return false;
        }
    };
    if done.status.success() {
        tracing::info!(certname = %name, "autosign policy {shown} approved the request");
        return true;
    }
    let status = match done.status.code() {
        Some(code) => format!("exited with {code}"),
        None => "was killed by a signal".to_string(),
    };
    let said = match done.stderr.len() {
        0 => String::new(),
        n => format!(
            " (it wrote {n} bytes to standard error, not logged: they may hold the request's secrets)"
        ),
    };
    tracing::info!(certname = %name, "autosign policy {shown} {status}{said}: the request waits for `ferry ca sign`");
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn globs() {
        let a = Autosign::Matching(vec!["*.example.com".into(), "db?".into()]);
        assert!(a.approves("web1.example.com", b""));
        assert!(a.approves("db1", b""));
        assert!(!a.approves("example.com.evil", b""));
        assert!(!Autosign::Never.approves("x", b""));
        assert!(Autosign::Always.approves("x", b""));
    }

    #[test]
    fn a_policy_gets_the_name_as_argument_and_the_csr_on_stdin() {
        let dir = tempfile::tempdir().expect("dir");
        let script = dir.path().join("policy");
        let seen = dir.path().join("seen");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\ncat > {seen}\n[ \"$1\" = good.test ] && grep -q 'BEGIN CERTIFICATE REQUEST' {seen}\n",
                seen = seen.display()
            ),
        )
        .expect("write");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let policy = Autosign::Policy {
            program: script,
            timeout: DEFAULT_POLICY_TIMEOUT,
        };
        let pem = b"-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n";
        assert!(policy.approves("good.test", pem));
        assert_eq!(std::fs::read(&seen).expect("stdin"), pem);
        assert!(!policy.approves("bad.test", pem));
        let missing = Autosign::Policy {
            program: dir.path().join("nope"),
            timeout: DEFAULT_POLICY_TIMEOUT,
        };
        assert!(!missing.approves("good.test", pem), "cannot start: waits");
    }
}
