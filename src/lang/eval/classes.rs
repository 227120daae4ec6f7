//! Classes, defined types and nodes: loading manifests and hoisting their
//! definitions, module autoloading, class declaration (include/require/
//! contain/resource-like, inherits), parameter binding with automatic
//! hiera lookup and type checks, defined-type evaluation, node matching.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::lang::error::{LangError, Loc, plain};
use crate::lang::eval::control::{EvalResult, returned_from_body};
use crate::lang::eval::core_types::METAPARAMS;
use crate::lang::eval::resources::set_param;
use crate::lang::eval::{Evaluator, ResId, ResKind, ScopeId};
use crate::lang::loader;
use crate::lang::modulepath::Modulepath;
use crate::lang::syntax::ast::{Definition, Expr, ExprKind, NodeMatch, Virtuality};
use crate::lang::values::regex::compile_regex;
use crate::lang::values::types::{self, capitalize};
use crate::lang::values::value::Value;

/// The module a manifest file belongs to (`<modulepath>/<module>/manifests/..`).
fn module_of(modulepath: &Modulepath, file: &str) -> Option<String> {
    let (module, rest) = modulepath.module_of(Path::new(file))?;
    (rest.components().next()?.as_os_str() == "manifests").then_some(module)
}

/// Maximum nesting of defined types declared inside defined types.
const MAX_DEFINE_NESTING: usize = 200;

impl<'l> Evaluator<'l> {
    /// Parse a manifest file once and register its definitions.
    pub fn load_file(&mut self, path: &Path) -> Result<Option<Arc<Vec<Expr>>>, LangError> {
        if !self.loaded_files.insert(path.to_path_buf()) {
            return Ok(None);
        }
        let src = self.loader.read(path).map_err(|e| {
            LangError::load(format!("Could not read manifest {}: {e}", path.display()))
        })?;
        let file: Arc<str> = Arc::from(path.display().to_string());
        let stmts = crate::lang::syntax::parser::parse_cached(&src, &file)?;
        self.hoist(&stmts, "");
        Ok(Some(stmts))
    }

    /// Register class/define/node/function/type definitions.
    pub fn hoist(&mut self, stmts: &[Expr], ns: &str) {
        for s in stmts {
            match &s.kind {
                ExprKind::ClassDef(d) | ExprKind::DefineDef(d) => {
                    let full = if ns.is_empty() {
                        d.name.to_lowercase()
                    } else {
                        format!("{ns}::{}", d.name.to_lowercase())
                    };
                    let def = if full == d.name {
                        d.clone()
                    } else {
                        Arc::new(Definition {
                            name: full.clone(),
                            ..(**d).clone()
                        })
                    };
                    if matches!(s.kind, ExprKind::ClassDef(_)) {
                        self.hoist(&d.body, &full);
                        self.classes.entry(full).or_insert(def);
                    } else {
                        self.defines.entry(full).or_insert(def);
                    }
                }
                ExprKind::NodeDef(n) => self.nodes.push(n.clone()),
                ExprKind::PlanDef(d) => {
                    self.plans.entry(d.name.to_lowercase()).or_insert(d.clone());
                }
                ExprKind::FunctionDef(f) => {
                    self.functions
                        .entry(f.name.to_lowercase())
                        .or_insert(f.clone());
                }
                ExprKind::TypeAlias(name, e) => {
                    self.type_aliases
                        .entry(name.to_lowercase())
                        .or_insert((**e).clone());
                }
                _ => {}
            }
        }
    }

