//! Running the real `ferry` binary from integration tests: inventories
//! written to temporary files, a clean environment (its own HOME, no agent),
//! and the output parsed as Bolt's JSON.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

use super::sshd::{KeyType, Sshd, client_keys};

/// A scratch directory holding an inventory and an empty HOME.
pub struct Scratch {
    pub dir: TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix("ferry-test-")
            .tempdir()
            .expect("temp dir");
        std::fs::create_dir_all(dir.path().join("home/.ssh")).expect("home");
        Scratch { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// An inventory of one root target `t` on `sshd` with the ed25519 client
    /// key, whose `tmpdir` (made here) and task `cache-dir` are inside this
    /// scratch dir: (inventory, tmpdir, cache dir).
    pub fn private_target(&self, sshd: &Sshd) -> (PathBuf, PathBuf, PathBuf) {
        let (tmp, cache) = (self.path().join("tmp"), self.path().join("cache"));
        std::fs::create_dir(&tmp).expect("tmpdir");
        let inv = self.inventory(&one_target(
            sshd,
            "t",
            "root",
            &format!(
                "{}        tmpdir: {}\n        cache-dir: {}\n",
                key_line(&client_keys().path(KeyType::Ed25519)),
                tmp.display(),
                cache.display()
            ),
        ));
        (inv, tmp, cache)
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// Writes the inventory and returns its path.
    pub fn inventory(&self, yaml: &str) -> PathBuf {
        let p = self.dir.path().join("inventory.yaml");
        std::fs::write(&p, yaml).expect("write inventory");
        p
    }

    /// Runs ferry in this directory with HOME pointing at the scratch home.
    pub fn ferry(&self, args: &[&str]) -> Run {
        self.ferry_env(args, &[])
    }

    pub fn ferry_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.ferry_in(self.dir.path(), args, env)
    }

    /// Runs ferry in `cwd` (HOME still the scratch home).
    pub fn ferry_in(&self, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ferry"));
        cmd.args(args)
            .current_dir(cwd)
            .env("HOME", self.home())
            .env_remove("SSH_AUTH_SOCK")
            .env_remove("FERRY_INVENTORY")
            .env_remove("FERRY_MODULEPATH")
            .env_remove("BOLT_PROJECT")
            .env_remove("FERRY_LOG");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run ferry");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// One finished ferry process.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The JSON document on stdout (`--format json`).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// The result items, by target name.
    pub fn item(&self, target: &str) -> Value {
        let doc = self.json();
        doc["items"]
            .as_array()
            .and_then(|items| items.iter().find(|i| i["target"] == target).cloned())
            .unwrap_or_else(|| panic!("no item for {target} in {doc}"))
    }

    /// The only item of a one-target run.
    pub fn only(&self) -> Value {
        let doc = self.json();
        assert_eq!(doc["items"].as_array().map(Vec::len), Some(1), "{doc}");
        doc["items"][0].clone()
    }

    pub fn all_text(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// An inventory of one target on `sshd`, as `user`, with extra ssh options
/// (YAML lines indented for the `ssh:` block, e.g. "      password: x").
pub fn one_target(sshd: &Sshd, name: &str, user: &str, extra: &str) -> String {
    format!(
        "targets:\n  - name: {name}\n    uri: ssh://{user}@{}:{}\n    config:\n      ssh:\n        known-hosts-file: {}\n        load-config: false\n{extra}",
        sshd.host(),
        sshd.port(),
        sshd.known_hosts_path().display()
    )
}

/// `        private-key: PATH` for [`one_target`]'s extra lines.
pub fn key_line(path: &Path) -> String {
    format!("        private-key: {}\n", path.display())
}
