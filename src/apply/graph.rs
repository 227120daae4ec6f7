//! The order a catalog is applied in, as Puppet's relationship graph gives
//! it. Containers (stages, classes, defined-type instances, nodes) are not
//! applied: each becomes two empty markers, "admissible" before everything
//! it contains and "completed" after it, as Puppet's whits do, and every
//! relationship to or from a container is made to or from those markers.
//! Relationships come from the `before`, `require`, `notify` and
//! `subscribe` parameters, plus the autorequires each type declares
//! ([`autorequires`]). The resources that are applied (the leaves) are
//! visited in dependency order, ties broken by Puppet's manifest order
//! (catalog order; a container's markers take its place). For each leaf
//! the result names every leaf upstream of it (a failure there skips it)
//! and the leaves whose changes refresh it (`notify`/`subscribe`, also
//! through containers).

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use serde_json::Value;

use super::catalog::{ApplyCatalog, Resource};

/// One resource to apply, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Index into the catalog's resources.
    pub resource: usize,
    /// Every applied resource upstream of this one (catalog indices): if
    /// one of them fails, this one is skipped.
    pub upstream: Vec<usize>,
    /// Applied resources whose events refresh this one (catalog indices).
    pub refreshed_by: Vec<usize>,
    /// The containers from the outermost in (Puppet's containment path,
    /// without the resource itself): `Stage[main]`, `Main`, `Foo[x]`.
    pub containers: Vec<usize>,
}

/// The catalog's leaves in the order they are applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub steps: Vec<Step>,
}

/// A catalog that cannot be ordered.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum GraphError {
    #[error("Could not find resource '{target}' for relationship {direction} '{source_ref}'")]
    Missing {
        target: String,
        direction: &'static str,
        source_ref: String,
    },
    #[error("Found {count} dependency {noun}:\n{cycles}", noun = if *.count == 1 { "cycle" } else { "cycles" })]
    Cycle { count: usize, cycles: String },
    #[error("{resource}: {param} must be a resource reference such as File['/x'], not {value}")]
    BadReference {
        resource: String,
        param: String,
        value: String,
    },
}

/// Whether a resource only groups others (and is not itself applied).
pub fn is_container(r: &Resource, has_children: bool) -> bool {
    has_children
        || matches!(
            r.type_key().as_str(),
            "class" | "stage" | "node" | "component"
        )
        || r.kind.as_deref() == Some("defined_type")
}

/// The name Puppet uses for a container in paths: a class by its title
/// with each segment capitalized (`Main`, `Foo::Bar`), anything else by
/// its reference.
pub fn path_segment(r: &Resource) -> String {
    if r.type_key() == "class" {
        r.title
            .split("::")
            .map(|s| {
                let mut c = s.chars();
                match c.next() {
                    Some(f) => f.to_uppercase().chain(c).collect::<String>(),
                    None => String::new(),
                }
            })
            .collect::<Vec<_>>()
            .join("::")
    } else {
        r.reference()
    }
}

/// Splits `Type[title]` (the type in any case).
pub fn parse_reference(s: &str) -> Option<(String, String)> {
    let open = s.find('[')?;
    let inner = s.get(open + 1..)?.strip_suffix(']')?;
    let ty = s.get(..open)?;
    if ty.is_empty() {
        return None;
    }
    let inner = inner
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .or_else(|| inner.strip_prefix('"').and_then(|t| t.strip_suffix('"')))
        .unwrap_or(inner);
    Some((ty.to_ascii_lowercase(), inner.to_string()))
}

/// The parameter naming a resource type's identity, when it is not
/// `name`: resources can be referred to by it as well as by title.
fn namevar(type_key: &str) -> &'static str {
    match type_key {
        "file" => "path",
        "exec" => "command",
        "mount" | "host" | "user" | "group" | "package" | "service" | "cron" | "notify" => "name",
        _ => "name",
    }
}

/// Finds resources by reference, by title or by namevar.
struct Index {
    by_ref: HashMap<(String, String), usize>,
}

impl Index {
    fn new(c: &ApplyCatalog) -> Index {
        let mut by_ref = HashMap::new();
        for (i, r) in c.resources.iter().enumerate() {
            let key = r.type_key();
            let title = if key == "class" {
                r.title.to_ascii_lowercase()
            } else {
                r.title.clone()
            };
            by_ref.insert((key.clone(), title), i);
            if let Some(Value::String(name)) = r.param(namevar(&key)) {
                by_ref.entry((key.clone(), name.clone())).or_insert(i);
            }
            if key == "file"
                && let Some(trimmed) = r.title.strip_suffix('/').filter(|t| !t.is_empty())
            {
                by_ref.entry((key, trimmed.to_string())).or_insert(i);
            }
        }
        Index { by_ref }
    }

