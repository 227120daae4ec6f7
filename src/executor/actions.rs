//! The actions the executor can carry out on a target: a command, a script,
//! a file upload and a file download. Each builds its commands as typed
//! values and turns what happened into Bolt's result value. Output is kept
//! within the run's limit (see [`super::capture`]); a result whose output
//! was cut says so in `truncated`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::capture::{Collected, DEFAULT_MAX_OUTPUT};
use super::result::{Status, error_value};
use crate::events::{Event, Sink};
use crate::inventory::Target;
use crate::transport::{Command, Transport, TransportError};

#[derive(Clone, Debug)]
pub enum Action {
    Command { line: String },
    Script { path: PathBuf, args: Vec<String> },
    Upload { src: PathBuf, dest: String },
    Download { src: String, dest: PathBuf },
    Task(std::sync::Arc<crate::task::Prepared>),
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Command { .. } => "command",
            Action::Script { .. } => "script",
            Action::Upload { .. } => "upload",
            Action::Download { .. } => "download",
            Action::Task(_) => "task",
        }
    }

    /// What the action works on, as Bolt's `object` field.
    pub fn object(&self) -> String {
        match self {
            Action::Command { line } => line.clone(),
            Action::Script { path, .. } => path.display().to_string(),
            Action::Upload { src, .. } => src.display().to_string(),
            Action::Download { src, .. } => src.clone(),
            Action::Task(p) => p.task.name.clone(),
        }
    }

    /// Carries out the action on a connected target, keeping at most
    /// `max_output` bytes of each output stream in the result.
    pub async fn perform(
        &self,
        target: &Target,
        t: &dyn Transport,
        sink: &dyn Sink,
        max_output: usize,
    ) -> Result<(Status, Value), TransportError> {
        match self {
            Action::Command { line } => {
                let command = Command::shell(line.clone());
                let (done, out) = run_collect(target, t, &command, sink, max_output).await?;
                Ok(command_value(done.exit_code, &out))
            }
            Action::Script { path, args } => {
                run_script(target, t, path, args, sink, max_output).await
            }
            Action::Task(prepared) => {
                crate::task::runner::run(target, t, prepared, sink, max_output).await
            }
            Action::Upload { src, dest } => {
                if t.posix().run_as.is_some() {
                    upload_as(target, t, src, dest).await?;
                } else {
                    t.upload(src, dest).await?;
                }
                Ok((
                    Status::Success,
                    json!({ "_output": format!("Uploaded '{}' to '{}:{dest}'", src.display(), target.name) }),
                ))
            }
            Action::Download { src, dest } => {
                let dir = dest.join(safe_dir_name(&target.name));
                std::fs::create_dir_all(&dir)
                    .map_err(|e| TransportError::File(format!("{}: {e}", dir.display())))?;
                t.download(src, &dir).await?;
                let name = Path::new(src.trim_end_matches('/'))
                    .file_name()
                    .map(PathBuf::from)
                    .unwrap_or_default();
                let path = dir.join(name);
                Ok((
                    Status::Success,
                    json!({ "_output": format!("Downloaded '{}:{src}' to '{}'", target.name, path.display()), "path": path.display().to_string() }),
                ))
            }
        }
    }
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

/// Runs a command, reporting output as events as it arrives and keeping
/// at most `limit` bytes of each stream.
pub async fn run_collect(
    target: &Target,
    t: &dyn Transport,
    command: &Command,
    sink: &dyn Sink,
    limit: usize,
) -> Result<(crate::transport::Finished, Collected), TransportError> {
    let mut out = Collected::new(limit);
    let done = t
        .run(command, &mut |stream, data| {
            sink.event(&Event::Output {
                target: &target.name,
                stream,
                data,
            });
            out.push(stream, data);
        })
        .await?;
    Ok((done, out))
}

/// Bolt's value for a finished command; non-zero exit is a failure. When
/// output was cut, `truncated` gives the bytes each stream lost.
pub fn command_value(exit_code: i32, out: &Collected) -> (Status, Value) {
    let mut value = json!({
        "stdout": out.stdout.text(),
        "stderr": out.stderr.text(),
        "merged_output": out.merged.text(),
        "exit_code": exit_code,
    });
    if let (Some(cut), Some(map)) = (out.truncated(), value.as_object_mut()) {
        map.insert("truncated".into(), cut);
    }
    if exit_code == 0 {
        return (Status::Success, value);
    }
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "_error".into(),
            error_value(
                "ferry/command-error",
                &format!("The command failed with exit code {exit_code}"),
                None,
                json!({ "exit_code": exit_code }),
            ),
        );
    }
    (Status::Failure, value)
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
    let quiet = crate::events::Discard;
    let dir = make_tempdir(target, t).await?;
    let name = src
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "upload".into());
    let staged = format!("{dir}/{name}");
    let result = async {
        t.upload(src, &staged).await?;
        let open = Command::argv(["chmod", "-R", "a+rX", &dir]).as_login_user();
        run_collect(target, t, &open, &quiet, DEFAULT_MAX_OUTPUT).await?;
        let copy = Command::argv(["cp", "-R", &staged, dest]);
        let (done, out) = run_collect(target, t, &copy, &quiet, DEFAULT_MAX_OUTPUT).await?;
        if done.exit_code != 0 {
            return Err(TransportError::File(format!(
                "cannot copy into {dest} as the run-as user: {}",
                out.stderr.text().trim()
            )));
        }
        Ok(())
    }
    .await;
    remove_tempdir(target, t, &dir).await;
    result
}

async fn make_tempdir(target: &Target, t: &dyn Transport) -> Result<String, TransportError> {
    let template = match &t.posix().tmpdir {
        Some(dir) => format!("{}/ferry.XXXXXXXX", dir.trim_end_matches('/')),
        None => "/tmp/ferry.XXXXXXXX".to_string(),
    };
    let mktemp = Command::argv(["mktemp", "-d", &template]).as_login_user();
    let quiet = crate::events::Discard;
    let (done, out) = run_collect(target, t, &mktemp, &quiet, DEFAULT_MAX_OUTPUT).await?;
    let dir = out.stdout.text().trim().to_string();
    if done.exit_code != 0 || dir.is_empty() || out.stdout.is_truncated() {
        return Err(TransportError::File(format!(
            "cannot make a temporary directory: {}",
            out.stderr.text().trim()
        )));
    }
    Ok(dir)
}

async fn remove_tempdir(target: &Target, t: &dyn Transport, dir: &str) {
    let rm = Command::argv(["rm", "-rf", dir]).as_login_user();
    let _ = run_collect(target, t, &rm, &crate::events::Discard, DEFAULT_MAX_OUTPUT).await;
}

async fn run_script(
    target: &Target,
    t: &dyn Transport,
    path: &Path,
    args: &[String],
    sink: &dyn Sink,
    max_output: usize,
) -> Result<(Status, Value), TransportError> {
    let quiet = crate::events::Discard;
    let dir = make_tempdir(target, t).await?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "script".into());
    let remote = format!("{dir}/{name}");
    let result = async {
        t.upload(path, &remote).await?;
        // A run-as user other than the login user must be able to read it too.
        let chmod = Command::argv(["chmod", "-R", "a+rx", &dir]).as_login_user();
        run_collect(target, t, &chmod, &quiet, DEFAULT_MAX_OUTPUT).await?;
        let mut argv = vec![remote.clone()];
        argv.extend(args.iter().cloned());
        let (done, out) = run_collect(target, t, &Command::argv(argv), sink, max_output).await?;
        Ok(command_value(done.exit_code, &out))
    }
    .await;
    remove_tempdir(target, t, &dir).await;
    result
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
