//! A device's facts from its show commands, as pure functions over their
//! output: the software version and host name (`show version`), and the
//! interfaces with their state and addresses (FRR's `show interface
//! brief`). Which commands a platform answers them with is [`commands`].

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::cli::Platform;

/// What ferry knows about a device.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    pub platform: String,
    pub hostname: Option<String>,
    pub version: Option<String>,
    /// Empty where the platform's interface listing is not read.
    pub interfaces: Vec<Interface>,
}

/// One interface: its name, state, VRF and IPv4 addresses.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Interface {
    pub name: String,
    /// `up` or `down`, as the device says.
    pub status: String,
    pub vrf: Option<String>,
    pub addresses: Vec<String>,
}

/// The show commands whose output [`parse`] reads, in its argument order:
/// the version, then the interfaces (if the platform's listing is read).
pub fn commands(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::Frr => &["show version", "show interface brief"],
        _ => &["show version"],
    }
}

fn constant(re: &'static str) -> Regex {
    Regex::new(re).expect("a constant pattern compiles")
}

/// `FRRouting 8.4.4 (r1) on Linux(...)`.
static FRR_VERSION: LazyLock<Regex> =
    LazyLock::new(|| constant(r"(?m)^FRRouting (?P<version>\S+) \((?P<host>[^)]+)\)"));
/// `... Version 15.2(4)M3, ...` (IOS) or `Software image version: 4.28.0F` (EOS),
/// `Junos: 21.4R1.12`.
static VERSION: LazyLock<Regex> =
    LazyLock::new(|| constant(r"(?mi)(?:\bversion:?|^junos:)\s+(?P<version>[0-9][\w.()\-]*[\w)])"));
/// IOS's `host uptime is ...`.
static UPTIME_HOST: LazyLock<Regex> = LazyLock::new(|| constant(r"(?m)^(?P<host>\S+) uptime is "));

/// The facts in the outputs of [`commands`]`(platform)`, in that order.
pub fn parse(platform: Platform, outputs: &[String]) -> Facts {
    let version_text = outputs.first().map(String::as_str).unwrap_or_default();
    let mut facts = Facts {
        platform: platform.to_string(),
        ..Facts::default()
    };
    if let Some(c) = FRR_VERSION.captures(version_text) {
        facts.version = c.name("version").map(|m| m.as_str().to_string());
        facts.hostname = c.name("host").map(|m| m.as_str().to_string());
    } else {
        facts.version = VERSION
            .captures(version_text)
            .and_then(|c| c.name("version"))
            .map(|m| m.as_str().to_string());
        facts.hostname = UPTIME_HOST
            .captures(version_text)
            .and_then(|c| c.name("host"))
            .map(|m| m.as_str().to_string());
    }
    if platform == Platform::Frr
        && let Some(brief) = outputs.get(1)
    {
        facts.interfaces = frr_interfaces(brief);
    }
    facts
}

/// FRR's `show interface brief`: a header, a line of dashes, then one row
/// per interface (name, status, VRF, first address); further addresses
/// on lines of their own, indented.
fn frr_interfaces(text: &str) -> Vec<Interface> {
    let mut out: Vec<Interface> = Vec::new();
    let rows = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("---"))
        .skip(1);
    for row in rows {
        if row.trim().is_empty() {
            continue;
        }
        let mut words = row.split_whitespace();
        if row.starts_with(char::is_whitespace) {
            if let Some(last) = out.last_mut() {
                last.addresses.extend(words.map(str::to_string));
            }
            continue;
        }
        let (Some(name), Some(status)) = (words.next(), words.next()) else {
            continue;
        };
        out.push(Interface {
            name: name.to_string(),
            status: status.to_ascii_lowercase(),
            vrf: words.next().map(str::to_string),
            addresses: words.map(str::to_string).collect(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ios_and_eos_versions_and_hosts() {
        // The shapes Cisco and Arista document for `show version`.
        let ios = "Cisco IOS Software, C2960 Software (C2960-LANBASEK9-M), Version 15.0(2)SE4, RELEASE SOFTWARE (fc1)\nsw1 uptime is 1 week, 2 days\n";
        let f = parse(Platform::Ios, &[ios.to_string()]);
        assert_eq!(f.version.as_deref(), Some("15.0(2)SE4"));
        assert_eq!(f.hostname.as_deref(), Some("sw1"));
        let eos = "Arista DCS-7050TX-64\nSoftware image version: 4.28.0F\n";
        let f = parse(Platform::Eos, &[eos.to_string()]);
        assert_eq!(f.version.as_deref(), Some("4.28.0F"));
    }
}
