//! Iteration functions: `each`, `map`, `filter`, `reject`, `any`, `all`,
//! `find`, `reduce`, `slice`, `each_with_index`, `with`, `then`, `lest`,
//! the iterator functions `reverse_each` and `step`, and Puppet core's
//! `index`, `group_by`, `partition` and `tree_each`. Without a lambda,
//! `reverse_each`, `step` and `tree_each` return an `Iterator` value (its
//! elements computed at once, as nothing in the language can observe the
//! laziness); `each`, `map`, `Array(...)` and friends consume it, and a
//! resource attribute refuses it as Puppet does. With a lambda they call
//! it for every element and return `undef` (`tree_each` its tree).

use crate::lang::error::{LangError, plain};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Block, Builder, Family, any, sig};
use crate::lang::syntax::ast::Lambda;
use crate::lang::values::types::PType;
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Iteration;
    let over = |ret| sig(ret).req("iterable", any()).block(Block::Required);
    b.add(&["each"], f, over("Any"), iterate);
    b.add(&["map"], f, over("Array"), iterate);
    b.add(&["filter", "reject"], f, over("Collection"), iterate);
    b.add(&["any", "all"], f, over("Boolean"), iterate);
    b.add(&["find"], f, over("Any"), iterate);
    b.add(
        &["reduce"],
        f,
        sig("Any")
            .req("iterable", any())
            .opt("memo", any())
            .block(Block::Required),
        reduce,
    );
    b.add(
        &["slice", "each_with_index"],
        f,
        sig("Undef")
            .req("iterable", any())
            .opt("size", any())
            .block(Block::Required),
        slice,
    );
    b.add(
        &["with"],
        f,
        sig("Any").rest("args", any()).block(Block::Required),
        with,
    );
    b.add(
        &["then"],
        f,
        sig("Any").req("value", any()).block(Block::Required),
        then,
    );
    b.add(
        &["lest"],
        f,
        sig("Any").req("value", any()).block(Block::Required),
        lest,
    );
    b.add(
        &["reverse_each"],
        f,
        sig("Variant[Iterator, Undef]")
            .req("iterable", any())
            .block(Block::Optional),
        iterator,
    );
    b.add(
        &["step"],
        f,
        sig("Variant[Iterator, Undef]")
            .req("iterable", any())
            .req("step", any())
            .block(Block::Optional),
        iterator,
    );
}

/// Iterate a value as Puppet does: arrays by element, hashes by [k, v],
/// integers as 0..n, strings by character.
pub(crate) fn iter_items(v: &Value) -> Result<Vec<(Value, Value)>, LangError> {
    Ok(match v {
        Value::Array(a) | Value::Iterator(a) => a
            .iter()
            .enumerate()
            .map(|(i, x)| (Value::Int(i as i64), x.clone()))
            .collect(),
        Value::Hash(h) => h.clone(),
        Value::Int(n) => (0..(*n).clamp(0, 1_000_000))
            .map(|i| (Value::Int(i), Value::Int(i)))
            .collect(),
        Value::Type(PType::Integer(lo, hi))
            if *lo > i64::MIN && *hi < i64::MAX && hi.saturating_sub(*lo) <= 1_000_000 =>
        {
            (*lo..=*hi)
                .enumerate()
                .map(|(i, x)| (Value::Int(i as i64), Value::Int(x)))
                .collect()
        }
        Value::Str(s) => s
            .chars()
            .enumerate()
            .map(|(i, c)| (Value::Int(i as i64), Value::Str(c.to_string())))
            .collect(),
        other => {
            // A plan's ResultSet iterates over its results.
            if let Some(items) =
                crate::lang::values::plan::as_object(other).and_then(|o| o.elements())
            {
                return Ok(items
                    .into_iter()
                    .enumerate()
                    .map(|(i, x)| (Value::Int(i as i64), x))
                    .collect());
            }
            return Err(plain(format!(
                "expects an Iterable value, got {}",
                other.type_name()
            )));
        }
    })
}

/// Puppet's dispatch failure of `each`, `map`, `filter`, `any` and `all`
/// (four signatures: a Hash or an Iterable, a block of two or one
/// parameters) for an argument that is neither.
fn hash_or_iterable_mismatch(name: &str, got: &str) -> String {
    let mut m = format!(
        "The function '{name}' was called with arguments it does not accept. It expects one of:"
    );
    for (ty, param, article) in [("Hash", "hash", "a"), ("Iterable", "enumerable", "an")] {
        for n in [2, 1] {
            m.push_str(&format!(
                "\n  ({ty} {param}, Callable[{n}, {n}] block)\n    rejected: parameter '{param}' expects {article} {ty} value, got {got}"
            ));
        }
    }
    m
}

