//! Hiera 5 data lookup: the node classifier's config data (PE's
//! classifier data: `class::param` keys a node's groups give, consulted
//! first), global layer (a `hiera.yaml` given with
//! `CompileOptions::hiera_config`), environment layer (`<env>/hiera.yaml`,
//! default `data/common.yaml`) and module layer (`<module>/hiera.yaml`), YAML and
//! JSON data, `%{}` interpolation in paths and values, merge strategies
//! (first, unique, hash, deep) and the `lookup`/`hiera*` functions.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::lang::error::{LangError, plain};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Evaluator, ScopeId};
use crate::lang::loader;
use crate::lang::parsed::Parsed;
use crate::lang::syntax::ast::Lambda;
use crate::lang::values::regex::compile_regex;
use crate::lang::values::types::{self, PType};
use crate::lang::values::value::{Value, hash_get_str, hash_set};

/// The "file" the node classifier's config data is kept as (a NUL
/// cannot be in a real path).
const CLASSIFIER_DATA: &str = "\0classifier config_data";

#[derive(Debug, Clone, PartialEq, Eq)]
enum Merge {
    First,
    Unique,
    Hash,
    Deep(DeepOpts),
}

/// Options of the `deep` merge strategy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct DeepOpts {
    /// Higher-priority strings with this prefix remove ("knock out") the
    /// array element they name; a value with the prefix loses it.
    knockout_prefix: Option<String>,
    /// Sort every merged array.
    sort_merged_arrays: bool,
    /// Merge arrays of hashes element by element.
    merge_hash_arrays: bool,
}

/// A merge strategy given as a string or `{strategy => ...}`; `None` if absent.
fn parse_merge(v: Option<&Value>) -> Option<Merge> {
    let (name, opts) = match v {
        Some(Value::Str(s)) => (s.clone(), Vec::new()),
        Some(Value::Hash(h)) => (
            hash_get_str(h, "strategy")
                .map(|v| v.to_s())
                .unwrap_or_default(),
            h.clone(),
        ),
        _ => return None,
    };
    let flag = |k: &str| hash_get_str(&opts, k).is_some_and(Value::truthy);
    Some(match name.as_str() {
        "unique" => Merge::Unique,
        "hash" => Merge::Hash,
        "deep" => Merge::Deep(DeepOpts {
            knockout_prefix: match hash_get_str(&opts, "knockout_prefix") {
                Some(Value::Str(p)) if !p.is_empty() => Some(p.clone()),
                _ => None,
            },
            sort_merged_arrays: flag("sort_merged_arrays"),
            merge_hash_arrays: flag("merge_hash_arrays"),
        }),
        _ => Merge::First,
    })
}

/// Deep-merge the higher-priority `high` into `low`: hashes merge by key,
/// arrays keep `low`'s elements and add `high`'s new ones, anything else
/// is replaced by `high`.
fn deep_merge_value(low: Value, high: Value, o: &DeepOpts) -> Value {
    let ko = o.knockout_prefix.as_deref();
    match (low, high) {
        (Value::Hash(mut into), Value::Hash(from)) => {
            for (k, v) in from {
                match into
                    .iter_mut()
                    .find(|(x, _)| crate::lang::values::value::key_equal(x, &k))
                {
                    Some(slot) => {
                        let old = std::mem::replace(&mut slot.1, Value::Undef);
                        slot.1 = deep_merge_value(old, v, o);
                    }
                    None => into.push((k, deep_merge_value(Value::Undef, v, o))),
                }
            }
            Value::Hash(into)
        }
        (Value::Array(mut a), Value::Array(b)) => {
            let all_hashes = |x: &[Value]| x.iter().all(|v| matches!(v, Value::Hash(_)));
            if o.merge_hash_arrays && all_hashes(&a) && all_hashes(&b) {
                for (i, h) in b.into_iter().enumerate() {
                    match a.get_mut(i) {
                        Some(slot) => {
                            let old = std::mem::replace(slot, Value::Undef);
                            *slot = deep_merge_value(old, h, o);
                        }
                        None => a.push(h),
                    }
                }
            } else {
                for x in b {
                    match (ko, &x) {
                        (Some(p), Value::Str(s)) if s.starts_with(p) => {
                            let gone = Value::str(s.get(p.len()..).unwrap_or(""));
                            a.retain(|y| *y != gone);
                        }
                        _ if !a.contains(&x) => a.push(x),
                        _ => {}
                    }
                }
            }
            if o.sort_merged_arrays {
                a.sort_by(|x, y| {
                    crate::lang::values::value::compare(x, y).unwrap_or(std::cmp::Ordering::Equal)
                });
            }
            Value::Array(a)
        }
        (_, Value::Str(s)) if ko.is_some_and(|p| s.starts_with(p)) => {
            Value::str(s.get(ko.map_or(0, str::len)..).unwrap_or(""))
        }
        (_, Value::Array(b)) if o.sort_merged_arrays => {
            deep_merge_value(Value::Array(Vec::new()), Value::Array(b), o)
        }
        (_, Value::Hash(h)) if ko.is_some() || o.sort_merged_arrays => {
            deep_merge_value(Value::Hash(Vec::new()), Value::Hash(h), o)
        }
        (_, high) => high,
    }
}

