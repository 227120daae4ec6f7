//! Device resource types, for catalogs applied to network devices, as pure
//! functions: a resource (type, title, parameters) and the device's
//! platform give its [`Desired`] configuration — lines that must be there,
//! hierarchical as `show running-config` prints them, and lines that must
//! not ([`Absent`], pushed as `no LINE`) — and [`change`] is what brings a
//! running configuration there (the idempotent diff of [`super::config`],
//! plus those removals). The types:
//!
//! - `device_config`: `content`, hierarchical configuration text.
//! - `network_interface` (netdev_stdlib's): the interface `name` (the
//!   title), `description`, `enable` (`shutdown` / `no shutdown`), `mtu`.
//! - `network_route` (the resource API's): the `prefix` (the title; or
//!   `default_route => true`), `gateway` or `interface`, `metric` (the
//!   administrative distance), `ensure`. One route per prefix: other next
//!   hops of the prefix are removed.
//! - `bgp_neighbor` (after cisco_bgp_neighbor): the `neighbor` address (the
//!   title), the local `asn`, `remote_as`, `description`, `shutdown`,
//!   `ensure`.
//!
//! Which attributes each type has, and their Puppet types, is the
//! compiler's ([`crate::lang::eval::device_types`]), which checks them as it
//! compiles a device's catalog; here the values become lines. A value that
//! would break out of its line (a newline, a control character) is
//! refused. Junos's `set` CLI is not hierarchical text: the
//! typed resources are not mapped there.

use std::net::IpAddr;

use serde_json::{Map, Value};

use super::cli::Platform;
use super::config::{self, Change, Node, Push, Role};

/// The device types, as Puppet names them.
pub const TYPES: &[&str] = &[
    "device_config",
    "network_interface",
    "network_route",
    "bgp_neighbor",
];

/// Why a resource gives no configuration.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    #[error(
        "{0} is not a device type (device targets take device_config, network_interface, network_route and bgp_neighbor)"
    )]
    NotDeviceType(String),
    #[error("parameter '{name}' {why}")]
    Param { name: &'static str, why: String },
    #[error("{what} is not mapped on platform {platform}: {why}")]
    Unsupported {
        what: &'static str,
        platform: Platform,
        why: &'static str,
    },
}

/// Lines under `parents` that must not be there: those that start with
/// `prefix` (whole words), but for the lines in `keep`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Absent {
    pub parents: Vec<String>,
    pub prefix: String,
    pub keep: Vec<String>,
}

/// What a resource wants of the configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Desired {
    pub present: Vec<Node>,
    pub absent: Vec<Absent>,
}

/// Whether `type_name` (any case, as a catalog writes it) is a device type.
pub fn is_device_type(type_name: &str) -> bool {
    TYPES.contains(&type_name.to_ascii_lowercase().as_str())
}

/// The configuration the resource `type_name[title]` with `params` wants
/// on a device of `platform`.
pub fn desired(
    type_name: &str,
    title: &str,
    params: &Map<String, Value>,
    platform: Platform,
) -> Result<Desired, ResourceError> {
    let p = Params(params);
    match type_name.to_ascii_lowercase().as_str() {
        "device_config" => {
            let content = p.string("content")?.ok_or(ResourceError::Param {
                name: "content",
                why: "is required: the configuration text".into(),
            })?;
            Ok(Desired {
                present: config::parse(&content),
                absent: Vec::new(),
            })
        }
        "network_interface" => interface(title, &p, platform),
        "network_route" => route(title, &p, platform),
        "bgp_neighbor" => bgp_neighbor(title, &p, platform),
        _ => Err(ResourceError::NotDeviceType(type_name.to_string())),
    }
}

/// A resource's parameters, read with Puppet's types.
struct Params<'a>(&'a Map<String, Value>);

fn bad(name: &'static str, why: impl Into<String>) -> ResourceError {
    ResourceError::Param {
        name,
        why: why.into(),
    }
}

