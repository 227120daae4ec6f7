//! Target URIs as Bolt writes them: `ssh://user@host:port`, `user@host`,
//! `host:port`, `[::1]:22`, or a bare host name. A port that is not a
//! number from 0 to 65535 is an error naming it, not part of the host.

/// A URI that cannot name a target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    #[error("'{uri}': the port '{port}' is not a number from 0 to 65535")]
    BadPort { uri: String, port: String },
}

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
    /// Splits a URI into its parts; a bad port is an error.
    pub fn parse(uri: &str) -> Result<Address, UriError> {
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
        let (host, port) = split_host_port(hostport).map_err(|port| UriError::BadPort {
            uri: uri.to_string(),
            port: port.to_string(),
        })?;
        Ok(Address {
            scheme,
            user,
            host,
            port,
        })
    }
}

/// A port as a URI writes it; Err(text) when it is not one.
fn port(text: &str) -> Result<u16, &str> {
    text.parse().map_err(|_| text)
}

fn split_host_port(text: &str) -> Result<(String, Option<u16>), &str> {
    if let Some(inner) = text.strip_prefix('[')
        && let Some((host, after)) = inner.split_once(']')
    {
        let port = after.strip_prefix(':').map(port).transpose()?;
        return Ok((host.to_string(), port));
    }
    Ok(match text.rsplit_once(':') {
        // A second colon means a bare IPv6 address, not a port.
        Some((host, p)) if !host.contains(':') => (host.to_string(), Some(port(p)?)),
        _ => (text.to_string(), None),
    })
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
        ];
        for (uri, scheme, user, host, port) in cases {
            let a = Address::parse(uri).expect(uri);
            assert_eq!(a.scheme.as_deref(), scheme, "{uri}");
            assert_eq!(a.user.as_deref(), user, "{uri}");
            assert_eq!(a.host, host, "{uri}");
            assert_eq!(a.port, port, "{uri}");
        }
    }

    #[test]
    fn a_bad_port_is_an_error_naming_it() {
        for (uri, port) in [
            ("ssh://u@h:99999", "99999"),
            ("h:notaport", "notaport"),
            ("[::1]:70000", "70000"),
            ("h:", ""),
        ] {
            let e = Address::parse(uri).expect_err(uri);
            assert_eq!(
                e,
                UriError::BadPort {
                    uri: uri.into(),
                    port: port.into()
                }
            );
            assert!(e.to_string().contains(&format!("'{port}'")), "{e}");
        }
    }
}
