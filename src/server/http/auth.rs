//! Who is calling, and may they do this. A request is let in with either a
//! client certificate that TLS verified against the CA, or a bearer token
//! whose SHA-256 hash is in the tokens file with the endpoint's action.
//! A certificate one of whose names is on the `allowlist` is an
//! operator's and reaches every endpoint; any other certificate (every
//! one when no allowlist is set) is only a node's: it reaches the Puppet
//! agent endpoints ([`node_may`]) for its own certname (its subject CN)
//! and nothing else. Anyone else is refused: 401 when unauthenticated,
//! 403 when not allowed. A token lets through only what one of its
//! actions covers (HEAD counts as GET); a request no action covers needs
//! a token with `*`. The CA's administration (`certificate_status`,
//! action `ca:admin`) is an operator's only. On a server that runs a
//! Puppet CA, its bootstrap
//! endpoints ([`ca_public`]) are open to every client, with or without a
//! certificate: an agent asks for its first certificate there.

use std::path::Path;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::server::AppState;
use crate::server::config::ConfigError;
use crate::server::http::errors::ApiError;

/// What the TLS layer learned about the client, attached to each request.
#[derive(Clone, Debug)]
pub enum Peer {
    /// A certificate that chains to the CA; its CN and DNS SANs (the CN
    /// first, when it has one).
    Cert {
        names: Vec<String>,
        /// Its subject CN: the node's certname.
        certname: Option<String>,
    },
    /// No client certificate.
    Anonymous,
}

/// Who the request runs as (job owner): a certificate name or `token:<name>`.
#[derive(Clone, Debug)]
pub struct Identity(pub String);

/// A request made with a certificate that is only a node's: the Puppet
/// agent endpoints it may reach are checked against this certname.
#[derive(Clone, Debug)]
pub struct NodeCert(pub String);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    tokens: Vec<TokenEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenEntry {
    name: String,
    sha256: String,
    actions: Vec<String>,
}

struct Token {
    name: String,
    hash: [u8; 32],
    actions: Vec<String>,
}

/// The bearer tokens the server accepts, by hash.
pub struct Tokens(Vec<Token>);

/// Every action name a token may list (`*` stands for all of them).
pub const ACTIONS: &[&str] = &[
    "check",
    "ace:run_task",
    "ace:execute_catalog",
    "metrics",
    "openapi",
    "catalog:read",
    "ssh:check_node_connections",
    "ssh:run_command",
    "ssh:run_script",
    "ssh:upload_file",
    "ssh:run_task",
    "jobs:read",
    "jobs:command",
    "jobs:task",
    "jobs:deploy",
    "jobs:stop",
    "jobs:plan",
    "puppet:agent",
    "classifier:read",
    "classifier:edit",
    "ca:admin",
];

impl Tokens {
    /// Reads a tokens file; `key` names the config key in errors.
    pub fn load(path: &Path, config: &Path) -> Result<Tokens, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: shown.clone(),
            source,
        })?;
        let file: TokensFile = crate::yaml::from_str(&text)
            .map_err(|e| crate::server::config::yaml_error(&shown, e))?;
        let bad = |message: String| ConfigError::Value {
            path: config.display().to_string(),
            key: "tokens-file",
            message: format!("{shown}: {message}"),
        };
        let mut tokens = Vec::new();
        for entry in file.tokens {
            let mut hash = [0u8; 32];
            hex::decode_to_slice(entry.sha256.trim(), &mut hash).map_err(|_| {
                bad(format!(
                    "token '{}': sha256 must be 64 hex digits",
                    entry.name
                ))
            })?;
            if let Some(a) = entry
                .actions
                .iter()
                .find(|a| *a != "*" && !ACTIONS.contains(&a.as_str()))
            {
                return Err(bad(format!(
                    "token '{}': unknown action '{a}' (known: *, {})",
                    entry.name,
                    ACTIONS.join(", ")
                )));
            }
            tokens.push(Token {
                name: entry.name,
                hash,
                actions: entry.actions,
            });
        }
        Ok(Tokens(tokens))
    }

    /// The token whose hash matches, comparing every entry in constant time.
    fn find(&self, presented: &str) -> Option<&Token> {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let mut found = None;
        for token in &self.0 {
            if bool::from(token.hash.ct_eq(&digest)) {
                found = Some(token);
            }
        }
        found
    }
}

