//! Discovery: the protected resource metadata (RFC 9728) named by the challenge or found at the
//! well-known paths (path-aware first, then root), its `resource` checked against the server
//! URL; then the authorization server metadata through the RFC 8414 and OpenID Connect paths in
//! the specification's order, its `issuer` checked against the issuer the URL was built from.
//! Without any protected resource metadata the 2025-03-26 rules apply: the authorization server
//! is the MCP server's origin, with default endpoints when it publishes no metadata.
//!
//! A `resource_metadata` on another origin is read only at the well-known path unless the host
//! allowed its host (`check_named`).
//!
//! Every URL is checked by `Io::check` before it is fetched (the MCP server chose it), and
//! errors never quote what a fetched document says (its fields are the server's text).

use super::challenge::Challenge;
use super::Io;
use crate::error::{Error, Result};
use crate::net::redact;
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;
use url::Url;

/// Bound on a metadata document.
const METADATA_MAX: usize = 256 * 1024;
/// Bound on each metadata or token request.
pub(crate) const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// RFC 8414 authorization server metadata (the fields this client reads).
#[derive(Clone, Default, Deserialize)]
pub(crate) struct AsMetadata {
    #[serde(default)]
    pub issuer: String,
    pub authorization_endpoint: Option<String>,
    pub token_endpoint: Option<String>,
    pub registration_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    pub code_challenge_methods_supported: Option<Vec<String>>,
    pub authorization_response_iss_parameter_supported: Option<bool>,
    pub client_id_metadata_document_supported: Option<bool>,
}

impl AsMetadata {
    /// RFC 8414: absent means `client_secret_basic` only.
    pub fn auth_methods(&self) -> Vec<String> {
        self.token_endpoint_auth_methods_supported
            .clone()
            .unwrap_or_else(|| vec!["client_secret_basic".into()])
    }

    pub fn lists_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }
}

/// One authorization server, as discovered.
#[derive(Clone)]
pub(crate) struct AuthServer {
    /// The issuer identifier exactly as listed (or the server origin for 2025-03-26).
    pub issuer: String,
    pub meta: AsMetadata,
    /// False: no metadata was published (2025-03-26 default endpoints).
    pub from_metadata: bool,
}

/// What the protected resource and its authorization server said.
#[derive(Clone)]
pub(crate) struct Discovery {
    /// The `resource` parameter: the metadata's `resource` exactly as published, or the server
    /// URL when there is no metadata.
    pub resource: String,
    /// The metadata's `scopes_supported`.
    pub resource_scopes: Option<Vec<String>>,
    pub server: AuthServer,
}

/// Where a protected resource metadata document was found, which fixes the resource it may
/// describe (RFC 9728 §3.3).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum PrmSource {
    /// The challenge's `resource_metadata`, or the path-aware well-known URL: the server URL.
    ServerUrl,
    /// The root well-known URL (`/.well-known/oauth-protected-resource`): it is built from
    /// the origin, so the origin is the identifier it describes (the server URL is accepted
    /// too).
    Root,
}

/// The metadata's `resource` is the identifier the metadata was fetched for, compared as
/// parsed URLs (scheme and host case, default port): the server URL exactly, or for the root
/// well-known document the bare origin. A parent path is refused: sent as the RFC 8707
/// `resource`, it would widen the token's audience to every server under it on a shared
/// origin. Never another origin, never a fragment.
pub(crate) fn resource_matches(resource: &str, server: &Url, source: PrmSource) -> bool {
    let Ok(r) = Url::parse(resource) else {
        return false;
    };
    let same_origin = r.scheme() == server.scheme()
        && r.host() == server.host()
        && r.port_or_known_default() == server.port_or_known_default();
    if !same_origin || r.fragment().is_some() || !r.username().is_empty() || r.password().is_some() {
        return false;
    }
    let exact = r.path() == server.path() && r.query() == server.query();
    let origin = r.path() == "/" && r.query().is_none();
    exact || (source == PrmSource::Root && origin)
}

/// `scheme://host[:port]`.
fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// GETs a JSON document; `Ok(None)` (with the reason logged) when there is none at `url`.
async fn get_json(io: &Io, url: &Url, what: &str) -> Result<Option<Value>> {
    let shown = redact::url(url);
    let request = io
        .client_for(url)
        .map_err(|e| e.context(what))?
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(HTTP_TIMEOUT);
    let mut response = request
        .send()
        .await
        .map_err(|e| Io::send_error(e, &format!("{what}: GET {shown}")))?;
    let status = response.status();
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        if body.len() + chunk.len() > METADATA_MAX {
            io.log(format!("{what}: {shown} is larger than {METADATA_MAX} bytes; ignored"));
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        io.log(format!("{what}: GET {shown} answered HTTP {status}"));
        return Ok(None);
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(v) if v.is_object() => Ok(Some(v)),
        _ => {
            io.log(format!("{what}: {shown} is not a JSON object; ignored"));
            Ok(None)
        }
    }
}

