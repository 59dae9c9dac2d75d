//! The token in use: attached to requests for the MCP server's origin, refreshed ahead of its
//! expiry, replaced (with a new generation) whenever a flow installs another.

use super::discovery::AuthServer;
use super::flow::{self, ClientAuth};
use super::store::TokenSet;
use super::{AuthContext, Io};
use crate::error::Result;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};
use url::Url;

/// Refresh an access token this close to its expiry before using it.
pub(super) const REFRESH_MARGIN_SECS: u64 = 30;

/// The token in use, with what is needed to refresh it. No `Debug`: it holds secrets.
pub(super) struct Active {
    pub(super) issuer: String,
    pub(super) resource: String,
    pub(super) server: AuthServer,
    pub(super) client: Option<ClientAuth>,
    pub(super) tokens: TokenSet,
    /// The scopes asked for when this token was obtained.
    pub(super) requested: Vec<String>,
    pub(super) generation: u64,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) active: Option<Active>,
    pub(super) generation: u64,
    /// The issuer a public pre-registered client id (no secret, no key) without `oauth.issuer`
    /// was first used with.
    pub(super) bound_issuer: Option<String>,
}

impl AuthContext {
    /// Adds `Authorization: Bearer …` for a request to `url` when a token is held and `url` is
    /// on the MCP server's origin; a token about to expire is refreshed first. Returns the
    /// token's generation (what a 401 reports back).
    pub async fn authorize_request(&self, io: &Io, url: &Url, headers: &mut HeaderMap) -> Option<u64> {
        let server = self.server.as_ref()?;
        if url.origin() != server.origin() {
            return None;
        }
        let stale = self
            .state
            .lock()
            .unwrap()
            .active
            .as_ref()
            .is_some_and(|a| a.tokens.refresh_token.is_some() && a.tokens.expires_within(REFRESH_MARGIN_SECS));
        if stale {
            self.refresh_stale(io).await;
        }
        let st = self.state.lock().unwrap();
        let active = st.active.as_ref()?;
        let mut value = HeaderValue::from_str(&format!("Bearer {}", active.tokens.access_token)).ok()?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
        Some(active.generation)
    }

    /// Refreshes the token in use ahead of its expiry, unless a flow is running.
    pub(super) async fn refresh_stale(&self, io: &Io) {
        let Ok(_flow) = self.flow.try_lock() else {
            return;
        };
        let taken = {
            let st = self.state.lock().unwrap();
            st.active.as_ref().and_then(|a| {
                let refresh = a.tokens.refresh_token.clone()?;
                let client = a.client.clone()?;
                a.tokens.expires_within(REFRESH_MARGIN_SECS).then(|| {
                    (
                        a.server.clone(),
                        client,
                        a.resource.clone(),
                        refresh,
                        a.requested.clone(),
                        a.generation,
                    )
                })
            })
        };
        let Some((server, client, resource, refresh, requested, generation)) = taken else {
            return;
        };
        let mut record = self.load(io, &server.issuer).await;
        match self.refresh(io, &server, &client, &resource, &refresh).await {
            Ok(tokens) => {
                self.install(&server, &resource, Some(client), tokens.clone(), requested);
                record.tokens.insert(resource, tokens);
                self.save(&server.issuer, &record).await;
            }
            Err(e) => {
                io.log(format!("refreshing the access token failed: {}", e.message()));
                let mut st = self.state.lock().unwrap();
                if let Some(a) = st.active.as_mut().filter(|a| a.generation == generation) {
                    a.tokens.refresh_token = None;
                }
            }
        }
    }

    pub(super) fn install(
        &self,
        server: &AuthServer,
        resource: &str,
        client: Option<ClientAuth>,
        tokens: TokenSet,
        requested: Vec<String>,
    ) {
        let mut st = self.state.lock().unwrap();
        st.generation += 1;
        let generation = st.generation;
        st.active = Some(Active {
            issuer: server.issuer.clone(),
            resource: resource.to_string(),
            server: server.clone(),
            client,
            tokens,
            requested,
            generation,
        });
    }

    /// A refresh-token grant; a new refresh token replaces the old one (rotation).
    pub(super) async fn refresh(
        &self,
        io: &Io,
        server: &AuthServer,
        client: &ClientAuth,
        resource: &str,
        refresh_token: &str,
    ) -> Result<TokenSet> {
        let form = vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", refresh_token.to_string()),
            ("resource", resource.to_string()),
        ];
        let mut tokens = flow::token_request(io, server, client, form, None).await?;
        if tokens.refresh_token.is_none() {
            tokens.refresh_token = Some(refresh_token.to_string());
        }
        Ok(tokens)
    }
}
