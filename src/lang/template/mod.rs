//! Templates. EPP ([`epp`]) is compiled to an equivalent Puppet program
//! (text chunks become output calls) and evaluated in a fresh scope with
//! the declared parameters. ERB ([`erb`]) is run by a small interpreter for
//! the Ruby subset templates use; anything beyond it is reported as an
//! error. Both start from [`segments`], the `<% %>` splitter. This module
//! finds and reads template files.

pub mod epp;
pub mod erb;
pub mod segments;

use crate::lang::error::{LangError, Loc};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Evaluator, ScopeId};
use crate::lang::loader;
use crate::lang::values::value::Value;

fn template_path(
    ev: &Evaluator<'_>,
    reference: &str,
    loc: &Loc,
) -> Result<std::path::PathBuf, LangError> {
    let p = std::path::Path::new(reference);
    if p.is_absolute() && ev.loader.is_file(p) {
        return Ok(p.to_path_buf());
    }
    loader::module_file(ev.loader, &ev.modulepath, "templates", reference)
        .ok_or_else(|| LangError::eval(format!("Could not find template '{reference}'"), loc))
}

/// The text of template `reference` (`<module>/...` under the module's
/// `templates`, or an absolute path), None when there is no such file:
/// Puppet's `Puppet::Parser::Files.find_template` and a read.
pub fn read_template(ev: &Evaluator<'_>, reference: &str) -> Option<String> {
    let loc = Loc::new(&std::sync::Arc::from(""), 0, 0);
    let path = template_path(ev, reference, &loc).ok()?;
    ev.loader.read(&path).ok()
}

/// Render the ERB template `reference` (`<module>/templates/...` or an
/// absolute path), as the `template()` function does.
pub fn render_erb_file(
    ev: &mut Evaluator<'_>,
    reference: &str,
    sc: ScopeId,
    loc: &Loc,
) -> EvalResult<String> {
    let path = template_path(ev, reference, loc)?;
    let src = ev
        .loader
        .read(&path)
        .map_err(|e| LangError::eval(format!("Could not read template '{reference}': {e}"), loc))?;
    let path = path.display().to_string();
    erb::render_erb(
        ev,
        &src,
        sc,
        erb::ErbSource::File {
            reference,
            path: &path,
        },
    )
}

/// Render the EPP template `reference` with `params`, as `epp()` does.
pub fn render_epp_file(
    ev: &mut Evaluator<'_>,
    reference: &str,
    params: Value,
    sc: ScopeId,
    loc: &Loc,
) -> EvalResult<Value> {
    let path = template_path(ev, reference, loc)?;
    let src = ev
        .loader
        .read(&path)
        .map_err(|e| LangError::eval(format!("Could not read template '{reference}': {e}"), loc))?;
    Ok(Value::Str(epp::render_epp(
        ev,
        &src,
        params,
        sc,
        &path.display().to_string(),
    )?))
}