    fn find(&self, ty: &str, title: &str) -> Option<usize> {
        let title = if ty == "class" {
            title.trim_start_matches("::").to_ascii_lowercase()
        } else {
            title.to_string()
        };
        self.by_ref.get(&(ty.to_string(), title)).copied()
    }
}

/// Relationship edges of the graph between resources: (from, to, refresh).
type RelEdge = (usize, usize, bool);

/// Reads the relationship metaparameters of every resource.
fn relationships(c: &ApplyCatalog, index: &Index) -> Result<Vec<RelEdge>, GraphError> {
    let mut out = Vec::new();
    for (i, r) in c.resources.iter().enumerate() {
        for (param, forward, refresh, direction) in [
            ("before", true, false, "before"),
            ("notify", true, true, "notify"),
            ("require", false, false, "require"),
            ("subscribe", false, true, "subscribe"),
        ] {
            let Some(v) = r.param(param) else { continue };
            let items: Vec<&Value> = match v {
                Value::Array(a) => a.iter().collect(),
                v => vec![v],
            };
            for item in items {
                let Value::String(s) = item else {
                    return Err(GraphError::BadReference {
                        resource: r.reference(),
                        param: param.into(),
                        value: item.to_string(),
                    });
                };
                let (ty, title) = parse_reference(s).ok_or_else(|| GraphError::BadReference {
                    resource: r.reference(),
                    param: param.into(),
                    value: format!("'{s}'"),
                })?;
                let j = index.find(&ty, &title).ok_or_else(|| GraphError::Missing {
                    target: s.clone(),
                    direction,
                    source_ref: r.reference(),
                })?;
                out.push(if forward {
                    (i, j, refresh)
                } else {
                    (j, i, refresh)
                });
            }
        }
    }
    Ok(out)
}

