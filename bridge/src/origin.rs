//! The DNS-rebinding defence: a request must be addressed to this bridge's own loopback
//! authority, whatever name a page's DNS points at 127.0.0.1.
//!
//! Contract: `Host` must be present exactly once and be `127.0.0.1:PORT`, `localhost:PORT` or
//! `[::1]:PORT` with the bridge's own port (host names compared case-insensitively, nothing else
//! tolerated: no default port, no trailing dot). `Origin`, when present, must be exactly once
//! `http://` followed by one of those authorities (no path; `null` is refused). Anything else
//! is 403 Forbidden with a JSON-RPC error whose id is null (the body is not read).

use axum::http::header::{HOST, ORIGIN};
use axum::http::{HeaderMap, HeaderName, StatusCode};

use crate::reply::Rejection;

/// The loopback host names that may address the bridge.
const LOOPBACK_HOSTS: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

/// Accepts a request addressed to `port` on loopback; 403 otherwise.
pub(crate) fn check(headers: &HeaderMap, port: u16) -> Result<(), Rejection> {
    let host =
        single(headers, &HOST).ok_or_else(|| forbidden("a single Host header is required"))?;
    if !is_own_authority(host, port) {
        return Err(forbidden(&format!(
            "Host {host:?} does not name this bridge (127.0.0.1:{port}, localhost:{port} or [::1]:{port})"
        )));
    }
    if headers.contains_key(ORIGIN) {
        let origin = single(headers, &ORIGIN)
            .ok_or_else(|| forbidden("at most one readable Origin header is allowed"))?;
        let own = origin
            .get(..7)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
            && is_own_authority(&origin[7..], port);
        if !own {
            return Err(forbidden(&format!(
                "Origin {origin:?} is not this bridge (http://127.0.0.1:{port}, http://localhost:{port} or http://[::1]:{port})"
            )));
        }
    }
    Ok(())
}

fn single<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

fn is_own_authority(authority: &str, port: u16) -> bool {
    let Some((host, port_text)) = authority.rsplit_once(':') else {
        return false;
    };
    port_text == port.to_string()
        && LOOPBACK_HOSTS
            .iter()
            .any(|own| own.eq_ignore_ascii_case(host))
}

fn forbidden(why: &str) -> Rejection {
    Rejection::new(
        StatusCode::FORBIDDEN,
        -32600,
        format!("Forbidden: {why} (DNS rebinding protection)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_authorities_only() {
        assert!(is_own_authority("127.0.0.1:8080", 8080));
        assert!(is_own_authority("LOCALHOST:8080", 8080));
        assert!(is_own_authority("[::1]:8080", 8080));
        assert!(!is_own_authority("127.0.0.1:8081", 8080));
        assert!(!is_own_authority("127.0.0.1", 8080));
        assert!(!is_own_authority("localhost.:8080", 8080));
        assert!(!is_own_authority("127.0.0.1:08080", 8080));
        assert!(!is_own_authority("evil.example.com:8080", 8080));
        assert!(!is_own_authority("::1:8080", 8080));
    }
}