struct ProtectedResource {
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
}

/// The well-known path of protected resource metadata (RFC 9728 §3.1).
const PRM_PATH: &str = "/.well-known/oauth-protected-resource";

/// A `resource_metadata` URL the server named on another origin is fetched only at the
/// well-known path (or below it), unless the host listed that host in `allow_hosts`: a server
/// reached through a local port (a tunnel, a sidecar) must not make the client GET any path of
/// every other port. The path is compared after `Url` resolved dot segments.
fn check_named(io: &Io, named: &Url) -> Result<()> {
    io.check(named).map_err(|e| e.context("protected resource metadata"))?;
    let path = named.path();
    let well_known = path == PRM_PATH || path.starts_with(&format!("{PRM_PATH}/"));
    if io.is_server(named) || well_known || io.host_allowed(named) {
        return Ok(());
    }
    Err(Error::auth(format!(
        "the server's challenge names protected resource metadata on another origin ({}) off the \
         well-known path {PRM_PATH}; refused, nothing fetched (oauth.allow_hosts permits that host)",
        redact::origin(named)
    )))
}

/// The protected resource metadata: the challenge's `resource_metadata`, else the path-aware
/// then the root well-known URL. `Ok(None)` when the server publishes none.
async fn protected_resource(io: &Io, server: &Url, challenge: &Challenge) -> Result<Option<ProtectedResource>> {
    let what = "protected resource metadata";
    let candidates: Vec<(Url, PrmSource)> = match &challenge.resource_metadata {
        Some(u) => {
            let named = server
                .join(u)
                .map_err(|_| Error::auth("the challenge's resource_metadata is not a URL"))?;
            check_named(io, &named)?;
            vec![(named, PrmSource::ServerUrl)]
        }
        None => {
            let mut c = Vec::new();
            let path = server.path().trim_end_matches('/');
            if !path.is_empty() {
                c.push((
                    Url::parse(&format!(
                        "{}/.well-known/oauth-protected-resource{path}",
                        origin(server)
                    )),
                    PrmSource::ServerUrl,
                ));
            }
            c.push((
                Url::parse(&format!("{}/.well-known/oauth-protected-resource", origin(server))),
                PrmSource::Root,
            ));
            c.into_iter().filter_map(|(u, s)| Some((u.ok()?, s))).collect()
        }
    };
    for (url, source) in &candidates {
        let shown = redact::url(url);
        let Some(doc) = get_json(io, url, what).await? else {
            continue;
        };
        let resource = doc
            .get("resource")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::auth(format!("the {what} at {shown} has no resource")))?
            .to_string();
        if !resource_matches(&resource, server, *source) {
            return Err(Error::auth(format!(
                "the {what} at {shown} is for another resource than {}; refusing to authorize",
                redact::url(server)
            )));
        }
        let authorization_servers: Vec<String> = doc
            .get("authorization_servers")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        if authorization_servers.is_empty() {
            return Err(Error::auth(format!(
                "the {what} at {shown} names no authorization server"
            )));
        }
        let scopes_supported = doc
            .get("scopes_supported")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect());
        return Ok(Some(ProtectedResource {
            resource,
            authorization_servers,
            scopes_supported,
        }));
    }
    if challenge.resource_metadata.is_some() {
        return Err(Error::auth(format!(
            "the {what} named by the server's challenge could not be read"
        )));
    }
    Ok(None)
}

/// Fetches an issuer's metadata through the specification's well-known URLs, in order; the
/// document's `issuer` must equal `issuer` exactly.
pub(crate) async fn authorization_server(io: &Io, issuer: &str) -> Result<Option<AuthServer>> {
    let what = "authorization server metadata";
    let url = Url::parse(issuer).map_err(|_| Error::auth("the authorization server's issuer is not a URL"))?;
    io.check(&url).map_err(|e| e.context("the authorization server"))?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(Error::auth(
            "the authorization server's issuer has a query or fragment, which an issuer cannot",
        ));
    }
    let host = origin(&url);
    let path = url.path().trim_end_matches('/');
    let candidates = if path.is_empty() {
        vec![
            format!("{host}/.well-known/oauth-authorization-server"),
            format!("{host}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{host}/.well-known/oauth-authorization-server{path}"),
            format!("{host}/.well-known/openid-configuration{path}"),
            format!("{host}{path}/.well-known/openid-configuration"),
        ]
    };
    for candidate in candidates {
        let Ok(candidate) = Url::parse(&candidate) else {
            continue;
        };
        let Some(doc) = get_json(io, &candidate, what).await? else {
            continue;
        };
        let shown = redact::url(&candidate);
        let meta: AsMetadata =
            serde_json::from_value(doc).map_err(|_| Error::auth(format!("the {what} at {shown} is malformed")))?;
        if meta.issuer != issuer {
            return Err(Error::auth(format!(
                "the {what} at {shown} names another issuer than the one it was fetched for; refusing it"
            )));
        }
        for (name, endpoint) in [
            ("authorization_endpoint", &meta.authorization_endpoint),
            ("token_endpoint", &meta.token_endpoint),
            ("registration_endpoint", &meta.registration_endpoint),
        ] {
            if let Some(e) = endpoint {
                let parsed = Url::parse(e).map_err(|_| Error::auth(format!("the {what}'s {name} is not a URL")))?;
                // The browser opens the authorization endpoint; the library fetches the others.
                let checked = if name == "authorization_endpoint" {
                    io.check_scheme(&parsed)
                } else {
                    io.check(&parsed)
                };
                checked.map_err(|e| e.context(&format!("the {what}'s {name}")))?;
            }
        }
        return Ok(Some(AuthServer {
            issuer: issuer.to_string(),
            meta,
            from_metadata: true,
        }));
    }
    Ok(None)
}

