//! Semantic versions (SemVer 2.0.0) and version ranges for the `SemVer`
//! and `SemVerRange` data types: parsing, precedence (pre-releases sort
//! before their release, build metadata is ignored) and range matching
//! with the usual range syntax: comparators (`>=1.2`, `<2.0.0`, `=1.2.3`),
//! x-ranges (`1.x`, `1.2.*`), tilde (`~1.2`), caret (`^0.2.3`), hyphen
//! ranges (`1.2 - 2.3.4`), intersection by spaces and union by `||`.

use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ident {
    Num(u64),
    Alpha(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: Vec<Ident>,
    pub build: Option<String>,
}

fn numeric(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

fn ident_ok(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Parse dot-separated pre-release identifiers.
pub fn parse_pre(s: &str) -> Option<Vec<Ident>> {
    s.split('.')
        .map(|p| {
            if !ident_ok(p) {
                None
            } else if p.bytes().all(|b| b.is_ascii_digit()) {
                numeric(p).map(Ident::Num)
            } else {
                Some(Ident::Alpha(p.to_string()))
            }
        })
        .collect()
}

impl Version {
    pub fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version {
            major,
            minor,
            patch,
            pre: Vec::new(),
            build: None,
        }
    }

    /// Parse `1.2.3`, `1.2.3-rc.1`, `1.2.3+build.5`.
    pub fn parse(s: &str) -> Option<Version> {
        let (rest, build) = match s.split_once('+') {
            Some((r, b)) if b.split('.').all(ident_ok) => (r, Some(b.to_string())),
            Some(_) => return None,
            None => (s, None),
        };
        let (core, pre) = match rest.split_once('-') {
            Some((c, p)) => (c, parse_pre(p)?),
            None => (rest, Vec::new()),
        };
        let mut nums = core.split('.');
        let major = numeric(nums.next()?)?;
        let minor = numeric(nums.next()?)?;
        let patch = numeric(nums.next()?)?;
        if nums.next().is_some() {
            return None;
        }
        Some(Version {
            major,
            minor,
            patch,
            pre,
            build,
        })
    }

    fn triple(&self) -> (u64, u64, u64) {
        (self.major, self.minor, self.patch)
    }

    /// SemVer precedence (build metadata ignored).
    pub fn precedence(&self, other: &Version) -> Ordering {
        self.triple().cmp(&other.triple()).then_with(|| {
            match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (a, b) in self.pre.iter().zip(&other.pre) {
                        let o = match (a, b) {
                            (Ident::Num(x), Ident::Num(y)) => x.cmp(y),
                            (Ident::Num(_), Ident::Alpha(_)) => Ordering::Less,
                            (Ident::Alpha(_), Ident::Num(_)) => Ordering::Greater,
                            (Ident::Alpha(x), Ident::Alpha(y)) => x.cmp(y),
                        };
                        if o != Ordering::Equal {
                            return o;
                        }
                    }
                    self.pre.len().cmp(&other.pre.len())
                }
            }
        })
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            let parts: Vec<String> = self
                .pre
                .iter()
                .map(|i| match i {
                    Ident::Num(n) => n.to_string(),
                    Ident::Alpha(s) => s.clone(),
                })
                .collect();
            write!(f, "-{}", parts.join("."))?;
        }
        if let Some(b) = &self.build {
            write!(f, "+{b}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

/// A range: alternatives (`||`), each an intersection of comparators.
#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    pub text: String,
    sets: Vec<Vec<(Op, Version)>>,
}

/// A possibly partial version: `1`, `1.2`, `1.x`, `1.2.3-rc`.
struct Partial {
    nums: Vec<u64>,
    pre: Vec<Ident>,
}

fn partial(s: &str) -> Option<Partial> {
    let s = s.trim_start_matches(['v', '=']);
    let (core, pre) = match s.split_once('-') {
        Some((c, p)) => (c, parse_pre(p.split('+').next().unwrap_or(""))?),
        None => (s.split('+').next().unwrap_or(""), Vec::new()),
    };
    let mut nums = Vec::new();
    for (i, p) in core.split('.').enumerate() {
        if i > 2 {
            return None;
        }
        if matches!(p, "x" | "X" | "*") {
            break;
        }
        nums.push(numeric(p)?);
    }
    if core.is_empty() {
        nums.clear();
    }
    Some(Partial { nums, pre })
}

impl Partial {
    fn floor(&self) -> Version {
        let g = |i: usize| self.nums.get(i).copied().unwrap_or(0);
        let mut v = Version::new(g(0), g(1), g(2));
        if self.nums.len() == 3 {
            v.pre = self.pre.clone();
        }
        v
    }
    /// The first version above everything this partial version covers.
    fn ceiling(&self) -> Option<Version> {
        let g = |i: usize| self.nums.get(i).copied().unwrap_or(0);
        match self.nums.len() {
            0 => None,
            1 => Some(Version::new(g(0).saturating_add(1), 0, 0)),
            2 => Some(Version::new(g(0), g(1).saturating_add(1), 0)),
            _ => None,
        }
    }
}

fn with_pre0(mut v: Version) -> Version {
    // `<2.0.0` from a partial upper bound excludes 2.0.0's pre-releases.
    v.pre = vec![Ident::Num(0)];
    v
}

fn comparators(tok: &str, out: &mut Vec<(Op, Version)>) -> Option<()> {
    let (op, rest) = [">=", "<=", ">", "<", "=", "~>", "~", "^"]
        .iter()
        .find_map(|o| tok.strip_prefix(o).map(|r| (*o, r)))
        .unwrap_or(("", tok));
    let p = partial(rest.trim())?;
    let g = |i: usize| p.nums.get(i).copied().unwrap_or(0);
    match op {
        "" | "=" => {
            out.push((Op::Ge, p.floor()));
            match p.ceiling() {
                Some(c) => out.push((Op::Lt, with_pre0(c))),
                None if p.nums.len() == 3 => out.push((Op::Le, p.floor())),
                None => {}
            }
        }
        ">=" => out.push((Op::Ge, p.floor())),
        "<" => out.push((Op::Lt, with_pre0(p.floor()))),
        ">" => match p.ceiling() {
            Some(c) => out.push((Op::Ge, c)),
            None if p.nums.is_empty() => out.push((Op::Lt, Version::new(0, 0, 0))),
            None => out.push((Op::Gt, p.floor())),
        },
        "<=" => match p.ceiling() {
            Some(c) => out.push((Op::Lt, with_pre0(c))),
            None => {
                if !p.nums.is_empty() {
                    out.push((Op::Le, p.floor()));
                }
            }
        },
        "~" | "~>" => {
            out.push((Op::Ge, p.floor()));
            let upper = if p.nums.len() >= 2 {
                Version::new(g(0), g(1).saturating_add(1), 0)
            } else {
                Version::new(g(0).saturating_add(1), 0, 0)
            };
            if !p.nums.is_empty() {
                out.push((Op::Lt, with_pre0(upper)));
            }
        }
        _ => {
            out.push((Op::Ge, p.floor()));
            let upper = if g(0) > 0 || p.nums.len() == 1 {
                Version::new(g(0).saturating_add(1), 0, 0)
            } else if g(1) > 0 || p.nums.len() == 2 {
                Version::new(0, g(1).saturating_add(1), 0)
            } else {
                Version::new(0, 0, g(2).saturating_add(1))
            };
            if !p.nums.is_empty() {
                out.push((Op::Lt, with_pre0(upper)));
            }
        }
    }
    Some(())
}

impl Range {
    pub fn parse(text: &str) -> Option<Range> {
        let mut sets = Vec::new();
        for alt in text.split("||") {
            let alt = alt.trim();
            let mut set = Vec::new();
            if let Some((lo, hi)) = alt.split_once(" - ") {
                let lo = partial(lo.trim())?;
                let hi = partial(hi.trim())?;
                set.push((Op::Ge, lo.floor()));
                match hi.ceiling() {
                    Some(c) => set.push((Op::Lt, with_pre0(c))),
                    None if !hi.nums.is_empty() => set.push((Op::Le, hi.floor())),
                    None => {}
                }
            } else {
                // Operators may be separated from their version by spaces.
                let mut toks: Vec<String> = Vec::new();
                for t in alt.split_whitespace() {
                    match toks.last_mut() {
                        Some(prev) if prev.chars().all(|c| "<>=~^".contains(c)) => prev.push_str(t),
                        _ => toks.push(t.to_string()),
                    }
                }
                for t in &toks {
                    comparators(t, &mut set)?;
                }
            }
            sets.push(set);
        }
        Some(Range {
            text: text.to_string(),
            sets,
        })
    }

    /// Does the range include `v`? A pre-release matches only when some
    /// comparator of the same alternative names that major.minor.patch
    /// with a pre-release.
    pub fn includes(&self, v: &Version) -> bool {
        self.sets.iter().any(|set| {
            let all = set.iter().all(|(op, b)| {
                let o = v.precedence(b);
                match op {
                    Op::Lt => o == Ordering::Less,
                    Op::Le => o != Ordering::Greater,
                    Op::Gt => o == Ordering::Greater,
                    Op::Ge => o != Ordering::Less,
                }
            });
            all && (v.pre.is_empty()
                || set.iter().any(|(op, b)| {
                    !b.pre.is_empty()
                        && b.triple() == v.triple()
                        && !(matches!(op, Op::Lt) && b.pre == [Ident::Num(0)])
                }))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inc(r: &str, v: &str) -> bool {
        let r = Range::parse(r).expect("range parses");
        r.includes(&Version::parse(v).expect("version parses"))
    }

    #[test]
    fn versions() {
        assert!(Version::parse("01.2.3").is_none());
        let a = Version::parse("1.2.3-rc.1").expect("parses");
        let b = Version::parse("1.2.3").expect("parses");
        assert_eq!(a.precedence(&b), Ordering::Less);
        let c = Version::parse("1.10.0-a.1+build.5").expect("parses");
        assert_eq!(c.to_string(), "1.10.0-a.1+build.5");
        let d = Version::parse("1.2.3-alpha.10").expect("parses");
        let e = Version::parse("1.2.3-alpha.9").expect("parses");
        assert_eq!(d.precedence(&e), Ordering::Greater);
    }

    #[test]
    fn ranges() {
        assert!(inc(">=1.0.0 <2.0.0", "1.2.3"));
        assert!(!inc("1.x", "2.0.0"));
        assert!(inc("~1.2", "1.2.9"));
        assert!(!inc("~1.2", "1.3.0"));
        assert!(inc("^1.2", "1.3.0"));
        assert!(!inc("^0.2.3", "0.3.0"));
        assert!(inc("1.2.0 - 1.3.0", "1.2.3"));
        assert!(inc(">=1.3.0 || 1.2.3", "1.2.3"));
        assert!(!inc(">=1.0.0", "1.2.3-rc.1"));
        assert!(inc(">=1.2.3-rc.0", "1.2.3-rc.1"));
        assert!(inc("1.2.3 - 1.2.3", "1.2.3"));
        assert!(inc("*", "5.0.0"));
        assert!(inc(">= 1.0.0", "1.0.0"));
    }
}