/// Data files parsed so far in this process (see [`crate::lang::parsed`]).
static PARSED_DATA: Parsed<Value> = Parsed::new();

fn parse_data_cached(path: &Path, text: &str) -> EvalResult<Arc<Value>> {
    PARSED_DATA.get_or_parse(&path.to_string_lossy(), text, || parse_data(path, text))
}

/// A data file's text as a value: JSON for `.json`, YAML otherwise.
fn parse_data(path: &Path, text: &str) -> EvalResult<Value> {
    let is_json = path.extension().is_some_and(|e| e == "json");
    let j: serde_json::Value = if is_json {
        serde_json::from_str(text)
            .map_err(|e| LangError::load(format!("Unable to parse {}: {e}", path.display())))?
    } else if text.trim().is_empty() || text.trim() == "---" {
        serde_json::Value::Object(Default::default())
    } else {
        serde_saphyr::from_str(text)
            .map_err(|e| LangError::load(format!("Unable to parse {}: {e}", path.display())))?
    };
    Ok(Value::from_json(&j))
}

impl<'l> Evaluator<'l> {
    /// A data file (or hiera.yaml) as a value, `None` when there is no
    /// such file. Kept for the compile, and shared, never copied whole: a
    /// lookup reads every file of its hierarchy.
    fn read_data_file(&mut self, path: &Path) -> EvalResult<Option<Arc<Value>>> {
        if let Some(v) = self.hiera_cache.get(path) {
            return Ok(v.clone());
        }
        let v = if self.loader.is_file(path) {
            let text = self
                .loader
                .read(path)
                .map_err(|e| LangError::load(format!("Unable to read {}: {e}", path.display())))?;
            Some(parse_data_cached(path, &text)?)
        } else {
            None
        };
        self.hiera_cache.insert(path.to_path_buf(), v.clone());
        Ok(v)
    }

    /// Data file paths of the hierarchy defined in `root/hiera.yaml`.
    fn hierarchy_paths(&mut self, root: &Path, default_common: bool) -> EvalResult<Vec<PathBuf>> {
        self.hierarchy_of(&root.join("hiera.yaml"), root, default_common)
    }

    /// Data file paths of the hierarchy in the config file `cfg_path`, whose
    /// data directories are relative to `root`.
    fn hierarchy_of(
        &mut self,
        cfg_path: &Path,
        root: &Path,
        default_common: bool,
    ) -> EvalResult<Vec<PathBuf>> {
        let cfg = self.read_data_file(cfg_path)?;
        let Some(Value::Hash(cfg)) = cfg.as_deref() else {
            return Ok(if default_common {
                vec![root.join("data/common.yaml")]
            } else {
                Vec::new()
            });
        };
        let defaults = match hash_get_str(cfg, "defaults") {
            Some(Value::Hash(d)) => d.clone(),
            _ => Vec::new(),
        };
        let default_dir =
            hash_get_str(&defaults, "datadir").map_or("data".to_string(), |v| v.to_s());
        let mut out = Vec::new();
        let Some(Value::Array(levels)) = hash_get_str(cfg, "hierarchy").cloned() else {
            return Ok(out);
        };
        for level in levels {
            let Value::Hash(level) = level else { continue };
            let backend = hash_get_str(&level, "data_hash")
                .or_else(|| hash_get_str(&defaults, "data_hash"))
                .map_or("yaml_data".to_string(), |v| v.to_s());
            if backend != "yaml_data" && backend != "json_data" {
                continue;
            }
            let dir = hash_get_str(&level, "datadir").map_or(default_dir.clone(), |v| v.to_s());
            let mut paths: Vec<String> = Vec::new();
            if let Some(p) = hash_get_str(&level, "path") {
                paths.push(p.to_s());
            }
            if let Some(Value::Array(ps)) = hash_get_str(&level, "paths") {
                paths.extend(ps.iter().map(|p| p.to_s()));
            }
            for p in paths {
                let interpolated = self.interpolate(&p, 0)?;
                out.push(root.join(&dir).join(interpolated));
            }
        }
        Ok(out)
    }

