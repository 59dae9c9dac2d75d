//! The typed JSON settings onto the internal configuration types, with the checks that span
//! keys (exactly one transport, keys of the other transport, limits serde cannot express).

use super::{
    Addresses, ApplicationType, AuthMethod, Config, EnvMode, Grant, InputKind, Jwk, Mode, OAuth, Reconnect, Scopes,
    ToolPinning,
};
use crate::auth::{AssertionSource, DpopKeySource, IdpConfig, OAuthConfig};
use crate::client::{
    check_env_name, timeout_ms, ClientConfig, ConnectMode, ElicitationModes, ManualInput, ReconnectPolicy,
};
use crate::error::{Error, Result};
use crate::pin::{PinPolicy, PinSettings};
use crate::transport::http::HttpConfig;
use crate::transport::stdio::{self, StdioConfig};
use crate::transport::TransportConfig;
use std::net::IpAddr;
use std::time::Duration;

/// `authorization_timeout_ms` beyond this (a day) is this.
const MAX_AUTHORIZATION_TIMEOUT_MS: u64 = 24 * 3600 * 1000;

impl Config {
    /// The internal client configuration these settings describe.
    pub fn into_client_config(self) -> Result<ClientConfig> {
        let max_message_bytes = usize::try_from(self.max_message_bytes).unwrap_or(usize::MAX).max(1024);
        let mut oauth = None;
        let transport = match (&self.command, &self.url) {
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    "the configuration has both \"command\" and \"url\"; give exactly one",
                ))
            }
            (None, None) => {
                return Err(Error::invalid(
                    "the configuration needs a \"command\" (stdio) or a \"url\" (HTTP)",
                ))
            }
            (Some(_), None) => TransportConfig::Stdio(self.stdio(max_message_bytes)?),
            (None, Some(_)) => {
                let http = self.http(max_message_bytes)?;
                oauth = self
                    .oauth
                    .clone()
                    .map(|o| o.into_oauth_config().map(Box::new))
                    .transpose()?;
                http.validate_for(oauth.is_some())?;
                TransportConfig::Http(http)
            }
        };
        let mut config = ClientConfig::new(transport);
        config.mode = match (self.mode, self.protocol_version) {
            (_, Some(v)) => ConnectMode::Pinned(v),
            (None | Some(Mode::Auto), None) => ConnectMode::Auto,
            (Some(Mode::Modern), None) => ConnectMode::Modern,
            (Some(Mode::Legacy), None) => ConnectMode::Legacy,
        };
        if let Some(info) = self.client_info {
            config.client_info = info.into();
        }
        config.capabilities = self.capabilities.map(Into::into);
        config.request_timeout = timeout_ms("request_timeout_ms", self.request_timeout_ms)?;
        config.probe_timeout = timeout_ms("probe_timeout_ms", self.probe_timeout_ms)?;
        config.input_required_max_rounds = self.input_required_max_rounds;
        config.max_pages = usize::try_from(self.max_pages).unwrap_or(usize::MAX);
        config.connect_timeout = timeout_ms("connect_timeout_ms", self.connect_timeout_ms)?;
        config.reconnect = self.reconnect.map(Reconnect::into_policy).transpose()?;
        config.skills = self.skills;
        if let Some(kinds) = &self.manual_input {
            config.manual_input = manual_input(kinds);
        }
        config.tasks = self.tasks;
        config.sampling_tools = self.sampling_tools;
        config.apps = self.apps;
        config.response_cache = self.response_cache;
        if self.response_cache_max_entries > super::MAX_RESPONSE_CACHE_ENTRIES {
            return Err(Error::invalid(
                "response_cache_max_entries must be an integer from 0 to 2^20",
            ));
        }
        config.response_cache_max_entries = self.response_cache_max_entries as usize;
        config.validate_output_schema = self.validate_output_schema;
        config.span_tool_payloads = self.span_tool_payloads;
        config.oauth = oauth;
        config.tool_pinning = self.tool_pinning.map(ToolPinning::into_settings);
        Ok(config)
    }

    fn stdio(&self, max_message_bytes: usize) -> Result<StdioConfig> {
        let http_only = [
            ("headers", self.headers.is_some()),
            ("bearer_token", self.bearer_token.is_some()),
            ("oauth", self.oauth.is_some()),
            ("allow_insecure_http", self.allow_insecure_http.is_some()),
            ("resolve", self.resolve.is_some()),
            ("proxy", self.proxy.is_some()),
        ];
        if let Some((key, _)) = http_only.iter().find(|(_, given)| *given) {
            return Err(Error::invalid(format!("{key} applies to a \"url\", not a \"command\"")));
        }
        let mut stdio = StdioConfig::new(self.command.clone().unwrap_or_default());
        stdio.args = self.args.clone().unwrap_or_default();
        for (k, v) in self.env.iter().flatten() {
            check_env_name(k)?;
            stdio.env.push((k.clone(), v.clone()));
        }
        stdio.env_mode = match self.env_mode {
            None | Some(EnvMode::Allowlist) => stdio::EnvMode::Allowlist,
            Some(EnvMode::Inherit) => stdio::EnvMode::Inherit,
            Some(EnvMode::Replace) => stdio::EnvMode::Replace,
        };
        stdio.cwd = self.cwd.clone().map(Into::into);
        stdio.max_message_bytes = max_message_bytes;
        // Each kept line may be 8 KiB: the tail's memory stays bounded whatever is asked.
        if let Some(n) = self.stderr_tail_lines {
            if n > 1000 {
                return Err(Error::invalid(format!(
                    "stderr_tail_lines is {n}; at most 1000 lines are kept"
                )));
            }
            stdio.stderr_tail_lines = n as usize;
        }
        if let Some(ms) = self.shutdown_grace_ms {
            stdio.shutdown_grace = timeout_ms("shutdown_grace_ms", ms)?;
        }
        Ok(stdio)
    }

    fn http(&self, max_message_bytes: usize) -> Result<HttpConfig> {
        let stdio_only = [
            ("args", self.args.is_some()),
            ("env", self.env.is_some()),
            ("env_mode", self.env_mode.is_some()),
            ("cwd", self.cwd.is_some()),
            ("stderr_tail_lines", self.stderr_tail_lines.is_some()),
            ("shutdown_grace_ms", self.shutdown_grace_ms.is_some()),
        ];
        if let Some((key, _)) = stdio_only.iter().find(|(_, given)| *given) {
            return Err(Error::invalid(format!("{key} applies to a \"command\", not a \"url\"")));
        }
        let mut http = HttpConfig::new(self.url.clone().unwrap_or_default());
        http.headers = self.headers.clone().unwrap_or_default().into_iter().collect();
        http.bearer_token = self.bearer_token.clone();
        http.allow_insecure_http = self.allow_insecure_http.unwrap_or(false);
        http.resolve = self
            .resolve
            .iter()
            .flatten()
            .map(resolve_entry)
            .collect::<Result<_>>()?;
        http.proxy = self.proxy.as_deref().map(proxy_setting).transpose()?;
        http.max_message_bytes = max_message_bytes;
        Ok(http)
    }
}

