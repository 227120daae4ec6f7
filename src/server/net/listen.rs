//! The listening side: a TCP listener, at most `max-connections` open
//! connections (`conns`: the oldest idle one makes room for a new one), the
//! TLS handshake (within `request-timeout`), the verified client
//! certificate's names attached to every request as a [`Peer`], and
//! HTTP/1.1 with `request-timeout` for each request's headers (and for an
//! idle kept-alive connection's next request).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use axum::body::Body;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rustls::HandshakeKind;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::server::http::auth::Peer;
use crate::server::net::conns::{Busy, Conns};
use crate::server::net::crls::ReloadingVerifier;
use crate::server::net::tls;
use crate::server::{AppState, ServerConfig, ServerError, router};

/// A bound server, ready to run.
pub struct Server {
    listener: TcpListener,
    acceptor: TlsAcceptor,
    /// Checks a resumed session's client certificate again (CRLs change).
    verifier: Arc<ReloadingVerifier>,
    state: Arc<AppState>,
    addr: SocketAddr,
}

impl Server {
    /// Sets up the Puppet CA when configured, checks TLS material, opens the store (failing jobs a previous server
    /// left running), loads the inventory and binds the port.
    pub async fn bind(config: ServerConfig) -> Result<Server, ServerError> {
        // A configured Puppet CA is made on first start, with the server's
        // own certificate when it has none yet.
        if let Some(ca) = &config.ca {
            crate::server::ca::bootstrap(ca, &config.ssl_cert, &config.ssl_key)?;
        }
        let (tls, verifier) = tls::server_config(&config)?;
        let host = config.host.clone();
        let wanted = format!("{}:{}", host, config.port);
        let state = AppState::new(config).await?;
        let listener = TcpListener::bind(&wanted)
            .await
            .map_err(|source| ServerError::Bind {
                addr: wanted.clone(),
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServerError::Bind {
            addr: wanted,
            source,
        })?;
        *state
            .base_url
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = format!("https://{host}:{}", addr.port());
        Ok(Server {
            listener,
            acceptor: TlsAcceptor::from(tls),
            verifier,
            state,
            addr,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn state(&self) -> Arc<AppState> {
        Arc::clone(&self.state)
    }

    /// Serves until `shutdown` completes.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let app = router(Arc::clone(&self.state));
        let timeout = self.state.config.request_timeout;
        let conns = Conns::new(self.state.config.max_connections);
        tokio::pin!(shutdown);
        loop {
            let (tcp, remote) = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                _ = &mut shutdown => break,
            };
            let Some(slot) = conns.admit() else {
                tracing::debug!(%remote, "refused: max-connections reached and none idle");
                drop(tcp);
                continue;
            };
            let _ = tcp.set_nodelay(true);
            let acceptor = self.acceptor.clone();
            let verifier = Arc::clone(&self.verifier);
            let app = app.clone();
            let id = slot.id();
            let task = tokio::spawn(async move {
                let _slot = &slot;
                let stream = match tokio::time::timeout(timeout, acceptor.accept(tcp)).await {
                    Ok(Ok(stream)) => stream,
                    Ok(Err(e)) => {
                        tracing::info!(%remote, "TLS handshake refused: {e}");
                        return;
                    }
                    Err(_) => {
                        tracing::info!(%remote, "TLS handshake timed out");
                        return;
                    }
                };
                let conn = stream.get_ref().1;
                if conn.handshake_kind() == Some(HandshakeKind::Resumed)
                    && let Some(chain) = conn.peer_certificates()
                    && let Err(e) = verifier.recheck(chain)
                {
                    tracing::info!(%remote, "resumed TLS session refused: {e}");
                    return;
                }
                let peer = match conn.peer_certificates() {
                    Some([cert, ..]) => Peer::Cert {
                        names: tls::certificate_names(cert),
                        certname: tls::certificate_cn(cert),
                    },
                    _ => Peer::Anonymous,
                };
                let counter = slot.counter();
                let service =
                    hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                        req.extensions_mut().insert(peer.clone());
                        // Busy from the request until its response body is sent.
                        let busy = Busy::new(&counter);
                        let answer = app.clone().oneshot(req);
                        async move {
                            let resp = answer.await?;
                            Ok::<_, std::convert::Infallible>(resp.map(|body| {
                                Body::new(body.map_frame(move |frame| {
                                    let _ = &busy;
                                    frame
                                }))
                            }))
                        }
                    });
                // The header timer also runs while a kept-alive connection
                // waits for its next request: idle connections end.
                let served = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(timeout)
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
                if let Err(e) = served {
                    tracing::debug!(%remote, "connection ended: {e}");
                }
            });
            conns.closable(id, task.abort_handle());
        }
    }
}
