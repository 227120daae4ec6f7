//! Task parameters: parsed from the command line (`name=value`, a JSON
//! value taken as JSON) or a JSON object, checked before anything connects
//! against the Puppet type strings in the metadata (with ferry's own Puppet
//! type system, [`crate::lang::values::types`]), defaults applied, undeclared
//! parameters refused, and the values of sensitive ones remembered so they
//! can be redacted from every output.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::TaskError;
use super::loader::{Loader, Task, TaskFile};
use crate::lang::eval::{Evaluator, ScopeId};
use crate::lang::values::value::Value as PValue;

/// A task ready to run: parameters checked, support files read.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub task: Task,
    /// Declared parameters with defaults applied (metaparameters are added
    /// per target by the runner).
    pub params: Map<String, Value>,
    /// String values that must never be shown (sensitive parameters).
    pub secrets: Vec<String>,
    pub noop: bool,
    /// Files from the metadata's top-level `files`, which every
    /// implementation gets, laid out under the install dir.
    pub support_files: Vec<TaskFile>,
    /// Each implementation's own `files` (in the metadata's order), or why
    /// they cannot be read, which matters only to a target that chooses it.
    pub implementation_files: Vec<Result<Vec<TaskFile>, TaskError>>,
    pub cleanup: bool,
    /// Run as the remote instance (Bolt's `Task#remote_instance`): only
    /// implementations with `remote: true` suit. Set for a device target's
    /// run on its proxy.
    pub remote: bool,
    /// The proxies remote tasks run on, by the name a device's `run-on`
    /// gives (resolved from the inventory where the run starts); a device
    /// without `run-on` uses ferry's own host.
    pub proxies: std::collections::BTreeMap<String, crate::inventory::Target>,
}

impl Prepared {
    /// Every file of the task that could be read: executables, shared
    /// files and each implementation's files.
    pub fn known_files(&self) -> impl Iterator<Item = &TaskFile> {
        self.task
            .executables
            .values()
            .chain(self.support_files.iter())
            .chain(self.implementation_files.iter().flatten().flatten())
    }
}

/// Parses `name=value` words: the value is JSON when it parses as JSON,
/// else a string.
pub fn parse_assignments(words: &[String]) -> Result<Map<String, Value>, TaskError> {
    let mut out = Map::new();
    for w in words {
        let (name, raw) = w
            .split_once('=')
            .ok_or_else(|| TaskError::Params(format!("'{w}' is not name=value")))?;
        let value = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
        out.insert(name.to_string(), value);
    }
    Ok(out)
}

/// Reads `--params`: a JSON object, or `@file.json`.
pub fn parse_params_option(text: &str) -> Result<Map<String, Value>, TaskError> {
    let (json, origin) = match text.strip_prefix('@') {
        Some(path) => (
            std::fs::read_to_string(path).map_err(|e| TaskError::Params(format!("{path}: {e}")))?,
            path.to_string(),
        ),
        None => (text.to_string(), "--params".to_string()),
    };
    match serde_json::from_str(&json) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(TaskError::Params(format!(
            "{origin}: parameters must be a JSON object"
        ))),
        Err(e) => Err(TaskError::Params(format!(
            "{origin}: line {}, column {}: {e}",
            e.line(),
            e.column()
        ))),
    }
}

struct NoFiles;

impl crate::lang::loader::Loader for NoFiles {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            path.display().to_string(),
        ))
    }
    fn is_file(&self, _: &Path) -> bool {
        false
    }
    fn is_dir(&self, _: &Path) -> bool {
        false
    }
    fn list(&self, _: &Path) -> std::io::Result<Vec<PathBuf>> {
        Ok(Vec::new())
    }
}

/// Why a value does not pass a parameter's type check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeCheckError {
    /// The type string does not parse or evaluate.
    #[error("invalid type '{ty}': {message}")]
    Invalid { ty: String, message: String },
    /// The type string evaluates to something that is not a type.
    #[error("'{0}' is not a data type")]
    NotAType(String),
    /// The value does not match (Puppet's mismatch message).
    #[error("{0}")]
    Mismatch(String),
}

/// Checks a JSON value against a Puppet type string.
pub fn check_type(ty: &str, value: &Value) -> Result<(), TypeCheckError> {
    let file: Arc<str> = Arc::from("<parameter type>");
    let expr = crate::lang::syntax::parser::parse_type(ty, &file).map_err(|e| {
        TypeCheckError::Invalid {
            ty: ty.to_string(),
            message: e.message,
        }
    })?;
    let loader = NoFiles;
    let mut ev = Evaluator::new(
        &loader,
        Default::default(),
        None,
        "task",
        &Map::new(),
        crate::lang::functions::registry(),
    );
    let t = match ev.eval(&expr, ScopeId::TOP) {
        Ok(PValue::Type(t)) => t,
        Ok(_) => return Err(TypeCheckError::NotAType(ty.to_string())),
        Err(e) => {
            return Err(TypeCheckError::Invalid {
                ty: ty.to_string(),
                message: e.into_error().message,
            });
        }
    };
    let v = PValue::from_json(value);
    if crate::lang::values::types::is_instance(&t, &v) {
        Ok(())
    } else {
        Err(TypeCheckError::Mismatch(
            crate::lang::values::types::mismatch(&t, &v),
        ))
    }
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if !s.is_empty() => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_strings(i, out)),
        Value::Number(n) => out.push(n.to_string()),
        _ => {}
    }
}

