//! Template text split into segments: literal text, `<% code %>` and
//! `<%= expression %>`, honouring `<%-`/`-%>` trimming and `<%#` comments.
//! Shared by EPP and ERB, which trim differently.

/// A piece of template text; code and expressions carry where their code
/// starts in the template, for error messages.
pub enum Seg {
    Text(String),
    Code(String, Pos),
    Expr(String, Pos),
}

/// A place in a template: line and column, both from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

/// A `<%` without its closing `%>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Unbalanced '<%' in template")]
pub struct UnbalancedTag;

/// Whose trimming rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Ruby's ERB (trim mode `-`): `<%-` removes the indentation of a tag
    /// that starts its line, `-%>` the line break right after the tag.
    Erb,
    /// Puppet's EPP: `<%-` removes the spaces and tabs before the tag,
    /// `-%>` the spaces and tabs after it and then one line break.
    Epp,
}

/// The text after a `-%>`, trimmed.
fn trim_after(t: &str, flavor: Flavor) -> &str {
    let t = match flavor {
        Flavor::Erb => t,
        Flavor::Epp => t.trim_start_matches([' ', '\t']),
    };
    let t = match flavor {
        Flavor::Epp => t.strip_prefix('\r').unwrap_or(t),
        Flavor::Erb => t,
    };
    t.strip_prefix('\n').unwrap_or(t)
}

/// Split `<% %>` template text into segments, honoring `<%-`/`-%>` trimming.
pub fn segments(src: &str, flavor: Flavor) -> Result<Vec<Seg>, UnbalancedTag> {
    let mut out = Vec::new();
    let mut rest = src;
    let mut trim_next_nl = false;
    // Line of `src[seen..]`'s start, counted as the split goes.
    let (mut seen, mut line) = (0usize, 1usize);
    let mut pos_at = |rest: &str| {
        let at = src.len() - rest.len();
        line += src.get(seen..at).map_or(0, |s| s.matches('\n').count());
        seen = at;
        let line_start = src
            .get(..at)
            .and_then(|s| s.rfind('\n'))
            .map_or(0, |i| i + 1);
        let col = src.get(line_start..at).map_or(0, |s| s.chars().count()) + 1;
        Pos { line, col }
    };
    while !rest.is_empty() {
        let Some(i) = rest.find("<%") else {
            let t = if trim_next_nl {
                trim_after(rest, flavor)
            } else {
                rest
            };
            out.push(Seg::Text(t.to_string()));
            break;
        };
        let mut text = rest.get(..i).unwrap_or("");
        if trim_next_nl {
            text = trim_after(text, flavor);
        }
        let mut text = text.to_string();
        let after = rest.get(i + 2..).unwrap_or("");
        if let Some(lit) = after.strip_prefix('%') {
            text.push_str("<%");
            out.push(Seg::Text(text));
            rest = lit;
            trim_next_nl = false;
            continue;
        }
        let (kind, body_start) = match after.chars().next() {
            Some('=') => ('=', 1),
            Some('#') => ('#', 1),
            Some('-') => ('-', 1),
            _ => (' ', 0),
        };
        if kind == '-' {
            // strip whitespace before the tag on its line
            let trimmed = text.trim_end_matches([' ', '\t']);
            if flavor == Flavor::Epp || trimmed.is_empty() || trimmed.ends_with('\n') {
                text = trimmed.to_string();
            }
        }
        out.push(Seg::Text(text));
        let body_all = after.get(body_start..).unwrap_or("");
        let Some(end) = body_all.find("%>") else {
            return Err(UnbalancedTag);
        };
        let mut body = body_all.get(..end).unwrap_or("");
        let body_pos = pos_at(body_all);
        trim_next_nl = false;
        if let Some(b) = body.strip_suffix('-') {
            body = b;
            trim_next_nl = true;
        }
        rest = body_all.get(end + 2..).unwrap_or("");
        match kind {
            '=' => out.push(Seg::Expr(body.to_string(), body_pos)),
            '#' => {}
            _ => out.push(Seg::Code(body.to_string(), body_pos)),
        }
    }
    Ok(out)
}
