//! The node indirection's termini: where a node's classification (its
//! environment, classes and top-scope parameters) comes from, chosen by
//! the server config's `routes: node: {terminus: ...}` as Puppet's
//! routes.yaml chooses `node_terminus`. `plain` gives nothing (the node
//! keeps the environment it asks for); `classifier` classifies against the
//! node groups; `exec` runs an external node classifier (Puppet's ENC
//! contract: the program gets the certname as its only argument and
//! prints YAML with `classes` (a list of names, or a hash of names to
//! parameters), `parameters` and `environment`; a non-zero exit means the
//! node is not found). Each is a [`NodeTerminus`]; `find` does blocking
//! work (a process, file reads): call it off the async threads.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::classify::{Classification, Conflict, NodeEnvironment, classify};
use super::group::{Classes, check_environment, is_class_name, is_param_name, is_variable_name};
use super::rule::Subject;
use super::store::GroupStore;

/// How long an external node classifier may run.
const ENC_TIMEOUT: Duration = Duration::from_secs(30);
/// Most bytes of an external node classifier's output read.
const ENC_MAX_OUTPUT: u64 = 4 * 1024 * 1024;

/// What a node terminus is asked about.
pub struct NodeRequest<'a> {
    pub certname: &'a str,
    /// The node's facts (the request's, or the last ones stored).
    pub facts: &'a Map<String, Value>,
    /// Its trusted facts (`certname`, `authenticated`, `extensions`...).
    pub trusted: &'a Map<String, Value>,
}

/// Why a terminus has no node.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error(transparent)]
    Conflict(#[from] Conflict),
    /// The external node classifier failed or printed something unusable.
    #[error("Failed to find {node} via exec: {message}")]
    Exec { node: String, message: String },
}

/// A node terminus (Puppet's `node_terminus`).
pub trait NodeTerminus: Send + Sync {
    /// The terminus's name in the config (`plain`, `classifier`, `exec`).
    fn name(&self) -> &'static str;
    /// The node's classification.
    fn find(&self, request: &NodeRequest<'_>) -> Result<Classification, NodeError>;
}

/// Nothing classified: the node keeps the environment it asks for.
pub struct Plain;

fn unclassified(environment: NodeEnvironment) -> Classification {
    Classification {
        groups: Vec::new(),
        environment,
        classes: Classes::new(),
        parameters: Map::new(),
        config_data: Classes::new(),
    }
}

impl NodeTerminus for Plain {
    fn name(&self) -> &'static str {
        "plain"
    }
    fn find(&self, _: &NodeRequest<'_>) -> Result<Classification, NodeError> {
        Ok(unclassified(NodeEnvironment::AgentSpecified))
    }
}

/// The node groups.
pub struct Classifier(pub Arc<GroupStore>);

impl NodeTerminus for Classifier {
    fn name(&self) -> &'static str {
        "classifier"
    }
    fn find(&self, r: &NodeRequest<'_>) -> Result<Classification, NodeError> {
        let set = self.0.get();
        Ok(classify(
            &set,
            &Subject {
                name: r.certname,
                facts: r.facts,
                trusted: r.trusted,
            },
        )?)
    }
}

/// An external node classifier program.
pub struct Exec {
    pub program: PathBuf,
}

impl NodeTerminus for Exec {
    fn name(&self) -> &'static str {
        "exec"
    }
    fn find(&self, r: &NodeRequest<'_>) -> Result<Classification, NodeError> {
        let fail = |message: String| NodeError::Exec {
            node: r.certname.to_string(),
            message,
        };
        let output = run(&self.program, r.certname).map_err(&fail)?;
        parse_enc(&output).map_err(fail)
    }
}

/// Runs the program with the certname as its only argument (no shell);
/// its standard output, or why not. Its standard error goes to the log.
fn run(program: &Path, certname: &str) -> Result<String, String> {
    let done = crate::server::program::run(program, &[certname], None, ENC_MAX_OUTPUT, ENC_TIMEOUT)
        .map_err(|e| format!("the external node classifier {e}"))?;
    if !done.stderr.is_empty() {
        tracing::warn!(
            "external node classifier for {certname}: {}",
            String::from_utf8_lossy(&done.stderr).trim()
        );
    }
    if !done.status.success() {
        return Err(match done.status.code() {
            Some(code) => format!("the external node classifier exited with {code}"),
            None => "the external node classifier was killed by a signal".to_string(),
        });
    }
    String::from_utf8(done.stdout)
        .map_err(|_| "the external node classifier printed non-UTF-8".into())
}

