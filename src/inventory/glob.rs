//! Glob patterns as Bolt matches `--targets` against names: Ruby's
//! `File.fnmatch` with case folded and braces expanded (`FNM_CASEFOLD |
//! FNM_EXTGLOB`). `*` matches any run of characters (`/` included), `?` one
//! character, `[a-z]` / `[!a-z]` / `[^a-z]` one of (or none of) a set,
//! `{web,db}` any one of the alternatives (nested braces too), `\x` the
//! character x. A wildcard does not match a leading `.` of the name.

/// The characters that make a word of `--targets` a pattern (Bolt's
/// `GLOB_MATCH_REGEX`). A word longer than [`MAX_PATTERN`] is a name.
pub fn is_pattern(word: &str) -> bool {
    word.len() <= MAX_PATTERN && word.contains(['*', '?', '[', ']', '{', '}'])
}

/// The longest pattern, in bytes: matching costs its length times the
/// name's, and words can come from API requests.
pub const MAX_PATTERN: usize = 1024;

/// Most alternatives a pattern's braces may expand to.
const MAX_ALTERNATIVES: usize = 4096;

/// Most brace groups expanded; a pattern with more keeps its braces as
/// they are.
const MAX_BRACE_GROUPS: usize = 16;

/// A compiled pattern: its brace alternatives, lowercased.
#[derive(Clone, Debug)]
pub struct Glob {
    alternatives: Vec<Vec<char>>,
}

impl Glob {
    pub fn new(pattern: &str) -> Glob {
        let pattern = pattern.to_lowercase();
        let mut alternatives = Vec::new();
        if pattern.matches('{').count() > MAX_BRACE_GROUPS {
            alternatives.push(pattern);
        } else {
            expand(&pattern, &mut alternatives);
        }
        Glob {
            alternatives: alternatives
                .into_iter()
                .map(|a| a.chars().collect())
                .collect(),
        }
    }

    pub fn matches(&self, name: &str) -> bool {
        let name: Vec<char> = name.to_lowercase().chars().collect();
        self.alternatives.iter().any(|p| fnmatch(p, &name))
    }
}

/// The position of the `}` closing the `{` at `open`, and of the commas
/// at its own level; None when it is not closed.
fn brace_parts(chars: &[char], open: usize) -> Option<(usize, Vec<usize>)> {
    let mut depth = 0usize;
    let mut commas = Vec::new();
    let mut i = open;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((i, commas));
                }
            }
            ',' if depth == 1 => commas.push(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Expands brace groups into alternatives, keeping at most
/// [`MAX_ALTERNATIVES`]. A work list, not recursion: patterns can come
/// from API requests, and a long one must not use up the stack.
fn expand(pattern: &str, out: &mut Vec<String>) {
    let mut pending = vec![pattern.to_string()];
    while let Some(pattern) = pending.pop() {
        if out.len() + pending.len() >= MAX_ALTERNATIVES {
            out.push(pattern);
            if out.len() >= MAX_ALTERNATIVES {
                return;
            }
            continue;
        }
        let chars: Vec<char> = pattern.chars().collect();
        let mut group = None;
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '\\' => i += 2,
                '{' => {
                    if let Some(parts) = brace_parts(&chars, i) {
                        group = Some((i, parts));
                        break;
                    }
                    i += 1;
                }
                _ => i += 1,
            }
        }
        let Some((open, (close, commas))) = group else {
            out.push(pattern);
            continue;
        };
        let head: String = chars[..open].iter().collect();
        let tail: String = chars[close + 1..].iter().collect();
        let mut start = open + 1;
        let mut alternatives = Vec::new();
        for end in commas.into_iter().chain(std::iter::once(close)) {
            let middle: String = chars[start..end].iter().collect();
            alternatives.push(format!("{head}{middle}{tail}"));
            start = end + 1;
        }
        // Popped from the end: push in reverse to keep their order.
        pending.extend(alternatives.into_iter().rev());
    }
}

/// Whether `set` (the text after `[`) matches `c`; returns the match and
/// the length of the set including its `]`, or None when it is not closed.
fn bracket(set: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 0;
    let negate = matches!(set.first(), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < set.len() {
        let mut lo = set[i];
        if lo == ']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if lo == '\\' && i + 1 < set.len() {
            i += 1;
            lo = set[i];
        }
        let mut hi = lo;
        if i + 2 < set.len() && set[i + 1] == '-' && set[i + 2] != ']' {
            hi = set[i + 2];
            if hi == '\\' && i + 3 < set.len() {
                i += 1;
                hi = set[i + 2];
            }
            i += 2;
        }
        if lo <= c && c <= hi {
            matched = true;
        }
        i += 1;
    }
    None
}

/// fnmatch without brace expansion: iterative, backtracking to the last `*`.
fn fnmatch(pattern: &[char], name: &[char]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    let leading_dot = name.first() == Some(&'.');
    while n < name.len() {
        let at_dot = leading_dot && n == 0;
        let step = match pattern.get(p) {
            Some('*') if !at_dot => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some('?') if !at_dot => Some(1),
            Some('[') if !at_dot => match bracket(&pattern[p + 1..], name[n]) {
                Some((true, len)) => Some(len + 1),
                Some((false, _)) => None,
                // An unclosed `[` is itself.
                None => (name[n] == '[').then_some(1),
            },
            Some('\\') if p + 1 < pattern.len() => (pattern[p + 1] == name[n]).then_some(2),
            Some(&c) if !matches!(c, '*' | '?' | '[') || at_dot => {
                (c == name[n] && !(at_dot && c != '.')).then_some(1)
            }
            _ => None,
        };
        match step {
            Some(len) => {
                p += len;
                n += 1;
            }
            None => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_as_ruby_fnmatch_with_casefold_and_extglob() {
        let yes = [
            ("web*", "web1"),
            ("web*", "WEB-x"),
            ("*", "a/b"),
            ("target?", "target1"),
            ("target[0-9]", "target7"),
            ("target[!0-5]", "target7"),
            ("target[^0-5]", "target9"),
            ("{target,node}[0-9]", "node1"),
            ("[m-o,s-u]{arget,ode}[1-2,9]", "target9"),
            ("[m-o,s-u]{arget,ode}[1-2,9]", "node1"),
            ("a{b,{c,d}}e", "ade"),
            ("a\\*", "a*"),
            ("*.example.com", "db.example.com"),
            (".*", ".hidden"),
            ("[]]", "]"),
            ("x[", "x["),
            ("**", ""),
        ];
        for (p, n) in yes {
            assert!(Glob::new(p).matches(n), "{p} should match {n}");
        }
        let no = [
            ("web*", "db1"),
            ("target?", "target10"),
            ("target[0-5]", "target7"),
            ("{target,node}[0-9]", "other1"),
            ("a\\*", "ab"),
            ("*", ".hidden"),
            ("?hidden", ".hidden"),
            ("*target", "target1x"),
        ];
        for (p, n) in no {
            assert!(!Glob::new(p).matches(n), "{p} should not match {n}");
        }
    }

    #[test]
    fn braces_expand_within_a_bound() {
        let g = Glob::new(&"{a,b}".repeat(14));
        assert!(g.alternatives.len() <= MAX_ALTERNATIVES);
        assert!(g.matches(&"a".repeat(14)));
        // Many groups are not expanded.
        let g = Glob::new(&"{a,b}".repeat(17));
        assert_eq!(g.alternatives.len(), 1);
        assert!(!is_pattern(&"*".repeat(MAX_PATTERN + 1)));
    }
}
