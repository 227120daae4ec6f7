//! The `augeas` type (augeas_core), applied with `augtool` on the target
//! (the augeas-tools package; ruby-augeas is not needed there). The
//! controller parses `changes` and `onlyif` as the module's provider does
//! (context prefixed to relative paths, quoted paths and strings) and
//! writes each command again in augtool's own quoting. On the target the
//! resource is in sync, as Puppet decides it, when `onlyif` fails or when
//! running the changes with `/augeas/save` set to `newfile` saves no file
//! (the `.augnew` files that dry run writes are removed); otherwise the
//! changes run again and are saved (`returns` changes from `need_to_run`
//! to 0: "executed successfully"). With `force` the dry run only checks
//! that the changes work. `incl` with `lens` loads just that file;
//! `root`, `load_path` and `type_check` become augtool's `-r`, `-I` and
//! `-c`. Lenses from modules' `lib/augeas/lenses` are not sent.

use std::fmt::Write as _;

use serde_json::Value;

use super::{
    EventStatus, EventText, ParamError, bool_param, display, list_param, param_error, text_param,
};
use crate::apply::catalog::Resource;
use crate::apply::program::q;

/// A comparison of `onlyif`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Match,
    Lt,
    Le,
    Ge,
    Gt,
}

impl Cmp {
    fn parse(s: &str) -> Option<Cmp> {
        Some(match s {
            "==" => Cmp::Eq,
            "!=" => Cmp::Ne,
            "=~" => Cmp::Match,
            "<" => Cmp::Lt,
            "<=" => Cmp::Le,
            ">=" => Cmp::Ge,
            ">" => Cmp::Gt,
            _ => return None,
        })
    }

    /// The awk expression comparing `a` with `b` as strings, as Ruby's
    /// String methods do (bytewise; `=~` as an extended regex).
    fn awk_strings(self) -> &'static str {
        match self {
            Cmp::Eq => "a \"\" == b \"\"",
            Cmp::Ne => "a \"\" != b \"\"",
            Cmp::Match => "a ~ b",
            Cmp::Lt => "a \"\" < b \"\"",
            Cmp::Le => "a \"\" <= b \"\"",
            Cmp::Ge => "a \"\" >= b \"\"",
            Cmp::Gt => "a \"\" > b \"\"",
        }
    }

    fn awk_numbers(self) -> &'static str {
        match self {
            Cmp::Eq | Cmp::Match => "a + 0 == b + 0",
            Cmp::Ne => "a + 0 != b + 0",
            Cmp::Lt => "a + 0 < b + 0",
            Cmp::Le => "a + 0 <= b + 0",
            Cmp::Ge => "a + 0 >= b + 0",
            Cmp::Gt => "a + 0 > b + 0",
        }
    }

    fn sh_test(self) -> &'static str {
        match self {
            Cmp::Eq => "-eq",
            Cmp::Ne => "-ne",
            Cmp::Lt => "-lt",
            Cmp::Le => "-le",
            Cmp::Ge => "-ge",
            Cmp::Gt => "-gt",
            // Integer#=~ is nil: never true.
            Cmp::Match => "",
        }
    }
}

/// What `onlyif` asks.
#[derive(Debug, Clone, PartialEq)]
enum Onlyif {
    /// No condition, or a command onlyif does not test (it holds).
    Always,
    /// A `match`/`values` clause the provider does not know: false.
    Never,
    Get {
        path: String,
        cmp: Cmp,
        arg: String,
    },
    MatchSize {
        path: String,
        cmp: Cmp,
        n: u64,
    },
    /// `match PATH include|not_include S`: among the matched paths.
    MatchIncludes {
        path: String,
        arg: String,
        negate: bool,
    },
    /// `values PATH include|not_include S`: among the matched values.
    ValuesInclude {
        path: String,
        arg: String,
        negate: bool,
    },
}

#[derive(Debug, Clone)]
pub struct Augeas {
    /// augtool's options (already quoted).
    options: String,
    /// Commands that load the tree.
    load: Vec<String>,
    /// The changes in augtool's syntax.
    changes: Vec<String>,
    onlyif: Onlyif,
    force: bool,
    /// The root the saved files' paths are under ('' for `/`).
    root: String,
    /// `returns` as the event shows it.
    returns: Value,
    /// `changes` or `onlyif` Puppet's parser refuses: the resource fails
    /// with this when it is evaluated.
    parse_error: Option<String>,
}