impl Params<'_> {
    /// A string (a number is its digits); `undef` is none.
    fn string(&self, name: &'static str) -> Result<Option<String>, ResourceError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(bad(name, "must be a string")),
        }
    }

    /// A string that fits on one configuration line, not empty.
    fn word_line(&self, name: &'static str) -> Result<Option<String>, ResourceError> {
        match self.string(name)? {
            Some(s) if s.trim().is_empty() => Err(bad(name, "must not be empty")),
            Some(s) if s.chars().any(char::is_control) => Err(bad(
                name,
                "must fit on one line (no newline or control character)",
            )),
            other => Ok(other.map(|s| s.trim().to_string())),
        }
    }

    /// One word: no whitespace, no control character.
    fn word(&self, name: &'static str) -> Result<Option<String>, ResourceError> {
        match self.word_line(name)? {
            Some(s) if s.contains(char::is_whitespace) => Err(bad(name, "must be one word")),
            other => Ok(other),
        }
    }

    fn boolean(&self, name: &'static str) -> Result<Option<bool>, ResourceError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s == "true" => Ok(Some(true)),
            Some(Value::String(s)) if s == "false" => Ok(Some(false)),
            Some(_) => Err(bad(name, "must be true or false")),
        }
    }

    /// An integer within `min..=max` (digits in a string too).
    fn integer(
        &self,
        name: &'static str,
        min: u64,
        max: u64,
    ) -> Result<Option<u64>, ResourceError> {
        let n = match self.0.get(name) {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
            Some(_) => None,
        };
        match n {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(bad(name, format!("must be an integer from {min} to {max}"))),
        }
    }

    /// `ensure`: present (the default) or absent.
    fn present(&self) -> Result<bool, ResourceError> {
        match self.string("ensure")?.as_deref() {
            None | Some("present") => Ok(true),
            Some("absent") => Ok(false),
            Some(_) => Err(bad("ensure", "must be present or absent")),
        }
    }

    /// The namevar `name` if set, else the title.
    fn name_or_title(&self, name: &'static str, title: &str) -> Result<String, ResourceError> {
        match self.word(name)? {
            Some(n) => Ok(n),
            None => {
                let t = title.trim();
                if t.is_empty()
                    || t.contains(char::is_whitespace)
                    || t.chars().any(char::is_control)
                {
                    Err(bad(name, format!("(the title '{title}') must be one word")))
                } else {
                    Ok(t.to_string())
                }
            }
        }
    }
}

fn hierarchical(platform: Platform, what: &'static str) -> Result<(), ResourceError> {
    match platform {
        Platform::Junos => Err(ResourceError::Unsupported {
            what,
            platform,
            why: "Junos configures with set commands, not hierarchical lines",
        }),
        _ => Ok(()),
    }
}

fn node(line: String, children: Vec<Node>) -> Node {
    Node { line, children }
}

fn interface(title: &str, p: &Params<'_>, platform: Platform) -> Result<Desired, ResourceError> {
    hierarchical(platform, "network_interface")?;
    let name = p.name_or_title("name", title)?;
    let head = format!("interface {name}");
    let mut children = Vec::new();
    let mut absent = Vec::new();
    if let Some(d) = p.word_line("description")? {
        children.push(node(format!("description {d}"), Vec::new()));
    }
    if let Some(mtu) = p.integer("mtu", 68, 65535)? {
        if platform == Platform::Frr {
            return Err(ResourceError::Unsupported {
                what: "network_interface's mtu",
                platform,
                why: "FRR's zebra has no mtu command (the kernel's interface MTU is set outside FRR)",
            });
        }
        children.push(node(format!("mtu {mtu}"), Vec::new()));
    }
    match p.boolean("enable")? {
        Some(false) => children.push(node("shutdown".into(), Vec::new())),
        Some(true) => absent.push(Absent {
            parents: vec![head.clone()],
            prefix: "shutdown".into(),
            keep: Vec::new(),
        }),
        None => {}
    }
    let present = if children.is_empty() {
        Vec::new()
    } else {
        vec![node(head, children)]
    };
    Ok(Desired { present, absent })
}

