//! The internal OAuth configuration and its checks across keys (its JSON form, read by
//! [`OAuthConfig::from_json`], is `crate::config::OAuth`).

use super::assertion::AssertionSource;
use super::dpop::DpopKeySource;
use super::enterprise::IdpConfig;
use super::jwt::{Signer, ALGORITHMS};
use crate::base::defaults;
use crate::error::{Error, Result};
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// How tokens are obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Grant {
    /// Authorization code with PKCE, through a browser (the host's callback or the loopback
    /// listener).
    #[default]
    AuthorizationCode,
    /// Machine to machine (`io.modelcontextprotocol/oauth-client-credentials`): the client's
    /// own credentials, `client_secret_basic`/`_post` or `private_key_jwt`.
    ClientCredentials,
    /// Workload identity federation (RFC 7523, `io.modelcontextprotocol/auth/wif`): the
    /// workload's JWT (`workload_jwt`, `workload_jwt_file` or the host's assertion provider) is
    /// the grant.
    JwtBearer,
    /// Enterprise-managed authorization (SEP-990): the user's ID token (`id_token`,
    /// `id_token_file` or the host's assertion provider) exchanged at the identity provider
    /// (`idp_token_endpoint`) for an ID-JAG, then the JWT-bearer grant with the configured client.
    Enterprise,
}

/// Token endpoint authentication methods this client implements.
pub const AUTH_METHODS: &[&str] = &["client_secret_basic", "client_secret_post", "none", "private_key_jwt"];

/// OAuth 2.1 settings for an HTTP server that requires authorization. Secrets are never
/// printed (`Debug` redacts them).
#[derive(Clone)]
pub struct OAuthConfig {
    /// The grant that obtains tokens (authorization code, the default, or client credentials).
    pub grant: Grant,
    /// Pre-registered client id (authorization code), or the client-credentials client.
    pub client_id: Option<String>,
    /// The pre-registered client's secret (needs `issuer`: it goes to that server only).
    pub client_secret: Option<String>,
    /// Forces a token endpoint authentication method; otherwise the registration answer or
    /// the server's metadata decides.
    pub token_endpoint_auth_method: Option<String>,
    /// The issuer the pre-registered credentials belong to: required with a `client_secret` or
    /// a private key, which are sent to this authorization server only (on every grant). A
    /// public `client_id` without it is bound to the first authorization server it is used
    /// with.
    pub issuer: Option<String>,
    /// A Client ID Metadata Document URL (https, with a path), used as the client id where
    /// the server advertises `client_id_metadata_document_supported`.
    pub client_metadata_url: Option<String>,
    /// `client_name` for dynamic registration (default: `client_info.name`).
    pub client_name: Option<String>,
    /// `application_type` for dynamic registration: `native` (default) or `web`.
    pub application_type: String,
    /// A redirect URI the host receives itself (custom scheme, its own listener): the
    /// authorization callback must reply with the URL it was redirected to. Unset: the built-in
    /// listener on `http://127.0.0.1:<loopback_port><loopback_path>`.
    pub redirect_uri: Option<String>,
    /// 0: an ephemeral port.
    pub loopback_port: u16,
    /// The path of the loopback listener's redirect URI.
    pub loopback_path: String,
    /// Scopes added to those chosen by the protocol's rules (challenge, else the resource's
    /// `scopes_supported`).
    pub scopes: Vec<String>,
    /// Ask for `offline_access` (a refresh token) when the authorization server lists it.
    pub offline_access: bool,
    /// `private_key_jwt`: the signing key (parsed once).
    pub signer: Option<Arc<Signer>>,
    /// How long the host has to complete a browser authorization.
    pub authorization_timeout: Duration,
    /// Re-authorizations for more scope (403 `insufficient_scope`) per request.
    pub max_step_up: u32,
    /// Without an authorization callback, open the system browser on the authorization URL.
    /// The URL is never logged (it carries the flow's `state`): without a callback and without
    /// this, an authorization-code flow fails at once.
    pub open_browser: bool,
    /// Allow authorization servers (and metadata) on plain http:// outside loopback hosts.
    pub allow_http: bool,
    /// Let the flows contact loopback, private and carrier-grade NAT addresses although the MCP
    /// server is not in that class (link-local and special ranges need `allow_hosts`).
    pub allow_private_networks: bool,
    /// Hosts the flows may contact whatever their addresses: names, `*.domain`, IP addresses,
    /// ranges (`10.0.0.0/8`).
    pub allow_hosts: Vec<String>,
    /// Hosts the flows never contact (same forms; a range also matches resolved addresses).
    pub deny_hosts: Vec<String>,
    /// DPoP (RFC 9449): the key proofs are signed with; `None`: plain bearer tokens.
    pub dpop: Option<DpopKeySource>,
    /// `jwt_bearer`: the workload's JWT, or the file holding it (read before each request).
    pub workload_jwt: Option<AssertionSource>,
    /// `enterprise`: the user's ID token, or the file holding it.
    pub id_token: Option<AssertionSource>,
    /// `enterprise`: the identity provider's token endpoint and this client there.
    pub idp: Option<IdpConfig>,
    /// Keep credentials in this directory ([`super::FileTokenStore`], locked across processes)
    /// instead of memory, unless the host sets a store.
    pub token_store_dir: Option<std::path::PathBuf>,
}

