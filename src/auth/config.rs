//! The `"oauth"` configuration object (see [`OAuthConfig::from_json`]).

use super::assertion::AssertionSource;
use super::dpop::DpopKeySource;
use super::enterprise::IdpConfig;
use super::jwt::{Signer, ALGORITHMS};
use crate::error::{Error, Result};
use serde_json::{Map, Value};
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

/// `authorization_timeout_ms` beyond this (a day) is this.
const MAX_AUTHORIZATION_TIMEOUT_MS: u64 = 24 * 3600 * 1000;

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
            loopback_path: "/callback".into(),
            scopes: Vec::new(),
            offline_access: true,
            signer: None,
            authorization_timeout: Duration::from_secs(300),
            max_step_up: 2,
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

/// Keys `OAuthConfig::from_json` accepts; anything else is rejected so typos surface.
pub const KEYS: &[&str] = &[
    "grant",
    "client_id",
    "client_secret",
    "token_endpoint_auth_method",
    "issuer",
    "client_metadata_url",
    "client_name",
    "application_type",
    "redirect_uri",
    "loopback_port",
    "loopback_path",
    "scopes",
    "offline_access",
    "private_key_pem",
    "signing_algorithm",
    "authorization_timeout_ms",
    "max_step_up",
    "open_browser",
    "allow_http",
    "allow_private_networks",
    "allow_hosts",
    "deny_hosts",
    "dpop",
    "dpop_private_key_pem",
    "dpop_private_key_jwk",
    "workload_jwt",
    "workload_jwt_file",
    "id_token",
    "id_token_file",
    "idp_token_endpoint",
    "idp_client_id",
    "idp_client_secret",
    "token_store_dir",
];

