//! `ferry serve --config FILE`: reads and checks the configuration (a bad
//! one stops here with its position or key), sets up logging from its
//! `loglevel` (FERRY_LOG wins when set), binds, and serves until SIGINT or
//! SIGTERM.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use ferry::server::{Server, ServerConfig};

pub async fn run(config: &Path) -> Result<ExitCode> {
    let config = ServerConfig::load(config)?;
    let level = std::env::var("FERRY_LOG").unwrap_or_else(|_| config.loglevel.clone());
    super::init_logging(&level, false);
    let server = Server::bind(config).await?;
    let state = server.state();
    eprintln!(
        "ferry: serving on https://{} (store: {})",
        server.local_addr(),
        state.store.backend()
    );
    tracing::info!(addr = %server.local_addr(), store = state.store.backend(), "serving");
    server.run(shutdown()).await;
    tracing::info!("stopped");
    state.store.close().await;
    Ok(ExitCode::SUCCESS)
}

async fn shutdown() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}
