//! Choosing targets with `-t/--targets`, as Bolt does: words separated by
//! commas or white space (not inside `[]` or `{}`), each a group name
//! (`all` too), a target name, an alias, a glob pattern ([`super::glob`],
//! matched against group names, target names and aliases alike), or else a
//! URI not in the inventory (it gets the top level's config, facts and
//! vars). A pattern that has a scheme (`ssh://web*`) is a URI.

use super::glob::{Glob, is_pattern};
use super::{Config, Inventory, Origin, Setting, Target};

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("no targets given: use -t/--targets")]
    Empty,
    #[error("found 0 targets matching wildcard pattern {0}")]
    NoMatch(String),
}

/// The words of a `--targets` value: separated by commas and white space
/// outside brackets and braces (Bolt's extended-glob split).
pub fn words(spec: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in spec.char_indices() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth = depth.saturating_sub(1),
            c if (c == ',' || c.is_whitespace()) && depth == 0 => {
                if start < i {
                    out.push(&spec[start..i]);
                }
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if start < spec.len() {
        out.push(&spec[start..]);
    }
    out
}

impl Inventory {
    /// The targets a specification names, in order, each once.
    pub fn select(&self, spec: &str) -> Result<Vec<Target>, SelectError> {
        let mut out: Vec<Target> = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        let words = words(spec);
        if words.is_empty() {
            return Err(SelectError::Empty);
        }
        for word in words {
            if word == "all" {
                names.extend(self.targets.iter().map(|t| t.name.as_str()));
            } else if let Some(members) = self.groups.get(word) {
                names.extend(members.iter().map(String::as_str));
            } else if let Some(t) = self.target_or_alias(word) {
                names.push(&t.name);
            } else if is_pattern(word) && super::uri::scheme(word).is_none() {
                let matched = self.glob(word);
                if matched.is_empty() {
                    return Err(SelectError::NoMatch(word.to_string()));
                }
                names.extend(matched);
            } else {
                names.push(word);
            }
        }
        for name in names {
            if out.iter().any(|o| o.name == name) {
                continue;
            }
            out.push(match self.target(name) {
                Some(t) => t.clone(),
                None => self.ad_hoc(name),
            });
        }
        Ok(out)
    }

    /// What a pattern matches: the members of matching groups (`all`
    /// included), then matching target names, then targets with a
    /// matching alias.
    fn glob(&self, word: &str) -> Vec<&str> {
        let pattern = Glob::new(word);
        let mut matched: Vec<&str> = Vec::new();
        if pattern.matches("all") {
            matched.extend(self.targets.iter().map(|t| t.name.as_str()));
        }
        for (group, members) in &self.groups {
            if pattern.matches(group) {
                matched.extend(members.iter().map(String::as_str));
            }
        }
        matched.extend(
            self.targets
                .iter()
                .filter(|t| pattern.matches(&t.name))
                .map(|t| t.name.as_str()),
        );
        matched.extend(
            self.targets
                .iter()
                .filter(|t| t.aliases.iter().any(|a| pattern.matches(a)))
                .map(|t| t.name.as_str()),
        );
        let mut seen = std::collections::HashSet::new();
        matched.retain(|n| seen.insert(*n));
        matched
    }

    fn target_or_alias(&self, word: &str) -> Option<&Target> {
        self.target(word).or_else(|| {
            self.targets
                .iter()
                .find(|t| t.aliases.iter().any(|a| a == word))
        })
    }

    /// A target named on the command line only: the top level's settings,
    /// then the command line's; `localhost` is local, as in Bolt.
    pub fn ad_hoc(&self, uri: &str) -> Target {
        let mut config = Config::default();
        if uri == "localhost" {
            config.set_default(
                "transport".into(),
                Setting {
                    value: "local".into(),
                    origin: Origin::command_line(),
                },
            );
        }
        for (k, s) in &self.top.config {
            config.set_default(k.clone(), s.clone());
        }
        for (k, v) in &self.command_line {
            config.set_default(
                k.clone(),
                Setting {
                    value: v.clone(),
                    origin: Origin::command_line(),
                },
            );
        }
        Target {
            name: uri.to_string(),
            uri: Some(uri.to_string()),
            aliases: Vec::new(),
            config,
            facts: self.top.facts.clone(),
            vars: self.top.vars.clone(),
            features: self.top.features.iter().cloned().collect(),
            plugin_hooks: self.top.plugin_hooks.clone(),
            groups: Vec::new(),
            origin: Origin::command_line(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn words_split_outside_brackets_and_braces() {
        assert_eq!(
            words("[m-o,s-u]{arget,ode}[1-2,9],  group1 ,,ssh://t8\nweb"),
            vec!["[m-o,s-u]{arget,ode}[1-2,9]", "group1", "ssh://t8", "web"]
        );
        assert!(words(" , ").is_empty());
    }
}