impl Default for OAuthConfig {
    fn default() -> Self {
        OAuthConfig {
            grant: Grant::AuthorizationCode,
            client_id: None,
            client_secret: None,
            token_endpoint_auth_method: None,
            issuer: None,
            client_metadata_url: None,
            client_name: None,
            application_type: "native".into(),
            redirect_uri: None,
            loopback_port: 0,
            loopback_path: defaults::LOOPBACK_PATH.into(),
            scopes: Vec::new(),
            offline_access: true,
            signer: None,
            authorization_timeout: Duration::from_millis(defaults::AUTHORIZATION_TIMEOUT_MS),
            max_step_up: defaults::MAX_STEP_UP as u32,
            open_browser: false,
            allow_http: false,
            allow_private_networks: false,
            allow_hosts: Vec::new(),
            deny_hosts: Vec::new(),
            dpop: None,
            workload_jwt: None,
            id_token: None,
            idp: None,
            token_store_dir: None,
        }
    }
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("grant", &self.grant)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("token_endpoint_auth_method", &self.token_endpoint_auth_method)
            .field("issuer", &self.issuer)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("redirect_uri", &self.redirect_uri)
            .field("loopback_port", &self.loopback_port)
            .field("scopes", &self.scopes)
            .field("signer", &self.signer.as_ref().map(|s| s.algorithm()))
            .field("dpop", &self.dpop)
            .field("workload_jwt", &self.workload_jwt)
            .field("id_token", &self.id_token)
            .field("idp", &self.idp)
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    /// Checks across keys, for configurations from JSON and from Rust alike.
    pub(crate) fn validate(&self) -> Result<()> {
        if let Some(m) = &self.token_endpoint_auth_method {
            if !AUTH_METHODS.contains(&m.as_str()) {
                return Err(Error::invalid(format!(
                    "oauth.token_endpoint_auth_method {m:?} is not one of {}",
                    AUTH_METHODS.join(", ")
                )));
            }
            let needs_secret = m == "client_secret_basic" || m == "client_secret_post";
            if needs_secret && self.client_secret.is_none() {
                return Err(Error::invalid(format!(
                    "oauth.token_endpoint_auth_method {m} needs client_secret"
                )));
            }
            if m == "private_key_jwt" && self.signer.is_none() {
                return Err(Error::invalid("private_key_jwt needs oauth.private_key_pem"));
            }
        }
        if (self.client_secret.is_some() || self.signer.is_some()) && self.client_id.is_none() {
            return Err(Error::invalid(
                "oauth.client_secret and oauth.private_key_pem need oauth.client_id",
            ));
        }
        if (self.client_secret.is_some() || self.signer.is_some()) && self.issuer.is_none() {
            return Err(Error::invalid(
                "oauth.client_secret and oauth.private_key_pem need oauth.issuer, the authorization server they \
                 belong to: they are sent to that one only, never to one a server names",
            ));
        }
        if self.grant == Grant::ClientCredentials {
            if self.client_id.is_none() || (self.client_secret.is_none() && self.signer.is_none()) {
                return Err(Error::invalid(
                    "oauth.grant client_credentials needs client_id and client_secret or private_key_pem",
                ));
            }
            if self.token_endpoint_auth_method.as_deref() == Some("none") {
                return Err(Error::invalid(
                    "client_credentials cannot use token_endpoint_auth_method none",
                ));
            }
        }
        if let Some(u) = &self.client_metadata_url {
            let url = Url::parse(u).map_err(|_| Error::invalid("oauth.client_metadata_url is not a URL"))?;
            if url.scheme() != "https" || url.path().len() <= 1 || url.fragment().is_some() {
                return Err(Error::invalid(
                    "oauth.client_metadata_url must be an https URL with a path (a Client ID Metadata Document)",
                ));
            }
        }
        if let Some(u) = &self.redirect_uri {
            let url = Url::parse(u).map_err(|_| Error::invalid("oauth.redirect_uri is not an absolute URL"))?;
            if url.fragment().is_some() {
                return Err(Error::invalid("oauth.redirect_uri must not have a fragment"));
            }
        }
        if let Some(i) = &self.issuer {
            Url::parse(i).map_err(|_| Error::invalid("oauth.issuer is not a URL"))?;
        }
        Ok(())
    }
}

