//! Setting up a compilation (top scope, facts, Stage[main], Class[main]) and
//! finishing it: lazy defined types and collectors to a fixpoint, overrides,
//! resource defaults, relationships turned into metaparameters; then the
//! evaluator's [`Output`], from which the catalog is built.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::lang::error::LangError;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::resources::set_param;
use crate::lang::eval::title_patterns;
use crate::lang::eval::{Evaluator, Library, RelEnd, ResId, ResKind, Scope, ScopeId};
use crate::lang::loader::Loader;
use crate::lang::modulepath::Modulepath;
use crate::lang::syntax::ast::{Expr, Virtuality};
use crate::lang::values::types::PType;
use crate::lang::values::value::Value;
use typed_index_collections::TiVec;

/// Upper bound on fixpoint rounds (defines creating defines...).
const MAX_ROUNDS: usize = 10_000;

impl<'l> Evaluator<'l> {
    pub fn new(
        loader: &'l dyn Loader,
        modulepath: Modulepath,
        env_dir: Option<PathBuf>,
        node: &str,
        facts: &serde_json::Map<String, serde_json::Value>,
        library: &'l dyn Library,
    ) -> Evaluator<'l> {
        let facts_v = Value::Hash(
            facts
                .iter()
                .map(|(k, v)| (Value::Str(k.clone()), Value::from_json(v)))
                .collect(),
        );
        let mut ev = Evaluator {
            loader,
            library,
            modulepath,
            env_dir,
            node: node.to_string(),
            environment: "production".into(),
            classes: HashMap::new(),
            defines: HashMap::new(),
            functions: HashMap::new(),
            plans: HashMap::new(),
            type_aliases: HashMap::new(),
            resolving_aliases: HashSet::new(),
            param_guard: None,
            nodes: Vec::new(),
            loaded_files: HashSet::new(),
            scopes: TiVec::from(vec![Scope::default()]),
            resources: TiVec::new(),
            index: HashMap::new(),
            edges: Vec::new(),
            class_scopes: HashMap::new(),
            class_list: Vec::new(),
            pending_defines: Vec::new(),
            collectors: Vec::new(),
            overrides: Vec::new(),
            relationships: Vec::new(),
            depth: 0,
            messages: Vec::new(),
            hiera_cache: HashMap::new(),
            main_index: ResId::default(),
            stage_index: ResId::default(),
            node_scope: None,
            type_cache: HashMap::new(),
            facts: facts_v.clone(),
            render_stack: Vec::new(),
            pending_realize: Vec::new(),
            catalog_weight: 0,
            hiera_global: None,
            device_types: false,
        };
        let mut vars = HashMap::new();
        if let Value::Hash(h) = &facts_v {
            for (k, v) in h {
                if let Value::Str(k) = k {
                    vars.insert(k.clone(), v.clone());
                }
            }
        }
        let (host, domain) = match node.split_once('.') {
            Some((h, d)) => (h.to_string(), d.to_string()),
            None => (node.to_string(), String::new()),
        };
        let trusted = Value::Hash(vec![
            (Value::str("authenticated"), Value::str("local")),
            (Value::str("certname"), Value::str(node)),
            (Value::str("domain"), Value::str(domain)),
            (Value::str("extensions"), Value::Hash(Vec::new())),
            (Value::str("hostname"), Value::str(host)),
        ]);
        vars.insert("facts".into(), facts_v);
        vars.insert("trusted".into(), trusted);
        vars.insert("clientcert".into(), Value::str(node));
        vars.insert("environment".into(), Value::str("production"));
        vars.insert("name".into(), Value::str("main"));
        vars.insert("title".into(), Value::str("main"));
        if let Some(s) = ev.scopes.first_mut() {
            s.vars = vars;
        }
        ev
    }

    /// Create Stage[main], Class[Settings] and Class[main].
    pub fn setup_main(&mut self) -> EvalResult<()> {
        let stage = self.create_resource(
            "Stage",
            "main",
            vec![("name".into(), Value::str("main"))],
            None,
            ResKind::Stage,
            Virtuality::Real,
            None,
            ScopeId::TOP,
        )?;
        self.stage_index = stage;
        self.create_resource(
            "Class",
            "Settings",
            Vec::new(),
            None,
            ResKind::Class,
            Virtuality::Real,
            Some(stage),
            ScopeId::TOP,
        )?;
        self.class_list.push("settings".into());
        let main = self.create_resource(
            "Class",
            "main",
            vec![("name".into(), Value::str("main"))],
            None,
            ResKind::Class,
            Virtuality::Real,
            Some(stage),
            ScopeId::TOP,
        )?;
        self.main_index = main;
        if let Some(s) = self.scopes.first_mut() {
            s.container = main;
        }
        Ok(())
    }

    /// Consult this `hiera.yaml` (the global layer) before the environment's.
    pub fn set_global_hiera(&mut self, hiera_yaml: Option<PathBuf>) {
        self.hiera_global = hiera_yaml;
    }

    /// Makes the device resource types ([`super::device_types`]) built in,
    /// for a network device's catalog.
    pub fn enable_device_types(&mut self) {
        self.device_types = true;
    }

    /// How the node was authenticated, as `$trusted['authenticated']`
    /// says (`local` by default, as `puppet apply`; `remote` for a node
    /// compiled for an agentless run, as ACE does).
    pub fn set_trusted_authenticated(&mut self, how: &str) {
        if let Some(Value::Hash(h)) = self
            .scopes
            .first_mut()
            .and_then(|s| s.vars.get_mut("trusted"))
        {
            for (k, v) in h.iter_mut() {
                if k.as_str() == Some("authenticated") {
                    *v = Value::str(how);
                }
            }
        }
    }

    /// Names the environment the catalog is compiled in: `$environment`
    /// and the catalog's `environment` (`production` until set).
    pub fn set_environment(&mut self, name: &str) {
        self.environment = name.to_string();
        if let Some(s) = self.scopes.first_mut() {
            s.vars.insert("environment".into(), Value::str(name));
        }
    }

    /// Evaluate the main manifest's statements, then the node definition,
    /// then finish. A `next()`, `break()` or `return()` nothing caught is an
    /// error here.
    pub fn run(&mut self, stmts: &[Expr]) -> Result<(), LangError> {
        super::control::finished((|| {
            self.setup_main()?;
            self.hoist(stmts, "");
            self.eval_block(stmts, ScopeId::TOP)?;
            self.evaluate_node()?;
            self.finish()
        })())
    }

    pub fn finish(&mut self) -> EvalResult<()> {
        for _ in 0..MAX_ROUNDS {
            let mut progress = false;
            while !self.pending_defines.is_empty() {
                let batch = std::mem::take(&mut self.pending_defines);
                for idx in batch {
                    self.evaluate_define(idx)?;
                }
                progress = true;
            }
            if self.apply_realize()? {
                progress = true;
            }
            if self.run_collectors()? {
                progress = true;
            }
            // Realized virtual defines need evaluation too.
            let unevaluated: Vec<ResId> = self
                .resources
                .iter_enumerated()
                .filter(|(_, r)| r.kind == ResKind::Define && !r.virtual_ && !r.evaluated)
                .map(|(i, _)| i)
                .collect();
            if !unevaluated.is_empty() {
                self.pending_defines.extend(unevaluated);
                progress = true;
            }
            if !progress {
                break;
            }
        }
        self.apply_overrides()?;
        self.apply_relationships()?;
        for r in self.resources.iter_mut() {
            flatten_reference_arrays(&mut r.params);
        }
        self.validate_builtin_params()?;
        self.validate_device_params()?;
        self.check_metaparam_refs()
    }

    fn run_collectors(&mut self) -> EvalResult<bool> {
        let mut progress = false;
        for ci in 0..self.collectors.len() {
            let Some(c) = self.collectors.get(ci).cloned() else {
                continue;
            };
            if c.exported {
                continue;
            }
            for ri in (0..self.resources.len()).map(ResId) {
                if c.matched.contains(&ri) {
                    continue;
                }
                let Some(r) = self.resources.get(ri) else {
                    continue;
                };
                if r.type_name != c.type_name || r.exported {
                    continue;
                }
                let hit = match &c.query {
                    Some(q) => self.query_match(q, ri, c.scope)?,
                    None => true,
                };
                if !hit {
                    continue;
                }
                // Any new match is progress: an override it applies (a tag)
                // may make another collector match (Puppet loops while any
                // collector finds something).
                if let Some(col) = self.collectors.get_mut(ci) {
                    col.matched.insert(ri);
                    progress = true;
                }
                if let Some(r) = self.resources.get_mut(ri) {
                    if r.virtual_ {
                        r.virtual_ = false;
                    }
                    Self::apply_param_ops(r, &c.overrides);
                }
            }
        }
        Ok(progress)
    }

    fn apply_overrides(&mut self) -> EvalResult<()> {
        let ovs = std::mem::take(&mut self.overrides);
        for (refs, ops, loc) in ovs {
            for key in refs {
                let Some(&idx) = self.index.get(&key) else {
                    return Err(LangError::eval(
                        format!(
                            "Resource Override can only operate on resources, got: {}[{}]-Reference",
                            key.0, key.1
                        ),
                        &loc,
                    ).into());
                };
                if let Some(r) = self.resources.get_mut(idx) {
                    Self::apply_param_ops(r, &ops);
                }
            }
        }
        Ok(())
    }

    /// The resources of a relationship operand; a source collector that
    /// collected nothing stands for its chain's left operand (recursively).
    fn resolve_end(&self, e: &RelEnd, source: bool) -> Vec<ResId> {
        match e {
            RelEnd::Refs(refs) => refs
                .iter()
                .filter_map(|k| self.index.get(k).copied())
                .collect(),
            RelEnd::Collector(ci, alternative) => {
                let mut v: Vec<ResId> = self
                    .collectors
                    .get(*ci)
                    .map(|c| c.matched.iter().copied().collect())
                    .unwrap_or_default();
                v.sort_unstable();
                match alternative {
                    Some(alt) if source && v.is_empty() => self.resolve_end(alt, true),
                    _ => v,
                }
            }
        }
    }

    /// The references of a relationship operand, each with whether the
    /// catalog has it (collectors resolved as [`Self::resolve_end`] does).
    fn end_names(&self, e: &RelEnd, source: bool) -> Vec<(String, bool)> {
        match e {
            RelEnd::Refs(refs) => refs
                .iter()
                .map(|k| (format!("{}[{}]", k.0, k.1), self.index.contains_key(k)))
                .collect(),
            RelEnd::Collector(..) => self
                .resolve_end(e, source)
                .into_iter()
                .filter_map(|i| self.resources.get(i))
                .map(|r| (format!("{}[{}]", r.type_name, r.title), true))
                .collect(),
        }
    }

    fn apply_relationships(&mut self) -> EvalResult<()> {
        let rels = std::mem::take(&mut self.relationships);
        for (src, tgt, param, _loc) in rels {
            // Puppet relates every source to every target, in order, and
            // fails at the first pair with a missing end.
            let src_names = self.end_names(&src, true);
            let tgt_names = self.end_names(&tgt, false);
            for (s, s_ok) in &src_names {
                for (t, t_ok) in &tgt_names {
                    let (missing, dir, other) = match (s_ok, t_ok) {
                        (false, _) => (s, "on", t),
                        (_, false) => (t, "from", s),
                        _ => continue,
                    };
                    return Err(LangError::load(format!(
                        "Could not find resource '{missing}' for relationship {dir} '{other}'"
                    ))
                    .into());
                }
            }
            let sources = self.resolve_end(&src, true);
            let targets = self.resolve_end(&tgt, false);
            if targets.is_empty() {
                continue;
            }
            let target_refs: Vec<Value> = targets
                .iter()
                .filter_map(|i| self.resources.get(*i))
                .map(|r| {
                    Value::Type(PType::Resource(
                        Some(r.type_name.clone()),
                        Some(r.title.clone()),
                    ))
                })
                .collect();
            for s in sources {
                let Some(r) = self.resources.get_mut(s) else {
                    continue;
                };
                let mut cur = match r
                    .params
                    .iter()
                    .find(|(n, _)| n == param)
                    .map(|(_, v)| v.clone())
                {
                    Some(Value::Array(a)) => a,
                    Some(Value::Undef) | None => Vec::new(),
                    Some(other) => vec![other],
                };
                cur.extend(target_refs.iter().cloned());
                set_param(&mut r.params, param.to_string(), Value::Array(cur));
            }
        }
        Ok(())
    }

    /// Validate that references in relationship metaparameters exist.
    pub fn check_metaparam_refs(&self) -> EvalResult<()> {
        for r in self.resources.iter().filter(|r| !r.virtual_) {
            for (n, v) in &r.params {
                if !matches!(n.as_str(), "before" | "require" | "notify" | "subscribe") {
                    continue;
                }
                let mut refs = Vec::new();
                if crate::lang::eval::resources::collect_refs(v, &mut refs).is_err() {
                    continue;
                }
                for k in refs {
                    if !self.index.contains_key(&k) {
                        // Puppet's catalog validation: the resource's file
                        // and line, no column, no prefix.
                        return Err(LangError {
                            kind: crate::lang::error::ErrorKind::Load,
                            message: format!(
                                "Could not find resource '{}[{}]' in parameter '{n}'",
                                k.0, k.1
                            ),
                            loc: r.loc.clone().map(|mut l| {
                                if let Some((_, line)) = r.meta_lines.iter().find(|(m, _)| m == n) {
                                    l.line = *line;
                                }
                                l.col = 0;
                                l
                            }),
                        }
                        .into());
                    }
                }
            }
        }
        Ok(())
    }
}

