//! Moving files over SSH: SFTP when the host has the subsystem, else exec
//! with the bytes streamed through stdin (`cat`). Directories are copied
//! recursively with their modes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use russh::client::Handle;
use russh_sftp::client::SftpSession;
use russh_sftp::protocol::FileAttributes;
use tokio::io::AsyncWriteExt;

use super::connect::Client;
use crate::transport::command::quote;
use crate::transport::{Command, Stream, TransportError};

fn ferr(what: impl std::fmt::Display) -> TransportError {
    TransportError::File(what.to_string())
}

/// The largest SFTP write ferry sends.
const WRITE_LEN: usize = 128 * 1024;

/// Files up to this size are read once and shared by every target of a
/// run; larger ones are streamed from disk for each target.
const SHARED_MAX: u64 = 8 << 20;

/// The bytes of a file to upload.
pub enum Source {
    Shared(Arc<[u8]>),
    Stream(tokio::fs::File),
}

/// Reads a small file once per process (keyed by path, size and mtime), or
/// opens a large one for streaming.
pub async fn source(path: &Path, meta: &std::fs::Metadata) -> Result<Source, TransportError> {
    type Key = (PathBuf, u64, Option<std::time::SystemTime>);
    static CACHE: OnceLock<Mutex<HashMap<Key, Arc<[u8]>>>> = OnceLock::new();
    let err = |e: std::io::Error| ferr(format!("{}: {e}", path.display()));
    if meta.len() > SHARED_MAX {
        return Ok(Source::Stream(
            tokio::fs::File::open(path).await.map_err(err)?,
        ));
    }
    let key = (path.to_path_buf(), meta.len(), meta.modified().ok());
    let cache = CACHE.get_or_init(Default::default);
    if let Some(bytes) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(Source::Shared(bytes));
    }
    let bytes: Arc<[u8]> = tokio::fs::read(path).await.map_err(err)?.into();
    if let Ok(mut c) = cache.lock() {
        c.insert(key, Arc::clone(&bytes));
    }
    Ok(Source::Shared(bytes))
}

/// Opens an SFTP session, or `None` when the host has no SFTP subsystem.
pub async fn sftp(handle: &Handle<Client>) -> Result<Option<SftpSession>, TransportError> {
    let channel = handle
        .channel_open_session()
        .await
        .map_err(|e| ferr(format!("cannot open a channel: {e}")))?;
    if channel.request_subsystem(true, "sftp").await.is_err() {
        return Ok(None);
    }
    // Fewer, larger writes: each SFTP request costs a reply to read and
    // parse, so 128 KiB writes (OpenSSH's sftp-server takes up to 256 KiB)
    // send a file with a quarter of the requests of the default 32 KiB.
    // Two in flight (256 KiB per connection) keep a link with tens of
    // milliseconds of latency busy while bounding the memory that many
    // concurrent uploads hold (benches/README.md has the measurements).
    let config = russh_sftp::client::Config {
        max_concurrent_writes: 2,
        max_write_packet_len: WRITE_LEN as u32,
        ..Default::default()
    };
    match SftpSession::new_with_config(channel.into_stream(), config).await {
        Ok(s) => Ok(Some(s)),
        Err(e) => {
            tracing::debug!("no SFTP: {e}");
            Ok(None)
        }
    }
}