/// The argument kinds of a command, as the provider's parser knows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Formal {
    Path,
    Str,
    Comparator,
    Int,
    Glob,
}

fn formals(cmd: &str) -> Option<&'static [Formal]> {
    use Formal::*;
    Some(match cmd {
        "set" => &[Path, Str],
        "setm" => &[Path, Str, Str],
        "rm" | "remove" | "clear" | "touch" => &[Path],
        "clearm" => &[Path, Str],
        "mv" | "move" => &[Path, Path],
        "rename" => &[Path, Str],
        "insert" | "ins" => &[Str, Str, Path],
        "get" => &[Path, Comparator, Str],
        "values" | "match" => &[Path, Glob],
        "defvar" => &[Str, Path],
        "defnode" => &[Str, Path, Str],
        "size" => &[Comparator, Int],
        "include" | "not_include" => &[Str],
        "==" | "!=" => &[Glob],
        _ => return None,
    })
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// The provider's `parse_commands`: each non-empty line of `lines`
/// becomes the command and its arguments, relative paths prefixed with
/// `context` (which ends with `/` unless empty). Errors are Puppet's.
fn parse_commands(lines: &[String], context: &str) -> Result<Vec<Vec<String>>, String> {
    let mut out = Vec::new();
    for line in lines.iter().flat_map(|l| l.split('\n')) {
        let line = line.trim_matches(|c: char| is_space(c) || c == '\0');
        if line.is_empty() {
            continue;
        }
        let s: Vec<char> = line.chars().collect();
        let mut pos = 0;
        let cmd: String = if s.starts_with(&['=', '=']) || s.starts_with(&['!', '=']) {
            pos = 2;
            s[..2].iter().collect()
        } else {
            while pos < s.len() && (s[pos].is_alphanumeric() || s[pos] == '_') {
                pos += 1;
            }
            s[..pos].iter().collect()
        };
        let Some(forms) = formals(&cmd) else {
            return Err(format!("Unknown command {cmd}"));
        };
        let mut args = vec![cmd.clone()];
        for (i, f) in forms.iter().enumerate() {
            let narg = i + 1;
            while pos < s.len() && is_space(s[pos]) {
                pos += 1;
            }
            match f {
                Formal::Path => {
                    let start = pos;
                    let (mut nbracket, mut single, mut double) = (0i32, false, false);
                    loop {
                        while pos < s.len() {
                            let c = s[pos];
                            if c == '\\' && pos + 1 < s.len() {
                                pos += 2;
                            } else if !matches!(c, '[' | ']' | '\\' | '\'' | '"') && !is_space(c) {
                                pos += 1;
                            } else {
                                break;
                            }
                        }
                        let ch = s.get(pos).copied();
                        if ch.is_some() {
                            pos += 1;
                        }
                        match ch {
                            Some('[') => nbracket += 1,
                            Some(']') => nbracket -= 1,
                            Some('\'') => single = !single,
                            Some('"') => double = !double,
                            _ => {}
                        }
                        if nbracket < 0 {
                            return Err("unmatched [".into());
                        }
                        let eos = pos >= s.len();
                        if (nbracket == 0 && !single && !double && ch.is_some_and(is_space)) || eos
                        {
                            break;
                        }
                    }
                    let mut len = pos - start;
                    if pos < s.len() {
                        len -= 1;
                    }
                    let mut p: String = s[start..start + len].iter().collect();
                    if p.starts_with(['\'', '"']) {
                        let n = p.chars().count();
                        p = p.chars().skip(1).take(n.saturating_sub(2)).collect();
                    }
                    if p.ends_with('/') {
                        p.pop();
                    }
                    if !p.starts_with('$') && !p.starts_with('/') {
                        p = format!("{context}{p}");
                    }
                    args.push(p);
                }
                Formal::Str => match s.get(pos).copied() {
                    Some(d @ ('\'' | '"')) => {
                        pos += 1;
                        let mut v = String::new();
                        while pos < s.len() && s[pos] != d {
                            if s[pos] == '\\' && pos + 1 < s.len() {
                                if s[pos + 1] != d {
                                    v.push('\\');
                                }
                                v.push(s[pos + 1]);
                                pos += 2;
                            } else if s[pos] == '\\' {
                                break;
                            } else {
                                v.push(s[pos]);
                                pos += 1;
                            }
                        }
                        if pos < s.len() {
                            pos += 1;
                        }
                        args.push(v);
                    }
                    _ => {
                        let start = pos;
                        while pos < s.len() && !is_space(s[pos]) {
                            pos += 1;
                        }
                        if start == pos {
                            return Err(format!("missing string argument {narg} for {cmd}"));
                        }
                        args.push(s[start..pos].iter().collect());
                    }
                },
                Formal::Comparator => {
                    let two: String = s[pos..].iter().take(2).collect();
                    let one: String = s[pos..].iter().take(1).collect();
                    let c = if ["==", "!=", "=~", "<=", ">="].contains(&two.as_str()) {
                        two
                    } else if one == "<" || one == ">" {
                        one
                    } else {
                        return Err(format!("invalid comparator for command {cmd}"));
                    };
                    pos += c.len();
                    args.push(c);
                }
                Formal::Int => {
                    let start = pos;
                    while pos < s.len() && s[pos].is_ascii_digit() {
                        pos += 1;
                    }
                    let digits: String = s[start..pos].iter().collect();
                    let digits = digits.trim_start_matches('0');
                    args.push(if digits.is_empty() { "0" } else { digits }.to_string());
                }
                Formal::Glob => {
                    args.push(s[pos..].iter().collect());
                    pos = s.len();
                }
            }
        }
        out.push(args);
    }
    Ok(out)
}

