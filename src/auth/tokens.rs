//! The token in use: attached to requests for the MCP server's origin, refreshed ahead of its
//! expiry, replaced (with a new generation) whenever a flow installs another.

use super::discovery::AuthServer;
use super::flow::ClientAuth;
use super::store::TokenSet;
use super::{AuthContext, Io};
use crate::net::request::Fields;
use reqwest::header::{HeaderName, HeaderValue, AUTHORIZATION};
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

impl Active {
    /// Whether to refresh before use: within the margin of its expiry.
    pub(super) fn refresh_due(&self) -> bool {
        self.tokens.expires_within(REFRESH_MARGIN_SECS)
    }
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
    /// Adds `Authorization: Bearer …` for a `method` request to `url` when a token is held and
    /// `url` is on the MCP server's origin (a DPoP-bound token: `Authorization: DPoP …` and a
    /// fresh proof); a token about to expire is refreshed first. Returns the token's generation
    /// (what a 401 reports back).
    pub async fn authorize_request(
        &self,
        io: &Io,
        method: &reqwest::Method,
        url: &Url,
        headers: &mut Fields,
    ) -> Option<u64> {
        let server = self.server.as_ref()?;
        if url.origin() != server.origin() {
            return None;
        }
        let due = {
            let st = self.state.lock().unwrap();
            st.active
                .as_ref()
                .filter(|a| a.tokens.refresh_token.is_some() && a.refresh_due())
                .map(|a| (a.generation, a.tokens.expires_within(0)))
        };
        if let Some((generation, expired)) = due {
            self.refresh_stale(io, generation, expired).await;
        }
        let st = self.state.lock().unwrap();
        let active = st.active.as_ref()?;
        let token = &active.tokens.access_token;
        let bound = active.tokens.token_type == "DPoP";
        let proof = match (&self.dpop, bound) {
            (Some(dpop), true) => match dpop.proof(method.as_str(), url, Some(token)) {
                Ok(p) => Some(HeaderValue::from_str(&p).ok()?),
                Err(e) => {
                    io.log(format!("no DPoP proof: {}", e.message()));
                    return None;
                }
            },
            // A bound token without its key (a stored record from a DPoP client) is never sent.
            (None, true) => return None,
            (_, false) => None,
        };
        let scheme = if bound { "DPoP" } else { "Bearer" };
        let mut value = HeaderValue::from_str(&format!("{scheme} {token}")).ok()?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
        if let Some(p) = proof {
            headers.insert(HeaderName::from_static(super::dpop::PROOF_HEADER), p);
        }
        Some(active.generation)
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
}
