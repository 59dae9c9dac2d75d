//! The client-credentials grant (pre-registered client only, for its own issuer).

use super::discovery::Discovery;
use super::flow::{self, ClientAuth};
use super::store::TokenSet;
use super::{AuthContext, Io};
use crate::error::{Error, Result};

impl AuthContext {
    pub(super) async fn client_credentials(
        &self,
        io: &Io,
        d: &Discovery,
        scopes: &[String],
    ) -> Result<(ClientAuth, TokenSet)> {
        let issuer = &d.server.issuer;
        if !self.configured_for(issuer) {
            return Err(Error::auth(
                "the configured client credentials belong to another authorization server than this one \
                 (oauth.issuer names theirs); not sending them",
            ));
        }
        let client = self.configured_client(&d.server);
        let scope = (!scopes.is_empty()).then(|| scopes.join(" "));
        let mut form = vec![
            ("grant_type", "client_credentials".to_string()),
            ("resource", d.resource.clone()),
        ];
        if let Some(s) = &scope {
            form.push(("scope", s.clone()));
        }
        let tokens = flow::token_request(io, &d.server, &client, form, self.dpop.as_deref(), scope.as_deref()).await?;
        Ok((client, tokens))
    }
}