/// `a.b.c.d/len` or an IPv6 prefix, checked; whether it is IPv6.
fn prefix(text: &str) -> Result<(IpAddr, u8), ResourceError> {
    let why = || {
        bad(
            "prefix",
            format!("'{text}' is not an address/length prefix"),
        )
    };
    let (addr, len) = text.split_once('/').ok_or_else(why)?;
    let addr: IpAddr = addr.parse().map_err(|_| why())?;
    let len: u8 = len.parse().map_err(|_| why())?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    if len > max {
        return Err(why());
    }
    Ok((addr, len))
}

/// The dotted mask of an IPv4 prefix length (IOS writes routes with it).
fn mask(len: u8) -> String {
    let bits: u32 = if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len))
    };
    std::net::Ipv4Addr::from(bits).to_string()
}

fn route(title: &str, p: &Params<'_>, platform: Platform) -> Result<Desired, ResourceError> {
    hierarchical(platform, "network_route")?;
    let text = match p.boolean("default_route")? {
        Some(true) => "0.0.0.0/0".to_string(),
        _ => p.name_or_title("prefix", title)?,
    };
    let (addr, len) = prefix(&text)?;
    let family = if addr.is_ipv4() { "ip" } else { "ipv6" };
    // IOS names an IPv4 destination by address and mask.
    let dest = if platform == Platform::Ios && addr.is_ipv4() {
        format!("{addr} {}", mask(len))
    } else {
        format!("{addr}/{len}")
    };
    let lead = format!("{family} route {dest}");
    if !p.present()? {
        return Ok(Desired {
            present: Vec::new(),
            absent: vec![Absent {
                parents: Vec::new(),
                prefix: lead,
                keep: Vec::new(),
            }],
        });
    }
    let via = match (p.word("gateway")?, p.word("interface")?) {
        (Some(g), _) => {
            let gw: IpAddr = g
                .parse()
                .map_err(|_| bad("gateway", format!("'{g}' is not an address")))?;
            if gw.is_ipv4() != addr.is_ipv4() {
                return Err(bad("gateway", "is not of the prefix's address family"));
            }
            g
        }
        (None, Some(i)) => i,
        (None, None) => return Err(bad("gateway", "or interface is required")),
    };
    let mut line = format!("{lead} {via}");
    if let Some(d) = p.integer("metric", 1, 255)? {
        line = format!("{line} {d}");
    }
    Ok(Desired {
        present: vec![node(line.clone(), Vec::new())],
        absent: vec![Absent {
            parents: Vec::new(),
            prefix: lead,
            keep: vec![line],
        }],
    })
}

fn bgp_neighbor(title: &str, p: &Params<'_>, platform: Platform) -> Result<Desired, ResourceError> {
    hierarchical(platform, "bgp_neighbor")?;
    let neighbor = p.name_or_title("neighbor", title)?;
    if !neighbor
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || ".:_-/".contains(c))
    {
        return Err(bad(
            "neighbor",
            format!("'{neighbor}' is not an address or interface name"),
        ));
    }
    let asn = p
        .integer("asn", 1, u64::from(u32::MAX))?
        .ok_or_else(|| bad("asn", "is required: the local AS number"))?;
    let router = format!("router bgp {asn}");
    let lead = format!("neighbor {neighbor}");
    if !p.present()? {
        return Ok(Desired {
            present: Vec::new(),
            absent: vec![Absent {
                parents: vec![router],
                prefix: format!("{lead} remote-as"),
                keep: Vec::new(),
            }],
        });
    }
    let remote_as = match p.word("remote_as")? {
        Some(r) if r == "internal" || r == "external" => r,
        Some(_) => p
            .integer("remote_as", 1, u64::from(u32::MAX))?
            .map(|n| n.to_string())
            .unwrap_or_default(),
        None => return Err(bad("remote_as", "is required")),
    };
    let mut children = vec![node(format!("{lead} remote-as {remote_as}"), Vec::new())];
    let mut absent = Vec::new();
    if let Some(d) = p.word_line("description")? {
        children.push(node(format!("{lead} description {d}"), Vec::new()));
    }
    match p.boolean("shutdown")? {
        Some(true) => children.push(node(format!("{lead} shutdown"), Vec::new())),
        Some(false) => absent.push(Absent {
            parents: vec![router.clone()],
            prefix: format!("{lead} shutdown"),
            keep: Vec::new(),
        }),
        None => {}
    }
    Ok(Desired {
        present: vec![node(router, children)],
        absent,
    })
}

