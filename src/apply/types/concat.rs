//! puppetlabs-concat's `concat_file` and `concat_fragment`, applied as
//! the module's types apply them. A `concat_file` changes nothing itself:
//! Puppet generates a `file` resource for its path (right after it in the
//! catalog, in the same container, with its owner, group, mode, replace
//! and backup) whose content is the concat_file's fragments joined. ferry
//! does the same before ordering the catalog ([`expand`]): it collects
//! the fragments that name the concat_file (by `target` = its path or
//! title, or by `tag`), reads each one's `content` or first readable
//! `source`, sorts them as the module does (`numeric`: order then name,
//! digit strings compared as numbers; `alpha`: as strings), adds a
//! newline to fragments without one when `ensure_newline` is set, and
//! hands the result to ferry's own [`File`], so the file is delivered,
//! backed up and reported exactly as a `file` resource is. Fragments
//! change nothing and report no events. Only the `plain` format is
//! assembled; `json`/`yaml` merging is refused with a message.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::file::{Content, File};
use super::{
    EventStatus, EventText, Kind, ParamError, SourceError, Sources, bool_param, list_param,
    param_error, text_param,
};
use crate::apply::catalog::{ApplyCatalog, Resource};

/// What a concat resource is to ferry.
#[derive(Debug, Clone)]
pub enum Concat {
    /// A `concat_file`: nothing of its own to change. `error`: its
    /// content could not be assembled (the generated file then does not
    /// run: it comes after this one).
    File { error: Option<String> },
    /// A `concat_fragment`: read by its concat_file, nothing to apply.
    Fragment,
    /// The `file` a concat_file generates, with its assembled content,
    /// and the concat_file's title (Puppet's whit for it names it).
    Generated(Box<File>, String),
}

impl Concat {
    /// A `concat_fragment`'s parameters checked as the type checks them
    /// (the concat_files that use it are handled by [`expand`]).
    pub fn parse_fragment(r: &Resource) -> Result<Concat, ParamError> {
        Fragment::parse(r)?;
        Ok(Concat::Fragment)
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        match self {
            Concat::File { error: Some(_) } => out.push_str(&format!("_fail {n} generate\n")),
            // Nothing to do (a step's body may not be empty in sh).
            Concat::File { error: None } | Concat::Fragment => out.push_str(":\n"),
            Concat::Generated(f, _) => f.script(out, n, noop),
        }
    }

    pub fn describe(
        &self,
        property: &str,
        status: EventStatus,
        previous: &str,
        detail: &str,
    ) -> EventText {
        match self {
            Concat::Generated(f, _) => {
                let mut text = f.describe(property, status, previous, detail);
                // A generated file's wanted checksum is reported as text
                // (a file resource's from the catalog is base64).
                if property == "content"
                    && !text.redacted
                    && let Some(c) = &f.content
                {
                    text.desired = Value::String(format!("{{sha256}}{}", c.sha256));
                }
                text
            }
            _ => EventText {
                previous: Value::String(previous.into()),
                desired: Value::Null,
                message: detail.into(),
                redacted: false,
            },
        }
    }

    pub fn failure(&self, code: &str) -> String {
        match self {
            Concat::File { error: Some(e) } => {
                format!("Failed to generate additional resources using 'eval_generate': {e}")
            }
            Concat::Generated(f, _) => f.failure(code),
            _ => code.to_string(),
        }
    }

    pub fn provider(&self) -> Option<&'static str> {
        match self {
            Concat::Generated(..) => Some("posix"),
            _ => None,
        }
    }
}

/// Where a fragment's text comes from.
#[derive(Debug, Clone, PartialEq)]
enum Body {
    Content(String),
    Source(Vec<String>),
}

/// A `concat_fragment` as its concat_file reads it.
#[derive(Debug, Clone, PartialEq)]
struct Fragment {
    name: String,
    target: Option<String>,
    tag: Option<String>,
    /// `order` as text (an integer is taken as its digits).
    order: String,
    body: Body,
    sensitive: bool,
}

