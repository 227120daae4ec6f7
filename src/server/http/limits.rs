//! The bounds of what a client may send, checked at the API's edge so that
//! nothing out of range reaches the executor, a timer, the store or a
//! command line: every number a request carries (concurrency, timeouts,
//! ports, page sizes, offsets, event positions) has a documented range
//! (docs/SERVER.md, "Bounds"), and no string may hold a NUL byte (it
//! cannot be passed on a command line or in a path). Either is a 400
//! naming the field.

use serde_json::Value;

use crate::server::http::errors::ApiError;

/// Largest `concurrency` of a job (and of the server's config).
pub const MAX_CONCURRENCY: u64 = 10_000;
/// Largest `timeout` of a task, in seconds (7 days).
pub const MAX_TIMEOUT: u64 = 7 * 24 * 3600;
/// Largest `connect-timeout` (and `disconnect-timeout`) of a target, in seconds.
pub const MAX_CONNECT_TIMEOUT: u64 = 3600;
/// Largest `limit` of a job listing.
pub const MAX_PAGE: i64 = 1000;
/// Largest `offset` of a job listing and `start` of an event listing or
/// stream (2^53 - 1, the largest integer every JSON client reads exactly).
pub const MAX_POSITION: i64 = (1 << 53) - 1;

/// `n` when `lo <= n <= hi`, else a 400 naming `field`.
pub fn range(field: &str, n: u64, lo: u64, hi: u64) -> Result<u64, ApiError> {
    if (lo..=hi).contains(&n) {
        Ok(n)
    } else {
        Err(ApiError::bad_field(
            field,
            format!("must be from {lo} to {hi} (got {n})"),
        ))
    }
}

/// A listing's `limit` (1 to [`MAX_PAGE`], default 100) and `offset`
/// (default 0) from the query; a bad one is a 400 naming it.
pub fn page(query: &Option<String>) -> Result<(i64, i64), ApiError> {
    let limit = query_number(query, "limit", 1, MAX_PAGE)?.unwrap_or(100);
    let offset = query_number(query, "offset", 0, MAX_POSITION)?.unwrap_or(0);
    Ok((limit, offset))
}

/// A whole-number query parameter within `lo..=hi`; a bad one is a 400
/// naming it.
pub fn query_number(
    query: &Option<String>,
    key: &str,
    lo: i64,
    hi: i64,
) -> Result<Option<i64>, ApiError> {
    let Some(query) = query else { return Ok(None) };
    for pair in query.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k == key {
            let n: i64 = v.parse().map_err(|_| {
                ApiError::bad_field(key, format!("must be a whole number from {lo} to {hi}"))
            })?;
            if !(lo..=hi).contains(&n) {
                return Err(ApiError::bad_field(
                    key,
                    format!("must be from {lo} to {hi} (got {n})"),
                ));
            }
            return Ok(Some(n));
        }
    }
    Ok(None)
}

/// Refuses a request with a NUL byte in any string or key, naming where.
pub fn no_nul(value: &Value) -> Result<(), ApiError> {
    fn walk(v: &Value, at: &mut String) -> Result<(), ApiError> {
        match v {
            Value::String(s) if s.contains('\0') => {
                Err(ApiError::bad_field(at, "must not contain a NUL byte"))
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let len = at.len();
                    at.push_str(&format!("[{i}]"));
                    walk(item, at)?;
                    at.truncate(len);
                }
                Ok(())
            }
            Value::Object(map) => {
                for (k, item) in map {
                    if k.contains('\0') {
                        return Err(ApiError::bad_field(at, "a key must not contain a NUL byte"));
                    }
                    let len = at.len();
                    if !at.is_empty() {
                        at.push('.');
                    }
                    at.push_str(k);
                    walk(item, at)?;
                    at.truncate(len);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
    walk(value, &mut String::new())
}

/// Whether a `/`-separated path given by a client stays inside the
/// directory it is taken from: no empty, `.` or `..` segment and no
/// backslash (so neither `..` nor an absolute path can leave it).
pub fn stays_inside(path: &str) -> bool {
    !path
        .split('/')
        .any(|seg| seg.is_empty() || seg == "." || seg == ".." || seg.contains('\\'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nul_bytes_are_refused_by_field() {
        let field = |v: Value| no_nul(&v).err().map(|e| e.details["field"].clone());
        assert_eq!(field(json!({"command": "echo hi"})), None);
        assert_eq!(
            field(json!({"command": "echo \u{0}hi"})),
            Some(json!("command"))
        );
        assert_eq!(
            field(json!({"files": [{"a": "x"}, {"relative_path": "a\u{0}"}]})),
            Some(json!("files[1].relative_path"))
        );
        assert_eq!(
            field(json!({"target": {"x\u{0}": 1}})),
            Some(json!("target"))
        );
    }

    #[test]
    fn numbers_have_ranges() {
        assert!(range("concurrency", 10_000, 1, MAX_CONCURRENCY).is_ok());
        let e = range("concurrency", 1 << 61, 1, MAX_CONCURRENCY).expect_err("big");
        assert!(
            e.msg.starts_with("concurrency: must be from 1 to 10000"),
            "{}",
            e.msg
        );
        let q = Some("limit=5&start=-1".to_string());
        assert_eq!(query_number(&q, "limit", 1, MAX_PAGE).ok(), Some(Some(5)));
        assert!(query_number(&q, "start", 0, MAX_POSITION).is_err());
        assert_eq!(query_number(&q, "offset", 0, MAX_POSITION).ok(), Some(None));
    }
}
