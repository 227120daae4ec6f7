//! Ruby 3.1's `Dir.glob` on the compiling machine, for stdlib's `glob`:
//! braces expanded first (`{a,b}`, nested, each alternative globbed in
//! turn), then the pattern walked one path segment at a time. `*`, `?`
//! and `[set]` (`!`/`^` negation, ranges, `\` escapes) match within a
//! segment and never match a leading `.`; `**/` matches zero or more
//! directories without entering hidden ones or following symbolic links;
//! `**` elsewhere is `*`; a trailing `/` keeps only directories (and
//! prints the slash). Each directory's entries are taken in byte order,
//! a match before what lies under it, as Ruby sorts them; segments
//! without wildcards are joined without reading the directory. Unreadable
//! directories are skipped silently, as Ruby does.

use std::fs;
use std::path::Path;

/// Most patterns one pattern's braces may expand to: Ruby has no limit,
/// but a manifest must not make the compile hang.
pub const MAX_PATTERNS: usize = 10_000;

/// Most bytes of patterns brace expansion may scan, all steps together:
/// deep nesting costs its depth times its length.
const MAX_SCAN: usize = 16 << 20;

/// A pattern whose braces expand to more than [`MAX_PATTERNS`] (or nest
/// past [`MAX_SCAN`]).
#[derive(Debug, thiserror::Error)]
#[error("the braces of {0:?} expand to more than {MAX_PATTERNS} patterns")]
pub struct TooManyPatterns(pub String);

/// The paths matching `pattern`, in Ruby's order.
pub fn glob(pattern: &str) -> Result<Vec<String>, TooManyPatterns> {
    let mut out = Vec::new();
    for p in expand_braces(pattern).ok_or_else(|| TooManyPatterns(pattern.to_string()))? {
        Walk::new(&p).run(&mut out);
    }
    Ok(out)
}

/// Ruby's brace expansion: the first outermost `{...}` with a match is
/// replaced by each of its top-level comma-separated parts, and so on
/// until none is left; an unmatched brace stays literal. A work list,
/// not recursion (nesting comes from manifests); `None` past
/// [`MAX_PATTERNS`] or [`MAX_SCAN`].
fn expand_braces(p: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut pending = vec![p.to_string()];
    let mut scanned = 0usize;
    while let Some(q) = pending.pop() {
        scanned += q.len();
        if scanned > MAX_SCAN {
            return None;
        }
        match first_group(&q) {
            None => out.push(q),
            // Popped from the end: pushed in reverse to keep their order.
            Some(alternatives) => pending.extend(alternatives.into_iter().rev()),
        }
        if out.len() + pending.len() > MAX_PATTERNS {
            return None;
        }
    }
    Some(out)
}