/// Lambda arguments for element (k, v): one param gets v (or [k, v] for
/// hashes), two params get k and v.
fn lambda_args(l: &Lambda, k: &Value, v: &Value, is_hash: bool) -> Vec<Value> {
    if l.params.len() >= 2 {
        vec![k.clone(), v.clone()]
    } else if is_hash {
        vec![Value::Array(vec![k.clone(), v.clone()])]
    } else {
        vec![v.clone()]
    }
}

/// `each`, `map`, `filter`, `reject`, `any`, `all` and `find`.
fn iterate(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    let name = c.name;
    let a0 = c.arg(0);
    let is_hash = matches!(a0, Value::Hash(_));
    if matches!(name, "each" | "map" | "filter" | "any" | "all")
        && matches!(
            a0,
            Value::Undef | Value::Bool(_) | Value::Float(_) | Value::Default
        )
    {
        return Err(plain(hash_or_iterable_mismatch(name, &a0.type_name())).into());
    }
    let items = iter_items(&a0)?;
    let mut out_arr = Vec::new();
    let mut out_hash = Vec::new();
    for (k, v) in items {
        let Some(r) = ev.lambda_step(l, lambda_args(l, &k, &v, is_hash), c.scope)? else {
            break;
        };
        match name {
            "map" => out_arr.push(r),
            "filter" | "reject" if r.truthy() == (name == "filter") => {
                if is_hash {
                    out_hash.push((k, v));
                } else {
                    out_arr.push(v);
                }
            }
            "any" if r.truthy() => return Ok(Value::Bool(true)),
            "all" if !r.truthy() => return Ok(Value::Bool(false)),
            "find" if r.truthy() => {
                return Ok(if is_hash { Value::Array(vec![k, v]) } else { v });
            }
            _ => {}
        }
    }
    Ok(match name {
        "each" => a0,
        "any" => Value::Bool(false),
        "all" => Value::Bool(true),
        "find" => Value::Undef,
        "filter" | "reject" if is_hash => Value::Hash(out_hash),
        _ => Value::Array(out_arr),
    })
}

fn reduce(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    let a0 = c.arg(0);
    let is_hash = matches!(a0, Value::Hash(_));
    let items = iter_items(&a0)?;
    let mut it = items
        .into_iter()
        .map(|(k, v)| if is_hash { Value::Array(vec![k, v]) } else { v });
    let mut acc = match c.args.get(1) {
        Some(init) => init.clone(),
        None => it.next().unwrap_or(Value::Undef),
    };
    for v in it {
        match ev.lambda_step(l, vec![acc.clone(), v], c.scope)? {
            Some(next) => acc = next,
            None => break,
        }
    }
    Ok(acc)
}

/// `slice(n)` and `each_with_index`: the lambda gets chunks of `n`.
fn slice(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    let n = match c.args.get(1) {
        Some(Value::Int(n)) if *n > 0 => *n as usize,
        _ => 1,
    };
    let items: Vec<Value> = iter_items(&c.arg(0))?.into_iter().map(|(_, v)| v).collect();
    for chunk in items.chunks(n) {
        let arg = if n == 1 {
            chunk.first().cloned().unwrap_or(Value::Undef)
        } else {
            Value::Array(chunk.to_vec())
        };
        if ev.lambda_step(l, vec![arg], c.scope)?.is_none() {
            break;
        }
    }
    Ok(Value::Undef)
}

fn with(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    ev.call_lambda(l, c.args, c.scope)
}

fn then(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    let a0 = c.arg(0);
    if a0.is_undef() {
        Ok(Value::Undef)
    } else {
        ev.call_lambda(l, vec![a0], c.scope)
    }
}

fn lest(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    let a0 = c.arg(0);
    if a0.is_undef() {
        ev.call_lambda(l, vec![], c.scope)
    } else {
        Ok(a0)
    }
}

