//! Device configuration as hierarchical text, and what it takes to bring a
//! running configuration to a desired one, as pure functions. A line's
//! indentation is its context: a line indented under `router bgp 65001`
//! belongs to that block, as `show running-config` prints it. Comment and
//! separator lines (`!`), block ends (`exit`, `exit-address-family`, `end`)
//! and the banner `show running-config` prints first are not configuration.
//!
//! The [`diff`] of desired against running is every desired line that the
//! running configuration lacks under the same parents (a "different" line
//! is a missing one: the device's CLI replaces the old value when the new
//! line is entered). Nothing is removed by a diff; a [`Change`] may carry
//! lines to remove ([`Role::Removed`], pushed as `no LINE`), which device
//! resource types ask for (`super::resources`). [`Change::commands`] gives the CLI
//! lines that push a diff from configuration mode: each missing line under
//! its parents, entered for the purpose and left again with `exit`.

use std::fmt;

/// One configuration line and the lines indented under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The line, trimmed, its inner whitespace kept as written.
    pub line: String,
    pub children: Vec<Node>,
}

/// Lines ferry takes for structure, not configuration.
fn is_structure(trimmed: &str) -> bool {
    trimmed.is_empty()
        || trimmed.starts_with('!')
        || trimmed == "end"
        || trimmed == "exit"
        || trimmed.starts_with("exit-")
        || trimmed.starts_with("Building configuration")
        || trimmed.starts_with("Current configuration")
}

/// A line with its inner runs of whitespace made one space, for comparing.
fn key(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Configuration text as a forest: each line under the nearest line above
/// it that is indented less. Tabs count as 8 columns.
pub fn parse(text: &str) -> Vec<Node> {
    // (indent, node) of the open parents, outermost first.
    let mut stack: Vec<(usize, Node)> = Vec::new();
    let mut roots = Vec::new();
    for raw in text.lines() {
        let trimmed = raw.trim();
        if is_structure(trimmed) {
            continue;
        }
        let indent = raw
            .chars()
            .take_while(|c| c.is_whitespace())
            .map(|c| if c == '\t' { 8 } else { 1 })
            .sum::<usize>();
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            close_last(&mut stack, &mut roots);
        }
        stack.push((
            indent,
            Node {
                line: trimmed.to_string(),
                children: Vec::new(),
            },
        ));
    }
    while !stack.is_empty() {
        close_last(&mut stack, &mut roots);
    }
    roots
}

fn close_last(stack: &mut Vec<(usize, Node)>, roots: &mut Vec<Node>) {
    if let Some((_, node)) = stack.pop() {
        match stack.last_mut() {
            Some((_, parent)) => parent.children.push(node),
            None => roots.push(node),
        }
    }
}

/// Whether a line of a [`Change`] is new or only leads to new lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The device has this line; some lines under it are missing.
    Context,
    /// The device lacks this line (and so everything under it).
    Added,
    /// The device has this line and must not: pushed as `no LINE`.
    Removed,
}

/// One line of a [`Change`], with the lines under it that it carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Push {
    pub line: String,
    pub role: Role,
    pub children: Vec<Push>,
}

/// Desired lines the running configuration lacks, under their parents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Change {
    pub lines: Vec<Push>,
}

/// What `desired` adds to `running`.
pub fn diff(running: &[Node], desired: &[Node]) -> Change {
    Change {
        lines: missing(running, desired),
    }
}

fn added(node: &Node) -> Push {
    Push {
        line: node.line.clone(),
        role: Role::Added,
        children: node.children.iter().map(added).collect(),
    }
}

fn missing(running: &[Node], desired: &[Node]) -> Vec<Push> {
    let mut out = Vec::new();
    for want in desired {
        let k = key(&want.line);
        match running.iter().find(|have| key(&have.line) == k) {
            None => out.push(added(want)),
            Some(have) => {
                let under = missing(&have.children, &want.children);
                if !under.is_empty() {
                    out.push(Push {
                        line: want.line.clone(),
                        role: Role::Context,
                        children: under,
                    });
                }
            }
        }
    }
    out
}

impl Change {
    /// Whether there is nothing to push.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// How many lines are removed (`no LINE`).
    pub fn removed(&self) -> usize {
        fn count(p: &[Push]) -> usize {
            p.iter()
                .map(|p| usize::from(p.role == Role::Removed) + count(&p.children))
                .sum()
        }
        count(&self.lines)
    }

    /// How many lines are added.
    pub fn added(&self) -> usize {
        fn count(p: &[Push]) -> usize {
            p.iter()
                .map(|p| usize::from(p.role == Role::Added) + count(&p.children))
                .sum()
        }
        count(&self.lines)
    }

    /// The CLI lines that push the change, entered in configuration mode:
    /// each line, then its children, then `exit` back out of the block it
    /// opened.
    pub fn commands(&self) -> Vec<CliLine> {
        fn walk(pushes: &[Push], out: &mut Vec<CliLine>) {
            for p in pushes {
                let opens = !p.children.is_empty();
                out.push(CliLine {
                    text: match p.role {
                        Role::Removed => format!("no {}", p.line),
                        _ => p.line.clone(),
                    },
                    step: if opens { Step::Enter } else { Step::Set },
                });
                if opens {
                    walk(&p.children, out);
                    out.push(CliLine {
                        text: "exit".to_string(),
                        step: Step::Leave,
                    });
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.lines, &mut out);
        out
    }
}

/// What a line sent in configuration mode is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A line that opens a block (`router bgp 65001`): the prompt's
    /// context must change after it.
    Enter,
    /// A setting.
    Set,
    /// Back out of the block the last `Enter` opened.
    Leave,
}

/// One line to send in configuration mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CliLine {
    pub text: String,
    pub step: Step,
}

/// The change as a diff: added lines `+`, their parents that exist for
/// context with two spaces, each indented one space per level as the
/// configuration is.
impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn walk(pushes: &[Push], depth: usize, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            for p in pushes {
                let mark = match p.role {
                    Role::Added => '+',
                    Role::Removed => '-',
                    Role::Context => ' ',
                };
                writeln!(f, "{mark} {}{}", " ".repeat(depth), p.line)?;
                walk(&p.children, depth + 1, f)?;
            }
            Ok(())
        }
        walk(&self.lines, 0, f)
    }
}
