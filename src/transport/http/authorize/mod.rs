//! The HTTP transport's side of authorization. The client hands the transport an
//! [`Authorizer`] (`crate::auth` implements it for OAuth), so the transport knows nothing of
//! how tokens are obtained: it attaches what the authorization adds to each request, and on a
//! 401, or a 403 `insufficient_scope`, asks it for new credentials and sends the request again
//! (bounded), holding the request's timer meanwhile.

pub mod challenge;

pub use challenge::Challenge;

use super::reply::ERROR_BODY_MAX;
use super::{HttpConfig, Inner, ServerClient};
use crate::base::BoxFuture;
use crate::error::{Error, ErrorKind, Result};
use crate::net::redact;
use crate::net::reply::Reply;
use crate::net::request::Request;
use crate::protocol::RequestId;
use crate::transport::{Inbound, InboundSender};
use reqwest::header::WWW_AUTHENTICATE;
use reqwest::{StatusCode, Url};
use std::fmt;
use std::sync::Arc;

/// What an authorizer is given of the transport it is bound to.
pub struct Link<'a> {
    /// The transport's settings (pinned names, timeouts, `allow_insecure_http`).
    pub cfg: &'a HttpConfig,
    /// The MCP server's URL.
    pub url: &'a Url,
    /// The transport's own client, for requests to the MCP server's origin.
    pub client: &'a Arc<ServerClient>,
    /// Where diagnostics go (the client's log listener).
    pub log: Arc<dyn Fn(String) + Send + Sync>,
}

/// Authorization for HTTP transports: one per client, bound to each transport it starts.
pub trait Authorizer: Send + Sync + 'static {
    /// Binds to one transport; `Ok(None)`: nothing to authorize (a 401 is then the caller's
    /// `AuthRequired`). An error refuses the configuration.
    fn bind(self: Arc<Self>, link: Link<'_>) -> Result<Option<Box<dyn Authorization>>>;
}

/// An [`Authorizer`] bound to one transport.
pub trait Authorization: Send + Sync + 'static {
    /// Adds the credentials to `request` (only for the MCP server's origin); returns which
    /// token was used, what a refusal of this request reports back.
    fn attach<'a>(&'a self, request: &'a mut Request<'_>) -> BoxFuture<'a, Option<u64>>;
    /// A 401 answered a request that carried token `used`: obtain credentials. `Ok`: send again.
    fn unauthorized<'a>(&'a self, challenge: &'a Challenge, used: Option<u64>) -> BoxFuture<'a, Result<()>>;
    /// A 403 `insufficient_scope`: authorize with more scope. `Ok(false)`: nothing new to ask for.
    fn insufficient_scope<'a>(&'a self, challenge: &'a Challenge, used: Option<u64>) -> BoxFuture<'a, Result<bool>>;
    /// How many step-ups one request may make.
    fn max_step_up(&self) -> u32;
    /// Whether to send a request again at once, before any 401 handling (DPoP: a 401
    /// `use_dpop_nonce` carrying the server's nonce, now kept). Sees every answer.
    fn resend_now(&self, url: &Url, status: u16, headers: &reqwest::header::HeaderMap, challenge: &Challenge) -> bool {
        let _ = (url, status, headers, challenge);
        false
    }
}

/// A request's timer held while an authorization runs; dropping it restarts the timer.
pub(super) struct Hold {
    inbound: InboundSender,
    id: Option<RequestId>,
}

impl Drop for Hold {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let _ = self.inbound.send(Inbound::Paused { id, paused: false });
        }
    }
}

/// Every `WWW-Authenticate` value of an answer.
fn challenge_values(response: &Reply) -> Vec<&str> {
    response.header_values(WWW_AUTHENTICATE.as_str())
}

/// The `WWW-Authenticate` values of an answer, joined, for the error.
fn www_authenticate(response: &Reply) -> Option<String> {
    let values = challenge_values(response);
    (!values.is_empty()).then(|| values.join(", "))
}

impl Inner {
    pub(super) async fn send_http(&self, request: Request<'_>, what: &(dyn fmt::Display + Sync)) -> Result<Reply> {
        self.send_for(request, what, None).await
    }

    /// Stops the session's timer for request `id` while an authorization runs, until the
    /// returned guard is dropped: however the authorization ends (an error, a panic unwinding
    /// through it, the request's task aborted), the timer runs again, so the call can time out.
    pub(super) fn hold(&self, id: Option<&RequestId>) -> Hold {
        let id = id.cloned();
        if let Some(id) = &id {
            let _ = self.inbound.send(Inbound::Paused {
                id: id.clone(),
                paused: true,
            });
        }
        Hold {
            inbound: self.inbound.clone(),
            id,
        }
    }

    /// The `AuthRequired` error for a refused answer (its body is read and dropped).
    pub(super) async fn refusal(&self, mut response: Reply, what: &(dyn fmt::Display + Sync), why: &str) -> Error {
        let status = response.status();
        let challenge = www_authenticate(&response);
        let _ = Self::read_bounded(&mut response, ERROR_BODY_MAX).await;
        Error::new(
            ErrorKind::AuthRequired,
            format!("{what}: HTTP {status} from {}: {why}", redact::url(&self.url)),
        )
        .with_http_status(status.as_u16())
        .with_www_authenticate(challenge)
    }

