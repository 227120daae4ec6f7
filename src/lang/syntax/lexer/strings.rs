//! String scanning for the lexer: single- and double-quoted strings with
//! escapes and interpolation, unicode escapes, and heredocs (`@(TAG)` with
//! margin trimming and escape flags).

use super::{Lexer, StrPart, Tok, parts_to_tok};
use crate::lang::error::LResult;

impl<'a> Lexer<'a> {
    pub(super) fn scan_single(&mut self) -> LResult<String> {
        let start = self.pos;
        self.pos += 1;
        let mut s = String::new();
        loop {
            match self.peek() {
                None => {
                    let follow: String = self.chars.iter().skip(start + 1).take(5).collect();
                    return self.err(
                        format!("Unclosed quote after \"'\" followed by '{follow}...'"),
                        start + 1,
                    );
                }
                Some('\'') => {
                    self.pos += 1;
                    return Ok(s);
                }
                Some('\\') if matches!(self.peek_at(1), Some('\'') | Some('\\')) => {
                    if let Some(c) = self.peek_at(1) {
                        s.push(c);
                    }
                    self.pos += 2;
                }
                Some(c) => {
                    s.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    pub(super) fn scan_double(&mut self) -> LResult<Tok> {
        let start = self.pos;
        self.pos += 1;
        let parts = self.scan_interp_body(Some('"'), "\\\"'nrts$u", start)?;
        Ok(parts_to_tok(parts))
    }

    /// Scan an interpolating body until `term` (or end of input when `None`).
    /// `escapes` lists the escape letters that are processed.
    fn scan_interp_body(
        &mut self,
        term: Option<char>,
        escapes: &str,
        start: usize,
    ) -> LResult<Vec<StrPart>> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        loop {
            let Some(c) = self.peek() else {
                if term.is_some() {
                    let follow: String = self.chars.iter().skip(start + 1).take(5).collect();
                    return self.err(
                        format!("Unclosed quote after '\"' followed by '{follow}...'"),
                        start + 1,
                    );
                }
                break;
            };
            if Some(c) == term {
                self.pos += 1;
                break;
            }
            match c {
                '\\' => {
                    let n = self.peek_at(1);
                    match n {
                        Some(e) if escapes.contains(e) || e == '\\' && !escapes.is_empty() => {
                            self.pos += 2;
                            match e {
                                'n' => lit.push('\n'),
                                'r' => lit.push('\r'),
                                't' => lit.push('\t'),
                                's' => lit.push(' '),
                                'u' => lit.push(self.scan_unicode()?),
                                other => lit.push(other),
                            }
                        }
                        // A backslash ending a line joins it to the next in
                        // double-quoted strings and heredocs with `L`.
                        Some('\n') if escapes.contains('L') || escapes.contains('"') => {
                            self.pos += 2;
                        }
                        Some('\r')
                            if self.peek_at(2) == Some('\n')
                                && (escapes.contains('L') || escapes.contains('"')) =>
                        {
                            self.pos += 3;
                        }
                        _ => {
                            lit.push('\\');
                            self.pos += 1;
                        }
                    }
                }
                '$' if self.peek_at(1) == Some('{') => {
                    if !lit.is_empty() {
                        parts.push(StrPart::Lit(std::mem::take(&mut lit)));
                    }
                    self.depth += 1;
                    if self.depth > self.max_depth {
                        return self.err(
                            format!(
                                "Interpolation nesting is too deep (the limit is {} levels)",
                                self.max_depth
                            ),
                            self.pos,
                        );
                    }
                    self.pos += 2;
                    let mut toks = Vec::new();
                    self.lex_tokens(&mut toks, true)?;
                    self.depth -= 1;
                    parts.push(StrPart::Expr(toks));
                }
                '$' if self
                    .peek_at(1)
                    .is_some_and(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
                    || self.peek_at(1) == Some(':') && self.peek_at(2) == Some(':') =>
                {
                    if !lit.is_empty() {
                        parts.push(StrPart::Lit(std::mem::take(&mut lit)));
                    }
                    let (l, col) = self.line_col(self.pos);
                    self.pos += 1;
                    let name = self.scan_var_name();
                    parts.push(StrPart::Var(name, l, col));
                }
                _ => {
                    lit.push(c);
                    self.pos += 1;
                }
            }
        }
        if !lit.is_empty() || parts.is_empty() {
            parts.push(StrPart::Lit(lit));
        }
        Ok(parts)
    }

    fn scan_unicode(&mut self) -> LResult<char> {
        let start = self.pos;
        let mut hex = String::new();
        if self.peek() == Some('{') {
            self.pos += 1;
            while let Some(c) = self.peek() {
                self.pos += 1;
                if c == '}' {
                    break;
                }
                hex.push(c);
            }
        } else {
            for _ in 0..4 {
                if let Some(c) = self.peek() {
                    hex.push(c);
                    self.pos += 1;
                }
            }
        }
        u32::from_str_radix(&hex, 16)
            .ok()
            .and_then(char::from_u32)
            .map_or_else(|| self.err("Illegal unicode escape", start), Ok)
    }

    pub(super) fn scan_heredoc(&mut self) -> LResult<Tok> {
        let start = self.pos;
        self.pos += 2;
        let mut spec = String::new();
        loop {
            match self.peek() {
                None | Some('\n') => return self.err("Unclosed heredoc tag", start),
                Some(')') => {
                    self.pos += 1;
                    break;
                }
                Some(c) => {
                    spec.push(c);
                    self.pos += 1;
                }
            }
        }
        let (tag_part, flags) = match spec.split_once('/') {
            Some((t, f)) => (t.to_string(), f.to_string()),
            None => (spec.clone(), String::new()),
        };
        let tag_part = match tag_part.split_once(':') {
            Some((t, _syntax)) => t.trim().to_string(),
            None => tag_part.trim().to_string(),
        };
        let (tag, interpolate) = match tag_part.strip_prefix('"').and_then(|t| t.strip_suffix('"'))
        {
            Some(t) => (t.to_string(), true),
            None => (tag_part, false),
        };
        // Find the body start: the line after the current one (or after a
        // previous heredoc on this line).
        let body_start = match self.heredoc_resume {
            Some(p) => p,
            None => {
                let mut i = self.pos;
                while i < self.chars.len() && self.chars.get(i) != Some(&'\n') {
                    i += 1;
                }
                i + 1
            }
        };
        let mut lines: Vec<String> = Vec::new();
        let mut i = body_start;
        let mut end: Option<(usize, usize, bool)> = None; // (margin, resume, strip_nl)
        while i < self.chars.len() {
            let mut j = i;
            while j < self.chars.len() && self.chars.get(j) != Some(&'\n') {
                j += 1;
            }
            let line: String = self
                .chars
                .get(i..j)
                .map(|s| s.iter().collect())
                .unwrap_or_default();
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            let mut rest = trimmed;
            let mut margin = None;
            if let Some(r) = rest.strip_prefix('|') {
                margin = Some(indent);
                rest = r.trim_start();
            }
            let mut strip = false;
            if let Some(r) = rest.strip_prefix('-') {
                strip = true;
                rest = r.trim_start();
            }
            if rest.trim_end() == tag {
                end = Some((margin.unwrap_or(0), j + 1, strip));
                break;
            }
            lines.push(line);
            i = j + 1;
        }
        let Some((margin, resume, strip)) = end else {
            return self.err(
                "Heredoc without end-tagged line",
                body_start.min(self.chars.len()),
            );
        };
        self.heredoc_resume = Some(resume.min(self.chars.len()));
        let mut text = String::new();
        for l in &lines {
            let cut = l
                .char_indices()
                .take_while(|(i, c)| *i < margin && (*c == ' ' || *c == '\t'))
                .count();
            text.push_str(l.get(cut..).unwrap_or(""));
            text.push('\n');
        }
        if strip {
            text.pop();
            if text.ends_with('\r') {
                text.pop();
            }
        }
        let mut escapes = String::new();
        for f in flags.chars() {
            match f {
                't' | 'r' | 'n' | 's' | 'u' | 'L' | '$' => escapes.push(f),
                _ => {}
            }
        }
        if !interpolate && escapes.is_empty() {
            return Ok(Tok::Str(text));
        }
        let (body_line, _) = self.line_col(body_start);
        let file = self.file;
        let mut sub = Lexer::with_base(
            &text,
            file,
            body_line.saturating_sub(1 + self.line_base) + self.line_base,
        );
        sub.depth = self.depth;
        sub.max_depth = self.max_depth;
        let parts = if interpolate {
            sub.scan_interp_body(None, &escapes, 0)?
        } else {
            sub.scan_plain_escapes(&escapes)
        };
        Ok(parts_to_tok(parts))
    }

    fn scan_plain_escapes(&mut self, escapes: &str) -> Vec<StrPart> {
        // Like scan_interp_body without interpolation.
        let mut lit = String::new();
        while let Some(c) = self.peek() {
            if c == '\\' {
                match self.peek_at(1) {
                    Some(e) if escapes.contains(e) || e == '\\' => {
                        self.pos += 2;
                        match e {
                            'n' => lit.push('\n'),
                            'r' => lit.push('\r'),
                            't' => lit.push('\t'),
                            's' => lit.push(' '),
                            'u' => lit.push(self.scan_unicode().unwrap_or('\u{FFFD}')),
                            'L' => {}
                            o => lit.push(o),
                        }
                        continue;
                    }
                    Some('\n') if escapes.contains('L') => {
                        self.pos += 2;
                        continue;
                    }
                    _ => {}
                }
            }
            lit.push(c);
            self.pos += 1;
        }
        vec![StrPart::Lit(lit)]
    }
}