/// Arrays of references flattened as Puppet writes a resource into the
/// catalog (`Puppet::Resource#to_hash` and its copy): a relationship
/// metaparameter's array is flattened and loses its undefs; any other
/// array is flattened when a reference is somewhere inside.
fn flatten_reference_arrays(params: &mut [(String, Value)]) {
    fn flatten(items: &[Value], out: &mut Vec<Value>) {
        for v in items {
            match v {
                Value::Array(inner) => flatten(inner, out),
                other => out.push(other.clone()),
            }
        }
    }
    let is_ref = |v: &Value| {
        matches!(
            v,
            Value::Type(PType::Resource(Some(_), Some(_)) | PType::Class(Some(_)))
        )
    };
    for (n, v) in params.iter_mut() {
        let Value::Array(items) = v else {
            continue;
        };
        if !items
            .iter()
            .any(|x| matches!(x, Value::Array(_) | Value::Undef))
        {
            continue;
        }
        let mut flat = Vec::new();
        flatten(items, &mut flat);
        if matches!(n.as_str(), "before" | "require" | "notify" | "subscribe") {
            flat.retain(|x| !x.is_undef());
            *v = Value::Array(flat);
        } else if flat.iter().any(is_ref) {
            *v = Value::Array(flat);
        }
    }
}

