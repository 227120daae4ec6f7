//! Merging definitions into targets, the way Bolt does it.
//!
//! For each target, config keys are looked up in order: the target's own
//! definitions (in document order), then each group that holds it — the
//! group, then its parents — in depth-first document order, then the top
//! level; the first value found wins. Facts and vars are merged over all of
//! those, earlier ones winning on the same key; features are their union.
//!
//! A string in a group's `targets` that names another group makes that
//! group's targets members too (as Ansible's children do); a cycle of such
//! references is an error.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use super::parse::{GroupDef, Member, TargetDef};
use super::{Config, Inventory, InventoryError, Origin, Target};

type Json = serde_json::Map<String, serde_json::Value>;

struct Flat<'a> {
    def: &'a GroupDef,
    parent: Option<usize>,
    children: Vec<usize>,
}

enum Entry<'a> {
    Target(String, Origin, Option<&'a TargetDef>),
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

    // Each group's direct entries.
    let entries: Vec<Vec<Entry>> = flat
        .iter()
        .map(|g| {
            g.def
                .targets
                .iter()
                .map(|m| match m {
                    Member::Def(d) => Entry::Target(d.name.clone(), d.origin.clone(), Some(d)),
                    Member::Name { name, origin } => match group_index.get(name.as_str()) {
                        Some(&gi) if !defined.contains(name.as_str()) => {
                            Entry::Group(gi, origin.clone())
                        }
                        _ => Entry::Target(name.clone(), origin.clone(), None),
                    },
                })
                .collect()
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

    // Targets in first-seen order, with their definitions and holding groups.
    struct Acc<'a> {
        origin: Origin,
        defs: Vec<&'a TargetDef>,
        holders: Vec<usize>,
    }
    let mut order: Vec<String> = Vec::new();
    let mut acc: HashMap<String, Acc> = HashMap::new();
    for (g, list) in entries.iter().enumerate() {
        for e in list {
            if let Entry::Target(name, origin, def) = e {
                let a = acc.entry(name.clone()).or_insert_with(|| {
                    order.push(name.clone());
                    Acc {
                        origin: origin.clone(),
                        defs: Vec::new(),
                        holders: Vec::new(),
                    }
                });
                if let Some(d) = def {
                    a.defs.push(d);
                }
                if g != 0 && !a.holders.contains(&g) {
                    a.holders.push(g);
                }
            }
        }
    }

    check_aliases(
        &order,
        &acc.iter()
            .map(|(k, v)| (k.as_str(), v.defs.as_slice()))
            .collect(),
        &group_index,
    )?;

    let mut targets = Vec::with_capacity(order.len());
    let mut groups: BTreeMap<String, Vec<String>> = flat
        .iter()
        .skip(1)
        .map(|g| (g.def.name.clone(), Vec::new()))
        .collect();
    for name in order {
        let Some(a) = acc.remove(&name) else { continue };
        let mut layers: Vec<usize> = Vec::new();
        let mut seen = HashSet::new();
        for &g in &a.holders {
            precedence(g, &flat, &referrers, &mut layers, &mut seen);
        }
        let target = build(name, a.origin, &a.defs, &layers, &flat);
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
    })
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
    defs: &[&TargetDef],
    layers: &[usize],
    flat: &[Flat],
) -> Target {
    let mut config = Config::default();
    for d in defs {
        for (k, s) in &d.config {
            config.set_default(k.clone(), s.clone());
        }
    }
    for &g in layers.iter().chain(std::iter::once(&0)) {
        for (k, s) in &flat[g].def.config {
            config.set_default(k.clone(), s.clone());
        }
    }
    // Facts and vars: apply lowest precedence first so earlier layers win.
    let mut facts = Json::new();
    let mut vars = Json::new();
    let mut features = BTreeSet::new();
    let group_layers = std::iter::once(0).chain(layers.iter().rev().copied());
    for g in group_layers {
        let def = flat[g].def;
        facts.extend(def.facts.clone());
        vars.extend(def.vars.clone());
        features.extend(def.features.iter().cloned());
    }
    for d in defs.iter().rev() {
        facts.extend(d.facts.clone());
        vars.extend(d.vars.clone());
        features.extend(d.features.iter().cloned());
    }
    Target {
        uri: defs.iter().find_map(|d| d.uri.clone()),
        aliases: defs
            .iter()
            .flat_map(|d| d.aliases.iter().map(|(a, _)| a.clone()))
            .collect(),
        config,
        facts,
        vars,
        features,
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
            Entry::Target(..) => None,
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

fn check_aliases(
    order: &[String],
    defs: &HashMap<&str, &[&TargetDef]>,
    groups: &HashMap<&str, usize>,
) -> Result<(), InventoryError> {
    let names: BTreeSet<&str> = order.iter().map(String::as_str).collect();
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for name in order {
        for d in defs.get(name.as_str()).copied().unwrap_or_default() {
            for (alias, origin) in &d.aliases {
                if names.contains(alias.as_str()) || groups.contains_key(alias.as_str()) {
                    return Err(InventoryError::at(
                        origin.clone(),
                        format!(
                            "alias '{alias}' of target '{name}' is already the name of a target or group"
                        ),
                    ));
                }
                if let Some(other) = seen.insert(alias, name)
                    && other != name
                {
                    return Err(InventoryError::at(
                        origin.clone(),
                        format!("alias '{alias}' is used by both '{other}' and '{name}'"),
                    ));
                }
            }
        }
    }
    Ok(())
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
