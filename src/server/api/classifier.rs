//! Puppet Enterprise's node classifier API (`/classifier-api/v1/...`) over
//! the server's node groups: `GET /groups` (every group), `POST /groups`
//! (a new group, its id made here: 303 to its URL, as PE answers), `GET`,
//! `PUT` (create or replace), `POST` (change: the keys given replace the
//! group's, `classes`, `variables` and `config_data` merged into it with
//! `null` deleting, as PE's update does) and `DELETE` `/groups/:id`, and
//! `POST /groups/:id/pin` and `/unpin` (`?nodes=a,b` or `{"nodes":
//! [...]}`: pinned nodes are `["=", "name", NODE]` in the rule's
//! top-level `or`, as PE writes them), `POST /commands/unpin-from-all`
//! (the nodes unpinned from every group), and `POST /classified/nodes/:name` (`{fact, trusted}` → the
//! node's classification). A bad group, an unknown parent or a cycle is a 400
//! naming the field and changes nothing; a change is written to the groups
//! file before it is answered (`classifier::store`). These are operators'
//! endpoints: a certificate that is only a node's never reaches them
//! (`http::auth`).

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::server::AppState;
use crate::server::classifier::group::{Group, GroupError, ROOT_ID, check_id};
use crate::server::classifier::rule::Subject;
use crate::server::classifier::store::StoreError;
use crate::server::classifier::{Classification, classify::classify};
use crate::server::files::blocking;
use crate::server::http::body::RawBody;
use crate::server::http::errors::ApiError;

fn json_response(status: StatusCode, value: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn bad_group(e: GroupError) -> ApiError {
    let msg = match &e.group {
        Some(g) => format!("group '{g}': {}", e.message),
        None => e.message.clone(),
    };
    ApiError::bad_field(&e.field, msg)
}

fn store_error(e: StoreError) -> ApiError {
    match e {
        StoreError::Rejected(g) => bad_group(g),
        e => ApiError::internal(e),
    }
}

fn group_url(id: &str) -> String {
    format!("/classifier-api/v1/groups/{id}")
}

fn body_json(body: Result<RawBody, ApiError>) -> Result<Value, ApiError> {
    let RawBody(bytes) = body?;
    let value: Value = crate::server::http::body::parse(&bytes)?;
    if !value.is_object() {
        return Err(ApiError::bad_field("", "the body must be a JSON object"));
    }
    Ok(value)
}

fn not_found(id: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not-found",
        format!("The node group with id '{id}' does not exist"),
    )
}

/// Every node group.
#[utoipa::path(get, path = "/classifier-api/v1/groups",
    responses((status = 200, description = "[group]: {id, name, parent, rule, classes, variables, environment, environment_trumps, config_data, description}", body = Value)))]
pub async fn list(State(state): State<Arc<AppState>>) -> Response {
    json_response(StatusCode::OK, &state.groups.get().to_json())
}

/// One node group.
#[utoipa::path(get, path = "/classifier-api/v1/groups/{id}",
    params(("id" = String, Path)),
    responses((status = 200, description = "The group", body = Value)))]
pub async fn show(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let set = state.groups.get();
    let group = set.get(&id).ok_or_else(|| not_found(&id))?;
    Ok(json_response(StatusCode::OK, &group.to_json()))
}

/// Stores `group` (new, or replacing the one with its id).
async fn put_group(state: &Arc<AppState>, group: Group) -> Result<bool, ApiError> {
    let state = Arc::clone(state);
    blocking(move || {
        let created = state
            .groups
            .change(|set| {
                let mut groups = set.groups().to_vec();
                let created = match groups.iter_mut().find(|g| g.id == group.id) {
                    Some(old) => {
                        *old = group;
                        false
                    }
                    None => {
                        groups.push(group);
                        true
                    }
                };
                Ok::<_, ApiError>((groups, created))
            })
            .map_err(store_error)??;
        Ok(created)
    })
    .await
}

/// A random (type 4) UUID, as PE gives new groups.
fn new_id() -> Result<String, ApiError> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(ApiError::internal)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

/// Creates a group; its id is made here. Answers 303 with its URL in
/// `Location` (and the group in the body).
#[utoipa::path(post, path = "/classifier-api/v1/groups",
    request_body(content = Value, content_type = "application/json"),
    responses((status = 303, description = "Created: Location is the group's URL", body = Value)))]