/// The edges a type adds by itself (Puppet's autorequire): a file needs
/// its nearest managed parent directory, and the user and group that own
/// it; an exec its cwd, user and group; anything with `user`/`group`
/// parameters the user and group resources of those names; a mount the
/// mounts above it, and it comes before the files below it.
pub fn autorequires(
    c: &ApplyCatalog,
    index_of: &dyn Fn(&str, &str) -> Option<usize>,
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let text = |r: &Resource, p: &str| r.param(p).and_then(Value::as_str).map(String::from);
    for (i, r) in c.resources.iter().enumerate() {
        let mut add = |ty: &str, title: &str| {
            if let Some(j) = index_of(ty, title)
                && j != i
            {
                out.push((j, i));
            }
        };
        match r.type_key().as_str() {
            "file" => {
                let path = text(r, "path").unwrap_or_else(|| r.title.clone());
                let mut p = std::path::Path::new(path.trim_end_matches('/'));
                while let Some(parent) = p.parent() {
                    let s = parent.to_string_lossy();
                    if s.is_empty() {
                        break;
                    }
                    if index_of("file", &s).is_some() {
                        add("file", &s);
                        break;
                    }
                    p = parent;
                }
                if let Some(o) = text(r, "owner") {
                    add("user", &o);
                }
                if let Some(g) = text(r, "group") {
                    add("group", &g);
                }
            }
            "exec" => {
                if let Some(cwd) = text(r, "cwd") {
                    add("file", &cwd);
                }
                if let Some(u) = text(r, "user") {
                    add("user", &u);
                }
                if let Some(g) = text(r, "group") {
                    add("group", &g);
                }
            }
            "user" => {
                if let Some(g) = text(r, "gid") {
                    add("group", &g);
                }
                if let Some(Value::Array(groups)) = r.param("groups") {
                    for g in groups.iter().filter_map(Value::as_str) {
                        add("group", g);
                    }
                }
            }
            // stdlib's file_line: the file it edits.
            "file_line" => {
                if let Some(path) = text(r, "path") {
                    add("file", &path);
                }
            }
            // inifile's ini_setting: the directory the file is in.
            "ini_setting" => {
                if let Some(path) = text(r, "path")
                    && let Some(parent) = std::path::Path::new(&path).parent()
                {
                    add("file", &parent.to_string_lossy());
                }
            }
            "cron" | "ssh_authorized_key" => {
                if let Some(u) = text(r, "user") {
                    add("user", &u);
                }
            }
            "mount" => {
                // Every mount above it; and it comes before the files
                // below it (Puppet's autobefore).
                let name = text(r, "name").unwrap_or_else(|| r.title.clone());
                let name = name.trim_end_matches('/');
                let mut p = std::path::Path::new(name);
                while let Some(parent) = p.parent() {
                    add("mount", &parent.to_string_lossy());
                    p = parent;
                }
                if !name.is_empty() {
                    let below = format!("{name}/");
                    for (j, f) in c.resources.iter().enumerate() {
                        let path = text(f, "path").unwrap_or_else(|| f.title.clone());
                        if f.type_key() == "file"
                            && path.len() > below.len()
                            && path.starts_with(&below)
                        {
                            out.push((i, j));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Computes the order a catalog is applied in.
pub fn order(c: &ApplyCatalog, deferred: &dyn Fn(&Resource) -> bool) -> Result<Order, GraphError> {
    let n = c.resources.len();
    let index = Index::new(c);
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut parent: Vec<Option<usize>> = vec![None; n];
    for &(a, b) in &c.contains {
        if let (Some(ch), Some(p)) = (children.get_mut(a), parent.get_mut(b))
            && p.is_none()
        {
            ch.push(b);
            *p = Some(a);
        }
    }
    for ch in &mut children {
        ch.sort_unstable();
    }
    let container: Vec<bool> = (0..n)
        .map(|i| is_container(&c.resources[i], !children[i].is_empty()))
        .collect();
    // Nodes: resource i is node i (a leaf, or a container's "admissible"
    // marker); a container's "completed" marker is node n + i.
    let into = |i: usize| i;
    let out_of = |i: usize| if container[i] { n + i } else { i };
    let mut edges: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); 2 * n];
    for (p, ch) in children.iter().enumerate() {
        for &k in ch {
            edges[into(p)].insert(into(k));
            edges[out_of(k)].insert(n + p);
        }
    }
    for i in (0..n).filter(|&i| container[i]) {
        edges[i].insert(n + i);
    }
    let rels = relationships(c, &index)?;
    for &(a, b, _) in &rels {
        edges[out_of(a)].insert(into(b));
    }
    let find = |ty: &str, title: &str| index.find(ty, title).filter(|&j| !container[j]);
    for (a, b) in autorequires(c, &find) {
        // An explicit relationship the other way wins over an autorequire.
        if !rels.iter().any(|&(x, y, _)| x == b && y == a) {
            edges[out_of(a)].insert(into(b));
        }
    }

    // Priorities, as Puppet's manifest ordering numbers them: catalog
    // order, a container's two markers sharing its number (they are never
    // ready at once). A resource of a type that cannot be applied is set
    // aside until nothing else is ready, as Puppet sets aside a resource
    // without a suitable provider.
    let priority: Vec<usize> = (0..2 * n)
        .map(|v| {
            let i = v % n.max(1);
            if !container[i] && deferred(&c.resources[i]) {
                2 * n + i
            } else {
                i
            }
        })
        .collect();

    // Kahn's algorithm with the lowest priority first.
    let live = |v: usize| v < n || container[v - n];
    let mut indegree = vec![0usize; 2 * n];
    for (v, outs) in edges.iter().enumerate() {
        if !live(v) {
            continue;
        }
        for &w in outs {
            indegree[w] += 1;
        }
    }
    let mut ready: BinaryHeap<Reverse<(usize, usize)>> = (0..2 * n)
        .filter(|&v| live(v) && indegree[v] == 0)
        .map(|v| Reverse((priority[v], v)))
        .collect();
    let mut visited = Vec::with_capacity(2 * n);
    while let Some(Reverse((_, v))) = ready.pop() {
        visited.push(v);
        for &w in &edges[v] {
            indegree[w] -= 1;
            if indegree[w] == 0 {
                ready.push(Reverse((priority[w], w)));
            }
        }
    }
    let live_count = (0..2 * n).filter(|&v| live(v)).count();
    if visited.len() < live_count {
        return Err(cycles(c, &edges, &indegree, n, &container));
    }

    // Upstream leaves of every node, in visiting order.
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); 2 * n];
    for (v, outs) in edges.iter().enumerate() {
        if live(v) {
            for &w in outs {
                preds[w].push(v);
            }
        }
    }
    let mut upstream: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); 2 * n];
    for &v in &visited {
        let mut set = BTreeSet::new();
        for &p in &preds[v] {
            if p < n && !container[p] {
                set.insert(p);
            }
            set.extend(upstream[p].iter().copied());
        }
        upstream[v] = set;
    }

    // Leaves under each container, for refresh through containers.
    let leaves_of = |i: usize| -> Vec<usize> {
        let mut out = Vec::new();
        let mut todo = vec![i];
        while let Some(x) = todo.pop() {
            if container[x] {
                todo.extend(children[x].iter().copied());
            } else {
                out.push(x);
            }
        }
        out
    };
    let mut refreshed_by: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for &(a, b, refresh) in &rels {
        if !refresh {
            continue;
        }
        let sources = leaves_of(a);
        for t in leaves_of(b) {
            refreshed_by[t].extend(sources.iter().copied().filter(|&s| s != t));
        }
    }

    let steps = visited
        .into_iter()
        .filter(|&v| v < n && !container[v])
        .map(|v| {
            let mut containers = Vec::new();
            let mut p = parent[v];
            while let Some(x) = p {
                containers.push(x);
                p = parent[x];
            }
            containers.reverse();
            Step {
                resource: v,
                upstream: upstream[v].iter().copied().collect(),
                refreshed_by: refreshed_by[v].iter().copied().collect(),
                containers,
            }
        })
        .collect();
    Ok(Order { steps })
}

/// Describes the cycles among the nodes Kahn's algorithm could not visit,
/// as Puppet does: `(File[/a] => File[/b] => File[/a])`.
fn cycles(
    c: &ApplyCatalog,
    edges: &[BTreeSet<usize>],
    indegree: &[usize],
    n: usize,
    container: &[bool],
) -> GraphError {
    let name = |v: usize| {
        if v < n {
            if container[v] {
                format!("Whit[Admissible_{}]", reference_lower(&c.resources[v]))
            } else {
                c.resources[v].reference()
            }
        } else {
            format!("Whit[Completed_{}]", reference_lower(&c.resources[v - n]))
        }
    };
    // Strongly connected components among the blocked nodes (Tarjan).
    let blocked: Vec<bool> = indegree.iter().map(|&d| d > 0).collect();
    let mut sccs = tarjan(edges, &blocked);
    sccs.retain(|s| s.len() > 1);
    let mut lines = Vec::new();
    for scc in &sccs {
        let members: BTreeSet<usize> = scc.iter().copied().collect();
        // One cycle through the component, from its first leaf.
        let start = scc
            .iter()
            .copied()
            .filter(|&v| v < n && !container[v])
            .min()
            .unwrap_or(scc[0]);
        let mut path = vec![start];
        let mut seen = BTreeSet::from([start]);
        let mut at = start;
        loop {
            let next = edges[at]
                .iter()
                .copied()
                .find(|w| members.contains(w) && (*w == start || !seen.contains(w)));
            match next {
                Some(w) if w == start => {
                    path.push(w);
                    break;
                }
                Some(w) => {
                    path.push(w);
                    seen.insert(w);
                    at = w;
                }
                None => break,
            }
        }
        let names: Vec<String> = path.into_iter().map(name).collect();
        lines.push(format!("({})", names.join(" => ")));
    }
    if lines.is_empty() {
        lines.push("(a cycle among the catalog's resources)".into());
    }
    GraphError::Cycle {
        count: lines.len(),
        cycles: lines.join("\n"),
    }
}

fn reference_lower(r: &Resource) -> String {
    format!("{}[{}]", r.type_key(), path_segment(r))
}

/// Tarjan's strongly connected components over the nodes marked in `on`.
fn tarjan(edges: &[BTreeSet<usize>], on: &[bool]) -> Vec<Vec<usize>> {
    let len = edges.len();
    let mut index = vec![usize::MAX; len];
    let mut low = vec![0usize; len];
    let mut on_stack = vec![false; len];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut next = 0usize;
    for root in (0..len).filter(|&v| on[v]) {
        if index[root] != usize::MAX {
            continue;
        }
        // Iterative DFS: (node, its successors not yet looked at).
        let mut work: Vec<(usize, Vec<usize>)> = Vec::new();
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        work.push((
            root,
            edges[root].iter().copied().filter(|&w| on[w]).collect(),
        ));
        while let Some((v, succ)) = work.last_mut() {
            let v = *v;
            if let Some(w) = succ.pop() {
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, edges[w].iter().copied().filter(|&x| on[x]).collect()));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some((u, _)) = work.last() {
                low[*u] = low[*u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                comp.reverse();
                out.push(comp);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_come_after_the_mounts_above_them_and_before_the_files_below() {
        let c = ApplyCatalog::from_json(
            r#"{"resources": [
                {"type": "File", "title": "/srv/data/x"},
                {"type": "File", "title": "/srv/database"},
                {"type": "Mount", "title": "/srv/data/"},
                {"type": "Mount", "title": "/srv"}
            ]}"#,
            "test",
        )
        .expect("a catalog");
        let order = order(&c, &|_| false).expect("ordered");
        let titles: Vec<&str> = order
            .steps
            .iter()
            .map(|s| c.resources[s.resource].title.as_str())
            .collect();
        // `/srv/database` is below `/srv` only; ties go by catalog order.
        assert_eq!(
            titles,
            ["/srv", "/srv/database", "/srv/data/", "/srv/data/x"]
        );
    }
}