/// A type string with every `Sensitive[T]` as `T` and a bare `Sensitive`
/// as `Any` (quoted text left alone), or `None` when it has none.
pub fn unwrap_sensitive(ty: &str) -> Option<String> {
    const WORD: &str = "Sensitive";
    let bytes = ty.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b':';
    let mut out = String::with_capacity(ty.len());
    // For each `[` opened: whether it belongs to a Sensitive being dropped.
    let mut opened: Vec<bool> = Vec::new();
    let mut found = false;
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            if b == b'\\' && i + 1 < bytes.len() {
                out.push_str(&ty[i..i + 2]);
                i += 2;
                continue;
            }
            if b == q {
                quote = None;
            }
        } else if b == b'\'' || b == b'"' {
            quote = Some(b);
        } else if ty[i..].starts_with(WORD)
            && (i == 0 || !ident(bytes[i - 1]))
            && !bytes.get(i + WORD.len()).copied().is_some_and(ident)
        {
            found = true;
            let mut j = i + WORD.len();
            while bytes.get(j).is_some_and(u8::is_ascii_whitespace) {
                j += 1;
            }
            if bytes.get(j) == Some(&b'[') {
                opened.push(true);
                i = j + 1;
            } else {
                out.push_str("Any");
                i += WORD.len();
            }
            continue;
        } else if b == b'[' {
            opened.push(false);
        } else if b == b']' && opened.pop() == Some(true) {
            i += 1;
            continue;
        }
        let len = ty[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&ty[i..i + len]);
        i += len;
    }
    found.then_some(out)
}

