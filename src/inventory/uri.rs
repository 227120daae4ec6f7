//! Target URIs as Bolt writes them: `ssh://user@host:port`, `user@host`,
//! `host:port`, `[::1]:22`, or a bare host name.

/// The parts of a target URI. Missing parts are empty / `None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Address {
    pub scheme: Option<String>,
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

/// The scheme of a URI (`ssh` of `ssh://host`), if it has one.
pub fn scheme(uri: &str) -> Option<&str> {
    uri.split_once("://").map(|(scheme, _)| scheme)
}

impl Address {
    /// Splits a URI into its parts. Never fails: what cannot be read as a
    /// port stays part of the host, and connecting to it fails later with a
    /// clear error.
    pub fn parse(uri: &str) -> Address {
        let (scheme, rest) = match uri.split_once("://") {
            Some((s, rest)) => (Some(s.to_string()), rest),
            None => (None, uri),
        };
        let rest = rest.split('/').next().unwrap_or(rest);
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((user, hp)) => {
                // A password in the URI (user:pass@) is not used: secrets belong in config.
                let user = user.split(':').next().unwrap_or(user);
                (Some(user.to_string()), hp)
            }
            None => (None, rest),
        };
        let (host, port) = split_host_port(hostport);
        Address {
            scheme,
            user,
            host,
            port,
        }
    }
}

fn split_host_port(text: &str) -> (String, Option<u16>) {
    if let Some(inner) = text.strip_prefix('[')
        && let Some((host, after)) = inner.split_once(']')
    {
        let port = after.strip_prefix(':').and_then(|p| p.parse().ok());
        return (host.to_string(), port);
    }
    match text.rsplit_once(':') {
        // A second colon means a bare IPv6 address, not a port.
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(p) => (host.to_string(), Some(p)),
            Err(_) => (text.to_string(), None),
        },
        _ => (text.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_bolt_accepts() {
        let cases = [
            ("host", None, None, "host", None),
            ("host:2222", None, None, "host", Some(2222)),
            ("ssh://u@h:22", Some("ssh"), Some("u"), "h", Some(22)),
            ("u:secret@h", None, Some("u"), "h", None),
            ("[::1]:2200", None, None, "::1", Some(2200)),
            ("::1", None, None, "::1", None),
            ("local://localhost", Some("local"), None, "localhost", None),
            ("h:notaport", None, None, "h:notaport", None),
        ];
        for (uri, scheme, user, host, port) in cases {
            let a = Address::parse(uri);
            assert_eq!(a.scheme.as_deref(), scheme, "{uri}");
            assert_eq!(a.user.as_deref(), user, "{uri}");
            assert_eq!(a.host, host, "{uri}");
            assert_eq!(a.port, port, "{uri}");
        }
    }
}