impl OAuthConfig {
    /// Reads the `"oauth"` object of the flat configuration:
    ///
    /// - `grant`: `"authorization_code"` (default) or `"client_credentials"`;
    /// - pre-registration / client credentials: `client_id`, `client_secret`,
    ///   `token_endpoint_auth_method` (`client_secret_basic`, `client_secret_post`, `none`,
    ///   `private_key_jwt`), `issuer` (the authorization server they belong to; required with
    ///   a secret or key, which go to that issuer only);
    /// - `private_key_pem` (PKCS#8, or PKCS#1 RSA) and `signing_algorithm` (ES256, ES384,
    ///   RS256…512, PS256…512, EdDSA; default from the key) for `private_key_jwt`;
    /// - `client_metadata_url` (CIMD), `client_name`, `application_type` (`native`/`web`);
    /// - `redirect_uri` (host-handled), or the loopback listener: `loopback_port` (0),
    ///   `loopback_path` (`/callback`);
    /// - `scopes` (array or space-separated string), `offline_access` (true),
    ///   `authorization_timeout_ms` (300000, at most a day), `max_step_up` (2), `open_browser` (false),
    ///   `allow_http` (false);
    /// - where the flows may go (`crate::net::policy`): `allow_private_networks` (false),
    ///   `allow_hosts` and `deny_hosts` (arrays of names, `*.domain`, addresses or ranges);
    /// - DPoP (RFC 9449): `dpop` (false; true: a key generated for the client), or the host's
    ///   P-256 key as `dpop_private_key_pem` (PKCS#8) or `dpop_private_key_jwk` (object or text),
    ///   either of which turns DPoP on;
    /// - `grant` `jwt_bearer` (workload identity federation): `workload_jwt` (the JWT) or
    ///   `workload_jwt_file` (re-read before every token request), else the host's assertion
    ///   provider; `client_id` only when the authorization server expects one;
    /// - `grant` `enterprise` (enterprise-managed authorization): `idp_token_endpoint`,
    ///   `idp_client_id`, `idp_client_secret` (the identity provider), `id_token` or
    ///   `id_token_file` (else the host's assertion provider), and `client_id` with
    ///   `client_secret` or `private_key_pem` and `issuer` for the MCP authorization server;
    /// - `token_store_dir`: keep credentials in files there (0600), locked across processes.
    pub fn from_json(value: &Value) -> Result<OAuthConfig> {
        let obj = value
            .as_object()
            .ok_or_else(|| Error::invalid("oauth must be a JSON object"))?;
        if let Some(key) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(Error::invalid(format!("unknown oauth key {key:?}")));
        }
        let string = |key: &str| string(obj, key);
        let boolean = |key: &str| -> Result<Option<bool>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Bool(b)) => Ok(Some(*b)),
                Some(_) => Err(Error::invalid(format!("oauth.{key} must be true or false"))),
            }
        };
        let number = |key: &str| -> Result<Option<u64>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| Error::invalid(format!("oauth.{key} must be a non-negative integer"))),
            }
        };
        let mut cfg = OAuthConfig {
            grant: match string("grant")?.as_deref() {
                None | Some("authorization_code") => Grant::AuthorizationCode,
                Some("client_credentials") => Grant::ClientCredentials,
                Some("jwt_bearer") => Grant::JwtBearer,
                Some("enterprise") => Grant::Enterprise,
                Some(other) => {
                    return Err(Error::invalid(format!(
                        "oauth.grant {other:?} is not authorization_code, client_credentials, jwt_bearer or enterprise"
                    )))
                }
            },
            client_id: string("client_id")?.filter(|s| !s.is_empty()),
            client_secret: string("client_secret")?,
            token_endpoint_auth_method: string("token_endpoint_auth_method")?,
            issuer: string("issuer")?,
            client_metadata_url: string("client_metadata_url")?,
            client_name: string("client_name")?,
            redirect_uri: string("redirect_uri")?,
            ..OAuthConfig::default()
        };
        if let Some(t) = string("application_type")? {
            if t != "native" && t != "web" {
                return Err(Error::invalid("oauth.application_type must be \"native\" or \"web\""));
            }
            cfg.application_type = t;
        }
        if let Some(port) = number("loopback_port")? {
            cfg.loopback_port = u16::try_from(port).map_err(|_| Error::invalid("oauth.loopback_port is not a port"))?;
        }
        if let Some(path) = string("loopback_path")? {
            if !path.starts_with('/') || path.contains(['?', '#', ' ']) {
                return Err(Error::invalid("oauth.loopback_path must be a path starting with /"));
            }
            cfg.loopback_path = path;
        }
        cfg.scopes = match obj.get("scopes") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => super::challenge::split_scopes(Some(s)),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .filter(|s| !s.is_empty() && !s.contains(' '))
                        .map(str::to_string)
                        .ok_or_else(|| Error::invalid("oauth.scopes must be strings without spaces"))
                })
                .collect::<Result<_>>()?,
            Some(_) => return Err(Error::invalid("oauth.scopes must be an array of strings")),
        };
        if let Some(b) = boolean("offline_access")? {
            cfg.offline_access = b;
        }
        if let Some(ms) = number("authorization_timeout_ms")? {
            // Capped: an instant that far ahead overflows on some platforms.
            cfg.authorization_timeout = Duration::from_millis(ms.clamp(1, MAX_AUTHORIZATION_TIMEOUT_MS));
        }
        if let Some(n) = number("max_step_up")? {
            cfg.max_step_up = u32::try_from(n.min(10)).unwrap_or(10);
        }
        if let Some(b) = boolean("open_browser")? {
            cfg.open_browser = b;
        }
        if let Some(b) = boolean("allow_http")? {
            cfg.allow_http = b;
        }
        if let Some(b) = boolean("allow_private_networks")? {
            cfg.allow_private_networks = b;
        }
        for (key, list) in [
            ("allow_hosts", &mut cfg.allow_hosts),
            ("deny_hosts", &mut cfg.deny_hosts),
        ] {
            *list = match obj.get(key) {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| Error::invalid(format!("oauth.{key} must be an array of strings")))?,
                Some(_) => return Err(Error::invalid(format!("oauth.{key} must be an array of strings"))),
            };
            crate::net::policy::check_patterns(list, key).map_err(|e| Error::invalid(format!("oauth.{e}")))?;
        }
        let alg = string("signing_algorithm")?;
        if let Some(a) = &alg {
            if !ALGORITHMS.contains(&a.as_str()) {
                return Err(Error::invalid(format!(
                    "oauth.signing_algorithm {a:?} is not one of {}",
                    ALGORITHMS.join(", ")
                )));
            }
        }
        if let Some(pem) = string("private_key_pem")? {
            cfg.signer = Some(Arc::new(Signer::from_pem(&pem, alg.as_deref())?));
        } else if alg.is_some() {
            return Err(Error::invalid("oauth.signing_algorithm needs oauth.private_key_pem"));
        }
        cfg.dpop = dpop_key(obj, boolean("dpop")?)?;
        cfg.workload_jwt = assertion_source(obj, "workload_jwt")?;
        if cfg.workload_jwt.is_some() && cfg.grant != Grant::JwtBearer {
            return Err(Error::invalid(
                "oauth.workload_jwt and oauth.workload_jwt_file need oauth.grant jwt_bearer",
            ));
        }
        cfg.token_store_dir = string("token_store_dir")?.filter(|d| !d.is_empty()).map(Into::into);
        cfg.id_token = assertion_source(obj, "id_token")?;
        if let Some(endpoint) = string("idp_token_endpoint")? {
            cfg.idp = Some(IdpConfig {
                token_endpoint: Url::parse(&endpoint)
                    .ok()
                    .filter(|u| matches!(u.scheme(), "http" | "https"))
                    .ok_or_else(|| Error::invalid("oauth.idp_token_endpoint is not an http(s) URL"))?,
                client_id: string("idp_client_id")?,
                client_secret: string("idp_client_secret")?,
            });
        } else if obj.keys().any(|k| k.starts_with("idp_")) {
            return Err(Error::invalid(
                "oauth.idp_client_id and oauth.idp_client_secret need oauth.idp_token_endpoint",
            ));
        }
        let enterprise = cfg.grant == Grant::Enterprise;
        if enterprise && (cfg.idp.is_none() || cfg.client_id.is_none()) {
            return Err(Error::invalid(
                "oauth.grant enterprise needs oauth.idp_token_endpoint and oauth.client_id (the client at the \
                 MCP authorization server)",
            ));
        }
        if !enterprise && (cfg.id_token.is_some() || cfg.idp.is_some()) {
            return Err(Error::invalid(
                "oauth.id_token* and oauth.idp_* need oauth.grant enterprise",
            ));
        }
        cfg.validate()?;
        Ok(cfg)
    }

    fn validate(&self) -> Result<()> {
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

/// `<key>` (the JWT itself) or `<key>_file` (a path), not both.
fn assertion_source(obj: &Map<String, Value>, key: &str) -> Result<Option<AssertionSource>> {
    match (string(obj, key)?, string(obj, &format!("{key}_file"))?) {
        (Some(_), Some(_)) => Err(Error::invalid(format!(
            "give oauth.{key} or oauth.{key}_file, not both"
        ))),
        (Some(v), None) if !v.is_empty() => Ok(Some(AssertionSource::Value(v))),
        (None, Some(p)) if !p.is_empty() => Ok(Some(AssertionSource::File(p.into()))),
        (None, None) => Ok(None),
        _ => Err(Error::invalid(format!("oauth.{key} must not be empty"))),
    }
}

/// The DPoP key the configuration asks for: the host's (PEM or JWK), a generated one
/// (`dpop: true`), or none.
fn dpop_key(obj: &Map<String, Value>, enabled: Option<bool>) -> Result<Option<DpopKeySource>> {
    let pem = string(obj, "dpop_private_key_pem")?;
    let jwk = obj.get("dpop_private_key_jwk").filter(|v| !v.is_null());
    if enabled == Some(false) && (pem.is_some() || jwk.is_some()) {
        return Err(Error::invalid("oauth.dpop is false but a DPoP key is given"));
    }
    match (pem, jwk) {
        (Some(_), Some(_)) => Err(Error::invalid(
            "give oauth.dpop_private_key_pem or oauth.dpop_private_key_jwk, not both",
        )),
        (Some(pem), None) => DpopKeySource::from_pem(&pem).map(Some),
        (None, Some(jwk)) => DpopKeySource::from_jwk(jwk).map(Some),
        (None, None) => Ok((enabled == Some(true)).then_some(DpopKeySource::Generate)),
    }
}

fn string(obj: &Map<String, Value>, key: &str) -> Result<Option<String>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Error::invalid(format!("oauth.{key} must be a string"))),
    }
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
