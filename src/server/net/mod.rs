//! The network edge: `listen` (the TCP listener, the TLS handshake and
//! HTTP/1.1 on each connection), `tls` (the rustls configuration built from
//! the config's certificates, CA and CRLs), and `conns` (the cap on open
//! connections).

pub mod conns;
pub mod listen;
pub mod tls;