impl Fragment {
    fn parse(r: &Resource) -> Result<Fragment, ParamError> {
        let target = match r.param("target") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(param_error(r, "target", "Target must be a String")),
        };
        let tag = text_param(r, "tag")?;
        let order = match r.param("order") {
            None | Some(Value::Null) => "10".to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
            Some(_) => {
                return Err(param_error(
                    r,
                    "order",
                    "$order is not a string or integer.",
                ));
            }
        };
        if order.contains([':', '\n', '/']) {
            return Err(param_error(
                r,
                "order",
                "Order cannot contain '/', ':', or '\\n'.",
            ));
        }
        let content = match r.param("content") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(param_error(r, "content", "Content must be a String")),
        };
        let source = match r.param("source") {
            None | Some(Value::Null) => None,
            Some(_) => Some(list_param(r, "source")?),
        };
        if target.is_none() && tag.is_none() {
            return Err(param_error(r, "target", "No 'target' or 'tag' set"));
        }
        let body = match (content, source) {
            (Some(c), None) => Body::Content(c),
            (None, Some(s)) => Body::Source(s),
            (None, None) => {
                return Err(param_error(
                    r,
                    "content",
                    "Set either 'source' or 'content'",
                ));
            }
            (Some(_), Some(_)) => {
                return Err(param_error(
                    r,
                    "source",
                    "Can't use 'source' and 'content' at the same time",
                ));
            }
        };
        Ok(Fragment {
            name: text_param(r, "name")?.unwrap_or_else(|| r.title.clone()),
            target,
            tag,
            order,
            body,
            sensitive: r.is_sensitive("content"),
        })
    }

    /// The fragment's bytes; the error names its sources when none can
    /// be read.
    fn bytes(&self, sources: &dyn Sources) -> Result<Vec<u8>, String> {
        match &self.body {
            Body::Content(c) => Ok(c.clone().into_bytes()),
            Body::Source(list) => {
                for uri in list {
                    match sources.read(uri) {
                        Ok(bytes) => return Ok(bytes),
                        Err(SourceError::NotFound(_)) => continue,
                        Err(e) => return Err(e.to_string()),
                    }
                }
                Err(format!("Could not retrieve source(s) {}", list.join(", ")))
            }
        }
    }
}

/// How a concat_file sorts its fragments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SortOrder {
    Alpha,
    Numeric,
}

/// One part of a numeric sort key: Ruby's `v =~ /^\d+$/ ? v.to_i : v`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// An integer: negative, and its digits without leading zeros.
    Int(bool, String),
    Str(String),
}

fn part(v: &str) -> Part {
    // `^` and `$` are line anchors in Ruby: any all-digit line will do.
    if !v
        .split('\n')
        .any(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
    {
        return Part::Str(v.to_string());
    }
    // String#to_i: leading blanks, a sign, digits (with single `_`).
    let t = v.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut digits = String::new();
    let mut last_underscore = false;
    for c in t.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            last_underscore = false;
        } else if c == '_' && !digits.is_empty() && !last_underscore {
            last_underscore = true;
        } else {
            break;
        }
    }
    let digits = digits.trim_start_matches('0').to_string();
    let neg = neg && !digits.is_empty();
    Part::Int(neg, digits)
}

