//! The host's part of an authorization-code flow: the browser step it is handed, and a helper
//! for automation against authorization servers that redirect at once.

use crate::base::{BoxFuture, CancelToken, HandlerError};
use crate::error::{Error, ErrorKind, Result};
use std::future::Future;
use std::time::Duration;
use url::Url;

/// The browser step of an authorization-code flow, handed to the host.
#[derive(Debug, Clone)]
pub struct AuthorizationRequest {
    /// The authorization URL to open in a browser.
    pub url: String,
    /// Where the authorization server will redirect the browser.
    pub redirect_uri: String,
    /// The authorization server's issuer.
    pub issuer: String,
    /// The library's loopback listener waits for the redirect too: the handler may just open
    /// the browser and resolve `Ok(None)`.
    pub loopback: bool,
    /// Cancelled when the answer is no longer wanted (the call ended, the client closed).
    pub cancel: CancelToken,
}

/// The host's part of an authorization-code flow: open `request.url` in a browser and resolve
/// with the full URL the browser was redirected to (with `code`, `state` and maybe `iss`), or
/// `Ok(None)` when the loopback listener receives it. An error ends the flow.
pub trait AuthorizationHandler: Send + Sync + 'static {
    /// Runs the browser step for `request`; see the trait's documentation for the answer.
    fn authorize(&self, request: AuthorizationRequest) -> BoxFuture<'static, Result<Option<String>, HandlerError>>;
}

impl<F, Fut> AuthorizationHandler for F
where
    F: Fn(AuthorizationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Option<String>, HandlerError>> + Send + 'static,
{
    fn authorize(&self, request: AuthorizationRequest) -> BoxFuture<'static, Result<Option<String>, HandlerError>> {
        Box::pin(self(request))
    }
}

/// GETs `url` once without following redirects and returns the absolute `Location` of its
/// 3xx answer. For tests and automation against authorization servers that redirect at once
/// (the conformance suite's); a real host opens a browser instead. Nothing is sent but the URL.
pub async fn fetch_redirect(url: &str, timeout: Duration) -> Result<String> {
    let target = Url::parse(url).map_err(|_| Error::invalid("the authorization URL is not a URL"))?;
    let shown = crate::net::redact::url(&target);
    if !matches!(target.scheme(), "http" | "https") {
        return Err(Error::invalid("the authorization URL must be http or https"));
    }
    let http = crate::net::tls::plain_client(url, timeout)?;
    let response = tokio::time::timeout(timeout, http.get(target.clone()).send())
        .await
        .map_err(|_| Error::new(ErrorKind::Timeout, "the authorization URL did not answer in time"))?
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("GET {shown} failed: {}", crate::net::redact::http_error(e)),
            )
        })?;
    let status = response.status();
    if !status.is_redirection() {
        return Err(
            Error::new(ErrorKind::Io, format!("{shown} answered HTTP {status}, not a redirect"))
                .with_http_status(status.as_u16()),
        );
    }
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| Error::new(ErrorKind::Io, "the redirect has no Location"))?;
    target
        .join(location)
        .map(|u| u.to_string())
        .map_err(|_| Error::new(ErrorKind::Io, "the redirect's Location is not a URL"))
}