/// Checks the given parameters and reads the task's support files.
pub fn prepare(
    task: Task,
    given: Map<String, Value>,
    noop: bool,
    loader: &Loader,
) -> Result<Prepared, TaskError> {
    let meta = &task.metadata;
    if noop && !meta.supports_noop {
        return Err(TaskError::Params(format!(
            "task {} does not support noop",
            task.name
        )));
    }
    let mut problems = Vec::new();
    let mut params = Map::new();
    let declared = meta.parameters.as_ref();
    for name in given.keys() {
        if name.starts_with('_') {
            problems.push(format!("parameter {name}: metaparameters are set by ferry"));
        } else if declared.is_some_and(|d| !d.contains_key(name)) {
            problems.push(format!(
                "task {} has no parameter named '{name}'",
                task.name
            ));
        }
    }
    let mut secrets = Vec::new();
    for (name, spec) in declared.into_iter().flatten() {
        let value = given.get(name).cloned().or_else(|| spec.default.clone());
        let declared_ty = spec.ty.as_deref().unwrap_or("Any");
        // Values arrive as plain JSON: a `Sensitive[T]` parameter takes a
        // T, kept secret like a parameter marked sensitive.
        let unwrapped = unwrap_sensitive(declared_ty);
        let ty = unwrapped.as_deref().unwrap_or(declared_ty);
        let check = value.clone().unwrap_or(Value::Null);
        // Known before the check, so that its error cannot echo the value.
        if spec.sensitive || unwrapped.is_some() {
            collect_strings(&check, &mut secrets);
        }
        if let Err(why) = check_type(ty, &check) {
            problems.push(format!("parameter '{name}' {why}"));
            continue;
        }
        if let Some(v) = value {
            params.insert(name.clone(), v);
        }
    }
    if declared.is_none() {
        params = given
            .into_iter()
            .filter(|(k, _)| !k.starts_with('_'))
            .collect();
    }
    if !problems.is_empty() {
        // Never echo a sensitive value in the error.
        let mut msg = format!(
            "invalid parameters for task {}:\n  {}",
            task.name,
            problems.join("\n  ")
        );
        for s in &secrets {
            msg = msg.replace(s.as_str(), crate::inventory::REDACTED);
        }
        return Err(TaskError::Params(msg));
    }
    let support_files = loader.shared_files(&task)?;
    let implementation_files = loader.implementation_files(&task);
    Ok(Prepared {
        task,
        params,
        secrets,
        noop,
        support_files,
        implementation_files,
        cleanup: true,
        remote: false,
        proxies: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn puppet_types_are_checked() {
        let ok = [
            ("String[1, 5]", json!("abc")),
            ("Integer[0, 10]", json!(3)),
            ("Float", json!(1.5)),
            ("Numeric", json!(2)),
            ("Boolean", json!(false)),
            ("Enum[start, stop]", json!("stop")),
            // Bare words keep their hyphens, as Puppet's lexer reads them.
            ("Enum[puppet7, puppet7-nightly]", json!("puppet7-nightly")),
            ("Pattern[/^a+$/]", json!("aaa")),
            ("Optional[String]", json!(null)),
            ("Array[Integer, 1, 2]", json!([1, 2])),
            ("Hash[String, Integer]", json!({"a": 1})),
            (
                "Struct[{a => Integer, Optional[b] => String}]",
                json!({"a": 1}),
            ),
            ("Tuple[String, Integer]", json!(["x", 1])),
            ("Variant[String, Integer]", json!(4)),
            ("Data", json!({"a": [1, "b", null]})),
            ("NotUndef", json!("x")),
            ("Any", json!(null)),
        ];
        for (ty, v) in ok {
            assert!(
                check_type(ty, &v).is_ok(),
                "{ty} should accept {v}: {:?}",
                check_type(ty, &v)
            );
        }
        let bad = [
            ("String[1, 5]", json!("abcdefg")),
            ("String", json!(5)),
            ("Integer[0, 10]", json!(11)),
            ("Enum[start, stop]", json!("restart")),
            ("Array[Integer, 1, 2]", json!([1, 2, 3])),
            ("Struct[{a => Integer}]", json!({"a": "x"})),
            ("NotUndef", json!(null)),
            ("Boolean", json!("true")),
        ];
        for (ty, v) in bad {
            assert!(check_type(ty, &v).is_err(), "{ty} should refuse {v}");
        }
        assert!(check_type("Strng", &json!("x")).is_err());
    }

    #[test]
    fn a_sensitive_value_that_fails_its_type_is_not_echoed() {
        let meta = r#"{"parameters": {"pin": {"type": "Enum[a, b]", "sensitive": true}}}"#;
        let task = Task {
            name: "m::t".into(),
            module: "m".into(),
            metadata: super::super::metadata::Metadata::parse(meta, "t.json").unwrap(),
            executables: Default::default(),
            source: "t.json".into(),
            module_dir: None,
        };
        let given = serde_json::from_value(json!({"pin": "secret-pin-99"})).unwrap();
        let err = prepare(task, given, false, &Loader::new(Vec::new()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("parameter 'pin'"), "{err}");
        assert!(!err.contains("secret-pin-99"), "{err}");
    }

    #[test]
    fn sensitive_types_take_plain_values_kept_secret() {
        assert_eq!(
            unwrap_sensitive("Optional[Sensitive[String[1]]]").as_deref(),
            Some("Optional[String[1]]")
        );
        assert_eq!(unwrap_sensitive("Sensitive").as_deref(), Some("Any"));
        assert_eq!(
            unwrap_sensitive("Variant[Sensitive[Array[Integer]], Enum['Sensitive']]").as_deref(),
            Some("Variant[Array[Integer], Enum['Sensitive']]")
        );
        assert_eq!(unwrap_sensitive("Array[String]"), None);
        assert_eq!(unwrap_sensitive("Enum['Sensitive']"), None);
        assert_eq!(unwrap_sensitive("NotSensitive"), None);
        let meta = r#"{"parameters": {"pw": {"type": "Optional[Sensitive[String[1]]]"},
                       "n": {"type": "Sensitive[Integer]"}}}"#;
        let task = Task {
            name: "m::t".into(),
            module: "m".into(),
            metadata: super::super::metadata::Metadata::parse(meta, "t.json").unwrap(),
            executables: Default::default(),
            source: "t.json".into(),
            module_dir: None,
        };
        let given = serde_json::from_value(json!({"pw": "hunter22", "n": 5})).unwrap();
        let p = prepare(task.clone(), given, false, &Loader::new(Vec::new())).unwrap();
        assert_eq!(p.params["pw"], "hunter22");
        assert!(
            p.secrets.contains(&"hunter22".to_string()),
            "{:?}",
            p.secrets
        );
        let given = serde_json::from_value(json!({"pw": "", "n": 5})).unwrap();
        let err = prepare(task, given, false, &Loader::new(Vec::new()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("parameter 'pw'"), "{err}");
    }

    #[test]
    fn assignments_take_json_values() {
        let m = parse_assignments(&[
            "a=1".into(),
            "b=true".into(),
            "c=hello".into(),
            "d=[1,2]".into(),
            "e=007".into(),
        ])
        .unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"a": 1, "b": true, "c": "hello", "d": [1, 2], "e": "007"})
        );
    }
}
