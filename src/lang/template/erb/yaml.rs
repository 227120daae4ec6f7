//! Ruby's `to_yaml`, for template values and stdlib's `to_yaml()`, as
//! Psych (Ruby 3.1's, over libyaml 0.2) writes it: Psych picks a style per
//! string (plain, single or double quotes, literal block, folded block
//! past the `line_width` option) from what its scalar scanner would read
//! back, and libyaml's emitter overrides it when the text cannot be written
//! so (indicators, leading or trailing spaces, line breaks, characters
//! outside printable Unicode), wraps long flow scalars at spaces past the
//! line width (80 by default), and lays out block mappings and sequences
//! by the indentation (2 by default; sequences inside a mapping not
//! indented, empty collections as `{}` and `[]`). Shared objects (Psych's
//! `&1` anchors) are not detected: every value is written in full.

use std::sync::OnceLock;

use regex::Regex;

use crate::lang::template::erb::control::{R, fail};
use crate::lang::template::erb::value::to_s;
use crate::lang::values::value::Value;

/// libyaml's preferred line width and indentation.
const BEST_WIDTH: usize = 80;
const BEST_INDENT: usize = 2;
/// Longest key libyaml writes as a simple `key: value` key.
const MAX_SIMPLE_KEY: usize = 128;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
    Folded,
}

/// The layout options `to_yaml` takes (Psych's `indentation` and
/// `line_width`).
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Spaces per nesting level; libyaml takes 2 to 9, else 2.
    pub indentation: i64,
    /// The column past which flow scalars wrap: libyaml takes 0 up to
    /// twice the indentation as 80 and a negative width as unlimited.
    pub line_width: i64,
    /// Psych writes strings longer than this as folded block scalars
    /// (`>`); `None` when no `line_width` was given, or it was -1.
    pub fold_over: Option<f64>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            indentation: BEST_INDENT as i64,
            line_width: BEST_WIDTH as i64,
            fold_over: None,
        }
    }
}

/// `v.to_yaml`: a document starting with `---`, ending with a newline.
pub fn to_yaml(v: &Value) -> R<String> {
    to_yaml_with(v, &Options::default())
}

/// `v.to_yaml(options)`.
pub fn to_yaml_with(v: &Value, o: &Options) -> R<String> {
    let indent = match usize::try_from(o.indentation) {
        Ok(i @ 2..=9) => i,
        _ => BEST_INDENT,
    };
    let width = match usize::try_from(o.line_width) {
        Ok(w) if w <= indent * 2 => BEST_WIDTH,
        Ok(w) => w,
        Err(_) => usize::MAX,
    };
    let mut e = Emitter {
        out: String::from("---"),
        column: 3,
        whitespace: false,
        indention: false,
        indent,
        width,
        fold_over: o.fold_over,
    };
    e.node(v, Context::Root)?;
    if e.column > 0 {
        e.out.push('\n');
    }
    Ok(e.out)
}

/// Where a node is written, which decides its indentation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Root,
    /// The value of a block mapping whose keys are at this indent.
    MapValue(usize),
    /// An item of a block sequence whose dashes are at this indent.
    SeqItem(usize),
}

struct Emitter {
    out: String,
    /// Characters written on the current line.
    column: usize,
    /// The last thing written was whitespace (libyaml's `whitespace`).
    whitespace: bool,
    /// Only indentation is on the current line so far (`indention`).
    indention: bool,
    /// libyaml's `best_indent` and `best_width`.
    indent: usize,
    width: usize,
    /// Psych's `line_width` option, past which strings are folded.
    fold_over: Option<f64>,
}

impl Emitter {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// libyaml's `WRITE_BREAK`: a line break of the text as it is.
    fn write_break(&mut self, c: char) {
        self.out.push(c);
        self.column = 0;
    }