/// The `manual_input` kinds as the client's declarations.
pub(super) fn manual_input(kinds: &[InputKind]) -> ManualInput {
    let mut manual = ManualInput::default();
    for kind in kinds {
        match kind {
            InputKind::Elicitation | InputKind::ElicitationForm => {
                manual.elicitation.get_or_insert_with(ElicitationModes::default).form = true
            }
            InputKind::ElicitationUrl => manual.elicitation.get_or_insert_with(ElicitationModes::default).url = true,
            InputKind::Sampling => manual.sampling = true,
            InputKind::Roots => manual.roots = true,
        }
    }
    manual
}

/// The `"proxy"` value: empty, or an `http://` or `https://` URL with a host.
fn proxy_setting(text: &str) -> Result<String> {
    if text.is_empty() {
        return Ok(String::new());
    }
    match url::Url::parse(text) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(text.to_string()),
        _ => Err(Error::invalid(
            "proxy is an http:// or https:// URL (user:password@ for proxy authentication), or \"\" for none",
        )),
    }
}

/// One `"resolve"` entry: a host name and the addresses it is pinned to.
fn resolve_entry((name, addrs): (&String, &Addresses)) -> Result<(String, Vec<IpAddr>)> {
    let bad = || Error::invalid("resolve maps host names to an IP address or an array of them");
    let texts = match addrs {
        Addresses::One(a) => std::slice::from_ref(a),
        Addresses::Many(items) if !items.is_empty() => items.as_slice(),
        Addresses::Many(_) => return Err(bad()),
    };
    let addrs = texts
        .iter()
        .map(|t| t.parse().map_err(|_| bad()))
        .collect::<Result<Vec<IpAddr>>>()?;
    Ok((name.clone(), addrs))
}