/// `reverse_each` and `step`.
fn iterator(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let (name, args, lambda, sc) = (c.name, &c.args, c.lambda, c.scope);
    let a0 = args.first().cloned().unwrap_or(Value::Undef);
    let is_hash = matches!(a0, Value::Hash(_));
    let mut items: Vec<Value> = iter_items(&a0)
        .map_err(|e| plain(format!("'{name}' parameter 'iterable' {}", e.message)))?
        .into_iter()
        .map(|(k, v)| if is_hash { Value::Array(vec![k, v]) } else { v })
        .collect();
    if name == "reverse_each" {
        items.reverse();
    } else {
        let n = match c.arg(1) {
            Value::Int(n) if n >= 1 => n as usize,
            Value::Int(n) => {
                return Err(plain(format!(
                    "'step' parameter 'step' expects an Integer[1] value, got Integer[{n}, {n}]"
                ))
                .into());
            }
            other => {
                return Err(plain(format!(
                    "'step' parameter 'step' expects an Integer value, got {}",
                    other.type_name()
                ))
                .into());
            }
        };
        items = items.into_iter().step_by(n).collect();
    }
    let Some(l) = lambda else {
        return Ok(Value::Iterator(items));
    };
    for item in items {
        if ev.lambda_step(l, vec![item], sc)?.is_none() {
            break;
        }
    }
    Ok(Value::Undef)
}

// ---- index, group_by, partition, tree_each (Puppet core) ----

pub fn register_core(b: &mut Builder) {
    let f = Family::Iteration;
    b.add(
        &["index"],
        f,
        sig("Any")
            .req("collection", any())
            .opt("match", any())
            .block(Block::Optional),
        index,
    );
    let grouping = |ret| sig(ret).req("collection", any()).block(Block::Required);
    b.add(&["group_by"], f, grouping("Hash"), group_or_partition);
    b.add(
        &["partition"],
        f,
        grouping("Tuple[Array, Array]"),
        group_or_partition,
    );
    b.add(
        &["tree_each"],
        f,
        sig("Any")
            .req("tree", any())
            .opt("options", any())
            .block(Block::Optional),
        tree_each,
    );
}

/// Ruby's `==` on Puppet values: like Puppet's `==` but strings compare
/// case-sensitively, also inside arrays and hashes.
fn ruby_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| ruby_equal(p, q))
        }
        (Value::Hash(x), Value::Hash(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| {
                    y.iter()
                        .any(|(k2, v2)| ruby_equal(k, k2) && ruby_equal(v, v2))
                })
        }
        _ => crate::lang::values::value::values_equal(a, b),
    }
}

/// `index`: the index (or hash key) of the first element equal to a value
/// or accepted by a lambda of one (element) or two (index or key, element)
/// parameters; in a string, the character offset of a substring or regexp.
fn index(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    if c.lambda.is_none() {
        if let (Value::Str(s), Some(m @ (Value::Str(_) | Value::Regex(_)))) = (&a0, c.args.get(1)) {
            return string_index(s, m);
        }
        if c.args.len() < 2 {
            return Err(plain(index_mismatch(&a0, c.args.len(), false)).into());
        }
    } else if c.args.len() > 1 {
        return Err(plain(index_mismatch(&a0, c.args.len(), true)).into());
    }
    if !is_iterable(&a0) {
        return Err(plain(index_mismatch(&a0, c.args.len(), c.lambda.is_some())).into());
    }
    let wanted = c.arg(1);
    for (k, v) in iter_items(&a0)? {
        let hit = match c.lambda {
            Some(l) => {
                let args = if l.params.len() >= 2 {
                    vec![k.clone(), v.clone()]
                } else {
                    vec![v.clone()]
                };
                ev.call_lambda(l, args, c.scope)?.truthy()
            }
            None => ruby_equal(&v, &wanted),
        };
        if hit {
            return Ok(k);
        }
    }
    Ok(Value::Undef)
}

/// Whether Puppet's `Iterable` type accepts `v`.
fn is_iterable(v: &Value) -> bool {
    matches!(
        v,
        Value::Array(_) | Value::Hash(_) | Value::Str(_) | Value::Int(_) | Value::Iterator(_)
    ) || matches!(v, Value::Type(PType::Integer(lo, hi)) if *lo > i64::MIN && *hi < i64::MAX)
}

/// Ruby's `String#index` of a substring or regexp, in characters.
fn string_index(s: &str, m: &Value) -> EvalResult<Value> {
    let byte = match m {
        Value::Regex(p) => crate::lang::values::regex::compile_regex(p)
            .map_err(|e| plain(e.0))?
            .find(s)
            .map(|x| x.start()),
        other => s.find(other.to_s().as_str()),
    };
    Ok(byte.map_or(Value::Undef, |b| {
        Value::Int(s.get(..b).map_or(0, |p| p.chars().count()) as i64)
    }))
}