pub async fn create(
    State(state): State<Arc<AppState>>,
    body: Result<RawBody, ApiError>,
) -> Result<Response, ApiError> {
    let doc = body_json(body)?;
    let id = match doc.get("id") {
        Some(Value::String(id)) => id.clone(),
        _ => new_id()?,
    };
    let group = Group::from_json(&doc, Some(&id)).map_err(bad_group)?;
    if state.groups.get().get(&id).is_some() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "uniqueness-violation",
            format!("A node group with id '{id}' already exists"),
        ));
    }
    let shown = group.to_json();
    put_group(&state, group).await?;
    let mut r = json_response(StatusCode::SEE_OTHER, &shown);
    if let Ok(v) = group_url(&id).parse() {
        r.headers_mut().insert(header::LOCATION, v);
    }
    Ok(r)
}

/// Creates the group with this id, or replaces it: 201 when created, 200
/// when replaced, with the group.
#[utoipa::path(put, path = "/classifier-api/v1/groups/{id}",
    params(("id" = String, Path)),
    request_body(content = Value, content_type = "application/json"),
    responses((status = 201, description = "Created", body = Value), (status = 200, description = "Replaced", body = Value)))]
pub async fn replace(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    body: Result<RawBody, ApiError>,
) -> Result<Response, ApiError> {
    check_id(&id, "id").map_err(bad_group)?;
    let doc = body_json(body)?;
    let group = Group::from_json(&doc, Some(&id)).map_err(bad_group)?;
    let shown = group.to_json();
    let created = put_group(&state, group).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(json_response(status, &shown))
}

/// `into` with `delta` merged: objects key by key, `null` deleting.
fn merge(into: &mut Map<String, Value>, delta: &Map<String, Value>) {
    for (k, v) in delta {
        match (into.get_mut(k), v) {
            (_, Value::Null) => {
                into.remove(k);
            }
            (Some(Value::Object(old)), Value::Object(new)) => merge(old, new),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Changes a group: the keys given replace its own; `classes`,
/// `variables` and `config_data` are merged into its own (`null` deletes
/// a class, parameter or variable).
#[utoipa::path(post, path = "/classifier-api/v1/groups/{id}",
    params(("id" = String, Path)),
    request_body(content = Value, content_type = "application/json"),
    responses((status = 200, description = "The changed group", body = Value)))]
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    body: Result<RawBody, ApiError>,
) -> Result<Response, ApiError> {
    let delta = body_json(body)?;
    let Some(delta) = delta.as_object() else {
        return Err(ApiError::bad_field("", "the body must be a JSON object"));
    };
    let st = Arc::clone(&state);
    let id2 = id.clone();
    let delta = delta.clone();
    let changed = blocking(move || {
        st.groups
            .change(|set| {
                let old = set.get(&id2).ok_or_else(|| not_found(&id2))?;
                let mut doc = match old.to_json() {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                for (k, v) in &delta {
                    match (k.as_str(), doc.get_mut(k), v) {
                        (
                            "classes" | "variables" | "config_data",
                            Some(Value::Object(o)),
                            Value::Object(n),
                        ) => merge(o, n),
                        _ => {
                            doc.insert(k.clone(), v.clone());
                        }
                    }
                }
                let group = Group::from_json(&Value::Object(doc), Some(&id2)).map_err(bad_group)?;
                let shown = group.to_json();
                let mut groups = set.groups().to_vec();
                for g in groups.iter_mut().filter(|g| g.id == id2) {
                    *g = group.clone();
                }
                Ok::<_, ApiError>((groups, shown))
            })
            .map_err(store_error)?
    })
    .await?;
    Ok(json_response(StatusCode::OK, &changed))
}

/// Deletes a group (204). The root, or a group with children, is not
/// deleted (422).
#[utoipa::path(delete, path = "/classifier-api/v1/groups/{id}",
    params(("id" = String, Path)),
    responses((status = 204, description = "Deleted")))]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let st = Arc::clone(&state);
    blocking(move || {
        st.groups
            .change(|set| {
                let group = set.get(&id).ok_or_else(|| not_found(&id))?;
                if group.is_root() || id == ROOT_ID {
                    return Err(ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "root-group",
                        "The root group cannot be deleted",
                    ));
                }
                let children: Vec<&str> = set
                    .groups()
                    .iter()
                    .filter(|g| g.parent == id && g.id != id)
                    .map(|g| g.name.as_str())
                    .collect();
                if !children.is_empty() {
                    return Err(ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "children-present",
                        format!(
                            "The node group '{}' has children ({}); delete them first",
                            group.name,
                            children.join(", ")
                        ),
                    ));
                }
                let groups = set
                    .groups()
                    .iter()
                    .filter(|g| g.id != id)
                    .cloned()
                    .collect();
                Ok((groups, ()))
            })
            .map_err(store_error)?
    })
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