impl ToolPinning {
    fn into_settings(self) -> PinSettings {
        PinSettings {
            policy: match self.policy {
                super::PinPolicy::Off => PinPolicy::Off,
                super::PinPolicy::Warn => PinPolicy::Warn,
                super::PinPolicy::Block => PinPolicy::Block,
                super::PinPolicy::Ask => PinPolicy::Ask,
            },
            identity: self.identity,
            store_dir: self.store_dir.map(Into::into),
            ignore_meta: self.ignore_meta,
        }
    }
}

impl Reconnect {
    fn into_policy(self) -> Result<ReconnectPolicy> {
        if self.max_attempts == 0 {
            return Err(Error::invalid("reconnect.max_attempts must be between 1 and 2^32-1"));
        }
        Ok(ReconnectPolicy {
            max_attempts: self.max_attempts,
            initial_backoff: Duration::from_millis(self.initial_backoff_ms),
            max_backoff: Duration::from_millis(self.max_backoff_ms),
        })
    }
}

impl OAuth {
    /// The internal OAuth configuration, checked (`OAuthConfig::validate`).
    pub fn into_oauth_config(self) -> Result<OAuthConfig> {
        let mut cfg = OAuthConfig {
            grant: match self.grant {
                Grant::AuthorizationCode => crate::auth::Grant::AuthorizationCode,
                Grant::ClientCredentials => crate::auth::Grant::ClientCredentials,
                Grant::JwtBearer => crate::auth::Grant::JwtBearer,
                Grant::Enterprise => crate::auth::Grant::Enterprise,
            },
            client_id: self.client_id.filter(|s| !s.is_empty()),
            client_secret: self.client_secret,
            token_endpoint_auth_method: self.token_endpoint_auth_method.map(|m| {
                match m {
                    AuthMethod::ClientSecretBasic => "client_secret_basic",
                    AuthMethod::ClientSecretPost => "client_secret_post",
                    AuthMethod::None => "none",
                    AuthMethod::PrivateKeyJwt => "private_key_jwt",
                }
                .to_string()
            }),
            issuer: self.issuer,
            client_metadata_url: self.client_metadata_url,
            client_name: self.client_name,
            application_type: match self.application_type {
                ApplicationType::Native => "native",
                ApplicationType::Web => "web",
            }
            .into(),
            redirect_uri: self.redirect_uri,
            loopback_port: self.loopback_port,
            loopback_path: self.loopback_path,
            scopes: Vec::new(),
            offline_access: self.offline_access,
            signer: None,
            // Capped: an instant that far ahead overflows on some platforms.
            authorization_timeout: Duration::from_millis(
                self.authorization_timeout_ms.clamp(1, MAX_AUTHORIZATION_TIMEOUT_MS),
            ),
            max_step_up: self.max_step_up.min(10) as u32,
            open_browser: self.open_browser,
            allow_http: self.allow_http,
            allow_private_networks: self.allow_private_networks,
            allow_hosts: self.allow_hosts.unwrap_or_default(),
            deny_hosts: self.deny_hosts.unwrap_or_default(),
            dpop: dpop_key(
                self.dpop,
                self.dpop_private_key_pem.as_deref(),
                self.dpop_private_key_jwk,
            )?,
            workload_jwt: assertion_source("workload_jwt", self.workload_jwt, self.workload_jwt_file)?,
            id_token: assertion_source("id_token", self.id_token, self.id_token_file)?,
            idp: None,
            token_store_dir: self.token_store_dir.filter(|d| !d.is_empty()).map(Into::into),
        };
        if !cfg.loopback_path.starts_with('/') || cfg.loopback_path.contains(['?', '#', ' ']) {
            return Err(Error::invalid("oauth.loopback_path must be a path starting with /"));
        }
        cfg.scopes = match self.scopes {
            None => Vec::new(),
            Some(Scopes::Text(s)) => crate::auth::config::split_scopes(&s),
            Some(Scopes::List(items)) => {
                if items.iter().any(|s| s.is_empty() || s.contains(' ')) {
                    return Err(Error::invalid("oauth.scopes must be strings without spaces"));
                }
                items
            }
        };
        for (key, list) in [("allow_hosts", &cfg.allow_hosts), ("deny_hosts", &cfg.deny_hosts)] {
            crate::net::policy::check_patterns(list, key).map_err(|e| Error::invalid(format!("oauth.{e}")))?;
        }
        if cfg.workload_jwt.is_some() && cfg.grant != crate::auth::Grant::JwtBearer {
            return Err(Error::invalid(
                "oauth.workload_jwt and oauth.workload_jwt_file need oauth.grant jwt_bearer",
            ));
        }
        if let Some(endpoint) = self.idp_token_endpoint {
            cfg.idp = Some(IdpConfig {
                token_endpoint: url::Url::parse(&endpoint)
                    .ok()
                    .filter(|u| matches!(u.scheme(), "http" | "https"))
                    .ok_or_else(|| Error::invalid("oauth.idp_token_endpoint is not an http(s) URL"))?,
                client_id: self.idp_client_id,
                client_secret: self.idp_client_secret,
            });
        } else if self.idp_client_id.is_some() || self.idp_client_secret.is_some() {
            return Err(Error::invalid(
                "oauth.idp_client_id and oauth.idp_client_secret need oauth.idp_token_endpoint",
            ));
        }
        let enterprise = cfg.grant == crate::auth::Grant::Enterprise;
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
        cfg.signer = crate::auth::config::signer(self.private_key_pem.as_deref(), self.signing_algorithm.as_deref())?;
        cfg.validate()?;
        Ok(cfg)
    }
}

