//! Source locations and the typed errors of the Puppet language front end and
//! evaluator. Every error carries an optional location and renders Puppet-style:
//! `message (file: F, line: L, column: C)`.

use std::fmt;
use std::sync::Arc;

/// A position in a source file (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    pub file: Arc<str>,
    pub line: u32,
    pub col: u32,
}

impl Loc {
    pub fn new(file: &Arc<str>, line: u32, col: u32) -> Loc {
        Loc {
            file: file.clone(),
            line,
            col,
        }
    }
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let col = if self.col == 0 {
            String::new()
        } else {
            format!(", column: {}", self.col)
        };
        if self.file.is_empty() {
            write!(f, "(line: {}{col})", self.line)
        } else {
            write!(f, "(file: {}, line: {}{col})", self.file, self.line)
        }
    }
}

/// Which phase produced an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Lexing or parsing failed.
    Syntax,
    /// Evaluation failed (type mismatch, unknown class, duplicate resource...).
    Evaluation,
    /// A manifest, template or data file could not be read or decoded.
    Load,
    /// A message Puppet reports without prefix.
    Bare,
    /// `next()`, `break()` or `return()` where nothing ends it (reported
    /// without prefix, with its line and node).
    Misplaced,
}

/// An error of the language layer, with location when known.
#[derive(Debug, Clone, thiserror::Error)]
pub struct LangError {
    pub kind: ErrorKind,
    pub message: String,
    pub loc: Option<Loc>,
}

impl fmt::Display for LangError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::Syntax => write!(
                f,
                "Could not parse for environment production: {}",
                self.message
            )?,
            ErrorKind::Evaluation => write!(f, "Evaluation Error: {}", self.message)?,
            ErrorKind::Load | ErrorKind::Bare | ErrorKind::Misplaced => {
                write!(f, "{}", self.message)?
            }
        }
        if let Some(loc) = &self.loc {
            write!(f, " {loc}")?;
        }
        Ok(())
    }
}

impl LangError {
    pub fn syntax(message: impl Into<String>, loc: Loc) -> LangError {
        LangError {
            kind: ErrorKind::Syntax,
            message: message.into(),
            loc: Some(loc),
        }
    }
    pub fn eval(message: impl Into<String>, loc: &Loc) -> LangError {
        LangError {
            kind: ErrorKind::Evaluation,
            message: message.into(),
            loc: Some(loc.clone()),
        }
    }
    pub fn load(message: impl Into<String>) -> LangError {
        LangError {
            kind: ErrorKind::Load,
            message: message.into(),
            loc: None,
        }
    }
    /// Attach a location when the error has none yet.
    pub fn at(mut self, loc: &Loc) -> LangError {
        if self.loc.is_none() {
            self.loc = Some(loc.clone());
        }
        self
    }
}

pub type LResult<T> = Result<T, LangError>;

/// An evaluation error without a location yet (the caller adds the
/// statement's context and position, see `eval::in_context`).
pub fn plain(msg: impl Into<String>) -> LangError {
    LangError {
        kind: ErrorKind::Evaluation,
        message: msg.into(),
        loc: None,
    }
}