fn nodes_required() -> ApiError {
    ApiError::bad_field(
        "nodes",
        "is required: a list of certnames (in the body, or ?nodes=a,b)",
    )
}

/// The nodes of a pin or unpin request, as PE takes them: the query
/// string's `nodes` (comma-separated certnames), the body's `{"nodes":
/// [certname, ...]}` (or one certname as a string), or both (their
/// union). At least one, each a certname.
fn pin_nodes(
    query: &HashMap<String, String>,
    body: Result<RawBody, ApiError>,
) -> Result<Vec<String>, ApiError> {
    if let Some(k) = query.keys().find(|k| *k != "nodes") {
        return Err(ApiError::bad_field(
            k,
            "is not a parameter of a pin request (nodes)",
        ));
    }
    let mut nodes: Vec<(String, String)> = Vec::new();
    if let Some(list) = query.get("nodes") {
        for (i, name) in list.split(',').enumerate() {
            nodes.push((format!("nodes[{i}]"), name.to_string()));
        }
    }
    let RawBody(bytes) = body?;
    let no_body = bytes.iter().all(u8::is_ascii_whitespace);
    if no_body && !query.contains_key("nodes") {
        return Err(nodes_required());
    }
    if !no_body {
        let doc = body_json(Ok(RawBody(bytes)))?;
        if let Some(k) = doc
            .as_object()
            .and_then(|m| m.keys().find(|k| *k != "nodes"))
        {
            return Err(ApiError::bad_field(
                k,
                "is not a key of a pin request (nodes)",
            ));
        }
        let list = match doc.get("nodes") {
            Some(Value::Array(list)) => list.clone(),
            Some(one @ Value::String(_)) => vec![one.clone()],
            _ => {
                return Err(nodes_required());
            }
        };
        for (i, v) in list.iter().enumerate() {
            let name = v.as_str().unwrap_or_default().to_string();
            nodes.push((format!("nodes[{i}]"), name));
        }
    }
    if nodes.is_empty() {
        return Err(ApiError::bad_field("nodes", "must name at least one node"));
    }
    let mut names: Vec<String> = Vec::new();
    for (field, name) in nodes {
        crate::server::ca::check_certname(&name)
            .map_err(|e| ApiError::bad_field(&field, e.to_string()))?;
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

/// Rewrites group `id`'s rule with `edit`; 204.
async fn edit_rule(
    state: &Arc<AppState>,
    id: String,
    nodes: Vec<String>,
    edit: fn(&Value, &[String]) -> Value,
) -> Result<Response, ApiError> {
    let st = Arc::clone(state);
    blocking(move || {
        st.groups
            .change(|set| {
                let old = set.get(&id).ok_or_else(|| not_found(&id))?;
                let mut doc = old.to_json();
                doc["rule"] = edit(&old.rule_json, &nodes);
                let group = Group::from_json(&doc, Some(&id)).map_err(bad_group)?;
                let mut groups = set.groups().to_vec();
                for g in groups.iter_mut().filter(|g| g.id == id) {
                    *g = group.clone();
                }
                Ok::<_, ApiError>((groups, ()))
            })
            .map_err(store_error)?
    })
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Pins nodes to a group (`?nodes=a,b` or `{"nodes": [...]}`; 204):
/// each becomes a `["=", "name", NODE]` in the rule's top-level `or`, as
/// PE writes it.
#[utoipa::path(post, path = "/classifier-api/v1/groups/{id}/pin",
    params(("id" = String, Path), ("nodes" = Option<String>, Query)),
    request_body(content = Value, content_type = "application/json", description = "{\"nodes\": [certname]}"),
    responses((status = 204, description = "Pinned")))]
pub async fn pin(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    body: Result<RawBody, ApiError>,
) -> Result<Response, ApiError> {
    let nodes = pin_nodes(&query, body)?;
    edit_rule(&state, id, nodes, crate::server::classifier::pin::pin).await
}

/// Unpins nodes from a group (`?nodes=a,b` or `{"nodes": [...]}`; 204):
/// their comparisons leave the rule's top-level `or`.
#[utoipa::path(post, path = "/classifier-api/v1/groups/{id}/unpin",
    params(("id" = String, Path), ("nodes" = Option<String>, Query)),
    request_body(content = Value, content_type = "application/json", description = "{\"nodes\": [certname]}"),
    responses((status = 204, description = "Unpinned")))]
