//! A node's classification and the environment it runs in, the one path
//! a real Puppet agent (`api::puppet`) and a deploy job (`jobs::deploy`)
//! both take: the node is classified by the configured node terminus
//! (`state.nodes`: plain, classifier or exec) with its facts and the
//! trusted facts the server knows from its certname, and its environment
//! is negotiated from what classification gives and what the node asks
//! for. An agent asking for an environment the server does not have is
//! given the server-specified one ([`negotiate`]); a deploy job's node
//! ([`for_job`]) keeps the job's environment where classification leaves
//! it free, else switches to the server-specified one, or fails when the
//! job enforces its environment (Puppet's `strict_environment_mode`).

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::server::AppState;
use crate::server::classifier::code::node_code;
use crate::server::classifier::{Classification, NodeEnvironment, NodeError, NodeRequest};
use crate::server::environments::{self, EnvironmentError, Loaded};
use crate::server::indirector::CatalogRequest;

/// Why a node has no classification or environment.
#[derive(Debug, thiserror::Error)]
pub enum NodeLookupError {
    #[error(transparent)]
    Node(#[from] NodeError),
    /// Classification named an environment the server does not have.
    #[error("Could not find environment '{0}', the node's classified environment")]
    ClassifiedMissing(String),
    #[error(transparent)]
    Environment(#[from] EnvironmentError),
    /// The blocking worker stopped (a server fault).
    #[error("the node classification worker stopped")]
    Worker,
}

use crate::server::indirector::trusted_facts;

/// The node's classification from the configured node terminus (on the
/// blocking pool: an external node classifier is a process).
pub async fn classify(
    state: &Arc<AppState>,
    certname: &str,
    facts: Map<String, Value>,
) -> Result<Classification, NodeLookupError> {
    let state = Arc::clone(state);
    let certname = certname.to_string();
    tokio::task::spawn_blocking(move || {
        let trusted = trusted_facts(&certname);
        state.nodes.find(&NodeRequest {
            certname: &certname,
            facts: &facts,
            trusted: &trusted,
        })
    })
    .await
    .map_err(|_| NodeLookupError::Worker)?
    .map_err(NodeLookupError::Node)
}

/// The environment a node asking for `asked` is given: that one when it
/// is on the environmentpath, else the server's `default-environment`.
async fn agent_environment(
    state: &Arc<AppState>,
    asked: Option<&str>,
) -> Result<Arc<Loaded>, EnvironmentError> {
    if let Some(name) = asked {
        match environments::find(state, name).await {
            Ok(env) => return Ok(env),
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    environments::find(state, &state.config.default_environment).await
}

/// A classified environment from the server's environments.
pub async fn classified_environment(
    state: &Arc<AppState>,
    name: &str,
) -> Result<Arc<Loaded>, NodeLookupError> {
    match environments::find(state, name).await {
        Ok(env) => Ok(env),
        Err(e) if e.is_not_found() => Err(NodeLookupError::ClassifiedMissing(name.to_string())),
        Err(e) => Err(e.into()),
    }
}

/// The environment a classified agent runs in: the classified one
/// (server-specified); for a node left free, the one it asks for when the
/// server has it, else `default-environment`.
pub async fn negotiate(
    state: &Arc<AppState>,
    node: &Classification,
    asked: Option<&str>,
) -> Result<Arc<Loaded>, NodeLookupError> {
    match &node.environment {
        NodeEnvironment::Specified(name) => classified_environment(state, name).await,
        NodeEnvironment::AgentSpecified => Ok(agent_environment(state, asked).await?),
        NodeEnvironment::Default => Ok(agent_environment(state, None).await?),
    }
}

/// The catalog request for a classified node in its environment: its
/// facts with a node parameter winning over a fact of the same name (as
/// in Puppet), its classification as the code its compile starts and ends
/// with; `device` for a network device's compile (its types built in).
pub fn catalog_request(
    certname: &str,
    mut facts: Map<String, Value>,
    environment: &Arc<Loaded>,
    classified: &Classification,
    device: bool,
) -> CatalogRequest {
    for name in classified.parameters.keys() {
        facts.remove(name);
    }
    CatalogRequest {
        certname: certname.to_string(),
        facts,
        environment: Arc::clone(environment),
        node_code: Arc::new(node_code(classified)),
        device_types: device,
    }
}

/// A deploy job's node's environment, negotiated.
#[derive(Debug, Clone, PartialEq)]
pub enum JobEnvironment {
    /// The job's own.
    Keep(String),
    /// The server specifies another: the node switches to it (Puppet's
    /// notice, [`JobEnvironment::message`]).
    Switch { from: String, to: String },
    /// The server specifies another and the job enforces its own: the node
    /// fails (Puppet's strict-mode error).
    Refuse { asked: String, server: String },
}

impl JobEnvironment {
    /// What the node's events say, in Puppet's words (its configurer's):
    /// none when it keeps the job's environment.
    pub fn message(&self) -> Option<String> {
        match self {
            JobEnvironment::Keep(_) => None,
            JobEnvironment::Switch { from, to } => Some(format!(
                "Local environment: '{from}' doesn't match server specified node environment '{to}', switching agent to '{to}'."
            )),
            JobEnvironment::Refuse { asked, server } => Some(format!(
                "Not using catalog because its environment '{server}' does not match agent specified environment '{asked}' and strict_environment_mode is set"
            )),
        }
    }
}

/// A deploy job's negotiation: the job's environment (`asked`, which the
/// server has) plays the agent's. Classification that leaves the node free
/// keeps it; a server-specified environment (or, with none, the server's
/// `default`, as an agent is given) that differs switches the node, or
/// refuses it when `enforce` is set. A deploy job classifies each node
/// once, before its compile, and nothing re-classifies it after: its
/// environment cannot flap, so Puppet's bounded retry loop has nothing to
/// retry.
pub fn for_job(
    classified: &NodeEnvironment,
    asked: &str,
    default: &str,
    enforce: bool,
) -> JobEnvironment {
    let server = match classified {
        NodeEnvironment::AgentSpecified => return JobEnvironment::Keep(asked.to_string()),
        NodeEnvironment::Specified(name) => name.as_str(),
        NodeEnvironment::Default => default,
    };
    if server == asked {
        JobEnvironment::Keep(asked.to_string())
    } else if enforce {
        JobEnvironment::Refuse {
            asked: asked.to_string(),
            server: server.to_string(),
        }
    } else {
        JobEnvironment::Switch {
            from: asked.to_string(),
            to: server.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deploy_nodes_environment_is_negotiated_as_an_agents() {
        use JobEnvironment::*;
        use NodeEnvironment::*;
        let spec = |n: &str| Specified(n.to_string());
        let s = |n: &str| n.to_string();
        // (classification, job's environment, enforce, outcome)
        let cases = [
            (AgentSpecified, "dev", true, Keep(s("dev"))),
            (AgentSpecified, "dev", false, Keep(s("dev"))),
            (spec("dev"), "dev", true, Keep(s("dev"))),
            (
                spec("dev"),
                "production",
                false,
                Switch {
                    from: s("production"),
                    to: s("dev"),
                },
            ),
            (
                spec("dev"),
                "production",
                true,
                Refuse {
                    asked: s("production"),
                    server: s("dev"),
                },
            ),
            (Default, "production", true, Keep(s("production"))),
            (
                Default,
                "dev",
                false,
                Switch {
                    from: s("dev"),
                    to: s("production"),
                },
            ),
        ];
        for (classified, asked, enforce, want) in cases {
            let got = for_job(&classified, asked, "production", enforce);
            assert_eq!(got, want, "{classified:?} {asked} {enforce}");
        }
        assert_eq!(
            for_job(&spec("dev"), "production", "production", false)
                .message()
                .as_deref(),
            Some(
                "Local environment: 'production' doesn't match server specified node environment 'dev', switching agent to 'dev'."
            )
        );
        assert_eq!(
            for_job(&spec("dev"), "production", "production", true)
                .message()
                .as_deref(),
            Some(
                "Not using catalog because its environment 'dev' does not match agent specified environment 'production' and strict_environment_mode is set"
            )
        );
    }
}
