//! Spending refresh tokens, one at a time. Rotating refresh tokens are single-use: two requests
//! (or two processes) spending the same one would leave one of them, or both, without a token.
//!
//! - In one client, every refresh runs under the flow lock, and a request that finds its token
//!   expired waits for that lock and then uses whatever token is in place (another request's
//!   refresh) before it refreshes anything itself; requests that hit a 401 meanwhile wait for
//!   the flow and see the new generation (`recovery`).
//! - Across processes sharing a [`TokenStore`](super::TokenStore), the refresh holds the store's
//!   lock for the issuer (when the store has one), re-reads the record under it, and adopts the
//!   tokens another process stored instead of spending a refresh token that was already spent.

use super::discovery::AuthServer;
use super::flow::{self, ClientAuth};
use super::store::TokenSet;
use super::{AuthContext, Io};
use crate::error::Result;

impl AuthContext {
    /// Refreshes the token of generation `seen` ahead of its expiry. `wait`: the token has
    /// expired, so wait for a running flow (its result replaces the token anyway); otherwise a
    /// running flow means the token is being replaced and this request goes on with it.
    pub(super) async fn refresh_stale(&self, io: &Io, seen: u64, wait: bool) {
        let _flow = if wait {
            self.flow.lock().await
        } else {
            match self.flow.try_lock() {
                Ok(guard) => guard,
                Err(_) => return,
            }
        };
        let taken = {
            let st = self.state.lock().unwrap();
            st.active.as_ref().filter(|a| a.generation == seen).and_then(|a| {
                let refresh = a.tokens.refresh_token.clone()?;
                let client = a.client.clone()?;
                a.refresh_due().then(|| {
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
        // Another request refreshed (or a flow replaced the token) while this one waited.
        let Some((server, client, resource, refresh, requested, generation)) = taken else {
            return;
        };
        match self.refresh(io, &server, &client, &resource, &refresh).await {
            Ok(tokens) => self.install(&server, &resource, Some(client), tokens, requested),
            Err(e) => {
                io.log(format!("refreshing the access token failed: {}", e.message()));
                let mut st = self.state.lock().unwrap();
                if let Some(a) = st.active.as_mut().filter(|a| a.generation == generation) {
                    a.tokens.refresh_token = None;
                }
            }
        }
    }

    /// A refresh-token grant; a new refresh token replaces the old one (rotation). Runs under
    /// the store's lock for the issuer and stores its result before releasing it; when the
    /// store already holds another refresh token for the resource, another process refreshed:
    /// its tokens are used and `refresh_token` is not spent again.
    pub(super) async fn refresh(
        &self,
        io: &Io,
        server: &AuthServer,
        client: &ClientAuth,
        resource: &str,
        refresh_token: &str,
    ) -> Result<TokenSet> {
        let store = self.store();
        let _lock = store.lock(&server.issuer).await;
        let mut record = self.load(io, &server.issuer).await;
        if let Some(stored) = record.tokens.get(resource) {
            if stored.refresh_token.as_deref().is_some_and(|r| r != refresh_token) && !stored.expires_within(0) {
                io.log("using the token another process refreshed".into());
                return Ok(stored.clone());
            }
        }
        let form = vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", refresh_token.to_string()),
            ("resource", resource.to_string()),
        ];
        let mut tokens = flow::token_request(io, server, client, form, self.dpop.as_deref(), None).await?;
        if tokens.refresh_token.is_none() {
            tokens.refresh_token = Some(refresh_token.to_string());
        }
        record.tokens.insert(resource.to_string(), tokens.clone());
        self.save(&server.issuer, &record).await;
        Ok(tokens)
    }
}
