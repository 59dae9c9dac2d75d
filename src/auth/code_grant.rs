//! The authorization-code grant with PKCE S256: the redirect URI (the host's or the loopback
//! listener's), the browser step (the host's handler and/or the listener), the code exchange.

use super::discovery::Discovery;
use super::flow::{self, ClientAuth};
use super::loopback::{self, Loopback};
use super::pkce;
use super::store::{Record, TokenSet};
use super::{AuthContext, AuthorizationRequest, Io};
use crate::base::{CancelToken, HandlerError};
use crate::error::{Error, ErrorKind, Result};
use crate::untrusted::shown;

/// Cancels the host's view of a flow when the flow ends, however it ends.
struct CancelOnDrop(CancelToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl AuthContext {
    pub(super) async fn authorization_code(
        &self,
        io: &Io,
        d: &Discovery,
        scopes: &[String],
        record: &mut Record,
    ) -> Result<(ClientAuth, TokenSet)> {
        let cfg = self.cfg();
        let server = &d.server;
        let s256 = server
            .meta
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|x| x == "S256"));
        if server.from_metadata && !s256 {
            return Err(Error::auth(
                "the authorization server does not advertise PKCE S256 (code_challenge_methods_supported); \
                 refusing to authorize",
            ));
        }
        // The redirect: the host's own, or the loopback listener's (bound before registering,
        // which needs the URI).
        let (loopback, redirect_uri) = match &cfg.redirect_uri {
            Some(r) => (None, r.clone()),
            None => {
                let listener = Loopback::bind(cfg.loopback_port, &cfg.loopback_path).await?;
                let uri = listener.redirect_uri();
                (Some(listener), uri)
            }
        };
        let client = self.client_identity(io, d, &redirect_uri, record).await?;
        let pkce = pkce::Pkce::new()?;
        let state = pkce::random_token(32)?;
        let scope = (!scopes.is_empty()).then(|| scopes.join(" "));
        let url = flow::authorization_url(
            server,
            &client.client_id,
            &redirect_uri,
            &pkce.challenge,
            &state,
            &d.resource,
            scope.as_deref(),
        )?;
        let redirect = self
            .obtain_redirect(io, url, &redirect_uri, &server.issuer, loopback.as_ref(), &state)
            .await?;
        drop(loopback);
        let code = flow::check_redirect(
            &redirect,
            &redirect_uri,
            &state,
            &server.issuer,
            server.meta.authorization_response_iss_parameter_supported,
        )?;
        let form = vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", pkce.verifier),
            ("resource", d.resource.clone()),
        ];
        let tokens = flow::token_request(io, server, &client, form, self.dpop.as_deref(), scope.as_deref()).await?;
        Ok((client, tokens))
    }

    /// The browser step: the host's handler and/or the loopback listener, under the
    /// authorization timeout.
    pub(super) async fn obtain_redirect(
        &self,
        io: &Io,
        url: String,
        redirect_uri: &str,
        issuer: &str,
        loopback: Option<&Loopback>,
        state: &str,
    ) -> Result<String> {
        let cfg = self.cfg();
        let handler = self.handler.read().unwrap().clone();
        let cancel = CancelOnDrop(CancelToken::new());
        if handler.is_none() {
            // The URL itself is never logged: it carries the flow's `state`.
            if loopback.is_none() || !cfg.open_browser {
                return Err(Error::auth(
                    "authorization needs a browser: register an authorization handler (mcp_client_on_authorization), \
                     or set oauth.open_browser with the loopback listener (oauth.redirect_uri unset)",
                ));
            }
            io.log(format!("opened the system browser to authorize with {}", shown(issuer)));
            loopback::open_browser(&url);
        }
        let mut host = handler.map(|h| {
            h.authorize(AuthorizationRequest {
                url,
                redirect_uri: redirect_uri.to_string(),
                issuer: issuer.to_string(),
                loopback: loopback.is_some(),
                cancel: cancel.0.clone(),
            })
        });
        let deadline = tokio::time::Instant::now() + cfg.authorization_timeout;
        enum Step {
            Host(std::result::Result<Option<String>, HandlerError>),
            Listener(Result<String>),
            TimedOut,
        }
        // One listener future for the whole flow: recreating it when the host's future ends
        // would drop the connections it is serving (the browser's among them).
        let from_listener = async {
            match loopback {
                Some(l) => l.next_redirect(state).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(from_listener);
        loop {
            let step = {
                let from_host = async {
                    match host.as_mut() {
                        Some(f) => f.await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    r = from_host => Step::Host(r),
                    r = &mut from_listener => Step::Listener(r),
                    _ = tokio::time::sleep_until(deadline) => Step::TimedOut,
                }
            };
            match step {
                Step::Host(Ok(Some(redirect))) => return Ok(redirect),
                Step::Host(Ok(None)) if loopback.is_some() => host = None,
                Step::Host(Ok(None)) => {
                    return Err(Error::auth(
                        "the authorization handler finished without the redirect it was sent to",
                    ))
                }
                Step::Host(Err(e)) => {
                    return Err(Error::auth(format!(
                        "the authorization was not completed: {}",
                        shown(&e.message)
                    )))
                }
                Step::Listener(r) => return r,
                Step::TimedOut => {
                    return Err(Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "the authorization was not completed within {} ms",
                            cfg.authorization_timeout.as_millis()
                        ),
                    ))
                }
            }
        }
    }
}