/// `p` with its first closed outermost brace group replaced by each of
/// its parts; `None` when it has none.
fn first_group(p: &str) -> Option<Vec<String>> {
    let b = p.as_bytes();
    let (mut depth, mut open, mut close) = (0usize, None, None);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'{' => {
                if depth == 0 {
                    open = Some(i);
                }
                depth += 1;
            }
            b'}' if open.is_some() => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
        i += 1;
    }
    let (l, r) = (open?, close?);
    let mut parts = Vec::new();
    let (mut start, mut depth) = (l + 1, 0usize);
    let mut i = l + 1;
    while i < r {
        match b[i] {
            b'\\' => i += 1,
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                parts.push(&p[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&p[start..r]);
    Some(
        parts
            .into_iter()
            .map(|part| format!("{}{part}{}", &p[..l], &p[r + 1..]))
            .collect(),
    )
}

/// One path segment of a pattern.
#[derive(Debug, PartialEq)]
enum Seg {
    /// No wildcard: the name itself (backslashes removed).
    Plain(String),
    /// A segment with `*`, `?` or `[`, matched by [`fnmatch`].
    Magic(String),
    /// `**` followed by `/`: zero or more directories.
    Recursive,
}

/// A brace-free pattern being walked.
struct Walk {
    /// Where the walk starts: `/` for an absolute pattern, else the
    /// working directory (printed as nothing).
    base: String,
    segs: Vec<Seg>,
    /// The pattern ends with `/`: only directories, printed with it.
    dir_only: bool,
}

impl Walk {
    fn new(pattern: &str) -> Walk {
        let (base, rest) = match pattern.strip_prefix('/') {
            Some(r) => ("/".to_string(), r),
            None => (String::new(), pattern),
        };
        let (rest, dir_only) = match rest.strip_suffix('/') {
            Some(r) => (r, true),
            None => (rest, false),
        };
        let names: Vec<&str> = if rest.is_empty() {
            Vec::new()
        } else {
            rest.split('/').collect()
        };
        let last = names.len().saturating_sub(1);
        let segs = names
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if *s == "**" && (i < last || dir_only) {
                    Seg::Recursive
                } else if is_magic(s) {
                    Seg::Magic((*s).to_string())
                } else {
                    Seg::Plain(unescape(s))
                }
            })
            .collect();
        Walk {
            base,
            segs,
            dir_only,
        }
    }

    fn run(&self, out: &mut Vec<String>) {
        if self.segs.is_empty() && !self.dir_only && self.base.is_empty() {
            return; // Dir.glob("") is empty
        }
        self.visit(&self.base, true, vec![0], out);
    }

    /// `path` (known to exist when `seen`) with the pattern positions
    /// still to match below it.
    fn visit(&self, path: &str, seen: bool, mut at: Vec<usize>, out: &mut Vec<String>) {
        // `**/` also stands for no directory at all.
        let mut k = 0;
        while k < at.len() {
            if matches!(self.segs.get(at[k]), Some(Seg::Recursive)) && !at.contains(&(at[k] + 1)) {
                at.push(at[k] + 1);
            }
            k += 1;
        }
        at.sort_unstable();
        let end = self.segs.len();
        if at.contains(&end) && !path.is_empty() {
            if self.dir_only {
                if fs::metadata(path).is_ok_and(|m| m.is_dir()) {
                    out.push(if path.ends_with('/') {
                        path.to_string()
                    } else {
                        format!("{path}/")
                    });
                }
            } else if seen || fs::symlink_metadata(path).is_ok() {
                out.push(path.to_string());
            }
        }
        let next: Vec<usize> = at.into_iter().filter(|&i| i < end).collect();
        if next.is_empty() {
            return;
        }
        let reads_dir = next.iter().any(|&i| !matches!(self.segs[i], Seg::Plain(_)));
        if !reads_dir {
            // Plain names: joined in pattern order, no directory read.
            let mut done: Vec<&str> = Vec::new();
            for &i in &next {
                let Seg::Plain(name) = &self.segs[i] else {
                    continue;
                };
                if done.contains(&name.as_str()) {
                    continue;
                }
                done.push(name);
                let same: Vec<usize> = next
                    .iter()
                    .filter(|&&j| self.segs[j] == Seg::Plain(name.clone()))
                    .map(|&j| j + 1)
                    .collect();
                self.visit(&join(path, name), false, same, out);
            }
            return;
        }
        let dir = if path.is_empty() { "." } else { path };
        let Ok(entries) = fs::read_dir(Path::new(dir)) else {
            return;
        };
        let mut names: Vec<(String, bool)> = entries
            .filter_map(Result::ok)
            .map(|e| {
                let real_dir = e.file_type().is_ok_and(|t| t.is_dir());
                (e.file_name().to_string_lossy().into_owned(), real_dir)
            })
            .collect();
        names.push((".".to_string(), false));
        names.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        for (name, real_dir) in names {
            let mut below = Vec::new();
            for &i in &next {
                match &self.segs[i] {
                    Seg::Recursive if real_dir && !name.starts_with('.') => below.push(i),
                    Seg::Plain(p) if *p == name => below.push(i + 1),
                    Seg::Magic(m) if fnmatch(m, &name) => below.push(i + 1),
                    _ => {}
                }
            }
            if !below.is_empty() {
                below.dedup();
                self.visit(&join(path, &name), true, below, out);
            }
        }
    }
}

