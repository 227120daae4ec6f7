//! The local transport: runs commands on this machine through `sh -c`, and
//! copies files with the file system. `localhost` uses it unless the
//! inventory says otherwise.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use async_trait::async_trait;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::command::{Feeder, StdinWrite};
use super::options::Options;
use super::{
    Command, Finished, OutputFn, Overrides, PosixSettings, Stream, Transport, TransportError,
};
use crate::inventory::Target;

pub struct Local {
    settings: PosixSettings,
    timeout: Option<std::time::Duration>,
}

/// Options Bolt's local transport has that ferry accepts and ignores.
const BOLT_ONLY: &[&str] = &[
    "cleanup",
    "interpreters",
    "bundled-ruby",
    "extensions",
    "tmpdir",
    "env-vars",
];

impl Local {
    pub fn new(target: &Target, overrides: &Overrides) -> Result<Local, TransportError> {
        let mut opts = Options::new(target, "local");
        let settings = PosixSettings {
            run_as: opts.run_as(overrides.run_as.as_deref())?,
            cache_dir: opts.path("cache-dir")?,
            tmpdir: opts.path("tmpdir")?,
            session_dir: None,
        };
        opts.finish(BOLT_ONLY)?;
        Ok(Local {
            settings,
            timeout: overrides.command_timeout,
        })
    }
}

#[async_trait]
impl Transport for Local {
    async fn connect(&mut self) -> Result<(), TransportError> {
        Ok(())
    }

    async fn run(&self, command: &Command, out: OutputFn<'_>) -> Result<Finished, TransportError> {
        let mut command = command.clone();
        if command.run_as.is_none() && !command.login_only {
            command.run_as = self.settings.run_as.clone();
        }
        let line = command
            .render()
            .map_err(|e| TransportError::Command(e.to_string()))?;
        let fut = run_process(&command, &line, out);
        super::with_timeout(command.timeout.or(self.timeout), fut).await
    }

    async fn upload(&self, src: &Path, dest: &str) -> Result<(), TransportError> {
        let (src, dest) = (src.to_path_buf(), PathBuf::from(dest));
        blocking(move || copy_tree(&src, &dest)).await
    }

    async fn write_file(&self, bytes: &[u8], dest: &str, mode: u32) -> Result<(), TransportError> {
        use std::os::unix::fs::PermissionsExt;
        let (bytes, dest) = (bytes.to_vec(), PathBuf::from(dest));
        blocking(move || {
            std::fs::write(&dest, &bytes)?;
            std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(mode))
        })
        .await
    }

    async fn download(&self, src: &str, dest: &Path) -> Result<(), TransportError> {
        let src = PathBuf::from(src);
        let name = src
            .file_name()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("download"));
        let dest = dest.join(name);
        blocking(move || copy_tree(&src, &dest)).await
    }

    async fn close(&mut self) {}

    fn posix(&self) -> &PosixSettings {
        &self.settings
    }
}

async fn run_process(
    command: &Command,
    line: &str,
    out: OutputFn<'_>,
) -> Result<Finished, TransportError> {
    let failed = |e: std::io::Error| TransportError::Command(format!("cannot start sh: {e}"));
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(failed)?;
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut feeder = Feeder::new(command);
    write_all(&mut stdin, feeder.start()).await;
    let (mut obuf, mut ebuf) = (vec![0u8; 32 * 1024], vec![0u8; 32 * 1024]);
    while stdout.is_some() || stderr.is_some() {
        tokio::select! {
            n = read(&mut stdout, &mut obuf), if stdout.is_some() => match n {
                Some(n) => out(Stream::Stdout, &obuf[..n]),
                None => stdout = None,
            },
            n = read(&mut stderr, &mut ebuf), if stderr.is_some() => match n {
                Some(n) => {
                    let (shown, writes) = feeder
                        .stderr(&ebuf[..n])
                        .map_err(|e| TransportError::Command(e.to_string()))?;
                    if !shown.is_empty() {
                        out(Stream::Stderr, &shown);
                    }
                    write_all(&mut stdin, writes).await;
                }
                None => stderr = None,
            },
        }
    }
    let rest = feeder.finish();
    if !rest.is_empty() {
        out(Stream::Stderr, &rest);
    }
    let status = child
        .wait()
        .await
        .map_err(|e| TransportError::Command(format!("waiting for the command: {e}")))?;
    use std::os::unix::process::ExitStatusExt;
    Ok(Finished {
        exit_code: status.code().unwrap_or(128 + status.signal().unwrap_or(0)),
        signal: status.signal().map(|s| format!("signal {s}")),
    })
}

async fn read<R: tokio::io::AsyncRead + Unpin>(r: &mut Option<R>, buf: &mut [u8]) -> Option<usize> {
    match r.as_mut()?.read(buf).await {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

async fn write_all(stdin: &mut Option<tokio::process::ChildStdin>, writes: Vec<StdinWrite>) {
    for w in writes {
        match w {
            StdinWrite::Bytes(bytes) => {
                if let Some(s) = stdin.as_mut() {
                    // A command that does not read its stdin closes it: not an error.
                    let _ = s.write_all(bytes.expose()).await;
                }
            }
            StdinWrite::Eof => *stdin = None,
        }
    }
}

async fn blocking<F>(f: F) -> Result<(), TransportError>
where
    F: FnOnce() -> std::io::Result<()> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| TransportError::File(e.to_string()))?
        .map_err(|e| TransportError::File(e.to_string()))
}

/// Copies a file or a directory tree; modes are kept.
pub fn copy_tree(src: &Path, dest: &Path) -> std::io::Result<()> {
    let meta = std::fs::metadata(src)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", src.display())))?;
    if meta.is_dir() {
        std::fs::create_dir_all(dest)?;
        std::fs::set_permissions(dest, meta.permissions())?;
        for entry in std::fs::read_dir(src)? {
            let entry = entry?;
            copy_tree(&entry.path(), &dest.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        std::fs::copy(src, dest).map(|_| ()).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("{} -> {}: {e}", src.display(), dest.display()),
            )
        })
    }
}
