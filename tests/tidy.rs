//! Tidy tests over the source tree (in the spirit of rust-analyzer's): no
//! two top-level modules (`src/<name>/` or `src/<name>.rs`) import each
//! other, directly or through others, and neither do the commands in
//! `src/cli/`. A module's imports are every path it names: `crate::x`,
//! `ferry::x` (the binary's view of the library), `super::` that climbs
//! to the top and `self::`, grouped `use` lists included; comments and
//! string literals are skipped.
//!
//! `KNOWN` lists accepted cycles (none today): the test fails on any other
//! cycle, and on an entry of `KNOWN` that no longer exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Accepted cycles between top-level modules, each as its members (one
/// strongly connected component), sorted. Keep it empty.
const KNOWN: &[&[&str]] = &[];

/// A module path from the crate root: `["transport", "ssh", "shell"]`.
type ModPath = Vec<String>;

/// Where one module names another: `file:line`.
type Evidence = String;

/// The source with comments and string and char literals blanked out
/// (newlines kept, so line numbers hold).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend(bytes.iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }))
    };
    while i < b.len() {
        let rest = &b[i..];
        let start = i;
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (rest.starts_with(b"r#") || rest.starts_with(b"r\"") || rest.starts_with(b"br"))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && {
                let skip = if rest[0] == b'b' { 2 } else { 1 };
                let hashes = rest[skip..].iter().take_while(|&&c| c == b'#').count();
                rest.get(skip + hashes) == Some(&b'"')
            }
        {
            let skip = if rest[0] == b'b' { 2 } else { 1 };
            let hashes = rest[skip..].iter().take_while(|&&c| c == b'#').count();
            let mut end = Vec::from(&b"\""[..]);
            end.extend(std::iter::repeat_n(b'#', hashes));
            i += skip + hashes + 1;
            while i < b.len() && !b[i..].starts_with(&end) {
                i += 1;
            }
            i = (i + end.len()).min(b.len());
        } else if rest[0] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), or a lifetime.
            if rest.get(1) == Some(&b'\\') {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i = (i + 1).min(b.len());
            } else {
                let ch_len = std::str::from_utf8(&rest[1..])
                    .ok()
                    .or_else(|| std::str::from_utf8(&rest[1..rest.len().min(5)]).ok())
                    .and_then(|s| s.chars().next())
                    .map_or(1, char::len_utf8);
                if rest.get(1 + ch_len) == Some(&b'\'') {
                    i += 2 + ch_len;
                } else {
                    out.push(b'\'');
                    i += 1;
                    continue;
                }
            }
        } else {
            out.push(b[i]);
            i += 1;
            continue;
        }
        blank(&mut out, &b[start..i]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The module a file is: `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`;
/// `src/lib.rs` and `src/main.rs` are the root.
fn file_module(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") || !parts.is_empty() && stem != "mod" {
        parts.push(stem.to_string());
    }
    parts
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Reads `a::b::{c, d::e}` from the start of `s` as the paths it names
/// (a group gives one path per item), each as segments.
fn paths_at(s: &str) -> Vec<Vec<String>> {
    let mut segs = Vec::new();
    let mut rest = s.trim_start();
    loop {
        let len = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if len > 0 {
            segs.push(rest[..len].to_string());
            rest = &rest[len..];
        }
        let after = rest.trim_start();
        if let Some(next) = after.strip_prefix("::") {
            rest = next.trim_start();
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 1;
                let mut item = String::new();
                let mut out = Vec::new();
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 || (depth == 1 && c == ',') {
                        for tail in paths_at(&item) {
                            let mut p = segs.clone();
                            p.extend(tail);
                            out.push(p);
                        }
                        item.clear();
                        if depth == 0 {
                            break;
                        }
                    } else {
                        item.push(c);
                    }
                }
                return out;
            }
            continue;
        }
        return vec![segs];
    }
}

