//! The JWT-bearer grant (RFC 7523 §2.1) for workload identity federation (SEP-1933,
//! `io.modelcontextprotocol/auth/wif`): the workload's JWT, from the host, is the `assertion`;
//! no browser, no registration. A client id is sent only when one is configured (and then only
//! to its own issuer). A refusal is surfaced with its OAuth error code, and the refused JWT is
//! never sent again: a host that rotates it (a new file content, a new answer) gets a new try.

use super::assertion::{self, AssertionKind};
use super::discovery::Discovery;
use super::flow::{self, ClientAuth};
use super::store::TokenSet;
use super::{AuthContext, Io};
use crate::error::{Error, Result};

pub(crate) const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The SHA-256 of a JWT, to recognise one that was refused without keeping it.
pub(super) fn fingerprint(jwt: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(ring::digest::digest(&ring::digest::SHA256, jwt.as_bytes()).as_ref());
    out
}

impl AuthContext {
    /// The client identity of an assertion grant: the configured one for this issuer, else an
    /// anonymous one (no `client_id` sent).
    pub(super) fn assertion_client(&self, d: &Discovery) -> ClientAuth {
        if self.configured_for(&d.server.issuer) {
            return self.configured_client(&d.server);
        }
        ClientAuth {
            client_id: String::new(),
            secret: None,
            method: "none".into(),
            signer: None,
            issuer: None,
        }
    }

    /// Sends `assertion` in a JWT-bearer token request, unless that very JWT was refused before.
    pub(super) async fn jwt_bearer_request(
        &self,
        io: &Io,
        d: &Discovery,
        client: &ClientAuth,
        assertion: String,
        scopes: &[String],
        resource: bool,
    ) -> Result<TokenSet> {
        let print = self.unrefused(&assertion)?;
        let scope = (!scopes.is_empty()).then(|| scopes.join(" "));
        let mut form = vec![("grant_type", JWT_BEARER_GRANT.to_string()), ("assertion", assertion)];
        if resource {
            form.push(("resource", d.resource.clone()));
        }
        if let Some(s) = &scope {
            form.push(("scope", s.clone()));
        }
        let result = flow::token_request(io, &d.server, client, form, self.dpop.as_deref(), scope.as_deref()).await;
        if result.as_ref().is_err_and(|e| e.oauth_error().is_some()) {
            self.refused(print);
        }
        result
    }

    /// The fingerprint of `jwt`, unless a server refused it before (then it is not sent again).
    pub(super) fn unrefused(&self, jwt: &str) -> Result<[u8; 32]> {
        let print = fingerprint(jwt);
        if self.refused_assertions.lock().unwrap().contains(&print) {
            return Err(Error::auth(
                "this assertion was refused before; not sending it again (a new one is needed)",
            ));
        }
        Ok(print)
    }

    /// Remembers a refused assertion (the last few).
    pub(super) fn refused(&self, print: [u8; 32]) {
        let mut refused = self.refused_assertions.lock().unwrap();
        if refused.len() >= 16 {
            refused.remove(0);
        }
        refused.push(print);
    }

    /// Workload identity federation: the workload's JWT for an access token.
    pub(super) async fn jwt_bearer(&self, io: &Io, d: &Discovery, scopes: &[String]) -> Result<(ClientAuth, TokenSet)> {
        let cfg = self.cfg();
        let host = self.assertions.read().unwrap().clone();
        let jwt = assertion::read(
            AssertionKind::WorkloadJwt,
            cfg.workload_jwt.as_ref(),
            host,
            &d.server.issuer,
        )
        .await?;
        let client = self.assertion_client(d);
        let tokens = self.jwt_bearer_request(io, d, &client, jwt, scopes, true).await?;
        Ok((client, tokens))
    }
}