    /// Sends one request of this transport (`id`: the JSON-RPC request it carries). Without
    /// OAuth a 401 (or a 403 with a Bearer challenge) is `AuthRequired`. With OAuth the token
    /// is attached (only on the server's origin), a 401 runs the authorization and the request
    /// is sent again (twice at most), and a 403 `insufficient_scope` re-authorizes with more
    /// scope (`max_step_up` times at most). The session's timeout for `id` is held meanwhile.
    pub(super) async fn send_for(
        &self,
        request: Request<'_>,
        what: &(dyn fmt::Display + Sync),
        id: Option<&RequestId>,
    ) -> Result<Reply> {
        let Some(auth) = self.auth.as_deref() else {
            let response = self.execute(request, what).await?;
            let status = response.status();
            // Only a 403 needs its challenge read (most answers are neither).
            let refused = status == StatusCode::UNAUTHORIZED
                || (status == StatusCode::FORBIDDEN && Challenge::parse(challenge_values(&response)).bearer);
            return if refused {
                let hint = if self.cfg.bearer_token.is_some() {
                    "the server refused the bearer token"
                } else {
                    "the server requires authorization (configure oauth or bearer_token)"
                };
                Err(self.refusal(response, what, hint).await)
            } else {
                Ok(response)
            };
        };
        // Boxed: inline, the authorization's loop would make every request's future larger.
        Box::pin(self.send_authorized(auth, request, what, id)).await
    }

    /// [`Inner::send_for`] with an authorization.
    async fn send_authorized(
        &self,
        auth: &dyn Authorization,
        request: Request<'_>,
        what: &(dyn fmt::Display + Sync),
        id: Option<&RequestId>,
    ) -> Result<Reply> {
        let (mut authorizations, mut step_ups) = (0u32, 0u32);
        let mut resent = false;
        loop {
            let mut attempt = request.clone();
            let url = attempt.url();
            let used = auth.attach(&mut attempt).await;
            let response = self.execute(attempt, what).await?;
            let status = response.status();
            let challenge = Challenge::parse(challenge_values(&response));
            // DPoP: a 401 asking for the server's nonce is sent again once, at once.
            if auth.resend_now(url, status.as_u16(), &response.header_map(), &challenge) && !resent {
                resent = true;
                self.inbound
                    .note(id, "mcp.auth.dpop_nonce_retry", Some(status.as_u16()));
                continue;
            }
            if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
                return Ok(response);
            }
            let header = www_authenticate(&response);
            let outcome = if status == StatusCode::UNAUTHORIZED {
                if authorizations >= 2 {
                    return Err(self
                        .refusal(response, what, "the server refused the token it was just given")
                        .await);
                }
                authorizations += 1;
                drop(response);
                self.inbound.note(id, "mcp.auth.unauthorized", Some(status.as_u16()));
                let _held = self.hold(id);
                auth.unauthorized(&challenge, used).await.map(|()| true)
            } else if challenge.is_insufficient_scope() {
                if step_ups >= auth.max_step_up() {
                    return Err(self
                        .refusal(response, what, "the server still wants more scope; giving up")
                        .await);
                }
                step_ups += 1;
                drop(response);
                self.inbound.note(id, "mcp.auth.step_up", Some(status.as_u16()));
                let _held = self.hold(id);
                auth.insufficient_scope(&challenge, used).await
            } else if challenge.bearer {
                return Err(self.refusal(response, what, "the server refused the token").await);
            } else {
                return Ok(response);
            };
            match outcome {
                Ok(true) => continue,
                Ok(false) => {
                    let why = "the server wants scope that was already asked for; giving up";
                    return Err(Error::new(
                        ErrorKind::AuthRequired,
                        format!("{what}: HTTP {status} from {}: {why}", redact::url(&self.url)),
                    )
                    .with_http_status(status.as_u16())
                    .with_www_authenticate(header));
                }
                Err(e) => {
                    return Err(e
                        .context(&format!(
                            "{what}: HTTP {status} from {}: authorization failed",
                            redact::url(&self.url)
                        ))
                        .with_http_status(status.as_u16())
                        .with_www_authenticate(header))
                }
            }
        }
    }

    /// The token for a request sent without the 401 handling (the closing DELETE).
    pub(super) async fn attach_token<'a>(&self, mut request: Request<'a>) -> Request<'a> {
        if let Some(auth) = &self.auth {
            auth.attach(&mut request).await;
        }
        request
    }
}

#[cfg(test)]
mod hold_tests {
    use super::*;

    /// The timer restarts even when the authorization panics (it once hung the call).
    #[test]
    fn a_panic_restarts_the_timer() {
        let (tx, mut rx) = crate::transport::inbound_channel();
        let id = RequestId::Num(7);
        let held = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _held = Hold {
                inbound: tx,
                id: Some(id.clone()),
            };
            panic!("an authorization that panics");
        }));
        assert!(held.is_err());
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        match runtime.block_on(rx.recv()) {
            Some(Inbound::Paused { id: got, paused: false }) => assert_eq!(got, id),
            _ => panic!("the timer was not restarted"),
        }
    }
}
