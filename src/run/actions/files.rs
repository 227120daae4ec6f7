//! File transfers: an upload (through a temporary directory and a copy as
//! the run-as user when there is one) and a download into a directory of
//! the target's own under the destination.

use std::path::{Path, PathBuf};

use super::{run_quiet, staged};
use crate::inventory::Target;
use crate::run::result::{Outcome, Output};
use crate::transport::{Command, Transport, TransportError};

/// Copies the local `src` to `dest` on a connected target.
pub async fn upload(
    target: &Target,
    t: &dyn Transport,
    src: &Path,
    dest: &str,
) -> Result<Outcome, TransportError> {
    if t.posix().run_as.is_some() {
        upload_as(target, t, src, dest).await?;
    } else {
        t.upload(src, dest).await?;
    }
    Ok(Outcome::Ok(Output::Transfer {
        message: format!("Uploaded '{}' to '{}:{dest}'", src.display(), target.host()),
        path: None,
    }))
}

/// Copies the remote `src` into `dest/<target>/` (see [`safe_dir_name`]).
pub async fn download(
    target: &Target,
    t: &dyn Transport,
    src: &str,
    dest: &Path,
) -> Result<Outcome, TransportError> {
    let dir = dest.join(safe_dir_name(&target.name));
    std::fs::create_dir_all(&dir)
        .map_err(|e| TransportError::File(format!("{}: {e}", dir.display())))?;
    t.download(src, &dir).await?;
    let name = Path::new(src.trim_end_matches('/'))
        .file_name()
        .map(PathBuf::from)
        .unwrap_or_default();
    let path = dir.join(name);
    Ok(Outcome::Ok(Output::Transfer {
        // As Bolt words it: the target's own directory, the file in `path`.
        message: format!(
            "Downloaded '{}:{src}' to '{}'",
            target.host(),
            dir.display()
        ),
        path: Some(path.display().to_string()),
    }))
}

/// A directory name for a target's downloads: the name with every byte
/// outside letters, digits, `.`, `_` and `-` percent-encoded (as a URI
/// component is), and a name of dots alone (`.`, `..`) encoded whole. Two
/// targets never share a directory, and none is `.` or `..`.
pub fn safe_dir_name(name: &str) -> String {
    let all_dots = !name.is_empty() && name.bytes().all(|b| b == b'.');
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if !all_dots && (b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.is_empty() { "%".into() } else { out }
}

/// With run-as, files go to a temporary directory as the login user and
/// are then copied into place as the run-as user, so they end up owned by
/// that user and in places only that user may write.
async fn upload_as(
    target: &Target,
    t: &dyn Transport,
    src: &Path,
    dest: &str,
) -> Result<(), TransportError> {
    staged(target, t, src, "upload", "a+rX", async |staged| {
        let copy = Command::argv(["cp", "-R", staged, dest]);
        let (done, out) = run_quiet(target, t, &copy).await?;
        if done.exit_code != 0 {
            return Err(TransportError::File(format!(
                "cannot copy into {dest} as the run-as user: {}",
                out.stderr.text().trim()
            )));
        }
        Ok(())
    })
    .await
}

#[cfg(test)]
mod safe_dir_name_tests {
    use super::safe_dir_name;

    #[test]
    fn names_map_to_distinct_plain_directories() {
        let names = [
            ".",
            "..",
            "...",
            "_",
            "a/b",
            "a_b",
            "a%2Fb",
            "web1",
            "ssh://u@h:22",
            "%",
        ];
        let dirs: Vec<String> = names.iter().map(|n| safe_dir_name(n)).collect();
        for (i, d) in dirs.iter().enumerate() {
            assert!(
                !d.contains('/') && d != "." && d != ".." && !d.is_empty(),
                "{d}"
            );
            assert!(
                !dirs[..i].contains(d),
                "{} and another name share {d}",
                names[i]
            );
        }
        assert_eq!(safe_dir_name("web1.example.com"), "web1.example.com");
        assert_eq!(safe_dir_name(".."), "%2E%2E");
    }
}
