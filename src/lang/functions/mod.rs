//! The built-in functions: a [`Registry`] from name to implementation and
//! [`Signature`], one file per family ([`catalog`], [`control`],
//! [`iteration`], [`data`], [`templates`], [`strings`], [`collections`],
//! [`numbers`], [`conversion`], [`native`], [`native_modules`],
//! [`native_ports`], [`native_misc`], [`native_openstack`], [`native_remote`], [`external`],
//! [`random`], [`stdlib`], [`stdlib_a`], [`stdlib_b`], [`stdlib_crypto`], [`stdlib_validate`],
//! [`stdlib_catalog`], [`stdlib_formats`], [`stdlib_strings`], [`files`], with [`ruby_glob`] for
//! stdlib's `glob`). The registry checks the
//! argument count, the argument types and the block once, with Puppet's
//! messages, before an implementation runs; `ferry catalog functions`
//! lists it.
//!
//! The evaluator calls the registry through [`crate::lang::eval::Library`]
//! (`registry()` is what a compilation passes to `Evaluator::new`), so
//! nothing below this module depends on it.

pub mod catalog;
pub mod collections;
pub mod control;
pub mod conversion;
pub mod data;
pub mod external;
pub mod files;
pub mod iteration;
pub mod native;
pub mod native_misc;
pub mod native_modules;
pub mod native_openstack;
pub mod native_ports;
pub mod native_remote;
pub mod numbers;
pub mod random;
pub mod ruby_glob;
pub mod stdlib;
pub mod stdlib_a;
pub mod stdlib_b;
pub mod stdlib_catalog;
pub mod stdlib_crypto;
pub mod stdlib_formats;
pub mod stdlib_strings;
pub mod stdlib_validate;
pub mod strings;
pub mod templates;

use std::collections::HashMap;
use std::fmt;
use std::sync::LazyLock;

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator, Library};
use crate::lang::values::types::{self, PType};
use crate::lang::values::value::Value;

/// A built-in function's implementation. It runs after the registry
/// checked the call against the function's signature.
pub type Imp = fn(&mut Evaluator<'_>, Call<'_>) -> EvalResult<Value>;

/// The family a function belongs to (the file that implements it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Catalog,
    Control,
    Iteration,
    Data,
    Templates,
    Strings,
    Collections,
    Numbers,
    Conversion,
    Native,
    External,
    Random,
    Stdlib,
    Files,
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Family::Catalog => "catalog",
            Family::Control => "control",
            Family::Iteration => "iteration",
            Family::Data => "data",
            Family::Templates => "templates",
            Family::Strings => "strings",
            Family::Collections => "collections",
            Family::Numbers => "numbers",
            Family::Conversion => "conversion",
            Family::Native => "native",
            Family::External => "external",
            Family::Random => "random",
            Family::Stdlib => "stdlib",
            Family::Files => "files",
        };
        f.write_str(s)
    }
}

/// How many arguments a parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    Required,
    Optional,
    /// Any number, including none (`*$rest`).
    Repeated,
}

/// Whether a function takes a block (lambda).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Block {
    Never,
    Optional,
    Required,
}

/// One parameter of a signature.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: &'static str,
    pub ty: PType,
    pub count: Count,
}

/// Parameters, block and return type of a built-in function.
#[derive(Debug, Clone)]
pub struct Signature {
    pub params: Vec<Param>,
    pub block: Block,
    pub returns: &'static str,
}

impl Signature {
    /// The fewest arguments a call may pass.
    pub fn min_args(&self) -> usize {
        self.params
            .iter()
            .filter(|p| p.count == Count::Required)
            .count()
    }

    /// The most arguments a call may pass (`None`: no limit).
    pub fn max_args(&self) -> Option<usize> {
        if self.params.iter().any(|p| p.count == Count::Repeated) {
            None
        } else {
            Some(self.params.len())
        }
    }

    /// Each parameter written by `param`, then the block (`[optional,
    /// required]`).
    fn listed(&self, param: fn(&Param) -> String, block: [&str; 2]) -> Vec<String> {
        let mut parts: Vec<String> = self.params.iter().map(param).collect();
        match self.block {
            Block::Never => {}
            Block::Optional => parts.push(block[0].into()),
            Block::Required => parts.push(block[1].into()),
        }
        parts
    }

    /// The parameters as Puppet's `signature_string` lists them in a
    /// message: `String[1] name, Hash options?, Any rest*`.
    fn puppet_params(&self) -> String {
        let param = |p: &Param| match p.count {
            Count::Required => format!("{} {}", p.ty, p.name),
            Count::Optional => format!("{} {}?", p.ty, p.name),
            Count::Repeated => format!("{} {}*", p.ty, p.name),
        };
        self.listed(param, ["Callable block?", "Callable block"])
            .join(", ")
    }

