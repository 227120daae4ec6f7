//! Template text split into segments: literal text, `<% code %>` and
//! `<%= expression %>`, honouring `<%-`/`-%>` trimming and `<%#` comments.
//! Shared by EPP and ERB.

pub enum Seg {
    Text(String),
    Code(String),
    Expr(String),
}

/// A `<%` without its closing `%>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Unbalanced '<%' in template")]
pub struct UnbalancedTag;

/// Split `<% %>` template text into segments, honoring `<%-`/`-%>` trimming.
pub fn segments(src: &str) -> Result<Vec<Seg>, UnbalancedTag> {
    let mut out = Vec::new();
    let mut rest = src;
    let mut trim_next_nl = false;
    while !rest.is_empty() {
        let Some(i) = rest.find("<%") else {
            let mut t = rest.to_string();
            if trim_next_nl {
                t = t.strip_prefix('\n').map(str::to_string).unwrap_or(t);
            }
            out.push(Seg::Text(t));
            break;
        };
        let mut text = rest.get(..i).unwrap_or("").to_string();
        if trim_next_nl {
            text = text.strip_prefix('\n').map(str::to_string).unwrap_or(text);
        }
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
            if trimmed.is_empty() || trimmed.ends_with('\n') {
                text = trimmed.to_string();
            }
        }
        out.push(Seg::Text(text));
        let body_all = after.get(body_start..).unwrap_or("");
        let Some(end) = body_all.find("%>") else {
            return Err(UnbalancedTag);
        };
        let mut body = body_all.get(..end).unwrap_or("");
        trim_next_nl = false;
        if let Some(b) = body.strip_suffix('-') {
            body = b;
            trim_next_nl = true;
        }
        rest = body_all.get(end + 2..).unwrap_or("");
        match kind {
            '=' => out.push(Seg::Expr(body.to_string())),
            '#' => {}
            _ => out.push(Seg::Code(body.to_string())),
        }
    }
    Ok(out)
}
