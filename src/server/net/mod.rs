//! The network edge: `listen` (the TCP listener, the TLS handshake and
//! HTTP/1.1 on each connection), `tls` (the rustls configuration built from
//! the config's certificates, CA and CRLs), `crls` (client verification
//! that follows the CRL files as they change), and `conns` (the cap on
//! open connections).

pub mod conns;
pub mod crls;
pub mod listen;
pub mod tls;
