//! Merging definitions into targets, the way Bolt does it.
//!
//! Every group entry that names a target contributes to it: a mapping its
//! definition, a string that makes a new target its URI. Values come from
//! the contributions first, then from the groups that hold the target, then
//! from the top level (`all`), then from the command line. Among
//! contributions and among groups, a subgroup's win over its parent's and
//! an earlier branch's over a later one's: the order of a depth-first walk
//! that finishes a group's subgroups before the group (Bolt's
//! `target_collect` and `group_collect`). Config and facts are deep-merged
//! in that order, the first value found winning; vars and plugin_hooks are
//! merged key by key; features are their union. A target named twice in one
//! group keeps its first entry there.
//!
//! A string in `targets` names, in this order: a target defined by a
//! mapping somewhere, an alias of one (the target it stands for), a group
//! (ferry's own: that group's targets become members too, as Ansible's
//! children do; a cycle of such references is an error), or else a new
//! target whose URI is the string.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use super::parse::{GroupDef, Member, TargetDef};
use super::{Config, Inventory, InventoryError, Origin, Setting, Target, deep_merge_map_under};

type Json = serde_json::Map<String, serde_json::Value>;

struct Flat<'a> {
    def: &'a GroupDef,
    parent: Option<usize>,
    children: Vec<usize>,
}

enum Entry<'a> {
    /// A target in the group, with its definition here if the entry is a
    /// mapping, or the URI a string gave a new target.
    Target {
        name: String,
        origin: Origin,
        def: Option<&'a TargetDef>,
        uri: Option<String>,
    },
    Group(usize, Origin),
}

fn flatten<'a>(group: &'a GroupDef, parent: Option<usize>, out: &mut Vec<Flat<'a>>) -> usize {
    let index = out.len();
    out.push(Flat {
        def: group,
        parent,
        children: Vec::new(),
    });
    for child in &group.groups {
        let c = flatten(child, Some(index), out);
        out[index].children.push(c);
    }
    index
}

fn valid_group_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

/// What a target gathers while the groups are read.
struct Acc<'a> {
    origin: Origin,
    /// (group, definition or None, URI from a string), one per group.
    parts: Vec<(usize, Option<&'a TargetDef>, Option<String>)>,
    holders: Vec<usize>,
}