    /// Puppet's 3.x type loader (`Puppet::Parser::TypeLoader`): `a::b::c`
    /// is looked for in `a/b/c`, then `a/b`, then `a`. Each try reads the
    /// module's `init.pp` before the named file (`a/manifests/b/c.pp`), and
    /// instantiates every file it reads for the first time (see
    /// [`Self::instantiate`]), so an unknown type in a parameter list of
    /// `init.pp` fails every class of the module. The search stops at the
    /// first try that defines the name (`found`).
    fn autoload(&mut self, name: &str, found: fn(&Self, &str) -> bool) -> EvalResult<()> {
        let segs: Vec<&str> = name.trim_start_matches("::").split("::").collect();
        let Some((module, rest)) = segs.split_first() else {
            return Ok(());
        };
        if rest
            .iter()
            .any(|s| s.is_empty() || s.contains(['/', '\\', '.']))
        {
            return Ok(());
        }
        let Some(dir) = loader::module_dir(self.loader, &self.modulepath, module) else {
            return Ok(());
        };
        let manifests = dir.join("manifests");
        for n in (0..=rest.len()).rev() {
            let mut files = vec![manifests.join("init.pp")];
            if let Some((last, parents)) = rest[..n].split_last() {
                let mut p = manifests.clone();
                p.extend(parents);
                p.push(format!("{last}.pp"));
                files.push(p);
            }
            let mut fresh = Vec::new();
            for p in files {
                if self.loader.is_file(&p)
                    && let Some(stmts) = self.load_file(&p)?
                {
                    fresh.push(stmts);
                }
            }
            for stmts in &fresh {
                self.instantiate(stmts)?;
            }
            if found(self, name) {
                break;
            }
        }
        Ok(())
    }

    /// What Puppet does to each class and defined type of a manifest it
    /// loads (`PopsBridge#create_type_map`): evaluate its parameters' types
    /// in the top scope, nested definitions first. An unknown type fails
    /// here, at the type, whether or not the class is ever declared.
    fn instantiate(&mut self, stmts: &[Expr]) -> EvalResult<()> {
        for s in stmts {
            let (ExprKind::ClassDef(d) | ExprKind::DefineDef(d)) = &s.kind else {
                continue;
            };
            self.instantiate(&d.body)?;
            for t in d.params.iter().filter_map(|p| p.ty.as_ref()) {
                self.eval(t, ScopeId::TOP)?;
            }
        }
        Ok(())
    }

    pub fn find_class(&mut self, name: &str) -> EvalResult<Option<Arc<Definition>>> {
        if let Some(d) = self.classes.get(name) {
            return Ok(Some(d.clone()));
        }
        self.autoload(name, |ev, n| ev.classes.contains_key(n))?;
        Ok(self.classes.get(name).cloned())
    }

    pub fn find_define(&mut self, name: &str) -> EvalResult<Option<Arc<Definition>>> {
        if let Some(d) = self.defines.get(name) {
            return Ok(Some(d.clone()));
        }
        self.autoload(name, |ev, n| ev.defines.contains_key(n))?;
        Ok(self.defines.get(name).cloned())
    }

    pub fn module_type_exists(&mut self, name: &str) -> bool {
        if let Some(b) = self.type_cache.get(name) {
            return b.is_some();
        }
        let mut found = None;
        if !name.contains(['/', '\\', '.']) {
            let project = self.modulepath.project().map(|(_, p)| p.to_path_buf());
            let modules = project.into_iter().chain(
                self.modulepath
                    .dirs()
                    .iter()
                    .flat_map(|dir| self.loader.list(dir).unwrap_or_default()),
            );
            for m in modules {
                let rb = m.join("lib/puppet/type").join(format!("{name}.rb"));
                if self.loader.is_file(&rb) {
                    let src = self.loader.read(&rb).unwrap_or_default();
                    found = Some(crate::lang::eval::core_types::RubyType::read(&src));
                    break;
                }
            }
        }
        let exists = found.is_some();
        self.type_cache.insert(name.to_string(), found);
        exists
    }

    pub fn autoload_type_alias(&mut self, key: &str) {
        let Some((module, rest)) = key.split_once("::") else {
            return;
        };
        let rel: PathBuf = rest.split("::").collect();
        if let Some(dir) = loader::module_dir(self.loader, &self.modulepath, module) {
            let p = dir.join("types").join(rel).with_extension("pp");
            if self.loader.is_file(&p) {
                let _ = self.load_file(&p);
            }
        }
    }

