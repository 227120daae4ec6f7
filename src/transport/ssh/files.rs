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

/// How deep a downloaded tree may go: a target that lists a directory
/// inside itself forever stops here.
const MAX_DOWNLOAD_DEPTH: usize = 64;

/// Downloads a file or a tree over SFTP into `dest` (the local path to
/// create). Files are streamed to disk in chunks. The names a directory
/// listing gives are the target's word, so each is checked before it is
/// joined onto `dest` (see [`entry_name`]); a refused entry is skipped and
/// named in the error, and the rest of the tree still comes. Modes are
/// kept without set-id and sticky bits, and nothing is written through a
/// symbolic link that was already in the destination.
pub async fn download_sftp(
    sftp: &SftpSession,
    src: &str,
    dest: &Path,
) -> Result<(), TransportError> {
    let mut refused = Vec::new();
    download_entry(sftp, src, dest, 0, &mut refused).await?;
    refused_error(src, refused)
}

/// One file or directory of a download; refused names go to `refused`.
async fn download_entry(
    sftp: &SftpSession,
    src: &str,
    dest: &Path,
    depth: usize,
    refused: &mut Vec<String>,
) -> Result<(), TransportError> {
    let meta = sftp
        .metadata(src)
        .await
        .map_err(|e| ferr(format!("{src}: {e}")))?;
    let mode = local_mode(meta.permissions.unwrap_or(0o644));
    if meta.is_dir() {
        if depth >= MAX_DOWNLOAD_DEPTH {
            refused.push(format!(
                "{src} (deeper than {MAX_DOWNLOAD_DEPTH} directories)"
            ));
            return Ok(());
        }
        local_dir(dest)?;
        let entries = sftp
            .read_dir(src)
            .await
            .map_err(|e| ferr(format!("{src}: {e}")))?;
        for entry in entries {
            let name = entry.file_name();
            if name == "." || name == ".." {
                continue;
            }
            let Some(name) = entry_name(&name) else {
                refused.push(format!("{name:?} in {src}"));
                continue;
            };
            Box::pin(download_entry(
                sftp,
                &format!("{src}/{name}"),
                &dest.join(name),
                depth + 1,
                refused,
            ))
            .await?;
        }
    } else {
        let mut remote = sftp
            .open(src)
            .await
            .map_err(|e| ferr(format!("{src}: {e}")))?;
        let mut local = local_file(dest).await?;
        tokio::io::copy(&mut remote, &mut local)
            .await
            .map_err(|e| ferr(format!("{src}: {e}")))?;
        local
            .flush()
            .await
            .map_err(|e| ferr(format!("{}: {e}", dest.display())))?;
        let _ = remote.shutdown().await;
    }
    set_local_mode(dest, mode)
}

/// A name from a remote directory listing, if it is one plain name: not
/// empty, `.` or `..`, with no `/` and no NUL. Anything else would put a
/// file outside the directory it was listed in.
pub fn entry_name(name: &str) -> Option<&str> {
    let plain = !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0']);
    plain.then_some(name)
}

/// A remote mode as ferry keeps it locally: permission bits only, never
/// set-user-id, set-group-id or sticky.
fn local_mode(mode: u32) -> u32 {
    mode & 0o777
}

/// Makes the local directory `dir` unless it exists as a real directory
/// (a symbolic link there is refused, not followed).
fn local_dir(dir: &Path) -> Result<(), TransportError> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(ferr(format!(
            "{}: exists and is not a directory",
            dir.display()
        ))),
        Err(_) => std::fs::create_dir(dir).map_err(|e| ferr(format!("{}: {e}", dir.display()))),
    }
}

/// Opens the local file `path` for writing, truncating it; a symbolic
/// link there is refused, not followed.
async fn local_file(path: &Path) -> Result<tokio::fs::File, TransportError> {
    tokio::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(path)
        .await
        .map_err(|e| ferr(format!("{}: {e}", path.display())))
}

