//! The loopback redirect listener for command-line hosts (RFC 8252 §7.3): a one-shot HTTP
//! server on 127.0.0.1 that waits for the browser to come back with `code` and `state`.
//! Requests to other paths, or without this flow's `state`, are answered and ignored. Nothing
//! from the query is echoed into the page.
//!
//! Any local process can connect, so connections are served concurrently (up to
//! [`CONNECTIONS_MAX`] at once; more are closed unread), each with a short [`READ_LIMIT`]: idle
//! or slow sockets neither block the browser's request nor end the flow.

use crate::error::{Error, ErrorKind, Result};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// Bound on a request head from the browser.
const HEAD_MAX: usize = 16 * 1024;
/// How long one connection may take to send its request head. A browser sends it at once; a
/// speculative connection it never uses is closed, and the browser opens another.
const READ_LIMIT: Duration = Duration::from_secs(3);
/// Connections served at once.
const CONNECTIONS_MAX: usize = 32;

pub(crate) struct Loopback {
    listener: TcpListener,
    port: u16,
    path: String,
}

impl Loopback {
    pub async fn bind(port: u16, path: &str) -> Result<Loopback> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot listen on 127.0.0.1:{port} for the authorization redirect: {e}"),
            )
        })?;
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(port);
        Ok(Loopback {
            listener,
            port,
            path: path.to_string(),
        })
    }

    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{}", self.port, self.path)
    }

    /// Waits for the redirect carrying `state` and returns its full URL. Connections in
    /// progress when it returns (or is dropped) are closed.
    pub async fn next_redirect(&self, state: &str) -> Result<String> {
        let mut serving: JoinSet<Option<String>> = JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => {
                    let (stream, _) = accepted
                        .map_err(|e| Error::new(ErrorKind::Io, format!("the redirect listener failed: {e}")))?;
                    if serving.len() >= CONNECTIONS_MAX {
                        continue; // dropped: closed unread
                    }
                    let (path, state) = (self.path.clone(), state.to_string());
                    serving.spawn(crate::base::boxed(async move {
                        tokio::time::timeout(READ_LIMIT, serve(stream, &path, &state)).await.ok().flatten()
                    }));
                }
                Some(done) = serving.join_next(), if !serving.is_empty() => {
                    if let Ok(Some(target)) = done {
                        return Ok(format!("http://127.0.0.1:{}{target}", self.port));
                    }
                }
            }
        }
    }
}

/// Answers one connection; `Some(target)` when it is the redirect of this flow (a `GET` of
/// `path` with `state`).
async fn serve(mut stream: TcpStream, our_path: &str, state: &str) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() + n > HEAD_MAX {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    let mut parts = line.lines().next().unwrap_or_default().split(' ');
    let (method, target) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let ours = method == "GET"
        && path == our_path
        && url::form_urlencoded::parse(query.as_bytes()).any(|(k, v)| k == "state" && v == state);
    let (status, text) = if ours {
        (
            "200 OK",
            "Authorization received. You can close this window and return to the application.",
        )
    } else if path == our_path {
        (
            "400 Bad Request",
            "This is not the authorization response this application is waiting for.",
        )
    } else {
        ("404 Not Found", "Not found.")
    };
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Authorization</title></head><body><p>{text}</p></body></html>"
    );
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncache-control: no-store\r\nreferrer-policy: no-referrer\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
    ours.then(|| target.to_string())
}

/// Opens the system browser on `url` (best effort; the URL is also logged).
pub(crate) fn open_browser(url: &str) {
    use std::process::{Command, Stdio};
    let mut command = if cfg!(target_os = "macos") {
        let mut c = Command::new("open");
        c.arg(url);
        c
    } else if cfg!(windows) {
        let mut c = Command::new("rundll32");
        c.args(["url.dll,FileProtocolHandler", url]);
        c
    } else {
        let mut c = Command::new("xdg-open");
        c.arg(url);
        c
    };
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    if let Ok(mut child) = child {
        // Reap it in the background so it leaves no zombie.
        std::thread::spawn(move || {
            let _ = child.wait();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn waits_for_its_own_redirect() {
        let lb = Loopback::bind(0, "/callback").await.unwrap();
        let port = lb.port;
        assert_eq!(lb.redirect_uri(), format!("http://127.0.0.1:{port}/callback"));
        let browser = tokio::spawn(async move {
            assert!(get(port, "/favicon.ico").await.starts_with("HTTP/1.1 404"));
            assert!(get(port, "/callback?code=x&state=other")
                .await
                .starts_with("HTTP/1.1 400"));
            let page = get(port, "/callback?code=abc&state=s1&iss=https%3A%2F%2Fas").await;
            assert!(page.starts_with("HTTP/1.1 200") && !page.contains("abc"));
        });
        let got = lb.next_redirect("s1").await.unwrap();
        assert_eq!(
            got,
            format!("http://127.0.0.1:{port}/callback?code=abc&state=s1&iss=https%3A%2F%2Fas")
        );
        browser.await.unwrap();
    }

    /// Idle local connections (any process may open them) neither delay the browser's
    /// request nor end the flow; they once made it wait 10 s each, one after the other.
    #[tokio::test]
    async fn idle_connections_do_not_block_the_redirect() {
        let lb = Loopback::bind(0, "/callback").await.unwrap();
        let port = lb.port;
        let mut idle = Vec::new();
        for _ in 0..5 {
            let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            s.write_all(b"GET /callback?state=s1").await.unwrap(); // and never finished
            idle.push(s);
        }
        let started = tokio::time::Instant::now();
        let browser = tokio::spawn(async move {
            assert!(get(port, "/callback?code=x&state=other")
                .await
                .starts_with("HTTP/1.1 400"));
            let page = get(port, "/callback?code=abc&state=s1").await;
            assert!(page.starts_with("HTTP/1.1 200") && page.contains("referrer-policy: no-referrer"));
        });
        let got = lb.next_redirect("s1").await.unwrap();
        assert!(got.ends_with("/callback?code=abc&state=s1"));
        assert!(started.elapsed() < READ_LIMIT, "{:?}", started.elapsed());
        browser.await.unwrap();
        drop(idle);
    }
}
