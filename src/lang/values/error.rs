//! The error of the value layer: a Puppet-worded message (bad type
//! arguments, invalid regex, bad time arithmetic) without a location; the
//! evaluator turns it into an evaluation [`LangError`] and adds the position.

use crate::lang::error::{LangError, plain};

/// A value operation failed; the message is Puppet's wording.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ValueError(pub String);

impl From<String> for ValueError {
    fn from(message: String) -> ValueError {
        ValueError(message)
    }
}

impl From<&str> for ValueError {
    fn from(message: &str) -> ValueError {
        ValueError(message.to_string())
    }
}

impl From<ValueError> for LangError {
    fn from(e: ValueError) -> LangError {
        plain(e.0)
    }
}