/// The download's error when entries were refused.
fn refused_error(src: &str, refused: Vec<String>) -> Result<(), TransportError> {
    if refused.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = refused.iter().take(5).map(String::as_str).collect();
    let more = refused.len().saturating_sub(shown.len());
    Err(ferr(format!(
        "{src}: refused {} entr{} the target listed: {}{}",
        refused.len(),
        if refused.len() == 1 { "y" } else { "ies" },
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )))
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

/// Downloads a file or a tree without SFTP: `cat` for a file, `tar` for a
/// directory (links followed, so the tree holds what SFTP would bring).
/// Either is streamed to disk as it arrives; a tar entry that is not a
/// plain file or directory, or whose path leaves `dest`, is refused and
/// named in the error, and modes lose their set-id and sticky bits.
pub async fn download_exec(
    handle: &Handle<Client>,
    src: &str,
    dest: &Path,
) -> Result<(), TransportError> {
    let q = quote(src).map_err(ferr)?;
    let line = format!(
        "if [ -d {q} ]; then printf D && cd {q} && tar -chf - .; else printf F && cat {q}; fi"
    );
    let mut channel = handle
        .channel_open_session()
        .await
        .map_err(|e| ferr(format!("cannot open a channel: {e}")))?;
    channel
        .exec(true, line)
        .await
        .map_err(|e| ferr(format!("{src}: {e}")))?;
    let mut sink = DownloadSink::Undecided;
    let mut stderr = Vec::new();
    let mut code = None;
    while let Some(msg) = channel.wait().await {
        match msg {
            russh::ChannelMsg::Data { data } => sink.write(&data, dest).await?,
            // Only an error message is expected here: keep its start.
            russh::ChannelMsg::ExtendedData { data, .. } => {
                super::exec::keep_head(&mut stderr, &data)
            }
            russh::ChannelMsg::ExitStatus { exit_status } => code = Some(exit_status),
            russh::ChannelMsg::Close => break,
            _ => {}
        }
    }
    let unpacked = sink.finish(src).await;
    match code {
        Some(0) => unpacked,
        Some(_) => Err(ferr(format!(
            "{src}: {}",
            String::from_utf8_lossy(&stderr).trim()
        ))),
        None => Err(ferr(format!(
            "{src}: the connection was lost before the download finished"
        ))),
    }
}

/// Where a download's bytes go as they arrive: the first byte says
/// whether a file (`F`) or a tar stream of a directory (`D`) follows.
enum DownloadSink {
    Undecided,
    File(tokio::fs::File),
    Tar {
        chunks: tokio::sync::mpsc::Sender<Vec<u8>>,
        unpacker: tokio::task::JoinHandle<std::io::Result<Vec<String>>>,
    },
}

impl DownloadSink {
    async fn write(&mut self, data: &[u8], dest: &Path) -> Result<(), TransportError> {
        let data = match self {
            DownloadSink::Undecided => {
                let Some((kind, rest)) = data.split_first() else {
                    return Ok(());
                };
                *self = match kind {
                    b'F' => DownloadSink::File(local_file(dest).await?),
                    b'D' => {
                        local_dir(dest)?;
                        let (chunks, received) = tokio::sync::mpsc::channel(8);
                        let dest = dest.to_path_buf();
                        let unpacker = tokio::task::spawn_blocking(move || {
                            unpack_tar(ChunkReader::new(received), &dest)
                        });
                        DownloadSink::Tar { chunks, unpacker }
                    }
                    _ => return Err(ferr("the target's reply is not a download")),
                };
                rest
            }
            _ => data,
        };
        match self {
            DownloadSink::File(f) => f
                .write_all(data)
                .await
                .map_err(|e| ferr(format!("{}: {e}", dest.display()))),
            // A closed receiver means the unpacker stopped; finish() says why.
            DownloadSink::Tar { chunks, .. } => {
                let _ = chunks.send(data.to_vec()).await;
                Ok(())
            }
            DownloadSink::Undecided => Ok(()),
        }
    }

    async fn finish(self, src: &str) -> Result<(), TransportError> {
        match self {
            DownloadSink::Undecided => Err(ferr(format!("{src}: the target sent nothing"))),
            DownloadSink::File(mut f) => f.flush().await.map_err(|e| ferr(format!("{src}: {e}"))),
            DownloadSink::Tar { chunks, unpacker } => {
                drop(chunks);
                let refused = unpacker
                    .await
                    .map_err(ferr)?
                    .map_err(|e| ferr(format!("{src}: cannot unpack the directory: {e}")))?;
                refused_error(src, refused)
            }
        }
    }
}

/// A blocking reader over the chunks a download task sends.
struct ChunkReader {
    chunks: tokio::sync::mpsc::Receiver<Vec<u8>>,
    current: std::io::Cursor<Vec<u8>>,
}

impl ChunkReader {
    fn new(chunks: tokio::sync::mpsc::Receiver<Vec<u8>>) -> ChunkReader {
        ChunkReader {
            chunks,
            current: std::io::Cursor::new(Vec::new()),
        }
    }
}

impl std::io::Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.current.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            match self.chunks.blocking_recv() {
                Some(next) => self.current = std::io::Cursor::new(next),
                None => return Ok(0),
            }
        }
    }
}

/// Unpacks a tar stream into `dest`, entry by entry: plain files and
/// directories whose paths stay inside `dest`; anything else (links,
/// devices, absolute or `..` paths) is refused and named in the result.
fn unpack_tar(reader: impl std::io::Read, dest: &Path) -> std::io::Result<Vec<String>> {
    let mut archive = tar::Archive::new(reader);
    // Permission bits only: no set-id or sticky bits.
    archive.set_preserve_permissions(false);
    let mut refused = Vec::new();
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.into_owned();
        let kind = entry.header().entry_type();
        let inside = path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
        if !inside || !(kind.is_file() || kind.is_dir()) {
            refused.push(format!("{:?}", path.display().to_string()));
            continue;
        }
        // unpack_in also refuses a path that would pass through a link.
        if !entry.unpack_in(dest)? {
            refused.push(format!("{:?}", path.display().to_string()));
        }
    }
    Ok(refused)
}

/// Runs one of ferry's own file commands; its output is ignored but for
/// the start of stderr, which names the problem when it fails.
async fn check(
    handle: &Handle<Client>,
    command: Command,
    path: &str,
) -> Result<(), TransportError> {
    let mut stderr = Vec::new();
    let done = super::exec::run(handle, &command, &mut |s, b| {
        if s == Stream::Stderr {
            super::exec::keep_head(&mut stderr, b);
        }
    })
    .await?;
    if done.exit_code != 0 {
        return Err(ferr(format!(
            "{path}: {}",
            String::from_utf8_lossy(&stderr).trim()
        )));
    }
    Ok(())
}
