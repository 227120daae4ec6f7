//! Abstract syntax tree of the Puppet language. Every expression carries the
//! location where it starts.

use std::sync::Arc;

use crate::lang::error::Loc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    Match,
    NoMatch,
    In,
    And,
    Or,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    Splat,
}

/// Relationship operators: `->`, `~>`, `<-`, `<~`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelOp {
    Before,
    Notify,
    Require,
    Subscribe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Virtuality {
    Real,
    Virtual,
    Exported,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrOpKind {
    Set,
    Append,
    Splat,
}

/// `name => value`, `name +> value` or `* => hash`.
#[derive(Debug, Clone, PartialEq)]
pub struct AttrOp {
    pub name: String,
    pub kind: AttrOpKind,
    pub value: Expr,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ResourceBody {
    pub title: Expr,
    pub ops: Vec<AttrOp>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Option<Expr>,
    pub default: Option<Expr>,
    pub captures_rest: bool,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Lambda {
    pub params: Vec<Param>,
    pub body: Vec<Expr>,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CaseOption {
    pub values: Vec<Expr>,
    pub body: Vec<Expr>,
}

/// A class or defined type definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    pub name: String,
    pub params: Vec<Param>,
    pub parent: Option<String>,
    pub body: Vec<Expr>,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeMatch {
    Name(String),
    Regex(String),
    Default,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodeDef {
    pub matches: Vec<NodeMatch>,
    pub body: Vec<Expr>,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionDef {
    pub name: String,
    pub params: Vec<Param>,
    pub return_type: Option<Expr>,
    pub body: Vec<Expr>,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Undef,
    Default,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// Interpolated string: the concatenation of the parts' string forms.
    Interp(Vec<Expr>),
    Regex(String),
    /// A bare word (`foo`, `foo::bar`), evaluated as a string.
    Bare(String),
    /// A capitalized type/class reference (`File`, `Stdlib::Absolutepath`).
    TypeRef(String),
    Var(String),
    Array(Vec<Expr>),
    Hash(Vec<(Expr, Expr)>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Assign(Box<Expr>, Box<Expr>),
    Access(Box<Expr>, Vec<Expr>),
    Call {
        name: String,
        args: Vec<Expr>,
        lambda: Option<Box<Lambda>>,
    },
    MethodCall {
        recv: Box<Expr>,
        name: String,
        args: Vec<Expr>,
        lambda: Option<Box<Lambda>>,
    },
    If {
        cond: Box<Expr>,
        then: Vec<Expr>,
        els: Option<Vec<Expr>>,
    },
    Unless {
        cond: Box<Expr>,
        then: Vec<Expr>,
        els: Option<Vec<Expr>>,
    },
    Case {
        subject: Box<Expr>,
        options: Vec<CaseOption>,
    },
    Selector {
        subject: Box<Expr>,
        options: Vec<(Expr, Expr)>,
    },
    Relationship(RelOp, Box<Expr>, Box<Expr>),
    Resource {
        virt: Virtuality,
        type_name: String,
        bodies: Vec<ResourceBody>,
    },
    ResourceDefaults {
        type_name: String,
        ops: Vec<AttrOp>,
    },
    ResourceOverride {
        target: Box<Expr>,
        ops: Vec<AttrOp>,
    },
    Collector {
        type_name: String,
        exported: bool,
        query: Option<Box<Expr>>,
        overrides: Vec<AttrOp>,
    },
    Block(Vec<Expr>),
    /// Definitions are hoisted when a file is loaded; evaluating them is a no-op.
    ClassDef(Arc<Definition>),
    DefineDef(Arc<Definition>),
    NodeDef(Arc<NodeDef>),
    FunctionDef(Arc<FunctionDef>),
    TypeAlias(String, Box<Expr>),
    /// A Bolt plan (`plan mod::name($x) { ... }`): a definition with
    /// parameters and a body and no parent, run by the plan runner.
    PlanDef(Arc<Definition>),
    /// `apply(targets, options) { statements }` in a plan: the statements
    /// are compiled into a catalog per target and applied there.
    Apply {
        args: Vec<Expr>,
        body: Arc<Vec<Expr>>,
    },
}

impl Expr {
    pub fn new(kind: ExprKind, loc: Loc) -> Expr {
        Expr { kind, loc }
    }
}
