//! Resource titles split into parameters, as Puppet's catalog writes them.
//!
//! When Puppet serializes a resource it merges `parse_title` (the type's
//! `title_patterns` applied to the title) under the resource's own
//! parameters, and leaves out only a namevar equal to the title
//! (`Puppet::Resource#to_data_hash`). For most types the pattern is the
//! identity, so nothing shows; but `file` strips trailing slashes (`/x/`
//! gets `path => '/x'`), and module types with composite namevars split
//! the title (`Keystone_endpoint['RegionOne/aodh::alarming']` gets
//! `region`, `name` and `type`). The patterns here are those of Puppet 7's
//! core types and of the Debian modules' Ruby types, written natively.

use regex::Regex;
use std::sync::OnceLock;

/// One title pattern: the regex and the parameters its groups set, in order.
struct Pattern {
    re: Regex,
    params: &'static [&'static str],
}

/// Ruby's `(?:[^:]|:[^:])+`: anything without two consecutive colons.
const NOT_TWO_COLONS: &str = "(?:[^:]|:[^:])+";

fn pattern(re: &str, params: &'static [&'static str]) -> Option<Pattern> {
    // Ruby's ^ and $ are line anchors.
    Regex::new(&format!("(?m){re}"))
        .ok()
        .map(|re| Pattern { re, params })
}

/// keystone's `basic_split_title_patterns(prefix, suffix)`.
fn basic_split(both: &'static [&'static str; 2]) -> Vec<Option<Pattern>> {
    vec![
        pattern(&format!("^({NOT_TWO_COLONS})::({NOT_TWO_COLONS})$"), both),
        pattern(&format!("^({NOT_TWO_COLONS})$"), &both[..1]),
    ]
}

fn patterns_for(type_name: &str) -> Option<&'static [Pattern]> {
    macro_rules! table {
        ($($name:literal => $make:expr),* $(,)?) => {{
            match type_name {
                $($name => {
                    static CELL: OnceLock<Vec<Pattern>> = OnceLock::new();
                    Some(CELL.get_or_init(|| {
                        let v: Vec<Option<Pattern>> = $make;
                        v.into_iter().flatten().collect()
                    }).as_slice())
                })*
                _ => None,
            }
        }};
    }
    let user_domain = "(?:[^:@]|:[^:@])+";
    table! {
        // Puppet 7 lib/puppet/type/file.rb: trailing slashes stripped,
        // the root directories kept.
        "file" => vec![pattern(r"(?s)^(/|.+:/|.*[^/])/*\n?\z", &["path"])],
        "keystone_user" => basic_split(&["name", "domain"]),
        "keystone_tenant" => basic_split(&["name", "domain"]),
        "keystone_service" => basic_split(&["name", "type"]),
        "keystone_endpoint" => vec![
            pattern(&format!("^([^/]+)/({NOT_TWO_COLONS})::(.+)$"), &["region", "name", "type"]),
            pattern(&format!("^([^/]+)/({NOT_TWO_COLONS})$"), &["region", "name"]),
            pattern(&format!("^({NOT_TWO_COLONS})::(.+)$"), &["name", "type"]),
            pattern(&format!("^({NOT_TWO_COLONS})$"), &["name"]),
        ],
        "keystone_user_role" => {
            let u = NOT_TWO_COLONS;
            let p = user_domain;
            vec![
                pattern(&format!("^({u})::({p})@({p})::({u})$"),
                    &["user", "user_domain", "project", "project_domain"]),
                pattern(&format!("^({u})::({p})@::({u})$"), &["user", "user_domain", "domain"]),
                pattern(&format!("^({u})::({p})@({p})$"), &["user", "user_domain", "project"]),
                pattern(&format!("^({u})@({p})::({u})$"), &["user", "project", "project_domain"]),
                pattern(&format!("^({u})@::({u})$"), &["user", "domain"]),
                pattern(&format!("^({u})@({p})$"), &["user", "project"]),
                pattern(&format!("^({u})::({p})@::::({u})$"), &["user", "user_domain", "system"]),
                pattern(&format!("^({u})@::::({u})$"), &["user", "system"]),
            ]
        },
        // rabbitmq's first pattern has an inner group its one name ignores.
        "rabbitmq_binding" => vec![
            pattern(r"(?s)(^(?:[^@]*)$)", &["name"]),
            pattern(r"(?s)^((\S+)@(\S+)@(\S+))$", &["name", "source", "destination", "vhost"]),
        ],
        "sshkey" => vec![
            pattern(r"^(.*?)@(.*)$", &["name", "type"]),
            pattern(r"^([^@]+)$", &["name"]),
        ],
        "alternative_entry" => vec![
            pattern(r"^([^:]+)$", &["name"]),
            pattern(r"(?i)^(.*):([a-z]:(?:/|\\).*)$", &["name", "altlink"]),
            pattern(r"^(.*):(.*)$", &["name", "altlink"]),
        ],
    }
}

/// The parameters a resource's title sets, for types whose title patterns
/// are not the identity; empty for every other type (and for a title no
/// pattern matches).
pub fn title_params(type_name: &str, title: &str) -> Vec<(String, String)> {
    let Some(patterns) = patterns_for(type_name) else {
        return Vec::new();
    };
    for p in patterns {
        if let Some(caps) = p.re.captures(title) {
            return p
                .params
                .iter()
                .enumerate()
                .filter_map(|(i, name)| {
                    caps.get(i + 1)
                        .map(|m| ((*name).to_string(), m.as_str().to_string()))
                })
                .collect();
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::title_params;

    fn p(t: &str, title: &str) -> Vec<(String, String)> {
        title_params(t, title)
    }

    fn v(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn file_strips_trailing_slashes_but_keeps_root() {
        assert_eq!(p("file", "/etc/x//"), v(&[("path", "/etc/x")]));
        assert_eq!(p("file", "/"), v(&[("path", "/")]));
        assert_eq!(p("file", "C:/"), v(&[("path", "C:/")]));
        assert_eq!(p("exec", "/bin/true"), v(&[]));
    }

    #[test]
    fn keystone_endpoint_splits_region_name_type() {
        assert_eq!(
            p("keystone_endpoint", "RegionOne/aodh::alarming"),
            v(&[
                ("region", "RegionOne"),
                ("name", "aodh"),
                ("type", "alarming")
            ])
        );
        assert_eq!(p("keystone_endpoint", "aodh"), v(&[("name", "aodh")]));
    }

    #[test]
    fn keystone_user_role_patterns_in_order() {
        assert_eq!(
            p("keystone_user_role", "admin@openstack"),
            v(&[("user", "admin"), ("project", "openstack")])
        );
        assert_eq!(
            p("keystone_user_role", "admin::Default@::Default"),
            v(&[
                ("user", "admin"),
                ("user_domain", "Default"),
                ("domain", "Default")
            ])
        );
        assert_eq!(p("keystone_user_role", "nobody"), v(&[]));
    }
}
