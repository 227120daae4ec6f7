//! The server's files: `cache` keeps files fetched from the file server
//! (`file-server-uri`) under `<cache-dir>/tasks/<sha256>/`, checked by
//! sha256; `client` is the HTTPS client that fetches them; `scratch` gives
//! each bolt-server request a private directory for its known_hosts
//! copies, scripts, upload trees and laid-out tasks.

pub mod cache;
pub mod client;
pub mod scratch;

use crate::server::http::errors::ApiError;

/// Runs a handler's file-system work on tokio's blocking pool, so that no
/// async thread waits on the disk.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(ApiError::internal)?
}