/// Every module path a file names, resolved from the crate root, with
/// its line. Inline `mod x { .. }` blocks are followed so that `super::`
/// inside them climbs from the right place.
fn references(src: &Path, file: &Path) -> Vec<(ModPath, usize)> {
    let text = code_only(&std::fs::read_to_string(file).expect("read source"));
    let base = file_module(src, file);
    let mut found = Vec::new();
    // Open braces: whether each opened an inline module.
    let mut braces: Vec<Option<String>> = Vec::new();
    let mut pending_mod: Option<String> = None;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (at, c) = chars[k];
        let prev_ident = k > 0 && (is_ident(chars[k - 1].1) || chars[k - 1].1 == ':');
        match c {
            '{' => braces.push(pending_mod.take()),
            '}' => {
                braces.pop();
            }
            ';' => pending_mod = None,
            _ if !prev_ident && is_ident(c) => {
                let word_len = text[at..].find(|c: char| !is_ident(c)).unwrap_or(0);
                let word = &text[at..at + word_len];
                let mut here = base.clone();
                here.extend(braces.iter().flatten().cloned());
                let line = text[..at].matches('\n').count() + 1;
                match word {
                    "mod" => {
                        let name: String = text[at + 3..]
                            .trim_start()
                            .chars()
                            .take_while(|&c| is_ident(c))
                            .collect();
                        pending_mod = Some(name);
                    }
                    "crate" | "ferry" | "super" | "self"
                        if text[at + word_len..].starts_with("::") =>
                    {
                        for path in paths_at(&text[at..]) {
                            if let Some(resolved) = resolve(&here, &path) {
                                found.push((resolved, line));
                            }
                        }
                    }
                    _ => {}
                }
                // Skip the rest of the word (and a whole path after it).
                let mut end = at + word_len;
                if matches!(word, "crate" | "ferry" | "super" | "self") {
                    end = at
                        + text[at..]
                            .find(|c: char| !(is_ident(c) || c == ':'))
                            .unwrap_or(text.len() - at);
                }
                while k < chars.len() && chars[k].0 < end {
                    k += 1;
                }
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    found
}

/// A path's absolute module path as seen from module `here`, or None when
/// it does not start at the crate root, `super` or `self`.
fn resolve(here: &[String], path: &[String]) -> Option<ModPath> {
    let mut at: ModPath = here.to_vec();
    let mut segs = path.iter().peekable();
    match segs.peek().map(|s| s.as_str()) {
        Some("crate" | "ferry") => {
            at.clear();
            segs.next();
        }
        Some("super") => {
            while segs.peek().map(|s| s.as_str()) == Some("super") {
                segs.next();
                at.pop()?;
            }
        }
        Some("self") => {
            segs.next();
        }
        _ => return None,
    }
    at.extend(segs.cloned());
    Some(at)
}

/// The edges between the children of module `parent`: child → child it
/// names, with where.
fn edges(src: &Path, parent: &[&str]) -> BTreeMap<(String, String), Evidence> {
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src").flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    let child_of = |m: &[String]| -> Option<String> {
        (m.len() > parent.len() && m.iter().zip(parent).all(|(a, b)| a == b))
            .then(|| m[parent.len()].clone())
    };
    let mut out: BTreeMap<(String, String), Evidence> = BTreeMap::new();
    for file in &files {
        let from_mod = file_module(src, file);
        let Some(from) = child_of(&from_mod) else {
            continue;
        };
        for (target, line) in references(src, file) {
            if let Some(to) = child_of(&target)
                && to != from
                && child_exists(src, parent, &to)
            {
                out.entry((from.clone(), to))
                    .or_insert_with(|| format!("{}:{line}", display(file)));
            }
        }
    }
    out
}

fn child_exists(src: &Path, parent: &[&str], name: &str) -> bool {
    let dir: PathBuf = parent.iter().fold(src.to_path_buf(), |p, s| p.join(s));
    dir.join(name).is_dir() || dir.join(format!("{name}.rs")).is_file()
}

fn display(file: &Path) -> String {
    file.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(file)
        .display()
        .to_string()
}

/// The strongly connected components with more than one member, each
/// sorted (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<(String, String), Evidence>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let next = |n: &String| -> Vec<&String> {
        edges
            .keys()
            .filter(|(a, _)| a == n)
            .map(|(_, b)| b)
            .collect()
    };
    struct State<'a> {
        index: BTreeMap<&'a String, usize>,
        low: BTreeMap<&'a String, usize>,
        stack: Vec<&'a String>,
        on_stack: BTreeSet<&'a String>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(n: &'a String, next: &dyn Fn(&String) -> Vec<&'a String>, s: &mut State<'a>) {
        let i = s.index.len();
        s.index.insert(n, i);
        s.low.insert(n, i);
        s.stack.push(n);
        s.on_stack.insert(n);
        for m in next(n) {
            if !s.index.contains_key(m) {
                visit(m, next, s);
                let low = s.low[n].min(s.low[m]);
                s.low.insert(n, low);
            } else if s.on_stack.contains(m) {
                let low = s.low[n].min(s.index[m]);
                s.low.insert(n, low);
            }
        }
        if s.low[n] == s.index[n] {
            let mut comp = Vec::new();
            while let Some(m) = s.stack.pop() {
                s.on_stack.remove(m);
                comp.push(m.clone());
                if m == n {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for n in nodes {
        if !s.index.contains_key(n) {
            visit(n, &next, &mut s);
        }
    }
    s.out.sort();
    s.out
}

/// A component's edges with their evidence, one per line.
fn describe(comp: &[String], edges: &BTreeMap<(String, String), Evidence>) -> String {
    edges
        .iter()
        .filter(|((a, b), _)| comp.contains(a) && comp.contains(b))
        .map(|((a, b), at)| format!("  {a} -> {b} ({at})"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn top_level_modules_import_each_other_in_no_cycle_but_the_known() {
    let edges = edges(&src(), &[]);
    let found = cycles(&edges);
    let known: Vec<Vec<String>> = KNOWN
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let mut problems = Vec::new();
    for comp in found.iter().filter(|c| !known.contains(c)) {
        problems.push(format!(
            "a cycle between top-level modules {}:\n{}",
            comp.join(", "),
            describe(comp, &edges)
        ));
    }
    for comp in found.iter().filter(|c| known.contains(c)) {
        println!(
            "known cycle {}:\n{}",
            comp.join(", "),
            describe(comp, &edges)
        );
    }
    for gone in known.iter().filter(|c| !found.contains(c)) {
        problems.push(format!(
            "the known cycle {} no longer exists as such: update KNOWN in tests/tidy.rs (cycles now: {found:?})",
            gone.join(", ")
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_cli_commands_import_each_other_in_no_cycle() {
    let edges = edges(&src(), &["cli"]);
    let found = cycles(&edges);
    let shown: Vec<String> = found
        .iter()
        .map(|c| format!("{}:\n{}", c.join(", "), describe(c, &edges)))
        .collect();
    assert!(
        found.is_empty(),
        "cycles in src/cli/:\n{}",
        shown.join("\n")
    );
}

#[test]
fn the_reader_sees_grouped_and_relative_imports() {
    let text = "use crate::{a::X, b::{c, d}};\nmod inner {\n  use super::super::e::F; // crate::nope\n}\nfn f() { let s = \"crate::no\"; ferry::g::h(); }\n";
    let dir = tempfile::tempdir().expect("tmp");
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("m")).expect("mkdir");
    let file = src.join("m/x.rs");
    std::fs::write(&file, text).expect("write");
    let got: Vec<(String, usize)> = references(&src, &file)
        .into_iter()
        .map(|(p, l)| (p.join("::"), l))
        .collect();
    let want: Vec<(String, usize)> = [
        ("a::X", 1),
        ("b::c", 1),
        ("b::d", 1),
        ("m::e::F", 3),
        ("g::h", 5),
    ]
    .iter()
    .map(|(p, l)| (p.to_string(), *l))
    .collect();
    assert_eq!(got, want);
}