/// Puppet's dispatch failure of `index` (six signatures): for each, the
/// argument count, then the first parameter's type, then the block.
fn index_mismatch(a0: &Value, n: usize, block: bool) -> String {
    let got = a0.type_name();
    let mut m = String::from(
        "The function 'index' was called with arguments it does not accept. It expects one of:",
    );
    let is_hash = matches!(a0, Value::Hash(_));
    let is_str = matches!(a0, Value::Str(_));
    let signatures = [
        (
            "Hash hash, Callable[2, 2] block",
            1,
            "hash",
            "a Hash",
            is_hash,
            true,
        ),
        (
            "Hash hash, Callable[1, 1] block",
            1,
            "hash",
            "a Hash",
            is_hash,
            true,
        ),
        (
            "Iterable enumerable, Callable[2, 2] block",
            1,
            "enumerable",
            "an Iterable",
            is_iterable(a0),
            true,
        ),
        (
            "Iterable enumerable, Callable[1, 1] block",
            1,
            "enumerable",
            "an Iterable",
            is_iterable(a0),
            true,
        ),
        (
            "String str, Variant[String, Regexp] match",
            2,
            "str",
            "a String",
            is_str,
            false,
        ),
        (
            "Iterable enumerable, Any match",
            2,
            "enumerable",
            "an Iterable",
            is_iterable(a0),
            false,
        ),
    ];
    for (text, want, param, ty, accepted, needs_block) in signatures {
        let why = if n != want {
            format!(
                "expects {want} argument{}, got {n}",
                if want == 1 { "" } else { "s" }
            )
        } else if !accepted {
            format!("parameter '{param}' expects {ty} value, got {got}")
        } else if needs_block && !block {
            "expects a block".to_string()
        } else if !needs_block && block {
            "does not expect a block".to_string()
        } else {
            "parameter 'match' expects a value of type String or Regexp".to_string()
        };
        m.push_str(&format!("\n  ({text})\n    rejected: {why}"));
    }
    m
}

/// `group_by` and `partition` over an array or hash, with a lambda of one
/// parameter (the element, `[key, value]` for a hash) or two (index or
/// key, and the element or value).
fn group_or_partition(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    let a0 = c.arg(0);
    let is_hash = match a0 {
        Value::Hash(_) => true,
        Value::Array(_) => false,
        ref other => return Err(plain(grouping_mismatch(c.name, &other.type_name())).into()),
    };
    let mut groups: Vec<(Value, Vec<Value>)> = Vec::new();
    let mut parts = (Vec::new(), Vec::new());
    for (k, v) in iter_items(&a0)? {
        let element = if is_hash {
            Value::Array(vec![k.clone(), v.clone()])
        } else {
            v.clone()
        };
        let args = if l.params.len() >= 2 {
            vec![k, v]
        } else {
            vec![element.clone()]
        };
        let r = ev.call_lambda(l, args, c.scope)?;
        if c.name == "partition" {
            if r.truthy() {
                &mut parts.0
            } else {
                &mut parts.1
            }
            .push(element);
        } else if let Some((_, g)) = groups.iter_mut().find(|(key, _)| ruby_equal(key, &r)) {
            g.push(element);
        } else {
            groups.push((r, vec![element]));
        }
    }
    Ok(if c.name == "partition" {
        Value::Array(vec![Value::Array(parts.0), Value::Array(parts.1)])
    } else {
        Value::Hash(
            groups
                .into_iter()
                .map(|(k, g)| (k, Value::Array(g)))
                .collect(),
        )
    })
}

/// Puppet's dispatch failure of `group_by` and `partition` (three
/// signatures) for an argument that is not a collection.
fn grouping_mismatch(name: &str, got: &str) -> String {
    let mut m = format!(
        "The function '{name}' was called with arguments it does not accept. It expects one of:"
    );
    for (ty, param, n) in [
        ("Collection", "collection", 1),
        ("Array", "array", 2),
        ("Collection", "collection", 2),
    ] {
        let article = if ty == "Array" { "an" } else { "a" };
        m.push_str(&format!(
            "\n  ({ty} {param}, Callable[{n}, {n}] block)\n    rejected: parameter '{param}' expects {article} {ty} value, got {got}"
        ));
    }
    m
}

/// The type of `tree_each`'s options.
const TREE_OPTIONS: &str = "Struct[{container_type => Optional[Type], \
    include_root => Optional[Boolean], include_containers => Optional[Boolean], \
    include_values => Optional[Boolean], order => Optional[Enum[depth_first, breadth_first]], \
    include_refs => Optional[Boolean]}]";

/// `tree_each`'s options.
struct TreeOptions {
    depth_first: bool,
    root: bool,
    containers: bool,
    values: bool,
    container_type: Option<PType>,
}