/// One argument in augtool's quoting: double quotes, `\` and `"`
/// escaped (`\[` and `\]`, which augtool passes on as they are, kept).
fn aug_quote(s: &str) -> String {
    let mut out = String::from("\"");
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some('[' | ']')) => out.push('\\'),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A parsed change as an augtool command line.
fn aug_command(args: &[String]) -> Result<String, String> {
    let (cmd, rest) = args.split_first().ok_or("invalid command")?;
    if rest.iter().any(|a| a.contains('\n')) {
        return Err(format!(
            "Error sending command '{cmd}': augtool cannot take an argument holding a newline"
        ));
    }
    let name = match cmd.as_str() {
        "set" | "setm" | "clear" | "clearm" | "touch" | "defvar" | "defnode" | "rename" => {
            cmd.as_str()
        }
        "rm" | "remove" => "rm",
        "mv" | "move" => "mv",
        "ins" | "insert" => {
            let where_ = rest.get(1).map(String::as_str).unwrap_or_default();
            if where_ != "before" && where_ != "after" {
                return Err(format!("Invalid value '{where_}' for where param"));
            }
            "ins"
        }
        other => return Err(format!("Command '{other}' is not supported")),
    };
    let quoted: Vec<String> = rest.iter().map(|a| aug_quote(a)).collect();
    Ok(format!("{name} {}", quoted.join(" ")))
}

fn parse_onlyif(text: &str, context: &str) -> Result<Onlyif, String> {
    let Some(first) = parse_commands(&[text.to_string()], context)?
        .into_iter()
        .next()
    else {
        return Ok(Onlyif::Always);
    };
    let arg = |i: usize| first.get(i).cloned().unwrap_or_default();
    match first[0].as_str() {
        "get" => {
            if first.len() < 4 {
                return Err(format!("Invalid command: {}", first.join(" ")));
            }
            Ok(Onlyif::Get {
                path: arg(1),
                cmp: Cmp::parse(&arg(2)).ok_or("invalid comparator for command get")?,
                arg: first[3..].join(" "),
            })
        }
        verb @ ("match" | "values") => {
            if first.len() < 3 {
                return Err(format!("Invalid command: {}", first.join(" ")));
            }
            let clause = parse_commands(&[arg(2)], context)?
                .into_iter()
                .next()
                .unwrap_or_default();
            let path = arg(1);
            let c = |i: usize| clause.get(i).cloned().unwrap_or_default();
            match (verb, c(0).as_str()) {
                ("match", "size") => {
                    if clause.len() != 3 {
                        return Err(format!("Invalid command: {}", arg(2)));
                    }
                    Ok(Onlyif::MatchSize {
                        path,
                        cmp: Cmp::parse(&c(1)).ok_or("invalid comparator for command size")?,
                        n: c(2).parse().unwrap_or(u64::MAX),
                    })
                }
                ("match", v @ ("include" | "not_include")) => Ok(Onlyif::MatchIncludes {
                    path,
                    arg: c(1),
                    negate: v == "not_include",
                }),
                ("values", v @ ("include" | "not_include")) => Ok(Onlyif::ValuesInclude {
                    path,
                    arg: c(1),
                    negate: v == "not_include",
                }),
                (_, v @ ("==" | "!=")) => Err(format!(
                    "ferry does not evaluate onlyif '{verb} PATH {v} [...]' yet"
                )),
                // Any other clause leaves the condition false.
                _ => Ok(Onlyif::Never),
            }
        }
        _ => Ok(Onlyif::Always),
    }
}