/// The action a request needs, from its method and path: `None` for a
/// request no route answers. HEAD is GET without the body, so it needs
/// what GET needs.
pub fn action_for(method: &Method, path: &str) -> Option<&'static str> {
    let read = method == Method::GET || method == Method::HEAD;
    let post = method == Method::POST;
    let under = |root: &str| {
        path == root
            || path
                .strip_prefix(root)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    if let Some(action) = puppet_action(method, path) {
        return Some(action);
    }
    if ca_public(method, path) {
        return Some(CA_PUBLIC);
    }
    if under("/puppet-ca/v1/certificate_status") || under("/puppet-ca/v1/certificate_statuses") {
        return Some("ca:admin");
    }
    let action = match path {
        "/check" if post => "check",
        "/run_task" if post => "ace:run_task",
        "/execute_catalog" if post => "ace:execute_catalog",
        "/metrics" if read => "metrics",
        "/openapi.json" if read => "openapi",
        _ if read
            && ["/tasks", "/plans", "/puppet/v3/file_content"]
                .iter()
                .any(|r| under(r)) =>
        {
            "catalog:read"
        }
        "/ssh/check_node_connections" if post => "ssh:check_node_connections",
        "/ssh/run_command" if post => "ssh:run_command",
        "/ssh/run_script" if post => "ssh:run_script",
        "/ssh/upload_file" if post => "ssh:upload_file",
        "/ssh/run_task" if post => "ssh:run_task",
        "/orchestrator/v1/command/command" if post => "jobs:command",
        "/orchestrator/v1/command/task" if post => "jobs:task",
        "/orchestrator/v1/command/deploy" if post => "jobs:deploy",
        "/orchestrator/v1/command/stop" if post => "jobs:stop",
        "/orchestrator/v1/command/plan_run" if post => "jobs:plan",
        _ if read && (under("/orchestrator/v1/jobs") || under("/orchestrator/v1/plan_jobs")) => {
            "jobs:read"
        }
        _ if post && under("/classifier-api/v1/classified/nodes") => "classifier:read",
        _ if read && under("/classifier-api/v1/groups") => "classifier:read",
        _ if (post || method == Method::PUT || method == Method::DELETE)
            && under("/classifier-api/v1/groups") =>
        {
            "classifier:edit"
        }
        "/classifier-api/v1/commands/unpin-from-all" if post => "classifier:edit",
        _ => return None,
    };
    Some(action)
}

/// The label of the CA's bootstrap endpoints (metrics, OpenAPI): no
/// action is needed for them, and a token cannot list this one.
pub const CA_PUBLIC: &str = "ca:public";

/// Whether this is one of the Puppet CA's bootstrap endpoints, which
/// need no authentication: the CA certificate and CRL, a node's
/// certificate, submitting and reading a CSR.
pub fn ca_public(method: &Method, path: &str) -> bool {
    let read = method == Method::GET || method == Method::HEAD;
    let segs: Vec<&str> = path.split('/').collect();
    match segs.as_slice() {
        [
            "",
            "puppet-ca",
            "v1",
            "certificate" | "certificate_revocation_list",
            _,
        ] => read,
        ["", "puppet-ca", "v1", "certificate_request", _] => read || method == Method::PUT,
        _ => false,
    }
}

/// The Puppet agent endpoints' action (`puppet:agent`), or the module
/// files' (`catalog:read`, which bolt-server's callers use too).
fn puppet_action(method: &Method, path: &str) -> Option<&'static str> {
    let read = method == Method::GET || method == Method::HEAD;
    let segs: Vec<&str> = path.split('/').collect();
    let action = match segs.as_slice() {
        ["", "puppet", "v3", "node", _] if read => "puppet:agent",
        ["", "puppet", "v3", "catalog", _] if read || method == Method::POST => "puppet:agent",
        ["", "puppet", "v3", "report" | "facts", _] if method == Method::PUT => "puppet:agent",
        ["", "puppet", "v3", "environments"] if read => "puppet:agent",
        [
            "",
            "puppet",
            "v3",
            "file_metadata" | "file_metadatas",
            _,
            ..,
        ] if read => "puppet:agent",
        [
            "",
            "puppet",
            "v3",
            "file_content",
            "plugins" | "pluginfacts",
            ..,
        ] if read => "puppet:agent",
        ["", "status", "v1", "simple", ..] if read => "puppet:agent",
        _ => return None,
    };
    Some(action)
}

