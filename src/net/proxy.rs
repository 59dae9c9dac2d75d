//! Which proxy, if any, carries the requests to an MCP endpoint, and the CONNECT tunnel through
//! one. The rules are reqwest's own (hyper-util's matcher, which reqwest uses): `HTTPS_PROXY`,
//! `HTTP_PROXY` (not under CGI), `ALL_PROXY` and `NO_PROXY`, in either case; or the proxy the
//! configuration names for the client, whatever the environment says (`""`: none).
//!
//! Through an `http://` proxy the endpoint stays on the direct connections (`net::direct`):
//! plain-http requests are sent to the proxy in absolute form, with its credentials on each;
//! `https://` ones go through a CONNECT tunnel, with TLS to the endpoint inside it (the
//! certificate is checked for the endpoint's name: the proxy sees only ciphertext). Other
//! proxies (`https://`, SOCKS) leave the endpoint to reqwest.

use hyper_util::client::proxy::matcher::Matcher;
use reqwest::header::HeaderValue;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use url::Url;

/// Largest CONNECT answer head read from a proxy.
const HEAD_MAX: usize = 16 * 1024;

/// How the endpoint is reached.
pub(crate) enum Route {
    /// Straight to the endpoint's host.
    Direct,
    /// Through an `http://` proxy.
    Via(Via),
    /// Through a proxy only reqwest speaks to.
    Other,
}

/// An `http://` proxy: where it listens, and its credentials (from its URL's userinfo).
#[derive(Clone)]
pub(crate) struct Via {
    pub host: String,
    pub port: u16,
    pub auth: Option<HeaderValue>,
}

impl Via {
    /// `host:port`, as errors name the proxy (never its credentials).
    pub fn name(&self) -> String {
        authority(&self.host, self.port)
    }
}

/// The route to `url` under `setting` (the configuration's `proxy`: `None` follows the
/// environment, `Some("")` means none).
pub(crate) fn route(setting: Option<&str>, url: &Url) -> Route {
    let matcher = match setting {
        None => Matcher::from_system(),
        Some("") => return Route::Direct,
        Some(proxy) => Matcher::builder().all(proxy.to_string()).build(),
    };
    let Ok(uri) = url.as_str().parse::<hyper::Uri>() else {
        return Route::Other;
    };
    let Some(intercept) = matcher.intercept(&uri) else {
        return Route::Direct;
    };
    let proxy = intercept.uri();
    match (proxy.scheme_str(), proxy.host()) {
        (Some("http"), Some(host)) => Route::Via(Via {
            host: host.trim_start_matches('[').trim_end_matches(']').to_string(),
            port: proxy.port_u16().unwrap_or(80),
            auth: intercept.basic_auth().cloned(),
        }),
        _ => Route::Other,
    }
}

/// `host:port`, an IPv6 address in brackets.
pub(crate) fn authority(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Asks the proxy on `stream` for a tunnel to `target` (`host:port`); `Ok` once it said 2xx.
/// Errors are worded like the other connect failures, naming the proxy and its status.
pub(crate) async fn tunnel(stream: &mut TcpStream, via: &Via, target: &str) -> Result<(), String> {
    let mut head = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if let Some(auth) = &via.auth {
        head.push_str("Proxy-Authorization: ");
        head.push_str(auth.to_str().unwrap_or_default());
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let failed = |what: String| format!("client error (Connect): proxy {} {what}", via.name());
    stream
        .write_all(head.as_bytes())
        .await
        .map_err(|e| failed(format!("connection error: {e}")))?;
    // Byte by byte up to the blank line: nothing of the tunnel's own bytes is read here (the
    // server speaks only after the client's TLS hello anyway); a head is a few dozen bytes.
    let mut answer = Vec::with_capacity(128);
    let mut byte = [0u8; 1];
    while !answer.ends_with(b"\r\n\r\n") {
        if answer.len() >= HEAD_MAX {
            return Err(failed(format!("sent a CONNECT answer head over {HEAD_MAX} bytes")));
        }
        match stream.read(&mut byte).await {
            Ok(0) => return Err(failed("closed the connection before answering CONNECT".into())),
            Ok(_) => answer.push(byte[0]),
            Err(e) => return Err(failed(format!("connection error: {e}"))),
        }
    }
    let status_line = answer.split(|&b| b == b'\r').next().unwrap_or_default();
    let status_line = String::from_utf8_lossy(status_line);
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let status = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") || status.len() != 3 || !status.bytes().all(|b| b.is_ascii_digit()) {
        return Err(failed("did not answer CONNECT with HTTP".into()));
    }
    if !status.starts_with('2') {
        let reason: String = parts.next().unwrap_or_default().chars().take(100).collect();
        let hint = if status == "407" {
            if via.auth.is_some() {
                ": the proxy refused its credentials (the user and password in the proxy's URL)"
            } else {
                ": the proxy wants credentials (user:password@ in the proxy's URL)"
            }
        } else {
            ""
        };
        return Err(failed(format!(
            "refused the tunnel to {target}: {status} {reason}{hint}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn via(setting: &str, url: &str) -> Option<(String, u16, bool)> {
        match route(Some(setting), &Url::parse(url).unwrap()) {
            Route::Via(v) => Some((v.host, v.port, v.auth.is_some())),
            _ => None,
        }
    }

    #[test]
    fn the_configured_proxy_carries_both_schemes_with_its_credentials() {
        assert_eq!(
            via("http://p.test:3128", "https://mcp.test/mcp"),
            Some(("p.test".into(), 3128, false))
        );
        assert_eq!(
            via("http://u:pw@[::1]:8", "http://mcp.test/mcp"),
            Some(("::1".into(), 8, true))
        );
        assert!(via("", "https://mcp.test/mcp").is_none());
        assert!(matches!(
            route(Some("https://p.test"), &Url::parse("https://mcp.test/mcp").unwrap()),
            Route::Other
        ));
    }

    #[test]
    fn authorities_bracket_ipv6() {
        assert_eq!(authority("::1", 443), "[::1]:443");
        assert_eq!(authority("mcp.test", 443), "mcp.test:443");
    }
}