/// `private_key_pem` and `signing_algorithm` as the signer for `private_key_jwt`.
pub(crate) fn signer(pem: Option<&str>, alg: Option<&str>) -> Result<Option<Arc<Signer>>> {
    if let Some(a) = alg {
        if !ALGORITHMS.contains(&a) {
            return Err(Error::invalid(format!(
                "oauth.signing_algorithm {a:?} is not one of {}",
                ALGORITHMS.join(", ")
            )));
        }
    }
    match pem {
        Some(pem) => Ok(Some(Arc::new(Signer::from_pem(pem, alg)?))),
        None if alg.is_some() => Err(Error::invalid("oauth.signing_algorithm needs oauth.private_key_pem")),
        None => Ok(None),
    }
}

/// A space-separated scope string as scopes, each once.
pub(crate) fn split_scopes(text: &str) -> Vec<String> {
    super::challenge::split_scopes(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_checks() {
        let c = OAuthConfig::from_json(&json!({})).unwrap();
        assert_eq!(c.grant, Grant::AuthorizationCode);
        assert_eq!(c.loopback_path, "/callback");
        let c = OAuthConfig::from_json(
            &json!({"scopes": "a b a", "client_id": "x", "client_secret": "s", "issuer": "https://as.example"}),
        )
        .unwrap();
        assert_eq!(c.scopes, vec!["a", "b"]);
        assert!(!format!("{c:?}").contains("\"s\""));
        for bad in [
            json!({"nope": 1}),
            json!({"grant": "password"}),
            json!({"grant": "client_credentials", "client_id": "x"}),
            json!({"client_secret": "s"}),
            // A secret or key without the issuer it belongs to.
            json!({"client_id": "x", "client_secret": "s"}),
            json!({"grant": "client_credentials", "client_id": "x", "client_secret": "s"}),
            json!({"client_metadata_url": "http://x.example/c.json"}),
            json!({"client_metadata_url": "https://x.example/"}),
            json!({"token_endpoint_auth_method": "client_secret_jwt"}),
            json!({"token_endpoint_auth_method": "client_secret_basic", "client_id": "x"}),
            json!({"application_type": "desktop"}),
            json!({"signing_algorithm": "ES256"}),
            json!({"redirect_uri": "/relative"}),
            json!({"allow_hosts": "a.example"}),
            json!({"deny_hosts": ["ok.example", "not a host"]}),
            json!({"dpop": "yes"}),
            json!({"dpop_private_key_pem": "not a key"}),
            json!({"dpop": false, "dpop_private_key_jwk": {"kty": "EC"}}),
        ] {
            assert!(OAuthConfig::from_json(&bad).is_err(), "{bad}");
        }
    }
}