/// The ENC's YAML: `classes` (a list, or a hash of class → parameters or
/// null), `parameters` (a hash), `environment` (a name).
pub fn parse_enc(text: &str) -> Result<Classification, String> {
    let doc: Value = if text.trim().is_empty() || text.trim() == "---" {
        Value::Object(Map::new())
    } else {
        crate::yaml::from_str(text).map_err(|e| {
            format!(
                "its output is not YAML (line {}, column {}): {}",
                e.line, e.column, e.message
            )
        })?
    };
    let doc = match doc {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        _ => return Err("its output must be a YAML hash".into()),
    };
    if let Some(k) = doc
        .keys()
        .find(|k| !["classes", "parameters", "environment"].contains(&k.as_str()))
    {
        return Err(format!(
            "its output has '{k}', not one of classes, parameters, environment"
        ));
    }
    let mut classes = Classes::new();
    let class_name = |name: &str| -> Result<String, String> {
        if is_class_name(name) {
            Ok(name.trim_start_matches("::").to_string())
        } else {
            Err(format!("classes: '{name}' is not a Puppet class name"))
        }
    };
    match doc.get("classes") {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) => {
            for c in list {
                let Some(name) = c.as_str() else {
                    return Err("classes: a list of class names must hold strings".into());
                };
                classes.insert(class_name(name)?, Map::new());
            }
        }
        Some(Value::Object(map)) => {
            for (name, params) in map {
                let params = match params {
                    Value::Null => Map::new(),
                    Value::Object(p) => p.clone(),
                    _ => return Err(format!("classes.{name}: must be a hash of parameters")),
                };
                if let Some(bad) = params.keys().find(|p| !is_param_name(p)) {
                    return Err(format!("classes.{name}.{bad}: is not a parameter name"));
                }
                classes.insert(class_name(name)?, params);
            }
        }
        Some(_) => return Err("classes: must be a list or a hash".into()),
    }
    let parameters = match doc.get("parameters") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Err("parameters: must be a hash".into()),
    };
    if let Some(bad) = parameters.keys().find(|p| !is_variable_name(p)) {
        return Err(format!("parameters.{bad}: is not a variable name"));
    }
    let environment = match doc.get("environment") {
        None | Some(Value::Null) => NodeEnvironment::AgentSpecified,
        Some(Value::String(name)) => {
            check_environment(name, "environment").map_err(|e| e.to_string())?;
            if name == super::group::AGENT_SPECIFIED {
                NodeEnvironment::AgentSpecified
            } else {
                NodeEnvironment::Specified(name.clone())
            }
        }
        Some(_) => return Err("environment: must be a string".into()),
    };
    Ok(Classification {
        environment,
        classes,
        parameters,
        ..unclassified(NodeEnvironment::Default)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn enc_output_in_both_class_forms() {
        let c = parse_enc("---\nclasses:\n  - ntp\n  - motd\nenvironment: dev\n").expect("list");
        assert_eq!(c.environment, NodeEnvironment::Specified("dev".into()));
        assert_eq!(c.classes.keys().collect::<Vec<_>>(), vec!["motd", "ntp"]);
        let c = parse_enc(
            "classes:\n  ntp:\n    servers: [a, b]\n  motd:\nparameters:\n  tier: gold\n",
        )
        .expect("hash");
        assert_eq!(c.classes["ntp"]["servers"], json!(["a", "b"]));
        assert!(c.classes["motd"].is_empty());
        assert_eq!(c.parameters["tier"], "gold");
        assert_eq!(c.environment, NodeEnvironment::AgentSpecified);
        assert!(parse_enc("").expect("empty").classes.is_empty());
        let e = parse_enc("classes: [a\n").expect_err("not YAML");
        assert!(e.starts_with("its output is not YAML (line "), "{e}");
        for bad in [
            "environment: ../etc\n",
            "classes: ntp\n",
            "classes: [Bad-Name]\n",
            "nodes: []\n",
            "parameters: [a]\n",
            "- a\n",
        ] {
            assert!(parse_enc(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_program_gets_the_certname_and_a_failure_is_an_error() {
        let dir = tempfile::tempdir().expect("dir");
        let script = dir.path().join("enc");
        std::fs::write(
            &script,
            "#!/bin/sh\n[ \"$1\" = known.test ] || { echo nope >&2; exit 3; }\nprintf 'classes:\\n  role::web:\\n    port: 81\\nenvironment: dev\\n'\n",
        )
        .expect("write");
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let enc = Exec { program: script };
        let (facts, trusted) = (Map::new(), Map::new());
        let ask = |name| NodeRequest {
            certname: name,
            facts: &facts,
            trusted: &trusted,
        };
        let c = enc.find(&ask("known.test")).expect("found");
        assert_eq!(c.classes["role::web"]["port"], 81);
        assert_eq!(c.environment, NodeEnvironment::Specified("dev".into()));
        let e = enc
            .find(&ask("other.test"))
            .expect_err("exit 3")
            .to_string();
        assert_eq!(
            e,
            "Failed to find other.test via exec: the external node classifier exited with 3"
        );
    }
}
