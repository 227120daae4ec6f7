//! ERB templates, run by an interpreter for the subset of Ruby that
//! templates use: [`lex`] (template segments to Ruby tokens), [`parse`]
//! (tokens to a small AST), [`eval`] (the interpreter), [`control`]
//! (its non-local exits), [`methods`] and [`collections`] (String, number, Array and Hash
//! methods), [`value`] (Ruby semantics of Puppet values: equality,
//! ordering, `to_s`/`inspect`) and [`yaml`] (Psych's `to_yaml`). Anything outside the subset is an error
//! naming the construct.

pub mod collections;
pub mod control;
pub mod eval;
pub mod lex;
pub mod methods;
pub mod parse;
pub mod value;
pub mod yaml;

use std::sync::Arc;

use crate::lang::error::{Loc, plain};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Evaluator, ScopeId};
use crate::lang::parsed::Parsed;
use crate::lang::template::segments::{Flavor, segments};

/// Where ERB text comes from, for Puppet's error messages.
#[derive(Debug, Clone, Copy)]
pub enum ErbSource<'a> {
    /// `template('mod/x.erb')`: the reference as written and the file found.
    File { reference: &'a str, path: &'a str },
    /// `inline_template(...)`.
    Inline,
}

/// Templates parsed so far in this process (see [`crate::lang::parsed`]).
static PARSED: Parsed<Vec<parse::RExpr>> = Parsed::new();

/// The template `src` (named `what`) parsed, or kept from an earlier parse.
fn parse_cached(src: &str, what: &str) -> EvalResult<Arc<Vec<parse::RExpr>>> {
    PARSED.get_or_parse(what, src, || {
        let segs = segments(src, Flavor::Erb).map_err(|m| plain(format!("{what}: {m}")))?;
        let toks = lex::lex_template(&segs)
            .map_err(|m| plain(format!("Failed to parse template {what}: {m}")))?;
        parse::parse_template(toks)
            .map_err(|m| plain(format!("Failed to parse template {what}: {m}")).into())
    })
}

/// Render ERB text with the Ruby-subset interpreter ;
/// instance variables resolve from the calling scope. A Ruby error while
/// it runs is reported as Puppet reports it: for a file, "Failed to parse
/// template REF:" with the file, the template line and the Ruby message.
pub fn render_erb(
    ev: &mut Evaluator<'_>,
    src: &str,
    sc: ScopeId,
    source: ErbSource<'_>,
) -> EvalResult<String> {
    let what = match source {
        ErbSource::File { path, .. } => path,
        ErbSource::Inline => "inline_template",
    };
    let prog = parse_cached(src, what)?;
    let loc = Loc {
        file: Arc::from(what),
        line: 0,
        col: 0,
    };
    let mut interp = eval::Interp::new(ev, sc, loc);
    interp.run(&prog).map_err(|e| match e.kind {
        crate::lang::error::ErrorKind::Evaluation if e.loc.is_none() => {
            plain(match source {
                ErbSource::File { reference, path } => format!(
                    "Failed to parse template {reference}:\n  Filepath: {path}\n  Line: {}\n  Detail: {}\n",
                    interp.line, e.message
                ),
                ErbSource::Inline => format!("Failed to parse inline template: {}", e.message),
            })
        }
        _ => e,
    })?;
    Ok(std::mem::take(&mut interp.out))
}