pub fn resolve(top: GroupDef, file: Arc<PathBuf>) -> Result<Inventory, InventoryError> {
    let mut flat = Vec::new();
    flatten(&top, None, &mut flat);

    // Group names: valid, unique, and not `all`.
    let mut group_index: HashMap<&str, usize> = HashMap::new();
    for (i, g) in flat.iter().enumerate().skip(1) {
        let name = g.def.name.as_str();
        if !valid_group_name(name) {
            return Err(InventoryError::at(
                g.def.origin.clone(),
                format!("invalid group name '{name}' (letters, digits, '_', '-' and '.' only)"),
            ));
        }
        if name == "all" {
            return Err(InventoryError::at(
                g.def.origin.clone(),
                "'all' is reserved and cannot name a group",
            ));
        }
        if let Some(&first) = group_index.get(name) {
            return Err(InventoryError::at(
                g.def.origin.clone(),
                format!(
                    "duplicate group name '{name}' (first defined at {})",
                    flat[first].def.origin
                ),
            ));
        }
        group_index.insert(name, i);
    }

    // Target names defined by mappings.
    let mut defined: BTreeSet<&str> = BTreeSet::new();
    for g in &flat {
        for m in &g.def.targets {
            if let Member::Def(d) = m {
                if let Some(&gi) = group_index.get(d.name.as_str()) {
                    return Err(InventoryError::at(
                        d.origin.clone(),
                        format!(
                            "target '{}' has the name of the group defined at {}",
                            d.name, flat[gi].def.origin
                        ),
                    ));
                }
                defined.insert(&d.name);
            }
        }
    }

    let aliases = collect_aliases(&flat, &defined, &group_index)?;

    // Each group's direct entries: definitions first, then strings (Bolt
    // reads strings once every definition is known).
    let entries: Vec<Vec<Entry>> = flat
        .iter()
        .map(|g| {
            let defs = g.def.targets.iter().filter_map(|m| match m {
                Member::Def(d) => Some(Entry::Target {
                    name: d.name.clone(),
                    origin: d.origin.clone(),
                    def: Some(d),
                    uri: None,
                }),
                Member::Name { .. } => None,
            });
            let names = g.def.targets.iter().filter_map(|m| match m {
                Member::Def(_) => None,
                Member::Name { name, origin } => Some(if defined.contains(name.as_str()) {
                    Entry::Target {
                        name: name.clone(),
                        origin: origin.clone(),
                        def: None,
                        uri: None,
                    }
                } else if let Some((target, _)) = aliases.get(name.as_str()) {
                    Entry::Target {
                        name: target.to_string(),
                        origin: origin.clone(),
                        def: None,
                        uri: None,
                    }
                } else if let Some(&gi) = group_index.get(name.as_str()) {
                    Entry::Group(gi, origin.clone())
                } else {
                    Entry::Target {
                        name: name.clone(),
                        origin: origin.clone(),
                        def: None,
                        uri: Some(name.clone()),
                    }
                }),
            });
            defs.chain(names).collect()
        })
        .collect();

    check_cycles(&flat, &entries)?;

    // Who refers to each group by name.
    let mut referrers: Vec<Vec<usize>> = vec![Vec::new(); flat.len()];
    for (g, list) in entries.iter().enumerate() {
        for e in list {
            if let Entry::Group(target, _) = e {
                referrers[*target].push(g);
            }
        }
    }
    let rank = post_order(&flat, &entries);

    // Targets in first-seen order, with what each group says of them.
    let mut order: Vec<String> = Vec::new();
    let mut acc: HashMap<String, Acc> = HashMap::new();
    for (g, list) in entries.iter().enumerate() {
        for e in list {
            let Entry::Target {
                name,
                origin,
                def,
                uri,
            } = e
            else {
                continue;
            };
            let a = acc.entry(name.clone()).or_insert_with(|| {
                order.push(name.clone());
                Acc {
                    origin: origin.clone(),
                    parts: Vec::new(),
                    holders: Vec::new(),
                }
            });
            // A target named twice in one group keeps its first entry.
            if a.parts.iter().any(|(pg, _, _)| *pg == g) {
                continue;
            }
            a.parts.push((g, *def, uri.clone()));
            if g != 0 {
                a.holders.push(g);
            }
        }
    }

    let mut targets = Vec::with_capacity(order.len());
    let mut groups: BTreeMap<String, Vec<String>> = flat
        .iter()
        .skip(1)
        .map(|g| (g.def.name.clone(), Vec::new()))
        .collect();
    for name in order {
        let Some(mut a) = acc.remove(&name) else {
            continue;
        };
        let mut layers: Vec<usize> = Vec::new();
        let mut seen = HashSet::new();
        for &g in &a.holders {
            precedence(g, &flat, &referrers, &mut layers, &mut seen);
        }
        layers.sort_by_key(|&g| rank[g]);
        a.parts.sort_by_key(|(g, _, _)| rank[*g]);
        let target = build(name, a.origin, &a.parts, &layers, &flat);
        for g in &target.groups {
            if let Some(members) = groups.get_mut(g) {
                members.push(target.name.clone());
            }
        }
        targets.push(target);
    }

    Ok(Inventory {
        path: file,
        targets,
        groups,
        top,
        command_line: Vec::new(),
    })
}

/// Each group's place in a depth-first walk from the top level that
/// finishes a group's subgroups (nested, then named in its `targets`)
/// before the group itself: a lower number wins. Every group is nested in
/// the top level, so every group gets a place; the walk keeps its own
/// stack, as chains of groups can be long.
fn post_order(flat: &[Flat], entries: &[Vec<Entry>]) -> Vec<usize> {
    let kids = |g: usize| -> Vec<usize> {
        let named = entries[g].iter().filter_map(|e| match e {
            Entry::Group(t, _) => Some(*t),
            Entry::Target { .. } => None,
        });
        flat[g].children.iter().copied().chain(named).collect()
    };
    let mut rank = vec![usize::MAX; flat.len()];
    let mut visited = vec![false; flat.len()];
    let mut next = 0;
    if flat.is_empty() {
        return rank;
    }
    visited[0] = true;
    let mut stack: Vec<(usize, Vec<usize>, usize)> = vec![(0, kids(0), 0)];
    while let Some(top) = stack.last_mut() {
        let (g, at) = (top.0, top.2);
        match top.1.get(at).copied() {
            Some(k) => {
                top.2 += 1;
                if !visited[k] {
                    visited[k] = true;
                    stack.push((k, kids(k), 0));
                }
            }
            None => {
                rank[g] = next;
                next += 1;
                stack.pop();
            }
        }
    }
    rank
}