    /// Resolve `%{...}` in hiera strings.
    pub fn interpolate(&mut self, s: &str, depth: usize) -> EvalResult<String> {
        if depth > 20 {
            return Err(plain("Hiera interpolation is too deeply nested").into());
        }
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("%{") {
            out.push_str(rest.get(..i).unwrap_or(""));
            let after = rest.get(i + 2..).unwrap_or("");
            let Some(end) = after.find('}') else {
                out.push_str(rest.get(i..).unwrap_or(""));
                return Ok(out);
            };
            let expr = after.get(..end).unwrap_or("").trim();
            rest = after.get(end + 1..).unwrap_or("");
            let value = if let Some(inner) = expr
                .strip_prefix("lookup(")
                .or_else(|| expr.strip_prefix("hiera("))
                .or_else(|| expr.strip_prefix("alias("))
            {
                let key = inner
                    .trim_end_matches(')')
                    .trim_matches(|c| c == '\'' || c == '"');
                self.hiera_lookup_depth(key, depth + 1)?
                    .map(|v| v.to_s())
                    .unwrap_or_default()
            } else if let Some(inner) = expr.strip_prefix("literal(") {
                inner
                    .trim_end_matches(')')
                    .trim_matches(|c| c == '\'' || c == '"')
                    .to_string()
            } else if expr.is_empty() {
                String::new()
            } else {
                let var = expr
                    .strip_prefix("scope(")
                    .map_or(expr, |x| x.trim_end_matches(')').trim_matches('\''));
                let mut segs = var.split('.');
                let first = segs.next().unwrap_or("").trim_start_matches("::");
                // Walk by reference: only the leaf is cloned.
                let mut cur_ref = self.lookup_var_ref(first, ScopeId::TOP);
                for seg in segs {
                    cur_ref = match cur_ref {
                        Some(Value::Hash(h)) => hash_get_str(h, seg),
                        _ => None,
                    };
                }
                let cur = cur_ref.cloned().unwrap_or(Value::Undef);
                cur.to_s()
            };
            out.push_str(&value);
        }
        out.push_str(rest);
        Ok(out)
    }

    fn interpolate_value(&mut self, v: Value, depth: usize) -> EvalResult<Value> {
        Ok(match v {
            Value::Str(s) if s.contains("%{") => {
                let t = s.trim();
                if let Some(key) = t
                    .strip_prefix("%{alias(")
                    .and_then(|x| x.strip_suffix(")}"))
                {
                    let key = key.trim_matches(|c| c == '\'' || c == '"');
                    return Ok(self
                        .hiera_lookup_depth(key, depth + 1)?
                        .unwrap_or(Value::Undef));
                }
                Value::Str(self.interpolate(&s, depth)?)
            }
            Value::Array(a) => Value::Array(
                a.into_iter()
                    .map(|x| self.interpolate_value(x, depth))
                    .collect::<EvalResult<_>>()?,
            ),
            Value::Hash(h) => Value::Hash(
                h.into_iter()
                    .map(|(k, v)| Ok((k, self.interpolate_value(v, depth)?)))
                    .collect::<EvalResult<_>>()?,
            ),
            other => other,
        })
    }

    /// The node classifier's config data (`class::param` → value):
    /// consulted before every other layer, as PE's classifier data is.
    /// It is kept as a data file that cannot exist on disk.
    pub fn set_classifier_data(&mut self, data: &serde_json::Map<String, serde_json::Value>) {
        if !data.is_empty() {
            self.hiera_cache.insert(
                PathBuf::from(CLASSIFIER_DATA),
                Some(Arc::new(Value::from_json(&serde_json::Value::Object(
                    data.clone(),
                )))),
            );
        }
    }

