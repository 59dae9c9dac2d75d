//! Enterprise-managed authorization (SEP-990, `io.modelcontextprotocol/enterprise-managed-
//! authorization`): the user signed in at the enterprise identity provider; its ID token
//! (from the host) is exchanged there (RFC 8693) for an identity assertion authorization grant
//! (ID-JAG) naming the MCP authorization server and resource, which the JWT-bearer grant (RFC
//! 7523) turns into an access token at that server. No browser, no registration, no fallback to
//! another grant; refusals keep their OAuth error code. The ID token and the ID-JAG are opaque,
//! never logged; the identity provider's client secret goes to the configured identity provider
//! only, the MCP client's secret to its own issuer only.

use super::assertion::{self, AssertionKind};
use super::discovery::{Discovery, HTTP_TIMEOUT};
use super::flow::{self, ClientAuth};
use super::store::TokenSet;
use super::{AuthContext, Io};
use crate::error::{Error, Result};
use crate::net::redact;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;
use url::Url;

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

/// The identity provider's side (`oauth.idp_*`). No `Debug` of the secret.
#[derive(Clone)]
pub struct IdpConfig {
    /// Where the token exchange goes.
    pub token_endpoint: Url,
    /// This client at the identity provider.
    pub client_id: Option<String>,
    /// Its secret there (`client_secret_basic`).
    pub client_secret: Option<String>,
}

impl std::fmt::Debug for IdpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdpConfig")
            .field("token_endpoint", &redact::url(&self.token_endpoint))
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl AuthContext {
    /// Step 2: the ID token for an ID-JAG at the identity provider.
    async fn token_exchange(
        &self,
        io: &Io,
        idp: &IdpConfig,
        d: &Discovery,
        id_token: String,
        scope: Option<&str>,
    ) -> Result<String> {
        let url = &idp.token_endpoint;
        let print = self.unrefused(&id_token)?;
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE.to_string()),
            ("requested_token_type", ID_JAG.to_string()),
            ("subject_token", id_token),
            ("subject_token_type", ID_TOKEN.to_string()),
            ("audience", d.server.issuer.clone()),
            ("resource", d.resource.clone()),
        ];
        if let Some(s) = scope {
            form.push(("scope", s.to_string()));
        }
        let mut request = io
            .client_for(url)
            .map_err(|e| e.context("the token exchange at the identity provider"))?
            .post(url.clone())
            .timeout(HTTP_TIMEOUT)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded");
        match (&idp.client_id, &idp.client_secret) {
            (Some(id), Some(secret)) => request = request.header(AUTHORIZATION, flow::basic(id, secret)?),
            (Some(id), None) => form.push(("client_id", id.clone())),
            _ => {}
        }
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
            .finish();
        let response = request
            .body(body)
            .send()
            .await
            .map_err(|e| Io::send_error(e, &format!("the token exchange at {}", redact::url(url))))?;
        let (status, body) = flow::read_answer(response, "token exchange").await?;
        if !status.is_success() {
            let code = flow::registered_error(&body);
            if code.is_some() {
                self.refused(print);
            }
            return Err(Error::auth(format!(
                "the identity provider refused the token exchange (HTTP {status}): {}",
                flow::oauth_error(&body)
            ))
            .with_http_status(status.as_u16())
            .with_oauth_error(code));
        }
        let v: Value =
            serde_json::from_slice(&body).map_err(|_| Error::auth("the identity provider's answer is not JSON"))?;
        if v.get("issued_token_type").and_then(Value::as_str) != Some(ID_JAG) {
            return Err(Error::auth(
                "the identity provider did not issue an identity assertion authorization grant (issued_token_type)",
            ));
        }
        v.get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .ok_or_else(|| Error::auth("the identity provider's answer has no access_token"))
    }

    /// Steps 2 and 3: the user's ID token for an access token at the MCP authorization server.
    pub(super) async fn enterprise(&self, io: &Io, d: &Discovery, scopes: &[String]) -> Result<(ClientAuth, TokenSet)> {
        let cfg = self.cfg();
        let idp = cfg
            .idp
            .as_ref()
            .ok_or_else(|| Error::auth("enterprise-managed authorization needs oauth.idp_token_endpoint"))?;
        if !self.configured_for(&d.server.issuer) {
            return Err(Error::auth(
                "the configured client belongs to another authorization server than this one \
                 (oauth.issuer names theirs); not authorizing there",
            ));
        }
        let client = self.configured_client(&d.server);
        let host = self.assertions.read().unwrap().clone();
        let id_token = assertion::read(
            AssertionKind::IdToken,
            cfg.id_token.as_ref(),
            host,
            idp.token_endpoint.as_str(),
        )
        .await?;
        let scope = (!scopes.is_empty()).then(|| scopes.join(" "));
        let grant = self.token_exchange(io, idp, d, id_token, scope.as_deref()).await?;
        let tokens = self.jwt_bearer_request(io, d, &client, grant, scopes, false).await?;
        Ok((client, tokens))
    }
}