/// Whether a certificate that is only `certname`'s node's may make this
/// request: the Puppet agent endpoints, those naming a node only for
/// itself, and module files from the `modules`, `plugins` and
/// `pluginfacts` mounts. `Err` says why not.
pub fn node_may(method: &Method, path: &str, certname: &str) -> Result<(), String> {
    let segs: Vec<&str> = path.split('/').collect();
    let own = |named: &str| {
        let decoded = percent_encoding::percent_decode_str(named).decode_utf8_lossy();
        if decoded == certname {
            Ok(())
        } else {
            Err(format!(
                "certificate '{certname}' may not reach another node's {} ('{decoded}')",
                segs.get(3).copied().unwrap_or_default()
            ))
        }
    };
    match (puppet_action(method, path), segs.as_slice()) {
        (
            Some(_),
            [
                "",
                "puppet",
                "v3",
                "node" | "catalog" | "report" | "facts",
                named,
            ],
        ) => own(named),
        (Some(_), _) => Ok(()),
        (None, ["", "puppet", "v3", "file_content", "modules", ..])
            if *method == Method::GET || *method == Method::HEAD =>
        {
            Ok(())
        }
        _ => Err(format!(
            "certificate '{certname}' is only a node's (not on the allowlist): it may reach the Puppet agent endpoints for itself, not this one"
        )),
    }
}

/// The middleware in front of every route.
pub async fn authenticate(
    State(state): State<Arc<AppState>>,
    mut req: Request,
    next: Next,
) -> Response {
    match identify(&state, &req) {
        Ok((identity, node)) => {
            req.extensions_mut().insert(identity);
            if let Some(node) = node {
                req.extensions_mut().insert(node);
            }
            next.run(req).await
        }
        Err(e) => e.into_response(),
    }
}

/// Who is calling, and (for a certificate that is only a node's) which node.
fn identify(state: &AppState, req: &Request) -> Result<(Identity, Option<NodeCert>), ApiError> {
    if state.ca.is_some() && ca_public(req.method(), req.uri().path()) {
        let who = match req.extensions().get::<Peer>() {
            Some(Peer::Cert {
                certname: Some(name),
                ..
            }) => name.clone(),
            _ => "anonymous".to_string(),
        };
        return Ok((Identity(who), None));
    }
    let action = action_for(req.method(), req.uri().path());
    if let Some(value) = req.headers().get(header::AUTHORIZATION) {
        let tokens = state.tokens.as_ref().ok_or_else(|| {
            ApiError::unauthenticated("this server does not accept bearer tokens")
        })?;
        let presented = value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(|| ApiError::unauthenticated("Authorization must be 'Bearer <token>'"))?;
        let token = tokens
            .find(presented)
            .ok_or_else(|| ApiError::unauthenticated("unknown token"))?;
        let all = token.actions.iter().any(|a| a == "*");
        match action {
            // A token with every action may reach anything (and get 404/405).
            _ if all => {}
            Some(action) if token.actions.iter().any(|a| a == action) => {}
            Some(action) => {
                return Err(ApiError::forbidden(format!(
                    "this token may not run '{action}'"
                )));
            }
            None => {
                return Err(ApiError::forbidden(
                    "this token may not make this request (no action covers it)",
                ));
            }
        }
        return Ok((Identity(format!("token:{}", token.name)), None));
    }
    match req.extensions().get::<Peer>() {
        Some(Peer::Cert { names, certname }) => {
            let first = names.first().cloned().unwrap_or_default();
            let operator = state
                .config
                .allowlist
                .as_ref()
                .is_some_and(|allowed| names.iter().any(|n| allowed.contains(n)));
            if operator {
                return Ok((Identity(first), None));
            }
            let Some(certname) = certname else {
                return Err(ApiError::forbidden(format!(
                    "certificate '{first}' is not on the allowlist and has no CN (a node's certname)"
                )));
            };
            node_may(req.method(), req.uri().path(), certname).map_err(ApiError::forbidden)?;
            Ok((Identity(certname.clone()), Some(NodeCert(certname.clone()))))
        }
        _ => Err(ApiError::unauthenticated(
            "a client certificate from the server's CA, or a bearer token, is required",
        )),
    }
}