/// One resource of a finished compilation.
#[derive(Debug, Clone)]
pub struct OutputResource {
    pub type_name: String,
    pub title: String,
    pub params: Vec<(String, Value)>,
    pub loc: Option<crate::lang::error::Loc>,
    pub kind: ResKind,
    pub virtual_: bool,
    pub exported: bool,
    pub tags: Vec<String>,
    /// The parameter that names a resource of this type (`name`, `path`...).
    pub namevar: String,
}

/// What a compilation produced: everything the catalog is built from.
#[derive(Debug, Clone)]
pub struct Output {
    pub node: String,
    pub environment: String,
    /// Every resource in declaration order, virtual and exported ones too.
    pub resources: Vec<OutputResource>,
    /// Containment edges: (container, contained).
    pub edges: Vec<(ResId, ResId)>,
    /// Declared classes in order.
    pub classes: Vec<String>,
    /// Output of notice(), warning() and the other logging functions.
    pub messages: Vec<String>,
}

/// A built-in resource's parameters under the ones its title sets (Puppet's
/// `parse_title.merge(parameters)` when it writes the catalog).
fn with_title_params(
    kind: ResKind,
    type_name: &str,
    title: &str,
    params: Vec<(String, Value)>,
) -> Vec<(String, Value)> {
    if kind != ResKind::Builtin {
        return params;
    }
    let from_title = title_patterns::title_params(&type_name.to_lowercase(), title);
    if from_title.is_empty() {
        return params;
    }
    let mut out: Vec<(String, Value)> = from_title
        .into_iter()
        .filter(|(k, _)| !params.iter().any(|(p, _)| p == k))
        .map(|(k, v)| (k, Value::Str(v)))
        .collect();
    out.extend(params);
    out
}

