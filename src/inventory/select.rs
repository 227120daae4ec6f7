//! Choosing targets with `-t/--targets`: comma-separated target names,
//! aliases, group names, `all`, glob patterns (`web*`), and URIs that are not
//! in the inventory (they get the top level's config, facts and vars).

use wildmatch::WildMatch;

use super::{Config, Inventory, Origin, Target};

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("no targets given: use -t/--targets")]
    Empty,
    #[error("no target matches '{0}'")]
    NoMatch(String),
}

impl Inventory {
    /// The targets a specification names, in order, each once.
    pub fn select(&self, spec: &str) -> Result<Vec<Target>, SelectError> {
        let mut out: Vec<Target> = Vec::new();
        let push = |t: Target, out: &mut Vec<Target>| {
            if !out.iter().any(|o| o.name == t.name) {
                out.push(t);
            }
        };
        let words: Vec<&str> = spec
            .split(',')
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .collect();
        if words.is_empty() {
            return Err(SelectError::Empty);
        }
        for word in words {
            if word == "all" {
                for t in &self.targets {
                    push(t.clone(), &mut out);
                }
            } else if let Some(members) = self.groups.get(word) {
                for m in members {
                    if let Some(t) = self.target(m) {
                        push(t.clone(), &mut out);
                    }
                }
            } else if let Some(t) = self.target_or_alias(word) {
                push(t.clone(), &mut out);
            } else if word.contains(['*', '?']) {
                let pattern = WildMatch::new(word);
                let matched: Vec<&Target> = self
                    .targets
                    .iter()
                    .filter(|t| {
                        pattern.matches(&t.name) || t.aliases.iter().any(|a| pattern.matches(a))
                    })
                    .collect();
                if matched.is_empty() {
                    return Err(SelectError::NoMatch(word.to_string()));
                }
                for t in matched {
                    push(t.clone(), &mut out);
                }
            } else {
                push(self.ad_hoc(word), &mut out);
            }
        }
        Ok(out)
    }

    fn target_or_alias(&self, word: &str) -> Option<&Target> {
        self.target(word).or_else(|| {
            self.targets
                .iter()
                .find(|t| t.aliases.iter().any(|a| a == word))
        })
    }

    /// A target named on the command line only, with the top level's settings.
    pub fn ad_hoc(&self, uri: &str) -> Target {
        let mut config = Config::default();
        for (k, s) in &self.top.config {
            config.set_default(k.clone(), s.clone());
        }
        Target {
            name: uri.to_string(),
            uri: Some(uri.to_string()),
            aliases: Vec::new(),
            config,
            facts: self.top.facts.clone(),
            vars: self.top.vars.clone(),
            features: self.top.features.iter().cloned().collect(),
            groups: Vec::new(),
            origin: Origin::command_line(),
        }
    }
}