/// `<key>` (the JWT itself) or `<key>_file` (a path), not both, neither empty.
fn assertion_source(key: &str, value: Option<String>, file: Option<String>) -> Result<Option<AssertionSource>> {
    match (value, file) {
        (Some(_), Some(_)) => Err(Error::invalid(format!(
            "give oauth.{key} or oauth.{key}_file, not both"
        ))),
        (Some(v), None) if !v.is_empty() => Ok(Some(AssertionSource::Value(v))),
        (None, Some(p)) if !p.is_empty() => Ok(Some(AssertionSource::File(p.into()))),
        (None, None) => Ok(None),
        _ => Err(Error::invalid(format!("oauth.{key} must not be empty"))),
    }
}

/// The DPoP key asked for: the host's (PEM or JWK), a generated one (`dpop: true`), or none.
fn dpop_key(enabled: Option<bool>, pem: Option<&str>, jwk: Option<Jwk>) -> Result<Option<DpopKeySource>> {
    if enabled == Some(false) && (pem.is_some() || jwk.is_some()) {
        return Err(Error::invalid("oauth.dpop is false but a DPoP key is given"));
    }
    match (pem, jwk) {
        (Some(_), Some(_)) => Err(Error::invalid(
            "give oauth.dpop_private_key_pem or oauth.dpop_private_key_jwk, not both",
        )),
        (Some(pem), None) => DpopKeySource::from_pem(pem).map(Some),
        (None, Some(Jwk::Object(o))) => DpopKeySource::from_jwk(&serde_json::Value::Object(o)).map(Some),
        (None, Some(Jwk::Text(t))) => DpopKeySource::from_jwk(&serde_json::Value::String(t)).map(Some),
        (None, None) => Ok((enabled == Some(true)).then_some(DpopKeySource::Generate)),
    }
}