fn mode_of(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

/// Uploads a file or a tree over SFTP.
pub async fn upload_sftp(sftp: &SftpSession, src: &Path, dest: &str) -> Result<(), TransportError> {
    let meta = std::fs::metadata(src).map_err(|e| ferr(format!("{}: {e}", src.display())))?;
    if meta.is_dir() {
        if !sftp.try_exists(dest).await.unwrap_or(false) {
            sftp.create_dir(dest)
                .await
                .map_err(|e| ferr(format!("cannot create {dest}: {e}")))?;
        }
        set_mode(sftp, dest, mode_of(&meta)).await?;
        let entries =
            std::fs::read_dir(src).map_err(|e| ferr(format!("{}: {e}", src.display())))?;
        for entry in entries {
            let entry = entry.map_err(ferr)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            Box::pin(upload_sftp(sftp, &entry.path(), &format!("{dest}/{name}"))).await?;
        }
        return Ok(());
    }
    match source(src, &meta).await? {
        Source::Shared(bytes) => write_sftp(sftp, &bytes[..], dest, mode_of(&meta)).await,
        Source::Stream(f) => {
            let reader = tokio::io::BufReader::with_capacity(WRITE_LEN, f);
            write_sftp(sftp, reader, dest, mode_of(&meta)).await
        }
    }
}

/// Writes one remote file over SFTP from `data`, then sets its mode. Each
/// buffer `data` hands out becomes SFTP writes of up to [`WRITE_LEN`]
/// (bytes in memory: the whole slice, with no copy).
pub async fn write_sftp<R>(
    sftp: &SftpSession,
    mut data: R,
    dest: &str,
    mode: u32,
) -> Result<(), TransportError>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    let mut file = sftp
        .create(dest)
        .await
        .map_err(|e| ferr(format!("cannot create {dest}: {e}")))?;
    tokio::io::copy_buf(&mut data, &mut file)
        .await
        .map_err(|e| ferr(format!("writing {dest}: {e}")))?;
    file.shutdown()
        .await
        .map_err(|e| ferr(format!("writing {dest}: {e}")))?;
    set_mode(sftp, dest, mode).await
}

async fn set_mode(sftp: &SftpSession, path: &str, mode: u32) -> Result<(), TransportError> {
    let attrs = FileAttributes {
        permissions: Some(mode),
        ..FileAttributes::empty()
    };
    sftp.set_metadata(path, attrs)
        .await
        .map_err(|e| ferr(format!("cannot set the mode of {path}: {e}")))
}

/// Downloads a file or a tree over SFTP into `dest` (the local path to create).
pub async fn download_sftp(
    sftp: &SftpSession,
    src: &str,
    dest: &Path,
) -> Result<(), TransportError> {
    let meta = sftp
        .metadata(src)
        .await
        .map_err(|e| ferr(format!("{src}: {e}")))?;
    let mode = meta.permissions.unwrap_or(0o644) & 0o7777;
    if meta.is_dir() {
        tokio::fs::create_dir_all(dest)
            .await
            .map_err(|e| ferr(format!("{}: {e}", dest.display())))?;
        let entries = sftp
            .read_dir(src)
            .await
            .map_err(|e| ferr(format!("{src}: {e}")))?;
        for entry in entries {
            let name = entry.file_name();
            if name == "." || name == ".." {
                continue;
            }
            Box::pin(download_sftp(
                sftp,
                &format!("{src}/{name}"),
                &dest.join(&name),
            ))
            .await?;
        }
    } else {
        let data = sftp
            .read(src)
            .await
            .map_err(|e| ferr(format!("{src}: {e}")))?;
        tokio::fs::write(dest, data)
            .await
            .map_err(|e| ferr(format!("{}: {e}", dest.display())))?;
    }
    set_local_mode(dest, mode)
}

fn set_local_mode(path: &Path, mode: u32) -> Result<(), TransportError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| ferr(format!("{}: {e}", path.display())))
}

/// The files of a local tree with their modes, directories first.
fn walk(
    src: &Path,
    dest: &str,
    out: &mut Vec<(PathBuf, String, u32, bool)>,
) -> Result<(), TransportError> {
    let meta = std::fs::metadata(src).map_err(|e| ferr(format!("{}: {e}", src.display())))?;
    out.push((
        src.to_path_buf(),
        dest.to_string(),
        mode_of(&meta),
        meta.is_dir(),
    ));
    if meta.is_dir() {
        let entries =
            std::fs::read_dir(src).map_err(|e| ferr(format!("{}: {e}", src.display())))?;
        for entry in entries {
            let entry = entry.map_err(ferr)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            walk(&entry.path(), &format!("{dest}/{name}"), out)?;
        }
    }
    Ok(())
}

