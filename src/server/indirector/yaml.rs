//! The `yaml` terminus: files under `cache-dir` in Puppet's own layout,
//! so a Puppet server reads what ferry wrote and ferry reads what Puppet
//! wrote. Facts are `<cache-dir>/yaml/facts/<certname>.yaml` (Puppet's
//! `yamldir`), one `--- !ruby/object:Puppet::Node::Facts` document with
//! `name`, `values`, `timestamp` and `expiration`; reports are
//! `<cache-dir>/reports/<certname>/<YYYYMMDDHHMM>.yaml` (Puppet's
//! `reportdir`, as its `store` report processor names them), a `---
//! !ruby/object:Puppet::Transaction::Report` document holding the report
//! as the agent sent it. Every write is a temporary file in the same
//! directory renamed over the old one; a certname is checked before it
//! becomes a file name ([`super::file_name`]). A facts search reads every
//! `<cache-dir>/yaml/facts/*.yaml` and evaluates its query over them.
//!
//! Files are written in a YAML both YAML 1.1 (Ruby's Psych) and 1.2 read
//! the same: strings double-quoted unless they are plain words no reader
//! could take for anything else, floats always with a point and a signed
//! exponent.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::models::{Facts, FactsSearch, Report};
use super::{IndirectorError, Terminus, blocking, file_name};

/// Puppet's tag of a facts document.
pub const FACTS_TAG: &str = "!ruby/object:Puppet::Node::Facts";
/// Puppet's tag of a report document.
pub const REPORT_TAG: &str = "!ruby/object:Puppet::Transaction::Report";

/// Files under a cache directory.
pub struct Yaml {
    dir: PathBuf,
}

impl Yaml {
    pub fn new(cache_dir: &Path) -> Yaml {
        Yaml {
            dir: cache_dir.to_path_buf(),
        }
    }

    /// `<cache-dir>/yaml/facts/<certname>.yaml`.
    pub fn facts_path(&self, certname: &str) -> Result<PathBuf, IndirectorError> {
        Ok(self
            .dir
            .join("yaml/facts")
            .join(format!("{}.yaml", file_name(certname)?)))
    }

    /// `<cache-dir>/reports/<certname>/`.
    pub fn report_dir(&self, certname: &str) -> Result<PathBuf, IndirectorError> {
        Ok(self.dir.join("reports").join(file_name(certname)?))
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> IndirectorError + '_ {
    move |source| IndirectorError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Writes `text` to `path` through a temporary file beside it, renamed
/// over it (directories made `0750`, the file `0640`, as Puppet makes
/// them).
pub fn write_atomic(path: &Path, text: &str) -> Result<(), IndirectorError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o750)
        .create(dir)
        .map_err(io_error(dir))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".ferry-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io_error(dir))?;
    tmp.write_all(text.as_bytes()).map_err(io_error(path))?;
    tmp.as_file().sync_all().map_err(io_error(path))?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o640))
        .map_err(io_error(path))?;
    tmp.persist(path).map_err(|e| io_error(path)(e.error))?;
    Ok(())
}

/// Reads a facts file as Puppet writes it; `None` when there is none.
pub fn read_facts(path: &Path) -> Result<Option<Facts>, IndirectorError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path)(e)),
    };
    let bad = |line, column, message: String| IndirectorError::Yaml {
        path: path.display().to_string(),
        line,
        column,
        message,
    };
    let doc: Value = crate::yaml::from_str(&text).map_err(|e| bad(e.line, e.column, e.message))?;
    Facts::from_json(&doc, None).map(Some).ok_or_else(|| {
        bad(
            1,
            1,
            "not a facts document: it has no `values` mapping".into(),
        )
    })
}

