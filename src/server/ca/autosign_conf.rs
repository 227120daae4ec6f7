//! Puppet's `autosign.conf`: a file of certnames whose CSRs are signed as
//! they come, one entry a line, with Puppet Server's rules: blank lines
//! and lines starting with `#` are skipped; `*` alone matches every name;
//! `*.example.com` matches the names under `example.com` at any depth and
//! `example.com` itself (label by label from the right, ignoring case);
//! anything else is one exact certname. Puppet Server logs and skips a
//! line it cannot use; ferry refuses to start with one (file and line in
//! the error), and a line broken after the start is logged with its file
//! and line and skipped, as Puppet Server does. Stricter than Puppet
//! Server on purpose: a `*` anywhere but as the whole first label (which
//! Puppet Server reads as if it were `*.`), an entry with a space or a
//! `#` inside, and an exact name that no certname can be (upper case,
//! `/`) are errors, not silent non-matches. The file is read again for
//! every CSR, so edits apply at once.

use std::path::Path;

/// Why an autosign.conf cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AutosignConfError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Line {
        path: String,
        line: usize,
        message: String,
    },
}

/// One entry of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    /// `*`: every name.
    All,
    /// `*.LABELS`: the labels after the `*`, last first, lower case.
    Under(Vec<String>),
    /// One certname.
    Exact(String),
}

impl Entry {
    fn matches(&self, certname: &str) -> bool {
        match self {
            Entry::All => true,
            Entry::Exact(name) => name == certname,
            Entry::Under(labels) => {
                let lower = certname.to_ascii_lowercase();
                let mut name = lower.rsplit('.');
                labels.iter().all(|l| name.next() == Some(l.as_str()))
            }
        }
    }
}

/// A line's entry; `None` for a blank or comment line.
fn entry(line: &str) -> Result<Option<Entry>, String> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.trim().is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    if line.contains('#') {
        return Err(format!(
            "'{line}': a comment must be a line of its own, starting with '#'"
        ));
    }
    if line.chars().any(char::is_whitespace) {
        return Err(format!(
            "'{}': an entry has no spaces (one certname or glob a line)",
            line.trim()
        ));
    }
    if line == "*" {
        return Ok(Some(Entry::All));
    }
    if let Some(rest) = line.strip_prefix("*.")
        && !rest.contains('*')
    {
        let labels: Vec<String> = rest.rsplit('.').map(str::to_ascii_lowercase).collect();
        if labels.iter().any(String::is_empty) {
            return Err(format!("'{line}': a glob has no empty labels"));
        }
        return Ok(Some(Entry::Under(labels)));
    }
    if line.contains('*') {
        return Err(format!(
            "'{line}': '*' may only be the whole first label (*.example.com) or the whole entry"
        ));
    }
    if !crate::server::ca::is_puppet_certname(line) {
        return Err(format!(
            "'{line}' is not a certname (printable ASCII without '/' or upper case)"
        ));
    }
    Ok(Some(Entry::Exact(line.to_string())))
}

fn read(path: &Path) -> Result<String, AutosignConfError> {
    std::fs::read_to_string(path).map_err(|source| AutosignConfError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Checks every line of the file at `path` (at the server's start): the
/// first line that cannot be used is the error.
pub fn check(path: &Path) -> Result<(), AutosignConfError> {
    let text = read(path)?;
    for (i, line) in text.lines().enumerate() {
        entry(line).map_err(|message| AutosignConfError::Line {
            path: path.display().to_string(),
            line: i + 1,
            message,
        })?;
    }
    Ok(())
}

/// Whether the file at `path`, read now, lists `certname`. A file that
/// cannot be read approves nothing; a line that cannot be used is
/// skipped; both are logged.
pub fn lists(path: &Path, certname: &str) -> bool {
    let text = match read(path) {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!("autosign: {e}: the request waits for `ferry ca sign`");
            return false;
        }
    };
    text.lines().enumerate().any(|(i, line)| match entry(line) {
        Ok(e) => e.is_some_and(|e| e.matches(certname)),
        Err(message) => {
            tracing::warn!(
                "autosign: {}:{}: {message}; the line is skipped",
                path.display(),
                i + 1
            );
            false
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (file, certname, listed).
    const MATCHES: &[(&str, &str, bool)] = &[
        ("*.example.com", "web1.example.com", true),
        ("*.example.com", "a.b.example.com", true),
        ("*.example.com", "example.com", true),
        ("*.example.com", "example.com.evil", false),
        ("*.example.com", "badexample.com", false),
        ("*.EXAMPLE.com", "web1.example.com", true),
        ("*.baz", "baz", true),
        ("*", "anything.at.all", true),
        ("web1.example.com", "web1.example.com", true),
        ("web1.example.com", "web2.example.com", false),
        ("web1.example.com", "x.web1.example.com", false),
        ("# *.example.com\n\n  \nweb1", "web1.example.com", false),
        ("# a comment\n\nweb1\r\n*.lab", "db.lab", true),
        ("", "web1", false),
    ];

    #[test]
    fn entries_match_as_puppet_servers() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("autosign.conf");
        for (file, name, listed) in MATCHES {
            std::fs::write(&path, file).expect("write");
            check(&path).expect("a good file");
            assert_eq!(lists(&path, name), *listed, "{file:?} lists {name}?");
        }
    }

    /// (file, line of the error, words in it).
    const BAD: &[(&str, usize, &str)] = &[
        (
            "ok.test\nweb1.example.com # web\n",
            2,
            "a comment must be a line",
        ),
        ("web1 web2\n", 1, "no spaces"),
        ("web1.example.com \n", 1, "no spaces"),
        ("# fine\n*example.com\n", 2, "'*' may only be"),
        ("a.*.com\n", 1, "'*' may only be"),
        ("*.*.com\n", 1, "'*' may only be"),
        ("*..com\n", 1, "no empty labels"),
        ("Web1.example.com\n", 1, "is not a certname"),
        ("a/b\n", 1, "is not a certname"),
    ];

    #[test]
    fn a_bad_line_is_an_error_naming_file_and_line_and_is_skipped_later() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("autosign.conf");
        for (file, line, words) in BAD {
            std::fs::write(&path, format!("{file}*.lab\n")).expect("write");
            let e = check(&path).expect_err(file).to_string();
            let want = format!("{}:{line}: ", path.display());
            assert!(e.starts_with(&want) && e.contains(words), "{file:?}: {e}");
            // Read again for a CSR: the bad line is skipped, the rest used.
            assert!(lists(&path, "db.lab"), "{file:?}");
        }
        let missing = dir.path().join("missing.conf");
        assert!(check(&missing).is_err());
        assert!(!lists(&missing, "db.lab"));
    }
}