    /// Data files consulted for `key`, highest priority first.
    fn data_files(&mut self, key: &str) -> EvalResult<Vec<PathBuf>> {
        let mut files = Vec::new();
        let classifier = PathBuf::from(CLASSIFIER_DATA);
        if self.hiera_cache.contains_key(&classifier) {
            files.push(classifier);
        }
        if let Some(cfg) = self.hiera_global.clone() {
            let root = cfg.parent().map(Path::to_path_buf).unwrap_or_default();
            files.extend(self.hierarchy_of(&cfg, &root, false)?);
        }
        if let Some(env) = self.env_dir.clone() {
            files.extend(self.hierarchy_paths(&env, true)?);
        }
        if let Some((module, _)) = key.trim_start_matches("::").split_once("::")
            && let Some(dir) = loader::module_dir(self.loader, &self.modulepath, module)
        {
            files.extend(self.hierarchy_paths(&dir, false)?);
        }
        Ok(files)
    }

    /// The merge strategy `lookup_options` in the data assigns to `key`.
    fn lookup_options_merge(&mut self, key: &str) -> EvalResult<Option<Merge>> {
        Ok(self
            .lookup_options(key)?
            .and_then(|o| parse_merge(hash_get_str(&o, "merge"))))
    }

    /// Apply the `convert_to` of `key`'s `lookup_options` (a type name, or
    /// `[type, args...]`): the value becomes `Type.new(value, args...)`.
    fn convert_found(&mut self, key: &str, v: Value) -> EvalResult<Value> {
        let Some(opts) = self.lookup_options(key)? else {
            return Ok(v);
        };
        let (name, extra) = match hash_get_str(&opts, "convert_to") {
            Some(Value::Str(n)) => (n.clone(), Vec::new()),
            Some(Value::Array(a)) if !a.is_empty() => (
                a.first().map(|n| n.to_s()).unwrap_or_default(),
                a.iter().skip(1).cloned().collect(),
            ),
            _ => return Ok(v),
        };
        let loc = crate::lang::error::Loc::new(&std::sync::Arc::from(""), 0, 0);
        let t = self.resolve_type_name(&name, &loc)?;
        let t = match t {
            PType::Alias(_, inner) => *inner,
            other => other,
        };
        let mut args = vec![v];
        args.extend(extra);
        Ok(crate::lang::values::convert::new_value(&t, &args)?)
    }

    /// The `lookup_options` entry (exact key or `^regex`) that applies to `key`.
    fn lookup_options(&mut self, key: &str) -> EvalResult<Option<Vec<(Value, Value)>>> {
        let key = key.trim_start_matches("::");
        for f in self.data_files(key)? {
            let data = self.read_data_file(&f)?;
            let Some(Value::Hash(h)) = data.as_deref() else {
                continue;
            };
            let Some(Value::Hash(opts)) = hash_get_str(h, "lookup_options") else {
                continue;
            };
            for (pattern, o) in opts {
                let p = pattern.to_s();
                let hit = if p.starts_with('^') {
                    compile_regex(&p).is_ok_and(|r| r.is_match(key))
                } else {
                    p == key
                };
                if hit && let Value::Hash(o) = o {
                    return Ok(Some(o.clone()));
                }
            }
        }
        Ok(None)
    }

    fn hiera_values(&mut self, key: &str, depth: usize) -> EvalResult<Vec<Value>> {
        let files = self.data_files(key)?;
        let key = key.trim_start_matches("::");
        let mut found = Vec::new();
        let mut segs = key.split('.');
        let root = segs.next().unwrap_or("");
        let rest: Vec<&str> = segs.collect();
        for f in files {
            let data = self.read_data_file(&f)?;
            if let Some(Value::Hash(h)) = data.as_deref()
                && let Some(v) = hash_get_str(h, root)
            {
                let mut cur = v.clone();
                for seg in &rest {
                    cur = match cur {
                        Value::Hash(h) => hash_get_str(&h, seg).cloned().unwrap_or(Value::Undef),
                        _ => Value::Undef,
                    };
                }
                found.push(self.interpolate_value(cur, depth)?);
            }
        }
        Ok(found)
    }

    fn hiera_lookup_depth(&mut self, key: &str, depth: usize) -> EvalResult<Option<Value>> {
        Ok(self.hiera_values(key, depth)?.into_iter().next())
    }