impl<'l> Evaluator<'l> {
    /// The parameter that names a resource of `type_name`.
    pub(in crate::lang) fn namevar(&self, type_name: &str) -> String {
        let lower = type_name.to_lowercase();
        match lower.as_str() {
            "exec" => "command".into(),
            "file" => "path".into(),
            _ => self
                .type_cache
                .get(&lower)
                .and_then(|t| t.as_ref().map(|t| t.namevar.clone()))
                .or_else(|| {
                    self.builtin_device_type(&lower)
                        .map(|t| t.namevar.to_string())
                })
                .unwrap_or_else(|| "name".into()),
        }
    }

    /// The result of a finished compilation (after [`Evaluator::run`]).
    pub fn into_output(mut self) -> Output {
        let resources = std::mem::take(&mut self.resources)
            .into_iter()
            .map(|r| OutputResource {
                namevar: self.namevar(&r.type_name),
                params: with_title_params(r.kind, &r.type_name, &r.title, r.params),
                type_name: r.type_name,
                title: r.title,
                loc: r.loc,
                kind: r.kind,
                virtual_: r.virtual_,
                exported: r.exported,
                tags: r.tags,
            })
            .collect();
        Output {
            node: self.node,
            environment: self.environment,
            resources,
            edges: self.edges,
            classes: self.class_list,
            messages: self.messages,
        }
    }
}
