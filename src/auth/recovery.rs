//! What a refusal from the MCP server leads to: a 401 (refresh, a stored token, or a new
//! authorization) and a 403 `insufficient_scope` (step-up), then the configured grant.

use super::challenge::{self, Challenge};
use super::config::Grant;
use super::discovery::{self, Discovery};
use super::store::{Record, TokenSet};
use super::tokens::REFRESH_MARGIN_SECS;
use super::{union, AuthContext, Io};
use crate::error::{Error, Result};
use crate::untrusted::shown;

impl AuthContext {
    /// Handles a 401 to a request that carried the token of generation `used` (`None`: no
    /// token): refresh, a stored token, or a new authorization. `Ok` means: send again.
    pub async fn unauthorized(&self, io: &Io, challenge: &Challenge, used: Option<u64>) -> Result<()> {
        let _flow = self.flow.lock().await;
        let (renewed, preferred) = {
            let st = self.state.lock().unwrap();
            let current = st.active.as_ref().map(|a| a.generation);
            (
                current.is_some() && current != used,
                st.active.as_ref().map(|a| a.issuer.clone()),
            )
        };
        if renewed {
            return Ok(()); // another request got a new token meanwhile
        }
        let cfg = self.cfg();
        let server_url = self.server.clone().ok_or_else(|| Error::auth("no server URL"))?;
        let mut prefer: Vec<&str> = Vec::new();
        prefer.extend(cfg.issuer.as_deref());
        prefer.extend(preferred.as_deref());
        let d = discovery::discover(io, &server_url, challenge, &prefer).await?;
        let issuer = d.server.issuer.clone();
        let failed = {
            let mut st = self.state.lock().unwrap();
            if st.active.as_ref().map(|a| a.generation) == used {
                st.active.take()
            } else {
                None
            }
        };
        if let Some(f) = &failed {
            if f.issuer != issuer {
                io.log(format!(
                    "the resource now uses the authorization server {} (was {}); authorizing there",
                    shown(&issuer),
                    shown(&f.issuer)
                ));
            }
        }
        let mut record = self.load(io, &issuer).await;
        // 1. The failed token's refresh token (same issuer and resource only).
        if let Some(f) = failed
            .as_ref()
            .filter(|f| f.issuer == issuer && f.resource == d.resource)
        {
            if let (Some(refresh), Some(client)) = (&f.tokens.refresh_token, &f.client) {
                match self.refresh(io, &d.server, client, &d.resource, refresh).await {
                    Ok(tokens) => {
                        self.install(
                            &d.server,
                            &d.resource,
                            Some(client.clone()),
                            tokens.clone(),
                            f.requested.clone(),
                        );
                        record.tokens.insert(d.resource.clone(), tokens);
                        self.save(&issuer, &record).await;
                        return Ok(());
                    }
                    Err(e) => io.log(format!("refreshing the access token failed: {}", e.message())),
                }
            }
        }
        // 2. A stored token for this resource that is not the one that failed.
        // (A DPoP-bound token, another client's with its key, is of no use without DPoP here.)
        let usable = |t: &TokenSet| t.token_type != "DPoP" || self.dpop.is_some();
        if let Some(stored) = record.tokens.get(&d.resource).filter(|t| usable(t)).cloned() {
            let is_failed = failed
                .as_ref()
                .is_some_and(|f| f.tokens.access_token == stored.access_token);
            let client = self.known_client(&d, &record);
            let requested = challenge::split_scopes(stored.scope.as_deref());
            if !is_failed && !stored.expires_within(REFRESH_MARGIN_SECS) {
                self.install(&d.server, &d.resource, client, stored, requested);
                return Ok(());
            }
            record.tokens.remove(&d.resource);
            // (The failed token's refresh token was tried above already.)
            if let (false, Some(refresh), Some(client)) = (is_failed, &stored.refresh_token, client) {
                match self.refresh(io, &d.server, &client, &d.resource, refresh).await {
                    Ok(tokens) => {
                        self.install(&d.server, &d.resource, Some(client), tokens.clone(), requested);
                        record.tokens.insert(d.resource.clone(), tokens);
                        self.save(&issuer, &record).await;
                        return Ok(());
                    }
                    Err(e) => io.log(format!("refreshing the stored token failed: {}", e.message())),
                }
            }
            self.save(&issuer, &record).await;
        }
        // 3. A new token.
        let scopes = self.select_scopes(challenge.scopes(), &d);
        self.obtain(io, &d, scopes, &mut record).await
    }

    /// Handles a 403 `insufficient_scope`: authorizes again with the union of the scopes asked
    /// for before and the challenged ones. `Ok(false)`: nothing new to ask for (give up).
    pub async fn insufficient_scope(&self, io: &Io, challenge: &Challenge, used: Option<u64>) -> Result<bool> {
        let _flow = self.flow.lock().await;
        let previous = {
            let st = self.state.lock().unwrap();
            match &st.active {
                Some(a) if Some(a.generation) == used => a.requested.clone(),
                Some(_) => return Ok(true), // renewed meanwhile: try that token
                None => Vec::new(),
            }
        };
        let challenged = challenge.scopes();
        if challenged.is_empty() || challenged.iter().all(|s| previous.contains(s)) {
            return Ok(false);
        }
        let cfg = self.cfg();
        let server_url = self.server.clone().ok_or_else(|| Error::auth("no server URL"))?;
        let prefer: Vec<&str> = cfg.issuer.as_deref().into_iter().collect();
        let d = discovery::discover(io, &server_url, challenge, &prefer).await?;
        let mut record = self.load(io, &d.server.issuer).await;
        io.log(format!(
            "the server asks for more scope ({}); authorizing again",
            shown(&challenged.join(" "))
        ));
        let mut wanted = previous;
        union(&mut wanted, &challenged);
        let scopes = self.select_scopes(wanted, &d);
        self.obtain(io, &d, scopes, &mut record).await?;
        Ok(true)
    }

    /// The scopes to ask for: the challenge's (for a step-up: the union of those asked for
    /// before and the challenged ones), else the resource's `scopes_supported`; plus the
    /// configured ones, and `offline_access` when the authorization server lists it.
    pub(super) fn select_scopes(&self, challenged: Vec<String>, d: &Discovery) -> Vec<String> {
        let cfg = self.cfg();
        let mut scopes = challenged;
        if scopes.is_empty() {
            scopes = d.resource_scopes.clone().unwrap_or_default();
        }
        union(&mut scopes, &cfg.scopes);
        if cfg.grant == Grant::AuthorizationCode
            && cfg.offline_access
            && !scopes.is_empty()
            && d.server.meta.lists_scope("offline_access")
        {
            union(&mut scopes, &["offline_access".to_string()]);
        }
        scopes
    }

    /// Runs the configured grant and installs (and stores) its token.
    pub(super) async fn obtain(&self, io: &Io, d: &Discovery, scopes: Vec<String>, record: &mut Record) -> Result<()> {
        let (client, tokens) = match self.cfg().grant {
            Grant::ClientCredentials => self.client_credentials(io, d, &scopes).await?,
            Grant::JwtBearer => self.jwt_bearer(io, d, &scopes).await?,
            Grant::Enterprise => self.enterprise(io, d, &scopes).await?,
            Grant::AuthorizationCode => self.authorization_code(io, d, &scopes, record).await?,
        };
        self.install(&d.server, &d.resource, Some(client), tokens.clone(), scopes);
        record.tokens.insert(d.resource.clone(), tokens);
        self.save(&d.server.issuer, record).await;
        io.log(format!("authorized with {}", shown(&d.server.issuer)));
        Ok(())
    }
}