impl TreeOptions {
    fn from_value(v: &Value) -> Result<TreeOptions, LangError> {
        let empty = Vec::new();
        let h = match v {
            Value::Hash(h) => h,
            _ => &empty,
        };
        let flag = |k: &str| match crate::lang::values::value::hash_get_str(h, k) {
            Some(Value::Bool(b)) => *b,
            _ => true,
        };
        let container_type = match crate::lang::values::value::hash_get_str(h, "container_type") {
            Some(Value::Type(t)) => {
                if !matches!(t, PType::Array(..) | PType::Hash(..)) {
                    return Err(plain(format!(
                        "Only Array, Hash, and Object types can be used as container types. Got {t}"
                    )));
                }
                Some(t.clone())
            }
            _ => None,
        };
        let containers = flag("include_containers");
        let values = flag("include_values");
        if !containers && !values {
            return Err(plain(
                "Options 'include_containers' and 'include_values' cannot both be false",
            ));
        }
        Ok(TreeOptions {
            depth_first: !matches!(
                crate::lang::values::value::hash_get_str(h, "order"),
                Some(Value::Str(o)) if o == "breadth_first"
            ),
            root: containers && flag("include_root"),
            containers,
            values,
            container_type,
        })
    }

    /// The children of `v` when it is a container: (index or key, value).
    fn children(&self, v: &Value) -> Option<Vec<(Value, Value)>> {
        let is_container = match &self.container_type {
            Some(t) => crate::lang::values::types::is_instance(t, v),
            None => true,
        };
        match v {
            Value::Array(_) | Value::Hash(_) if is_container => iter_items(v).ok(),
            _ => None,
        }
    }

    /// Every (path, value) of the tree, in the order asked for.
    fn walk(&self, root: &Value) -> Vec<(Vec<Value>, Value)> {
        let mut out = Vec::new();
        if self.root {
            out.push((Vec::new(), root.clone()));
        }
        let Some(top) = self.children(root) else {
            return out;
        };
        if self.depth_first {
            self.depth_first(Vec::new(), top, &mut out);
        } else {
            let mut queue = std::collections::VecDeque::from([(Vec::new(), top)]);
            while let Some((path, items)) = queue.pop_front() {
                for (k, v) in items {
                    let mut p: Vec<Value> = path.clone();
                    p.push(k);
                    match self.children(&v) {
                        Some(grand) => {
                            queue.push_back((p.clone(), grand));
                            if self.containers {
                                out.push((p, v));
                            }
                        }
                        // Puppet's breadth-first walk ignores `include_values`.
                        None => out.push((p, v)),
                    }
                }
            }
        }
        out
    }

    fn depth_first(
        &self,
        path: Vec<Value>,
        items: Vec<(Value, Value)>,
        out: &mut Vec<(Vec<Value>, Value)>,
    ) {
        for (k, v) in items {
            let mut p = path.clone();
            p.push(k);
            match self.children(&v) {
                Some(grand) => {
                    if self.containers {
                        out.push((p.clone(), v));
                    }
                    self.depth_first(p, grand, out);
                }
                None if self.values => out.push((p, v)),
                None => {}
            }
        }
    }
}

/// `tree_each`: walk nested arrays and hashes, calling a lambda with
/// (path, value) or the value; without a lambda, an iterator of
/// `[path, value]`.
fn tree_each(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let tree = c.arg(0);
    let tree = match tree {
        Value::Iterator(items) => Value::Array(items),
        other => other,
    };
    if !matches!(tree, Value::Array(_) | Value::Hash(_)) {
        return Err(plain(format!(
            "'tree_each' parameter 'tree' expects a value of type Iterator, Array, Hash, or Object, got {}",
            tree.type_name()
        ))
        .into());
    }
    let options = c.arg(1);
    let expr = crate::lang::syntax::parser::parse_type(TREE_OPTIONS, &c.loc.file)
        .map_err(crate::lang::eval::control::Unwind::from)?;
    if let Value::Type(t) = ev.eval(&expr, c.scope)?
        && !options.is_undef()
        && !crate::lang::values::types::is_instance(&t, &options)
    {
        return Err(plain(format!(
            "'tree_each' parameter 'options' {}",
            crate::lang::values::types::mismatch(&t, &options)
        ))
        .into());
    }
    let options = TreeOptions::from_value(&options)?;
    let walked = options.walk(&tree);
    let Some(l) = c.lambda else {
        return Ok(Value::Iterator(
            walked
                .into_iter()
                .map(|(p, v)| Value::Array(vec![Value::Array(p), v]))
                .collect(),
        ));
    };
    for (p, v) in walked {
        let args = if l.params.len() >= 2 {
            vec![Value::Array(p), v]
        } else {
            vec![v]
        };
        if ev.lambda_step(l, args, c.scope)?.is_none() {
            break;
        }
    }
    Ok(c.arg(0))
}
