//! Non-local exits of the ERB interpreter: an error, `next`/`break`
//! out of a block or `return` out of a method, with its value, as one enum threaded through every
//! evaluation step's `Result`.

use crate::lang::error::{LangError, plain};
use crate::lang::values::value::Value;

/// Non-local exits: errors and `next`/`break` out of blocks.
pub enum Ctl {
    Err(LangError),
    Next(Value),
    Break(Value),
    /// `return` out of a template-defined method.
    Return(Value),
}

impl From<LangError> for Ctl {
    fn from(e: LangError) -> Ctl {
        Ctl::Err(e)
    }
}

pub type R<T = Value> = Result<T, Ctl>;

pub fn fail<T>(msg: impl Into<String>) -> R<T> {
    Err(Ctl::Err(plain(msg.into())))
}