pub async fn unpin(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    body: Result<RawBody, ApiError>,
) -> Result<Response, ApiError> {
    let nodes = pin_nodes(&query, body)?;
    edit_rule(&state, id, nodes, crate::server::classifier::pin::unpin).await
}

/// Unpins nodes from every group they are pinned to (PE's `POST
/// /v1/commands/unpin-from-all`, body `{"nodes": [...]}` or `{"nodes":
/// "foo"}`) → 200 `{"nodes": [{name, groups: [{id, name,
/// environment}]}]}`: each node that was pinned somewhere, with the
/// groups it left. Rules that match a node otherwise are untouched.
#[utoipa::path(post, path = "/classifier-api/v1/commands/unpin-from-all",
    request_body(content = Value, content_type = "application/json", description = "{\"nodes\": [certname]}"),
    responses((status = 200, description = "{nodes: [{name, groups: [{id, name, environment}]}]}", body = Value)))]
pub async fn unpin_from_all(
    State(state): State<Arc<AppState>>,
    body: Result<RawBody, ApiError>,
) -> Result<Response, ApiError> {
    let nodes = pin_nodes(&HashMap::new(), body)?;
    let st = Arc::clone(&state);
    let unpinned = blocking(move || {
        st.groups
            .change(|set| {
                let mut groups = set.groups().to_vec();
                let mut left: Vec<(String, Vec<Value>)> =
                    nodes.iter().map(|n| (n.clone(), Vec::new())).collect();
                for g in groups.iter_mut() {
                    let mut here = Vec::new();
                    for (node, from) in left.iter_mut() {
                        let one = std::slice::from_ref(node);
                        if crate::server::classifier::pin::unpin(&g.rule_json, one) != g.rule_json {
                            from.push(
                                json!({"id": g.id, "name": g.name, "environment": g.environment}),
                            );
                            here.push(node.clone());
                        }
                    }
                    if here.is_empty() {
                        continue;
                    }
                    let mut doc = g.to_json();
                    doc["rule"] = crate::server::classifier::pin::unpin(&g.rule_json, &here);
                    *g = Group::from_json(&doc, Some(&g.id)).map_err(bad_group)?;
                }
                let shown: Vec<Value> = left
                    .into_iter()
                    .filter(|(_, from)| !from.is_empty())
                    .map(|(name, from)| json!({"name": name, "groups": from}))
                    .collect();
                Ok::<_, ApiError>((groups, shown))
            })
            .map_err(store_error)?
    })
    .await?;
    Ok(json_response(StatusCode::OK, &json!({ "nodes": unpinned })))
}

/// The classification as PE shows it.
fn classification_json(name: &str, c: &Classification) -> Value {
    json!({
        "name": name,
        "groups": c.groups,
        "environment": c.environment.to_json(),
        "classes": c.classes,
        "parameters": c.parameters,
        "config_data": c.config_data,
    })
}

/// Classifies a node by its name and the facts given (`{fact, trusted}`),
/// against the node groups: `{name, groups, environment, classes,
/// parameters, config_data}`. Groups that disagree are a 500
/// `ferry/classification-conflict` naming them (`details` lists the
/// claims).
#[utoipa::path(post, path = "/classifier-api/v1/classified/nodes/{name}",
    params(("name" = String, Path)),
    request_body(content = Value, content_type = "application/json"),
    responses((status = 200, description = "{name, groups, environment, classes, parameters, config_data}", body = Value)))]
pub async fn classified(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    body: Result<RawBody, ApiError>,
) -> Result<Response, ApiError> {
    super::puppet::check_certname(&name, "name")?;
    let RawBody(bytes) = body?;
    let doc: Value = if bytes.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        crate::server::http::body::parse(&bytes)?
    };
    let part = |key: &str| -> Result<Map<String, Value>, ApiError> {
        match doc.get(key) {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m.clone()),
            Some(_) => Err(ApiError::bad_field(key, "must be an object")),
        }
    };
    if let Some(k) = doc.as_object().and_then(|m| {
        m.keys()
            .find(|k| !["fact", "trusted"].contains(&k.as_str()))
    }) {
        return Err(ApiError::bad_field(k, "is not one of fact, trusted"));
    }
    let (facts, trusted) = (part("fact")?, part("trusted")?);
    let set = state.groups.get();
    let subject = Subject {
        name: &name,
        facts: &facts,
        trusted: &trusted,
    };
    match classify(&set, &subject) {
        Ok(c) => Ok(json_response(
            StatusCode::OK,
            &classification_json(&name, &c),
        )),
        Err(conflict) => Err(super::puppet::node_error(conflict.into())),
    }
}