/// Uploads without SFTP: one `cat > file` per file, the bytes streamed
/// to its stdin.
pub async fn upload_exec(
    handle: &Handle<Client>,
    src: &Path,
    dest: &str,
) -> Result<(), TransportError> {
    let mut items = Vec::new();
    walk(src, dest, &mut items)?;
    for (local, remote, mode, is_dir) in items {
        let q = quote(&remote).map_err(ferr)?;
        if is_dir {
            let line = format!("mkdir -p {q} && chmod {mode:o} {q}");
            check(handle, Command::shell(line), &remote).await?;
            continue;
        }
        let meta =
            std::fs::metadata(&local).map_err(|e| ferr(format!("{}: {e}", local.display())))?;
        match source(&local, &meta).await? {
            Source::Shared(bytes) => write_exec(handle, &bytes[..], &remote, mode).await?,
            Source::Stream(file) => write_exec(handle, file, &remote, mode).await?,
        }
    }
    Ok(())
}

/// Writes one remote file without SFTP: `cat > dest` with `data` streamed
/// to its stdin, then `chmod`.
pub async fn write_exec<R>(
    handle: &Handle<Client>,
    data: R,
    dest: &str,
    mode: u32,
) -> Result<(), TransportError>
where
    R: tokio::io::AsyncRead + Unpin,
{
    let q = quote(dest).map_err(ferr)?;
    let line = format!("cat > {q} && chmod {mode:o} {q}");
    let (code, stderr) = super::exec::run_with_stdin(handle, &line, data).await?;
    if code != 0 {
        return Err(ferr(format!(
            "{dest}: {}",
            String::from_utf8_lossy(&stderr).trim()
        )));
    }
    Ok(())
}

/// Downloads one file without SFTP, through `cat`.
pub async fn download_exec(
    handle: &Handle<Client>,
    src: &str,
    dest: &Path,
) -> Result<(), TransportError> {
    let q = quote(src).map_err(ferr)?;
    // A directory comes as a tar stream (modes kept), a file as itself.
    let line = format!(
        "if [ -d {q} ]; then printf D && cd {q} && tar -cf - .; else printf F && cat {q}; fi"
    );
    let data = check(handle, Command::shell(line), src).await?;
    match data.split_first() {
        Some((b'F', bytes)) => tokio::fs::write(dest, bytes)
            .await
            .map_err(|e| ferr(format!("{}: {e}", dest.display()))),
        Some((b'D', archive)) => {
            let (archive, dest) = (archive.to_vec(), dest.to_path_buf());
            tokio::task::spawn_blocking(move || {
                std::fs::create_dir_all(&dest)?;
                let mut tar = tar::Archive::new(archive.as_slice());
                tar.set_preserve_permissions(true);
                // unpack() refuses entries that would land outside `dest`.
                tar.unpack(&dest)
            })
            .await
            .map_err(ferr)?
            .map_err(|e| ferr(format!("{src}: cannot unpack the directory: {e}")))
        }
        _ => Err(ferr(format!("{src}: the target sent nothing"))),
    }
}

async fn check(
    handle: &Handle<Client>,
    command: Command,
    path: &str,
) -> Result<Vec<u8>, TransportError> {
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let done = super::exec::run(handle, &command, &mut |s, b| match s {
        Stream::Stdout => stdout.extend_from_slice(b),
        Stream::Stderr => stderr.extend_from_slice(b),
    })
    .await?;
    if done.exit_code != 0 {
        return Err(ferr(format!(
            "{path}: {}",
            String::from_utf8_lossy(&stderr).trim()
        )));
    }
    Ok(stdout)
}
