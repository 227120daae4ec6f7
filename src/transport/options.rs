//! Reading a transport's options out of a target's merged config. Each
//! transport asks for the keys it knows with their types; a wrong type or a
//! key nobody asked for is an error naming the file, line and column where it
//! was set. Keys Bolt knows but ferry does not use are accepted with a
//! warning, so existing inventories load unchanged.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use super::TransportError;
use super::command::{RunAs, Sensitive};
use crate::inventory::{Setting, Target};

pub struct Options<'a> {
    target: &'a Target,
    section: &'static str,
    asked: BTreeSet<&'static str>,
}

impl<'a> Options<'a> {
    pub fn new(target: &'a Target, section: &'static str) -> Self {
        Options {
            target,
            section,
            asked: BTreeSet::new(),
        }
    }

    fn setting(&mut self, key: &'static str) -> Option<&'a Setting> {
        self.asked.insert(key);
        self.target
            .config
            .section(self.section)
            .find(|(k, _)| *k == key)
            .map(|(_, s)| s)
    }

    /// The config section these options are read from (`ssh`, `network`).
    pub fn section(&self) -> &'static str {
        self.section
    }

    /// The error for `key`, set at `s`, that must be `expected`.
    pub fn wrong(&self, key: &str, s: &Setting, expected: &str) -> TransportError {
        TransportError::Config(format!(
            "{}: {}.{key} must be {expected}",
            s.origin, self.section
        ))
    }

    pub fn string(&mut self, key: &'static str) -> Result<Option<String>, TransportError> {
        match self.setting(key) {
            None => Ok(None),
            Some(s) => match &s.value {
                Value::String(v) => Ok(Some(v.clone())),
                Value::Number(n) => Ok(Some(n.to_string())),
                Value::Null => Ok(None),
                _ => Err(self.wrong(key, s, "a string")),
            },
        }
    }

    /// A path on the target (`tmpdir`, `cache-dir`): a string that is not
    /// empty, holds no NUL and does not start with `-`, so that no command
    /// it is passed to can take it for an option.
    pub fn path(&mut self, key: &'static str) -> Result<Option<String>, TransportError> {
        let value = self.string(key)?;
        match (&value, self.setting(key)) {
            (Some(v), Some(s)) if v.is_empty() || v.starts_with('-') || v.contains('\0') => {
                Err(self.wrong(
                    key,
                    s,
                    "a path that is not empty, holds no NUL and does not start with '-'",
                ))
            }
            _ => Ok(value),
        }
    }

    pub fn secret(
        &mut self,
        key: &'static str,
    ) -> Result<Option<Sensitive<String>>, TransportError> {
        Ok(self.string(key)?.map(Sensitive::new))
    }

    pub fn bool(&mut self, key: &'static str) -> Result<Option<bool>, TransportError> {
        match self.setting(key) {
            None => Ok(None),
            Some(s) => match &s.value {
                Value::Bool(b) => Ok(Some(*b)),
                Value::Null => Ok(None),
                // YAML 1.1 spellings, as Bolt's YAML reads them.
                Value::String(t) => match t.to_ascii_lowercase().as_str() {
                    "yes" | "on" => Ok(Some(true)),
                    "no" | "off" => Ok(Some(false)),
                    _ => Err(self.wrong(key, s, "true or false")),
                },
                _ => Err(self.wrong(key, s, "true or false")),
            },
        }
    }

    pub fn number(&mut self, key: &'static str) -> Result<Option<u64>, TransportError> {
        match self.setting(key) {
            None => Ok(None),
            Some(s) => match &s.value {
                Value::Number(n) => n
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| self.wrong(key, s, "a whole number")),
                Value::String(t) => t
                    .parse()
                    .map(Some)
                    .map_err(|_| self.wrong(key, s, "a whole number")),
                Value::Null => Ok(None),
                _ => Err(self.wrong(key, s, "a whole number")),
            },
        }
    }

    pub fn seconds(&mut self, key: &'static str) -> Result<Option<Duration>, TransportError> {
        Ok(self.number(key)?.map(Duration::from_secs))
    }

    pub fn strings(&mut self, key: &'static str) -> Result<Option<Vec<String>>, TransportError> {
        match self.setting(key) {
            None => Ok(None),
            Some(s) => match &s.value {
                Value::String(v) => Ok(Some(v.split_whitespace().map(str::to_string).collect())),
                Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .map(Some)
                    .ok_or_else(|| self.wrong(key, s, "a list of strings")),
                Value::Null => Ok(None),
                _ => Err(self.wrong(key, s, "a list of strings")),
            },
        }
    }

    /// The raw value, for options with several accepted shapes.
    pub fn raw(&mut self, key: &'static str) -> Option<&'a Setting> {
        self.setting(key)
    }

    /// run-as, sudo-password and run-as-command, shared by every POSIX transport.
    pub fn run_as(&mut self, cli_user: Option<&str>) -> Result<Option<RunAs>, TransportError> {
        let user = self.string("run-as")?;
        let password = self.secret("sudo-password")?;
        let command = self.strings("run-as-command")?.unwrap_or_default();
        Ok(cli_user.map(str::to_string).or(user).map(|user| RunAs {
            user,
            password,
            command,
        }))
    }

    /// Fails on keys nobody asked for; warns on Bolt keys ferry ignores.
    pub fn finish(self, bolt_only: &[&str]) -> Result<(), TransportError> {
        for (key, s) in self.target.config.section(self.section) {
            if self.asked.contains(key) {
                continue;
            }
            if bolt_only.contains(&key) {
                tracing::warn!(target_name = %self.target.name, "{}: {}.{key} is not used by ferry", s.origin, self.section);
                continue;
            }
            let mut known: Vec<&str> = self.asked.iter().copied().collect();
            known.extend(bolt_only);
            known.sort_unstable();
            return Err(TransportError::Config(format!(
                "{}: unknown option {}.{key} (known: {})",
                s.origin,
                self.section,
                known.join(", ")
            )));
        }
        Ok(())
    }
}