    /// libyaml's `write_indent`: a new line unless only indentation is
    /// on this one, then spaces up to `indent`.
    fn write_indent(&mut self, indent: usize) {
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    /// libyaml's `write_indicator`.
    fn indicator(
        &mut self,
        text: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in text.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    fn node(&mut self, v: &Value, ctx: Context) -> R<()> {
        // The indent a nested block collection or a scalar's continuation
        // lines get (libyaml's `increase_indent`).
        let step = self.indent;
        let (block_indent, scalar_indent) = match ctx {
            Context::Root => (0, step),
            Context::MapValue(i) | Context::SeqItem(i) => (i + step, i + step),
        };
        match v {
            Value::Hash(h) if h.is_empty() => self.indicator("{}", true, false, false),
            Value::Array(a) if a.is_empty() => self.indicator("[]", true, false, false),
            Value::Hash(h) => {
                for (k, val) in h {
                    self.write_indent(block_indent);
                    self.key(k, block_indent)?;
                    self.node(val, Context::MapValue(block_indent))?;
                }
            }
            Value::Array(a) => {
                // A sequence that is a mapping's value is not indented.
                let indent = match ctx {
                    Context::MapValue(i) => i,
                    _ => block_indent,
                };
                for item in a {
                    self.write_indent(indent);
                    self.indicator("-", true, false, true);
                    self.node(item, Context::SeqItem(indent))?;
                }
            }
            Value::Regex(r) => {
                self.indicator("!ruby/regexp", true, false, false);
                self.scalar(&format!("/{r}/"), Style::Plain, scalar_indent, false);
            }
            Value::Str(t) if t == "<<" => {
                // Psych tags the merge key's spelling as a string.
                self.indicator("!!str", true, false, false);
                self.single(t, scalar_indent, true);
            }
            other => {
                let (text, style) = self.scalar_of(other)?;
                self.scalar(&text, style, scalar_indent, false);
            }
        }
        Ok(())
    }

    /// A mapping's key and its `:`: `key:` when libyaml takes it for a
    /// simple key, else `? key` and `:` on the next line.
    fn key(&mut self, k: &Value, indent: usize) -> R<()> {
        if matches!(k, Value::Hash(_) | Value::Array(_)) {
            return fail("to_yaml of a Hash with a collection as a key is not supported");
        }
        let (text, style) = self.scalar_of(k)?;
        if text.chars().count() <= MAX_SIMPLE_KEY && !text.chars().any(is_break) {
            self.scalar(&text, style, 0, true);
            self.indicator(":", false, false, false);
        } else {
            self.indicator("?", true, false, true);
            self.scalar(&text, style, indent + self.indent, false);
            self.write_indent(indent);
            self.indicator(":", true, false, true);
        }
        Ok(())
    }

    /// Write a scalar: libyaml's `select_scalar_style` then its writer.
    fn scalar(&mut self, text: &str, requested: Style, indent: usize, simple_key: bool) {
        let a = analyze(text);
        let mut style = requested;
        if simple_key && a.multiline {
            style = Style::Double;
        }
        if style == Style::Plain && (!a.block_plain_allowed || (text.is_empty() && simple_key)) {
            style = Style::Single;
        }
        if style == Style::Single && !a.single_quoted_allowed {
            style = Style::Double;
        }
        if matches!(style, Style::Literal | Style::Folded) && (!a.block_allowed || simple_key) {
            style = Style::Double;
        }
        let breaks = !simple_key;
        match style {
            Style::Plain => self.plain(text, indent, breaks),
            Style::Single => self.single(text, indent, breaks),
            Style::Double => self.double(text, indent, breaks),
            Style::Literal => self.literal(text, indent),
            Style::Folded => self.folded(text, indent),
        }
    }

    /// A scalar's text and style: Psych's choice, then folding when the
    /// string is longer than the `line_width` option.
    fn scalar_of(&self, v: &Value) -> R<(String, Style)> {
        let (text, style) = scalar(v)?;
        let long = |limit: f64| text.chars().count() as f64 > limit;
        let folds = matches!(v, Value::Str(s) if s != "y" && s != "n")
            && style != Style::Literal
            && self.fold_over.is_some_and(long);
        Ok((text, if folds { Style::Folded } else { style }))
    }

    fn plain(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        if !self.whitespace && !text.is_empty() {
            self.put(' ');
        }
        let chars: Vec<char> = text.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > self.width
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                self.indention = false;
                spaces = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn single(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        self.indicator("'", true, false, false);
        let chars: Vec<char> = text.chars().collect();
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > self.width
                    && i != 0
                    && i + 1 != chars.len()
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.line_char(c, indent, &mut breaks);
            } else {
                self.line_char(c, indent, &mut breaks);
                if c == '\'' {
                    self.put('\'');
                }
                spaces = false;
            }
        }
        if breaks {
            self.write_indent(indent);
        }
        self.indicator("'", false, false, false);
    }

    fn double(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        self.indicator("\"", true, false, false);
        let chars: Vec<char> = text.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match escape_letter(c) {
                    Some(l) => self.put(l),
                    None => {
                        let code = c as u32;
                        let hex = if code <= 0xFF {
                            format!("x{code:02X}")
                        } else if code <= 0xFFFF {
                            format!("u{code:04X}")
                        } else {
                            format!("U{code:08X}")
                        };
                        for h in hex.chars() {
                            self.put(h);
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > self.width
                    && i != 0
                    && i + 1 != chars.len()
                {
                    self.write_indent(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.indicator("\"", false, false, false);
    }

    fn literal(&mut self, text: &str, indent: usize) {
        self.block_header("|", text);
        let mut breaks = true;
        for c in text.chars() {
            self.line_char(c, indent, &mut breaks);
        }
    }

    /// libyaml's folded block scalar: single line breaks doubled (so they
    /// read back as breaks), long lines broken at a single space.
    fn folded(&mut self, text: &str, indent: usize) {
        self.block_header(">", text);
        let chars: Vec<char> = text.chars().collect();
        let (mut breaks, mut leading_spaces) = (true, true);
        for (i, &c) in chars.iter().enumerate() {
            if is_break(c) {
                if !breaks && !leading_spaces && c == '\n' {
                    let after = chars[i..].iter().position(|&b| !is_break(b));
                    if !is_blank(after.map(|k| chars[i + k])) {
                        self.put_break();
                    }
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                    leading_spaces = c == ' ' || c == '\t';
                }
                if !breaks && c == ' ' && chars.get(i + 1) != Some(&' ') && self.column > self.width
                {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                self.indention = false;
                breaks = false;
            }
        }
    }

    /// The indicator of a block scalar with its indentation and chomping
    /// hints, and the line break after them.
    fn block_header(&mut self, indicator: &str, text: &str) {
        self.indicator(indicator, true, false, false);
        let first = text.chars().next();
        if first.is_some_and(|c| c == ' ' || is_break(c)) {
            self.indicator(&self.indent.to_string(), false, false, false);
        }
        let mut rev = text.chars().rev();
        let chomp = match (rev.next(), rev.next()) {
            (None, _) => Some("-"),
            (Some(l), _) if !is_break(l) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(p)) if is_break(p) => Some("+"),
            _ => None,
        };
        if let Some(c) = chomp {
            self.indicator(c, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
    }

    /// A character of a single-quoted or literal scalar: a line break as
    /// it is, others on a line indented to `indent` once a break preceded.
    fn line_char(&mut self, c: char, indent: usize, breaks: &mut bool) {
        if is_break(c) {
            self.write_break(c);
            self.indention = true;
            *breaks = true;
        } else {
            if *breaks {
                self.write_indent(indent);
            }
            self.put(c);
            self.indention = false;
            *breaks = false;
        }
    }
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: Option<char>) -> bool {
    c.is_none_or(|c| c == ' ' || c == '\t' || is_break(c))
}

/// libyaml's `IS_PRINTABLE` (on the UTF-8 encoding: characters up to
/// U+FFFD, without the C0/C1 controls other than newline).
fn printable(c: char) -> bool {
    matches!(c as u32, 0x0A | 0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD)
}

fn escape_letter(c: char) -> Option<char> {
    Some(match c {
        '\0' => '0',
        '\x07' => 'a',
        '\x08' => 'b',
        '\t' => 't',
        '\n' => 'n',
        '\x0b' => 'v',
        '\x0c' => 'f',
        '\r' => 'r',
        '\x1b' => 'e',
        '"' => '"',
        '\\' => '\\',
        '\u{85}' => 'N',
        '\u{a0}' => '_',
        '\u{2028}' => 'L',
        '\u{2029}' => 'P',
        _ => return None,
    })
}

/// What libyaml's `analyze_scalar` decides a text may be written as (in
/// block context, the only one Psych's block collections put it in).
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn analyze(text: &str) -> Analysis {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = text.starts_with("---") || text.starts_with("...");
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break, mut special, mut line_breaks) =
        (false, false, false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    let last = chars.len() - 1;
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_whitespace = is_blank(chars.get(i + 1).copied());
        if i == 0 {
            if "#,[]{}&*!|>'\"%@`".contains(c) || (c == '-' && followed_by_whitespace) {
                block_indicators = true;
            }
            if (c == '?' || c == ':') && followed_by_whitespace {
                block_indicators = true;
            }
        } else if (c == ':' && followed_by_whitespace) || (c == '#' && preceded_by_whitespace) {
            block_indicators = true;
        }
        if !printable(c) || c == '\u{feff}' {
            special = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= i == last;
            break_space |= previous_break;
        } else if is_break(c) {
            leading_break |= i == 0;
            trailing_break |= i == last;
            space_break |= previous_space;
        }
        previous_space = c == ' ';
        previous_break = is_break(c);
        preceded_by_whitespace = is_blank(Some(c));
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

/// A scalar's text and the style Psych asks for.
fn scalar(v: &Value) -> R<(String, Style)> {
    Ok(match v {
        Value::Undef => (String::new(), Style::Plain),
        // Puppet's `default` reaches Ruby as the symbol `:default`.
        Value::Default => (":default".into(), Style::Plain),
        Value::Bool(_) | Value::Int(_) => (to_s(v), Style::Plain),
        Value::Float(f) if f.is_nan() => (".nan".into(), Style::Plain),
        Value::Float(f) if f.is_infinite() => {
            (if *f > 0.0 { ".inf" } else { "-.inf" }.into(), Style::Plain)
        }
        Value::Float(_) => (to_s(v), Style::Plain),
        Value::Str(s) if !s.starts_with('\u{0}') => (s.clone(), string_style(s)),
        other => {
            return fail(format!(
                "to_yaml of {} is not supported",
                crate::lang::template::erb::value::inspect(other)
            ));
        }
    })
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|_| Regex::new("$^").expect("empty")))
}

/// Psych's `visit_String` style choice.
fn string_style(s: &str) -> Style {
    static NON_FINAL_BREAK: OnceLock<Regex> = OnceLock::new();
    static NON_WORD_START: OnceLock<Regex> = OnceLock::new();
    static OCTAL_LIKE: OnceLock<Regex> = OnceLock::new();
    // Ruby's `/\n(?!\Z)/`: a line break that neither ends the text nor
    // comes just before a final one.
    let ends = |m: regex::Match<'_>| matches!(s.get(m.end()..), Some("" | "\n"));
    if re(&NON_FINAL_BREAK, r"\n").find_iter(s).any(|m| !ends(m)) {
        Style::Literal
    } else if s == "y"
        || s == "n"
        || re(&NON_WORD_START, r#"(?m)^[^\p{L}\p{M}\p{Nd}\p{Pc}][^"]*$"#).is_match(s)
    {
        Style::Double
    } else if !scans_as_string(s) || re(&OCTAL_LIKE, r"\A0[0-7]*[89]").is_match(s) {
        Style::Single
    } else {
        Style::Plain
    }
}

/// Whether Psych's `ScalarScanner#tokenize` reads `s` back as a String
/// (not nil, a boolean, a number, a time, a date or a symbol).
fn scans_as_string(s: &str) -> bool {
    static WORDY: OnceLock<Regex> = OnceLock::new();
    static SPECIAL: OnceLock<Regex> = OnceLock::new();
    static NUMERIC: OnceLock<Regex> = OnceLock::new();
    static BARE_POINT: OnceLock<Regex> = OnceLock::new();
    if s.is_empty() {
        return false;
    }
    let wordy = re(
        &WORDY,
        r"(?m)^[^0-9.:\-]?[\p{Alphabetic}_ \t\n\x0B\x0C\r!@#$%^&*(){}<>|/\\~;=]+",
    );
    if wordy.is_match(s) || s.contains('\n') {
        static OTHER_START: OnceLock<Regex> = OnceLock::new();
        static NOT_STRING: OnceLock<Regex> = OnceLock::new();
        return s.chars().count() > 5
            || re(&OTHER_START, r"(?im)^[^ytonf~]").is_match(s)
            || !(s == "~"
                || re(&NOT_STRING, r"(?im)^(null|yes|true|on|no|false|off)$").is_match(s));
    }
    if re(
        &SPECIAL,
        concat!(
            r"(?m)^-?[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|\s+)[0-9]{1,2}:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:\s*(?:Z|[-+][0-9]{1,2}:?(?:[0-9][0-9])?))?$",
            r"|(?m)^[0-9]{4}-(?:1[012]|0[0-9]|[0-9])-(?:[12][0-9]|3[01]|0[0-9]|[0-9])$",
            r"|(?im)^\+?\.inf$|(?im)^-\.inf$|(?im)^\.nan$|(?m)^:.",
            r"|(?m)^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}$",
            r"|(?m)^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}\.[0-9_]*$",
        ),
    )
    .is_match(s)
    {
        return false;
    }
    let numeric = re(
        &NUMERIC,
        concat!(
            r"(?m)^(?:[-+]?([0-9][0-9_,]*)?\.[0-9]*([eE][-+][0-9]+)?)$",
            r"|(?m)^(?:[-+]?0b[0-1_,]+|[-+]?0[0-7_,]+|[-+]?(?:0|[1-9](?:[0-9]|,[0-9]|_[0-9])*)|[-+]?0x[0-9a-fA-F_,]+)$",
        ),
    );
    if numeric.is_match(s) {
        return re(&BARE_POINT, r"\A[-+]?\.\z").is_match(s);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn y(v: Value) -> String {
        to_yaml(&v).unwrap_or_else(|_| "error".into())
    }

    fn s(t: &str) -> Value {
        Value::str(t)
    }

    #[test]
    fn psych_layout() {
        let h = Value::Hash(vec![
            (s("a"), s("0")),
            (
                s("b"),
                Value::Array(vec![s("x"), Value::Hash(vec![(s("k"), Value::Int(1))])]),
            ),
            (s("c"), Value::Hash(Vec::new())),
            (s("d"), Value::Undef),
            (s("e"), s("/p")),
        ]);
        assert_eq!(y(h), "---\na: '0'\nb:\n- x\n- k: 1\nc: {}\nd:\ne: \"/p\"\n");
        assert_eq!(y(s("two\nlines")), "--- |-\n  two\n  lines\n");
    }
}
