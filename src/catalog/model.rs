//! The catalog model as serialized by Puppet (`catalog_format` 2), built
//! from the evaluator's [`Output`]: included resources with parameters,
//! automatic tags, containment edges and the classes list.

use serde::Serialize;

use crate::lang::eval::{Output, ResId, ResKind};

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CatalogResource {
    #[serde(rename = "type")]
    pub type_name: String,
    pub title: String,
    pub tags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub exported: bool,
    pub kind: String,
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub parameters: serde_json::Map<String, serde_json::Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sensitive_parameters: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Edge {
    pub source: String,
    pub target: String,
}

/// A compiled catalog; serializes to Puppet's catalog JSON.
#[derive(Debug, Clone, Serialize)]
pub struct Catalog {
    pub tags: Vec<String>,
    pub name: String,
    pub version: u64,
    pub code_id: Option<String>,
    pub catalog_uuid: String,
    pub catalog_format: u32,
    pub environment: String,
    pub resources: Vec<CatalogResource>,
    pub edges: Vec<Edge>,
    pub classes: Vec<String>,
    /// Messages from notice/warning/... functions (not part of the JSON).
    #[serde(skip)]
    pub messages: Vec<String>,
}

fn kind_name(k: ResKind) -> &'static str {
    match k {
        ResKind::Builtin | ResKind::Stage => "compilable_type",
        ResKind::Define => "defined_type",
        ResKind::Class | ResKind::Node => "unknown",
    }
}

pub(crate) fn build(ev: Output) -> Catalog {
    let included: Vec<bool> = ev
        .resources
        .iter()
        .map(|r| !r.virtual_ && !r.exported)
        .collect();
    let is_in = |i: usize| included.get(i).copied().unwrap_or(false);
    let name_of = |ResId(i): ResId| {
        ev.resources
            .get(i)
            .map(|r| format!("{}[{}]", r.type_name, r.title))
    };
    let mut edges: Vec<Edge> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for &(s, t) in &ev.edges {
        if !is_in(s.0) || !is_in(t.0) || !seen.insert((s, t)) {
            continue;
        }
        if let (Some(source), Some(target)) = (name_of(s), name_of(t)) {
            edges.push(Edge { source, target });
        }
    }
    let mut resources = Vec::new();
    let mut tags: Vec<String> = Vec::new();
    for (i, r) in ev.resources.into_iter().enumerate() {
        if !is_in(i) {
            continue;
        }
        let mut parameters = serde_json::Map::new();
        let mut sensitive = Vec::new();
        for (k, v) in r.params {
            // Puppet omits a namevar that merely repeats the title.
            if r.kind == ResKind::Builtin && k == r.namevar && v.as_str() == Some(r.title.as_str())
            {
                continue;
            }
            if let crate::lang::values::value::Value::Sensitive(_) = v {
                sensitive.push(k.clone());
            }
            // A string (a file's content, often) moves; the rest converts.
            let json = match v {
                crate::lang::values::value::Value::Str(s) => Some(serde_json::Value::String(s)),
                other => other.to_json(),
            };
            if let Some(j) = json {
                parameters.insert(k, j);
            }
        }
        for t in &r.tags {
            if !tags.contains(t) {
                tags.push(t.clone());
            }
        }
        // Code given as a string (`-e`) has the empty file name, which
        // Puppet writes as `"file": ""` (puppet apply -e, Puppet[:code]).
        let (file, line) = match &r.loc {
            Some(l) => (Some(l.file.to_string()), Some(l.line)),
            None => (None, None),
        };
        resources.push(CatalogResource {
            type_name: r.type_name,
            title: r.title,
            tags: r.tags,
            file,
            line,
            exported: r.exported,
            kind: kind_name(r.kind).to_string(),
            parameters,
            sensitive_parameters: sensitive,
        });
    }
    let version = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let uuid = {
        use sha2::Digest;
        let d =
            sha2::Sha256::digest(format!("{}:{version}:{}", ev.node, resources.len()).as_bytes());
        let h: String = d.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{}-{}-{}-{}-{}",
            h.get(0..8).unwrap_or(""),
            h.get(8..12).unwrap_or(""),
            h.get(12..16).unwrap_or(""),
            h.get(16..20).unwrap_or(""),
            h.get(20..32).unwrap_or("")
        )
    };
    Catalog {
        tags,
        name: ev.node,
        version,
        code_id: None,
        catalog_uuid: uuid,
        catalog_format: 2,
        environment: ev.environment,
        resources,
        edges,
        classes: ev.classes,
        messages: ev.messages,
    }
}