fn join(path: &str, name: &str) -> String {
    match path {
        "" => name.to_string(),
        "/" => format!("/{name}"),
        p => format!("{p}/{name}"),
    }
}

/// Whether a segment has an unescaped `*`, `?` or `[`.
fn is_magic(s: &str) -> bool {
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Ruby's `File.fnmatch` of one segment (no `FNM_DOTMATCH`): a leading
/// `.` of `name` must be matched by a literal `.`.
fn fnmatch(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = name.chars().collect();
    if s.first() == Some(&'.') {
        let first = match p.first() {
            Some('\\') => p.get(1),
            other => other,
        };
        if first != Some(&'.') {
            return false;
        }
    }
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi + 1, si));
                pi += 1;
                continue;
            }
            Some('?') => Some(pi + 1),
            Some('[') => match bracket(&p, pi + 1, s[si]) {
                Some((true, next)) => Some(next),
                _ => None,
            },
            Some('\\') if pi + 1 < p.len() => (p[pi + 1] == s[si]).then_some(pi + 2),
            Some(&c) => (c == s[si]).then_some(pi + 1),
            None => None,
        };
        match (step, star) {
            (Some(next), _) => {
                pi = next;
                si += 1;
            }
            (None, Some((sp, ss))) => {
                star = Some((sp, ss + 1));
                pi = sp;
                si = ss + 1;
            }
            (None, None) => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A `[set]` starting after its `[` at `i`: whether `c` is in it and the
/// index after its `]`; `None` when it is never closed.
fn bracket(p: &[char], mut i: usize, c: char) -> Option<(bool, usize)> {
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    loop {
        let lo = match p.get(i)? {
            ']' => return Some((hit != negate, i + 1)),
            '\\' => {
                i += 1;
                *p.get(i)?
            }
            &ch => ch,
        };
        i += 1;
        if p.get(i) == Some(&'-') && p.get(i + 1).is_some_and(|&n| n != ']') {
            let hi = match p[i + 1] {
                '\\' => {
                    i += 1;
                    *p.get(i + 1)?
                }
                ch => ch,
            };
            i += 2;
            hit |= lo <= c && c <= hi;
        } else {
            hit |= lo == c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand_in_order_and_nest() {
        let e = |p: &str| expand_braces(p).expect("few");
        assert_eq!(e("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
        assert_eq!(e("x{,y}"), ["x", "xy"]);
        assert_eq!(e("{a"), ["{a"]);
        assert_eq!(e("\\{a,b}"), ["\\{a,b}"]);
        assert_eq!(
            e(&format!("{}a{}", "{".repeat(100), "}".repeat(100))),
            ["a"]
        );
        let deep = format!("{}a{}", "{".repeat(100_000), "}".repeat(100_000));
        assert!(expand_braces(&deep).is_none());
        assert!(expand_braces(&"{a,b}".repeat(20)).is_none());
    }

    #[test]
    fn fnmatch_wildcards_sets_and_dots() {
        assert!(fnmatch("*.rb", "x.rb"));
        assert!(!fnmatch("*.rb", ".x.rb"));
        assert!(fnmatch(".*", ".hid"));
        assert!(fnmatch("c?", "c1"));
        assert!(!fnmatch("c?", "c"));
        assert!(fnmatch("[ab]*", "b.txt"));
        assert!(!fnmatch("[!c]*", "c1"));
        assert!(fnmatch("[^c]*", "d"));
        assert!(fnmatch("[a-c]x", "bx"));
        assert!(!fnmatch("[]*", "x"));
        assert!(!fnmatch("[ab", "a"));
        assert!(fnmatch("a\\*", "a*"));
        assert!(!fnmatch("a\\*", "ab"));
        assert!(fnmatch("a**b", "axyb"));
    }

    #[test]
    fn walks_a_tree_as_ruby_orders_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_string_lossy().into_owned();
        for d in ["a/b/c", "a/.h", "d"] {
            fs::create_dir_all(dir.path().join(d)).expect("mkdir");
        }
        for f in [
            "a/x.rb",
            "a/.hid",
            "a/b/y.rb",
            "a/b/c/z.rb",
            "a/.h/q.rb",
            "B",
            "d/f",
        ] {
            fs::write(dir.path().join(f), "").expect("write");
        }
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("lnk")).expect("ln");
        let g = |p: &str| -> Vec<String> {
            glob(&format!("{root}/{p}"))
                .expect("few patterns")
                .into_iter()
                .map(|s| s[root.len() + 1..].to_string())
                .collect()
        };
        assert_eq!(g("*"), ["B", "a", "d", "lnk"]);
        assert_eq!(g("**/*.rb"), ["a/b/c/z.rb", "a/b/y.rb", "a/x.rb"]);
        assert_eq!(g("**/"), ["", "a/", "a/b/", "a/b/c/", "d/"]);
        assert_eq!(
            g("a/**/*"),
            ["a/b", "a/b/c", "a/b/c/z.rb", "a/b/y.rb", "a/x.rb"]
        );
        assert_eq!(g("{d,a}"), ["d", "a"]);
        assert_eq!(g("a/.*"), ["a/.", "a/.h", "a/.hid"]);
        assert_eq!(g("*/"), ["a/", "d/", "lnk/"]);
        assert_eq!(g("lnk/**/z.rb"), ["lnk/b/c/z.rb"]);
        assert_eq!(g("a/b/../x.rb"), ["a/b/../x.rb"]);
        assert_eq!(g("nothing"), Vec::<String>::new());
        assert!(glob("").expect("none").is_empty());
    }

    /// The same patterns through Ruby's own `Dir.glob` (the Ruby that
    /// Puppet 7 runs on) over one tree: the same paths in the same order.
    #[test]
    fn agrees_with_ruby_dir_glob() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_string_lossy().into_owned();
        for d in ["a/b/c", "a/.h/i", "d e", "x[y]", "m/n"] {
            fs::create_dir_all(dir.path().join(d)).expect("mkdir");
        }
        let files = [
            "a/x.rb",
            "a/.hid",
            "a/b/y.rb",
            "a/b/c/z.rb",
            "a/.h/q.rb",
            "a/.h/i/r.rb",
            "B.txt",
            "b.txt",
            "c1",
            "c2",
            "ca",
            "c-",
            "d e/f",
            "x[y]/k",
            "m/n/o.rb",
            "_u",
            "~t",
            "a.b.c",
        ];
        for f in files {
            fs::write(dir.path().join(f), "").expect("write");
        }
        std::os::unix::fs::symlink(dir.path().join("m"), dir.path().join("lnk")).expect("ln");
        std::os::unix::fs::symlink("/nonexistent", dir.path().join("dangling")).expect("ln");
        let patterns = [
            "*",
            "**",
            "**/*.rb",
            "**/",
            "*/",
            "*/*/",
            "{d*,c*,a}",
            "{a,{m,d*}}/*",
            "[ab]*",
            "[!c]*",
            "[^a-c]*",
            "[a-c][0-9-]",
            "c?",
            "?",
            ".*",
            "a/.*",
            "a/**/*",
            "a/**/",
            "**/.h",
            "**/.h/**/*.rb",
            "a/*/../x.rb",
            "lnk/**/*.rb",
            "lnk/*",
            "**/o.rb",
            "dangling",
            "dang*",
            "x\\[y]/*",
            "x[[]y]/k",
            "d e/*",
            "*.b.*",
            "a**b",
            "a/{,b/}*.rb",
            "{a",
            "a}",
            "[]*",
            "*[",
            "nothing/*",
            "a//x.rb",
            "**/**/z.rb",
            "a/b/c/z.rb/",
        ];
        for p in patterns {
            let pattern = format!("{root}/{p}");
            let out = std::process::Command::new("ruby")
                .args(["-rjson", "-e", "print Dir.glob(ARGV[0]).to_json", &pattern])
                .output()
                .expect("ruby runs");
            let ruby: Vec<String> = serde_json::from_slice(&out.stdout).expect("ruby's JSON");
            assert_eq!(glob(&pattern).expect("few"), ruby, "pattern {p}");
        }
    }
}
