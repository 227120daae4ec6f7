//! A PuppetDB query as a value, whichever form it came in (PQL text or
//! PuppetDB's AST as JSON): the entity it asks for, the fields it
//! projects, its filter, and its paging (`order by`, `limit`, `offset`).

use serde_json::Value;

/// The entities ferry can evaluate over stored facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entity {
    /// `nodes`: one row per node.
    Nodes,
    /// `inventory`: one row per node with its facts.
    Inventory,
    /// `facts`: one row per node and top-level fact (`name`, `value`).
    Facts,
    /// `fact_contents`: one row per node and leaf of its facts (`path`,
    /// `name`, `value`).
    FactContents,
}

impl Entity {
    pub fn from_name(name: &str) -> Option<Entity> {
        Some(match name {
            "nodes" => Entity::Nodes,
            "inventory" => Entity::Inventory,
            "facts" => Entity::Facts,
            "fact_contents" | "fact-contents" => Entity::FactContents,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Entity::Nodes => "nodes",
            Entity::Inventory => "inventory",
            Entity::Facts => "facts",
            Entity::FactContents => "fact_contents",
        }
    }

    /// The entities PuppetDB has that ferry does not evaluate (for errors
    /// that tell an unknown word from an entity only PuppetDB answers).
    pub fn puppetdb_only(name: &str) -> bool {
        matches!(
            name,
            "catalogs"
                | "edges"
                | "environments"
                | "events"
                | "fact_paths"
                | "packages"
                | "package_inventory"
                | "producers"
                | "reports"
                | "resources"
                | "event_counts"
                | "aggregate_event_counts"
        )
    }
}

/// A field: `certname`, `facts.os.family`, `value` (dots split the path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field(pub Vec<String>);

impl Field {
    pub fn parse(text: &str) -> Field {
        Field(text.split('.').map(str::to_string).collect())
    }

    /// The field as written (`facts.os.family`): a projected row's key.
    pub fn text(&self) -> String {
        self.0.join(".")
    }
}

/// A filter. `and` and `or` chains are kept flat, so evaluating or
/// dropping one never recurses deeper than the query's nesting.
#[derive(Debug)]
pub enum Expr {
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    Cmp(Field, Op, Value),
    /// `field in [v, ...]`.
    In(Field, Vec<Value>),
    /// `field in entity[f] { ... }`: a subquery's values of its one field.
    InQuery(Field, Box<Query>),
    /// `field is null` (true) / `field is not null` (false).
    Null(Field, bool),
}

/// A comparison; regular expressions are compiled once, when parsed.
#[derive(Debug)]
pub enum Op {
    Eq,
    Ne,
    Match(regex::Regex),
    NoMatch(regex::Regex),
    Lt,
    Le,
    Gt,
    Ge,
}

/// A whole query.
#[derive(Debug)]
pub struct Query {
    pub entity: Entity,
    /// The projection; empty: every field of the entity.
    pub fields: Vec<Field>,
    pub filter: Option<Expr>,
    /// `order by`: fields, each ascending (false) or descending (true).
    pub order: Vec<(Field, bool)>,
    pub limit: Option<usize>,
    pub offset: Option<usize>,
}

impl Query {
    /// A query over `entity` with `filter` and nothing else.
    pub fn filter(entity: Entity, filter: Option<Expr>) -> Query {
        Query {
            entity,
            fields: Vec::new(),
            filter,
            order: Vec::new(),
            limit: None,
            offset: None,
        }
    }
}
