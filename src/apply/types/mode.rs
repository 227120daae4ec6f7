//! File modes as Puppet's file type takes them: numeric (`'0644'`, `'755'`)
//! or symbolic (`'u=rw,go=r'`, `'a+X'`, `'o-w'`), turned into shell
//! arithmetic that computes the wanted mode on the target from the current
//! one (`$_fm`, octal as `stat` prints it) into `$_wm`. Numeric modes on
//! directories gain search permission wherever they grant read, as
//! Puppet's do.

use std::fmt::Write as _;

/// A mode parameter, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Octal permission bits (with setuid, setgid and sticky).
    Numeric(u32),
    /// Clauses applied to the current mode.
    Symbolic(String, Vec<Clause>),
}

/// One `who op perms` part of a symbolic mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    /// Bits of u (0o4700), g (0o2070) and o (0o1007) the clause touches.
    pub who: u32,
    pub op: char,
    /// Permission bits granted for every `who`, without X.
    pub bits: u32,
    /// `X`: execute where the file is a directory or already executable.
    pub big_x: bool,
}

/// Why a mode is not one Puppet takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    /// Refused when the catalog is read.
    #[error("The file mode specification is invalid: {0:?}")]
    Invalid(String),
    /// `X` with `-` or `=`: Puppet accepts the catalog and fails the
    /// resource when it applies the mode.
    #[error("X only works with the '+' operator at {clause:?} in symbolic mode {mode:?}")]
    XNotPlus { clause: String, mode: String },
}

impl Mode {
    pub fn parse(text: &str) -> Result<Mode, ModeError> {
        let bad = || ModeError::Invalid(text.to_string());
        if !text.is_empty() && text.len() <= 4 && text.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
            return u32::from_str_radix(text, 8)
                .map(Mode::Numeric)
                .map_err(|_| bad());
        }
        let mut clauses = Vec::new();
        for part in text.split(',') {
            let mut chars = part.chars().peekable();
            let mut who = 0u32;
            while let Some(&c) = chars.peek() {
                let w = match c {
                    'u' => 0o4700,
                    'g' => 0o2070,
                    'o' => 0o1007,
                    'a' => 0o7777,
                    _ => break,
                };
                who |= w;
                chars.next();
            }
            if who == 0 {
                who = 0o7777;
            }
            let mut any_op = false;
            while let Some(op) = chars.next() {
                if !matches!(op, '+' | '-' | '=') {
                    return Err(bad());
                }
                any_op = true;
                let mut bits = 0u32;
                let mut big_x = false;
                while let Some(&c) = chars.peek() {
                    let b = match c {
                        'r' => 0o444,
                        'w' => 0o222,
                        'x' => 0o111,
                        's' => 0o6000,
                        't' => 0o1000,
                        'X' if op != '+' => {
                            return Err(ModeError::XNotPlus {
                                clause: part.to_string(),
                                mode: text.to_string(),
                            });
                        }
                        'X' => {
                            big_x = true;
                            0
                        }
                        '+' | '-' | '=' => break,
                        _ => return Err(bad()),
                    };
                    bits |= b;
                    chars.next();
                }
                clauses.push(Clause {
                    who,
                    op,
                    bits: bits & who,
                    big_x,
                });
            }
            if !any_op {
                return Err(bad());
            }
        }
        Ok(Mode::Symbolic(text.to_string(), clauses))
    }

    /// The mode as Puppet shows the wanted value: four octal digits for a
    /// numeric mode, the text for a symbolic one.
    pub fn display(&self) -> String {
        match self {
            Mode::Numeric(m) => format!("{m:04o}"),
            Mode::Symbolic(text, _) => text.clone(),
        }
    }

    /// Shell lines that set `_wm` (octal digits) from `_fm` and `_ft`;
    /// `base` is the mode assumed when the file does not exist yet.
    pub fn script(&self, base: u32) -> String {
        let mut s = String::new();
        match self {
            Mode::Numeric(m) => {
                let _ = writeln!(s, "_wm={m:o}");
                let _ = writeln!(
                    s,
                    "[ \"$_ft\" = directory ] && _wm=$(printf %o $((0$_wm | ((0$_wm & 0444) >> 2))))"
                );
            }
            Mode::Symbolic(_, clauses) => {
                let _ = writeln!(s, "_m=$((0${{_fm:-{base:o}}}))");
                for c in clauses {
                    // The X part needs a test, so it is computed first.
                    if c.big_x {
                        let _ = writeln!(
                            s,
                            "if [ \"$_ft\" = directory ] || [ $((_m & 0111)) -ne 0 ]; then _x={}; else _x=0; fi",
                            c.who & 0o111
                        );
                    }
                    let mask = if c.big_x {
                        format!("({} | _x)", c.bits)
                    } else {
                        c.bits.to_string()
                    };
                    let line = match c.op {
                        '+' => format!("_m=$((_m | {mask}))"),
                        '-' => format!("_m=$((_m & ~{mask}))"),
                        _ => format!("_m=$(((_m & ~{}) | {mask}))", c.who),
                    };
                    let _ = writeln!(s, "{line}");
                }
                let _ = writeln!(s, "_wm=$(printf %o $_m)");
            }
        }
        s
    }
}

/// A mode as the target reported it (`644`), as Puppet prints it (`0644`).
pub fn display_current(stat: &str) -> String {
    match u32::from_str_radix(stat, 8) {
        Ok(m) => format!("{m:04o}"),
        Err(_) => stat.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mode: &str, current: &str, ft: &str) -> String {
        let m = Mode::parse(mode).expect("valid");
        let script = format!(
            "_fm={current} _ft={ft}\n{}printf %s \"$_wm\"",
            m.script(0o644)
        );
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&script)
            .output()
            .expect("sh");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn numeric_and_symbolic_modes_compute_as_chmod_does() {
        assert_eq!(run("0644", "600", "file"), "644");
        assert_eq!(run("600", "644", "directory"), "700");
        assert_eq!(run("u=rw,go=r", "777", "file"), "644");
        assert_eq!(run("go-w", "666", "file"), "644");
        assert_eq!(run("a+X", "644", "directory"), "755");
        assert_eq!(run("a+X", "644", "file"), "644");
        assert_eq!(run("a+X", "744", "file"), "755");
        assert_eq!(run("u+x,g-r", "640", "file"), "700");
        assert_eq!(run("ug=rwx,o=", "1", "file"), "770");
    }

    #[test]
    fn bad_modes_are_refused() {
        assert!(matches!(
            Mode::parse("ug=rwX,o="),
            Err(ModeError::XNotPlus { .. })
        ));
        for bad in ["", "0999", "u=q", "abc", "u", "12345"] {
            assert!(Mode::parse(bad).is_err(), "{bad}");
        }
    }
}
