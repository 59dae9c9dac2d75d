//! The HTTP transport's settings and their checks (URL, headers, where a token may go).

use crate::error::{Error, Result};
use crate::net::redact;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};
use reqwest::Url;
use std::net::IpAddr;
use std::time::Duration;

/// How to reach an MCP server over HTTP (every HTTP wire: the transport picks it per message).
#[derive(Clone)]
pub struct HttpConfig {
    /// The MCP endpoint (`http://` or `https://`).
    pub url: String,
    /// Extra headers sent on every request.
    pub headers: Vec<(String, String)>,
    /// Sent as `Authorization: Bearer <token>` on every request (never in the URL).
    pub bearer_token: Option<String>,
    /// Bound on one incoming message (a JSON body or one SSE event's data), in bytes.
    pub max_message_bytes: usize,
    /// TCP/TLS connect timeout; also how long the 2024-11-05 fallback waits for its `endpoint`.
    pub connect_timeout: Duration,
    /// Consecutive failed reconnections of a legacy SSE stream before it is given up.
    pub max_reconnect_attempts: u32,
    /// Let a bearer token (static or OAuth) and OAuth requests go over plain `http://` to hosts
    /// other than loopback. Off: tokens travel over https, or plain http to loopback only.
    pub allow_insecure_http: bool,
    /// Host names pinned to addresses (like curl's `--resolve`), for every request of this
    /// client; the authorization client's address checks still apply to them.
    pub resolve: Vec<(String, Vec<IpAddr>)>,
    /// The proxy for this client's requests to its server (`http://` or `https://`, with
    /// `user:password@` for proxy authentication), whatever the environment says; `Some("")`:
    /// none. `None`: the environment's `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY`.
    pub proxy: Option<String>,
}

impl HttpConfig {
    /// The defaults (8 MiB messages, 10 s connect timeout) for the endpoint `url`.
    pub fn new(url: impl Into<String>) -> Self {
        HttpConfig {
            url: url.into(),
            headers: Vec::new(),
            bearer_token: None,
            max_message_bytes: 8 * 1024 * 1024,
            connect_timeout: Duration::from_secs(10),
            max_reconnect_attempts: 5,
            allow_insecure_http: false,
            resolve: Vec::new(),
            proxy: None,
        }
    }

    /// Adds a header sent on every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the static bearer token.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Checks the URL and the headers; the errors name what is wrong.
    pub fn validate(&self) -> Result<()> {
        self.validate_for(false)
    }

    /// As [`HttpConfig::validate`], for a client that authorizes its requests itself (`oauth`:
    /// the client configuration's OAuth settings are set), which the token rules consider.
    pub(crate) fn validate_for(&self, oauth: bool) -> Result<()> {
        let url = self.parsed_url()?;
        if oauth && self.bearer_token.is_some() {
            return Err(Error::invalid(
                "bearer_token and oauth exclude each other: a static token or OAuth, not both",
            ));
        }
        let headers = self.header_map()?;
        if oauth && headers.contains_key(AUTHORIZATION) {
            return Err(Error::invalid(
                "with oauth, the Authorization header is the library's; remove it from headers",
            ));
        }
        // One rule for every token: over plain http only to loopback, unless the host says so.
        let sends_token = self.bearer_token.is_some() || oauth || headers.contains_key(AUTHORIZATION);
        if sends_token && url.scheme() == "http" && !self.allow_insecure_http && !crate::net::policy::is_loopback(&url)
        {
            return Err(Error::invalid(
                "a token (bearer_token, oauth or an Authorization header) goes over plain http only to a loopback \
                 host; use https, or set allow_insecure_http",
            ));
        }
        Ok(())
    }

    pub(super) fn parsed_url(&self) -> Result<Url> {
        // The URL itself is not quoted: it may carry a key in its query.
        let url = Url::parse(&self.url).map_err(|e| Error::invalid(format!("url is not a valid URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Error::invalid(format!(
                "url {} must be http:// or https://",
                redact::url(&url)
            )));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Error::invalid(
                "the url must not carry credentials; use bearer_token or headers",
            ));
        }
        Ok(url)
    }

    /// The configured headers plus `Authorization`.
    pub(super) fn header_map(&self) -> Result<HeaderMap> {
        let mut map = HeaderMap::new();
        for (name, value) in &self.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| Error::invalid(format!("header name {name:?} is not valid")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| Error::invalid(format!("the value of header {name} is not a valid header value")))?;
            map.append(name, value);
        }
        if let Some(token) = &self.bearer_token {
            let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| Error::invalid("bearer_token contains characters a header cannot carry"))?;
            value.set_sensitive(true);
            map.insert(AUTHORIZATION, value);
        }
        Ok(map)
    }
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values and the token stay out of logs.
        f.debug_struct("HttpConfig")
            .field("url", &redact::url_text(&self.url))
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            )
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "<redacted>"))
            .field("max_message_bytes", &self.max_message_bytes)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_reconnect_attempts", &self.max_reconnect_attempts)
            .field("allow_insecure_http", &self.allow_insecure_http)
            .field("resolve", &self.resolve)
            .field("proxy", &self.proxy.as_deref().map(redact::url_text))
            .finish()
    }
}