/// Chooses the authorization server among those listed: `preferred` when listed, else the
/// first.
fn choose(listed: &[String], preferred: &[&str]) -> String {
    preferred
        .iter()
        .find(|p| listed.iter().any(|l| l == *p))
        .map(|p| p.to_string())
        .unwrap_or_else(|| listed[0].clone())
}

/// Everything the flows need, discovered afresh (the resource may have moved to another
/// authorization server since the last time).
pub(crate) async fn discover(io: &Io, server: &Url, challenge: &Challenge, preferred: &[&str]) -> Result<Discovery> {
    if let Some(prm) = protected_resource(io, server, challenge).await? {
        let issuer = choose(&prm.authorization_servers, preferred);
        let found = authorization_server(io, &issuer).await?.ok_or_else(|| {
            Error::auth("the authorization server the protected resource metadata names publishes no metadata at any of the well-known URLs")
        })?;
        return Ok(Discovery {
            resource: prm.resource,
            resource_scopes: prm.scopes_supported,
            server: found,
        });
    }
    // 2025-03-26: the MCP server's origin is the authorization server.
    let issuer = origin(server);
    io.log(format!(
        "the server publishes no protected resource metadata; using {issuer} as the authorization server (2025-03-26 rules)"
    ));
    let found = match authorization_server(io, &issuer).await? {
        Some(found) => found,
        None => AuthServer {
            meta: AsMetadata {
                issuer: issuer.clone(),
                authorization_endpoint: Some(format!("{issuer}/authorize")),
                token_endpoint: Some(format!("{issuer}/token")),
                registration_endpoint: Some(format!("{issuer}/register")),
                ..AsMetadata::default()
            },
            issuer,
            from_metadata: false,
        },
    };
    let mut resource = server.clone();
    resource.set_fragment(None);
    Ok(Discovery {
        resource: resource.to_string(),
        resource_scopes: None,
        server: found,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_match_the_server_exactly() {
        let server = Url::parse("http://localhost:3000/mcp").unwrap();
        let m = |r: &str| resource_matches(r, &server, PrmSource::ServerUrl);
        let root = |r: &str| resource_matches(r, &server, PrmSource::Root);
        assert!(m("http://localhost:3000/mcp"));
        assert!(m("HTTP://LOCALHOST:3000/mcp"));
        // A parent path widens the audience: refused, unless the root document says it.
        assert!(!m("http://localhost:3000"));
        assert!(!m("http://localhost:3000/"));
        assert!(root("http://localhost:3000"));
        assert!(root("http://localhost:3000/"));
        assert!(root("http://localhost:3000/mcp"));
        let tenant = Url::parse("http://localhost:3000/tenant/a/mcp").unwrap();
        assert!(!resource_matches(
            "http://localhost:3000/tenant",
            &tenant,
            PrmSource::ServerUrl
        ));
        assert!(!resource_matches(
            "http://localhost:3000/tenant",
            &tenant,
            PrmSource::Root
        ));
        for bad in [
            "http://localhost:3000/mcp/",
            "https://evil.example.com/mcp",
            "http://localhost:3001/mcp",
            "http://localhost:3000/mc",
            "http://localhost:3000/mcp/x",
            "http://localhost:3000/mcp#f",
            "http://localhost:3000/mcp?x=1",
            "http://user@localhost:3000/mcp",
            "not a url",
        ] {
            assert!(!m(bad) && !root(bad), "{bad}");
        }
        let https = Url::parse("https://a.example/mcp").unwrap();
        assert!(resource_matches(
            "https://a.example:443/mcp",
            &https,
            PrmSource::ServerUrl
        ));
    }
}