/// Every facts file in `dir` (`<certname>.yaml`); a file that cannot be
/// read as facts is logged and passed over, so one broken file does not
/// hide the others.
fn all_facts(dir: &Path) -> Result<Vec<Facts>, IndirectorError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(dir)(e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry.map_err(io_error(dir))?.path();
        let Some(stem) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".yaml"))
            .filter(|n| !n.starts_with('.'))
        else {
            continue;
        };
        match read_facts(&path) {
            Ok(Some(mut facts)) => {
                if facts.name.is_empty() {
                    facts.name = stem.to_string();
                }
                out.push(facts);
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("passing over a facts file: {e}"),
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Facts as Puppet's YAML facts document (its keys in Puppet's order).
pub fn facts_document(facts: &Facts) -> String {
    let mut out = format!("--- {FACTS_TAG}\nname:");
    write_value(&Value::String(facts.name.clone()), 2, &mut out);
    out.push_str("values:");
    write_value(&Value::Object(facts.values.clone()), 2, &mut out);
    out.push_str("timestamp:");
    write_value(&Value::String(facts.timestamp.clone()), 2, &mut out);
    if let Some(e) = &facts.expiration {
        out.push_str("expiration:");
        write_value(&Value::String(e.clone()), 2, &mut out);
    }
    out
}

/// A tagged YAML document holding `map`.
pub fn document(tag: &str, map: &Map<String, Value>) -> String {
    let mut out = format!("--- {tag}\n");
    if map.is_empty() {
        out.truncate(out.len() - 1);
        out.push_str(" {}\n");
    } else {
        write_map(map, 0, &mut out);
    }
    out
}

/// Words YAML 1.1 reads as booleans or null, in any case.
const SPECIAL: &[&str] = &[
    "y", "n", "yes", "no", "true", "false", "on", "off", "null", "nil",
];

/// Whether `s` can be written bare: a word of letters, digits, `_`, `-`,
/// `.` and `/`, starting with a letter, and not one YAML 1.1 gives
/// another meaning.
fn plain(s: &str) -> bool {
    let mut chars = s.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    starts
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
        && !SPECIAL.contains(&s.to_ascii_lowercase().as_str())
}

fn scalar_text(s: &str, out: &mut String) {
    if plain(s) {
        out.push_str(s);
    } else {
        // JSON's escapes are YAML's double-quoted ones.
        out.push_str(&Value::String(s.to_string()).to_string());
    }
}

/// A number as both YAML versions read it: a float has a point and a
/// signed exponent.
fn number_text(n: &serde_json::Number, out: &mut String) {
    let text = n.to_string();
    if n.is_f64() {
        let (mantissa, exponent) = match text.split_once(['e', 'E']) {
            Some((m, e)) => (m.to_string(), Some(e.to_string())),
            None => (text.clone(), None),
        };
        out.push_str(&mantissa);
        if !mantissa.contains('.') {
            out.push_str(".0");
        }
        if let Some(e) = exponent {
            out.push('e');
            if !e.starts_with(['-', '+']) {
                out.push('+');
            }
            out.push_str(&e);
        }
    } else {
        out.push_str(&text);
    }
}

/// A value after `key:` or `-`: a scalar or empty collection on the same
/// line, else the block on the following lines at `indent`.
fn write_value(v: &Value, indent: usize, out: &mut String) {
    match v {
        Value::Null => out.push_str(" ~\n"),
        Value::Bool(b) => {
            out.push_str(if *b { " true\n" } else { " false\n" });
        }
        Value::Number(n) => {
            out.push(' ');
            number_text(n, out);
            out.push('\n');
        }
        Value::String(s) => {
            out.push(' ');
            scalar_text(s, out);
            out.push('\n');
        }
        Value::Array(a) if a.is_empty() => out.push_str(" []\n"),
        Value::Object(m) if m.is_empty() => out.push_str(" {}\n"),
        Value::Array(a) => {
            out.push('\n');
            write_list(a, indent, out);
        }
        Value::Object(m) => {
            out.push('\n');
            write_map(m, indent, out);
        }
    }
}

fn write_map(map: &Map<String, Value>, indent: usize, out: &mut String) {
    for (k, v) in map {
        out.push_str(&" ".repeat(indent));
        scalar_text(k, out);
        out.push(':');
        write_value(v, indent + 2, out);
    }
}

fn write_list(list: &[Value], indent: usize, out: &mut String) {
    for v in list {
        out.push_str(&" ".repeat(indent));
        out.push('-');
        write_value(v, indent + 2, out);
    }
}

#[async_trait::async_trait]
impl Terminus<Facts> for Yaml {
    fn name(&self) -> &'static str {
        "yaml"
    }
    async fn find(&self, certname: &String) -> Result<Option<Facts>, IndirectorError> {
        let path = self.facts_path(certname)?;
        blocking("yaml", move || read_facts(&path)).await
    }
    async fn search(&self, search: &FactsSearch) -> Result<Vec<Facts>, IndirectorError> {
        let dir = self.dir.join("yaml/facts");
        let stored = blocking("yaml", move || all_facts(&dir)).await?;
        Ok(search.select(stored)?)
    }
    async fn save(&self, facts: &Facts) -> Result<(), IndirectorError> {
        let path = self.facts_path(&facts.name)?;
        let text = facts_document(facts);
        blocking("yaml", move || write_atomic(&path, &text)).await
    }
    async fn destroy(&self, certname: &str) -> Result<(), IndirectorError> {
        let path = self.facts_path(certname)?;
        blocking("yaml", move || match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(&path)(e)),
            _ => Ok(()),
        })
        .await
    }
}