/// Appends `g`, its parents, and (recursively) the groups that refer to any
/// of them, skipping the top level and groups already listed (`seen`).
/// A chain of references can be as long as there are groups, so the walk
/// keeps its own stack instead of recursing.
fn precedence(
    g: usize,
    flat: &[Flat],
    referrers: &[Vec<usize>],
    out: &mut Vec<usize>,
    seen: &mut HashSet<usize>,
) {
    /// A group being visited: itself and its parents, and how far their
    /// referrers have been followed.
    struct Visit {
        chain: Vec<usize>,
        link: usize,
        referrer: usize,
    }
    fn enter(g: usize, flat: &[Flat], out: &mut Vec<usize>, seen: &mut HashSet<usize>) -> Visit {
        let mut chain = Vec::new();
        let mut cur = Some(g);
        while let Some(i) = cur {
            if i == 0 {
                break;
            }
            chain.push(i);
            cur = flat[i].parent;
        }
        for &i in &chain {
            if seen.insert(i) {
                out.push(i);
            }
        }
        Visit {
            chain,
            link: 0,
            referrer: 0,
        }
    }
    let mut stack = vec![enter(g, flat, out, seen)];
    while let Some(top) = stack.last_mut() {
        let Some(&i) = top.chain.get(top.link) else {
            stack.pop();
            continue;
        };
        let Some(&r) = referrers[i].get(top.referrer) else {
            top.link += 1;
            top.referrer = 0;
            continue;
        };
        top.referrer += 1;
        if !seen.contains(&r) {
            let next = enter(r, flat, out, seen);
            stack.push(next);
        }
    }
}

fn build(
    name: String,
    origin: Origin,
    parts: &[(usize, Option<&TargetDef>, Option<String>)],
    layers: &[usize],
    flat: &[Flat],
) -> Target {
    let defs: Vec<&TargetDef> = parts.iter().filter_map(|(_, d, _)| *d).collect();
    let mut config = Config::default();
    for d in &defs {
        for (k, s) in &d.config {
            config.set_default(k.clone(), s.clone());
        }
    }
    if name == "localhost" {
        // Bolt's default for the target named localhost, under its own
        // config but over its groups'.
        config.set_default(
            "transport".into(),
            Setting {
                value: "local".into(),
                origin: origin.clone(),
            },
        );
    }
    let groups = layers
        .iter()
        .chain(std::iter::once(&0))
        .map(|&g| flat[g].def);
    for g in groups.clone() {
        for (k, s) in &g.config {
            config.set_default(k.clone(), s.clone());
        }
    }
    let mut facts = Json::new();
    let mut vars = Json::new();
    let mut plugin_hooks = Json::new();
    let mut features = BTreeSet::new();
    let data = defs
        .iter()
        .map(|d| (&d.facts, &d.vars, &d.plugin_hooks, &d.features))
        .chain(groups.map(|g| (&g.facts, &g.vars, &g.plugin_hooks, &g.features)));
    for (f, v, h, feats) in data {
        deep_merge_map_under(&mut facts, f);
        for (k, x) in v {
            vars.entry(k.clone()).or_insert_with(|| x.clone());
        }
        for (k, x) in h {
            plugin_hooks.entry(k.clone()).or_insert_with(|| x.clone());
        }
        features.extend(feats.iter().cloned());
    }
    // Bolt lists aliases and takes the URI from the lowest definition first.
    let mut aliases: Vec<String> = Vec::new();
    for d in defs.iter().rev() {
        for (a, _) in &d.aliases {
            if !aliases.contains(a) {
                aliases.push(a.clone());
            }
        }
    }
    let uri = parts
        .iter()
        .rev()
        .find_map(|(_, d, uri)| d.and_then(|d| d.uri.clone()).or_else(|| uri.clone()));
    Target {
        uri,
        aliases,
        config,
        facts,
        vars,
        features,
        plugin_hooks,
        groups: layers.iter().map(|&g| flat[g].def.name.clone()).collect(),
        origin,
        name,
    }
}