    pub fn autoload_function(&mut self, name: &str) {
        let Some((module, rest)) = name.split_once("::") else {
            return;
        };
        let rel: PathBuf = rest.split("::").collect();
        if let Some(dir) = loader::module_dir(self.loader, &self.modulepath, module) {
            let p = dir.join("functions").join(rel).with_extension("pp");
            if self.loader.is_file(&p) {
                let _ = self.load_file(&p);
            }
        }
    }

    /// include/require/contain/resource-like declaration of a class.
    pub fn declare_class(
        &mut self,
        name: &str,
        params: Option<Vec<(String, Value)>>,
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<ResId> {
        let orig = name;
        let name = name.trim_start_matches("::").to_lowercase();
        if name.is_empty() {
            return Err(plain("Cannot declare a class with an empty name").into());
        }
        let cap = capitalize(&name);
        if let Some(&idx) = self.index.get(&("Class".to_string(), cap.clone())) {
            if params.is_some() {
                return Err(plain(format!(
                    "Duplicate declaration: Class[{cap}] is already declared; cannot redeclare (file: {}, line: {})",
                    loc.file, loc.line
                )).into());
            }
            return Ok(idx);
        }
        // Chain of not-yet-declared classes, youngest first.
        let mut chain: Vec<Arc<Definition>> = Vec::new();
        let mut cur = Some(name.clone());
        while let Some(n) = cur {
            if self
                .index
                .contains_key(&("Class".to_string(), capitalize(&n)))
            {
                break;
            }
            let Some(def) = self.find_class(&n)? else {
                if let Some(child) = chain.last() {
                    return Err(LangError::load(format!(
                        "Could not find parent resource type '::{n}' of type hostclass in production (file: {}, line: {})",
                        child.loc.file, child.loc.line
                    )).into());
                }
                if params.is_some() {
                    // A resource-like declaration: Puppet::Resource names
                    // the title as it was written.
                    return Err(plain(format!("Could not find declared class {orig}")).into());
                }
                return Err(plain(format!("Could not find class ::{n} for {}", self.node)).into());
            };
            if chain.iter().any(|d| d.name == def.name) || chain.len() > 100 {
                return Err(plain(format!("Circular inheritance detected for class {n}")).into());
            }
            cur = def.parent.clone().map(|p| p.to_lowercase());
            chain.push(def);
        }
        let decl_container = self.container_of(sc);
        let mut idxs = Vec::new();
        for def in chain.iter().rev() {
            let idx = self.create_class_resource(&def.name, decl_container, sc)?;
            idxs.push(idx);
        }
        if let (Some(p), Some(&idx)) = (&params, idxs.last()) {
            if let Some(stage) = p.iter().find(|(n, _)| n == "stage").map(|(_, v)| v.to_s()) {
                let Some(&sidx) = self.index.get(&("Stage".to_string(), stage.clone())) else {
                    return Err(plain(format!(
                        "Could not find stage {stage} specified by Class[{cap}]"
                    ))
                    .into());
                };
                let old = self.stage_index;
                if let Some(e) = self.edges.iter_mut().find(|e| **e == (old, idx)) {
                    e.0 = sidx;
                }
                if let Some(r) = self.resources.get_mut(idx) {
                    r.container = Some(sidx);
                }
            }
            if let Some(r) = self.resources.get_mut(idx) {
                r.loc = Some(loc.clone());
            }
        }
        let mut result = ResId::default();
        for (i, def) in chain.iter().rev().enumerate() {
            let idx = idxs.get(i).copied().unwrap_or_default();
            let p = if def.name == name {
                params.clone()
            } else {
                None
            };
            self.evaluate_class(def, idx, p, sc, loc)?;
            result = idx;
        }
        Ok(result)
    }

    fn create_class_resource(
        &mut self,
        name: &str,
        decl_container: ResId,
        sc: ScopeId,
    ) -> EvalResult<ResId> {
        let stage = self.stage_index;
        let idx = self.create_resource(
            "Class",
            &capitalize(name),
            Vec::new(),
            None,
            ResKind::Class,
            Virtuality::Real,
            Some(stage),
            sc,
        )?;
        // Class tags also include the declaring resource's tags.
        let extra = self
            .resources
            .get(decl_container)
            .map(|r| r.tags.clone())
            .unwrap_or_default();
        if let Some(r) = self.resources.get_mut(idx) {
            for t in extra {
                if !r.tags.contains(&t) {
                    r.tags.push(t);
                }
            }
        }
        self.class_list.push(name.to_string());
        Ok(idx)
    }

    fn evaluate_class(
        &mut self,
        def: &Arc<Definition>,
        idx: ResId,
        params: Option<Vec<(String, Value)>>,
        decl_sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<()> {
        let parent_scope = match &def.parent {
            Some(p) => self.class_scopes.get(&p.to_lowercase()).copied(),
            None => None,
        }
        .or(self.node_scope)
        .unwrap_or(ScopeId::TOP);
        let scope = self.new_scope(Some(parent_scope), Some(decl_sc), idx);
        if let Some(s) = self.scopes.get_mut(scope) {
            s.module = module_of(&self.modulepath, &def.loc.file);
        }
        self.class_scopes.insert(def.name.clone(), scope);
        let cap = capitalize(&def.name);
        let mut given = params.unwrap_or_default();
        let mut bound =
            self.bind_definition_params(def, &mut given, scope, &format!("Class[{cap}]"), true)?;
        for (n, v) in given {
            if !METAPARAMS.contains(&n.as_str()) {
                return Err(plain(format!("Class[{cap}]: has no parameter named '{n}'")).into());
            }
            bound.push((n, v));
        }
        if let Some(r) = self.resources.get_mut(idx) {
            r.params = bound;
            r.evaluated = true;
        }
        self.set_name_vars(scope, &def.name, &def.name);
        // An inheriting class's scope hangs under its parent class's scope,
        // whose module Puppet takes as the caller (scope.parent_module_name).
        if def.parent.is_some() {
            let parent_module = self.scopes.get(parent_scope).and_then(|s| s.module.clone());
            if let Some(s) = self.scopes.get_mut(scope) {
                s.vars.insert(
                    "caller_module_name".into(),
                    Value::Str(parent_module.unwrap_or_default()),
                );
            }
        }
        self.enter(loc)?;
        let r = self.eval_block(&def.body, scope);
        self.leave();
        returned_from_body(r)
    }

    fn set_name_vars(&mut self, scope: ScopeId, title: &str, name: &str) {
        let caller = self.caller_module(scope);
        if let Some(s) = self.scopes.get_mut(scope) {
            s.vars.insert("title".into(), Value::Str(title.to_string()));
            s.vars.insert("name".into(), Value::Str(name.to_string()));
            if let Some(m) = s.module.clone() {
                s.vars.insert("module_name".into(), Value::Str(m));
            }
            // The empty string when declared outside any module (site code).
            s.vars.insert(
                "caller_module_name".into(),
                Value::Str(caller.unwrap_or_default()),
            );
        }
    }

    /// `$caller_module_name` of a class or defined type's scope: the module
    /// of the code that declared it (the declaring scope or the nearest
    /// enclosing scope that belongs to a module).
    fn caller_module(&self, scope: ScopeId) -> Option<String> {
        let mut cur = self.scopes.get(scope).and_then(|s| s.dyn_parent);
        let mut guard = 0;
        while let Some(id) = cur {
            let s = self.scopes.get(id)?;
            if let Some(m) = &s.module {
                return Some(m.clone());
            }
            cur = s.parent.filter(|p| *p != id);
            guard += 1;
            if guard > 10_000 {
                return None;
            }
        }
        None
    }

    /// Bind declared parameters from `given` (consumed), hiera (classes only),
    /// or defaults; type-check. Returns the bound (name, value) list.
    /// Evaluates the defaults of the parameters still without a value,
    /// in order, under the installed [`ParamGuard`](crate::lang::eval::ParamGuard).
    fn eval_param_defaults(
        &mut self,
        def: &Definition,
        scope: ScopeId,
        values: &mut [Option<Value>],
    ) -> EvalResult<()> {
        for (i, p) in def.params.iter().enumerate() {
            if values.get(i).is_some_and(Option::is_some) {
                continue;
            }
            let Some(d) = &p.default else { continue };
            if let Some(g) = self.param_guard.as_mut() {
                g.current.clone_from(&p.name);
            }
            let v = self.eval(d, scope)?;
            if let Some(s) = self.scopes.get_mut(scope) {
                s.vars.insert(p.name.clone(), v.clone());
            }
            if let Some(slot) = self.param_guard.as_mut().and_then(|g| g.params.get_mut(i)) {
                slot.1 = true;
            }
            if let Some(slot) = values.get_mut(i) {
                *slot = Some(v);
            }
        }
        Ok(())
    }

    pub(in crate::lang) fn bind_definition_params(
        &mut self,
        def: &Definition,
        given: &mut Vec<(String, Value)>,
        scope: ScopeId,
        what: &str,
        use_hiera: bool,
    ) -> EvalResult<Vec<(String, Value)>> {
        // Puppet assigns the given values first, then evaluates the
        // defaults in order (a default may read a given parameter, not one
        // still without a value), then checks everything at once.
        let mut values: Vec<Option<Value>> = Vec::with_capacity(def.params.len());
        let mut given_undef: Vec<bool> = Vec::with_capacity(def.params.len());
        for p in &def.params {
            let pos = given.iter().position(|(n, _)| *n == p.name);
            // An attribute set to undef counts as not set: hiera, then the
            // default, apply (`weak_ssl => $key['weak_ssl']` with no such key).
            let given_v = pos.map(|i| given.remove(i).1);
            given_undef.push(given_v.as_ref().is_some_and(Value::is_undef));
            let mut v = given_v.filter(|v| !v.is_undef());
            if v.is_none() && use_hiera {
                v = self.lookup_param(&format!("{}::{}", def.name, p.name))?;
            }
            if let (Some(v), Some(s)) = (&v, self.scopes.get_mut(scope)) {
                s.vars.insert(p.name.clone(), v.clone());
            }
            values.push(v);
        }
        // The guard stays installed while the defaults are evaluated (and
        // is updated in place: cloning it per default would be quadratic in
        // the parameters, and apache::vhost has hundreds).
        let guard = crate::lang::eval::ParamGuard {
            scope,
            callee: what.to_string(),
            params: def
                .params
                .iter()
                .zip(&values)
                .map(|(p, v)| (p.name.clone(), v.is_some()))
                .collect(),
            current: String::new(),
        };
        let outer = self.param_guard.replace(guard);
        let defaults = self.eval_param_defaults(def, scope, &mut values);
        self.param_guard = outer;
        defaults?;
        // Unknown parameters come first in Puppet's list.
        let mut errors: Vec<String> = given
            .iter()
            .filter(|(n, _)| !METAPARAMS.contains(&n.as_str()))
            .map(|(n, _)| format!(" has no parameter named '{n}'"))
            .collect();
        let mut bound = Vec::new();
        for (i, p) in def.params.iter().enumerate() {
            let v = match values.get(i).cloned().flatten() {
                Some(v) => v,
                // Given as undef with no default: undef, which the type
                // check refuses with the type's own message.
                None if given_undef.get(i).copied().unwrap_or(false) => Value::Undef,
                // Without a default every parameter is required, whatever
                // its type (an Optional one too), as in Puppet.
                None => {
                    errors.push(format!(" expects a value for parameter '{}'", p.name));
                    continue;
                }
            };
            if let Some(t) = &p.ty
                && let Value::Type(t) = self.eval(t, scope)?
                && !types::is_instance(&t, &v)
            {
                errors.push(format!(
                    " parameter '{}' {}",
                    p.name,
                    types::mismatch(&t, &v)
                ));
                continue;
            }
            if let Some(s) = self.scopes.get_mut(scope) {
                s.vars.insert(p.name.clone(), v.clone());
            }
            bound.push((p.name.clone(), v));
        }
        match errors.as_slice() {
            [] => Ok(bound),
            [one] => Err(plain(format!("{what}:{one}")).into()),
            many => Err(plain(format!("{what}:\n {}", many.join("\n "))).into()),
        }
    }

    /// The resource defaults for the type `tname` (capitalized) visible
    /// from scope `sc`, the nearest of each attribute.
    pub fn visible_defaults(&self, sc: ScopeId, tname: &str) -> Vec<(String, Value)> {
        let mut cur = Some(sc);
        let mut add: Vec<(String, Value)> = Vec::new();
        let mut guard = 0;
        while let Some(id) = cur {
            let Some(s) = self.scopes.get(id) else { break };
            for (t, n, v) in s.defaults.iter().rev() {
                if *t == tname && !add.iter().any(|(k, _)| k == n) {
                    add.push((n.clone(), v.clone()));
                }
            }
            cur = s.dyn_parent.or(s.parent).filter(|p| *p != id);
            guard += 1;
            if guard > 10_000 {
                break;
            }
        }
        add
    }

    /// Apply resource defaults visible from the resource's declaring scope.
    pub fn apply_defaults(&mut self, idx: ResId) {
        let Some(res) = self.resources.get(idx) else {
            return;
        };
        let add = self.visible_defaults(res.scope, &res.type_name);
        if let Some(res) = self.resources.get_mut(idx) {
            for (n, v) in add {
                if !res.params.iter().any(|(k, _)| *k == n) {
                    res.params.push((n, v));
                }
            }
        }
    }

    /// Evaluate one defined-type instance.
    pub fn evaluate_define(&mut self, idx: ResId) -> EvalResult<()> {
        let Some(res) = self.resources.get(idx) else {
            return Ok(());
        };
        if res.evaluated || res.virtual_ {
            return Ok(());
        }
        let tname = res.type_name.to_lowercase();
        let title = res.title.clone();
        let decl_scope = res.scope;
        let loc = res.loc.clone();
        let mut nesting = 0;
        let mut cur = res.container;
        while let Some(c) = cur {
            match self.resources.get(c) {
                Some(r) if r.kind == ResKind::Define => {
                    nesting += 1;
                    cur = r.container;
                }
                _ => break,
            }
            if nesting > MAX_DEFINE_NESTING {
                return Err(plain(format!(
                    "Defined types are nested more than {MAX_DEFINE_NESTING} levels deep (infinite recursion?)"
                )).into());
            }
        }
        let Some(def) = self.find_define(&tname)? else {
            return Err(plain(format!("Unknown resource type: '{tname}'")).into());
        };
        let what = format!("{}[{title}]", capitalize(&tname));
        let mut given: Vec<(String, Value)> = self
            .resources
            .get(idx)
            .map(|r| r.params.clone())
            .unwrap_or_default()
            .into_iter()
            .filter(|(n, _)| !METAPARAMS.contains(&n.as_str()))
            .collect();
        // `name` is every defined type's own attribute: it sets `$name`.
        let name = match given.iter().position(|(n, _)| n == "name") {
            Some(i) => given.remove(i).1.to_s(),
            None => title.clone(),
        };
        if let Some(r) = self.resources.get_mut(idx) {
            r.evaluated = true;
        }
        let parent = self.node_scope.unwrap_or(ScopeId::TOP);
        let scope = self.new_scope(Some(parent), Some(decl_scope), idx);
        if let Some(s) = self.scopes.get_mut(scope) {
            s.module = module_of(&self.modulepath, &def.loc.file);
            s.vars.insert("title".into(), Value::Str(title.clone()));
            s.vars.insert("name".into(), Value::Str(name.clone()));
        }
        // Like Puppet, errors from a lazily evaluated defined type (its
        // parameter defaults and its body) are reported inside the
        // declaring resource statement.
        let at = |e: LangError| match &loc {
            Some(l) => {
                let mut l = l.clone();
                l.col = 0;
                if e.loc.is_some() && e.kind == crate::lang::error::ErrorKind::Evaluation {
                    LangError {
                        kind: e.kind,
                        message: format!("Error while evaluating a Resource Statement, {e}"),
                        loc: Some(l),
                    }
                } else {
                    crate::lang::eval::in_context(e, "Resource Statement", &l)
                }
            }
            None => e,
        };
        let bound = self
            .bind_definition_params(&def, &mut given, scope, &what, false)
            .map_err(|u| u.map_error(at))?;
        if let Some((n, _)) = given.first() {
            return Err(at(plain(format!("{what}: has no parameter named '{n}'"))).into());
        }
        if let Some(r) = self.resources.get_mut(idx) {
            for (n, v) in bound {
                if !v.is_undef() && !r.params.iter().any(|(k, x)| *k == n && !x.is_undef()) {
                    set_param(&mut r.params, n, v);
                }
            }
        }
        self.set_name_vars(scope, &title, &name);
        let l = loc.clone().unwrap_or_else(|| def.loc.clone());
        self.enter(&l)?;
        let r = returned_from_body(self.eval_block(&def.body, scope));
        self.leave();
        r.map_err(|u| u.map_error(|e| if e.loc.is_some() { at(e) } else { e }))
    }

    /// Find and evaluate the node definition matching this node.
    pub fn evaluate_node(&mut self) -> EvalResult<()> {
        if self.nodes.is_empty() {
            return Ok(());
        }
        let node = self.node.to_lowercase();
        let mut candidates = vec![node.clone()];
        let mut n = node.as_str();
        while let Some((head, _)) = n.rsplit_once('.') {
            candidates.push(head.to_string());
            n = head;
        }
        let mut found: Option<(Arc<crate::lang::syntax::ast::NodeDef>, String)> = None;
        let mut regex_caps: Vec<(String, Value)> = Vec::new();
        'cand: for c in &candidates {
            for d in &self.nodes {
                if d.matches
                    .iter()
                    .any(|m| matches!(m, NodeMatch::Name(x) if x.to_lowercase() == *c))
                {
                    found = Some((d.clone(), c.clone()));
                    break 'cand;
                }
            }
        }
        if found.is_none() {
            'rx: for d in &self.nodes {
                for m in &d.matches {
                    if let NodeMatch::Regex(r) = m {
                        let re = compile_regex(r).map_err(|e| LangError::from(e).at(&d.loc))?;
                        if let Some(caps) = re.captures(&node) {
                            let vals: Vec<(String, Value)> = caps
                                .iter()
                                .enumerate()
                                .map(|(i, m)| {
                                    (
                                        i.to_string(),
                                        m.map_or(Value::Undef, |m| Value::str(m.as_str())),
                                    )
                                })
                                .collect();
                            regex_caps = vals;
                            let cleaned: String = r
                                .chars()
                                .filter(|c| {
                                    c.is_alphanumeric() || matches!(c, '_' | '-' | ':' | '.')
                                })
                                .collect();
                            found = Some((d.clone(), format!("__node_regexp__{cleaned}")));
                            break 'rx;
                        }
                    }
                }
            }
        }
        if found.is_none() {
            for d in &self.nodes {
                if d.matches.iter().any(|m| matches!(m, NodeMatch::Default)) {
                    found = Some((d.clone(), "default".into()));
                    break;
                }
            }
        }
        let Some((def, name)) = found else {
            return Err(LangError::load(format!(
                "Could not find node statement with name 'default' or '{}'",
                candidates.join(", ")
            ))
            .into());
        };
        let main = self.main_index;
        let idx = self.create_resource(
            "Node",
            &name,
            Vec::new(),
            None,
            ResKind::Node,
            Virtuality::Real,
            Some(main),
            ScopeId::TOP,
        )?;
        self.class_list.push(name.clone());
        let scope = self.new_scope(Some(ScopeId::TOP), Some(ScopeId::TOP), idx);
        self.node_scope = Some(scope);
        if let Some(s) = self.scopes.get_mut(scope) {
            s.vars.insert("name".into(), Value::Str(name.clone()));
            s.vars.insert("title".into(), Value::Str(name));
            s.vars.extend(regex_caps);
        }
        self.eval_block(&def.body, scope)?;
        Ok(())
    }
}