    /// Check a call's arguments and block, with Puppet's messages.
    fn check(&self, name: &str, args: &[Value], has_block: bool) -> EvalResult<()> {
        let (min, max) = (self.min_args(), self.max_args());
        let n = args.len();
        if n < min || max.is_some_and(|m| n > m) {
            let plural = |k: usize| if k == 1 { "argument" } else { "arguments" };
            let want = match max {
                Some(0) => "no arguments".to_string(),
                Some(m) if m == min => format!("{min} {}", plural(min)),
                Some(m) => format!("between {min} and {m} arguments"),
                None => format!("at least {min} {}", plural(min)),
            };
            // Puppet's TypeMismatchDescriber: no arguments are "none".
            let got = if n == 0 {
                "none".to_string()
            } else {
                n.to_string()
            };
            return Err(plain(format!("'{name}' expects {want}, got {got}")).into());
        }
        let mut params = self.params.iter();
        let mut current = params.next();
        for v in args {
            let Some(p) = current else { break };
            if !types::is_instance(&p.ty, v) {
                if let Some(lines) = types::variant_rejections(&p.ty, v) {
                    let mut msg = format!("'{name}' expects ({})", self.puppet_params());
                    for l in lines {
                        msg.push_str(&format!("\n  rejected: parameter '{}' {l}", p.name));
                    }
                    return Err(plain(msg).into());
                }
                return Err(plain(format!(
                    "'{name}' parameter '{}' {}",
                    p.name,
                    types::mismatch(&p.ty, v)
                ))
                .into());
            }
            if p.count != Count::Repeated {
                current = params.next();
            }
        }
        match (self.block, has_block) {
            (Block::Required, false) => Err(plain(format!("'{name}' expects a block")).into()),
            (Block::Never, true) => Err(plain(format!("'{name}' does not expect a block")).into()),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Signature {
    /// Puppet's notation: `(String $str, Any $pattern?) >> Array`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let param = |p: &Param| match p.count {
            Count::Required => format!("{} ${}", p.ty, p.name),
            Count::Optional => format!("{} ${}?", p.ty, p.name),
            Count::Repeated => format!("{} *${}", p.ty, p.name),
        };
        let parts = self.listed(param, ["&$block?", "&$block"]);
        write!(f, "({}) >> {}", parts.join(", "), self.returns)
    }
}

/// A registered function.
pub struct Function {
    pub name: &'static str,
    pub family: Family,
    pub signature: Signature,
    imp: Imp,
}

/// Every built-in function by name.
#[derive(Default)]
pub struct Registry {
    functions: Vec<Function>,
    by_name: HashMap<&'static str, usize>,
}

impl Registry {
    /// The function registered as `name` (lower case).
    pub fn get(&self, name: &str) -> Option<&Function> {
        self.by_name.get(name).and_then(|&i| self.functions.get(i))
    }

    /// Every function meant for manifests (not the internal `__` ones),
    /// sorted by name.
    pub fn list(&self) -> Vec<&Function> {
        let mut all: Vec<&Function> = self
            .functions
            .iter()
            .filter(|f| !f.name.starts_with("__"))
            .collect();
        all.sort_by_key(|f| f.name);
        all
    }
}

impl Library for Registry {
    fn call(&self, ev: &mut Evaluator<'_>, call: Call<'_>) -> Option<EvalResult<Value>> {
        let Some(f) = self.get(call.name) else {
            return conversion::type_constructor(call);
        };
        Some(
            f.signature
                .check(call.name, &call.args, call.lambda.is_some())
                .and_then(|()| (f.imp)(ev, call)),
        )
    }

    fn lookup_param(&self, ev: &mut Evaluator<'_>, key: &str) -> EvalResult<Option<Value>> {
        ev.hiera_lookup(key)
    }
}

/// The registry of every built-in function, built once.
pub fn registry() -> &'static Registry {
    static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
        let mut b = Builder::default();
        catalog::register(&mut b);
        control::register(&mut b);
        iteration::register(&mut b);
        data::register(&mut b);
        templates::register(&mut b);
        strings::register(&mut b);
        collections::register(&mut b);
        numbers::register(&mut b);
        conversion::register(&mut b);
        native::register(&mut b);
        native_modules::register(&mut b);
        native_ports::register(&mut b);
        external::register(&mut b);
        random::register(&mut b);
        stdlib::register(&mut b);
        stdlib_a::register(&mut b);
        stdlib_b::register(&mut b);
        stdlib_crypto::register(&mut b);
        stdlib_validate::register(&mut b);
        stdlib_catalog::register(&mut b);
        stdlib_formats::register(&mut b);
        native_misc::register(&mut b);
        native_openstack::register(&mut b);
        native_remote::register(&mut b);
        iteration::register_core(&mut b);
        numbers::register_core(&mut b);
        conversion::register_core(&mut b);
        data::register_core(&mut b);
        stdlib_strings::register(&mut b);
        files::register(&mut b);
        strings::register_digests(&mut b);
        control::register_import(&mut b);
        conversion::register_strftime(&mut b);
        strings::register_scanf(&mut b);
        b.0
    });
    &REGISTRY
}

