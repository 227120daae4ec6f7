//! Bolt's prompt module for plans: `prompt` (one answer) and `prompt::menu`
//! (one option of a list or hash), both asking as Bolt's executor asks.
//! On a terminal the question goes to standard error (`TEXT [DEFAULT]: `)
//! and a line is read, an empty one giving the default. With no terminal
//! (a pipe, a job of `ferry serve`) nothing is asked: the default is the
//! answer, and without one Bolt's `bolt/no-tty-error`.

use super::functions::{raise, want_args};
use super::library::PlanLibrary;
use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::values::plan::ErrorValue;
use crate::lang::values::value::{Value, hash_get_str, key_equal};

/// What the user answered.
enum Reply {
    /// A line they typed (without its line end).
    Line(String),
    /// Nothing: an empty line, or no terminal to ask on.
    Default,
}

/// Bolt's `Executor#prompt`: `question` on a terminal; with none, the
/// default when there is one, else `bolt/no-tty-error`.
fn ask(
    c: &Call<'_>,
    question: &str,
    default: Option<&Value>,
    sensitive: bool,
) -> EvalResult<Reply> {
    if !crate::terminal::is_terminal() {
        return match default {
            Some(_) => Ok(Reply::Default),
            None => Err(raise(
                c,
                ErrorValue::new("STDIN is not a tty, unable to prompt", "bolt/no-tty-error"),
            )),
        };
    }
    let question = match default {
        Some(d) if !sensitive => format!("{question} [{}]: ", d.to_s()),
        _ => format!("{question}: "),
    };
    // A sensitive answer is not echoed, as Bolt reads it (`noecho`).
    let line = crate::terminal::ask(&question, sensitive)
        .map_err(|e| plain(format!("{}: {e}", c.name)))?;
    Ok(match (line.is_empty(), default) {
        (true, Some(_)) => Reply::Default,
        _ => Reply::Line(line),
    })
}

/// The options hash (argument `i`), or none.
fn options(c: &Call<'_>, i: usize) -> Vec<(Value, Value)> {
    match c.args.get(i) {
        Some(Value::Hash(h)) => h.clone(),
        _ => Vec::new(),
    }
}

/// `prompt(text, {sensitive, default})`: the answer, a `Sensitive` one
/// when asked to; the default must be a String.
pub(super) fn prompt(_: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 2)?;
    let text = c.str_arg(0);
    let options = options(&c, 1);
    let sensitive = hash_get_str(&options, "sensitive").is_some_and(Value::truthy);
    let default = match hash_get_str(&options, "default") {
        None => None,
        Some(d @ Value::Str(_)) => Some(d.clone()),
        Some(_) => {
            return Err(raise(
                &c,
                ErrorValue::new("Option 'default' must be a string", "bolt/validation-error"),
            ));
        }
    };
    let answer = match ask(&c, &text, default.as_ref(), sensitive)? {
        Reply::Line(s) => Value::Str(s),
        Reply::Default => default.unwrap_or(Value::Undef),
    };
    Ok(if sensitive {
        Value::Sensitive(Box::new(answer))
    } else {
        answer
    })
}

/// `prompt::menu(text, menu, {default})`: the value of the option chosen
/// from `menu`, a list (chosen by number from 1) or a hash (chosen by
/// key). The menu is shown before the first question; a wrong answer asks
/// again. The default must be one of the menu's values.
pub(super) fn menu(_: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 2, 3)?;
    let text = c.str_arg(0);
    let menu: Vec<(String, Value)> = match c.args.get(1) {
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| ((i + 1).to_string(), v.clone()))
            .collect(),
        Some(Value::Hash(pairs)) => pairs
            .iter()
            .map(|(k, v)| match k {
                Value::Str(k) if !k.is_empty() => Ok((k.clone(), v.clone())),
                other => Err(plain(format!(
                    "'prompt::menu' parameter 'menu' expects a Hash with String[1] keys, got a {} key",
                    other.type_name()
                ))),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(plain(format!(
                "'prompt::menu' parameter 'menu' expects an Array or a Hash value, got {}",
                other.type_name()
            ))
            .into());
        }
        None => Vec::new(),
    };
    let options = options(&c, 2);
    let invalid = |msg: String| raise(&c, ErrorValue::new(msg, "bolt/validation-error"));
    if menu.is_empty() {
        return Err(invalid("Menu cannot be empty".into()));
    }
    let default = hash_get_str(&options, "default").cloned();
    if let Some(d) = &default
        && !menu.iter().any(|(_, v)| key_equal(v, d))
    {
        return Err(invalid(format!(
            "Default value '{}' is not one of the provided menu options",
            d.to_s()
        )));
    }
    let width = menu
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    let mut question: String = menu
        .iter()
        .map(|(k, v)| format!("{:<width$} {}\n", format!("({k})"), v.to_s()))
        .collect();
    question.push_str(&text);
    loop {
        let selection = match ask(&c, &question, default.as_ref(), false)? {
            Reply::Line(s) => Value::Str(s),
            Reply::Default => default.clone().unwrap_or(Value::Undef),
        };
        if let Value::Str(s) = &selection
            && let Some((_, v)) = menu.iter().find(|(k, _)| k == s)
        {
            return Ok(v.clone());
        }
        if default.as_ref().is_some_and(|d| key_equal(d, &selection)) {
            return Ok(selection);
        }
        question = format!("Invalid option, try again. {text}");
    }
}
