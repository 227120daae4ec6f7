//! How evaluation leaves a block early: an error, or one of the control
//! functions `next()`, `break()` and `return()` unwinding with its value to
//! the lambda, iteration or function that ends it. Every evaluation step
//! returns [`EvalResult`]; `?` carries an [`Unwind`] outwards unchanged and
//! turns a plain [`LangError`] into [`Unwind::Error`]. At the evaluator's
//! edge ([`Unwind::into_error`]) a control exit nothing caught becomes the
//! error Puppet reports for it.

use crate::lang::error::{ErrorKind, LangError, Loc};
use crate::lang::values::error::ValueError;
use crate::lang::values::value::Value;

/// Why evaluation stopped before the end of a block.
#[derive(Debug, Clone)]
pub enum Unwind {
    /// Evaluation failed.
    Error(LangError),
    /// `next(value)`: ends the current lambda call with `value`.
    Next { value: Value, loc: Loc },
    /// `break()`: ends the enclosing iteration.
    Break { loc: Loc },
    /// `return(value)`: ends the enclosing function with `value`.
    Return { value: Value, loc: Loc },
    /// A plan failed with a Bolt error (`fail_plan`, a failed `run_*`):
    /// it unwinds to `catch_errors`, a `_catch_errors` `run_plan`, or
    /// the end of the plan.
    Raise {
        error: Box<crate::lang::values::plan::ErrorValue>,
        loc: Loc,
    },
}

/// The result of every evaluation step.
pub type EvalResult<T> = Result<T, Unwind>;

impl From<LangError> for Unwind {
    fn from(e: LangError) -> Unwind {
        Unwind::Error(e)
    }
}

impl From<ValueError> for Unwind {
    fn from(e: ValueError) -> Unwind {
        Unwind::Error(e.into())
    }
}

impl Unwind {
    /// The error this exit is where nothing catches it: the error itself, or
    /// for a control function Puppet's "NAME() from context where this is
    /// illegal" at its call.
    pub fn into_error(self) -> LangError {
        let (name, loc) = match self {
            Unwind::Error(e) => return e,
            Unwind::Next { loc, .. } => ("next", loc),
            Unwind::Break { loc } => ("break", loc),
            Unwind::Return { loc, .. } => ("return", loc),
            Unwind::Raise { error, loc } => {
                return LangError {
                    kind: ErrorKind::Bare,
                    message: error.msg,
                    loc: Some(loc),
                };
            }
        };
        // Puppet names the line only.
        LangError {
            kind: ErrorKind::Misplaced,
            message: format!("{name}() from context where this is illegal"),
            loc: Some(Loc { col: 0, ..loc }),
        }
    }

    /// Gives an error without a location this one.
    pub fn at(self, loc: &Loc) -> Unwind {
        self.map_error(|e| e.at(loc))
    }

    /// Applies `f` to an error and passes control exits through unchanged.
    pub fn map_error(self, f: impl FnOnce(LangError) -> LangError) -> Unwind {
        match self {
            Unwind::Error(e) => Unwind::Error(f(e)),
            other => other,
        }
    }
}

/// The end of a class or defined type body: `return()` (its value is
/// ignored) ends the body early, as Puppet allows there.
pub fn returned_from_body(r: EvalResult<Value>) -> EvalResult<()> {
    match r {
        Ok(_) | Err(Unwind::Return { .. }) => Ok(()),
        Err(other) => Err(other),
    }
}

/// Converts a whole evaluation's result at the evaluator's edge.
pub fn finished<T>(r: EvalResult<T>) -> Result<T, LangError> {
    r.map_err(Unwind::into_error)
}