/// Refuses a cycle of groups (by nesting or by name). References can
/// chain through every group, so the depth-first walk keeps its own stack.
fn check_cycles(flat: &[Flat], entries: &[Vec<Entry>]) -> Result<(), InventoryError> {
    // Edges: a group holds its subgroups and the groups it names.
    let edges = |g: usize| -> Vec<(usize, Option<&Origin>)> {
        let nested = flat[g].children.iter().map(|&c| (c, None));
        let named = entries[g].iter().filter_map(|e| match e {
            Entry::Group(t, o) => Some((*t, Some(o))),
            Entry::Target { .. } => None,
        });
        nested.chain(named).collect()
    };
    // 0: not seen, 1: on the current path, 2: done.
    let mut state = vec![0u8; flat.len()];
    for start in 0..flat.len() {
        if state[start] != 0 {
            continue;
        }
        state[start] = 1;
        let mut stack = vec![(start, edges(start), 0usize)];
        while let Some((g, next, at)) = stack.last_mut() {
            let g = *g;
            let Some(&(n, origin)) = next.get(*at) else {
                state[g] = 2;
                stack.pop();
                continue;
            };
            *at += 1;
            match state[n] {
                1 => {
                    let at = origin
                        .cloned()
                        .unwrap_or_else(|| flat[n].def.origin.clone());
                    return Err(InventoryError::at(
                        at,
                        format!(
                            "group cycle: '{}' includes '{}', which includes it again",
                            flat[g].def.name, flat[n].def.name
                        ),
                    ));
                }
                0 => {
                    state[n] = 1;
                    stack.push((n, edges(n), 0));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Every alias with the target it stands for. An alias may not be the name
/// of a target or group, nor stand for two targets.
fn collect_aliases<'a>(
    flat: &[Flat<'a>],
    defined: &BTreeSet<&str>,
    groups: &HashMap<&str, usize>,
) -> Result<HashMap<&'a str, (&'a str, &'a Origin)>, InventoryError> {
    let mut out: HashMap<&str, (&str, &Origin)> = HashMap::new();
    for g in flat {
        // A second definition of a target in one group is ignored whole.
        let mut seen: HashSet<&str> = HashSet::new();
        for m in &g.def.targets {
            let Member::Def(d) = m else { continue };
            if !seen.insert(&d.name) {
                continue;
            }
            for (alias, origin) in &d.aliases {
                if defined.contains(alias.as_str()) || groups.contains_key(alias.as_str()) {
                    return Err(InventoryError::at(
                        origin.clone(),
                        format!(
                            "alias '{alias}' of target '{}' is already the name of a target or group",
                            d.name
                        ),
                    ));
                }
                if let Some((other, _)) = out.get(alias.as_str())
                    && *other != d.name
                {
                    return Err(InventoryError::at(
                        origin.clone(),
                        format!("alias '{alias}' is used by both '{other}' and '{}'", d.name),
                    ));
                }
                out.insert(alias, (&d.name, origin));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::inventory::Inventory;

    /// Runs `f` on a thread with the stack of a tokio worker (2 MiB).
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    /// Groups that name each other in a chain as long as the file allows:
    /// g0 holds g1, which holds g2, ... down to the one target.
    fn chain(n: usize, cycle: bool) -> String {
        let mut text = String::from("groups:\n");
        for i in 0..n {
            let next = if i + 1 < n {
                format!("g{}", i + 1)
            } else if cycle {
                "g0".to_string()
            } else {
                "t1".to_string()
            };
            text.push_str(&format!("  - {{name: g{i}, targets: [{next}]}}\n"));
        }
        text
    }

    #[test]
    fn long_chains_of_group_references_resolve_on_a_small_stack() {
        let n = 30_000;
        let inventory = on_small_stack(move || {
            Inventory::from_str(&chain(n, false), Path::new("inv.yaml"))
                .map(|i| (i.targets.len(), i.targets[0].groups.len()))
                .map_err(|e| e.to_string())
        });
        assert_eq!(inventory, Ok((1, n)));
        let err = on_small_stack(move || {
            Inventory::from_str(&chain(n, true), Path::new("inv.yaml"))
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        let last = format!("  - {{name: g{}, targets: [", n - 1);
        assert_eq!(
            err,
            Err(format!(
                "inv.yaml:{}:{}: group cycle: 'g{}' includes 'g0', which includes it again",
                n + 1,
                last.len() + 1,
                n - 1
            ))
        );
    }
}
