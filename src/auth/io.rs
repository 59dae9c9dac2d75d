//! The transport's side of a flow: which HTTP client may reach which URL, and the log.

use crate::error::{Error, ErrorKind, Result};
use crate::net::policy::Guard;
use crate::transport::http::ServerClient;
use std::sync::Arc;
use url::Url;

/// What a flow needs from the transport: the HTTP clients (no redirects are ever followed)
/// and a way to report diagnostics. Requests to the MCP server's own origin (its metadata, the
/// 2025-03-26 default endpoints) go through the transport's client, which reaches that server
/// anyway; every other URL was chosen by the server and passes the guard (`crate::net::policy`)
/// first, then goes through the guarded client, whose resolver checks each answer.
#[derive(Clone)]
pub(crate) struct Io {
    http: Arc<ServerClient>,
    server: url::Origin,
    guarded: reqwest::Client,
    guard: Arc<Guard>,
    log: Arc<dyn Fn(String) + Send + Sync>,
}

impl Io {
    pub fn new(
        http: Arc<ServerClient>,
        server: &Url,
        guarded: reqwest::Client,
        guard: Arc<Guard>,
        log: Arc<dyn Fn(String) + Send + Sync>,
    ) -> Io {
        Io {
            http,
            server: server.origin(),
            guarded,
            guard,
            log,
        }
    }

    pub fn log(&self, line: String) {
        (self.log)(line)
    }

    /// Refuses a URL the flows must not contact (checked again on its resolved addresses).
    pub fn check(&self, url: &Url) -> Result<()> {
        if url.origin() == self.server && url.username().is_empty() && url.password().is_none() {
            return Ok(());
        }
        self.guard.check_url(url).map_err(|r| Error::auth(r.0))
    }

    /// Whether `url` is on the MCP server's own origin.
    pub fn is_server(&self, url: &Url) -> bool {
        url.origin() == self.server
    }

    /// Whether the host listed `url`'s host in `allow_hosts`.
    pub fn host_allowed(&self, url: &Url) -> bool {
        self.guard.lists_allowed(url)
    }

    /// The scheme rule alone, for the authorization endpoint (a browser opens it).
    pub fn check_scheme(&self, url: &Url) -> Result<()> {
        self.guard.check_scheme(url).map_err(|r| Error::auth(r.0))
    }

    /// The client for a request to `url`, once `url` passed [`Io::check`].
    pub fn client_for(&self, url: &Url) -> Result<&reqwest::Client> {
        self.check(url)?;
        if url.origin() == self.server {
            self.http.get()
        } else {
            Ok(&self.guarded)
        }
    }

    /// The error for a request that got no answer: the guard's refusal, or the failure without
    /// the request URL.
    pub fn send_error(e: reqwest::Error, what: &str) -> Error {
        match crate::net::redact::refusal(&e) {
            Some(r) => Error::auth(format!("{what}: {}", r.0)),
            None => Error::new(
                ErrorKind::Io,
                format!("{what} failed: {}", crate::net::redact::http_error(e)),
            ),
        }
    }
}