/// Collects the families' functions into a registry.
#[derive(Default)]
pub struct Builder(Registry);

impl Builder {
    /// Register `imp` under each of `names` with one signature.
    pub fn add(&mut self, names: &[&'static str], family: Family, signature: Signature, imp: Imp) {
        for &name in names {
            self.0.by_name.insert(name, self.0.functions.len());
            self.0.functions.push(Function {
                name,
                family,
                signature: signature.clone(),
                imp,
            });
        }
    }
}

/// Signature builder: `sig("Array").req("str", string()).opt("pattern", any())`.
pub fn sig(returns: &'static str) -> Signature {
    Signature {
        params: Vec::new(),
        block: Block::Never,
        returns,
    }
}

impl Signature {
    /// A required parameter.
    pub fn req(mut self, name: &'static str, ty: PType) -> Self {
        self.params.push(Param {
            name,
            ty,
            count: Count::Required,
        });
        self
    }

    /// An optional parameter.
    pub fn opt(mut self, name: &'static str, ty: PType) -> Self {
        self.params.push(Param {
            name,
            ty,
            count: Count::Optional,
        });
        self
    }

    /// Any number of further arguments.
    pub fn rest(mut self, name: &'static str, ty: PType) -> Self {
        self.params.push(Param {
            name,
            ty,
            count: Count::Repeated,
        });
        self
    }

    /// The function takes a block, required or optional.
    pub fn block(mut self, block: Block) -> Self {
        self.block = block;
        self
    }
}

/// `Any`.
pub fn any() -> PType {
    PType::Any
}

/// `String`.
pub fn string() -> PType {
    PType::String(0, i64::MAX)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::lang::error::Loc;
    use crate::lang::eval::ScopeId;
    use crate::lang::loader::FsLoader;

    /// Call a function the way a manifest does, on an empty catalog.
    pub(crate) fn call(name: &str, args: &[Value]) -> EvalResult<Value> {
        let loader = FsLoader;
        let mut ev = Evaluator::new(
            &loader,
            Default::default(),
            None,
            "node1",
            &serde_json::Map::new(),
            registry(),
        );
        let loc = Loc::new(&Arc::from("test.pp"), 1, 1);
        ev.call_function(name, args.to_vec(), None, ScopeId::TOP, &loc)
    }

    #[test]
    fn checks_arity_types_and_blocks_once() {
        let msg = |r: EvalResult<Value>| {
            r.map_err(|e| e.into_error().message)
                .err()
                .unwrap_or_default()
        };
        assert!(
            msg(call("versioncmp", &[Value::str("1")]))
                .ends_with("'versioncmp' expects 2 arguments, got 1")
        );
        assert!(
            msg(call("versioncmp", &[Value::Undef, Value::str("1")]))
                .ends_with("'versioncmp' parameter 'a' expects a String value, got Undef")
        );
        assert!(
            msg(call("join", &[])).ends_with("'join' expects between 1 and 2 arguments, got none")
        );
        assert!(
            msg(call("concat", &[])).ends_with("'concat' expects at least 1 argument, got none")
        );
        assert!(msg(call("each", &[Value::Array(vec![])])).ends_with("'each' expects a block"));
        assert_eq!(
            call("versioncmp", &[Value::str("1.10"), Value::str("1.9")]).ok(),
            Some(Value::Int(1))
        );
    }

    #[test]
    fn every_function_is_listed_with_its_signature() {
        let all = registry().list();
        assert!(all.len() > 100, "{} functions", all.len());
        assert!(all.windows(2).all(|w| w[0].name < w[1].name));
        let split = registry().get("split").map(|f| f.signature.to_string());
        assert_eq!(
            split.as_deref(),
            Some("(String $str, Any $pattern?) >> Array[String]")
        );
        assert!(all.iter().all(|f| !f.name.starts_with("__")));
    }
}