impl Augeas {
    pub fn parse(r: &Resource) -> Result<Augeas, ParamError> {
        let lens = text_param(r, "lens")?;
        let incl = text_param(r, "incl")?;
        if lens.is_some() != incl.is_some() {
            return Err(param_error(
                r,
                "lens",
                "You must specify both the lens and incl parameters, or neither.",
            ));
        }
        let mut context = text_param(r, "context")?.unwrap_or_default();
        if context.is_empty()
            && let Some(i) = &incl
        {
            context = format!("/files{i}");
        }
        if !context.is_empty() && !context.ends_with('/') {
            context.push('/');
        }
        let root = text_param(r, "root")?.unwrap_or_else(|| "/".into());
        let load_path: Vec<String> = list_param(r, "load_path")?
            .iter()
            .flat_map(|p| p.split(':').map(String::from).collect::<Vec<_>>())
            .filter(|p| !p.is_empty())
            .collect();
        let type_check = match text_param(r, "type_check")?.as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                return Err(param_error(
                    r,
                    "type_check",
                    &format!("Invalid value \"{other}\". Valid values are true, false."),
                ));
            }
        };
        let mut options = vec!["-r".to_string(), q(&root)];
        for dir in &load_path {
            options.push("-I".into());
            options.push(q(dir));
        }
        if type_check {
            options.push("-c".into());
        }
        let load = match (&lens, &incl) {
            (Some(l), Some(i)) => {
                options.push("-A".into());
                vec![
                    format!("set /augeas/load/Xfm/lens {}", aug_quote(l)),
                    format!("set /augeas/load/Xfm/incl {}", aug_quote(i)),
                    "load".to_string(),
                ]
            }
            _ => {
                options.push("-L".into());
                vec!["load".to_string()]
            }
        };
        if load.iter().any(|l| l.contains('\n')) {
            return Err(param_error(r, "incl", "the value holds a newline"));
        }
        let mut parse_error = None;
        let changes = list_param(r, "changes")?;
        let changes = match parse_commands(&changes, &context)
            .and_then(|cmds| cmds.iter().map(|c| aug_command(c)).collect())
        {
            Ok(c) => c,
            Err(e) => {
                parse_error = Some(e);
                Vec::new()
            }
        };
        let onlyif = match text_param(r, "onlyif")? {
            None => Onlyif::Always,
            Some(t) => match parse_onlyif(&t, &context) {
                Ok(o) => o,
                Err(e) => {
                    parse_error.get_or_insert(e);
                    Onlyif::Always
                }
            },
        };
        let returns = match r.param("returns") {
            None | Some(Value::Null) => Value::from(0),
            Some(v) => v.clone(),
        };
        Ok(Augeas {
            options: options.join(" "),
            load,
            changes,
            onlyif,
            force: bool_param(r, "force", false)?,
            root: if root == "/" { String::new() } else { root },
            returns,
            parse_error,
        })
    }

    /// Shell text that pipes `commands` (after loading) into augtool,
    /// leaving its output in `_q` and its status in `_rc`.
    fn run(&self, commands: &[String]) -> String {
        let lines: Vec<String> = self.load.iter().chain(commands).map(|c| q(c)).collect();
        format!(
            "_q=$(printf '%s\\n' {} | augtool {} 2>&1); _rc=$?",
            lines.join(" "),
            self.options
        )
    }

    /// Shell text setting `_ok` to 1 when onlyif holds, 0 when it does
    /// not; a query augtool fails fails the resource.
    fn script_onlyif(&self, out: &mut String, n: usize) {
        let fail = format!(
            "if [ $_rc != 0 ]; then _ok=2; _fail {n} \"$(printf '%s' \"$_q\" | tr '\\t\\n' '  ')\"; fi"
        );
        match &self.onlyif {
            Onlyif::Always => out.push_str("_ok=1\n"),
            Onlyif::Never => out.push_str("_ok=0\n"),
            Onlyif::Get { path, cmp, arg } => {
                let _ = writeln!(
                    out,
                    "{}\n_ok=0 _pre={}\ncase $_q in \"$_pre\"*) _v=${{_q#\"$_pre\"}} ;; *) _v= ;; esac",
                    self.run(&[format!("get {}", aug_quote(path))]),
                    q(&format!("{path} = "))
                );
                // Numbers compare as numbers for the ordering comparisons.
                let numeric = "function num(s) { return s ~ /^[+-]?[0-9]+(\\.[0-9]+)?\\n?$/ }";
                let test = match cmp {
                    Cmp::Lt | Cmp::Le | Cmp::Ge | Cmp::Gt => format!(
                        "{numeric} BEGIN {{ a = ENVIRON[\"_v\"]; b = ENVIRON[\"_b\"]; if (num(a) && num(b)) r = ({}); else r = ({}); exit !r }}",
                        cmp.awk_numbers(),
                        cmp.awk_strings()
                    ),
                    _ => format!(
                        "BEGIN {{ a = ENVIRON[\"_v\"]; b = ENVIRON[\"_b\"]; exit !({}) }}",
                        cmp.awk_strings()
                    ),
                };
                let _ = writeln!(
                    out,
                    "if _v=$_v _b={} LC_ALL=C awk {} </dev/null; then _ok=1; fi",
                    q(arg),
                    q(&test)
                );
                out.push_str(&fail);
                out.push('\n');
            }
            Onlyif::MatchSize { path, cmp, n: want } => {
                let _ = writeln!(
                    out,
                    "{}\n_ok=0\n_m=$(printf '%s\\n' \"$_q\" | grep -c '^/')",
                    self.run(&[format!("match {}", aug_quote(path))])
                );
                let t = cmp.sh_test();
                if !t.is_empty() {
                    let _ = writeln!(out, "if [ \"$_m\" {t} {want} ]; then _ok=1; fi");
                }
                out.push_str(&fail);
                out.push('\n');
            }
            Onlyif::MatchIncludes { path, arg, negate }
            | Onlyif::ValuesInclude { path, arg, negate } => {
                let values = matches!(self.onlyif, Onlyif::ValuesInclude { .. });
                let field = if values {
                    "i = index($0, \" = \"); if (i && substr($0, i + 3) == b) f = 1"
                } else {
                    "i = index($0, \" = \"); p = i ? substr($0, 1, i - 1) : $0; if (p == b) f = 1"
                };
                let prog = format!(
                    "BEGIN {{ b = ENVIRON[\"_b\"] }} /^\\// {{ {field} }} END {{ exit !f }}"
                );
                let (yes, no) = if *negate { (0, 1) } else { (1, 0) };
                let _ = writeln!(
                    out,
                    "{}\nif printf '%s\\n' \"$_q\" | _b={} LC_ALL=C awk {}; then _ok={yes}; else _ok={no}; fi",
                    self.run(&[format!("match {}", aug_quote(path))]),
                    q(arg),
                    q(&prog)
                );
                out.push_str(&fail);
                out.push('\n');
            }
        }
    }

    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        if self.parse_error.is_some() {
            let _ = writeln!(out, "_fail {n} parse");
            return;
        }
        let _ = writeln!(
            out,
            "if ! command -v augtool >/dev/null 2>&1; then _fail {n} noaugtool\nelse"
        );
        self.script_onlyif(out, n);
        out.push_str("if [ $_ok = 1 ]; then\n");
        // The dry run: the changes saved as .augnew files, which are
        // listed, then removed.
        let mut dry = vec!["set /augeas/save newfile".to_string()];
        dry.extend(self.changes.iter().cloned());
        dry.push("save".into());
        dry.push("match /augeas/events/saved".into());
        let _ = writeln!(
            out,
            "{}\n_saved=0\nif [ $_rc = 0 ]; then\n\
             for _f in $(printf '%s\\n' \"$_q\" | sed -n 's|^/augeas/events/saved[^ ]* = /files||p'); do _saved=1; rm -f -- {}\"$_f.augnew\"; done\n\
             else _fail {n} \"$(printf '%s' \"$_q\" | grep -v '^Saved ' | tr '\\t\\n' '  ')\"; _saved=x; fi",
            self.run(&dry),
            q(&self.root)
        );
        let go = if self.force {
            "[ $_saved != x ]"
        } else {
            "[ $_saved = 1 ]"
        };
        let _ = writeln!(out, "if {go}; then");
        if noop {
            let _ = writeln!(out, "_ev {n} returns noop need_to_run");
        } else {
            let mut real = self.changes.clone();
            real.push("save".into());
            let _ = writeln!(
                out,
                "{}\nif [ $_rc = 0 ]; then _ev {n} returns success need_to_run\n\
                 else _ev {n} returns failure need_to_run \"$(printf '%s' \"$_q\" | grep -v '^Saved ' | tr '\\t\\n' '  ')\"; fi",
                self.run(&real)
            );
        }
        out.push_str("fi\nfi\nfi\n");
    }

    pub fn describe(&self, status: EventStatus, previous: &str, detail: &str) -> EventText {
        let should = super::show(&self.returns);
        let message = match status {
            EventStatus::Success => "executed successfully".to_string(),
            EventStatus::Noop => format!(
                "current_value {}, should be {should} (noop)",
                display(previous)
            ),
            EventStatus::Failure => format!(
                "change from {} to {should} failed: {}",
                display(previous),
                augtool_error(detail)
            ),
        };
        EventText {
            previous: Value::String(previous.into()),
            desired: self.returns.clone(),
            message,
            redacted: false,
        }
    }

    pub fn failure(&self, code: &str) -> String {
        match code {
            "parse" => self.parse_error.clone().unwrap_or_default(),
            "noaugtool" => {
                "augtool was not found on the target: the augeas type needs the augeas-tools package"
                    .into()
            }
            other => augtool_error(other),
        }
    }
}