#[async_trait::async_trait]
impl Terminus<Report> for Yaml {
    fn name(&self) -> &'static str {
        "yaml"
    }
    async fn save(&self, report: &Report) -> Result<(), IndirectorError> {
        let dir = self.report_dir(&report.certname)?;
        let name = chrono::Utc::now().format("%Y%m%d%H%M.yaml").to_string();
        let text = match &report.doc {
            Value::Object(map) => document(REPORT_TAG, map),
            _ => document(REPORT_TAG, &Map::new()),
        };
        blocking("yaml", move || write_atomic(&dir.join(name), &text)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn written_yaml_reads_back_the_same() {
        let values = json!({
            "a": 1, "neg": -3, "f": 1.5, "big": 1e100, "small": -2.5e-7,
            "t": true, "no": "no", "y": "y", "n": null, "num": "123", "oct": "0755",
            "multi": "line one\nline two\t\"quoted\" \\ \u{1}", "colon": "a: b",
            "hash": "#x", "empty": "", "space": " lead", "unicode": "héllo ✓",
            "list": [1, "2", [], {}, [3, [4]], {"k": "v"}], "map": {"x": {"y": "z"}, "e": {}},
            "path": "/usr/bin", "Dotted.key-name": "v.1", "weird key: yes": "~",
        });
        let facts = Facts {
            name: "n1.example".into(),
            values: values.as_object().expect("map").clone(),
            timestamp: "2026-01-01T00:00:00.000000000+00:00".into(),
            expiration: Some("2026-01-01T01:00:00.000000000+00:00".into()),
            environment: None,
        };
        let text = facts_document(&facts);
        assert!(
            text.starts_with("--- !ruby/object:Puppet::Node::Facts\nname: n1.example\nvalues:\n"),
            "{text}"
        );
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("n1.example.yaml");
        write_atomic(&path, &text).expect("write");
        let back = read_facts(&path).expect("read").expect("found");
        assert_eq!(back.values, facts.values, "{text}");
        assert_eq!(back.name, facts.name);
        assert_eq!(back.timestamp, facts.timestamp);
        assert_eq!(back.expiration, facts.expiration);
        assert!(
            read_facts(&dir.path().join("none.yaml"))
                .expect("no error")
                .is_none()
        );
    }

    #[test]
    fn a_certname_never_leaves_its_directory() {
        let y = Yaml::new(Path::new("/cache"));
        assert_eq!(
            y.facts_path("web1.example").expect("ok"),
            Path::new("/cache/yaml/facts/web1.example.yaml")
        );
        for bad in ["", "..", "../etc", "a/b", ".hidden", "a\\b", "a b", "x\0"] {
            assert!(y.facts_path(bad).is_err(), "{bad:?}");
            assert!(y.report_dir(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_broken_file_is_an_error_with_its_place() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("x.yaml");
        std::fs::write(
            &path,
            "--- !ruby/object:Puppet::Node::Facts\nname: x\nvalues: [a\n",
        )
        .expect("write");
        let e = read_facts(&path).expect_err("broken").to_string();
        assert!(e.starts_with(&format!("{}:", path.display())), "{e}");
        std::fs::write(&path, "--- {name: x}\n").expect("write");
        let e = read_facts(&path).expect_err("no values").to_string();
        assert!(e.contains("no `values`"), "{e}");
    }

    #[test]
    fn a_search_reads_every_facts_file_and_passes_over_a_broken_one() {
        let dir = tempfile::tempdir().expect("dir");
        let yaml = Yaml::new(dir.path());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let search = FactsSearch {
            query: json!("nodes[certname] { facts.role = \"web\" }"),
            overlay: Default::default(),
        };
        // No facts directory yet: nothing found.
        let found = rt
            .block_on(Terminus::<Facts>::search(&yaml, &search))
            .expect("search");
        assert!(found.is_empty());
        for (name, role) in [("a.test", "web"), ("b.test", "db")] {
            let mut values = Map::new();
            values.insert("role".into(), json!(role));
            let facts = Facts::new(name, values, None);
            write_atomic(
                &yaml.facts_path(name).expect("path"),
                &facts_document(&facts),
            )
            .expect("write");
        }
        let facts_dir = dir.path().join("yaml/facts");
        std::fs::write(facts_dir.join("broken.yaml"), "values: [a\n").expect("write");
        std::fs::write(facts_dir.join("unnamed.yaml"), "---\nvalues: {role: web}\n")
            .expect("write");
        std::fs::write(facts_dir.join("notes.txt"), "not facts").expect("write");
        let found = rt
            .block_on(Terminus::<Facts>::search(&yaml, &search))
            .expect("search");
        let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, vec!["a.test", "unnamed"]);
    }
}