/// A line with its runs of whitespace made one space.
fn key(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `line` starts with the words of `prefix`.
fn starts_with_words(line: &str, prefix: &str) -> bool {
    let (line, prefix) = (key(line), key(prefix));
    line == prefix || line.starts_with(&format!("{prefix} "))
}

/// The lines under `parents` in `nodes`, if the parents are there.
fn under<'a>(nodes: &'a [Node], parents: &[String]) -> Option<&'a [Node]> {
    match parents.split_first() {
        None => Some(nodes),
        Some((first, rest)) => {
            let k = key(first);
            let parent = nodes.iter().find(|n| key(&n.line) == k)?;
            under(&parent.children, rest)
        }
    }
}

/// Puts `leaf` under `parents` in `pushes`, adding the parents as context.
fn insert(pushes: &mut Vec<Push>, parents: &[String], leaf: Push) {
    let Some((first, rest)) = parents.split_first() else {
        pushes.push(leaf);
        return;
    };
    let k = key(first);
    let at = match pushes.iter().position(|p| key(&p.line) == k) {
        Some(i) => i,
        None => {
            pushes.push(Push {
                line: first.clone(),
                role: Role::Context,
                children: Vec::new(),
            });
            pushes.len() - 1
        }
    };
    insert(&mut pushes[at].children, rest, leaf);
}

/// What brings `running` to `desired`: the lines it lacks, then the lines
/// it must lose.
pub fn change(running: &[Node], desired: &Desired) -> Change {
    let mut change = config::diff(running, &desired.present);
    for absent in &desired.absent {
        let Some(lines) = under(running, &absent.parents) else {
            continue;
        };
        let keep: Vec<String> = absent.keep.iter().map(|k| key(k)).collect();
        for found in lines
            .iter()
            .filter(|n| starts_with_words(&n.line, &absent.prefix) && !keep.contains(&key(&n.line)))
        {
            insert(
                &mut change.lines,
                &absent.parents,
                Push {
                    line: found.line.clone(),
                    role: Role::Removed,
                    children: Vec::new(),
                },
            );
        }
    }
    change
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn values_that_would_leave_their_line_are_refused() {
        let e = desired(
            "Network_interface",
            "eth1",
            &params(json!({"description": "x\nhostname evil"})),
            Platform::Frr,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter 'description' must fit on one line (no newline or control character)"
        );
        let e = desired("File", "/x", &Map::new(), Platform::Frr).unwrap_err();
        assert!(matches!(e, ResourceError::NotDeviceType(_)), "{e}");
    }

    #[test]
    fn ios_routes_take_a_mask() {
        let d = desired(
            "network_route",
            "10.1.0.0/16",
            &params(json!({"gateway": "10.0.0.1", "metric": "200"})),
            Platform::Ios,
        )
        .unwrap();
        assert_eq!(
            d.present[0].line,
            "ip route 10.1.0.0 255.255.0.0 10.0.0.1 200"
        );
        assert_eq!(mask(0), "0.0.0.0");
        assert_eq!(mask(32), "255.255.255.255");
    }
}