    /// Automatic parameter lookup / first-found lookup of `key`.
    pub fn hiera_lookup(&mut self, key: &str) -> EvalResult<Option<Value>> {
        let found = match self.lookup_options_merge(key)? {
            Some(m) => self.merged_lookup(key, m)?,
            None => self.hiera_lookup_depth(key, 0)?,
        };
        match found {
            Some(v) => self.convert_found(key, v).map(Some),
            None => Ok(None),
        }
    }

    fn merged_lookup(&mut self, key: &str, merge: Merge) -> EvalResult<Option<Value>> {
        let vals = self.hiera_values(key, 0)?;
        if vals.is_empty() {
            return Ok(None);
        }
        Ok(Some(match merge {
            Merge::First => vals.into_iter().next().unwrap_or(Value::Undef),
            Merge::Unique => {
                let mut out: Vec<Value> = Vec::new();
                for v in vals {
                    let items = match v {
                        Value::Array(a) => a,
                        other => vec![other],
                    };
                    for x in items {
                        if !out.contains(&x) {
                            out.push(x);
                        }
                    }
                }
                Value::Array(out)
            }
            Merge::Hash => {
                let mut out = Vec::new();
                for v in vals.into_iter().rev() {
                    if let Value::Hash(h) = v {
                        for (k, x) in h {
                            hash_set(&mut out, k, x);
                        }
                    }
                }
                Value::Hash(out)
            }
            Merge::Deep(o) => {
                let mut out = Value::Hash(Vec::new());
                for v in vals.into_iter().rev() {
                    if let Value::Hash(_) = v {
                        out = deep_merge_value(out, v, &o);
                    }
                }
                out
            }
        }))
    }

    /// `lookup(name, [type], [merge], [default])`, `lookup(name, {options})`, `hiera*`.
    pub fn fn_lookup(
        &mut self,
        fname: &str,
        args: &[Value],
        lambda: Option<&Lambda>,
        sc: ScopeId,
    ) -> EvalResult<Value> {
        let mut names: Vec<String> = match args.first() {
            Some(Value::Array(a)) => a.iter().map(|v| v.to_s()).collect(),
            Some(v) => vec![v.to_s()],
            None => return Err(plain(format!("{fname}() expects at least one argument")).into()),
        };
        names.retain(|n| !n.is_empty());
        let (ty, merge, default) = match fname {
            "hiera" => (None, None, args.get(1).cloned()),
            "hiera_array" => (None, Some(Merge::Unique), args.get(1).cloned()),
            "hiera_hash" => (None, Some(Merge::Hash), args.get(1).cloned()),
            _ => match args.get(1) {
                Some(Value::Hash(opts)) => (
                    hash_get_str(opts, "value_type").cloned(),
                    parse_merge(hash_get_str(opts, "merge")),
                    hash_get_str(opts, "default_value").cloned(),
                ),
                _ => (
                    args.get(1).cloned(),
                    parse_merge(args.get(2)),
                    args.get(3).cloned(),
                ),
            },
        };
        let has_default = match fname {
            "lookup" => match args.get(1) {
                Some(Value::Hash(opts)) => hash_get_str(opts, "default_value").is_some(),
                _ => args.len() >= 4,
            },
            _ => args.len() >= 2,
        };
        let mut result = None;
        for n in &names {
            let m = match &merge {
                Some(m) => m.clone(),
                None => self.lookup_options_merge(n)?.unwrap_or(Merge::First),
            };
            if let Some(v) = self.merged_lookup(n, m)? {
                result = Some(self.convert_found(n, v)?);
                break;
            }
        }
        let v = match result {
            Some(v) => v,
            None if has_default => default.unwrap_or(Value::Undef),
            None => match lambda {
                Some(l) => self.call_lambda(
                    l,
                    vec![Value::str(names.first().cloned().unwrap_or_default())],
                    sc,
                )?,
                None => {
                    return Err((LangError {
                        kind: crate::lang::error::ErrorKind::Bare,
                        message: format!(
                            "Function lookup() did not find a value for the name '{}'",
                            names.first().cloned().unwrap_or_default()
                        ),
                        loc: None,
                    })
                    .into());
                }
            },
        };
        if let Some(Value::Type(t)) = ty
            && !types::is_instance(&t, &v)
        {
            return Err(plain(format!(
                "Found value has wrong type, {}",
                types::mismatch(&t, &v)
            ))
            .into());
        }
        Ok(v)
    }
}