/// What augtool said, as Puppet words the failures it can tell apart.
fn augtool_error(text: &str) -> String {
    let text = text.trim();
    if text.contains("saving failed") {
        "Save failed, see debug output for details".into()
    } else {
        format!("augtool: {text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmds(text: &str, ctx: &str) -> Result<Vec<Vec<String>>, String> {
        parse_commands(&[text.to_string()], ctx)
    }

    #[test]
    fn parses_paths_and_strings_as_the_provider_does() {
        assert_eq!(
            cmds("set A 10", "/files/etc/x/").unwrap(),
            vec![vec!["set", "/files/etc/x/A", "10"]]
        );
        assert_eq!(
            cmds("set D '\"four words\"'\nrm /abs/path/", "/c/").unwrap(),
            vec![
                vec!["set", "/c/D", "\"four words\""],
                vec!["rm", "/abs/path"]
            ]
        );
        assert_eq!(
            cmds("set *[canonical = 'a b']/x \"it\\\"s\"", "/h/").unwrap(),
            vec![vec!["set", "/h/*[canonical = 'a b']/x", "it\"s"]]
        );
        assert_eq!(
            cmds("ins alias after 01/canonical", "/h/").unwrap(),
            vec![vec!["ins", "alias", "after", "/h/01/canonical"]]
        );
        assert_eq!(
            cmds("set $var/x 1", "/h/").unwrap(),
            vec![vec!["set", "$var/x", "1"]]
        );
        assert_eq!(cmds("frob x", "").unwrap_err(), "Unknown command frob");
        assert_eq!(cmds("set a]b c", "").unwrap_err(), "unmatched [");
        assert_eq!(
            cmds("set x", "").unwrap_err(),
            "missing string argument 2 for set"
        );
    }

    #[test]
    fn augtool_quoting() {
        assert_eq!(aug_quote("a b"), "\"a b\"");
        assert_eq!(aug_quote("say \"hi\""), "\"say \\\"hi\\\"\"");
        assert_eq!(aug_quote("a\\b"), "\"a\\\\b\"");
        assert_eq!(aug_quote("a\\[1\\]"), "\"a\\[1\\]\"");
        assert_eq!(
            aug_command(&["ins".into(), "x".into(), "over".into(), "/p".into()]).unwrap_err(),
            "Invalid value 'over' for where param"
        );
        assert_eq!(
            aug_command(&["get".into(), "/p".into(), "==".into(), "x".into()]).unwrap_err(),
            "Command 'get' is not supported"
        );
        assert_eq!(
            aug_command(&["remove".into(), "/p".into()]).unwrap(),
            "rm \"/p\""
        );
    }

    #[test]
    fn onlyif_forms() {
        assert_eq!(
            parse_onlyif("match B size == 1", "/c/").unwrap(),
            Onlyif::MatchSize {
                path: "/c/B".into(),
                cmp: Cmp::Eq,
                n: 1
            }
        );
        assert_eq!(
            parse_onlyif("get A != '1 2'", "/c/").unwrap(),
            Onlyif::Get {
                path: "/c/A".into(),
                cmp: Cmp::Ne,
                arg: "1 2".into()
            }
        );
        assert_eq!(
            parse_onlyif("values x not_include y", "").unwrap(),
            Onlyif::ValuesInclude {
                path: "x".into(),
                arg: "y".into(),
                negate: true
            }
        );
        assert_eq!(parse_onlyif("set x y", "").unwrap(), Onlyif::Always);
        assert!(parse_onlyif("match x == ['a']", "").is_err());
    }

    fn resource(params: Value) -> Resource {
        Resource::with_params("Augeas", "t", &params)
    }

    #[test]
    fn lens_needs_incl_and_bad_changes_fail_the_resource() {
        let e = Augeas::parse(&resource(serde_json::json!({"lens": "Hosts.lns"}))).unwrap_err();
        assert_eq!(
            e.message,
            "You must specify both the lens and incl parameters, or neither."
        );
        let a = Augeas::parse(&resource(serde_json::json!({"changes": "frob x"}))).unwrap();
        assert_eq!(a.failure("parse"), "Unknown command frob");
        let mut s = String::new();
        a.script(&mut s, 3, false);
        assert_eq!(s, "_fail 3 parse\n");
    }

    /// Runs a resource's script with stand-ins for the program's
    /// functions; what it reported, one line each.
    fn run_script(a: &Augeas, noop: bool, path: &str) -> String {
        let mut script =
            String::from("_fail() { echo \"fail $2\"; }\n_ev() { echo \"ev $2 $3 $4\"; }\n");
        a.script(&mut script, 1, noop);
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(&script)
            .env("PATH", path)
            .output()
            .expect("sh runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn no_augtool_fails_the_resource() {
        let a = Augeas::parse(&resource(serde_json::json!({"changes": "set /x 1"}))).unwrap();
        assert_eq!(run_script(&a, false, "/nonexistent"), "fail noaugtool\n");
        assert!(a.failure("noaugtool").contains("augeas-tools"));
    }

    #[test]
    fn dry_run_then_save_with_augtool() {
        if !std::path::Path::new("/usr/bin/augtool").exists() {
            return; // augeas-tools is not installed here
        }
        let dir = std::env::temp_dir().join(format!("ferry-augeas-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("vars");
        std::fs::write(&file, "A=1\n").unwrap();
        let path = std::env::var("PATH").unwrap_or_default();
        let aug = |changes: &str, onlyif: &str| {
            Augeas::parse(&resource(serde_json::json!({
                "incl": file.display().to_string(),
                "lens": "Shellvars.lns",
                "changes": changes,
                "onlyif": onlyif,
            })))
            .unwrap()
        };
        let set = aug("set A 2", "");
        assert_eq!(
            run_script(&set, true, &path),
            "ev returns noop need_to_run\n"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "A=1\n");
        assert!(!dir.join("vars.augnew").exists());
        assert_eq!(run_script(&aug("set A 2", "get A == 2"), false, &path), "");
        assert_eq!(
            run_script(&aug("set A 2", "get A >= 1.5"), false, &path),
            ""
        );
        assert_eq!(
            run_script(&set, false, &path),
            "ev returns success need_to_run\n"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "A=2\n");
        assert_eq!(run_script(&set, false, &path), "");
        let failing = aug("mv nothing elsewhere", "");
        let failed = run_script(&failing, false, &path);
        assert!(failed.starts_with("fail error:"), "{failed}");
        assert!(!failed.contains('\t'));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