/// Ruby's `<=>` on two parts; `None` for an integer against a string.
fn compare_part(a: &Part, b: &Part) -> Option<Ordering> {
    match (a, b) {
        (Part::Str(x), Part::Str(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (Part::Int(na, a), Part::Int(nb, b)) => {
            let magnitude = a.len().cmp(&b.len()).then_with(|| a.cmp(b));
            Some(match (na, nb) {
                (false, false) => magnitude,
                (true, true) => magnitude.reverse(),
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
            })
        }
        _ => None,
    }
}

/// Ruby's Array `<=>` on two keys.
fn compare_key(a: &[Part], b: &[Part]) -> Option<Ordering> {
    for (x, y) in a.iter().zip(b) {
        match compare_part(x, y)? {
            Ordering::Equal => continue,
            other => return Some(other),
        }
    }
    Some(a.len().cmp(&b.len()))
}

/// The fragments' positions in the order the module sorts them.
fn sorted(fragments: &[&Fragment], order: SortOrder) -> Result<Vec<usize>, String> {
    let keys: Vec<String> = fragments
        .iter()
        .map(|f| format!("{}___{}", f.order, f.name))
        .collect();
    let mut idx: Vec<usize> = (0..fragments.len()).collect();
    match order {
        SortOrder::Alpha => {
            let split = |k: &str| -> (String, String) {
                let mut it = k.splitn(2, "__");
                (
                    it.next().unwrap_or_default().to_string(),
                    it.next().unwrap_or_default().to_string(),
                )
            };
            idx.sort_by(|&a, &b| {
                let (x, y) = (split(&keys[a]), split(&keys[b]));
                x.0.as_bytes()
                    .cmp(y.0.as_bytes())
                    .then_with(|| x.1.as_bytes().cmp(y.1.as_bytes()))
            });
        }
        SortOrder::Numeric => {
            let parts: Vec<Vec<Part>> = keys
                .iter()
                .map(|k| k.splitn(2, "___").map(part).collect())
                .collect();
            // A total order (integers before strings) to sort by, then
            // Ruby's check: neighbours it cannot compare make sort fail.
            let total = |a: &[Part], b: &[Part]| -> Ordering {
                compare_key(a, b).unwrap_or_else(|| {
                    let rank = |p: &[Part]| {
                        p.iter()
                            .map(|x| matches!(x, Part::Str(_)))
                            .collect::<Vec<_>>()
                    };
                    rank(a).cmp(&rank(b))
                })
            };
            idx.sort_by(|&a, &b| total(&parts[a], &parts[b]));
            if idx
                .windows(2)
                .any(|w| compare_key(&parts[w[0]], &parts[w[1]]).is_none())
            {
                return Err("comparison of Array with Array failed".into());
            }
        }
    }
    Ok(idx)
}

/// The content of a concat_file from its fragments, in order.
fn assemble(
    fragments: &[&Fragment],
    order: SortOrder,
    ensure_newline: bool,
    sources: &dyn Sources,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for i in sorted(fragments, order)? {
        let mut bytes = fragments[i].bytes(sources)?;
        if ensure_newline && bytes.last() != Some(&b'\n') {
            bytes.push(b'\n');
        }
        out.extend_from_slice(&bytes);
    }
    Ok(out)
}

/// A concat_file's own parameters.
struct ConcatFile {
    path: String,
    absent: bool,
    tag: Option<String>,
    order: SortOrder,
    ensure_newline: bool,
}

impl ConcatFile {
    fn parse(r: &Resource) -> Result<ConcatFile, ParamError> {
        let path = super::path_param(r, true)?;
        let absent = match text_param(r, "ensure")?.as_deref() {
            None | Some("present") => false,
            Some("absent") => true,
            Some(other) => {
                return Err(param_error(
                    r,
                    "ensure",
                    &format!("Invalid value \"{other}\". Valid values are present, absent."),
                ));
            }
        };
        let order = match text_param(r, "order")?.as_deref() {
            None | Some("numeric") => SortOrder::Numeric,
            Some("alpha") => SortOrder::Alpha,
            Some(other) => {
                return Err(param_error(
                    r,
                    "order",
                    &format!("Invalid value \"{other}\". Valid values are alpha, numeric."),
                ));
            }
        };
        match text_param(r, "format")?.as_deref() {
            None | Some("plain") => {}
            Some(f @ ("yaml" | "json" | "json-array" | "json-pretty" | "json-array-pretty")) => {
                return Err(param_error(
                    r,
                    "format",
                    &format!("ferry assembles concat files in the 'plain' format only, not '{f}'"),
                ));
            }
            Some(other) => {
                return Err(param_error(
                    r,
                    "format",
                    &format!(
                        "Invalid value \"{other}\". Valid values are plain, yaml, json, json-array, json-pretty, json-array-pretty."
                    ),
                ));
            }
        }
        if text_param(r, "validate_cmd")?.is_some() {
            return Err(param_error(
                r,
                "validate_cmd",
                "ferry does not apply 'validate_cmd' yet",
            ));
        }
        // Checked as the type checks them; force only matters to merges.
        bool_param(r, "force", false)?;
        bool_param(r, "replace", true)?;
        Ok(ConcatFile {
            path,
            absent,
            tag: text_param(r, "tag")?,
            order,
            ensure_newline: bool_param(r, "ensure_newline", false)?,
        })
    }

    /// Whether `f` belongs to this concat_file (`title` is its title).
    fn collects(&self, title: &str, f: &Fragment) -> bool {
        f.target.as_deref() == Some(self.path.as_str())
            || f.target.as_deref() == Some(title)
            || (f.tag.is_some() && f.tag == self.tag)
    }
}

/// The `file` resource a concat_file generates (without content).
fn generated_resource(cf: &Resource, c: &ConcatFile) -> Resource {
    let mut params = Map::new();
    params.insert(
        "ensure".into(),
        Value::String(if c.absent { "absent" } else { "file" }.into()),
    );
    params.insert("path".into(), Value::String(c.path.clone()));
    for p in ["owner", "group", "mode", "replace", "backup"] {
        if let Some(v) = cf.param(p).filter(|v| !v.is_null()) {
            params.insert(p.into(), v.clone());
        }
    }
    // Metaparameters pass on, but for relationships and tags.
    for p in ["noop", "loglevel", "schedule", "audit"] {
        if let Some(v) = cf.param(p).filter(|v| !v.is_null()) {
            params.insert(p.into(), v.clone());
        }
    }
    let mut tags = vec!["file".to_string()];
    tags.extend(cf.tags.iter().filter(|t| *t != "file").cloned());
    Resource {
        type_name: "File".into(),
        title: c.path.clone(),
        tags,
        file: cf.file.clone(),
        line: cf.line,
        exported: false,
        kind: None,
        params,
        sensitive: Default::default(),
    }
}

/// A concat_file read by [`expand`].
struct Made {
    /// The concat_file's index.
    cf: usize,
    kind: Concat,
    target: Target,
    /// The file resource with its assembled content.
    file: File,
}

/// Where a concat_file's content goes.
enum Target {
    /// A file resource to add to the catalog.
    New(Box<Resource>),
    /// A file resource the catalog already has (by index): Puppet uses
    /// it instead of generating one.
    Existing(usize),
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Adds to the catalog the `file` each concat_file generates (right after
/// it, in its container, after it in the graph) and gives the types of
/// the concat_files and generated files by resource index; every other
/// resource is read by [`Kind::parse`].
pub fn expand(
    catalog: ApplyCatalog,
    sources: &dyn Sources,
) -> Result<(ApplyCatalog, HashMap<usize, Kind>), ParamError> {
    let mut catalog = catalog;
    let fragments: Vec<Fragment> = catalog
        .resources
        .iter()
        .filter(|r| r.type_key() == "concat_fragment")
        .map(Fragment::parse)
        .collect::<Result<_, _>>()?;
    let mut made: Vec<Made> = Vec::new();
    for (i, r) in catalog.resources.iter().enumerate() {
        if r.type_key() != "concat_file" {
            continue;
        }
        let c = ConcatFile::parse(r)?;
        let mine: Vec<&Fragment> = fragments
            .iter()
            .filter(|f| c.collects(&r.title, f))
            .collect();
        let assembled = assemble(&mine, c.order, c.ensure_newline, sources);
        let existing = catalog.resources.iter().position(|x| {
            x.type_key() == "file"
                && (x.title == c.path
                    || x.param("path").and_then(Value::as_str) == Some(c.path.as_str()))
        });
        let (res, target) = match existing {
            Some(e) => (catalog.resources[e].clone(), Target::Existing(e)),
            None => {
                let g = generated_resource(r, &c);
                (g.clone(), Target::New(Box::new(g)))
            }
        };
        let mut file = File::parse(&res, sources)?;
        let error = match assembled {
            Ok(bytes) if !c.absent => {
                file.content = Some(Content {
                    sha256: sha256_hex(&bytes),
                    bytes,
                    sensitive: mine.iter().any(|f| f.sensitive),
                });
                None
            }
            Ok(_) => None,
            Err(e) => Some(e),
        };
        made.push(Made {
            cf: i,
            kind: Concat::File { error },
            target,
            file,
        });
    }
    // The new resources' places, and every old index's new one.
    let old_len = catalog.resources.len();
    let mut new_index = vec![0usize; old_len];
    let mut resources = Vec::with_capacity(old_len + made.len());
    let mut kinds = HashMap::new();
    // (concat_file's old index, generated file's new index)
    let mut added: Vec<(usize, usize)> = Vec::new();
    // Files of the catalog that take a concat_file's content, by old index.
    let mut taken: Vec<(usize, Kind)> = Vec::new();
    let mut made_iter = made.into_iter().peekable();
    let old = std::mem::take(&mut catalog.resources);
    for (i, r) in old.into_iter().enumerate() {
        new_index[i] = resources.len();
        resources.push(r);
        let Some(m) = made_iter.next_if(|m| m.cf == i) else {
            continue;
        };
        kinds.insert(new_index[i], Kind::Concat(m.kind));
        let by = resources[new_index[i]].title.clone();
        let file = Kind::Concat(Concat::Generated(Box::new(m.file), by));
        match m.target {
            Target::New(mut g) => {
                let cf_ref = resources[new_index[i]].reference();
                g.params.insert("require".into(), Value::String(cf_ref));
                added.push((i, resources.len()));
                kinds.insert(resources.len(), file);
                resources.push(*g);
            }
            Target::Existing(e) => taken.push((e, file)),
        }
    }
    for (e, kind) in taken {
        kinds.insert(new_index[e], kind);
    }
    let container_of: HashMap<usize, usize> =
        catalog.contains.iter().map(|&(a, b)| (b, a)).collect();
    let mut contains: Vec<(usize, usize)> = catalog
        .contains
        .iter()
        .map(|&(a, b)| (new_index[a], new_index[b]))
        .collect();
    for (cf, file) in added {
        if let Some(&c) = container_of.get(&cf) {
            contains.push((new_index[c], file));
        }
    }
    catalog.resources = resources;
    catalog.contains = contains;
    Ok((catalog, kinds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(name: &str, order: &str, content: &str) -> Fragment {
        Fragment {
            name: name.into(),
            target: Some("/t".into()),
            tag: None,
            order: order.into(),
            body: Body::Content(content.into()),
            sensitive: false,
        }
    }

    struct NoSources;
    impl Sources for NoSources {
        fn read(&self, uri: &str) -> Result<Vec<u8>, SourceError> {
            if uri == "/here" {
                Ok(b"from source".to_vec())
            } else {
                Err(SourceError::NotFound(uri.into()))
            }
        }
        fn tree(&self, _: &str) -> Result<Option<Vec<(String, bool)>>, SourceError> {
            Ok(None)
        }
        fn environment(&self) -> &str {
            "production"
        }
    }

    fn joined(fs: &[Fragment], order: SortOrder, nl: bool) -> Result<String, String> {
        let refs: Vec<&Fragment> = fs.iter().collect();
        assemble(&refs, order, nl, &NoSources).map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    #[test]
    fn numeric_order_compares_numbers_then_names() {
        let fs = [
            frag("ten", "10", "ten"),
            frag("nine", "9", "nine"),
            frag("hundred", "100", "hundred"),
            frag("also-ten", "010", "also"),
        ];
        assert_eq!(
            joined(&fs, SortOrder::Numeric, true).unwrap(),
            "nine\nalso\nten\nhundred\n"
        );
    }

    #[test]
    fn alpha_order_compares_strings() {
        let fs = [
            frag("x", "9", "9"),
            frag("y", "10", "10"),
            frag("b", "b", "b"),
            frag("a", "b", "a"),
        ];
        assert_eq!(
            joined(&fs, SortOrder::Alpha, false).unwrap(),
            "10".to_string() + "9ab"
        );
    }

    #[test]
    fn numeric_order_fails_on_a_number_against_a_string() {
        let fs = [frag("a", "10", "x"), frag("b", "z", "y")];
        assert_eq!(
            joined(&fs, SortOrder::Numeric, false).unwrap_err(),
            "comparison of Array with Array failed"
        );
    }

    #[test]
    fn sources_first_readable_or_named_in_the_error() {
        let mut f = frag("s", "1", "");
        f.body = Body::Source(vec!["/missing".into(), "/here".into()]);
        assert_eq!(
            joined(&[f.clone()], SortOrder::Alpha, true).unwrap(),
            "from source\n"
        );
        f.body = Body::Source(vec!["/missing".into(), "/gone".into()]);
        assert_eq!(
            joined(&[f], SortOrder::Alpha, true).unwrap_err(),
            "Could not retrieve source(s) /missing, /gone"
        );
    }

    #[test]
    fn ruby_to_i_parts() {
        assert_eq!(part("007"), Part::Int(false, "7".into()));
        assert_eq!(part("0"), Part::Int(false, String::new()));
        assert_eq!(part("1a"), Part::Str("1a".into()));
        assert_eq!(part("x\n5"), Part::Int(false, String::new()));
    }

    fn resource(ty: &str, title: &str, params: Value) -> Resource {
        Resource {
            type_name: ty.into(),
            title: title.into(),
            tags: vec![],
            file: None,
            line: None,
            exported: false,
            kind: None,
            params: params.as_object().cloned().unwrap_or_default(),
            sensitive: Default::default(),
        }
    }

    #[test]
    fn bad_fragments_and_formats_are_refused() {
        let r = resource("Concat_fragment", "f", serde_json::json!({"target": "/t"}));
        assert_eq!(
            Fragment::parse(&r).unwrap_err().message,
            "Set either 'source' or 'content'"
        );
        let r = resource(
            "Concat_fragment",
            "f",
            serde_json::json!({"target": "/t", "content": "x", "order": "a/b"}),
        );
        assert_eq!(Fragment::parse(&r).unwrap_err().param, "order");
        let r = resource("Concat_fragment", "f", serde_json::json!({"content": "x"}));
        assert_eq!(
            Fragment::parse(&r).unwrap_err().message,
            "No 'target' or 'tag' set"
        );
        let r = resource("Concat_file", "/t", serde_json::json!({"format": "json"}));
        assert!(
            ConcatFile::parse(&r)
                .err()
                .is_some_and(|e| e.message.contains("'plain' format only"))
        );
    }

    #[test]
    fn expand_inserts_the_file_after_its_concat_file() {
        let catalog = ApplyCatalog {
            name: "n".into(),
            version: "1".into(),
            catalog_uuid: None,
            code_id: None,
            environment: "production".into(),
            resources: vec![
                resource("Class", "main", serde_json::json!({})),
                resource("Concat_file", "/t", serde_json::json!({"mode": "0600"})),
                resource(
                    "Concat_fragment",
                    "b",
                    serde_json::json!({"target": "/t", "content": "b", "order": 2}),
                ),
                resource(
                    "Concat_fragment",
                    "a",
                    serde_json::json!({"target": "/t", "content": "a", "order": 1}),
                ),
            ],
            contains: vec![(0, 1), (0, 2), (0, 3)],
        };
        let (c, kinds) = expand(catalog, &NoSources).unwrap();
        assert_eq!(c.resources[2].reference(), "File[/t]");
        assert_eq!(c.contains, vec![(0, 1), (0, 3), (0, 4), (0, 2)]);
        match kinds.get(&2) {
            Some(Kind::Concat(Concat::Generated(f, _))) => {
                assert_eq!(
                    f.content.as_ref().map(|c| c.bytes.clone()),
                    Some(b"ab".to_vec())
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            kinds.get(&1),
            Some(Kind::Concat(Concat::File { error: None }))
        ));
    }
}
