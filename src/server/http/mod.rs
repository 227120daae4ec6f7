//! What every endpoint shares at the HTTP edge: `auth` (who is calling and
//! what they may do), `body` (reading a JSON body within the size and time
//! limits), `limits` (the range of every number a request carries, no NUL
//! in any string), and `errors` (`{kind, msg, details}` answers).

pub mod auth;
pub mod body;
pub mod errors;
pub mod limits;
